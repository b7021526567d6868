"""Operations on whole arrays in GPU memory, each one or two kernel launches (kernels.py):
what the device twins of the runtime helpers (twins.py) and a DeviceArray's operators and
methods are made of.

Results are NumPy's: a result's shape and dtype come from NumPy run on samples of the
operands' dtypes (Python numbers stay weak), and its values are computed in that dtype.
An operand may be a DeviceArray, a view of one (views.py: read in place by the kernel), a
NumPy array (copied to the device) or a number.
"""
import numpy as np

from . import cuda, kernels, simulated, ufuncs
from .arrays import is_device_array, to_device, wrap
from .views import Strided, broadcast_to, c_strides, getitem, reshape_view, strided, transpose


def _is_array(x):
    return is_device_array(x) or isinstance(x, (Strided, np.ndarray))


def _device_of(operands):
    return next(x.device for x in operands if is_device_array(x) or isinstance(x, Strided))


def _sample(x):
    """What NumPy's type rules see of an operand: an array of one element of its dtype, or
    the number (a Python number stays weak)."""
    if _is_array(x):
        return np.ones((1,) * len(x.shape), x.dtype)
    return x


def dtype_of(expression, operands):
    """The dtype NumPy gives ``expression`` of ``operands``."""
    samples = {f"_{i}": _sample(x) for i, x in enumerate(operands)}
    with np.errstate(all="ignore"):
        return np.result_type(eval(expression, dict(kernels.NAMES), samples))


def flat(x):
    return x.data.reshape(x.size) if x.shape else x.data.reshape(1)


def empty(shape, dtype, device):
    size = int(np.prod(shape, dtype=np.int64))
    return wrap(cuda().device_array(max(size, 1), dtype=np.dtype(dtype)), device), size


def _shaped(out, shape):
    """A kernel's flat output as a DeviceArray of ``shape``."""
    if 0 in shape:
        return wrap(cuda().device_array(shape, dtype=out.dtype), out.device)
    return wrap(out.data.reshape(shape) if shape != (out.size,) else out.data, out.device)


def apply(expression, operands, dtype=None):
    """``expression`` (naming operand i ``_i``) of ``operands``, broadcast: one kernel (of
    numbers alone: NumPy's, on the host)."""
    if not any(is_device_array(x) or isinstance(x, Strided) for x in operands):
        with np.errstate(all="ignore"):
            value = eval(expression, dict(kernels.NAMES), {f"_{i}": x for i, x in
                                                          enumerate(operands)})
        return value if dtype is None else np.asarray(value, dtype)[()]
    device = _device_of(operands)
    operands = [to_device(x, device) if isinstance(x, np.ndarray) else x for x in operands]
    shape = np.broadcast_shapes(*(x.shape for x in operands if _is_array(x)))
    dtype = np.dtype(dtype or dtype_of(expression, operands))
    out, size = empty(shape, dtype, device)
    if size:
        _launch(expression, operands, shape, size, [out.data.reshape(size)])
    return _shaped(out, shape)


def write(view, expression, operands):
    """``expression`` of ``operands`` written into ``view`` (a Strided view of a DeviceArray
    this module has just made, nothing else holds), broadcast to its shape."""
    size = int(np.prod(view.shape, dtype=np.int64))
    if size:
        _launch(expression, operands, view.shape, size,
                [flat(view.base), view.offset, view.strides or (0,), size], into=True)


def _launch(expression, operands, shape, size, head, into=False):
    kinds, args = [], []
    for x in operands:
        if not _is_array(x):
            kinds.append("n")
            args.append(x)
        elif is_device_array(x) and x.shape == shape:
            kinds.append("c")
            args.append(flat(x))
        else:
            view = broadcast_to(to_device(x, None) if isinstance(x, np.ndarray) else x, shape)
            kinds.append("s")
            args += [flat(view.base), view.offset, view.strides or (0,)]
    kernel = kernels.elementwise(expression, tuple(kinds), max(len(shape), 1), into)
    kernels.launch_elementwise(kernel, size, [*head, shape or (1,), *args])


def copy(x, dtype=None):
    """A C-contiguous copy of ``x`` (a DeviceArray or Strided view), in ``dtype``."""
    return apply("_0", [x], dtype or x.dtype)


def concatenate(parts, axis=0):
    """NumPy's concatenate of DeviceArrays (or views, numbers' arrays): one copy per part."""
    parts = [strided(x) for x in parts]
    ndim = len(parts[0].shape)
    if ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis %= ndim
    shape = list(parts[0].shape)
    shape[axis] = sum(p.shape[axis] for p in parts)
    dtype = np.result_type(*(p.dtype for p in parts))
    out, size = empty(tuple(shape), dtype, parts[0].device)
    out = _shaped(out, tuple(shape))
    at = 0
    for p in parts:
        index = (slice(None),) * axis + (slice(at, at + p.shape[axis]),)
        write(getitem(out, index), "_0", [p])
        at += p.shape[axis]
    return out


def ufunc(u, *inputs):
    """NumPy's ufunc ``u`` (one with a device stub, ufuncs.py) of ``inputs``; a Python number
    meets an array in the array's dtype, as NumPy's weak scalars do."""
    stub = ufuncs.STUBS[u].__name__
    arrays = [i for i, x in enumerate(inputs) if _is_array(x)]
    names = [f"weak(_{i}, _{arrays[0]})" if isinstance(x, (int, float)) and arrays
             and not isinstance(x, bool) else f"_{i}" for i, x in enumerate(inputs)]
    return apply(f"{stub}({', '.join(names)})", list(inputs))


def full(shape, value, dtype, device):
    shape = tuple(int(n) for n in shape) if np.ndim(shape) else (int(shape),)
    return copy(_broadcast_number(value, shape, dtype, device), dtype)


def _broadcast_number(value, shape, dtype, device):
    one = to_device(np.asarray(value, dtype), device)
    return Strided(one, 0, tuple(int(n) for n in shape), (0,) * len(shape))


def reshape(x, shape):
    """``x`` of ``shape`` (its data, where ``x`` is a DeviceArray: no copy)."""
    x = materialize(x)
    shape = tuple(np.empty(x.shape, dtype=np.bool_).reshape(shape).shape)  # NumPy checks, -1
    return wrap(x.data.reshape(shape) if shape else x.data.reshape(()), x.device)


def materialize(x):
    """``x`` as a DeviceArray (a Strided view copied)."""
    if isinstance(x, Strided):
        if x.offset == 0 and x.shape == x.base.shape and x.strides == c_strides(x.shape):
            return x.base
        return copy(x)
    return x


def scan(op, x, axis=None, dtype=None):
    """NumPy's cumsum ("sum") or cumprod ("prod") of ``x`` along ``axis`` (flattened where
    None): one thread per line."""
    view = strided(x)
    if axis is None:
        view = strided(reshape(materialize(view), (-1,)))
        axis = 0
    ndim = len(view.shape)
    if ndim == 0:
        raise ValueError("a cumulative operation of a 0-d array needs axis=None")
    axis %= ndim
    acc = np.result_type(getattr(np, f"cum{op}")(np.ones((1,), view.dtype), dtype=dtype))
    kept = [d for d in range(ndim) if d != axis]
    moved = tuple(view.shape[d] for d in kept) + (view.shape[axis],)
    out, size = empty(moved, acc, view.device)
    lines, n = size // max(view.shape[axis], 1), view.shape[axis]
    if size:
        kernel = kernels.scan(op, len(kept), acc.str)
        threads = min(kernels.THREADS, 32 * -(-lines // 32))
        kernel[-(-lines // threads), threads](
            out.data.reshape(size), flat(view.base), view.offset,
            tuple(view.shape[d] for d in kept) or (1,),
            tuple(view.strides[d] for d in kept) or (0,), n, view.strides[axis], lines)
    order = list(range(ndim - 1))
    order.insert(axis, ndim - 1)
    return materialize(transpose(_shaped(out, moved), order))


_IDENTITY = {"sum": 0, "prod": 1}


def reduce(op, x, axis=None, keepdims=False, dtype=None):
    """NumPy's ``op`` ("sum", "prod", "max", "min", "mean") of ``x`` over ``axis``."""
    view = strided(x) if not isinstance(x, np.ndarray) else strided(to_device(x, None))
    ndim = len(view.shape)
    axes = tuple(range(ndim)) if axis is None else tuple(
        sorted(a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis))) if ndim else ()
    kept = [d for d in range(ndim) if d not in axes]
    out_shape = tuple(1 if d in axes else view.shape[d] for d in range(ndim)) if keepdims else \
        tuple(view.shape[d] for d in kept)
    probe = getattr(np, op)(np.ones((1,), view.dtype), **({"dtype": dtype} if dtype else {}))
    out_dtype = np.result_type(probe)
    n = int(np.prod([view.shape[d] for d in axes], dtype=np.int64))
    if op == "mean":
        total = reduce("sum", view, axis, keepdims, out_dtype if dtype is None else dtype)
        return apply("_0 / weak(_1, _0)", [total, n], out_dtype) if n else \
            apply("_0 / weak(0, _0)", [total], out_dtype)   # (NaN, as NumPy)
    acc = np.dtype(out_dtype)
    if n == 0 or not axes:
        if n == 0 and op not in _IDENTITY:
            raise ValueError(f"zero-size array to reduction operation {op}imum which has no "
                             f"identity")
        source = view if not axes else _broadcast_number(_IDENTITY[op], out_shape, acc,
                                                          view.device)
        return copy(reshape_view(source, out_shape), acc)
    m = int(np.prod([view.shape[d] for d in kept], dtype=np.int64))
    out, size = empty(out_shape, acc, view.device)
    if size == 0:
        return _shaped(out, out_shape)
    parts = kernels.parts_for(n)
    kernel = kernels.reduction(op, len(kept), len(axes), acc.str)
    kshape = tuple(view.shape[d] for d in kept) or (1,)
    kstrides = tuple(view.strides[d] for d in kept) or (0,)
    rshape = tuple(view.shape[d] for d in axes)
    rstrides = tuple(view.strides[d] for d in axes)
    target = out.data.reshape(size) if parts == 1 else cuda().device_array(m * parts, acc)
    kernel[(m, parts), kernels.REDUCE](target, flat(view.base), view.offset, kshape, kstrides,
                                       rshape, rstrides, n, parts)
    if parts > 1:
        second = kernels.reduction(op, 1, 1, acc.str)
        second[(m, 1), kernels.REDUCE](out.data.reshape(size), target, 0, (m,), (parts,),
                                       (parts,), (1,), parts, 1)
    return _shaped(out, out_shape)


def matmul(a, b):
    """NumPy's ``a @ b``: 1-D operands as NumPy takes them, leading axes a broadcast batch."""
    device = _device_of([x for x in (a, b) if not isinstance(x, np.ndarray)])
    a, b = (strided(to_device(x, device) if isinstance(x, np.ndarray) else x) for x in (a, b))
    if not a.shape or not b.shape:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    dtype = np.result_type(a.dtype, b.dtype)
    va, vb = len(a.shape) == 1, len(b.shape) == 1
    if va:
        a = Strided(a.base, a.offset, (1,) + a.shape, (0,) + a.strides)
    if vb:
        b = Strided(b.base, b.offset, b.shape + (1,), b.strides + (0,))
    (m, k), (k2, n) = a.shape[-2:], b.shape[-2:]
    if k != k2:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {k2} is different from {k})")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a, b = (x if x.dtype == dtype else strided(copy(x, dtype)) for x in (a, b))
    a, b = (broadcast_to(x, batch + x.shape[-2:]) for x in (a, b))
    nbatch = int(np.prod(batch, dtype=np.int64))
    shape = batch + (() if va else (m,)) + (() if vb else (n,))
    if k == 0 or not m * n * nbatch:
        return full(shape, 0, dtype, a.device)
    cp = _cupy(dtype)
    if cp is not None:   # cuBLAS, reading both operands where they lie
        product = cp.matmul(_cupy_view(cp, a), _cupy_view(cp, b))
        return wrap(_from_cupy(product).reshape(shape), a.device)
    out, size = empty(batch + (m, n), dtype, a.device)
    kernel = kernels.matmul(len(batch), dtype.str)
    kernels.launch_matmul(kernel, out.data, [flat(a.base), a.offset, a.strides,
                                             flat(b.base), b.offset, b.strides],
                          m, n, k, batch or (1,), nbatch)
    return _shaped(out, shape)


def _cupy(dtype):
    """CuPy, whose matmul is cuBLAS's, where it is installed, a GPU runs the kernels (not the
    simulator) and ``dtype`` is a float BLAS takes; else None (the tiled kernel runs)."""
    if simulated() or np.dtype(dtype) not in (np.float32, np.float64):
        return None
    try:
        import cupy
    except Exception:    # absent, or without a CUDA runtime it can load
        return None
    return cupy


def _cupy_view(cp, view):
    """A view as a CuPy array of the same memory (``__cuda_array_interface__``: no copy)."""
    base = cp.asarray(flat(view.base))[view.offset:]
    return cp.lib.stride_tricks.as_strided(
        base, view.shape, tuple(s * view.dtype.itemsize for s in view.strides))


def _from_cupy(array):
    """A CuPy array as Numba's device array of the same memory (kept alive by it)."""
    return cuda().as_cuda_array(array)


def where(condition, x, y):
    return apply("_1 if _0 else _2", [condition, x, y],
                 np.result_type(_sample(x), _sample(y)))
