"""Helpers of arithmetic: Python numbers kept weak, ties of max/min, and Python's ``+`` and
``*`` where an operand is a list or tuple (sequences join and repeat; see
transformer/operands.py)."""
import operator

import numpy as np

from .base import add, like, unbroadcast, zeros_like
from .indexing import add_at_index_inplace

__all__ = ["weak", "power_int", "elementwise", "elementwise_into", "chain_like", "unbroadcast_chain", "add_at_index_chain", "balanced_eq", "plus", "plus_inplace", "plus_vjp", "times", "times_vjp", "times_jvp"]


def weak(number, like):
    """A Python number in arithmetic with ``like``: as it is (NumPy already treats it as weak,
    taking ``like``'s precision); compiled code casts it to ``like``'s type (Numba would not)."""
    return number


def power_int(x, n):
    """``x ** n`` for an int ``n`` written in the code (``x ** 3``), as NumPy computes it with
    ``n`` weak.  Compiled code raises a float to it by multiplying, as Numba's ``**`` of a float
    number does and JAX's ``integer_pow``: a float exponent (what ``weak`` would make of it)
    calls ``pow`` for every element."""
    return x ** n


def multiplied_power(n):
    """Whether ``x ** n`` is worth ``power_int``: an int exponent, but not one whose float
    power LLVM already computes as arithmetic (``x ** 2.0``: ``x * x``), nor one so large that
    repeated squaring's rounding shows."""
    return type(n) is int and n not in (-1, 0, 1, 2) and abs(n) <= 64


# the operators of a chain elementwise runs (Python's ast names), as functions
CHAIN_OPERATORS = {"Add": operator.add, "Sub": operator.sub, "Mult": operator.mul,
                   "Div": operator.truediv, "FloorDiv": operator.floordiv, "Mod": operator.mod,
                   "Pow": operator.pow, "BitAnd": operator.and_, "BitOr": operator.or_,
                   "BitXor": operator.xor, "USub": operator.neg, "UAdd": operator.pos,
                   "Invert": operator.invert, "Lt": operator.lt, "LtE": operator.le,
                   "Gt": operator.gt, "GtE": operator.ge, "Eq": operator.eq, "NotEq": operator.ne}


# the NumPy ufuncs a chain may call, written ``np.<name>(...)`` in its text: elementwise on
# numbers as on arrays, in Numba as in NumPy (codegen/fuse.py writes them into chains)
CHAIN_UFUNCS = frozenset((
    np.sqrt, np.cbrt, np.square, np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10,
    np.log1p, np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh,
    np.tanh, np.arcsinh, np.arccosh, np.arctanh, np.absolute, np.negative, np.sign, np.floor,
    np.ceil, np.trunc, np.maximum, np.minimum, np.fmax, np.fmin, np.arctan2, np.hypot,
    np.logaddexp, np.copysign))


def elementwise(chain, *operands):
    """The elementwise ``chain`` of operators (source text naming the operands ``_0``, ``_1``,
    ...) on ``operands``: what compiled code calls for a chain over three or more arrays
    (codegen/loops.py), which its Numba implementation runs as one loop where the arrays share
    one shape (Numba's own loop for an expression keeps broadcasting checks inside it, so it
    does not vectorize).  As Python, the expression itself."""
    return eval(chain, {"weak": weak, "power_int": power_int, "np": np},
                {f"_{i}": v for i, v in enumerate(operands)})


def elementwise_into(chain, *operands):
    """``elementwise(chain, *operands)``, compiled into ``_0``'s array where it is of the
    result's shape and dtype: a temporary nothing reads again (codegen/reuse.py), so no new
    array is made.  As Python, a new array."""
    return elementwise(chain, *operands)


def chain_like(chain, *operands):
    """``shape_like(elementwise(chain, *operands))`` without computing the chain: what a tape
    keeps of a temporary that compiled code fused into a longer chain (codegen/fuse.py), which
    the adjoint reads only for its shape and dtype.  Of numbers, the chain's value."""
    if not any(isinstance(o, np.ndarray) for o in operands):
        return elementwise(chain, *operands)
    probes = [np.ones((1,) * o.ndim, o.dtype) if isinstance(o, np.ndarray) else o
              for o in operands]   # (of the operands' ranks: a chain may roll one)
    with np.errstate(all="ignore"):
        dtype = np.result_type(elementwise(chain, *probes))
    return np.broadcast_to(np.zeros((), dtype), np.broadcast_shapes(*map(np.shape, operands)))


def unbroadcast_chain(chain, x, *operands):
    """``unbroadcast(elementwise(chain, *operands), x)``: a cotangent made by a chain and
    summed down to x's shape (codegen/fuse.py), which compiled code sums as it computes it
    where ``x`` is a number (``balpha + sum(_bt8 * lap)``: no array in between)."""
    return unbroadcast(elementwise(chain, *operands), x)


def add_at_index_chain(acc, chain, x, idx, *operands):
    """``add_at_index_inplace(acc, elementwise(chain, *operands), x, idx)``: a cotangent made
    by a chain added into the part ``idx`` of the sum ``acc`` (codegen/fuse.py), which
    compiled code adds as it computes it (no array in between) where the part is a view of
    the chain's shape."""
    return add_at_index_inplace(acc, elementwise(chain, *operands), x, idx)


def balanced_eq(x, z, y):
    """Share of the cotangent of max/min going to ``x``: ties split evenly (as autograd does)."""
    return (x == z) / (1.0 + (y == z))


def plus(a, b):
    """Python's ``a + b`` where an operand is a list or tuple (normalize emits it, see
    transformer/operands.py): two sequences concatenate, else NumPy adds."""
    return a + b


def plus_inplace(a, b, *more):
    """``a + b``, where codegen/inplace.py proved ``a``'s array owned: compiled code adds ``b``
    into it when the sum has its shape and dtype (no array made each trip of a loop).  With
    ``more`` (codegen/fuse.py merged later additions): ``a + b + ...``, in that order."""
    out = a + b
    for x in more:
        out = out + x
    return out


def _is_seq(v):
    return isinstance(v, (list, tuple))


def plus_vjp(g, a, b, which):
    """Cotangent of ``(a, b)[which]`` in ``plus(a, b)``."""
    if _is_seq(a) and _is_seq(b):
        return like(g[:len(a)], a) if which == 0 else like(g[len(a):], b)
    x = (a, b)[which]
    return unbroadcast(g, np.asarray(x) if _is_seq(x) else x)


def times(a, b):
    """Python's ``a * b`` where an operand is a list or tuple: a sequence repeated by an int,
    else NumPy's product."""
    return a * b


def _repeated(a, b):
    """0 or 1: which operand of ``a * b`` is a sequence repeated by the other; None: a product."""
    for k, (s, n) in enumerate(((a, b), (b, a))):
        if _is_seq(s) and isinstance(n, (int, np.integer)):
            return k
    return None


def times_vjp(g, a, b, which):
    """Cotangent of ``(a, b)[which]`` in ``times(a, b)``: a repeated sequence's, the sum of its
    copies' (the count has none); a factor's, NumPy's."""
    k = _repeated(a, b)
    if k is not None:
        if which != k:
            return None
        s, n = (a, b) if k == 0 else (b, a)
        out = zeros_like(s)
        for i in range(max(n, 0)):
            out = [add(o, gi) for o, gi in zip(out, g[i * len(s):(i + 1) * len(s)])]
        return like(out, s)
    x, y = ((a, b) if which == 0 else (b, a))
    return unbroadcast(g * np.asarray(y), np.asarray(x) if _is_seq(x) else x)


def times_jvp(a, b, da, db):
    """Tangent of ``times(a, b)`` (None: no tangent)."""
    k = _repeated(a, b)
    if k is not None:
        return times(zeros_like(a) if da is None else da, b) if k == 0 else \
            times(a, zeros_like(b) if db is None else db)
    arr = lambda v: np.asarray(v) if _is_seq(v) else v  # noqa: E731
    out = 0.0 if da is None else arr(da) * arr(b)
    return out if db is None else out + arr(a) * arr(db)
