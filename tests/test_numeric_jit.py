"""jit(grad(f)) of the numerical routines that have Numba implementations of their helpers
(runtime/numba/numeric.py): compiled without falling back (warnings are errors), and
equal to the python backend."""
import warnings

import numpy as np
import pytest

import strop
from helpers import x64_fixture

x64 = pytest.fixture(autouse=True)(x64_fixture)


def diff_1d(x):
    return np.sum(np.diff(x) ** 2)


def diff_twice(x):
    return np.sum(np.sin(np.diff(x, 2)) ** 2)


def diff_rows(x):
    return np.sum(np.diff(np.outer(x, x)) ** 3)


def linspace_ends(x):
    return np.sum(np.linspace(x[0], x[1] * 2.0, 7) ** 2)


def linspace_open(x):
    return np.sum(np.cos(np.linspace(x[2], x[0], 4)))


def median_whole(x):
    return np.median(x * x) + np.median(np.outer(x, x))


def quantile_number(x):
    return np.quantile(np.sin(x), 0.3) * np.quantile(x, 0.75)


@pytest.mark.parametrize("f", [diff_1d, diff_twice, diff_rows, linspace_ends, linspace_open,
                               median_whole, quantile_number], ids=lambda f: f.__name__)
def test_jit_grad_compiles(f):
    x = np.array([0.3, 1.2, 0.7, 2.0, 1.1, 0.25])
    want = strop.jit(strop.grad(f), backend="python")(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got = strop.jit(strop.grad(f))(x)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
