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
        host = [np.asarray(x) if isinstance(x, DeviceArray) else x for x in inputs]
        out = getattr(ufunc, method)(*host, **kwargs)
        return to_device(out, self.device) if isinstance(out, np.ndarray) else out

    def __getitem__(self, index):
        return self.host()[index]

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

    def __iter__(self):
        return iter(self.host())

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


def wrap(data, device):
    """A kernel's output array (Numba's device array) as a DeviceArray."""
    return DeviceArray(data, device)


def is_device_array(x):
    return isinstance(x, DeviceArray)
