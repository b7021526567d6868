"""Numba implementations of arithmetic.py's ``weak`` (a Python number cast to the type of what
it meets, as NumPy types it: Numba would make float64 of it), ``power_int`` (a float raised to
an int by multiplying) and ``balanced_eq`` (one loop in the operands' float type)."""
import numpy as np
from numba import types
from numba.np.numpy_support import as_dtype

from ... import runtime as rt
from ._common import overload


@overload(rt.weak)
def _weak(number, like):
    kind = like.dtype if isinstance(like, types.Array) else like
    same = (isinstance(kind, types.Float) and isinstance(number, (types.Integer, types.Float))
            or isinstance(kind, types.Complex) and isinstance(number, types.Number)
            or isinstance(kind, types.Integer) and isinstance(number, types.Integer))
    if same:
        cast = as_dtype(kind).type
        return lambda number, like: cast(number)
    return lambda number, like: number


@overload(rt.power_int, prefer_literal=True)
def _power_int(x, n):
    """A float raised to an int by multiplying (Numba's ``**`` of a float number and an int
    keeps the float's type; a constant exponent is unrolled): one loop over a float array, of
    its dtype; anything else as ``x ** weak(n, x)``, NumPy's types."""
    if not isinstance(n, types.Integer):
        return None
    power = str(n.literal_value) if isinstance(n, types.IntegerLiteral) else "n"
    if isinstance(x, types.Float):
        source = f"def impl(x, n):\n    return x ** {power}\n"
    elif isinstance(x, types.Array) and isinstance(x.dtype, types.Float):
        flat = "x" if x.layout == "C" else "np.ascontiguousarray(x)"   # (the same products)
        source = (f"def impl(x, n):\n    out = np.empty(x.shape, x.dtype)\n"
                  f"    o, xf = out.reshape(-1), {flat}.reshape(-1)\n"
                  f"    for i in range(o.size):\n        o[i] = xf[i] ** {power}\n"
                  f"    return out\n")
    else:
        return lambda x, n: x ** rt.weak(n, x)
    space = {"np": np}
    exec(source, space)
    return space["impl"]


def _float(t):
    return isinstance(t.dtype if isinstance(t, types.Array) else t, types.Float)


@overload(rt.balanced_eq)
def _balanced_eq(x, z, y):
    """max/min's share of the cotangent, for float operands where ``z`` (the max or min) is a
    C-contiguous array and each of ``x``, ``y`` a number or an array of its shape: one loop
    whose result has the operands' float type.  NumPy's expression makes float64 (booleans
    divided): here the shares are 0, 1/2 and 1, exact in either type, so the cotangent
    multiplied by them is the same number, in float32 where the operands are.  The
    expression took 25-35 ms on 1.6M float32 elements compiled (with the product by the
    cotangent that followed, in float64), this loop 1-2 ms.  Else (broadcasting): the
    expression, as the other overloads would compile it (None here)."""
    ts = (x, z, y)
    if not (all(_float(t) and (isinstance(t, types.Array) and t.layout == "C" or
                               isinstance(t, types.Float)) for t in ts)
            and isinstance(z, types.Array)):
        return None
    dt = np.result_type(*[as_dtype(t.dtype if isinstance(t, types.Array) else t) for t in ts])
    one, two = dt.type(1), dt.type(2)

    def impl(x, z, y):
        if not (_fits(x, z) and _fits(y, z)):
            return ((x == z) / (1.0 + (y == z))).astype(dt)
        out = np.empty(z.shape, dt)
        o, zf, xf, yf = out.reshape(-1), z.reshape(-1), _flat(x), _flat(y)
        for i in range(o.size):
            zi = zf[i]
            share = one if _at(xf, i) == zi else dt.type(0)
            o[i] = share / two if _at(yf, i) == zi else share
        return out
    return impl


def _fits(v, z):
    """Whether ``v`` is a number or has ``z``'s shape."""


def _flat(v):
    """An array as 1-d (C order), a number as itself."""


def _at(v, i):
    """Element ``i`` of _flat's array, or the number."""


@overload(_fits)
def _fits_impl(v, z):
    if isinstance(v, types.Array):
        return lambda v, z: v.shape == z.shape
    return lambda v, z: True


@overload(_flat)
def _flat_impl(v):
    if isinstance(v, types.Array):
        return lambda v: v.reshape(-1)
    return lambda v: v


@overload(_at)
def _at_impl(v, i):
    if isinstance(v, types.Array):
        return lambda v, i: v[i]
    return lambda v, i: v


@overload(rt.plus_inplace)
def _plus_inplace(a, b):
    """``a += b`` where the sum is an array of ``a``'s dtype (known here) and shape (checked
    when run: ``b`` a number, or an array of ``a``'s trailing shape), else ``a + b``."""
    same = isinstance(a, types.Array) and isinstance(b, (types.Array, types.Number)) and \
        np.result_type(as_dtype(a.dtype), as_dtype(getattr(b, "dtype", b))) == \
        as_dtype(a.dtype) and a.mutable and getattr(b, "ndim", 0) <= a.ndim
    if not same:
        return lambda a, b: a + b
    if a.ndim == 0:   # (Numba has no += of 0-d arrays: the element itself)
        if isinstance(b, types.Number):
            def zero_d_number(a, b):
                a[()] = a[()] + b
                return a
            return zero_d_number

        def zero_d(a, b):
            a[()] = a[()] + b[()]
            return a
        return zero_d
    if isinstance(b, types.Number):
        def number(a, b):
            a += b
            return a
        return number
    lead = a.ndim - b.ndim

    def array(a, b):
        if b.shape != a.shape[lead:]:
            return a + b
        a += b
        return a
    return array


IMPLEMENTED = {rt.weak, rt.power_int, rt.plus_inplace}
