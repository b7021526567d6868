"""Elementwise chains written as one expression, for Numba to fuse.

Numba compiles the array operators of one expression into one loop with no temporary arrays,
but generated code is three-address: one operator per statement, so one temporary array per
operator (``_t20 = h ** 2; _t21 = 1 - _t20; _bt2 = bh * _t21``: three passes over memory,
three allocations).  A temporary that is assigned once from an operator and read once, as an
operand of an operator of a later statement of the same block, is written into that operand
(``_bt2 = bh * (1 - h ** 2)``: one pass).  It never moves across control flow, a call made
for its effect, or a statement that rebinds a name it reads (an update in place rebinds its
array), so it reads the same values where it lands.  Compiled code only: NumPy fuses nothing.
"""
import re
from collections import Counter

import gast

TEMP = re.compile(r"_b?t\d+$")          # the temporaries the transforms make
OPERATORS = (gast.BinOp, gast.UnaryOp, gast.Compare)


def fuse(node):
    """``node`` (a FunctionDef) with single-use elementwise temporaries written in place."""
    names = [n for n in gast.walk(node) if isinstance(n, gast.Name)]
    loads = Counter(n.id for n in names if isinstance(n.ctx, gast.Load))
    stores = Counter(n.id for n in names if isinstance(n.ctx, gast.Store))
    _block(node.body, lambda t: loads[t] == 1 and stores[t] == 1 and TEMP.match(t))
    return node


def _block(stmts, single):
    for s in stmts:
        for body in ("body", "orelse"):
            if isinstance(getattr(s, body, None), list):
                _block(getattr(s, body), single)
    pending, fused = {}, set()          # temporary -> its statement, not yet used
    for s in stmts:
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1):
            pending.clear()             # control flow, effects, returns: nothing crosses
            continue
        s.value = _Substitute(pending, fused).visit(s.value)
        written = {n.id for n in gast.walk(s.targets[0]) if isinstance(n, gast.Name)}
        for t in [t for t, d in pending.items() if _reads(d.value) & written]:
            del pending[t]
        target = s.targets[0]
        if isinstance(target, gast.Name) and single(target.id) and isinstance(
                s.value, OPERATORS) and not _matmul(s.value):
            pending[target.id] = s
    stmts[:] = [s for s in stmts if id(s) not in fused]


class _Substitute(gast.NodeTransformer):
    """Operands of operators that name a pending temporary: its value instead."""

    def __init__(self, pending, fused):
        self.pending, self.fused = pending, fused

    def operand(self, node):
        if isinstance(node, gast.Name) and node.id in self.pending:
            stmt = self.pending.pop(node.id)
            self.fused.add(id(stmt))
            return stmt.value
        return self.visit(node)

    def visit_BinOp(self, node):
        if not _matmul(node):
            node.left, node.right = self.operand(node.left), self.operand(node.right)
        return node

    def visit_UnaryOp(self, node):
        node.operand = self.operand(node.operand)
        return node

    def visit_Compare(self, node):
        node.left = self.operand(node.left)
        node.comparators = [self.operand(c) for c in node.comparators]
        return node


def _reads(expr):
    return {n.id for n in gast.walk(expr) if isinstance(n, gast.Name)}


def _matmul(node):
    return isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult)
