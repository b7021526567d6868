"""Results written over a temporary array nothing reads again.

A loop's step makes a few small arrays and drops them (``_t12 = elementwise('_0 + _1 + _2',
_t8, _t10, b); h = tanh_np(_t12)``): each is an allocation and a fresh stretch of memory,
which for arrays of tens of elements costs as much as the arithmetic.  Where an operand is a
temporary the transforms made, assigned once from a call or operator that makes a new array
and read only here, its array is dead after this statement and no other name can see it, so
the result goes over it: ``elementwise_into('_0 + _1 + _2', _t8, _t10, b)`` (into ``_0``,
the dead one), ``tanh_np(_t12, out=_t12)``.  Any other local qualifies where this block
bound it from such a call, nothing has read it since (so no other name or tape holds its
array) and nothing reads it after this statement: ``bh = bh + g; d = elementwise(..., bh, h);
bh = ...``, a cotangent carried through a loop.  The helpers check the dtype and rank when
compiled and the shape when run, and make a new array where the result does not fit; as
Python they make a new array.  Compiled code only; it runs after fusion (codegen/fuse.py and
loops.py), on the statements left.
"""
import re
from collections import Counter

import gast

from .. import runtime
from ..runtime.via_numpy import VIA_NUMPY
from ..transformer import ir
from ..transformer.analysis import live_after, writes
from .cpu import _bind, callee_of
from .fuse import OPERATORS, TEMP
from .inplace import SHAPE_ONLY_ATTRIBUTES, _blocks
from .loops import chain_text, is_chain

STUBS = set(VIA_NUMPY.values())
# calls whose result is a new array (or a number), never an argument or a view of one
FRESH = {runtime.elementwise, runtime.elementwise_into, runtime.matmul, runtime.matmul_vjp_x,
         runtime.matmul_vjp_y, *STUBS}
# calls returning a tuple: the positions that hold a new array (or a number), compiled
FRESH_PARTS = {runtime.setitem_split_inplace: (1,), runtime.setitem_split_kept: (1,),
               runtime.setitem_split_add: (1,)}
_PLACEHOLDER = re.compile(r"\b_(\d+)\b")


def reuse_dead(node, refs, numbers=()):
    """``node`` (a lowered FunctionDef) with results written over dead temporaries;
    ``numbers``: names known to hold numbers (never reused)."""
    local = ir.names_in(node) - set(refs)
    _split_adds(node, refs, local)
    names = [n for n in gast.walk(node) if isinstance(n, gast.Name)]
    loads = Counter(n.id for n in names if isinstance(n.ctx, gast.Load))
    loads.subtract(_shape_reads(node, refs))    # (a shape or dtype is the same after)
    stores = Counter(n.id for n in names if isinstance(n.ctx, gast.Store))

    after = live_after(node.body)
    for block in _blocks(node):
        made = set()     # this block's temporaries so far that hold an array of their own
        owned = set()    # its other locals bound so, not read since
        for s in block:
            read, bound = ir.names_in(s, gast.Load), _targets(s)
            live = after.get(id(s), local)    # (an objmode island's body: all of it)
            dead = {n for n in made if loads[n] == 1} | {
                n for n in owned if n not in live or n in bound}
            if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                    isinstance(s.targets[0], gast.Name):
                _reuse(s, dead, refs, local)
            owned -= read | bound
            for target in _bound_fresh(s, refs):
                if TEMP.match(target) and stores[target] == 1 and target not in numbers:
                    made.add(target)
                elif target in local and target not in numbers:
                    owned.add(target)
    return node


def _split_adds(node, refs, local):
    """``g, t = setitem_split_inplace(g, i, v); x = x + t`` (or ``plus_inplace(x, t)``), ``t``
    read nowhere else, as ``g, x = setitem_split_add(g, i, v, x)``: the row's cotangent added
    with no array of its own (reverse mode through ``hs[t] = h`` in a loop that carries ``h``)."""
    loads = Counter(n.id for n in gast.walk(node) if isinstance(n, gast.Name) and
                    isinstance(n.ctx, gast.Load))
    for block in list(_blocks(node)):
        k = 0
        while k + 1 < len(block):
            s, n = block[k], block[k + 1]
            k += 1
            if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Tuple) and
                    len(s.targets[0].elts) == 2 and isinstance(s.value, gast.Call) and
                    callee_of(s.value, refs) is runtime.setitem_split_inplace and
                    all(isinstance(e, gast.Name) for e in s.targets[0].elts)):
                continue
            t = s.targets[0].elts[1].id
            add = n.value if isinstance(n, gast.Assign) and len(n.targets) == 1 and \
                isinstance(n.targets[0], gast.Name) else None
            if isinstance(add, gast.BinOp) and isinstance(add.op, gast.Add):
                terms = [add.left, add.right]
            elif isinstance(add, gast.Call) and callee_of(add, refs) is runtime.plus_inplace \
                    and len(add.args) == 2 and not add.keywords:
                terms = add.args     # (inplace.py: the sum owned)
            else:
                continue
            if not (loads[t] == 1 and {_id(e) for e in terms} == {t, n.targets[0].id}
                    and t != n.targets[0].id):
                continue
            x = n.targets[0].id
            fn = _bind(refs, runtime.setitem_split_add, "setitem_split_add", local)
            s.targets[0].elts[1] = ir.name(x, store=True)
            s.value = ir.call(fn, [*s.value.args, ir.name(x)])
            del block[k]


def _id(e):
    return e.id if isinstance(e, gast.Name) else None


# helpers reading some arguments for their shape and dtype only: (first such, last + 1)
_SHAPE_ONLY = {runtime.shape_like: (0, 1), runtime.chain_like: (1, None), runtime.weak: (1, 2)}


def _shape_reads(node, refs):
    """How often each name is read for its shape or dtype only."""
    out = Counter()
    for n in gast.walk(node):
        if isinstance(n, gast.Attribute) and n.attr in SHAPE_ONLY_ATTRIBUTES and \
                isinstance(n.value, gast.Name):
            out[n.value.id] += 1
        elif isinstance(n, gast.Call) and callee_of(n, refs) in _SHAPE_ONLY:
            first, end = _SHAPE_ONLY[callee_of(n, refs)]
            out.update(a.id for a in n.args[first:end] if isinstance(a, gast.Name))
    return out


def _reuse(s, dead, refs, local):
    """``s`` (``name = ...``) written over a dead operand, where its call can be."""
    v = s.value
    fn = callee_of(v, refs) if isinstance(v, gast.Call) else None
    if fn is runtime.elementwise and not v.keywords and len(v.args) > 1 and \
            isinstance(v.args[0], gast.Constant):
        _into(s, v.args[0].value, v.args[1:], dead, refs, local)
    elif isinstance(v, OPERATORS) and is_chain(v, refs):
        text, operands = chain_text(v, refs)
        _into(s, text, [ir.name(o) for o in operands], dead, refs, local)
    elif fn in STUBS and len(v.args) == 1 and not v.keywords and \
            _dead(v.args[0], v, dead, refs):
        v.keywords = [gast.keyword(arg="out", value=ir.name(v.args[0].id))]


def _bound_fresh(s, refs):
    """The names ``s`` binds to an array of their own (or a number)."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1):
        return ()
    t, v = s.targets[0], s.value
    fn = callee_of(v, refs) if isinstance(v, gast.Call) else None
    if isinstance(t, gast.Name):
        fresh = fn in FRESH or isinstance(v, OPERATORS) and not (
            isinstance(v, gast.UnaryOp) and isinstance(v.op, gast.UAdd)) or \
            fn is runtime.plus_inplace and _id(v.args[0]) == t.id   # (inplace.py: owned)
        return (t.id,) if fresh else ()
    if isinstance(t, gast.Tuple) and fn in FRESH_PARTS:
        return tuple(t.elts[k].id for k in FRESH_PARTS[fn]
                     if k < len(t.elts) and isinstance(t.elts[k], gast.Name))
    return ()


def _targets(s):
    return ir.names_in(s, gast.Store) if isinstance(s, gast.Assign) else writes(s)


def _dead(e, value, dead, refs):
    """``e`` names an array nothing reads after ``value``, which reads its values once (and
    its shape or dtype as often as it likes: they are the same after)."""
    return isinstance(e, gast.Name) and e.id in dead and sum(
        isinstance(n, gast.Name) and n.id == e.id for n in gast.walk(value)
    ) - _shape_reads(value, refs)[e.id] == 1


def _into(s, text, operands, dead, refs, local):
    """``s = elementwise_into(<text>, ...)`` with the first dead operand as ``_0``."""
    k = next((i for i, o in enumerate(operands) if _dead(o, s.value, dead, refs)), None)
    if k is None:
        return
    swap = {0: k, k: 0}
    text = _PLACEHOLDER.sub(lambda m: f"_{swap.get(int(m.group(1)), int(m.group(1)))}", text)
    operands = list(operands)
    operands[0], operands[k] = operands[k], operands[0]
    fn = _bind(refs, runtime.elementwise_into, "elementwise_into", local)
    s.value = ir.call(fn, [ir.const(text), *operands])
