"""The numerical routines (rules/numeric.py) through whole transforms: grad and jvp against
central differences, hessian against differences of the gradient, vmap and vmap(grad) against
a loop, jit(grad) against the python backend."""
import numpy as np
import pytest

import strop
from helpers import check_grad, numeric_vjp, x64_fixture

x64 = pytest.fixture(autouse=True)(x64_fixture)
rng = np.random.default_rng(5)
COORDS = np.array([0.0, 0.3, 0.7, 1.5, 1.6])


def gradient_1d(x):
    return np.sum(np.sin(np.gradient(x)) ** 2)


def gradient_coords(x):
    return np.sum(np.gradient(x * x, COORDS, edge_order=2) ** 2)


def gradient_2d(x):
    gy, gx = np.gradient(np.reshape(x, (2, 5)), 0.5, 2.0)
    return np.sum(gy ** 2) + np.sum(np.cos(gx))


def gradient_axis(x):
    return np.sum(np.gradient(np.outer(x, x), axis=1, edge_order=2) ** 3)


def gradient_spacing(x):     # the spacing depends on x too
    return np.sum(np.gradient(x, x[0] + 1.0) ** 2)


def gradient_list(x):        # N-D: one output per axis, used as a sequence
    out = np.gradient(np.reshape(x, (2, 5)))
    return np.sum(out[0] * out[1]) + np.sum(np.tanh(out[1]))


GRADIENT = [gradient_1d, gradient_coords, gradient_2d, gradient_axis, gradient_spacing,
            gradient_list]
ONE_OUTPUT = [gradient_1d, gradient_coords, gradient_axis, gradient_spacing]


def sample(f):
    return rng.uniform(0.2, 1.5, 10 if f in (gradient_2d, gradient_list) else 5)


@pytest.mark.parametrize("f", GRADIENT, ids=lambda f: f.__name__)
def test_gradient_grad_jvp_hessian(f):
    x = sample(f)
    g = check_grad(f, x)
    t = rng.standard_normal(x.shape)
    _, tangent = strop.jvp(f, (x,), (t,))
    np.testing.assert_allclose(tangent, np.dot(numeric_vjp(f, [x], 0, 1.0), t), rtol=1e-6)
    h = strop.hessian(f)(x)
    want = np.array([numeric_vjp(strop.grad(f), [x], 0, e) for e in np.eye(x.size)])
    np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-6)
    with pytest.warns(strop.errors.JitFallbackWarning):   # Numba has no np.gradient
        np.testing.assert_allclose(strop.jit(strop.grad(f))(x), g, rtol=1e-10)


@pytest.mark.parametrize("f", ONE_OUTPUT, ids=lambda f: f.__name__)
def test_gradient_vmap(f):
    xs = np.stack([sample(f) for _ in range(3)])
    np.testing.assert_allclose(strop.vmap(f)(xs), [f(x) for x in xs], rtol=1e-10)
    np.testing.assert_allclose(strop.vmap(strop.grad(f))(xs),
                               [strop.grad(f)(x) for x in xs], rtol=1e-10)


def test_gradient_in_coordinates_raises():
    def f(x):
        return np.sum(np.gradient(np.ones(5), x))
    with pytest.raises(NotImplementedError, match="coordinates"):
        strop.grad(f)(np.cumsum(rng.uniform(0.5, 1.0, 5)))
