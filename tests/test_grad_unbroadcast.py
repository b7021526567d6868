"""Cotangents without ``unbroadcast`` where shapes and dtypes are proven equal
(transformer/shapes.py), and with it wherever they may differ: gradients against central
differences, compiled against the python backend, dtypes as the arguments give them."""
import numba
import numpy as np
import pytest

import strop
from strop import runtime
from helpers import numeric_vjp


def stencil(u0, alpha, steps):
    u = u0.copy()
    for _ in range(steps):
        lap = u[2:] - 2 * u[1:-1] + u[:-2]
        u[1:-1] = u[1:-1] + alpha * lap
    return np.sum(u ** 2)


def broadcast(x, b):
    y = x * b + b          # b: a row, a column, a number or x's shape
    return np.sum(np.tanh(y) * x)


def mixed(x, y):
    return np.sum(np.sin(x * y) + x * x + 2 * x)


def check_fd(f, args, got):
    for i, gi in enumerate(got):
        np.testing.assert_allclose(gi, numeric_vjp(f, args, i, 1.0), rtol=1e-6, atol=1e-7)


def test_stencil_gradient_needs_no_shape_tapes():
    g = strop.jit(strop.grad(stencil, argnums=(0, 1)))
    rng = np.random.default_rng(0)
    with strop.config.override(enable_x64=True):
        u0, alpha = rng.standard_normal(30), 0.2
        got = g(u0, alpha, 5)
        want = strop.jit(strop.grad(stencil, argnums=(0, 1)), backend="python")(u0, alpha, 5)
        src = strop.source(g)
    check_fd(lambda u, a: stencil(u, a, 5), (u0, alpha), got)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    # the slices, the lap and the update are all of one length: only the number alpha's
    # cotangent is summed (as it is computed), and the only tapes are the update's (for its
    # shape) and lap's values
    body = src.split("\ndef ", 1)[1]
    assert "unbroadcast(" not in body and "unbroadcast_chain('_0 * _1', alpha" in body, src
    assert src.count("shape_like(") <= 2, src


@pytest.mark.parametrize("bshape", [(4,), (1, 4), (3, 1), (3, 4), ()])
@pytest.mark.parametrize("backend", ["cpu", "python"])
def test_broadcast_operands_keep_their_sums(bshape, backend):
    rng = np.random.default_rng(1)
    with strop.config.override(enable_x64=True):
        x = rng.standard_normal((3, 4))
        b = rng.standard_normal(bshape) if bshape else 0.7
        got = strop.jit(strop.grad(broadcast, argnums=(0, 1)), backend=backend)(x, b)
    assert np.shape(got[1]) == np.shape(b)
    check_fd(broadcast, (x, b), got)


def test_dtypes_follow_each_call():
    """One function called with float32 and float64 arrays, and with both at once (x64 on):
    each cotangent in its own argument's dtype, as the python backend gives it."""
    rng = np.random.default_rng(2)
    g = strop.jit(strop.grad(mixed, argnums=(0, 1)))
    p = strop.jit(strop.grad(mixed, argnums=(0, 1)), backend="python")
    with strop.config.override(enable_x64=True):
        for dx, dy in [(np.float32, np.float32), (np.float64, np.float64),
                       (np.float32, np.float64), (np.float64, np.float32)]:
            x, y = rng.standard_normal(5).astype(dx), rng.standard_normal(5).astype(dy)
            got, want = g(x, y), p(x, y)
            assert [a.dtype for a in got] == [a.dtype for a in want] == [np.dtype(dx),
                                                                          np.dtype(dy)]
            np.testing.assert_allclose(got[0], want[0], rtol=1e-5)


def product(x, y):
    return np.sum(np.tanh(x * y) + x)


def test_code_is_made_per_equal_lengths():
    """x and y of one length in one call, of two in the next (y broadcast), then one again:
    the code made for equal lengths has no sums, the code for the second call assumes no
    lengths equal, the third runs the first's; each call's gradient is right."""
    g = strop.jit(strop.grad(product, argnums=(0, 1)))
    rng = np.random.default_rng(3)
    with strop.config.override(enable_x64=True):
        for n, m in [(5, 5), (5, 1), (7, 7)]:
            x, y = rng.standard_normal(n), rng.standard_normal(m)
            got = g(x, y)
            check_fd(product, (x, y), got)
            assert "unbroadcast(" not in strop.source(g) if n == m else \
                "unbroadcast(" in strop.source(g)
    assert len(g._cache) == 2


def test_a_batch_as_long_as_a_lane_makes_no_new_code():
    """vmap's batch axis is no length of the code it batches: a last chunk of 3 examples of 3
    features runs the code made for 5 of 3."""
    t = strop.jit(strop.vmap(strop.grad(product, argnums=(0, 1)), in_axes=(0, None)))
    rng = np.random.default_rng(4)
    with strop.config.override(enable_x64=True):
        y = rng.standard_normal(3)
        for n in (5, 3):
            x = rng.standard_normal((n, 3))
            got = t(x, y)
            for i in range(n):
                check_fd(product, (x[i], y), (got[0][i], got[1][i]))
    assert len(t._cache) == 1 and "unbroadcast(" not in strop.source(t)


@pytest.mark.parametrize("gshape, shape", [
    ((4, 5, 3), (4, 1, 3)), ((4, 5, 3), (1, 5, 3)), ((4, 5, 3), (5, 3)), ((4, 5, 3), (3,)),
    ((4, 5, 3), (1, 1, 1)), ((4, 5, 3), (4, 5, 1)), ((4, 5, 3), ()), ((2, 3), (1,)),
    ((0, 3), (3,)), ((2, 3, 4, 5), (3, 1, 5))])
@pytest.mark.parametrize("transposed", [False, True])
def test_compiled_unbroadcast_sums_each_broadcast_axis(gshape, shape, transposed):
    # runtime/numba/base._sum_to: a loop over g's axes (a pair's distances summed over
    # one particle, x[:, None] - x[None, :]), any layout of g, against NumPy's sums
    rng = np.random.default_rng(len(gshape) * 10 + len(shape))
    g = rng.normal(size=gshape[::-1]).T if transposed else rng.normal(size=gshape)
    x = np.zeros(shape)
    got = numba.njit(lambda g, x: runtime.unbroadcast(g, x))(g, x)
    lead = g.ndim - x.ndim
    want = g.sum(axis=tuple(range(lead))) if lead else g
    summed = tuple(a for a in range(x.ndim) if x.shape[a] == 1 and want.shape[a] != 1)
    want = want.sum(axis=summed, keepdims=True) if summed else want
    assert np.shape(got) == x.shape     # (a 0-d x's: a number)
    np.testing.assert_allclose(got, np.reshape(want, x.shape), rtol=1e-12, atol=1e-14)


def test_pairwise_differences_gradient_compiled():
    def energy(x):
        d = x[:, None, :] - x[None, :, :]
        r2 = np.sum(d ** 2, axis=-1) + np.eye(x.shape[0])
        return np.sum(np.exp(-r2) * (1.0 - np.eye(x.shape[0])))
    x = np.random.default_rng(2).normal(size=(7, 3))
    with strop.config.override(enable_x64=True):
        g = strop.grad(energy)
        compiled = strop.jit(g)
        got = compiled(x)
        assert compiled.last_backend == "cpu"
        np.testing.assert_allclose(got, g(x), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got, numeric_vjp(energy, (x,), 0, 1.0), rtol=1e-6, atol=1e-8)
