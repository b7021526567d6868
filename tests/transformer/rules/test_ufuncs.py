import numpy as np
import pytest

from helpers import check_rule, numeric_vjp
from strop.transformer.rules import RULES, evaluate_vjp

rng = np.random.default_rng(2)
SHAPES = [(), (3,), (2, 3)]
BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)),
                 ((4, 3), ())]

# (function, low, high): an interval where the function is smooth
UNARY = [
    (np.exp, -2, 2), (np.exp2, -2, 2), (np.expm1, -2, 2), (np.log, 0.2, 3), (np.log2, 0.2, 3),
    (np.log10, 0.2, 3), (np.log1p, -0.8, 3), (np.sqrt, 0.2, 3), (np.cbrt, 0.2, 3),
    (np.cbrt, -3, -0.2), (np.square, -2, 2), (np.reciprocal, 0.3, 3), (np.reciprocal, -3, -0.3),
    (np.sin, -3, 3), (np.cos, -3, 3), (np.tan, -1.2, 1.2), (np.arcsin, -0.9, 0.9),
    (np.arccos, -0.9, 0.9), (np.arctan, -3, 3), (np.sinh, -2, 2), (np.cosh, -2, 2),
    (np.tanh, -2, 2), (np.arcsinh, -3, 3), (np.arccosh, 1.2, 3), (np.arctanh, -0.9, 0.9),
    (np.deg2rad, -90, 90), (np.radians, -90, 90), (np.rad2deg, -2, 2), (np.degrees, -2, 2),
    (np.sinc, -2.5, 2.5), (np.absolute, 0.1, 2), (np.absolute, -2, -0.1), (np.fabs, -2, -0.1),
    (np.fabs, 0.1, 2), (np.nan_to_num, -2, 2), (np.real, -2, 2), (np.real_if_close, -2, 2),
    (np.conjugate, -2, 2),
]


@pytest.mark.parametrize("fn,low,high", UNARY, ids=[f.__name__ for f, _, _ in UNARY])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_unary(fn, low, high, shape):
    check_rule(fn, rng.uniform(low, high, shape))


@pytest.mark.parametrize("fn,low,high", UNARY, ids=[f.__name__ for f, _, _ in UNARY])
def test_unary_python_scalar(fn, low, high):
    check_rule(fn, float(rng.uniform(low, high)))


@pytest.mark.parametrize("fn,low,high", UNARY, ids=[f.__name__ for f, _, _ in UNARY])
def test_unary_keeps_float32(fn, low, high):
    x = rng.uniform(low, high, (3,)).astype(np.float32)
    ans = fn(x)
    got = evaluate_vjp(fn, next(iter(RULES[fn].vjps)), np.ones_like(ans), ans, x)
    assert got.dtype == np.float32, (fn, got.dtype)


def test_aliases_are_the_same_functions():
    assert np.abs is np.absolute and np.conj is np.conjugate
    check_rule(np.abs, rng.uniform(-2, -0.1, (3,)))
    check_rule(np.conj, rng.standard_normal((3,)))


def test_sinc_at_zero():
    check_rule(np.sinc, np.array([0.0, 0.5, -1.3, 1.0]))
    assert evaluate_vjp(np.sinc, "x", 1.0, 1.0, 0.0) == 0.0


@pytest.mark.parametrize("fn,x,want", [(np.log, 0.0, np.inf), (np.sqrt, 0.0, np.inf),
                                       (np.arcsin, 1.0, np.inf), (np.arctanh, 1.0, np.inf),
                                       (np.log, -1.0, -1.0), (np.sqrt, -1.0, np.nan)])
def test_singular_points_are_not_hidden(fn, x, want):
    with np.errstate(all="ignore"):  # the cotangent of a NumPy scalar output is a NumPy scalar
        got = evaluate_vjp(fn, "x", np.float64(1.0), fn(x), x)
    np.testing.assert_equal(got, want)


BINARY = [
    (np.maximum, -2, 2, -2, 2), (np.minimum, -2, 2, -2, 2), (np.fmax, -2, 2, -2, 2),
    (np.fmin, -2, 2, -2, 2), (np.logaddexp, -3, 3, -3, 3), (np.logaddexp2, -3, 3, -3, 3),
    (np.hypot, -2, 2, 0.5, 2), (np.arctan2, -2, 2, 0.5, 2), (np.arctan2, -2, 2, -2, -0.5),
    (np.copysign, -2, 2, 0.5, 2), (np.copysign, -2, 2, -2, -0.5), (np.fmod, 0.5, 5, 0.7, 1.3),
    (np.fmod, -5, -0.5, 0.7, 1.3), (np.float_power, 0.5, 2, -2, 2),
]


@pytest.mark.parametrize("fn,xlo,xhi,ylo,yhi", BINARY, ids=[b[0].__name__ for b in BINARY])
@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=str)
def test_binary(fn, xlo, xhi, ylo, yhi, shapes):
    x, y = rng.uniform(xlo, xhi, shapes[0]), rng.uniform(ylo, yhi, shapes[1])
    check_rule(fn, x, y)


@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=str)
def test_ldexp(shapes):
    check_rule(np.ldexp, rng.standard_normal(shapes[0]), rng.integers(-3, 4, shapes[1]))


@pytest.mark.parametrize("fn", [np.maximum, np.minimum, np.fmax, np.fmin])
def test_ties_split_evenly(fn):
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 3.0])
    g = np.array([2.0, 4.0, 6.0])
    ans = fn(x, y)
    bx, by = (evaluate_vjp(fn, n, g, ans, x, y) for n in ("x", "y"))
    big = fn in (np.maximum, np.fmax)
    np.testing.assert_allclose(bx, [1.0, 4.0 if big else 0.0, 3.0])
    np.testing.assert_allclose(by, [1.0, 0.0 if big else 4.0, 3.0])


@pytest.mark.parametrize("fn", [np.fmax, np.fmin])
def test_fmax_fmin_give_a_nan_operand_nothing(fn):
    x, y = np.array([np.nan, 1.0]), np.array([1.0, np.nan])
    ans, g = fn(x, y), np.array([2.0, 3.0])
    np.testing.assert_equal(evaluate_vjp(fn, "x", g, ans, x, y), [0.0, 3.0])
    np.testing.assert_equal(evaluate_vjp(fn, "y", g, ans, x, y), [2.0, 0.0])


@pytest.mark.parametrize("shapes", [((3,), (3,), (3,)), ((2, 3), (3,), (2, 1)),
                                    ((3,), (2, 3), ()), ((), (4,), (2, 1))], ids=str)
def test_where(shapes):
    cond = rng.random(np.broadcast_shapes(*shapes)) < 0.5
    x, y = rng.standard_normal(shapes[1]), rng.standard_normal(shapes[2])
    check_rule(np.where, cond, x, y)
    assert "condition" not in RULES[np.where].vjps


def test_where_does_not_leak_a_nan_from_the_branch_not_taken():
    x = np.array([-1.0, 4.0])
    with np.errstate(all="ignore"):
        ans = np.where(x > 0, x, np.nan)
    g = np.ones(2)
    np.testing.assert_equal(evaluate_vjp(np.where, "x", g, ans, x > 0, x, np.nan), [0.0, 1.0])


def _away_from(a, *bounds, gap=0.05):
    """a with the entries closer than gap to a bound moved away (clip has kinks there)."""
    for b in bounds:
        a = np.where(np.abs(a - b) < gap, a + 2 * gap, a)
    return a


@pytest.mark.parametrize("ashape,lshape,hshape", [((5,), (), ()), ((2, 5), (5,), (2, 1)),
                                                   ((5,), (2, 5), ()), ((), (3,), (3,))], ids=str)
def test_clip(ashape, lshape, hshape):
    lo, hi = rng.uniform(-1, -0.2, lshape), rng.uniform(0.2, 1, hshape)
    a = _away_from(rng.uniform(-2, 2, ashape), lo, hi)
    check_rule(np.clip, a, lo, hi)
    check_rule(np.clip, a, lo, None, argnums=[0, 1])
    check_rule(np.clip, a, None, hi, argnums=[0, 2])


def test_clip_with_crossed_bounds():
    a = np.array([-2.0, 0.0, 2.0])
    assert np.all(np.clip(a, 1.0, -1.0) == -1.0)  # NumPy gives a_max everywhere
    check_rule(np.clip, a, 1.0, -1.0)
    check_rule(np.clip, a, np.array([1.0, -2.0, 1.0]), np.array([-1.0, 1.0, 3.0]))


def test_clip_min_max_keywords():
    rng = np.random.RandomState(11)   # (its own draws: the module's depend on test order)
    lo, hi = rng.uniform(-1, -0.2, (3,)), rng.uniform(0.2, 1, (2, 1))
    a = _away_from(rng.uniform(-2, 2, (2, 3)), lo, hi)
    ans = np.clip(a, min=lo, max=hi)
    g = rng.standard_normal(ans.shape)
    for name, fd in [("a", lambda v: np.clip(v, min=lo, max=hi)),
                     ("min", lambda v: np.clip(a, min=v, max=hi)),
                     ("max", lambda v: np.clip(a, min=lo, max=v))]:
        primal = {"a": a, "min": lo, "max": hi}[name]
        got = evaluate_vjp(np.clip, name, g, ans, a, min=lo, max=hi)
        np.testing.assert_allclose(got, numeric_vjp(fd, [primal], 0, g), rtol=1e-5, atol=1e-6)
    assert np.any(ans == lo) and np.any(ans == hi) and np.any(ans == a)


def test_clip_ties_go_to_a():
    a = np.array([-1.0, 0.5, 1.0])
    ans = np.clip(a, -1.0, 1.0)
    g = np.ones(3)
    np.testing.assert_equal(evaluate_vjp(np.clip, "a", g, ans, a, -1.0, 1.0), [1, 1, 1])
    assert evaluate_vjp(np.clip, "a_min", g, ans, a, -1.0, 1.0) == 0.0
    assert evaluate_vjp(np.clip, "a_max", g, ans, a, -1.0, 1.0) == 0.0


def test_nan_to_num_nonfinite_entries_get_nothing():
    x = np.array([np.nan, np.inf, -np.inf, 2.0])
    g = np.array([1.0, 2.0, 3.0, 4.0])
    got = evaluate_vjp(np.nan_to_num, "x", g, np.nan_to_num(x), x)
    np.testing.assert_equal(got, [0.0, 0.0, 0.0, 4.0])
    check_rule(np.nan_to_num, rng.standard_normal((2, 3)), False, 0.0)  # positional copy, nan


@pytest.mark.parametrize("fn", [
    np.heaviside, np.imag, np.angle, np.isneginf, np.isposinf, np.isreal, np.iscomplex,
    np.isrealobj, np.iscomplexobj, np.isclose, np.allclose, np.array_equal, np.array_equiv,
    np.gcd, np.lcm, np.left_shift, np.right_shift, np.bitwise_count])
def test_nondiff(fn):
    assert RULES[fn].differentiable is False


def test_copysign_and_ldexp_have_no_rule_for_the_second_argument():
    assert set(RULES[np.copysign].vjps) == {"x"} and set(RULES[np.ldexp].vjps) == {"x"}


def test_ufunc_keywords_bind():
    x = rng.uniform(0.5, 2, (3,))
    check_rule(np.log, x, dtype=np.float64)
    check_rule(np.maximum, x, x[::-1] + 0.1, casting="same_kind")
