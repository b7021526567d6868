"""Numba implementations of indexing.py's helpers: the cotangent of ``x[idx]`` (arrays, and
tuples at a constant index), functional item assignment, and ``.at[idx]``."""
import numpy as np
from numba import types
from numba.np.numpy_support import as_dtype
from numba.extending import overload, register_jitable

from ... import runtime as rt
from ._common import CHECKED, SCALARS, _float_of, _none, _unrolled, add_into, put_into


@overload(rt.getitem_vjp, jit_options=CHECKED)
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
        add_into(out, idx, g)
        return out
    return basic


@overload(rt.add_at_index_inplace, jit_options=CHECKED)
def _add_at_index_inplace(acc, g, x, idx):
    """acc[idx] += g when acc can hold the sum (an array of x's rank and the cotangent's
    dtype; its shape is checked when run), else the new array add_at_index makes."""
    if not (isinstance(acc, types.Array) and isinstance(x, types.Array)
            and acc.ndim == x.ndim
            and acc.dtype == np.result_type(as_dtype(acc.dtype), _float_of(x))):
        return lambda acc, g, x, idx: rt.add(acc, rt.getitem_vjp(g, x, idx))
    if isinstance(idx, types.Array) and idx.ndim == 1 and isinstance(idx.dtype, types.Integer):
        def gather(acc, g, x, idx):     # repeated indices accumulate
            if acc.shape != x.shape:
                return rt.add(acc, rt.getitem_vjp(g, x, idx))
            for k in range(idx.size):
                acc[idx[k]] += g[k]
            return acc
        return gather

    def basic(acc, g, x, idx):
        if acc.shape != x.shape:
            return rt.add(acc, rt.getitem_vjp(g, x, idx))
        add_into(acc, idx, g)
        return acc
    return basic


@overload(rt.setitem, jit_options=CHECKED)
def _setitem(x, idx, v):
    if isinstance(x, types.Array):
        def impl(x, idx, v):
            out = x.copy()
            put_into(out, idx, v)
            return out
        return impl


@overload(rt.setitem_vjp, jit_options=CHECKED)
def _setitem_vjp(g, idx):
    if isinstance(g, types.Array):
        def impl(g, idx):
            out = g.copy()
            put_into(out, idx, 0)
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
    overload(getattr(rt, _name), jit_options=CHECKED)(_at_update(_combine))
    overload(getattr(rt, _name + "_inplace"), jit_options=CHECKED)(_at_update(_combine,
                                                                             inplace=True))


@overload(rt.setitem_inplace, jit_options=CHECKED, inline="always")
def _setitem_inplace(x, idx, v):
    """Inlined into the caller's IR: a call per item written, returning the array, cost 20x in
    a loop writing y[i] (its reference count updated each time)."""
    if isinstance(x, types.Array):
        def impl(x, idx, v):
            put_into(x, idx, v)
            return x
        return impl


@overload(rt.at_get, jit_options=CHECKED)
def _at_get(x, idx, mode=None, fill_value=None):
    if isinstance(x, types.Array) and isinstance(idx, types.Integer):
        fill = np.nan if isinstance(x.dtype, types.Float) else 0

        def one(x, idx, mode=None, fill_value=None):
            j = _position(idx, x.shape[0], not (mode == "fill" or mode == "drop"))
            if j < 0:
                return x[0] * 0 + (fill if fill_value is None else fill_value)
            return x[j]
        return one


@overload(rt.getitem_vjp, prefer_literal=True, jit_options=CHECKED)
def _getitem_vjp_tuple(g, x, idx):
    """The cotangent of ``x[idx]`` for a tuple ``x`` and a constant index (_getitem_vjp
    takes arrays)."""
    if not isinstance(x, types.BaseTuple) or not isinstance(idx, types.IntegerLiteral):
        return None
    at = idx.literal_value % len(x)
    parts = "".join("g, " if k == at else "None, " if _none(t) else f"zeros_like(x[{k}]), "
                    for k, t in enumerate(x))
    return _unrolled(f"def impl(g, x, idx):\n    return ({parts})\n",
                        zeros_like=rt.zeros_like)


# the in-place updates and setitem_inplace are compiled from their source too (__init__.py),
# for the indices their implementations here leave out
IMPLEMENTED = {rt.getitem_vjp, rt.add_at_index_inplace, rt.setitem, rt.setitem_vjp, rt.at_set,
               rt.at_add, rt.at_multiply, rt.at_min, rt.at_max, rt.at_get}
