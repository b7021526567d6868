"""Names rebound at the top level of a function, one name per binding where that matters.

vmap decides per *name* whether a value is batched.  A parameter mapped with ``in_axes=None``
and rebound later to a batched value (``w = np.mean(w) + x * w``) must stay unbatched before
the rebinding: ``np.mean(w)`` reduces a lane's axes only where ``w`` is batched.  ``split``
gives each rebinding at the top level of the function its own name (``w``, ``w_1``, ...): the
top level runs unconditionally and in order, so each read there and in the blocks nested in
it sees exactly one of them.  A container's elements are known per binding the same way
(``acc = []`` then ``acc.append(a)``: none, then one).  Rebinding inside a loop or a branch
keeps its name: the value is carried between trips or merged after the branch, one name for
all of its bindings.
``merge`` gives back the original name to the versions that need no name of their own.
"""
import copy

import gast

from . import analysis, ir


def split(node, taken, loops=False):
    """(a copy of function ``node`` with each top-level rebinding renamed, {version: the
    original name, for each version in the order of its binding}).  With ``loops``, also each
    rebinding at the top level of a loop body of a name local to a trip (bound there before
    it is read, not live at the body's end, bound nowhere deeper): ``log_q = f(x)`` then
    ``log_q = np.reshape(log_q, (n, -1))`` in one trip are two values, of two ranks."""
    node = copy.deepcopy(node)
    namer = ir.Namer(taken)
    current, versions = {}, {}
    bound = {a.id for a in node.args.args}
    for s in node.body:
        target = s.targets[0] if isinstance(s, gast.Assign) and len(s.targets) == 1 else None
        if isinstance(target, gast.Name) and target.id in bound:
            _rename(s.value, current)
            new = namer.fresh(target.id)
            versions[new], current[target.id] = target.id, new
            target.id = new
            continue
        written = analysis.writes(s)
        _rename(s, current)
        bound |= written
    if loops:
        _split_loops(node.body, analysis.live_after(node.body), namer, versions)
    return node, versions


def _split_loops(stmts, live, namer, versions):
    for s in stmts:
        if isinstance(s, (gast.For, gast.While)) and s.body:
            _split_trip(s.body, live[id(s.body[-1])], namer, versions)
        for block in (getattr(s, "body", None), getattr(s, "orelse", None)):
            if isinstance(block, list):
                _split_loops(block, live, namer, versions)


def _split_trip(body, live_at_end, namer, versions):
    deeper = analysis.block_writes([s for s in body if not isinstance(s, gast.Assign)])
    counts = {}
    for s in body:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            counts[s.targets[0].id] = counts.get(s.targets[0].id, 0) + 1
    local = {x for x, c in counts.items() if c > 1 and x not in live_at_end | deeper}
    current, seen = {}, set()
    for s in body:
        target = s.targets[0] if isinstance(s, gast.Assign) and len(s.targets) == 1 else None
        if isinstance(target, gast.Name) and target.id in local:
            _rename(s.value, current)
            if target.id in seen:
                new = namer.fresh(target.id)
                versions[new], current[target.id] = target.id, new
                target.id = new
            seen.add(versions.get(target.id, target.id))
            continue
        _rename(s, current)


def merge(versions, kind):
    """{version: the name it keeps}: a version of the same ``kind(name)`` as the one before
    it (batched or not, and a container's length) takes its name (the original name, or the
    first version since the kind changed)."""
    out, last = {}, {}
    for v, orig in versions.items():
        prev = last.get(orig, orig)
        out[v] = out.get(prev, prev) if kind(v) == kind(prev) else v
        last[orig] = v
    return out


def rename(node, names):
    """``node`` with every name in ``names`` replaced by its value (in place)."""
    _rename(node, names)
    return node


def _rename(node, names):
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in names and not isinstance(n.ctx, gast.Param):
            n.id = names[n.id]
