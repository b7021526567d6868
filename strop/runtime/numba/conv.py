"""Numba implementations of the convolution helpers (runtime/conv.py), for 0 to 3 spatial
dimensions of float arrays (more: the NumPy version, in an object-mode island).

Each works on 3 spatial dimensions (fewer are given leading windows of size 1) through the
kernels below, compiled apart without the bounds checks of generated code and parallel over
the batch: the patches of lhs (im2col: one row per output position, window * channels
columns) times the kernel as one BLAS product per group; the lhs transpose is that product
with the kernel transposed, added back into the patches' places (col2im); the rhs transpose,
the patches transposed times the cotangent.  (Direct loops over the window, measured beside
it on the benchmark's layer, were slower: the product is where the time goes, and BLAS does
it best.)
"""
import numba
import numpy as np
from numba import prange, types
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from ...runtime import conv as rc


# --- the kernels: lhs (N, D, H, W, C), rhs (KD, KH, KW, I, O); geometry as 3-element arrays ---

@register_jitable
def _source(p, k, s, rd, lo, ld, size):
    """The lhs index that output position ``p`` reads at window offset ``k`` along one axis,
    -1 where it reads padding or a hole of the lhs dilation."""
    q = p * s + k * rd - lo
    if q < 0 or q % ld != 0:
        return -1
    i = q // ld
    return i if i < size else -1


@numba.njit(boundscheck=False, cache=True, parallel=True)
def _patches(x, n0, nb, c0, cg, win, out_sp, s, rd, lo, ld):
    """(nb * P, K * cg): row n * P + p holds the window of output position p of lhs[n0 + n]
    (channels c0 .. c0 + cg), offset by offset."""
    pd, ph, pw = out_sp[0], out_sp[1], out_sp[2]
    kd, kh, kw = win[0], win[1], win[2]
    npos, nwin = pd * ph * pw, kd * kh * kw
    out = np.empty((nb * npos, nwin * cg), x.dtype)
    for n in prange(nb):
        for a in range(pd):
            for b in range(ph):
                for c in range(pw):
                    row = out[(n * pd + a) * ph * pw + b * pw + c]
                    for i in range(kd):
                        d0 = _source(a, i, s[0], rd[0], lo[0], ld[0], x.shape[1])
                        for j in range(kh):
                            d1 = _source(b, j, s[1], rd[1], lo[1], ld[1], x.shape[2])
                            for k in range(kw):
                                d2 = _source(c, k, s[2], rd[2], lo[2], ld[2], x.shape[3])
                                col = ((i * kh + j) * kw + k) * cg
                                if d0 < 0 or d1 < 0 or d2 < 0:
                                    for m in range(cg):
                                        row[col + m] = 0
                                else:
                                    src = x[n0 + n, d0, d1, d2]
                                    for m in range(cg):
                                        row[col + m] = src[c0 + m]
    return out


@numba.njit(boundscheck=False, cache=True, parallel=True)
def _add_patches(gx, cols, n0, nb, c0, cg, win, out_sp, s, rd, lo, ld):
    """The transpose of _patches: each row's values added back where they were read."""
    pd, ph, pw = out_sp[0], out_sp[1], out_sp[2]
    kd, kh, kw = win[0], win[1], win[2]
    for n in prange(nb):    # a sample's rows write into that sample only
        for a in range(pd):
            for b in range(ph):
                for c in range(pw):
                    row = cols[(n * pd + a) * ph * pw + b * pw + c]
                    for i in range(kd):
                        d0 = _source(a, i, s[0], rd[0], lo[0], ld[0], gx.shape[1])
                        if d0 < 0:
                            continue
                        for j in range(kh):
                            d1 = _source(b, j, s[1], rd[1], lo[1], ld[1], gx.shape[2])
                            if d1 < 0:
                                continue
                            for k in range(kw):
                                d2 = _source(c, k, s[2], rd[2], lo[2], ld[2], gx.shape[3])
                                if d2 < 0:
                                    continue
                                col = ((i * kh + j) * kw + k) * cg
                                dst = gx[n0 + n, d0, d1, d2]
                                for m in range(cg):
                                    dst[c0 + m] += row[col + m]


@register_jitable
def _groups(n, c, o, fg, bg):
    g = max(fg, bg)
    return g, n // bg, c // fg, o // g


@register_jitable
def _forward5(x, w, out_sp, s, rd, lo, ld, fg, bg):
    n, c, o = x.shape[0], x.shape[4], w.shape[4]
    g, nb, cg, og = _groups(n, c, o, fg, bg)
    win = np.array(w.shape[:3])
    npos = out_sp[0] * out_sp[1] * out_sp[2]
    wk = w.reshape((-1, o))
    if g == 1:
        return np.dot(_patches(x, 0, nb, 0, cg, win, out_sp, s, rd, lo, ld), wk)
    out = np.empty((nb * npos, o), x.dtype)
    for k in range(g):
        n0, c0 = (k * nb if bg > 1 else 0), (k * cg if fg > 1 else 0)
        cols = _patches(x, n0, nb, c0, cg, win, out_sp, s, rd, lo, ld)
        out[:, k * og:(k + 1) * og] = np.dot(cols, np.ascontiguousarray(
            wk[:, k * og:(k + 1) * og]))
    return out


@register_jitable
def _transpose_lhs5(g2, w, gx, out_sp, s, rd, lo, ld, fg, bg):
    """g2: the cotangent as (N' * P, O); gx (zeros, lhs's shape) receives the result."""
    n, c, o = gx.shape[0], gx.shape[4], w.shape[4]
    g, nb, cg, og = _groups(n, c, o, fg, bg)
    win = np.array(w.shape[:3])
    wk = w.reshape((-1, o))
    for k in range(g):
        n0, c0 = (k * nb if bg > 1 else 0), (k * cg if fg > 1 else 0)
        if g == 1:
            cols = np.dot(g2, wk.T)
        else:
            cols = np.dot(np.ascontiguousarray(g2[:, k * og:(k + 1) * og]),
                          np.ascontiguousarray(wk[:, k * og:(k + 1) * og]).T)
        _add_patches(gx, cols, n0, nb, c0, cg, win, out_sp, s, rd, lo, ld)


@register_jitable
def _transpose_rhs5(x, g2, gw, out_sp, s, rd, lo, ld, fg, bg):
    """gw (the kernel's shape, 5-D) receives the result."""
    n, c, o = x.shape[0], x.shape[4], gw.shape[4]
    g, nb, cg, og = _groups(n, c, o, fg, bg)
    win = np.array(gw.shape[:3])
    wk = gw.reshape((-1, o))
    for k in range(g):
        n0, c0 = (k * nb if bg > 1 else 0), (k * cg if fg > 1 else 0)
        cols = _patches(x, n0, nb, c0, cg, win, out_sp, s, rd, lo, ld)
        if g == 1:
            wk[:, :] = np.dot(cols.T, g2)
        else:
            wk[:, k * og:(k + 1) * og] = np.dot(cols.T, np.ascontiguousarray(
                g2[:, k * og:(k + 1) * og]))


# --- the geometry: the spatial parameters as 3-element arrays (leading ones for fewer axes) ---

def _three(t, fill):
    """The implementation that puts a tuple of ``n`` ints into the last n of 3 slots."""
    n = len(t) if isinstance(t, types.BaseTuple) else 0
    if n == 0:
        return lambda t: np.full(3, fill, np.int64)

    def impl(t):
        out = np.full(3, fill, np.int64)
        for i in range(n):
            out[3 - n + i] = t[i]
        return out
    return impl


def _ones3(t):
    pass


def _zeros3(t):
    pass


overload(_ones3)(lambda t: _three(t, 1))
overload(_zeros3)(lambda t: _three(t, 0))


def _lows(padding, in_sp, win, s, ld, rd):
    pass


@overload(_lows)
def _lows_impl(padding, in_sp, win, s, ld, rd):
    """The low padding of each axis (3 slots); the high one is implied by the output's size,
    given as _highs'."""
    return _pads(padding, 0)


def _highs(padding, in_sp, win, s, ld, rd):
    pass


@overload(_highs)
def _highs_impl(padding, in_sp, win, s, ld, rd):
    return _pads(padding, 1)


def _pads(padding, side):
    if isinstance(padding, (types.UnicodeType, types.StringLiteral)):
        def mode(padding, in_sp, win, s, ld, rd):
            out = np.zeros(3, np.int64)
            for i in range(3):
                out[i] = _mode_pad(padding, in_sp[i], win[i], s[i], ld[i], rd[i])[side]
            return out
        return mode
    n = len(padding) if isinstance(padding, types.BaseTuple) else 0
    if n == 0:
        return lambda padding, in_sp, win, s, ld, rd: np.zeros(3, np.int64)

    def pairs(padding, in_sp, win, s, ld, rd):
        out = np.zeros(3, np.int64)
        for i in range(n):
            out[3 - n + i] = padding[i][side]
        return out
    return pairs


@register_jitable
def _dilated(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


@register_jitable
def _mode_pad(mode, n, k, s, ld, rd):
    """runtime/conv.py's conv_padding along one axis (a leading axis of size 1 gets none)."""
    k = _dilated(k, rd)
    if mode == "VALID":
        return 0, 0
    if mode == "SAME" or mode == "SAME_LOWER":
        total = max((-(-n // s) - 1) * s + k - n, 0)
        lo = total // 2 if mode == "SAME" else (total + 1) // 2
        return lo, total - lo
    if mode == "TSAME":
        total = k + ld - 2
        lo = k - 1 if ld > k - 1 else -(-total // 2)
        return lo, total - lo
    if mode == "TVALID":
        return k - 1, k + ld - 2 + max(k - ld, 0) - (k - 1)
    raise ValueError("Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER'")


@register_jitable
def _geometry(in_sp, win, s, ld, rd, lo, hi):
    """The output's spatial sizes (3 slots), after the checks the sizes need."""
    out = np.zeros(3, np.int64)
    for i in range(3):
        padded = _dilated(in_sp[i], ld[i]) + lo[i] + hi[i]
        if padded < 0:
            raise ValueError("Negative padding is larger than the size of the corresponding "
                             "dimension")
        out[i] = max((padded - _dilated(win[i], rd[i])) // s[i] + 1, 0)
    return out


@register_jitable
def _check(n, c, i, o, fg, bg):
    if fg < 1 or bg < 1:
        raise ValueError("conv_general_dilated feature_group_count and batch_group_count must "
                         "be positive integers")
    if c % fg != 0 or c // fg != i:
        raise ValueError("conv_general_dilated lhs feature dimension size divided by "
                         "feature_group_count must equal the rhs input feature dimension size")
    if o % fg != 0 or o % bg != 0:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         "multiple of feature_group_count and batch_group_count")
    if bg > 1 and n % bg != 0:
        raise ValueError("conv_general_dilated batch_group_count must divide lhs batch "
                         "dimension size")
    if bg > 1 and fg > 1:
        raise ValueError("At most one of batch_group_count and feature_group_count may be > 1")


# --- 5-D views of the operands ----------------------------------------------------------

def _five(x):
    pass


@overload(_five)
def _five_impl(x):
    """x (N, *spatial, C) as (N, D, H, W, C), C-contiguous."""
    nsp = x.ndim - 2
    if nsp == 0:
        return lambda x: np.ascontiguousarray(x).reshape((x.shape[0], 1, 1, 1, x.shape[1]))
    if nsp == 1:
        return lambda x: np.ascontiguousarray(x).reshape((x.shape[0], 1, 1) + x.shape[1:])
    if nsp == 2:
        return lambda x: np.ascontiguousarray(x).reshape((x.shape[0], 1) + x.shape[1:])
    return lambda x: np.ascontiguousarray(x)


def _kernel5(w):
    pass


@overload(_kernel5)
def _kernel5_impl(w):
    """w (*window, I, O) as (KD, KH, KW, I, O), C-contiguous."""
    nsp = w.ndim - 2
    ones = (1,) * (3 - nsp)
    return lambda w: np.ascontiguousarray(w).reshape(ones + w.shape)


def _supported(*ts):
    return all(isinstance(t, types.Array) and isinstance(t.dtype, types.Float) and
               2 <= t.ndim <= 5 for t in ts) and len({t.ndim for t in ts}) == 1


def _cast(dt):
    @register_jitable
    def cast(x):
        return x.astype(dt) if x.dtype != dt else x
    return cast


def _dtype_of(*ts):
    return numba.from_dtype(np.result_type(*[as_dtype(t.dtype) for t in ts]))


@overload(rc.conv_forward)
def _conv_forward(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
                  batch_groups):
    if not _supported(lhs, rhs):
        return None
    dt = as_dtype(_dtype_of(lhs, rhs)).type
    tail = _TAILS[lhs.ndim - 2]   # the output's spatial sizes as a tuple

    def impl(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
             batch_groups):
        x, w = _five(lhs.astype(dt)), _kernel5(rhs.astype(dt))
        _check(x.shape[0], x.shape[4], w.shape[3], w.shape[4], feature_groups, batch_groups)
        s, ld, rd = _ones3(strides), _ones3(lhs_dilation), _ones3(rhs_dilation)
        in_sp, win = np.array(x.shape[1:4]), np.array(w.shape[:3])
        lo = _lows(padding, in_sp, win, s, ld, rd)
        out_sp = _geometry(in_sp, win, s, ld, rd, lo, _highs(padding, in_sp, win, s, ld, rd))
        y = _forward5(x, w, out_sp, s, rd, lo, ld, feature_groups, batch_groups)
        return y.reshape((x.shape[0] // batch_groups,) + tail(out_sp) + (w.shape[4],))
    return impl


_TAILS = (register_jitable(lambda a: ()), register_jitable(lambda a: (a[2],)),
          register_jitable(lambda a: (a[1], a[2])), register_jitable(lambda a: (a[0], a[1], a[2])))


@overload(rc.conv_transpose_lhs)
def _conv_transpose_lhs(ct, rhs, lhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                        feature_groups, batch_groups):
    if not _supported(ct, rhs):
        return None
    dt = as_dtype(_dtype_of(ct, rhs)).type

    def impl(ct, rhs, lhs_shape, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
             batch_groups):
        gx = np.zeros(lhs_shape, dt)
        x5, w = _five(gx), _kernel5(rhs.astype(dt))
        _check(x5.shape[0], x5.shape[4], w.shape[3], w.shape[4], feature_groups, batch_groups)
        s, ld, rd = _ones3(strides), _ones3(lhs_dilation), _ones3(rhs_dilation)
        in_sp, win = np.array(x5.shape[1:4]), np.array(w.shape[:3])
        lo = _lows(padding, in_sp, win, s, ld, rd)
        out_sp = _geometry(in_sp, win, s, ld, rd, lo, _highs(padding, in_sp, win, s, ld, rd))
        g = _five(ct.astype(dt))
        if g.shape[1] != out_sp[0] or g.shape[2] != out_sp[1] or g.shape[3] != out_sp[2]:
            raise ValueError("conv_transpose_lhs: the cotangent's shape is not the output's")
        g2 = g.reshape((-1, g.shape[4]))
        _transpose_lhs5(g2, w, x5, out_sp, s, rd, lo, ld, feature_groups, batch_groups)
        return gx
    return impl


@overload(rc.conv_transpose_rhs)
def _conv_transpose_rhs(lhs, ct, rhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                        feature_groups, batch_groups):
    if not _supported(lhs, ct):
        return None
    dt = as_dtype(_dtype_of(lhs, ct)).type

    def impl(lhs, ct, rhs_shape, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
             batch_groups):
        gw = np.zeros(rhs_shape, dt)
        x, w5 = _five(lhs.astype(dt)), _kernel5(gw)
        _check(x.shape[0], x.shape[4], w5.shape[3], w5.shape[4], feature_groups, batch_groups)
        s, ld, rd = _ones3(strides), _ones3(lhs_dilation), _ones3(rhs_dilation)
        in_sp, win = np.array(x.shape[1:4]), np.array(w5.shape[:3])
        lo = _lows(padding, in_sp, win, s, ld, rd)
        out_sp = _geometry(in_sp, win, s, ld, rd, lo, _highs(padding, in_sp, win, s, ld, rd))
        g = _five(ct.astype(dt))
        if g.shape[1] != out_sp[0] or g.shape[2] != out_sp[1] or g.shape[3] != out_sp[2]:
            raise ValueError("conv_transpose_rhs: the cotangent's shape is not the output's")
        _transpose_rhs5(x, g.reshape((-1, g.shape[4])), w5, out_sp, s, rd, lo, ld,
                        feature_groups, batch_groups)
        return gw
    return impl
