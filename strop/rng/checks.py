"""Argument checks and dtype policy for strop.random: clear errors at the API boundary, so
that the kernels only ever see well-formed input."""
import math
import numbers
import warnings

import numpy as np

from strop.config import config

_X64_FIX = 'enable 64-bit types with strop.config.update("enable_x64", True) (or STROP_ENABLE_X64=1)'


def partitionable():
    return bool(config.read("threefry_partitionable"))


def x64():
    return bool(config.read("enable_x64"))


def _describe(x):
    if isinstance(x, np.ndarray):
        return f"an array of dtype {x.dtype} and shape {x.shape}"
    return f"{type(x).__name__} {x!r}" if not isinstance(x, (list, tuple)) else \
        f"a {type(x).__name__} {x!r}"


def key_array(key, name, batched=False):
    """A raw key: a uint32 array of shape (2,) ((..., 2) where ``batched``)."""
    if isinstance(key, (list, tuple)) or not hasattr(key, "shape") or not hasattr(key, "dtype"):
        raise TypeError(f"{name} expects a PRNG key, a uint32 array of shape (2,) such as "
                        f"strop.random.PRNGKey(0); got {_describe(key)}. Lists and tuples are "
                        f"not keys: pass the array itself.")
    arr = np.asarray(key)
    if arr.dtype != np.uint32:
        raise TypeError(f"{name} expects a PRNG key of dtype uint32, got dtype {arr.dtype}. "
                        f"Make keys with strop.random.PRNGKey(seed) or split(key).")
    if batched:
        if arr.ndim == 0 or arr.shape[-1] != 2:
            raise ValueError(f"{name} expects keys of shape (..., 2), got shape {arr.shape}")
    elif arr.shape != (2,):
        hint = " (a batch of keys: map over it with strop.vmap or a loop)" \
            if arr.ndim > 1 and arr.shape[-1] == 2 else ""
        raise ValueError(f"{name} accepts a single key of shape (2,), got shape "
                         f"{arr.shape}{hint}")
    return np.ascontiguousarray(arr)


def _is_int(x):
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_))


def shape_tuple(shape, name, what="shape"):
    """A tuple of non-negative ints, as JAX's canonicalize_shape accepts."""
    if _is_int(shape) or not isinstance(shape, (tuple, list)) and not (
            isinstance(shape, np.ndarray) and shape.ndim == 1):
        raise TypeError(f"{name}: {what} must be a tuple of non-negative ints, got "
                        f"{_describe(shape)}" + (f"; write ({shape},)" if _is_int(shape) else ""))
    out = []
    for d in shape:
        if not _is_int(d):
            raise TypeError(f"{name}: {what} entries must be ints, got {d!r} in {tuple(shape)}")
        if d < 0:
            raise ValueError(f"{name}: {what} entries must be non-negative, got {tuple(shape)}")
        out.append(int(d))
    return tuple(out)


def check_broadcast(name, shape, *param_shapes):
    """``shape`` must be the broadcast of itself with the parameters' shapes (JAX's rule)."""
    try:
        result = np.broadcast_shapes(shape, *param_shapes)
    except ValueError:
        result = None
    if result != tuple(shape):
        raise ValueError(f"{name}: parameter shapes {list(param_shapes)} must broadcast to the "
                         f"shape argument {shape}, but they broadcast to "
                         f"{result if result is not None else 'nothing'}")


def size(shape):
    return int(math.prod(shape))


def _requested(dtype, default_kind, name):
    if dtype is None:
        return np.dtype({"f": np.float64, "i": np.int64, "u": np.uint64}[default_kind]), False
    try:
        return np.dtype(dtype), True
    except TypeError:
        raise TypeError(f"{name}: {dtype!r} is not a dtype") from None


def canonical_dtype(dtype, kinds, name, default_kind=None):
    """Resolve ``dtype`` under the 64-bit policy: without enable_x64 64-bit types become their
    32-bit counterparts, with a warning when the 64-bit type was asked for explicitly."""
    dt, explicit = _requested(dtype, default_kind or kinds[0], name)
    if dt.kind not in kinds:
        kind = {"f": "a float", "i": "an integer", "u": "an unsigned int", "iu": "an integer"}
        raise ValueError(f"dtype argument to `{name}` must be {kind.get(kinds, kinds)} dtype, "
                         f"got {dt}")
    if dt.itemsize == 8 and not x64():
        narrow = np.dtype(dt.kind + "4")
        if explicit:
            warnings.warn(f"{name}: explicitly requested dtype {dt} is not available and will be "
                          f"truncated to {narrow}; to get {dt}, {_X64_FIX}.", UserWarning,
                          stacklevel=4)
        dt = narrow
    return dt


def float_dtype(dtype, name):
    dt = canonical_dtype(dtype, "f", name)
    if dt.itemsize not in (4, 8):
        raise TypeError(f"{name}: strop.random supports float32 and float64, got {dt}")
    return dt


def default_float(x=None):
    """The float dtype JAX gives a parameter: its own float type, else the default float."""
    if isinstance(x, (np.ndarray, np.floating)) and np.asarray(x).dtype.kind == "f":
        dt = np.asarray(x).dtype
        return np.dtype(np.float32) if dt.itemsize < 4 or (dt.itemsize == 8 and not x64()) \
            else dt
    return np.dtype(np.float64 if x64() else np.float32)


def as_param(x, dtype, name, what):
    """A float parameter as a flat contiguous array of dtype (length 1 when scalar)."""
    try:
        arr = np.asarray(x)
    except Exception:
        raise TypeError(f"{name}: {what} must be a number or array, got {_describe(x)}") from None
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise TypeError(f"{name}: {what} must be real numbers, got {_describe(x)}")
    return arr


def kernel_array(x):
    """x as a C-contiguous, writeable array: the one array type the kernels are compiled for
    (a read-only view, e.g. from np.broadcast_to, would compile them once more)."""
    arr = np.ascontiguousarray(x)
    return arr if arr.flags.writeable else arr.copy()


def flat_param(arr, dtype, shape):
    arr = np.asarray(arr, dtype)
    if arr.size == 1:
        return arr.reshape(1).copy()
    return kernel_array(np.broadcast_to(arr, shape)).reshape(-1)


def check_range(name, lo, hi, lo_name="minval", hi_name="maxval"):
    bad = np.asarray(lo) > np.asarray(hi)
    if np.any(bad):
        raise ValueError(f"{name}: {lo_name} must not exceed {hi_name}, got {lo_name}="
                         f"{np.asarray(lo)[...] if np.ndim(lo) == 0 else lo} and {hi_name}="
                         f"{np.asarray(hi)[...] if np.ndim(hi) == 0 else hi}")


def check_bounds(name, x, what, low=None, high=None, low_open=False):
    arr = np.asarray(x, dtype=np.float64)
    bad = np.isnan(arr)
    if low is not None:
        bad |= (arr <= low) if low_open else (arr < low)
    if high is not None:
        bad |= arr > high
    if np.any(bad):
        bound = f"({'>' if low_open else '>='} {low}" + (f" and <= {high}" if high is not None
                                                            else "") + ")"
        raise ValueError(f"{name}: {what} must be {bound}; got {arr[bad].ravel()[:5]}")


def axis_index(axis, ndim, name):
    if not _is_int(axis):
        raise TypeError(f"{name}: axis must be an int, got {axis!r}")
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % max(ndim, 1)


def canonical_array(arr):
    """An array argument under the 64-bit policy: without enable_x64, 64-bit numbers become
    32-bit, as JAX converts its inputs."""
    arr = np.asarray(arr)
    if arr.dtype.itemsize == 8 and arr.dtype.kind in "iuf" and not x64():
        return arr.astype(arr.dtype.kind + "4")
    return arr
