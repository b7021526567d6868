"""Normalization of the operands Python reads as sequences: comprehensions rebinding the name
they walk, lists and tuples given to NumPy functions and operators.  Oracles: the function run
as Python, central differences, a loop over the batch."""
import numpy as np
import pytest

import strop
from helpers import check_grad, numeric_vjp, x64_fixture

x64 = pytest.fixture(autouse=True)(x64_fixture)


def test_comprehension_reads_the_name_it_rebinds():
    def f(x):
        idx = [0, 2]
        idx = [x[i] * 2 for i in idx]
        scale = [1.0, 3.0]
        scale = [s * x[1] for s in scale]
        return idx[0] * scale[1] + idx[1] * scale[0]
    x = np.array([0.5, 1.5, 2.5])
    assert strop.jit(f, backend="python")(x) == pytest.approx(f(x))
    check_grad(f, x)


W = np.array([[1.0], [3.0]])      # a global array
rng = np.random.default_rng(3)


def _loop_concat(x):
    seq = []
    for i in range(3):
        seq = seq + [x[i] * 2.0]
    return seq[0] * seq[1] + seq[2]


def _named(x):
    pair = [x, x * 3.0]
    return np.sum(np.multiply(pair, W))


def _tuple_concat(x):
    t = (x,)
    t = t + (x * 2.0,)
    return np.sum(t[0] * t[1])


# every kind of operand NumPy reads as an array, given a list or tuple holding the argument
LIST_OPERANDS = [
    lambda x: np.sum(np.multiply((x, x), [[1.0], [3.0]])),
    lambda x: np.sum(np.add([x, x], [1.0, 2.0, 3.0]) ** 2),
    lambda x: np.sum(np.sin([x, x * 2.0])),
    lambda x: np.sum(np.power([x, x], 2.0)),
    lambda x: np.sum(np.power(2.0, (x, x * x))),
    lambda x: np.sum(np.maximum([x, -x], 0.1)),
    lambda x: np.sum(np.arctan2([x, x + 1.0], (x * x + 1.0, x + 2.0))),
    lambda x: np.sum([x, x ** 2]),
    lambda x: np.mean([x, x + 2.0]) ** 2,
    lambda x: np.std([x, x * 2.0]),
    lambda x: np.prod([x[0], x[1], 2.0]),
    lambda x: np.sum(np.cumsum([x, x * x], axis=1)),
    lambda x: np.sum(np.where([True, False, True], [x[0], x[1], x[2]], 0.0) ** 2),
    lambda x: np.sum(np.dot([x, x], [1.0, 2.0, 3.0]) ** 2),
    lambda x: np.sum(np.array([1.0, 2.0]) @ np.array([x, x ** 2])),
    lambda x: np.sum(np.clip([x, 2 * x], 0.4, 1.8) ** 2),
    lambda x: np.sum(np.linalg.norm([x, x * 2.0], axis=0)),
    lambda x: np.sum(W * [x, x ** 2]),
    lambda x: np.sum((W + [x, x]) ** 2),
    lambda x: np.mean((x + [1.0, 2.0, 3.0]) ** 2),
    lambda x: np.mean(([1.0, 2.0, 3.0] - x) ** 3),
    lambda x: np.sum((x, x * x) / W),
    lambda x: np.sum([x * 2.0] * 3),
    lambda x: np.sum((x,) * 2 + (x * x,)),
    _loop_concat, _named, _tuple_concat]


@pytest.mark.parametrize("f", LIST_OPERANDS, ids=[str(i) for i in range(len(LIST_OPERANDS))])
def test_list_operands(f):
    """grad and jvp against differences, hessian against differences of grad, vmap and
    vmap(grad) against loops."""
    x = rng.uniform(0.3, 1.2, 3)
    g = check_grad(f, x)
    t = rng.standard_normal(3)
    np.testing.assert_allclose(strop.jvp(f, (x,), (t,))[1], np.dot(g, t), rtol=1e-6)
    want = np.array([numeric_vjp(strop.grad(f), [x], 0, e) for e in np.eye(3)])
    np.testing.assert_allclose(strop.hessian(f)(x), want, rtol=1e-5, atol=1e-6)
    xs = rng.uniform(0.3, 1.2, (4, 3))
    np.testing.assert_allclose(strop.vmap(f)(xs), [f(r) for r in xs], rtol=1e-10)
    np.testing.assert_allclose(strop.vmap(strop.grad(f))(xs), [strop.grad(f)(r) for r in xs],
                               rtol=1e-10)


def test_sequences_that_stay_sequences():
    """Lists of arrays of different shapes given to joins, and containers returned, keep
    working; a ragged list NumPy rejects is rejected the same way."""
    def joins(x):
        parts = [x, x[:2] * 2.0]
        return np.sum(np.concatenate(parts) ** 2) + np.sum(np.hstack((x[:1], x)))

    def pytree(x):
        return {"a": x * 2.0, "b": (x[0], [x[1], x])}

    x = rng.uniform(0.3, 1.2, 3)
    check_grad(joins, x)
    out, tan = strop.jvp(pytree, (x,), (np.ones(3),))
    np.testing.assert_allclose(tan["b"][1][1], np.ones(3))
    assert tan["b"][0] == 1.0
    batched = strop.vmap(pytree)(np.stack([x, x + 1.0]))
    np.testing.assert_allclose(batched["b"][1][1], np.stack([x, x + 1.0]))

    def ragged(x):
        return np.sum(np.multiply([x, x[:2]], 2.0))
    with pytest.raises(ValueError):
        ragged(x)
    with pytest.raises(ValueError):
        strop.grad(ragged)(x)
