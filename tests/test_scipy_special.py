"""strop.scipy.special, and SciPy's own functions called inside transformed code (which run
strop's twins): values against SciPy's, gradients against central differences, jit with no
fallback, vmap against a loop."""
import warnings

import numpy as np
import pytest
import scipy.special as sp

import strop
from helpers import check_grad, x64_fixture
from strop.errors import JitFallbackWarning, TransformError

x64 = pytest.fixture(autouse=True)(x64_fixture)

rng = np.random.default_rng(7)
M = rng.normal(size=(3, 4)) * 3.0
P = rng.uniform(0.05, 0.95, size=5)

# (name, strop.scipy.special's function called as SciPy's is, argument)
CASES = [
    ("logsumexp", lambda f, x: f(x), M),
    ("logsumexp", lambda f, x: f(x, axis=1), M),
    ("logsumexp", lambda f, x: f(x, axis=0, keepdims=True), M),
    ("logsumexp", lambda f, x: f(x, axis=-1, b=np.arange(1.0, 5.0)), M),
    ("logsumexp", lambda f, x: f(x, b=np.ones((3, 4)) * 0.5, return_sign=True)[0], M),
    ("softmax", lambda f, x: f(x), M),
    ("softmax", lambda f, x: f(x, axis=0), M),
    ("log_softmax", lambda f, x: f(x, axis=1), M),
    ("expit", lambda f, x: f(x), M),
    ("logit", lambda f, x: f(x), P),
    ("erfc", lambda f, x: f(x), M / 3.0),
    ("ndtr", lambda f, x: f(x), M / 2.0),
]
IDS = [f"{name}{i}" for i, (name, _, _) in enumerate(CASES)]


@pytest.mark.parametrize("name, call, x", CASES, ids=IDS)
def test_values_are_scipys(name, call, x):
    np.testing.assert_allclose(call(getattr(strop.scipy.special, name), x),
                               call(getattr(sp, name), x), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name, call, x", CASES, ids=IDS)
def test_scipys_function_inside_transformed_code(name, call, x):
    scipys = getattr(sp, name)

    def loss(x):
        return np.sum(np.sin(call(scipys, x)))   # SciPy's own function
    check_grad(loss, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        np.testing.assert_allclose(strop.jit(loss)(x), loss(x), rtol=1e-12)
        np.testing.assert_allclose(strop.jit(strop.grad(loss))(x), strop.grad(loss)(x),
                                   rtol=1e-10)
    xs = np.stack([x, x * 0.5, x + 0.01])
    np.testing.assert_allclose(strop.vmap(loss)(xs), [loss(v) for v in xs], rtol=1e-12)


def test_a_negative_sum_is_nan_without_return_sign_as_scipys():
    a, b = np.array([0.0, 1.0]), np.array([1.0, -2.0])
    with np.errstate(invalid="ignore"):
        assert np.isnan(strop.scipy.special.logsumexp(a, b=b)) and np.isnan(
            sp.logsumexp(a, b=b))
    value, sign = strop.scipy.special.logsumexp(a, b=b, return_sign=True)
    np.testing.assert_allclose((value, sign), sp.logsumexp(a, b=b, return_sign=True))


def test_a_scipy_function_without_a_twin_is_refused_at_the_users_line():
    def loss(x):
        return np.sum(sp.gammaln(x + 3.0))
    with pytest.raises(TransformError, match="scipy.special.gammaln") as info:
        strop.grad(loss)(P)
    assert "test_scipy_special.py" in str(info.value)
