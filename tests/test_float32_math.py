"""Float32 tanh, exp and log in compiled code (runtime/numba/float32_math.py): the value of
float64 NumPy rounded to float32 (within an ulp of it, for near-ties) over a sweep of the
float32 range, special values and signed zeros as NumPy's, NumPy's warnings where NumPy warns
and none where it does not, as arrays of lengths a vectorized loop splits differently; numbers
(libm's functions), grad and vmap."""
import warnings

import numba
import numpy as np
import pytest

from strop import config, grad, jit, vmap
from strop.runtime.numba.float32_math import exp32, log32, tanh32

FUNCTIONS = [(np.tanh, tanh32), (np.exp, exp32), (np.log, log32)]
SPECIAL = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-30, 1.0, -1.0, 9.0,
                      10.0, 88.72, 88.73, -87.3, -103.9, -104.0, 3.4e38, -3.4e38])


@pytest.fixture(autouse=True)
def x32():
    with config.override(enable_x64=False):
        yield


def _compiled_loop(kernel):
    @numba.njit(error_model="numpy")
    def run(x):
        out = np.empty_like(x)
        for i in range(x.size):
            out[i] = kernel(x[i])
        return out
    return run


def _ulps(a, b):
    """Distance in float32 steps (signed magnitudes: -0.0 and 0.0 are one value)."""
    a, b = (v.view(np.int32).astype(np.int64) for v in (a, b))
    a, b = (np.where(v < 0, -(v & 0x7FFFFFFF), v) for v in (a, b))
    return np.abs(a - b)


def _reference(ufunc, x):
    with np.errstate(all="ignore"):
        return ufunc(x.astype(np.float64)).astype(np.float32)


@pytest.mark.parametrize("ufunc, kernel", FUNCTIONS, ids=["tanh", "exp", "log"])
def test_sweep_of_the_float32_range_is_rounded_float64(ufunc, kernel):
    x = (np.arange(0, 2**32, 2053, dtype=np.uint64).astype(np.uint32)).view(np.float32)
    got, want = _compiled_loop(kernel)(x), _reference(ufunc, x)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    assert _ulps(got[~nan], want[~nan]).max() <= 1
    assert np.count_nonzero(got[~nan] != want[~nan]) <= 2     # near-ties, ~1 in 50 million
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))


def _warned(f, x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = f(x)
    return out, sorted({str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)})


def tanh(x):
    return np.tanh(x)


def exp(x):
    return np.exp(x)


def log(x):
    return np.log(x)


@pytest.mark.parametrize("f", [tanh, exp, log])
@pytest.mark.parametrize("n", [1, 3, 16, 37])
def test_special_values_and_warnings_as_numpy(f, n):
    compiled = jit(f)
    for v in SPECIAL:
        x = np.full(n, 0.5, np.float32)
        x[n // 2] = v
        want_out, want = _warned(f, x)
        out, got = _warned(compiled, x)
        assert got == want, (f.__name__, v)
        np.testing.assert_array_equal(out, _reference(getattr(np, f.__name__), x))
        number = ~np.isnan(out)       # (a NaN's sign is the machine's)
        np.testing.assert_array_equal(np.signbit(out[number]), np.signbit(want_out[number]))
        assert out.dtype == np.float32
    assert compiled.last_backend == "cpu"


@pytest.mark.parametrize("f", [tanh, exp, log])
def test_numbers_and_errstate(f):
    compiled = jit(f)
    for v in SPECIAL:
        out, got = _warned(compiled, v)      # (numbers keep libm's function: within an ulp)
        assert got == _warned(f, v)[1]
        want = _reference(getattr(np, f.__name__), np.float32([v]))
        assert np.isnan(out) == np.isnan(want[0])
        assert np.isnan(out) or _ulps(np.float32([out]), want)[0] <= 1
        assert np.isnan(out) or np.signbit(out) == np.signbit(f(v))
    x = np.float32([0.0, -1.0, 100.0])
    with np.errstate(all="raise"):
        try:
            f(x)
        except FloatingPointError as e:
            with pytest.raises(FloatingPointError, match=str(e)):
                compiled(x)
        else:
            compiled(x)
    assert compiled.last_backend == "cpu"


def rnn_loss(w, xs):
    h = np.zeros(w.shape[0], np.float32)
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + xs[t])
    return np.sum(np.log(np.exp(h) + 1.0))


def test_grad_and_vmap_of_float32_code():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((5, 5)) / 2).astype(np.float32)
    xs = rng.standard_normal((7, 5)).astype(np.float32)
    g = jit(grad(rnn_loss))(w, xs)
    want = grad(rnn_loss)(w.astype(np.float64), xs.astype(np.float64))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, want, rtol=2e-5, atol=2e-6)
    batch = rng.standard_normal((4, 7, 5)).astype(np.float32)
    got = jit(vmap(rnn_loss, in_axes=(None, 0)))(w, batch)
    np.testing.assert_allclose(got, [rnn_loss(w, b) for b in batch], rtol=2e-6)
