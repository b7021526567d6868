"""Numba implementations of containers.py's helpers: array tapes, and the cotangent of a value
set at an index.  ``stack``, ``push`` and ``pop`` need none: codegen/cpu.py spells tapes as
lists (``[]``, ``append``, ``pop``)."""
import numpy as np
from numba import types
from numba.core.errors import NumbaTypeError
from numba.extending import register_jitable
from numba.np.numpy_support import as_dtype

from ... import runtime as rt
from ._common import CHECKED, _given, _unrolled, overload, put_into


@overload(rt.tape_array)
def _tape_array(n, like):
    if isinstance(like, (types.Float, types.Integer, types.Boolean)):
        dt = as_dtype(like)
        return lambda n, like: np.empty(max(n, 0), dt)


@overload(rt.tape_put)
def _tape_put(tape, i, v):
    if isinstance(tape.dtype, (types.Integer, types.Boolean)) and not isinstance(
            v, (types.Integer, types.Boolean)):
        raise NumbaTypeError(f"a number taped for the adjoint is {tape.dtype} before the loop "
                             f"and {v} in it; Python keeps its type, an array tape would not")

    def put(tape, i, v):    # unchecked: i counts the iterations of the range(n) it was made for
        tape[i] = v
    return put


@overload(rt.shape_like, optional=True)
def _shape_like(x):
    # a view of a constant zero, which Numba freezes into the code: no allocation and no
    # reference count per stand-in (72 -> 17 ns a push and pop)
    if isinstance(x, types.Optional) and isinstance(x.type, types.Array) and x.type.ndim == 0:
        return lambda x: None if x is None else np.zeros_like(x)   # (no 0-d broadcast_to)
    if isinstance(x, types.Array) and x.ndim == 0:
        return lambda x: np.zeros_like(x)
    if isinstance(x, types.Optional) and isinstance(x.type, types.Array):
        zero = np.zeros((), as_dtype(x.type.dtype))

        def maybe(x):   # None where the branch assigning it was not taken: None taped
            if x is None:
                return None
            return np.broadcast_to(zero, x.shape)
        return maybe
    if isinstance(x, types.Array):
        zero = np.zeros((), as_dtype(x.dtype))
        return lambda x: np.broadcast_to(zero, x.shape)
    return lambda x: x


@overload(rt.kept_shape, optional=True)
def _kept_shape(x):
    array = x.type if isinstance(x, types.Optional) else x
    if not isinstance(array, types.Array) or array.ndim == 0:
        return lambda x: x
    zero = array.dtype(0)
    if isinstance(x, types.Optional):
        return lambda x: None if x is None else (x.shape, zero)
    return lambda x: (x.shape, zero)


def _is_kept(t):
    return isinstance(t, types.BaseTuple) and len(t) == 2 and isinstance(
        t[0], types.BaseTuple) and not isinstance(t[1], types.BaseTuple)


@overload(rt.shaped, optional=True)
def _shaped(k):
    kept = k.type if isinstance(k, types.Optional) else k
    if not _is_kept(kept):
        return lambda k: k
    zero = np.zeros((), as_dtype(kept[1]))   # (a constant: no allocation, no reference count)
    if isinstance(k, types.Optional):
        return lambda k: None if k is None else np.broadcast_to(zero, _given(k)[0])
    return lambda k: np.broadcast_to(zero, k[0])


@overload(rt.item_vjp, jit_options=CHECKED)
def _item_vjp(g, idx, v):
    if isinstance(g, types.Array):
        return lambda g, idx, v: rt.unbroadcast(g[idx], v)


@overload(rt.setitem_split_inplace, jit_options=CHECKED)
def _setitem_split_inplace(g, idx, v):
    if not isinstance(g, types.Array):
        return lambda g, idx, v: rt.setitem_split(g, idx, v)

    def impl(g, idx, v):
        part = _own(rt.item_vjp(g, idx, v))     # (a view of g, about to be zeroed)
        put_into(g, idx, 0)
        return g, part
    return impl


@register_jitable
def _apart(g, idx, v, x):
    g, t = rt.setitem_split_inplace(g, idx, v)
    return g, x + t


@overload(rt.setitem_split_add, jit_options=CHECKED)
def _setitem_split_add(g, idx, v, x):
    """One loop over ``g[idx]``: the sum written out, the row zeroed, where ``g[idx]``, ``v``
    and ``x`` are arrays of one shape (checked when run); else the two steps."""
    if not (isinstance(g, types.Array) and isinstance(idx, types.Integer) and
            isinstance(v, types.Array) and isinstance(x, types.Array) and
            v.ndim == x.ndim == g.ndim - 1 and x.ndim >= 1 and g.layout == x.layout == "C"):
        return _apart
    dtype = np.result_type(as_dtype(x.dtype), as_dtype(g.dtype))

    def impl(g, idx, v, x):
        row = g[idx]
        if row.shape != x.shape or row.shape != v.shape:
            return _apart(g, idx, v, x)
        out = np.empty(x.shape, dtype)
        flat, rows, xs = out.reshape(-1), row.reshape(-1), x.reshape(-1)   # (C: no copies)
        for k in range(flat.size):
            flat[k] = xs[k] + rows[k]
        put_into(g, idx, 0)
        return g, out
    return impl


@overload(rt.setitem_split_kept, jit_options=CHECKED)
def _setitem_split_kept(g, idx, v, x):
    if not isinstance(g, types.Array):
        return lambda g, idx, v, x: rt.setitem_split_kept(g, idx, v, x)

    def impl(g, idx, v, x):
        part = _own(rt.item_vjp(g, idx, v))
        if g.shape == x.shape and np.shape(part) == np.shape(g[idx]):
            return g, part       # zeroed and added back: as it was
        put_into(g, idx, 0)
        return rt.add_at_index_inplace(g, part, x, idx), part
    return impl


@overload(rt.minmax_vjp)
def _minmax_vjp(g, args, ans):
    """``max(a, b, ...)`` of numbers or arrays (a tuple): g to the first argument equal to
    the result, zeros of g's type to the others."""
    if not (isinstance(args, types.BaseTuple) and len(args) >= 2 and all(
            isinstance(t, (types.Number, types.Boolean, types.Array)) for t in args)):
        return None
    n = len(args)
    zero = "np.zeros_like(g)" if isinstance(g, types.Array) else "dt(0)"
    text = "def impl(g, args, ans):\n    given = False\n" + "".join(
        f"    hit{i} = (not given) and bool(np.all(args[{i}] == ans))\n"
        f"    given = given or hit{i}\n" for i in range(n)) + \
        "    return (" + "".join(f"g if hit{i} else {zero}, " for i in range(n)) + ")\n"
    dt = None if isinstance(g, types.Array) else as_dtype(g).type
    return _unrolled(text, np=np, dt=dt)


_WALKED_AS_THEY_ARE = (types.Array, types.List, types.BaseTuple, types.ListType)


@overload(rt.iterable)
def _iterable(x):
    """Arrays, lists and tuples are walked as they are (dicts and others: the source's)."""
    if isinstance(x, _WALKED_AS_THEY_ARE):
        return lambda x: x


@overload(rt.iterable_vjp)
def _iterable_vjp(g, x):
    if isinstance(x, _WALKED_AS_THEY_ARE):
        return lambda g, x: g


def _own(x):
    return x


@overload(_own)
def _own_impl(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    return lambda x: x


IMPLEMENTED = {rt.tape_array, rt.tape_put, rt.shape_like, rt.kept_shape, rt.shaped, rt.item_vjp,
               rt.setitem_split_inplace, rt.setitem_split_kept, rt.setitem_split_add,
               rt.stack, rt.push, rt.pop}
