"""Transforms called inside transformed code, and the program shapes around them that real
programs have (JAX's examples: kernel least squares, GP regression, ADVI, DP-SGD, MAML, the
autodiff cookbook): each gradient against central differences of the plain function, each
jit against the python backend with no fallback, each vmap against a Python loop.

The code a nested transform gets is made for what its arguments are known to be where it is
called (transformer/call_kinds.py): these tests also read the generated source for what
must not be there (lane by lane ``each()``, rank-generic helpers inlined)."""
import collections
import functools
import warnings

import numpy as np
import pytest

import strop
from helpers import assert_tree_allclose, check_grad, numeric_grad_tree, x64_fixture
from strop import grad, jit, jvp, random, vmap
from strop.errors import JitFallbackWarning, TransformError
from strop.tree_util import tree_map

x64 = pytest.fixture(autouse=True)(x64_fixture)

rng = np.random.RandomState(7)
XS = rng.randn(5, 3)
PARAMS = [(rng.randn(4, 3) * 0.5, rng.randn(4) * 0.1), (rng.randn(2, 4) * 0.5, rng.randn(2) * 0.1)]


def compiled(f, *args):
    """``f(*args)`` compiled, failing on a fallback to the python backend."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        out = f(*args)
    assert f.last_backend == "cpu"
    return out


# --- nested vmaps of lambdas over a function passed as a value (kernel_lsq, GP) -----------
def linear_kernel(x, y):
    return np.dot(x, y)


def gram(kernel, xs):
    return vmap(lambda x: vmap(lambda y: kernel(x, y))(xs))(xs)


def kernel_risk(v, xs):
    k = jit(functools.partial(gram, linear_kernel))(xs)
    return 0.5 * np.sum((k @ v - 1.0) ** 2)


def test_nested_vmaps_of_lambdas_over_a_kernel_passed_in_differentiate_and_compile():
    v = rng.randn(5)
    want = numeric_grad_tree(kernel_risk, (v, XS), 0)
    assert_tree_allclose(grad(kernel_risk)(v, XS), want, rtol=1e-6, atol=1e-8)
    f = jit(grad(kernel_risk))
    assert_tree_allclose(compiled(f, v, XS), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jit(functools.partial(gram, linear_kernel))(XS), XS @ XS.T,
                               rtol=1e-12)
    assert "each(" not in strop.source(f)


# --- vmap of a per-example function over a list of (w, b) inside the loss (quickstart) -----
def predict(params, x):
    h = x
    for w, b in params[:-1]:
        h = np.tanh(np.dot(w, h) + b)
    w, b = params[-1]
    return np.dot(w, h) + b


batched_predict = vmap(predict, in_axes=(None, 0))


def batched_loss(params, xs):
    return np.sum(batched_predict(params, xs) ** 2)


@jit
def sgd_update(params, xs):
    grads = grad(batched_loss)(params, xs)
    return [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(params, grads)]


def test_vmap_over_a_parameter_list_inside_jit_grad_is_batched_and_compiles():
    want = numeric_grad_tree(batched_loss, (PARAMS, XS), 0)
    f = jit(grad(batched_loss))
    assert_tree_allclose(compiled(f, PARAMS, XS), want, rtol=1e-6, atol=1e-8)
    src = strop.source(f)
    assert "each(" not in src and "matmul_lanes" not in src


def test_grad_inside_a_jitted_update_gives_the_parameters_structure_back():
    got = compiled(sgd_update, PARAMS, XS)
    want = [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in
            zip(PARAMS, numeric_grad_tree(batched_loss, (PARAMS, XS), 0))]
    assert_tree_allclose(got, want, rtol=1e-6, atol=1e-8)


# --- partials: of a function passed in, of computed values, a global partial object ------
def gauss_logpdf(x, mean, log_std):
    return -0.5 * ((x - mean) / np.exp(log_std)) ** 2 - log_std


def elbo(logprob, key, params):
    mean, log_std = params
    sample = mean + np.exp(log_std) * random.normal(key, mean.shape)
    return logprob(sample) - np.sum(vmap(gauss_logpdf)(sample, mean, log_std))


def funnel(z):
    return -0.5 * np.sum(z ** 2) - 0.1 * z[0] * z[1]


def batch_elbo(params, seed):
    keys = random.split(random.PRNGKey(seed), 4)
    vectorized = vmap(functools.partial(elbo, funnel), in_axes=(0, None))
    return np.mean(vectorized(keys, params))


def test_vmap_of_a_partial_binding_a_function_samples_per_key_and_differentiates():
    params = (np.array([0.1, -0.2]), np.array([0.05, -0.1]))
    got = grad(batch_elbo)(params, 3)
    assert_tree_allclose(got, numeric_grad_tree(batch_elbo, (params, 3), 0), rtol=1e-6,
                         atol=1e-8)
    assert_tree_allclose(compiled(jit(grad(batch_elbo), static_argnums=1), params, 3), got,
                         rtol=1e-10, atol=1e-12)


def clipped_grads(params, xs):
    def clipped(p, x):
        g = grad(lambda q: np.sum(predict(q, x) ** 2))(p)
        norm = np.sqrt(sum(np.sum(leaf ** 2) for leaf in strop.tree_util.tree_leaves(g)))
        return tree_map(lambda leaf: leaf / np.maximum(norm, 1.0), g)
    per_example = vmap(functools.partial(clipped, params))   # values the code computes
    return per_example(xs)


def test_a_name_bound_to_vmap_of_a_partial_of_computed_values_is_called_later():
    got = clipped_grads(PARAMS, XS)
    for i, x in enumerate(XS):
        g = grad(lambda q: np.sum(predict(q, x) ** 2))(PARAMS)
        norm = np.sqrt(sum(np.sum(leaf ** 2) for leaf in strop.tree_util.tree_leaves(g)))
        assert_tree_allclose(tree_map(lambda a: a[i], got),
                             tree_map(lambda leaf: leaf / max(norm, 1.0), g), rtol=1e-10)


def posterior(params, xs, scale=1.0, marginal=False):
    if marginal:
        return np.sum(np.logaddexp(xs @ params['w'], 0.0)) * scale
    return xs @ params['w'] + np.mean(xs)   # (a branch a partial's constant drops)


marginal_posterior = functools.partial(posterior, marginal=True, scale=2.0)


def gp_loss(params, xs):
    return marginal_posterior(params, xs)


def test_a_global_partial_object_is_called_as_its_function_with_what_it_binds():
    params = {'w': rng.randn(3)}
    want = numeric_grad_tree(gp_loss, (params, XS), 0)
    assert_tree_allclose(grad(gp_loss)(params, XS), want, rtol=1e-6, atol=1e-8)
    assert_tree_allclose(compiled(jit(grad(marginal_posterior)), params, XS), want,
                         rtol=1e-6, atol=1e-8)


# --- tree_map over gradients the code made (MAML's inner SGD step) -------------------------
def inner_step(p, x):
    grads = grad(lambda q: np.sum(predict(q, x) ** 2))(p)
    return tree_map(lambda g, w: w - 0.05 * g, grads, p)


def maml_objective(p, x):
    return np.sum(predict(inner_step(p, x), x) ** 2)


def test_tree_map_over_a_gradient_display_is_differentiated_leaf_by_leaf():
    x = XS[0]
    want = numeric_grad_tree(maml_objective, (PARAMS, x), 0)
    assert_tree_allclose(grad(maml_objective)(PARAMS, x), want, rtol=1e-5, atol=1e-7)


# --- loops over a list of functions (stax's serial, a table of derivatives) ---------------
ACTIVATIONS = [np.tanh, np.sin, lambda z: z ** 2]


def through_table(params, x):
    for act, (w, b) in zip(ACTIVATIONS, params):   # (zip stops at the shorter)
        x = act(w @ x + b)
    return np.sum(x ** 2)


def test_a_loop_over_a_list_of_functions_inlines_each_and_is_retransformed_when_it_changes():
    x = XS[0]
    f = grad(through_table)
    want = numeric_grad_tree(through_table, (PARAMS, x), 0)
    assert_tree_allclose(f(PARAMS, x), want, rtol=1e-6, atol=1e-8)
    ACTIVATIONS[1] = np.cos    # an item replaced: the code is made again
    try:
        assert_tree_allclose(f(PARAMS, x), numeric_grad_tree(through_table, (PARAMS, x), 0),
                             rtol=1e-6, atol=1e-8)
    finally:
        ACTIVATIONS[1] = np.sin


def stax_serial(*layers):
    apply_funs = [layer[1] for layer in layers]

    def apply_fun(params, inputs, **kwargs):
        for fun, param in zip(apply_funs, params):
            inputs = fun(param, inputs, **kwargs)
        return inputs
    return apply_fun


dense = (None, lambda p, x, **kw: x @ p[0] + p[1])
relu = (None, lambda p, x, **kw: np.maximum(x, 0.0))
net = stax_serial(dense, relu, dense)


def stax_loss(params, xs):
    return np.sum(net(params, xs) ** 2)


def test_stax_serial_apply_over_a_closure_list_with_kwargs_differentiates():
    params = [(rng.randn(3, 4), rng.randn(4)), (), (rng.randn(4, 2), rng.randn(2))]
    want = numeric_grad_tree(stax_loss, (params, XS), 0)
    assert_tree_allclose(grad(stax_loss)(params, XS), want, rtol=1e-6, atol=1e-8)


# --- jvp of grad inside differentiated code (the cookbook's Hessian-vector product) -------
def energy(x):
    return np.sum(np.tanh(x) ** 2)


def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def curvature(x, v):
    return np.vdot(v, hvp(energy, (x,), (v,)))


def test_jvp_of_grad_with_primals_held_by_names_differentiates_and_compiles():
    x, v = rng.randn(2, 3), rng.randn(2, 3)
    want = numeric_grad_tree(curvature, (x, v), 0)
    assert_tree_allclose(grad(curvature)(x, v), want, rtol=1e-5, atol=1e-7)
    assert_tree_allclose(compiled(jit(grad(curvature)), x, v), want, rtol=1e-5, atol=1e-7)


# --- what vmap inside another transform's code meets ---------------------------------------
def second_derivative_residual(params, xs):
    def u(p, t):
        h = np.array([t])
        w, b = p
        return np.sum(np.tanh(w @ h + b))
    return vmap(grad(grad(u, argnums=1), argnums=1), in_axes=(None, 0))(params, xs)


def test_vmap_of_a_second_derivative_over_points_runs_batched():
    params = (rng.randn(4, 1), rng.randn(4))
    ts = np.linspace(-1, 1, 5)
    got = vmap(lambda t: second_derivative_residual(params, np.array([t]))[0])(ts)
    want = np.array([second_derivative_residual(params, np.array([t]))[0] for t in ts])
    np.testing.assert_allclose(got, want, rtol=1e-10)
    f = vmap(grad(grad(lambda p, t: np.sum(np.tanh(p[0] @ np.array([t]) + p[1])),
                       argnums=1), argnums=1), in_axes=(None, 0))
    np.testing.assert_allclose(f(params, ts), want, rtol=1e-10)
    assert "each(" not in strop.source(f)


def rank_changes_later(x, n):
    h = x
    total = 0.0
    for _ in range(n):
        total = total + np.sum(vmap(lambda r: r * 2.0)(h))
        h = np.sum(h, axis=0)    # rebound to a lower rank after the call was staged
    return total


def test_a_rank_that_does_not_hold_for_the_whole_function_is_not_assumed():
    x = rng.randn(3, 2)
    want = 2.0 * np.sum(x) * 2
    assert rank_changes_later(x, 2) == pytest.approx(want)
    assert jit(rank_changes_later, static_argnums=1, backend="python")(x, 2) == \
        pytest.approx(want)


# --- compiled pieces these programs need ----------------------------------------------------
def embedding_loss(table, tokens):
    return np.sum(np.sin(table[tokens]))


def test_compiled_gradient_of_an_embedding_lookup_accumulates_repeated_tokens():
    table = rng.randn(6, 3)
    tokens = np.array([[0, 1, 1], [3, 0, 5]])   # a 2-D index with repeats
    want = numeric_grad_tree(embedding_loss, (table, tokens), 0)
    assert_tree_allclose(compiled(jit(grad(embedding_loss)), table, tokens), want,
                         rtol=1e-6, atol=1e-8)


def test_compiled_vdot_of_matrices_bernoulli_masks_and_0d_sums():
    a, b = rng.randn(2, 3), rng.randn(2, 3)
    assert compiled(jit(np.vdot), a, b) == pytest.approx(np.vdot(a, b))
    key = random.PRNGKey(4)
    mask = compiled(jit(lambda k: random.bernoulli(k, 0.3, (4, 5))), key)
    np.testing.assert_array_equal(mask, random.bernoulli(key, 0.3, (4, 5)))

    def zero_d(x):
        acc = np.zeros(())
        for i in range(3):
            acc = acc + np.sum(x * i)
        return acc
    assert compiled(jit(zero_d), a) == pytest.approx(3 * np.sum(a))


def conv_layer(params, x, strides, padding):
    w, b = params
    return strop.lax.conv_general_dilated(x, w, strides, padding, (1, 1), (1, 1),
                                          ('NHWC', 'HWIO', 'NHWC')) + b


def conv_loss(params, x):
    return np.sum(conv_layer(params, x, (2, 2), 'SAME') ** 2)


def test_lax_static_arguments_passed_to_a_helper_are_known():
    params = (rng.randn(3, 3, 1, 2) * 0.3, rng.randn(2) * 0.1)
    x = rng.randn(2, 5, 5, 1)
    want = numeric_grad_tree(conv_loss, (params, x), 0)
    assert_tree_allclose(grad(conv_loss)(params, x), want, rtol=1e-6, atol=1e-8)


def hvp_of_a_lambda(params, v, x):
    hv = jvp(grad(lambda p: np.sum(predict(p, x) ** 2)), (params,), (v,))[1]
    return sum(np.sum(a * b) for a, b in zip(strop.tree_util.tree_leaves(hv),
                                               strop.tree_util.tree_leaves(v)))


def test_jvp_of_grad_of_a_lambda_reading_locals_runs_under_jit_and_vmap():
    # (the fuzzer's crash: the lambda's locals were placeholders in a jvp called at run time)
    v = tree_map(lambda a: np.ones_like(a) * 0.1, PARAMS)
    want = hvp_of_a_lambda(PARAMS, v, XS[0])
    assert jit(hvp_of_a_lambda, backend="python")(PARAMS, v, XS[0]) == pytest.approx(want)
    got = vmap(hvp_of_a_lambda, in_axes=(None, None, 0))(PARAMS, v, XS)
    np.testing.assert_allclose(got, [hvp_of_a_lambda(PARAMS, v, x) for x in XS], rtol=1e-10)


@jit
def dict_step(params, x):
    g = grad(lambda p: np.sum((x @ p['w'] + p['b']) ** 2))(params)
    return {k: params[k] - 0.1 * g[k] for k in params}


@jit
def nested_list_step(ws):
    return [[w * 2.0, b + 1.0] for w, b in ws]


def after_step(params, x):
    new = dict_step(params, x)
    return np.sum(new['w'] ** 2) + np.sum(new['b'])


def test_jit_returns_dicts_and_lists_of_arrays_of_other_ranks_compiled():
    params = {'w': rng.randn(3, 2), 'b': rng.randn(2)}
    got = compiled(dict_step, params, XS)
    want = dict_step.fun(params, XS)
    assert type(got) is dict and list(got) == ['w', 'b']
    assert_tree_allclose(got, want, rtol=1e-12)
    ws = [[rng.randn(2, 2), rng.randn(2)], [rng.randn(2, 1), rng.randn(1)]]
    assert_tree_allclose(compiled(nested_list_step, ws), nested_list_step.fun(ws), rtol=1e-12)
    # inlined in other code, the result is the dict again
    assert_tree_allclose(grad(after_step)(params, XS),
                         numeric_grad_tree(after_step, (params, XS), 0), rtol=1e-5, atol=1e-7)


def example_mse(params, x, y):
    (w, b), = params
    return np.mean((np.tanh(x @ w + b) - y) ** 2)


def per_example_norms(params, xs, ys):
    per = vmap(grad(example_mse), in_axes=(None, 0, 0))(params, xs, ys)
    (gw, gb), = per
    return np.sum(gw ** 2) + np.sum(np.max(gb, axis=1))


def test_per_example_gradients_of_a_mean_inside_jit_and_jvp():
    """vmap(grad(loss)) of a loss ending in np.mean: its derivative's weights (mean_grad) were
    inlined and batched lane by lane down to np.result_type ("Cannot construct a dtype from an
    array"), and forward mode over that code had no rule for each()."""
    params = [(rng.randn(3, 2), rng.randn(2))]
    xs, ys = rng.randn(4, 3), rng.randn(4, 2)
    want = per_example_norms(params, xs, ys)
    got = jit(per_example_norms, backend="python")(params, xs, ys)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    tangent = [(rng.randn(3, 2), rng.randn(2))]
    _, t = jvp(lambda p: per_example_norms(p, xs, ys), (params,), (tangent,))
    eps = 1e-6
    plus = [(w + eps * dw, b + eps * db) for (w, b), (dw, db) in zip(params, tangent)]
    minus = [(w - eps * dw, b - eps * db) for (w, b), (dw, db) in zip(params, tangent)]
    fd = (per_example_norms(plus, xs, ys) - per_example_norms(minus, xs, ys)) / (2 * eps)
    np.testing.assert_allclose(t, fd, rtol=1e-5, atol=1e-8)


def test_vmap_returns_an_unbatched_list_as_a_list():
    def keep(params, x):
        return params
    got = vmap(keep, in_axes=(None, 0))(PARAMS, XS)
    assert type(got) is list and all(type(layer) is tuple for layer in got)
    assert got[0][0].shape == (5,) + PARAMS[0][0].shape
    np.testing.assert_array_equal(got[1][1][3], PARAMS[1][1])


def test_vmap_returns_an_unbatched_list_of_named_tuples_with_a_batch_axis_on_each_leaf():
    # each named tuple went to np.asarray whole: NumPy's 'inhomogeneous shape' (fuzzer seed
    # 2201, program 25)
    layers = [Layer(w, b) for w, b in PARAMS]
    got = vmap(lambda params, x: (params, x * 2.0), in_axes=(None, 0))(layers, XS)
    assert type(got[0]) is list and all(type(layer) is Layer for layer in got[0])
    for layer, given in zip(got[0], layers):
        assert layer.w.shape == (5,) + given.w.shape
        np.testing.assert_array_equal(layer.b[4], given.b)


def averaged_step_loss(params, xs, ys):
    per = vmap(grad(example_mse), in_axes=(None, 0, 0))(params, xs, ys)
    g = tree_map(lambda a: np.mean(a, axis=0), per)   # a tree the code made: displays
    new = tree_map(lambda p, d: p - 0.1 * d, params, g)
    return np.mean(vmap(example_mse, in_axes=(None, 0, 0))(new, xs, ys))


def test_tree_map_over_per_example_gradients_is_differentiated():
    """tree_map over vmap(grad(f))'s result (its structure, the parameter's, and its leaves,
    arrays) is mapped leaf by leaf: it had no derivative rule inside grad and jvp."""
    params = [(rng.randn(3, 2), rng.randn(2))]
    xs, ys = rng.randn(4, 3), rng.randn(4, 2)
    got = grad(averaged_step_loss)(params, xs, ys)
    want = numeric_grad_tree(averaged_step_loss, (params, xs, ys), 0)
    assert_tree_allclose(got, want, rtol=1e-5, atol=1e-8)


def dense_tanh_energy(w, x):
    return np.sum(np.tanh(np.dot(x, w)) ** 2)


def per_example_gradient_penalty(w, xs):
    per = vmap(grad(dense_tanh_energy), in_axes=(None, 0))(w, xs)
    return np.sum(per ** 2)


def test_grad_of_vmap_of_grad_compiles_through_rules_of_the_lane_helpers():
    """grad(vmap(grad(f))) (MAML's meta-gradient, a per-example gradient penalty): vmap's lane
    helpers (tensordot_vjp_lanes, unbroadcast_lanes, expand_to_lanes, ...) have derivative
    rules, so their source is not inlined (it did not compile: np.issubdtype of a dtype)."""
    w, xs = rng.randn(3, 2), rng.randn(4, 5, 3)
    want = numeric_grad_tree(per_example_gradient_penalty, (w, xs), 0)
    got = grad(per_example_gradient_penalty)(w, xs)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(compiled(jit(grad(per_example_gradient_penalty)), w, xs), got,
                               rtol=1e-12)
    source = strop.source(grad(per_example_gradient_penalty))
    assert "np.issubdtype" not in source and "tensordot_lanes(" in source


def _vector_times_matrix(w, x):   # x: one example's vector
    return np.sum(np.tanh(x @ w) ** 2)


def _matrix_times_vector(w, x):
    return np.sum(np.sin(w @ x))


def _rows_times_matrix(w, x):     # x: one example's matrix
    return np.sum(np.tanh(x @ w))


def _vector_times_example_matrix(w, x):
    return np.sum(np.cos(w @ x) ** 2)


@pytest.mark.parametrize("f,w_shape,xs_shape", [
    (_vector_times_matrix, (3, 2), (5, 3)), (_matrix_times_vector, (2, 3), (5, 3)),
    (_rows_times_matrix, (3, 2), (5, 4, 3)), (_vector_times_example_matrix, (3,), (5, 3, 2))])
def test_grad_of_per_example_gradients_of_products_of_every_rank(f, w_shape, xs_shape):
    """The lane helpers of @ (matmul_vjp_x/y_lanes, matmul_as_x/y_lanes, broadcast_like_lanes)
    differentiated and compiled for vectors and matrices on either side."""
    def penalty(w, xs):
        per_w = vmap(grad(f), in_axes=(None, 0))(w, xs)
        per_x = vmap(grad(f, 1), in_axes=(None, 0))(w, xs)
        return np.sum(per_w ** 2) + np.sum(per_x ** 3)
    w, xs = rng.randn(*w_shape), rng.randn(*xs_shape)
    got = grad(penalty)(w, xs)
    np.testing.assert_allclose(got, numeric_grad_tree(penalty, (w, xs), 0), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(compiled(jit(grad(penalty)), w, xs), got, rtol=1e-10,
                               atol=1e-12)


Layer = collections.namedtuple("Layer", ["w", "b"])


def namedtuple_loss(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer.w + layer.b)
    return np.sum(h ** 2)


def namedtuple_step_loss(layers, x):
    g = grad(namedtuple_loss)(layers, x)
    new = [Layer(w=l.w - 0.1 * d.w, b=l.b - 0.1 * d.b) for l, d in zip(layers, g)]
    return namedtuple_loss(new, x)


def test_forward_and_second_order_through_a_gradient_of_named_tuples():
    """jvp and grad of a step through grad(loss) of a list of named tuples: the gradient's
    getattr_vjp (a field's cotangent) has rules; its source (``_replace``) was inlined, and
    forward mode stopped in strop's file."""
    layers = [Layer(rng.randn(3, 2) * 0.5, rng.randn(2) * 0.1)]
    x = rng.randn(4, 3)
    tangent = [Layer(rng.randn(3, 2), rng.randn(2))]
    _, t = jvp(lambda p: namedtuple_step_loss(p, x), (layers,), (tangent,))
    eps = 1e-6
    shift = lambda s: [Layer(l.w + s * d.w, l.b + s * d.b) for l, d in zip(layers, tangent)]
    fd = (namedtuple_step_loss(shift(eps), x) - namedtuple_step_loss(shift(-eps), x)) / (2 * eps)
    np.testing.assert_allclose(t, fd, rtol=1e-5, atol=1e-8)
    got = grad(namedtuple_step_loss)(layers, x)
    assert_tree_allclose(got, numeric_grad_tree(namedtuple_step_loss, (layers, x), 0),
                         rtol=1e-5, atol=1e-8)


def _two_layer_mse(params, x, y):
    (w1, b1), (w2, b2) = params
    return np.mean((np.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)


def clipped_step(params, xs, ys, key):
    """JAX's DP-SGD example's private step: per-example gradients clipped through
    tree_flatten/tree_unflatten, summed and noised leaf by leaf with tree_map."""
    def clipped(p, x, y):
        leaves, treedef = strop.tree_util.tree_flatten(grad(_two_layer_mse)(p, x, y))
        norm = np.linalg.norm(np.array([np.linalg.norm(g.ravel()) for g in leaves]))
        return strop.tree_util.tree_unflatten(treedef, [g / np.maximum(norm, 1.0)
                                                        for g in leaves])
    tree_map_ = strop.tree_util.tree_map
    summed = tree_map_(lambda n: np.sum(n, 0), vmap(clipped, in_axes=(None, 0, 0))(params, xs, ys))
    noised = tree_map_(lambda n: n + 0.01 * random.normal(key, n.shape), summed)
    return tree_map_(lambda p, g: p - 0.1 * g / xs.shape[0], params, noised)


def test_a_private_step_flattening_per_example_gradients_compiles_as_python_runs_it():
    # tree_flatten/tree_unflatten had no batching rule (vmap ran lane by lane), and tree_map
    # over the result stayed a call whose lambda Numba could not compile (it closes over key)
    params = [(rng.randn(3, 4) * 0.5, rng.randn(4) * 0.1), (rng.randn(4, 2), rng.randn(2))]
    xs, ys, key = rng.randn(5, 3), rng.randn(5, 2), random.PRNGKey(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", strop.errors.KeyReuseWarning)   # (as JAX's example)
        want = jit(clipped_step, backend="python")(params, xs, ys, key)
        warnings.simplefilter("error", JitFallbackWarning)
        got = jit(clipped_step)(params, xs, ys, key)
    assert_tree_allclose(got, want, rtol=1e-10, atol=1e-12)
    # the clipped per-example gradients themselves, against a loop over the examples
    one = [[g / max(np.linalg.norm([np.linalg.norm(x) for x in strop.tree_util.tree_leaves(
        gs)]), 1.0) for g in strop.tree_util.tree_leaves(gs)]
        for gs in (grad(_two_layer_mse)(params, x, y) for x, y in zip(xs, ys))]
    noise = [0.01 * random.normal(key, np.shape(p)) for p in strop.tree_util.tree_leaves(params)]
    step = [p - 0.1 * (sum(o[k] for o in one) + n) / 5 for k, (p, n) in enumerate(
        zip(strop.tree_util.tree_leaves(params), noise))]
    assert_tree_allclose(strop.tree_util.tree_leaves(want), step, rtol=1e-10, atol=1e-12)


Layer = collections.namedtuple("Layer", ["w", "b"])
LAYERS = [Layer(w, b) for w, b in PARAMS]


def _layers_loss(params, x):
    h = x
    for layer in params:
        h = np.tanh(layer.w @ h + layer.b)
    return np.sum(h ** 2)


def mean_of_a_gradient_of_namedtuples(params, x):
    per = grad(_layers_loss)(params, x)
    means = tree_map(lambda a: np.mean(a, axis=0), per)
    return np.sum(means[0].w ** 2) + np.sum(means[1].b) * np.sum(x)


def test_tree_map_over_a_gradient_of_namedtuples_maps_their_leaves_not_the_tuples():
    """A gradient's namedtuple nodes are not leaves: tree_map over them once applied its
    function to the whole Layer (NumPy: "inhomogeneous shape"); differentiated, it was
    refused.  The namedtuples' structure is known where the code is made: followed."""
    x = XS[0]
    want = mean_of_a_gradient_of_namedtuples(LAYERS, x)
    np.testing.assert_allclose(jit(mean_of_a_gradient_of_namedtuples, backend="python")(
        LAYERS, x), want, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        np.testing.assert_allclose(jit(mean_of_a_gradient_of_namedtuples)(LAYERS, x), want,
                                   rtol=1e-12)
    check_grad(mean_of_a_gradient_of_namedtuples, LAYERS, x, argnums=1)
    assert_tree_allclose(grad(mean_of_a_gradient_of_namedtuples)(LAYERS, x), numeric_grad_tree(
        mean_of_a_gradient_of_namedtuples, (LAYERS, x), 0), rtol=1e-5, atol=1e-6)


def _items_loss(params, x):
    total = 0.0
    for name, layer in params.items():
        total = total + np.sum(np.tanh(layer["w"] @ x + layer["b"]) ** 2)
    return total


def hessian_vector_product_over_dict_items(params, v, x):
    _, hv = jvp(grad(lambda p: _items_loss(p, x)), (params,), (v,))
    return np.sum(hv["l0"]["w"]) + np.sum(hv["l1"]["b"] ** 2)


def test_hvp_of_a_loss_walking_a_dict_of_dicts_by_items():
    """The gradient's code rebuilds what ``.items()`` walked with runtime.like, which had no
    tangent rule: jvp over it was refused naming strop's runtime."""
    params = {"l0": {"w": rng.randn(3, 3), "b": rng.randn(3)},
              "l1": {"w": rng.randn(3, 3), "b": rng.randn(3)}}
    v = tree_map(lambda a: rng.randn(*a.shape), params)
    x = XS[0]
    f = hessian_vector_product_over_dict_items
    want = f(params, v, x)
    np.testing.assert_allclose(jit(f, backend="python")(params, v, x), want, rtol=1e-12)
    got = vmap(f, in_axes=(None, None, 0))(params, v, XS)
    np.testing.assert_allclose(got, [f(params, v, x) for x in XS], rtol=1e-10)
