"""The public samplers: JAX's signatures; arguments checked and resolved here, the work done
by the kernels in strop.rng.kernels."""
import numpy as np

from strop.rng import checks, kernels as K, rejection as R
from strop.rng.checks import partitionable as _part


def _floats(name, key, shape, dtype):
    key = checks.key_array(key, name)
    shape = checks.shape_tuple(shape, name)
    dt = checks.float_dtype(dtype, name)
    return key, shape, dt


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (default uint32, uint64 with enable_x64)."""
    key = checks.key_array(key, "bits")
    shape = checks.shape_tuple(shape, "bits")
    dt = checks.canonical_dtype(dtype, "u", "bits")
    n = checks.size(shape)
    if dt.itemsize == 8:
        return K.run(K.bits64_fill, n, np.uint64, n, key, n, _part()).reshape(shape)
    if dt.itemsize == 4:
        out = K.run(K.bits32_fill, n, np.uint32, K.unit_count(n, 32, _part()), key, n,
                    _part())
    elif n > K.CHUNK:
        out = K.bits_kernel(key, n, dt.itemsize * 8, _part())
    else:
        out = K.fill_bits_narrow(key, n, dt.itemsize * 8, _part())
    return (out if dt.itemsize == 4 else out.astype(dt)).reshape(shape)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval). minval > maxval is an error (JAX would return
    minval everywhere)."""
    key, shape, dt = _floats("uniform", key, shape, dtype)
    lo = checks.as_param(minval, dt, "uniform", "minval")
    hi = checks.as_param(maxval, dt, "uniform", "maxval")
    checks.check_broadcast("uniform", shape, lo.shape, hi.shape)
    lo, hi = lo.astype(dt), hi.astype(dt)
    checks.check_range("uniform", lo, hi)
    n = checks.size(shape)
    out = K.run(K.uniform_fill, n, dt, _units(n, dt), key, n, checks.flat_param(lo, dt, shape),
                checks.flat_param(hi, dt, shape), _part())
    return out.reshape(shape)


def _units(n, dt):
    return K.unit_count(n, 8 * dt.itemsize, _part())


def _unary(fill, name):
    def sampler(key, shape=(), dtype=None):
        key, shape, dt = _floats(name, key, shape, dtype)
        n = checks.size(shape)
        return K.run(fill, n, dt, _units(n, dt), key, n, dt.type, _part()).reshape(shape)
    sampler.__name__ = name
    return sampler


normal = _unary(K.normal_fill, "normal")
normal.__doc__ = "Standard normal floats: sqrt(2) * erf_inv(u), u uniform in (-1, 1)."
exponential = _unary(K.exponential_fill, "exponential")
exponential.__doc__ = "Exponential(1) floats: -log1p(-u)."
laplace = _unary(K.laplace_fill, "laplace")
laplace.__doc__ = "Laplace(0, 1) floats: sign(u) * log1p(-|u|), u uniform in (-1, 1)."
logistic = _unary(K.logistic_fill, "logistic")
logistic.__doc__ = "Logistic(0, 1) floats: log(u) - log1p(-u)."


def _mode(mode, name, allowed=("low", "high")):
    if mode is None:
        return False
    if mode not in allowed:
        raise ValueError(f"{name}: mode must be one of {allowed}, got {mode!r}")
    return mode == "high"


def gumbel(key, shape=(), dtype=None, mode=None):
    """Gumbel(0, 1) floats; mode='high' spends a second word per value on the small
    uniforms, extending the range of the largest values."""
    key, shape, dt = _floats("gumbel", key, shape, dtype)
    high = _mode(mode, "gumbel")
    n = checks.size(shape)
    units = n if high else _units(n, dt)
    return K.run(K.gumbel_fill, n, dt, units, key, n, dt.type, high, _part()).reshape(shape)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Normal floats truncated to the open interval (lower, upper)."""
    key = checks.key_array(key, "truncated_normal")
    dt = checks.float_dtype(dtype, "truncated_normal")
    lo = checks.as_param(lower, dt, "truncated_normal", "lower")
    hi = checks.as_param(upper, dt, "truncated_normal", "upper")
    if shape is None:
        shape = np.broadcast_shapes(lo.shape, hi.shape)
    shape = checks.shape_tuple(shape, "truncated_normal")
    checks.check_broadcast("truncated_normal", shape, lo.shape, hi.shape)
    lo, hi = lo.astype(dt), hi.astype(dt)
    checks.check_range("truncated_normal", lo, hi, "lower", "upper")
    n = checks.size(shape)
    out = K.run(K.truncated_normal_fill, n, dt, _units(n, dt), key, n,
                checks.flat_param(lo, dt, shape), checks.flat_param(hi, dt, shape), _part())
    return out.reshape(shape)


def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability p (0 <= p <= 1)."""
    key = checks.key_array(key, "bernoulli")
    high = _mode(mode, "bernoulli")
    parr = checks.as_param(p, None, "bernoulli", "p")
    if parr.dtype.kind != "f":
        raise TypeError(f"bernoulli: probability p must have a floating dtype, got {parr.dtype}")
    checks.check_bounds("bernoulli", parr, "probability p", 0.0, 1.0)
    dt = checks.default_float(p)
    shape = parr.shape if shape is None else checks.shape_tuple(shape, "bernoulli")
    checks.check_broadcast("bernoulli", shape, parr.shape)
    n = checks.size(shape)
    units = n if high else _units(n, np.dtype(dt))
    out = K.run(K.bernoulli_fill, n, np.bool_, units, key, n, checks.flat_param(parr, dt, shape),
                high, _part())
    return out.reshape(shape)


def _int_bounds(v, what):
    arr = np.asarray(v)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"randint: {what} must be integers, got {v!r}")
    if arr.dtype.kind == "f":
        arr = np.trunc(arr).astype(np.int64)
    return arr


def randint(key, shape, minval, maxval, dtype=None):
    """Integers in [minval, maxval), by JAX's double-width modulus. minval > maxval is an
    error; minval == maxval gives minval, as in JAX."""
    key = checks.key_array(key, "randint")
    shape = checks.shape_tuple(shape, "randint")
    dt = checks.canonical_dtype(dtype, "iu", "randint", default_kind="i")
    lo, hi = _int_bounds(minval, "minval"), _int_bounds(maxval, "maxval")
    checks.check_broadcast("randint", shape, lo.shape, hi.shape)
    checks.check_range("randint", lo, hi)
    info = np.iinfo(dt)
    sample_dt = dt if info.bits >= 32 else np.dtype(np.int32)   # JAX samples narrow in int32
    hi_orig = hi
    if info.bits < 32:
        lo = np.clip(lo.astype(np.int64), info.min, info.max)
        hi = np.clip(hi.astype(np.int64), info.min, info.max + 1)
    sinfo = np.iinfo(sample_dt)
    out_of_range = np.asarray(hi, object) > sinfo.max if hi.dtype == np.uint64 else \
        hi.astype(np.int64) > sinfo.max
    del hi_orig

    def clip(a):
        return np.array([min(max(int(x), sinfo.min), sinfo.max) for x in np.ravel(a)],
                        np.int64).reshape(np.shape(a))
    n = checks.size(shape)
    raw = K.randint_kernel(key, n, checks.flat_param(clip(lo), np.int64, shape),
                           checks.flat_param(clip(hi), np.int64, shape),
                           checks.flat_param(np.asarray(out_of_range, bool), np.bool_, shape),
                           sinfo.bits, _part())
    return raw.astype(sample_dt).astype(dt).reshape(shape)


def _int_or_array(x, name, what):
    """An int (a range length) or an array argument; lists are rejected as in JAX."""
    if isinstance(x, (list, tuple)):
        raise TypeError(f"{name}: {what} must be an int or an array, got a "
                        f"{type(x).__name__}; pass np.asarray({what})")
    arr = checks.canonical_array(x)
    if arr.ndim == 0 and arr.dtype.kind not in "iu":
        raise TypeError(f"{name}: {what} must be an integer or at least 1-dimensional, "
                        f"got {x!r}")
    return arr


def permutation(key, x, axis=0, independent=False):
    """A shuffled copy of x along axis (of arange(x) for an int x)."""
    key = checks.key_array(key, "permutation")
    arr = _int_or_array(x, "permutation", "x")
    if arr.ndim == 0:
        checks.axis_index(axis, 1, "permutation")
        idx = np.arange(int(arr), dtype=np.int64 if checks.x64() else np.int32)
        return idx[K.permutation_kernel(key, int(arr), _part())]
    axis = checks.axis_index(axis, arr.ndim, "permutation")
    if independent and arr.ndim > 1:
        outer = checks.size(arr.shape[:axis])
        inner = checks.size(arr.shape[axis + 1:])
        perm = K.shuffle_lanes_kernel(key, outer, arr.shape[axis], inner, _part())
        moved = np.moveaxis(arr.reshape(outer, arr.shape[axis], inner), 1, 2)
        out = np.take_along_axis(moved, perm, axis=2)
        return np.moveaxis(out, 2, 1).reshape(arr.shape)
    n = arr.shape[axis]
    if arr.ndim == 1:
        return arr[K.permutation_kernel(key, n, _part())]
    return np.take(arr, K.permutation_kernel(key, n, _part()), axis=axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples from a (or arange(a) for an int a), with or without replacement, optionally
    weighted by p."""
    key = checks.key_array(key, "choice")
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"choice: shape must be a sequence, got {shape!r}")
    shape = checks.shape_tuple(shape, "choice")
    arr = _int_or_array(a, "choice", "a")
    if arr.ndim == 0:
        n_inputs = int(arr)
    else:
        axis = checks.axis_index(axis, arr.ndim, "choice")
        n_inputs = arr.shape[axis]
    n_draws = checks.size(shape)
    if n_draws == 0:
        return np.zeros(shape, arr.dtype)
    if n_inputs <= 0:
        raise ValueError("choice: a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"choice: cannot take a larger sample (size {n_draws}) than the "
                         f"population (size {n_inputs}) with replace=False")
    high = _mode(mode, "choice")
    int_dt = np.int64 if checks.x64() else np.int32
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
        else:
            ind = K.permutation_kernel(key, n_inputs, _part())[:n_draws]
    else:
        parr = checks.as_param(p, None, "choice", "p")
        if parr.shape != (n_inputs,):
            raise ValueError(f"choice: p must be None or a 1-d vector with the same size as "
                             f"a.shape[axis]; p has shape {parr.shape} and a.shape[axis] is "
                             f"{n_inputs}")
        checks.check_bounds("choice", parr, "probabilities p", 0.0, None)
        pf = checks.kernel_array(parr.astype(checks.default_float(
            parr if parr.dtype.kind == "f" else None)))
        if replace:
            ind = K.choice_p_kernel(key, n_draws, pf, _part())
        else:
            ind = K.choice_p_noreplace_kernel(key, n_draws, pf, high, _part())
    ind = np.asarray(ind).astype(int_dt).reshape(-1)
    if arr.ndim == 0:
        return ind.reshape(shape)
    out = np.take(arr, ind, axis=axis)
    return out.reshape(arr.shape[:axis] + shape + arr.shape[axis + 1:])


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Category indices drawn with probabilities softmax(logits, axis), by the Gumbel max
    (top-k without replacement) trick."""
    key = checks.key_array(key, "categorical")
    if isinstance(logits, (list, tuple)):
        raise TypeError("categorical: logits must be an array, got a "
                        f"{type(logits).__name__}; pass np.asarray(logits)")
    arr = np.asarray(logits)
    if arr.dtype.kind not in "biuf" or arr.ndim == 0:
        raise TypeError(f"categorical: logits must be a real array of rank >= 1, got "
                        f"{_shape_text(arr)}")
    if arr.dtype.kind != "f":
        arr = arr.astype(checks.default_float())
    arr = arr.astype(checks.default_float(arr))
    ax = checks.axis_index(axis, arr.ndim, "categorical")
    batch = arr.shape[:ax] + arr.shape[ax + 1:]
    shape = batch if shape is None else checks.shape_tuple(shape, "categorical")
    checks.check_broadcast("categorical", shape, batch)
    high = _mode(mode, "categorical")
    prefix = shape[:len(shape) - len(batch)]
    cube = checks.kernel_array(arr.reshape(checks.size(arr.shape[:ax]), arr.shape[ax], -1))
    int_dt = np.int64 if checks.x64() else np.int32
    if replace:
        out = K.categorical_kernel(key, cube, checks.size(prefix), high, _part())
        return out.astype(int_dt).reshape(shape)
    k = checks.size(prefix)
    if k > arr.shape[ax]:
        raise ValueError(f"categorical: number of samples without replacement ({k}) cannot "
                         f"exceed the number of categories ({arr.shape[ax]})")
    out = K.categorical_noreplace_kernel(key, cube, k, high, _part())
    return out.astype(np.int32).reshape(shape)   # top_k's indices are int32, as in JAX


def _shape_text(arr):
    return f"an array of dtype {arr.dtype} and shape {arr.shape}"


def _gamma_like(name, key, a, shape, dtype, log_space):
    key = checks.key_array(key, name)
    dt = checks.float_dtype(dtype, name)
    arr = checks.as_param(a, dt, name, "a")
    checks.check_bounds(name, arr, "a", 0.0, None, low_open=True)
    shape = arr.shape if shape is None else checks.shape_tuple(shape, name)
    checks.check_broadcast(name, shape, arr.shape)
    alpha = checks.kernel_array(np.broadcast_to(arr.astype(dt), shape)).reshape(-1)
    n = alpha.shape[0]
    return K.run(R.gamma_fill, n, dt, n, key, alpha, log_space, _part(),
                 chunk=K.SMALL_CHUNK).reshape(shape)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) floats (a > 0), by Marsaglia-Tsang rejection, one key per element."""
    return _gamma_like("gamma", key, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) floats, accurate for small a."""
    return _gamma_like("loggamma", key, a, shape, dtype, True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats (a, b > 0) from two log-gamma draws."""
    key = checks.key_array(key, "beta")
    dt = checks.float_dtype(dtype, "beta")
    aa = checks.as_param(a, dt, "beta", "a")
    bb = checks.as_param(b, dt, "beta", "b")
    checks.check_bounds("beta", aa, "a", 0.0, None, low_open=True)
    checks.check_bounds("beta", bb, "b", 0.0, None, low_open=True)
    shape = np.broadcast_shapes(aa.shape, bb.shape) if shape is None else \
        checks.shape_tuple(shape, "beta")
    checks.check_broadcast("beta", shape, aa.shape, bb.shape)

    def flat(x):
        return checks.kernel_array(np.broadcast_to(x.astype(dt), shape)).reshape(-1)
    a_flat, b_flat = flat(aa), flat(bb)
    n = a_flat.shape[0]
    return K.run(R.beta_fill, n, dt, n, key, a_flat, b_flat, _part(),
                 chunk=K.SMALL_CHUNK).reshape(shape)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) integers (lam >= 0): Knuth's method below 10, transformed rejection
    above; lam is taken as float32, as in JAX."""
    key = checks.key_array(key, "poisson")
    dt = checks.canonical_dtype(dtype, "iu", "poisson", default_kind="i")
    arr = checks.as_param(lam, None, "poisson", "lam")
    checks.check_bounds("poisson", arr, "rate lam", 0.0, None)
    shape = arr.shape if shape is None else checks.shape_tuple(shape, "poisson")
    checks.check_broadcast("poisson", shape, arr.shape)
    flat = checks.kernel_array(np.broadcast_to(arr.astype(np.float32), shape)).reshape(-1)
    n = flat.shape[0]
    out = np.empty(n, np.int64)
    # two passes, as R.poisson_parallel: the rejection loop runs as long as its slowest element
    K.spread(R.poisson_rounds_fill, (key, flat, _part()), out, n, K.SMALL_CHUNK)
    rounds = np.int64(out.max()) if n else np.int64(0)
    K.spread(R.poisson_fill, (key, flat, rounds, _part()), out, n, K.SMALL_CHUNK)
    return out.astype(dt).reshape(shape)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Normal vectors with the given mean (..., n) and covariance (..., n, n); the factor of
    cov comes from method 'cholesky', 'svd' or 'eigh'."""
    key = checks.key_array(key, "multivariate_normal")
    if method not in ("cholesky", "svd", "eigh"):
        raise ValueError(f"multivariate_normal: method must be one of 'svd', 'eigh', "
                         f"'cholesky', got {method!r}")
    m = checks.as_param(mean, None, "multivariate_normal", "mean")
    c = checks.as_param(cov, None, "multivariate_normal", "cov")
    dt = np.result_type(checks.default_float(m if m.dtype.kind == "f" else None),
                        checks.default_float(c if c.dtype.kind == "f" else None))
    dt = checks.float_dtype(dtype, "multivariate_normal") if dtype is not None else dt
    if m.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got {m.ndim}")
    if c.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got {c.ndim}")
    n = m.shape[-1]
    if c.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"got cov.shape == {c.shape}")
    batch = np.broadcast_shapes(m.shape[:-1], c.shape[:-2]) if shape is None else \
        checks.shape_tuple(shape, "multivariate_normal")
    checks.check_broadcast("multivariate_normal", batch, m.shape[:-1], c.shape[:-2])
    factor = _factor(c.astype(dt), method)
    nb = checks.size(batch)
    mean_b = checks.kernel_array(np.broadcast_to(m.astype(dt), batch + (n,))).reshape(nb, n)
    fac_b = checks.kernel_array(np.broadcast_to(factor.astype(dt), batch + (n, n)))
    out = R.multivariate_normal_kernel(key, mean_b, fac_b.reshape(nb, n, n), _part())
    return out.reshape(batch + (n,))


def _factor(cov, method):
    if method == "cholesky":
        return np.linalg.cholesky(cov)
    if method == "svd":
        u, s, _ = np.linalg.svd(cov)
        return u * np.sqrt(s[..., None, :])
    w, v = np.linalg.eigh(cov)
    return v * np.sqrt(w[..., None, :])
