"""Which parameters a user's helper function changes in place, for the functions that call it.

``def project(vx, vy): ...; vx -= grad_x; return vx, vy`` (autograd's fluid simulation) writes
into the arrays its caller made.  The design lets a function change the objects it creates, and
the caller created these; so the caller's check counts the call as a change of its arguments
(refused where they are the transformed function's own arguments or another name sees them),
the helper's check takes those parameters as objects of its own, and the inliner binds the
caller's names to their new values after the call, as the plain function leaves them.  A
parameter is counted when the helper changes it in place (``p -= v``, ``p[i] = v``,
``p[i] += v``, or by passing it to a helper that does) and never binds the name to another
object, so that its last value is the caller's object, changed.
"""
import functools
import inspect

import gast

from ..errors import TransformError
from .parse import CLOSURE, GLOBAL, _params, own_nodes, parse


@functools.lru_cache(maxsize=512)
def updated_params(fn):
    """The names of the parameters ``fn`` (a user's function) changes in place, in order."""
    return _updated(fn, frozenset())


def _updated(fn, visiting):
    from .inline import library_of
    if not inspect.isfunction(fn) or library_of(fn) is not None or fn in visiting:
        return ()
    try:
        parsed = parse(fn)
    except TransformError:
        return ()
    node = parsed.node
    params = [a.id for a in _params(node.args)]
    changed, rebound = set(), set()
    for n in own_nodes(node.body):
        if isinstance(n, gast.AugAssign):
            base = _base(n.target)
            if base is not None:
                changed.add(base)
        elif isinstance(n, gast.Assign):
            for t in n.targets:
                if isinstance(t, (gast.Subscript, gast.Attribute)):
                    base = _base(t)
                    if base is not None:
                        changed.add(base)
                else:
                    rebound |= _stored(t)
        elif isinstance(n, (gast.For, gast.comprehension)):
            rebound |= _stored(n.target)
        elif isinstance(n, (gast.AnnAssign, gast.NamedExpr)):
            rebound |= _stored(n.target)
        elif isinstance(n, gast.withitem) and n.optional_vars is not None:
            rebound |= _stored(n.optional_vars)
        elif isinstance(n, gast.Call):
            changed |= _passed_to_updating(n, parsed, visiting | {fn})
        elif isinstance(n, (gast.FunctionDef, gast.ClassDef)):
            rebound.add(n.name)
    return tuple(p for p in params if p in changed and p not in rebound)


def _passed_to_updating(call, parsed, visiting):
    """Names passed (bare) to a user function for a parameter it changes."""
    if not isinstance(call.func, gast.Name):
        return set()
    kind, callee = parsed.resolve(call.func.id)
    if kind not in (GLOBAL, CLOSURE) or not inspect.isfunction(callee):
        return set()
    updated = _updated(callee, visiting)
    if not updated:
        return set()
    return {a.id for a in argument_for(call, callee, updated).values()
            if isinstance(a, gast.Name)}


def argument_for(call, fn, names):
    """{parameter: the expression ``call`` passes for it} for the parameters ``names`` of
    ``fn`` that ``call`` gives (positionally, before any ``*args``, or by keyword)."""
    params = list(inspect.signature(fn).parameters)
    out = {}
    for i, a in enumerate(call.args):
        if isinstance(a, gast.Starred):
            break
        if i < len(params) and params[i] in names:
            out[params[i]] = a
    for k in call.keywords:
        if k.arg in names:
            out[k.arg] = k.value
    return out


def _base(target):
    while isinstance(target, (gast.Subscript, gast.Attribute)):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


def _stored(target):
    return {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}
