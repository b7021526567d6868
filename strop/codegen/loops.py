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
view.  Compiled code only; as Python, ``elementwise`` evaluates the text.
"""
import gast

from .. import runtime
from ..runtime.arithmetic import CHAIN_OPERATORS
from ..transformer import ir
from ..transformer.unparse import unparse
from .cpu import _bind, callee_of

MIN_NAMES = 3


def loop_chains(node, refs, min_names=MIN_NAMES):
    """``node`` (a lowered FunctionDef) with each chain over ``min_names`` or more names as a
    call of runtime.elementwise; ``refs`` gains the name it is bound to.  (The device's
    code takes every chain of operators: one kernel each.)"""
    local = ir.names_in(node) - set(refs)
    for s in gast.walk(node):
        consumed = _consumed_chain(s, refs)
        if consumed is not None:
            helper, at, call = consumed
            text, names = chain_text(call.args[at], refs)
            fn = _bind(refs, helper, helper.__name__, local)
            rest = [a for i, a in enumerate(call.args) if i != at]
            s.value = ir.call(fn, [*rest[:at], ir.const(text), *rest[at:], *map(ir.name, names)])
            continue
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], gast.Name) and is_chain(s.value, refs)
                and not isinstance(s.value, (gast.Name, gast.Constant, gast.Call))):
            continue
        text, names = chain_text(s.value, refs)
        if len(names) < min_names and not _typed_weak(s.value, refs):
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


def is_chain(e, refs):
    """Whether ``e`` is operators over names, numbers and ``weak(number, name)`` only."""
    if isinstance(e, gast.Name):
        return True
    if isinstance(e, gast.Constant):
        return type(e.value) in (bool, int, float)
    if isinstance(e, gast.Call):     # (the second argument: for its dtype only)
        return callee_of(e, refs) is runtime.weak and len(e.args) == 2 and not e.keywords \
            and isinstance(e.args[0], (gast.Constant, gast.Name)) and is_chain(e.args[1], refs)
    if isinstance(e, gast.BinOp):
        return type(e.op).__name__ in CHAIN_OPERATORS and is_chain(e.left, refs) and is_chain(e.right, refs)
    if isinstance(e, gast.UnaryOp):
        return type(e.op).__name__ in CHAIN_OPERATORS and is_chain(e.operand, refs)
    if isinstance(e, gast.Compare):
        return len(e.ops) == 1 and type(e.ops[0]).__name__ in CHAIN_OPERATORS and \
            is_chain(e.left, refs) and is_chain(e.comparators[0], refs)
    return False


# helpers fuse.py writes a chain into -> (the argument, the helper taking the chain's text
# there, its operands last)
CONSUMERS = {runtime.unbroadcast: (0, runtime.unbroadcast_chain),
             runtime.add_at_index_inplace: (1, runtime.add_at_index_chain)}


def _consumed_chain(s, refs):
    """(the chain's helper, the argument, the call) of ``t = unbroadcast(<chain>, x)`` or
    ``acc = add_at_index_inplace(acc, <chain>, x, i)`` (fuse.py), or None."""
    v = getattr(s, "value", None) if isinstance(s, gast.Assign) and len(s.targets) == 1 \
        else None
    entry = CONSUMERS.get(callee_of(v, refs)) if isinstance(v, gast.Call) else None
    if entry is None or v.keywords:
        return None
    at, helper = entry
    chain = v.args[at] if at < len(v.args) else None
    if chain is None or isinstance(chain, (gast.Name, gast.Constant)) or not is_chain(chain, refs):
        return None
    return helper, at, v


def _typed_weak(e, refs):
    """Whether chain ``e`` has a ``weak(number, <expression>)`` (fuse.py), which only the
    implementation of elementwise types without computing the expression."""
    return any(isinstance(n, gast.Call) and callee_of(n, refs) is runtime.weak and
               not isinstance(n.args[1], gast.Name) for n in gast.walk(e))


def _in_order(e):
    """The names in ``e``, left to right as they are written."""
    if isinstance(e, gast.Name):
        yield e
    for child in gast.iter_child_nodes(e):
        yield from _in_order(child)


def _is_weak(n, refs):
    return refs.get(n.id) is runtime.weak


class _Placeholders(gast.NodeTransformer):
    """The chain's names as ``_0``, ``_1``, ...; the weak helper as ``weak``."""

    def __init__(self, names, refs):
        self.names, self.refs = names, refs

    def visit_Name(self, node):
        weak = self.refs.get(node.id) is runtime.weak
        return ir.name("weak" if weak else f"_{self.names.index(node.id)}")
