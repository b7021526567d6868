"""Compiled sums of float arrays (runtime/numba/sums.py) against NumPy's: the pairwise sum
itself for run lengths around its blocks of 8 and 128, in float32 and float64, contiguous or
not; then np.sum, x.sum() and np.mean under strop.jit, compiled (JitFallbackWarning an error),
and the gradients whose cotangents are such sums, against the python backend."""
import warnings

import numba
import numpy as np
import pytest

import strop
import strop.runtime.numba  # noqa: F401  (registers the implementations)
from strop.errors import JitFallbackWarning
from strop.runtime.numba.sums import mean_all, sum_all

SIZES = (0, 1, 7, 8, 9, 127, 128, 129, 1000, 4097)
DTYPES = (np.float32, np.float64)


# in arrays: a number returned to Python becomes a Python float, whatever its dtype
@numba.njit
def _sums(a):
    return np.full(1, sum_all(a))


@numba.njit
def _means(a):
    return np.full(1, mean_all(a))


def _sum(a):
    return _sums(a)[0]


def _mean(a):
    return _means(a)[0]


def _close(got, want, x):
    """Within a few roundings of the sum's magnitude: pairwise error bounds, not sequential."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    eps = np.finfo(x.dtype).eps
    bound = 4 * eps * np.log2(max(x.size, 2)) * float(np.sum(np.abs(x), dtype=np.float64))
    assert abs(float(got) - float(want)) <= bound, (float(got), float(want), bound)


def _data(n, dtype, seed=0):
    return np.random.default_rng(seed + n).standard_normal(n).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_run_is_numpys_sum_to_the_bit(dtype):
    """A contiguous run: the same additions in the same order as NumPy's pairwise_sum."""
    for n in SIZES + (100_000,):
        x = _data(n, dtype) + dtype(0.1)     # (an offset: cancellation would hide the order)
        got = _sum(x)
        assert got == np.sum(x), (n, got, np.sum(x))


@pytest.mark.parametrize("dtype", DTYPES)
def test_layouts(dtype):
    for n in SIZES:
        x = _data(2 * n, dtype)
        for a in (x[::2], x[::-1], x[1:]):                         # 1-D: any stride
            _close(_sum(a), np.sum(a), a)
        rows = max(n // 9, 1)
        m = _data(rows * 9 * 2, dtype).reshape(rows, 18)
        for a in (m, m.T, m[:, ::2], m[:, ::2].T, m[::-1],
                  m.reshape(rows, 3, 6).transpose(2, 0, 1)[::2]):   # C, F, and neither
            _close(_sum(a), np.sum(a), a)
    assert _sum(np.zeros((0, 3), dtype)) == 0


def test_nan_inf_and_signed_zero():
    x = np.ones(300)
    for value in (np.nan, np.inf, -np.inf):
        y = x.copy()
        y[200] = value
        np.testing.assert_equal(_sum(y), np.sum(y))
        np.testing.assert_equal(_mean(y), np.mean(y))
    y = x.copy()
    y[3], y[250] = np.inf, -np.inf
    assert np.isnan(_sum(y))
    assert _sum(-np.zeros(5)) == np.sum(-np.zeros(5))
    assert np.isnan(_mean(np.zeros(0)))


def _compiled(f, *args):
    jf = strop.jit(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        out = jf(*args)
    assert jf.last_backend == "cpu"
    return out


def sum_fn(x):
    return np.sum(x)


def method_fn(x):
    return x.sum()


def mean_fn(x):
    return np.mean(x)


def squares_fn(x):
    return np.sum(x * x)


def axes_fn(x):
    return np.mean(x, axis=-1), np.var(x, axis=-1)


@pytest.mark.parametrize("f", [sum_fn, method_fn, mean_fn, squares_fn],
                         ids=lambda f: f.__name__)
def test_jit_whole_array(f):
    with strop.config.override(enable_x64=True):
        for x in (_data(4097, np.float64), _data(1000, np.float32).reshape(40, 25).T,
                  _data(0, np.float64)):
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)    # (NumPy's empty mean)
                got, want = _compiled(f, x), f(x)
            assert np.asarray(got).dtype == np.asarray(want).dtype
            if x.size or f is not mean_fn:
                _close(got, want, x * x if f is squares_fn else x)
            else:
                assert np.isnan(got)
        ints = np.arange(10)           # not floats: Numba's own sum, NumPy's dtype
        got = _compiled(f, ints)
        np.testing.assert_array_equal(got, f(ints))
        assert np.asarray(got).dtype == np.asarray(f(ints)).dtype


def test_jit_over_axes():
    """Over axes (axes.py): each row's mean and variance from its pairwise sum (rows of 10),
    or Numba's (rows of 3, which NumPy too adds in order)."""
    with strop.config.override(enable_x64=True):
        for shape in ((3, 10, 10), (4, 5, 3)):
            x = _data(int(np.prod(shape)), np.float64).reshape(shape)
            for got, want in zip(_compiled(axes_fn, x), axes_fn(x)):
                assert got.shape == want.shape and got.dtype == want.dtype
                np.testing.assert_allclose(got, want, rtol=1e-13)


def loss(a, x):
    return np.sum(a * x)


def mean_loss(w, x):
    return np.mean((x * w) ** 2) + np.sum(w)


@pytest.mark.parametrize("f,args", [
    (loss, (1.5, _data(2000, np.float64))),
    (loss, (np.float32(1.5), _data(1000, np.float32).reshape(20, 50).T)),
    (mean_loss, (0.5, _data(130, np.float64))),
], ids=["scalar", "scalar-f32-transposed", "mean"])
def test_jit_grad_matches_python(f, args):
    """The cotangent of a number broadcast against an array is the array's sum
    (unbroadcast)."""
    with strop.config.override(enable_x64=True):
        g = strop.grad(f, argnums=(0, 1))
        got, want = _compiled(g, *args), g(*args)
        for a, b, x in zip(got, want, args):
            assert np.asarray(a).dtype == np.asarray(b).dtype
            if np.ndim(x):
                np.testing.assert_allclose(a, b, rtol=1e-6)
            else:
                _close(a, b, args[1] * args[0])


def test_jit_vmap_grad_lanes():
    """Each lane's sum (batching.py's unbroadcast of batched cotangents to numbers)."""
    with strop.config.override(enable_x64=True):
        a, x = np.linspace(0.5, 2.0, 4), _data(700, np.float64)
        f = strop.vmap(strop.grad(loss), in_axes=(0, None))
        np.testing.assert_allclose(_compiled(f, a, x), f(a, x), rtol=1e-13)
