"""Helpers that generated code and rule templates call.

Every helper is a plain function of its arguments; containers (list, tuple, dict, None) are
handled as pytrees so that adjoints of containers are containers of adjoints.
"""
import numpy as np

__all__ = [
    "unbroadcast", "zeros_like", "ones_like", "add", "scale", "getitem_vjp", "setitem",
    "setitem_vjp", "expand_to", "astype_like", "stack", "push", "pop", "peek", "append",
    "at_get", "at_set", "at_add", "at_multiply", "at_min", "at_max", "index_arg", "items_of",
    "balanced_eq", "sort_vjp", "len_range", "matmul_vjp_x", "matmul_vjp_y",
]

_CONTAINERS = (list, tuple, dict)


def _is_float(x):
    return isinstance(x, float) or (isinstance(x, np.generic) and np.issubdtype(x.dtype, np.inexact))


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
    dtype = np.result_type(x) if np.issubdtype(np.result_type(x), np.inexact) else g.dtype
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
    dtype = np.result_type(x)
    if isinstance(x, np.ndarray):
        return np.asarray(g).astype(dtype, copy=False)
    return dtype.type(g) if np.ndim(g) == 0 else np.asarray(g, dtype)


def zeros_like(x):
    if isinstance(x, _CONTAINERS):
        return _map(zeros_like, x)
    if x is None or isinstance(x, (str, bool, np.bool_)):
        return None
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64)
    if _is_float(x):
        return type(x)(0)
    if isinstance(x, (int, np.integer)):
        return 0.0
    raise TypeError(f"strop cannot make a zero cotangent for a value of type {type(x).__name__}")


def ones_like(x):
    return np.ones_like(x) if isinstance(x, np.ndarray) else type(x)(1)


def _map(fn, *trees):
    first = trees[0]
    if isinstance(first, dict):
        return {k: fn(*(t[k] for t in trees)) for k in first}
    return type(first)(fn(*parts) for parts in zip(*trees))


def add(a, b):
    """Accumulate two cotangents; ``None`` is zero; containers add leaf by leaf."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, _CONTAINERS):
        return _map(add, a, b)
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
        return type(x)(out)
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


def items_of(d):
    """``d.items()`` as an indexable list (for loops over dicts)."""
    return list(d.items())


def len_range(start, stop, step):
    return len(range(start, stop, step))


# Tapes of the reverse sweep: per-variable stacks.  push/pop mutate the stack in place; a stack
# is only ever used linearly, so the generated code treats them as values.
def stack():
    return []


def push(s, v):
    s.append(v)


def pop(s):
    return s.pop()


def peek(s):
    return s[-1]


# --- `.at[idx]` updates with JAX's out-of-bounds modes -----------------------------------------
# get: "clip" (default) clamps, "fill" returns fill_value; updates: "drop" (default) skips,
# "clip" clamps.  "promise_in_bounds" behaves as the default.

def index_arg(idx):
    return idx


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
        if isinstance(c, slice):
            start, stop, step = c.indices(n)
            out.append(slice(start, stop if stop >= 0 else None, step))
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
    return np.pad(np.asarray(x), [(0, 1)] * np.ndim(x), constant_values=fill)


def _default_fill(dtype):
    if np.issubdtype(dtype, np.inexact):
        return np.nan
    if dtype == bool:
        return True
    info = np.iinfo(dtype)
    return info.min if np.issubdtype(dtype, np.signedinteger) else info.max


def at_get(x, idx, mode=None, fill_value=None):
    x = np.asarray(x)
    if mode == "fill":
        fill = _default_fill(x.dtype) if fill_value is None else fill_value
        return _padded(x, fill)[_mapped(x.shape, idx, "pad")]
    return x[_mapped(x.shape, idx, "clip")]


def _scatter(x, idx, v, mode, combine):
    x = np.asarray(x)
    out = x.copy()
    if mode == "clip":
        pos = np.arange(x.size).reshape(x.shape)[_mapped(x.shape, idx, "clip")]
    else:
        pos = _padded(np.arange(x.size).reshape(x.shape), -1)[_mapped(x.shape, idx, "pad")]
    pos = np.asarray(pos)
    v = np.broadcast_to(np.asarray(v, dtype=np.result_type(x, v)), pos.shape)
    keep = pos >= 0
    combine(out.reshape(-1), pos[keep], v[keep].astype(x.dtype, copy=False))
    return out


def _set(flat, pos, v):
    flat[pos] = v


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
