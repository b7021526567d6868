"""Numba implementations of via_numpy.py's stubs: a transcendental ufunc of a float array of
``LARGE`` elements or more runs through NumPy's SIMD loops, smaller ones compiled: float32's
tanh, exp and log as loops that vectorize (float32_math.py)."""
import numba
import numpy as np
from numba import types
from numba.extending import register_jitable

from ..via_numpy import LARGE, VIA_NUMPY
from ._common import overload
from .float32_math import IN_PLACE, LOOPS


def _through_numpy_when_large(ufunc, stub):
    @overload(stub)
    def impl(x, out=None):
        if isinstance(x, types.Array) and isinstance(x.dtype, types.Float) and x.ndim:
            # (a 0-d array gives a number, as in NumPy: compiled, never large)
            out_type = types.Array(x.dtype, x.ndim, "C")
            loop = LOOPS.get(ufunc) if x.dtype == types.float32 else None
            small = loop or ufunc
            # written over x where ``out`` is x (of its type: checked when run) and the loop
            # may write over its input
            inplace = (loop.inplace if loop else register_jitable(lambda x: ufunc(x, x))) if out == x and \
                x.layout == "C" and (loop is None or ufunc in IN_PLACE) else None

            def large(x, out=None):
                if x.size < LARGE:
                    if inplace is not None and out is x:
                        return inplace(x)
                    return small(x)
                with numba.objmode(result=out_type):
                    result = np.ascontiguousarray(ufunc(x))
                return result
            return large
        return lambda x, out=None: ufunc(x)
    return impl


for _ufunc, _stub in VIA_NUMPY.items():   # see via_numpy.py
    _through_numpy_when_large(_ufunc, _stub)
