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


def net(p):
    return np.sum(np.tanh(p["w"] @ p["x"])) * p["b"]


def net_grad(p):   # by hand, in NumPy
    h = np.tanh(p["w"] @ p["x"])
    s = (1 - h ** 2) * p["b"]
    return {"b": np.sum(h), "w": np.outer(s, p["x"]), "x": p["w"].T @ s}


def numeric_hessian_tree(grad_fn, p, eps=1e-6):
    """JAX's layout, by finite differences: H[k1][k2] shaped p[k1].shape + p[k2].shape."""
    out = {k1: {} for k1 in p}
    for k2 in p:
        x = np.asarray(p[k2], np.float64)
        cols = {k1: np.zeros(np.shape(p[k1]) + x.shape) for k1 in p}
        for i in np.ndindex(x.shape):
            xp, xm = x.copy(), x.copy()
            xp[i] += eps
            xm[i] -= eps
            gp = grad_fn({**p, k2: xp if x.ndim else xp[()]})
            gm = grad_fn({**p, k2: xm if x.ndim else xm[()]})
            for k1 in p:
                cols[k1][(Ellipsis,) + i] = (np.asarray(gp[k1]) - np.asarray(gm[k1])) / (2 * eps)
        for k1 in p:
            out[k1][k2] = cols[k1]
    return out


PARAMS = {"w": rng.standard_normal((2, 3)), "x": rng.standard_normal(3), "b": 0.5}


@pytest.mark.parametrize("make", [hessian, lambda f: jacfwd(grad(f)), lambda f: jacrev(grad(f)),
                                  lambda f: jacfwd(jacrev(f)), lambda f: jacrev(jacrev(f))],
                         ids=["hessian", "jacfwd-grad", "jacrev-grad", "jacfwd-jacrev",
                              "jacrev-jacrev"])
def test_hessian_of_a_dict_is_a_dict_of_dicts(make):
    h = make(net)(PARAMS)
    want = numeric_hessian_tree(net_grad, PARAMS)
    assert isinstance(h, dict) and set(h) == set(PARAMS)
    for k1 in PARAMS:
        assert isinstance(h[k1], dict) and set(h[k1]) == set(PARAMS), k1
        for k2 in PARAMS:
            assert np.shape(h[k1][k2]) == np.shape(PARAMS[k1]) + np.shape(PARAMS[k2]), (k1, k2)
            np.testing.assert_allclose(h[k1][k2], want[k1][k2], rtol=1e-6, atol=1e-8,
                                       err_msg=f"H[{k1}][{k2}]")


def test_jvp_of_grad_of_a_dict_gives_dicts():
    t = {"w": rng.standard_normal((2, 3)), "x": rng.standard_normal(3), "b": 0.25}
    g, hv = jvp(grad(net), (PARAMS,), (t,))
    assert isinstance(g, dict) and isinstance(hv, dict) and set(hv) == set(PARAMS)
    want = numeric_hessian_tree(net_grad, PARAMS)
    for k1 in PARAMS:
        np.testing.assert_allclose(g[k1], net_grad(PARAMS)[k1], rtol=1e-12)
        expect = sum(np.tensordot(want[k1][k2], t[k2], axes=np.ndim(t[k2])) for k2 in PARAMS)
        np.testing.assert_allclose(hv[k1], expect, rtol=1e-6, atol=1e-8)


def net_aux(p):
    return net(p), p["b"] * 2


def test_hessian_of_a_dict_with_aux_and_of_several_arguments():
    h, aux = jacfwd(grad(net_aux, has_aux=True), has_aux=True)(PARAMS)
    assert aux == 1.0
    np.testing.assert_allclose(h["w"]["x"], hessian(net)(PARAMS)["w"]["x"], rtol=1e-12)
    g, hv, aux = jvp(grad(net_aux, has_aux=True), (PARAMS,), (PARAMS,), has_aux=True)
    assert aux == 1.0 and set(hv) == set(PARAMS)
    # argnums a tuple: ((H00, H01), (H10, H11)), as JAX nests them
    f = lambda x, y: np.sum(np.sin(x) * y[0]) * np.sum(y ** 2)   # noqa: E731
    x, y = rng.standard_normal(3), rng.standard_normal(2)
    h = hessian(f, (0, 1))(x, y)
    assert [[np.shape(b) for b in row] for row in h] == [[(3, 3), (3, 2)], [(2, 3), (2, 2)]]
    np.testing.assert_allclose(h[0][1], numeric_jacobian(lambda y: grad(f, 0)(x, y), [y], 0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h[1][0], h[0][1].T, rtol=1e-10)


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


@pytest.mark.parametrize("outer, inner", [(jacrev, jacrev), (jacrev, jacfwd),
                                          (jacfwd, jacfwd)],
                         ids=["rev-rev", "rev-fwd", "fwd-fwd"])
def test_every_composition_of_jacobians(outer, inner):
    # reverse mode over a Jacobian's code: the rows (columns) list gets its cotangents back
    x = np.array([0.3, 0.5, -0.7])
    np.testing.assert_allclose(outer(inner(scalar_fn))(x), numeric_jacobian(
        grad(scalar_fn), [x], 0), rtol=1e-6, atol=1e-8)
    want = numeric_jacobian(lambda a: jacfwd(vec_fn, 1)(X, a), [W], 0)
    got = outer(inner(vec_fn, 1), 1)(X, W)
    assert got.shape == (2, 3, 3, 3, 3)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def two_outputs(x, w):
    return np.tanh(w @ x), np.sum(x ** 2) * w[0]


def loss_of_jacfwd(x, w):
    (yx, yw), (sx, sw) = jacfwd(two_outputs, (0, 1))(x, w)
    return np.sum(yw ** 2) + np.sum(sx * yx[0][:, None]) + np.sum(sw * yx[1])


def loss_of_jacrev(x, w):
    (yx, yw), (sx, sw) = jacrev(two_outputs, (0, 1))(x, w)
    return np.sum(yw ** 2) + np.sum(sx * yx[0][:, None]) + np.sum(sw * yx[1])


@pytest.mark.parametrize("loss", [loss_of_jacfwd, loss_of_jacrev])
def test_reverse_over_jacobians_of_several_outputs_and_arguments(loss):
    x, w = rng.standard_normal(3), rng.standard_normal((2, 3))
    gx, gw = grad(loss, (0, 1))(x, w)
    np.testing.assert_allclose(gx, numeric_vjp(loss, [x, w], 0, 1.0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, numeric_vjp(loss, [x, w], 1, 1.0), rtol=1e-6, atol=1e-8)


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


def smooth(x, w):
    """Numba compiles it: a branch on an argument's value, a loop, a matrix product."""
    y = np.tanh(w @ x) * x[0]
    if x[1] > 0:
        y = y * np.exp(-x[2])
    for i in range(2):
        y = y + 0.5 * np.sin(y) * x[i]
    return y


def smooth_loss(x, w):
    return np.sum(smooth(x, w) ** 2)


@pytest.mark.parametrize("make, argnums", [
    (jacfwd, 0), (jacrev, 0), (jacfwd, (0, 1)), (jacrev, (0, 1)), (hessian, 0),
    (lambda f, argnums: jacfwd(jacrev(f, argnums), argnums), 1)],
    ids=["jacfwd", "jacrev", "jacfwd-multi", "jacrev-multi", "hessian", "hessian-w"])
def test_jit_of_jacobians_compiles(make, argnums):
    x, w = np.array([0.3, 0.5, -0.7]), rng.standard_normal((2, 3))
    f = smooth_loss if make is hessian or argnums == 1 else smooth
    t = make(f, argnums)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got = jit(t)(x, w)
        compiled = jit(t)
        compiled(x, w)
        assert compiled.last_backend == "cpu"
    want = jit(t, backend="python")(x, w)
    for g, v in zip(got if isinstance(argnums, tuple) else [got],
                    want if isinstance(argnums, tuple) else [want]):
        assert np.shape(g) == np.shape(v)
        np.testing.assert_allclose(g, v, rtol=1e-12, atol=1e-14)
    if make is hessian:
        np.testing.assert_allclose(got, numeric_jacobian(grad(f), [x, w], 0), rtol=1e-6,
                                   atol=1e-8)


def branch_in_loop(x):
    y = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:        # temporaries assigned in one branch only: None before the first
            y = y + x[i] ** 3
        else:
            y = y + np.sin(x[i])
    return y


def test_jit_of_a_hessian_with_a_branch_in_a_loop_compiles():
    x = np.array([0.5, -0.3, 1.2, -2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        compiled = jit(hessian(branch_in_loop))
        got = compiled(x)
        assert compiled.last_backend == "cpu"
    np.testing.assert_allclose(got, hessian(branch_in_loop)(x), rtol=1e-12)
    np.testing.assert_allclose(got, numeric_jacobian(grad(branch_in_loop), [x], 0), rtol=1e-6,
                               atol=1e-8)


def test_jit_of_jacobians_of_numbers_compiles():
    f = lambda s: np.sin(s) * s ** 3   # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        for make in (jacfwd, jacrev, hessian):
            compiled = jit(make(f))
            np.testing.assert_allclose(compiled(0.7), make(f)(0.7), rtol=1e-12)
            assert compiled.last_backend == "cpu"
    np.testing.assert_allclose(jit(hessian(f))(0.7), numeric_vjp(grad(f), [0.7], 0, 1.0),
                               rtol=1e-6)


def test_jit_of_jacobians_matches():
    x = np.array([0.3, 0.5, -0.7])
    with warnings.catch_warnings():
        # vec_fn's norm(w, axis=0) and np.prod's inlined vjp do not compile under Numba:
        # the function runs as Python (JitFallbackWarning) and the values must agree
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(jit(H)(x), H(x), rtol=1e-12)
        np.testing.assert_allclose(jit(jacfwd(vec_fn))(X, W), jacfwd(vec_fn)(X, W), rtol=1e-12)


def test_jit_of_grad_grad_compiles():
    f = jit(grad(grad(cube)))
    np.testing.assert_allclose(f(0.7), grad(grad(cube))(0.7), rtol=1e-12)
    assert f.last_backend == "cpu"


def test_source_of_a_second_derivative_is_readable():
    x = np.array([0.3, 0.5, -0.7])
    H(x)
    text = strop.source(H)   # the code made for the last call's argument kinds
    assert "def scalar_fn_jacrev_jacfwd(x):" in text
    assert "# line" in text and re.search(r"dx = basis\(x, _i\w*, 0\)", text)
    again = hessian(scalar_fn)
    again(x)
    assert text == strop.source(again)   # deterministic


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


def rebinds_its_arguments(a, b):
    a = a[:2] * b          # rebound, to another shape
    b = b + a[1]
    return np.cos(b) * a


def rebinds_one_argument(a, b):
    b = b + a[1]
    return np.cos(b)


@pytest.mark.parametrize("f", [rebinds_its_arguments, rebinds_one_argument],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("make", [jacfwd, jacrev, hessian], ids=lambda m: m.__name__)
def test_jacobians_of_a_function_rebinding_its_arguments(make, f):
    # each basis vector's trip of the Jacobian's loop ran the body on the arguments the last
    # trip had rebound (b = b + a[1] twice: hessian silently wrong)
    a, b = rng.standard_normal(3), 0.7
    if make is hessian:
        want = numeric_jacobian(lambda x, y: jacrev(f)(x, y), (a, b), 0)
    else:
        want = numeric_jacobian(f, (a, b), 0)
    np.testing.assert_allclose(make(f)(a, b), want, rtol=1e-5, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(jit(make(f))(a, b), want, rtol=1e-5, atol=1e-6)


# --- third order: a derivative over two nested Jacobians' loops ---------------------------
def cubic_terms(x):
    return np.sum(np.sin(x) * x ** 2) + x[0] * x[1] ** 2 * x[2]


def _third_by_differences(f, x, h=1e-4):
    """d/dx_k of the Hessian by central differences of strop's (checked) Hessian."""
    e = np.eye(x.size)
    return np.stack([(hessian(f)(x + h * e[k]) - hessian(f)(x - h * e[k])) / (2 * h)
                     for k in range(x.size)], axis=-1)


@pytest.mark.parametrize("third", [
    lambda f: jacrev(jacrev(jacrev(f))), lambda f: jacfwd(jacrev(jacrev(f))),
    lambda f: jacrev(jacfwd(jacrev(f))), lambda f: jacrev(jacrev(jacfwd(f))),
    lambda f: jacfwd(hessian(f)), lambda f: jacrev(hessian(f))])
def test_third_derivatives_in_every_mode(third):
    # the reverse pass over a Jacobian's loop popped a tape of adjoints nothing filled (the
    # inner rows are read only for their shape); forward mode kept the tangent of a tape
    # the rows' adjoint rebinds
    x = np.array([0.3, 0.7, -0.4])
    np.testing.assert_allclose(third(cubic_terms)(x), _third_by_differences(cubic_terms, x),
                               rtol=1e-6, atol=1e-7)


def test_gradient_of_a_loss_that_holds_a_hessian():
    def loss(w, x):
        H = hessian(lambda z: np.sum(np.tanh(w * z)))(x)
        return np.sum(H ** 2)

    w, x = np.array([0.5, 0.2, 1.3]), np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose(grad(loss)(w, x), numeric_vjp(loss, (w, x), 0, 1.0),
                               rtol=1e-6, atol=1e-9)


def test_jacobian_is_jacrev_as_in_jax():
    assert strop.jacobian is jacrev
    want = numeric_jacobian(vec_fn, [X, W], 0)
    np.testing.assert_allclose(strop.jacobian(vec_fn)(X, W), want, rtol=1e-6, atol=1e-8)
