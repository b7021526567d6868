"""Compiled NumPy functions along an axis that Numba implements over whole arrays only
(runtime/numba/axes.py, reductions.py, linalg.py), called from njit code and compared with
NumPy over every axis, negative ones, tuples of axes, empty axes and ties."""
import numba
import numpy as np
import pytest

import strop.runtime as rt
import strop.runtime.numba  # noqa: F401  (registers the implementations)

X = np.random.default_rng(0).normal(size=(4, 3, 5))


@numba.njit
def _roll(x, shift, axis):
    return np.roll(x, shift, axis)


@numba.njit
def _roll_pairs(x):
    return np.roll(x, (1, -2), (0, 2))


@numba.njit
def _roll_axes(x):
    return np.roll(x, 2, (0, -1))


@numba.njit
def _flip(x, axis):
    return np.flip(x, axis)


@numba.njit
def _flip_all(x):
    return np.flip(x)


@numba.njit
def _flip_axes(x):
    return np.flip(x, (0, 2))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("shift", [-7, -1, 0, 1, 3, 8])
def test_roll_along_an_axis(shift, axis):
    np.testing.assert_array_equal(_roll(X, shift, axis), np.roll(X, shift, axis))


def test_roll_along_axes_and_an_empty_axis():
    np.testing.assert_array_equal(_roll_pairs(X), np.roll(X, (1, -2), (0, 2)))
    np.testing.assert_array_equal(_roll_axes(X), np.roll(X, 2, (0, -1)))
    np.testing.assert_array_equal(_roll(X[:, :0], 1, 1), np.roll(X[:, :0], 1, 1))
    with pytest.raises(ValueError, match="axis"):
        _roll(X, 1, 3)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_flip(axis):
    np.testing.assert_array_equal(_flip(X, axis), np.flip(X, axis))
    np.testing.assert_array_equal(_flip(X[:, ::2], axis), np.flip(X[:, ::2], axis))


def test_flip_all_and_axes():
    np.testing.assert_array_equal(_flip_all(X), np.flip(X))
    np.testing.assert_array_equal(_flip_axes(X), np.flip(X, (0, 2)))


@numba.njit
def _extremum_grad(a, ans, axis, keepdims):
    return rt.extremum_grad(a, ans, axis, keepdims)


@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2), (1,)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_extremum_grad_along_axes_splits_ties_and_keeps_nan(axis, keepdims):
    a = np.round(X, 0)            # ties
    a[1, 1, 1] = np.nan
    for top in (np.max, np.min):
        ans = top(a, axis=axis, keepdims=keepdims)
        np.testing.assert_array_equal(_extremum_grad(a, ans, axis, keepdims),
                                      rt.extremum_grad(a, ans, axis, keepdims))


@numba.njit
def _solve_vjps(g, a, b, ans):
    gb = rt.solve_adjoint(g, a, b)
    return rt.solve_vjp_a(gb, a, b, ans), gb


@pytest.mark.parametrize("columns", [None, 2])
def test_solve_vjps_of_one_system(columns):
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    b = rng.normal(size=3 if columns is None else (3, columns))
    ans = np.linalg.solve(a, b)
    g = rng.normal(size=ans.shape)
    got = _solve_vjps(g, a, b, ans)
    gb = rt.solve_adjoint(g, a, b)
    np.testing.assert_allclose(got[0], rt.solve_vjp_a(gb, a, b, ans), rtol=1e-12)
    np.testing.assert_allclose(got[1], gb, rtol=1e-12)


@numba.njit
def _diagonal_vjp(g, a, offset, axis1, axis2):
    return rt.diagonal_vjp(g, a, offset, axis1, axis2)


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 2)])
@pytest.mark.parametrize("offset", [0, 1, -2, 4])
@pytest.mark.parametrize("axes", [(0, 1), (1, 0), (-1, -2)])
@pytest.mark.parametrize("g_of", ["diagonal", "one", "number"])
def test_diagonal_vjp_of_a_matrix(shape, offset, axes, g_of):
    """np.trace's and np.diagonal's cotangent of a matrix, compiled, against the helper's
    NumPy source (it ran in an object-mode island): g a diagonal's values, or np.trace's one
    value (``g[..., None]``, or a number)."""
    a = np.arange(float(np.prod(shape))).reshape(shape)
    k = np.diagonal(a, offset, *axes).shape[-1]
    g = {"diagonal": np.arange(1.0, k + 1), "one": np.array([2.5]), "number": 2.5}[g_of]
    np.testing.assert_array_equal(_diagonal_vjp(g, a, offset, *axes),
                                  rt.diagonal_vjp(g, a, offset, *axes))


# (the flags literal, as generated code writes them)
_MATMUL_LANES = {(True, False): numba.njit(lambda a, b: rt.matmul_lanes(a, b, True, False)),
                 (False, True): numba.njit(lambda a, b: rt.matmul_lanes(a, b, False, True)),
                 (True, True): numba.njit(lambda a, b: rt.matmul_lanes(a, b, True, True))}


@pytest.mark.parametrize("ra", [1, 2])
@pytest.mark.parametrize("rb", [1, 2])
@pytest.mark.parametrize("batched", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_lanes_of_vectors_and_matrices(ra, rb, batched, dtype):
    """vmap's ``a @ b``, compiled for lanes that are vectors or matrices (it went through
    NumPy in object mode, ~100 us a call whatever the size), against its NumPy source."""
    rng = np.random.default_rng(ra * 10 + rb)
    lane_a, lane_b = (3, 4)[2 - ra:], (4, 2)[:rb]
    a = rng.normal(size=(5,) * batched[0] + lane_a).astype(dtype)
    b = rng.normal(size=(5,) * batched[1] + lane_b).astype(dtype)
    got = _MATMUL_LANES[batched](a, b)
    want = rt.matmul_lanes(a, b, *batched)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@numba.njit
def _select(mask, new, old):
    return rt.select(mask, new, old)


@pytest.mark.parametrize("lane", [(), (3,), (2, 3)])
@pytest.mark.parametrize("mask", [[True, False, True, False], [False] * 4, [True] * 4])
def test_select_of_lanes(lane, mask):
    """vmap's choice between a branch's value and the value before it, lane by lane,
    compiled (it ran in an object-mode island), against its NumPy source; and where a lane's
    shape differs, a mask the same in every lane chooses, another raises."""
    rng = np.random.default_rng(len(lane))
    new, old, mask = rng.normal(size=(4,) + lane), rng.normal(size=(4,) + lane), np.array(mask)
    np.testing.assert_array_equal(_select(mask, new, old), rt.select(mask, new, old))
    np.testing.assert_array_equal(_select(mask, new, None), new)
    if lane:
        longer = rng.normal(size=(4,) + lane[:-1] + (lane[-1] + 1,))
        if mask.all() or not mask.any():
            np.testing.assert_array_equal(_select(mask, longer, new),
                                          rt.select(mask, longer, new))
        else:
            for f in (_select, rt.select):
                with pytest.raises(ValueError, match="differs between lanes"):
                    f(mask, longer, new)


_TRANSPOSE_LANES = {None: numba.njit(lambda x: rt.transpose_lanes(x)),
                    "axes": numba.njit(lambda x, axes: rt.transpose_lanes(x, axes))}


@pytest.mark.parametrize("shape, axes", [((4,), None), ((4, 3), None), ((4, 3, 2), None),
                                         ((4, 3, 2, 5), None), ((4, 3, 2), (1, 0)),
                                         ((4, 3, 2, 5), (2, 0, 1)), ((4, 3, 2, 5), (-1, 0, 1))])
def test_transpose_lanes(shape, axes):
    """vmap's np.transpose, compiled (it ran in an object-mode island), against its source."""
    x = np.arange(float(np.prod(shape))).reshape(shape)
    got = _TRANSPOSE_LANES[None](x) if axes is None else _TRANSPOSE_LANES["axes"](x, axes)
    np.testing.assert_array_equal(got, rt.transpose_lanes(x, axes))


@numba.njit
def _stack_list(rows, axis):
    return np.stack(rows, axis)


@numba.njit
def _stack_list_default(x):
    return np.stack([x[0], x[1]])


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack_of_a_list_along_each_axis(axis):
    rows = [X[0], X[1] * 2.0, X[2]]
    np.testing.assert_array_equal(_stack_list(rows, axis), np.stack(rows, axis))


def test_stack_of_a_list_display_with_the_axis_left_out():
    np.testing.assert_array_equal(_stack_list_default(X), np.stack([X[0], X[1]]))


@numba.njit
def _expand_number(v):
    return np.expand_dims(v, (-2, -1))


@numba.njit
def _expand_axes(x, axes):
    return np.expand_dims(x, axes)


def test_expand_dims_of_a_number_and_along_axes():
    np.testing.assert_array_equal(_expand_number(2.5), np.expand_dims(2.5, (-2, -1)))
    for axes in ((0, 2), (-1, 0), (1, 4), (0, 1, 2)):
        np.testing.assert_array_equal(_expand_axes(X, axes), np.expand_dims(X, axes))
    with pytest.raises(ValueError):
        _expand_axes(X, (1, 1))
