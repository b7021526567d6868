"""Elementwise chains written as one expression, for Numba to fuse.

Numba compiles the array operators of one expression into one loop with no temporary arrays,
but generated code is three-address: one operator per statement, so one temporary array per
operator (``_t20 = h ** 2; _t21 = 1 - _t20; _bt2 = bh * _t21``: three passes over memory,
three allocations).  A temporary that is assigned once from an operator (or a ufunc a chain may
call: ``np.exp(z)``, loops.is_chain_call) and read once, as an operand of such a step of a
later statement of the same block, is written into that operand (``_bt2 = bh * (1 - h ** 2)``:
one pass).  It never moves across control flow, a call made
for its effect, or a statement that rebinds a name it reads (an update in place rebinds its
array), so it reads the same values where it lands.  Compiled code only: NumPy fuses nothing.

A temporary the adjoint reads only for its shape (``_tape.append(shape_like(_t3))``, see
transformer/tapes) is fused too: its stand-in becomes ``chain_like("weak(2, _0) * _0", _t2)``,
the shape and dtype of the chain over its operands, where those operands are not rebound
before the stand-in is made (it reads them where it is).

A chain summed by ``unbroadcast`` is written into it too (``unbroadcast(_bt8 * lap, alpha)``),
one added into part of a sum (``add_at_index_inplace(bu, -2 * blap, u, i)``), and one added
into an owned sum (``plus_inplace(bv, np.roll(_bt4, 1, 0))``): codegen/loops.py makes each
one call that sums or adds the elements as it computes them.
"""
import re
from collections import Counter

import gast
import numpy as np

from .. import runtime
from ..transformer import ir
from .cpu import _bind, callee_of
from .loops import chain_text, is_chain, is_chain_call

TEMP = re.compile(r"_b?t\d+$")          # the temporaries the transforms make
OPERATORS = (gast.BinOp, gast.UnaryOp, gast.Compare)


def fuse(node, refs, calls=True):
    """``node`` (a FunctionDef) with single-use elementwise temporaries written in place;
    ``calls``: ufunc calls are steps of chains too (``np.sqrt(x) + 1``: one loop, not two
    arrays; loops.is_chain_call), as Numba fuses them (not the device's kernels)."""
    names = [n for n in gast.walk(node) if isinstance(n, gast.Name)]
    loads = Counter(n.id for n in names if isinstance(n.ctx, gast.Load))
    stores = Counter(n.id for n in names if isinstance(n.ctx, gast.Store))
    shapes = Counter(a.id for a in (_shape_of(n, refs) for n in gast.walk(node)) if a)
    likes = _likes(node, refs)
    fusion = _Fusion(refs, shapes, likes, lambda t: loads[t] - shapes[t] - likes[t] == 1 and
                     stores[t] == 1 and TEMP.match(t), calls)
    fusion.block(node.body)
    if fusion.stand_ins:
        fusion.stand_in(node, ir.names_in(node) - set(refs))
    return node


def _likes(node, refs):
    """How often each name is read as ``weak(number, name)``'s second argument: for its
    dtype only (``weak(2, _bt3) * _bt3`` reads ``_bt3`` once for its value)."""
    return Counter(n.args[1].id for n in gast.walk(node) if isinstance(n, gast.Call) and
                   len(n.args) == 2 and isinstance(n.args[1], gast.Name) and
                   callee_of(n, refs) is runtime.weak)


def _shape_of(node, refs):
    """The name in ``shape_like(name)``, or None."""
    if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords and \
            isinstance(node.args[0], gast.Name) and callee_of(node, refs) is runtime.shape_like:
        return node.args[0]
    return None


class _Fusion:
    def __init__(self, refs, shapes, likes, single, calls):
        self.refs, self.shapes, self.likes, self.single = refs, shapes, likes, single
        self.calls = calls
        self.stand_ins = {}     # fused temporary read for its shape -> its value

    def block(self, stmts):
        for s in stmts:
            for body in ("body", "orelse"):
                if isinstance(getattr(s, body, None), list):
                    self.block(getattr(s, body))
        pending, fused = {}, set()          # temporary -> its statement, not yet used
        for i, s in enumerate(stmts):
            if not (isinstance(s, gast.Assign) and len(s.targets) == 1):
                pending.clear()             # control flow, effects, returns: nothing crosses
                continue
            here = _likes(s.value, self.refs)   # a dtype read elsewhere keeps its temporary
            ready = {t: d for t, d in pending.items() if here[t] == self.likes[t]}
            sub = _Substitute(ready, fused, self)
            s.value = _Likes(sub.values, self.refs).visit(sub.visit(s.value))
            for t in set(pending) - set(ready) - set(sub.values):
                ready[t] = pending[t]
            pending = ready
            written = {n.id for n in gast.walk(s.targets[0]) if isinstance(n, gast.Name)}
            for t in [t for t, d in pending.items() if _reads(d.value) & written]:
                del pending[t]
            target = s.targets[0]
            if isinstance(target, gast.Name) and self.single(target.id) and self.step(
                    s.value) and self.shape_read_later(target.id, s.value, stmts[i + 1:]):
                pending[target.id] = s
        stmts[:] = [s for s in stmts if id(s) not in fused]
        _merge_sums(stmts, self.refs, self.calls)

    def step(self, value):
        """Whether ``value`` is one elementwise step a chain may take in: an operator (not
        ``@``), or with ``calls`` a ufunc call."""
        return isinstance(value, OPERATORS) and not _matmul(value) or \
            self.calls and is_chain_call(value, self.refs)

    def shape_read_later(self, t, value, later):
        """Whether every ``shape_like(t)`` is in ``later`` (this block), where the names of
        the chain ``value`` still hold what they hold here."""
        if not self.shapes[t]:
            return True
        if not is_chain(value, self.refs, self.calls):
            return False
        reads, seen = _reads(value), 0
        for s in later:
            seen += sum(1 for n in gast.walk(s) if getattr(_shape_of(n, self.refs), "id", 0) == t)
            if seen == self.shapes[t]:
                return True
            if {n.id for n in gast.walk(s) if isinstance(n, gast.Name) and
                    isinstance(n.ctx, gast.Store)} & reads:
                return False
        return False

    def stand_in(self, node, local):
        """Each fused temporary's ``shape_like(t)``: the chain's over its operands."""
        fn = _bind(self.refs, runtime.chain_like, "chain_like", local)
        for n in gast.walk(node):
            a = _shape_of(n, self.refs)
            if a is not None and a.id in self.stand_ins:
                text, names = chain_text(self.stand_ins[a.id], self.refs)
                n.func, n.args = ir.name(fn), [ir.const(text), *map(ir.name, names)]


class _Substitute(gast.NodeTransformer):
    """Operands of operators that name a pending temporary: its value instead."""

    def __init__(self, pending, fused, fusion):
        self.pending, self.fused, self.fusion = pending, fused, fusion
        self.values = {}    # temporary -> the value written in its place

    def operand(self, node):
        if isinstance(node, gast.Name) and node.id in self.pending:
            stmt = self.pending.pop(node.id)
            self.fused.add(id(stmt))
            self.values[node.id] = stmt.value
            if self.fusion.shapes[node.id]:
                self.fusion.stand_ins[node.id] = ir.clone(stmt.value)
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

    def visit_Call(self, node):
        """A cotangent summed to a shape, or added into part of a sum: summed or added as it
        is computed."""
        at = _CONSUMERS.get(callee_of(node, self.fusion.refs))
        if at is not None and len(node.args) == at[1] and not node.keywords:
            node.args[at[0]] = self.operand(node.args[at[0]])
            return node
        if self.fusion.calls and is_chain_call(node, self.fusion.refs):
            if callee_of(node, self.fusion.refs) is not np.roll:   # (rolls a name: kept)
                node.args = [self.operand(a) for a in node.args]
            return node
        return self.generic_visit(node)


# the helpers that take a chain in place of one argument: (that argument, their arity)
_CONSUMERS = {runtime.unbroadcast: (0, 2), runtime.add_at_index_inplace: (1, 4),
              runtime.plus_inplace: (1, 2)}   # (plus_inplace's later terms: _merge_sums)


class _Likes(gast.NodeTransformer):
    """``weak(number, t)`` of a temporary written in place: ``weak(number, <its value>)``,
    whose dtype compiled code takes without computing it (runtime/numba/loops.py)."""

    def __init__(self, values, refs):
        self.values, self.refs = values, refs

    def visit_Call(self, node):
        self.generic_visit(node)
        if len(node.args) == 2 and isinstance(node.args[1], gast.Name) and \
                node.args[1].id in self.values and callee_of(node, self.refs) is runtime.weak:
            node.args[1] = ir.clone(self.values[node.args[1].id])
        return node


def _merge_sums(stmts, refs, calls):
    """Chains added into one sum by successive statements of a block added by the last of
    them: ``bv = plus_inplace(bv, np.roll(a, 1, 0)); b2 = b1; bv = bv + np.roll(b2, -1, 0)``
    as ``bv = plus_inplace(bv, np.roll(a, 1, 0), np.roll(b2, -1, 0))``, one loop over the
    elements where there were two (reverse mode adds each term's cotangent into its
    operand's one by one).  The terms are added in their order, so the sum is the same to
    the last bit.  An addition moves down past statements that compute chains only (no
    update in place, no call made for its effect), read neither the sum nor rebind what it
    reads.  In place only where the first addition was: the sum's array before it may be
    another name's."""
    i = 0
    while i < len(stmts):
        first = _added(stmts[i], refs, calls)
        if first is None:
            i += 1
            continue
        acc, in_place, terms = first
        reads = set().union(*map(_reads, terms))
        for j in range(i + 1, len(stmts)):
            s = stmts[j]
            then = _added(s, refs, calls)
            if then is not None and then[0] == acc:
                terms = terms + then[2]
                s.value = ir.call(stmts[i].value.func, [ir.name(acc), *terms]) if in_place \
                    else _sum([ir.name(acc), *terms])
                del stmts[i]
                break
            if not (isinstance(s, gast.Assign) and is_chain(s.value, refs, calls)) or \
                    ({acc} | reads) & {n.id for t in s.targets for n in gast.walk(t)
                                       if isinstance(n, gast.Name)} or acc in _reads(s.value):
                i += 1
                break
        else:
            i += 1


def _added(s, refs, calls):
    """(sum, in place, the chains added) of ``acc = plus_inplace(acc, <chain>, ...)`` or
    ``acc = acc + <chain> + ...`` whose chains do not read acc, else None."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and
            isinstance(s.targets[0], gast.Name)):
        return None
    acc, v, terms = s.targets[0].id, s.value, []
    in_place = isinstance(v, gast.Call) and callee_of(v, refs) is runtime.plus_inplace
    if in_place:
        head, terms = (v.args[0], list(v.args[1:])) if not v.keywords else (None, [])
    else:
        while isinstance(v, gast.BinOp) and isinstance(v.op, gast.Add):
            terms.insert(0, v.right)
            v = v.left
        head = v
    if not (isinstance(head, gast.Name) and head.id == acc and terms) or any(
            not is_chain(t, refs, calls) or acc in _reads(t) for t in terms):
        return None
    return acc, in_place, terms


def _sum(terms):
    out = terms[0]
    for t in terms[1:]:
        out = gast.BinOp(left=out, op=gast.Add(), right=t)
    return out


def _reads(expr):
    return {n.id for n in gast.walk(expr) if isinstance(n, gast.Name)}


def _matmul(node):
    return isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult)
