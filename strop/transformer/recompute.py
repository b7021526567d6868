"""Numbers a loop makes afresh each iteration, and parts of arrays they pick, made again in
the backward iteration instead of taped, where that is a few cheap operations on values that
do not change.

``r[t - 1] ** 2`` in ``for t in range(1, n)``: the backward loop runs ``t`` through the same
values, ``r`` is never rebound, so ``_t3 = t - 1; _t4 = r[_t3]; _t5 = _t4 ** 2`` gives the
same number as the forward iteration did — cheaper than a list push and pop, and no memory.
Only numbers (an array would be recomputed at the cost of making it) and an array's part
picked by numbers (``xs[t]``: a view, no data made; ``view``) or its transpose (``A.T``),
only arithmetic, comparisons, indexing and ufuncs, and only from values that hold the same
thing during the whole backward
sweep: the loop's index (when its body does not assign it), and names bound once, outside every
loop (parameters never rebound included).
"""
import copy

import gast
import numpy as np

from .. import runtime
from . import analysis

CHEAP = (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Subscript, gast.Name, gast.Constant)
MAX_STATEMENTS = 4   # per value: beyond that a tape is as cheap


def bound_once(params, body):
    """Names bound exactly once, at the top level of a function of ``params`` and ``body``
    (parameters never rebound included): their value never changes after that binding."""
    count = dict.fromkeys(params, 1)
    for s in body:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                count[n.id] = count.get(n.id, 0) + 1
    top = set(params) | {s.targets[0].id for s in body if isinstance(s, gast.Assign)
                         and isinstance(s.targets[0], gast.Name)}
    return {n for n in top if count.get(n) == 1}


def chain(loop, v, numbers, fixed, callee):
    """The statements of ``loop``'s body that make number ``v`` from ``fixed`` values and
    the loop's index, in order, or None (``numbers``: names surely holding a number)."""
    body = loop.body
    written = analysis.block_writes(body)
    index = loop.target.id if isinstance(loop, gast.For) else None
    steady = set(fixed) | ({index} if index and all(
        index not in analysis.writes(s) for s in body) else set())
    defs, nested = {}, set()
    for s in body:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            t = s.targets[0].id
            defs[t] = None if t in defs else s
        else:
            nested |= analysis.writes(s)
    out, seen = [], set()

    def need(name):
        if name in steady and name not in written:
            return True
        s = defs.get(name)
        if s is None or name in nested or name not in numbers or not _cheap(s.value, callee):
            return False
        if s in out:
            return True
        if name in seen:   # read before it is made: carried from the last iteration
            return False
        seen.add(name)
        if not all(need(r) for r in _operands(s.value)) or len(out) >= MAX_STATEMENTS:
            return False
        out.append(s)
        return True
    if not need(v):
        return None
    return [copy.deepcopy(s) for s in body if s in out]


def view(loop, v, numbers, fixed, callee):
    """``chain``'s statements for ``v``, bound once in ``loop``'s body to a part of a fixed
    array picked by numbers (``v = xs[t]``, ``v = xs[t - 1, :]``), or None."""
    defs = [s for s in loop.body if isinstance(s, gast.Assign) and
            isinstance(s.targets[0], gast.Name) and s.targets[0].id == v]
    value = defs[0].value if len(defs) == 1 else None
    if isinstance(value, gast.Attribute) and value.attr == "T" and isinstance(
            value.value, gast.Name) and value.value.id in fixed and \
            value.value.id not in analysis.block_writes(loop.body):
        return [copy.deepcopy(defs[0])]   # the transpose of a fixed array (Kalman's A.T)
    index = {loop.target.id} if isinstance(loop, gast.For) and isinstance(
        loop.target, gast.Name) and _calls_range(loop.iter) else set()
    if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and
            set(_operands(value.slice)) <= set(numbers) | index):
        return None
    return chain(loop, v, set(numbers) | index | {v}, fixed, callee)


def _calls_range(node):
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
        node.func.id == "range"


def _operands(node):
    """The names an expression reads as values (not the functions it calls)."""
    if isinstance(node, gast.Name):
        return [node.id] if isinstance(node.ctx, gast.Load) else []
    if isinstance(node, gast.Call):
        return [r for a in node.args for r in _operands(a)]
    return [r for c in gast.iter_child_nodes(node) for r in _operands(c)]


def _cheap(node, callee):
    """Arithmetic, comparisons, indexing, NumPy's ufuncs (of numbers: ``np.sqrt(dt)``) and
    Python numbers as their operand's type."""
    if isinstance(node, gast.Call):
        fn = callee(node.func)
        return (fn is runtime.weak or isinstance(fn, np.ufunc) and fn.nout == 1) and \
            not node.keywords and all(_cheap(a, callee) for a in node.args)
    if isinstance(node, gast.expr) and not isinstance(node, CHEAP + (gast.Tuple, gast.Slice)):
        return False
    return all(_cheap(c, callee) for c in gast.iter_child_nodes(node))
