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

from strop.rng.streams import TILE, dword_at, fill_bits32, fill_bits64, units32, word_at, \
    word_pairs32, word_pairs64, words32, words64
from strop.rng.xla_math import JIT_OPTIONS, fma

_SHIFT32, _SCALE32 = np.uint32(9), np.float32(2.0 ** -23)
_SHIFT64, _SCALE64 = np.uint64(12), np.float64(2.0 ** -52)


def to_unit(bits):
    """A uint32 (uint64) random word as a float32 (float64) in [0, 1)."""
    if isinstance(bits, np.uint32):
        return np.float32(bits >> _SHIFT32) * _SCALE32
    return np.float64(bits >> _SHIFT64) * _SCALE64


@overload(to_unit, inline="always", jit_options=JIT_OPTIONS)
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


@numba.njit(inline="always", error_model="numpy")
def in_range(bits, lo, hi):
    """JAX's uniform value for one word: max(lo, u*(hi-lo) + lo) with the product fused."""
    return max(lo, fma(to_unit(bits), hi - lo, lo))


@numba.njit(cache=True)
def uniform_at(key, i, n, lo, hi, partitionable):
    """Element i of uniform(key, (n,), minval=lo, maxval=hi), in the type of lo."""
    return in_range(random_word_at(key, i, n, type(lo), partitionable), lo, hi)


# -- elementwise maps over random words ------------------------------------------------------
#
# map_words(g, key, n, F, partitionable, out, start, stop, p, q): out[i] = g(w, i, p, q) for
# the outputs i of units start .. min(stop, units)-1 of an n-value request (units: see
# strop.rng.streams), w being value i's random word of the width of F (uint32 for float32,
# uint64 for float64). g is a Numba function inlined into the loop, so with straight-line g
# (and the functions of xla_math are) the loop vectorizes. map_word_pairs gives g the words
# i and n + i of a 2n-value request, g(w, w2, i, p, q); its units are the n outputs.
# The maps are inlined into their callers by Numba (inline="always": typed and compiled only
# as part of the caller, not once more on their own; and no pointer to g is left in the
# compiled code, which would make it uncacheable).

def units(n, F, partitionable):
    """Units of an n-value request of float type F's words (see strop.rng.streams)."""
    return n if F is np.float64 or partitionable else (n + 1) // 2


@overload(units, jit_options=JIT_OPTIONS)
def _units(n, F, partitionable):
    if _is_f32(F):
        return lambda n, F, partitionable: units32(n, partitionable)
    return lambda n, F, partitionable: n


def _tile(F):
    """A tile's buffer of words for float type F (compiled code only)."""


@overload(_tile, jit_options=JIT_OPTIONS)
def _tile_impl(F):
    if _is_f32(F):
        return lambda F: np.empty(TILE, np.uint32)
    return lambda F: np.empty(TILE, np.uint64)


def _word_tile(k0, k1, n, F, partitionable, j0, m, a, b):
    """Words of units j0 .. j0+m-1 into a (and b: see strop.rng.streams.words32)."""


@overload(_word_tile, jit_options=JIT_OPTIONS)
def _word_tile_impl(k0, k1, n, F, partitionable, j0, m, a, b):
    if _is_f32(F):
        return lambda k0, k1, n, F, partitionable, j0, m, a, b: words32(
            k0, k1, n, partitionable, j0, m, a, b)
    return lambda k0, k1, n, F, partitionable, j0, m, a, b: words64(
        k0, k1, n, partitionable, j0, m, a)


def _pair_tile(k0, k1, n, F, partitionable, j0, m, a, b):
    """Words j and n + j of a 2n-word request into a and b, for j = j0 .. j0+m-1."""


@overload(_pair_tile, jit_options=JIT_OPTIONS)
def _pair_tile_impl(k0, k1, n, F, partitionable, j0, m, a, b):
    if _is_f32(F):
        return lambda k0, k1, n, F, partitionable, j0, m, a, b: word_pairs32(
            k0, k1, n, partitionable, j0, m, a, b)
    return lambda k0, k1, n, F, partitionable, j0, m, a, b: word_pairs64(
        k0, k1, n, partitionable, j0, m, a, b)


@numba.njit(inline="always", error_model="numpy")
def map_words(g, key, n, F, partitionable, out, start, stop, p, q):
    k0, k1 = key[0], key[1]
    u = units(n, F, partitionable)
    stop = min(stop, u)
    h = u if u < n else n   # where the second halves of blocks go (outputs h .. n-1), if any
    a, b = _tile(F), _tile(F)
    for j0 in range(start, stop, TILE):
        m = min(TILE, stop - j0)
        _word_tile(k0, k1, n, F, partitionable, j0, m, a, b)
        for t in range(m):
            out[j0 + t] = g(a[t], j0 + t, p, q)
        for t in range(min(m, n - h - j0)):
            out[j0 + h + t] = g(b[t], j0 + h + t, p, q)


@numba.njit(inline="always", error_model="numpy")
def map_word_pairs(g, key, n, F, partitionable, out, start, stop, p, q):
    k0, k1 = key[0], key[1]
    stop = min(stop, n)
    a, b = _tile(F), _tile(F)
    for j0 in range(start, stop, TILE):
        m = min(TILE, stop - j0)
        _pair_tile(k0, k1, n, F, partitionable, j0, m, a, b)
        for t in range(m):
            out[j0 + t] = g(a[t], b[t], j0 + t, p, q)
