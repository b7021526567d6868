"""vmap compiled: runs of per-lane code become one loop over the batch.

``jit(vmap(f))`` keeps the batching rules where they pay (a product with an unbatched matrix is
one BLAS call) and fuses the rest: a run of statements whose batched values are numbers in
each lane, and every statement with control flow on a batched value, becomes a *lane group*.
Its statements, exactly as the user's function runs them for one example, go into a companion
function ``f_lanes1(...)``; the batched function calls it in a loop over the lanes::

    _o1 = lanes_like(f_lanes1(y[0], k[0], c), batch_size)
    for _j in range(batch_size):
        set_lane(_o1, _j, f_lanes1(y[_j], k[_j], c))
    y = _o1

Numba inlines the companion, so the loop is one fused pass over the batch with the batch loop
innermost (no temporary per operation), and a ``while`` on a batched value runs each lane its
own number of trips (no masks, no work for finished lanes).  Unbatched statements met inside a
run (``np.cos(t)`` of a loop counter) are hoisted before the loop: computed once, not per lane.
Lane 0 is computed first to learn the results' types (the arrays are allocated from it).
A group around a ``while`` of plain arithmetic runs 64 lanes side by side instead (wide.py), so
that it vectorizes.  A statement whose lanes are arrays (``h * (1 - h ** 2)`` of a hidden
layer) runs on the whole batch instead (``_whole_batch``), its chain of operators one loop
(codegen/fuse.py): in a lane loop each lane's array would be allocated for every statement.
"""
import builtins
import copy

import gast
import numpy as np

from . import analysis, ir
from .vectorize_base import NotBatchable, companion, ordered
from .wide import wide_loop
from .. import runtime
from ..runtime.effects import is_effect
from ..runtime.via_numpy import NUMPY_UFUNCS


def lane_block(v, stmts):
    """The statements of an unmasked block of Vectorize ``v``, lane groups fused."""
    out, group = [], Group(v)
    for s in stmts:
        defined = set(v.defined)
        code, kind = classify(v, s)
        if kind == "plain" and group.stmts and _reads_witness(v, s, group):
            group.add(s, code)               # a cond's type witnesses stay in its lanes
        elif kind == "plain" and group.stmts and not group.clashes(s):
            group.hoisted += code            # unbatched: once, before the group's loop
            group.defined |= analysis.block_writes(code)
        elif kind == "lane" and not group.stmts and _is_copy(s):
            out += code                      # y = y0 outside a group: an alias, no loop
        elif kind == "lane" and _whole_batch(v, s, code):
            out += group.flush()             # lanes that are arrays: one pass over the batch
            out += code
        elif kind == "lane":
            if not group.stmts:
                group.defined = defined
            group.add(s, code)
        else:
            out += group.flush()
            out += code
    return out + group.flush()


def _reads_witness(v, s, group):
    """Whether ``s`` is where a cond's branches meet to compare their type witnesses
    (runtime/lax.py, branch_types_agree) and the group sets them: it goes with the group, so
    that the witnesses, of no lane's value, never leave it."""
    value = getattr(s, "value", None)
    return isinstance(s, gast.Assign) and isinstance(value, gast.Call) and \
        v.fn.callee(value.func) is runtime.lax.branch_types_agree and \
        bool(analysis.reads(s) & analysis.block_writes(group.stmts))


def classify(v, s):
    """(the statement as Vectorize batches it, or None where it cannot; its kind): "lane" for
    per-lane code (an assignment of a batched value, control flow on a batched value),
    "plain" for code that reads no batched value, "batched" for the rest (what runs better
    on the whole batch: ``_batch_wide``; a derivative's tape, control flow on an unbatched
    value whose body was fused on its own)."""
    before = set(v.batched)
    compound = isinstance(s, (gast.If, gast.While, gast.For))
    batched_test = compound and _test_batched(v, s)
    lane = (batched_test or isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
            and not _batch_wide(v, s)) and _per_lane(v, s)
    try:
        code = v.stmt(s, None, None)
    except NotBatchable:
        if not (lane and _touches_batched(v, s, before)):
            raise
        code = None
        for n in analysis.writes(s):   # what it assigns differs between lanes
            v.set_name(n, True, None)
    if not _touches_batched(v, s, before) or not compound and code is not None and all(
            n not in v.batched for n in analysis.writes(s)):
        return code, "plain"     # x.shape of a batched x: the same in every lane
    if lane and (not compound or batched_test):
        return code, "lane"
    return code, "batched"


def _test_batched(v, s):
    if isinstance(s, gast.For):
        return any(v.is_b(a) for a in getattr(s.iter, "args", ()))
    return v.is_b(s.test)


def _batch_wide(v, s):
    """Whether assignment ``s`` runs better on the whole batch than lane by lane:
    ``a @ b`` with one operand batched and the derivatives of products (one BLAS call, or an
    outer product per lane written where it belongs); a cotangent summed to the shape of an
    unbatched value (a per-example gradient: the cotangent itself, not copied lane by lane),
    and of an item of one (``params[k]``: one array for the batch, where a lane loop would
    allocate one per lane);
    a transcendental ufunc of arrays (NumPy's SIMD loop: Numba calls libm per element; of a
    number per lane it stays in the lane loop, whose other statements it would cut off)."""
    value = s.value
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult):
        return v.is_b(value.left) != v.is_b(value.right)
    if not isinstance(value, gast.Call) or not value.args:
        return False
    fn = v.fn.callee(value.func)
    if fn in (runtime.matmul_vjp_x, runtime.matmul_vjp_y):
        return True
    if fn is runtime.unbroadcast:
        return len(value.args) == 2 and not v.is_b(value.args[1])
    if fn is runtime.getitem_vjp:   # of an unbatched x[k]: one array, not one per lane
        return len(value.args) == 3 and not any(map(v.is_b, value.args[1:]))
    return fn in NUMPY_UFUNCS and v.is_b(value.args[0]) and v.rank_of(value.args[0]) != 0


def _whole_batch(v, s, code):
    """Whether lane statement ``s`` runs better as its batched code: a value whose lanes are
    arrays (rank >= 1), computed elementwise from operands whose lanes' ranks are known (lined
    up by indexing).  One vectorized pass over the batch, where a lane loop would allocate
    each lane's array; numbers (a reduction of a lane, control flow) stay in lane loops."""
    if not isinstance(s, gast.Assign) or code is None or len(code) != 1 or \
            not isinstance(code[0], gast.Assign) or not v.rank.get(s.targets[0].id):
        return False
    for n in gast.walk(code[0].value):
        if isinstance(n, gast.Name) and n.id in v.batched and v.rank.get(n.id) is None:
            return False
        fn = v.fn.callee(n.func) if isinstance(n, gast.Call) else None
        if fn is not None and not isinstance(fn, np.ufunc) and fn not in WHOLE_BATCH and not (
                fn in OVER_LANES and _over_lanes(v, n, OVER_LANES[fn])):
            return False
    return True


# what runs on the whole batch as it is; what has a compiled version over all of each lane
# (axis None, the other options constants), given one number per lane (that argument)
WHOLE_BATCH = (runtime.weak, runtime.unbroadcast)
OVER_LANES = {runtime.expand_to_lanes: 0, runtime.extremum_grad_lanes: 1}


def _over_lanes(v, call, number):
    options = call.args[2:]
    return v.rank_of(call.args[number]) == 0 and all(
        isinstance(a, gast.Constant) for a in options) and (not options or
                                                            options[0].value is None)


def _touches_batched(v, s, before):
    names = {n.id for n in gast.walk(s) if isinstance(n, gast.Name)}
    return bool(names & (v.batched | before))


def _per_lane(v, s):
    """Whether ``s`` can run as one lane's code: it touches no tape (a list the whole batch
    shares) and makes no call whose effect is not per lane (print)."""
    for n in gast.walk(s):
        if isinstance(n, gast.Name) and n.id in v.containers:
            return False
        if isinstance(n, gast.Call):
            fn = v.fn.callee(n.func)
            if fn in (runtime.push, runtime.pop, print) or is_effect(fn) or isinstance(
                    n.func, gast.Attribute) \
                    and n.func.attr in ("append", "pop"):
                return False
    return not any(isinstance(n, gast.Expr) for n in gast.walk(s))


class Group:
    """A run of lane statements being collected, and the unbatched ones hoisted out of it."""

    def __init__(self, v):
        self.v, self.stmts, self.codes, self.hoisted = v, [], [], []

    def add(self, s, code):
        self.stmts.append(s)
        self.codes.append(code)

    def clashes(self, s):
        """Whether hoisting unbatched ``s`` above the group would change what either reads
        (``s`` rebinds a name the group uses, or reads one the group assigns)."""
        used = {n.id for g in self.stmts for n in gast.walk(g) if isinstance(n, gast.Name)}
        read = {n.id for n in gast.walk(s) if isinstance(n, gast.Name)}
        return bool(analysis.writes(s) & used or read & analysis.block_writes(self.stmts))

    def flush(self):
        stmts, codes, hoisted = self.stmts, self.codes, self.hoisted
        self.stmts, self.codes, self.hoisted = [], [], []
        if not stmts:
            return hoisted
        v = self.v
        live_out = stmts[-1].live_out
        outs = ordered(analysis.block_writes(stmts) & live_out, stmts)
        used = {n.id for g in stmts for n in gast.walk(g) if isinstance(n, gast.Name)}
        ins = ordered({n for n in analysis.live_in(stmts, live_out) & used if n not in v.refs
                       and not (hasattr(builtins, n) and n not in self.defined)}, stmts)
        if any(n not in self.defined or n in v.maybe for n in ins):
            # read before any lane assigns it, or maybe still None (a return not taken)
            if any(c is None for c in codes):
                raise NotBatchable("a value assigned under a batched condition is read where "
                                   "some lanes did not assign it", stmts[0].loc)
            return hoisted + [x for c in codes for x in c]
        if not outs:
            return hoisted
        if _no_work(v, codes):    # a loop would only copy: the batched code, as it is
            return hoisted + [x for c in codes for x in c]
        for n in outs:
            v.set_name(n, True, v.rank.get(n))
        return hoisted + self.loop(stmts, ins, outs)

    def loop(self, stmts, ins, outs):
        v = self.v
        result = ir.name(outs[0]) if len(outs) == 1 else gast.Tuple(
            elts=[ir.name(n) for n in outs], ctx=gast.Load())
        body = copy.deepcopy(stmts) + [ir.stmt(gast.Return(value=result), stmts[-1].loc)]
        name = v.namer.fresh(v.fn.name + "_lanes", numbered=True)
        v.companions.append(companion(name, ins, body, stmts[0].loc))
        target = ir.name(outs[0], store=True) if len(outs) == 1 else gast.Tuple(
            elts=[ir.name(n, store=True) for n in outs], ctx=gast.Store())
        code = lane_loop(name, ins, v.batched, target, v.size, v.namer, v.helper, stmts[0].loc,
                         "lane by lane, fused: one loop over the batch (lane 0 gives the types)")
        wide = wide_loop(v, stmts, ins, outs, code[0].targets[0].id, stmts[0].loc)
        if wide is None:
            return code
        code[0].note = "room for the outputs (lane 0 gives their types)"
        return [code[0]] + wide + [code[-1]]


def _no_work(v, codes):
    """Whether the batched code of a group only passes values on: copies, and cotangents
    summed to the shape of a value (unbroadcast: the identity where the shapes agree, as for
    the cotangent of ``h`` in ``h @ w``)."""
    for code in codes:
        if code is None or len(code) != 1 or not isinstance(code[0], gast.Assign):
            return False
        value = code[0].value
        if not (isinstance(value, gast.Name) or isinstance(value, gast.Call) and isinstance(
                value.func, gast.Name) and v.refs.get(value.func.id) in (
                runtime.unbroadcast, runtime.unbroadcast_lanes)):
            return False
    return True


def lane_loop(name, params, batched, target, size, namer, helper, loc, note):
    """``target = <name(...) of each lane, stacked>`` as a loop over the lanes: lane 0 first,
    which gives the results' types and shapes to allocate."""
    j, o = namer.fresh("_j"), namer.fresh("_o", numbered=True)

    def call(lane):
        return ir.call(name, [ir.subscript(n, lane()) if n in batched else ir.name(n)
                              for n in params])
    alloc = ir.assign(o, ir.call(helper("lanes_like"), [call(lambda: ir.const(0)),
                                                        ir.name(size)]), loc)
    alloc.note = note
    fill = ir.stmt(gast.Expr(value=ir.call(helper("set_lane"), [
        ir.name(o), ir.name(j), call(lambda: ir.name(j))])), loc)
    loop = ir.stmt(gast.For(target=ir.name(j, store=True), iter=ir.call("range", [
        ir.name(size)]), body=[fill], orelse=[], type_comment=None), loc)
    return [alloc, loop, ir.assign(target, ir.name(o), loc)]


def _is_copy(s):
    return isinstance(s, gast.Assign) and isinstance(s.value, gast.Name)
