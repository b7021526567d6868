"""Numba implementations of via_numpy.py's stubs: a transcendental ufunc of a float array of
``LARGE`` elements or more runs through NumPy's SIMD loops, smaller ones compiled: float32's
tanh, exp and log as loops that vectorize (float32_math.py)."""
import numba
import numpy as np
from numba import types

from ..via_numpy import LARGE, VIA_NUMPY
from ._common import overload
from .float32_math import LOOPS


def _through_numpy_when_large(ufunc, stub):
    @overload(stub)
    def impl(x):
        if isinstance(x, types.Array) and isinstance(x.dtype, types.Float) and x.ndim:
            # (a 0-d array gives a number, as in NumPy: compiled, never large)
            out_type = types.Array(x.dtype, x.ndim, "C")
            small = LOOPS.get(ufunc, ufunc) if x.dtype == types.float32 else ufunc

            def large(x):
                if x.size < LARGE:
                    return small(x)
                with numba.objmode(out=out_type):
                    out = np.ascontiguousarray(ufunc(x))
                return out
            return large
        return lambda x: ufunc(x)


for _ufunc, _stub in VIA_NUMPY.items():   # see via_numpy.py
    _through_numpy_when_large(_ufunc, _stub)
