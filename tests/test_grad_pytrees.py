"""End to end: argnums, has_aux and pytree arguments of grad / value_and_grad / vjp, against
central finite differences of the untransformed function (float64)."""
import collections

import numpy as np
import pytest

import strop
from helpers import (assert_tree_allclose, check_grad, numeric_grad_tree, numeric_vjp,
                     x64_fixture)
from strop import grad, value_and_grad, vjp
from strop.tree_util import register_pytree_node_class

rng = np.random.default_rng(7)


x64 = pytest.fixture(autouse=True)(x64_fixture)


def randn(*shape):
    return rng.standard_normal(shape)


# --- argnums ---------------------------------------------------------------------------------

def three_args(x, y, z):
    return np.sum(np.sin(x) * y ** 2 + z * x) + np.sum(z ** 3)


@pytest.mark.parametrize("argnums", [0, 1, 2, (0,), (0, 2), (2, 0), (1, 2, 0), -1, (-1, 0)],
                         ids=str)
def test_argnums(argnums):
    x, y, z = randn(3), randn(3), 0.4
    g = check_grad(three_args, x, y, z, argnums=argnums)
    if isinstance(argnums, tuple):
        assert isinstance(g, tuple) and len(g) == len(argnums)
    else:
        assert not isinstance(g, tuple)


def test_argnums_tuple_of_one_gives_a_tuple():
    g = grad(three_args, argnums=(1,))(randn(2), randn(2), 1.0)
    assert isinstance(g, tuple) and len(g) == 1 and g[0].shape == (2,)


def test_argnums_out_of_range_and_bad_type():
    with pytest.raises(ValueError):
        grad(three_args, argnums=3)
    with pytest.raises(TypeError):
        grad(three_args, argnums="x")
    with pytest.raises(TypeError):
        grad(three_args, argnums=())


def test_non_differentiated_argument_may_be_an_int():
    def scaled(x, n):
        return np.sum(x ** n)
    x = randn(3)
    g = check_grad(scaled, x, 3)
    np.testing.assert_allclose(g, 3 * x ** 2)


def test_keyword_call_of_the_gradient():
    def f(x, y=2.0):
        return np.sum(x * y)
    x = randn(3)
    np.testing.assert_allclose(grad(f)(x, y=3.0), np.full(3, 3.0))
    np.testing.assert_allclose(grad(f)(x), np.full(3, 2.0))
    np.testing.assert_allclose(grad(f, argnums=1)(x, y=3.0), np.sum(x))


# --- has_aux ---------------------------------------------------------------------------------

def with_aux(x, y):
    loss = np.sum(x ** 2 * y)
    return loss, {"loss": loss, "norm": np.sqrt(np.sum(x ** 2)), "n": x.shape[0]}


def test_has_aux_grad():
    x, y = randn(4), randn(4)
    g, aux = grad(with_aux, has_aux=True)(x, y)
    np.testing.assert_allclose(g, numeric_vjp(lambda a, b: with_aux(a, b)[0], (x, y), 0, 1.0),
                               rtol=1e-6, atol=1e-8)
    assert set(aux) == {"loss", "norm", "n"}
    np.testing.assert_allclose(aux["loss"], np.sum(x ** 2 * y))
    np.testing.assert_allclose(aux["norm"], np.linalg.norm(x))
    assert aux["n"] == 4


def test_has_aux_value_and_grad_with_argnums():
    x, y = randn(4), randn(4)
    (value, aux), (gx, gy) = value_and_grad(with_aux, argnums=(0, 1), has_aux=True)(x, y)
    np.testing.assert_allclose(value, np.sum(x ** 2 * y))
    np.testing.assert_allclose(aux["loss"], value)
    np.testing.assert_allclose(gx, 2 * x * y)
    np.testing.assert_allclose(gy, x ** 2)


def aux_in_branch(x):
    if x > 0:
        return x ** 2, x * 10.0
    return -x, np.sin(x)


def test_has_aux_with_two_returns():
    for x in (1.5, -0.5):
        g, aux = grad(aux_in_branch, has_aux=True)(x)
        np.testing.assert_allclose(g, numeric_vjp(lambda t: aux_in_branch(t)[0], (x,), 0, 1.0),
                                   rtol=1e-6)
        np.testing.assert_allclose(aux, aux_in_branch(x)[1])


def test_vjp_has_aux():
    x = randn(3)
    out, f_vjp, aux = vjp(lambda_free_vjp_aux, x, has_aux=True)
    np.testing.assert_allclose(out, np.sin(x) * 2.0)
    np.testing.assert_allclose(aux, np.sum(x))
    ct = randn(3)
    (gx,) = f_vjp(ct)
    np.testing.assert_allclose(gx, ct * np.cos(x) * 2.0)


def lambda_free_vjp_aux(x):
    return np.sin(x) * 2.0, np.sum(x)


# --- pytree arguments ------------------------------------------------------------------------

def mlp_loss(params, x):
    h = np.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return np.sum(out ** 2) / x.shape[0]


def list_params(ps, x):
    total = 0.0
    for p in ps:
        total = total + np.sum(np.sin(p * x))
    return total + np.sum(ps[0] * ps[-1])


def tuple_params(ps, x):
    a, b = ps
    return np.sum(a * x) * b


def nested_params(tree, x):
    layer = tree["layers"][0]
    scale = tree["scale"]
    return np.sum((x @ layer["w"]) ** 2) * scale[0] + np.sum(tree["layers"][1][1] * scale[1])


def with_none(tree, x):
    return np.sum(tree["a"] * x) + (0.0 if tree["b"] is None else 1.0)


Pair = collections.namedtuple("Pair", ["left", "right"])


def namedtuple_indexed(p, x):
    return np.sum(p[0] * x) * p[1] + np.sum(p[0] ** 2)


def namedtuple_attributes(p, x):
    return np.sum(p.left * x) * p.right + np.sum(p[0] ** 2)


@register_pytree_node_class
class Linear:
    def __init__(self, w, b, name="lin"):
        self.w, self.b, self.name = w, b, name

    def tree_flatten(self):
        return (self.w, self.b), self.name

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, name=aux)


def registered_class_loss(layer, x):
    return np.sum(np.tanh(x @ layer.w + layer.b) ** 2)


def dict_keys_unsorted(d):
    return np.sum(d["z"] * 2.0) + np.sum(d["a"] ** 3) * d["m"]


PYTREE_CASES = [
    ("dict", mlp_loss, ({"w1": randn(3, 4), "b1": randn(4), "w2": randn(4, 2), "b2": randn(2)},
                        randn(5, 3))),
    ("list", list_params, ([randn(3), randn(3), 0.5], randn(3))),
    ("tuple", tuple_params, ((randn(2), 1.5), randn(2))),
    ("nested", nested_params, ({"layers": [{"w": randn(2, 2)}, (randn(3), randn(3))],
                                "scale": [0.3, 1.2]}, randn(4, 2))),
    ("none_leaf", with_none, ({"a": randn(2), "b": None}, randn(2))),
    ("unsorted_keys", dict_keys_unsorted, ({"z": randn(2), "a": randn(2), "m": 1.3},)),
    ("namedtuple_indexed", namedtuple_indexed, (Pair(randn(3), 0.8), randn(3))),
    ("namedtuple_attributes", namedtuple_attributes, (Pair(randn(3), 0.8), randn(3))),
    ("registered_class", registered_class_loss, (Linear(randn(3, 2), randn(2)), randn(4, 3))),
]


@pytest.mark.parametrize("name,f,args", PYTREE_CASES, ids=[c[0] for c in PYTREE_CASES])
def test_pytree_argument(name, f, args):
    got = grad(f)(*args)
    want = numeric_grad_tree(f, args, 0)
    assert_tree_allclose(got, want)
    value, got2 = value_and_grad(f)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    assert_tree_allclose(got2, want)


def test_registered_class_keeps_its_aux_data():
    layer = Linear(randn(3, 2), randn(2), name="first")
    g = grad(registered_class_loss)(layer, randn(4, 3))
    assert isinstance(g, Linear) and g.name == "first"


def test_pytree_and_array_argnums():
    params = {"w": randn(3), "b": 0.2}
    x = randn(3)

    def f(p, x):
        return np.sum(np.sin(p["w"] * x) + p["b"] * x ** 2)

    gp, gx = grad(f, argnums=(0, 1))(params, x)
    assert_tree_allclose(gp, numeric_grad_tree(f, (params, x), 0))
    np.testing.assert_allclose(gx, numeric_vjp(f, (params, x), 1, 1.0), rtol=1e-6, atol=1e-8)


def test_pytree_in_a_function_of_another_module():
    from fixtures import grad_other_module as other
    params = {"w": randn(3, 2), "b": randn(2)}
    x = randn(4, 3)
    assert_tree_allclose(grad(other.loss)(params, x), numeric_grad_tree(other.loss, (params, x), 0))


def test_pytree_with_integer_leaf_is_a_type_error():
    with pytest.raises(TypeError):
        grad(dict_keys_unsorted)({"z": randn(2), "a": randn(2), "m": 3})


def test_vjp_with_pytree_primal_and_output():
    params = {"w": randn(2, 3), "b": randn(3)}

    def f(p):
        h = p["w"] * 2.0 + p["b"]
        return {"h": h, "s": np.sum(h ** 2)}

    out, f_vjp = vjp(f, params)
    np.testing.assert_allclose(out["h"], params["w"] * 2.0 + params["b"])
    ct = {"h": randn(2, 3), "s": 0.7}
    (gp,) = f_vjp(ct)

    def scalar(p):
        o = f(p)
        return np.sum(o["h"] * ct["h"]) + o["s"] * ct["s"]

    assert_tree_allclose(gp, numeric_grad_tree(scalar, (params,), 0))


def test_check_grad_with_list_of_scalars_argument():
    # a list of floats is a pytree of float leaves
    def f(ws):
        return ws[0] * ws[1] ** 2 + np.sin(ws[2])
    ws = [0.3, -1.2, 0.7]
    assert_tree_allclose(grad(f)(ws), numeric_grad_tree(f, (ws,), 0))


# --- small programs a user writes ------------------------------------------------------------

def softmax_xent(w, x, labels):
    logits = x @ w
    m = np.max(logits, axis=1, keepdims=True)
    z = logits - m
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    onehot = np.eye(w.shape[1])[labels]
    return -np.mean(np.sum(onehot * logp, axis=1)) - 0.1 * np.sum(logp[np.arange(x.shape[0]),
                                                                          labels])


def sgd_unrolled(params, x):
    p = params
    for step in range(3):
        resid = x @ p["w"] - 1.0
        gw = 2.0 * x.T @ resid
        p = {"w": p["w"] - 0.01 * gw, "b": p["b"] - 0.1 * 2.0 * p["b"]}
    return np.sum((x @ p["w"]) ** 2) + np.sum(p["b"] ** 2)


def rnn(params, xs):
    h = np.zeros(params["W"].shape[0])
    hs = []
    for t in range(xs.shape[0]):
        h = np.tanh(params["W"] @ h + params["U"] @ xs[t])
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


def scan_with_tuple_carry(x, xs):
    carry = (x, 0.0)
    ys = []
    for xi in xs:
        h, c = carry
        h = np.tanh(h * xi + c)
        c = c + h
        carry = (h, c)
        ys.append(h)
    return np.sum(np.stack(ys)) + carry[1]


def newton_sqrt(a):
    x = a
    err = 1.0
    while err > 1e-12:
        x_new = 0.5 * (x + a / x)
        err = abs(x_new - x)
        x = x_new
    return x


def attention(q, k):
    s = np.einsum("id,jd->ij", q, k) / np.sqrt(q.shape[1])
    a = np.exp(s - s.max(axis=1, keepdims=True))
    a = a / a.sum(axis=1, keepdims=True)
    return np.sum(a @ k)


def sorted_cumsum_scatter(x):
    idx = np.argsort(x)
    z = np.zeros_like(x)
    z[idx] = np.cumsum(x[idx])
    return np.sum(z * np.arange(1.0, 5.0))


def layer_norm(x):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return np.sum(((x - mu) / np.sqrt(var + 1e-5)) * np.arange(4.0))


def horner(c, x):
    acc = 0.0
    for ci in c[::-1]:
        acc = acc * x + ci
    return acc


PROGRAMS = [
    ("softmax_xent", softmax_xent, (randn(3, 4), randn(5, 3), np.array([0, 1, 3, 3, 2])), (0,)),
    ("sgd_unrolled", sgd_unrolled, ({"w": randn(3) * 0.3, "b": randn(2)}, randn(4, 3)), (0, 1)),
    ("rnn", rnn, ({"W": randn(3, 3) * 0.5, "U": randn(3, 2)}, randn(4, 2)), (0, 1)),
    ("scan_with_tuple_carry", scan_with_tuple_carry, (0.3, randn(4)), (0, 1)),
    ("newton_sqrt", newton_sqrt, (2.0,), (0,)),
    ("attention", attention, (randn(3, 2), randn(4, 2)), (0, 1)),
    ("sorted_cumsum_scatter", sorted_cumsum_scatter, (randn(4),), (0,)),
    ("layer_norm", layer_norm, (randn(2, 4),), (0,)),
    ("horner", horner, (randn(4), 0.7), (0, 1)),
]


@pytest.mark.parametrize("name,f,args,argnums", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_small_programs(name, f, args, argnums):
    got = grad(f, argnums=argnums)(*args)
    for i, g in zip(argnums, got):
        assert_tree_allclose(g, numeric_grad_tree(f, args, i), path=f"{name} argument {i}")


def test_newton_sqrt_derivative_is_exact():
    # d sqrt(a)/da = 1 / (2 sqrt(a)): the derivative of the converged iteration
    np.testing.assert_allclose(grad(newton_sqrt)(2.0), 0.5 / np.sqrt(2.0), rtol=1e-9)


class Model:
    def __init__(self, scale):
        self.scale = scale

    def loss(self, x):
        return np.sum(x ** 2) * self.scale


def scaled_loss(x, s):
    return np.sum(x ** 2) * s


def test_grad_of_a_bound_method():
    x = randn(3)
    np.testing.assert_allclose(grad(Model(3.0).loss)(x), 6.0 * x)


def test_grad_of_a_partial():
    import functools
    x = randn(3)
    np.testing.assert_allclose(grad(functools.partial(scaled_loss, s=3.0))(x), 6.0 * x)


# --- grad called inside a function, of a tuple or dict argument ---------------------------------

def tuple_loss(p, x):
    return np.sum(np.tanh(x @ p[0]) * p[1])


def dict_loss(p, x):
    return np.sum(np.tanh(x @ p["w"]) * p["b"])


def first_of_grad(p, x):
    return grad(tuple_loss)(p, x)[0]


def whole_grad(p, x):
    return grad(tuple_loss)(p, x)


TUPLE_GRAD = grad(tuple_loss)          # a transform made once, called from several places


def via_module_level(p, x):
    return TUPLE_GRAD(p, x)[1]


def w_of_grad(p, x):
    return grad(dict_loss)(p, x)["w"]


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_grad_called_inside_of_a_tuple_or_dict_argument(backend):
    """The inlined grad cannot know its arguments' kinds: a tuple's cotangents add element by
    element (they were concatenated: a gradient twice as long, silently), in compiled code too,
    and the code does not depend on how the transform was last called."""
    p, x = (randn(2, 4), randn(4)), randn(2)
    want = numeric_grad_tree(tuple_loss, (p, x), 0)
    got = strop.jit(whole_grad, backend=backend)(p, x)
    assert isinstance(got, tuple) and len(got) == 2
    assert_tree_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(strop.jit(first_of_grad, backend=backend)(p, x), want[0],
                               rtol=1e-6)
    TUPLE_GRAD(p, x)                   # its last call flattened the tuple into its leaves
    np.testing.assert_allclose(strop.jit(via_module_level, backend=backend)(p, x), want[1],
                               rtol=1e-6)
    d = {"w": p[0], "b": p[1]}
    np.testing.assert_allclose(strop.jit(w_of_grad, backend=backend)(d, x), want[0], rtol=1e-6)
