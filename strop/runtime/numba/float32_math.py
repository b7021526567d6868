"""Float32 ``np.tanh``, ``np.exp`` and ``np.log`` for compiled code, as arithmetic LLVM's loop
vectorizer vectorizes (via_numpy.py loops over an array with them).

Numba calls libm's scalar function per element (tanhf: 13 ns an element here, where the rest
of an RNN step's elementwise work takes a few), and a loop with a call in it does not
vectorize.  These compute in float64, without branches: an exponential as 2**k times a
polynomial of the reduced argument (``r`` within ln2/2: Taylor to r**10, error below 1e-12),
a logarithm through atanh's series of (m-1)/(m+1) for a mantissa m within [sqrt(.5), sqrt(2)).
Rounded once to float32, the result is the correctly rounded value of every input tested
(every 7th float32 bit pattern, 614 million: all but 5 for tanh and 9 for exp, near-ties an ulp
off; tests/test_float32_math.py sweeps 2 million); libm's float32 functions and NumPy's SIMD
loops are within an ulp or two of it.  Numbers (not arrays) keep Numba's libm call.

Special values are NumPy's.  NumPy's floating-point flags (codegen/fpchecks.py) are set from
the results, not left to the arithmetic: LLVM assumes flags are never read, so it computes both
sides of a choice for every element and folds a comparison into its operands (a NaN then
reaches an ordered comparison, which raises the invalid flag).  ``vectorized`` clears what the
loop raised and raises what NumPy would: overflow where exp of a finite number is inf, divide
by zero where log is -inf, invalid where log of a number is NaN.  ``contract`` lets LLVM fuse
the polynomial's multiply-adds; it changes float64 roundings only, far below float32's.  The
error model is NumPy's: a division's check for zero would keep the loop from vectorizing.
"""
import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, register_jitable

from ..fpstatus import MASK, NAMES, available

LN2 = math.log(2.0)
_FAST = {"fastmath": {"contract"}, "error_model": "numpy"}
# 1/n! for n = 10 .. 2: expm1(r) = r + r*r*(1/2! + r/3! + ...)
_EXPM1 = tuple(1.0 / math.factorial(n) for n in range(10, 1, -1))
# 1/(2n+1) for n = 7 .. 1: log(m) = 2s*(1 + s**2/3 + s**4/5 + ...), s = (m-1)/(m+1)
_ATANH = tuple(1.0 / (2 * n + 1) for n in range(7, 0, -1))


@intrinsic
def _float_from_bits(typingctx, bits):
    """The float64 whose bits are int64 ``bits``."""
    if bits != types.int64:
        return None
    return types.float64(bits), lambda context, builder, sig, args: builder.bitcast(
        args[0], ir.DoubleType())


@intrinsic
def _bits_of(typingctx, x):
    """The bits of float64 ``x``, as an int64."""
    if x != types.float64:
        return None
    return types.int64(x), lambda context, builder, sig, args: builder.bitcast(
        args[0], ir.IntType(64))


@register_jitable(**_FAST)
def _horner(coefficients, r):
    p = coefficients[0]
    for c in coefficients[1:]:
        p = p * r + c
    return p


@register_jitable(**_FAST)
def _two_to(k):
    """2.0**k for a float64 integer ``k`` within float64's normal exponents."""
    return _float_from_bits((np.int64(k) + 1023) << 52)


@register_jitable(**_FAST)
def _expm1_parts(z):
    """(2**k, expm1(r)) with z = k*ln2 + r, |r| <= ln2/2; expm1(z) = 2**k*expm1(r) + 2**k - 1."""
    k = np.floor(z * (1.0 / LN2) + 0.5)
    r = z - k * LN2
    return _two_to(k), r + r * r * _horner(_EXPM1, r)


@register_jitable(**_FAST)
def _number(x):
    """``x`` as float64, a NaN swapped for 0 (converting a NaN to an integer is undefined)."""
    xd = np.float64(x)
    return xd if xd == xd else 0.0


@register_jitable(**_FAST)
def tanh32(x):
    xd = np.float64(x)
    a = abs(_number(x))
    a = a if a < 10.0 else 10.0         # tanh(10) is 1 - 4e-9: 1.0 in float32
    s, em1 = _expm1_parts(2.0 * a)
    em1 = s * em1 + (s - 1.0)           # expm1(2a), relatively exact near 0
    t = math.copysign(em1 / (em1 + 2.0), xd)
    return np.float32(t if xd == xd else xd)


@register_jitable(**_FAST)
def exp32(x):
    xd = np.float64(x)
    z = _number(x)
    z = z if z < 100.0 else 100.0       # exp(88.73) overflows float32; 2**145 does not float64
    z = z if z > -120.0 else -120.0     # exp(-103.98) is below float32's least subnormal
    s, em1 = _expm1_parts(z)
    y = s * em1 + s
    y = np.inf if xd == np.inf else y
    return np.float32(y if xd == xd else xd)


@register_jitable(**_FAST)
def log32(x):
    xd = np.float64(x)
    xs = xd if xd == xd else 1.0
    zero, negative = xs == 0.0, xs < 0.0
    bits = _bits_of(xs if xs > 0.0 else 1.0)
    e = (bits >> 52) - 1023
    m = _float_from_bits((bits & 0xFFFFFFFFFFFFF) | (1023 << 52))   # within [1, 2)
    big = m > 1.4142135623730951
    m = m * 0.5 if big else m
    e = e + 1 if big else e
    s = (m - 1.0) / (m + 1.0)
    y = e * LN2 + 2.0 * s * (1.0 + s * s * _horner(_ATANH, s * s))
    y = -np.inf if zero else (np.nan if negative else y)
    y = np.inf if xs == np.inf else y
    return np.float32(y if xd == xd else xd)


@register_jitable
def _no_flags(x, out):
    return 0


_FLAG = {name: bit for bit, name in NAMES.items()}
_OVER, _DIVIDE, _INVALID = (_FLAG.get(n, 0) for n in ("over", "divide", "invalid"))


@register_jitable
def _exp_flags(x, out):
    """Overflow where a finite number's exp is inf."""
    for i in range(x.size):
        if np.isinf(out[i]) and not np.isinf(x[i]):
            return _OVER
    return 0


@register_jitable
def _log_flags(x, out):
    """Divide by zero where log is -inf (of a zero), invalid where a number's log is NaN."""
    flags = 0
    for i in range(x.size):
        if out[i] == -np.inf:
            flags |= _DIVIDE
        elif np.isnan(out[i]) and not np.isnan(x[i]):
            flags |= _INVALID
    return flags


if available():
    _test = types.ExternalFunction("fetestexcept", types.intc(types.intc))
    _clear = types.ExternalFunction("feclearexcept", types.intc(types.intc))
    _raise = types.ExternalFunction("feraiseexcept", types.intc(types.intc))

    @register_jitable
    def _flags_set(before, flags):
        """The flags as they were (``before``), and ``flags`` raised."""
        if _test(MASK) & ~before:
            _clear(MASK & ~before)
        if flags:
            _raise(flags)
else:
    @register_jitable
    def _flags_set(before, flags):
        pass

    @register_jitable
    def _test(mask):
        return 0


def vectorized(kernel, flags):
    """``kernel`` over a float32 array (a new C-contiguous one of its shape), with NumPy's flags
    for it: ``flags(x, out)``.  ``.inplace(x)``: over a C-contiguous float32 array, written
    into it (only where ``flags`` does not read ``x``: see IN_PLACE)."""
    @register_jitable
    def run(x):
        before = _test(MASK)
        out = np.empty(x.shape, np.float32)
        flat, src = out.reshape(-1), np.ascontiguousarray(x).reshape(-1)
        for i in range(src.size):
            flat[i] = kernel(src[i])
        _flags_set(before, flags(src, flat))
        return out

    @register_jitable
    def inplace(x):
        before = _test(MASK)
        flat = x.reshape(-1)      # (one name: LLVM sees each element read, then written)
        for i in range(flat.size):
            flat[i] = kernel(flat[i])
        _flags_set(before, flags(flat, flat))
        return x
    run.inplace = inplace
    return run


LOOPS = {np.tanh: vectorized(tanh32, _no_flags), np.exp: vectorized(exp32, _exp_flags),
         np.log: vectorized(log32, _log_flags)}
# those that may write over their input: their flags are read off the results alone
IN_PLACE = {np.tanh}
