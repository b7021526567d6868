"""Helpers that batched code (``vmap``) calls.

A batched value carries the batch on its leading axis; its *lane* ``b`` is ``x[b]``, the
value one call of the user's function would have seen.  Each helper here does, for every
lane at once, what the per-example code did for one.
"""
import numpy as np

from .base import _CONTAINERS, _map, _registered, _tree_map, seed_grad, unbroadcast
from .indexing import setitem
from .reductions import extremum_grad

__all__ = ["select", "broadcast_lanes", "align_lanes", "align_to", "unalign", "lane_axes",
           "lane_axis", "each", "lanes_max", "lanes_min", "matmul_lanes", "take_lanes",
           "getitem_lanes", "unbroadcast_lanes", "expand_to_lanes", "seed_grad_lanes",
           "transpose_lanes", "squeeze_lanes", "lane_index", "safe_index", "array_lanes",
           "reshape_lanes", "getitem_vjp_lanes", "moveaxis_lanes", "out_axis", "unbatched",
           "lanes_like", "set_lane", "extremum_grad_lanes", "one_lane", "tensordot_lanes",
           "tensordot_vjp_lanes", "concatenate_vjp_lanes", "container_like", "setitem_lanes",
           "outer_lanes", "trace_lanes", "array_lanes_vjp"]


def select(mask, new, old):
    """``new`` in the lanes where ``mask`` (one bool per lane) holds, else ``old`` (None: not
    bound yet, ``new`` in every lane).  Both carry their lanes first; where a lane's shape
    differs between them only a mask that is the same in every lane can choose."""
    if old is None:
        return new
    new, old = np.asarray(new), np.asarray(old)
    if new.shape[1:] != old.shape[1:]:
        m = np.asarray(mask)
        if not m.any():
            return old
        if m.all():
            return new
        raise ValueError(f"vmap: a value assigned under a condition that differs between lanes "
                         f"has lanes of shape {old.shape[1:]} before and {new.shape[1:]} after; "
                         f"give it the same shape in every branch, or call the function lane "
                         f"by lane")
    m = np.reshape(mask, np.shape(mask) + (1,) * (max(new.ndim, old.ndim) - 1))
    return np.where(m, new, old)


def broadcast_lanes(x, n):
    """An unbatched value repeated in ``n`` lanes (a fresh array: code may update it); a
    pytree's leaves each (vmap returning the parameters it was given, a list of layers)."""
    if isinstance(x, _CONTAINERS):
        return _map(lambda leaf: broadcast_lanes(leaf, n), x)
    if _registered(x):
        return _tree_map(lambda leaf: broadcast_lanes(leaf, n), x)
    if x is None:
        return None
    x = np.asarray(x)
    out = np.empty((n,) + x.shape, x.dtype)
    out[...] = x
    return out


def align_lanes(x, rank):
    """Batched ``x`` with axes inserted after the batch axis so that each lane has ``rank``
    dimensions: it then broadcasts lane by lane against values of that rank."""
    x = np.asarray(x)
    extra = rank - (x.ndim - 1)
    return x.reshape(x.shape[:1] + (1,) * extra + x.shape[1:]) if extra > 0 else x


def align_to(x, other, other_batched):
    """Batched ``x`` aligned (align_lanes) to the lanes of ``other``: to the rank of ``other``
    itself where it is not batched.  Its Numba version knows both ranks when it compiles."""
    return align_lanes(x, np.ndim(other) - other_batched)


def unalign(g, x):
    """The cotangent ``g`` of ``align_to(x, ...)`` with the axes it inserted dropped."""
    return np.reshape(g, np.shape(x))


def lane_axes(x):
    """The axes of one lane of batched ``x``: what ``axis=None`` reduces."""
    return tuple(range(1, np.ndim(x)))


def lane_axis(axis, x):
    """A lane's ``axis`` argument (None, an int or a tuple) as an axis of batched ``x``."""
    if axis is None:
        return lane_axes(x)
    if isinstance(axis, (tuple, list)):
        return tuple(lane_axis(a, x) for a in axis)
    return axis + 1 if axis >= 0 else axis


def moveaxis_lanes(x, source):
    """The batch axis of an argument (``in_axes``) moved to the front."""
    return np.moveaxis(x, source, 0)


def out_axis(x, axis):
    """A batched output's lanes moved from the front to ``axis`` (vmap's ``out_axes``); of
    a tuple, list or dict, each element's (an int out_axes is a prefix of any tree)."""
    if isinstance(x, (tuple, list)):
        return type(x)(out_axis(e, axis) for e in x)
    if isinstance(x, dict):
        return {k: out_axis(e, axis) for k, e in x.items()}
    if x is None:
        return None
    nd = np.ndim(x)
    if not -nd <= axis < nd:
        raise ValueError(f"vmap out_axes={axis} is out of bounds for an output of rank "
                         f"{nd - 1} (rank {nd} with the batch axis): out_axes must be in "
                         f"[{-nd}, {nd}). Fix: pass an out_axes within the output's rank")
    return np.moveaxis(x, 0, axis) if axis != 0 else x


def unbatched(x):
    """An output run lane by lane (stacked lanes first) whose ``out_axes`` is None: the value
    every lane gave (JAX requires that it not depend on the batched arguments)."""
    if len(x) == 0 or any(not np.array_equal(x[k], x[0]) for k in range(1, len(x))):
        raise ValueError("vmap has an output that differs between lanes (or no lane), but "
                         "out_axes is None for it. Fix: give that output an int out_axes, or "
                         "make it not depend on the batched arguments")
    return x[0]


def each(fn, batched, *args):
    """``fn`` run lane by lane (what a function without a batching rule gets), stacked.
    ``batched``: which arguments are batched."""
    sizes = {np.shape(a)[0] for a, b in zip(args, batched) if b}
    (n,) = sizes
    if n == 0:   # (stacking no lanes failed: "need at least one array to stack")
        raise ValueError("vmap over an empty batch (0 lanes) of code that runs lane by lane: "
                         "with no lane to run, the shapes and dtypes of the outputs are "
                         "unknown (JAX traces them; strop runs the code). Fix: skip the call "
                         "for an empty batch, or give it at least one lane")
    outs = [fn(*[a[i] if b else a for a, b in zip(args, batched)]) for i in range(n)]
    return _stack(outs)


def setitem_lanes(x, idx, v, x_batched, idx_batched, v_batched):
    """runtime.setitem (``x[idx] = v``, functionally) in each lane: with the index the same in
    every lane, one assignment at ``(:, idx)``, ``v``'s lanes lined up with the region's."""
    if not isinstance(x, np.ndarray) or idx_batched:   # a list, or each lane's own index
        return each(setitem, (x_batched, idx_batched, v_batched), x, idx, v)
    n = len(x) if x_batched else len(v)
    out = np.array(x if x_batched else np.broadcast_to(x, (n,) + np.shape(x)))
    at = lane_index(idx)
    out[at] = align_lanes(v, np.ndim(out[at]) - 1) if v_batched else v
    return out


def outer_lanes(a, b, a_batched, b_batched):
    """np.outer in each lane (of the lanes flattened, as NumPy flattens its arguments)."""
    n = len(a) if a_batched else len(b)
    a = np.reshape(a, (n if a_batched else 1, _lane_size(a, a_batched), 1))   # no -1: an
    b = np.reshape(b, (n if b_batched else 1, 1, _lane_size(b, b_batched)))   # empty batch
    return np.broadcast_to(a * b, (n, a.shape[1], b.shape[2]))


def _lane_size(x, batched):
    return int(np.prod(np.shape(x)[1:] if batched else np.shape(x)))


def trace_lanes(x):
    """np.trace of each lane of batched matrices ``x``."""
    return np.trace(x, axis1=1, axis2=2)


def _stack(outs):
    first = outs[0] if outs else None
    if isinstance(first, tuple):   # (a named tuple stays one: Layer(w, b) of stacked lanes)
        items = [_stack([o[k] for o in outs]) for k in range(len(first))]
        return type(first)(*items) if hasattr(first, "_fields") else tuple(items)
    if isinstance(first, list):
        return [_stack([o[k] for o in outs]) for k in range(len(first))]
    if isinstance(first, dict):
        return {k: _stack([o[k] for o in outs]) for k in first}
    return np.stack([np.asarray(o) for o in outs])


def extremum_grad_lanes(a, ans, axis, keepdims, where=True):
    """runtime.extremum_grad in each lane: the lane's ``axis`` (None: all of a lane's)."""
    return extremum_grad(a, ans, lane_axis(axis, a), keepdims, where)


def container_like(old, items):
    """``items`` (a tuple) as a container of the kind of ``old``: a list or a tuple."""
    return list(items) if isinstance(old, list) else items


def lanes_like(first, n):
    """Room for ``n`` lanes of what one lane's code returned (``first``, a value or a tuple)."""
    if isinstance(first, tuple):
        parts = [lanes_like(f, n) for f in first]
        return type(first)(*parts) if hasattr(first, "_fields") else tuple(parts)
    first = np.asarray(first)
    return np.empty((n,) + first.shape, first.dtype)


def set_lane(out, j, value):
    """Store one lane's result (a value or a tuple) as lane ``j`` of ``out``."""
    if isinstance(out, tuple):
        for o, v in zip(out, value):
            o[j] = v
    else:
        out[j] = value


def lanes_max(n):
    """The largest value over the lanes (the trip count every lane fits in)."""
    return np.max(n) if np.size(n) else 0


def lanes_min(n):
    return np.min(n) if np.size(n) else 0


def matmul_lanes(a, b, a_batched, b_batched):
    """``a @ b`` in each lane, for 1-D or N-D lanes, either operand batched."""
    a, b = np.asarray(a), np.asarray(b)
    ra, rb = a.ndim - a_batched, b.ndim - b_batched
    if a_batched and not b_batched and ra >= 1 and rb == 2:   # every lane's rows: one product
        return np.matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + b.shape[-1:])
    if ra == 1:
        a = np.expand_dims(a, -2)
    if rb == 1:
        b = np.expand_dims(b, -1)
    # lanes' stacking dims (all but the last two) must line up behind the batch axis
    sa, sb = a.ndim - a_batched - 2, b.ndim - b_batched - 2
    s = max(sa, sb)
    if a_batched and sa < s:
        a = a.reshape(a.shape[:1] + (1,) * (s - sa) + a.shape[1:])
    if b_batched and sb < s:
        b = b.reshape(b.shape[:1] + (1,) * (s - sb) + b.shape[1:])
    if not a_batched and b_batched:
        a = a.reshape((1,) * (b.ndim - a.ndim) + a.shape)
    if not b_batched and a_batched:
        b = b.reshape((1,) * (a.ndim - b.ndim) + b.shape)
    out = np.matmul(a, b)
    if rb == 1:
        out = out[..., 0]
    if ra == 1:
        out = out[..., 0, :] if rb != 1 else out[..., 0]
    return out


def take_lanes(x, i):
    """``x[i]`` in each lane, ``x`` and the integer index ``i`` both batched."""
    i = np.asarray(i)
    if i.dtype == np.bool_:
        raise IndexError("vmap: a boolean mask index that differs between lanes selects a "
                         "different number of elements in each lane, which cannot be batched")
    n = x.shape[0]
    lanes = np.arange(n).reshape((n,) + (1,) * (i.ndim - 1))
    return x[lanes, i]


def getitem_lanes(x, idx, x_batched, idx_batched):
    """``x[idx]`` lane by lane, for indices the static rules do not cover."""
    if not isinstance(idx, tuple):
        idx, idx_batched = (idx,), (idx_batched,)
    n = x.shape[0] if x_batched else next(
        np.shape(c)[0] for c, b in zip(idx, idx_batched) if b)
    return _stack([(x[k] if x_batched else x)[tuple(c[k] if b else c for c, b in zip(
        idx, idx_batched))] for k in range(n)])


def lane_index(idx):
    """The index of a lane as an index of batched values (the batch axis kept whole)."""
    return (slice(None),) + (idx if isinstance(idx, tuple) else (idx,))


def safe_index(i, mask):
    """A batched index in a masked region: lanes that do not run the code index 0 (any
    in-range index does), so that they cannot fail where the user's code would not run."""
    return np.where(mask.reshape(mask.shape + (1,) * (np.ndim(i) - 1)), i, 0)


def array_lanes(items, dtype=None):
    """``np.array([a, b, ...])`` of batched items: each lane's array, stacked (a nested list
    is itself a list of lanes: its lanes first too)."""
    out = np.stack([array_lanes(it) if isinstance(it, (list, tuple)) else np.asarray(it)
                    for it in items], axis=1)
    return out.astype(dtype) if dtype is not None else out


def array_lanes_vjp(g, items):
    """The cotangents of the items of ``array_lanes(items)``: each item's part of ``g`` (the
    items stacked along axis 1), in the item's shape; a nested list's, a list again."""
    g = np.asarray(g)
    return [array_lanes_vjp(g[:, k], it) if isinstance(it, (list, tuple)) else
            np.reshape(g[:, k], np.shape(it)) for k, it in enumerate(items)]


def reshape_lanes(x, shape):
    """``np.reshape(x, shape)`` in each lane."""
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    return np.reshape(x, (np.shape(x)[0],) + shape)


def transpose_lanes(x, axes=None):
    """``np.transpose(x, axes)`` in each lane."""
    r = np.ndim(x) - 1
    axes = tuple(range(r))[::-1] if axes is None else tuple(a % r for a in axes)
    return np.transpose(x, (0,) + tuple(a + 1 for a in axes))


def squeeze_lanes(x, axis=None):
    """``np.squeeze(x, axis)`` in each lane (the batch axis stays, even of size 1)."""
    if axis is None:
        axis = tuple(i for i in range(1, np.ndim(x)) if np.shape(x)[i] == 1)
        return np.squeeze(x, axis) if axis else x
    return np.squeeze(x, lane_axis(axis, x))


def unbroadcast_lanes(g, x, g_batched, x_batched):
    """The cotangent ``g`` summed down to the shape of a lane of ``x`` (runtime.unbroadcast
    in each lane); batched whenever ``g`` is."""
    if not g_batched:
        return unbroadcast(g, x[0] if x_batched and np.shape(x)[0] else x)
    g = np.asarray(g)
    shape = np.shape(x)[1:] if x_batched else np.shape(x)
    extra = g.ndim - 1 - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(1, 1 + extra)))
    axes = tuple(i + 1 for i, s in enumerate(shape) if s == 1 and g.shape[i + 1] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    if g.shape[1:] != tuple(shape):
        g = np.broadcast_to(g, g.shape[:1] + tuple(shape))
    dtype = np.result_type(x) if np.issubdtype(np.result_type(x), np.inexact) else g.dtype
    return g.astype(dtype, copy=False)


def expand_to_lanes(g, x, axis=None, keepdims=False):
    """runtime.expand_to in each lane, ``g`` and ``x`` batched."""
    g = np.asarray(g)
    shape = np.shape(x)
    if axis is not None and not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        g = np.expand_dims(g, tuple(a % (len(shape) - 1) + 1 for a in axes))
    else:
        g = g.reshape(g.shape[:1] + (1,) * (len(shape) - g.ndim) + g.shape[1:])
    return np.broadcast_to(g, shape)


def seed_grad_lanes(out):
    """The seed of a gradient in each lane: 1.0 per lane (each lane's output must be a
    number)."""
    out = np.asarray(out)
    if out.ndim != 1 or not np.issubdtype(out.dtype, np.inexact):
        seed_grad(out[0] if out.ndim else out)    # raises grad's error for one lane
    return np.ones_like(out)


def getitem_vjp_lanes(g, x, idx):
    """runtime.getitem_vjp in each lane: ``g`` and ``x`` batched, the index shared."""
    out = np.zeros(np.shape(x), np.result_type(g, np.float32) if not np.issubdtype(
        np.result_type(x), np.inexact) else np.result_type(x))
    np.add.at(out, lane_index(idx), g)
    return out


def matmul_vjp_x_lanes(g, x, y, x_batched, y_batched):
    """runtime.matmul_vjp_x in each lane (``g`` batched)."""
    rx, ry = np.ndim(x) - x_batched, np.ndim(y) - y_batched
    g = np.asarray(g)
    if rx == 1 and ry == 1:
        return align_lanes(g, 1) * y
    if ry == 1:
        return np.expand_dims(g, -1) * (align_lanes(y, g.ndim) if y_batched else y)
    if rx == 1 and ry == 2 and not y_batched:     # y @ g in each lane: g @ y.T for all
        return np.matmul(g, y.T)
    if rx == 1:
        return matmul_lanes(y, np.expand_dims(g, -1), y_batched, True)[..., 0]
    return matmul_lanes(g, np.swapaxes(y, -1, -2), True, y_batched)


def matmul_vjp_y_lanes(g, x, y, x_batched, y_batched):
    """runtime.matmul_vjp_y in each lane (``g`` batched)."""
    rx, ry = np.ndim(x) - x_batched, np.ndim(y) - y_batched
    g = np.asarray(g)
    if rx == 1 and ry == 1:
        return align_lanes(g, 1) * x
    if rx == 1 and g.ndim == 2:     # an outer product in each lane
        return np.einsum("bi,bj->bij" if x_batched else "i,bj->bij", x, g)
    if rx == 1:
        xe = np.expand_dims(x, -1)
        ge = np.expand_dims(g, -2)
        if x_batched:
            xe = align_lanes(xe, ge.ndim - 1)
        return xe * ge
    if rx == 2 and ry == 1 and not x_batched:     # x.T @ g in each lane: g @ x for all
        return np.matmul(g, x)
    if ry == 1:
        return matmul_lanes(np.swapaxes(x, -1, -2), np.expand_dims(g, -1), x_batched, True)[
            ..., 0]
    return matmul_lanes(np.swapaxes(x, -1, -2), g, x_batched, True)


def broadcast_like_lanes(g, v, g_batched, v_batched):
    """runtime.broadcast_like in each lane (second derivatives under vmap)."""
    g, v = np.asarray(g), np.asarray(v)
    lane = v.shape[1:] if v_batched else v.shape
    n = g.shape[0] if g_batched else v.shape[0]
    if g_batched:
        g = align_lanes(g, len(lane))
    return np.broadcast_to(g, (n,) + lane).astype(np.result_type(v), copy=False)


def matmul_as_x_lanes(z, x, y, z_batched, x_batched, y_batched):
    """runtime.matmul_as_x in each lane."""
    if np.ndim(x) - x_batched == 1 and np.ndim(y) - y_batched > 1:
        return matmul_lanes(np.expand_dims(z, -2), y, z_batched, y_batched)[..., 0, :]
    return matmul_lanes(z, y, z_batched, y_batched)


def matmul_as_y_lanes(x, z, y, x_batched, z_batched, y_batched):
    """runtime.matmul_as_y in each lane."""
    if np.ndim(y) - y_batched == 1 and np.ndim(x) - x_batched > 1:
        return matmul_lanes(x, np.expand_dims(z, -1), x_batched, z_batched)[..., 0]
    return matmul_lanes(x, z, x_batched, z_batched)


__all__ += ["matmul_vjp_x_lanes", "matmul_vjp_y_lanes", "broadcast_like_lanes",
            "matmul_as_x_lanes", "matmul_as_y_lanes"]


def one_lane(x):
    """A lane of batched ``x`` (zeros of a lane's shape for an empty batch): for helpers whose
    result depends only on the shapes of their arguments (``dot_axes``), the same in every
    lane."""
    x = np.asarray(x)
    return x[0] if x.shape[0] else np.zeros(x.shape[1:], x.dtype)


def _contraction(ra, rb, axes):
    """einsum terms of ``np.tensordot`` of operands of ranks ``ra`` and ``rb``: (a's, b's,
    the result's), contracted axes sharing a letter; the batch axis is ``Z``."""
    if np.ndim(axes) == 0:
        ax_a, ax_b = list(range(ra - int(axes), ra)), list(range(int(axes)))
    else:
        ax_a, ax_b = ([x] if np.ndim(x) == 0 else list(x) for x in axes)
        ax_a, ax_b = [x % ra for x in ax_a], [x % rb for x in ax_b]
    letters = iter("abcdefghijklmnopqrstuvwxyABCDEFGHIJKLMNOPQRSTUVWXY")
    ta = [next(letters) for _ in range(ra)]
    tb = [next(letters) for _ in range(rb)]
    for i, j in zip(ax_a, ax_b):
        tb[j] = ta[i]
    out = [c for i, c in enumerate(ta) if i not in ax_a] + [
        c for j, c in enumerate(tb) if j not in ax_b]
    return "".join(ta), "".join(tb), "".join(out)


def _lanes_einsum(terms, operands, flags):
    """``np.einsum`` of ``terms`` (the last one the result's) over lanes: ``Z`` before the
    terms of batched operands and of the result."""
    ins = ["Z" + t if f else t for t, f in zip(terms[:-1], flags)]
    return np.einsum(",".join(ins) + "->Z" + terms[-1], *operands)


def tensordot_lanes(a, b, axes, a_batched, b_batched):
    """``np.tensordot(a, b, axes)`` in each lane, ``axes`` the same in every lane."""
    ta, tb, out = _contraction(np.ndim(a) - a_batched, np.ndim(b) - b_batched, axes)
    return _lanes_einsum((ta, tb, out), (a, b), (a_batched, b_batched))


def tensordot_vjp_lanes(g, a, b, axes, wrt, g_batched, a_batched, b_batched):
    """runtime.tensordot_vjp_a (``wrt`` 0) or tensordot_vjp_b (1) in each lane: ``g``
    contracted with the other factor over that factor's free axes."""
    ta, tb, out = _contraction(np.ndim(a) - a_batched, np.ndim(b) - b_batched, axes)
    if wrt == 0:
        return _lanes_einsum((out, tb, ta), (g, b), (g_batched, b_batched))
    return _lanes_einsum((ta, out, tb), (a, g), (a_batched, g_batched))


def concatenate_vjp_lanes(g, arrays, axis, promote, batched):
    """runtime.concatenate_vjp in each lane, ``g`` batched: a list of batched cotangents,
    one per element of ``arrays`` (``batched``: which elements are batched)."""
    lanes = [one_lane(a) if b else np.asarray(a) for a, b in zip(arrays, batched)]
    parts = [a if promote is None else promote(a) for a in lanes]
    g = np.asarray(g)
    if axis is None:
        g, axis, lengths = np.reshape(g, (g.shape[0], -1)), 0, [np.size(p) for p in parts]
    else:
        lengths = [np.shape(p)[axis] for p in parts]
    pieces = np.split(g, np.cumsum(lengths)[:-1], lane_axis(axis, g))
    return [np.reshape(gi, gi.shape[:1] + np.shape(a)) for gi, a in zip(pieces, lanes)]
