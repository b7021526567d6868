"""Numba implementations of twins.py's twins."""
import numpy as np
from numba import types
from numba.extending import overload

from ..twins import reshape


@overload(reshape)
def _reshape(a, newshape=None, order="C"):
    if not isinstance(a, types.Array) or not (isinstance(order, str) and order == "C" or
                                               isinstance(order, types.Omitted)
                                               or isinstance(order, types.StringLiteral)
                                               and order.literal_value == "C"):
        return None
    if a.layout == "C":
        return lambda a, newshape=None, order="C": np.reshape(a, newshape)
    return lambda a, newshape=None, order="C": np.reshape(np.ascontiguousarray(a), newshape)
