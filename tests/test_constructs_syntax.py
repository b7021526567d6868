"""Python syntax and NumPy constructs that once lost the derivative silently or failed to
transform: np.r_/np.c_, sorted/reversed loops, nested zip/enumerate, *args/**kwargs calls,
local functions given to transforms.  Each function is checked under every transform against
its oracle: grad and jvp against central differences (float64), jit against the function
itself (python and cpu backends), vmap against a loop over the batch."""
import warnings
from operator import itemgetter

import numpy as np
import pytest

import strop
from helpers import check_grad, numeric_vjp, x64_fixture
from strop import grad, jit, jvp, vmap
from strop.errors import JitFallbackWarning, TransformError

x64 = pytest.fixture(autouse=True)(x64_fixture)
rng = np.random.default_rng(20250613)


def check_all(f, x, batch, compiles=True):
    """grad, jvp, jit (python and cpu) and vmap of ``f`` at ``x`` (batch: a stack of inputs).
    ``compiles``: the cpu backend compiles f without an object-mode island."""
    check_grad(f, x)
    t = rng.standard_normal(np.shape(x))
    out, tan = jvp(f, (x,), (t if np.ndim(x) else float(t),))
    np.testing.assert_allclose(out, f(x), rtol=1e-12)
    want = numeric_vjp(lambda y: f(y), [x], 0, 1.0)   # f is scalar: its gradient . t
    np.testing.assert_allclose(tan, np.sum(want * t), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jit(f, backend="python")(x), f(x), rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error" if compiles else "ignore", JitFallbackWarning)
        np.testing.assert_allclose(jit(f)(x), f(x), rtol=1e-12)
    loop = np.stack([f(b) for b in batch])
    np.testing.assert_allclose(vmap(f)(batch), loop, rtol=1e-12)
    np.testing.assert_allclose(vmap(grad(f))(batch), np.stack([grad(f)(b) for b in batch]),
                               rtol=1e-12)


# --- np.r_ and np.c_: rewritten to the joins they stand for --------------------------------

def r_items(x):
    return np.sum(np.r_[x, x ** 2, 3.0] ** 2)


def r_slices(x):
    return np.sum(np.r_[0:3, x] * np.r_[x, x, 1.0] + np.r_[-1:1:5j] * np.r_["0", x, x, x[:1]])


def c_columns(x):
    return np.sum(np.c_[x, x ** 2] @ np.array([1.0, -2.0]) * x)


def c_matrix(x):
    m = np.c_[np.outer(x, x), np.sin(x)]
    return np.sum(m * m) + m[0, -1]


@pytest.mark.parametrize("f, compiles", [(r_items, False), (r_slices, False), (c_columns, True),
                                         (c_matrix, True)])
def test_index_tricks(f, compiles):
    # Numba has no np.atleast_1d of a float: np.r_ runs in an object-mode island, as before
    check_all(f, rng.standard_normal(2), rng.standard_normal((3, 2)), compiles)


def r_directive(x):
    return np.sum(np.r_["0,2", x, x])


def test_index_trick_directive_is_refused():
    with pytest.raises(TransformError, match="directive '0,2' of np.r_"):
        grad(r_directive)(np.ones(2))
