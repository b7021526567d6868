"""Helpers of the rules of shape ops (rules/shape.py): each moves or copies elements, so its
cotangent moves them back and sums the copies.  A ``*_vjp`` helper returns the cotangent of
one argument, shaped like that argument, from ``g`` (the cotangent of the output)."""
import numpy as np

from .base import unbroadcast

__all__ = ["rollaxis_vjp", "atleast_vjp", "unbroadcast_all", "as_column", "concatenate_vjp",
           "dense", "concatenate_join", "tile_vjp", "repeat_vjp", "pad_vjp", "take_vjp",
           "take_along_axis_vjp", "diagonal_vjp", "array_vjp", "sort_vjp", "inverse_axes"]


def inverse_axes(axes, n):
    """The permutation undoing ``np.transpose(a, axes)`` of a rank-``n`` array (None for
    None: the reversal undoes itself)."""
    return None if axes is None else tuple(np.argsort(np.mod(axes, n)))


def rollaxis_vjp(g, a, axis, start=0):
    """Cotangent of ``a`` in ``np.rollaxis(a, axis, start)``: the rolled axis moved back."""
    n = np.ndim(a)
    axis, start = axis % n, start + n if start < 0 else start
    return np.moveaxis(g, start - 1 if start > axis else start, axis)


def atleast_vjp(g, arys):
    """Cotangents of ``arys`` in ``np.atleast_1d(*arys)`` (and 2d, 3d): g (a tuple when there
    are several arrays) reshaped back."""
    gs = g if len(arys) > 1 else (g,)
    return tuple(np.reshape(gi, np.shape(a)) for gi, a in zip(gs, arys))


def unbroadcast_all(g, xs):
    """Cotangents of ``xs`` in ``np.broadcast_arrays(*xs)``: each part of g summed back to its
    array's shape (None, an unused part: zeros)."""
    return tuple(unbroadcast(gi, x) for gi, x in zip(dense(g, np.broadcast_arrays(*xs)), xs))


def as_column(a):
    """``a`` as ``np.column_stack`` lays out one array: 0-d and 1-D as a column."""
    return np.reshape(a, (-1, 1)) if np.ndim(a) < 2 else a


def concatenate_vjp(g, arrays, axis=0, promote=None):
    """Cotangents of ``arrays`` in ``np.concatenate([promote(a) for a in arrays], axis)``
    (np.vstack is ``promote=np.atleast_2d, axis=0``): g cut along ``axis`` at the arrays'
    lengths, each part reshaped to its array's shape (a list; an array when ``arrays`` is one).
    ``axis=None``: the arrays were flattened."""
    parts = [a if promote is None else promote(a) for a in arrays]
    if axis is None:
        g, axis, lengths = np.ravel(g), 0, [np.size(p) for p in parts]
    else:
        lengths = [np.shape(p)[axis] for p in parts]
    pieces = np.split(g, np.cumsum(lengths)[:-1], axis)
    out = [np.reshape(gi, np.shape(a)) for gi, a in zip(pieces, arrays)]
    return np.stack(out) if isinstance(arrays, np.ndarray) else out


def concatenate_join(parts, g, arrays, axis=0, promote=None):
    """The vjp of ``concatenate_vjp(g, arrays, axis, promote)`` in g (it is linear): the
    cotangents ``parts`` of its pieces joined back, in g's shape."""
    like = [a if promote is None else promote(a) for a in arrays]
    pieces = [np.zeros(np.shape(p)) if q is None else np.reshape(q, np.shape(p))
              for q, p in zip(parts, like)]
    if axis is None:
        return np.reshape(np.concatenate([np.ravel(p) for p in pieces]), np.shape(g))
    return np.concatenate(pieces, axis)


def dense(g, ans):
    """The cotangents ``g`` of the parts in ``ans`` (np.split's list, ...), with the None of an
    unused part replaced by zeros."""
    return [np.zeros(np.shape(p), np.result_type(p)) if gi is None else gi
            for gi, p in zip(g, ans)]


def tile_vjp(g, A, reps):
    """Cotangent of ``A`` in ``np.tile(A, reps)``: the sum of g's tiles."""
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    d = max(len(reps), np.ndim(A))
    reps = (1,) * (d - len(reps)) + reps
    shape = (1,) * (d - np.ndim(A)) + np.shape(A)
    tiles = np.reshape(g, [n for pair in zip(reps, shape) for n in pair])
    return np.reshape(tiles.sum(axis=tuple(range(0, 2 * d, 2))), np.shape(A))


def repeat_vjp(g, a, repeats, axis=None):
    """Cotangent of ``a`` in ``np.repeat(a, repeats, axis)``: each element gets the sum of the
    cotangents of its copies."""
    shape = (np.size(a),) if axis is None else np.shape(a)
    axis = 0 if axis is None else axis % len(shape)
    n = shape[axis]
    g = np.moveaxis(np.asarray(g), axis, 0)
    if np.ndim(repeats) == 0 or np.size(repeats) == 1:
        out = g.reshape((n, -1) + g.shape[1:]).sum(axis=1)
    else:
        out = np.zeros((n,) + g.shape[1:], g.dtype)
        np.add.at(out, np.repeat(np.arange(n), repeats), g)
    return np.reshape(np.moveaxis(out, 0, axis), np.shape(a))


def pad_vjp(g, array, pad_width, mode="constant", reflect_type="even"):
    """Cotangent of ``array`` in ``np.pad``.  Modes "constant" and "empty": the middle of g.
    Modes "edge", "wrap", and "reflect"/"symmetric" with reflect_type "even": every padded
    element copies one element of ``array``, found by padding the array of indices; g is summed
    onto the elements copied.  Other modes (statistics, "linear_ramp", "odd") are not covered."""
    shape = np.shape(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (len(shape), 2))
    if mode in ("constant", "empty"):
        return g[tuple(slice(b, b + n) for (b, _), n in zip(widths, shape))]
    if mode in ("edge", "wrap") or (mode in ("reflect", "symmetric") and reflect_type == "even"):
        source = np.pad(np.arange(np.size(array)).reshape(shape), pad_width, mode=mode)
        out = np.bincount(source.ravel(), np.ravel(g), minlength=np.size(array))
        return out.reshape(shape).astype(np.result_type(g), copy=False)
    raise NotImplementedError(f"strop has no derivative for np.pad with mode={repr(mode)}"
                              + (f", reflect_type={repr(reflect_type)}" if mode in (
                                  "reflect", "symmetric") else "")
                              + "; use mode 'constant', 'edge', 'wrap', 'reflect' or 'symmetric'")


def take_vjp(g, a, indices, axis=None, mode="raise"):
    """Cotangent of ``a`` in ``np.take(a, indices, axis, mode=mode)``: g added at the elements
    taken (an element taken twice gets both)."""
    shape = np.shape(a)
    n = np.size(a) if axis is None else shape[axis]
    idx = np.asarray(indices)
    if mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    g = np.asarray(g)
    out = np.zeros((n,) if axis is None else shape, g.dtype)
    np.add.at(out, idx if axis is None else (slice(None),) * (axis % len(shape)) + (idx,), g)
    return np.reshape(out, shape)


def take_along_axis_vjp(g, arr, indices, axis=-1):
    """Cotangent of ``arr`` in ``np.take_along_axis(arr, indices, axis)``: g added back where
    each element was taken from.  With np.argsort or np.argpartition as ``indices``, the
    cotangent of np.sort and np.partition."""
    if axis is None:
        return take_vjp(g, arr, indices)
    shape, g = np.shape(arr), np.asarray(g)
    index = list(np.ogrid[tuple(slice(m) for m in g.shape)])
    for i, (m, n) in enumerate(zip(g.shape, shape)):
        if n == 1 and m != 1:  # arr was broadcast along this axis
            index[i] = np.zeros_like(index[i])
    index[axis % len(shape)] = indices
    out = np.zeros(shape, g.dtype)
    np.add.at(out, tuple(index), g)
    return out


def diagonal_vjp(g, a, offset=0, axis1=0, axis2=1):
    """Cotangent of ``a`` in ``np.diagonal(a, offset, axis1, axis2)``: zeros with g written on
    that diagonal (g's last axis runs along it; a last axis of 1 is broadcast, as np.trace's
    ``g[..., None]``)."""
    g = np.asarray(g)
    out = np.zeros(np.shape(a), np.result_type(g, 1.0))
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    row, col = max(-offset, 0), max(offset, 0)
    k = max(0, min(view.shape[-2] - row, view.shape[-1] - col))
    i = np.arange(k)
    view[..., i + row, i + col] = g
    return out


def array_vjp(g, object):
    """Cotangent of ``object`` in ``np.array(object)`` (np.asarray, np.copy, ...): g shaped like
    an array, or split up for a (nested) list or tuple of arrays and numbers."""
    if isinstance(object, (list, tuple)):
        g = np.reshape(g, np.shape(object))  # undoes ndmin
        return type(object)(_array_parts(gi, o) for gi, o in zip(g, object))
    return _array_parts(g, object)


def _array_parts(g, object):
    if isinstance(object, (list, tuple)):
        return type(object)(_array_parts(gi, o) for gi, o in zip(g, object))
    out = np.reshape(g, np.shape(object))
    return out if isinstance(object, np.ndarray) else out[()]


def sort_vjp(g, x, axis=-1):
    """Cotangent of ``np.sort(x, axis)``: g sent back through the sorting permutation."""
    order = np.argsort(x, axis=axis)
    out = np.zeros_like(np.asarray(g))
    np.put_along_axis(out, order, g, axis=axis)
    return out
