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


def inplaced(src):
    import textwrap
    import gast
    from strop import runtime
    from strop.codegen.inplace import make_inplace
    from strop.transformer.unparse import unparse
    node = gast.parse(textwrap.dedent(src)).body[0]
    refs = {n: getattr(runtime, n) for n in ("unbroadcast", "matmul", "zeros_like", "pop")}
    make_inplace(node, refs)
    return unparse(node)


# reverse mode's trip of a loop: the carried cotangent handed to _g, bx bound again from it
HANDED_OVER = """
    def f(w, xs, tape):
        bx = zeros_like(w)
        for t in range(3):
            _g = bx
            x = pop(tape)
            bx = unbroadcast(_g, x)
            d = -_g
            p = matmul(d, w)
            bx = bx + p
        return bx
    """


def test_a_cotangent_handed_over_at_the_top_of_a_trip_is_still_owned():
    assert "bx = plus_inplace(bx, p)" in inplaced(HANDED_OVER)
    for changed, why in (
            ("d = -_g", "d = -_g\n            keep = _g"),          # _g moved on: seen
            ("bx = bx + p", "bx = bx + p\n            e = -_g"),   # _g read after
            ("_g = bx", "_g = bx\n            e = bx"),             # bx read before rebound
            ("_g = bx", "_g = bx\n            if t:\n                pass"),   # not plain
            ("bx = zeros_like(w)", "bx = w")):                      # the caller's array
        text = inplaced(HANDED_OVER.replace(changed, why))
        assert "plus_inplace" not in text, (why, text)


def kalman_like(theta, ys):        # 2x2 matrices from np.array, products in a recurrence
    A = np.array([[1.0, theta[0]], [0.0, theta[1]]])
    P, m = np.eye(2), np.ones(2)
    total = 0.0
    for t in range(ys.shape[0]):
        m = A @ m
        P = A @ P @ A.T + theta[2] * np.eye(2)
        P = P - 0.1 * (P @ P)
        total = total + np.sum(P * ys[t]) + np.sum(m ** 2)
    return total


def test_matrix_cotangents_of_a_recurrence_accumulate_in_place():
    # np.array's result is an array, not a container: its cotangent sums with +, in place;
    # the carried cotangents of P and m, handed over each trip, stay owned
    rng = np.random.default_rng(4)
    theta, ys = np.array([0.3, 0.8, 0.1]), rng.normal(size=(6, 2, 2))
    g = grad(kalman_like)
    compiled = jit(g)
    np.testing.assert_allclose(compiled(theta, ys), g(theta, ys), rtol=1e-12, atol=1e-14)
    assert compiled.last_backend == "cpu"
    text = strop.source(compiled)
    assert "bA = add(" not in text and "plus_inplace(bA" in text, text
    assert "add_matmul_vjp_y_inplace(bP" in text or "add_matmul_vjp_x_inplace(bP" in text, text
    _matches_central_differences(kalman_like, compiled, theta, ys)


def _matches_central_differences(f, compiled, theta, ys, eps=1e-6):
    got = compiled(theta, ys)
    for i in range(theta.size):
        e = np.zeros(theta.size)
        e[i] = eps
        numeric = (f(theta + e, ys) - f(theta - e, ys)) / (2 * eps)
        assert abs(got[i] - numeric) < 1e-6 * max(1, abs(numeric))


def filter_like(theta, ys):         # m's cotangent, passed on through two names, then a product's
    A = np.array([[1.0, 1.0], [0.0, theta[0]]])
    H = np.array([[1.0, 0.0]])
    m = np.zeros(2)
    ll = 0.0
    for t in range(ys.shape[0]):
        m = A @ m
        v = ys[t] - H @ m
        K = theta[1] * np.ones((2, 1))
        m = m + K @ v
        ll = ll - v[0] ** 2
    return ll


def test_a_cotangent_passed_on_to_a_name_read_before_the_update_stays_owned():
    # ``_g = bm; bm = unbroadcast(_g, m); _bt = unbroadcast(_g, ...)``, _bt read only into
    # products before bm's product is added: bm is still the only holder then, so the product
    # goes into it in place (a Kalman filter's state cotangent was copied each step)
    rng = np.random.default_rng(5)
    theta, ys = np.array([0.9, 0.4]), rng.normal(size=(7, 1))
    g = grad(filter_like)
    compiled = jit(g)
    np.testing.assert_allclose(compiled(theta, ys), g(theta, ys), rtol=1e-12, atol=1e-14)
    assert compiled.last_backend == "cpu"
    text = strop.source(compiled)
    assert "bm = add_matmul_vjp_y_inplace(bm" in text, text
    _matches_central_differences(filter_like, compiled, theta, ys)
