"""Numba implementations of shape.py's helpers."""
import numpy as np
from numba import types
from numba.extending import overload

from ... import runtime as rt
from ._common import _float_of, _none, _unrolled
from .axes import _norm_axis


@overload(rt.concatenate_vjp, prefer_literal=True)
def _concatenate_vjp(g, arrays, axis=0, promote=None):
    """Arrays of g's rank in a list or tuple, joined along an axis: g's pieces, in a list."""
    if not (isinstance(g, types.Array) and isinstance(axis, types.Integer) and _none(promote)
            and isinstance(arrays, (types.List, types.UniTuple))):
        return None
    item = arrays.dtype
    if not (isinstance(item, types.Array) and item.ndim == g.ndim):
        return None
    n = g.ndim
    dt = _float_of(item)
    # g with the axis first: each piece is a run of its rows, moved back
    perm = "(ax, " + "".join(f"rest[{i}], " for i in range(n - 1)) + ")"
    undo = "(" + "".join(f"back[{i}], " for i in range(n)) + ")"
    return _unrolled(f"""
def impl(g, arrays, axis=0, promote=None):
    ax = _norm_axis(axis, {n})
    rest = np.empty({n - 1}, np.intp)
    j = 0
    for i in range({n}):
        if i != ax:
            rest[j] = i
            j += 1
    back = np.empty({n}, np.intp)
    order = {perm}
    for i in range({n}):
        back[order[i]] = i
    moved = g.transpose(order)
    out = []
    start = 0
    for a in arrays:
        m = a.shape[ax]
        piece = moved[start:start + m]
        out.append(np.ascontiguousarray(piece.transpose({undo})).astype(dt))
        start += m
    return out
""", np=np, _norm_axis=_norm_axis, dt=dt)


# none replaced: the helpers' own source stays for the arguments these do not take
IMPLEMENTED = set()
