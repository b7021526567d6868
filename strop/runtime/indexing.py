"""Helpers of indexing: the cotangent of ``x[idx]``, functional item assignment, and
``.at[idx]`` updates with JAX's out-of-bounds modes (and their in-place forms, which compiled
code uses where the old value is dead), with their derivatives."""
import numpy as np

from .base import _rebuild, add, unbroadcast, zeros_like

__all__ = ["getitem_vjp", "add_at_index", "add_at_index_inplace", "setitem", "setitem_vjp", "setitem_inplace",
           "at_get", "at_set", "at_add", "at_multiply", "at_min", "at_max", "at_set_inplace",
           "at_add_inplace", "at_multiply_inplace", "at_min_inplace", "at_max_inplace",
           "at_get_vjp", "at_value_vjp", "at_multiply_value_vjp", "put_along_axis", "copyto"]


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


def add_at_index(acc, g, x, idx):
    """``add(acc, getitem_vjp(g, x, idx))``: a cotangent of ``x[idx]`` added into ``acc``."""
    return add(acc, getitem_vjp(g, x, idx))


def add_at_index_inplace(acc, g, x, idx):
    """add_at_index written into ``acc`` itself, which compiled code does when no other name
    sees ``acc``'s value (codegen/inplace.py): one pass over the part indexed, not three over
    the whole array.  As Python it is add_at_index."""
    return add_at_index(acc, g, x, idx)


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


def at_get_vjp(g, x, idx, mode=None):
    """Cotangent of ``x`` in ``at_get(x, idx, mode)``: g added back where it was read;
    clamped reads accumulate at the clamped position, filled reads contribute nothing."""
    return at_add(np.zeros(np.shape(x), np.result_type(x, np.float32) if not np.issubdtype(
        np.result_type(x), np.inexact) else np.result_type(x)), idx, g,
        mode="clip" if mode in (None, "clip", "promise_in_bounds") else None)


def at_value_vjp(g, idx, v, mode=None):
    """Cotangent of the values ``v`` in ``at_set/at_add(x, idx, v, mode)``: what reached x;
    dropped updates get zero."""
    read = at_get(g, idx, mode="clip") if mode == "clip" else \
        at_get(g, idx, mode="fill", fill_value=0)
    return unbroadcast(read, v)


def at_multiply_value_vjp(g, x, idx, v, mode=None):
    """Cotangent of the factors ``v`` in ``at_multiply(x, idx, v, mode)``: each factor's
    cotangent is g times x times the other factors that hit the same element."""
    x = np.asarray(x)
    pos = scatter_positions(x.shape, idx, mode)
    vb = np.broadcast_to(np.asarray(v, np.result_type(x, v)), pos.shape)
    flat_g, flat_x = np.asarray(g).reshape(-1), x.reshape(-1)
    out = np.zeros(pos.shape, np.result_type(g, x, v))
    for k in np.ndindex(pos.shape):
        p = pos[k]
        if p < 0:
            continue
        others = np.prod([vb[j] for j in np.ndindex(pos.shape) if pos[j] == p and j != k])
        out[k] = flat_g[p] * flat_x[p] * others
    return unbroadcast(out, v)


def put_along_axis(arr, indices, values, axis):
    """Functional ``np.put_along_axis(arr, indices, values, axis)``."""
    out = np.array(arr, copy=True)
    np.put_along_axis(out, indices, values, axis)
    return out


def copyto(dst, src):
    """Functional ``np.copyto(dst, src)``: src broadcast into dst's shape and dtype."""
    return np.broadcast_to(np.asarray(src, dtype=np.result_type(dst)), np.shape(dst)).copy()
