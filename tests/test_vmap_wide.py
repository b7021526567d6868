"""jit(vmap(f)) with a batched while loop of plain arithmetic: run 64 lanes side by side
(transformer/wide.py), exactly as a Python loop over the examples computes them."""
import warnings

import numpy as np
import pytest

import strop
from strop import jit, vmap

RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def x64():
    with strop.config.override(enable_x64=True):
        yield


def wide(f, *args, in_axes=0):
    """jit(vmap(f)), required to compile to a wide loop, against the per-example loop (run as
    strop's code, element by element: NumPy scalars, as the lanes see)."""
    batched = jit(vmap(f, in_axes=in_axes))
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got = batched(*args)
    assert batched.last_backend == "cpu"
    assert "_wide1(" in strop.source(batched)
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(len(a) for a, ax in zip(args, axes) if ax is not None)
    one = jit(f, backend="python")
    with np.errstate(all="ignore"):
        outs = [one(*[a if ax is None else a[i] for a, ax in zip(args, axes)]) for i in range(n)]
    want = tuple(np.array(o) for o in zip(*outs)) if isinstance(outs[0], tuple) else \
        np.array(outs)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        np.testing.assert_array_equal(g, w)    # the same operations in the same order
        assert np.asarray(g).dtype == w.dtype
    return got


def newton(a):
    x = a
    fx = x * x * x + x - a
    while np.abs(fx) > 1e-9 * (1.0 + np.abs(a)):
        x = x - fx / (3 * x * x + 1)
        fx = x * x * x + x - a
    return x


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000])
def test_trip_counts_differ_per_lane(n):
    wide(newton, np.exp(RNG.uniform(-3, 12, n)))


def test_float32():
    def halve(a):
        x = a
        while x > 1.0:
            x = x * np.float32(0.5)
        return x
    out = wide(halve, np.exp(RNG.uniform(-2, 8, 300)).astype(np.float32))
    assert out.dtype == np.float32


def count_steps(a, tol):
    x, n = a, 0
    while np.abs(x) > tol:
        x = x / 2.0
        n = n + 1         # an unbatched start (0) that every lane counts on its own
    return x, n


def test_several_outputs_and_an_unbatched_argument():
    x, n = wide(count_steps, RNG.normal(0, 100, 200), 0.5, in_axes=(0, None))
    assert n.min() >= 0 and n.max() > 5


def test_a_loop_that_makes_a_float_of_an_int():
    def grow(a):
        x = 0            # an int at the loop, a float after a trip: kept as a float
        while x < a:
            x = x + 0.75
        return x
    out = wide(grow, RNG.uniform(-1, 20, 150))
    assert out.dtype == np.float64


def test_lanes_that_are_done_may_divide_by_zero_without_effect():
    def shrink(a):
        x, d = a, a - 0.5
        while x > 1.0:
            x = x / d        # a = 0.5 never enters: the trips other lanes make divide by 0
            d = d + 1.0
        return x, d
    a = np.array([0.5, 3.0, 1.5, 10.0, 7.5, np.nan, np.inf, 2.0, 0.5, -1.0] * 20)
    wide(shrink, a)


def test_code_that_can_raise_runs_lane_by_lane():
    def indexed(a, table):
        x, i = a, 0
        while x > 1.0:
            x = x / table[i]   # an index: not speculated, each lane runs its own trips
            i = i + 1
        return x
    f = jit(vmap(indexed, in_axes=(0, None)))
    a, table = RNG.uniform(0, 50, 100), np.full(12, 2.0)
    np.testing.assert_array_equal(f(a, table), [indexed(v, table) for v in a])
    assert "_wide1(" not in strop.source(f) and f.last_backend == "cpu"

