"""strop.lax's dynamic slices called on values: start indices computed at run time, negative
ones counted from the end and every start clamped so that the slice fits, as in JAX.  Inside a
transformed function each becomes one ``slice_in_dim`` / ``update_slice_in_dim`` per axis
(transformer/lax_lower.py), helpers with their own derivative and batching rules."""
import numpy as np

from ..runtime import lax as rl
from .control import lowered
from .errors import lax_error

__all__ = ["dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim",
           "dynamic_update_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_index_in_dim"]


@lowered
def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """``operand[s0:s0 + n0, s1:s1 + n1, ...]``, each start as JAX clamps it."""
    x = np.asarray(operand)
    starts, sizes = _starts(start_indices, x.shape), tuple(int(n) for n in slice_sizes)
    if len(sizes) != x.ndim or any(not 0 <= n <= d for n, d in zip(sizes, x.shape)):
        raise lax_error(TypeError, f"slice slice_sizes must be less than or equal to operand "
                                   f"shape, got slice_sizes {sizes} for operand shape "
                                   f"{x.shape}.")
    index = tuple(slice(s, s + n) for s, n in zip(
        _clamped(starts, x.shape, sizes, allow_negative_indices), sizes))
    return x[index].copy()


@lowered
def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """A copy of ``operand`` with ``update`` written at the (clamped) starts."""
    x, u = np.asarray(operand), np.asarray(update)
    starts = _starts(start_indices, x.shape)
    if u.ndim != x.ndim:
        raise lax_error(TypeError, f"dynamic_update_slice update must have the same rank as "
                                   f"operand, got update shape {u.shape} for operand shape "
                                   f"{x.shape}.")
    if any(n > d for n, d in zip(u.shape, x.shape)):
        raise lax_error(TypeError, f"dynamic_update_slice update shape must be smaller than "
                                   f"operand shape, got update shape {u.shape} for operand "
                                   f"shape {x.shape}.")
    if rl.canonical_dtype(x.dtype) != rl.canonical_dtype(u.dtype):
        raise lax_error(TypeError, f"dynamic_update_slice update and operand dtypes must "
                                   f"match, got {rl.type_text(u)} and {rl.type_text(x)}.")
    index = tuple(slice(s, s + n) for s, n in zip(
        _clamped(starts, x.shape, u.shape, allow_negative_indices), u.shape))
    out = x.copy()
    out[index] = u
    return out


@lowered
def dynamic_slice_in_dim(operand, start_index, slice_size=1, axis=0, *,
                         allow_negative_indices=True):
    """dynamic_slice along one axis (the others whole)."""
    return rl.slice_in_dim(operand, start_index, slice_size, axis, allow_negative_indices)


@lowered
def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    """The slice of size 1 at ``index`` along ``axis``, that axis dropped unless ``keepdims``."""
    out = rl.slice_in_dim(operand, index, 1, axis, True)
    return out if keepdims else np.squeeze(out, axis)


@lowered
def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    """dynamic_update_slice along one axis."""
    return rl.update_slice_in_dim(operand, update, start_index, axis, allow_negative_indices)


@lowered
def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """``update`` (with or without the axis of size 1) written at ``index`` along ``axis``."""
    row = rl.slice_in_dim(operand, index, 1, axis, allow_negative_indices)
    return rl.update_slice_in_dim(operand, np.reshape(update, row.shape), index, axis,
                                  allow_negative_indices)


def _starts(start_indices, shape):
    starts = [int(s) for s in np.ravel(np.asarray(start_indices))]
    if len(starts) != len(shape):
        raise lax_error(ValueError, f"Length of slice indices must match number of operand "
                                    f"dimensions ({len(starts)} vs {tuple(shape)})")
    return starts


def _clamped(starts, shape, sizes, negative):
    return [rl.start_in_dim(s, d, n, negative) for s, d, n in zip(starts, shape, sizes)]
