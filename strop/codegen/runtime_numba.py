"""Numba implementations of the runtime helpers, chosen by argument types at compile time.

Each ``@overload`` gives the code that njit-compiled generated code runs when it calls the
helper; Python calls still run the NumPy version in runtime.py.  Helpers without one here are
compiled from their own source (``register_jitable``) when Numba can; when it cannot, the
compile fails and jit falls back to the python backend with a JitFallbackWarning.
"""
import numba
import numpy as np
from numba import types
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


@overload(rt.seed_grad)
def _seed_grad(out):
    if isinstance(out, types.Float):
        one = _float_of(out)(1.0)
        return lambda out: one

    def fail(out):
        raise TypeError("grad requires a real scalar output: use strop.vjp or strop.jacrev "
                        "for non-scalar outputs, or reduce it (e.g. .sum())")
    return fail


@overload(rt.zeros_like)
def _zeros_like(x):
    dt = _float_of(x)
    if isinstance(x, types.Array):
        return lambda x: np.zeros(x.shape, dt)
    if isinstance(x, SCALARS):
        zero = dt(0.0)
        return lambda x: zero


@overload(rt.add)
def _add(a, b):
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
    nd = max(a.ndim, b.ndim) - (a.ndim == 1) - (b.ndim == 1)
    return dt if nd == 0 else types.Array(dt, nd, "C")


def _through_numpy(fn, out_type):
    """Run the NumPy helper ``fn`` (BLAS-backed products) from compiled code."""
    def impl(*args):
        with numba.objmode(out=out_type):
            out = fn(*args)
        return out
    return impl


@overload(rt.matmul)
def _matmul(a, b):
    if isinstance(a, types.Array) and isinstance(b, types.Array):
        out_type = _matmul_type(a, b)

        def impl(a, b):
            with numba.objmode(out=out_type):
                out = np.matmul(a, b)
            return out
        return impl


@overload(rt.matmul_vjp_x)
def _matmul_vjp_x(g, x, y):
    if isinstance(x, types.Array) and isinstance(y, types.Array):
        out_type = types.Array(numba.from_dtype(np.dtype(_float_of(x))), max(
            x.ndim, getattr(g, "ndim", 0) + (y.ndim == 1) + 0 * (x.ndim == 1)) if x.ndim > 1
            else 1, "C")

        def impl(g, x, y):
            with numba.objmode(out=out_type):
                out = np.ascontiguousarray(rt.matmul_vjp_x(g, x, y), dtype=out_type.dtype.name)
            return out
        return impl


@overload(rt.matmul_vjp_y)
def _matmul_vjp_y(g, x, y):
    if isinstance(x, types.Array) and isinstance(y, types.Array):
        nd = y.ndim if y.ndim > 1 else 1
        nd = max(nd, getattr(g, "ndim", 0) + (x.ndim == 1)) if y.ndim > 1 else 1
        out_type = types.Array(numba.from_dtype(np.dtype(_float_of(y))), nd, "C")

        def impl(g, x, y):
            with numba.objmode(out=out_type):
                out = np.ascontiguousarray(rt.matmul_vjp_y(g, x, y), dtype=out_type.dtype.name)
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
    """An implementation written out for a tuple's length (Numba types tuples by length)."""
    space = dict(names)
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


_OVERLOADED = {rt.weak, rt.lanes_like, rt.set_lane, rt.tape_array, rt.seed_grad, rt.zeros_like, rt.add,
               rt.astype_like, rt.unbroadcast, rt.broadcast_like, rt.expand_to, rt.getitem_vjp, rt.setitem, rt.setitem_vjp,
               rt.item_vjp, rt.mean_grad, rt.matmul, rt.matmul_vjp_x, rt.matmul_vjp_y, rt.at_set,
               rt.at_add, rt.at_multiply, rt.at_min, rt.at_max, rt.at_get,
               rt.stack, rt.push, rt.pop}
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
