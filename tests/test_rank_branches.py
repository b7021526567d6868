"""A branch on a value's rank (``if x.ndim > 2:``) is decided where the code is made, for the
ranks of the call (transformer/rank_tests.py): compiled code keeps the branch taken only, so
a name that is a 3-d array before it and a matrix after it compiles; each rank its own code."""
import warnings

import numpy as np
import pytest

from strop import grad, jit, vmap
from strop.errors import JitFallbackWarning

from helpers import check_grad, x64_fixture

x64 = pytest.fixture(autouse=True)(x64_fixture)


def as_matrix(x):
    # (autograd's convnet flattens its input this way)
    if x.ndim > 2:
        x = x.reshape((x.shape[0], int(np.prod(x.shape[1:]))))
    if np.ndim(x) == 1:
        x = x[None, :]
    if not len(x.shape) == 2:
        x = x * np.ones((1, 1))
    return x


def loss(x, w):
    h = np.tanh(as_matrix(x) @ w[:np.shape(as_matrix(x))[1]])
    return np.sum(h ** 2)


@pytest.mark.parametrize("shape", [(5,), (2, 5), (2, 1, 5), (1, 5, 1, 1)],
                         ids=lambda s: f"rank{len(s)}")
def test_compiles_for_each_rank_and_equals_python(shape):
    rng = np.random.default_rng(len(shape))
    x, w = rng.normal(size=shape), rng.normal(size=(5, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        np.testing.assert_allclose(jit(loss)(x, w), loss(x, w), rtol=1e-12)
        for argnum in (0, 1):
            np.testing.assert_allclose(jit(grad(loss, argnums=argnum))(x, w),
                                       grad(loss, argnums=argnum)(x, w), rtol=1e-12)
    check_grad(loss, x, w, argnums=0)
    check_grad(loss, x, w, argnums=1)


def rank_after_a_loop(x, n):
    y = x
    for _ in range(n):
        y = y * 2.0
    if y.ndim == 1:   # (the loop keeps y's rank: still decided)
        return np.sum(y)
    return np.sum(y[0])


def test_a_test_after_a_loop_that_keeps_the_rank():
    x = np.arange(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        assert jit(rank_after_a_loop)(x, 2) == rank_after_a_loop(x, 2)
        assert jit(rank_after_a_loop)(np.ones((2, 3)), 1) == 6.0


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0)])
def test_under_vmap_a_test_reads_a_lanes_rank(in_axes):
    """vmap's code is made from one lane's: its tests are decided for a lane's ranks (a
    batch of vectors is a matrix, and hstack's axis was once decided for the matrix)."""
    rng = np.random.default_rng(3)
    xs, w = rng.normal(size=(4, 5)), rng.normal(size=(5, 3))
    ws = np.stack([w, w * 0.5])
    args = (xs, w) if in_axes == (0, None) else (xs[0], ws)
    lanes = [loss(x, w) for x in xs] if in_axes == (0, None) else [loss(xs[0], v) for v in ws]
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        np.testing.assert_allclose(jit(vmap(loss, in_axes=in_axes))(*args), lanes, rtol=1e-12)
