"""A loop that turns a number into an array: its first trip written apart (loop peeling).

``s = 0`` then ``for i in range(n): s = s * x + c[i]`` makes ``s`` a number before the loop
and an array from its first trip on.  NumPy does not mind; compiled code gives a variable one
type, so Numba refuses the loop, and reverse mode's tape of ``s`` would hold a number, then
arrays.  So, where the arguments' ranks show it (ranks.py), the first trip is written out
before the loop, where rebinding ``s`` to an array is an ordinary assignment::

    _t5 = n > 0
    first_trip(_t5)          # raises NoTrip where the loop runs no trip
    i = 0
    s = s * x + c[i]         # the body, once
    for i in range(1, n):    # the other trips
        s = s * x + c[i]

A call whose loop runs no trip (``s`` stays the number 0: a type no compiled code for the other
calls returns) raises NoTrip, and runs code made without the split (transformed.py). Only loops
of the function's own body over ``range`` with a constant step are split, and not one whose
body has ``break``, ``continue`` or an ``else``; where the name is rebound in a loop nested in
it (``for i: for j: s = s + a[i, j]``), the nested loop's first trip is written apart inside
the outer one's; a recurrence whose names become arrays one trip after another (``b2 = b1; b1 =
b0; b0 = ...``) gets a trip apart for each.
"""
import dataclasses

import gast

from . import ir
from .ranks import ranks

MAX_SPLITS = 6     # trips written apart per function (each copies a loop's body once)
MAX_TRIPS = 3      # ... per loop
_AFTER = "__after_first_trip"


def split_first_trips(fn, given, first_trip):
    """``fn`` with its loops that turn a number into an array split (a new Function; ``fn``
    itself where there are none); ``given``: parameter -> rank, ``first_trip``: the check."""
    body, done, namer = [], 0, None
    for s in fn.node.body:
        if namer is not None:
            s = ir.clone(s)      # (renamed below: fn's own statements stay as they are)
        # (a recurrence of several names, b0 = f(b1, ...) then b1 = b0, makes them arrays
        # one trip after another: a trip apart for each)
        for _ in range(MAX_TRIPS):
            widened = _widened(body, s, given, fn.callee) if done < MAX_SPLITS else set()
            if not widened:
                break
            if namer is None:
                namer = ir.Namer(ir.names_in(fn.node))
                refs = dict(fn.refs)
                check = ir.bind_ref(refs, namer, first_trip, "first_trip")
                body, s = ir.clone(body), ir.clone(s)
            # the numbers get names of their own before the loop: a name is then never a
            # number and an array (reverse mode tapes a rebound name's values on one tape)
            renames = {n: namer.fresh(n) for n in sorted(widened)}
            body = _renamed(body, renames)
            *first, s = _split(s, renames, namer, check)
            body.extend(first)
            done += 1
        body.append(s)
    if not done:
        return fn
    node = ir.clone(fn.node)
    node.body = body
    return dataclasses.replace(fn, node=node, refs=refs)


def _widened(before, loop, given, callee):
    """The names ``loop`` (a statement after ``before``) rebinds from a number to an array,
    if it is a loop to split: over a range, each such name rebound by a statement of its own
    body (not inside a branch)."""
    if not _splittable(loop):
        return set()
    stored = _stored(loop)
    if not stored & ir.names_in(gast.Module(body=before, type_ignores=[]), gast.Store):
        return set()
    numbers = {n for n, (r, _) in ranks(before, given, callee).items()
               if r == 0 and n in stored}
    if not numbers:
        return set()
    # one trip's bindings, each a new name that the statements after it read: what they
    # make of the numbers (ranks are joined over a name's bindings)
    once, latest = ir.clone(loop), {n: n for n in numbers}
    _versioned(once, latest)
    after = ranks(before + [once], given, callee)
    return {n for n in numbers if latest[n] != n and isinstance(
        after.get(latest[n], (None,))[0], int) and after[latest[n]][0] > 0}


def _versioned(loop, latest, versions=None):
    """Give each binding of a name of ``latest`` in ``loop``'s body (and in the splittable
    loops nested in it) a new name, read by the statements after it: one trip's values,
    in place; ``latest`` maps each name to its last version."""
    versions = [] if versions is None else versions
    for s in loop.body:
        if _splittable(s):
            _versioned(s, latest, versions)
            continue
        for node in gast.walk(s):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
                    node.id in latest:
                node.id = latest[node.id]
        for t in s.targets if isinstance(s, gast.Assign) else ():
            if isinstance(t, gast.Name) and t.id in latest:
                version = f"{t.id}{_AFTER}{len(versions)}"
                versions.append(version)
                latest[t.id], t.id = version, version


def _splittable(loop):
    return isinstance(loop, gast.For) and isinstance(loop.target, gast.Name) \
        and not loop.orelse and _range(loop.iter) is not None and not _jumps(loop.body)


def _stored(loop):
    """The names the splittable ``loop`` rebinds by statements of its own body, or of the
    splittable loops nested in it (each of those gets a first trip of its own)."""
    names = set()
    for s in loop.body:
        if isinstance(s, gast.Assign):
            names |= {t.id for t in s.targets if isinstance(t, gast.Name)}
        elif _splittable(s):
            names |= _stored(s)
    return names


def _range(call):
    """(start, stop, step) of ``range(...)`` with names or constants and a constant step
    (ints), else None."""
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name)
            and call.func.id == "range" and 1 <= len(call.args) <= 3 and not call.keywords
            and all(isinstance(a, (gast.Name, gast.Constant)) for a in call.args)):
        return None
    args = list(call.args)
    start, stop = (ir.const(0), args[0]) if len(args) == 1 else args[:2]
    step = args[2] if len(args) == 3 else ir.const(1)
    if not (isinstance(step, gast.Constant) and type(step.value) is int and step.value):
        return None
    return start, stop, step.value


def _jumps(stmts):
    """Whether ``stmts`` break or continue the loop they are the body of."""
    for s in stmts:
        if isinstance(s, (gast.Break, gast.Continue)):
            return True
        if isinstance(s, (gast.If, gast.With, gast.Try)):
            if _jumps(s.body) or _jumps(getattr(s, "orelse", [])):
                return True
    return False


def _renamed(stmts, renames):
    """``stmts`` with the names of ``renames`` renamed (in place)."""
    for s in stmts:
        for node in gast.walk(s):
            if isinstance(node, gast.Name) and node.id in renames:
                node.id = renames[node.id]
    return stmts


def _first(body, renames, namer, check):
    """A copy of the loop's body for its first trip: reading the numbers under their new
    names until it rebinds them (a nested loop that rebinds them has its own first trip
    written apart: ``for i: for j: s = s + a[i, j]``)."""
    out, pending, old = [], dict(renames), {new: n for n, new in renames.items()}
    for s in ir.clone(body):
        inner = _stored(s) & set(pending) if _splittable(s) else set()
        if inner:
            _renamed([s], {n: new for n, new in pending.items() if n not in inner})
            out.extend(_split(s, {n: pending.pop(n) for n in sorted(inner)}, namer, check))
            continue
        out.append(_renamed([s], pending)[0] if pending else s)
        if isinstance(s, gast.Assign):
            for t in s.targets:
                if isinstance(t, gast.Name) and t.id in old:
                    # (renamed above when it read itself: its own name again)
                    t.id = old[t.id]
                    pending.pop(t.id, None)
    return out


def _split(loop, renames, namer, check):
    start, stop, step = _range(loop.iter)
    loc = getattr(loop, "loc", None)
    runs = namer.temp()
    compare = gast.Compare(left=ir.clone(stop), ops=[gast.Gt() if step > 0 else gast.Lt()],
                           comparators=[ir.clone(start)])
    first = [ir.assign(runs, compare, loc),
             ir.stmt(gast.Expr(value=ir.call(check, [ir.name(runs)])), loc),
             ir.assign(loop.target.id, ir.clone(start), loc)]
    rest = ir.clone(loop)
    if isinstance(start, gast.Constant):
        second, following = ir.const(start.value + step), []
    else:
        second = ir.name(namer.temp())
        op = gast.Add() if step > 0 else gast.Sub()
        following = [ir.assign(second.id, gast.BinOp(left=ir.clone(start), op=op,
                                                     right=ir.const(abs(step))), loc)]
    rest.iter = ir.call("range", [second, ir.clone(stop), ir.const(step)])
    return first + _first(loop.body, renames, namer, check) + following + [rest]
