"""How JAX lays counters out over an output array, in its two streams.

``partitionable=False`` (JAX's original stream): the n 32-bit words of a request are the
block function applied to the counters 0..n-1, padded with one 0 to even length, first half
paired with second half: word j < h is y0 of block (j, j+h), word j >= h is y1 of block
(j-h, j), h = ceil(n/2). A 64-bit value i is (word i << 32) | word i+n of a 2n-word request,
i.e. both halves of block (i, i+n). 8/16-bit values are unpacked low bits first from
ceil(bits*n/32) words.

``partitionable=True`` (JAX's current default): element i gets block (i >> 32, i & 0xffffffff)
of its own; 32 bits are y0 ^ y1, 64 bits are (y0 << 32) | y1, narrower widths truncate y0 ^ y1.

Every function here takes a raw key (uint32 array of shape (2,)) and compiles under Numba;
the fill functions run in parallel over blocks.
"""
import numba
import numpy as np

from strop.rng.threefry import threefry2x32

_LO = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_TILE = 2048


@numba.njit(forceinline=True, cache=True)
def _counter(i):
    """The 64-bit flat index i as the (hi, lo) counter pair of the partitionable stream."""
    u = np.uint64(i)
    return np.uint32(u >> _S32), np.uint32(u & _LO)


@numba.njit(cache=True)
def word_at(key, i, n, partitionable):
    """32-bit value i of an n-element request (the scalar form of fill_bits32)."""
    if partitionable:
        c0, c1 = _counter(i)
        y0, y1 = threefry2x32(key[0], key[1], c0, c1)
        return np.uint32(y0 ^ y1)
    h = (n + 1) // 2
    if i < h:
        j = i + h
        y0, _ = threefry2x32(key[0], key[1], np.uint32(i), np.uint32(j if j < n else 0))
        return y0
    _, y1 = threefry2x32(key[0], key[1], np.uint32(i - h), np.uint32(i))
    return y1


@numba.njit(cache=True)
def dword_at(key, i, n, partitionable):
    """64-bit value i of an n-element request (the scalar form of fill_bits64)."""
    if partitionable:
        c0, c1 = _counter(i)
    else:
        c0, c1 = np.uint32(i), np.uint32(i + n)
    y0, y1 = threefry2x32(key[0], key[1], c0, c1)
    return (np.uint64(y0) << _S32) | np.uint64(y1)


@numba.njit(parallel=True, cache=True)
def fill_bits32(key, n, partitionable):
    out = np.empty(n, np.uint32)
    k0, k1 = key[0], key[1]
    if partitionable:
        for i in numba.prange(n):
            c0, c1 = _counter(i)
            y0, y1 = threefry2x32(k0, k1, c0, c1)
            out[i] = y0 ^ y1
        return out
    h = (n + 1) // 2
    full = n // 2   # blocks whose second counter is real, not the padding 0
    # Tiles through two local buffers: storing y0 and y1 straight to out[j] and out[j + h]
    # keeps LLVM from vectorizing (it cannot rule out aliasing), ~2.5x slower.
    tiles = (full + _TILE - 1) // _TILE
    for c in numba.prange(tiles):
        j0 = c * _TILE
        m = min(_TILE, full - j0)
        a = np.empty(_TILE, np.uint32)
        b = np.empty(_TILE, np.uint32)
        for t in range(m):
            a[t], b[t] = threefry2x32(k0, k1, np.uint32(j0 + t), np.uint32(j0 + t + h))
        out[j0:j0 + m] = a[:m]
        out[j0 + h:j0 + h + m] = b[:m]
    if full < h:
        out[full], _ = threefry2x32(k0, k1, np.uint32(full), np.uint32(0))
    return out


@numba.njit(parallel=True, cache=True)
def fill_bits64(key, n, partitionable):
    out = np.empty(n, np.uint64)
    k0, k1 = key[0], key[1]
    for i in numba.prange(n):
        if partitionable:
            c0, c1 = _counter(i)
        else:
            c0, c1 = np.uint32(i), np.uint32(i + n)
        y0, y1 = threefry2x32(k0, k1, c0, c1)
        out[i] = (np.uint64(y0) << _S32) | np.uint64(y1)
    return out


@numba.njit(cache=True)
def fill_bits_narrow(key, n, width, partitionable):
    """8- or 16-bit values, returned widened to uint32."""
    mask = np.uint32((1 << width) - 1)
    if partitionable:
        return fill_bits32(key, n, True) & mask
    per = 32 // width
    words = fill_bits32(key, (n * width + 31) // 32, False)
    out = np.empty(n, np.uint32)
    for i in range(n):
        out[i] = (words[i // per] >> np.uint32(width * (i % per))) & mask
    return out


@numba.njit(cache=True)
def split_at(key, j, num, partitionable):
    """Key j of split(key, num), as a new (2,) array."""
    out = np.empty(2, np.uint32)
    if partitionable:
        c0, c1 = _counter(j)
        out[0], out[1] = threefry2x32(key[0], key[1], c0, c1)
    else:
        out[0] = word_at(key, 2 * j, 2 * num, False)
        out[1] = word_at(key, 2 * j + 1, 2 * num, False)
    return out


@numba.njit(cache=True)
def split_keys(key, num, partitionable):
    """split(key, num): a (num, 2) uint32 array of new keys."""
    if partitionable:
        out = np.empty((num, 2), np.uint32)
        for j in range(num):
            c0, c1 = _counter(j)
            out[j, 0], out[j, 1] = threefry2x32(key[0], key[1], c0, c1)
        return out
    return fill_bits32(key, 2 * num, False).reshape((num, 2))


@numba.njit(cache=True)
def fold_in_key(key, data):
    """fold_in(key, data) for a uint32 datum: the block of counters (0, data); both streams."""
    out = np.empty(2, np.uint32)
    out[0], out[1] = threefry2x32(key[0], key[1], np.uint32(0), np.uint32(data))
    return out
