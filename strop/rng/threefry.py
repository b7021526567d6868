"""The Threefry-2x32 block function (20 rounds).

Algorithm and constants from Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy
as 1, 2, 3" (SC 2011) and its Random123 library: rotation constants R_{0..7} =
13, 15, 26, 6, 17, 29, 16, 24; key-schedule parity 0x1BD11BDA; a key injection after every
4 rounds, the i-th injection adding i to the second word.

One description of the rounds (``_rounds``) runs twice: on Python ints
(``threefry2x32_reference``, the plain-Python reference) and on LLVM IR, where it emits the
compiled block function as 32-bit adds, xors and rotates (llvm.fshl). Numba itself widens
uint32 arithmetic to 64 bits, which LLVM did not narrow back: the vectorized loops ran on
64-bit lanes (half as many per register, rotates as two shifts), about twice as slow.
"""
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_PARITY = 0x1BD11BDA
_ROT_A = (13, 15, 26, 6)
_ROT_B = (17, 29, 16, 24)
_M32 = 0xFFFFFFFF


def _rounds(add, xor, rotl, const, k0, k1, c0, c1):
    """The 20 rounds, written once over the operations given (32-bit add, xor, rotate
    left by a constant, and a constant)."""
    k2 = xor(xor(k0, k1), const(_PARITY))
    ks = (k0, k1, k2)
    x0, x1 = add(c0, k0), add(c1, k1)
    for g in range(5):                      # 5 groups of 4 rounds, then a key injection
        for r in (_ROT_A if g % 2 == 0 else _ROT_B):
            x0 = add(x0, x1)
            x1 = xor(rotl(x1, r), x0)
        x0 = add(x0, ks[(g + 1) % 3])
        x1 = add(add(x1, ks[(g + 2) % 3]), const(g + 1))
    return x0, x1


def threefry2x32_reference(k0, k1, c0, c1):
    """The block function on Python ints (plain Python, for tests); returns two np.uint32."""
    y0, y1 = _rounds(lambda a, b: (a + b) & _M32, lambda a, b: a ^ b,
                     lambda x, r: ((x << r) | (x >> (32 - r))) & _M32, lambda c: c,
                     int(k0), int(k1), int(c0), int(c1))
    return np.uint32(y0), np.uint32(y1)


@intrinsic
def _threefry_ir(typingctx, k0, k1, c0, c1):
    if not all(t == types.uint32 for t in (k0, k1, c0, c1)):
        return None
    sig = types.UniTuple(types.uint32, 2)(types.uint32, types.uint32, types.uint32,
                                          types.uint32)

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        fshl = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i32, [i32, i32, i32]), "llvm.fshl.i32")
        y0, y1 = _rounds(builder.add, builder.xor,
                         lambda x, r: builder.call(fshl, [x, x, ir.Constant(i32, r)]),
                         lambda c: ir.Constant(i32, c), *args)
        return context.make_tuple(builder, signature.return_type, (y0, y1))
    return sig, codegen


@numba.njit(inline="always")
def threefry2x32(k0, k1, c0, c1):
    """Encrypt the counter pair (c0, c1) under the key (k0, k1); returns two np.uint32."""
    return _threefry_ir(np.uint32(k0), np.uint32(k1), np.uint32(c0), np.uint32(c1))


@numba.njit(cache=True)
def threefry2x32_blocks(key, x0, x1):
    """Elementwise block function over two equal-length uint32 arrays of counters."""
    n = x0.shape[0]
    y0 = np.empty(n, np.uint32)
    y1 = np.empty(n, np.uint32)
    for i in range(n):
        y0[i], y1[i] = threefry2x32(key[0], key[1], x0[i], x1[i])
    return y0, y1
