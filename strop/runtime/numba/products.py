"""Numba implementations of products.py's helpers: ``@`` and its derivatives, products of a
vector and a matrix as loops (matvec.py's kernels for one float dtype), the rest through BLAS
from compiled code or NumPy."""
import numba
import numpy as np
from numba import types
from numba.extending import register_jitable
from numba.np.numpy_support import as_dtype

from ... import runtime as rt
from ._common import _float_of, _through_numpy, _unrolled, overload
from .matvec import add_outer_rows, add_outer, mat_vec, vec_mat


def _matmul_type(a, b):
    dt = numba.from_dtype(np.result_type(_float_of(a), _float_of(b)))
    nd = max(a.ndim, b.ndim, 2) - (a.ndim == 1) - (b.ndim == 1)
    return dt if nd == 0 else types.Array(dt, nd, "C")


# Products of floats of one dtype whose work (multiply-adds) is at most SMALL_PRODUCT run BLAS
# from compiled code (Numba's np.dot, on SciPy's BLAS): a call into NumPy costs more than such
# a product, and OpenBLAS runs it on the calling thread (SciPy's threads beside NumPy's made
# large products crawl).  Without SciPy, products of a vector and a matrix run as loops.
# Larger products go to BLAS through NumPy.
SMALL_PRODUCT = 1 << 16
# Products of a matrix and a vector of one float dtype of at most MATVEC_WORK multiply-adds run
# matvec.py's kernels: faster than a BLAS call up to there (128x128 float32: the same).
MATVEC_WORK = 1 << 14
# Products of two matrices of at most MATMAT_WORK multiply-adds run as a loop: a BLAS call
# costs more than such a product (2x2 float64: 51 ns against 139, allocation in both; 4x4:
# 84 against 148; 8x8: 241 against 194), and a transposed operand is not copied first.
MATMAT_WORK = 128


def _product_dtype(*ts):
    return np.result_type(*[_float_of(t) for t in ts]).type


def _floats(*ts):
    return all(isinstance(t, types.Array) and isinstance(t.dtype, types.Float) for t in ts)


@register_jitable
def _outer(a, b, dt):
    out = np.empty((a.size, b.size), dt)
    for i in range(a.size):
        ai = a[i]
        for j in range(b.size):
            out[i, j] = ai * b[j]
    return out


@register_jitable
def _mat_vec(m, v, dt):
    """``m @ v``."""
    out = np.empty(m.shape[0], dt)
    for i in range(m.shape[0]):
        acc = dt(0)
        for j in range(m.shape[1]):
            acc += m[i, j] * v[j]
        out[i] = acc
    return out


@register_jitable
def _vec_mat(v, m, dt):
    """``v @ m``, row by row (the inner loop runs along a row, and vectorizes)."""
    out = np.zeros(m.shape[1], dt)
    for i in range(m.shape[0]):
        vi = v[i]
        for j in range(m.shape[1]):
            out[j] += vi * m[i, j]
    return out


@register_jitable
def _vec_vec(a, b, dt):
    acc = dt(0)
    for i in range(a.size):
        acc += a[i] * b[i]
    return acc


def _small_or_numpy(loop, fn, out_type, work):
    """``loop(args)``, or ``fn`` through NumPy where ``work(args)`` (the product's
    multiply-adds) is more than SMALL_PRODUCT; called as ``run((a, b, ...))``."""
    numpy_run = _through_numpy(fn, out_type)

    @register_jitable
    def run(args):
        if work(args) > SMALL_PRODUCT:
            return numpy_run(args)
        return loop(*args)
    return run


def _blas():
    """Whether Numba's np.dot has a BLAS (SciPy's), found once."""
    global _HAS_BLAS
    if _HAS_BLAS is None:
        try:
            import scipy.linalg.cython_blas  # noqa: F401
            _HAS_BLAS = True
        except ImportError:
            _HAS_BLAS = False
    return _HAS_BLAS


_HAS_BLAS = None


@register_jitable
def _mat_mat(a, b, dt):
    """``a @ b`` of two matrices, row by row (the inner loop runs along b's row)."""
    out = np.zeros((a.shape[0], b.shape[1]), dt)
    for i in range(a.shape[0]):
        row = out[i]
        for p in range(a.shape[1]):
            aip = a[i, p]
            for j in range(b.shape[1]):
                row[j] += aip * b[p, j]
    return out


@register_jitable
def _blas_dot(a, b):
    return np.dot(np.ascontiguousarray(a), np.ascontiguousarray(b))


def _dot(a, b):
    """``np.dot(a, b)`` of float arrays of one dtype (ranks 1 or 2) by BLAS, a small product
    of matrices as a loop (MATMAT_WORK)."""


@overload(_dot)
def _dot_impl(a, b):
    if not (a.ndim == 2 and b.ndim == 2):
        return _blas_dot
    dt = _product_dtype(a, b)

    def matrices(a, b):
        if a.shape[1] == b.shape[0] and a.shape[0] * a.shape[1] * b.shape[1] <= MATMAT_WORK:
            return _mat_mat(a, b, dt)
        return _blas_dot(a, b)
    return matrices


def _one_float(*ts):
    return _floats(*ts) and len({t.dtype for t in ts}) == 1


def _by_blas(*ts):
    """Whether a product of arrays of types ``ts`` (each of rank 1 or 2) runs BLAS from
    compiled code: floats of one dtype, and SciPy there."""
    return _one_float(*ts) and all(t.ndim in (1, 2) for t in ts) and _blas()


@register_jitable
def _work(args):
    """Multiply-adds of ``args[0] @ args[1]`` (ranks 1 or 2)."""
    a, b = args[0], args[1]
    return a.size * (b.size // max(b.shape[0], 1))    # (b's columns, 1 for a vector)


def _vector_product(a_ndim, out_type, operands=None):
    """``a @ b`` for arrays of one float dtype, ``a`` of rank ``a_ndim`` (ranks (2, 1) or
    (1, 2)): matvec's kernel where the work is at most MATVEC_WORK, else BLAS from compiled
    code (or the kernel, without SciPy) up to SMALL_PRODUCT, else NumPy.  Called as ``(a, b)``,
    or as ``(g, x, y)`` where ``operands(g, x, y)`` gives them (the vjp helpers).  One function,
    not layers of helpers: each layer returning an array cost ~15 ns, a tenth of a 64x64
    product."""
    kernel = mat_vec if a_ndim == 2 else vec_mat
    medium = _dot if _blas() else kernel
    numpy_run = _through_numpy(np.matmul, out_type)

    @register_jitable
    def product(a, b):
        work = _work((a, b))
        if work <= MATVEC_WORK:
            return kernel(np.ascontiguousarray(a), np.ascontiguousarray(b))
        if work <= SMALL_PRODUCT:
            return medium(np.ascontiguousarray(a), np.ascontiguousarray(b))
        return numpy_run((a, b))
    if operands is None:
        return product
    return lambda g, x, y: product(*operands(g, x, y))


@overload(rt.matmul)
def _matmul(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        return None
    dt = _product_dtype(a, b)
    if _floats(a, b) and (a.ndim, b.ndim) == (1, 1):
        return lambda a, b: _vec_vec(a, b, dt)
    if _one_float(a, b) and (a.ndim, b.ndim) in ((1, 2), (2, 1)):
        return _vector_product(a.ndim, _matmul_type(a, b))
    if _one_float(a, b) and max(a.ndim, b.ndim) > 2:
        return _stacked_product(a.ndim, b.ndim, _matmul_type(a, b))
    if _by_blas(a, b):
        loop = _dot
    elif _floats(a, b) and (a.ndim, b.ndim) in ((1, 2), (2, 1)):
        loop = _vec_mat if a.ndim == 1 else _mat_vec
        loop = register_jitable(lambda a, b, loop=loop: loop(a, b, dt))
    else:
        run = _through_numpy(np.matmul, _matmul_type(a, b))
        return lambda a, b: run((a, b))
    run = _small_or_numpy(loop, np.matmul, _matmul_type(a, b), _work)
    return lambda a, b: run((a, b))


def _stacked_product(ra, rb, out_type):
    """``a @ b`` of float arrays of one dtype, one of them a stack of matrices (rank above 2:
    vmap of a product whose matrix is batched, ``h @ w[i]``), the other a stack of as many or
    one matrix or vector: a product per matrix of the stack (a loop, or BLAS, by _dot), NumPy's
    where the work is more than SMALL_PRODUCT or the stacks broadcast against each other."""
    numpy_run = _through_numpy(np.matmul, out_type)
    if min(ra, rb) > 2 and ra != rb:
        return lambda a, b: numpy_run((a, b))
    as3 = {1: "(1, 1, {0}.shape[0])", 2: "(1, {0}.shape[0], {0}.shape[1])"}
    a3 = as3.get(ra, "(-1, {0}.shape[-2], {0}.shape[-1])").format("A")
    b3 = {1: "(1, B.shape[0], 1)"}.get(rb, as3.get(rb, "(-1, {0}.shape[-2], {0}.shape[-1])")
                                        ).format("B")
    stack = "A" if ra > 2 else "B"
    core = ("A3.shape[1], " if ra > 1 else "") + ("B3.shape[2], " if rb > 1 else "")
    lines = ["def impl(a, b):",
             "    A, B = np.ascontiguousarray(a), np.ascontiguousarray(b)",
             f"    A3, B3 = A.reshape({a3}), B.reshape({b3})"]
    if ra > 2 and rb > 2:
        lines += ["    if A.shape[:-2] != B.shape[:-2]:",
                  "        return numpy_run((a, b))"]
    lines += ["    if A3.shape[2] != B3.shape[1]:",
              "        raise ValueError('matmul: mismatch in its core dimension')",
              "    n = max(A3.shape[0], B3.shape[0])",
              "    if n * A3.shape[1] * A3.shape[2] * B3.shape[2] > SMALL_PRODUCT:",
              "        return numpy_run((a, b))",
              "    out = np.empty((n, A3.shape[1], B3.shape[2]), A.dtype)",
              "    for i in range(n):",
              f"        out[i] = product(A3[{'i' if ra > 2 else '0'}], "
              f"B3[{'i' if rb > 2 else '0'}])",
              f"    return out.reshape({stack}.shape[:-2] + ({core}))"]
    return _unrolled("\n".join(lines) + "\n", np=np, numpy_run=numpy_run,
                     SMALL_PRODUCT=SMALL_PRODUCT, product=_dot if _blas() else _loop_product)


@register_jitable
def _loop_product(a, b):
    return _mat_mat(a, b, a.dtype)


def _vjp_type(g, x, y, wrt, flags=None):
    """The type of runtime.matmul_vjp_x's result (``wrt`` "x") or matmul_vjp_y's.  With
    ``flags`` (x_batched, y_batched: the _lanes helpers), ``g`` and the result have a batch
    axis, and ``x`` and ``y`` where their flags say."""
    lanes = flags is not None
    xb, yb = flags or (0, 0)
    gd, xd, yd = getattr(g, "ndim", 0) - lanes, x.ndim - xb, y.ndim - yb
    other, od = (y, yd) if wrt == "x" else (x, xd)
    if xd == 1 and yd == 1:
        nd = 1
    elif od == 1:                                     # an outer product
        nd = gd + 1
    elif (xd if wrt == "x" else yd) == 1:             # a matrix times a vector
        nd = max(od, gd + 1) - 1
    else:
        nd = max(od, gd)
    return types.Array(numba.from_dtype(np.dtype(_product_dtype(g, other))), nd + lanes, "C")


# (runtime helper, x.ndim, y.ndim): its loop, and whether BLAS serves instead (the outer
# products have no BLAS form that makes a new array)
_VJP_LOOPS = {
    (rt.matmul_vjp_x, 1, 1): (register_jitable(lambda g, x, y, dt: g * y), False),
    (rt.matmul_vjp_x, 2, 1): (register_jitable(lambda g, x, y, dt: _outer(g, y, dt)), False),
    (rt.matmul_vjp_x, 1, 2): (register_jitable(lambda g, x, y, dt: _mat_vec(y, g, dt)), True),
    (rt.matmul_vjp_y, 1, 1): (register_jitable(lambda g, x, y, dt: g * x), False),
    (rt.matmul_vjp_y, 1, 2): (register_jitable(lambda g, x, y, dt: _outer(x, g, dt)), False),
    (rt.matmul_vjp_y, 2, 1): (register_jitable(lambda g, x, y, dt: _vec_mat(g, x, dt)), True),
}
# the products of a matrix and a vector among them (the first operand's, the second's), for
# matvec's kernels (floats of one dtype)
_VJP_VECTOR = {(rt.matmul_vjp_x, 1, 2): register_jitable(lambda g, x, y: (y, g)),
               (rt.matmul_vjp_y, 2, 1): register_jitable(lambda g, x, y: (g, x))}
# the same products as BLAS calls, for floats of one dtype (x.ndim, y.ndim and wrt given)
_VJP_BLAS = {
    (rt.matmul_vjp_x, 1, 2): register_jitable(lambda g, x, y, dt: _dot(y, g)),
    (rt.matmul_vjp_x, 2, 2): register_jitable(lambda g, x, y, dt: _dot(g, y.T)),
    (rt.matmul_vjp_y, 2, 1): register_jitable(lambda g, x, y, dt: _dot(g, x)),
    (rt.matmul_vjp_y, 2, 2): register_jitable(lambda g, x, y, dt: _dot(x.T, g)),
}


@register_jitable
def _vjp_work(args):
    return _work((args[1], args[2]))


def _matmul_vjp(helper, wrt):
    """The Numba implementation of ``helper`` (runtime.matmul_vjp_x, ``wrt`` "x", or
    matmul_vjp_y): small products of matrices by BLAS from compiled code, outer products and
    (without SciPy) products of a vector and a matrix as loops, the rest through NumPy."""
    def impl(g, x, y):
        if not (isinstance(x, types.Array) and isinstance(y, types.Array)):
            return None
        other = y if wrt == "x" else x
        key = (helper, x.ndim, y.ndim)
        dt = _product_dtype(g, other)
        if key in _VJP_VECTOR and _one_float(g, other):
            return _vector_product(other.ndim if wrt == "x" else 1, _vjp_type(g, x, y, wrt),
                                   _VJP_VECTOR[key])
        if key in _VJP_LOOPS and (x.ndim == y.ndim == 1 or _floats(g, other)):
            loop, blas = _VJP_LOOPS[key]
            if not blas:
                return lambda g, x, y: loop(g, x, y, dt)
        else:
            loop = None
        if key in _VJP_BLAS and _by_blas(g, other):
            loop = _VJP_BLAS[key]
        if loop is None:
            run = _through_numpy(helper, _vjp_type(g, x, y, wrt))
        else:
            run = _small_or_numpy(register_jitable(lambda g, x, y: loop(g, x, y, dt)), helper,
                                  _vjp_type(g, x, y, wrt), _vjp_work)
        return lambda g, x, y: run((g, x, y))
    return impl


overload(rt.matmul_vjp_x)(_matmul_vjp(rt.matmul_vjp_x, "x"))
overload(rt.matmul_vjp_y)(_matmul_vjp(rt.matmul_vjp_y, "y"))


@register_jitable
def _add_outer(acc, a, b):
    """``acc += outer(a, b)``, row by row (the inner loop vectorizes)."""
    for i in range(a.size):
        ai, row = a[i], acc[i]
        for j in range(b.size):
            row[j] += ai * b[j]
    return acc


# the outer product whose sum is the cotangent of x (g times y) or of y (x times g)
_OUTER_FACTORS = {"x": register_jitable(lambda g, x, y: (g, y)),
                  "y": register_jitable(lambda g, x, y: (x, g))}


def _add_matmul_vjp_inplace(plain, helper, wrt):
    """The Numba implementation of ``plain``'s _inplace form (runtime.add_matmul_vjp_x,
    ``wrt`` "x", or _y): the cotangent written into ``acc`` where it can hold the sum (an
    array of the operand's rank whose dtype is the sum's; its shape is checked when run),
    an outer product with no array of its own; else the new array ``plain`` makes."""
    def impl(acc, g, x, y):
        arrays = all(isinstance(t, types.Array) for t in (acc, g, x, y))
        operand, other = (x, y) if wrt == "x" else (y, x)
        if not (arrays and acc.ndim == operand.ndim and as_dtype(acc.dtype) == np.result_type(
                as_dtype(acc.dtype), _product_dtype(g, other))):
            return lambda acc, g, x, y: plain(acc, g, x, y)
        if (operand.ndim, other.ndim, g.ndim) == (2, 1, 1):
            factors = _OUTER_FACTORS[wrt]
            kernel = acc.layout == "C" and _one_float(acc, g, other)

            def outer(acc, g, x, y):
                a, b = factors(g, x, y)
                if acc.shape != (a.size, b.size):
                    return plain(acc, g, x, y)
                if kernel:
                    return add_outer(acc, np.ascontiguousarray(a), np.ascontiguousarray(b))
                return _add_outer(acc, a, b)
            return outer

        def general(acc, g, x, y):
            t = helper(g, x, y)
            if t.shape != acc.shape:
                return plain(acc, g, x, y)
            acc += t
            return acc
        return general
    return impl


overload(rt.add_matmul_vjp_x_inplace)(_add_matmul_vjp_inplace(
    rt.add_matmul_vjp_x, rt.matmul_vjp_x, "x"))
overload(rt.add_matmul_vjp_y_inplace)(_add_matmul_vjp_inplace(
    rt.add_matmul_vjp_y, rt.matmul_vjp_y, "y"))


# Rows of outer products held before they are added as one product (matvec.add_outer_rows):
# 128 trips of 64x64 float32 take 7 µs so, where 128 passes over the matrix take 30-60 µs.
# As many as fit TERM_BYTES (two buffers of 64 float32 rows: 64 rows, measured better than
# 128 or 32 on lax_rnn, whose buffers took the step's operands out of L1), 16 to 128.
TERM_ROWS = 128
TERM_BYTES = 32768


@overload(rt.outer_terms)
def _outer_terms(acc):
    """Two buffers of rows (the outer products' left and right vectors) for a C float
    matrix; else None, and nothing is held."""
    if not (isinstance(acc, types.Array) and acc.ndim == 2 and acc.layout == "C" and
            isinstance(acc.dtype, types.Float)):
        return lambda acc: None
    itemsize = acc.dtype.bitwidth // 8

    def impl(acc):
        m, k = acc.shape
        rows = min(TERM_ROWS, max(16, TERM_BYTES // (max(m + k, 1) * itemsize)))
        return np.empty((rows, m), acc.dtype), np.empty((rows, k), acc.dtype)
    return impl


@overload(rt.add_terms)
def _add_terms(acc, terms, n):
    if isinstance(terms, types.NoneType):
        return lambda acc, terms, n: acc
    return lambda acc, terms, n: add_outer_rows(acc, terms[0], terms[1], n)


def _add_matmul_vjp_deferred(inplace, wrt):
    """The Numba implementation of runtime.add_matmul_vjp_x_deferred (``wrt`` "x", or _y):
    an outer product of vectors of the accumulator's dtype, of its shape, is copied into the
    next rows of ``terms``; anything else is added at once, by ``inplace``, after the rows
    held."""
    def impl(acc, terms, n, g, x, y):
        operand, other = (x, y) if wrt == "x" else (y, x)
        if not (isinstance(terms, types.BaseTuple) and _one_float(acc, g, other) and
                (operand.ndim, other.ndim, g.ndim) == (2, 1, 1)):
            return lambda acc, terms, n, g, x, y: (inplace(rt.add_terms(acc, terms, n), g, x, y),
                                                   0)
        factors = _OUTER_FACTORS[wrt]

        def defer(acc, terms, n, g, x, y):
            a, b = factors(g, x, y)
            left, right = terms
            m, k = left.shape[1], right.shape[1]
            if not (a.size == m and b.size == k and acc.shape[0] == m and acc.shape[1] == k):
                return inplace(rt.add_terms(acc, terms, n), g, x, y), 0
            for i in range(a.size):       # (a loop: Numba's row assignment is a slow path)
                left[n, i] = a[i]
            for j in range(b.size):
                right[n, j] = b[j]
            if n + 1 == left.shape[0]:
                return rt.add_terms(acc, terms, n + 1), 0
            return acc, n + 1
        return defer
    return impl


# (inlined: as a call, passing and returning the arrays cost more than the copy)
overload(rt.add_matmul_vjp_x_deferred, inline="always")(
    _add_matmul_vjp_deferred(rt.add_matmul_vjp_x_inplace, "x"))
overload(rt.add_matmul_vjp_y_deferred, inline="always")(
    _add_matmul_vjp_deferred(rt.add_matmul_vjp_y_inplace, "y"))


def _rank(t):
    return t.ndim if isinstance(t, types.Array) else 0


# matmul's second-order helpers: the branch on the operands' ranks taken at compile time
@overload(rt.matmul_as_x)
def _matmul_as_x(z, x, y):
    if _rank(x) == 1 and _rank(y) > 1:
        return lambda z, x, y: rt.matmul(np.expand_dims(z, -2), y)[..., 0, :]
    return lambda z, x, y: rt.matmul(z, y)


@overload(rt.matmul_as_y)
def _matmul_as_y(x, z, y):
    if _rank(y) == 1 and _rank(x) > 1:
        return lambda x, z, y: rt.matmul(x, np.expand_dims(z, -1))[..., 0]
    return lambda x, z, y: rt.matmul(x, z)


@overload(rt.matmul_x_vjp_y)
def _matmul_x_vjp_y(g, z, x, y):
    if _rank(x) == 1 and _rank(y) > 1:
        return lambda g, z, x, y: rt.matmul_vjp_y(np.expand_dims(g, -2), np.expand_dims(z, -2), y)
    return lambda g, z, x, y: rt.matmul_vjp_y(g, z, y)


@overload(rt.matmul_y_vjp_x)
def _matmul_y_vjp_x(g, z, x, y):
    if _rank(y) == 1 and _rank(x) > 1:
        return lambda g, z, x, y: rt.matmul_vjp_x(np.expand_dims(g, -1), x, np.expand_dims(z, -1))
    return lambda g, z, x, y: rt.matmul_vjp_x(g, x, z)



@overload(rt.dot_axes)
def _dot_axes(a, b):
    """The axes np.dot contracts depend only on the ranks: a constant tuple of tuples (a
    list would be known only at run time, and tensordot_vjp_a's result rank with it)."""
    na, nb = getattr(a, "ndim", 0), getattr(b, "ndim", 0)
    if na == 0 or nb == 0:
        return lambda a, b: 0
    axes = ((na - 1,), (max(nb - 2, 0),))
    return lambda a, b: axes


def _tensordot_vjp(fn, wrt):
    """The cotangent of one operand of np.tensordot has that operand's rank whatever the
    axes: computed by NumPy, declared as such.  np.dot's (its gradient's form: ``axes`` from
    dot_axes, operands of one or two axes and one float dtype) is matmul's, compiled: the trip
    through object mode cost tens of microseconds a call."""
    def impl(g, a, b, axes=2):
        x = a if wrt == "a" else b
        other = b if wrt == "a" else a
        if not (isinstance(x, types.Array) and isinstance(other, types.Array) and
                isinstance(g, (types.Array, types.Number))):
            return None
        dt = numba.from_dtype(np.result_type(_float_of(g), _float_of(other)))
        run = _through_numpy(fn, types.Array(dt, x.ndim, "C"))
        dtypes = {getattr(t, "dtype", t) for t in (g, a, b)}
        if not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2 and len(dtypes) == 1 and
                isinstance(dtypes.pop(), types.Float) and _dot_axes_type(axes)):
            return lambda g, a, b, axes=2: run((g, a, b, axes))
        vjp = rt.matmul_vjp_x if wrt == "a" else rt.matmul_vjp_y

        def dot(g, a, b, axes=2):
            if axes[0][0] == a.ndim - 1 and axes[1][0] == max(b.ndim - 2, 0):
                return np.ascontiguousarray(vjp(g, a, b))
            return run((g, a, b, axes))
        return dot
    return impl


def _dot_axes_type(axes):
    """Whether ``axes`` is typed as dot_axes makes it: a pair of one-int tuples."""
    return isinstance(axes, types.BaseTuple) and len(axes) == 2 and all(
        isinstance(t, types.BaseTuple) and len(t) == 1 and isinstance(t[0], types.Integer)
        for t in axes)


overload(rt.tensordot_vjp_a)(_tensordot_vjp(rt.tensordot_vjp_a, "a"))
overload(rt.tensordot_vjp_b)(_tensordot_vjp(rt.tensordot_vjp_b, "b"))

def _contracted(axes, na):
    """(the text of the axes of ``a`` and of ``b`` np.tensordot contracts, their count), for
    ``axes`` an int known when compiling (2 by default) or a pair of ints or of tuples of
    ints, else None (the result's rank would depend on values)."""
    if isinstance(axes, (types.Omitted, int)) or isinstance(axes, types.IntegerLiteral):
        k = getattr(axes, "value", getattr(axes, "literal_value", axes))
        k = 2 if k is None else k
        return (tuple(range(na - k, na)), tuple(range(k)), k) if 0 <= k <= na else None
    if not (isinstance(axes, types.BaseTuple) and len(axes) == 2):
        return None
    parts = []
    for i, part in enumerate(axes):
        if isinstance(part, types.Integer):
            parts.append((f"axes[{i}]",))
        elif isinstance(part, types.BaseTuple) and all(isinstance(t, types.Integer)
                                                       for t in part):
            parts.append(tuple(f"axes[{i}][{j}]" for j in range(len(part))))
        else:
            return None
    if len(parts[0]) != len(parts[1]):
        return None
    return parts[0], parts[1], len(parts[0])


@overload(np.tensordot, prefer_literal=True)
def _tensordot(a, b, axes=2):
    """np.tensordot of float arrays (Numba has none): the contracted axes of ``a`` moved
    last and ``b``'s first, one matrix product, reshaped to the free axes."""
    if not _floats(a, b):
        return None
    na, nb = a.ndim, b.ndim
    found = _contracted(axes, na)
    if found is None or found[2] > nb:
        return None
    ax_a, ax_b, k = found
    dt = _product_dtype(a, b)

    def free(n, name):
        return "".join(f"{name}[{i}], " for i in range(n))
    text = f"""
def impl(a, b, axes=2):
    ca = np.array([{", ".join(map(str, ax_a))}], np.intp) % {max(na, 1)}
    cb = np.array([{", ".join(map(str, ax_b))}], np.intp) % {max(nb, 1)}
    pa = np.empty({na}, np.intp)
    pb = np.empty({nb}, np.intp)
    j = 0
    for i in range({na}):
        if not np.any(ca == i):
            pa[j] = i
            j += 1
    pa[{na - k}:] = ca
    pb[:{k}] = cb
    j = {k}
    for i in range({nb}):
        if not np.any(cb == i):
            pb[j] = i
            j += 1
    at = np.ascontiguousarray(a.transpose(({free(na, "pa")}))).astype(dt)
    bt = np.ascontiguousarray(b.transpose(({free(nb, "pb")}))).astype(dt)
    m, n, p = 1, 1, 1
    for i in range({na - k}):
        m *= at.shape[i]
    for i in range({k}):
        n *= at.shape[{na - k} + i]
        if at.shape[{na - k} + i] != bt.shape[i]:
            raise ValueError("shape-mismatch for sum")
    for i in range({k}, {nb}):
        p *= bt.shape[i]
    out = np.dot(at.reshape((m, n)), bt.reshape((n, p)))
    return out.reshape(({"".join(f"at.shape[{i}], " for i in range(na - k))}"""
    text += f"""{"".join(f"bt.shape[{i}], " for i in range(k, nb))}))
"""
    return _unrolled(text, np=np, dt=dt)


IMPLEMENTED = {rt.matmul, rt.matmul_vjp_x, rt.matmul_vjp_y, rt.add_matmul_vjp_x_inplace,
               rt.add_matmul_vjp_y_inplace, rt.outer_terms, rt.add_terms,
               rt.add_matmul_vjp_x_deferred, rt.add_matmul_vjp_y_deferred, rt.matmul_as_x,
               rt.matmul_as_y, rt.matmul_x_vjp_y, rt.matmul_y_vjp_x}


@overload(np.dot)
def _dot_stacked(a, b):
    """``np.dot`` of an array of rank 3 or more and a vector or a matrix (Numba's takes ranks 1
    and 2): the last axis of ``a`` contracted with ``b``'s first, as one matrix product of
    ``a``'s rows (a Dense layer applied to a batch of sequences)."""
    if not (_floats(a, b) and a.ndim > 2 and b.ndim in (1, 2)):
        return None
    dt = _product_dtype(a, b)

    def impl(a, b):
        rows = np.ascontiguousarray(a).reshape((-1, a.shape[-1])).astype(dt)
        out = np.dot(rows, np.ascontiguousarray(b).astype(dt))
        return out.reshape(a.shape[:-1] + b.shape[1:])
    return impl
