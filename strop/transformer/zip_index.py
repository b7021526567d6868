"""A loop over ``zip(*xs)`` reads each sequence by the loop's index, as a loop over
``zip(a, b)`` does.

``for pi, mean, cov in zip(*unpack(params))`` (autograd's GMM) cannot be read by index when the
code is canonicalized: how many sequences ``*xs`` holds is known only once the normalizer has
made ``xs`` a display.  It then walks ``iterable(zip(a, b, c))``: a list of tuples, which has no
derivative rule in compiled code and costs a copy.  Here, where that list is read only by
``len`` and ``[i]``, each sequence is walked by itself: ``len`` is the least of their lengths,
and ``[i]`` the tuple of their ``i``-th items.  A zip of known containers was unrolled before
(unroll.py); this is the rest: arrays, and sequences of lengths known only at run time.
"""
import dataclasses

import gast

from .. import runtime
from . import ir

_THROUGH = (list, tuple, runtime.iterable)   # what the canonical loop wraps the zip in


def zip_by_index(fn):
    """``fn`` with such loops rewritten; ``fn`` itself where there is none."""
    binds, uses = _bindings_and_uses(fn.node)
    plans = []
    for name, value in binds.items():
        if _is_zip(value, fn) and value is not None:
            chain = _chain(name, binds, uses, fn)
            if chain is not None:
                plans.append((value, chain))
    if not plans:
        return fn
    node = ir.clone(fn.node)
    refs = dict(fn.refs)
    namer = ir.Namer(ir.names_in(node) | set(refs))
    iterable = ir.bind_ref(refs, namer, runtime.iterable, "iterable")
    rewrite = {}
    for value, chain in plans:
        seqs = [namer.fresh("_seq") for _ in value.args]
        rewrite[chain[0]] = [ir.assign(s, ir.call(iterable, [ir.clone(a)]))
                             for s, a in zip(seqs, value.args)]
        for dropped in chain[1:]:
            rewrite[dropped] = []
        rewrite[("len", chain[-1])] = seqs
        rewrite[("item", chain[-1])] = seqs
    node.body = _rewritten(node.body, rewrite, namer)
    return dataclasses.replace(fn, node=node, refs=refs)


def _is_zip(value, fn):
    return isinstance(value, gast.Call) and fn.callee(value.func) is zip and value.args and \
        not value.keywords and all(isinstance(a, gast.Name) for a in value.args)


def _bindings_and_uses(node):
    """{name: its value} for names bound once by a plain assignment (None: bound otherwise or
    more than once), and {name: [the nodes reading it, with their parents]}."""
    binds, uses = {}, {}
    for s in gast.walk(node):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], gast.Name):
            n = s.targets[0].id
            binds[n] = s.value if n not in binds else None
        elif isinstance(s, (gast.Assign, gast.AugAssign, gast.For)):
            for t in gast.walk(s.targets[0] if isinstance(s, gast.Assign) else s.target):
                if isinstance(t, gast.Name):
                    binds[t.id] = None
        for child in gast.iter_child_nodes(s):
            if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Load):
                uses.setdefault(child.id, []).append(s)
    return binds, uses


def _chain(name, binds, uses, fn):
    """[zip's name, then the names that wrap it (list, iterable), the last read only as
    ``len(q)`` and ``q[i]`` assigned to names], or None."""
    chain = [name]
    while True:
        readers = uses.get(chain[-1], [])
        if len(readers) == 1 and isinstance(readers[0], gast.Call) and \
                fn.callee(readers[0].func) in _THROUGH and len(readers[0].args) == 1:
            wrapped = [n for n, v in binds.items() if v is readers[0]]
            if len(wrapped) != 1:
                return None
            chain.append(wrapped[0])
            continue
        break
    last = chain[-1]
    if len(chain) == 1 or not readers or not all(
            isinstance(r, gast.Call) and fn.callee(r.func) is len and len(r.args) == 1 and
            any(v is r for v in binds.values()) or
            isinstance(r, gast.Subscript) and r.value.id == last and
            isinstance(r.slice, gast.Name) and any(v is r for v in binds.values())
            for r in readers):
        return None
    return chain


def _rewritten(stmts, rewrite, namer):
    out = []
    for s in stmts:
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], gast.Name):
            target, value = s.targets[0].id, s.value
            if target in rewrite:
                out.extend(_located(rewrite[target], s))
                continue
            if isinstance(value, gast.Call) and len(value.args) == 1 and isinstance(
                    value.args[0], gast.Name) and ("len", value.args[0].id) in rewrite and \
                    isinstance(value.func, gast.Name) and value.func.id == "len":
                seqs = rewrite[("len", value.args[0].id)]
                lengths = [namer.temp() for _ in seqs]
                made = [ir.assign(n, ir.call("len", [ir.name(q)])) for n, q in zip(lengths, seqs)]
                made.append(ir.assign(target, ir.name(lengths[0]) if len(seqs) == 1 else
                                      ir.call("min", [ir.name(n) for n in lengths])))
                out.extend(_located(made, s))
                continue
            if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and \
                    ("item", value.value.id) in rewrite:
                seqs = rewrite[("item", value.value.id)]
                items = [namer.temp() for _ in seqs]
                made = [ir.assign(n, gast.Subscript(value=ir.name(q), slice=ir.clone(
                    value.slice), ctx=gast.Load())) for n, q in zip(items, seqs)]
                made.append(ir.assign(target, gast.Tuple(elts=[ir.name(n) for n in items],
                                                         ctx=gast.Load())))
                out.extend(_located(made, s))
                continue
        for field in ("body", "orelse"):
            block = getattr(s, field, None)
            if isinstance(block, list):
                setattr(s, field, _rewritten(block, rewrite, namer))
        out.append(s)
    return out


def _located(stmts, like):
    for s in stmts:
        gast.copy_location(s, like)
        s.loc = getattr(like, "loc", None)
    return stmts
