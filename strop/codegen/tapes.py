"""Tapes as preallocated arrays in compiled code.

The adjoint sweep's tapes are lists (``append`` going forward, ``pop`` going back). When a
tape gets exactly one number per iteration of a ``for i in range(n)`` loop, and the backward
sweep takes it back in ``for i in range(n - 1, -1, -1)``, it is an array of n numbers indexed
by ``i``: no list growth, and the loops vectorize like a hand-written adjoint.
"""
import copy

import gast

from .. import runtime


def _is_range_up(loop):
    it = loop.iter
    return (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range"
            and (len(it.args) == 1 or len(it.args) == 2 and isinstance(it.args[0], gast.Constant)
                 and it.args[0].value == 0))


def _range_stop(loop):
    return loop.iter.args[-1]


def _is_range_down_of(loop, stop, defs):
    """``for i in range(stop - 1, -1, -1)`` (how reverse.py walks ``range(stop)`` back), the
    first bound maybe named in A-normal form (``_t9 = n - 1``, from ``defs``)."""
    it = loop.iter
    if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range"
            and len(it.args) == 3):
        return False
    first, end, step = it.args
    if isinstance(first, gast.Name) and first.id in defs:
        first = defs[first.id]
    minus_one = gast.BinOp(left=stop, op=gast.Sub(), right=gast.Constant(value=1, kind=None))
    same = gast.dump(first) == gast.dump(minus_one) or (
        isinstance(stop, gast.Constant) and isinstance(first, gast.Constant)
        and first.value == stop.value - 1)
    return same and all(isinstance(c, gast.Constant) and c.value == -1 for c in (end, step))


def _writes(stmts, name):
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
               for s in stmts for n in gast.walk(s))


def _typed_before(before, value, params):
    """Whether ``value``, read before the loop to type its tape, surely has there the type it
    has in the loop: it is defined there (a value first made inside the loop is not), and not
    by an integer or a bool (``c = 1`` then ``c = c * x``: an integer tape would truncate)."""
    last = next((s for s in reversed(before) if value in _assigned(s)), None)
    if last is None:
        return value in params
    if not (isinstance(last, gast.Assign) and isinstance(last.targets[0], gast.Name)):
        return False
    v = last.value
    return not (isinstance(v, gast.Constant) and not isinstance(v.value, float)
                or isinstance(v, (gast.Compare, gast.BoolOp))
                or isinstance(v, gast.UnaryOp) and isinstance(v.op, gast.Not))


def _assigned(stmt):
    return {n.id for n in gast.walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def arrays_for_tapes(node, refs, scalars):
    """Rewrite list tapes of the numbers in ``scalars`` into arrays (see the module note)."""
    body = node.body
    helper = {n: o for n, o in refs.items() if n in runtime.__all__}
    tape_array = _helper(refs, helper, runtime.tape_array)

    def appends(stmts):
        """(tape, value) of top-level ``tape.append(value)`` statements."""
        return [(s, s.value.func.value.id, s.value.args[0].id) for s in stmts
                if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)
                and isinstance(s.value.func, gast.Attribute) and s.value.func.attr == "append"
                and isinstance(s.value.func.value, gast.Name) and len(s.value.args) == 1
                and isinstance(s.value.args[0], gast.Name)]

    def pops(stmts):
        return [(s, s.value.func.value.id, s.targets[0].id) for s in stmts
                if isinstance(s, gast.Assign) and isinstance(s.value, gast.Call)
                and isinstance(s.value.func, gast.Attribute) and s.value.func.attr == "pop"
                and isinstance(s.value.func.value, gast.Name) and not s.value.args]

    params = {a.id for a in node.args.args}
    top = {s.targets[0].id: s for s in body if isinstance(s, gast.Assign)
           and isinstance(s.value, gast.List) and not s.value.elts}
    uses = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in top:
            uses[n.id] = uses.get(n.id, 0) + 1
    done = set()
    defs = {}
    for s in body:   # names assigned once at the top level, for the backward loops' bounds
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            defs[s.targets[0].id] = None if s.targets[0].id in defs else s.value
    defs = {k: v for k, v in defs.items() if v is not None}
    fwd_loops = [s for s in body if isinstance(s, gast.For) and _is_range_up(s)]
    back_loops = [s for s in body if isinstance(s, gast.For)]
    for fwd in fwd_loops:
        i, stop = fwd.target.id, _range_stop(fwd)
        if _writes(fwd.body, i) or (isinstance(stop, gast.Name) and _writes(fwd.body, stop.id)):
            continue
        for back in back_loops:
            if back.target.id != i or not _is_range_down_of(back, stop, defs) or _writes(
                    back.body, i):
                continue
            pushed = {t: (s, v) for s, t, v in appends(fwd.body)}
            popped = {t: (s, v) for s, t, v in pops(back.body)}
            for tape in sorted(set(pushed) & set(popped) & set(top)):
                (ps, value), (qs, target) = pushed[tape], popped[tape]
                # the tape's whole life: made at the top, one append, one pop, nothing else
                if value != target or value not in scalars or uses.get(tape) != 3 or \
                        not _typed_before(body[:body.index(fwd)], value, params):
                    continue
                ps.value = None
                # tape_put(tape, i, v), not tape[i] = v: the tape is typed by the value before
                # the loop, and an integer there may be a float in the loop (s = n, then
                # s = s * x), which an assignment would truncate; tape_put refuses to compile
                new = gast.Expr(value=gast.Call(
                    func=gast.Name(id=_helper(refs, helper, runtime.tape_put), ctx=gast.Load(),
                                   annotation=None, type_comment=None),
                    args=[gast.Name(id=n, ctx=gast.Load(), annotation=None, type_comment=None)
                          for n in (tape, i, value)], keywords=[]))
                new.loc = getattr(ps, "loc", None)
                fwd.body[fwd.body.index(ps)] = new
                qs.value = gast.Subscript(value=gast.Name(id=tape, ctx=gast.Load(),
                                                          annotation=None, type_comment=None),
                                          slice=gast.Name(id=i, ctx=gast.Load(), annotation=None,
                                                          type_comment=None), ctx=gast.Load())
                alloc = top[tape]
                alloc.value = gast.Call(func=gast.Name(id=tape_array, ctx=gast.Load(),
                                                       annotation=None, type_comment=None),
                                        args=[copy.deepcopy(stop), gast.Name(
                                            id=value, ctx=gast.Load(), annotation=None,
                                            type_comment=None)], keywords=[])
                body.remove(alloc)              # allocated where n and the value are known
                body.insert(body.index(fwd), alloc)
                done.add(tape)
    if not done:
        for f in (runtime.tape_array, runtime.tape_put):
            if refs.get(f.__name__) is f and f.__name__ not in helper:
                del refs[f.__name__]      # bound for nothing: not in the module's imports
    return done


def _helper(refs, helper, f):
    """The name the module binds runtime helper ``f`` to, binding it if it has none."""
    name = next((n for n, o in helper.items() if o is f), None)
    if name is None:
        refs[f.__name__] = f
        name = f.__name__
    return name
