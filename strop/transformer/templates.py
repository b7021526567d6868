"""Rule templates inlined into generated code: names substituted, constants folded."""
import builtins
import operator

import gast
import numpy as np

from .ir import clone
from .rules import TEMPLATE_NAMESPACE, template_ast

_FOLD = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
         gast.Div: operator.truediv, gast.Pow: operator.pow}


def instantiate(template, env, bind):
    """The template's expression with ``env``'s names replaced by its nodes; other names are
    template globals (``np``, runtime helpers), bound through ``bind(name, object)``."""
    expr = _Substitute(env, bind).visit(clone(template_ast(template)))
    return _Fold().visit(expr)


class _Substitute(gast.NodeTransformer):
    def __init__(self, env, bind):
        self.env, self.bind = env, bind

    def visit_Name(self, node):
        if node.id in self.env:
            return clone(self.env[node.id])
        if node.id not in TEMPLATE_NAMESPACE and hasattr(builtins, node.id):
            return node   # sum, zip, dict: the generated module sees the builtins
        return gast.Name(id=self.bind(node.id, TEMPLATE_NAMESPACE[node.id]), ctx=gast.Load(),
                         annotation=None, type_comment=None)


def _literal_is_none(node):
    """True/False when ``node`` is surely None / surely not None; None when unknown.
    (Only ``x is None`` with a literal on one side and None on the other folds.)"""
    if isinstance(node, gast.Constant):
        return node.value is None
    if isinstance(node, (gast.Tuple, gast.List)):
        return False
    return None


def _const(node):
    return isinstance(node, gast.Constant) and isinstance(node.value, (int, float, bool))


class _Fold(gast.NodeTransformer):
    """Fold what the substitution made constant, so ``x ** np.where(2, 2 - 1, 1.0)`` reads
    ``x ** 1`` and ``g * True`` reads ``g``."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if _const(node.left) and _const(node.right) and type(node.op) in _FOLD:
            try:
                return gast.Constant(value=_FOLD[type(node.op)](node.left.value,
                                                                node.right.value), kind=None)
            except ArithmeticError:
                return node
        if isinstance(node.op, gast.Mult):
            for a, b in ((node.left, node.right), (node.right, node.left)):
                if isinstance(b, gast.Constant) and b.value is True:
                    return a
        if isinstance(node.op, gast.Pow) and isinstance(node.right, gast.Constant) and \
                node.right.value == 1 and not isinstance(node.right.value, bool):
            return node.left
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.USub) and _const(node.operand) and not isinstance(
                node.operand.value, bool):
            return gast.Constant(value=-node.operand.value, kind=None)
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (gast.Is, gast.IsNot)):
            known = [_literal_is_none(x) for x in (node.left, node.comparators[0])]
            if None not in known:
                same = known[0] and known[1]   # two literals: both None, or not "is"
                return gast.Constant(value=same if isinstance(node.ops[0], gast.Is) else
                                     not same, kind=None)
        if len(node.ops) == 1 and isinstance(node.ops[0], (gast.Eq, gast.NotEq)) and _const(
                node.left) and _const(node.comparators[0]):   # (``wrt == 0``: one branch)
            same = node.left.value == node.comparators[0].value
            return gast.Constant(value=same if isinstance(node.ops[0], gast.Eq) else not same,
                                 kind=None)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if isinstance(node.test, gast.Constant):
            return node.body if node.test.value else node.orelse
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if _is_np(f, "where") and len(node.args) == 3 and _const(node.args[0]):
            return node.args[1] if node.args[0].value else node.args[2]
        if _is_np(f, "negative") and len(node.args) == 1 and not node.keywords and _const(
                node.args[0]) and not isinstance(node.args[0].value, bool):
            # (roll's cotangent: np.roll(g, -1, 0), whose constant shift a loop can read)
            return gast.Constant(value=-node.args[0].value, kind=None)
        return node


def _is_np(f, attr):
    return isinstance(f, gast.Attribute) and f.attr == attr and isinstance(
        f.value, gast.Name) and TEMPLATE_NAMESPACE.get("np") is np
