"""How JAX lays counters out over an output array, in its two streams.

``partitionable=False`` (JAX's original stream): the n 32-bit words of a request are the
block function applied to the counters 0..n-1, padded with one 0 to even length, first half
paired with second half: word j < h is y0 of block (j, j+h), word j >= h is y1 of block
(j-h, j), h = ceil(n/2). A 64-bit value i is (word i << 32) | word i+n of a 2n-word request,
i.e. both halves of block (i, i+n). 8/16-bit values are unpacked low bits first from
ceil(bits*n/32) words.

``partitionable=True`` (JAX's current default): element i gets block (i >> 32, i & 0xffffffff)
of its own; 32 bits are y0 ^ y1, 64 bits are (y0 << 32) | y1, narrower widths truncate y0 ^ y1.

Every function here takes a raw key (uint32 array of shape (2,)) and compiles under Numba.
Flags are passed on as variables, never as literal True/False: Numba compiles a function
once more for each literal argument value.
"""
import numba
import numpy as np

from strop.rng.threefry import threefry2x32

_LO = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
# constants passed to compiled functions: np.int64, not literals (Numba compiles a function
# once more for each literal argument value)
_I0, _I1, _I2, _I3 = np.int64(0), np.int64(1), np.int64(2), np.int64(3)
TILE = 2048              # units per tile (fits L1 with its buffers)
CHUNK = 32 * TILE        # units per parallel task (a multiple of TILE)


@numba.njit(inline="always")
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


# -- tiles of words, for loops that vectorize ----------------------------------------------
#
# A request is filled in units: for 32-bit words of the original stream a unit is a block,
# whose two halves are words j and j + h; otherwise a unit is one value. Units are worked in
# tiles of TILE: the block function fills two small local buffers (a loop LLVM vectorizes),
# then the caller maps them to its outputs (contiguous loops again). Storing y0 and y1
# straight to out[j] and out[j + h] keeps LLVM from vectorizing (~2.5x slower).

@numba.njit(forceinline=True, cache=True)
def units32(n, partitionable):
    """The number of units of an n-word request: blocks in the original stream."""
    return n if partitionable else (n + 1) // 2


@numba.njit(forceinline=True, cache=True)
def words32(k0, k1, n, partitionable, j0, m, a, b):
    """Units j0 .. j0+m-1 of an n-word request: a[t] is word j0+t, and in the original stream
    b[t] is word j0+t+h, the other half of block j0+t (padding after the last word when n is
    odd: that block's second counter is 0)."""
    if partitionable:
        for t in range(m):
            c0, c1 = _counter(j0 + t)
            y0, y1 = threefry2x32(k0, k1, c0, c1)
            a[t] = y0 ^ y1
    else:
        h = (n + 1) // 2
        for t in range(m):
            j = j0 + t
            a[t], b[t] = threefry2x32(k0, k1, np.uint32(j), np.uint32(j + h if j + h < n else 0))


@numba.njit(forceinline=True, cache=True)
def words64(k0, k1, n, partitionable, j0, m, a):
    """64-bit values j0 .. j0+m-1 of an n-value request, in a."""
    for t in range(m):
        j = j0 + t
        if partitionable:
            c0, c1 = _counter(j)
        else:
            c0, c1 = np.uint32(j), np.uint32(j + n)
        y0, y1 = threefry2x32(k0, k1, c0, c1)
        a[t] = (np.uint64(y0) << _S32) | np.uint64(y1)


@numba.njit(forceinline=True, cache=True)
def word_pairs32(k0, k1, n, partitionable, j0, m, a, b):
    """Words j and n + j of a 2n-word request, for j = j0 .. j0+m-1, in a and b (in the
    original stream the two halves of block (j, j + n))."""
    for t in range(m):
        j = j0 + t
        if partitionable:
            c0, c1 = _counter(j)
            y0, y1 = threefry2x32(k0, k1, c0, c1)
            a[t] = y0 ^ y1
            c0, c1 = _counter(j + n)
            y0, y1 = threefry2x32(k0, k1, c0, c1)
            b[t] = y0 ^ y1
        else:
            a[t], b[t] = threefry2x32(k0, k1, np.uint32(j), np.uint32(j + n))


@numba.njit(forceinline=True, cache=True)
def word_pairs64(k0, k1, n, partitionable, j0, m, a, b):
    """64-bit values j and n + j of a 2n-value request, for j = j0 .. j0+m-1."""
    words64(k0, k1, 2 * n, partitionable, j0, m, a)
    for t in range(m):
        j = j0 + n + t
        if partitionable:
            c0, c1 = _counter(j)
        else:
            c0, c1 = np.uint32(j), np.uint32(j + 2 * n)
        y0, y1 = threefry2x32(k0, k1, c0, c1)
        b[t] = (np.uint64(y0) << _S32) | np.uint64(y1)


# -- fills --------------------------------------------------------------------------------
#
# ``*_fill(..., out, start, stop)`` writes the outputs of units start .. min(stop, units)-1:
# (0, n) fills everything, and disjoint unit ranges can run in parallel (strop.rng.kernels:
# the public functions split them between threads, the kernels of KERNELS between the
# workers of a prange).

@numba.njit(cache=True, nogil=True)
def bits32_fill(key, n, partitionable, out, start, stop):
    """32-bit words of an n-word request into out."""
    k0, k1 = key[0], key[1]
    stop = min(stop, units32(n, partitionable))
    if partitionable:
        for i in range(start, stop):
            c0, c1 = _counter(i)
            y0, y1 = threefry2x32(k0, k1, c0, c1)
            out[i] = y0 ^ y1
        return
    h = (n + 1) // 2
    a = np.empty(TILE, np.uint32)
    b = np.empty(TILE, np.uint32)
    for j0 in range(start, stop, TILE):
        m = min(TILE, stop - j0)
        words32(k0, k1, n, partitionable, j0, m, a, b)
        # loops, not slice assignments: those compile a shape check that takes seconds
        for t in range(m):
            out[j0 + t] = a[t]
        for t in range(min(m, n - h - j0)):
            out[j0 + h + t] = b[t]


@numba.njit(cache=True, nogil=True)
def bits64_fill(key, n, partitionable, out, start, stop):
    """64-bit values of an n-value request into out."""
    k0, k1 = key[0], key[1]
    for i in range(start, min(stop, n)):
        if partitionable:
            c0, c1 = _counter(i)
        else:
            c0, c1 = np.uint32(i), np.uint32(i + n)
        y0, y1 = threefry2x32(k0, k1, c0, c1)
        out[i] = (np.uint64(y0) << _S32) | np.uint64(y1)


@numba.njit(cache=True)
def fill_bits32(key, n, partitionable):
    """n 32-bit words (serial; strop.rng.kernels.bits_kernel is the parallel one)."""
    out = np.empty(n, np.uint32)
    bits32_fill(key, n, partitionable, out, _I0, n)
    return out


@numba.njit(cache=True)
def fill_bits64(key, n, partitionable):
    """n 64-bit values (serial; strop.rng.kernels.bits64_kernel is the parallel one)."""
    out = np.empty(n, np.uint64)
    bits64_fill(key, n, partitionable, out, _I0, n)
    return out


@numba.njit(cache=True)
def fill_bits_narrow(key, n, width, partitionable):
    """8- or 16-bit values, returned widened to uint32."""
    mask = np.uint32((1 << width) - 1)
    if partitionable:
        return fill_bits32(key, n, partitionable) & mask
    per = 32 // width
    words = fill_bits32(key, (n * width + 31) // 32, partitionable)
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
        out[0] = word_at(key, 2 * j, 2 * num, partitionable)
        out[1] = word_at(key, 2 * j + 1, 2 * num, partitionable)
    return out


@numba.njit(inline="always")
def split2(key, partitionable):
    """split(key): its two keys."""
    return split_at(key, _I0, _I2, partitionable), split_at(key, _I1, _I2, partitionable)


@numba.njit(inline="always")
def split3(key, partitionable):
    """split(key, 3): its three keys."""
    return (split_at(key, _I0, _I3, partitionable), split_at(key, _I1, _I3, partitionable),
            split_at(key, _I2, _I3, partitionable))


@numba.njit(cache=True)
def split_keys(key, num, partitionable):
    """split(key, num): a (num, 2) uint32 array of new keys. (Literal arguments from the
    caller become plain values here, so that the work is compiled once.)"""
    return _split_keys(key, np.int64(num), np.bool_(partitionable))


@numba.njit(cache=True)
def _split_keys(key, num, partitionable):
    if partitionable:
        out = np.empty((num, 2), np.uint32)
        for j in range(num):
            c0, c1 = _counter(j)
            out[j, 0], out[j, 1] = threefry2x32(key[0], key[1], c0, c1)
        return out
    return fill_bits32(key, 2 * num, partitionable).reshape((num, 2))


@numba.njit(cache=True)
def fold_in_key(key, data):
    """fold_in(key, data) for a uint32 datum: the block of counters (0, data); both streams."""
    out = np.empty(2, np.uint32)
    out[0], out[1] = threefry2x32(key[0], key[1], np.uint32(0), np.uint32(data))
    return out
