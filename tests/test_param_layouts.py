"""Parameters laid out as real programs lay them out (lists of (w, b) tuples, dicts of layers,
lists of dicts, dicts of lists, namedtuples, partial-bound arrays), read every way real code
reads them: each gradient leaf by leaf against central differences of the plain function, and
jvp's value against the plain function (a dict walked in the user's order of keys)."""
import collections
import functools

import numpy as np
import pytest

import strop
from helpers import assert_tree_allclose, numeric_grad_tree, x64_fixture
from strop import grad, jvp, vjp
from strop.tree_util import tree_leaves, tree_map

x64 = pytest.fixture(autouse=True)(x64_fixture)

rng = np.random.RandomState(0)
X = rng.randn(5, 3)
LAYERS = [(rng.randn(3, 4), rng.randn(4)), (rng.randn(4, 2), rng.randn(2))]
Layer = collections.namedtuple("Layer", "w b")


def mlp_loop(params):
    h = X
    for w, b in params:
        h = np.tanh(h @ w + b)
    return np.sum(h ** 2)


def last_layer(params):
    w, b = params[-1]
    return np.sum((X[:, :2] @ w[:2] + b) ** 2)


def indexed_in_loop(params):
    s = 0.
    for i in range(len(params)):
        s = s + np.sum(params[i][0] ** 2) + np.sum(np.sin(params[i][1]))
    return s


def zipped_dict_of_lists(p):
    h = X
    for w, b in zip(p["ws"], p["bs"]):
        h = np.tanh(h @ w + b)
    return np.sum(h)


def list_of_dicts(p):
    h = X
    for layer in p:
        h = np.tanh(h @ layer["w"] + layer["b"])
    return np.sum(h)


def sorted_keys(p):
    s = 0.
    for k in sorted(p):
        w, b = p[k]
        s = s + np.sum(w ** 2) * np.sum(b)
    return s


def items_chain(p):
    h = X
    for name, (w, b) in p.items():
        h = np.tanh(h @ w + b)
    return np.sum(h)


def values_sum(p):
    s = 0.
    for w, b in p.values():
        s = s + np.sum(w ** 3) + np.sum(b)
    return s


def namedtuple_layers(params):
    h = X
    for layer in params:
        h = np.tanh(h @ layer.w + layer.b)
    return np.sum(h)


def enumerate_layers(params):
    h = X
    for i, (w, b) in enumerate(params):
        h = np.tanh(h @ w + b) * (i + 1)
    return np.sum(h)


def comprehension_regularizer(params):
    return sum(np.sum(w ** 2) for w, _ in params) + mlp_loop(params)


def _layer(h, w, b):
    return np.tanh(h @ w + b)


def partial_keywords(params):
    w, b = params[0]
    f = functools.partial(_layer, w=w, b=b)
    return np.sum(f(X))


def leaves_regularizer(params):
    return mlp_loop(params) + 0.1 * sum(np.sum(leaf ** 2) for leaf in tree_leaves(params))


def norms_of_leaves(params):
    return np.sum(np.array([np.linalg.norm(g) for g in tree_leaves(params)]) ** 2)


def mapped_tree(params):
    scaled = tree_map(lambda p: np.sin(p) * 2.0, params)
    return mlp_loop(scaled)


def two_trees_mapped(p):
    stepped = tree_map(lambda a, b: a - 0.1 * b, p, tree_map(np.cos, p))
    return list_of_dicts(stepped)


def _split(params):
    return [w for w, _ in params], [b for _, b in params]


def zip_of_a_helpers_lists(params):
    h = X
    for w, b in zip(*_split(params)):
        h = np.tanh(h @ w + b)
    return np.sum(h)


def starred_layers(params):
    *hidden, (w_out, b_out) = params
    h = X
    for w, b in hidden:
        h = np.tanh(h @ w + b)
    first, *rest = params
    return np.sum(h @ w_out + b_out) + np.sum(first[1]) * len(rest)


SQUARE = {"enc": (rng.randn(3, 3), rng.randn(3)), "dec": (rng.randn(3, 3), rng.randn(3))}

CASES = [
    (mlp_loop, LAYERS),
    (mlp_loop, tuple(LAYERS)),
    (last_layer, LAYERS),
    (indexed_in_loop, LAYERS),
    (zipped_dict_of_lists, {"ws": [w for w, _ in LAYERS], "bs": [b for _, b in LAYERS]}),
    (list_of_dicts, [{"w": w, "b": b} for w, b in LAYERS]),
    (sorted_keys, {"b": LAYERS[1], "a": LAYERS[0]}),
    (items_chain, SQUARE),
    (values_sum, {"b": LAYERS[1], "a": LAYERS[0]}),
    (namedtuple_layers, [Layer(w, b) for w, b in LAYERS]),
    (enumerate_layers, LAYERS),
    (comprehension_regularizer, LAYERS),
    (partial_keywords, LAYERS),
    (leaves_regularizer, LAYERS),
    (norms_of_leaves, {"b": LAYERS[1], "a": LAYERS[0]}),
    (mapped_tree, tuple(LAYERS)),
    (two_trees_mapped, [{"w": w, "b": b} for w, b in LAYERS]),
    (zip_of_a_helpers_lists, LAYERS),
    (starred_layers, LAYERS),
]
IDS = [f"{f.__name__}-{type(p).__name__}" for f, p in CASES]


@pytest.mark.parametrize("f, params", CASES, ids=IDS)
def test_grad_leaf_by_leaf(f, params):
    got = grad(f)(params)
    want = numeric_grad_tree(f, (params,), 0)
    assert_tree_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f, params", CASES, ids=IDS)
def test_vjp_leaf_by_leaf(f, params):
    out, back = vjp(f, params)
    np.testing.assert_allclose(out, f(params), rtol=1e-12)
    assert_tree_allclose(back(1.0)[0], numeric_grad_tree(f, (params,), 0), rtol=1e-6,
                         atol=1e-7)


@pytest.mark.parametrize("f, params", CASES, ids=IDS)
def test_jvp_value_and_tangent(f, params):
    tangent = tree_map(lambda a: np.cos(np.arange(a.size).reshape(a.shape)), params)
    value, dvalue = jvp(f, (params,), (tangent,))
    np.testing.assert_allclose(value, f(params), rtol=1e-12)
    g = numeric_grad_tree(f, (params,), 0)
    want = sum(np.sum(a * b) for a, b in zip(strop.tree_util.tree_leaves(g),
                                             strop.tree_util.tree_leaves(tangent)))
    np.testing.assert_allclose(dvalue, want, rtol=1e-6, atol=1e-7)


def one_namedtuple(layer):
    return np.sum(np.tanh(X @ layer.w + layer.b) * layer[1][0])


def held_partial_of_an_array(params):
    w, b = params[0]
    f = functools.partial(_layer, w=w, b=b)
    g = f if np.sum(b) > -100.0 else None
    return np.sum(g(X))


def test_grad_of_a_namedtuple_argument():
    layer = Layer(*LAYERS[0])
    assert_tree_allclose(grad(one_namedtuple)(layer), numeric_grad_tree(
        one_namedtuple, (layer,), 0), rtol=1e-6, atol=1e-7)


def test_a_function_value_made_from_the_input_is_refused_not_zero():
    with pytest.raises(strop.errors.TransformError, match="follow the derivative into") as e:
        grad(held_partial_of_an_array)(LAYERS)
    assert "test_param_layouts.py" in str(e.value)


@pytest.mark.parametrize("f, params", CASES, ids=IDS)
def test_jit_grad_compiles_every_layout(f, params):
    """Structure is static: the loops over containers are unrolled (transformer/unroll.py), so
    Numba compiles what has no Numba type as a container (a list of tuples of arrays of other
    shapes, a list of dicts): no fallback, the python backend's gradient."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got = strop.jit(grad(f))(params)
    assert_tree_allclose(got, grad(f)(params), rtol=1e-10, atol=1e-12)


def hidden_layers_sliced(params):
    h = X @ params[0][0]
    for w, b in params[1:-1]:
        h = np.tanh(h @ w + b)
    w, b = params[-1]
    return np.sum(h @ w + b)


THREE = LAYERS[:1] + [(rng.randn(4, 4), rng.randn(4))] + LAYERS[1:]


def test_slices_of_a_parameter_list_under_grad_and_jit():
    import warnings
    want = numeric_grad_tree(hidden_layers_sliced, (THREE,), 0)
    assert_tree_allclose(grad(hidden_layers_sliced)(THREE), want, rtol=1e-6, atol=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got = strop.jit(grad(hidden_layers_sliced))(THREE)
    assert_tree_allclose(got, want, rtol=1e-6, atol=1e-7)


def _scaled_tree(t, s):
    return tree_map(lambda p: p * s, t)


def scaled_then_looped(params, x):
    h = x
    for w, b in _scaled_tree(params, 0.9):
        h = np.tanh(h @ w + b)
    return np.sum(h)


def test_vmap_over_a_batch_of_named_tuple_layers_gives_each_lane_its_own():
    # the rebuilt [Layer(w0, b0), ...] was read as unbatched: every lane got one wrong value
    batched = [Layer(rng.randn(4, 3, 3), rng.randn(4, 3)), Layer(rng.randn(4, 3, 2),
                                                                  rng.randn(4, 2))]
    x = rng.randn(3)
    got = strop.vmap(scaled_then_looped, in_axes=(0, None))(batched, x)
    want = [scaled_then_looped([Layer(l.w[i], l.b[i]) for l in batched], x) for i in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_vmap_keeps_named_tuples_in_its_output():
    batched = [Layer(rng.randn(4, 3), rng.randn(4)), Layer(rng.randn(4, 2), rng.randn(4))]
    xs = rng.randn(4, 2)
    out = strop.vmap(lambda p, x: tree_map(lambda q: q * np.sum(x), p))(batched, xs)
    assert type(out) is list and all(type(layer) is Layer for layer in out)
    for i in range(4):
        for got, layer in zip(out, batched):
            np.testing.assert_allclose(got.w[i], layer.w[i] * np.sum(xs[i]), rtol=1e-6)
            np.testing.assert_allclose(got.b[i], layer.b[i] * np.sum(xs[i]), rtol=1e-6)


def _nested_dict_loss(p, x):
    return np.sum(np.tanh(x @ p["enc"]["w"] + p["enc"]["b"]))


def test_vmap_of_grad_over_a_batch_of_nested_dicts():
    # it crashed in strop ('NoneType' object is not iterable): the tree fuzzer's C3
    batched = {"enc": {"w": rng.randn(4, 3, 2), "b": rng.randn(4, 2)}}
    x = rng.randn(3)
    got = strop.vmap(grad(_nested_dict_loss), in_axes=(0, None))(batched, x)
    for i in range(4):
        lane = {"enc": {"w": batched["enc"]["w"][i], "b": batched["enc"]["b"][i]}}
        want = numeric_grad_tree(_nested_dict_loss, (lane, x), 0)
        assert_tree_allclose({"enc": {k: v[i] for k, v in got["enc"].items()}}, want,
                             rtol=1e-5, atol=1e-7)
