"""Structure is static: loops over containers whose length is known when the code is made are
unrolled, and reads of their items become the items themselves.

A pytree argument reaches normalized code as a display of its leaves (flatten.py's prologue,
``params = [(params_0_0, params_0_1), (params_1_0, params_1_1)]``), and so does a container the
function builds (``layers = [(w1, b1), (w2, b2)]``).  Its length, its keys and where each leaf
sits are known, as they are to JAX at trace time.  This pass follows them through the forms
code walks containers with — ``len``, iteration, ``x[k]``, ``zip``, ``enumerate``,
``sorted``, ``reversed``, ``.items()``/``.keys()``/``.values()``, appending — and unrolls a
``for`` loop whose trips read such a container by the loop's index.  What is left is
straight code over the leaves: every transform differentiates it leaf by leaf, and Numba
compiles it (a list of tuples of arrays of other shapes has no Numba type).

Values stay dynamic: only structure is used.  A loop over a range the code computes, or one
that reads no known container, stays a loop.
"""
import dataclasses

import gast

from .. import runtime
from . import analysis, ir
from .operations import is_namedtuple_call

MAX_TRIPS = 64       # a longer loop stays a loop (its trips would make the code too long)
ATOMS = (gast.Name, gast.Constant)
_SEQUENCE_MAKERS = (list, tuple, runtime.iterable)


class _Known:
    """What is known of the names: ``structure`` maps a name to a tree (list, tuple, dict,
    named tuple) of atoms, ``numbers`` a name to the int or str constant it holds."""

    def __init__(self, structure=None, numbers=None):
        self.structure = dict(structure or {})
        self.numbers = dict(numbers or {})

    def copy(self):
        return _Known(self.structure, self.numbers)

    def forget(self, names):
        names = set(names)
        for n in names:
            self.structure.pop(n, None)
            self.numbers.pop(n, None)
        for n, tree in list(self.structure.items()):   # a tree holding a name rebound
            if names & _names(tree):
                del self.structure[n]


class _Named:
    """A named tuple made in the code (``Layer(w, b)``): its class's node and items."""

    def __init__(self, func, items, fields):
        self.func, self.items, self.fields = func, items, fields

    def __getitem__(self, k):
        return self.items[k]

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)


def _names(tree):
    if isinstance(tree, gast.Name):
        return {tree.id}
    parts = tree.values() if isinstance(tree, dict) else tree if isinstance(
        tree, (list, tuple, _Named)) else ()
    return set().union(*(_names(p) for p in parts)) if parts else set()


def _display(tree):
    """The display that makes ``tree`` (atoms cloned)."""
    if isinstance(tree, dict):
        return gast.Dict(keys=[ir.const(k) for k in tree], values=[_display(v) for v in
                                                                    tree.values()])
    if isinstance(tree, _Named):
        return ir.call(ir.clone(tree.func), [_display(v) for v in tree.items])
    if isinstance(tree, (list, tuple)):
        cls = gast.List if isinstance(tree, list) else gast.Tuple
        return cls(elts=[_display(v) for v in tree], ctx=gast.Load())
    return ir.clone(tree)


def unroll(fn):
    """``fn`` with loops over containers of known length unrolled and the items they read
    bound directly; ``fn`` itself where there is none."""
    node = ir.clone(fn.node)
    changed = []
    fn = dataclasses.replace(fn, node=node)
    fn.namer = ir.Namer(ir.names_in(node) | set(fn.refs))
    node.body = _block(node.body, _Known(), fn, changed)
    # (a walk the normalizer unrolled, over a table of functions, is dead here too)
    body = _without_dead(node.body, fn)
    if not changed and _count(body) == _count(fn.node.body):
        return fn
    node.body = body
    return dataclasses.replace(fn, node=node)


def _block(stmts, known, fn, changed):
    out = []
    for s in stmts:
        out.extend(_stmt(s, known, fn, changed))
    return out


def _stmt(s, known, fn, changed):
    if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
        out = _assign(s, known, fn, changed)
        return out if isinstance(out, list) else [out]
    if isinstance(s, gast.For) and _unrollable(s, known, fn):
        changed.append(s)
        return _block(_trips_renamed(s, _trips(s, known), fn.namer), known, fn, changed)
    if isinstance(s, (gast.For, gast.While)):
        known.forget(analysis.writes(s))   # a trip may have rebound them
        s.body = _block(s.body, known.copy(), fn, changed)
        known.forget(analysis.writes(s))
        return [s]
    if isinstance(s, gast.If):
        s.body = _block(s.body, known.copy(), fn, changed)
        s.orelse = _block(s.orelse, known.copy(), fn, changed)
        known.forget(analysis.writes(s))
        return [s]
    known.forget(analysis.writes(s))
    return [s]


def _trips_renamed(loop, n, namer):
    """The ``n`` trips of ``loop`` one after another, each binding the loop's index first.
    A name the body binds at its top level (and nowhere deeper) gets a name of its own in
    each trip (``w_1``, ``w_2``): trips over the layers of a network bind arrays of other
    shapes, which one name, taped as it is overwritten, could not hold in compiled code.
    The last trip's values are bound to the names again after them, as the loop leaves
    them."""
    index, loc = loop.target.id, getattr(loop, "loc", None)
    compound = [t for t in loop.body if not isinstance(t, gast.Assign)]
    top = [t.targets[0].id for t in loop.body if isinstance(t, gast.Assign)
           and isinstance(t.targets[0], gast.Name)]
    renamed = [v for v in dict.fromkeys([index] + top)
               if v not in analysis.block_writes(compound)]
    current, out = {}, []
    for k in range(n):
        for t in [ir.assign(index, ir.const(k), loc)] + ir.clone(loop.body):
            _read_as(t, current)
            if isinstance(t, gast.Assign) and isinstance(t.targets[0], gast.Name) and \
                    t.targets[0].id in renamed:
                v = t.targets[0].id
                current[v] = t.targets[0].id = namer.temp(v.rstrip("0123456789")) if \
                    v.startswith("_") else namer.fresh(f"{v}_{k}")
            out.append(t)
    out.extend(ir.assign(v, ir.name(current[v]), loc) for v in renamed if v in current)
    return out


def _read_as(stmt, current):
    """``stmt`` reading ``current[v]`` wherever it reads ``v`` (its nested blocks too)."""
    for n in gast.walk(stmt):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in current:
            n.id = current[n.id]


def _sum_of_known(s, known, fn):
    """``t = sum(xs)`` of a known list as the additions Python's sum makes (``0 + x0 + x1
    ...``, written ``x0 + x1 + ...``): statements, or None for another value."""
    value = s.value
    if not (isinstance(value, gast.Call) and fn.callee(value.func) is sum and
            len(value.args) == 1 and not value.keywords):
        return None
    items = _item(value.args[0], known, fn)
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, ATOMS) for i in items):
        return None
    target, loc = s.targets[0].id, getattr(s, "loc", None)
    if not items:
        return [ir.assign(target, ir.const(0), loc)]
    out = [ir.assign(target, gast.BinOp(left=ir.const(0), op=gast.Add(),
                                        right=ir.clone(items[0])), loc)] if len(items) == 1 \
        else []
    for i, item in enumerate(items[1:]):
        left = ir.clone(items[0]) if i == 0 else ir.name(target)
        out.append(ir.assign(target, gast.BinOp(left=left, op=gast.Add(), right=ir.clone(item)),
                             loc))
    return out


def _trips(loop, known):
    """The trip count of ``for i in range(n)`` where n is known, else None."""
    args = loop.iter.args
    if len(args) != 1:
        return None
    n = _number(args[0], known)
    return n if isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_TRIPS \
        else None


def _unrollable(loop, known, fn):
    """A loop of known trips whose body reads a known container at the loop's index."""
    if _trips(loop, known) is None or loop.orelse:
        return False
    i = loop.target.id
    for n in gast.walk(gast.Module(body=loop.body, type_ignores=[])):
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and \
                n.value.id in known.structure and isinstance(n.slice, gast.Name) and \
                n.slice.id == i:
            return True
    return False


def _number(atom, known):
    if isinstance(atom, gast.Constant) and isinstance(atom.value, (int, str)):
        return atom.value
    if isinstance(atom, gast.Name):
        return known.numbers.get(atom.id)
    return None


def _assign(s, known, fn, changed):
    target = s.targets[0].id
    value = s.value
    total = _sum_of_known(s, known, fn)
    if total is not None:
        changed.append(s)
        known.forget([target])
        return total
    structure = _structure_of(value, known, fn)
    known.forget([target])
    if structure is _NOT_KNOWN:
        if isinstance(value, gast.Constant) and isinstance(value.value, (int, str)) and \
                not isinstance(value.value, bool):
            known.numbers[target] = value.value
        return s
    if isinstance(structure, ATOMS):   # an item read: the item itself
        changed.append(s)
        s.value = ir.clone(structure)
        if isinstance(structure, gast.Constant):
            known.numbers[target] = structure.value
        return s
    if isinstance(structure, int) and not isinstance(value, gast.Constant):   # len(x)
        changed.append(s)
        s.value = ir.const(structure)
        known.numbers[target] = structure
        return s
    made = fn.callee(value.func) if isinstance(value, gast.Call) else None
    if isinstance(value, (gast.Subscript, gast.Attribute)) or any(
            made is f for f in (runtime.append, runtime.setitem) + _PURE_CALLS):
        # made whole (tuple(xs) of a known list: the tuple's display, which Numba types)
        changed.append(s)
        s.value = _display(structure)
    known.structure[target] = structure
    return s


class _NotKnown:
    pass


_NOT_KNOWN = _NotKnown()


def _structure_of(value, known, fn):
    """The tree of atoms ``value`` makes, an atom for an item read, an int for a ``len``, or
    _NOT_KNOWN."""
    if isinstance(value, gast.Name):
        return known.structure.get(value.id, _NOT_KNOWN)
    if isinstance(value, (gast.List, gast.Tuple)):
        items = [_item(e, known, fn) for e in value.elts]
        if any(i is _NOT_KNOWN for i in items):
            return _NOT_KNOWN
        return list(items) if isinstance(value, gast.List) else tuple(items)
    if isinstance(value, gast.Dict):
        keys = [_number(k, known) if k is not None else None for k in value.keys]
        items = [_item(v, known, fn) for v in value.values]
        if any(k is None for k in keys) or any(i is _NOT_KNOWN for i in items):
            return _NOT_KNOWN
        return dict(zip(keys, items))
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        container = known.structure.get(value.value.id)
        key = _number(value.slice, known) if isinstance(value.slice, ATOMS) else \
            _slice(value.slice, known) if type(container) in (list, tuple) else None
        if container is None or key is None:
            return _NOT_KNOWN
        try:
            return container[key]
        except (KeyError, IndexError, TypeError):
            return _NOT_KNOWN   # the code raises it when it runs, as Python would
    if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
        named = known.structure.get(value.value.id)
        if isinstance(named, _Named) and value.attr in named.fields:
            return named.items[named.fields.index(value.attr)]
        return _NOT_KNOWN
    if isinstance(value, gast.Call) and not value.keywords:
        if is_namedtuple_call(fn, value):
            items = [_item(a, known, fn) for a in value.args]
            if any(i is _NOT_KNOWN for i in items):
                return _NOT_KNOWN
            return _Named(value.func, items, fn.callee(value.func)._fields)
        return _call_structure(value, known, fn)
    return _NOT_KNOWN


def _slice(node, known):
    """The slice ``node`` (``params[1:-1]``) if its bounds are known, else None."""
    if not isinstance(node, gast.Slice):
        return None
    bounds = [None if b is None or isinstance(b, gast.Constant) and b.value is None
              else _number(b, known) for b in (node.lower, node.upper, node.step)]
    known_all = all(b is None or isinstance(b, int) and not isinstance(b, bool) for b in bounds)
    given = [b for b in (node.lower, node.upper, node.step) if b is not None]
    return slice(*bounds) if known_all and len([b for b in bounds if b is not None]) == len(
        [b for b in given if not (isinstance(b, gast.Constant) and b.value is None)]) else None


def _item(e, known, fn=None):
    if isinstance(e, gast.Name) and e.id in known.structure:
        return known.structure[e.id]
    if isinstance(e, (gast.List, gast.Tuple, gast.Dict)) or fn is not None and \
            is_namedtuple_call(fn, e):   # a nested display
        return _structure_of(e, known, fn)
    return e if isinstance(e, ATOMS) else _NOT_KNOWN


def _call_structure(value, known, fn):
    callee = fn.callee(value.func)
    if callee is runtime.append and len(value.args) == 2:   # a comprehension's list grows
        lst, item = _item(value.args[0], known, fn), _item(value.args[1], known, fn)
        if type(lst) is list and item is not _NOT_KNOWN:
            return lst + [item]
        return _NOT_KNOWN
    if callee is runtime.setitem and len(value.args) == 3:   # d[k] = v (a dict comprehension)
        base, item = _item(value.args[0], known, fn), _item(value.args[2], known, fn)
        key = _number(value.args[1], known)
        if type(base) is dict and key is not None and item is not _NOT_KNOWN:
            return {**base, key: item}
        return _NOT_KNOWN
    if callee in (min, max) and len(value.args) > 1:   # zip's trips: min of the lengths
        numbers = [_number(a, known) for a in value.args]
        if all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
            return callee(numbers)
        return _NOT_KNOWN
    args = [_item(a, known) for a in value.args]
    if any(a is _NOT_KNOWN for a in args):
        return _NOT_KNOWN
    containers = [a for a in args if isinstance(a, (list, tuple, dict, _Named))]
    if isinstance(callee, tuple) and callee[0] == "method" and not args:
        base = known.structure.get(value.func.value.id) if isinstance(
            value.func.value, gast.Name) else None
        if type(base) is dict and callee[1] in ("items", "keys", "values"):
            if callee[1] == "items":
                return [(ir.const(k), v) for k, v in base.items()]
            return [ir.const(k) for k in base] if callee[1] == "keys" else list(base.values())
        return _NOT_KNOWN
    if len(containers) != len(args):
        return _NOT_KNOWN
    if callee is len and len(args) == 1:
        return len(args[0])
    if any(callee is maker for maker in _SEQUENCE_MAKERS) and len(args) == 1:
        items = [ir.const(k) for k in args[0]] if type(args[0]) is dict else list(args[0])
        return tuple(items) if callee is tuple else items
    if callee is zip and args:
        return [tuple(parts) for parts in zip(*(_sequence(a) for a in args))]
    if callee is enumerate and len(args) == 1:
        return [(ir.const(i), v) for i, v in enumerate(_sequence(args[0]))]
    if callee is reversed and len(args) == 1:
        return list(reversed(_sequence(args[0])))
    if callee is sorted and len(args) == 1:
        items = _sequence(args[0])
        if all(isinstance(i, gast.Constant) for i in items):
            try:
                return [ir.const(v) for v in sorted(i.value for i in items)]
            except TypeError:
                return _NOT_KNOWN
        return _NOT_KNOWN
    return _NOT_KNOWN


def _sequence(container):
    return [ir.const(k) for k in container] if type(container) is dict else list(container)


# --- what the unrolled code no longer reads -------------------------------------------------

_PURE = (gast.List, gast.Tuple, gast.Dict, gast.Name, gast.Constant)
_PURE_CALLS = (len, list, tuple, zip, enumerate, reversed, sorted, runtime.iterable)


def _without_dead(stmts, fn):
    """``stmts`` without the assignments of displays, items and lengths no statement reads
    any more (the containers the unrolled code walked; the empty list a comprehension
    started from, once its appends became displays; the display a loop's trip rebuilt,
    once the loop carries its leaves: carried.py), to a fixpoint."""
    while True:
        out = _drop(stmts, analysis.live_after(stmts), fn)
        if _count(out) == _count(stmts):
            return out
        stmts = out


def _drop(stmts, live, fn):
    out = []
    for s in stmts:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and \
                _pure(s.value, fn) and s.targets[0].id not in live[id(s)]:
            continue
        for field in ("body", "orelse"):
            if getattr(s, field, None):
                setattr(s, field, _drop(getattr(s, field), live, fn) or [gast.Pass()])
        out.append(s)
    return out


def _pure(value, fn):
    """A value whose making has no effect and cannot raise: a display, a name, a length, a
    walk of a container."""
    if isinstance(value, gast.Call):
        callee = fn.callee(value.func)
        return any(callee is c for c in _PURE_CALLS) or is_namedtuple_call(fn, value) or (
            isinstance(callee, tuple) and callee[1] in ("items", "keys", "values")
            and not value.args)
    return isinstance(value, _PURE)


def _count(stmts):
    return sum(1 + _count(getattr(s, "body", [])) + _count(getattr(s, "orelse", []))
               for s in stmts)
