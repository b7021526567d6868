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
def _dilated(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


@register_jitable
def _mode_pad(mode, n, k, s, ld, rd):
    """runtime/conv.py's conv_padding along one axis, the mode as a code (_MODES)."""
    k = _dilated(k, rd)
    if mode == 1 or mode == 2:         # SAME, SAME_LOWER
        total = max((-(-n // s) - 1) * s + k - n, 0)
        lo = total // 2 if mode == 1 else (total + 1) // 2
        return lo, total - lo
    if mode == 4:                      # TSAME
        total = k + ld - 2
        lo = k - 1 if ld > k - 1 else -(-total // 2)
        return lo, total - lo
    if mode == 5:                      # TVALID
        return k - 1, k + ld - 2 + max(k - ld, 0) - (k - 1)
    return 0, 0                        # VALID


@numba.njit(boundscheck=False, cache=True)
def _geometry(n, c, i, o, in_sp, win, s, ld, rd, lo, hi, mode, fg, bg):
    """The checks the shapes need, the padding a mode means (into ``lo``, ``hi``; leading
    axes of size 1 get none), and the output's spatial sizes (3 slots)."""
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
    out = np.zeros(3, np.int64)
    for a in range(3):
        if mode > 0:
            lo[a], hi[a] = _mode_pad(mode, in_sp[a], win[a], s[a], ld[a], rd[a])
        padded = _dilated(in_sp[a], ld[a]) + lo[a] + hi[a]
        if padded < 0:
            raise ValueError("Negative padding is larger than the size of the corresponding "
                             "dimension")
        out[a] = max((padded - _dilated(win[a], rd[a])) // s[a] + 1, 0)
    return out


@numba.njit(boundscheck=False, cache=True)
def _forward5(x, w, out_sp, s, rd, lo, ld, fg, bg):
    """(N' * P, O): the convolution of 5-D x and w, one product per group."""
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


@numba.njit(boundscheck=False, cache=True)
def _transpose_lhs5(g2, w, gx, out_sp, s, rd, lo, ld, fg, bg):
    """g2: the cotangent as (N' * P, O); gx (zeros, 5-D) receives the result."""
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


@numba.njit(boundscheck=False, cache=True)
def _transpose_rhs5(x, g2, gw, out_sp, s, rd, lo, ld, fg, bg):
    """gw (zeros, 5-D) receives the result."""
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


overload(_ones3)(lambda t: _three(t, 1))

_MODES = {"SAME": 1, "SAME_LOWER": 2, "VALID": 3, "TSAME": 4, "TVALID": 5}


def _pads(padding):
    pass


@overload(_pads, prefer_literal=True)
def _pads_impl(padding):
    """(mode code, low pads, high pads): explicit pairs have mode 0; a mode's pads are
    _geometry's to find.  A mode written in the code is known when compiling."""
    if isinstance(padding, types.StringLiteral):
        code = _MODES.get(padding.literal_value, -1)
        return lambda padding: (code, np.zeros(3, np.int64), np.zeros(3, np.int64))
    if isinstance(padding, types.UnicodeType):
        def named(padding):
            code = -1
            for k, name in enumerate(("SAME", "SAME_LOWER", "VALID", "TSAME", "TVALID")):
                if padding == name:
                    code = k + 1
            return code, np.zeros(3, np.int64), np.zeros(3, np.int64)
        return named
    n = len(padding) if isinstance(padding, types.BaseTuple) else 0

    def pairs(padding):
        lo, hi = np.zeros(3, np.int64), np.zeros(3, np.int64)
        for i in range(n):
            lo[3 - n + i], hi[3 - n + i] = padding[i][0], padding[i][1]
        return 0, lo, hi
    return pairs if n else (lambda padding: (0, np.zeros(3, np.int64), np.zeros(3, np.int64)))


@register_jitable
def _setup(x5, w5, strides, padding, lhs_dilation, rhs_dilation, fg, bg):
    """(out_sp, s, rd, lo, ld) of 5-D operands (``x5`` lhs-shaped, ``w5`` rhs-shaped)."""
    s, ld, rd = _ones3(strides), _ones3(lhs_dilation), _ones3(rhs_dilation)
    mode, lo, hi = _pads(padding)
    if mode < 0:
        raise ValueError("Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER'")
    out_sp = _geometry(x5.shape[0], x5.shape[4], w5.shape[3], w5.shape[4],
                       np.array(x5.shape[1:4]), np.array(w5.shape[:3]), s, ld, rd, lo, hi,
                       mode, fg, bg)
    return out_sp, s, rd, lo, ld


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


def _dtype_of(*ts):
    return as_dtype(numba.from_dtype(np.result_type(*[as_dtype(t.dtype) for t in ts]))).type


_TAILS = (register_jitable(lambda a: ()), register_jitable(lambda a: (a[2],)),
          register_jitable(lambda a: (a[1], a[2])), register_jitable(lambda a: (a[0], a[1], a[2])))


@register_jitable
def _check_out(g, out_sp):
    if g.shape[1] != out_sp[0] or g.shape[2] != out_sp[1] or g.shape[3] != out_sp[2]:
        raise ValueError("convolution: the cotangent's shape is not the output's")


@overload(rc.conv_forward)
def _conv_forward(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
                  batch_groups):
    if not _supported(lhs, rhs):
        return None
    dt, tail = _dtype_of(lhs, rhs), _TAILS[lhs.ndim - 2]

    def impl(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
             batch_groups):
        x, w = _five(lhs.astype(dt)), _kernel5(rhs.astype(dt))
        out_sp, s, rd, lo, ld = _setup(x, w, strides, padding, lhs_dilation, rhs_dilation,
                                       feature_groups, batch_groups)
        y = _forward5(x, w, out_sp, s, rd, lo, ld, feature_groups, batch_groups)
        return y.reshape((x.shape[0] // batch_groups,) + tail(out_sp) + (w.shape[4],))
    return impl


@overload(rc.conv_transpose_lhs)
def _conv_transpose_lhs(ct, rhs, lhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                        feature_groups, batch_groups):
    if not _supported(ct, rhs):
        return None
    dt = _dtype_of(ct, rhs)

    def impl(ct, rhs, lhs_shape, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
             batch_groups):
        gx = np.zeros(lhs_shape, dt)
        x5, w = _five(gx), _kernel5(rhs.astype(dt))
        out_sp, s, rd, lo, ld = _setup(x5, w, strides, padding, lhs_dilation, rhs_dilation,
                                       feature_groups, batch_groups)
        g = _five(ct.astype(dt))
        _check_out(g, out_sp)
        _transpose_lhs5(g.reshape((-1, g.shape[4])), w, x5, out_sp, s, rd, lo, ld,
                        feature_groups, batch_groups)
        return gx
    return impl


@overload(rc.conv_transpose_rhs)
def _conv_transpose_rhs(lhs, ct, rhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                        feature_groups, batch_groups):
    if not _supported(lhs, ct):
        return None
    dt = _dtype_of(lhs, ct)

    def impl(lhs, ct, rhs_shape, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
             batch_groups):
        gw = np.zeros(rhs_shape, dt)
        x, w5 = _five(lhs.astype(dt)), _kernel5(gw)
        out_sp, s, rd, lo, ld = _setup(x, w5, strides, padding, lhs_dilation, rhs_dilation,
                                       feature_groups, batch_groups)
        g = _five(ct.astype(dt))
        _check_out(g, out_sp)
        _transpose_rhs5(x, g.reshape((-1, g.shape[4])), w5, out_sp, s, rd, lo, ld,
                        feature_groups, batch_groups)
        return gw
    return impl


# --- vmap: the lanes versions (runtime/conv.py), their flags literal booleans -------------

def _flags(*ts):
    out = []
    for t in ts:
        if isinstance(t, types.BooleanLiteral):
            out.append(t.literal_value)
        elif isinstance(t, types.Omitted):
            out.append(bool(t.value))
        else:
            return None
    return out


def _lane(batched):
    return register_jitable(lambda a, k: a[k]) if batched else \
        register_jitable(lambda a, k: a)


@register_jitable
def _fold(x):
    x = np.ascontiguousarray(x)
    return x.reshape((x.shape[0] * x.shape[1],) + x.shape[2:])


@register_jitable
def _unfold(y, v):
    return y.reshape((v, y.shape[0] // v) + y.shape[1:])


@overload(rc.conv_forward_lanes, prefer_literal=True)
def _conv_forward_lanes(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
                        batch_groups, lhs_b, rhs_b, strides_b=False, padding_b=False,
                        lhs_dilation_b=False, rhs_dilation_b=False, feature_groups_b=False,
                        batch_groups_b=False):
    flags = _flags(lhs_b, rhs_b, strides_b, padding_b, lhs_dilation_b, rhs_dilation_b,
                   feature_groups_b, batch_groups_b)
    if flags is None or any(flags[2:]):
        return None    # the Python version says why
    xl, wl, rb = _lane(flags[0]), _lane(flags[1]), flags[1]

    def impl(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
             batch_groups, lhs_b, rhs_b, strides_b=False, padding_b=False,
             lhs_dilation_b=False, rhs_dilation_b=False, feature_groups_b=False,
             batch_groups_b=False):
        if not rb and batch_groups == 1:   # a batch of images: one larger batch
            return _unfold(rc.conv_forward(_fold(lhs), rhs, strides, padding, lhs_dilation,
                                           rhs_dilation, feature_groups, 1), lhs.shape[0])
        v = len(rhs) if rb else len(lhs)
        first = rc.conv_forward(xl(lhs, 0), wl(rhs, 0), strides, padding, lhs_dilation,
                                rhs_dilation, feature_groups, batch_groups)
        out = np.empty((v,) + first.shape, first.dtype)
        out[0] = first
        for k in range(1, v):
            out[k] = rc.conv_forward(xl(lhs, k), wl(rhs, k), strides, padding, lhs_dilation,
                                     rhs_dilation, feature_groups, batch_groups)
        return out
    return impl


@overload(rc.conv_transpose_lhs_lanes, prefer_literal=True)
def _conv_transpose_lhs_lanes(ct, rhs, lhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                              feature_groups, batch_groups, ct_b, rhs_b, lhs_shape_b=False,
                              strides_b=False, padding_b=False, lhs_dilation_b=False,
                              rhs_dilation_b=False, feature_groups_b=False,
                              batch_groups_b=False):
    flags = _flags(ct_b, rhs_b, lhs_shape_b, strides_b, padding_b, lhs_dilation_b,
                   rhs_dilation_b, feature_groups_b, batch_groups_b)
    if flags is None or any(flags[2:]):
        return None
    gl, wl, cb, rb = _lane(flags[0]), _lane(flags[1]), flags[0], flags[1]

    def impl(ct, rhs, lhs_shape, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
             batch_groups, ct_b, rhs_b, lhs_shape_b=False, strides_b=False, padding_b=False,
             lhs_dilation_b=False, rhs_dilation_b=False, feature_groups_b=False,
             batch_groups_b=False):
        v = len(ct) if cb else len(rhs)
        if cb and not rb and batch_groups == 1:
            shape = (v * lhs_shape[0],) + lhs_shape[1:]
            return _unfold(rc.conv_transpose_lhs(_fold(ct), rhs, shape, strides, padding,
                                                 lhs_dilation, rhs_dilation, feature_groups,
                                                 1), v)
        out = np.empty((v,) + lhs_shape, ct.dtype)
        for k in range(v):
            out[k] = rc.conv_transpose_lhs(gl(ct, k), wl(rhs, k), lhs_shape, strides, padding,
                                           lhs_dilation, rhs_dilation, feature_groups,
                                           batch_groups)
        return out
    return impl


@overload(rc.conv_transpose_rhs_lanes, prefer_literal=True)
def _conv_transpose_rhs_lanes(lhs, ct, rhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                              feature_groups, batch_groups, lhs_b, ct_b, rhs_shape_b=False,
                              strides_b=False, padding_b=False, lhs_dilation_b=False,
                              rhs_dilation_b=False, feature_groups_b=False,
                              batch_groups_b=False):
    flags = _flags(lhs_b, ct_b, rhs_shape_b, strides_b, padding_b, lhs_dilation_b,
                   rhs_dilation_b, feature_groups_b, batch_groups_b)
    if flags is None or any(flags[2:]):
        return None
    xl, gl, xb = _lane(flags[0]), _lane(flags[1]), flags[0]

    def impl(lhs, ct, rhs_shape, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
             batch_groups, lhs_b, ct_b, rhs_shape_b=False, strides_b=False, padding_b=False,
             lhs_dilation_b=False, rhs_dilation_b=False, feature_groups_b=False,
             batch_groups_b=False):
        v = len(lhs) if xb else len(ct)
        out = np.empty((v,) + rhs_shape, np.result_type(lhs.dtype, ct.dtype))
        for k in range(v):   # each lane's kernel gradient
            out[k] = rc.conv_transpose_rhs(xl(lhs, k), gl(ct, k), rhs_shape, strides, padding,
                                           lhs_dilation, rhs_dilation, feature_groups,
                                           batch_groups)
        return out
    return impl


@overload(rc.conv_permute)
def _conv_permute(x, perm, inverse):
    if not isinstance(x, types.Array):
        return None
    return lambda x, perm, inverse: np.transpose(x, perm)


# (0, perm[0] + 1, ...) for each length of perm: the lane axis first
_SHIFTED = {n: register_jitable(eval("lambda p: (0, " + "".join(
    f"p[{i}] + 1, " for i in range(n)) + ")")) for n in range(1, 8)}


@overload(rc.conv_permute_lanes, prefer_literal=True)
def _conv_permute_lanes(x, perm, inverse, x_b, perm_b=False, inverse_b=False):
    flags = _flags(x_b, perm_b, inverse_b)
    if flags is None or any(flags[1:]) or not isinstance(x, types.Array) or \
            not isinstance(perm, types.BaseTuple) or len(perm) not in _SHIFTED:
        return None
    shifted = _SHIFTED[len(perm)]
    return lambda x, perm, inverse, x_b, perm_b=False, inverse_b=False: np.transpose(
        x, shifted(perm))
