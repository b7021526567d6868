"""strop.ops (index_update & co.) and strop.ops.at against NumPy doing the same update on a copy
(``ufunc.at`` where repeated indices accumulate), and against JAX's out-of-bounds rules written
out by hand: updates dropped unless mode="clip", get clamped unless mode="fill"."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from strop.ops import at, index, index_add, index_max, index_min, index_mul, index_update

# (at method, index_* function, the NumPy ufunc whose .at is the oracle; None: assignment)
UPDATES = [
    ("set", index_update, None),
    ("add", index_add, np.add),
    ("multiply", index_mul, np.multiply),
    ("min", index_min, np.minimum),
    ("max", index_max, np.maximum),
]
UPDATE_IDS = [u[0] for u in UPDATES]

# (shape, index) pairs; every index in bounds and without repeats
INDEXED = [
    ((5,), 2),
    ((5,), -1),
    ((5,), slice(1, 4)),
    ((5,), slice(None, None, -2)),
    ((5,), slice(-2, -6, -1)),
    ((5,), slice(3, 1)),  # empty
    ((3, 4), (1, slice(None))),
    ((3, 4), (slice(None), -1)),
    ((3, 4), np.array([0, 2])),
    ((3, 4), (np.array([2, 0]), np.array([-1, 1]))),
    ((3, 4), (slice(1, None), np.array([[0], [3]]))),
    ((3, 4), (None, 1)),
    ((3, 4), Ellipsis),
    ((3, 4), np.arange(12).reshape(3, 4) % 5 == 1),  # boolean mask
    ((2, 3, 4), (Ellipsis, 1)),
    ((2, 3, 4), (0, Ellipsis, np.array([1, 3]))),
    ((2, 3, 4), (np.array([0, 1]), slice(None), np.array([2, 3]))),  # advanced axes first
    ((2, 3, 4), (slice(None), None, np.array([[0], [2]]), -2)),
    ((2, 3, 4), (1, np.array([True, False, True]))),
]


def _id(case):
    return repr(case).replace(" ", "")


def numpy_update(ufunc, x, idx, v):
    y = x.copy()
    if ufunc is None:
        y[idx] = v
    else:
        ufunc.at(y, idx, v)
    return y


def both_ways(name, function, x, idx, v, **kwargs):
    """The update done by ``index_*`` and by ``at(x)[idx].<name>``; both must agree."""
    via_function = function(x, idx, v, **kwargs)
    via_at = getattr(at(x)[idx], name)(v, **kwargs)
    np.testing.assert_array_equal(via_function, via_at)
    return via_function


def check_out_of_place(x, before, out):
    np.testing.assert_array_equal(x, before)  # the input is never modified
    assert isinstance(out, np.ndarray) and not np.shares_memory(out, x)
    assert out.dtype == x.dtype and out.shape == x.shape


@pytest.mark.parametrize("shape, idx", INDEXED, ids=map(_id, INDEXED))
@pytest.mark.parametrize("name, function, ufunc", UPDATES, ids=UPDATE_IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_update_matches_numpy(name, function, ufunc, shape, idx, dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    v = (rng.standard_normal(np.shape(x[idx])) * 10).astype(dtype)
    before = x.copy()
    out = both_ways(name, function, x, idx, v)
    np.testing.assert_array_equal(out, numpy_update(ufunc, x, idx, v))
    check_out_of_place(x, before, out)


@pytest.mark.parametrize("shape, idx", INDEXED, ids=map(_id, INDEXED))
def test_get_in_bounds_is_plain_indexing(shape, idx):
    x = np.arange(float(np.prod(shape))).reshape(shape)
    for mode in (None, "clip", "fill", "promise_in_bounds"):
        np.testing.assert_array_equal(at(x)[idx].get(mode=mode), x[idx])


@pytest.mark.parametrize("name, function, ufunc", UPDATES, ids=UPDATE_IDS)
@pytest.mark.parametrize("v", [3.0, np.array([1.0, -2.0, 5.0, 0.5])])
def test_values_broadcast(name, function, ufunc, v):
    x = np.arange(12.0).reshape(3, 4)
    idx = (slice(None, 2), slice(None))
    out = both_ways(name, function, x, idx, v)
    np.testing.assert_array_equal(out, numpy_update(ufunc, x, idx, v))


@pytest.mark.parametrize("name, function, ufunc", UPDATES[1:], ids=UPDATE_IDS[1:])
def test_repeated_indices_all_apply(name, function, ufunc):
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    idx = (np.array([1, 1, 0, 1]), np.array([0, 0, 1, -2]))
    v = np.array([2.0, -3.0, 4.0, 0.5])
    out = both_ways(name, function, x, idx, v)
    np.testing.assert_array_equal(out, numpy_update(ufunc, x, idx, v))
    assert not np.array_equal(out, numpy_update(None, x, idx, v))  # not last-wins


def test_sharp_bits_examples():
    x = np.zeros((3, 3), dtype=np.float32)
    out = index_update(x, index[1, :], 1.0)
    np.testing.assert_array_equal(out, [[0, 0, 0], [1, 1, 1], [0, 0, 0]])
    assert out.dtype == np.float32 and not x.any()
    y = np.ones((5, 6))
    expected = np.ones((5, 6))
    expected[::2, 3:] = 8.0
    np.testing.assert_array_equal(index_add(y, index[::2, 3:], 7.0), expected)
    np.testing.assert_array_equal(at(y)[::2, 3:].add(7.0), expected)


def test_index_returns_the_index_expression():
    assert index[1:, :] == (slice(1, None), slice(None))
    assert index[0] == 0
    assert index[..., None, ::-1] == (Ellipsis, None, slice(None, None, -1))
    mask = np.array([True, False])
    assert index[mask] is mask


def test_mul_is_multiply():
    x = np.arange(4.0)
    np.testing.assert_array_equal(at(x)[1:].mul(3.0), at(x)[1:].multiply(3.0))


def test_zero_dimensional_get():
    for x in (2.0, np.array(2.0), np.float32(2)):
        assert at(x)[()].get() == 2.0 and at(x)[...].get(mode="clip") == 2.0


@pytest.mark.parametrize("call, expected", [
    (lambda x: at(x)[()].set(5.0), 5.0),
    (lambda x: index_add(x, ..., 1.0), 3.0),
    (lambda x: index_max(x, (), 5.0), 5.0),
    (lambda x: at(x)[()].get(mode="fill"), 2.0),
    (lambda x: at(x)[()].apply(np.negative), -2.0),
], ids=["set", "add", "max", "get-fill", "apply"])
def test_zero_dimensional_updates(call, expected):
    x = np.array(2.0)
    np.testing.assert_array_equal(call(x), expected)
    assert x == 2.0


# --- apply ------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, idx", INDEXED, ids=map(_id, INDEXED))
def test_apply_matches_ufunc_at(shape, idx):
    x = np.arange(float(np.prod(shape))).reshape(shape) - 3
    before = x.copy()
    out = at(x)[idx].apply(np.negative)
    expected = x.copy()
    np.negative.at(expected, idx)
    np.testing.assert_array_equal(out, expected)
    check_out_of_place(x, before, out)


def test_apply_once_per_occurrence_of_an_index():
    x = np.ones(4)
    out = at(x)[np.array([0, 2, 0, 0])].apply(lambda v: v * 2)  # not a ufunc
    np.testing.assert_array_equal(out, [8.0, 1.0, 2.0, 1.0])
    np.testing.assert_array_equal(at(x + 1)[np.array([3, 3])].apply(np.square),
                                  [2.0, 2.0, 2.0, 16.0])


def test_apply_out_of_bounds():
    x = np.arange(5.0)
    np.testing.assert_array_equal(at(x)[np.array([1, 7, -9])].apply(np.negative),
                                  [0.0, -1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(at(x)[np.array([1, 7, -9])].apply(np.negative, mode="clip"),
                                  [-0.0, -1.0, 2.0, 3.0, -4.0])


# --- out of bounds: JAX's rules ---------------------------------------------------------------

def test_updates_out_of_bounds_are_dropped_by_default():
    x = np.arange(5.0)
    idx = np.array([0, 7, -9, -1])
    for mode in (None, "drop", "fill", "promise_in_bounds"):
        np.testing.assert_array_equal(index_add(x, idx, 10.0, mode=mode),
                                      [10.0, 1.0, 2.0, 3.0, 14.0])
        np.testing.assert_array_equal(index_update(x, 5, -1.0, mode=mode), x)
    m = np.zeros((3, 4))
    out = at(m)[np.array([0, 3]), np.array([1, 1])].set(1.0)
    np.testing.assert_array_equal(out, index_update(m, (0, 1), 1.0))
    np.testing.assert_array_equal(at(m)[1, 4].set(1.0), m)


def test_updates_out_of_bounds_clamp_with_clip():
    x = np.arange(5.0)
    np.testing.assert_array_equal(at(x)[10].set(-1.0, mode="clip"), [0, 1, 2, 3, -1.0])
    np.testing.assert_array_equal(index_add(x, np.array([-9, 7, 7]), 1.0, mode="clip"),
                                  [1.0, 1.0, 2.0, 3.0, 6.0])
    np.testing.assert_array_equal(at(np.zeros((2, 2)))[5, -5].set(1.0, mode="clip"),
                                  [[0.0, 0.0], [1.0, 0.0]])


def test_get_out_of_bounds_clamps_by_default():
    x = np.arange(5.0) * 10
    assert at(x)[10].get() == 40.0
    np.testing.assert_array_equal(at(x)[np.array([-7, 1, 9])].get(), [0.0, 10.0, 40.0])
    np.testing.assert_array_equal(at(x)[np.array([-7, 9])].get(mode="clip"), [0.0, 40.0])
    m = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(at(m)[5].get(), [3, 4, 5])


def test_get_out_of_bounds_fills_with_fill():
    x = np.arange(5.0)
    got = at(x)[np.array([1, 5, -6, -5])].get(mode="fill")
    np.testing.assert_array_equal(got, [1.0, np.nan, np.nan, 0.0])
    np.testing.assert_array_equal(at(x)[7].get(mode="fill", fill_value=-1.0), -1.0)
    m = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(at(m)[:, 3].get(mode="fill"), [np.iinfo(m.dtype).min] * 2)
    u = np.arange(3, dtype=np.uint8)
    assert at(u)[3].get(mode="fill") == 255
    assert at(np.array([False]))[1].get(mode="fill") == True  # noqa: E712


def test_get_with_drop_fills_as_jax_does():
    assert np.isnan(at(np.arange(5.0))[10].get(mode="drop"))


@pytest.mark.parametrize("method", ["get", "set"])
def test_reversed_slice_starting_before_the_array_is_empty(method):
    x = np.arange(5.0)
    idx = slice(-10, None, -1)
    if method == "get":
        assert at(x)[idx].get().shape == x[idx].shape == (0,)
    else:
        np.testing.assert_array_equal(at(x)[idx].set(9.0), x)


# --- argument checks --------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: index_update([1.0, 2.0], 0, 5.0),
    lambda: index_add((1.0, 2.0), 0, 5.0),
    lambda: at([1.0, 2.0]),
    lambda: index_mul([[1.0]], (0, 0), 5.0),
], ids=["index_update", "index_add", "at", "index_mul"])
def test_lists_and_tuples_are_refused_with_advice(call):
    with pytest.raises(TypeError, match=r"np\.asarray"):
        call()


def test_values_may_be_any_array_like():  # as in JAX, only the updated array must be an array
    np.testing.assert_array_equal(at(np.zeros(3))[1:].set([1.0, 2.0]), [0.0, 1.0, 2.0])


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="'wrap'"):
        index_update(np.zeros(3), 0, 1.0, mode="wrap")
    with pytest.raises(ValueError, match="clip"):
        at(np.zeros(3))[0].get(mode="clamp")


# --- property tests ---------------------------------------------------------------------------

_shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_basic_indices_match_numpy(data):
    shape = data.draw(_shapes)
    idx = data.draw(hnp.basic_indices(shape, allow_newaxis=True))
    x = np.arange(float(np.prod(shape))).reshape(shape)
    v = data.draw(hnp.arrays(np.float64, np.shape(x[idx]), elements=st.floats(-9, 9)))
    np.testing.assert_array_equal(at(x)[idx].get(), x[idx])
    np.testing.assert_array_equal(at(x)[idx].set(v), numpy_update(None, x, idx, v))
    np.testing.assert_array_equal(index_add(x, idx, v), numpy_update(np.add, x, idx, v))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_integer_indices_out_of_bounds_follow_jax(data):
    """1-D integer indices in [-2n, 2n), repeated or not, against JAX's rules written out:
    an index i in [-n, n) means i % n; others are dropped (updates), clamped after adding n to a
    negative one (get and mode="clip"), or filled (get, mode="fill")."""
    n = data.draw(st.integers(1, 5))
    idx = data.draw(hnp.arrays(np.int64, st.integers(0, 6),
                               elements=st.integers(-2 * n, 2 * n - 1)))
    v = data.draw(hnp.arrays(np.float64, idx.shape, elements=st.floats(-9, 9)))
    x = np.arange(1.0, n + 1)
    inside = (idx >= -n) & (idx < n)
    clamped = np.clip(np.where(idx < 0, idx + n, idx), 0, n - 1)

    np.testing.assert_array_equal(index_add(x, idx, v), numpy_update(np.add, x, idx[inside],
                                                                     v[inside]))
    np.testing.assert_array_equal(index_add(x, idx, v, mode="clip"),
                                  numpy_update(np.add, x, clamped, v))
    np.testing.assert_array_equal(at(x)[idx].get(), x[clamped])
    np.testing.assert_array_equal(at(x)[idx].get(mode="fill"),
                                  np.where(inside, x[clamped], np.nan))
