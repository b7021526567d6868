"""Numba implementations of twins.py's twins."""
import numpy as np
from numba import types
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from ..twins import reshape, where
from ._common import SCALARS, _none


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


@overload(where)
def _where(condition, x=None, y=None):
    if _none(x) and _none(y):
        return lambda condition, x=None, y=None: np.where(condition)
    c = condition.type if isinstance(condition, types.Optional) else condition   # (grad's)
    if isinstance(c, SCALARS) and isinstance(x, SCALARS) and isinstance(y, SCALARS):
        dt = np.result_type(as_dtype(types.unliteral(x)), as_dtype(types.unliteral(y))).type
        return lambda condition, x=None, y=None: dt(x) if condition else dt(y)
    return lambda condition, x=None, y=None: np.where(condition, x, y)
