"""Numba implementations of the numerical routines' helpers (numeric.py), so that
``jit(grad(f))`` of code calling np.diff, np.linspace or np.median compiles.

Written for the forms Numba itself compiles (np.diff without prepend/append; np.linspace and
np.median of numbers and whole arrays); for the others an overload returns None, Numba refuses
the call, and jit runs the python backend after a JitFallbackWarning, with the same results.
"""
import numpy as np
from numba import types
from numba.extending import register_jitable

from ... import runtime as rt
from ._common import SCALARS, _float_of, _none, overload


@register_jitable
def _split_at(shape, axis):
    """(the product of the axes before ``axis``, its length, the product of those after)."""
    axis = axis % len(shape)
    pre, post = 1, 1
    for k in range(axis):
        pre *= shape[k]
    for k in range(axis + 1, len(shape)):
        post *= shape[k]
    return pre, shape[axis], post


@overload(rt.diff_vjp)
def _diff_vjp(g, a, n, axis, prepend, append, which=0):
    """The transpose of one difference (-g[0], g[0] - g[1], ..., g[-1]), n times."""
    if not (isinstance(a, types.Array) and _none(prepend) and _none(append)):
        return None
    dt = _float_of(a)

    def impl(g, a, n, axis, prepend, append, which=0):
        pre, length, post = _split_at(a.shape, axis)
        cur = np.ascontiguousarray(g).astype(dt).reshape((pre, length - n, post))
        for step in range(n):
            m = cur.shape[1]
            nxt = np.zeros((pre, m + 1, post), dt)
            nxt[:, :m, :] -= cur
            nxt[:, 1:, :] += cur
            cur = nxt
        return cur.reshape(a.shape)
    return impl


@overload(rt.diff_jvp)
def _diff_jvp(a, n, axis, prepend, append, da, dprepend, dappend):
    if not (isinstance(a, types.Array) and isinstance(da, types.Array) and _none(prepend)
            and _none(append)):
        return None
    dt = _float_of(da)

    def impl(a, n, axis, prepend, append, da, dprepend, dappend):
        pre, length, post = _split_at(a.shape, axis)
        cur = np.ascontiguousarray(da).astype(dt).reshape((pre, length, post))
        for step in range(n):
            cur = cur[:, 1:, :] - cur[:, :-1, :]
        shape = a.shape
        out_shape = tuple_setitem(shape, axis % len(shape), length - n)
        return np.ascontiguousarray(cur).reshape(out_shape)
    return impl


from numba.cpython.unsafe.tuple import tuple_setitem  # noqa: E402


@register_jitable
def _linspace_t(num, endpoint):
    div = (num - 1) if endpoint else num
    t = np.zeros(num)
    if div > 0:
        for i in range(num):
            t[i] = i / div
    return t


@overload(rt.linspace_vjp)
def _linspace_vjp(g, start, stop, num=50, endpoint=True, retstep=False, axis=0, which=0):
    """Numbers start and stop, no step returned: each sample is start + t (stop - start)."""
    if not (isinstance(g, types.Array) and g.ndim == 1 and isinstance(start, SCALARS)
            and isinstance(stop, SCALARS)):
        return None
    if not isinstance(retstep, (types.Omitted, types.BooleanLiteral)) and not isinstance(
            retstep, types.Boolean):
        return None

    def impl(g, start, stop, num=50, endpoint=True, retstep=False, axis=0, which=0):
        t = _linspace_t(num, endpoint)
        total = 0.0
        for i in range(num):
            total += g[i] * (t[i] if which == 1 else 1.0 - t[i])
        return total
    return impl


@overload(rt.linspace_jvp)
def _linspace_jvp(start, stop, num, endpoint, retstep, axis, dstart, dstop):
    if not (isinstance(start, SCALARS) and isinstance(stop, SCALARS)):
        return None
    if isinstance(retstep, types.BooleanLiteral) and retstep.literal_value:
        return None
    none_s, none_e = _none(dstart), _none(dstop)

    def impl(start, stop, num, endpoint, retstep, axis, dstart, dstop):
        t = _linspace_t(num, endpoint)
        ds = 0.0 if none_s else dstart
        de = 0.0 if none_e else dstop
        return ds * (1.0 - t) + de * t
    return impl


def _literal(t, default):
    """The value of a literal argument's type (``default`` when omitted); None if unknown."""
    if isinstance(t, types.Omitted):
        return t.value
    return default if t is None else getattr(t, "literal_value", None)


@register_jitable
def _quantile_parts(g, a, q, scale, dt):
    flat = np.ascontiguousarray(a).reshape(-1)
    size = flat.size
    order = np.argsort(flat)
    pos = q * scale * (size - 1)
    lo = int(np.floor(pos))
    hi = min(lo + 1, size - 1)
    frac = pos - lo
    ga = np.zeros(size, dt)
    ga[order[lo]] += g * (1.0 - frac)
    ga[order[hi]] += g * frac
    slope = (flat[order[hi]] - flat[order[lo]]) * (size - 1)
    return ga.reshape(a.shape), g * slope * scale


@overload(rt.quantile_vjp, prefer_literal=True)
def _quantile_vjp(g, a, q, axis=None, method="linear", nan=False, scale=1.0, which=0):
    """A number q of the whole array (axis None), linear interpolation, NaNs not ignored: the
    cotangent to the two order statistics the quantile falls between."""
    if not (isinstance(a, types.Array) and isinstance(q, SCALARS) and _none(axis)
            and isinstance(g, SCALARS)):
        return None
    part = _literal(which, 0)
    if _literal(method, "linear") != "linear" or _literal(nan, False) is not False or \
            part not in (0, 1):
        return None
    dt = _float_of(a)

    def impl(g, a, q, axis=None, method="linear", nan=False, scale=1.0, which=0):
        return _quantile_parts(g, a, q, scale, dt)[part]
    return impl


# --- np.polyval: Horner's scheme, element by element (their source converts with
# np.asarray(x, float), which Numba cannot type); registered in place of their source
@overload(rt.polyval_vjp_p)
def _polyval_vjp_p(g, p, x):
    """g times x to each power, summed over the elements (in float64, as NumPy's version)."""
    if not (isinstance(p, types.Array) and p.ndim == 1 and isinstance(x, (types.Array, *SCALARS))
            and isinstance(g, (types.Array, *SCALARS))):
        return None
    dt = np.result_type(_float_of(g), np.float64).type
    if isinstance(x, SCALARS):   # (Numba broadcasts to no axes wrongly)
        if not isinstance(g, SCALARS):
            return None

        def one(g, p, x):
            return _polyval_powers(np.array([g], dt), p, np.array([x], np.float64), dt)
        return one

    def impl(g, p, x):
        gs = np.ascontiguousarray(np.broadcast_to(np.asarray(g), x.shape)).reshape(-1)
        return _polyval_powers(gs, p, np.ascontiguousarray(x).reshape(-1), dt)
    return impl


@register_jitable
def _polyval_powers(gs, p, xs, dt):
    """The sum over k of gs[k] times each power of xs[k], highest first."""
    n = p.shape[0]
    out = np.zeros(n, dt)
    for i in range(xs.size):
        power = 1.0
        for k in range(n - 1, -1, -1):
            out[k] += gs[i] * power
            power *= np.float64(xs[i])
    return out


@overload(rt.polyval_slope)
def _polyval_slope(p, x):
    """The derivative polynomial's value at x, by Horner's scheme."""
    if not (isinstance(p, types.Array) and p.ndim == 1 and isinstance(x, (types.Array,
                                                                         *SCALARS))):
        return None
    dt = np.result_type(_float_of(p), _float_of(x)).type

    def slope(p, v):
        n = p.shape[0]
        acc = dt(0)
        for k in range(n - 1):
            acc = acc * v + p[k] * (n - 1 - k)
        return acc
    slope = register_jitable(slope)
    if isinstance(x, SCALARS):
        return lambda p, x: slope(p, x)

    def impl(p, x):
        out = np.empty(x.shape, dt)
        flat, xs = out.reshape(-1), np.ascontiguousarray(x).reshape(-1)
        for i in range(xs.size):
            flat[i] = slope(p, xs[i])
        return out
    return impl
