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
TOL = {}


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
    assert nn.one_hot(np.array([1]), 3, dtype=np.int32).dtype == np.int32


def hot(labels):
    return nn.one_hot(labels, 3)


@pytest.mark.parametrize("x64,want", [(False, np.float32), (True, np.float64)])
def test_one_hot_is_the_default_float(x64, want):
    """JAX's default float: float32, float64 with x64 on (it stayed float32), called plainly
    and inside every transform."""
    labels = np.array([0, 2, 1])
    with strop.config.override(enable_x64=x64):
        for f in (nn.one_hot, jit(hot), jit(hot, backend="python"), vmap(hot),
                  jit(vmap(hot))):
            got = f(labels) if f is not nn.one_hot else f(labels, 3)
            assert got.dtype == want
            np.testing.assert_array_equal(got, np.eye(3)[labels])


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


def every(x):
    """Every function once (one compile checks that all of them compile)."""
    h = nn.gelu(x) + nn.gelu(x, approximate=False) + nn.relu(x) + nn.leaky_relu(x, 0.1)
    h = h + nn.silu(x) + nn.elu(x) + nn.soft_sign(x) + nn.sigmoid(x) + nn.selu(x) + nn.celu(x)
    h = h + nn.relu6(x) + nn.hard_tanh(x) + nn.log_sigmoid(x) + nn.softplus(x)
    h = h + nn.standardize(x) + nn.softmax(x) + nn.log_softmax(x)
    return h * nn.logsumexp(x) + nn.one_hot(np.argmax(x), 3, dtype=np.float64)


def net(w, x, label):
    """A small classifier's loss through the functions with rules of their own."""
    logits = w @ nn.relu(x) + nn.softplus(x) - nn.sigmoid(x)
    return -np.sum(nn.one_hot(label, 3, dtype=np.float64) * nn.log_softmax(logits)) \
        + nn.logsumexp(logits)


@pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")
def test_compiled_with_no_fallback():
    rng = np.random.default_rng(0)
    w, x, label = rng.normal(size=(3, 3)), rng.normal(size=3), np.array(1)
    f = jit(every)
    np.testing.assert_allclose(f(x), every(x), rtol=1e-12)
    assert f.last_backend == "cpu"
    g = jit(grad(net))
    np.testing.assert_allclose(g(w, x, label), grad(net)(w, x, label), rtol=1e-10)
    assert g.last_backend == "cpu"
    np.testing.assert_allclose(g(w, x, label), numeric_vjp(net, [w, x, label], 0, 1.0),
                               rtol=1e-6, atol=1e-9)
    v = jit(vmap(nn.softmax))
    xs = np.stack([x, -x, 2 * x])
    np.testing.assert_allclose(v(xs), [nn.softmax(r) for r in xs], rtol=1e-12)


@pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")
def test_float32_stays_float32_compiled():
    f = jit(lambda x: nn.elu(x, 0.5) * nn.leaky_relu(x, 0.2))
    x = np.array([-1.0, 0.0, 2.0], np.float32)
    assert f(x).dtype == np.float32    # the Python numbers passed stay weak
    np.testing.assert_allclose(f(x), f.fun(x), rtol=1e-6)


def gelu_exact(x):
    return nn.gelu(x, approximate=False)


def gelu_exact_sum(x):
    return np.sum(gelu_exact(x))


@pytest.mark.parametrize("name,f", [("gelu_tail", gelu_exact), ("erfc", nn.erfc)])
@pytest.mark.parametrize("suffix", ["", "32"])
def test_exact_gelu_and_erfc_keep_the_tail_as_jax(name, f, suffix):
    # through erfc, not 1 + erf: x = -12 gives -2.1e-32, not -0.0; float64 and float32 both
    # within a few ulps of JAX's own values and gradients, however small
    x = REF[f"{name}{suffix}/x"]
    value, g = f(x), grad(summed(f))(x)
    assert value.dtype == g.dtype == x.dtype
    np.testing.assert_array_max_ulp(value, REF[f"{name}{suffix}/value"], maxulp=6)
    np.testing.assert_array_max_ulp(g, REF[f"{name}{suffix}/grad"], maxulp=6)


@pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")
def test_exact_gelu_left_tail_compiled_and_differentiated():
    x = np.array([-9.0, -6.0, -5.0, -2.5, -0.7, 0.3, 1.5, 4.0])
    f = jit(gelu_exact)
    np.testing.assert_allclose(f(x), gelu_exact(x), rtol=1e-15)
    assert f.last_backend == "cpu"
    assert -6.0e-9 < gelu_exact(-6.0) < -5.8e-9            # not -0.0
    x32 = x.astype(np.float32)
    assert f(x32).dtype == np.float32
    np.testing.assert_array_max_ulp(f(x32), gelu_exact(x32), maxulp=2)
    g = jit(grad(gelu_exact_sum))
    np.testing.assert_allclose(g(x), grad(gelu_exact_sum)(x), rtol=1e-14)
    np.testing.assert_allclose(g(x), numeric_vjp(gelu_exact_sum, [x], 0, 1.0), rtol=1e-6,
                               atol=1e-8)
    assert g.last_backend == "cpu"
