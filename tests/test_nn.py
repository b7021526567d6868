"""strop.nn against JAX's values and gradients (tests/data/nn_reference.*, made by
make_nn_reference.py), central differences, and compiled under jit with no fallback: the
functions are inlined into the caller's code, so grad, jvp, vmap, hessian and jit see NumPy."""
import os

import numpy as np
import pytest

import strop
from helpers import numeric_vjp, x64_fixture
from strop import grad, hessian, jit, jvp, nn, vmap

x64 = pytest.fixture(autouse=True)(x64_fixture)
REF = np.load(os.path.join(os.path.dirname(__file__), "data", "nn_reference.npz"))
B = np.array([1.0, 2.0, 0.5, 0.0])
W = np.array([True, False, True, True])

CASES = {
    "relu": nn.relu, "relu6": nn.relu6, "sigmoid": nn.sigmoid, "log_sigmoid": nn.log_sigmoid,
    "softplus": nn.softplus, "soft_sign": nn.soft_sign, "silu": nn.silu, "gelu": nn.gelu,
    "gelu_exact": lambda x: nn.gelu(x, approximate=False), "elu": nn.elu,
    "elu_alpha": lambda x: nn.elu(x, 0.5), "celu": nn.celu, "selu": nn.selu,
    "leaky_relu": nn.leaky_relu, "leaky_relu_slope": lambda x: nn.leaky_relu(x, 0.2),
    "hard_tanh": nn.hard_tanh, "softmax": nn.softmax,
    "softmax_axis0": lambda x: nn.softmax(x, axis=0),
    "softmax_where": lambda x: nn.softmax(x, where=W), "log_softmax": nn.log_softmax,
    "log_softmax_axis0": lambda x: nn.log_softmax(x, axis=0), "logsumexp": nn.logsumexp,
    "logsumexp_axis1": lambda x: nn.logsumexp(x, 1),
    "logsumexp_keepdims": lambda x: nn.logsumexp(x, 0, keepdims=True),
    "logsumexp_b": lambda x: nn.logsumexp(x, 1, b=B), "standardize": nn.standardize,
}
# gelu_exact: erf is XLA's float32 interpolant here (about 1e-7), JAX's float64 erf is exact
TOL = {"gelu_exact": 1e-6}


def summed(f):
    def loss(x):
        return np.sum(f(x))
    return loss


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_and_grad_match_jax(name):
    f, x = CASES[name], REF[f"{name}/x"]
    tol = TOL.get(name, 1e-12)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(f(x), REF[f"{name}/value"], rtol=tol, atol=tol)
        np.testing.assert_allclose(grad(summed(f))(x), REF[f"{name}/grad"], rtol=tol, atol=tol)


def test_conventions_at_kinks_and_extremes():
    assert grad(nn.relu)(0.0) == 0.0 and grad(nn.relu)(1e-9) == 1.0
    assert nn.softplus(1000.0) == 1000.0 and grad(nn.softplus)(1000.0) == 1.0
    assert nn.sigmoid(-1000.0) == 0.0 and nn.sigmoid(1000.0) == 1.0
    with np.errstate(divide="ignore"):
        assert nn.logsumexp(np.full(3, -np.inf)) == REF["logsumexp_neginf/value"] == -np.inf
    assert np.all(np.isfinite(nn.log_softmax(np.array([1000.0, 0.0, -1000.0]))))
    out, sign = nn.logsumexp(np.array([0.0, 1.0]), b=np.array([1.0, -2.0]), return_sign=True)
    assert sign == -1.0 and np.isclose(out, np.log(2 * np.e - 1))


def test_one_hot():
    np.testing.assert_array_equal(nn.one_hot(np.array([0, 2, 5, -1]), 4), REF["one_hot/value"])
    np.testing.assert_array_equal(nn.one_hot(np.array([[0, 1], [3, 2]]), 4, axis=0),
                                  REF["one_hot_axis0/value"])
    assert nn.one_hot(np.array([1]), 3).dtype == np.float32   # JAX's default without x64
    assert nn.one_hot(np.array([1]), 3, dtype=np.int32).dtype == np.int32


def test_jvp_and_hessian_against_central_differences():
    x = np.array([-1.5, 0.3, 2.0])

    def f(x):
        return nn.logsumexp(nn.softplus(x) * nn.gelu(x)) + np.sum(nn.elu(x) * nn.silu(x))
    out, t = jvp(f, (x,), (np.array([1.0, -2.0, 0.5]),))
    assert np.isclose(t, np.dot(numeric_vjp(f, [x], 0, 1.0), [1.0, -2.0, 0.5]), rtol=1e-7)
    h = hessian(f)(x)
    num = np.stack([numeric_vjp(lambda x: grad(f)(x)[i], [x], 0, 1.0, eps=1e-5)
                    for i in range(3)])
    np.testing.assert_allclose(h, num, rtol=1e-5, atol=1e-8)


def net(params, x, labels):
    """A small classifier's loss through every function (one compile serves the tests)."""
    h = nn.gelu(params["w1"] @ x) + nn.relu(x) - nn.leaky_relu(x, 0.1)
    h = nn.silu(h) + nn.elu(h) + nn.soft_sign(h) + nn.sigmoid(h) + nn.selu(h) + nn.celu(h)
    h = h + nn.relu6(h) + nn.hard_tanh(h) + nn.log_sigmoid(h) + nn.softplus(h)
    logits = params["w2"] @ nn.standardize(h)
    lp = nn.log_softmax(logits)
    return -np.sum(nn.one_hot(labels, 3, dtype=np.float64) * lp) + nn.logsumexp(logits) \
        + np.sum(nn.softmax(logits) ** 2) + nn.gelu(np.sum(h), approximate=False)


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    params = {"w1": rng.normal(size=(4, 4)), "w2": rng.normal(size=(3, 4))}
    return params, rng.normal(size=4), np.array(1)


@pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")
def test_compiled_with_no_fallback(problem):
    params, x, label = problem
    g = jit(grad(net))
    got = g(params, x, label)
    assert g.last_backend == "cpu"
    want = grad(net)(params, x, label)
    for k in params:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-10)
    num = numeric_vjp(lambda w: net({**params, "w2": w}, x, label), [params["w2"]], 0, 1.0)
    np.testing.assert_allclose(want["w2"], num, rtol=1e-6, atol=1e-9)
    xs = np.stack([x, -x, 2 * x])
    v = jit(vmap(net, in_axes=(None, 0, None)))
    np.testing.assert_allclose(v(params, xs, label), [net(params, r, label) for r in xs],
                               rtol=1e-12)
    assert v.last_backend == "cpu"


@pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")
def test_float32_stays_float32_compiled():
    strop.config.update("enable_x64", False)
    try:
        f = jit(lambda x: nn.elu(x, 0.5) + nn.leaky_relu(x, 0.2) + nn.softmax(x))
        x = np.array([-1.0, 0.0, 2.0], np.float32)
        assert f(x).dtype == np.float32
        np.testing.assert_allclose(f(x), jit(f.fun, backend="python")(x), rtol=1e-6)
    finally:
        strop.config.update("enable_x64", True)
