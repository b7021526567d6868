"""custom_jvp and custom_vjp under vmap and its compositions: vmap batches the function and
its rule, so every composition uses the rule (as in JAX).  Oracle: a Python loop over the
batch of the unbatched transform; rules that differ from the true derivative (100 * t) show
that the rule was used, and the FAQ's safe functions are checked against finite differences
where the naive derivative is NaN."""
import numpy as np
import pytest

import strop
from helpers import numeric_vjp, x64_fixture
from strop import custom_jvp, custom_vjp, grad, jacfwd, jacrev, jit, jvp, vmap

x64 = pytest.fixture(autouse=True)(x64_fixture)

XS = np.array([0.1, 0.4, -0.7, 1.3])
TS = np.array([1.0, -2.0, 0.5, 3.0])


def loop(fn, *args):
    """The oracle: ``fn`` applied to each lane, stacked (tuples of outputs stacked apart)."""
    outs = [fn(*lane) for lane in zip(*args)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o) for o in zip(*outs))
    return np.stack(outs)


# --- rules that are deliberately not the derivative: the result shows which one ran ---

@custom_jvp
def sin100(x):
    return np.sin(x)


@sin100.defjvp
def sin100_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return np.sin(x), 100.0 * np.cos(x) * t


@custom_vjp
def sin100v(x):
    return np.sin(x)


def sin100v_fwd(x):
    return np.sin(x), (x, np.cos(x))     # residuals: a tuple


def sin100v_bwd(res, g):
    x, c = res
    return (100.0 * c * g,)


sin100v.defvjp(sin100v_fwd, sin100v_bwd)


@custom_jvp
def branchy(x):
    return np.abs(x)


@branchy.defjvp
def branchy_jvp(primals, tangents):   # control flow on the (batched) primal
    x, = primals
    t, = tangents
    if x > 0:
        return x, 100.0 * t
    return -x, -100.0 * t


def rule_grad(x):   # what the wrong rules give as a gradient
    return 100.0 * np.cos(x)


CUSTOM = [sin100, sin100v, branchy]
IDS = ["custom_jvp", "custom_vjp-tuple-residuals", "custom_jvp-if"]


@pytest.mark.parametrize("h", CUSTOM, ids=IDS)
def test_vmap_of_grad_uses_the_rule(h):
    got = vmap(grad(h))(XS)
    np.testing.assert_allclose(got, loop(grad(h), XS), rtol=1e-12)
    want = 100.0 * np.sign(XS) if h is branchy else rule_grad(XS)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(vmap(h)(XS), loop(h, XS), rtol=1e-12)


@pytest.mark.parametrize("h", CUSTOM, ids=IDS)
def test_grad_of_vmap_uses_the_rule(h):
    got = grad(lambda x: np.sum(vmap(h)(x)))(XS)
    np.testing.assert_allclose(got, loop(grad(h), XS), rtol=1e-12)
    np.testing.assert_allclose(jacrev(vmap(h))(XS), np.diag(got), rtol=1e-12)


@pytest.mark.parametrize("h", [sin100, branchy], ids=["custom_jvp", "custom_jvp-if"])
def test_jvp_of_vmap_and_vmap_of_jvp_use_the_rule(h):
    want = loop(lambda x, t: jvp(h, (x,), (t,)), XS, TS)
    out, t = jvp(vmap(h), (XS,), (TS,))
    np.testing.assert_allclose(out, want[0], rtol=1e-12)
    np.testing.assert_allclose(t, want[1], rtol=1e-12)
    np.testing.assert_allclose(jacfwd(vmap(h))(XS) @ TS, want[1], rtol=1e-12)
    out, t = vmap(lambda x, t: jvp(h, (x,), (t,)))(XS, TS)   # run lane by lane
    np.testing.assert_allclose(out, want[0], rtol=1e-12)
    np.testing.assert_allclose(t, want[1], rtol=1e-12)
    # forward mode's code (the rule inlined), batched
    np.testing.assert_allclose(vmap(jacfwd(h))(XS) * TS, want[1], rtol=1e-12)
    np.testing.assert_allclose(jit(vmap(jacfwd(h)))(XS) * TS, want[1], rtol=1e-12)


def test_jvp_of_vmap_of_custom_vjp_is_refused_as_in_jax():
    with pytest.raises(strop.errors.TransformError, match="custom_vjp"):
        jvp(vmap(sin100v), (XS,), (TS,))


@pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")
@pytest.mark.parametrize("h", CUSTOM, ids=IDS)
def test_jit_of_vmap_of_grad_compiles_and_uses_the_rule(h):
    f = jit(vmap(grad(h)))
    np.testing.assert_allclose(f(XS), loop(grad(h), XS), rtol=1e-12)
    assert f.last_backend == "cpu"


# --- more arguments: in_axes None, defjvps, nondiff_argnums -------------------------------

@custom_jvp
def prod100(x, y):
    return np.sin(x) * y


prod100.defjvps(lambda x_dot, ans, x, y: 100.0 * np.cos(x) * x_dot * y,
                lambda y_dot, ans, x, y: 100.0 * np.sin(x) * y_dot)


@custom_vjp
def prod100v(x, y):
    return np.sin(x) * y


prod100v.defvjp(lambda x, y: (np.sin(x) * y, (np.cos(x), np.sin(x), y)),
                lambda res, g: (100.0 * res[0] * res[2] * g, 100.0 * res[1] * g))


@pytest.mark.parametrize("h", [prod100, prod100v], ids=["defjvps", "custom_vjp"])
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0)])
def test_in_axes_none_and_two_arguments(h, in_axes):
    y = 1.5 if in_axes[1] is None else XS[::-1] + 2.0
    x = 0.3 if in_axes[0] is None else XS
    args = (x, y)
    batched = [a for a, ax in zip(args, in_axes) if ax is not None]

    def lane(*b):
        it = iter(b)
        return tuple(next(it) if ax is not None else a for a, ax in zip(args, in_axes))

    g2 = grad(h, argnums=(0, 1))
    got = vmap(g2, in_axes=in_axes)(*args)
    want = loop(lambda *b: g2(*lane(*b)), *batched)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    # the other way round: the gradient of a sum over the batch, unbatched arguments summed
    mapped = vmap(h, in_axes=in_axes)
    total = grad(lambda x, y: np.sum(mapped(x, y)), argnums=(0, 1))(*args)
    for i, ax in enumerate(in_axes):
        want_i = want[i] if ax is not None else np.sum(want[i], axis=0)
        np.testing.assert_allclose(total[i], want_i, rtol=1e-12)


def scaled_jvp(k, primals, tangents):
    x, = primals
    t, = tangents
    return scaled(k, x), 100.0 * k * t


def scaled_fun(k, x):
    return k * np.sin(x)


scaled = custom_jvp(scaled_fun, nondiff_argnums=(0,))
scaled.defjvp(scaled_jvp)


def clip_fwd(lo, hi, x):
    return x, None


def clip_bwd(lo, hi, res, g):
    return (np.clip(g, lo, hi),)


def clip_fun(lo, hi, x):
    return x


clip_gradient = custom_vjp(clip_fun, nondiff_argnums=(0, 1))
clip_gradient.defvjp(clip_fwd, clip_bwd)


def scaled_loss(k, x):
    return scaled(k, x) * 2.0


def clipped_loss(lo, x):
    return clip_gradient(lo, 1.0, x) * 5.0


@pytest.mark.parametrize("f", [scaled_loss, clipped_loss], ids=["custom_jvp", "custom_vjp"])
@pytest.mark.parametrize("in_axes", [(None, 0), (0, 0)])
def test_nondiff_argnums(f, in_axes):
    ks = -np.array([0.5, 1.0, 2.0, 3.0])
    k = ks if in_axes[0] == 0 else -2.0
    g = grad(f, argnums=1)
    got = vmap(g, in_axes=in_axes)(k, XS)
    want = loop(g, np.broadcast_to(k, XS.shape), XS)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    mapped = vmap(f, in_axes=in_axes)
    total = grad(lambda x: np.sum(mapped(k, x)))(XS)
    np.testing.assert_allclose(total, want, rtol=1e-12)


# --- the FAQ's safe functions: finite where the naive derivative is NaN --------------------

@custom_jvp
def safe_log(x):
    return np.log(x)


safe_log.defjvps(lambda x_dot, ans, x: np.where(x > 0, x_dot / np.where(x > 0, x, 1.0), 0.0))


@custom_jvp
def log1pexp(x):
    return np.log1p(np.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    ans = log1pexp(x)
    ans_dot = (1 - 1 / (1 + np.exp(x))) * x_dot
    return ans, ans_dot


def naive_log(x):
    return np.log(x)


def naive_log1pexp(x):
    return np.log1p(np.exp(x))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("h, naive, xs, finite", [
    (safe_log, naive_log, np.array([0.0, 0.5, 2.0, 3.0]), [False, True, True, True]),
    (log1pexp, naive_log1pexp, np.array([0.0, 2.0, -3.0, 1000.0]), [True, True, True, False])],
    ids=["safe_log", "log1pexp"])
def test_faq_safe_functions_under_vmap(h, naive, xs, finite):
    assert not np.isfinite(grad(naive)(xs[~np.array(finite)][0]))   # what the rule avoids
    cases = {"vmap(grad)": vmap(grad(h)),
             "grad(sum vmap)": grad(lambda x: np.sum(vmap(h)(x))),
             "jvp(vmap)": lambda x: jvp(vmap(h), (x,), (np.ones_like(x),))[1],
             "jit(vmap(grad))": jit(vmap(grad(h)))}
    want = loop(grad(h), xs)
    assert np.all(np.isfinite(want))
    fd = np.array([numeric_vjp(naive, [x], 0, 1.0) if ok else np.nan
                   for x, ok in zip(xs, finite)])
    ok = np.array(finite)
    np.testing.assert_allclose(want[ok], fd[ok], rtol=1e-6)
    for name, fn in cases.items():
        got = fn(xs)
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=name)


# --- errors name the user's file and line, with the shapes of one example --------------------

@custom_vjp
def bad_shape(x):
    return np.sum(x)


bad_shape.defvjp(lambda x: (np.sum(x), None), lambda res, g: (np.ones(2) * g,))


def sum_of_bad_shape(x):
    return np.sum(vmap(bad_shape)(x))


@pytest.mark.filterwarnings("ignore::strop.errors.JitFallbackWarning")
@pytest.mark.parametrize("make", [lambda: vmap(grad(bad_shape)),
                                  lambda: jit(vmap(grad(bad_shape))),
                                  lambda: grad(sum_of_bad_shape)],
                         ids=["vmap(grad)", "jit(vmap(grad))", "grad(vmap)"])
def test_bwd_of_the_wrong_shape_under_vmap(make):
    with pytest.raises(ValueError, match="shape \\(2,\\) for its differentiable argument 0, "
                                         "which has shape \\(3,\\)") as e:
        make()(np.ones((4, 3)))
    assert "test_custom_vmap.py, line" in str(e.value)   # where bad_shape is defined
