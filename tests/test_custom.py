"""custom_jvp and custom_vjp, honoured by grad, jvp, the Jacobians and jit; called directly they
run the function.  The FAQ's safe log: its derivative 0 where x <= 0 rather than NaN."""
import numpy as np
import pytest

import strop
from helpers import numeric_vjp, x64_fixture
from strop import custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jit, jvp

x64 = pytest.fixture(autouse=True)(x64_fixture)


@custom_jvp
def safe_log(x):
    return np.log(x)


@safe_log.defjvp
def safe_log_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return safe_log(x), np.where(x > 0, x_dot / np.where(x > 0, x, 1.0), 0.0)


def loss(x):
    return np.sum(np.where(x > 0, safe_log(x), 0.0) * x)


def loss_numpy(x):
    return np.sum(np.where(x > 0, np.log(np.where(x > 0, x, 1.0)), 0.0) * x)


def test_called_directly_runs_the_function():
    assert safe_log(2.0) == np.log(2.0)
    assert repr(safe_log).startswith("<custom_jvp")


def test_safe_log_under_grad():
    assert grad(safe_log)(2.0) == 0.5
    with np.errstate(all="ignore"):
        assert grad(safe_log)(0.0) == 0.0   # np.log would give inf
    x = np.array([0.5, 2.0, 3.0])
    np.testing.assert_allclose(grad(loss)(x), numeric_vjp(loss_numpy, [x], 0, 1.0), rtol=1e-6)
    with np.errstate(all="ignore"):
        assert np.all(np.isfinite(grad(loss)(np.array([0.0, -1.0, 2.0]))))


def test_safe_log_under_jvp_and_jacobians():
    out, t = jvp(safe_log, (2.0,), (3.0,))
    assert (out, t) == (np.log(2.0), 1.5)
    x = np.array([0.5, 2.0, 3.0])
    f = lambda x: safe_log(x) * x   # noqa: E731
    np.testing.assert_allclose(jacfwd(f)(x), np.diag(np.log(x) + 1), rtol=1e-12)
    np.testing.assert_allclose(jacrev(f)(x), np.diag(np.log(x) + 1), rtol=1e-12)
    np.testing.assert_allclose(hessian(loss)(x), np.diag(1 / x), rtol=1e-10)


def test_grad_grad_uses_the_rule():
    np.testing.assert_allclose(grad(grad(safe_log))(2.0), -0.25, rtol=1e-12)


@pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")
def test_under_jit_runs_the_primal():
    f = jit(lambda x: safe_log(x) * 2.0)
    assert f(2.0) == 2 * np.log(2.0)
    assert f.last_backend == "cpu"


def safe_log_times(x):
    return safe_log(x) * x


@pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")
@pytest.mark.parametrize("f, x", [(loss, np.array([0.5, 2.0, 3.0])), (safe_log_times, 2.0),
                                  (lambda x: f_defjvps(x, 2.0), 0.3)],
                         ids=["custom_jvp", "custom_jvp-number", "defjvps"])
def test_jit_of_grad_through_custom_jvp_compiles(f, x):
    g = jit(grad(f))
    np.testing.assert_allclose(g(x), jit(grad(f), backend="python")(x), rtol=1e-12)
    assert g.last_backend == "cpu"
    np.testing.assert_allclose(g(x), numeric_vjp(f, [x], 0, 1.0), rtol=1e-6)


@custom_jvp
def f_defjvps(x, y):
    return np.sin(x) * y


f_defjvps.defjvps(lambda x_dot, ans, x, y: np.cos(x) * x_dot * y,
                  lambda y_dot, ans, x, y: np.sin(x) * y_dot)


def test_defjvps():
    x, y = 0.3, 2.0
    _, t = jvp(f_defjvps, (x, y), (1.0, 0.5))
    np.testing.assert_allclose(t, np.cos(x) * y + np.sin(x) * 0.5)
    gx, gy = grad(f_defjvps, (0, 1))(x, y)
    np.testing.assert_allclose([gx, gy], [np.cos(x) * y, np.sin(x)])


def scaled_jvp(k, primals, tangents):
    x, = primals
    t, = tangents
    return scaled(k, x), k * np.cos(x) * t


@custom_jvp
def scaled(k, x):
    return k * np.sin(x)


scaled = custom_jvp(scaled.fun, nondiff_argnums=(0,))
scaled.defjvp(scaled_jvp)


def test_nondiff_argnums_jvp():
    np.testing.assert_allclose(jvp(lambda x: scaled(3.0, x), (0.2,), (1.0,))[1],
                               3 * np.cos(0.2))
    np.testing.assert_allclose(grad(lambda x: scaled(3.0, x))(0.2), 3 * np.cos(0.2))


@custom_vjp
def clip_gradient(lo, hi, x):
    return x


def clip_fwd(lo, hi, x):
    return x, None


def clip_bwd(lo, hi, res, g):
    return (np.clip(g, lo, hi),)


clip_gradient = custom_vjp(clip_gradient.fun, nondiff_argnums=(0, 1))
clip_gradient.defvjp(clip_fwd, clip_bwd)


def test_custom_vjp_with_nondiff_argnums():
    f = lambda x: np.sum(clip_gradient(-1.0, 1.0, x) * 5.0)   # noqa: E731
    np.testing.assert_allclose(grad(f)(np.array([1.0, 2.0])), [1.0, 1.0])
    assert clip_gradient(-1.0, 1.0, 3.0) == 3.0


@custom_vjp
def cube(x):
    return x ** 3


def cube_fwd(x):
    return x ** 3, x ** 2


def cube_bwd(x2, g):
    return (3 * x2 * g,)


cube.defvjp(cube_fwd, cube_bwd)


@pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")
def test_custom_vjp_residuals_and_second_order():
    assert grad(cube)(2.0) == 12.0
    np.testing.assert_allclose(grad(grad(cube))(2.0), 12.0)   # fwd and bwd differentiated
    np.testing.assert_allclose(jacrev(lambda x: cube(x) * x)(np.array([1.0, 2.0])),
                               np.diag([4.0, 32.0]))
    compiled = jit(grad(cube))
    np.testing.assert_allclose(compiled(2.0), 12.0)
    assert compiled.last_backend == "cpu"


def numeric_jacobian(f, x, eps=1e-6):
    """Central differences of a vector function of a vector (float64)."""
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = eps
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    return np.stack(cols, axis=-1)


def cube_sin(x):
    return np.sum(cube(x) * np.sin(x))


def cube_sin_grad(x):   # by hand: the gradient jacrev computes with cube_bwd
    return 3 * x ** 2 * np.sin(x) + x ** 3 * np.cos(x)


def clipped_square(x):
    return np.sum(clip_gradient(-1.0, 1.0, x) ** 2)


def clipped_square_grad(x):   # the gradient clip_bwd defines (not the true one: 2 x)
    return np.clip(2 * x, -1.0, 1.0)


@pytest.mark.parametrize("f, df", [(cube_sin, cube_sin_grad),
                                   (clipped_square, clipped_square_grad)])
def test_hessian_through_custom_vjp(f, df):
    # forward over reverse: the reverse code calls fwd and bwd, differentiated as ordinary
    # code (as in JAX, where an outer transform traces through fwd and bwd)
    x = np.array([0.3, -0.2, 1.5, 0.9])
    want = numeric_jacobian(df, x)
    np.testing.assert_allclose(jacrev(f)(x), df(x), rtol=1e-12)
    np.testing.assert_allclose(hessian(f)(x), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(jacrev(f))(x), want, rtol=1e-6, atol=1e-8)
    v = np.array([1.0, -2.0, 0.5, 0.25])
    np.testing.assert_allclose(jvp(grad(f), (x,), (v,))[1], want @ v, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacrev(jacrev(f))(x), want, rtol=1e-6, atol=1e-8)


@pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")
@pytest.mark.parametrize("f, df", [(cube_sin, cube_sin_grad),
                                   (clipped_square, clipped_square_grad)])
def test_jit_of_grad_through_custom_vjp_compiles(f, df):
    x = np.array([0.3, -0.2, 1.5, 0.9])
    g = jit(grad(f))
    np.testing.assert_allclose(g(x), jit(grad(f), backend="python")(x), rtol=1e-12)
    assert g.last_backend == "cpu"
    np.testing.assert_allclose(g(x), df(x), rtol=1e-12)


def test_grad_runs_fwd_in_its_forward_sweep():
    text = strop.source(grad(cube_sin))
    assert "cube_fwd(x)[0]" in text and "cube_bwd(" in text


def test_custom_vjp_refuses_forward_mode():
    with pytest.raises(strop.errors.TransformError, match="custom_vjp.*reverse mode only"):
        jvp(cube, (2.0,), (1.0,))


@custom_vjp
def bad(x):
    return x


bad.defvjp(lambda x: (x, None), lambda res, g: g)


@pytest.mark.filterwarnings("ignore::strop.errors.JitFallbackWarning")  # Numba cannot index
def test_bwd_must_return_a_tuple():                                    # the float bwd returns
    with pytest.raises(TypeError, match="must return a tuple of 1 cotangent"):
        grad(bad)(1.0)
    with pytest.raises(TypeError, match="must return a tuple of 1 cotangent"):
        jit(grad(bad))(1.0)   # compiled, the error is the same


@custom_vjp
def bad_shape(x):
    return np.sum(x)


bad_shape.defvjp(lambda x: (np.sum(x), None), lambda res, g: (np.ones(2) * g,))


def test_bwd_cotangent_of_the_wrong_shape():
    for g in (grad(bad_shape), jit(grad(bad_shape))):
        with pytest.raises(ValueError, match="shape \\(2,\\) for its differentiable argument 0, "
                                             "which has shape \\(3,\\)"):
            g(np.ones(3))


def cube_twice(x):
    return cube(x) * 2   # forward mode reaches a custom_vjp function here


def test_forward_mode_of_custom_vjp_is_a_type_error_as_in_jax():
    # JAX: TypeError "can't apply forward-mode autodiff (jvp) to a custom_vjp function."
    for call in (lambda: jvp(cube_twice, (2.0,), (1.0,)),
                 lambda: jacfwd(cube_twice)(np.array([1.0, 2.0]))):
        with pytest.raises(TypeError, match="custom_vjp") as info:
            call()
        assert isinstance(info.value, strop.errors.StropError)
        assert info.value.location.lineno == cube_twice.__code__.co_firstlineno + 1
