"""Numba implementations of twins.py's twins."""
import numpy as np
from numba import types
from numba.np.numpy_support import as_dtype

from ..twins import array, reshape, where
from ._common import SCALARS, _none, _unrolled, overload


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


@overload(array)
def _array(object, dtype=None):
    """np.array of an array (a copy) or of a list or tuple of arrays of one shape (stacked),
    which Numba's np.array refuses; anything else as Numba's."""
    if not _none(dtype):
        return lambda object, dtype=None: np.array(object, dtype)
    if isinstance(object, types.Array):
        return lambda object, dtype=None: object.copy()
    if isinstance(object, types.List) and isinstance(object.dtype, types.Array):
        dt = as_dtype(object.dtype.dtype)

        def stacked(object, dtype=None):
            if len(object) == 0:
                raise ValueError("np.array of an empty list of arrays")
            out = np.empty((len(object),) + object[0].shape, dt)
            for k in range(len(object)):
                if object[k].shape != object[0].shape:
                    raise ValueError("setting an array element with a sequence: the arrays "
                                     "differ in shape")
                out[k] = object[k]
            return out
        return stacked
    if isinstance(object, types.UniTuple) and isinstance(object.dtype, types.Array):
        rows = "".join(f"    out[{k}] = object[{k}]\n" for k in range(len(object)))
        return _unrolled("def impl(object, dtype=None):\n"
                         "    out = np.empty((len(object),) + object[0].shape, "
                         "object[0].dtype)\n" + rows + "    return out\n", np=np)
    return lambda object, dtype=None: np.array(object)


@overload(where, optional=True)
def _where(condition, x=None, y=None):
    if _none(x) and _none(y):
        return lambda condition, x=None, y=None: np.where(condition)
    c = condition.type if isinstance(condition, types.Optional) else condition   # (grad's)
    if isinstance(c, SCALARS) and isinstance(x, SCALARS) and isinstance(y, SCALARS):
        dt = np.result_type(as_dtype(types.unliteral(x)), as_dtype(types.unliteral(y))).type
        return lambda condition, x=None, y=None: dt(x) if condition else dt(y)
    return lambda condition, x=None, y=None: np.where(condition, x, y)
