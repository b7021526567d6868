"""Containers a loop rebinds on every trip (transformer/carried.py): a training loop's
parameters (``params = tree_map(sgd, params, grads)``), a state tuple, a history that grows.
Each transform against its oracle: ``grad`` against central differences, ``vmap`` against a
Python loop, ``jit`` against the plain function, with no fallback."""
import collections
import warnings

import numpy as np
import pytest

import strop
from helpers import assert_tree_allclose, check_grad, numeric_grad_tree, x64_fixture
from strop import random, value_and_grad
from strop.errors import JitFallbackWarning
from strop.tree_util import tree_map

x64 = pytest.fixture(autouse=True)(x64_fixture)

rng = np.random.RandomState(5)
X = rng.randn(4, 3)
Y = rng.randn(4, 2)
TUPLES = [(rng.randn(3, 3), rng.randn(3)), (rng.randn(3, 2), rng.randn(2))]
DICTS = [{"w": w, "b": b} for w, b in TUPLES]   # keys not in sorted order


def predict_tuples(params, x):
    h = x
    for w, b in params:
        h = np.tanh(h @ w + b)
    return h


def loss_tuples(params, x, y):
    return np.sum((predict_tuples(params, x) - y) ** 2)


def train_tuples(params, x, y):
    key = random.PRNGKey(0)
    for step in range(3):
        key, sub = random.split(key)
        noise = 0.05 * random.normal(sub, x.shape)
        value, grads = value_and_grad(loss_tuples)(params, x + noise, y)
        params = tree_map(lambda p, g: p - 0.1 * g, params, grads)
    return loss_tuples(params, x, y)


def predict_dicts(params, x):
    h = x
    for layer in params:
        h = np.tanh(h @ layer["w"] + layer["b"])
    return h


def loss_dicts(params, x, y):
    return np.sum((predict_dicts(params, x) - y) ** 2)


def train_dicts(params, x, y):
    for step in range(3):
        grads = strop.grad(loss_dicts)(params, x, y)
        params = tree_map(lambda p, g: p - 0.1 * g, params, grads)
    return params


def keys_walked_each_trip(params, x):
    """The body walks the dict: the first trip in the user's order, later ones in tree_map's
    (sorted) order, as the plain function does."""
    seen = []
    for step in range(2):
        for name in params:
            seen.append(np.sum(params[name] * x))
        params = tree_map(lambda p: 0.5 * p, params)
    return np.stack(seen)


def keys_walked_n_trips(params, x, n):
    """As above, with a trip count known only when the code runs (static arguments too: jit
    binds them after the code is made): no trip on its own, so the dict is carried as it is
    and ``tree_map`` stays a call, which runs on the python backend."""
    seen = []
    for step in range(n):
        for name in params:
            seen.append(np.sum(params[name] * x))
        params = tree_map(lambda p: 0.5 * p, params)
    return np.stack(seen)


def swapped_each_trip(x):
    pair = (x, 2.0 * x)
    for i in range(3):
        pair = (pair[1], np.sin(pair[0]) * 1.5)
    return np.sum(pair[0] * pair[1])


def history_that_grows(x):
    hist = [x]
    for i in range(3):
        hist = hist + [np.sin(hist[-1])]
    return np.sum(hist[-1] * hist[1])


def appended_in_a_loop(x):
    hist = [x]
    for i in range(3):
        hist.append(np.sin(hist[-1]))
    return np.sum(hist[-1] * hist[1])


def rebound_under_a_branch(x):
    state = (x, 0.0)
    for i in range(4):
        if i % 2 == 0:
            state = (np.sin(state[0]) + 0.5 * state[0], state[1] + 1.0)
    return np.sum(state[0]) * state[1]


def state_in_a_while_loop(x):
    state = {"pos": x, "t": 0.0}
    while state["t"] < 3.0:
        state = {"pos": np.cos(state["pos"]) + 0.1 * state["pos"], "t": state["t"] + 1.0}
    return np.sum(state["pos"] ** 2)


def _no_fallback(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        return call()


def test_training_loop_over_a_list_of_tuples_under_every_transform():
    want = train_tuples(TUPLES, X, Y)
    assert np.isclose(_no_fallback(lambda: strop.jit(train_tuples)(TUPLES, X, Y)), want)
    g = strop.grad(train_tuples, argnums=1)(TUPLES, X, Y)
    want_g = numeric_grad_tree(train_tuples, (TUPLES, X, Y), 1)
    np.testing.assert_allclose(g, want_g, rtol=1e-5, atol=1e-6)
    xs = np.stack([X, X + 0.1, X - 0.2])
    got = strop.vmap(train_tuples, in_axes=(None, 0, None))(TUPLES, xs, Y)
    np.testing.assert_allclose(got, [train_tuples(TUPLES, x, Y) for x in xs], rtol=1e-9)
    got = _no_fallback(lambda: strop.jit(strop.vmap(train_tuples, in_axes=(None, 0, None)))(
        TUPLES, xs, Y))
    np.testing.assert_allclose(got, [train_tuples(TUPLES, x, Y) for x in xs], rtol=1e-9)


def test_training_loop_over_a_list_of_dicts_keeps_the_plain_functions_key_order():
    want = train_dicts(DICTS, X, Y)
    got = _no_fallback(lambda: strop.jit(train_dicts)(DICTS, X, Y))
    assert_tree_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert [list(layer) for layer in got] == [list(layer) for layer in want]
    xs = np.stack([X, 0.5 * X])
    got = strop.vmap(train_dicts, in_axes=(None, 0, None))(DICTS, xs, Y)
    for i, x in enumerate(xs):
        assert_tree_allclose(tree_map(lambda a: a[i], got), train_dicts(DICTS, x, Y),
                             rtol=1e-9, atol=1e-12)


def test_a_dict_walked_in_a_loop_in_the_order_each_trip_has():
    params = {"w": rng.randn(3), "b": rng.randn(3), "a": rng.randn(3)}
    x = rng.randn(3)
    want = keys_walked_each_trip(params, x)
    np.testing.assert_allclose(_no_fallback(lambda: strop.jit(keys_walked_each_trip)(
        params, x)), want, rtol=1e-12)
    check_grad(lambda x: np.sum(keys_walked_each_trip(params, x) ** 2), x)


@pytest.mark.parametrize("n", [1, 3])
def test_a_dict_walked_in_a_loop_of_a_trip_count_known_when_it_runs(n):
    params = {"w": rng.randn(3), "b": rng.randn(3), "a": rng.randn(3)}
    x = rng.randn(3)
    want = keys_walked_n_trips(params, x, n)
    # the loop carries the dict as it is: tree_map stays a call, which Numba cannot compile
    with pytest.warns(JitFallbackWarning, match="tree_map"):
        got = strop.jit(keys_walked_n_trips)(params, x, n)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    check_grad(lambda x: np.sum(keys_walked_n_trips(params, x, n) ** 2), x)


@pytest.mark.parametrize("f", [swapped_each_trip, history_that_grows, appended_in_a_loop,
                               rebound_under_a_branch, state_in_a_while_loop])
def test_containers_a_loop_carries(f):
    x = rng.randn(3)
    check_grad(f, x)
    np.testing.assert_allclose(_no_fallback(lambda: strop.jit(f)(x)), f(x), rtol=1e-12)
    xs = rng.randn(4, 3)
    np.testing.assert_allclose(strop.vmap(f)(xs), [f(x) for x in xs], rtol=1e-12)


def _last_weights(params, x, y):
    for layer in params:
        h = layer["w"]
    return np.mean(h ** 2)


def gradients_replace_the_parameters(params, x, y):
    value, grads = value_and_grad(_last_weights)(params, x, y)
    params = grads
    return params


def test_jvp_of_gradients_bound_to_the_rebound_parameter_name():
    """The gradients' tree rebuilt from the nested transform's result: each leaf read once
    (a read of a read had no tangent: zeros)."""
    from strop.testing.oracles import assert_close, fd_jvp
    tangents = (tree_map(lambda a: rng.randn(*a.shape), DICTS), np.zeros(3), np.zeros(2))
    args = (DICTS, X[0], Y[0])
    want = fd_jvp(gradients_replace_the_parameters, args, tangents)
    got = strop.jvp(gradients_replace_the_parameters, args, tangents)
    assert_close(got, want, rtol=1e-5, atol=1e-6)


Layer = collections.namedtuple("Layer", ["w", "b"])
NAMED = [Layer(w, b) for w, b in TUPLES]


def train_namedtuples(params, x, y):
    for step in range(2):
        value, grads = value_and_grad(loss_tuples)(params, x, y)
        params = tree_map(lambda p, g: p - 0.1 * g, params, grads)
    return params


def test_a_list_of_namedtuples_carried_by_a_training_loop_stays_one():
    """A namedtuple in a carried structure is a node, not a leaf (vmap crashed on the list
    of Layers; jit(vmap) returned plain tuples)."""
    want = train_namedtuples(NAMED, X, Y)
    xs = np.stack([X, 0.5 * X])
    for transformed in (strop.vmap(train_namedtuples, in_axes=(None, 0, None)),
                        strop.jit(strop.vmap(train_namedtuples, in_axes=(None, 0, None)))):
        got = _no_fallback(lambda: transformed(NAMED, xs, Y))
        assert [type(layer) for layer in got] == [Layer, Layer]
        for i, x in enumerate(xs):
            assert_tree_allclose(tree_map(lambda a: a[i], got),
                                 train_namedtuples(NAMED, x, Y), rtol=1e-9, atol=1e-12)
    got = _no_fallback(lambda: strop.jit(train_namedtuples)(NAMED, X, Y))
    assert [type(layer) for layer in got] == [Layer, Layer]
    assert_tree_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_vmap_returns_the_namedtuples_a_lane_makes():
    def remade(params, x):
        return [Layer(layer.w * np.sum(x), layer.b) for layer in params]
    xs = rng.randn(3, 2)
    for transformed in (strop.vmap(remade, in_axes=(None, 0)),
                        strop.jit(strop.vmap(remade, in_axes=(None, 0)))):
        got = _no_fallback(lambda: transformed(NAMED, xs))
        assert [type(layer) for layer in got] == [Layer, Layer]
        for i, x in enumerate(xs):
            assert_tree_allclose(tree_map(lambda a: a[i], got), remade(NAMED, x),
                                 rtol=1e-12, atol=0)
