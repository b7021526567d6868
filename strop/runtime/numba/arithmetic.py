"""Numba implementation of arithmetic.py's ``weak``: a Python number cast to the type of
what it meets, as NumPy types it (Numba would make float64 of it)."""
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


IMPLEMENTED = {rt.weak}
