"""Numba implementations of twins.py's twins."""
import numpy as np
from numba import types
from numba.np.numpy_support import as_dtype

from ..twins import PRECISION_KEPT, array, clip, dot, reshape, vdot, where
from ._common import SCALARS, _none, _unrolled, overload


@overload(reshape)
def _reshape(a, newshape=None, order="C"):
    """(of a number too: the cotangent of a 0-d array is one, reshaped back by np.squeeze's
    derivative)"""
    if isinstance(a, SCALARS):
        return lambda a, newshape=None, order="C": np.reshape(np.asarray(a), newshape)
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
    if c is not condition and not isinstance(c, SCALARS):
        return None    # typed again as the array it holds, Numba checking it is not None
    if isinstance(c, SCALARS) and isinstance(x, SCALARS) and isinstance(y, SCALARS):
        dt = np.result_type(as_dtype(types.unliteral(x)), as_dtype(types.unliteral(y))).type
        return lambda condition, x=None, y=None: dt(x) if condition else dt(y)
    return lambda condition, x=None, y=None: np.where(condition, x, y)


@overload(clip)
def _clip(a, a_min, a_max):
    """``a`` cast to the dtype NumPy promotes the three to (a Python number, a literal here,
    is weak), then Numba's np.clip, which keeps ``a``'s dtype."""
    def dtype_of(t):
        if isinstance(t, types.Literal) and isinstance(t.literal_value, (int, float)):
            return t.literal_value
        return as_dtype(t.dtype if isinstance(t, types.Array) else types.unliteral(t))
    try:
        dt = np.result_type(*[dtype_of(t) for t in (a, a_min, a_max) if not _none(t)])
    except Exception:   # (not NumPy's numbers: Numba's np.clip says what it takes)
        return lambda a, a_min, a_max: np.clip(a, a_min, a_max)
    if isinstance(a, types.Array) and as_dtype(a.dtype) != dt:
        return lambda a, a_min, a_max: np.clip(a.astype(dt), a_min, a_max)
    if isinstance(a, SCALARS) and as_dtype(types.unliteral(a)) != dt:
        cast = dt.type
        return lambda a, a_min, a_max: np.clip(cast(a), a_min, a_max)
    return lambda a, a_min, a_max: np.clip(a, a_min, a_max)


@overload(vdot)
def _vdot(a, b):
    if isinstance(a, types.Array) and isinstance(b, types.Array) and (a.ndim, b.ndim) != (1, 1):
        return lambda a, b: np.vdot(np.ravel(a), np.ravel(b))
    return lambda a, b: np.vdot(a, b)


@overload(dot)
def _dot(a, b, out=None):
    def contiguous(t):
        return isinstance(t, types.Array) and t.layout != "C" and t.ndim in (1, 2)
    if not _none(out):
        return lambda a, b, out=None: np.dot(a, b, out)
    if isinstance(a, SCALARS) or isinstance(b, SCALARS):   # (Numba's takes arrays only)
        return lambda a, b, out=None: a * b
    if not (contiguous(a) or contiguous(b)):
        return lambda a, b, out=None: np.dot(a, b)
    return lambda a, b, out=None: np.dot(np.ascontiguousarray(a), np.ascontiguousarray(b))


def _narrowed(value):
    """``value``, its float64 parts float32 (compiled only)."""


@overload(_narrowed)
def _narrowed_impl(value):
    """A float64 (complex128) number or array as float32 (complex64); a tuple's each."""
    if isinstance(value, types.BaseTuple):
        parts = "".join(f"_narrowed(value[{k}]), " for k in range(len(value)))
        return _unrolled(f"def impl(value):\n    return ({parts})\n", _narrowed=_narrowed)
    dt = getattr(value, "dtype", value)
    to = {types.float64: np.float32, types.complex128: np.complex64}.get(dt)
    if to is None:
        return lambda value: value
    if isinstance(value, types.Array):
        return lambda value: value.astype(to)
    return lambda value: to(value)


def _precision_kept(twin, fn):
    """Numba's ``fn``, its result narrowed where the first argument is a float32 (complex64)
    array (NumPy's result then has the array's precision).  Only the arguments given are
    passed on: Numba's own versions refuse an omitted one passed explicitly, and the call then
    went to an object-mode island."""
    names = [p.split("=")[0] for p in twin.params.split(", ")]

    def choose(*args):
        given = [names[0]] + [f"{n}={n}" for n, t in zip(names[1:], args[1:])
                              if isinstance(t, types.Type) and not isinstance(t, types.Omitted)]
        call = f"fn({', '.join(given)})"
        if fn is np.linalg.norm and len(given) == 2 and getattr(args[0], "ndim", 0) == 2 \
                and isinstance(args[1], types.StringLiteral):
            call = _MATRIX_NORMS.get(args[1].literal_value, call)
        a = args[0]
        if isinstance(a, types.Array) and a.dtype in (types.float32, types.complex64):
            call = f"_narrowed({call})"
        return _unrolled(f"def impl({twin.params}):\n    return {call}\n", fn=fn,
                         _narrowed=_narrowed, np=np)
    typing = _unrolled(f"def impl({twin.params}):\n    return choose({', '.join(names)})\n",
                       choose=choose)
    overload(twin, prefer_literal=True)(typing)


# np.linalg.norm's orders of a matrix named by a string (a constant), which Numba's refuses
_MATRIX_NORMS = {"fro": "fn(x)", "nuc": "np.sum(np.linalg.svd(x)[1])"}


for _fn, _twin in PRECISION_KEPT.items():
    _precision_kept(_twin, _fn)
