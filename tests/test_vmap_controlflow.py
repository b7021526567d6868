"""vmap of control flow on batched values, rebinding, and products and joins under
vmap(grad), against the oracle: a Python loop over the batch (tests/test_vmap.py's check)."""
import warnings

import numpy as np
import pytest

import strop
from strop import grad, jit, vmap
from test_vmap import loop

RNG = np.random.default_rng(7)
X = np.array([1.0, -1.0, 2.0, -0.5, 0.25])


@pytest.fixture(autouse=True)
def x64():
    with strop.config.override(enable_x64=True):
        yield


def check(f, *args, in_axes=0, out_axes=0, compiles=True):
    """vmap(f) and jit(vmap(f)) against the loop over the batch; jit(vmap(f)) compiles
    wherever jit(f) compiles one example (where that falls back, as np.dot without SciPy,
    the batched code may still compile), unless ``compiles`` is False."""
    want = loop(jit(f, backend="python"), in_axes, *args, out_axes=out_axes)
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    one = jit(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
        one(*[a if ax is None else np.take(a, 0, axis=ax) for a, ax in zip(args, axes)])
        fast = jit(vmap(f, in_axes=in_axes, out_axes=out_axes))
        if one.last_backend == "cpu" and compiles:
            warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        outs = [vmap(f, in_axes=in_axes, out_axes=out_axes)(*args), fast(*args)]
    for got in outs:
        for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
            assert np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    return outs[0]


# --- a batched if runs both branches: each must see the state before the if ---------------
def item_in_then(x):
    y = np.zeros(3)
    if x > 0:
        y[-1] = x
        r = np.sum(y)
    else:
        r = y[-1] + 1.0
    return r


def item_in_both(x):
    y = np.ones(3)
    if x > 0:
        y[0] = x * 2.0
        r = y[0] + y[1]
    else:
        y[1] = y[0] - x
        r = y[0] * y[1]
    return r + y[2]


def at_update(x):
    y = np.ones(3)
    if x > 0:
        y = y.at[1].set(x)
        r = y[1]
    else:
        r = y[1] * 3.0
    return r


def elif_chain(x):
    y = np.zeros(2)
    if x > 1.5:
        y[0] = x
        r = y[0]
    elif x > 0:
        y[1] = x * 3.0
        r = y[0] + y[1]
    elif x > -0.75:
        r = y[1] - 1.0
    else:
        y[0] = 5.0
        r = y[1] + y[0]
    return r


def dict_item(x):
    d = {"a": x, "b": 2.0 * x}
    if x > 0:
        d["a"] = x * 10.0
        r = d["a"]
    else:
        r = d["a"] + d["b"]
    return r


def nested_mutation(x):
    y = np.zeros(2)
    if x > -0.75:
        if x > 0:
            y[0] = 7.0
        r = x
    else:
        r = y[0] + x
    return r + y[0]


def list_append(x):
    y = [1.0]
    if x > 0:
        y.append(x)
        r = len(y) * x
    else:
        r = len(y) * 2.0
    return r


def list_items(x, k):
    y = [x, x * 2.0]
    if x > k:
        y[0] = y[1] * 3.0
    else:
        y[1] = y[0] - 1.0
    return y[0] + y[1]


@pytest.mark.parametrize("f", [item_in_then, item_in_both, at_update, elif_chain, dict_item,
                               nested_mutation, list_append])
def test_branches_see_the_state_before_the_if(f):
    check(f, X)


def test_list_of_lanes_assigned_item_by_item_under_a_batched_if_stays_a_list():
    check(list_items, X, np.array([0.0, 0.5, -2.0, 1.0, 0.0]))
    check(list_items, X, 0.1, in_axes=(0, None))


# --- returns under batched control flow ---------------------------------------------------
def return_then_while(x):
    if x > 0:
        return x * 10.0
    i = 0
    while i < 3:
        return x * 2.0
    return x


def return_then_for(x):
    if x > 0:
        return x * 10.0
    for i in range(3):
        return x * 2.0
    return x


def nested_returns(x):
    if x > -0.75:
        if x > 0:
            return x * 3.0
        return x * 5.0
    return x


def unbatched_if_in_batched_else(x, n):
    if x > 0:
        return x
    else:
        if n > 2:
            return x * 7.0
    for i in range(3):
        return x * 2.0
    return x


def return_in_loop_with_break(x):
    s = 0.0
    for i in range(5):
        s = s + x * i
        if s > 2.0:
            return s
        if s < -1.0:
            break
    return -s


def return_in_while_with_continue(x):
    s = x
    i = 0
    while i < 6:
        i = i + 1
        if s > 3.0:
            return s * 2.0
        if i % 2 == 0:
            continue
        s = s + np.abs(x)
    return s - 1.0


def returns_at_every_depth(x):
    if x > 1.5:
        return 1.0
    for i in range(3):
        if x * i > 1.0:
            return x * 100.0 + i
        for j in range(2):
            if x + j < -0.8:
                return x - j
    if x < 0:
        return x * x
    return x + 0.5


def return_after_mutation(x):
    y = np.zeros(2)
    if x > 0:
        y[0] = x
        return np.sum(y)
    y[1] = 3.0
    return np.sum(y) + y[0]


@pytest.mark.parametrize("f", [return_then_while, return_then_for, nested_returns,
                               return_in_loop_with_break, return_in_while_with_continue,
                               returns_at_every_depth, return_after_mutation])
def test_each_lane_returns_its_own_value(f):
    check(f, X)


def test_return_in_unbatched_if_inside_batched_else():
    check(unbatched_if_in_batched_else, X, 3, in_axes=(0, None))
    check(unbatched_if_in_batched_else, X, 1, in_axes=(0, None))


def batched_return_under_unbatched_if(x, n):
    y = np.zeros(3)
    if n > 0:
        if x > 0.5:
            return x * 3.0
        y[0] = x
    return y[0] + 1.0


def test_batched_return_under_an_unbatched_if_not_taken():
    # jit(vmap) of a batched item assignment under an unbatched if falls back (each(setitem))
    check(batched_return_under_unbatched_if, X, 1, in_axes=(0, None), compiles=False)
    check(batched_return_under_unbatched_if, X, -1, in_axes=(0, None), compiles=False)


def test_returns_under_vmap_of_grad():
    for f in (return_then_for, nested_returns, returns_at_every_depth):
        check(grad(f), X + 0.01)


# --- batchedness per binding ---------------------------------------------------------------
W = np.array([1.0, 2.0, 3.0, 4.0])
XS = RNG.standard_normal((3, 4))


def rebound_mean(w, x):
    w = np.mean(w) + x * w
    return w


def rebound_chain(w, x):
    s = np.sum(w)
    w = w * s
    w = np.mean(w) + x * w
    return np.mean(w, axis=0) + np.max(w)


def rebound_in_loop(w, x):
    for i in range(3):
        w = np.mean(w) + x * w * 0.5
    return w


def rebound_arg_loss(w, x):
    x = w - x
    w = w * np.sum(x)
    return np.sum(w ** 2) + np.sum(x * w)


def rebound_in_while(w, x):
    i = 0
    while i < 2:
        w = w + np.mean(w) * x
        i = i + 1
    return np.sum(w ** 2)


@pytest.mark.parametrize("f", [rebound_mean, rebound_chain, rebound_in_loop])
def test_unbatched_argument_rebound_to_a_batched_value(f):
    check(f, W, XS, in_axes=(None, 0))
    check(f, W, XS.T, in_axes=(None, 1))


@pytest.mark.parametrize("f", [rebound_arg_loss, rebound_in_while])
def test_vmap_of_grad_with_an_argument_rebound(f):
    got = check(grad(f, argnums=(0, 1)), W, XS, in_axes=(None, 0))
    assert np.shape(got[1]) == XS.shape
    check(grad(f, argnums=(0, 1)), W, XS.T, in_axes=(None, -1), out_axes=(0, 1))


# --- products under vmap(grad) -------------------------------------------------------------
def dot_loss(a, b):
    return np.sum(np.sin(np.dot(a, b)))


def inner_loss(a, b):
    return np.sum(np.sin(np.inner(a, b)))


def tensordot_loss(a, b):
    return np.sum(np.sin(np.tensordot(a, b, axes=1)))


def outer_loss(a, b):
    return np.sum(np.sin(np.outer(a, b)))


def vdot_loss(a, b):
    return np.sin(np.vdot(a, b))


def matmul_loss(a, b):
    return np.sum(np.sin(np.matmul(a, b)))


def einsum_loss(a, b):
    return np.sum(np.sin(np.einsum("i,ij->j", a, b)))


PRODUCTS = [(dot_loss, (4,), (4,)), (dot_loss, (3, 4), (4,)), (dot_loss, (4,), (4, 2)),
            (dot_loss, (3, 4), (4, 2)), (dot_loss, (), (4,)), (inner_loss, (3, 4), (2, 4)),
            (tensordot_loss, (3, 4), (4, 2)), (outer_loss, (3,), (4,)),
            (vdot_loss, (4,), (4,)), (matmul_loss, (4,), (4,)), (matmul_loss, (3, 4), (4,)),
            (einsum_loss, (4,), (4, 2))]
AXES = [(0, 0), (None, 0), (0, None), (-1, 0)]


# each product with two of the in_axes, every in_axes with each family of shapes
@pytest.mark.parametrize("f, sa, sb, in_axes", [
    p + (AXES[(i + k) % len(AXES)],) for i, p in enumerate(PRODUCTS) for k in (0, 2)])
def test_products_under_vmap_of_grad(f, sa, sb, in_axes):
    ia, ib = in_axes
    ia = 0 if ia == -1 and sa == () else ia
    a = RNG.standard_normal(sa if ia is None else sa + (3,) if ia == -1 else (3,) + sa)
    b = RNG.standard_normal(sb if ib is None else (3,) + sb)
    check(f, a, b, in_axes=(ia, ib))
    check(grad(f, argnums=(0, 1)), a, b, in_axes=(ia, ib))


def dot(a, b):
    return np.dot(a, b)


def scaled_products(a, b):
    return (a @ b) * 0.5 + np.dot(a, b) * 2.0


def test_product_of_vector_lanes_is_a_number_per_lane():
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    check(scaled_products, a, b)
    check(scaled_products, a[0], b, in_axes=(None, 0))


def test_dot_of_matrix_lanes_is_their_product_not_numpys_dot_of_stacks():
    a, b = RNG.standard_normal((3, 2, 4)), RNG.standard_normal((3, 4, 5))
    np.testing.assert_allclose(vmap(dot)(a, b), a @ b)


# --- joins of batched and unbatched arrays under vmap(grad) -------------------------------
def join_unbatched_only(w, x):
    return np.sum(np.concatenate([w, w * 2.0]) ** 2) * np.sum(x)


def join_mixed(w, x):
    a, b = np.sin(w), np.cos(x)
    return np.sum(np.concatenate([a, b, a * b]) ** 2)


def join_flat(w, x):
    return np.sum(np.concatenate([np.outer(w, w), np.outer(x, w)], axis=None) ** 2)


def join_axis1(w, x):
    return np.sum(np.concatenate([np.outer(w, w), np.outer(x, w)], axis=1) ** 3)


def stacked(w, x):
    return np.sum(np.stack([w, x * w, w], axis=1) ** 3 * np.arange(12.0).reshape(4, 3))


def hstacked(w, x):
    return np.sum(np.hstack([w, x, w[:2]]) ** 3)


def vstacked(w, x):
    return np.sum(np.vstack([w, x]) ** 3 * np.arange(8.0).reshape(2, 4))


@pytest.mark.parametrize("f", [join_unbatched_only, join_mixed, join_flat, join_axis1,
                               stacked, hstacked, vstacked])
def test_joins_under_vmap_of_grad(f):
    check(grad(f, argnums=(0, 1)), W, XS, in_axes=(None, 0))
    check(grad(f, argnums=(0, 1)), XS, W, in_axes=(0, None))
    check(grad(f, argnums=(0, 1)), XS, XS[::-1], in_axes=(0, 0))


def appended_then_summed(a):
    acc = []
    acc.append(np.tanh(a))
    acc.append(a * 2.0)
    return sum(acc, 0.0)


def summed_comprehension(x):
    return sum([u * 2.0 for u in x])


def appended_in_a_loop(x):
    acc = []
    for i in range(3):
        acc.append(x[i] ** 2)
    return sum(acc)


@pytest.mark.parametrize("f, x", [
    (appended_then_summed, np.array([0.1, 0.5, -0.3])),
    (summed_comprehension, np.arange(12.).reshape(4, 3) / 10),
    (appended_in_a_loop, np.arange(12.).reshape(4, 3) / 10),
], ids=lambda v: getattr(v, "__name__", ""))
def test_batched_values_appended_to_a_list_and_summed(f, x):
    # a batched value appended to a list ran lane by lane and sum() read the result as
    # stacked lanes: vmap gave 0 (silently), vmap(grad) raised
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)   # Numba: [] untyped
        check(f, x, compiles=False)
    np.testing.assert_allclose(vmap(grad(f))(x), np.stack([grad(f)(v) for v in x]),
                               rtol=1e-12)


def nested_array_of_lanes(x):
    return np.sum(np.array([[x[0], 1.], [2., x[1]]]) ** 3 * np.arange(4.).reshape(2, 2))


def eigh_pair(a):
    w, v = np.linalg.eigh(np.outer(a, a) + np.diag([1., 2., 3.]))
    return np.sum(w * np.arange(3.)) + np.sum(v[:, 0] ** 2 * a)


def svd_triple(a):
    u, s, vt = np.linalg.svd(np.outer(a, a) + np.diag([1., 2., 3.]))
    return np.sum(s ** 2) + np.sum(np.abs(u[0]) * a)


def slogdet_pair(a):
    sign, logdet = np.linalg.slogdet(np.outer(a, a) + np.eye(3))
    return logdet * sign


@pytest.mark.parametrize("f", [nested_array_of_lanes, eigh_pair, svd_triple, slogdet_pair],
                         ids=lambda f: f.__name__)
def test_nested_arrays_and_tuple_results_of_lanes(f):
    # np.array of nested lists of lanes stacked the batch in the middle (silently, or a
    # broadcast error); the pair eigh returns was read as one stacked array (TypeError)
    x = np.random.default_rng(3).standard_normal((4, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
        check(f, x, compiles=False)
    np.testing.assert_allclose(vmap(grad(f))(x), np.stack([grad(f)(v) for v in x]),
                               rtol=1e-10, atol=1e-12)


def sum_of_an_empty_list_decides(a, b):
    acc = []
    if sum(acc, 0.0) >= 0.0:
        return b
    acc.append([a, a])
    return np.full(2, 0.7)[1]


def product_with_a_list_of_a_number(a, b):
    t = a[1]
    return np.sum(np.outer(b, np.ones(3)) @ [t, t, 0.25])


def test_list_of_lanes_found_by_the_fuzzer():
    # sum() of a list that holds lanes elsewhere but nothing yet gave a plain False, whose
    # ~ is -2 (the wrong return taken); the cotangent of a list display given to @ was
    # indexed as a stacked array under vmap(grad)
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)   # Numba: [] untyped
        check(sum_of_an_empty_list_decides, a, -1.1, in_axes=(0, None), compiles=False)
    g = grad(product_with_a_list_of_a_number)
    np.testing.assert_allclose(vmap(g, in_axes=(None, 0))(a[0], b),
                               np.stack([g(a[0], v) for v in b]), rtol=1e-12)


# --- found by the fuzzer, seed 1001 ---------------------------------------------------------
def overwritten_under_a_batched_if(a, b):
    # the inner assignment is dead in the lanes that run the outer body (b = 1.0 follows),
    # but the other lanes keep b as it was: it must be selected, not overwritten
    if a >= 0.0:
        if b < 1.0:
            b = b * b * 2.0
        b = 1.0
    return b * 3.0


def branch_shapes_differ(a, b):
    # a lane's value has shape () on one branch, (3,) on the other: fine while every lane
    # takes the same branch
    if b * b < 0.2:
        return a
    return np.ones(3)


def test_assignment_dead_only_in_the_masked_lanes_is_still_selected():
    a = np.array([0.3, -0.2, 0.1, -0.5])
    check(overwritten_under_a_batched_if, a, 0.7, in_axes=(0, None))
    check(overwritten_under_a_batched_if, a, np.array([0.7, 0.2, 1.5, 0.1]))


def test_unbatched_value_assigned_under_a_batched_test_is_repeated_in_every_lane():
    a = np.array([0.3, -0.2, 0.1, -0.5])
    np.testing.assert_allclose(vmap(branch_shapes_differ)(a, a * 0.5), a)
    np.testing.assert_allclose(vmap(branch_shapes_differ)(a, a + 2.0), np.ones((4, 3)))
    with pytest.raises(ValueError, match="same shape in every branch"):
        vmap(branch_shapes_differ)(a, np.array([0.1, 0.2, 3.0, 0.1]))


def test_placeholder_of_a_trip_count_under_vmap_of_grad():
    # grad keeps a slot (None) for the trip count of a loop under an if; vmap selected
    # lanes of it into an object array, which lanes_max could not compare
    def inner(p):
        if np.sum(p) >= 1.0:
            for r in np.stack([p, p]):
                pass
        return np.dot(p, p)

    def f(a, b):
        for r in b:
            if inner(r) > 0.5:
                pass
        return np.mean(b) * a

    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(4), rng.standard_normal((4, 2, 3)) + 0.3
    np.testing.assert_allclose(vmap(grad(f))(a, b), [grad(f)(u, v) for u, v in zip(a, b)],
                               rtol=1e-12)


def method_of_an_unbatched_array(a, b):
    # y.copy() has y's rank: it was taken for a number, and the batched sum not lined up
    y = np.zeros((2, 3))
    for i in range(2):
        y[i] = (b * np.ones((2, 3)))[1, :]
    z = np.zeros(2)
    return z.copy() + np.sum(y.copy()) * a


def list_rebuilt_in_a_loop(a, b, c):
    # the list display's cotangent comes off a tape: still a list under vmap(grad)
    for r in a:
        c = np.array([np.mean(a) * b, 0.3, 0.7])
    return np.sum(c)


def dict_returned_from_a_loop(a, b):
    t = a[1:]
    for i in range(4):
        st = {'a': b, 'w': b}
        return st['a'] * 2.0
    return t


def test_method_of_an_unbatched_array_keeps_its_rank():
    with warnings.catch_warnings():   # each(setitem) does not compile yet (issue 15)
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
        check(method_of_an_unbatched_array, np.array([0.5, -1.0, 2.0, 0.1]),
              np.array([0.3, 1.2, -0.4, 0.8]), compiles=False)


def test_containers_popped_from_tapes_under_vmap_of_grad():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 2)), rng.standard_normal(3)
    c = rng.standard_normal((3, 3))
    g = grad(list_rebuilt_in_a_loop, argnums=(0, 1, 2))
    got = vmap(g, in_axes=(None, 0, -1))(a[0], b, c.T)
    want = [g(a[0], b[i], c[i]) for i in range(3)]
    for k in range(3):
        np.testing.assert_allclose(got[k], np.stack([w[k] for w in want]), rtol=1e-12)
    g = grad(dict_returned_from_a_loop, argnums=(0, 1))
    got = vmap(g, in_axes=(0, None))(c, 0.7)
    want = [g(v, 0.7) for v in c]
    for k in range(2):
        np.testing.assert_allclose(got[k], np.stack([w[k] for w in want]), rtol=1e-12)


def sum_of_a_list_holding_an_unbatched_value(a, b):
    acc = []
    acc.append(a)
    return np.sum([b, 2.0]) + sum(acc, 0.0) * b


def list_grown_in_a_loop(x, n):
    acc = []
    for i in range(3):
        acc.append(x * i)
    return sum(acc, 0.0) * n


def test_sum_of_a_list_under_vmap_of_grad():
    # the cotangents sum() gives its list, lane by lane, are a list of lanes: its length is
    # known per binding at the top level (acc = [] holds none, acc.append(a) one); a list
    # grown in a loop has no length vmap knows, and runs lane by lane
    b = np.array([0.5, -1.0, 2.0])
    for f in (sum_of_a_list_holding_an_unbatched_value, list_grown_in_a_loop):
        for argnums, in_axes in ((0, (None, 0)), (1, (None, 0)), (0, (0, None))):
            g = grad(f, argnums=argnums)
            args = (0.3, b) if in_axes == (None, 0) else (b, 0.3)
            want = [g(*(v if a == 0 else w for a, w in zip(in_axes, args)))
                    for v in b]
            np.testing.assert_allclose(vmap(g, in_axes=in_axes)(*args), want, rtol=1e-12)


def list_summed_on_one_path(a, b, c):
    acc = []
    acc.append(a)
    if b >= 1.0:
        return c * 2.0
    return sum(acc, 0.0) * c


def test_list_summed_on_one_path_under_vmap_of_grad():
    # its length grew with every pass of vmap's fixpoint: 21 zero cotangents for one element
    # on the path that does not sum it (the other path: the xfail above)
    c = np.array([0.5, -1.0, 2.0])
    g = grad(list_summed_on_one_path)
    np.testing.assert_allclose(vmap(g, in_axes=(None, None, 0))(0.7, 1.5, c),
                               [g(0.7, 1.5, v) for v in c], rtol=1e-12)


def rows_appended_then_summed(x):
    grown = []
    for i in range(3):
        grown.append(x[i] * i)
    return np.sum(sum(grown, 0.0) ** 2)


def rows_summed_with_a_start(x):
    acc = [x[0], x[1] * 2.0]
    return np.sum(sum(acc, 1.0) ** 2)


@pytest.mark.parametrize("f", [rows_appended_then_summed, rows_summed_with_a_start])
def test_sum_of_a_list_of_rows_under_vmap(f):
    # the start (a number) meets elements of rank 1: lined up lane by lane (it was broadcast
    # as (batch,) against (batch, 3): a ValueError); a list grown in a loop runs lane by lane
    x = np.random.default_rng(5).uniform(0.1, 1.0, (2, 4, 3))
    check(f, x)
    check(grad(f), x)
