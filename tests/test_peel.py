"""A loop that turns a number into an array (``s = 0`` then ``s = s * x + c[i]``) compiles:
its first trip is written apart (transformer/peel.py), under every transform; a call whose loop
runs no trip gives Python's result (the number)."""
import warnings

import numpy as np
import pytest

from strop import grad, jit, jvp, source, vmap
from strop.errors import JitFallbackWarning

from helpers import check_grad, x64_fixture

x64 = pytest.fixture(autouse=True)(x64_fixture)


def horner(c, x):
    s = 0
    for i in range(c.shape[0]):
        s = s * x + c[i]
    return s


def backwards(c, x):
    n = c.shape[0]
    acc = 0.0
    for k in range(n - 1, -1, -1):
        acc = acc + c[k] * x ** k
    total = acc * 2.0
    return total


def two_loops(w, x):
    a = 0
    for i in range(2, w.shape[0]):
        a = a + w[i] * np.sin(x)
    b = 1
    for j in range(3):
        b = b * (a + j)
    return a + b


def chebyshev(c, x):
    b0 = 0
    b1 = 0
    for k in range(c.shape[0] - 1, -1, -1):
        b2 = b1
        b1 = b0
        b0 = 2 * x * b1 - b2 + c[k]
    return b0 - b1 * x


def nested(c, x):
    # (the number becomes an array on the inner loop's first trip: both first trips apart)
    s = 0.0
    n = c.shape[0]
    for i in range(n):
        for j in range(i, n):
            s = s + c[i] * c[j] * np.sin(x * j)
        s = s * 0.5
    return s


def stays_a_number(x):
    s = 0
    for i in range(x.shape[0]):
        s = s + x[i]
    return s


def jumps(c, x):
    s = 0
    for i in range(c.shape[0]):
        if c[i] == 0:
            continue
        s = s + c[i] * x
    return s


def _compiled(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        return jit(f)(*args)


@pytest.mark.parametrize("f", [horner, backwards, two_loops, chebyshev, nested])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
def test_compiles_and_equals_python(f, n):
    rng = np.random.default_rng(n)
    c, x = rng.normal(size=n), rng.normal(size=3)
    got, want = _compiled(f, c, x), f(c, x)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert type(got) is type(want) or np.shape(got) == np.shape(want) and np.ndim(got)


@pytest.mark.parametrize("f", [horner, backwards, two_loops, chebyshev, nested])
def test_gradients_against_central_differences(f):
    rng = np.random.default_rng(0)
    c, x = rng.normal(size=4), rng.normal(size=3)

    def loss(c, x):
        return np.sum(f(c, x) ** 2)
    for argnum in (0, 1):
        got = _compiled(grad(loss, argnums=argnum), c, x)
        np.testing.assert_allclose(got, grad(loss, argnums=argnum)(c, x), rtol=1e-10)
    check_grad(loss, c, x, argnums=0)
    check_grad(loss, c, x, argnums=1)


def test_jvp_and_vmap_against_loops():
    rng = np.random.default_rng(1)
    c, xs = rng.normal(size=3), rng.normal(size=(5, 2))
    np.testing.assert_allclose(_compiled(vmap(horner, in_axes=(None, 0)), c, xs),
                               np.stack([horner(c, x) for x in xs]), rtol=1e-12)
    cs = rng.normal(size=(4, 3))
    np.testing.assert_allclose(_compiled(vmap(horner, in_axes=(0, None)), cs, xs[0]),
                               np.stack([horner(c, xs[0]) for c in cs]), rtol=1e-12)
    primal, tangent = jvp(lambda x: horner(c, x), (xs[0],), (np.ones(2),))
    eps = 1e-6
    np.testing.assert_allclose(tangent, (horner(c, xs[0] + eps) - horner(c, xs[0] - eps))
                               / (2 * eps), rtol=1e-6)


def test_only_loops_that_widen_are_split():
    x = np.arange(4.0)
    assert _compiled(stays_a_number, x) == 6.0
    assert "first_trip" not in source(jit(stays_a_number))
    j = jit(horner)
    j(np.ones(3), x)
    text = source(j)
    assert "first_trip(" in text and "s = s * x + c[i]" in text
    with pytest.warns(JitFallbackWarning):   # a loop that continues is not split
        np.testing.assert_allclose(jit(jumps)(np.array([1.0, 0.0, 2.0]), x),
                                   jumps(np.array([1.0, 0.0, 2.0]), x))


def test_the_function_split_is_left_as_it_was():
    import gast
    from strop.runtime.trips import first_trip
    from strop.transformed import normalized
    from strop.transformer.peel import split_first_trips
    fn = normalized(chebyshev, ("array1", "array1"))
    before = gast.dump(fn.node)
    split = split_first_trips(fn, {"c": 1, "x": 1}, first_trip)
    assert split is not fn and gast.dump(fn.node) == before
    assert gast.dump(split.node).count("first_trip") == 3
