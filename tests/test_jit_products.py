"""Products in compiled code: the smallest as loops, small ones by BLAS from compiled code,
and the cotangents of ``@``'s operands added into their sums in place (codegen/inplace.py's
_products), each against the uncompiled function and central differences."""
import functools
import textwrap
import warnings

import numpy as np
import pytest

import strop
from strop import config, grad, jit, runtime
from strop.errors import JitFallbackWarning, PerformanceWarning
from helpers import numeric_vjp


@pytest.fixture(autouse=True)
def x64():
    with config.override(enable_x64=True):
        yield


def run_compiled(fn, *args):
    """``jit(fn)(*args)``, a JitFallbackWarning an error, and the compiled function."""
    jf = jit(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        return jf(*args), jf


def rnn(w, u, b, xs):             # matrix @ vector: outer products accumulate into bw, bu
    h = np.zeros(w.shape[0])
    total = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + u @ xs[t] + b)
        total = total + np.sum(h ** 2)
    return total


def rnn_rows(w, xs):              # vector @ matrix: matmul_vjp_y's outer product
    h = np.zeros(w.shape[1])
    for t in range(xs.shape[0]):
        h = np.sin(h @ w + xs[t])
    return np.sum(h * h)


def batched(w, x0, steps):         # matrix @ matrix: the product's cotangent added in place
    x = x0
    for _ in range(steps):
        x = np.tanh(x @ w) + 0.5 * x
    return np.sum(x ** 2)


def mixed(w, xs):                  # a float32 matrix, float64 cotangents: the sum's dtype
    h = np.ones(w.shape[0], np.float32)
    s = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h)
        s = s + np.sum(h * xs[t])
    return s


def data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(5, 5)) / 3, rng.normal(size=(5, 4)) / 3, rng.normal(size=5) / 3, \
        rng.normal(size=(7, 4))


CASES = {
    "rnn": (rnn, data(), (0, 1, 2)),
    "rnn_rows": (rnn_rows, (data()[0], np.random.default_rng(1).normal(size=(6, 5))), (0,)),
    "batched": (batched, (data()[0], np.random.default_rng(2).normal(size=(3, 5)), 4), (0, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_gradients_of_products_in_loops(name):
    fn, args, argnums = CASES[name]
    g = grad(fn, argnums=argnums)
    (got, _), want = run_compiled(g, *args), g(*args)
    for i, a, b in zip(argnums, got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(a, numeric_vjp(fn, list(args), i, 1.0), rtol=1e-6,
                                   atol=1e-9)


def test_the_cotangent_of_a_matrix_in_a_recurrence_is_added_into_its_sum():
    # owned sums that nothing else in the loop reads: each trip's outer product is held as
    # two rows and the rows are added as one product (codegen/outer.py)
    _, jg = run_compiled(grad(rnn, argnums=(0, 1, 2)), *data())
    text = strop.source(jg)
    for acc in ("bw", "bu"):
        assert f"{acc}, _{acc}_n = add_matmul_vjp_x_deferred({acc}, _{acc}_terms, _{acc}_n, " \
            in text, text
        assert f"_{acc}_terms = outer_terms({acc})" in text, text
        assert f"{acc} = add_terms({acc}, _{acc}_terms, _{acc}_n)" in text, text
    _, jg = run_compiled(grad(rnn_rows), *CASES["rnn_rows"][1])
    assert "bw, _bw_n = add_matmul_vjp_y_deferred(bw, " in strop.source(jg)


def rnn_until(w, xs, limit):       # a while loop left by break: the rows held are added
    h = np.ones(w.shape[0]) / 4
    t = 0
    while True:
        h = np.tanh(w @ h + xs[t])
        t += 1
        if t >= limit or t >= xs.shape[0]:
            break
    return np.sum(h ** 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("steps", [1, 128, 300])
def test_outer_products_held_over_many_trips_sum_as_each_trip_would(dtype, steps):
    # the rows held are added when TERM_ROWS (128) are full and after the loop: trip counts
    # around it, against Python's gradient (one product added per trip) and differences
    rng = np.random.default_rng(steps)
    w, u, b = (rng.normal(size=s) / 4 for s in ((6, 6), (6, 3), (6,)))
    xs = rng.normal(size=(steps, 3))
    args = [a.astype(dtype) for a in (w, u, b, xs)]
    g = grad(rnn, argnums=(0, 1, 2))
    with config.override(enable_x64=dtype == np.float64):
        (got, jg), want = run_compiled(g, *args), g(*args)
    assert "add_matmul_vjp_x_deferred" in strop.source(jg)
    tol = dict(rtol=2e-4, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-13)
    for a, b_ in zip(got, want):
        assert a.dtype == dtype
        np.testing.assert_allclose(a, b_, **tol)
    if dtype == np.float64:
        np.testing.assert_allclose(got[0], numeric_vjp(rnn, [w, u, b, xs], 0, 1.0), rtol=1e-6,
                                   atol=1e-9)


def test_outer_products_held_in_a_while_loop_left_by_break():
    fn, args = rnn_until, (np.eye(5) / 2 + 0.1, np.linspace(-1, 1, 1000).reshape(200, 5), 150)
    g = grad(fn)
    (got, jg), want = run_compiled(g, *args), g(*args)
    assert "_deferred(bw, _bw_terms" in strop.source(jg)
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(got, numeric_vjp(fn, list(args), 0, 1.0), rtol=1e-6, atol=1e-9)


def rewritten(src, rewrite, names):
    """The text of function ``src`` after codegen pass ``rewrite``, the runtime helpers
    ``names`` bound."""
    import gast
    from strop.transformer.unparse import unparse
    node = gast.parse(textwrap.dedent(src)).body[0]
    rewrite(node, {n: getattr(runtime, n) for n in names})
    return unparse(node)


def deferred(src):
    from strop.codegen.outer import defer_outer_products
    return rewritten(src, defer_outer_products, ("add_matmul_vjp_x_inplace", "zeros_like"))


HELD = """
    def f(g, w, h, n):
        bw = zeros_like(w)
        for t in range(n):
            bw = add_matmul_vjp_x_inplace(bw, g, w, h)
        return bw
    """


def test_outer_products_are_held_only_where_nothing_else_in_the_loop_reads_the_sum():
    text = deferred(HELD)
    assert "bw, _bw_n = add_matmul_vjp_x_deferred(bw, _bw_terms, _bw_n, g, w, h)" in text
    assert text.index("_bw_terms = outer_terms(bw)") < text.index("for t in")
    assert text.index("bw = add_terms(bw, _bw_terms, _bw_n)") > text.index("add_matmul")
    for changed in ("bw = add_matmul_vjp_x_inplace(bw, g, w, h)\n            s = bw[0, 0]",
                    "bw = add_matmul_vjp_x_inplace(bw, g, w, h)\n            return bw",
                    "bw = add_matmul_vjp_x_inplace(bw, g, w, bw[0])"):
        text = deferred(HELD.replace("bw = add_matmul_vjp_x_inplace(bw, g, w, h)", changed))
        assert "deferred" not in text, text
    # a sum first bound in the loop (no value before it to hold rows for)
    text = deferred(HELD.replace("bw = zeros_like(w)", "pass"))
    assert "deferred" not in text, text
    # a nest: the rows are held across the outer loop's trips
    text = deferred(HELD.replace("for t in range(n):\n", "for r in range(n):\n"
                                 "          for t in range(r):\n  "))
    assert "deferred" in text, text
    assert text.index("_bw_terms = outer_terms(bw)") < text.index("for r in")
    assert text.index("bw = add_terms(") > text.rindex("add_matmul")
    assert text.count("add_terms(") == 1, text


@functools.cache
def _held_compiled():        # (one dispatcher: compiled once per dtype)
    import numba
    import strop.runtime.numba  # noqa: F401  (registers the helpers)
    return numba.njit(_held)


def _held(acc, gs, ys, extra_g, extra_y):
    terms, k = runtime.outer_terms(acc), 0
    for i in range(gs.shape[0]):
        acc, k = runtime.add_matmul_vjp_x_deferred(acc, terms, k, gs[i], acc, ys[i])
    acc, k = runtime.add_matmul_vjp_y_deferred(acc, terms, k, extra_g, extra_y, acc)
    return runtime.add_terms(acc, terms, k)


@pytest.mark.parametrize("m, n", [(1, 1), (3, 5), (4, 16), (5, 17), (8, 64), (13, 33)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_held_outer_products_sum_to_numpys(m, n, dtype):
    # the compiled helpers directly: 300 products (two full buffers and a part), then one of
    # another shape (added at once after the rows held), against NumPy's sum
    rng = np.random.default_rng(m * n)
    gs, ys = rng.normal(size=(300, m)).astype(dtype), rng.normal(size=(300, n)).astype(dtype)
    acc = rng.normal(size=(m, n)).astype(dtype)
    extra_g, extra_y = rng.normal(size=n).astype(dtype), rng.normal(size=m).astype(dtype)
    want = acc.astype(np.float64) + gs.T.astype(np.float64) @ ys + np.outer(extra_y, extra_g)
    got = _held_compiled()(acc.copy(), gs, ys, extra_g, extra_y)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-12,
                               atol=1e-3 if dtype == np.float32 else 1e-11)


def test_a_sum_of_another_dtype_is_made_anew():
    rng = np.random.default_rng(3)
    w, xs = rng.normal(size=(4, 4)).astype(np.float32), rng.normal(size=6)
    g = grad(mixed)
    (got, _), want = run_compiled(g, w, xs), g(w, xs)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def owned(src):
    from strop.codegen.inplace import make_inplace
    return rewritten(src, make_inplace, ("matmul_vjp_x", "matmul_vjp_y", "unbroadcast",
                                         "zeros_like", "add"))


LOOP = """
    def f(g, w, h, n):
        bw = zeros_like(w)
        for t in range(n):
            _t1 = matmul_vjp_x(g, w, h)
            _t2 = unbroadcast(_t1, w)
            bw = bw + _t2
        return bw
    """


def test_products_are_added_into_an_owned_sum_only():
    assert "bw = add_matmul_vjp_x_inplace(bw, g, w, h)" in owned(LOOP)
    assert "bw = add_matmul_vjp_x_inplace(bw, g, w, h)" in owned(
        LOOP.replace("bw + _t2", "add(_t2, bw)"))
    # the sum is an argument, or another name sees it: a new array each time
    text = owned(LOOP.replace("bw = zeros_like(w)", "bw = w"))
    assert "bw = add_matmul_vjp_x(bw, g, w, h)" in text and "inplace" not in text
    text = owned(LOOP.replace("            bw = bw + _t2",
                              "            seen = bw\n            bw = bw + _t2"))
    assert "bw = add_matmul_vjp_x(bw, g, w, h)" in text and "inplace" not in text
    # h rebound between the product and the sum, the product's value read again, or
    # unbroadcast to another operand's shape: left as it is
    for src in (LOOP.replace("            _t2 = ", "            h = h * 2.0\n            _t2 = "),
                LOOP.replace("bw = bw + _t2", "bw = bw + _t2 + _t1"),
                LOOP.replace("unbroadcast(_t1, w)", "unbroadcast(_t1, h)")):
        assert "add_matmul" not in owned(src), src


# (x's shape, y's, the sum's, the operand): every case the compiled helper meets, with sums
# it cannot hold (another shape: a new array, as the plain helper makes)
SUMS = [((3, 4), (4,), (3, 4), "x"), ((3,), (3, 4), (3,), "x"), ((2, 3, 4), (4,), (3, 4), "x"),
        ((3, 4), (4, 5), (3, 4), "x"), ((3, 4), (4,), (1, 4), "x"), ((3, 4), (4,), (4,), "x"),
        ((3,), (3, 4), (3, 4), "y"), ((3, 4), (4,), (4,), "y"), ((3,), (2, 3, 4), (3, 4), "y"),
        ((3, 4), (4, 5), (4, 5), "y"), ((3,), (3, 4), (1, 4), "y"), ((3,), (3, 4), (4,), "y")]


@pytest.mark.parametrize("xs, ys, sums, wrt", SUMS)
def test_adding_a_products_cotangent_in_place_is_the_plain_sum(xs, ys, sums, wrt):
    from numba import njit
    from strop.runtime import numba as _implementations  # noqa: F401
    rng = np.random.default_rng(4)
    x, y, acc = rng.normal(size=xs), rng.normal(size=ys), rng.normal(size=sums)
    g = np.matmul(x, y) + 1.0
    plain = getattr(runtime, f"add_matmul_vjp_{wrt}")
    helper = getattr(runtime, f"add_matmul_vjp_{wrt}_inplace")
    inplace = njit(lambda acc, g, x, y: helper(acc, g, x, y))    # its Numba implementation
    want = plain(acc, g, x, y)
    given = acc.copy()
    got = inplace(given, g, x, y)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # a sum of the operand's shape and dtype is written into: no array of its own
    operand = x if wrt == "x" else y
    assert np.shares_memory(got, given) == (acc.shape == operand.shape)


@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)),
                                    ((4, 3), (4, 5)), ((300, 300), (300,)),
                                    ((60, 70), (70, 80))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_products_of_matrices_compile_small_and_large(shapes, dtype):
    # the smallest products as loops, small ones by BLAS from compiled code, large ones
    # through NumPy, a transposed operand made contiguous first
    rng = np.random.default_rng(2)
    a, b = (rng.normal(size=s).astype(dtype) for s in shapes)
    if a.shape == (4, 3):
        a = a.T
    got, _ = run_compiled(lambda a, b: a @ b, a, b)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, a @ b, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("n, k, m", [(2, 2, 2), (1, 3, 1), (3, 1, 4), (4, 4, 4), (5, 5, 5),
                                     (0, 2, 3), (2, 0, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_products_of_matrices_run_as_loops_in_compiled_code(n, k, m, dtype):
    # up to MATMAT_WORK multiply-adds a loop, not a BLAS call (a 2x2 Kalman filter's
    # products): transposed operands, an empty axis, and the cotangents' products (g @ y.T,
    # x.T @ g) the same way; a PerformanceWarning (an object-mode island) fails the test
    rng = np.random.default_rng(n * 100 + k * 10 + m)
    a, b = rng.normal(size=(n, k)).astype(dtype), rng.normal(size=(k, m)).astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-13, atol=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        for f, args in ((lambda a, b: a @ b, (a, b)), (lambda a, b: a @ b.T, (a, b.T.copy())),
                        (lambda a, b: a.T @ b, (a.T.copy(), b))):
            got, _ = run_compiled(f, *args)
            assert got.dtype == dtype
            np.testing.assert_allclose(got, a @ b, **tol)
        g = grad(lambda a, b: np.sum(np.sin(a @ b)), argnums=(0, 1))
        got, _ = run_compiled(g, a.astype(np.float64), b.astype(np.float64))
    want = g(a.astype(np.float64), b.astype(np.float64))
    for x, y in zip(got, want):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shapes", [((3,), (4, 3, 2)), ((2, 3), (4, 3, 2)), ((4, 2, 3), (3,)),
                                    ((4, 2, 3), (3, 5)), ((4, 2, 3), (4, 3, 5)),
                                    ((2, 4, 2, 3), (2, 4, 3, 5)), ((5,), (2, 2, 5, 1)),
                                    ((2, 1, 2, 3), (4, 3, 5)), ((40, 30, 30), (30, 30))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_products_of_stacks_of_matrices_compile(shapes, dtype):
    # vmap of ``h @ params[i].w`` with the weights batched: a vector or matrix times a stack
    # of matrices ran through NumPy in object mode (fuzzer seed 2902, program 42); stacks
    # that broadcast against each other still go to NumPy, and say so; large ones go to
    # NumPy's BLAS, whose call costs little beside their work (no warning)
    rng = np.random.default_rng(len(shapes[0]) * 10 + len(shapes[1]))
    a, b = (rng.normal(size=s).astype(dtype) for s in shapes)
    slow = a.ndim > 2 and b.ndim > 2 and a.shape[:-2] != b.shape[:-2]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got, _ = run_compiled(lambda a, b: a @ b, a, b)
    assert any(issubclass(w.category, PerformanceWarning) for w in seen) == slow
    assert got.dtype == dtype and got.shape == (a @ b).shape
    np.testing.assert_allclose(got, a @ b, rtol=1e-5 if dtype == np.float32 else 1e-12)
    with pytest.raises(ValueError, match="matmul"):
        jit(lambda a, b: a @ b)(a, rng.normal(size=shapes[1][:-2] + (7, 2)).astype(dtype))


def dots(a):
    return np.sum(np.dot(a[:, 0], a)) + np.dot(a.T, a[:, 1])[1] + np.dot(2.0, a[0, 0]) + \
        np.dot(a[0], a[1])


def test_np_dot_of_a_column_and_of_numbers_compiles_quietly():
    # Numba's np.dot warned of a non-contiguous column (a NumbaPerformanceWarning naming the
    # generated file; an error under -W error, and then a fallback) and refused two numbers
    a = np.arange(6.0).reshape(3, 2) / 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, jf = run_compiled(dots, a)
    assert jf.last_backend == "cpu"
    np.testing.assert_allclose(got, dots(a), rtol=1e-13)


@pytest.mark.parametrize("rows, cols", [(1, 1), (3, 17), (4, 16), (5, 33), (8, 8), (64, 64),
                                        (67, 31), (128, 128)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matrix_vector_kernels(rows, cols, dtype):
    # runtime/numba/matvec.py's kernels (rows and columns past whole vectors and blocks of
    # four, a transposed matrix), and the cotangents they give, against NumPy and Python
    rng = np.random.default_rng(rows * cols)
    m, v, u = (rng.normal(size=s).astype(dtype) for s in ((rows, cols), (cols,), (rows,)))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for f, args, want in ((lambda m, v: m @ v, (m, v), m @ v), (lambda u, m: u @ m, (u, m), u @ m),
                          (lambda m, u: m.T @ u, (m, u), m.T @ u)):
        got, _ = run_compiled(f, *args)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, **tol)

    def loss(m, v, u):
        return np.sum(np.sin(m @ v) * u) + np.sum((u @ m) ** 2)
    g = grad(loss, argnums=(0, 1, 2))
    (got, _), want = run_compiled(g, m, v, u), g(m, v, u)
    for a, b in zip(got, want):    # (float32: sums of 128 terms, to their largest's ulps)
        np.testing.assert_allclose(a, b, rtol=tol["rtol"], atol=tol["atol"] * np.abs(b).max())


@pytest.mark.parametrize("ranks", [(1, 1), (1, 2), (2, 1), (2, 2)])
@pytest.mark.parametrize("batched", [(0, None), (None, 0), (0, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_per_example_gradients_of_products_compile_quietly(ranks, batched, dtype):
    # jit(vmap(grad(loss))) of ``hidden @ w2`` (a vector per example times a shared matrix:
    # the demo's own MLP) ran matmul_vjp_x_lanes through NumPy in object mode; every rank and
    # batching of two vectors or matrices now compiles
    rng = np.random.default_rng(sum(ranks) * 7 + len(str(batched)))
    shape = {1: (4,), 2: (4, 4)}
    a, b = (rng.normal(size=((6,) if axis == 0 else ()) + shape[r]).astype(dtype)
            for r, axis in zip(ranks, batched))

    def loss(a, b):
        return np.sum(np.tanh(a @ b) ** 2)

    per_example = strop.vmap(grad(loss, argnums=(0, 1)), in_axes=batched)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        got, jf = run_compiled(per_example, a, b)
    assert jf.last_backend == "cpu"
    want = per_example(a, b)
    lane = lambda x, axis, k: x[k] if axis == 0 else x
    loop = [grad(loss, argnums=(0, 1))(lane(a, batched[0], k), lane(b, batched[1], k))
            for k in range(6)]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype == dtype and g.shape == w.shape == (6,) + loop[0][i].shape
        tol = 1e-4 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
        np.testing.assert_allclose(g, np.stack([one[i] for one in loop]), rtol=tol, atol=tol)
