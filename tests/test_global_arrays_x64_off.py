"""A module's float64 array (and Python float) read by transformed code with x64 off (the
default): part of the transform boundary, narrowed to float32 as arguments are (DESIGN's 64-bit
policy; JAX makes such a global a constant of the computation's type).  Compiled code typed it
float64, could not unify a loop's float32 value with the float64 one it became, and fell back
to Python.  Oracles: the python backend (jit, grad) and central differences in float64 of the
function with the global's float32 values; the global's current value is read on every call."""
import warnings

import numpy as np
import pytest

import strop

W = np.array([[0.3, -0.2, 0.1], [0.05, 0.4, -0.3], [0.2, 0.1, 0.25]])   # float64
B = np.arange(3.0) / 10                                                  # float64
ALPHA = 0.5                                                              # a Python float


def layers(x):
    h = x
    for _ in range(3):          # h: float32 before the loop, W @ h inside
        h = np.tanh(W @ h + B * ALPHA)
    return h.sum()


def _x():
    return np.array([0.5, -1.0, 2.0], np.float32)


def _compiled(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        return f(*args)


@pytest.fixture(autouse=True)
def x64_off():
    with strop.config.override(enable_x64=False):
        yield


def _central(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    out = np.zeros_like(x)
    for i in range(x.size):
        d = np.zeros_like(x)
        d[i] = eps
        out[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return out


def _with_globals_as_float32(x):
    """``layers`` in float64 arithmetic on the float32 values of its globals."""
    w, b, a = W.astype(np.float32), B.astype(np.float32), np.float32(ALPHA)
    h = x
    for _ in range(3):
        h = np.tanh(w.astype(np.float64) @ h + b.astype(np.float64) * float(a))
    return h.sum()


def test_jit_compiles_and_agrees_with_the_python_backend():
    want = strop.jit(layers, backend="python")(_x())
    got = _compiled(strop.jit(layers), _x())
    assert np.asarray(want).dtype == np.float32 and np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got, _with_globals_as_float32(_x().astype(np.float64)),
                               rtol=1e-5)


def test_grad_and_jit_grad_against_central_differences():
    oracle = _central(_with_globals_as_float32, _x())
    g = strop.grad(layers)(_x())
    jg = _compiled(strop.jit(strop.grad(layers)), _x())
    for got in (g, jg):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, oracle, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jg, g, rtol=1e-6, atol=1e-7)


def test_the_current_value_is_read_after_an_update_in_place():
    f = strop.jit(layers)
    before = _compiled(f, _x())
    saved = W.copy()
    try:
        W[0, 0] = 1.5
        got = _compiled(f, _x())
        assert got != before
        np.testing.assert_allclose(got, strop.jit(layers, backend="python")(_x()), rtol=1e-6)
    finally:
        W[...] = saved


def test_x64_on_keeps_the_global_float64():
    with strop.config.override(enable_x64=True):
        got = strop.jit(layers, backend="python")(_x().astype(np.float64))
    assert np.asarray(got).dtype == np.float64
    np.testing.assert_allclose(got, layers(_x().astype(np.float64)), rtol=1e-12)
