"""Helpers that generated code and rule templates call.

Every helper is a plain function of its arguments; containers (list, tuple, dict, None) are
handled as pytrees so that adjoints of containers are containers of adjoints.
"""
import numpy as np

__all__ = [
    "unbroadcast", "zeros_like", "ones_like", "add", "scale", "getitem_vjp", "setitem",
    "setitem_vjp", "expand_to", "astype_like", "stack", "push", "pop", "append", "insert",
    "pop_item", "item_of", "sort_like", "seed_grad", "aux_pair", "tape_array", "tape_put", "balanced_eq",
    "sort_vjp", "matmul", "matmul_vjp_x", "matmul_vjp_y", "matmul_as_x", "matmul_as_y",
    "matmul_x_vjp_y", "matmul_y_vjp_x", "weak",
    "at_get", "at_set", "at_add", "at_multiply", "at_min", "at_max", "at_set_inplace",
    "at_add_inplace", "at_multiply_inplace", "at_min_inplace", "at_max_inplace",
    "setitem_inplace",
]

_CONTAINERS = (list, tuple, dict)


def _is_float(x):
    return isinstance(x, float) or (isinstance(x, np.generic) and np.issubdtype(x.dtype, np.inexact))


def _dtype(x):
    """The dtype ``np.asarray(x)`` has: a list or tuple of arrays given to a NumPy function (as
    in ``np.mean([x, y])``) is an array to it (np.result_type would read it as a dtype spec)."""
    return np.asarray(x).dtype if isinstance(x, (list, tuple)) else np.result_type(x)


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x`` (undoing NumPy broadcasting), in x's float dtype."""
    shape = np.shape(x)
    g = np.asarray(g)
    if g.shape != shape:
        extra = g.ndim - len(shape)
        g = g.sum(axis=tuple(range(extra))) if extra > 0 else g
        axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
        if axes:
            g = g.sum(axis=axes, keepdims=True)
        if g.shape != shape:
            g = np.broadcast_to(g, shape)
    dtype = _dtype(x) if np.issubdtype(_dtype(x), np.inexact) else g.dtype
    if shape == () and not isinstance(x, np.ndarray):
        return g.astype(dtype)[()]
    return g.astype(dtype, copy=False)


def expand_to(g, x, axis=None, keepdims=False):
    """Broadcast the cotangent of a reduction over ``axis`` back to the shape of ``x``."""
    shape = np.shape(x)
    g = np.asarray(g)
    if axis is not None and not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        g = np.expand_dims(g, tuple(a % len(shape) for a in axes))
    return np.broadcast_to(g, shape)


def astype_like(g, x):
    """``g`` in the dtype of ``x`` (float dtypes only; integer primals carry no derivative)."""
    dtype = _dtype(x)
    if isinstance(x, np.ndarray):
        return np.asarray(g).astype(dtype, copy=False)
    return dtype.type(g) if np.ndim(g) == 0 else np.asarray(g, dtype)


def _registered(x):
    from ..tree_util import _registry
    return type(x) in _registry and not isinstance(x, _CONTAINERS) and x is not None


def _tree_map(fn, *trees):
    from ..tree_util import tree_map
    return tree_map(fn, *trees)


def zeros_like(x):
    if isinstance(x, _CONTAINERS):
        return _map(zeros_like, x)
    if _registered(x):
        return _tree_map(zeros_like, x)
    if x is None or isinstance(x, (str, bool, np.bool_)):
        return None
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64)
    if _is_float(x):
        return type(x)(0)
    if isinstance(x, (int, np.integer)):
        return 0.0
    raise TypeError(f"strop cannot make a zero cotangent for a value of type {type(x).__name__}")


def seed_grad(out):
    """The cotangent 1 that starts the adjoint sweep of ``grad``: only for a real scalar."""
    shape = np.shape(out) if not isinstance(out, (str, bytes)) else ()
    dtype = np.result_type(out) if isinstance(out, (np.ndarray, np.generic, float, int)) \
        else None
    if shape != () or dtype is None or not np.issubdtype(dtype, np.floating):
        what = f"shape {shape} and dtype {dtype}" if dtype is not None else type(out).__name__
        raise TypeError(f"grad requires a real scalar output, got a value of {what}. Use "
                        f"strop.vjp or strop.jacrev for non-scalar outputs, or reduce it "
                        f"(e.g. .sum())")
    return np.ones((), dtype)[()] if not isinstance(out, float) else 1.0


def aux_pair(out):
    """``has_aux=True``: the function must return a pair (output, aux), as JAX requires (a
    longer tuple would lose its other items, a scalar has no aux)."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        what = f"a {type(out).__name__} of length {len(out)}" if isinstance(
            out, (tuple, list)) else f"a value of type {type(out).__name__}"
        raise TypeError(f"has_aux=True requires the function to return a pair (output, aux), "
                        f"but it returned {what}. Fix: return output, aux (e.g. return loss, "
                        f"{{'acc': acc}}), or drop has_aux=True")


def ones_like(x):
    return np.ones_like(x) if isinstance(x, np.ndarray) else type(x)(1)


def _map(fn, *trees):
    first = trees[0]
    if isinstance(first, dict):
        return {k: fn(*(t[k] for t in trees)) for k in first}
    return _rebuild(first, [fn(*parts) for parts in zip(*trees)])


def _rebuild(like, items):
    """A list, tuple or named tuple (np.linalg's results) of the same type as ``like``."""
    return type(like)(*items) if hasattr(like, "_fields") else type(like)(items)


def add(a, b):
    """Accumulate two cotangents; ``None`` is zero; containers add leaf by leaf."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, _CONTAINERS):
        return _map(add, a, b)
    if _registered(a):
        return _tree_map(add, a, b)
    return a + b


def scale(a, s):
    if isinstance(a, _CONTAINERS):
        return _map(lambda v: scale(v, s), a)
    return None if a is None else a * s


def getitem_vjp(g, x, idx):
    """Cotangent of ``x[idx]``: zeros like x with g added at idx (repeated indices accumulate)."""
    if isinstance(x, dict):
        out = zeros_like(x)
        out[idx] = add(out[idx], g)
        return out
    if isinstance(x, (list, tuple)):
        out = list(zeros_like(x))
        if isinstance(idx, slice):
            for k, gk in zip(range(*idx.indices(len(x))), g):
                out[k] = add(out[k], gk)
        else:
            out[idx] = add(out[idx], g)
        return _rebuild(x, out)
    out = zeros_like(x)
    if isinstance(out, np.ndarray):
        np.add.at(out, idx, g)
        return out
    return type(out)(g)


def setitem(x, idx, v):
    """Functional ``x[idx] = v``: a new container, x unchanged."""
    if isinstance(x, tuple):
        raise TypeError("'tuple' object does not support item assignment")
    out = x.copy()
    out[idx] = v
    return out


def setitem_vjp(g, idx):
    """Cotangent of the container in ``setitem(x, idx, v)``: g with the overwritten part zeroed."""
    if g is None:
        return None
    out = g.copy()
    if isinstance(g, np.ndarray):
        out[idx] = 0
    else:
        out[idx] = zeros_like(g[idx])
    return out


def append(lst, v):
    """Functional ``lst.append(v)``."""
    return lst + [v]


def insert(lst, i, v):
    """Functional ``lst.insert(i, v)``."""
    return lst[:i] + [v] + lst[i:] if i != -1 else lst[:-1] + [v] + lst[-1:]


def item_of(obj, key=-1):
    """The value ``obj.pop(key)`` returns."""
    return obj[key]


def pop_item(obj, key=-1):
    """``obj`` without ``obj[key]``: the container ``obj.pop(key)`` leaves."""
    if isinstance(obj, dict):
        return {k: v for k, v in obj.items() if k != key}
    key = key % len(obj)
    return obj[:key] + obj[key + 1:]


def sort_like(x):
    """Functional ``x.sort()`` for arrays and lists."""
    return sorted(x) if isinstance(x, list) else np.sort(x)


# Tapes of the reverse sweep: per-variable stacks.  push/pop mutate the stack in place; a stack
# is only ever used linearly, so the generated code treats them as values.
def stack():
    return []


def tape_array(n, like):
    """A tape of n numbers of ``like``'s type, indexed by iteration (compiled code's tapes)."""
    return np.empty(n, np.result_type(like))


def tape_put(tape, i, v):
    """``tape[i] = v`` for an array tape (see tape_array)."""
    tape[i] = v


def push(s, v):
    s.append(v)


def pop(s):
    return s.pop()


# --- `.at[idx]` updates with JAX's out-of-bounds modes -----------------------------------------
# get: "clip" (default) clamps, "fill" returns fill_value; updates: "drop" (default) skips,
# "clip" clamps.  "promise_in_bounds" behaves as the default.

def _components(shape, idx):
    """Split ``idx`` into per-axis components, Ellipsis expanded, trailing axes filled with ``:``,
    boolean masks turned into integer arrays; None (newaxis) kept."""
    out = []
    for c in (idx if isinstance(idx, tuple) else (idx,)):
        is_mask = isinstance(c, np.ndarray) and c.dtype == bool
        out.extend(np.nonzero(c) if is_mask else (c,))
    is_ellipsis = [c is Ellipsis for c in out]
    missing = len(shape) - sum(1 for c, e in zip(out, is_ellipsis) if c is not None and not e)
    if any(is_ellipsis):
        k = is_ellipsis.index(True)
        return out[:k] + [slice(None)] * missing + out[k + 1:]
    return out + [slice(None)] * missing


def _mapped(shape, idx, how):
    """The index with integer components wrapped and then clipped ("clip") or sent to the pad
    position n of an array padded by one along each axis ("pad")."""
    comps, axis, out = _components(shape, idx), 0, []
    for c in comps:
        if c is None:
            out.append(None)
            continue
        n = shape[axis]
        axis += 1
        if isinstance(c, slice):   # in bounds by construction; spelled so padding never shows
            r = range(*c.indices(n))
            stop = r[-1] + r.step if len(r) else 0
            out.append(slice(r.start if len(r) else 0, stop if stop >= 0 else None, r.step))
            continue
        c = np.asarray(c)
        if not np.issubdtype(c.dtype, np.integer):
            raise IndexError("only integers, slices, ellipsis, None and integer or boolean arrays "
                             "are valid indices")
        ok = (c >= -n) & (c < n)
        wrapped = np.where(c < 0, c + n, c)
        c = np.clip(wrapped, 0, max(n - 1, 0)) if how == "clip" else np.where(ok, wrapped, n)
        out.append(c[()] if c.ndim == 0 else c)
    return tuple(out)


def _padded(x, fill):
    x = np.asarray(x)
    return np.pad(x, [(0, 1)] * x.ndim, constant_values=fill) if x.ndim else x


def _default_fill(dtype):
    if np.issubdtype(dtype, np.inexact):
        return np.nan
    if dtype == bool:
        return True
    info = np.iinfo(dtype)
    return info.min if np.issubdtype(dtype, np.signedinteger) else info.max


def at_get(x, idx, mode=None, fill_value=None):
    x = np.asarray(x)
    if mode in ("fill", "drop"):   # JAX reads "drop" as "fill" for a gather
        fill = _default_fill(x.dtype) if fill_value is None else fill_value
        return _padded(x, fill)[_mapped(x.shape, idx, "pad")]
    return x[_mapped(x.shape, idx, "clip")]


def scatter_positions(shape, idx, mode=None):
    """Flat positions an update at ``idx`` writes (-1 where it is dropped)."""
    size = int(np.prod(shape))
    if mode == "clip":
        return np.asarray(np.arange(size).reshape(shape)[_mapped(shape, idx, "clip")])
    return np.asarray(_padded(np.arange(size).reshape(shape), -1)[_mapped(shape, idx, "pad")])


def _scatter(x, idx, v, mode, combine, inplace=False):
    x = np.asarray(x)
    out = x if inplace else x.copy()
    pos = scatter_positions(x.shape, idx, mode)
    v = np.asarray(v)
    v = np.broadcast_to(v.astype(np.result_type(x, v), copy=False), pos.shape)
    keep = pos >= 0
    combine(out.reshape(-1), pos[keep], v[keep].astype(x.dtype, copy=False))
    return out


def _set(flat, pos, v):
    flat[pos] = v


def at_set_inplace(x, idx, v, mode=None):
    """``at_set`` writing into ``x`` (compiled code uses it where x's old value is dead)."""
    return _scatter(x, idx, v, mode, _set, inplace=True)


def at_add_inplace(x, idx, v, mode=None):
    return _scatter(x, idx, v, mode, np.add.at, inplace=True)


def at_multiply_inplace(x, idx, v, mode=None):
    return _scatter(x, idx, v, mode, np.multiply.at, inplace=True)


def at_min_inplace(x, idx, v, mode=None):
    return _scatter(x, idx, v, mode, np.minimum.at, inplace=True)


def at_max_inplace(x, idx, v, mode=None):
    return _scatter(x, idx, v, mode, np.maximum.at, inplace=True)


def setitem_inplace(x, idx, v):
    x[idx] = v
    return x


def at_set(x, idx, v, mode=None):
    return _scatter(x, idx, v, mode, _set)


def at_add(x, idx, v, mode=None):
    return _scatter(x, idx, v, mode, np.add.at)


def at_multiply(x, idx, v, mode=None):
    return _scatter(x, idx, v, mode, np.multiply.at)


def at_min(x, idx, v, mode=None):
    return _scatter(x, idx, v, mode, np.minimum.at)


def at_max(x, idx, v, mode=None):
    return _scatter(x, idx, v, mode, np.maximum.at)


def balanced_eq(x, z, y):
    """Share of the cotangent of max/min going to ``x``: ties split evenly (as autograd does)."""
    return (x == z) / (1.0 + (y == z))


def sort_vjp(g, x, axis=-1):
    """Cotangent of ``np.sort(x, axis)``: g sent back through the sorting permutation."""
    order = np.argsort(x, axis=axis)
    out = np.zeros_like(np.asarray(g))
    np.put_along_axis(out, order, g, axis=axis)
    return out


def weak(number, like):
    """A Python number in arithmetic with ``like``: as it is (NumPy already treats it as weak,
    taking ``like``'s precision); compiled code casts it to ``like``'s type (Numba would not)."""
    return number


def matmul(a, b):
    """``a @ b``: what compiled code calls for the operator (Numba's own needs SciPy)."""
    return np.matmul(a, b)


def matmul_vjp_x(g, x, y):
    """Cotangent of ``x`` in ``x @ y`` before unbroadcasting (1-D operands as NumPy treats them)."""
    if np.ndim(x) == 1 and np.ndim(y) == 1:
        return g * y
    if np.ndim(y) == 1:
        return np.expand_dims(g, -1) * y
    if np.ndim(x) == 1:
        return np.matmul(y, np.expand_dims(g, -1))[..., 0]
    return np.matmul(g, np.swapaxes(y, -1, -2))


def matmul_vjp_y(g, x, y):
    if np.ndim(x) == 1 and np.ndim(y) == 1:
        return g * x
    if np.ndim(x) == 1:
        return np.expand_dims(x, -1) * np.expand_dims(g, -2)
    if np.ndim(y) == 1:
        return np.matmul(np.swapaxes(x, -1, -2), np.expand_dims(g, -1))[..., 0]
    return np.matmul(np.swapaxes(x, -1, -2), g)


# The derivatives of matmul_vjp_x/y (second order).  matmul_vjp_x(g, x, y) is linear in g and
# in y; its result is x's cotangent before unbroadcasting: x's vector axis with the batch axes
# of the product in front.  Where x is 1-D and y is not, that is a stack of vectors, which
# np.matmul would read as a matrix: these helpers add the unit axis back (and likewise for y).

def matmul_as_x(z, x, y):
    """``z @ y`` with ``z`` a cotangent of ``x`` from matmul_vjp_x (the vjp of that in g)."""
    if np.ndim(x) == 1 and np.ndim(y) > 1:
        return matmul(np.expand_dims(z, -2), y)[..., 0, :]
    return matmul(z, y)


def matmul_as_y(x, z, y):
    """``x @ z`` with ``z`` a cotangent of ``y`` from matmul_vjp_y (the vjp of that in g)."""
    if np.ndim(y) == 1 and np.ndim(x) > 1:
        return matmul(x, np.expand_dims(z, -1))[..., 0]
    return matmul(x, z)


def matmul_x_vjp_y(g, z, x, y):
    """The cotangent of ``y`` in ``matmul_vjp_x(g, x, y)`` for the cotangent ``z`` of its result."""
    if np.ndim(x) == 1 and np.ndim(y) > 1:
        return matmul_vjp_y(np.expand_dims(g, -2), np.expand_dims(z, -2), y)
    return matmul_vjp_y(g, z, y)


def matmul_y_vjp_x(g, z, x, y):
    """The cotangent of ``x`` in ``matmul_vjp_y(g, x, y)`` for the cotangent ``z`` of its result."""
    if np.ndim(y) == 1 and np.ndim(x) > 1:
        return matmul_vjp_x(np.expand_dims(g, -1), x, np.expand_dims(z, -1))
    return matmul_vjp_x(g, x, z)


# --- helpers for ufuncs/reductions rules ---
# ``<reduction>_grad(a, ...)`` is the derivative of each output element with respect to the
# elements of ``a`` it reduces, shaped like ``a``: a rule multiplies it by ``expand_to(g, ...)``.

__all__ += ["mean_grad", "var_grad", "prod_grad", "extremum_grad", "ptp_grad", "rev_cumsum",
            "cumprod_vjp", "average_grad", "average_weights_vjp"]


def _float_dtype(x):
    dtype = _dtype(x)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def _axes(x, axis):
    """``axis`` of a reduction over ``x`` as a list of non-negative axes, in the order given."""
    ndim = np.ndim(x)
    if axis is None:
        return list(range(ndim))
    return [a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis)]


def _exclusive_cumprod(x):
    """Products of the elements before each one along the last axis (1 for the first)."""
    return np.cumprod(np.concatenate([np.ones_like(x[..., :1]), x[..., :-1]], axis=-1), axis=-1)


def mean_grad(a, axis=None, where=True):
    """d mean(a, axis) / d a: 1/n on the n elements each mean takes (``where``), 0 elsewhere."""
    taken = np.broadcast_to(where, np.shape(a))
    n = np.sum(taken, axis=axis, keepdims=True)
    return (taken / n).astype(_float_dtype(a), copy=False)


def var_grad(a, axis=None, ddof=0, where=True, mean=None, correction=None):
    """d var(a, axis, ddof) / d a: 2 (a - mean) / (n - ddof) on the elements taken, 0 elsewhere.
    ``correction`` is NumPy 2's name for ddof; a given ``mean`` is used as the mean."""
    ddof = ddof if correction is None else correction
    taken = np.broadcast_to(where, np.shape(a))
    if mean is None:
        mean = np.mean(a, axis=axis, keepdims=True, where=taken)
    n = np.sum(taken, axis=axis, keepdims=True)
    return np.where(taken, 2 * (a - mean) / (n - ddof), 0).astype(_float_dtype(a), copy=False)


def prod_grad(a, axis=None, where=True, initial=None):
    """d prod(a, axis) / d a: the product of the other factors of each element's reduction,
    formed without dividing (exact where ``a`` has zeros); 0 outside ``where``."""
    x = np.asarray(np.where(where, a, 1))
    axes = _axes(x, axis)
    order = [i for i in range(x.ndim) if i not in axes] + axes
    moved = np.transpose(x, order)
    n = int(np.prod([x.shape[i] for i in axes]))
    flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (n,))
    others = _exclusive_cumprod(flat) * _exclusive_cumprod(flat[..., ::-1])[..., ::-1]
    others = np.transpose(others.reshape(moved.shape), np.argsort(order))
    if initial is not None:
        others = others * initial
    return np.where(where, others, 0).astype(_float_dtype(a), copy=False)


def extremum_grad(a, ans, axis=None, keepdims=False, where=True):
    """d max(a, axis) / d a (and min, given min's ``ans``): the elements equal to the result share
    it evenly (ties split, as in autograd); 0 elsewhere; NaN where the result is NaN."""
    ans = expand_to(ans, a, axis, keepdims)
    hit = (a == ans) & where
    share = hit / np.maximum(np.sum(hit, axis=axis, keepdims=True), 1)
    return np.where(np.isnan(ans), np.nan, share).astype(_float_dtype(a), copy=False)


def ptp_grad(a, axis=None):
    """d ptp(a, axis) / d a: the max's share minus the min's share."""
    return (extremum_grad(a, np.max(a, axis=axis, keepdims=True), axis, True)
            - extremum_grad(a, np.min(a, axis=axis, keepdims=True), axis, True))


def rev_cumsum(g, axis=None):
    """Sums of ``g`` from each element to the end along ``axis`` (g is 1-D when axis is None):
    the cotangent of ``np.cumsum`` before reshaping."""
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def cumprod_vjp(g, a, axis=None):
    """Cotangent of ``a`` in ``np.cumprod(a, axis)``, formed without dividing (exact at zeros):
    the sum over j >= i of g[j] * prod(a[:j+1] without a[i]) is prod(a[:i]) * s[i], where
    s[i] = g[i] + a[i+1] * s[i+1]."""
    x = np.ravel(a) if axis is None else np.moveaxis(np.asarray(a), axis, -1)
    g = np.moveaxis(np.asarray(g), -1 if axis is None else axis, -1)
    s = np.empty(g.shape, np.result_type(g, x))
    acc = 0
    for i in range(x.shape[-1] - 1, -1, -1):
        acc = g[..., i] + (x[..., i + 1] * acc if i + 1 < x.shape[-1] else 0)
        s[..., i] = acc
    out = _exclusive_cumprod(x) * s
    return out.reshape(np.shape(a)) if axis is None else np.moveaxis(out, -1, axis)


def _weights_like(a, axis, weights):
    """The weights of ``np.average`` broadcast to the shape of ``a``, as NumPy lays them out."""
    if weights is None:
        return np.ones(np.shape(a))
    w = np.asarray(weights)
    if w.shape == np.shape(a):
        return w
    axes = _axes(a, axis)
    w = np.transpose(w, np.argsort(axes))
    return np.reshape(w, [n if i in axes else 1 for i, n in enumerate(np.shape(a))])


def average_grad(a, axis=None, weights=None):
    """d average(a, axis, weights) / d a: each element's weight over its reduction's total."""
    w = _weights_like(a, axis, weights)
    return np.broadcast_to(w / np.sum(w, axis=axis, keepdims=True), np.shape(a)).astype(
        _float_dtype(a), copy=False)


def average_weights_vjp(g, a, ans, axis=None, keepdims=False, weights=None):
    """Cotangent of ``weights`` in ``np.average``: d ans / d w = (a - ans) / sum(w), summed back
    to the shape and axis order of ``weights``."""
    w = _weights_like(a, axis, weights)
    gw = (expand_to(g, a, axis, keepdims) * (a - expand_to(ans, a, axis, keepdims))
          / np.sum(w, axis=axis, keepdims=True))
    if np.shape(weights) == np.shape(a):
        return gw.astype(_float_dtype(weights), copy=False)
    axes = _axes(a, axis)
    gw = np.sum(gw, axis=tuple(i for i in range(np.ndim(a)) if i not in axes))
    return np.transpose(gw, np.argsort(np.argsort(axes))).astype(_float_dtype(weights), copy=False)


# --- helpers for shape/products/linalg rules ---
# They live in runtime_linalg.py (shape ops, products, numpy.linalg); re-exported here.
from .runtime_linalg import *  # noqa: E402,F401,F403
from .runtime_linalg import __all__ as _linalg_all  # noqa: E402

__all__ += _linalg_all

# --- helpers for the numerical routines' rules (diff, interp, quantile, cov, eig, ...) ---
from .runtime_numeric import *  # noqa: E402,F401,F403
from .runtime_numeric import __all__ as _numeric_all  # noqa: E402

__all__ += _numeric_all

# --- helpers for the derivatives of helpers, builtins and containers ---
from .runtime_adjoint import *  # noqa: E402,F401,F403
from .runtime_adjoint import __all__ as _adjoint_all  # noqa: E402

__all__ += _adjoint_all

# --- helpers for batched code (vmap) ---
from .runtime_batch import *  # noqa: E402,F401,F403
from .runtime_batch import __all__ as _batch_all  # noqa: E402

__all__ += _batch_all

# --- derivatives of Python's iteration builtins ---
from .runtime_iter import *  # noqa: E402,F401,F403
from .runtime_iter import __all__ as _iter_all  # noqa: E402

__all__ += _iter_all
