"""Functions with ``*args`` (and keyword-only parameters after them): argnums, vjp/jvp primals
and vmap's in_axes count the arguments as passed, as JAX's do (argnum 0 of ``f(*xs)`` is the
first argument passed, not the tuple).  Oracles: central differences in float64, the python
backend for jit, a loop for vmap."""
import warnings

import numpy as np
import pytest

import strop
from strop import grad, hessian, jacfwd, jacrev, jit, jvp, value_and_grad, vjp, vmap

from .helpers import check_grad, numeric_vjp


@pytest.fixture(autouse=True)
def x64():
    with strop.config.override(enable_x64=True):
        yield


def star(*xs):
    return xs[0] * xs[1] ** 2


def mixed(w, *xs):
    return np.sum(w * np.sin(xs[0])) + np.sum(np.tanh(xs[-1]) * w ** 2)


def keyword_after(w, *xs, scale=1.0):
    return np.sum(w * xs[0] * scale) + np.sum(np.cos(xs[1]))


def whole(*xs):          # the tuple used whole: rebuilt from its arguments
    total = 0.0
    for x in xs:
        total = total + np.sum(x ** 2)
    return total * len(xs) + np.sum(sum(xs))


def tree_item(w, *xs):   # an argument that is itself a pytree
    return np.sum(w * xs[0]["a"]) + np.sum(xs[0]["b"] ** 3) * xs[1]


def _args(rng, *shapes):
    return [rng.normal(size=s) if s else float(rng.normal()) for s in shapes]


def test_the_first_argument_passed_is_argnum_0():
    # d/dx0 (x0 * x1**2) = x1**2 = 9, d/dx1 = 2 * x0 * x1 = 12 (as JAX)
    assert grad(star)(2.0, 3.0) == pytest.approx(9.0)
    assert grad(lambda *xs: xs[0] * xs[1] ** 2)(2.0, 3.0) == pytest.approx(9.0)
    np.testing.assert_allclose(grad(star, argnums=(0, 1))(2.0, 3.0), (9.0, 12.0))
    np.testing.assert_allclose(grad(star, argnums=-1)(2.0, 3.0), 12.0)


@pytest.mark.parametrize("f, shapes, argnums", [
    (star, ((), ()), 0), (star, ((), (), ()), (0, 1)),
    (mixed, ((3,), (3,), (3,)), (0, 1, 2)), (mixed, ((3,), (3,), (), (3,)), 3),
    (mixed, ((3,), (3,)), (1, 0)), (whole, ((2,), (2,), (2,)), (0, 2)),
    (whole, ((2,),), 0),
])
def test_grad_against_differences(f, shapes, argnums):
    args = _args(np.random.default_rng(0), *shapes)
    check_grad(f, *args, argnums=argnums)
    with warnings.catch_warnings():   # `for x in xs` runs as Python (a Numba limit)
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
        got = jit(grad(f, argnums=argnums))(*args)
    want = jit(grad(f, argnums=argnums), backend="python")(*args)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_keyword_only_parameter_after_varargs():
    rng = np.random.default_rng(1)
    w, a, b = rng.normal(size=(3, 4))

    def f(w, a, b):
        return keyword_after(w, a, b, scale=1.5)
    for argnums in (0, 2, (0, 1, 2)):
        got = grad(keyword_after, argnums=argnums)(w, a, b, scale=1.5)
        want = check_grad(f, w, a, b, argnums=argnums)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    value, g = value_and_grad(keyword_after, argnums=1)(w, a, b)
    np.testing.assert_allclose(value, keyword_after(w, a, b))
    np.testing.assert_allclose(g, numeric_vjp(keyword_after, [w, a, b], 1, 1.0), rtol=1e-6)
    with pytest.raises(ValueError, match="out of range for a call with 3 positional"):
        grad(keyword_after, argnums=3)(w, a, b, scale=2.0)


def test_tree_argument_in_varargs():
    rng = np.random.default_rng(2)
    w = rng.normal(size=3)
    tree = {"a": rng.normal(size=3), "b": rng.normal(size=2)}
    g = grad(tree_item, argnums=(1, 2))(w, tree, 0.7)
    for key in tree:
        def f(v, key=key):
            return tree_item(w, {**tree, key: v}, 0.7)
        np.testing.assert_allclose(g[0][key], numeric_vjp(f, [tree[key]], 0, 1.0), rtol=1e-6)
    np.testing.assert_allclose(g[1], numeric_vjp(tree_item, [w, tree, 0.7], 2, 1.0), rtol=1e-6)


def test_out_of_range_argnums_at_call_time():
    with pytest.raises(ValueError, match=r"(?s)argnums 2 out of range for a call with 2 "
                                         r"positional arguments.*test_varargs.py.*def star"):
        grad(star, argnums=2)(2.0, 3.0)
    with pytest.raises(ValueError, match="out of range"):
        jacfwd(star, argnums=(0, -3))(2.0, 3.0)
    assert grad(star, argnums=2)(2.0, 3.0, 4.0) == 0.0   # the third one, when passed


def test_vjp_and_jvp_primals_are_positional():
    rng = np.random.default_rng(3)
    args = _args(rng, (3,), (3,), (3,))
    out, pullback = vjp(mixed, *args)
    np.testing.assert_allclose(out, mixed(*args))
    for i, g in enumerate(pullback(1.0)):
        np.testing.assert_allclose(g, numeric_vjp(mixed, args, i, 1.0), rtol=1e-6)
    tangents = _args(rng, (3,), (3,), (3,))
    out, tan = jvp(mixed, tuple(args), tuple(tangents))
    want = sum(np.sum(numeric_vjp(mixed, args, i, 1.0) * t) for i, t in enumerate(tangents))
    np.testing.assert_allclose(out, mixed(*args))
    np.testing.assert_allclose(tan, want, rtol=1e-6)
    out, tan = jvp(keyword_after, tuple(args), tuple(tangents))   # scale takes its default
    want = sum(np.sum(numeric_vjp(keyword_after, args, i, 1.0) * t)
               for i, t in enumerate(tangents))
    np.testing.assert_allclose(tan, want, rtol=1e-6)


def test_jacobians_and_hessian():
    rng = np.random.default_rng(4)
    args = _args(rng, (3,), (3,), (3,))

    def vec(*xs):
        return np.sin(xs[0]) * xs[1] + xs[2] ** 2
    for jac in (jacfwd, jacrev):
        j0, j2 = jac(vec, argnums=(0, 2))(*args)
        for got, i in ((j0, 0), (j2, 2)):
            want = np.stack([numeric_vjp(vec, args, i, e) for e in np.eye(3)])
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    h = hessian(mixed, argnums=(0, 2))(*args)
    for a, i in enumerate((0, 2)):
        for b, k in enumerate((0, 2)):
            want = np.stack([numeric_vjp(
                lambda *xs: np.sum(grad(mixed, argnums=k)(*xs) * e), args, i, 1.0)
                for e in np.eye(3)])
            np.testing.assert_allclose(h[a][b], want, rtol=1e-5, atol=1e-8)


def test_composition():
    rng = np.random.default_rng(5)
    args = _args(rng, (), (), ())
    g2 = grad(grad(star, argnums=1), argnums=(0, 1))(*args)   # d2/dx1dx0 = 2 x1, d2/dx1^2 = 2 x0
    np.testing.assert_allclose(g2, (2 * args[1], 2 * args[0]), rtol=1e-12)
    xs = rng.normal(size=(4, 3))
    w = rng.normal(size=3)
    batched = vmap(grad(mixed, argnums=(0, 1)), in_axes=(None, 0, 0))(w, xs, xs[::-1])
    for k in range(4):
        want = grad(mixed, argnums=(0, 1))(w, xs[k], xs[3 - k])
        np.testing.assert_allclose(batched[0][k], want[0], rtol=1e-12)
        np.testing.assert_allclose(batched[1][k], want[1], rtol=1e-12)
    text = strop.source(_called(grad(star, argnums=1)))
    code = [ln for ln in text.splitlines() if not ln.strip().startswith("#")]
    assert "def star_grad(xs_0, xs_1):" in code and not any("xs[" in ln for ln in code)


def _called(g):
    g(2.0, 3.0)
    return g


@pytest.mark.parametrize("compiled", [False, True])
def test_vmap_in_axes_count_arguments_as_passed(compiled):
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(2, 5, 3))
    w = rng.normal(size=3)
    wrap = jit if compiled else (lambda f: f)
    got = wrap(vmap(mixed, in_axes=(None, 0, 1)))(w, a, b.T)
    np.testing.assert_allclose(got, [mixed(w, a[k], b[k]) for k in range(5)], rtol=1e-12)
    got = wrap(vmap(star, in_axes=(0, None)))(a[:, 0], 2.0)
    np.testing.assert_allclose(got, [star(a[k, 0], 2.0) for k in range(5)], rtol=1e-12)
    got = wrap(vmap(keyword_after))(a, a, b)
    np.testing.assert_allclose(got, [keyword_after(a[k], a[k], b[k]) for k in range(5)])
    with pytest.raises(ValueError, match="len.in_axes.=2, len.args.=3"):
        vmap(mixed, in_axes=(None, 0))(w, a, b)
    with pytest.raises(ValueError, match="keyword-only argument 'scale'"):
        vmap(keyword_after)(a, a, b, scale=w)


def test_jit_static_varargs_and_inner_checks():
    args = (2.0, 3.0, 5.0)
    for static in ((), (1,), (0, 2)):
        got = jit(grad(keyword_after, argnums=0), static_argnums=static)(*args, scale=2.0)
        want = grad(keyword_after, argnums=0)(*args, scale=2.0)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(jit(star, static_argnums=1)(2.0, 3.0), star(2.0, 3.0))
    # grad's own checks run under jit with static arguments too
    with pytest.raises(TypeError, match="requires real-valued"):
        jit(grad(keyword_after), static_argnums=1)(2, 3.0, 5.0)
    with pytest.raises(TypeError, match="requires real-valued"):
        jit(grad(star, argnums=1), static_argnums=0)(2.0, 3)
    with pytest.raises(ValueError, match="out of range"):
        jit(star, static_argnums=3)(2.0, 3.0)


def _inside(a, b):
    return grad(mixed, argnums=1)(a, b, a) * a   # staged for the three arguments passed


def test_called_inside_a_transformed_function():
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=3), rng.normal(size=3)

    def loss(a, b):
        return np.sum(_inside(a, b))
    check_grad(loss, a, b, argnums=(0, 1))
    np.testing.assert_allclose(jit(_inside, backend="python")(a, b), _inside(a, b))
