"""Elementwise chains over three or more names as one call that compiled code runs as a loop.

After fuse.py, a chain of operators is one expression (``lap = _t1 - weak(2, _t2) * _t2 +
_t5``).  Numba compiles such an expression into a loop that checks, for every operand and
element, whether the operand is broadcast; with three or more operands those checks stay in
the loop and it does not vectorize (runtime/numba/loops.py has the numbers).  So a chain over
three or more names becomes ``lap = elementwise("_0 - weak(2, _1) * _1 + _2", _t1, _t2, _t5)``:
its Numba implementation runs one loop nest where the arrays among the operands share one
shape, and the expression itself elsewhere (numbers, broadcasting, other dtypes).  So does a chain
with ``weak(2, -_bt4)``, a number typed like an expression (fuse.py): elementwise types it
without computing it.  A chain summed by unbroadcast becomes ``unbroadcast_chain(text, x,
...)``, which sums its elements as it computes them where ``x`` is a number, and one added
into part of a sum ``add_at_index_chain(acc, text, x, i, ...)``, which adds them into the
view; one added into an owned sum, ``elementwise_into("_0 + (...)", acc, ...)``.  Compiled
code only; as Python, ``elementwise`` evaluates the text.
"""
import gast
import numpy as np

from .. import runtime
from ..runtime.arithmetic import CHAIN_OPERATORS, CHAIN_UFUNCS
from ..transformer import ir
from ..transformer.unparse import unparse
from .cpu import _bind, callee_of

MIN_NAMES = 3


def loop_chains(node, refs, min_names=MIN_NAMES, calls=True):
    """``node`` (a lowered FunctionDef) with each chain over ``min_names`` or more names as a
    call of runtime.elementwise; ``refs`` gains the name it is bound to.  (The device's
    code takes every chain of operators: one kernel each, and no calls: ``calls=False``.)"""
    local = ir.names_in(node) - set(refs)
    for s in gast.walk(node):
        consumed = _consumed_chain(s, refs, calls)
        if consumed is not None:
            helper, at, call = consumed
            fn = _bind(refs, helper, helper.__name__, local)
            if helper is runtime.elementwise_into:   # plus_inplace(acc, <chain>, ...): acc's
                # array is no other name's (inplace.py): ``acc + <chain> + ...`` goes into it
                total = call.args[0]
                for term in call.args[1:]:
                    total = gast.BinOp(left=total, op=gast.Add(), right=term)
                text, names = chain_text(total, refs)
                s.value = ir.call(fn, [ir.const(text), *map(ir.name, names)])
                continue
            text, names = chain_text(call.args[at], refs)
            rest = [a for i, a in enumerate(call.args) if i != at]
            s.value = ir.call(fn, [*rest[:at], ir.const(text), *rest[at:], *map(ir.name, names)])
            continue
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], gast.Name) and is_chain(s.value, refs, calls)
                and not isinstance(s.value, (gast.Name, gast.Constant, gast.Call))):
            continue
        text, names = chain_text(s.value, refs)
        if len(names) < min_names and not _typed_weak(s.value, refs) and not (
                calls and has_roll(s.value, refs)):   # (a roll alone: a copy of its array)
            continue
        fn = _bind(refs, runtime.elementwise, "elementwise", local)
        s.value = ir.call(fn, [ir.const(text), *[ir.name(n) for n in names]])
    return node


def chain_text(e, refs):
    """(the text of chain ``e`` naming its operands ``_0``, ``_1``, ...; the operands)."""
    names = []
    for n in _in_order(e):
        if n.id not in names and not _is_weak(n, refs):
            names.append(n.id)
    return unparse(_Placeholders(names, refs).visit(ir.clone(e))), names


def is_chain(e, refs, calls=True):
    """Whether ``e`` is operators over names, numbers and ``weak(number, name)`` only, and
    with ``calls``, the ufuncs of CHAIN_UFUNCS and ``power_int(chain, int)``."""
    if isinstance(e, gast.Name):
        return True
    if isinstance(e, gast.Constant):
        return type(e.value) in (bool, int, float)
    if isinstance(e, gast.Call):     # (the second argument: for its dtype only)
        if callee_of(e, refs) is runtime.weak:
            return len(e.args) == 2 and not e.keywords and isinstance(
                e.args[0], (gast.Constant, gast.Name)) and is_chain(e.args[1], refs, calls)
        return calls and is_chain_call(e, refs) and (callee_of(e, refs) is np.roll or all(
            is_chain(a, refs, calls) for a in e.args))   # (a roll's: a name and constants)
    if isinstance(e, gast.BinOp):
        return type(e.op).__name__ in CHAIN_OPERATORS and is_chain(e.left, refs, calls) and \
            is_chain(e.right, refs, calls)
    if isinstance(e, gast.UnaryOp):
        return type(e.op).__name__ in CHAIN_OPERATORS and is_chain(e.operand, refs, calls)
    if isinstance(e, gast.Compare):
        return len(e.ops) == 1 and type(e.ops[0]).__name__ in CHAIN_OPERATORS and \
            is_chain(e.left, refs, calls) and is_chain(e.comparators[0], refs, calls)
    return False


def is_chain_call(e, refs):
    """Whether call ``e`` may be a step of a chain: a ufunc of CHAIN_UFUNCS of its operands
    (the ufunc itself: a twin lowering put in has its reasons), ``power_int(x, int)``, or
    ``np.roll(name, int, int)`` (``is_roll``)."""
    if not isinstance(e, gast.Call) or any(isinstance(a, gast.Starred) for a in e.args):
        return False
    fn = callee_of(e, refs)
    if fn is np.roll:
        return is_roll(e)
    if e.keywords:
        return False
    if fn is runtime.power_int:
        return len(e.args) == 2 and isinstance(e.args[1], gast.Constant) and \
            type(e.args[1].value) is int
    return fn in CHAIN_UFUNCS and len(e.args) == fn.nin


def is_roll(e):
    """Whether ``e`` (a call of np.roll) rolls a name by a constant along a constant axis (or
    none, which a vector's loop reads as its own): a chain's loop reads that array at shifted
    indices (runtime/numba/loops.py), where NumPy makes a rolled copy."""
    given = dict(zip(("a", "shift", "axis"), e.args))
    for k in e.keywords:
        if k.arg not in ("shift", "axis") or k.arg in given:
            return False
        given[k.arg] = k.value
    axis = given.setdefault("axis", gast.Constant(value=None, kind=None))
    return len(given) == 3 and isinstance(given["a"], gast.Name) and _integer(
        given["shift"]) and (_integer(axis) or isinstance(axis, gast.Constant) and
                             axis.value is None)


def _integer(e):
    """Whether ``e`` writes an int (``3``, ``-1``)."""
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, (gast.USub, gast.UAdd)):
        return _integer(e.operand)
    return isinstance(e, gast.Constant) and type(e.value) is int


def has_roll(e, refs):
    return any(isinstance(n, gast.Call) and callee_of(n, refs) is np.roll for n in gast.walk(e))


# helpers fuse.py writes a chain into -> (the argument, the helper taking the chain's text
# there, its operands last)
CONSUMERS = {runtime.unbroadcast: (0, runtime.unbroadcast_chain),
             runtime.add_at_index_inplace: (1, runtime.add_at_index_chain),
             runtime.plus_inplace: (1, runtime.elementwise_into)}


def _consumed_chain(s, refs, calls):
    """(the chain's helper, the argument, the call) of ``t = unbroadcast(<chain>, x)`` or
    ``acc = add_at_index_inplace(acc, <chain>, x, i)`` (fuse.py), or None."""
    v = getattr(s, "value", None) if isinstance(s, gast.Assign) and len(s.targets) == 1 \
        else None
    entry = CONSUMERS.get(callee_of(v, refs)) if isinstance(v, gast.Call) else None
    if entry is None or v.keywords:
        return None
    at, helper = entry
    if helper is runtime.elementwise_into and len(v.args) > 2:   # (terms fuse.py merged)
        return (helper, at, v) if all(is_chain(t, refs, calls) for t in v.args[1:]) else None
    chain = v.args[at] if at < len(v.args) else None
    if chain is None or isinstance(chain, (gast.Name, gast.Constant)) or \
            not is_chain(chain, refs, calls):
        return None
    return helper, at, v


def _typed_weak(e, refs):
    """Whether chain ``e`` has a ``weak(number, <expression>)`` (fuse.py), which only the
    implementation of elementwise types without computing the expression."""
    return any(isinstance(n, gast.Call) and callee_of(n, refs) is runtime.weak and
               not isinstance(n.args[1], gast.Name) for n in gast.walk(e))


def _in_order(e):
    """The names in ``e``, left to right as they are written (a call's operands: not the
    name of what it calls)."""
    if isinstance(e, gast.Name):
        yield e
    for child in e.args if isinstance(e, gast.Call) else gast.iter_child_nodes(e):
        yield from _in_order(child)


def _is_weak(n, refs):
    return refs.get(n.id) is runtime.weak


class _Placeholders(gast.NodeTransformer):
    """The chain's names as ``_0``, ``_1``, ...; the weak helper as ``weak``, power_int as
    ``power_int`` and a ufunc as ``np.<its name>``, however the code named them."""

    def __init__(self, names, refs):
        self.names, self.refs = names, refs

    def visit_Call(self, node):
        fn = callee_of(node, self.refs)
        node.args = [self.visit(a) for a in node.args]
        if fn is runtime.weak or fn is runtime.power_int:
            node.func = ir.name(fn.__name__)
        else:
            node.func = gast.Attribute(value=ir.name("np"), attr=fn.__name__, ctx=gast.Load())
        return node

    def visit_Name(self, node):
        weak = self.refs.get(node.id) is runtime.weak
        return ir.name("weak" if weak else f"_{self.names.index(node.id)}")
