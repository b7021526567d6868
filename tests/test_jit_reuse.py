"""Compiled results written over a temporary array nothing reads again (codegen/reuse.py):
the same values as Python wherever the result fits the dead array or not."""
import re
import warnings

import numpy as np
import pytest

import strop
from strop import config, grad, jit
from strop.errors import JitFallbackWarning


def compiled(fn, *args):
    jf = jit(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        return jf(*args), strop.source(jf)


def step(w, u, b, h, x):              # a product's array, then the chain's, reused
    return np.tanh(w @ h + u @ x + b)


def wider(w, h, m):                    # the dead array (n,) is smaller than the result (k, n)
    return np.exp(w @ h + m * 2.0 + m)


def retyped(a, b, c):                  # a dead bool array, a float result: a new array
    return (a > 0) * b + c


def twice(w, h, b):                    # a temporary read twice is not dead at its first read
    t = w @ h
    return np.sin(t + b + t * 2.0)


def rnn(w, u, b, xs):
    h = np.zeros(w.shape[0], w.dtype)
    total = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + u @ xs[t] + b)
        total = total + np.sum(h * h)
    return total


def data(dtype, n=80, k=3):
    rng = np.random.default_rng(n)
    w, u = rng.normal(size=(n, n)) / n, rng.normal(size=(n, 5)) / 3
    b, h, x = rng.normal(size=n), rng.normal(size=n), rng.normal(size=5)
    m = rng.normal(size=(k, n))
    return [a.astype(dtype) for a in (w, u, b, h, x, m)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_results_over_dead_temporaries_equal_pythons(dtype):
    w, u, b, h, x, m = data(dtype)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-13, atol=1e-14)
    with config.override(enable_x64=dtype == np.float64):
        for fn, args in ((step, (w, u, b, h, x)), (wider, (w, h, m)), (twice, (w, h, b)),
                         (retyped, (b, h, b))):
            got, text = compiled(fn, *args)
            want = fn(*args)
            assert got.dtype == want.dtype and got.shape == want.shape, fn.__name__
            np.testing.assert_allclose(got, want, **tol, err_msg=fn.__name__)
            if fn is step:
                assert "elementwise_into('_0 + _1 + _2'," in text, text
                assert ", out=" in text, text
            if fn is twice:     # (t read twice: only the chain's own result is reused)
                assert "elementwise_into" not in text and "sin_np(_t3, out=_t3)" in text, text


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_recurrences_gradient_with_its_arrays_reused(dtype):
    w, u, b, _, _, _ = data(dtype, n=70)
    xs = np.random.default_rng(1).normal(size=(40, 5)).astype(dtype)
    g = grad(rnn, argnums=(0, 1, 2))
    with config.override(enable_x64=dtype == np.float64):
        got, text = compiled(g, w, u, b, xs)
        want = g(w, u, b, xs)
    assert "elementwise_into" in text and "out=" in text, text
    tol = dict(rtol=2e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-13)
    for a, r in zip(got, want):
        np.testing.assert_allclose(a, r, **tol)


def rewritten(src, numbers=()):
    import textwrap
    import gast
    from strop import runtime
    from strop.codegen.reuse import reuse_dead
    from strop.transformer.unparse import unparse
    node = gast.parse(textwrap.dedent(src)).body[0]
    refs = {n: getattr(runtime, n) for n in ("elementwise", "matmul", "setitem_split_inplace",
                                             "zeros_like", "weak")}
    return unparse(reuse_dead(node, refs, numbers))


CHAIN = """
    def f(w, h, xs, b, t):
        _t1 = matmul(w, h)
        _t2 = xs[t]
        _t3 = elementwise('_0 * _1 + _2', b, _t1, _t2)
        return _t3
    """


def test_only_a_new_array_read_once_is_written_over():
    text = rewritten(CHAIN)
    assert "_t3 = elementwise_into('_1 * _0 + _2', _t1, b, _t2)" in text, text
    for changed, why in (("_t1 = matmul(w, h)", "_t1 = w"),              # another name's array
                         ("_t1 = matmul(w, h)", "_t1 = xs[0]"),          # a view
                         ("_t2 = xs[t]", "_t2 = xs[t] + _t1"),           # read twice
                         ("return _t3", "return _t3, _t1")):
        text = rewritten(CHAIN.replace(changed, why))
        assert not re.search(r"elementwise_into\('[^']*', _t1,", text), (why, text)
    assert "elementwise_into" not in rewritten(CHAIN, numbers={"_t1"})
    # a dtype read (weak) in the same statement is not a second read of the values
    text = rewritten("""
    def f(w, h):
        _t1 = matmul(w, h)
        _t2 = _t1 * weak(2.0, _t1) + h
        return _t2
    """)
    assert "_t2 = elementwise_into(" in text and "_t1" in text.split("elementwise_into(")[1], text


CARRIED = """
    def f(w, hs, gs):
        bh = zeros_like(gs[0])
        for t in range(9, -1, -1):
            bhs, _t23 = setitem_split_inplace(gs, t, hs[t])
            bh = bh + _t23
            _bt12 = elementwise('_0 * (1 - _1 * _1)', bh, hs[t])
            bh = matmul(_bt12, w)
        return bh
    """


def test_a_local_bound_to_a_new_array_and_read_last_is_written_over():
    """Not only the transforms' temporaries: a cotangent carried through a loop, where this
    trip made its array and nothing reads it after (codegen/reuse.py, liveness)."""
    text = rewritten(CARRIED)     # (the split and the add, one call: its result a new array)
    assert "bhs, bh = setitem_split_add(gs, t, hs[t], bh)" in text, text
    assert "_bt12 = elementwise_into('_0 * (1 - _1 * _1)', bh, hs[t])" in text, text
    for changed, why in (
            ("bh = matmul(_bt12, w)", "keep = bh\n            bh = matmul(_bt12, w)"),  # after
            ("bh = matmul(_bt12, w)", "bh = matmul(_bt12, w) + bh"),                 # next trip
            ("bh = bh + _t23", "bh = bh + _t23\n            seen = [bh]"),          # another name
            ("bh = bh + _t23", "bh = bh + _t23\n            bh = bh[0]")):         # a view
        text = rewritten(CARRIED.replace(changed, why))
        assert "elementwise_into('_0 * (1 - _1 * _1)', bh" not in text, (why, text)
    assert "elementwise_into('_0 * (1 - _1 * _1)', bh" not in rewritten(CARRIED, {"bh"})
    # _t23 is the copy setitem_split_inplace makes of the row: written over, unless read again
    text = rewritten(CARRIED.replace("bh = bh + _t23", "bh = bh * 2.0 + _t23"))
    assert "bh = elementwise_into('_1 * 2.0 + _0', _t23, bh)" in text, text
    text = rewritten(CARRIED.replace("bh = matmul(_bt12, w)", "bh = matmul(_bt12, w) + _t23"))
    assert "elementwise_into('_1 + _0', _t23" not in text, text


LEFT_BY_BREAK = """
    def f(a, b, c):
        y = a
        for t in range(3):
            x = a + b
            y = elementwise('_0 * 2.0', x)
            if c:
                break
            x = a - b
        return x, y
    """


def test_a_local_read_after_a_break_is_not_written_over():
    """After ``break`` what is live is what the loop's end reads, not the statements after
    it in the body (transformer/analysis.live_after): here ``x`` is returned."""
    assert "elementwise_into" not in rewritten(LEFT_BY_BREAK)
    assert "elementwise_into" not in rewritten(LEFT_BY_BREAK.replace("break", "continue"))
    assert "y = elementwise_into('_0 * 2.0', x)" in rewritten(
        LEFT_BY_BREAK.replace("return x, y", "return y"))


def rnn_carried(w, xs):
    h = xs[0]
    for t in range(1, xs.shape[0]):
        a = w @ h
        a = a * 0.5 + xs[t]          # a local made, rebound, then read last: reused
        h = np.tanh(a) + h * 0.1
    return np.sum(h ** 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_carried_locals_reused_give_pythons_values_and_gradients(dtype):
    rng = np.random.default_rng(3)
    w = (rng.normal(size=(24, 24)) / 5).astype(dtype)
    xs = rng.normal(size=(30, 24)).astype(dtype)
    tol = dict(rtol=2e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-13)
    with config.override(enable_x64=dtype == np.float64):
        for fn in (rnn_carried, grad(rnn_carried, argnums=(0, 1))):
            got, text = compiled(fn, w, xs)
            want = fn(w, xs)
            for a, r in zip(np.atleast_1d(got) if fn is rnn_carried else got,
                            np.atleast_1d(want) if fn is rnn_carried else want):
                np.testing.assert_allclose(a, r, **tol)
        assert "tanh_np(a, out=a)" in strop.source(jit(rnn_carried)), strop.source(
            jit(rnn_carried))


def states(w, xs, h0):
    h = h0
    hs = np.zeros((xs.shape[0],) + h0.shape, h0.dtype)
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + xs[t])
        hs[t] = h                    # going back: the row's cotangent is added to h's
    return np.sum(hs ** 2) + np.sum(hs[1:] * hs[:-1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_stored_states_cotangent_added_with_no_array_of_its_own(dtype):
    rng = np.random.default_rng(5)
    w = (rng.normal(size=(7, 7)) / 3).astype(dtype)
    xs, h0 = rng.normal(size=(12, 7)).astype(dtype), rng.normal(size=7).astype(dtype)
    g = grad(states, argnums=(0, 1, 2))
    tol = dict(rtol=2e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-13)
    with config.override(enable_x64=dtype == np.float64):
        got, text = compiled(g, w, xs, h0)
        want = g(w, xs, h0)
    assert "setitem_split_add(" in text, text
    for a, r in zip(got, want):
        assert a.dtype == r.dtype
        np.testing.assert_allclose(a, r, **tol)


SPLIT = """
    def f(bhs, hs, bh):
        for t in range(3):
            bhs, _t23 = setitem_split_inplace(bhs, t, hs[t])
            bh = bh + _t23
        return bh
    """


def test_a_split_and_add_become_one_call_only_where_the_part_is_read_once():
    assert "bhs, bh = setitem_split_add(bhs, t, hs[t], bh)" in rewritten(SPLIT)
    assert "bhs, bh = setitem_split_add(bhs, t, hs[t], bh)" in rewritten(
        SPLIT.replace("bh + _t23", "_t23 + bh"))
    for changed, why in (("bh = bh + _t23", "bh = bh + _t23 + _t23"),
                         ("bh = bh + _t23", "bh = bh + _t23\n            k = _t23.shape"),
                         ("bh = bh + _t23", "bh = bh - _t23"),
                         ("bh = bh + _t23", "bh = hs[0] + _t23")):
        assert "setitem_split_add" not in rewritten(SPLIT.replace(changed, why)), why


@pytest.mark.parametrize("shape, dtypes", [
    ((5, 4), (np.float32, np.float32)), ((5, 4), (np.float64, np.float64)),
    ((3, 2, 4), (np.float32, np.float32)), ((5, 4), (np.float32, np.float64)),
    ((5, 4), (np.float64, np.float32))])
def test_split_add_helper_against_the_two_steps(shape, dtypes):
    from numba import njit
    from strop.runtime import setitem_split_add
    rng = np.random.default_rng(len(shape))
    gd, xd = dtypes
    g, x = rng.normal(size=shape).astype(gd), rng.normal(size=shape[1:]).astype(xd)
    v = np.ones(shape[1:], gd)
    want_g, want = g.copy(), None
    want_g[2] = 0
    want = x + g[2]
    got_g, got = njit(lambda g, i, v, x: setitem_split_add(g, i, v, x))(g.copy(), 2, v, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_g, want_g)
    # a value broadcast into the row: its cotangent is the row summed, as setitem_split's
    v1 = np.ones((1,) + shape[2:], gd)
    got_g, got = njit(lambda g, i, v, x: setitem_split_add(g, i, v, x))(g.copy(), 2, v1, x[:1])
    np.testing.assert_allclose(got, x[:1] + g[2].sum(axis=0, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(got_g, want_g)
