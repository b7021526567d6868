"""Numba implementations of the runtime helpers, chosen by argument types at compile time.

Each ``@overload`` gives the code that njit-compiled generated code runs when it calls the
helper; Python calls still run the NumPy version in runtime.py.  Helpers without one here are
compiled from their own source (``register_jitable``) when Numba can; when it cannot, the
compile fails and jit falls back to the python backend with a JitFallbackWarning.
"""
import numba
import numpy as np
from numba import types
from numba.core.errors import NumbaTypeError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from . import runtime as rt
from .via_numpy import LARGE, VIA_NUMPY

SCALARS = (types.Float, types.Integer, types.Boolean)


def _float_of(t):
    """The NumPy float type a cotangent of a value of Numba type ``t`` has."""
    dtype = t.dtype if isinstance(t, types.Array) else t
    if isinstance(dtype, types.Float):
        return as_dtype(dtype).type
    return np.float64


def _none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


@register_jitable
def _not_a_real_number(out):
    raise TypeError("grad requires a real scalar output: use strop.vjp or strop.jacrev "
                    "for non-scalar outputs, or reduce it (e.g. .sum())")


@overload(rt.seed_grad)
def _seed_grad(out):
    if isinstance(out, types.Float):
        one = _float_of(out)(1.0)
        return lambda out: one
    return _not_a_real_number


@overload(rt.seed_grad_lanes)
def _seed_grad_lanes(out):
    """1.0 per lane: each lane's output must be a real number (a 1-D float array of them)."""
    if isinstance(out, types.Array) and out.ndim == 1 and isinstance(out.dtype, types.Float):
        return lambda out: np.ones_like(out)

    def fail(out):
        _not_a_real_number(out)
        return np.ones(1)   # never reached: the type of what grad's code goes on with
    return fail


@overload(rt.aux_pair)
def _aux_pair(out):
    if isinstance(out, types.BaseTuple) and len(out) == 2:
        return lambda out: None
    if isinstance(out, types.List):
        def check_list(out):
            if len(out) != 2:
                raise TypeError("has_aux=True requires the function to return a pair "
                                "(output, aux)")
        return check_list

    def fail(out):
        raise TypeError("has_aux=True requires the function to return a pair (output, aux)")
    return fail


@overload(rt.out_axis)
def _out_axis(x, axis):
    def impl(x, axis):
        if not -x.ndim <= axis < x.ndim:
            raise ValueError("vmap out_axes is out of bounds for the output's rank")
        return np.moveaxis(x, 0, axis)
    return impl


@overload(rt.zeros_like)
def _zeros_like(x):
    dt = _float_of(x)
    if isinstance(x, types.Array):
        return lambda x: np.zeros(x.shape, dt)
    if isinstance(x, SCALARS):
        zero = dt(0.0)
        return lambda x: zero
    if isinstance(x, types.NoneType):   # a temporary not assigned yet: no tangent either
        return lambda x: None


@overload(rt.add)
def _add(a, b):
    """Cotangents accumulated: None is zero, tuples add element by element (``+`` would
    concatenate them: a tuple argument's gradient twice as long)."""
    if isinstance(a, types.NoneType):
        return lambda a, b: b
    if isinstance(b, types.NoneType):
        return lambda a, b: a
    if isinstance(a, types.BaseTuple) or isinstance(b, types.BaseTuple):
        if not (isinstance(a, types.BaseTuple) and isinstance(b, types.BaseTuple)) or \
                len(a) != len(b):
            return None
        parts = "".join(f"add(a[{i}], b[{i}]), " for i in range(len(a)))
        return _unrolled(f"def impl(a, b):\n    return ({parts})\n", add=rt.add)
    return lambda a, b: a + b


@overload(rt.astype_like)
def _astype_like(g, x):
    dt = _float_of(x)
    if isinstance(x, types.Array):
        return lambda g, x: np.asarray(g).astype(dt)
    return lambda g, x: dt(g)


@register_jitable
def _sum_to(g, shape, dt):
    """g summed to ``shape`` (NumPy broadcasting undone), any ranks."""
    out = np.zeros(shape, dt)
    flat = out.reshape(-1)
    gc = np.ascontiguousarray(g).reshape(-1)
    nd, nx = g.ndim, len(shape)
    off = nd - nx
    strides = np.ones(max(nx, 1), np.int64)
    for a in range(nx - 2, -1, -1):
        strides[a] = strides[a + 1] * shape[a + 1]
    for i in range(gc.size):
        rem, pos = i, 0
        for a in range(nd - 1, -1, -1):
            k = rem % g.shape[a]
            rem //= g.shape[a]
            xa = a - off
            if xa >= 0 and shape[xa] != 1:
                pos += k * strides[xa]
        flat[pos] += gc[i]
    return out


@overload(rt.unbroadcast)
def _unbroadcast(g, x):
    dt = _float_of(x) if isinstance(x, (types.Array, types.Float)) else _float_of(g)
    if isinstance(x, SCALARS):
        if isinstance(g, types.Array):
            return lambda g, x: dt(g.sum())
        return lambda g, x: dt(g)
    if isinstance(x, types.Array):
        if isinstance(g, SCALARS):
            return lambda g, x: np.full(x.shape, dt(g))
        same_dtype = isinstance(g, types.Array) and as_dtype(g.dtype).type is dt
        if g.ndim == x.ndim:
            def same_rank(g, x):
                if g.shape == x.shape:
                    return g if same_dtype else g.astype(dt)
                return _sum_to(g, x.shape, dt)
            return same_rank
        if g.ndim == x.ndim + 1:
            def one_more(g, x):   # a bias added to each row: the rows' sum
                if g.shape[1:] == x.shape:
                    return g.sum(axis=0).astype(dt)
                return _sum_to(g, x.shape, dt)
            return one_more
        return lambda g, x: _sum_to(g, x.shape, dt)


@overload(rt.broadcast_like)
def _broadcast_like(g, v):
    dt = _float_of(v)
    if isinstance(v, types.Array):
        return lambda g, v: np.broadcast_to(np.asarray(g).astype(dt), v.shape).copy()
    return lambda g, v: dt(g)


@overload(rt.expand_to)
def _expand_to(g, x, axis=None, keepdims=False):
    if not isinstance(x, types.Array):
        return lambda g, x, axis=None, keepdims=False: g
    if _none(axis) or isinstance(g, SCALARS):
        return lambda g, x, axis=None, keepdims=False: np.full(x.shape, g)
    if isinstance(axis, types.Integer):
        def one_axis(g, x, axis=None, keepdims=False):
            if keepdims:
                return np.broadcast_to(g, x.shape)
            return np.broadcast_to(np.expand_dims(g, axis % x.ndim), x.shape)
        return one_axis


@overload(rt.getitem_vjp)
def _getitem_vjp(g, x, idx):
    if not isinstance(x, types.Array):
        return None
    dt = _float_of(x)
    if isinstance(idx, types.Array) and idx.ndim == 1 and isinstance(idx.dtype, types.Integer):
        def gather(g, x, idx):     # repeated indices accumulate
            out = np.zeros(x.shape, dt)
            for k in range(idx.size):
                out[idx[k]] += g[k]
            return out
        return gather

    def basic(g, x, idx):
        out = np.zeros(x.shape, dt)
        out[idx] += g
        return out
    return basic


@overload(rt.setitem)
def _setitem(x, idx, v):
    if isinstance(x, types.Array):
        def impl(x, idx, v):
            out = x.copy()
            out[idx] = v
            return out
        return impl


@overload(rt.setitem_vjp)
def _setitem_vjp(g, idx):
    if isinstance(g, types.Array):
        def impl(g, idx):
            out = g.copy()
            out[idx] = 0
            return out
        return impl


@overload(rt.tape_array)
def _tape_array(n, like):
    if isinstance(like, (types.Float, types.Integer, types.Boolean)):
        dt = as_dtype(like)
        return lambda n, like: np.empty(n, dt)


@overload(rt.tape_put)
def _tape_put(tape, i, v):
    if isinstance(tape.dtype, (types.Integer, types.Boolean)) and not isinstance(
            v, (types.Integer, types.Boolean)):
        raise NumbaTypeError(f"a number taped for the adjoint is {tape.dtype} before the loop "
                             f"and {v} in it; Python keeps its type, an array tape would not")

    def put(tape, i, v):
        tape[i] = v
    return put


@overload(rt.item_vjp)
def _item_vjp(g, idx, v):
    if isinstance(g, types.Array):
        return lambda g, idx, v: rt.unbroadcast(g[idx], v)


@overload(rt.mean_grad)
def _mean_grad(a, axis=None, where=True):
    dt = _float_of(a)
    if _none(axis) and (_none(where) or isinstance(where, types.BooleanLiteral) or
                        isinstance(where, types.Boolean)):
        return lambda a, axis=None, where=True: dt(1.0) / a.size


@register_jitable
def _share(out, values, top, where):
    """d max / d values (1-D, ``out`` zeros): the elements equal to ``top`` share it evenly
    (ties split); NaN everywhere where ``top`` is NaN; zeros where ``where`` is False."""
    if top != top:
        out[:] = np.nan
    elif where:
        hits = 0
        for i in range(values.size):
            if values[i] == top:
                out[i] = 1
                hits += 1
        if hits > 1:
            out /= hits


@overload(rt.extremum_grad)
def _extremum_grad(a, ans, axis=None, keepdims=False, where=True):
    """Over all of ``a`` (axis None)."""
    if not (isinstance(a, types.Array) and _none(axis) and isinstance(where, types.Boolean)):
        return None
    dt = _float_of(a)
    scalar = not isinstance(ans, types.Array)

    def impl(a, ans, axis=None, keepdims=False, where=True):
        out = np.zeros(a.shape, dt)
        _share(out.reshape(-1), np.ascontiguousarray(a).reshape(-1),
               ans if scalar else ans.flat[0], where)
        return out
    return impl


@overload(rt.expand_to_lanes)
def _expand_to_lanes(g, x, axis=None, keepdims=False):
    """Each lane's number repeated over the lane of ``x`` (a reduction over all of a lane)."""
    if not (isinstance(g, types.Array) and g.ndim == 1 and isinstance(x, types.Array) and
            _none(axis)):
        return None
    dt = g.dtype

    def impl(g, x, axis=None, keepdims=False):
        out = np.empty(x.shape, dt)
        rows = out.reshape((x.shape[0], -1))
        for j in range(rows.shape[0]):
            rows[j, :] = g[j]
        return out
    return impl


@overload(rt.extremum_grad_lanes)
def _extremum_grad_lanes(a, ans, axis, keepdims, where=True):
    """extremum_grad over all of each lane (axis None)."""
    if not (isinstance(a, types.Array) and isinstance(ans, types.Array) and ans.ndim == 1
            and _none(axis) and isinstance(where, (types.Boolean, types.Omitted))):
        return None
    dt = _float_of(a)

    def impl(a, ans, axis, keepdims, where=True):
        n = a.shape[0]
        out = np.zeros(a.shape, dt)
        rows, lanes = out.reshape((n, -1)), np.ascontiguousarray(a).reshape((n, -1))
        for j in range(n):
            _share(rows[j], lanes[j], ans[j], where)
        return out
    return impl


# .at[idx] with JAX's out-of-bounds modes, for an integer or a 1-D integer array index on the
# first axis (other indices fall back): get clamps, updates drop ("clip" clamps them).
@register_jitable
def _position(i, n, clip):
    """Index ``i`` on an axis of ``n``: wrapped if negative, then clamped (clip) or -1 if out."""
    j = i + n if i < 0 else i
    if 0 <= j < n:
        return j
    if clip:
        return min(max(j, 0), n - 1)
    return -1


def _at_update(combine, inplace=False):
    def overload_impl(x, idx, v, mode=None):
        if not isinstance(x, types.Array):
            return None
        if isinstance(idx, types.Integer):
            def one(x, idx, v, mode=None):
                out = x if inplace else x.copy()
                j = _position(idx, x.shape[0], mode == "clip")
                if j >= 0:
                    out[j] = combine(out[j], v)
                return out
            return one
        if isinstance(idx, types.Array) and idx.ndim == 1 and isinstance(idx.dtype,
                                                                         types.Integer):
            scalar_v = isinstance(v, SCALARS)

            def many(x, idx, v, mode=None):
                out = x if inplace else x.copy()
                for k in range(idx.size):
                    j = _position(idx[k], x.shape[0], mode == "clip")
                    if j >= 0:
                        out[j] = combine(out[j], v if scalar_v else v[k])
                return out
            return many
    return overload_impl


for _name, _combine in (("at_set", lambda old, new: new), ("at_add", lambda a, b: a + b),
                        ("at_multiply", lambda a, b: a * b),
                        ("at_min", lambda a, b: min(a, b)), ("at_max", lambda a, b: max(a, b))):
    _combine = register_jitable(_combine)
    overload(getattr(rt, _name))(_at_update(_combine))
    overload(getattr(rt, _name + "_inplace"))(_at_update(_combine, inplace=True))


@overload(rt.setitem_inplace)
def _setitem_inplace(x, idx, v):
    if isinstance(x, types.Array):
        def impl(x, idx, v):
            x[idx] = v
            return x
        return impl


@overload(rt.at_get)
def _at_get(x, idx, mode=None, fill_value=None):
    if isinstance(x, types.Array) and isinstance(idx, types.Integer):
        fill = np.nan if isinstance(x.dtype, types.Float) else 0

        def one(x, idx, mode=None, fill_value=None):
            j = _position(idx, x.shape[0], not (mode == "fill" or mode == "drop"))
            if j < 0:
                return x[0] * 0 + (fill if fill_value is None else fill_value)
            return x[j]
        return one


def _matmul_type(a, b):
    dt = numba.from_dtype(np.result_type(_float_of(a), _float_of(b)))
    nd = max(a.ndim, b.ndim, 2) - (a.ndim == 1) - (b.ndim == 1)
    return dt if nd == 0 else types.Array(dt, nd, "C")


def _through_numpy(fn, out_type):
    """``fn(*args)`` run through NumPy from compiled code (BLAS products), its result
    C-contiguous in ``out_type``'s dtype; called as ``run((a, b, ...))``."""
    dt = out_type.dtype.name

    def run(args):
        with numba.objmode(out=out_type):
            out = np.ascontiguousarray(fn(*args), dtype=dt)
        return out
    return register_jitable(run)


# One example's product of a vector and a matrix is small: it runs as a loop (a call into NumPy
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


def _flag(t):
    """The value of a literal bool argument (batched code passes True/False), or None."""
    return bool(t.literal_value) if isinstance(t, types.BooleanLiteral) else None


@overload(rt.matmul_lanes, prefer_literal=True)
def _matmul_lanes(a, b, a_batched, b_batched):
    ab, bb = _flag(a_batched), _flag(b_batched)
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)) or None in (ab, bb):
        return None
    ra, rb = a.ndim - ab, b.ndim - bb
    dt = numba.from_dtype(np.result_type(as_dtype(a.dtype), as_dtype(b.dtype)))
    run = _through_numpy(rt.matmul_lanes, types.Array(
        dt, max(ra, rb, 2) - (ra == 1) - (rb == 1) + 1, "C"))
    return lambda a, b, a_batched, b_batched: run((a, b, ab, bb))


def _rows(a, n):
    """``a`` as ``n`` rows: itself when it has a batch axis (2-D), else repeated."""


@overload(_rows)
def _rows_impl(a, n):
    if a.ndim == 2:
        return lambda a, n: a

    def repeated(a, n):
        out = np.empty((n, a.size), a.dtype)
        for i in range(n):
            out[i] = a
        return out
    return repeated


@numba.njit(boundscheck=False, cache=True)
def _outer_lanes(a, b, dt):
    """The outer product of ``a[k]`` and ``b[k]`` for each lane ``k`` (2-D ``a``, ``b``),
    written in place in one loop nest.  Compiled apart, without the bounds checks of the
    generated code that calls it (its indices are in range by construction), each output row
    written through a 1-D view from a copy of ``b[k]`` (the inner loop vectorizes with no
    aliasing check): the per-example gradients of a 64 x 128 layer for 512 examples, 16.8 MB,
    0.73 -> 0.29 ms, near what writing them costs."""
    n, p, q = a.shape[0], a.shape[1], b.shape[1]
    out = np.empty((n, p, q), dt)
    row = np.empty(q, dt)
    for k in range(n):
        for j in range(q):
            row[j] = b[k, j]
        for i in range(p):
            aki = a[k, i]
            o = out[k, i]
            for j in range(q):
                o[j] = aki * row[j]
    return out


def _matmul_vjp_lanes(helper, wrt):
    """The Numba implementation of ``helper`` (runtime.matmul_vjp_x_lanes, ``wrt`` "x", or
    matmul_vjp_y_lanes): each lane's outer product (a vector times a vector of a product
    with a matrix) written in place, the rest through NumPy (BLAS)."""
    def impl(g, x, y, x_batched, y_batched):
        xb, yb = _flag(x_batched), _flag(y_batched)
        if not (isinstance(x, types.Array) and isinstance(y, types.Array)) or None in (xb, yb):
            return None
        other = y if wrt == "x" else x
        outer = (2, 1) if wrt == "x" else (1, 2)
        if _floats(g, other) and (x.ndim - xb, y.ndim - yb) == outer and g.ndim == 2:
            dt = _product_dtype(g, other)
            if wrt == "x":     # outer(g, y) in each lane
                return lambda g, x, y, x_batched, y_batched: _outer_lanes(
                    g, _rows(y, g.shape[0]), dt)
            return lambda g, x, y, x_batched, y_batched: _outer_lanes(   # outer(x, g)
                _rows(x, g.shape[0]), g, dt)
        run = _through_numpy(helper, _vjp_type(g, x, y, wrt, (xb, yb)))
        return lambda g, x, y, x_batched, y_batched: run((g, x, y, xb, yb))
    return impl


overload(rt.matmul_vjp_x_lanes, prefer_literal=True)(_matmul_vjp_lanes(rt.matmul_vjp_x_lanes,
                                                                       "x"))
overload(rt.matmul_vjp_y_lanes, prefer_literal=True)(_matmul_vjp_lanes(rt.matmul_vjp_y_lanes,
                                                                       "y"))


@overload(rt.unbroadcast_lanes, prefer_literal=True)
def _unbroadcast_lanes(g, x, g_batched, x_batched):
    gb, xb = _flag(g_batched), _flag(x_batched)
    if None in (gb, xb) or not isinstance(g, types.Array) and gb:
        return None
    if not gb:
        if xb:
            return lambda g, x, g_batched, x_batched: rt.unbroadcast(g, x[0])
        return lambda g, x, g_batched, x_batched: rt.unbroadcast(g, x)
    dt = _float_of(x) if isinstance(getattr(x, "dtype", x), types.Float) else _float_of(g)
    same_dtype = as_dtype(g.dtype).type is dt
    lane_nd = x.ndim - xb if isinstance(x, types.Array) else 0
    if lane_nd == 0:
        if g.ndim == 1:
            return lambda g, x, g_batched, x_batched: g if same_dtype else g.astype(dt)

        def numbers(g, x, g_batched, x_batched):     # each lane's sum
            out = np.empty(g.shape[0], dt)
            for k in range(g.shape[0]):
                out[k] = g[k].sum()
            return out
        return numbers
    same_rank = g.ndim - 1 == lane_nd

    def impl(g, x, g_batched, x_batched):
        shape = x.shape[1:] if xb else x.shape
        if same_rank and g.shape[1:] == shape:      # nothing to sum: the cotangent itself
            return g if same_dtype else g.astype(dt)
        out = np.empty((g.shape[0],) + shape, dt)
        for k in range(g.shape[0]):
            out[k] = _sum_to(g[k], shape, dt)
        return out
    return impl


@overload(rt.weak)
def _weak(number, like):
    kind = like.dtype if isinstance(like, types.Array) else like
    same = (isinstance(kind, types.Float) and isinstance(number, (types.Integer, types.Float))
            or isinstance(kind, types.Complex) and isinstance(number, types.Number)
            or isinstance(kind, types.Integer) and isinstance(number, types.Integer))
    if same:
        cast = as_dtype(kind).type
        return lambda number, like: cast(number)
    return lambda number, like: number


def _unrolled(text, **names):
    """An implementation written out for a tuple's length (Numba types tuples by length).
    Its globals name this module, so that compiled code calling it can be saved and linked
    again (codegen/native.py finds environments by module)."""
    space = {"__name__": __name__, **names}
    exec(text, space)
    return space["impl"]


@overload(rt.lanes_like)
def _lanes_like(first, n):
    if isinstance(first, types.BaseTuple):
        parts = "".join(f"one(first[{i}], n), " for i in range(len(first)))
        return _unrolled(f"def impl(first, n):\n    return ({parts})\n", one=_lanes_one)
    return lambda first, n: _lanes_one(first, n)


@register_jitable
def _lanes_one_array(first, n):
    return np.empty((n,) + first.shape, first.dtype)


def _lanes_one(first, n):
    pass


@overload(_lanes_one)
def _lanes_one_impl(first, n):
    if isinstance(first, types.Array):
        return lambda first, n: _lanes_one_array(first, n)
    dt = first
    return lambda first, n: np.empty(n, dt)


@overload(rt.set_lane)
def _set_lane(out, j, value):
    if isinstance(value, types.BaseTuple):
        body = "".join(f"    out[{i}][j] = value[{i}]\n" for i in range(len(value)))
        return _unrolled(f"def impl(out, j, value):\n{body}")

    def impl(out, j, value):
        out[j] = value
    return impl


_OVERLOADED = {rt.weak, rt.lanes_like, rt.set_lane, rt.tape_array, rt.tape_put, rt.seed_grad, rt.aux_pair, rt.out_axis, rt.zeros_like, rt.add,
               rt.astype_like, rt.unbroadcast, rt.broadcast_like, rt.expand_to, rt.getitem_vjp, rt.setitem, rt.setitem_vjp,
               rt.item_vjp, rt.mean_grad, rt.extremum_grad, rt.expand_to_lanes,
               rt.extremum_grad_lanes, rt.matmul, rt.matmul_lanes, rt.matmul_vjp_x_lanes,
               rt.matmul_vjp_y_lanes, rt.unbroadcast_lanes, rt.matmul_vjp_x, rt.matmul_vjp_y, rt.at_set,
               rt.at_add, rt.at_multiply, rt.at_min, rt.at_max, rt.at_get,
               rt.stack, rt.push, rt.pop, rt.align_to, rt.unalign, rt.matmul_as_x, rt.matmul_as_y,
               rt.matmul_x_vjp_y, rt.matmul_y_vjp_x}
for _name in rt.__all__:   # the rest: compiled from their own source, where Numba can
    _fn = getattr(rt, _name)
    if callable(_fn) and _fn not in _OVERLOADED and getattr(_fn, "__module__", "").startswith(
            "strop.codegen"):
        register_jitable(_fn)


def _through_numpy_when_large(ufunc, stub):
    @overload(stub)
    def impl(x):
        if isinstance(x, types.Array) and isinstance(x.dtype, types.Float):
            out_type = types.Array(x.dtype, x.ndim, "C")

            def large(x):
                if x.size < LARGE:
                    return ufunc(x)
                with numba.objmode(out=out_type):
                    out = np.ascontiguousarray(ufunc(x))
                return out
            return large
        return lambda x: ufunc(x)


for _ufunc, _stub in VIA_NUMPY.items():   # see via_numpy.py
    _through_numpy_when_large(_ufunc, _stub)

from . import runtime_forward_numba  # noqa: E402,F401  (registers forward mode's helpers)


@overload(rt.align_to, prefer_literal=True)
def _align_to(x, other, other_batched):
    """The axes inserted written out for the ranks the types give (a view, as x[:, None])."""
    ob = _flag(other_batched)
    if ob is None or not isinstance(x, types.Array) or not isinstance(other, (types.Array,
                                                                             *SCALARS)):
        return None
    extra = getattr(other, "ndim", 0) - ob - (x.ndim - 1)
    if extra <= 0:
        return lambda x, other, other_batched: x
    return _unrolled(f"def impl(x, other, other_batched):\n    return x[:{', None' * extra}]\n")


@overload(rt.unalign)
def _unalign(g, x):
    """The inserted axes (of length 1) indexed away: a view, whatever g's layout."""
    extra = g.ndim - getattr(x, "ndim", 0) if isinstance(g, types.Array) else 0
    if extra <= 0:
        return lambda g, x: g
    return _unrolled(f"def impl(g, x):\n    return g[:{', 0' * extra}]\n")


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
from . import runtime_numeric_numba  # noqa: E402,F401  (the numerical routines' helpers)
from . import runtime_lax_numba  # noqa: E402,F401  (strop.lax's helpers)
