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


# --- iteration builtins: sorted, reversed, zip, enumerate, dict items ----------------------

def sorted_items(x):
    d = {"b": x, "a": x * 2.0, "c": np.sin(x)}
    s = 0.0
    for k, v in sorted(d.items(), key=itemgetter(0)):
        s = s * 3.0 + v * v
    return s


def sorted_items_lambda(x):
    d = {"b": x, "a": x * 2.0, "c": np.sin(x)}
    s = 0.0
    for k, v in sorted(d.items(), key=lambda kv: kv[0], reverse=True):
        s = s * 3.0 + v
    return s


def dict_items_loop(x):
    d = {"b": x, "a": x * 2.0}
    s = 0.0
    for k, v in d.items():
        s = s * 3.0 + v * x
    return s


def reversed_loop(x):
    s = 0.0
    for v in reversed([x, 2.0 * x, np.cos(x)]):
        s = s * 3.0 + v
    return s


def zip_enumerate(x):
    s = 0.0
    for i, (u, v) in enumerate(zip(x, x[::-1])):
        s = s + i * u * v
    return s


def enumerate_zip_reversed(x):
    s = 0.0
    for (i, u), v in zip(enumerate(x, 1), reversed(x)):
        s = s + i * u * v ** 2
    return s


def enumerate_pairs(x):
    pairs = [(x[0], x[1]), (x[1], x[2])]
    s = 0.0
    for j, (a, b) in enumerate(pairs):
        s = s + (j + 1.0) * a * b
    return s


@pytest.mark.parametrize("f", [sorted_items, sorted_items_lambda, dict_items_loop,
                               reversed_loop])
def test_iteration_scalar(f):
    check_all(f, 0.4, rng.standard_normal(3), compiles=False)


@pytest.mark.parametrize("f", [zip_enumerate, enumerate_zip_reversed, enumerate_pairs])
def test_iteration_array(f):
    check_all(f, rng.standard_normal(3), rng.standard_normal((4, 3)), compiles=False)


# the iterator builtins as values (grad and jvp; their vmap is lane by lane)
def dict_of_zip(x):
    d = dict(zip(["a", "b", "a"], [x, 2.0 * x, 3.0 * x]))
    return d["b"] * x + d["a"]


def list_of_zip(x):
    pairs = list(zip([x, 3.0], [2.0 * x, x]))
    return pairs[0][1] * pairs[1][1]


def list_of_reversed(x):
    return list(reversed([x, 3.0 * x]))[0] * 2.0


def list_of_enumerate(x):
    return list(enumerate([x, 3.0 * x]))[1][1] * 2.0


def sum_of_sorted(x):
    return sum(v * v for v in sorted([x, 3.0 * x, 2.0]))


def sorted_reverse(x):
    ys = sorted([x, 3.0 * x, 2.0], reverse=True)
    return ys[0] + 10.0 * ys[1] + 100.0 * ys[2]


def sorted_array(x):
    return np.sum(np.array(sorted(x)) * np.arange(3.0))


@pytest.mark.parametrize("f, x", [(dict_of_zip, 0.4), (list_of_zip, 0.4),
                                  (list_of_reversed, 0.4), (list_of_enumerate, 0.4),
                                  (sum_of_sorted, 0.4), (sorted_reverse, 0.4),
                                  (sorted_reverse, 1.5), (sorted_array, np.array([0.3, -.2, .1]))])
def test_iterator_values(f, x):
    check_grad(f, x)
    t = np.ones_like(x)
    _, tan = jvp(f, (x,), (t if np.ndim(x) else 1.0,))
    np.testing.assert_allclose(tan, np.sum(numeric_vjp(f, [x], 0, 1.0) * t), rtol=1e-6)
    np.testing.assert_allclose(jit(f, backend="python")(x), f(x), rtol=1e-12)


# --- *args and **kwargs in calls, and functions defined with them -------------------------

def three(a, b, c):
    return a * b + c


def varargs(*args):
    return args[0] * args[-1] + len(args)


def keyword_only(a, *, scale=2.0, shift=0.0):
    return a * scale + shift


def keywords(a, **kw):
    return a * kw["s"] + kw.get("t", 0.0)


def star_local(x):
    rest = (2.0, np.sin(x))
    return three(x, *rest)


def star_first(x):
    t = (x, x * 2.0)
    return three(*t, 1.0)


def star_star_local(x):
    kw = {"b": x, "c": 1.0}
    return three(x, **kw)


def star_into_varargs(x):
    t = (x, np.sin(x), 3.0)
    return varargs(*t) + varargs(x, *t)


def star_numpy(x):
    return np.maximum(*(x, 2.0 * x)) + np.hypot(*[x, 1.5])


def keyword_params(x):
    return keyword_only(x, scale=3.0) + keyword_only(x, **{"shift": x}) + keywords(x, s=3.0, t=x)


def star_in_loop(x):
    t = (x,)
    y = 0.0
    for i in range(3):   # t is rebound in the loop: its length is checked when the code runs
        y = y + three(*t, 1.0, 2.0) if len(t) == 1 else y + three(*t, 1.0)
        t = (x, np.cos(x))
    return y


def star_branches(x):
    t = (x, 1.0) if x > 0 else (x, 2.0)
    return three(*t, x)


def star_lambda(x):
    g = lambda a, *r: a * sum(r)   # noqa: E731
    return g(x, *(x, 2.0))


@pytest.mark.parametrize("f, compiles", [
    (star_local, True), (star_first, True), (star_star_local, True),
    (star_into_varargs, True), (star_numpy, True), (keyword_params, True),
    (star_in_loop, False), (star_branches, True), (star_lambda, False)])
def test_star_arguments(f, compiles):
    check_all(f, 0.7, np.array([0.3, -0.5, 1.1]), compiles)


def star_argument(x, t):
    return three(x, *t)


def test_star_tuple_argument():
    check_grad(star_argument, 0.7, (2.0, 3.0))
    _, tan = jvp(lambda y: star_argument(y, (2.0, 3.0)), (0.7,), (1.0,))
    np.testing.assert_allclose(tan, 2.0, rtol=1e-12)
    with pytest.raises(TypeError, match="length 2 expected"):
        jit(star_argument, backend="python")(0.7, (2.0, 3.0, 4.0))


def star_unknown(x, t):
    return np.hypot(*t) * x


def test_star_of_unknown_length_is_refused():
    with pytest.raises(TransformError, match="length of a \\*argument is not known"):
        grad(star_unknown)(0.7, (1.0, 2.0))


# --- local functions given to a transform inside a transformed function --------------------

def closure_grad(x):
    def g(y):
        return y * x
    return grad(g)(x)   # d/dy at y = x is x; the derivative also flows through the closed x


def closure_array(x):
    w = np.sin(x)

    def g(y):
        return np.sum(y * w) ** 2
    return np.sum(grad(g)(x * 2.0))


def closure_value_and_grad(x):
    g = lambda y: np.sum(np.tanh(y * x))   # noqa: E731
    v, d = strop.value_and_grad(g)(x)
    return v + np.sum(d)


def closure_vmap(x):
    g = lambda y: y * np.sum(x)   # noqa: E731
    return np.sum(vmap(g)(x))


def test_closure_scalar():
    check_all(closure_grad, 0.7, np.array([0.3, -0.5, 1.1]))


@pytest.mark.parametrize("f", [closure_array, closure_value_and_grad, closure_vmap])
def test_closure_array(f):
    check_all(f, rng.standard_normal(3), rng.standard_normal((2, 3)))


def test_jacobian_helpers_adjoint():
    """jac_rev_vjp / jac_fwd_vjp are linear, adjoint to jac_rev / jac_fwd: their rules (which
    jacrev(jacrev(f)) inside grad differentiates) satisfy <A g, h> = <g, A^T h>."""
    from strop import runtime as rf
    from strop.transformer.rules import evaluate_jvp, evaluate_vjp
    out, xs = np.zeros((2, 3)), (np.zeros(4), 0.0)

    def inner(a, b):
        return sum(np.sum(np.multiply(p, q)) for u, v in zip(a, b)
                   for p, q in (zip(u, v) if isinstance(u, tuple) else [(u, v)]))
    rows = [tuple(rng.standard_normal(np.shape(x)) for x in xs) for _ in range(6)]
    cols = [rng.standard_normal(out.shape) for _ in range(5)]
    for vjp_fn, fn, parts, h in [
            (rf.jac_rev_vjp, rf.jac_rev, rows,
             [tuple(rng.standard_normal(np.shape(x)) for x in xs) for _ in range(6)]),
            (rf.jac_fwd_vjp, rf.jac_fwd, cols, [rng.standard_normal(out.shape) for _ in range(5)])]:
        g = tuple(rng.standard_normal(np.shape(b)) for b in fn(parts, out, xs, True))
        ans = vjp_fn(g, parts, out, xs, True)
        back = evaluate_vjp(vjp_fn, "v", h, ans, g, parts, out, xs, True)
        np.testing.assert_allclose(inner(ans, h), inner(g, back), rtol=1e-12)
        tangent = evaluate_jvp(vjp_fn, {"v": g}, ans, g, parts, out, xs, True)
        np.testing.assert_allclose(inner(tangent, h), inner(ans, h), rtol=1e-12)
