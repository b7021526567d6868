"""Forms that once ran as Python under jit (issue 15), each in several call forms: compiled
results compared with the python backend (and vmap with a Python loop over the batch), with
JitFallbackWarning an error."""
import warnings

import numpy as np
import pytest

import strop
from helpers import x64_fixture

x64 = pytest.fixture(autouse=True)(x64_fixture)


def _x(shape=(4, 3), seed=0):
    return np.random.default_rng(seed).uniform(0.1, 1.0, shape)


def _same(g, *args):
    """``jit(g)`` compiles (no fallback) and agrees with the python backend."""
    want = strop.jit(g, backend="python")(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got = strop.jit(g)(*args)
    leaves, expected = strop.tree_util.tree_leaves(got), strop.tree_util.tree_leaves(want)
    assert len(leaves) == len(expected)
    for a, b in zip(leaves, expected):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    return got


# --- x.at[basic index] with every mode -------------------------------------------------------
def at_updates(x):
    a = x.at[1:3].set(2.0)
    b = x.at[:, 1].add(1.5)
    c = x.at[0, ::2].multiply(3.0)
    d = x.at[..., -1].min(0.3)
    e = x.at[-1, 1:].max(x[0, :2])
    f = x.at[7].set(9.0)                      # out of bounds: dropped
    g = x.at[7, 1].add(1.0, mode="clip")      # clamped to the last row
    h = x.at[1, -9].set(5.0, mode="drop")
    return a, b, c, d, e, f, g, h


def at_reads(x):
    a = x.at[2:, 7].get(mode="fill", fill_value=-1.0)
    b = x.at[1, 2].get()
    c = x.at[9, ::-1].get()                   # clamped
    d = x.at[..., 1].get(mode="fill")
    return a, b, c, d


def at_ints(x):
    k = (x * 10).astype(np.int64)
    return k.at[1:3].multiply(2.5), k.at[0, 5].get(mode="fill"), k.at[:, 0].add(7)


def at_grad(x):
    y = x.at[1:3, 0].set(x[0, 0] ** 2)
    z = y.at[::2].add(x[1] * 3.0)
    return np.sum(z * x) + np.sum(z.at[1:, 1:].get() ** 2)


@pytest.mark.parametrize("f", [at_updates, at_reads, at_ints])
def test_at_basic_indices_compile(f):
    _same(f, _x())


def test_at_grad_and_vmap_compile():
    _same(strop.grad(at_grad), _x())
    _same(strop.vmap(at_grad), _x((2, 4, 3)))


# --- functions without a batching rule, lane by lane (each) under jit(vmap) ------------------
def eigh_pair(a):
    s = a[:3, :3] @ a[:3, :3].T + 3.0 * np.eye(3)
    w, v = np.linalg.eigh(s)
    return w, np.abs(v)


def split_list(a):
    p, q = np.split(a, 2)
    return np.sum(p * q, axis=0)


def qr_r(a):
    q, r = np.linalg.qr(a)
    return np.abs(r)


@pytest.mark.parametrize("f", [eigh_pair, split_list, qr_r])
def test_vmap_lane_by_lane_compiles(f):
    xs = _x((3, 4, 3))
    got = _same(strop.vmap(f), xs)
    want = [f(x) for x in xs]
    for k, leaf in enumerate(strop.tree_util.tree_leaves(got)):
        lanes = [strop.tree_util.tree_leaves(w)[k] for w in want]
        np.testing.assert_allclose(leaf, np.stack(lanes), rtol=1e-10, atol=1e-12)


# --- batching rules that failed on every backend --------------------------------------------
def astype_method(x):
    return np.sum(x.astype(np.float32) ** 2, axis=0)


def asarray_dtype(x):
    return np.asarray(x, np.float64) * 2.0


def split_sections(x):
    a, b, c = np.split(x, [1, 3])
    return np.sum(a) + np.sum(b * 2.0) - np.sum(c)


@pytest.mark.parametrize("backend", ["python", None])
@pytest.mark.parametrize("f", [astype_method, asarray_dtype, split_sections])
def test_vmap_matches_a_loop(f, backend):
    xs = _x((3, 4, 3))
    got = strop.jit(strop.vmap(f), backend=backend)(xs)
    np.testing.assert_allclose(got, np.stack([f(x) for x in xs]), rtol=1e-6)


# --- containers' cotangents in compiled code -------------------------------------------------
def list_slices(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] * float(i + 1))
    mid = out[1:3]
    return np.sum(mid[0] * mid[1]) + np.sum(np.concatenate(out) ** 2)


def dict_state(x):
    st = {"h": np.zeros(3), "n": 0.0, "w": x[0]}
    for i in range(x.shape[0]):
        st["h"] = np.tanh(st["h"] * st["w"] + x[i])
        st["n"] = st["n"] + np.sum(st["h"])
    return st["n"] + np.sum(st["h"] ** 2)


def dot_of_stacks(x):
    return np.sum(np.dot(x, x.T[:, :2]) ** 2) + np.sum(np.dot(x[0], x.T))


def polynomial(x):
    return np.sum(np.polyval(x[0], x[1:])) + np.polyval(x[1], 0.5)


@pytest.mark.parametrize("f", [list_slices, dict_state, dot_of_stacks, polynomial])
def test_grad_of_containers_compiles(f):
    x = _x()
    got = _same(strop.grad(f), x)
    eps, num = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        num[i] = (f(x + d) - f(x - d)) / (2 * eps)
    np.testing.assert_allclose(got, num, rtol=1e-5, atol=1e-7)


def dict_unbatched_then_batched(x, s):
    st = {"a": s * 2.0, "w": np.ones(3) * s}
    st["a"] = np.sum(x * st["w"]) + st["a"]     # the record's lanes begin here
    return st["a"] + np.sum(st["w"] * x)


def test_vmap_of_a_record_updated_with_lanes_compiles():
    xs = _x((3, 3))
    got = _same(strop.vmap(dict_unbatched_then_batched, in_axes=(0, None)), xs, 0.5)
    np.testing.assert_allclose(got, [dict_unbatched_then_batched(x, 0.5) for x in xs])


def pure_uses_internal_state(x):              # JAX's Sharp Bits
    state = dict(even=0, odd=0)
    for i in range(10):
        state['even' if i % 2 == 0 else 'odd'] += x
    return state['even'] + state['odd']


def routed(x):
    acc = {"a": np.zeros(3), "b": np.ones(3), "c": x[0]}
    for i in range(x.shape[0]):
        k = "a" if i % 3 == 0 else ("b" if i % 3 == 1 else "c")
        acc[k] = acc[k] * x[i] + np.sin(x[i])
    return np.sum(acc["a"] ** 2) + np.sum(acc["b"] * acc["c"])


@pytest.mark.parametrize("f, x", [(pure_uses_internal_state, 5.0), (routed, _x())])
def test_a_dict_read_and_updated_at_a_computed_key_compiles(f, x):
    assert np.allclose(_same(f, x), f(x))
    num = np.zeros(np.shape(x))
    for i in np.ndindex(num.shape):
        d = np.zeros(np.shape(x))
        d[i] = 1e-6
        num[i] = (f(x + d) - f(x - d)) / 2e-6
    np.testing.assert_allclose(_same(strop.grad(f), x), num, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_same(strop.jacfwd(f), x), num, rtol=1e-5, atol=1e-7)


def where_of_numbers(a):
    t = np.where(a > 0.5, a * a, np.exp(a))     # a number in NumPy after one operation
    for i in range(3):
        if t > 5.0:
            return np.where(t > 6.0, t, 1.0)
        t = a / (1.5 + t ** 2) + t
    return t


def test_where_of_numbers_shares_a_name_with_numbers():
    for a in (0.3, 0.9, 2.5):
        _same(where_of_numbers, a)
        _same(strop.grad(where_of_numbers), a)


# --- keepdims given as an argument (issue 34) --------------------------------------------------
def summed(x, k):
    return np.sum(x, axis=0, keepdims=k)          # the result's rank depends on k


def scaled(x, k):
    s = np.mean(x * x, axis=1, keepdims=k)
    return np.sum(s * x[:, :1]) + np.max(x, axis=0, keepdims=k).sum()


def _same_static(g, *args):
    """``_same`` with the last argument static."""
    want = strop.jit(g, static_argnums=len(args) - 1, backend="python")(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got = strop.jit(g, static_argnums=len(args) - 1)(*args)
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    return got


@pytest.mark.parametrize("static", [True, False], ids=["static", "bool argument"])
def test_keepdims_from_an_argument_compiles(static):
    x = _x()
    check = _same_static if static else _same
    f = strop.jit(summed) if not static else None
    for k in (True, False, True):      # (the same jit(summed) called with both values)
        if static:
            got = check(summed, x, k)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error", strop.errors.JitFallbackWarning)
                got = f(x, k)
        assert np.shape(got) == np.shape(summed(x, k)) == ((1, 3) if k else (3,))
        np.testing.assert_allclose(got, summed(x, k), rtol=1e-12)
        for g in (scaled, strop.grad(scaled)):
            check(g, x, k)
    if not static:
        assert f.last_backend == "cpu"
    # the gradient against central differences
    for k in (True, False):
        num = np.zeros(x.shape)
        for i in np.ndindex(x.shape):
            d = np.zeros(x.shape)
            d[i] = 1e-6
            num[i] = (scaled(x + d, k) - scaled(x - d, k)) / 2e-6
        np.testing.assert_allclose(check(strop.grad(scaled), x, k), num, rtol=1e-5, atol=1e-7)
