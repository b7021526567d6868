"""Numba implementations of indexing.py's helpers: the cotangent of ``x[idx]`` (arrays, and
tuples at a constant index), functional item assignment, and ``.at[idx]``."""
import numpy as np
from numba import types
from numba.extending import register_jitable
from numba.np.numpy_support import as_dtype

from ... import runtime as rt
from ...runtime.indexing import _default_fill
from ._common import CHECKED, SCALARS, _float_of, _none, _unrolled, add_into, overload, put_into


@overload(rt.getitem_vjp, jit_options=CHECKED)
def _getitem_vjp(g, x, idx):
    if isinstance(x, types.List) and isinstance(idx, types.Integer):
        def item(g, x, idx):    # zeros like each element, g added at idx
            out = [rt.zeros_like(e) for e in x]
            out[idx] = rt.add(out[idx], g)
            return out
        return item
    if isinstance(x, types.List) and isinstance(idx, types.SliceType):
        def part(g, x, idx):    # g's elements added at the positions of the slice
            out = [rt.zeros_like(e) for e in x]
            at = np.arange(len(x))[idx]
            if len(at) != len(g):
                raise ValueError("a slice's cotangent of another length")
            for k in range(len(at)):
                out[at[k]] = rt.add(out[at[k]], g[k])
            return out
        return part
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
    if _integer_array(idx):   # x[idx] of an N-D index: its rows, repeated ones accumulate
        def rows(g, x, idx):
            out = np.zeros(x.shape, dt)
            at = np.ascontiguousarray(idx).ravel()
            parts = np.ascontiguousarray(g).reshape((at.size,) + x.shape[1:])
            for k in range(at.size):
                out[at[k]] += parts[k]
            return out
        return rows
    if _holds_array(idx):   # x[:, idx]: Numba's += of it would not accumulate repeats
        return None

    def basic(g, x, idx):
        out = np.zeros(x.shape, dt)
        add_into(out, idx, g)
        return out
    return basic


def _integer_array(idx):
    return isinstance(idx, types.Array) and isinstance(idx.dtype, types.Integer)


def _holds_array(idx):
    """An index holding an array (of integers or booleans) inside a tuple."""
    return isinstance(idx, types.BaseTuple) and any(isinstance(p, types.Array) for p in idx)


@overload(rt.add_at_index_inplace, jit_options=CHECKED, prefer_literal=True)
def _add_at_index_inplace(acc, g, x, idx):
    """acc[idx] += g when acc can hold the sum (an array of x's rank and the cotangent's
    dtype; its shape is checked when run), else the new array add_at_index makes."""
    if not (isinstance(acc, types.Array) and isinstance(x, types.Array)
            and acc.ndim == x.ndim
            and as_dtype(acc.dtype) == np.result_type(as_dtype(acc.dtype), _float_of(x))):
        return lambda acc, g, x, idx: rt.add(acc, rt.getitem_vjp(g, x, idx))
    if isinstance(idx, types.Array) and idx.ndim == 1 and isinstance(idx.dtype, types.Integer):
        def gather(acc, g, x, idx):     # repeated indices accumulate
            if acc.shape != x.shape:
                return rt.add(acc, rt.getitem_vjp(g, x, idx))
            for k in range(idx.size):
                acc[idx[k]] += g[k]
            return acc
        return gather
    if _integer_array(idx) or _holds_array(idx):
        return lambda acc, g, x, idx: rt.add(acc, rt.getitem_vjp(g, x, idx))

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


# .at[idx] with JAX's out-of-bounds modes, for a basic index (integers, slices, Ellipsis, in
# a tuple or alone) or a 1-D integer array index on the first axis (other indices fall back):
# get clamps, updates drop ("clip" clamps them).  Slices are in bounds by construction; an
# integer out of bounds drops the whole update (or fills the whole read).
@register_jitable
def _position(i, n, clip):
    """Index ``i`` on an axis of ``n``: wrapped if negative, then clamped (clip) or -1 if out."""
    j = i + n if i < 0 else i
    if 0 <= j < n:
        return j
    if clip:
        return min(max(j, 0), n - 1)
    return -1


_BASIC = (types.Integer, types.SliceType, types.EllipsisType)


def _basic_key(idx, ndim):
    """For a basic index of Numba type ``idx`` into an array of rank ``ndim``: the text of
    each component (``idx[k]``, or ``idx``) and, for each integer component, the axis it
    indexes; None for any other index."""
    parts = list(idx) if isinstance(idx, types.BaseTuple) else [idx]
    if not all(isinstance(t, _BASIC) for t in parts):
        return None
    texts = [f"idx[{k}]" for k in range(len(parts))] if isinstance(idx, types.BaseTuple) \
        else ["idx"]
    used = sum(not isinstance(t, types.EllipsisType) for t in parts)
    if used > ndim or sum(isinstance(t, types.EllipsisType) for t in parts) > 1:
        return None
    ints, axis = [], 0
    for k, t in enumerate(parts):
        if isinstance(t, types.EllipsisType):
            axis += ndim - used
            continue
        if isinstance(t, types.Integer):
            ints.append((k, axis))
        axis += 1
    return texts, ints


def _positions_text(texts, ints, clip, miss):
    """Lines putting each integer component through _position (``miss`` run when one falls
    out of bounds), and the key with the results in their places."""
    lines, key = [], list(texts)
    for k, axis in ints:
        lines.append(f"    j{k} = _position({texts[k]}, x.shape[{axis}], {clip})\n"
                     f"    if j{k} < 0:\n        {miss}\n")
        key[k] = f"j{k}"
    return "".join(lines), "(" + ", ".join(key) + ",)"


# how each update combines the old values (a scalar or a view) with the new ones
_COMBINE = {"at_set": "v", "at_add": "out[key] + v", "at_multiply": "out[key] * v",
            "at_min": "np.minimum(out[key], v)", "at_max": "np.maximum(out[key], v)"}


def _at_update(name, combine, inplace=False):
    def overload_impl(x, idx, v, mode=None):
        if not isinstance(x, types.Array):
            return None
        basic = _basic_key(idx, x.ndim)
        if basic is not None:
            checks, key = _positions_text(*basic, 'mode == "clip"', "return out")
            # the values cast to x's dtype first, as NumPy's version does (7.5 -> 7 into ints)
            dt = as_dtype(x.dtype).type
            cast = "" if getattr(v, "dtype", v) == x.dtype else \
                "    v = v.astype(dt)\n" if isinstance(v, types.Array) else "    v = dt(v)\n"
            return _unrolled(f"""
def impl(x, idx, v, mode=None):
    out = x{"" if inplace else ".copy()"}
{checks}{cast}    key = {key}
    out[key] = {_COMBINE[name]}
    return out
""", np=np, _position=_position, dt=dt)
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
    overload(getattr(rt, _name), jit_options=CHECKED)(_at_update(_name, _combine))
    overload(getattr(rt, _name + "_inplace"), jit_options=CHECKED)(
        _at_update(_name, _combine, inplace=True))


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
    basic = _basic_key(idx, x.ndim) if isinstance(x, types.Array) else None
    if basic is None:
        return None
    texts, ints = basic
    # every integer clamped, so that the read is valid; "fill" (or "drop") then replaces the
    # values read where one was out of bounds
    checks, key = _positions_text(texts, ints, "True", "pass")
    misses = "".join(f"        missed = missed or _position({texts[k]}, x.shape[{axis}], "
                     f"False) < 0\n" for k, axis in ints) or "        pass\n"
    default = _default_fill(as_dtype(x.dtype))   # NaN, or the integer type's extreme
    return _unrolled(f"""
def impl(x, idx, mode=None, fill_value=None):
    missed = False
    if mode == "fill" or mode == "drop":
{misses}{checks}    key = {key}
    out = np.empty(np.shape(x[key]), x.dtype)
    if missed:
        out[...] = default if fill_value is None else fill_value
    else:
        out[...] = x[key]
    return out{"[()]" if len(ints) == x.ndim and len(texts) == x.ndim else ""}
""", np=np, _position=_position, default=default)


@overload(rt.at_get_vjp, jit_options=CHECKED)
def _at_get_vjp(g, x, idx, mode=None):
    """g added back where it was read (clamped reads at the clamped place)."""
    if not isinstance(x, types.Array) or _basic_key(idx, x.ndim) is None:
        return None
    dt = _float_of(x)

    def impl(g, x, idx, mode=None):
        out = np.zeros(x.shape, dt)
        if mode is None or mode == "clip" or mode == "promise_in_bounds":
            return rt.at_add_inplace(out, idx, g, "clip")
        return rt.at_add_inplace(out, idx, g, "drop")
    return impl


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
