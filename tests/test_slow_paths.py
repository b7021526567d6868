"""No silent slow path (issue 35): compiled code that runs a helper in an object-mode island
(Python's speed) says so with a PerformanceWarning at the user's line, and code written the
ways users write it takes no such path.  Nothing here is timed: each test asserts the
mechanism (which warnings a compiled call gives)."""
import warnings

import numpy as np
import pytest

import strop
from strop.errors import JitFallbackWarning, PerformanceWarning

from helpers import numeric_vjp, x64_fixture

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


def tiled(x):
    return np.sum(np.tile(x, (2, 1)))


def test_a_helper_run_in_object_mode_is_named_at_the_users_line_once():
    # (np.tile has no Numba implementation yet: SLOW_PATHS in test_jit_coverage.py lists
    # such helpers; when it compiles, take another from there)
    x = np.random.default_rng(1).normal(size=(4, 3))
    f = strop.jit(tiled)
    got, slow = _warnings_of(f, x)
    assert len(slow) == 1 and slow[0].category is PerformanceWarning
    message = str(slow[0].message)
    assert "tile()" in message and "test_slow_paths.py" in message and "line" in message
    np.testing.assert_allclose(got, tiled(x), rtol=1e-12)
    _, again = _warnings_of(f, x)
    assert not again   # once per function


def payoff_of_a_path(vol, z):
    # (the per-path Asian option: `s = 100.0` carried into a loop and made a lane of
    # float32 values there, and `max(..., 0.0)`; its tape's first trip was float64 beside
    # float32 lanes, so Numba could not type it and the call ran as Python)
    s = 100.0
    total = 0.0
    for t in range(z.shape[0]):
        s = s * np.exp(0.01 - 0.5 * vol ** 2 + vol * z[t])
        total = total + s
    return max(total / z.shape[0] - 100.0, 0.0)


@pytest.mark.parametrize("x64", [False, True])
def test_a_number_carried_into_a_loop_of_lanes_runs_compiled(x64):
    z = np.random.default_rng(2).normal(size=(16, 12)) * 0.05
    with strop.config.override(enable_x64=x64):
        g = strop.jit(strop.vmap(strop.grad(payoff_of_a_path), in_axes=(None, 0)))
        got, slow = _warnings_of(g, 0.02, z)
        assert not slow, [str(w.message) for w in slow]
        want = np.array([strop.grad(payoff_of_a_path)(0.02, lane) for lane in z])
    assert got.dtype == want.dtype == (np.float64 if x64 else np.float32)
    assert np.count_nonzero(want) > 8
    np.testing.assert_allclose(got, want, rtol=1e-12 if x64 else 1e-4)


def kalman_likelihood(theta, ys):
    # (a matrix written with a parameter inside, `np.array([[1.0, 1.0], [0.0, a]])`, had no
    # compiled cotangent and sent the whole call to Python; the solve's cotangents ran in
    # object-mode islands each trip)
    a, q, r = theta[0], theta[1], theta[2]
    A = np.array([[1.0, 1.0], [0.0, a]])
    H = np.array([[1.0, 0.0]])
    m, P = np.zeros(2), np.eye(2)
    ll = 0.0
    for t in range(ys.shape[0]):
        m = A @ m
        P = A @ P @ A.T + q * np.eye(2)
        S = H @ P @ H.T + r
        v = ys[t] - H @ m
        K = np.linalg.solve(S, H @ P).T
        m = m + K @ v
        P = P - K @ H @ P
        ll = ll - 0.5 * (np.log(S[0, 0]) + v[0] ** 2 / S[0, 0])
    return ll


def test_a_matrix_of_parameters_and_a_solve_in_a_loop_run_compiled():
    theta = np.array([0.9, 0.1, 0.5])
    ys = np.random.default_rng(3).normal(size=(12, 1))
    got, slow = _warnings_of(strop.jit(strop.grad(kalman_likelihood)), theta, ys)
    assert not slow, [str(w.message) for w in slow]
    np.testing.assert_allclose(got, strop.grad(kalman_likelihood)(theta, ys), rtol=1e-10)
    step = 1e-6 * np.eye(3)
    numeric = [(kalman_likelihood(theta + e, ys) - kalman_likelihood(theta - e, ys)) / 2e-6
               for e in step]
    np.testing.assert_allclose(got, numeric, rtol=1e-6)


def lorenz_by_rk4(s0, dt):
    # (the state built by `np.array([...])` each step and read item by item: each item's
    # cotangent was an array of zeros the size of the state, added to the sum)
    def f(s):
        return np.array([10.0 * (s[1] - s[0]), s[0] * (28.0 - s[2]) - s[1],
                         s[0] * s[1] - 8.0 / 3.0 * s[2]])
    s = s0
    for _ in range(30):
        k1 = f(s)
        k2 = f(s + dt / 2 * k1)
        k3 = f(s + dt / 2 * k2)
        k4 = f(s + dt * k3)
        s = s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.sum(s ** 2)


def test_a_state_built_item_by_item_runs_compiled():
    s0 = np.array([1.0, 1.0, 1.0])
    got, slow = _warnings_of(strop.jit(strop.grad(lorenz_by_rk4)), s0, 0.01)
    assert not slow, [str(w.message) for w in slow]
    numeric = [(lorenz_by_rk4(s0 + e, 0.01) - lorenz_by_rk4(s0 - e, 0.01)) / 2e-6
               for e in 1e-6 * np.eye(3)]
    np.testing.assert_allclose(got, numeric, rtol=1e-6)


def test_per_example_gradients_of_a_state_built_item_by_item_run_compiled():
    # (each lane's `np.array([...])` of its numbers ran in an object-mode island)
    s0 = np.random.default_rng(4).normal(size=(6, 3)) + 1.0
    g = strop.jit(strop.vmap(strop.grad(lorenz_by_rk4), in_axes=(0, None)))
    got, slow = _warnings_of(g, s0, 0.01)
    assert not slow, [str(w.message) for w in slow]
    want = np.array([strop.grad(lorenz_by_rk4)(s, 0.01) for s in s0])
    np.testing.assert_allclose(got, want, rtol=1e-12)


def dotted(a, b):
    t = np.dot(np.stack([b, b]), a)       # (a fuzzer's program, seed 3501)
    return np.sum(np.sin(t))


def contracted(a, b):
    return np.sum(np.tensordot(a, b, axes=([0], [1])))


def test_np_dot_gradients_run_compiled_and_small_products_through_numpy_warn():
    """np.dot's cotangents went through NumPy in object mode, silently: ~100 us a call on
    3-element arrays, 60x njit's forward.  They are matmul's now, compiled; what still goes
    through NumPy on small arrays (tensordot over other axes) says so at the user's line."""
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=3)
    g = strop.jit(strop.grad(dotted, argnums=(0, 1)))
    got, slow = _warnings_of(g, a, b)
    assert not slow, [str(w.message) for w in slow]
    for x, y in zip(got, strop.grad(dotted, argnums=(0, 1))(a, b)):
        np.testing.assert_allclose(x, y, rtol=1e-12)
    a, b = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))
    g = strop.jit(strop.grad(contracted))
    got, slow = _warnings_of(g, a, b)
    np.testing.assert_allclose(got, strop.grad(contracted)(a, b), rtol=1e-12)
    # (np.tensordot itself runs in an island: SLOW_PATHS in test_jit_coverage.py)
    assert {w.category for w in slow} == {PerformanceWarning}, [str(w.message) for w in slow]
    message = next(str(w.message) for w in slow if "tensordot_vjp_a()" in str(w.message))
    assert "through NumPy" in message and "test_slow_paths.py" in message


def standardized(x, gamma):       # a normalization layer: the mean and spread of each feature
    mu = np.mean(x, axis=0)
    sd = np.std(x, axis=0, ddof=1) + 1e-3
    return np.sum(np.tanh(gamma * (x - mu) / sd)) + np.var(x, axis=(0, 1)) + np.var(x[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradients_of_var_and_std_over_axes_run_compiled(dtype):
    # var_grad (np.var / np.std along an axis) ran through NumPy in object mode
    rng = np.random.default_rng(5)
    x, gamma = rng.normal(size=(16, 3)).astype(dtype), rng.normal(size=3).astype(dtype)
    g = strop.grad(standardized, argnums=(0, 1))
    got, seen = _warnings_of(strop.jit(g), x, gamma)
    assert seen == []
    want = strop.jit(g, backend="python")(x, gamma)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for a, b in zip(got, want):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    if dtype == np.float64:
        np.testing.assert_allclose(got[0], numeric_vjp(standardized, (x, gamma), 0, 1.0),
                                   rtol=1e-6, atol=1e-8)
