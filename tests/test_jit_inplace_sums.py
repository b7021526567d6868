"""``acc = acc + t`` in compiled code adds into ``acc``'s array where codegen/inplace.py proves
it owned (runtime.plus_inplace), and makes a new array where another name sees the old one, the
sum has another shape or dtype, or ``t`` is a temporary the loop fuses into the sum: each
against the uncompiled function."""
import numpy as np
import pytest

import strop
from strop import config, grad, jit


@pytest.fixture(autouse=True)
def x64():
    with config.override(enable_x64=True):
        yield


def rows_summed(x):
    acc = np.zeros(x.shape[1])
    for i in range(x.shape[0]):
        acc = acc + x[i]
    return acc


def seen_by_another_name(x):
    acc = np.zeros(x.shape[1])
    before = acc
    for i in range(x.shape[0]):
        before = acc              # the old array must keep its values
        acc = acc + x[i]
    return acc, before


def grows_then_adds(x):
    acc = np.zeros((x.shape[1], 1))
    for i in range(x.shape[0]):
        acc = acc + x[i]          # (n, 1) + (n, m): a new (n, m) array, then in place
    return acc


def plus_a_number(x):
    acc = x * 2.0
    step = x[0, 0] * 0.5
    for i in range(3):
        acc = acc + step
    return acc


def fused(x):
    acc = np.zeros(x.shape[1])
    for i in range(x.shape[0]):
        acc = acc + x[i] * x[i]   # one pass: the product written into the sum
    return acc


@pytest.mark.parametrize("f, shape, in_place", [
    (rows_summed, (5, 4), True), (seen_by_another_name, (5, 4), False),
    (grows_then_adds, (5, 3, 4), True), (plus_a_number, (3, 4), True), (fused, (5, 4), False)])
def test_sums_in_place_only_where_owned(f, shape, in_place):
    x = np.random.default_rng(0).normal(size=shape)
    compiled = jit(f)
    got, want = compiled(x), f(x)
    for a, b in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want))):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    assert compiled.last_backend == "cpu"
    assert ("plus_inplace" in strop.source(compiled)) == in_place, strop.source(compiled)


def test_float32_sum_of_float64_terms_is_float64():
    def f(y):
        acc = np.zeros(y.shape, np.float32)
        acc = acc + y             # owned, but the sum is float64: a new array
        return acc
    y = np.full(3, 0.1)
    compiled = jit(f)
    got = compiled(y)
    assert "plus_inplace" in strop.source(compiled) and compiled.last_backend == "cpu"
    assert got.dtype == f(y).dtype == np.float64
    np.testing.assert_array_equal(got, f(y))


def test_gradient_accumulations_add_in_place():
    def rnn(w, xs):
        h = np.zeros(w.shape[0])
        b = np.zeros(w.shape[0])
        for t in range(xs.shape[0]):
            h = np.tanh(w @ h + xs[t] + b)
        return np.sum(h ** 2)
    rng = np.random.default_rng(1)
    w, xs = rng.normal(size=(4, 4)) / 2, rng.normal(size=(6, 4))
    g = grad(rnn, argnums=(0, 1))
    compiled = jit(g)
    for a, b in zip(compiled(w, xs), g(w, xs)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
