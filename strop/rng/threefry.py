"""The Threefry-2x32 block function (20 rounds).

Algorithm and constants from Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy
as 1, 2, 3" (SC 2011) and its Random123 library: rotation constants R_{0..7} =
13, 15, 26, 6, 17, 29, 16, 24; key-schedule parity 0x1BD11BDA; a key injection after every
4 rounds, the i-th injection adding i to the second word.

Words are carried as uint64 holding 32-bit values and masked after each addition, so that
the same code wraps correctly under Numba (which widens uint32 arithmetic to 64 bits) and
in plain NumPy; LLVM narrows the masked arithmetic back to 32-bit vector lanes.
"""
import numba
import numpy as np

_MASK = np.uint64(0xFFFFFFFF)
_PARITY = np.uint64(0x1BD11BDA)
_W = np.uint64(32)
_ROT_A = (np.uint64(13), np.uint64(15), np.uint64(26), np.uint64(6))
_ROT_B = (np.uint64(17), np.uint64(29), np.uint64(16), np.uint64(24))
_INJ = (np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4), np.uint64(5))


@numba.njit(forceinline=True, cache=True)
def _rotl(x, r):
    return ((x << r) | (x >> (_W - r))) & _MASK


@numba.njit(forceinline=True, cache=True)
def _four_rounds(x0, x1, rot):
    x0 = (x0 + x1) & _MASK
    x1 = _rotl(x1, rot[0]) ^ x0
    x0 = (x0 + x1) & _MASK
    x1 = _rotl(x1, rot[1]) ^ x0
    x0 = (x0 + x1) & _MASK
    x1 = _rotl(x1, rot[2]) ^ x0
    x0 = (x0 + x1) & _MASK
    x1 = _rotl(x1, rot[3]) ^ x0
    return x0, x1


@numba.njit(forceinline=True, cache=True)
def threefry2x32(k0, k1, c0, c1):
    """Encrypt the counter pair (c0, c1) under the key (k0, k1); returns two np.uint32."""
    k0 = np.uint64(k0)
    k1 = np.uint64(k1)
    k2 = k0 ^ k1 ^ _PARITY
    x0 = (np.uint64(c0) + k0) & _MASK
    x1 = (np.uint64(c1) + k1) & _MASK
    x0, x1 = _four_rounds(x0, x1, _ROT_A)
    x0 = (x0 + k1) & _MASK
    x1 = (x1 + k2 + _INJ[0]) & _MASK
    x0, x1 = _four_rounds(x0, x1, _ROT_B)
    x0 = (x0 + k2) & _MASK
    x1 = (x1 + k0 + _INJ[1]) & _MASK
    x0, x1 = _four_rounds(x0, x1, _ROT_A)
    x0 = (x0 + k0) & _MASK
    x1 = (x1 + k1 + _INJ[2]) & _MASK
    x0, x1 = _four_rounds(x0, x1, _ROT_B)
    x0 = (x0 + k1) & _MASK
    x1 = (x1 + k2 + _INJ[3]) & _MASK
    x0, x1 = _four_rounds(x0, x1, _ROT_A)
    x0 = (x0 + k2) & _MASK
    x1 = (x1 + k0 + _INJ[4]) & _MASK
    return np.uint32(x0), np.uint32(x1)


@numba.njit(cache=True)
def threefry2x32_blocks(key, x0, x1):
    """Elementwise block function over two equal-length uint32 arrays of counters."""
    n = x0.shape[0]
    y0 = np.empty(n, np.uint32)
    y1 = np.empty(n, np.uint32)
    for i in range(n):
        y0[i], y1[i] = threefry2x32(key[0], key[1], x0[i], x1[i])
    return y0, y1
