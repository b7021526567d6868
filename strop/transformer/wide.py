"""vmap compiled, wide: a lane group around a batched ``while`` run for ``WIDTH`` lanes at once.

Run lane by lane (lanes.py), a ``while`` whose trip count differs per example is one chain of
dependent operations per lane: the CPU waits on each division in turn.  When the loop's code
cannot fail (arithmetic, comparisons, elementwise functions of numbers: no index, no call
that raises, no effect), a group of lanes can instead run it side by side, each statement for
every lane of the group in turn, the trip repeated until no lane's condition holds; a lane
that is done keeps its values (a select, not a branch).  That inner loop over the group's lanes
vectorizes.  Per lane, the values are exactly those of running it alone::

    _s1 = lanes_like(newton_enter1(x[0], a[0]), 64)      # the loop's state, for 64 lanes
    for _lo in range(0, batch_size, 64):
        newton_wide1(x, a, _s1, _o1, _lo, min(64, batch_size - _lo))

Compiled with NumPy's error model (a float divided by zero is inf, as NumPy gives for the
array elements a lane sees), so that no operation can raise.
"""
import gast

from . import analysis, ir
from .. import runtime
from .vectorize_base import companion, ordered

WIDTH = 64

# Calls a wide loop may make: elementwise functions of numbers, which cannot raise.
SAFE_CALLS = None


def _safe_calls():
    global SAFE_CALLS
    if SAFE_CALLS is None:
        import numpy as np
        SAFE_CALLS = {np.abs, np.absolute, np.sqrt, np.cbrt, np.exp, np.exp2, np.expm1, np.log,
                      np.log2, np.log10, np.log1p, np.sin, np.cos, np.tan, np.arcsin, np.arccos,
                      np.arctan, np.arctan2, np.sinh, np.cosh, np.tanh, np.hypot, np.minimum,
                      np.maximum, np.fmin, np.fmax, np.sign, np.floor, np.ceil, np.square,
                      np.where, np.float32, np.float64, abs, min, max, float, runtime.weak}
    return SAFE_CALLS


def wide_loop(v, stmts, ins, outs, out, loc):
    """The statements filling ``out`` (allocated from lane 0) with the group's outputs, run
    ``WIDTH`` lanes at a time; None where the group is not one straight-line run around one
    batched ``while`` of safe code on numbers."""
    parts = _split(v, stmts)
    if parts is None or any(v.rank.get(n) not in (0, None) for n in ins + outs
                            if n in v.batched):
        return None       # lanes of arrays: each lane's loop runs on its own
    pre, loop, post = parts
    after = analysis.live_in(post, set(outs))
    head = analysis.live_in([loop], after)
    written = analysis.block_writes(pre + loop.body)
    # the batched inputs a trip reads are copied in too: the trip then reads only its group
    state = ordered((head | after) & (written | {n for n in ins if n in v.batched}), stmts)
    defined = analysis.block_writes(pre) | set(ins)
    if loop.test.id not in state or any(n not in defined for n in state):
        return None       # read before any lane assigns it: lane by lane, as it is
    enter = v.namer.fresh(v.fn.name + "_enter", numbered=True)
    wide = v.namer.fresh(v.fn.name + "_wide", numbered=True)
    v.companions.append(_enter(enter, ins, pre, loop, state, v, loc))
    v.companions.append(_wide(wide, ins, pre, loop, post, state, outs, v, loc))
    s, lo = v.namer.fresh("_s", numbered=True), v.namer.fresh("_lo")
    lane0 = [ir.subscript(n, ir.const(0)) if n in v.batched else ir.name(n) for n in ins]
    alloc = ir.assign(s, ir.call(v.helper("lanes_like"), [ir.call(enter, lane0),
                                                          ir.const(WIDTH)]), loc)
    alloc.note = (f"the while loop {WIDTH} lanes at a time, side by side (it vectorizes); "
                  f"a lane that is done keeps its values")
    count = ir.call("min", [ir.const(WIDTH), gast.BinOp(left=ir.name(v.size), op=gast.Sub(),
                                                        right=ir.name(lo))])
    call = ir.call(wide, [ir.name(n) for n in ins] + [ir.name(s), ir.name(out), ir.name(lo),
                                                      count])
    chunks = ir.stmt(gast.For(target=ir.name(lo, store=True), iter=ir.call("range", [
        ir.const(0), ir.name(v.size), ir.const(WIDTH)]), body=[ir.stmt(gast.Expr(value=call),
                                                                       loc)],
        orelse=[], type_comment=None), loc)
    return [alloc, chunks]


def _split(v, stmts):
    """(before, the while, after) when ``stmts`` are assignments of safe values around one
    ``while`` on a batched name whose body is such assignments too; else None."""
    loops = [i for i, s in enumerate(stmts) if isinstance(s, gast.While)]
    if len(loops) != 1:
        return None
    i = loops[0]
    pre, loop, post = stmts[:i], stmts[i], stmts[i + 1:]
    if loop.orelse or not isinstance(loop.test, gast.Name) or not v.is_b(loop.test):
        return None
    if not all(_safe_assign(v, s) for s in pre + loop.body + post):
        return None
    return pre, loop, post


def _safe_assign(v, s):
    return (isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name) and _safe(v, s.value))


def _safe(v, e):
    """Whether evaluating ``e`` on numbers cannot raise or have an effect (under NumPy's error
    model: a division by zero is inf or nan)."""
    if isinstance(e, gast.Name):
        return True
    if isinstance(e, gast.Constant):
        return type(e.value) in (int, float, bool, complex)
    if isinstance(e, gast.BinOp):
        return _safe(v, e.left) and _safe(v, e.right)
    if isinstance(e, gast.UnaryOp):
        return _safe(v, e.operand)
    if isinstance(e, gast.Compare):
        return _safe(v, e.left) and all(_safe(v, c) for c in e.comparators)
    if isinstance(e, gast.IfExp):
        return _safe(v, e.test) and _safe(v, e.body) and _safe(v, e.orelse)
    if isinstance(e, gast.Call):
        return (not e.keywords and v.fn.callee(e.func) in _safe_calls()
                and all(_safe(v, a) for a in e.args))
    return False


def _enter(name, ins, pre, loop, state, v, loc):
    """Lane 0's state at the loop, in the types it keeps (those after one trip where a trip
    changes them: an int that becomes a float)."""
    at_loop = ir.Namer(ir.names_in(gast.Module(body=pre + [loop], type_ignores=[]))).fresh(
        "_at_loop")
    first = ir.assign(at_loop, _tuple(state))
    ret = ir.stmt(gast.Return(value=ir.call(v.ref(runtime.widest, "widest"), [
        ir.name(at_loop), _tuple(state)])), None)
    node = companion(name, ins, ir.clone(pre) + [first] + ir.clone(loop.body) + [ret], loc)
    node.doc = "One lane's loop state: the types the wide loop keeps it in."
    return node


def _wide(name, ins, pre, loop, post, state, outs, v, loc):
    """Lanes ``_lo`` to ``_lo + _w`` of the group: before the loop, each trip and after the
    loop, each for every lane in turn."""
    taken = ir.names_in(gast.Module(body=pre + [loop] + post, type_ignores=[])) | set(ins)
    namer = ir.Namer(taken)
    lanes = {n: namer.fresh(n + "_lanes") for n in ins if n in v.batched}
    given = {n: namer.fresh(n + "_in") for n in ins if n not in v.batched and n in state}
    kept = {n: namer.fresh(n + "_s") for n in state}
    s_all, out, lo, w, k, on, more = (namer.fresh(b) for b in (
        "_state", "_out", "_lo", "_w", "_k", "_on", "_more"))
    params = [lanes.get(n) or given.get(n) or n for n in ins] + [s_all, out, lo, w]

    def lane():
        return gast.BinOp(left=ir.name(lo), op=gast.Add(), right=ir.name(k))

    def load(stmts, tail=()):
        """Each lane's values that ``stmts`` (then ``tail``, names) read."""
        read = analysis.live_in(stmts, set(tail))
        return [ir.assign(n, ir.subscript(kept[n], ir.name(k)), None) for n in state
                if n in read] + [ir.assign(n, ir.subscript(lanes[n], lane()), None)
                                 for n in lanes if n not in kept and n in read]

    def each(body):
        return ir.stmt(gast.For(target=ir.name(k, store=True), iter=ir.call("range", [
            ir.name(w)]), body=body, orelse=[], type_comment=None), None)

    def store(n, value):
        return ir.stmt(gast.Assign(targets=[ir.subscript(kept[n], ir.name(k))], value=value,
                                   type_comment=None), None)

    def any_lane():
        return ir.call(v.ref(runtime.any_lane, "any_lane"), [ir.name(kept[loop.test.id]),
                                                                  ir.name(w)])
    unpack = ir.stmt(gast.Assign(targets=[gast.Tuple(elts=[ir.name(kept[n], store=True)
                                                           for n in state], ctx=gast.Store())],
                                 value=ir.name(s_all), type_comment=None), None)
    starts = [ir.assign(n, ir.subscript(lanes[n], lane()), None) for n in lanes] + [
        ir.assign(n, ir.name(given[n]), None) for n in given]
    before = each(starts + ir.clone(pre) + [store(n, ir.name(n)) for n in state])
    changed = [n for n in state if n in analysis.block_writes(loop.body)]
    trip = each([ir.assign(on, ir.subscript(kept[loop.test.id], ir.name(k)), None)]
                + load(loop.body) + ir.clone(loop.body)
                + [store(n, gast.IfExp(test=ir.name(on), body=ir.name(n),
                                       orelse=ir.subscript(kept[n], ir.name(k))))
                   for n in changed])
    trips = ir.stmt(gast.While(test=ir.name(more), body=[trip, ir.assign(more, any_lane(), None)],
                               orelse=[]), None)
    result = ir.name(outs[0]) if len(outs) == 1 else _tuple(outs)
    after = each(load(post, outs) + ir.clone(post) + [ir.stmt(gast.Expr(value=ir.call(
        v.helper("set_lane"), [ir.name(out), lane(), result])), None)])
    body = [unpack, before, ir.assign(more, any_lane(), None), trips, after]
    node = companion(name, params, body, loc)
    node.unchecked = True   # it indexes only the lanes it was given (no user subscript)
    node.doc = f"Lanes {lo} to {lo} + {w} side by side, until none of them loops."
    return node


def _tuple(names):
    return gast.Tuple(elts=[ir.name(n) for n in names], ctx=gast.Load())
