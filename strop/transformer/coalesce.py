"""A loop body's copy of its carry, coalesced: ``h_2 = h_1 ... h_1 = h_2`` becomes the body
reading and rebinding ``h_1`` itself.

Inlining ``lax.scan(cell, h0, xs)``'s ``cell(h, x)``, whose ``h`` is rebound, copies the carry
into the parameter at the top of each trip and back at the end.  Reverse mode cannot see that
the copy's value at the end of a trip is the next trip's start, so it tapes both; with one
name it tapes the carry once per trip, as for the same loop written in Python.
"""
import gast

from . import ir


def coalesce(body, carried):
    """(statements, {a: b} renamed) of ``body`` (a loop's statements) with each ``a = b``
    (``b`` in ``carried``, ``a`` a fresh name local to this body) and its later ``b = a``
    removed and ``a`` read as ``b``, where that cannot change a value: nothing between the
    two mentions ``b``, nothing before the first mentions ``a``, nothing after the second
    binds either, and no break, continue or return leaves the trip."""
    if any(isinstance(n, (gast.Break, gast.Continue, gast.Return))
           for s in body for n in gast.walk(s)):
        return body, {}
    for j, s in enumerate(body):
        pair = _copy(s)
        if pair is None or pair[1] not in carried:
            continue
        a, b = pair
        if any(a in ir.names_in(t) for t in body[:j]):
            continue
        for k in range(j + 1, len(body)):
            if _copy(body[k]) == (b, a):
                break
            if b in ir.names_in(body[k]):
                k = None
                break
        else:
            k = None
        if k is None or any({a, b} & ir.names_in(t, gast.Store) for t in body[k + 1:]):
            continue
        rest = body[:j] + body[j + 1:k] + body[k + 1:]
        for t in rest:
            rename(t, {a: b})
        rest, renamed = coalesce(rest, carried)
        return rest, {a: b, **renamed}
    return body, {}


def _copy(s):
    """(target, source) of ``target = source`` between two names, else None."""
    if (isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Name)):
        return s.targets[0].id, s.value.id
    return None


def rename(node, renamed):
    """The names of ``node`` renamed in place, in any tuples or lists holding nodes too."""
    if isinstance(node, (tuple, list)):
        for x in node:
            rename(x, renamed)
    elif isinstance(node, gast.AST):
        for n in gast.walk(node):
            if isinstance(n, gast.Name) and n.id in renamed:
                n.id = renamed[n.id]
