"""Placement, as in JAX's FAQ: ``devices``, ``default_backend``, ``device_put``,
``block_until_ready``.  Computation follows data: a transformed function runs where its
arguments are.

| call | JAX | strop |
|---|---|---|
| ``devices()`` / ``devices("cpu")`` | the backend's devices | ``[CpuDevice(id=0)]`` |
| ``devices("cuda")`` / ``"gpu"`` | the GPUs, or ``RuntimeError`` | ``[CudaDevice(id=0), ...]`` (Numba's simulator counts as one), or ``RuntimeError`` saying why (numba-cuda not installed, no GPU) |
| ``default_backend()`` | ``"cpu"`` / ``"gpu"`` | ``config.default_backend``: ``"cpu"`` (``"python"`` runs on the CPU too) or ``"cuda"`` |
| ``device_put(x, device)`` | a committed copy on ``device`` | every leaf with the 64-bit policy applied (``1.0`` is a float32 scalar array with x64 off): NumPy arrays on the CPU, ``DeviceArray`` on a GPU |
| ``block_until_ready(x)`` | waits for async dispatch | waits for the kernels writing its device arrays; NumPy arrays are ready |

A ``jit`` function called with a ``DeviceArray`` runs on its GPU and returns device arrays
(api.py); ``np.asarray`` copies one back.
"""
import dataclasses

import numpy as np

from .config import config
from .dtypes import canonicalize
from .runtime import cuda as cuda_runtime
from .runtime.cuda.arrays import is_device_array, to_device
from .tree_util import tree_leaves, tree_map

__all__ = ["Device", "devices", "default_backend", "device_put", "block_until_ready"]

_GPU_NAMES = ("cuda", "gpu")


@dataclasses.dataclass(frozen=True)
class Device:
    """One device: ``platform`` (``"cpu"`` or ``"cuda"``) and ``id``."""
    platform: str
    id: int = 0
    process_index: int = 0

    @property
    def device_kind(self):
        return self.platform

    def __repr__(self):   # JAX's: CpuDevice(id=0)
        return f"{self.platform.capitalize()}Device(id={self.id})"


_CPU = Device("cpu", 0)


def _platform(backend):
    if backend is None:
        backend = default_backend()
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string ('cpu' or 'cuda'), got {backend!r}")
    name = backend.lower()
    if name in ("cpu", "python"):
        return "cpu"
    if name in _GPU_NAMES:
        found, why = cuda_runtime.available()
        if not found:
            raise RuntimeError(f"backend {backend!r} is not available: {why}\n"
                               f"Fix: use devices('cpu'), or install what is missing")
        return "cuda"
    raise RuntimeError(f"unknown backend {backend!r}: strop knows 'cpu' and 'cuda'")


def devices(backend=None):
    """The devices of ``backend`` (the default backend's if None)."""
    if _platform(backend) == "cpu":
        return [_CPU]
    return [Device("cuda", i) for i in range(len(cuda_runtime.cuda().gpus))]


def default_backend():
    """The platform computations run on by default: ``"cpu"`` or ``"cuda"``."""
    return "cuda" if config.read("default_backend") == "cuda" else "cpu"


def device_put(x, device=None):
    """``x`` (a pytree) as arrays on ``device`` (a ``Device``, a backend name, or None for the
    default device), with the 64-bit policy of transformed code applied: NumPy arrays on the
    CPU, ``DeviceArray`` on a GPU."""
    if not isinstance(device, Device):
        device = devices(device)[0]
    elif device.platform != "cpu":
        _platform(device.platform)   # raises where there is no such device

    def put(leaf):
        if is_device_array(leaf):
            if leaf.device == device:
                return leaf
            leaf = np.asarray(leaf)
        if not _is_data(leaf):
            return leaf
        leaf = np.asarray(canonicalize(leaf))
        return leaf if device.platform == "cpu" else to_device(leaf, device)
    return tree_map(put, x)


def block_until_ready(x):
    """``x``, once every leaf is computed (NumPy computes eagerly: at once)."""
    for leaf in tree_leaves(x):
        wait = getattr(leaf, "block_until_ready", None)
        if callable(wait) and not isinstance(leaf, np.ndarray):
            wait()
    return x


def placed(args):
    """The GPU that array leaves of ``args`` are on, or None where all are host values (a
    ValueError where they are on more than one device)."""
    found = {leaf.device for leaf in tree_leaves(args) if is_device_array(leaf)}
    if len(found) > 1:
        raise ValueError(f"arguments on several devices ({sorted(map(repr, found))}): "
                         f"computation follows data, so it must be on one\nFix: "
                         f"device_put them on one device first")
    return found.pop() if found else None


def _is_data(leaf):
    return isinstance(leaf, (np.ndarray, np.generic, bool, int, float, complex))
