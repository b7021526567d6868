"""Arrays in GPU memory: what ``device_put(x, devices("cuda")[0])`` and CUDA-compiled functions
return.

A ``DeviceArray`` stays on the GPU until asked for: ``np.asarray(x)`` (or any NumPy call on it)
copies it to the host, ``block_until_ready`` waits for the kernels writing it.  Transformed
functions called on one run on the GPU (computation follows data) and pass it to kernels
without a copy.  NumPy operators on it (``x + 1``) compute on the host and put the result back
on the device: correct, not fast (write the computation in a jitted function instead).
"""
import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from . import cuda
from ...tree_util import tree_map

MADE = [False]   # whether a DeviceArray was ever made (calls check their arguments only then)
CURRENT = [None]  # the device of the arguments of the device code running (twins.py)


class DeviceArray(NDArrayOperatorsMixin):
    """An array on a CUDA device (``data``: Numba's device array)."""
    __array_priority__ = 100

    def __init__(self, data, device):
        MADE[0] = True
        self.data, self.device = data, device
        self._host = None     # its values copied to the host, once asked for

    shape = property(lambda self: tuple(self.data.shape))
    dtype = property(lambda self: np.dtype(self.data.dtype))
    ndim = property(lambda self: len(self.data.shape))
    size = property(lambda self: int(np.prod(self.data.shape, dtype=np.int64)))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def devices(self):
        return {self.device}

    def block_until_ready(self):
        cuda().synchronize()
        return self

    def host(self):
        """The values as a NumPy array (a copy, made once: a DeviceArray is never written)."""
        if self._host is None:
            self._host = self.data.copy_to_host()
        return self._host

    def __array__(self, dtype=None, copy=None):
        out = self.host()
        return out.astype(dtype) if dtype is not None else out.copy()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from . import ops, ufuncs
        if method == "__call__" and not kwargs and all(map(_numeric, inputs)):
            if ufunc is np.matmul:
                return ops.matmul(*inputs)
            if ufunc in ufuncs.STUBS:
                return ops.ufunc(ufunc, *inputs)
        host = [np.asarray(x) if isinstance(x, DeviceArray) else x for x in inputs]
        out = getattr(ufunc, method)(*host, **kwargs)
        return to_device(out, self.device) if isinstance(out, np.ndarray) else out

    def __array_function__(self, func, types, args, kwargs):
        """NumPy's functions: those with a device twin (twins.py) on the device, others on
        host copies, their arrays put back."""
        from .twins import TWINS
        twin = TWINS.get(func)
        if twin is not None:
            CURRENT[0] = self.device
            return twin(*args, **kwargs)
        out = func(*to_host(args), **to_host(kwargs))
        return put(out, self.device) if isinstance(out, np.ndarray) else out

    def __getitem__(self, index):
        """``x[index]``: a basic index (numbers, slices, None, ...) is copied on the device;
        another (arrays of indices, masks) is taken on the host, its result put back."""
        from . import ops, views
        view = views.getitem(self, index)
        if view is not None:
            return ops.materialize(view)
        index = to_host(index)
        return to_device(self.host()[index], self.device)

    # what runs on the device of NumPy's array methods (the rest: __getattr__, on the host)
    T = property(lambda self: self.transpose())

    def transpose(self, *axes):
        from . import ops, views
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes or None
        return ops.materialize(views.transpose(self, axes))

    def reshape(self, *shape, order="C"):
        from . import twins
        return twins.reshape(self, shape[0] if len(shape) == 1 else shape, order)

    def ravel(self):
        return self.reshape(-1)

    flatten = ravel

    def astype(self, dtype, copy=True):
        from . import ops
        return self if not copy and self.dtype == np.dtype(dtype) else ops.copy(self, dtype)

    def copy(self):
        return self    # (a DeviceArray is never written)

    def sum(self, axis=None, dtype=None, keepdims=False):
        from . import ops
        return ops.reduce("sum", self, axis, keepdims, dtype)

    def mean(self, axis=None, dtype=None, keepdims=False):
        from . import ops
        return ops.reduce("mean", self, axis, keepdims, dtype)

    def prod(self, axis=None, dtype=None, keepdims=False):
        from . import ops
        return ops.reduce("prod", self, axis, keepdims, dtype)

    def max(self, axis=None, keepdims=False):
        from . import ops
        return ops.reduce("max", self, axis, keepdims)

    def min(self, axis=None, keepdims=False):
        from . import ops
        return ops.reduce("min", self, axis, keepdims)

    def __getattr__(self, name):
        """What a NumPy array has and this class does not (``x.sum()``, ``x.tolist()``,
        ``x.T``): computed on the host copy; an array it gives is put back on the device."""
        if name.startswith("_") or not hasattr(np.ndarray, name):
            raise AttributeError(f"'DeviceArray' object has no attribute {name!r}")
        found = getattr(self.host(), name)
        if not callable(found):
            return to_device(found, self.device) if isinstance(found, np.ndarray) else found

        def method(*args, **kwargs):
            out = found(*args, **kwargs)
            return to_device(out, self.device) if isinstance(out, np.ndarray) else out
        return method

    def __iter__(self):   # rows on the device
        return (self[i] for i in range(len(self)))

    def __float__(self):
        return float(self.host())

    def __int__(self):
        return int(self.host())

    def __bool__(self):
        return bool(self.host())

    def __repr__(self):
        body = np.array2string(self.host(), separator=", ", prefix="DeviceArray(")
        return f"DeviceArray({body}, dtype={self.dtype}, device={self.device!r})"

    @property
    def __cuda_array_interface__(self):   # CuPy, PyTorch, Numba kernels take it as it is
        return self.data.__cuda_array_interface__


def _numeric(x):
    """Whether a ufunc's operand is one a kernel takes: a real number or array."""
    if isinstance(x, (DeviceArray, np.ndarray, np.generic)):
        return x.dtype.kind in "biuf"
    return type(x) in (int, float, bool)


def to_device(x, device):
    """``x`` (a NumPy array or number) copied to ``device``."""
    if isinstance(x, DeviceArray):
        return x
    x = np.asarray(x)
    return DeviceArray(cuda().to_device(x if x.flags.c_contiguous else np.ascontiguousarray(x)),
                       device)


def to_host(tree):
    """``tree`` (a pytree) with each DeviceArray copied to the host."""
    return tree_map(lambda x: np.asarray(x) if isinstance(x, DeviceArray) else x, tree)


def put(tree, device):
    """``tree`` (a pytree) with each NumPy array and scalar copied to ``device``."""
    return tree_map(lambda x: to_device(x, device) if isinstance(x, (np.ndarray, np.generic))
                    else x, tree)


def put_arrays(tree, device):
    """``tree`` with each NumPy array (numbers stay numbers) on ``device`` in the dtype the
    64-bit policy gives it, and each DeviceArray too."""
    from ...dtypes import canonicalize
    from . import ops
    CURRENT[0] = device

    def placed(x):
        if isinstance(x, np.ndarray):
            return to_device(canonicalize(x), device)
        if isinstance(x, DeviceArray):
            dtype = canonicalize(np.zeros((), x.dtype)).dtype
            return x if dtype == x.dtype else ops.copy(x, dtype)
        return x
    return tree_map(placed, tree)


def stand_ins(args):
    """(``args`` with each DeviceArray leaf replaced by a NumPy array of its shape and dtype
    holding one zero, {id(stand-in): the DeviceArray}): what a transform's kinds, shapes and
    checks are computed from."""
    swap = {}

    def stand_in(x):
        if not isinstance(x, DeviceArray):
            return x
        s = np.broadcast_to(np.zeros((), x.dtype), x.shape)
        swap[id(s)] = (s, x)
        return s
    return [tree_map(stand_in, a) for a in args], swap


def swapped(leaves, swap):
    """The leaves a run takes: each stand-in back to its DeviceArray."""
    out = []
    for a in leaves:
        found = swap.get(id(a))
        if isinstance(a, np.ndarray) and (found is None or found[0] is not a):
            raise RuntimeError("strop: an argument of device code is a host array (a stand-in "
                               "of a DeviceArray was copied)")
        out.append(found[1] if found is not None else a)
    return out


def wrap(data, device):
    """A kernel's output array (Numba's device array) as a DeviceArray."""
    return DeviceArray(data, device)


def is_device_array(x):
    return isinstance(x, DeviceArray)
