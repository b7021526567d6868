"""Placement, as in JAX's FAQ: ``devices``, ``default_backend``, ``device_put``,
``block_until_ready``.  Computation follows data: a transformed function runs where its
arguments are.

Today every array is a NumPy array in host memory and every computation runs on the CPU (or
as Python), so placement is simple:

| call | JAX | strop now |
|---|---|---|
| ``devices()`` / ``devices("cpu")`` | the backend's devices | ``[CpuDevice(id=0)]`` |
| ``devices("cuda")`` / ``"gpu"`` | the GPUs, or ``RuntimeError`` | ``RuntimeError`` saying why (no CUDA backend yet, or no GPU) |
| ``default_backend()`` | ``"cpu"`` / ``"gpu"`` | ``"cpu"`` (``config.default_backend``; ``"python"`` runs on the CPU too) |
| ``device_put(x, device)`` | a committed copy on ``device`` | NumPy arrays of every leaf, the 64-bit policy applied (``1.0`` is a float32 scalar array with x64 off), on the CPU |
| ``block_until_ready(x)`` | waits for async dispatch | ``x`` (NumPy is synchronous); a leaf with its own ``block_until_ready`` is waited on |

A ``Device`` names a platform and an index, so that the CUDA backend can add
``Device("cuda", i)`` and a ``device_put`` that moves data there; ``jit`` will then dispatch
on where the arguments are.
"""
import dataclasses

import numpy as np

from .config import config
from .dtypes import canonicalize
from .tree_util import tree_leaves, tree_map

__all__ = ["Device", "devices", "default_backend", "device_put", "block_until_ready"]

_GPU_NAMES = ("cuda", "gpu")


@dataclasses.dataclass(frozen=True)
class Device:
    """One device: ``platform`` (``"cpu"``; ``"cuda"`` when that backend exists) and ``id``."""
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
        raise RuntimeError(f"backend {backend!r} is not available: {_no_gpu_reason()}\n"
                           f"Fix: use devices('cpu') (strop computes on the CPU in this "
                           f"version)")
    raise RuntimeError(f"unknown backend {backend!r}: strop knows 'cpu' (and 'cuda', not "
                       f"built yet)")


def _no_gpu_reason():
    """Why there is no CUDA device, checked without initializing CUDA where Numba is absent."""
    try:
        from numba import cuda
        found = cuda.is_available()
    except Exception:   # Numba's CUDA support not importable: no driver, no toolkit
        found = False
    return ("a GPU is present, but strop's CUDA backend is not part of this version"
            if found else "no CUDA GPU was found, and strop's CUDA backend is not part of "
                          "this version")


def devices(backend=None):
    """The devices of ``backend`` (the default backend's if None): ``[CpuDevice(id=0)]``."""
    _platform(backend)
    return [_CPU]


def default_backend():
    """The platform computations run on by default: ``"cpu"``."""
    return "cuda" if config.read("default_backend") == "cuda" else "cpu"


def device_put(x, device=None):
    """``x`` (a pytree) as arrays on ``device`` (a ``Device``, a backend name, or None for the
    default device): NumPy arrays, with the 64-bit policy of transformed code applied."""
    if device is not None:
        platform = device.platform if isinstance(device, Device) else _platform(device)
        if platform != "cpu":
            _platform(platform)   # raises: no such device
    return tree_map(lambda leaf: np.asarray(canonicalize(leaf)) if _is_data(leaf) else leaf, x)


def block_until_ready(x):
    """``x``, once every leaf is computed (NumPy computes eagerly: at once)."""
    for leaf in tree_leaves(x):
        wait = getattr(leaf, "block_until_ready", None)
        if callable(wait) and not isinstance(leaf, np.ndarray):
            wait()
    return x


def _is_data(leaf):
    return isinstance(leaf, (np.ndarray, np.generic, bool, int, float, complex))
