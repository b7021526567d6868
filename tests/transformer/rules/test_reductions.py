import numpy as np
import pytest

from helpers import check_rule
from strop.transformer.rules import RULES, evaluate_vjp

rng = np.random.default_rng(3)
AXES = [None, 0, 1, -1, (0, 2), (2, -3), (0, 1, 2)]

SMOOTH = [np.sum, np.mean, np.prod, np.var, np.std, np.nansum, np.nanmean, np.nanprod,
          np.nanvar, np.nanstd]
EXTREMAL = [np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin, np.ptp]
ALL = SMOOTH + EXTREMAL
ids = [f.__name__ for f in ALL]


@pytest.mark.parametrize("fn", ALL, ids=ids)
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_axis_and_keepdims(fn, axis, keepdims):
    # distinct values: no ties for max/min, and FD stays away from their kinks
    x = rng.permutation(24).reshape(2, 3, 4) / 10 + rng.uniform(-0.01, 0.01, (2, 3, 4))
    check_rule(fn, x, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("fn", ALL, ids=ids)
@pytest.mark.parametrize("shape,axis", [((), None), ((5,), None), ((5,), 0), ((5,), -1),
                                        ((1, 4), 0), ((3, 1), (0, 1))], ids=str)
def test_small_shapes(fn, shape, axis):
    x = rng.permutation(max(1, int(np.prod(shape)))).reshape(shape) + rng.uniform(0, 0.1, shape)
    if np.size(x) == np.size(fn(x, axis=axis)) and fn in (np.std, np.nanstd):
        return  # std over one value is 0: its rule divides 0 by 0 (as autograd's does)
    check_rule(fn, x, axis=axis)


def test_python_scalar_and_var_of_one_value():
    for fn in (np.sum, np.mean, np.prod, np.max, np.min):
        check_rule(fn, 1.5)
    check_rule(np.var, 1.5)
    check_rule(np.var, np.array([[1.5, 2.0]]), axis=0)


@pytest.mark.parametrize("fn,args", [
    (np.sum, (-1, None, None, True)), (np.mean, (-1, None, None, True)),
    (np.prod, (-1, None, None, True)), (np.var, (-1, None, None, 1, True)),
    (np.std, (-1, None, None, 1, True)), (np.max, (-1, None, True)), (np.ptp, (-1, None, True))])
def test_positional_arguments_bind(fn, args):
    x = rng.standard_normal((3, 4))
    check_rule(fn, x, 1)  # axis
    check_rule(fn, x, *args)  # axis, ..., keepdims last
    if fn is not np.max and fn is not np.ptp:
        check_rule(fn, x, 0, np.float64)  # axis, dtype
    assert fn(x, *args).shape == (3, 1)


@pytest.mark.parametrize("fn", [np.var, np.std, np.nanvar, np.nanstd])
@pytest.mark.parametrize("axis", [None, 0, (1, 2)], ids=str)
def test_ddof(fn, axis):
    x = rng.standard_normal((3, 4, 2))
    check_rule(fn, x, axis, None, None, 1)  # positional ddof
    check_rule(fn, x, axis=axis, ddof=2, keepdims=True)
    check_rule(fn, x, axis=axis, correction=1)


def test_var_with_a_given_mean():
    x = rng.standard_normal((3, 4))
    for ddof in (0, 1):
        m = np.mean(x, axis=1, keepdims=True)
        # x.var(mean=m) is the variance about m; its derivative in x holds m fixed
        g = rng.standard_normal(3)
        got = evaluate_vjp(np.var, "a", g, np.var(x, axis=1, ddof=ddof, mean=m), x, axis=1,
                           ddof=ddof, mean=m)
        want = g[:, None] * 2 * (x - m) / (4 - ddof)
        np.testing.assert_allclose(got, want)
    check_rule(np.std, x, axis=0, mean=np.mean(x, axis=0, keepdims=True))


MASK = np.array([[True, False, True, True], [False, True, True, False], [True, True, True, True]])


@pytest.mark.parametrize("fn", [np.sum, np.mean, np.prod, np.var, np.std, np.nansum, np.nanmean,
                                np.nanvar])
@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
def test_where(fn, axis):
    x = rng.uniform(0.5, 2.0, (3, 4))
    check_rule(fn, x, axis=axis, where=MASK)


@pytest.mark.parametrize("fn,initial", [(np.max, -5.0), (np.min, 5.0), (np.nanmax, -5.0)])
@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
def test_max_min_where_and_initial(fn, initial, axis):
    x = rng.permutation(12).reshape(3, 4) + rng.uniform(0, 0.1, (3, 4))
    check_rule(fn, x, axis=axis, where=MASK, initial=initial)
    check_rule(fn, x, axis=axis, initial=-initial * 100)  # the initial value wins: no derivative


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
def test_prod_with_zeros(axis):
    x = rng.uniform(0.5, 2.0, (3, 4))
    x[0, 1] = 0.0
    x[1, :2] = 0.0  # two zeros in a row
    x[2, 2] = 0.0
    check_rule(np.prod, x, axis=axis)
    check_rule(np.prod, x, axis=axis, initial=1.7)
    check_rule(np.prod, x, axis=axis, where=MASK)
    check_rule(np.nanprod, np.where(MASK, x, np.nan), axis=axis)


@pytest.mark.parametrize("fn", [np.nansum, np.nanmean, np.nanprod, np.nanvar, np.nanstd,
                                np.nanmax, np.nanmin])
@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
def test_nan_variants_skip_nans(fn, axis):
    x = rng.permutation(12).reshape(3, 4) / 4 + 0.5 + rng.uniform(0, 0.01, (3, 4))
    x[~MASK] = np.nan
    ans = fn(x, axis=axis)
    g = rng.standard_normal(np.shape(ans))
    got = evaluate_vjp(fn, "a", g, ans, x, axis=axis)
    np.testing.assert_equal(got[~MASK], 0.0)
    check_rule(fn, x, axis=axis)  # FD: a NaN element stays NaN and changes nothing


@pytest.mark.parametrize("fn", [np.max, np.min, np.nanmax, np.nanmin])
def test_ties_split_evenly(fn):
    x = np.array([[1.0, 3.0, 3.0, 2.0], [2.0, 2.0, 2.0, 2.0]])
    if fn in (np.min, np.nanmin):
        x = -x
    g = np.array([6.0, 8.0])
    got = evaluate_vjp(fn, "a", g, fn(x, axis=1), x, axis=1)
    np.testing.assert_allclose(got, [[0, 3, 3, 0], [2, 2, 2, 2]])
    got = evaluate_vjp(fn, "a", 6.0, fn(x), x)
    np.testing.assert_allclose(got, [[0, 3, 3, 0], [0, 0, 0, 0]])


def test_max_of_nan_is_nan_and_nanmax_ignores_it():
    x = np.array([1.0, np.nan, 3.0])
    assert np.all(np.isnan(evaluate_vjp(np.max, "a", 1.0, np.max(x), x)))
    np.testing.assert_equal(evaluate_vjp(np.nanmax, "a", 1.0, np.nanmax(x), x), [0, 0, 1])


def test_ptp_ties():
    x = np.array([1.0, 3.0, 3.0, 1.0, 2.0])
    np.testing.assert_allclose(evaluate_vjp(np.ptp, "a", 2.0, np.ptp(x), x),
                               [-1, 1, 1, -1, 0])


@pytest.mark.parametrize("fn", [np.sum, np.mean, np.prod, np.var, np.std, np.max, np.ptp,
                                np.nanmean, np.cumsum, np.cumprod, np.average])
def test_keeps_float32(fn):
    x = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    ans = fn(x, axis=1)
    got = evaluate_vjp(fn, "a", np.ones_like(ans), ans, x, axis=1)
    assert got.dtype == np.float32, (fn, got.dtype)


CUMULATIVE = [np.cumsum, np.cumprod, np.nancumsum, np.nancumprod]


@pytest.mark.parametrize("fn", CUMULATIVE, ids=[f.__name__ for f in CUMULATIVE])
@pytest.mark.parametrize("shape,axis", [((), None), ((5,), None), ((5,), 0), ((5,), -1),
                                        ((2, 3, 4), None), ((2, 3, 4), 0), ((2, 3, 4), 1),
                                        ((2, 3, 4), -1)], ids=str)
def test_cumulative(fn, shape, axis):
    x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape)
    check_rule(fn, x, axis=axis)
    check_rule(fn, x, axis)  # positional axis


@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
def test_cumprod_with_zeros(axis):
    x = rng.uniform(0.5, 2.0, (3, 4))
    x[0, 1] = 0.0
    x[1, 0:2] = 0.0
    x[2, 3] = 0.0
    check_rule(np.cumprod, x, axis=axis)


@pytest.mark.parametrize("fn", [np.nancumsum, np.nancumprod])
@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
def test_nan_cumulative_skip_nans(fn, axis):
    x = rng.uniform(0.5, 2.0, (3, 4))
    x[~MASK] = np.nan
    ans = fn(x, axis=axis)
    got = evaluate_vjp(fn, "a", rng.standard_normal(ans.shape), ans, x, axis=axis)
    np.testing.assert_equal(got[~MASK], 0.0)
    check_rule(fn, x, axis=axis)


@pytest.mark.parametrize("shape,axis,wshape", [
    ((5,), None, (5,)), ((3, 4), None, (3, 4)), ((3, 4), 0, (3,)), ((3, 4), -1, (4,)),
    ((3, 4), 1, (3, 4)), ((2, 3, 4), (0, 2), (2, 4)), ((2, 3, 4), (2, 0), (4, 2))], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_average(shape, axis, wshape, keepdims):
    a, w = rng.standard_normal(shape), rng.uniform(0.5, 2.0, wshape)
    check_rule(np.average, a, axis, w, keepdims=keepdims)  # both a and the weights
    check_rule(np.average, a, axis=axis, keepdims=keepdims)  # no weights: the mean


@pytest.mark.parametrize("fn", [np.all, np.any, np.argmax, np.argmin, np.nanargmax,
                                np.nanargmin, np.argsort, np.argpartition, np.searchsorted,
                                np.count_nonzero, np.nonzero, np.flatnonzero, np.argwhere])
def test_nondiff(fn):
    assert RULES[fn].differentiable is False
