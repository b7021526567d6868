"""No silent slow path (issue 35): compiled code that runs a helper in an object-mode island
(Python's speed) says so with a PerformanceWarning at the user's line, and code written the
ways users write it takes no such path.  Nothing here is timed: each test asserts the
mechanism (which warnings a compiled call gives)."""
import warnings

import numpy as np
import pytest

import strop
from strop.errors import JitFallbackWarning, PerformanceWarning

from helpers import x64_fixture

x64 = pytest.fixture(autouse=True)(x64_fixture)


def _warnings_of(f, *args):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = f(*args)
    return out, [w for w in seen if issubclass(w.category, (PerformanceWarning,
                                                             JitFallbackWarning))]


def garch_accumulated_by_rebinding(p, r, s0):
    # (the GARCH: `nll = nll + ...` where the benchmark writes `ll += ...`; its
    # reverse loop ran a three-number chain through an object-mode island each trip)
    w, a, b = p[0], p[1], p[2]
    s = s0
    nll = 0.0
    for t in range(r.shape[0]):
        nll = nll + np.log(s) + r[t] ** 2 / s
        s = w + a * r[t] ** 2 + b * s
    return nll


def test_a_chain_of_numbers_in_a_loop_runs_compiled():
    p, r = np.array([0.01, 0.1, 0.8]), np.random.default_rng(0).standard_normal(50) * 0.1
    for s0 in (0.05, np.float64(0.05)):
        g = strop.jit(strop.grad(garch_accumulated_by_rebinding))
        got, slow = _warnings_of(g, p, r, s0)
        assert not slow, [str(w.message) for w in slow]
        np.testing.assert_allclose(got, strop.grad(garch_accumulated_by_rebinding)(p, r, s0),
                                   rtol=1e-12)


def rolled(x):
    return np.sum(np.roll(x, 1, axis=0) * x)


def test_a_helper_run_in_object_mode_is_named_at_the_users_line_once():
    # (np.roll along an axis has no Numba implementation yet: SLOW_PATHS in
    # test_jit_coverage.py lists such helpers; when it compiles, take another from there)
    x = np.random.default_rng(1).normal(size=(4, 3))
    f = strop.jit(rolled)
    got, slow = _warnings_of(f, x)
    assert len(slow) == 1 and slow[0].category is PerformanceWarning
    message = str(slow[0].message)
    assert "roll()" in message and "test_slow_paths.py" in message and "line" in message
    np.testing.assert_allclose(got, rolled(x), rtol=1e-12)
    _, again = _warnings_of(f, x)
    assert not again   # once per function
