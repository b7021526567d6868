"""Derivatives of Python's builtins, of containers, of array methods and attributes, and of
the runtime helpers that generated code calls (so that generated code differentiates again)."""
import builtins as py

import numpy as np

from ... import runtime as rt
from .table import defjvp, defnondiff, defvjp

# builtins
defvjp(float,   "x=0.0, /", "g")
defvjp(py.sum,  "iterable, /, start=0", "sum_vjp(g, iterable)", "unbroadcast(g, start)")
defvjp(py.max,  "*args", "minmax_vjp(g, args, ans)")
defvjp(py.min,  "*args", "minmax_vjp(g, args, ans)")
defvjp(pow,     "x, y, /", "unbroadcast(g * y * x ** np.where(y, y - 1, 1.0), x)",
                           "unbroadcast(g * np.log(np.where(x, x, 1.0)) * ans, y)")
defvjp(list,    "x=(), /", "like(g, x)")
defvjp(tuple,   "x=(), /", "like(g, x)")
defnondiff([len, range, int, bool, str, isinstance, type, print, round, divmod, hash, id,
            repr, callable, any, all])
# iteration: normalize makes zip/enumerate/reversed lists (list(zip(...))), so that their
# inputs are still there for the adjoint; a cotangent of a sequence is a list of cotangents
defvjp(zip,       "*iterables", "zip_vjp(g, iterables)")
defvjp(enumerate, "iterable, start=0", "enumerate_vjp(g, iterable)")
defvjp(reversed,  "seq, /", "reversed_vjp(g, seq)")
defvjp(sorted,    "iterable, /, *, key=None, reverse=False",
                  "sorted_vjp(g, iterable, key, reverse)")
defvjp(dict,      "iterable=(), /", "dict_vjp(g, iterable)")

# NumPy's constructors and dtype queries: what they make carries no derivative
defnondiff([np.zeros, np.ones, np.empty, np.arange, np.eye, np.identity, np.result_type,
            np.promote_types, np.dtype, np.iinfo, np.finfo, np.can_cast, np.issubdtype,
            np.indices, np.ndindex, np.tri, np.ravel_multi_index, np.unravel_index])

# methods that stay methods, and attributes
defvjp(("method", "copy"),   "self, /, order='C'", "g")
defvjp(("method", "astype"), "self, dtype, /, order='K', casting='unsafe', subok=True, "
                             "copy=True", "astype_like(g, self)")
defvjp(("method", "item"),   "self, *args", "getitem_vjp(g, self, args if args else ())")
defvjp(("attr", "T"),        "self", "np.transpose(g)")
defvjp(("attr", "real"),     "self", "g")
defvjp(("attr", "mT"),       "self", "np.swapaxes(g, -1, -2)")
defnondiff([("attr", a) for a in ("shape", "ndim", "dtype", "size", "imag", "itemsize",
                                  "nbytes", "strides")]
           + [("method", m) for m in ("keys", "index", "count", "tolist_shape")])
defvjp(("method", "get"),    "self, key, default=None", "get_vjp(g, self, key, default)", None,
                             "get_default_vjp(g, self, key)")
defvjp(("method", "values"), "self", "dict(zip(self, g))")
defvjp(("method", "items"),  "self", "items_vjp(g, self)")
for _np_float in (np.float64, np.float32, np.float16, np.double, np.single):
    defvjp(_np_float,        "x=0, /", "astype_like(g, x)")

# runtime helpers: containers, functional updates, and the adjoint helpers themselves
defvjp(rt.setitem,      "x, idx, v", "setitem_vjp(g, idx)", None, "item_vjp(g, idx, v)")
defvjp(rt.append,       "lst, v", "g[:-1]", "g[-1]")
# each lane's product (vmap's, for lanes whose ranks were not known where it was made): each
# lane's matmul cotangent, summed over the lanes where an operand is not batched
defvjp(rt.matmul_lanes, "a, b, a_batched, b_batched",
       "unbroadcast(matmul_vjp_x_lanes(g, a, b, a_batched, b_batched), a)",
       "unbroadcast(matmul_vjp_y_lanes(g, a, b, a_batched, b_batched), b)", None, None)
defjvp(rt.matmul_lanes, "matmul_lanes(da, b, a_batched, b_batched)",
       "matmul_lanes(a, db, a_batched, b_batched)")
# vmap's cotangent summed down to a lane's shape, and a lane's transpose: linear, so grad of
# vmap(grad(f)) differentiates them by their transposes (rather than inlining their source)
defvjp(rt.unbroadcast_lanes, "v, x, v_batched, x_batched",
       "broadcast_like_lanes(g, v, True, True) if v_batched else broadcast_like(g, v)")
defjvp(rt.unbroadcast_lanes, "unbroadcast_lanes(dv, x, v_batched, x_batched)")
# ... the products' cotangents in each lane (bilinear: the other factor's product again) ...
defvjp(rt.matmul_vjp_x_lanes, "v, x, y, x_batched, y_batched",
       "unbroadcast(matmul_as_x_lanes(g, x, y, True, x_batched, y_batched), v)", None,
       "unbroadcast(matmul_vjp_y_lanes(v, g, y, True, y_batched), y)")
defjvp(rt.matmul_vjp_x_lanes, "matmul_vjp_x_lanes(dv, x, y, x_batched, y_batched)", None,
       "matmul_vjp_x_lanes(v, x, dy, x_batched, y_batched)")
defvjp(rt.matmul_vjp_y_lanes, "v, x, y, x_batched, y_batched",
       "unbroadcast(matmul_as_y_lanes(x, g, y, x_batched, True, y_batched), v)",
       "unbroadcast(matmul_vjp_x_lanes(v, x, g, x_batched, True), x)")
defjvp(rt.matmul_vjp_y_lanes, "matmul_vjp_y_lanes(dv, x, y, x_batched, y_batched)",
       "matmul_vjp_y_lanes(v, dx, y, x_batched, y_batched)")
# ... a cotangent broadcast to a lane's shape, put at an index of each lane, lanes aligned to
# a rank: linear in the cotangent
defvjp(rt.broadcast_like_lanes, "w, v, w_batched, v_batched",
       "unbroadcast(unbroadcast_lanes(g, w, True, w_batched), w)")
defjvp(rt.broadcast_like_lanes, "broadcast_like_lanes(dw, v, w_batched, v_batched)")
defvjp(rt.getitem_vjp_lanes, "v, x, idx", "unbroadcast_lanes(g[lane_index(idx)], v, True, True)")
defjvp(rt.getitem_vjp_lanes, "getitem_vjp_lanes(dv, x, idx)")
defvjp(rt.align_lanes,  "x, rank", "unalign(g, x)")
defjvp(rt.align_lanes,  "align_lanes(dx, rank)")
defnondiff([rt.lane_index])
defvjp(rt.array_lanes,  "items, dtype=None", "array_lanes_vjp(g, items)")
defjvp(rt.array_lanes,  "array_lanes(ditems, dtype)")
defvjp(rt.expand_to_lanes, "v, x, axis=None, keepdims=False",
       "unbroadcast_lanes(g, v, True, True) if axis is None or keepdims else "
       "np.sum(g, axis=lane_axis(axis, g))")
defjvp(rt.expand_to_lanes, "expand_to_lanes(dv, x, axis, keepdims)")
defvjp(rt.transpose_lanes, "x, axes=None", "transpose_lanes(g, inverse_axes(axes, np.ndim(x) - 1))")
defjvp(rt.transpose_lanes, "transpose_lanes(dx, axes)")
defvjp(rt.tree_vdot,    "a, b", "scale(b, g)", "scale(a, g)")
defvjp(rt.insert,       "lst, i, v", "pop_item(g, i)", None, "g[i]")
defvjp(rt.pop_item,     "obj, key=-1", "pop_item_vjp(g, obj, key)")
defvjp(rt.item_of,      "obj, key=-1", "getitem_vjp(g, obj, key)")
defvjp(rt.getattr_vjp,  "v, obj, name", "getattr(g, name)")   # (linear in v: jvp(grad(f)))
defjvp(rt.getattr_vjp,  "getattr_vjp(dv, obj, name)")
defvjp(rt.sort_like,    "x", "sort_vjp(g, x)")
defvjp(rt.extend,       "lst, values", "g[:len(lst)]", "like(g[len(lst):], values)")
defvjp(rt.update,       "d, other", "update_vjp(g, d, other, 0)", "update_vjp(g, d, other, 1)")
defvjp(rt.plus,         "a, b", "plus_vjp(g, a, b, 0)", "plus_vjp(g, a, b, 1)")
defvjp(rt.times,        "a, b", "times_vjp(g, a, b, 0)", "times_vjp(g, a, b, 1)")
# ... and of their vjps (linear in v; a product's in the other factor too)
defvjp(rt.plus_vjp,     "v, a, b, which", "plus(g, zeros_like(b)) if which == 0 else plus(zeros_like(a), g)")
defvjp(rt.times_vjp,    "v, a, b, which", "times(g, b) if which == 0 else times(a, g)",
                        "plus_vjp(times(g, v), a, b, 0) if which == 1 else zeros_like(a)",
                        "plus_vjp(times(g, v), a, b, 1) if which == 0 else zeros_like(b)")
defvjp(rt.put_along_axis, "arr, indices, values, axis",
                        "put_along_axis(g, indices, 0.0, axis)", None,
                        "unbroadcast(np.take_along_axis(g, indices, axis), values)")
defvjp(rt.copyto,       "dst, src", "0.0 * g", "unbroadcast(g, src)")
defvjp(rt.array_vjp,    "v, object", "np.asarray(g, dtype=float)")
defvjp(rt.iterable,     "x", "iterable_vjp(g, x)")
defvjp(rt.iterable_vjp, "v, x", "iterable_vjp(g, x)")
defvjp(rt.like,         "v, x", "like(g, v)")
defvjp(rt.at_set,       "x, idx, v, mode=None", "at_set(g, idx, 0.0, mode)", None,
                        "at_value_vjp(g, idx, v, mode)")
defvjp(rt.at_add,       "x, idx, v, mode=None", "g", None, "at_value_vjp(g, idx, v, mode)")
defvjp(rt.at_multiply,  "x, idx, v, mode=None", "at_multiply(g, idx, v, mode)", None,
                        "at_multiply_value_vjp(g, x, idx, v, mode)")
defvjp(rt.at_min,       "x, idx, v, mode=None", "g * (x == ans)", None,
                        "at_value_vjp(g * (x != ans), idx, v, mode)")
defvjp(rt.at_max,       "x, idx, v, mode=None", "g * (x == ans)", None,
                        "at_value_vjp(g * (x != ans), idx, v, mode)")
defvjp(rt.at_get,       "x, idx, mode=None, fill_value=None", "at_get_vjp(g, x, idx, mode)")
defvjp(rt.add,          "a, b", "g", "g")
defvjp(rt.scale,        "a, s", "scale(g, s)")
defvjp(rt.unbroadcast,  "v, x", "broadcast_like(g, v)")
defvjp(rt.broadcast_like, "v, x", "unbroadcast(g, v)")
defvjp(rt.align_to,     "x, other, other_batched", "unalign(g, x)")
defvjp(rt.unalign,      "v, x", "align_to(g, v, True)")
defvjp(rt.expand_to,    "v, x, axis=None, keepdims=False",
                        "unbroadcast(np.sum(g, axis=axis, keepdims=keepdims), v)")
defvjp(rt.astype_like,  "v, x", "astype_like(g, v)")
defvjp(rt.narrow,       "x", "astype_like(g, x)")
defvjp(rt.getitem_vjp,  "v, x, idx", "g[idx]")
defvjp(rt.setitem_vjp,  "v, idx", "setitem_vjp(g, idx)")
defvjp(rt.item_vjp,     "v, idx, x", "setitem(zeros_like(v), idx, g)")
defvjp(rt.sort_vjp,     "v, x, axis=-1", "np.take_along_axis(g, np.argsort(x, axis=axis), "
                                         "axis=axis)")
defvjp(rt.matmul,       "x, y", "unbroadcast(matmul_vjp_x(g, x, y), x)",
                        "unbroadcast(matmul_vjp_y(g, x, y), y)")
defvjp(rt.matmul_vjp_x, "v, x, y", "unbroadcast(matmul_as_x(g, x, y), v)", None,
                        "unbroadcast(matmul_x_vjp_y(v, g, x, y), y)")
defvjp(rt.matmul_vjp_y, "v, x, y", "unbroadcast(matmul_as_y(x, g, y), v)",
                        "unbroadcast(matmul_y_vjp_x(v, g, x, y), x)")
# the adjoints of linear ops are linear: each one's vjp is the op itself, and its jvp is itself
defvjp(rt.diagonal_vjp, "v, a, offset=0, axis1=0, axis2=1",
                        "unbroadcast(np.diagonal(g, offset, axis1, axis2), v)")
defvjp(rt.pad_vjp,      "v, array, pad_width, mode='constant', reflect_type='even'",
                        "pad_jvp(g, pad_width, mode, reflect_type)")
defvjp(rt.pad_jvp,      "v, pad_width, mode='constant', reflect_type='even'",
                        "pad_vjp(g, v, pad_width, mode, reflect_type)")
defvjp(rt.take_vjp,     "v, a, indices, axis=None, mode='raise'",
                        "np.take(g, indices, axis, mode=mode)")
defvjp(rt.take_along_axis_vjp, "v, arr, indices, axis=-1",
                        "unbroadcast(np.take_along_axis(g, indices, axis), v)")
defvjp(rt.repeat_vjp,   "v, a, repeats, axis=None", "np.repeat(g, repeats, axis)")
defvjp(rt.tile_vjp,     "v, A, reps", "np.tile(g, reps)")
defvjp(rt.concatenate_vjp, "v, arrays, axis=0, promote=None",
                        "concatenate_join(g, v, arrays, axis, promote)")
# einsum_vjp is linear in v and in each array: its vjp in v is einsum_jvp, in the arrays
# einsum_cross (and einsum_jvp's are einsum_vjp and einsum_cross)
defvjp(rt.einsum_vjp,   "v, subscripts, operands, first=False",
                        "einsum_jvp(subscripts, operands, None if first else g, g if first else None)",
                        "einsum_cross(v, subscripts, operands, g if first else None, "
                        "None if first else g, True)",
                        "einsum_cross(v, subscripts, operands, g if first else None, "
                        "None if first else g)")
defvjp(rt.off_diagonal_inverse, "d", "-g * ans ** 2")
defvjp(rt.einsum_jvp,   "subscripts, operands, tangents, tangent0=None",
                        "einsum_cross(g, subscripts, operands, tangent0, tangents, True)",
                        "einsum_cross(g, subscripts, operands, tangent0, tangents)",
                        "einsum_vjp(g, subscripts, operands)",
                        "einsum_vjp(g, subscripts, operands, True)")
defvjp(rt.sum_vjp,      "g_, iterable", "sum(g)")
# tapes are differentiated by reverse.py itself (rev_tape)
defnondiff([rt.zeros_like, rt.ones_like, rt.seed_grad, rt.stack, rt.tape_array, rt.push,
            rt.pop, rt.balanced_eq, rt.lane_axes, rt.lane_axis,   # (axes: integers)
            rt.first_trip, rt.seed_grad_lanes])   # (checks: peel.py, vmap of grad)

# --- jvps (forward mode): ``dx`` is the tangent of ``x``; a functional update's ``joint``
# template updates the tangent of the container with that of the value. ---
defjvp(float,   "float(dx)")
defjvp(py.sum,  "sum(diterable)", "tangent_like(dstart, ans)")
defjvp(rt.tree_vdot, "tree_vdot(da, b)", "tree_vdot(a, db)")
defjvp(py.max,  "minmax_jvp(dargs, args, ans)")
defjvp(py.min,  "minmax_jvp(dargs, args, ans)")
defjvp(pow,     "dx * y * x ** np.where(y, y - 1, 1.0)", "dy * np.log(np.where(x, x, 1.0)) * ans")
defjvp(list,    "list(dx)")
defjvp(zip,       "zip(*diterables)")
defjvp(enumerate, "enumerate_jvp(diterable)")
defjvp(reversed,  "reversed(dseq)")
defjvp(sorted,    "sorted_jvp(diterable, iterable, key, reverse)")
defjvp(dict,      "dict_jvp(diterable, iterable)")
defjvp(tuple,   "tuple(dx)")
defjvp(("method", "copy"),   "dself.copy()")
defjvp(("method", "astype"), "astype_tangent(dself, ans)")
defjvp(("method", "item"),   "item_tangent(dself, args)")
defjvp(("attr", "T"),        "np.transpose(dself)")
defjvp(("attr", "real"),     "dself")
defjvp(("attr", "mT"),       "np.swapaxes(dself, -1, -2)")
defjvp(("method", "get"),    "dself[key] if key in self else zeros_like(ans)", None,
                             "zeros_like(ans) if key in self else ddefault")
defjvp(("method", "values"), "dself.values()")
defjvp(("method", "items"),  "dself.items()")
for _np_float in (np.float64, np.float32, np.float16, np.double, np.single):
    defjvp(_np_float,        f"np.{_np_float.__name__}(dx)")

defjvp(rt.setitem,      "setitem_vjp(dx, idx)", None, "setitem(zeros_like(x), idx, dv)",
       joint="setitem(dx, idx, dv)")
defjvp(rt.append,       "append(dlst, zeros_like(v))", "append(zeros_like(lst), dv)",
       joint="append(dlst, dv)")
defjvp(rt.insert,       "insert(dlst, i, zeros_like(v))", None, "insert(zeros_like(lst), i, dv)",
       joint="insert(dlst, i, dv)")
defjvp(rt.pop_item,     "pop_item(dobj, key)")
defjvp(rt.item_of,      "item_of(dobj, key)")
defjvp(rt.sort_like,    "sort_like_jvp(dx, x)")
defjvp(rt.extend,       "extend(dlst, zeros_like(values))", "extend(zeros_like(lst), dvalues)",
       joint="extend(dlst, dvalues)")
defjvp(rt.update,       "update(dd, zeros_like(other))", "update(zeros_like(d), dother)",
       joint="update(dd, dother)")
defjvp(rt.plus,         "plus(da, zeros_like(b))", "plus(zeros_like(a), db)", joint="plus(da, db)")
defjvp(rt.times,        "times_jvp(a, b, da, None)", "times_jvp(a, b, None, db)",
       joint="times_jvp(a, b, da, db)")
defjvp(rt.plus_vjp,     "plus_vjp(dv, a, b, which)")
defjvp(rt.times_vjp,    "times_vjp(dv, a, b, which)",
       "times_vjp(v, da, b, 1) if which == 1 else zeros_like(ans)",
       "times_vjp(v, a, db, 0) if which == 0 else zeros_like(ans)")
defjvp(rt.put_along_axis, "put_along_axis(darr, indices, 0.0, axis)", None,
                        "put_along_axis(zeros_like(arr), indices, dvalues, axis)",
       joint="put_along_axis(darr, indices, dvalues, axis)")
defjvp(rt.copyto,       "0.0 * ddst", "tangent_like(dsrc, ans)")
defjvp(rt.array_vjp,    "array_vjp(dv, object)")
defjvp(rt.iterable,     "iterable(dx)")
defjvp(rt.iterable_vjp, "iterable_vjp(dv, x)")
defjvp(rt.like,         "like(dv, x)")
defjvp(rt.at_set,       "at_set(dx, idx, 0.0, mode=mode)", None,
                        "at_set(zeros_like(x), idx, dv, mode=mode)",
       joint="at_set(dx, idx, dv, mode=mode)")
defjvp(rt.at_add,       "dx", None, "at_add(zeros_like(x), idx, dv, mode=mode)",
       joint="at_add(dx, idx, dv, mode=mode)")
defjvp(rt.at_multiply,  "at_multiply(dx, idx, v, mode=mode)", None,
                        "at_multiply_value_jvp(dv, x, idx, v, mode)")
defjvp(rt.at_min,       "dx * (x == ans)", None,
                        "at_add(zeros_like(x), idx, dv, mode=mode) * (x != ans)")
defjvp(rt.at_max,       "dx * (x == ans)", None,
                        "at_add(zeros_like(x), idx, dv, mode=mode) * (x != ans)")
defjvp(rt.at_get,       "at_get(dx, idx, mode=mode, fill_value=0.0)")
defjvp(rt.add,          "da", "db", joint="add(da, db)")
defjvp(rt.scale,        "scale(da, s)")
defjvp(rt.unbroadcast,  "unbroadcast(dv, x)")
defjvp(rt.broadcast_like, "broadcast_like(dv, x)")
defjvp(rt.align_to,     "align_to(dx, other, other_batched)")
defjvp(rt.unalign,      "unalign(dv, x)")
defjvp(rt.expand_to,    "expand_to(dv, x, axis=axis, keepdims=keepdims)")
defjvp(rt.astype_like,  "astype_like(dv, x)")
defjvp(rt.narrow,       "narrow(dx)")
defjvp(rt.getitem_vjp,  "getitem_vjp(dv, x, idx)")
defjvp(rt.setitem_vjp,  "setitem_vjp(dv, idx)")
defjvp(rt.item_vjp,     "item_vjp(dv, idx, x)")
defjvp(rt.sort_vjp,     "sort_vjp(dv, x, axis)")
defjvp(rt.matmul,       "matmul(dx, y)", "matmul(x, dy)")
defjvp(rt.matmul_vjp_x, "matmul_vjp_x(dv, x, y)", None, "matmul_vjp_x(v, x, dy)")
defjvp(rt.matmul_vjp_y, "matmul_vjp_y(dv, x, y)", "matmul_vjp_y(v, dx, y)")
defjvp(rt.sum_vjp,      "sum_vjp(dg_, iterable)")
defjvp(rt.diagonal_vjp, "diagonal_vjp(dv, a, offset, axis1, axis2)")
defjvp(rt.pad_vjp,      "pad_vjp(dv, array, pad_width, mode, reflect_type)")
defjvp(rt.pad_jvp,      "pad_jvp(dv, pad_width, mode, reflect_type)")
defjvp(rt.take_vjp,     "take_vjp(dv, a, indices, axis, mode)")
defjvp(rt.take_along_axis_vjp, "take_along_axis_vjp(dv, arr, indices, axis)")
defjvp(rt.repeat_vjp,   "repeat_vjp(dv, a, repeats, axis)")
defjvp(rt.tile_vjp,     "tile_vjp(dv, A, reps)")
defjvp(rt.concatenate_vjp, "concatenate_vjp(dv, arrays, axis, promote)")
defjvp(rt.off_diagonal_inverse, "-dd * ans ** 2")
defjvp(rt.einsum_jvp,   "einsum_jvp2(subscripts, operands, tangent0, tangents, dsubscripts, None)",
                        "einsum_jvp2(subscripts, operands, tangent0, tangents, None, doperands)",
                        "einsum_jvp(subscripts, operands, dtangents)",
                        "einsum_jvp(subscripts, operands, None, dtangent0)")
defjvp(rt.einsum_vjp,   "einsum_vjp(dv, subscripts, operands, first)",
                        "einsum_cross(v, subscripts, operands, dsubscripts, None, first)",
                        "einsum_cross(v, subscripts, operands, None, doperands, first)")


# forward mode's and the Jacobians' own helpers (so that their code differentiates again)
defvjp(rt.tangent_like, "t, ans", "unbroadcast(g, t)")
defjvp(rt.tangent_like, "tangent_like(dt, ans)")
defvjp(rt.jac_fwd,      "cols, out, xs, spec", "jac_fwd_vjp(g, cols, out, xs, spec)")
defjvp(rt.jac_fwd,      "jac_fwd(dcols, out, xs, spec)")
defvjp(rt.jac_rev,      "rows, out, xs, spec", "jac_rev_vjp(g, rows, out, xs, spec)")
defjvp(rt.jac_rev,      "jac_rev(drows, out, xs, spec)")
# each is linear in its first argument, the adjoint of jac_rev / jac_fwd in their rows/columns
defvjp(rt.jac_rev_vjp,  "v, rows, out, xs, spec", "jac_rev(g, out, xs, spec)")
defjvp(rt.jac_rev_vjp,  "jac_rev_vjp(dv, rows, out, xs, spec)")
defvjp(rt.jac_fwd_vjp,  "v, cols, out, xs, spec", "jac_fwd(g, out, xs, spec)")
defjvp(rt.jac_fwd_vjp,  "jac_fwd_vjp(dv, cols, out, xs, spec)")
defvjp(rt.custom_cotangents, "cts, args, name", "g")
defjvp(rt.custom_cotangents, "custom_cotangents(dcts, args, name)")
defnondiff([rt.basis, rt.jac_size, rt.out_size, rt.out_basis])
