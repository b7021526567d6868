"""Numba kernels: one per public function, over flat arrays and raw uint32 keys.

Each kernel is a ``numba.njit`` dispatcher, callable from Python and from other compiled
code, and a pure function of its arguments. Arguments are already checked and resolved by
the public wrappers in ``strop.rng.samplers``: sizes are ints, ``F`` is np.float32 or
np.float64, parameter arrays are 1-d, of the output's float type, and of length n or 1
(broadcast), and ``partitionable`` selects JAX's counter layout. Outputs are flat; the
caller reshapes. ``KERNELS`` in ``strop.rng`` maps public names to these functions.

Algorithms are JAX's (jax/_src/random), re-expressed element by element so that each
output depends only on its position, which lets the elementwise ones run in parallel.
"""
import math

import numba
import numpy as np

from strop.rng.floats import in_range, random_word_at, random_words, to_unit, uniform_at
from strop.rng.streams import dword_at, fill_bits32, fill_bits64, fill_bits_narrow, \
    split_at, split_keys, word_at
from strop.rng.xla_math import erf, erf_inv, exp, fma, lgamma, log, log1p

_SQRT2 = math.sqrt(2.0)


@numba.njit(forceinline=True, cache=True)
def _at(a, i):
    """a[i], or a[0] for a length-1 (broadcast) parameter."""
    return a[0] if a.shape[0] == 1 else a[i]


# -- bits and keys -----------------------------------------------------------------------

@numba.njit(cache=True)
def bits_kernel(key, n, width, partitionable):
    """bits() of width 8, 16 or 32: n values in a uint32 array (the wrapper narrows the
    dtype). Width 64 is bits64_kernel."""
    if width == 32:
        return fill_bits32(key, n, partitionable)
    return fill_bits_narrow(key, n, width, partitionable)


bits64_kernel = fill_bits64


split_kernel = split_keys


# -- continuous samplers built on uniform -------------------------------------------------

@numba.njit(parallel=True, cache=True)
def uniform_kernel(key, n, lo, hi, partitionable):
    words = random_words(key, n, type(lo[0]), partitionable)
    out = np.empty(n, lo.dtype)
    for i in numba.prange(n):
        out[i] = in_range(words[i], _at(lo, i), _at(hi, i))
    return out


@numba.njit(parallel=True, cache=True)
def normal_kernel(key, n, F, partitionable):
    words = random_words(key, n, F, partitionable)
    lo, hi, sqrt2 = np.nextafter(F(-1), F(0)), F(1), F(_SQRT2)
    out = np.empty(n, F)
    for i in numba.prange(n):
        out[i] = sqrt2 * erf_inv(in_range(words[i], lo, hi))
    return out


@numba.njit(parallel=True, cache=True)
def exponential_kernel(key, n, F, partitionable):
    words = random_words(key, n, F, partitionable)
    out = np.empty(n, F)
    for i in numba.prange(n):
        out[i] = -log1p(-to_unit(words[i]))
    return out


@numba.njit(parallel=True, cache=True)
def gumbel_kernel(key, n, F, high, partitionable):
    """mode='low': -log(-log(u)), u in [tiny, 1). mode='high' adds a second word of low bits
    below the first for the small values; both halves come from one (2, n) request."""
    tiny, one, half = F(np.finfo(F).tiny), F(1), F(0.5)
    out = np.empty(n, F)
    if not high:
        words = random_words(key, n, F, partitionable)
        for i in numba.prange(n):
            out[i] = -log(-log(in_range(words[i], tiny, one)))
        return out
    eps = F(np.finfo(F).eps)
    words = random_words(key, 2 * n, F, partitionable)
    for i in numba.prange(n):
        hi_u, lo_u = to_unit(words[i]), to_unit(words[n + i])
        x = hi_u if hi_u >= half else fma(eps, lo_u, hi_u) + tiny
        out[i] = -log(-log1p(-x))
    return out


@numba.njit(parallel=True, cache=True)
def laplace_kernel(key, n, F, partitionable):
    words = random_words(key, n, F, partitionable)
    lo, hi = F(-1) + F(np.finfo(F).epsneg), F(1)
    out = np.empty(n, F)
    for i in numba.prange(n):
        u = in_range(words[i], lo, hi)
        out[i] = F(np.sign(u)) * log1p(-abs(u))
    return out


@numba.njit(parallel=True, cache=True)
def logistic_kernel(key, n, F, partitionable):
    words = random_words(key, n, F, partitionable)
    tiny, one = F(np.finfo(F).tiny), F(1)
    out = np.empty(n, F)
    for i in numba.prange(n):
        x = in_range(words[i], tiny, one)
        out[i] = log(x) - log1p(-x)
    return out


@numba.njit(parallel=True, cache=True)
def truncated_normal_kernel(key, n, lower, upper, partitionable):
    F = type(lower[0])
    sqrt2, inf = F(_SQRT2), F(np.inf)
    inv_sqrt2 = F(1) / sqrt2
    words = random_words(key, n, F, partitionable)
    out = np.empty(n, F)
    for i in numba.prange(n):
        lo, hi = _at(lower, i), _at(upper, i)
        # XLA rewrites x / sqrt2 as x * (1 / sqrt2), the reciprocal rounded to F
        x = sqrt2 * erf_inv(in_range(words[i], erf(lo * inv_sqrt2), erf(hi * inv_sqrt2)))
        out[i] = min(max(x, np.nextafter(lo, inf)), np.nextafter(hi, -inf))
    return out


@numba.njit(parallel=True, cache=True)
def bernoulli_kernel(key, n, p, high, partitionable):
    F = type(p[0])
    out = np.empty(n, np.bool_)
    if not high:
        words = random_words(key, n, F, partitionable)
        for i in numba.prange(n):
            out[i] = to_unit(words[i]) < _at(p, i)
        return out
    eps = F(np.finfo(F).eps)
    words = random_words(key, 2 * n, F, partitionable)
    for i in numba.prange(n):
        out[i] = to_unit(words[n + i]) * eps < _at(p, i) - to_unit(words[i])
    return out


# -- integers -----------------------------------------------------------------------------

@numba.njit(forceinline=True, cache=True)
def _urem(a, b):
    return a if b == 0 else a % b   # XLA: x % 0 == x for unsigned integers


@numba.njit(cache=True)
def randint_kernel(key, n, lo, hi, hi_out_of_range, nbits, partitionable):
    """JAX's randint: (hi_bits % span * (2**nbits % span) + lo_bits % span) % span, computed
    in wrapping nbits-bit unsigned arithmetic. lo/hi are int64 already clipped to the dtype;
    the result is the nbits-bit pattern of lo + offset, as uint64."""
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) if nbits == 64 else np.uint64((1 << nbits) - 1)
    keys = split_keys(key, 2, partitionable)
    if nbits == 64:
        higher, lower = fill_bits64(keys[0], n, partitionable), fill_bits64(keys[1], n, partitionable)
    else:
        higher = fill_bits32(keys[0], n, partitionable).astype(np.uint64)
        lower = fill_bits32(keys[1], n, partitionable).astype(np.uint64)
    half = np.uint64(1) << np.uint64(nbits // 2)
    out = np.empty(n, np.uint64)
    for i in range(n):
        a, b = _at(lo, i), _at(hi, i)
        ua, ub = np.uint64(a), np.uint64(b)
        span = (ub - ua) & mask
        if b <= a:
            span = np.uint64(1)
        elif _at(hi_out_of_range, i):
            span = (span + np.uint64(1)) & mask
        mult = _urem(half, span)
        mult = _urem((mult * mult) & mask, span)
        offset = ((_urem(higher[i], span) * mult) & mask) + _urem(lower[i], span)
        out[i] = (ua + _urem(offset & mask, span)) & mask
    return out


# -- shuffles and choices -----------------------------------------------------------------

@numba.njit(cache=True)
def permutation_kernel(key, n, partitionable):
    """The permutation JAX's _shuffle applies to n items: rounds of stable sorts keyed by
    fresh 32-bit words, ceil(3 ln n / ln(2**32 - 1)) rounds (at least enough to make key
    collisions unlikely)."""
    rounds = int(math.ceil(3 * math.log(max(1, n)) / math.log(4294967295.0)))
    perm = np.arange(n)
    for _ in range(rounds):
        key, sub = split_at(key, 0, 2, partitionable), split_at(key, 1, 2, partitionable)
        sort_keys = fill_bits32(sub, n, partitionable)
        perm = perm[np.argsort(sort_keys, kind="mergesort")]
    return perm


@numba.njit(cache=True)
def shuffle_lanes_kernel(key, outer, n, inner, partitionable):
    """permutation(..., independent=True) of an (outer, n, inner) array along its middle axis:
    one permutation per lane, (outer, inner, n); each round's sort keys are drawn for the
    whole array at once, as JAX does."""
    rounds = int(math.ceil(3 * math.log(max(1, outer * n * inner)) / math.log(4294967295.0)))
    perm = np.empty((outer, inner, n), np.int64)
    for o in range(outer):
        for q in range(inner):
            perm[o, q] = np.arange(n)
    for _ in range(rounds):
        key, sub = split_at(key, 0, 2, partitionable), split_at(key, 1, 2, partitionable)
        sort_keys = fill_bits32(sub, outer * n * inner, partitionable).reshape((outer, n, inner))
        for o in range(outer):
            for q in range(inner):
                order = np.argsort(sort_keys[o, :, q], kind="mergesort")
                perm[o, q] = perm[o, q][order]
    return perm


@numba.njit(cache=True)
def choice_p_kernel(key, n_draws, p, partitionable):
    """choice with probabilities, with replacement: the first cumulative weight >= r, where
    r = total * (1 - u)."""
    cum = np.cumsum(p)
    words = random_words(key, n_draws, type(p[0]), partitionable)
    out = np.empty(n_draws, np.int64)
    one = type(p[0])(1)
    for i in range(n_draws):
        out[i] = np.searchsorted(cum, cum[-1] * (one - to_unit(words[i])))
    return out


@numba.njit(cache=True)
def top_k_desc(values, k):
    """Indices of the k largest values, ties in index order (XLA's top_k)."""
    return np.argsort(-values, kind="mergesort")[:k]


@numba.njit(cache=True)
def choice_p_noreplace_kernel(key, n_draws, p, high, partitionable):
    """Gumbel top-k: the k largest of gumbel + log p."""
    g = gumbel_kernel(key, p.shape[0], type(p[0]), high, partitionable)
    for i in range(p.shape[0]):
        g[i] = g[i] + log(p[i])
    return top_k_desc(g, n_draws)


@numba.njit(cache=True)
def categorical_kernel(key, logits, prefix, high, partitionable):
    """Gumbel max: logits (outer, k, inner) with the categories in the middle; the noise has
    JAX's layout (prefix, outer, k, inner); returns argmax over k, (prefix, outer, inner)."""
    outer, k, inner = logits.shape
    g = gumbel_kernel(key, prefix * outer * k * inner, type(logits[0, 0, 0]), high,
                      partitionable).reshape((prefix, outer, k, inner))
    out = np.empty((prefix, outer, inner), np.int64)
    for p in range(prefix):
        for o in range(outer):
            for q in range(inner):
                best, arg = g[p, o, 0, q] + logits[o, 0, q], 0
                for j in range(1, k):
                    v = g[p, o, j, q] + logits[o, j, q]
                    if v > best or (v != v and best == best):   # argmax: first max, NaN wins
                        best, arg = v, j
                out[p, o, q] = arg
    return out


@numba.njit(cache=True)
def categorical_noreplace_kernel(key, logits, n_draws, high, partitionable):
    """Gumbel top-k over the middle axis of (outer, k, inner) logits; (n_draws, outer, inner)."""
    outer, k, inner = logits.shape
    g = gumbel_kernel(key, outer * k * inner, type(logits[0, 0, 0]), high,
                      partitionable).reshape((outer, k, inner))
    out = np.empty((n_draws, outer, inner), np.int64)
    for o in range(outer):
        for q in range(inner):
            out[:, o, q] = top_k_desc(g[o, :, q] + logits[o, :, q], n_draws)
    return out


# -- rejection samplers -------------------------------------------------------------------

@numba.njit(cache=True)
def _normal_scalar(key, F, partitionable):
    u = in_range(random_word_at(key, 0, 1, F, partitionable), np.nextafter(F(-1), F(0)), F(1))
    return F(_SQRT2) * erf_inv(u)


@numba.njit(cache=True)
def gamma_one(key, alpha, log_space, partitionable):
    """Marsaglia & Tsang, "A simple method for generating gamma variables" (2000), as JAX
    runs it for one element: alpha < 1 is boosted to alpha + 1 and scaled back by
    u**(1/alpha) (in log space: + log(u)/alpha)."""
    F = type(alpha)
    zero, one, third, squeeze = F(0), F(1), F(1.0 / 3.0), F(0.0331)
    boost = alpha >= one
    a = alpha if boost else alpha + one
    d = a - third
    # XLA rewrites third / sqrt(d) as third * rsqrt(d). In float64 its rsqrt is correctly
    # rounded; in float32 it uses the CPU's approximate reciprocal square root refined by a
    # Newton step, whose last bit depends on the processor: the division is the closest
    # portable stand-in (float32 gamma then differs from JAX by a few ulp in ~1 in 8 values).
    c = third / F(math.sqrt(d)) if np.finfo(F).eps > 1e-10 else third * F(1.0 / math.sqrt(d))
    k, sub = split_at(key, 0, 2, partitionable), split_at(key, 1, 2, partitionable)
    X, V, U = zero, one, F(2)
    while U >= fma(-squeeze, X * X, one) and log(U) >= X * F(0.5) + d * ((one - V) + log(V)):
        x_key, u_key = split_at(k, 1, 3, partitionable), split_at(k, 2, 3, partitionable)
        k = split_at(k, 0, 3, partitionable)
        x, v = zero, -one
        while v <= zero:
            nk = split_at(x_key, 1, 2, partitionable)
            x_key = split_at(x_key, 0, 2, partitionable)
            x = _normal_scalar(nk, F, partitionable)
            v = fma(x, c, one)
        X = x * x
        V = (v * v) * v
        U = to_unit(random_word_at(u_key, 0, 1, F, partitionable))
    u = to_unit(random_word_at(sub, 0, 1, F, partitionable))
    if log_space:
        log_u = log1p(-u)              # -exponential(sub)
        log_boost = zero if (boost or log_u == 0) else log_u * (one / alpha)
        return (log(d) + log(V)) + log_boost
    scale = one if boost else F(math.pow(one - u, one / alpha))
    return (d * V) * scale


@numba.njit(parallel=True, cache=True)
def gamma_kernel(key, alpha, log_space, partitionable):
    """gamma / loggamma: element i uses key i of split(key, n)."""
    n = alpha.shape[0]
    keys = split_keys(key, n, partitionable)
    out = np.empty(n, alpha.dtype)
    for i in numba.prange(n):
        out[i] = gamma_one(keys[i], alpha[i], log_space, partitionable)
    return out


@numba.njit(cache=True)
def beta_kernel(key, a, b, partitionable):
    keys = split_keys(key, 2, partitionable)
    la = gamma_kernel(keys[0], a, True, partitionable)
    lb = gamma_kernel(keys[1], b, True, partitionable)
    out = np.empty_like(la)
    for i in range(la.shape[0]):
        m = max(la[i], lb[i])
        ga, gb = exp(la[i] - m), exp(lb[i] - m)
        out[i] = ga / (ga + gb)
    return out


@numba.njit(cache=True)
def _poisson_knuth(key, i, n, lam, partitionable):
    """Knuth's multiplication method: count uniforms until their product falls below
    exp(-lam), in log space. Iteration j draws element i of a fresh (n,) uniform array."""
    k, log_prod = 0, np.float32(0)
    while log_prod > -lam:
        sub = split_at(key, 1, 2, partitionable)
        key = split_at(key, 0, 2, partitionable)
        k += 1
        log_prod = log_prod + log(to_unit(word_at(sub, i, n, partitionable)))
    return k - 1


@numba.njit(cache=True)
def _poisson_rejection(key, i, n, lam, rounds, partitionable):
    """Hoermann, "The transformed rejection method for generating Poisson random variables"
    (1993), PTRS, as JAX runs it (float32). JAX's loop runs for the whole array until every
    element has accepted once, and each later acceptance overwrites the value: so with
    rounds < 0 this returns the round of the first acceptance, and with rounds = R the value
    accepted last within R rounds."""
    F = np.float32
    log_lam = log(lam)
    b = fma(F(2.53), F(math.sqrt(lam)), F(0.931))
    a = fma(F(0.02483), b, F(-0.059))
    inv_alpha = F(1.1239) + F(1.1328) / (b - F(3.4))
    v_r = F(0.9277) - F(3.6224) / (b - F(2))
    half = F(0.5)
    value, r = F(-1), 0
    while rounds < 0 or r < rounds:
        r += 1
        k0, k1 = split_at(key, 1, 3, partitionable), split_at(key, 2, 3, partitionable)
        key = split_at(key, 0, 3, partitionable)
        u = to_unit(word_at(k0, i, n, partitionable)) - half
        v = to_unit(word_at(k1, i, n, partitionable))
        us = half - abs(u)
        k = F(math.floor(fma(F(2) * a / us + b, u, lam) + F(0.43)))
        s = log(v * inv_alpha / (a / (us * us) + b))
        t = fma(k, log_lam, -lam) - lgamma(k + F(1))
        accept1 = us >= F(0.07) and v <= v_r
        reject = k < 0 or (us < F(0.013) and v > us)
        if accept1 or (not reject and s <= t):
            if rounds < 0:
                return F(r)
            value = k
    return value


@numba.njit(parallel=True, cache=True)
def poisson_kernel(key, lam, partitionable):
    """Knuth below lam = 10, transformed rejection above; lam is float32, result int64.
    Elements on the Knuth path still take part in the rejection loop's length with
    lam = 1e5, as in JAX."""
    n = lam.shape[0]
    first = np.zeros(n, np.int64)
    for i in numba.prange(n):
        x = lam[i]
        r_lam = np.float32(1e5) if (x < 10 or x != x) else x
        first[i] = np.int64(_poisson_rejection(key, i, n, r_lam, -1, partitionable))
    rounds = first.max() if n else 0
    out = np.empty(n, np.int64)
    for i in numba.prange(n):
        x = lam[i]
        if x == 0:
            out[i] = 0
        elif x < 10 or x != x:
            out[i] = _poisson_knuth(key, i, n, x, partitionable)
        else:
            out[i] = np.int64(_poisson_rejection(key, i, n, x, rounds, partitionable))
    return out


# -- multivariate normal ------------------------------------------------------------------

@numba.njit(cache=True)
def multivariate_normal_kernel(key, mean, factor, partitionable):
    """mean + factor @ z over a batch: mean (m, d), factor (m, d, d) (already broadcast);
    z is normal(key, (m, d)). The matrix product sums in index order."""
    m, d = mean.shape
    z = normal_kernel(key, m * d, type(mean[0, 0]), partitionable)
    out = np.empty((m, d), mean.dtype)
    for b in range(m):
        for i in range(d):
            acc = factor[b, i, 0] * z[b * d]
            for j in range(1, d):
                acc = fma(factor[b, i, j], z[b * d + j], acc)
            out[b, i] = mean[b, i] + acc
    return out
