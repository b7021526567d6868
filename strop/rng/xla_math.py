"""Elementary functions computed the way JAX's CPU backend (XLA) computes them.

JAX's samplers are compositions of log, log1p, exp, erf, erf_inv and lgamma. To give the same
float32 bits as JAX, each is written here with XLA's algorithm, constants and operation order,
including the fused multiply-adds that XLA's CPU compiler forms wherever a product feeds a sum:

- log (float32): the Cephes logf polynomial (S. Moshier, Cephes Math Library; also Eigen's
  plog), as in XLA's CPU runtime; float64 uses the C library's log, as XLA does.
- log1p: Cephes' rational approximation for |x| < sqrt(2)-1, log(1+x) elsewhere.
- exp (float32): the Cephes expf reduction and polynomial. float64 uses the C library,
  which differs from XLA's own float64 exp by up to 2 ulp (used by beta only).
- erf (float32): Eigen's odd/even rational interpolant; float64 uses the C library.
- erf_inv: M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011):
  the single-precision two-branch and double-precision three-branch polynomials.
- lgamma: the Lanczos approximation (g = 7, 9 terms), with reflection below 0.5.

Each function works on NumPy scalars in plain Python and compiles under Numba, where a
typed overload picks the float32 or float64 variant at compile time. The samplers' reference
vectors (tests/data/rng_reference.*) check the agreement with JAX.
"""
import math
from fractions import Fraction

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

_F32_MIN_NORMAL = 1.1754943508222875e-38
_U23, _MANT, _HALF_EXP = np.uint32(23), np.uint32(0x007FFFFF), np.uint32(0x3F000000)

#: Numba options of every function here: inlined by LLVM into the caller (so that a loop
#: calling them can be vectorized) and the NumPy error model (x / 0 is inf, not an
#: exception: no branch to raise, and XLA's result).
JIT_OPTIONS = {"forceinline": True, "error_model": "numpy"}


def _float_type(x):
    return np.float32 if isinstance(x, np.float32) else np.float64


def elementwise(factory):
    """One definition for both worlds: ``factory(F)`` builds the function for float type F.

    Called from Python, the result dispatches on the argument's type; called from Numba,
    an overload specializes it at compile time.
    """
    def function(x):
        F = _float_type(x)
        return F(factory(F)(F(x)))

    @overload(function, jit_options=JIT_OPTIONS)
    def _specialize(x):
        if isinstance(x, types.Float):
            return factory(np.float32 if x.bitwidth == 32 else np.float64)

    function.__name__ = factory.__name__.lstrip("_")
    function.__doc__ = factory.__doc__
    return function


# -- fused multiply-add ------------------------------------------------------------------

def _fma_exact(a, b, c):
    """Correctly rounded a*b + c in the type of a (plain-Python reference)."""
    F = _float_type(a)
    if not all(map(math.isfinite, (a, b, c))):
        return F(F(a) * F(b) + F(c))
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    guess = F(float(exact))
    best = guess
    for cand in (np.nextafter(guess, F(-np.inf)), np.nextafter(guess, F(np.inf))):
        d_best, d_cand = abs(Fraction(float(best)) - exact), abs(Fraction(float(cand)) - exact)
        if d_cand < d_best or (d_cand == d_best and int(cand.view(_uint_of(F))) % 2 == 0):
            best = cand
    return F(best)


def _uint_of(F):
    return np.uint32 if F is np.float32 else np.uint64


@intrinsic
def _llvm_fma(typingctx, a, b, c):
    if isinstance(a, types.Float) and a == b == c:
        def codegen(context, builder, signature, args):
            return builder.fma(*args)
        return a(a, a, a), codegen


def fma(a, b, c):
    """a*b + c with a single rounding, in the float type of ``a``."""
    return _fma_exact(a, b, c)


@overload(fma, jit_options=JIT_OPTIONS)
def _fma_numba(a, b, c):
    if isinstance(a, types.Float):
        return lambda a, b, c: _llvm_fma(a, b, c)


# -- float32 bits ------------------------------------------------------------------------

@intrinsic
def _bitcast_to_u32(typingctx, x):
    if x == types.float32:
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.IntType(32))
        return types.uint32(types.float32), codegen


@intrinsic
def _bitcast_to_f32(typingctx, u):
    if u == types.uint32:
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.FloatType())
        return types.float32(types.uint32), codegen


def f32_bits(x):
    """The bits of a float32 as a uint32."""
    return np.float32(x).view(np.uint32)


def bits_f32(u):
    """The float32 whose bits are the uint32 u."""
    return np.uint32(u).view(np.float32)


@overload(f32_bits, jit_options=JIT_OPTIONS)
def _f32_bits(x):
    if x == types.float32:
        return lambda x: _bitcast_to_u32(x)


@overload(bits_f32, jit_options=JIT_OPTIONS)
def _bits_f32(u):
    if isinstance(u, types.Integer):
        return lambda u: _bitcast_to_f32(np.uint32(u))


# -- log, log1p, exp ---------------------------------------------------------------------

def _log(F):
    if F is np.float64:
        return lambda x: math.log(x)
    sqrthf, q1, q2 = F(0.707106781186547524), F(-2.12194440e-4), F(0.693359375)
    p = [F(c) for c in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                        1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                        3.3333331174E-1)]
    p0, p1, p2, p3, p4, p5, p6, p7, p8 = p
    one, half, min_normal = F(1), F(0.5), F(_F32_MIN_NORMAL)
    inf, nan = F(np.inf), F(np.nan)

    def log32(x):
        # frexp by the bits: x = m * 2**ex with m in [0.5, 1); straight-line code (no call,
        # no branch: the special cases are selected at the end), so loops vectorize
        u = f32_bits(max(x, min_normal))
        e = F(np.int32(u >> _U23) - np.int32(126))
        t = bits_f32((u & _MANT) | _HALF_EXP)
        small = t < sqrthf
        e = e - one if small else e
        t = (t - one) + t if small else t - one   # (t - 1) + t, in XLA's order
        x2 = t * t
        x3 = x2 * t
        y = fma(t, p0, p1)
        y1 = fma(t, p3, p4)
        y2 = fma(t, p6, p7)
        y = fma(y, t, p2)
        y1 = fma(y1, t, p5)
        y2 = fma(y2, t, p8)
        y = fma(y, x3, y1)
        y = fma(y, x3, y2)
        y = fma(y, x3, q1 * e)
        t = fma(-half, x2, t)
        t = t + y
        r = fma(q2, e, t)
        r = x if x == inf else r
        r = -inf if x == 0 else r
        return r if x >= 0 else nan
    return log32


log = elementwise(_log)

_LOG1P_NUM = (4.5270000862445199635215E-5, 4.9854102823193375972212E-1,
              6.5787325942061044846969E0, 2.9911919328553073277375E1,
              6.0949667980987787057556E1, 5.7112963590585538103336E1,
              2.0039553499201281259648E1)
_LOG1P_DEN = (1., 1.5062909083469192043167E1, 8.3047565967967209469434E1,
              2.2176239823732856465394E2, 3.0909872225312059774938E2,
              2.1642788614495947685003E2, 6.0118660497603843919306E1)


def _log1p(F):
    n0, n1, n2, n3, n4, n5, n6 = (F(c) for c in _LOG1P_NUM)
    d0, d1, d2, d3, d4, d5, d6 = (F(c) for c in _LOG1P_DEN)
    hi = F(0.41421356237309504880)
    one, half = F(1), F(0.5)

    def log1p_(x):
        if not abs(x) < hi:
            return log(x + one)
        x2 = x * x
        num = fma(fma(fma(fma(fma(fma(n0, x, n1), x, n2), x, n3), x, n4), x, n5), x, n6)
        den = fma(fma(fma(fma(fma(fma(d0, x, d1), x, d2), x, d3), x, d4), x, d5), x, d6)
        small = (x * x2) * (num / den)
        return x + fma(-half, x2, small)

    def log1p32(x):
        # float32: both sides, then a select (straight-line code, so loops vectorize)
        x2 = x * x
        num = fma(fma(fma(fma(fma(fma(n0, x, n1), x, n2), x, n3), x, n4), x, n5), x, n6)
        den = fma(fma(fma(fma(fma(fma(d0, x, d1), x, d2), x, d3), x, d4), x, d5), x, d6)
        small = (x * x2) * (num / den)
        near = x + fma(-half, x2, small)
        far = log(x + one)
        return near if abs(x) < hi else far
    if F is np.float32:
        return log1p32
    return log1p_


log1p = elementwise(_log1p)


def _exp(F):
    if F is np.float64:
        return lambda x: math.exp(x)
    log2e, c1, c2 = F(1.44269504088896341), F(0.693359375), F(-2.12194440e-4)
    p0, p1, p2, p3, p4, p5 = (F(c) for c in (1.9875691500E-4, 1.3981999507E-3,
                                              8.3334519073E-3, 4.1665795894E-2,
                                              1.6666665459E-1, 5.0000001201E-1))
    lo, hi, one, half = F(-87.8), F(88.8), F(1), F(0.5)

    def exp32(x):
        if x != x:
            return x
        x = min(max(x, lo), hi)
        n = min(max(F(math.floor(fma(x, log2e, half))), F(-127)), F(127))
        r = fma(-c1, n, x)
        r = fma(-c2, n, r)
        z = fma(fma(fma(fma(fma(r, p0, p1), r, p2), r, p3), r, p4), r, p5)
        z = one + fma(z, r * r, r)
        # 2**n from its exponent bits; n = -127 gives the bits of 0 (XLA flushes 2**-127 to 0)
        pow2 = bits_f32(np.uint32(np.int32(n) + np.int32(127)) << _U23)
        return z * pow2
    return exp32


exp = elementwise(_exp)


# -- erf, erf_inv --------------------------------------------------------------------------

def _erf(F):
    if F is np.float64:
        return lambda x: math.erf(x)
    a1, a3, a5, a7, a9 = (F(c) for c in (1.128379143519084, 0.18520832239976145,
                                          0.050955695062380861, 0.0034082910107109506,
                                          0.00022905065861350646))
    b0, b2, b4, b6, b8, b10, b12 = (F(c) for c in (1.0, 0.49746925110067538,
                                                    0.11098505178285362, 0.014070470171167667,
                                                    0.0010179625278914885,
                                                    0.000023547966471313185,
                                                    -1.1791602954361697e-7))
    saturate = F(3.832506856900711)

    def erf32(x):
        x2 = x * x
        p = x * fma(x2, fma(x2, fma(x2, fma(x2, a9, a7), a5), a3), a1)
        q = fma(x2, fma(x2, fma(x2, fma(x2, fma(x2, fma(x2, b12, b10), b8), b6), b4), b2), b0)
        return F(math.copysign(1.0, x)) if abs(x) >= saturate else p / q
    return erf32


erf = elementwise(_erf)

# Giles (2011), single precision: w < 5 and w >= 5, highest degree first.
_ERFINV32 = ((2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941),
             (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682))
# Giles (2011), double precision: w < 6.25, w < 16, w >= 16.
_ERFINV64 = (
    (-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
     1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
     6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
     2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
     1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
     4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
     0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
     0.24015818242558961693, 1.6536545626831027356),
    (2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
     1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
     2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
     6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
     0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
     -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
     3.0838856104922207635),
    (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
     -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
     2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
     -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
     7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
     1.0103004648645343977, 4.8499064014085844221),
)


def _horner(coefs, var, prefix, consts):
    """Source of the polynomial with these coefficients (highest degree first) at ``var``,
    evaluated by fused Horner steps; the coefficients go into ``consts`` as prefix0, ..."""
    names = []
    for k, c in enumerate(coefs):
        names.append(f"{prefix}{k}")
        consts[names[-1]] = c
    expr = names[0]
    for name in names[1:]:
        expr = f"fma({expr}, {var}, {name})"
    return expr


def _erf_inv(F):
    """Generated straight-line code: each branch's polynomial written out. In float32 both
    branches are computed and one selected, as XLA does, so loops over it vectorize; float64
    branches (its log is the C library's, which does not vectorize anyway)."""
    if F is np.float32:
        limits, offsets, coefs = (5.0,), (2.5, 3.0), _ERFINV32
    else:
        limits, offsets, coefs = (6.25, 16.0), (3.125, 3.25, 5.0), _ERFINV64
    ns = {"fma": fma, "log1p": log1p, "math": math, "F": F, "one": F(1), "inf": F(np.inf)}
    ns.update({f"limit{b}": F(v) for b, v in enumerate(limits)})
    ns.update({f"offset{b}": F(v) for b, v in enumerate(offsets)})
    consts = {}
    polys = [_horner(c, f"v{b}", f"c{b}_", consts) for b, c in enumerate(coefs)]
    ns.update({k: F(v) for k, v in consts.items()})
    body = ["def erf_inv_(x):"]
    if F is np.float32:
        body += ["    w = -log1p(x * -x)",
                 "    v0 = w - offset0",
                 "    v1 = F(math.sqrt(w)) - offset1",
                 f"    p0 = {polys[0]}",
                 f"    p1 = {polys[1]}",
                 "    r = (p0 if w < limit0 else p1) * x",
                 "    return x * inf if abs(x) == one else r"]
    else:
        body += ["    if abs(x) == one:",
                 "        return x * inf",
                 "    w = -log1p(x * -x)",
                 "    if w < limit0:",
                 "        v0 = w - offset0",
                 f"        return ({polys[0]}) * x",
                 "    if w < limit1:",
                 "        v1 = F(math.sqrt(w)) - offset1",
                 f"        return ({polys[1]}) * x",
                 "    v2 = F(math.sqrt(w)) - offset2",
                 f"    return ({polys[2]}) * x"]
    exec("\n".join(body), ns)
    return ns["erf_inv_"]


erf_inv = elementwise(_erf_inv)

# -- lgamma ------------------------------------------------------------------------------

_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
            771.3234287776530788486528258894, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _lgamma(F):
    coef = np.array(_LANCZOS, F)
    base = F(0.99999999999980993227684700473478)
    g_half, inv_g_half = F(7.5), F(1 / 7.5)
    log_g_half, log_sqrt_2pi = F(math.log(7.5)), F(0.5 * math.log(2 * math.pi))
    pi, log_pi = F(math.pi), F(math.log(math.pi))
    one, half = F(1), F(0.5)

    def lgamma_(x):
        if abs(x) == np.inf:
            return F(np.inf)
        reflect = x < half
        z = -x if reflect else x + F(-1)
        acc = coef[0] / (z + one) + base
        for k in range(1, 8):
            acc = acc + coef[k] / (z + F(k + 1))
        log_t = log1p(z * inv_g_half) + log_g_half
        log_y = fma((z + half) - (z + g_half) / log_t, log_t, log_sqrt_2pi) + log(acc)
        if not reflect:
            return log_y
        frac = abs(x) - F(math.floor(abs(x)))
        reduced = one - frac if half < frac else frac
        log_sin = log(F(math.sin(pi * reduced)))
        return (log_pi - log_sin) - log_y if math.isfinite(log_sin) else -log_sin
    return lgamma_


lgamma = elementwise(_lgamma)
