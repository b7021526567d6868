"""Numba kernels of the samplers that reject (gamma, beta, poisson) and of the multivariate
normal: kernels.py's fill/parallel/kernel scheme (see its docstring), for draws whose cost
varies from element to element."""
import math

import numba
import numpy as np

from strop.rng.floats import in_range, random_word_at, to_unit
from strop.rng.kernels import _0, _1, _FILL, _MINUS1, _PARALLEL, _SQRT2, SMALL_CHUNK, \
    _chunks_small, normal_fill
from strop.rng.streams import split2, split3, split_at, word_at
from strop.rng.xla_math import erf_inv, exp, fma, lgamma, log, log1p


# -- rejection samplers -------------------------------------------------------------------

@numba.njit(**_FILL)
def _normal_scalar(key, F, partitionable):
    u = in_range(random_word_at(key, _0, _1, F, partitionable), np.nextafter(F(-1), F(0)),
                 F(1))
    return F(_SQRT2) * erf_inv(u)


@numba.njit(**_FILL)
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
    k, sub = split2(key, partitionable)
    X, V, U = zero, one, F(2)
    while U >= fma(-squeeze, X * X, one) and log(U) >= X * F(0.5) + d * ((one - V) + log(V)):
        k, x_key, u_key = split3(k, partitionable)
        x, v = zero, -one
        while v <= zero:
            x_key, nk = split2(x_key, partitionable)
            x = _normal_scalar(nk, F, partitionable)
            v = fma(x, c, one)
        X = x * x
        V = (v * v) * v
        U = to_unit(random_word_at(u_key, _0, _1, F, partitionable))
    u = to_unit(random_word_at(sub, _0, _1, F, partitionable))
    if log_space:
        log_u = log1p(-u)              # -exponential(sub)
        log_boost = zero if (boost or log_u == 0) else log_u * (one / alpha)
        return (log(d) + log(V)) + log_boost
    scale = one if boost else F(math.pow(one - u, one / alpha))
    return (d * V) * scale


@numba.njit(**_FILL)
def gamma_fill(key, alpha, log_space, partitionable, out, start, stop):
    """gamma / loggamma: element i uses key i of split(key, n); units are the n elements."""
    n = alpha.shape[0]
    for i in range(start, min(stop, n)):
        out[i] = gamma_one(split_at(key, i, n, partitionable), alpha[i], log_space,
                           partitionable)


@numba.njit(**_PARALLEL)
def gamma_parallel(key, alpha, log_space, partitionable, out):
    for c in numba.prange(_chunks_small(alpha.shape[0])):
        gamma_fill(key, alpha, log_space, partitionable, out, c * SMALL_CHUNK,
                   (c + 1) * SMALL_CHUNK)


@numba.njit(**_FILL)
def gamma_kernel(key, alpha, log_space, partitionable):
    out = np.empty(alpha.shape[0], alpha.dtype)
    gamma_parallel(key, alpha, np.bool_(log_space), np.bool_(partitionable), out)
    return out


@numba.njit(**_FILL)
def beta_fill(key, a, b, partitionable, out, start, stop):
    """Two log-gamma draws (keys split(key)[0] and [1]) and their ratio."""
    n = a.shape[0]
    ka, kb = split2(key, partitionable)
    log_space = np.bool_(True)   # not a literal True: no second compile of gamma_one
    for i in range(start, min(stop, n)):
        la = gamma_one(split_at(ka, i, n, partitionable), a[i], log_space, partitionable)
        lb = gamma_one(split_at(kb, i, n, partitionable), b[i], log_space, partitionable)
        m = max(la, lb)
        ga, gb = exp(la - m), exp(lb - m)
        out[i] = ga / (ga + gb)


@numba.njit(**_PARALLEL)
def beta_parallel(key, a, b, partitionable, out):
    for c in numba.prange(_chunks_small(a.shape[0])):
        beta_fill(key, a, b, partitionable, out, c * SMALL_CHUNK, (c + 1) * SMALL_CHUNK)


@numba.njit(**_FILL)
def beta_kernel(key, a, b, partitionable):
    out = np.empty(a.shape[0], a.dtype)
    beta_parallel(key, a, b, np.bool_(partitionable), out)
    return out


@numba.njit(**_FILL)
def _poisson_knuth(key, i, n, lam, partitionable):
    """Knuth's multiplication method: count uniforms until their product falls below
    exp(-lam), in log space. Iteration j draws element i of a fresh (n,) uniform array."""
    k, log_prod = 0, np.float32(0)
    while log_prod > -lam:
        key, sub = split2(key, partitionable)
        k += 1
        log_prod = log_prod + log(to_unit(word_at(sub, i, n, partitionable)))
    return k - 1


@numba.njit(**_FILL)
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
        key, k0, k1 = split3(key, partitionable)
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


@numba.njit(**_FILL)
def poisson_rounds_fill(key, lam, partitionable, out, start, stop):
    """First pass of poisson: the round of each element's first acceptance in the rejection
    loop (elements on the Knuth path take part with lam = 1e5, as in JAX)."""
    n = lam.shape[0]
    for i in range(start, min(stop, n)):
        x = lam[i]
        r_lam = np.float32(1e5) if (x < 10 or x != x) else x
        out[i] = np.int64(_poisson_rejection(key, i, n, r_lam, _MINUS1, partitionable))


@numba.njit(**_FILL)
def poisson_fill(key, lam, rounds, partitionable, out, start, stop):
    """Second pass: Knuth below lam = 10, the value accepted last within ``rounds`` rounds
    (the largest first-acceptance round of the whole array) above."""
    n = lam.shape[0]
    for i in range(start, min(stop, n)):
        x = lam[i]
        if x == 0:
            out[i] = 0
        elif x < 10 or x != x:
            out[i] = _poisson_knuth(key, i, n, x, partitionable)
        else:
            out[i] = np.int64(_poisson_rejection(key, i, n, x, rounds, partitionable))


@numba.njit(**_PARALLEL)
def poisson_parallel(key, lam, partitionable, out):
    """Knuth below lam = 10, transformed rejection above; lam is float32, result int64."""
    chunks = _chunks_small(lam.shape[0])
    for c in numba.prange(chunks):
        poisson_rounds_fill(key, lam, partitionable, out, c * SMALL_CHUNK, (c + 1) * SMALL_CHUNK)
    rounds = out.max() if lam.shape[0] else np.int64(0)
    for c in numba.prange(chunks):
        poisson_fill(key, lam, rounds, partitionable, out, c * SMALL_CHUNK,
                     (c + 1) * SMALL_CHUNK)


@numba.njit(**_FILL)
def poisson_kernel(key, lam, partitionable):
    out = np.empty(lam.shape[0], np.int64)
    poisson_parallel(key, lam, np.bool_(partitionable), out)
    return out


# -- multivariate normal ------------------------------------------------------------------

@numba.njit(cache=True)
def multivariate_normal_kernel(key, mean, factor, partitionable):
    """mean + factor @ z over a batch: mean (m, d), factor (m, d, d) (already broadcast);
    z is normal(key, (m, d)). The matrix product sums in index order."""
    m, d = mean.shape
    z = np.empty(m * d, mean.dtype)
    normal_fill(key, m * d, type(mean[0, 0]), partitionable, z, _0, m * d)
    out = np.empty((m, d), mean.dtype)
    for b in range(m):
        for i in range(d):
            acc = factor[b, i, 0] * z[b * d]
            for j in range(1, d):
                acc = fma(factor[b, i, j], z[b * d + j], acc)
            out[b, i] = mean[b, i] + acc
    return out
