"""Derivatives of shape ops: reshaping, transposing, joining, splitting, tiling, padding,
flipping, sorting and gathering.  Each moves or copies elements, so its vjp moves g back (and
sums the copies).

Templates: ``g`` is the output's cotangent, ``ans`` the output; see table.py.  The cotangent of
a sequence argument (np.concatenate's ``arrays``) is indexable, one cotangent per element (a
list, or an array for np.stack); that of a ``*args`` argument a tuple.  Templates name only
``np`` and runtime helpers (no builtins).

Limits: np.reshape/np.ravel with order "A" or "K" are differentiated as if the input were
C-contiguous ("K" raises); np.pad only in the modes pad_vjp lists.
"""
import numpy as np

from ... import runtime as rt
from .table import defjvp, defnondiff, defvjp

LIKE = "np.reshape(g, np.shape(a))"
JOIN = "arrays, /, axis=0, out=None, *, dtype=None, casting='same_kind'"
STACK = "tup, *, dtype=None, casting='same_kind'"
SPLIT = "ary, indices_or_sections, axis=0"
ARRAY = "a, dtype=None, order=None, *, device=None, copy=None, like=None"

# --- same elements, new shape or axis order ---
defvjp(np.reshape,      "a, /, shape=None, order='C', *, newshape=None, copy=None",
       "np.reshape(g, np.shape(a), order=order)")
defvjp(np.ravel,        "a, order='C'", "np.reshape(g, np.shape(a), order=order)")
defvjp(np.squeeze,      "a, axis=None", LIKE)
defvjp(np.expand_dims,  "a, axis", LIKE)
defvjp(np.transpose,    "a, axes=None", "np.transpose(g, inverse_axes(axes, np.ndim(a)))")
defvjp(np.swapaxes,     "a, axis1, axis2", "np.swapaxes(g, axis1, axis2)")
defvjp(np.moveaxis,     "a, source, destination", "np.moveaxis(g, destination, source)")
defvjp(np.rollaxis,     "a, axis, start=0", "rollaxis_vjp(g, a, axis, start)")
if hasattr(np, "matrix_transpose"):  # NumPy >= 2
    defvjp(np.matrix_transpose, "x, /", "np.matrix_transpose(g)")
for _fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    defvjp(_fn,         "*arys", "atleast_vjp(g, arys)")
defvjp(np.broadcast_to, "array, shape, subok=False", "unbroadcast(g, array)")
# The table binds positional arguments of a *args signature to the names after it, so
# np.broadcast_arrays lists no keyword-only parameters (subok= does not bind).
defvjp(np.broadcast_arrays, "*args", "unbroadcast_all(g, args)")

# --- joining and splitting ---
defvjp(np.concatenate,  JOIN, "concatenate_vjp(g, arrays, axis)")  # np.concat is np.concatenate
defvjp(np.stack,        "arrays, axis=0, out=None, *, dtype=None, casting='same_kind'",
       "np.moveaxis(g, axis, 0)")  # its [i] is the cotangent of arrays[i]
defvjp(np.hstack,       STACK,
       "concatenate_vjp(g, tup, 0 if np.ndim(tup[0]) <= 1 else 1, np.atleast_1d)")
defvjp(np.vstack,       STACK, "concatenate_vjp(g, tup, 0, np.atleast_2d)")
defvjp(np.dstack,       "tup", "concatenate_vjp(g, tup, 2, np.atleast_3d)")
defvjp(np.column_stack, "tup", "concatenate_vjp(g, tup, 1, as_column)")
defvjp(np.append,       "arr, values, axis=None",
       "concatenate_vjp(g, [arr, values], axis)[0]", "concatenate_vjp(g, [arr, values], axis)[1]")
defvjp(np.split,        SPLIT, "np.concatenate(dense(g, ans), axis)")
defvjp(np.array_split,  SPLIT, "np.concatenate(dense(g, ans), axis)")
defvjp(np.hsplit,       "ary, indices_or_sections",
       "np.concatenate(dense(g, ans), 1 if np.ndim(ary) > 1 else 0)")
defvjp(np.vsplit,       "ary, indices_or_sections", "np.concatenate(dense(g, ans), 0)")
defvjp(np.dsplit,       "ary, indices_or_sections", "np.concatenate(dense(g, ans), 2)")
if hasattr(np, "unstack"):  # NumPy >= 2.1
    defvjp(np.unstack,  "x, /, *, axis=0", "np.stack(dense(g, ans), axis)")

# --- copies: tiling, repeating, padding ---
defvjp(np.tile,         "A, reps", "tile_vjp(g, A, reps)")
defvjp(np.repeat,       "a, repeats, axis=None", "repeat_vjp(g, a, repeats, axis)")
defvjp(np.pad,          "array, pad_width, mode='constant', *, stat_length=None, "
                        "constant_values=0, end_values=0, reflect_type='even'",
       "pad_vjp(g, array, pad_width, mode, reflect_type)")

# --- reordering ---
defvjp(np.roll,         "a, shift, axis=None", "np.roll(g, np.negative(shift), axis)")
defvjp(np.flip,         "m, axis=None", "np.flip(g, axis)")
defvjp(np.fliplr,       "m", "np.fliplr(g)")
defvjp(np.flipud,       "m", "np.flipud(g)")
defvjp(np.rot90,        "m, k=1, axes=(0, 1)", "np.rot90(g, -k, axes)")
defvjp(np.sort,         "a, axis=-1, kind=None, order=None, *, stable=None",
       "np.reshape(sort_vjp(g, a, axis), np.shape(a))")
defvjp(np.partition,    "a, kth, axis=-1, kind='introselect', order=None",
       "take_along_axis_vjp(g, a, np.argpartition(a, kth, axis), axis)")

# --- gathering ---
defvjp(np.diagonal,     "a, offset=0, axis1=0, axis2=1", "diagonal_vjp(g, a, offset, axis1, axis2)")
defvjp(np.take,         "a, indices, axis=None, out=None, mode='raise'",
       "take_vjp(g, a, indices, axis, mode)")
defvjp(np.take_along_axis, "arr, indices, axis=-1", "take_along_axis_vjp(g, arr, indices, axis)")

# --- copies of the input as they are ---
defvjp(np.array,        "object, dtype=None, *, copy=True, order='K', subok=False, ndmin=0, "
                        "ndmax=0, like=None", "array_vjp(g, object)")
defvjp(np.asarray,      ARRAY, "array_vjp(g, a)")
defvjp(np.asanyarray,   ARRAY, "array_vjp(g, a)")
defvjp(np.ascontiguousarray, "a, dtype=None, *, like=None", "array_vjp(g, a)")
defvjp(np.asfortranarray, "a, dtype=None, *, like=None", "array_vjp(g, a)")
defvjp(np.copy,         "a, order='K', subok=False", "array_vjp(g, a)")
defvjp(np.real_if_close, "a, tol=100", "g")

# --- new arrays: only the fill value carries a derivative ---
defvjp(np.full,         "shape, fill_value, dtype=None, order='C', *, device=None, like=None",
       None, "unbroadcast(g, fill_value)")
defvjp(np.full_like,    "a, fill_value, dtype=None, order='K', subok=True, shape=None, *, "
                        "device=None", None, "unbroadcast(g, fill_value)")

defnondiff([np.zeros_like, np.ones_like, np.empty_like, np.shape, np.ndim, np.size,
            np.argpartition, rt.inverse_axes, rt.dot_axes])

# --- jvps (forward mode): each op is linear, so its jvp is the op applied to the tangent
# (``da`` for ``a``; a sequence argument's tangent is the sequence of its elements'). ---
RESHAPED = "np.reshape(da, np.shape(ans))"
defjvp(np.reshape,      "np.reshape(da, np.shape(ans), order=order)")
defjvp(np.ravel,        "np.ravel(da, order=order)")
defjvp(np.squeeze,      RESHAPED)
defjvp(np.expand_dims,  RESHAPED)
defjvp(np.transpose,    "np.transpose(da, axes)")
defjvp(np.swapaxes,     "np.swapaxes(da, axis1, axis2)")
defjvp(np.moveaxis,     "np.moveaxis(da, source, destination)")
defjvp(np.rollaxis,     "np.rollaxis(da, axis, start)")
if hasattr(np, "matrix_transpose"):
    defjvp(np.matrix_transpose, "np.matrix_transpose(dx)")
for _fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    defjvp(_fn,         "atleast_jvp(darys, ans)")
defjvp(np.broadcast_to, "tangent_like(darray, ans)")
defjvp(np.broadcast_arrays, "broadcast_arrays_jvp(dargs, ans)")
defjvp(np.concatenate,  "np.concatenate(darrays, axis)")
defjvp(np.stack,        "np.stack(darrays, axis)")
defjvp(np.hstack,       "np.hstack(dtup)")
defjvp(np.vstack,       "np.vstack(dtup)")
defjvp(np.dstack,       "np.dstack(dtup)")
defjvp(np.column_stack, "np.column_stack(dtup)")
defjvp(np.append,       "np.append(darr, zeros_like(values), axis)",
                        "np.append(zeros_like(arr), dvalues, axis)",
       joint="np.append(darr, dvalues, axis)")
defjvp(np.split,        "np.split(dary, indices_or_sections, axis)")
defjvp(np.array_split,  "np.array_split(dary, indices_or_sections, axis)")
defjvp(np.hsplit,       "np.hsplit(dary, indices_or_sections)")
defjvp(np.vsplit,       "np.vsplit(dary, indices_or_sections)")
defjvp(np.dsplit,       "np.dsplit(dary, indices_or_sections)")
if hasattr(np, "unstack"):
    defjvp(np.unstack,  "np.unstack(dx, axis=axis)")
defjvp(np.tile,         "np.tile(dA, reps)")
defjvp(np.repeat,       "np.repeat(da, repeats, axis)")
defjvp(np.pad,          "pad_jvp(darray, pad_width, mode, reflect_type)")
defjvp(np.roll,         "np.roll(da, shift, axis)")
defjvp(np.flip,         "np.flip(dm, axis)")
defjvp(np.fliplr,       "np.fliplr(dm)")
defjvp(np.flipud,       "np.flipud(dm)")
defjvp(np.rot90,        "np.rot90(dm, k, axes)")
defjvp(np.sort,         "sort_jvp(da, a, axis)")
defjvp(np.partition,    "np.take_along_axis(da, np.argpartition(a, kth, axis), axis)")
defjvp(np.diagonal,     "np.diagonal(da, offset, axis1, axis2)")
defjvp(np.take,         "np.take(da, indices, axis, mode=mode)")
defjvp(np.take_along_axis, "np.take_along_axis(darr, indices, axis)")
defjvp(np.array,        "np.array(dobject, dtype=dtype, ndmin=ndmin)")
defjvp(np.asarray,      "np.asarray(da, dtype=dtype)")
defjvp(np.asanyarray,   "np.asanyarray(da, dtype=dtype)")
defjvp(np.ascontiguousarray, "np.ascontiguousarray(da, dtype=dtype)")
defjvp(np.asfortranarray, "np.asfortranarray(da, dtype=dtype)")
defjvp(np.copy,         "np.copy(da)")
defjvp(np.real_if_close, "da")
defjvp(np.full,         None, "tangent_like(dfill_value, ans)")
defjvp(np.full_like,    None, "tangent_like(dfill_value, ans)")
