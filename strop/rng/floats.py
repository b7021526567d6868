"""From random bits to floats, the way JAX does it, for float32 (from 32 bits) and float64
(from 64 bits).

JAX keeps the top mantissa bits, ORs in the exponent of 1.0 and subtracts 1; that is exactly
(bits >> (width - nmant)) * 2**-nmant, which is what ``to_unit`` computes without a bitcast.
A range [lo, hi) is then fma(u, hi - lo, lo), floored at lo: XLA's CPU compiler fuses the
multiply and add, so the fused form is the one that matches JAX bit for bit.
"""
import numba
import numpy as np
from numba import types
from numba.extending import overload

from strop.rng.streams import dword_at, fill_bits32, fill_bits64, word_at
from strop.rng.xla_math import fma

_SHIFT32, _SCALE32 = np.uint32(9), np.float32(2.0 ** -23)
_SHIFT64, _SCALE64 = np.uint64(12), np.float64(2.0 ** -52)


def to_unit(bits):
    """A uint32 (uint64) random word as a float32 (float64) in [0, 1)."""
    if isinstance(bits, np.uint32):
        return np.float32(bits >> _SHIFT32) * _SCALE32
    return np.float64(bits >> _SHIFT64) * _SCALE64


@overload(to_unit)
def _to_unit(bits):
    if bits == types.uint32:
        return lambda bits: np.float32(bits >> _SHIFT32) * _SCALE32
    if bits == types.uint64:
        return lambda bits: np.float64(bits >> _SHIFT64) * _SCALE64


def _is_f32(F):
    return F.instance_type == types.float32


def random_words(key, n, F, partitionable):
    """n random words of the width of float type F (uint32 for float32, uint64 for float64)."""
    if F is np.float32:
        return fill_bits32(key, n, partitionable)
    return fill_bits64(key, n, partitionable)


@overload(random_words)
def _random_words(key, n, F, partitionable):
    if _is_f32(F):
        return lambda key, n, F, partitionable: fill_bits32(key, n, partitionable)
    return lambda key, n, F, partitionable: fill_bits64(key, n, partitionable)


def random_word_at(key, i, n, F, partitionable):
    """Word i of ``random_words(key, n, F, partitionable)``, computed alone."""
    if F is np.float32:
        return word_at(key, i, n, partitionable)
    return dword_at(key, i, n, partitionable)


@overload(random_word_at)
def _random_word_at(key, i, n, F, partitionable):
    if _is_f32(F):
        return lambda key, i, n, F, partitionable: word_at(key, i, n, partitionable)
    return lambda key, i, n, F, partitionable: dword_at(key, i, n, partitionable)


@numba.njit(forceinline=True, cache=True)
def in_range(bits, lo, hi):
    """JAX's uniform value for one word: max(lo, u*(hi-lo) + lo) with the product fused."""
    return max(lo, fma(to_unit(bits), hi - lo, lo))


@numba.njit(cache=True)
def uniform_at(key, i, n, lo, hi, partitionable):
    """Element i of uniform(key, (n,), minval=lo, maxval=hi), in the type of lo."""
    return in_range(random_word_at(key, i, n, type(lo), partitionable), lo, hi)
