"""Numba implementations of reductions.py's helpers, over all of an array (axis None) or
given axes."""
import numpy as np
from numba import types
from numba.extending import register_jitable

from ... import runtime as rt
from ._common import _float_of, _none, _unrolled, overload


@overload(rt.mean_grad)
def _mean_grad(a, axis=None, where=True):
    """1/n as a number of the cotangent's type (1/n computed in float64 and rounded, as
    NumPy's ``astype`` does): over all of ``a``, or over given axes with ``where`` True
    (``expand_to`` broadcasts the cotangent; the NumPy version's array of 1/n, a sum over a
    broadcast boolean array and a division of every element, took 10 ms on 1.6M elements)."""
    dt = _float_of(a)
    if _none(axis) and (_none(where) or isinstance(where, types.BooleanLiteral) or
                        isinstance(where, types.Boolean)):
        return lambda a, axis=None, where=True: dt(1.0 / a.size)
    if not (isinstance(a, types.Array) and (_none(where) or _true(where))):
        return None
    if isinstance(axis, types.Integer):
        return lambda a, axis=None, where=True: dt(1.0 / a.shape[axis % a.ndim])
    if isinstance(axis, types.BaseTuple) and all(isinstance(t, types.Integer) for t in axis):
        n = " * ".join(f"a.shape[axis[{i}] % {a.ndim}]" for i in range(len(axis))) or "1"
        return _unrolled(f"def impl(a, axis=None, where=True):\n    return dt(1.0 / ({n}))\n",
                         dt=dt)
    return None


def _true(t):
    """Whether Numba type ``t`` is the constant True (a literal or a default)."""
    if isinstance(t, types.Omitted):
        return t.value is True
    return isinstance(t, types.BooleanLiteral) and t.literal_value is True or t is True


def _int_axes(axis):
    """Whether Numba type ``axis`` is an int or a tuple of ints."""
    return isinstance(axis, types.Integer) or isinstance(axis, types.BaseTuple) and all(
        isinstance(t, types.Integer) for t in axis)


@register_jitable
def _share(out, values, top, where):
    """d max / d values (1-D, ``out`` zeros): the elements equal to ``top`` share it evenly
    (ties split); NaN everywhere where ``top`` is NaN; zeros where ``where`` is False."""
    if top != top:
        out[:] = np.nan
    elif where:
        hits = 0
        for i in range(values.size):
            if values[i] == top:
                out[i] = 1
                hits += 1
        if hits > 1:
            out /= hits


@overload(rt.extremum_grad)
def _extremum_grad(a, ans, axis=None, keepdims=False, where=True):
    """Over all of ``a`` (axis None)."""
    if not (isinstance(a, types.Array) and _none(axis) and isinstance(where, types.Boolean)):
        return None
    dt = _float_of(a)
    scalar = not isinstance(ans, types.Array)

    def impl(a, ans, axis=None, keepdims=False, where=True):
        out = np.zeros(a.shape, dt)
        _share(out.reshape(-1), np.ascontiguousarray(a).reshape(-1),
               ans if scalar else ans.flat[0], where)
        return out
    return impl


@overload(rt.extremum_grad, prefer_literal=True)
def _extremum_grad_along(a, ans, axis=None, keepdims=False, where=True):
    """Over given axes (an int or a tuple of ints), ``where`` left True: the elements equal
    to their reduction's result share it evenly; NaN where that result is NaN."""
    if not (isinstance(a, types.Array) and a.ndim > 0 and (_true(where) or _none(where)) and
            _int_axes(axis)):
        return None
    dt = _float_of(a)

    def impl(a, ans, axis=None, keepdims=False, where=True):
        top = rt.expand_to(ans, a, axis, keepdims)
        hit = a == top
        share = (hit / np.maximum(np.sum(hit, axis=axis, keepdims=True), 1)).astype(dt)
        flat, nan = share.reshape(-1), np.isnan(top).reshape(-1)
        for i in range(flat.size):
            if nan[i]:
                flat[i] = np.nan
        return share
    return impl


@overload(rt.var_grad)
def _var_grad(a, axis=None, ddof=0, where=True, mean=None, correction=None):
    """2 (a - mean) / (n - ddof) over all of ``a`` or given axes, every element taken
    (``where`` True) and the mean computed here (the NumPy version's masked mean, sum and
    ``np.where`` ran in object mode)."""
    if not (isinstance(a, types.Array) and (_none(axis) or _int_axes(axis)) and
            (_none(where) or _true(where)) and _none(mean) and _none(correction)):
        return None
    dt = _float_of(a)

    def impl(a, axis=None, ddof=0, where=True, mean=None, correction=None):
        m = np.mean(a, axis=axis, keepdims=True)
        n = a.size // max(m.size, 1)        # the elements of each reduction
        return (2 * (a - m) / (n - ddof)).astype(dt)
    return impl


IMPLEMENTED = {rt.mean_grad, rt.extremum_grad, rt.var_grad}
