"""strop.random inside jit-compiled code: Numba implementations of the public functions that
route to the kernels.

Compiled code bakes in the dtype policy and the stream (``enable_x64``,
``threefry_partitionable``), so the CPU backend calls one variant of each function per
setting (``variant``): Numba's caches, in memory and on disk, then never serve code compiled
under other settings.
"""
import functools

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from . import kernels as K
from . import keys, samplers, streams


@register_jitable
def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _float(dtype, x64):
    if dtype is None or isinstance(dtype, (types.NoneType, types.Omitted)):
        return np.float64 if x64 else np.float32
    if isinstance(dtype, types.NumberClass):
        F = np.dtype(str(dtype.instance_type)).type
        return F if x64 or F is not np.float64 else np.float32
    return None


def _unary(kernel, x64, part):
    def impl(key, shape=(), dtype=None):
        F = _float(dtype, x64)
        if F is None:
            return None
        if isinstance(shape, types.Integer):
            return lambda key, shape=(), dtype=None: kernel(key, shape, F, part)
        return lambda key, shape=(), dtype=None: kernel(key, _size(shape), F, part).reshape(
            shape)
    return impl


def _uniform(x64, part):
    def impl(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
        F = _float(dtype, x64)
        if F is None:
            return None
        if isinstance(shape, types.Integer):
            def flat(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
                return K.uniform_kernel(key, shape, np.full(1, minval, F),
                                        np.full(1, maxval, F), part)
            return flat

        def shaped(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
            return K.uniform_kernel(key, _size(shape), np.full(1, minval, F),
                                    np.full(1, maxval, F), part).reshape(shape)
        return shaped
    return impl


def _split(x64, part):
    def impl(key, num=2):
        if isinstance(num, (types.Integer, types.Omitted, int)):
            return lambda key, num=2: streams.split_keys(key, num, part)
    return impl


def _fold_in(x64, part):
    def impl(key, data):
        return lambda key, data: streams.fold_in_key(key, np.uint32(data & 0xFFFFFFFF))
    return impl


IMPLEMENTATIONS = {
    samplers.normal: lambda x64, part: _unary(K.normal_kernel, x64, part),
    samplers.exponential: lambda x64, part: _unary(K.exponential_kernel, x64, part),
    samplers.laplace: lambda x64, part: _unary(K.laplace_kernel, x64, part),
    samplers.logistic: lambda x64, part: _unary(K.logistic_kernel, x64, part),
    samplers.uniform: _uniform,
    keys.split: _split,
    keys.fold_in: _fold_in,
}


@functools.lru_cache(maxsize=None)
def variant(fn, x64, part):
    """The function ``fn`` of strop.random as compiled code calls it under these settings."""
    make = IMPLEMENTATIONS.get(fn)
    if make is None:
        return fn   # no compiled version: Numba fails, and jit falls back to Python

    @functools.wraps(fn)
    def stub(*args, **kwargs):
        return fn(*args, **kwargs)
    # the settings show in the name, so in the generated source and its content hash: Numba's
    # disk cache, keyed by that file, never serves code compiled under other settings
    stub.__name__ = fn.__name__ + ("_x64" if x64 else "") + ("_partitionable" if part else "")
    overload(stub)(make(x64, part))
    return stub
