"""Products in compiled code: small ones by BLAS from compiled code, and the cotangents of
``@``'s operands added into their sums in place (codegen/inplace.py's _products), each against
the uncompiled function and central differences."""
import textwrap
import warnings

import numpy as np
import pytest

import strop
from strop import config, grad, jit, runtime
from strop.errors import JitFallbackWarning
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
    _, jg = run_compiled(grad(rnn, argnums=(0, 1, 2)), *data())
    text = strop.source(jg)
    assert "bw = add_matmul_vjp_x_inplace(bw, " in text, text
    assert "bu = add_matmul_vjp_x_inplace(bu, " in text, text
    _, jg = run_compiled(grad(rnn_rows), *CASES["rnn_rows"][1])
    assert "bw = add_matmul_vjp_y_inplace(bw, " in strop.source(jg)


def test_a_sum_of_another_dtype_is_made_anew():
    rng = np.random.default_rng(3)
    w, xs = rng.normal(size=(4, 4)).astype(np.float32), rng.normal(size=6)
    g = grad(mixed)
    (got, _), want = run_compiled(g, w, xs), g(w, xs)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def owned(src):
    import gast
    from strop.codegen.inplace import make_inplace
    from strop.transformer.unparse import unparse
    names = ("matmul_vjp_x", "matmul_vjp_y", "unbroadcast", "zeros_like", "add")
    node = gast.parse(textwrap.dedent(src)).body[0]
    make_inplace(node, {n: getattr(runtime, n) for n in names})
    return unparse(node)


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
    # small products by BLAS from compiled code, large ones through NumPy, a transposed
    # operand made contiguous first
    rng = np.random.default_rng(2)
    a, b = (rng.normal(size=s).astype(dtype) for s in shapes)
    if a.shape == (4, 3):
        a = a.T
    got, _ = run_compiled(lambda a, b: a @ b, a, b)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, a @ b, rtol=1e-5 if dtype == np.float32 else 1e-12)


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
