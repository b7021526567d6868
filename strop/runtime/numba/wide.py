"""Numba implementations of wide.py's helpers."""
import numpy as np
from numba import types
from numba.np.numpy_support import as_dtype

from ... import runtime as rt
from ._common import _unrolled, overload


@overload(rt.widest)
def _widest(at_loop, after_trip):
    if not isinstance(at_loop, types.BaseTuple) or not isinstance(after_trip, types.BaseTuple):
        return None
    casts = tuple(np.promote_types(as_dtype(a), as_dtype(b)).type
                  for a, b in zip(at_loop, after_trip))
    parts = "".join(f"c{i}(at_loop[{i}]), " for i in range(len(casts)))
    return _unrolled(f"def impl(at_loop, after_trip):\n    return ({parts})\n",
                     **{f"c{i}": c for i, c in enumerate(casts)})


@overload(rt.any_lane)
def _any_lane(condition, count):
    def impl(condition, count):
        for k in range(count):
            if condition[k]:
                return True
        return False
    return impl
