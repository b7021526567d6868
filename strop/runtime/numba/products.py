"""Numba implementations of products.py's helpers: ``@`` and its derivatives, products of a
vector and a matrix as loops, the rest through NumPy (BLAS)."""
import numba
import numpy as np
from numba import types
from numba.extending import register_jitable

from ... import runtime as rt
from ._common import _float_of, _through_numpy, overload


def _matmul_type(a, b):
    dt = numba.from_dtype(np.result_type(_float_of(a), _float_of(b)))
    nd = max(a.ndim, b.ndim, 2) - (a.ndim == 1) - (b.ndim == 1)
    return dt if nd == 0 else types.Array(dt, nd, "C")


# costs more than the product).  Products of matrices, and of large ones, go to BLAS through
# NumPy.
SMALL_PRODUCT = 1 << 16


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


def _small_or_numpy(loop, fn, out_type, matrix):
    """``loop(args)``, or ``fn`` through NumPy where ``args[matrix]`` has more than
    SMALL_PRODUCT elements; called as ``run((a, b, ...))``."""
    numpy_run = _through_numpy(fn, out_type)

    @register_jitable
    def run(args):
        if args[matrix].size > SMALL_PRODUCT:
            return numpy_run(args)
        return loop(*args)
    return run


@overload(rt.matmul)
def _matmul(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        return None
    dt = _product_dtype(a, b)
    if _floats(a, b) and (a.ndim, b.ndim) == (1, 1):
        return lambda a, b: _vec_vec(a, b, dt)
    if _floats(a, b) and (a.ndim, b.ndim) in ((1, 2), (2, 1)):
        loop = _vec_mat if a.ndim == 1 else _mat_vec
        run = _small_or_numpy(register_jitable(lambda a, b: loop(a, b, dt)), np.matmul,
                              _matmul_type(a, b), 1 if a.ndim == 1 else 0)
    else:
        run = _through_numpy(np.matmul, _matmul_type(a, b))
    return lambda a, b: run((a, b))


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


# (runtime helper, x.ndim, y.ndim): (its loop, the argument holding the matrix: None where
# the loop always runs)
_VJP_LOOPS = {
    (rt.matmul_vjp_x, 1, 1): (register_jitable(lambda g, x, y, dt: g * y), None),
    (rt.matmul_vjp_x, 2, 1): (register_jitable(lambda g, x, y, dt: _outer(g, y, dt)), None),
    (rt.matmul_vjp_x, 1, 2): (register_jitable(lambda g, x, y, dt: _mat_vec(y, g, dt)), 2),
    (rt.matmul_vjp_y, 1, 1): (register_jitable(lambda g, x, y, dt: g * x), None),
    (rt.matmul_vjp_y, 1, 2): (register_jitable(lambda g, x, y, dt: _outer(x, g, dt)), None),
    (rt.matmul_vjp_y, 2, 1): (register_jitable(lambda g, x, y, dt: _vec_mat(g, x, dt)), 1),
}


def _matmul_vjp(helper, wrt):
    """The Numba implementation of ``helper`` (runtime.matmul_vjp_x, ``wrt`` "x", or
    matmul_vjp_y): products of a vector and a matrix as loops, the rest through NumPy."""
    def impl(g, x, y):
        if not (isinstance(x, types.Array) and isinstance(y, types.Array)):
            return None
        other = y if wrt == "x" else x
        key = (helper, x.ndim, y.ndim)
        if key in _VJP_LOOPS and (x.ndim == y.ndim == 1 or _floats(g, other)):
            loop, matrix = _VJP_LOOPS[key]
            dt = _product_dtype(g, other)
            if matrix is None:
                return lambda g, x, y: loop(g, x, y, dt)
            run = _small_or_numpy(register_jitable(lambda g, x, y: loop(g, x, y, dt)), helper,
                                  _vjp_type(g, x, y, wrt), matrix)
        else:
            run = _through_numpy(helper, _vjp_type(g, x, y, wrt))
        return lambda g, x, y: run((g, x, y))
    return impl


overload(rt.matmul_vjp_x)(_matmul_vjp(rt.matmul_vjp_x, "x"))
overload(rt.matmul_vjp_y)(_matmul_vjp(rt.matmul_vjp_y, "y"))


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
    axes: computed by NumPy, declared as such."""
    def impl(g, a, b, axes=2):
        x = a if wrt == "a" else b
        other = b if wrt == "a" else a
        if not (isinstance(x, types.Array) and isinstance(other, types.Array) and
                isinstance(g, (types.Array, types.Number))):
            return None
        dt = numba.from_dtype(np.result_type(_float_of(g), _float_of(other)))
        run = _through_numpy(fn, types.Array(dt, x.ndim, "C"))
        return lambda g, a, b, axes=2: run((g, a, b, axes))
    return impl


overload(rt.tensordot_vjp_a)(_tensordot_vjp(rt.tensordot_vjp_a, "a"))
overload(rt.tensordot_vjp_b)(_tensordot_vjp(rt.tensordot_vjp_b, "b"))

IMPLEMENTED = {rt.matmul, rt.matmul_vjp_x, rt.matmul_vjp_y, rt.matmul_as_x, rt.matmul_as_y,
               rt.matmul_x_vjp_y, rt.matmul_y_vjp_x}
