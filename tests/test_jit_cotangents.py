"""Compiled helpers that have loops of their own for the cotangents of a CNN's elementwise
code (runtime/numba/arithmetic.py's balanced_eq, base.py's sum to a bias's shape,
reductions.py's mean_grad over axes, axes.py's sum and mean over a block of axes) against
their NumPy versions, called from small njit functions: a jit(grad) of a function using all
of them took minutes to compile here."""
import warnings

import numba
import numpy as np

import strop.runtime.numba  # noqa: F401  (registers the implementations)
from strop.runtime import add, balanced_eq, mean_grad, unbroadcast, zeros_like


@numba.njit
def _balanced_eq(x, z, y):
    return balanced_eq(x, z, y)


@numba.njit
def _unbroadcast(g, x):
    return unbroadcast(g, x)


@numba.njit
def _mean_grad_axes(a):
    # in arrays: a number returned to Python becomes a Python float
    return (np.full(1, mean_grad(a, (1, 2), True)), np.full(1, mean_grad(a, (-1,), True)),
            np.full(1, mean_grad(a, 0, True)), np.full(1, mean_grad(a, None, True)))


def _ties(rng, *shape):
    v = rng.standard_normal(shape).astype(np.float32)
    v.reshape(-1)[::3] = 0    # ties with a 0 and between operands
    return v


def test_balanced_eq():
    rng = np.random.default_rng(0)
    x, y = _ties(rng, 4, 5, 6), _ties(rng, 4, 5, 6)
    zero = np.float32(0)
    for a, b in ((x, zero), (x, y), (zero, x), (x, _ties(rng, 6))):   # the last: broadcast
        z = np.maximum(a, b)
        got, want = _balanced_eq(a, z, b), balanced_eq(a, z, b)
        assert got.dtype == np.float32    # NumPy's: float64; the values are 0, 1/2 and 1
        np.testing.assert_array_equal(got, want)
        got, want = _balanced_eq(b, z, a), balanced_eq(b, z, a)
        np.testing.assert_array_equal(got, want)
    nan = np.array([np.nan, 1.0, 2.0], np.float32)
    np.testing.assert_array_equal(_balanced_eq(nan, np.maximum(nan, zero), zero),
                                  balanced_eq(nan, np.maximum(nan, zero), zero))


def test_unbroadcast_to_bias():
    rng = np.random.default_rng(1)
    g = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
    for shape in ((6,), (1, 1, 6), (5, 6), (1, 1, 1, 6), (4, 1, 6), (1,), (3, 4, 5, 6)):
        x = np.zeros(shape, np.float32)
        got, want = _unbroadcast(g, x), unbroadcast(g, x)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_mean_grad_over_axes():
    a = np.zeros((3, 4, 5, 6), np.float32)
    got = _mean_grad_axes(a)
    want = (mean_grad(a, (1, 2)), mean_grad(a, (-1,)), mean_grad(a, 0), mean_grad(a))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == np.float32
        np.testing.assert_array_equal(np.broadcast_to(g[0], w.shape), w)


@numba.njit
def _reductions(a):
    return (np.mean(a, axis=(1, 2)), np.sum(a, axis=(1, 2)), np.mean(a, axis=1),
            np.sum(a, axis=(0,)), np.mean(a, axis=(0, 1, 2)),
            np.sum(a, axis=(2, 1), keepdims=True), np.mean(a, axis=(-3, -2), keepdims=True),
            np.sum(a, axis=(1, 3)), np.mean(a, axis=-1))


def test_sum_and_mean_over_blocks_of_axes():
    rng = np.random.default_rng(2)
    for a in (rng.standard_normal((5, 6, 7, 8)).astype(np.float32),
              rng.standard_normal((5, 6, 7, 8))[:, ::2],     # not contiguous: the other path
              np.zeros((3, 0, 2, 4), np.float32)):
        with warnings.catch_warnings():   # the empty array's means: NaN, with warnings
            warnings.simplefilter("ignore", RuntimeWarning)
            want = (np.mean(a, axis=(1, 2)), np.sum(a, axis=(1, 2)), np.mean(a, axis=1),
                    np.sum(a, axis=(0,)), np.mean(a, axis=(0, 1, 2)),
                    np.sum(a, axis=(2, 1), keepdims=True),
                    np.mean(a, axis=(-3, -2), keepdims=True), np.sum(a, axis=(1, 3)),
                    np.mean(a, axis=-1))
            got = _reductions(a)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@numba.njit
def _dict_cotangents(n):
    hs = {-1: np.zeros((2, 1))}
    for t in range(n):
        hs[t] = np.ones((2, 1)) * (t + 1)
    zero = zeros_like(hs)
    more = {0: np.ones((2, 1)) * 10.0, 7: np.ones((2, 1))}
    return zero, add(hs, more)


def test_cotangents_of_dicts_keyed_by_time_steps():
    # a dict of arrays keyed by the loop's steps (min-char-rnn's hs[t]): the same keys, each a
    # zero; and two such cotangents added key by key
    zero, total = _dict_cotangents(3)
    assert sorted(zero) == [-1, 0, 1, 2] and all(np.all(v == 0) for v in zero.values())
    assert sorted(total) == [-1, 0, 1, 2, 7]
    np.testing.assert_array_equal(total[0], np.full((2, 1), 11.0))
    np.testing.assert_array_equal(total[2], np.full((2, 1), 3.0))
    np.testing.assert_array_equal(total[7], np.ones((2, 1)))
