"""Helpers for the rules of NumPy's numerical routines (rules/numeric.py): differences, grids,
selection, interpolation, convolution, polynomials, order statistics, covariance and the real
eigenproblem.

Each ``*_vjp`` returns the cotangents of the arguments named in its docstring, shaped like them;
each ``*_jvp`` the output's tangent from the arguments' tangents (None: no tangent).
"""
import inspect

import numpy as np

from .base import _axes, unbroadcast
from .forward import cumprod_jvp
from .linalg import off_diagonal_inverse
from .reductions import cumprod_vjp, rev_cumsum

__all__ = ["diff_vjp", "diff_jvp", "linspace_vjp", "linspace_jvp", "select_vjp", "select_jvp",
           "convolve_vjp", "polyval_vjp_p", "polyval_slope", "interp_vjp", "interp_jvp",
           "quantile_vjp", "quantile_jvp", "cov_vjp", "cov_jvp", "eig_vjp", "eig_jvp",
           "cumulative_vjp", "cumulative_prod_jvp", "gradient_vjp", "gradient_spacing_vjp",
           "gradient_jvp", "not_differentiable"]


def not_differentiable(what):
    """Raised where a rule meets an argument it has no derivative for: never a silent zero."""
    raise NotImplementedError(f"strop has no derivative of {what}; wrap that argument in "
                              f"strop.lax.stop_gradient if none should flow, or use "
                              f"strop.custom_vjp")


def _zeros_or(t, like):
    return np.zeros(np.shape(like)) if t is None else t


# --- np.diff ---------------------------------------------------------------------------------

def _diff_parts(a, axis, prepend, append):
    """The arrays np.diff joins along ``axis`` before differencing (prepend/append broadcast)."""
    a = np.asarray(a)
    axis = axis % a.ndim
    parts = []
    for p in (prepend, None, append):
        if p is None and len(parts) != 1:
            parts.append(None)
            continue
        x = a if len(parts) == 1 else np.asarray(p)
        if x.ndim == 0:
            x = np.broadcast_to(x, a.shape[:axis] + (1,) + a.shape[axis + 1:])
        parts.append(x)
    return parts, axis


def _diff_vjp(g, a, n=1, axis=-1, prepend=None, append=None):
    """Cotangents ``(prepend, a, append)`` in ``np.diff(a, n, axis, prepend, append)``: the
    transpose of one difference (-g[0], g[0] - g[1], ..., g[-1]) taken n times, cut into parts."""
    parts, axis = _diff_parts(a, axis, prepend, append)
    g = np.moveaxis(np.asarray(g), axis, -1)
    for _ in range(n):
        zero = np.zeros(g.shape[:-1] + (1,), g.dtype)
        g = np.concatenate([zero, g], -1) - np.concatenate([g, zero], -1)
    g = np.moveaxis(g, -1, axis)
    lengths = [0 if p is None else p.shape[axis] for p in parts]
    pieces = np.split(g, np.cumsum(lengths)[:-1], axis)
    given = (prepend, a, append)
    return tuple(None if p is None else unbroadcast(piece, x)
                 for p, piece, x in zip(parts, pieces, given))


def diff_jvp(a, n, axis, prepend, append, da, dprepend, dappend):
    """Tangent of ``np.diff(a, n, axis, prepend, append)``."""
    parts, axis = _diff_parts(a, axis, prepend, append)
    ts = [None if p is None else np.broadcast_to(_zeros_or(t, p), p.shape)
          for p, t in zip(parts, (dprepend, da, dappend))]
    return np.diff(np.concatenate([t for t in ts if t is not None], axis), n, axis)


# --- np.gradient -----------------------------------------------------------------------------

def _gradient_axes(f, varargs, axis):
    """The axes np.gradient differentiates along, each with its spacing (a number or the
    coordinates along that axis)."""
    ndim = np.ndim(f)
    axes = range(ndim) if axis is None else (axis,) if np.ndim(axis) == 0 else axis
    axes = [int(a) % ndim for a in axes]
    spacing = [1.0] * len(axes) if not varargs else list(varargs) * len(axes) \
        if len(varargs) == 1 and np.ndim(varargs[0]) == 0 else list(varargs)
    return axes, spacing


def _gradient_weights(n, h, edge_order):
    """np.gradient along one axis of length n as a banded matrix: row i reads the columns
    start_i + j (j = 0, 1, 2; start_i = i - 1 inside, the edge's window at the ends) with the
    weights ``w[j, i]``.  Found by differencing three combs (ones at the positions of each
    residue mod 3), as each window holds one column of each residue: exactly NumPy's weights,
    whatever the spacing or edge order."""
    combs = (np.arange(n) % 3 == np.arange(3)[:, None]) * 1.0
    c = np.gradient(combs, h, axis=1, edge_order=edge_order)
    start = np.clip(np.arange(n) - 1, 0, max(n - 3, 0))
    residue = (start + np.arange(3)[:, None]) % 3
    return np.where(start + np.arange(3)[:, None] < n,
                    np.take_along_axis(c, residue, 0), 0.0)


def _stencil_transpose(gk, w):
    """The banded matrix of _gradient_weights, transposed, applied along gk's last axis; built
    from slices and joins only (a helper differentiated again, for hessians, must not write
    into views)."""
    n, lead = gk.shape[-1], gk.shape[:-1]
    parts = [w[j] * gk for j in range(3)]
    if n < 3:           # both rows read columns 0 and 1
        return np.concatenate([np.sum(parts[j], -1, keepdims=True) for j in range(n)], -1)
    out = np.zeros(gk.shape)
    for j in range(3):
        zeros = [np.zeros(lead + (k,)) for k in (j, 2 - j, n - 1 - j, n - 3 + j)]
        out = out + np.concatenate([zeros[0], parts[j][..., 1:n - 1], zeros[1]], -1)
        out = out + np.concatenate([zeros[0], parts[j][..., :1], zeros[2]], -1)
        out = out + np.concatenate([zeros[3], parts[j][..., n - 1:], zeros[1]], -1)
    return out


def gradient_vjp(g, f, varargs, axis=None, edge_order=1):
    """Cotangent of ``f`` in ``np.gradient(f, *varargs, axis, edge_order)``: each output's
    cotangent through the transpose of its axis's stencil (a linear map of f)."""
    axes, spacing = _gradient_axes(f, varargs, axis)
    gs = (g,) if len(axes) == 1 and not isinstance(g, (tuple, list)) else g
    out = np.zeros(np.shape(f))
    for a, h, gk in zip(axes, spacing, gs):
        if gk is not None:
            w = _gradient_weights(np.shape(f)[a], h, edge_order)
            moved = _stencil_transpose(np.moveaxis(np.asarray(gk), a, -1), w)
            out = out + np.moveaxis(moved, -1, a)
    return out


def gradient_spacing_vjp(g, f, varargs, axis, edge_order, ans):
    """Cotangents of the spacings ``varargs``: a number h scales the outputs along its axes by
    1/h, so its cotangent is -<g, out>/h summed over them; coordinates have no rule here."""
    axes, spacing = _gradient_axes(f, varargs, axis)
    gs, outs = ((g,), (ans,)) if len(axes) == 1 else (g, ans)
    cots = []
    for i, h in enumerate(varargs):
        if np.ndim(h):
            not_differentiable("np.gradient in its coordinates (an array spacing)")
        ks = range(len(axes)) if len(varargs) == 1 else (i,)
        cots.append(-sum(np.sum(np.asarray(gs[k]) * outs[k]) for k in ks
                         if gs[k] is not None) / h)
    return tuple(cots)


def gradient_jvp(f, varargs, axis, edge_order, df, dvarargs, ans):
    """Tangent of ``np.gradient``: linear in f; each number spacing h adds -dh out / h."""
    axes, spacing = _gradient_axes(f, varargs, axis)
    out = np.gradient(_zeros_or(df, f) * 1.0, *varargs, axis=axis, edge_order=edge_order)
    outs = [out] if len(axes) == 1 else list(out)
    for i, dh in enumerate(dvarargs or ()):
        if dh is None or not np.any(dh):
            continue
        if np.ndim(varargs[i]):
            not_differentiable("np.gradient in its coordinates (an array spacing)")
        for k in (range(len(axes)) if len(varargs) == 1 else (i,)):
            outs[k] = outs[k] - dh * (ans if len(axes) == 1 else ans[k]) / varargs[i]
    return outs[0] if len(axes) == 1 else type(out)(outs)


# --- np.linspace -----------------------------------------------------------------------------

def _linspace_weights(start, stop, num, endpoint, axis):
    """The weight of ``stop`` in each sample (shaped to broadcast along the output's ``axis``),
    the step's divisor, and the output's axis as a non-negative number."""
    div = (num - 1) if endpoint else num
    t = np.arange(num) / div if div > 0 else np.zeros(num)
    ndim = np.ndim(np.broadcast_arrays(start, stop)[0]) + 1
    axis = axis % ndim
    return np.reshape(t, (num,) + (1,) * (ndim - 1 - axis)), div, axis


def _linspace_vjp(g, start, stop, num=50, endpoint=True, retstep=False, axis=0):
    """Cotangents ``(start, stop)`` in ``np.linspace``: each sample is start + t (stop - start)."""
    t, div, axis = _linspace_weights(start, stop, num, endpoint, axis)
    gy, gstep = g if retstep else (g, None)
    gy = np.asarray(gy)
    gs, ge = np.sum(gy * (1 - t), axis=axis), np.sum(gy * t, axis=axis)
    if gstep is not None and div > 0:
        gs, ge = gs - gstep / div, ge + gstep / div
    return unbroadcast(gs, start), unbroadcast(ge, stop)


def linspace_jvp(start, stop, num, endpoint, retstep, axis, dstart, dstop):
    t, div, axis = _linspace_weights(start, stop, num, endpoint, axis)
    ds, de = _zeros_or(dstart, start), _zeros_or(dstop, stop)
    ds, de = np.expand_dims(ds, axis) if np.ndim(ds) else ds, np.expand_dims(de, axis) if np.ndim(de) else de
    dy = ds * (1 - t) + de * t
    shape = np.shape(np.linspace(start, stop, num, endpoint=endpoint, axis=axis))
    dy = np.broadcast_to(dy, shape) * 1.0
    if retstep:
        return dy, (_zeros_or(dstop, stop) - _zeros_or(dstart, start)) / div if div > 0 else 0.0
    return dy


# --- np.select -------------------------------------------------------------------------------

def _select_taken(condlist):
    """For each condition, where it is the first one true; and where none is."""
    taken, seen = [], False
    for c in condlist:
        c = np.asarray(c, bool)
        taken.append(c & ~seen)
        seen = seen | c
    return taken, ~seen


def _select_vjp(g, condlist, choicelist, default=0):
    """Cotangents ``(choicelist, default)`` in ``np.select``: g where each was chosen."""
    taken, none = _select_taken(condlist)
    shape = np.shape(g)
    gc = [unbroadcast(np.where(np.broadcast_to(t, shape), g, 0.0), c)
          for t, c in zip(taken, choicelist)]
    return gc, unbroadcast(np.where(np.broadcast_to(none, shape), g, 0.0), default)


def select_jvp(condlist, choicelist, default, dchoicelist, ddefault, ans):
    dc = [_zeros_or(d, c) for d, c in zip(dchoicelist or [None] * len(choicelist), choicelist)]
    out = np.select(condlist, dc, _zeros_or(ddefault, default))
    return np.broadcast_to(out, np.shape(ans)) * 1.0


# --- np.convolve -----------------------------------------------------------------------------

def _convolve_vjp(g, a, v, mode="full"):
    """Cotangents ``(a, v)`` in ``np.convolve(a, v, mode)``: g placed in the full convolution,
    correlated with the other factor."""
    n, m = np.size(a), np.size(v)
    full = np.zeros(n + m - 1, np.result_type(g, 1.0))
    mode = {"f": "full", "s": "same", "v": "valid"}.get(str(mode)[:1], mode)
    start = {"full": 0, "same": (min(n, m) - 1) // 2, "valid": min(n, m) - 1}[mode]
    full[start:start + np.size(g)] = g
    return np.correlate(full, v, "valid"), np.correlate(full, a, "valid")


# --- np.polyval ------------------------------------------------------------------------------

def polyval_vjp_p(g, p, x):
    """Cotangent of the coefficients in ``np.polyval(p, x)``: g times x to each power, summed."""
    p = np.asarray(p)
    powers = np.asarray(x, float)[..., None] ** np.arange(p.shape[0] - 1, -1, -1)
    return np.sum(np.asarray(g)[..., None] * powers, axis=tuple(range(powers.ndim - 1)))


def polyval_slope(p, x):
    """d polyval(p, x) / dx."""
    p = np.asarray(p)
    return np.polyval(np.polyder(p), x) if p.shape[0] > 1 else np.zeros(np.shape(x))


# --- np.interp -------------------------------------------------------------------------------

def _interp_parts(x, xp, fp, period):
    if period is not None:
        not_differentiable("np.interp with period=")
    x, xp, fp = np.asarray(x, float), np.asarray(xp, float), np.asarray(fp, float)
    j = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, len(xp) - 2)
    width = xp[j + 1] - xp[j]
    t = (x - xp[j]) / width
    slope = (fp[j + 1] - fp[j]) / width
    below, above = x < xp[0], x > xp[-1]
    inside = ~below & ~above
    return j, t, slope, below, above, inside


def _interp_vjp(g, x, xp, fp, left=None, right=None, period=None):
    """Cotangents ``(x, xp, fp, left, right)`` in ``np.interp``.  Inside [xp[0], xp[-1]] the
    value fp[j] + (x - xp[j]) s, s the slope of the segment j; outside, left/right (fp's end
    values when None)."""
    j, t, slope, below, above, inside = _interp_parts(x, xp, fp, period)
    g = np.broadcast_to(np.asarray(g, float), np.shape(t))
    gi = np.where(inside, g, 0.0)
    n = len(xp)
    gfp = np.bincount(j.ravel(), (gi * (1 - t)).ravel(), n) + np.bincount(
        (j + 1).ravel(), (gi * t).ravel(), n)
    gxp = np.bincount(j.ravel(), (-gi * slope * (1 - t)).ravel(), n) + np.bincount(
        (j + 1).ravel(), (-gi * slope * t).ravel(), n)
    gleft, gright = np.sum(np.where(below, g, 0.0)), np.sum(np.where(above, g, 0.0))
    if left is None:
        gfp[0] += gleft
    if right is None:
        gfp[-1] += gright
    return (unbroadcast(gi * slope, x), gxp, gfp,
            None if left is None else unbroadcast(gleft, left),
            None if right is None else unbroadcast(gright, right))


def interp_jvp(x, xp, fp, left, right, period, dx, dxp, dfp, dleft, dright):
    j, t, slope, below, above, inside = _interp_parts(x, xp, fp, period)
    out = np.zeros(np.shape(t))
    if dx is not None:
        out = out + np.where(inside, dx * slope, 0.0)
    if dxp is not None:
        dxp = np.asarray(dxp)
        out = out + np.where(inside, -slope * (dxp[j] * (1 - t) + dxp[j + 1] * t), 0.0)
    if dfp is not None:
        dfp = np.asarray(dfp)
        out = out + np.where(inside, dfp[j] * (1 - t) + dfp[j + 1] * t, 0.0)
        out = out + np.where(below, dfp[0] if left is None else 0.0, 0.0)
        out = out + np.where(above, dfp[-1] if right is None else 0.0, 0.0)
    if dleft is not None:
        out = out + np.where(below, dleft, 0.0)
    if dright is not None:
        out = out + np.where(above, dright, 0.0)
    return out if np.ndim(x) else out[()]


# --- np.median, np.quantile, np.percentile (and their nan variants) ----------------------------

def _quantile_weights(a, q, axis, method, nan):
    """The weight of each element of ``a`` in each quantile, (q..., rest..., n) with the reduced
    axes moved last and flattened; the slope of each quantile in q; the transposition used."""
    a = np.asarray(a, float)
    axes = _axes(a, axis)
    order = [i for i in range(a.ndim) if i not in axes] + axes
    moved = np.transpose(a, order)
    rest = moved.shape[:a.ndim - len(axes)]
    flat = np.reshape(moved, rest + (-1,))
    n = flat.shape[-1]
    idx = np.argsort(flat, axis=-1)                       # NaN last
    s = np.take_along_axis(flat, idx, -1)
    count = np.sum(~np.isnan(flat), -1) if nan else np.full(rest, n)
    q = np.asarray(q, float)
    pos = q.reshape(q.shape + (1,) * len(rest)) * (np.maximum(count, 1) - 1)
    lo = np.floor(pos)
    frac = pos - lo
    if method == "linear":
        t = frac
    elif method == "lower":
        t = 0.0 * frac
    elif method == "higher":
        lo, t = np.ceil(pos), 0.0 * frac
    elif method == "nearest":
        lo, t = np.around(pos), 0.0 * frac
    elif method == "midpoint":
        t = np.where(frac > 0, 0.5, 0.0)
    else:
        not_differentiable(f"np.quantile with method={repr(method)} (linear, lower, higher, "
                           f"nearest and midpoint are differentiated)")
    j = lo.astype(np.intp)
    jn = np.minimum(j + 1, np.maximum(count, 1) - 1)
    k = np.arange(n)
    w = (k == j[..., None]) * (1 - t)[..., None] + (k == jn[..., None]) * t[..., None]
    w = np.take_along_axis(w, np.broadcast_to(np.argsort(idx, -1), w.shape), -1)
    sj = np.take_along_axis(np.broadcast_to(s, w.shape), j[..., None] + 0 * w[..., :1].astype(np.intp), -1)[..., 0]
    sn = np.take_along_axis(np.broadcast_to(s, w.shape), jn[..., None] + 0 * w[..., :1].astype(np.intp), -1)[..., 0]
    slope = (sn - sj) * (np.maximum(count, 1) - 1) if method == "linear" else 0.0 * sj
    return w, slope, order, moved.shape, q.ndim


def _quantile_vjp(g, a, q, axis=None, method="linear", nan=False, scale=1.0):
    """Cotangents ``(a, q)`` in ``np.quantile(a, q, axis)`` (``scale`` 1/100 for percentile,
    ``q`` 0.5 for median; ``nan``: the nan-ignoring variant).  Ties and the elements between
    which a quantile falls share as np.quantile weighs them."""
    w, slope, order, moved_shape, qdim = _quantile_weights(a, np.asarray(q) * scale, axis,
                                                           method, nan)
    g = np.reshape(g, w.shape[:-1])
    ga = np.sum(g[..., None] * w, axis=tuple(range(qdim)))
    ga = np.transpose(np.reshape(ga, moved_shape), np.argsort(order))
    gq = np.sum(g * slope, axis=tuple(range(qdim, g.ndim))) * scale
    return ga, gq


def quantile_jvp(a, q, axis, method, nan, scale, da, dq, ans):
    w, slope, order, moved_shape, qdim = _quantile_weights(a, np.asarray(q) * scale, axis,
                                                           method, nan)
    out = np.zeros(w.shape[:-1])
    if da is not None:
        d = np.reshape(np.transpose(np.asarray(da, float), order), w.shape[qdim:])
        out = out + np.sum(w * d, -1)
    if dq is not None:
        out = out + slope * np.reshape(dq, np.shape(dq) + (1,) * (out.ndim - np.ndim(dq))) * scale
    return np.reshape(out, np.shape(ans))


# --- np.cov ----------------------------------------------------------------------------------

def _cov_layout(m, y, rowvar, bias, ddof, fweights, aweights):
    """As np.cov lays out its data: the variables by observations matrix X (with the rows of y
    after those of m), the observation weights, their mean of X, and the divisor."""
    def rows(v):
        v = np.atleast_2d(np.asarray(v, float))
        return v.T if not rowvar and v.shape[0] != 1 else v
    parts = [rows(m)] + ([] if y is None else [rows(y)])
    X = np.concatenate(parts, 0)
    ddof = (0 if bias else 1) if ddof is None else ddof
    w = np.ones(X.shape[1])
    if fweights is not None:
        w = w * np.asarray(fweights, float)
    if aweights is not None:
        w = w * np.asarray(aweights, float)
    wsum = np.sum(w)
    if fweights is None and aweights is None:
        fact = X.shape[1] - ddof
    elif ddof == 0:
        fact = wsum
    elif aweights is None:
        fact = wsum - ddof
    else:
        fact = wsum - ddof * np.sum(w * np.asarray(aweights, float)) / wsum
    avg = np.sum(X * w, 1, keepdims=True) / wsum
    return X, w, avg, fact, [p.shape[0] for p in parts]


def _cov_unlayout(gX, v, rowvar):
    v2 = np.atleast_2d(np.asarray(v))
    gX = gX.T if not rowvar and v2.shape[0] != 1 else gX
    return np.reshape(gX, np.shape(v))


def _cov_vjp(g, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """Cotangents ``(m, y)`` in ``np.cov``: C = Xc W Xcᵀ / fact with Xc = X - avg(X)."""
    X, w, avg, fact, nrows = _cov_layout(m, y, rowvar, bias, ddof, fweights, aweights)
    k = X.shape[0]
    G = np.reshape(g, (k, k))
    gXc = (G + G.T) @ ((X - avg) * w) / fact
    gX = gXc - np.sum(gXc, 1, keepdims=True) * w / np.sum(w)
    gm = _cov_unlayout(gX[:nrows[0]], m, rowvar)
    return gm, None if y is None else _cov_unlayout(gX[nrows[0]:], y, rowvar)


def cov_jvp(m, y, rowvar, bias, ddof, fweights, aweights, dm, dy, ans):
    X, w, avg, fact, nrows = _cov_layout(m, y, rowvar, bias, ddof, fweights, aweights)
    dX, _, davg, _, _ = _cov_layout(_zeros_or(dm, m), None if y is None else _zeros_or(dy, y),
                                    rowvar, bias, ddof, fweights, aweights)
    Xc, dXc = (X - avg) * w, dX - davg
    dC = (dXc @ Xc.T + Xc @ dXc.T) / fact
    return np.reshape(dC, np.shape(ans))


# --- np.linalg.eig, for a real matrix with real eigenvalues ----------------------------------

def _eig_real(ans):
    w, v = ans
    if np.iscomplexobj(w) or np.iscomplexobj(v):
        raise NotImplementedError(
            "strop differentiates np.linalg.eig only for a real matrix whose eigenvalues are "
            "real (this one has complex eigenvalues); for a symmetric matrix use "
            "np.linalg.eigh")
    return w, v


def eig_vjp(g, ans):
    """Cotangent of ``a`` in ``w, v = np.linalg.eig(a)`` (v's columns of unit norm, as NumPy
    returns them): ``v⁻ᵀ (diag(gw) + F ∘ vᵀ ḡv) vᵀ`` with ḡv = gv - v diag(vᵀ gv) (the norm
    kept) and F_ij = 1 / (w_j - w_i) off the diagonal.  Needs distinct eigenvalues when the
    vectors are used."""
    w, v = _eig_real(ans)
    gw, gv = g
    inner = np.zeros(np.shape(v))
    if gw is not None:
        inner = inner + np.asarray(gw)[..., None, :] * np.eye(w.shape[-1])
    if gv is not None and np.any(gv):
        gv = gv - v * np.sum(v * gv, axis=-2, keepdims=True)
        inner = inner + off_diagonal_inverse(w[..., None, :] - w[..., :, None]) * (
            np.swapaxes(v, -1, -2) @ gv)
    vt = np.swapaxes(v, -1, -2)
    return np.linalg.solve(vt, inner @ vt)


def eig_jvp(da, ans, which=None):
    """Tangents ``(dw, dv)`` of ``np.linalg.eig(a)``: with C = v⁻¹ da v, dw = diag(C) and
    dv = v (F ∘ C) less each column's component along itself (the unit norm kept)."""
    w, v = _eig_real(ans)
    C = np.linalg.solve(v, da @ v)
    dw = np.diagonal(C, axis1=-2, axis2=-1)
    dv = v @ (off_diagonal_inverse(w[..., None, :] - w[..., :, None]) * C)
    dv = dv - v * np.sum(v * dv, axis=-2, keepdims=True)
    return (dw, dv) if which is None else (dw, dv)[which]


# --- NumPy 2's cumulative_sum / cumulative_prod ------------------------------------------------

def cumulative_vjp(g, x, axis=None, include_initial=False, prod=False):
    """Cotangent of ``x`` in ``np.cumulative_sum`` (``prod``: cumulative_prod); an initial
    element included carries no derivative."""
    axis = 0 if axis is None else axis
    if include_initial:
        g = np.take(g, np.arange(1, np.shape(g)[axis]), axis)
    return cumprod_vjp(g, x, axis) if prod else rev_cumsum(g, axis)


def cumulative_prod_jvp(dx, x, axis=None, include_initial=False):
    axis = 0 if axis is None else axis
    out = cumprod_jvp(dx, x, axis)
    if include_initial:
        zero = np.zeros_like(np.take(out, [0], axis))
        out = np.concatenate([zero, out], axis)
    return out


def _one(fn):
    """The helper returning one of ``fn``'s cotangents (``which``), so that a template's result
    is an array, not a tuple (vmap runs such helpers lane by lane).  It has ``fn``'s own
    parameters, not ``*args``: Numba binds keywords after star arguments wrongly."""
    params = inspect.signature(fn).parameters.values()
    defaults = {f"_default_{p.name}": p.default for p in params if p.default is not p.empty}
    head = ", ".join(p.name if p.default is p.empty else f"{p.name}=_default_{p.name}"
                     for p in params)
    names = ", ".join(p.name for p in params)
    space = {"fn": fn, **defaults}
    exec(f"def helper({head}, which=0):\n    return fn({names})[which]\n", space)
    helper = space["helper"]
    helper.__name__ = helper.__qualname__ = fn.__name__[1:]
    helper.__module__ = __name__
    helper.__doc__ = fn.__doc__
    return helper


diff_vjp, linspace_vjp, select_vjp, convolve_vjp, interp_vjp, quantile_vjp, cov_vjp = map(
    _one, (_diff_vjp, _linspace_vjp, _select_vjp, _convolve_vjp, _interp_vjp, _quantile_vjp,
           _cov_vjp))
