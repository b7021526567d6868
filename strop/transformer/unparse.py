"""Python source of one node of normalized code: for messages, and for the emitter."""
import ast

import gast


def unparse(node):
    node = _SignedConstants().visit(gast.gast_to_ast(node))
    for sub in ast.walk(node):   # ast.unparse reads lineno of statements (for type comments)
        if isinstance(sub, ast.stmt):
            sub.lineno = 0
    return ast.unparse(node)


class _SignedConstants(ast.NodeTransformer):
    """A negative number constant (folded from ``-4``) becomes ``-(4)`` again: ast.unparse
    writes a Constant as its repr with no parentheses, so ``(-1) ** n`` would come out as
    ``-1 ** n`` and ``(-2).bit_length()`` as ``-2 .bit_length()``; a UnaryOp gets the
    parentheses its position needs."""

    def visit_Constant(self, node):
        v = node.value
        if not isinstance(v, (int, float, complex)) or isinstance(v, bool) or \
                not repr(v).startswith("-"):   # -0.0 too; a complex -2j, not (-1-2j)
            return node
        if isinstance(v, complex):   # 0.0 - 2j: -(2j) would make the real part -0.0
            new = ast.BinOp(left=ast.Constant(0.0), op=ast.Sub(),
                            right=ast.Constant(complex(0.0, -v.imag)))
        else:
            new = ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-v))
        return ast.copy_location(new, node)
