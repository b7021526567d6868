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


def split(node, taken):
    """(a copy of function ``node`` with each top-level rebinding renamed, {version: the
    original name, for each version in the order of its binding})."""
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
    return node, versions


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
