"""What a statement of normalized code does, as the rule tables name it: Python's operators as
NumPy functions, the rule key and operands of a value, the tape statements of generated code.
Shared by the derivative passes (reverse, forward) and vmap."""
import gast
import numpy as np

from .. import runtime
from ..errors import TransformError
from . import ir
from .rules import lookup, rule_name
from .unparse import unparse

# Python operators and the NumPy functions whose rules they use.
BINOPS = {gast.Add: np.add, gast.Sub: np.subtract, gast.Mult: np.multiply,
          gast.Div: np.true_divide, gast.Pow: np.power, gast.Mod: np.mod,
          gast.MatMult: np.matmul, gast.FloorDiv: np.floor_divide,
          gast.BitAnd: np.bitwise_and, gast.BitOr: np.bitwise_or, gast.BitXor: np.bitwise_xor}
UNARYOPS = {gast.USub: np.negative, gast.UAdd: np.positive}
# NumPy functions that return (or may take and return) lists and tuples: adjoints add with add()
SEQUENCE_RESULTS = [np.array, np.asarray, np.split, np.array_split, np.hsplit, np.vsplit,
                    np.dsplit, np.broadcast_arrays, np.meshgrid, np.atleast_1d, np.atleast_2d,
                    np.atleast_3d, np.linalg.eigh, np.linalg.svd, np.linalg.slogdet,
                    np.linalg.qr, np.linalg.lstsq, np.linalg.eig, np.gradient, np.linspace] + (
                       [np.unstack] if hasattr(np, "unstack") else [])


def _rename(node, mapping):
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in mapping:
            n.id = mapping[n.id]
    return node


def tape_op(fn, s):
    """"push", "pop" or "stack" for the tape statements of generated code (differentiated
    again), else None."""
    value = s.value if isinstance(s, (gast.Expr, gast.Assign)) else None
    if isinstance(value, gast.Call):
        callee = fn.callee(value.func)
        if callee is runtime.push and isinstance(s, gast.Expr):
            return "push"
        if callee is runtime.pop and isinstance(s, gast.Assign):
            return "pop"
        if callee is runtime.stack and isinstance(s, gast.Assign):
            return "stack"
    return None


def operation(fn, value):
    """(rule key, positional operands, keyword operands) of an operator, attribute or call
    ``value``, and the names among its operands; None for other values (and operators that
    have no rule: ``not x``)."""
    if isinstance(value, gast.BinOp):
        key, args, kws = BINOPS[type(value.op)], [value.left, value.right], []
    elif isinstance(value, gast.UnaryOp) and type(value.op) in UNARYOPS:
        key, args, kws = UNARYOPS[type(value.op)], [value.operand], []
    elif isinstance(value, gast.Attribute):
        key, args, kws = ("attr", value.attr), [value.value], []
    elif isinstance(value, gast.Call):
        key = fn.callee(value.func)
        args = ([value.func.value] if isinstance(key, tuple) else []) + list(value.args)
        kws = [(k.arg, k.value) for k in value.keywords]
        if key is runtime.each and args and _underived(fn.callee(args[0])):
            # vmap's lane by lane run of a function that carries no derivative: as that one
            key, args = fn.callee(args[0]), args[2:]
    else:
        return None
    names = [n for a in list(args) + [v for _, v in kws] for t in _targets(a)
             for n in gast.walk(t) if isinstance(n, gast.Name)]
    return key, args, kws, names


def _underived(key):
    rule = lookup(key)
    return rule is not None and not rule.differentiable


def _walk_stmts(stmts):
    for s in stmts:
        yield s
        for field in ("body", "orelse"):
            yield from _walk_stmts(getattr(s, field, []) or [])


def _targets(arg):
    if isinstance(arg, gast.Name):
        return [arg]
    if isinstance(arg, (gast.Tuple, gast.List)):
        return list(arg.elts)
    if isinstance(arg, tuple):
        return list(arg)
    return []


def _as_node(v):
    if isinstance(v, gast.AST):
        return v
    if isinstance(v, tuple):
        return gast.Tuple(elts=[_as_node(x) for x in v], ctx=gast.Load())
    return ir.const(v)


def no_rule(key, value, loc, custom, fn=None):
    """The error for a value with no derivative rule that depends on the differentiated
    input; ``custom``: the decorator that defines one in this mode (custom_vjp, custom_jvp);
    ``fn``: the function, whose temporaries the message spells as the user wrote them."""
    return TransformError(
        f"no derivative rule for {_describe(key, value, fn)}, and its result depends on the "
        f"differentiated input", loc,
        fix=f"use a NumPy function strop differentiates (see docs/rules.md), wrap the value in "
            f"strop.lax.stop_gradient (`y = lax.stop_gradient(f(x))`) if no derivative should "
            f"flow, or define the derivative with strop.{custom}")


def is_namedtuple_call(fn, value):
    """Whether ``value`` makes a named tuple from its items by position: ``Layer(w, b)``."""
    if not isinstance(value, gast.Call) or value.keywords or any(
            isinstance(a, gast.Starred) for a in value.args):
        return False
    cls = fn.callee(value.func)
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def held_function(value, loc, fn=None):
    """The error for a call of a function held in a variable whose value depends on the
    differentiated input (a ``functools.partial`` binding an array, a function made from
    one): strop cannot see into it, and a zero derivative would be silently wrong."""
    return TransformError(
        f"strop cannot follow the derivative into {_describe(None, value, fn)}(...): the "
        f"function is a value made from the differentiated input, and strop differentiates "
        f"only calls it can see into", loc,
        fix="call the function directly with those values as arguments (f(x, w=w) instead of "
            "functools.partial(f, w=w)(x)), or define it with def in the transformed function")


def _describe(key, value, fn=None):
    if isinstance(key, tuple):
        return f"the method .{key[1]}()" if key[0] == "method" else f"the attribute .{key[1]}"
    if key is None:
        if not isinstance(value, gast.Call):
            return type(value).__name__
        return unparse(_as_written(value.func, _temporaries(fn)) if fn is not None else
                       value.func)
    return rule_name(key)


def _temporaries(fn):
    """{temporary: the value bound to it} of ``fn``'s temporaries bound once (``_t1``)."""
    bound = {}
    for n in gast.walk(fn.node):
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                n.targets[0], gast.Name) and n.targets[0].id.startswith("_t"):
            name = n.targets[0].id
            bound[name] = None if name in bound else n.value
    return {k: v for k, v in bound.items() if v is not None}


def _as_written(node, temporaries, depth=8):
    """``node`` with the temporaries in it replaced by what they hold (``_t1(x)`` of
    ``_t1 = np.vectorize(f)`` is ``np.vectorize(f)(x)``): the expression the user wrote."""
    node = ir.clone(node)
    if depth == 0:
        return node
    if isinstance(node, gast.Name) and node.id in temporaries:
        return _as_written(temporaries[node.id], temporaries, depth - 1)
    for field, old in gast.iter_fields(node):
        if isinstance(old, gast.AST):
            setattr(node, field, _as_written(old, temporaries, depth - 1))
        elif isinstance(old, list):
            setattr(node, field, [_as_written(v, temporaries, depth - 1) if isinstance(
                v, gast.AST) else v for v in old])
    return node
