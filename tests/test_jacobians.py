"""jacfwd, jacrev and hessian against central finite differences and against each other;
compositions (jacfwd(jacrev), jvp(grad), grad(grad(grad)), with jit); layouts as JAX's."""
import re
import warnings

import numpy as np
import pytest

import strop
from helpers import numeric_vjp, x64_fixture
from strop import grad, hessian, jacfwd, jacrev, jit, jvp

x64 = pytest.fixture(autouse=True)(x64_fixture)
rng = np.random.default_rng(1)


def numeric_jacobian(f, args, argnum, eps=1e-6):
    out = np.asarray(f(*args), np.float64)
    x = np.asarray(args[argnum], np.float64)
    jac = np.zeros(out.shape + x.shape)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        a, b = list(args), list(args)
        a[argnum], b[argnum] = (xp, xm) if x.ndim else (xp[()], xm[()])
        jac[(Ellipsis,) + i] = (np.asarray(f(*a)) - np.asarray(f(*b))) / (2 * eps)
    return jac


def vec_fn(x, w):
    """A vector function of a vector and a matrix, with a branch on an argument value."""
    h = np.tanh(w @ x)
    if np.sum(x) > 0:
        h = h * np.exp(-x[0])
    for i in range(2):
        h = h + 0.5 * np.sin(h) * x[i]
    return h[:2] * np.linalg.norm(w, axis=0)[:2]


def mat_fn(a):
    """A matrix function of a matrix, with a while loop."""
    y = a @ a.T + np.eye(3)
    k = 0
    while np.max(np.abs(y)) > 2.0 and k < 10:
        y = y / 2 + 0.1 * np.sin(a)
        k += 1
    return np.linalg.inv(y)


X, W = rng.standard_normal(3), rng.standard_normal((3, 3))
A = rng.standard_normal((3, 3))
JACOBIANS = {}


def jacobians(f, argnums):
    if (f, argnums) not in JACOBIANS:
        JACOBIANS[f, argnums] = (jacfwd(f, argnums), jacrev(f, argnums))
    return JACOBIANS[f, argnums]


@pytest.mark.parametrize("argnum", [0, 1])
def test_vector_function(argnum):
    fwd, rev = jacobians(vec_fn, argnum)
    want = numeric_jacobian(vec_fn, [X, W], argnum)
    np.testing.assert_allclose(fwd(X, W), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(rev(X, W), fwd(X, W), rtol=1e-12, atol=1e-12)
    assert fwd(X, W).shape == (2,) + np.shape([X, W][argnum])


def test_matrix_function():
    fwd, rev = jacobians(mat_fn, 0)
    j = fwd(A)
    assert j.shape == (3, 3, 3, 3)
    np.testing.assert_allclose(j, numeric_jacobian(mat_fn, [A], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(rev(A), j, rtol=1e-10, atol=1e-12)


def test_argnums_tuple_and_scalar_output():
    f = lambda x, w: np.sum(vec_fn(x, w) ** 2)   # noqa: E731
    jx, jw = jacfwd(f, (0, 1))(X, W)
    rx, rw = jacrev(f, (0, 1))(X, W)
    gx, gw = grad(f, (0, 1))(X, W)
    for a, b, c in ((jx, rx, gx), (jw, rw, gw)):
        np.testing.assert_allclose(a, c, rtol=1e-10)
        np.testing.assert_allclose(b, c, rtol=1e-10)


def test_pytree_inputs_and_outputs():
    def f(p):
        return {"y": np.tanh(p["w"] @ p["x"]), "s": np.sum(p["x"] ** 2)}
    p = {"w": rng.standard_normal((2, 3)), "x": rng.standard_normal(3)}
    jf, jr = jacfwd(f)(p), jacrev(f)(p)
    assert set(jf) == {"y", "s"} and set(jf["y"]) == {"w", "x"}
    assert jf["y"]["w"].shape == (2, 2, 3) and jf["s"]["x"].shape == (3,)
    for k in ("y", "s"):
        for leaf in ("w", "x"):
            np.testing.assert_allclose(jf[k][leaf], jr[k][leaf], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(jf["s"]["x"], 2 * p["x"])


def test_has_aux():
    f = lambda x: (np.sin(x), np.cos(x))   # noqa: E731
    for jac in (jacfwd, jacrev):
        j, aux = jac(f, has_aux=True)(X)
        np.testing.assert_allclose(j, np.diag(np.cos(X)), atol=1e-12)
        np.testing.assert_allclose(aux, np.cos(X))


def scalar_fn(x):
    return np.sum(np.sin(x) * x[0] ** 2) + np.prod(x) if x[1] > 0 else np.sum(x ** 3)


H = hessian(scalar_fn)


@pytest.mark.parametrize("x", [np.array([0.3, 0.5, -0.7]), np.array([0.3, -0.5, -0.7])],
                         ids=["branch1", "branch2"])
def test_hessian_against_finite_differences(x):
    h = H(x)
    want = numeric_jacobian(grad(scalar_fn), [x], 0)
    np.testing.assert_allclose(h, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h, h.T, rtol=1e-10, atol=1e-12)


def test_hessian_of_a_matrix_argument():
    f = lambda a: np.sum(np.linalg.inv(a @ a.T + np.eye(3)))   # noqa: E731
    h = hessian(f)(A)
    assert h.shape == (3, 3, 3, 3)
    np.testing.assert_allclose(h, numeric_jacobian(grad(f), [A], 0), rtol=1e-5, atol=1e-8)


def test_jacfwd_of_jacrev_is_hessian():
    x = np.array([0.3, 0.5, -0.7])
    np.testing.assert_allclose(jacfwd(jacrev(scalar_fn))(x), H(x), rtol=1e-12)


def cube(x):
    return np.sin(x) * x ** 3


def test_grad_grad_grad():
    x = 0.7
    g3 = grad(grad(grad(cube)))(x)
    want = numeric_vjp(grad(grad(cube)), [x], 0, 1.0)
    np.testing.assert_allclose(g3, want, rtol=1e-6)


def test_jvp_of_grad():
    x = 0.7
    g, hv = jvp(grad(cube), (x,), (1.0,))
    np.testing.assert_allclose(g, grad(cube)(x))
    np.testing.assert_allclose(hv, grad(grad(cube))(x), rtol=1e-12)


def test_jvp_of_grad_is_a_hessian_vector_product():
    x, v = np.array([0.3, 0.5, -0.7]), np.array([1.0, -2.0, 0.5])
    _, hv = jvp(grad(scalar_fn), (x,), (v,))
    np.testing.assert_allclose(hv, H(x) @ v, rtol=1e-10)


def test_jit_of_jacobians_matches():
    x = np.array([0.3, 0.5, -0.7])
    with warnings.catch_warnings():
        # the Jacobian's assembly runs as Python (JitFallbackWarning): the values must agree
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(jit(H)(x), H(x), rtol=1e-12)
        np.testing.assert_allclose(jit(jacfwd(vec_fn))(X, W), jacfwd(vec_fn)(X, W), rtol=1e-12)


def test_jit_of_grad_grad_compiles():
    f = jit(grad(grad(cube)))
    np.testing.assert_allclose(f(0.7), grad(grad(cube))(0.7), rtol=1e-12)
    assert f.last_backend == "cpu"


def test_source_of_a_second_derivative_is_readable():
    text = strop.source(H)
    assert "def scalar_fn_jacrev_jacfwd(x):" in text
    assert "# line" in text and re.search(r"dx = basis\(x, _i\w*, 0\)", text)
    assert text == strop.source(hessian(scalar_fn))   # deterministic


def test_empty_input():
    j = jacfwd(lambda x: np.sum(x) * np.ones(2))(np.zeros(0))
    assert j.shape == (2, 0)


def test_jacrev_of_non_array_output():
    with pytest.raises(TypeError, match="needs array outputs.*str"):
        jacrev(lambda x: (x, "label"))(1.0)
    with pytest.raises(TypeError, match="real floating point outputs.*bool"):
        jacrev(lambda x: x > 0)(np.ones(2))


def test_grad_of_non_scalar_says_what_to_use():
    with pytest.raises(TypeError, match="real scalar output.*jacrev"):
        grad(lambda x: np.sin(x))(np.ones(3))


def test_integer_input_is_refused():
    with pytest.raises(TypeError, match="jacfwd requires real-valued"):
        jacfwd(lambda x: np.sin(x))(np.arange(3))
