"""Compiled code keeps NumPy's result dtype where Numba's differs.  Numba computes np.trace,
np.var, np.std, np.median, np.ptp, np.nanmean, np.percentile, np.quantile, np.linalg.norm,
np.linalg.det and np.linalg.slogdet of a float32 array in float64 and returns float64, where
NumPy (the python backend) returns float32: with x64 off (the default) ``jit`` silently changed
a result's dtype, and a loop whose value became float64 after such a call could not be typed,
so the function fell back to Python (fuzzer seed 2902, program 36).  Oracle: the python
backend, dtype and value; the gradient against the python backend's."""
import warnings

import numpy as np
import pytest

import strop


def trace(a):
    return np.trace(a)


def trace_offset(a):
    return np.trace(a, offset=1)


def trace_method(a):
    return a.trace()


def var(a):
    return np.var(a)


def std_method(a):
    return a.std()


def median(a):
    return np.median(a)


def ptp(a):
    return np.ptp(a)


def nanmean(a):
    return np.nanmean(a)


def percentile(a):
    return np.percentile(a, 30.0)


def quantiles(a):
    return np.quantile(a, np.array([0.25, 0.5]))


def norm(a):
    return np.linalg.norm(a)


def norm_row(a):
    return np.linalg.norm(a[0], ord=1)


def norm_fro(a):
    return np.linalg.norm(a, "fro")


def norm_nuc(a):
    return np.linalg.norm(a, "nuc")


def det(a):
    return np.linalg.det(a[:, :2])


def slogdet(a):
    return np.linalg.slogdet(a[:, :2])[1]


FUNCTIONS = [trace, trace_offset, trace_method, var, std_method, median, ptp, nanmean,
             percentile, quantiles, norm, norm_row, norm_fro, norm_nuc, det, slogdet]


def _compiled(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        warnings.simplefilter("error", strop.errors.PerformanceWarning)
        return f(*args)


@pytest.mark.parametrize("x64", [False, True], ids=["x64_off", "x64_on"])
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_compiled_result_has_numpys_dtype(f, x64):
    a = np.array([[0.9, -0.4, 0.3], [0.2, 1.1, -0.7]])
    with strop.config.override(enable_x64=x64):
        got = _compiled(strop.jit(f), a)
        want = strop.jit(f, backend="python")(a)
    assert np.asarray(got).dtype == np.asarray(want).dtype == (np.float64 if x64 else
                                                               np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-5 if not x64 else 1e-12)


def carried_through_trace(a, b):
    """``a`` is carried by the loop and rebound to np.trace's result in one branch only."""
    for r in b:
        if r > 0.0:
            a = np.trace(np.outer(b, a * np.ones(3)))
        else:
            b = b / (1.5 + b ** 2)
    return a * np.sum(b)


def test_loop_carried_trace_compiles_and_its_gradient_matches_python():
    """The program that found it: its gradient also asked np.shape of a temporary taped in one
    branch only (an Optional array), which Numba's np.shape refused."""
    a, b = 0.7, np.array([0.4, -0.3, 0.8])
    g = strop.grad(carried_through_trace, argnums=(0, 1))
    want = g(a, b)
    compiled = strop.jit(g)
    got = _compiled(compiled, a, b)
    for w, v in zip(want, got):
        assert np.asarray(v).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(v, w, rtol=1e-5)
    assert compiled.last_backend == "cpu"
