"""Numba implementations of the convolution helpers (runtime/conv.py), for 0 to 3 spatial
dimensions of float arrays (more: the NumPy version, in an object-mode island).

Compiled code calls them through an object-mode block (``_through_numpy``): the geometry is
worked out in Python (runtime/conv.py's Geometry, JAX's checks and words), then the kernels
below run, compiled once (cached on disk), without the bounds checks of generated code.
Linked into each generated function instead, they made its LLVM module so large that
compiling a gradient took a minute; the block costs microseconds a call.

The kernels work on 3 spatial dimensions (fewer are given leading windows of size 1).  Float32
and float64 operands take the direct kernels (conv_kernels.py: register-blocked loops over the
padded lhs, no patch matrix), for every geometry: lhs dilation and padding are materialized
(a zero-filled copy of lhs), strides and kernel dilations are the kernels' own, groups are
calls per group.  The lhs transpose is the convolution of the cotangent with the flipped
kernel, its channels swapped within each group (JAX's), the same kernel; batch groups there
take the path below.  The kernels release the GIL; the output rows are split in chunks that
the calling thread and a pool of plain threads take in turn, Numba's thread count
(NUMBA_NUM_THREADS) in all: no OpenMP threads left spinning.

Measured on the benchmark's layer (benchmarks/README.md, conv), one core: the forward
kernel 90-110 GF/s, the same product through OpenBLAS (np.dot, one thread) 80-85 GF/s and
its patch matrix 1-2 ms more; OpenBLAS's two threads were slower than one on the shared
machine (2-3 other processes).

The other path (empty operands, other dtypes, batch groups of the lhs transpose): the
patches of lhs (im2col: one row per output position, window * channels columns) times the
kernel as one BLAS product per group; the lhs transpose is that product with the kernel
transposed, added back into the patches' places (col2im); the rhs transpose, the patches
transposed times the cotangent.  The products are NumPy's np.dot, never ``@`` on a
transposed operand: np.matmul runs a transposed patch matrix (unit stride on the wrong
axis) through its loop without BLAS.
"""
import itertools
import os

import numba
import numpy as np
from numba import types
from numba.extending import register_jitable
from numba.np.numpy_support import as_dtype

from ...runtime import conv as rc
from . import conv_kernels as ck
from ._common import _through_numpy, overload


# --- the kernels: lhs (N, D, H, W, C), rhs (KD, KH, KW, I, O); geometry as 3-element arrays ---

@numba.njit(boundscheck=False, cache=True)
def _patches(x, n0, nb, c0, cg, t0, t1, t2):
    """(nb * P, K * cg): row n * P + p holds the window of output position p of lhs[n0 + n]
    (channels c0 .. c0 + cg), offset by offset.  ``t0[p, k]`` (t1, t2: the other axes): the
    lhs index output position p reads at window offset k along that axis, -1 for padding or a
    hole of the lhs dilation (tables made once: no division in the loop)."""
    pd, ph, pw = t0.shape[0], t1.shape[0], t2.shape[0]
    kd, kh, kw = t0.shape[1], t1.shape[1], t2.shape[1]
    out = np.empty((nb * pd * ph * pw, kd * kh * kw * cg), x.dtype)
    for na in range(nb * pd):
        n, a = na // pd, na % pd
        for b in range(ph):
            for c in range(pw):
                row = out[(na * ph + b) * pw + c]
                for i in range(kd):
                    d0 = t0[a, i]
                    for j in range(kh):
                        d1 = t1[b, j]
                        for k in range(kw):
                            d2 = t2[c, k]
                            col = ((i * kh + j) * kw + k) * cg
                            if d0 < 0 or d1 < 0 or d2 < 0:
                                row[col:col + cg] = 0
                            else:
                                row[col:col + cg] = x[n0 + n, d0, d1, d2, c0:c0 + cg]
    return out


@numba.njit(boundscheck=False, cache=True)
def _add_patches(gx, cols, n0, nb, c0, cg, t0, t1, t2):
    """The transpose of _patches: each row's values added back where they were read."""
    pd, ph, pw = t0.shape[0], t1.shape[0], t2.shape[0]
    kd, kh, kw = t0.shape[1], t1.shape[1], t2.shape[1]
    for n in range(nb):
        for a in range(pd):
            for b in range(ph):
                for c in range(pw):
                    row = cols[((n * pd + a) * ph + b) * pw + c]
                    for i in range(kd):
                        d0 = t0[a, i]
                        if d0 < 0:
                            continue
                        for j in range(kh):
                            d1 = t1[b, j]
                            if d1 < 0:
                                continue
                            for k in range(kw):
                                d2 = t2[c, k]
                                if d2 < 0:
                                    continue
                                col = ((i * kh + j) * kw + k) * cg
                                dst = gx[n0 + n, d0, d1, d2]
                                for m in range(cg):
                                    dst[c0 + m] += row[col + m]


# --- called from compiled code through NumPy: the geometry in Python, the kernels above ----

def _five(x, dt):
    """x (N, *spatial, C) as (N, D, H, W, C), C-contiguous in ``dt``."""
    x = np.ascontiguousarray(x, dtype=dt)
    return x.reshape(x.shape[:1] + (1,) * (5 - x.ndim) + x.shape[1:])


def _kernel5(w, dt):
    w = np.ascontiguousarray(w, dtype=dt)
    return w.reshape((1,) * (5 - w.ndim) + w.shape)


def _table(n, p, k, s, rd, lo, ld):
    """[p, k]: the lhs index output position p reads at window offset k along an axis of
    ``n``, -1 for padding or a hole of the lhs dilation."""
    q = np.arange(p)[:, None] * s + np.arange(k)[None, :] * rd - lo
    i = q // ld
    return np.where((q >= 0) & (q % ld == 0) & (i < n), i, -1).astype(np.int64)


def _plan(lhs_shape, rhs_shape, strides, padding, lhs_dilation, rhs_dilation, fg, bg):
    """The Geometry (runtime/conv.py: JAX's checks and words) and the kernels' arguments:
    one index table per axis (three: leading axes of size 1 for fewer)."""
    geo = rc.Geometry(lhs_shape, rhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                      fg, bg)
    axes = list(zip(geo.lhs[1:-1], geo.out[1:-1], geo.rhs[:-2], geo.strides, geo.rd,
                    [p[0] for p in geo.pads], geo.ld))
    axes = [(1, 1, 1, 1, 1, 0, 1)] * (3 - len(axes)) + axes
    return geo, tuple(_table(*a) for a in axes) + (fg, bg)


def _group_slices(n, c, o, fg, bg):
    """(lhs batch start, channel start, output channel slice) of each group, and the sizes
    (batch per group, channels per group)."""
    g = max(fg, bg)
    nb, cg, og = n // bg, c // fg, o // g
    return [(k * nb if bg > 1 else 0, k * cg if fg > 1 else 0, slice(k * og, (k + 1) * og))
            for k in range(g)], nb, cg


# --- the direct kernels (conv_kernels.py): no patch matrix, both cores ------------------

_LANES = {np.dtype(np.float32): 16, np.dtype(np.float64): 8}   # simd.py's vectors
_pool = None


def _forget_pool():
    global _pool
    _pool = None    # a forked child has the pool's object but not its threads


os.register_at_fork(after_in_child=_forget_pool)


def _threads(flops):
    """How many threads a kernel call of ``flops`` uses: Numba's thread count (the
    NUMBA_NUM_THREADS setting, the cores by default), one for small calls."""
    return 1 if flops < 4e6 else max(1, numba.config.NUMBA_NUM_THREADS)


def _run_rows(kernel, rows, threads, make_args):
    """``kernel(*make_args(r0, r1))`` over rows 0 .. rows, in chunks on ``threads`` threads:
    this one and ``threads - 1`` of a pool of plain threads (the kernels release the GIL),
    each taking the next chunk until none is left, so a core another process holds slows
    its share only.  Returns the chunks' argument tuples."""
    global _pool
    chunks = min(rows, 1 if threads == 1 else 4 * threads)
    bounds = [(rows * k // chunks, rows * (k + 1) // chunks) for k in range(chunks)]
    calls = [make_args(r0, r1) for r0, r1 in bounds]
    if chunks == 1:
        kernel(*calls[0])
        return calls
    if _pool is None:
        from concurrent.futures import ThreadPoolExecutor
        _pool = ThreadPoolExecutor(threads - 1, thread_name_prefix="strop-conv")
    turns = itertools.count()    # next() of a count is atomic (it holds the GIL)

    def drain():
        for k in iter(turns.__next__, None):
            if k >= chunks:
                return
            kernel(*calls[k])
    helpers = [_pool.submit(drain) for _ in range(threads - 1)]
    drain()
    for f in helpers:
        f.result()
    return calls


def _blocks(og, lanes):
    """(vectors per block, blocks) covering ``og`` output channels with the least padding."""
    nv = -(-og // lanes)
    nob = -(-nv // 4)
    return -(-nv // nob), nob


def _pick(table, rv, n):
    """The kernel of ``table`` for blocks of ``rv`` vectors whose register block fits ``n``
    rows best: full blocks cost a row more than their rows (the operand loads), each row
    left over (done alone) three."""
    rows = min((m for r, m in table if r == rv), key=lambda m: (n // m) * (m + 1) + n % m * 3)
    return table[rv, rows]


def _direct_ok(geo, dt, *arrays):
    return dt in _LANES and all(a.size for a in arrays) and all(geo.out) and all(geo.rhs)


def _padded5(x, geo, dt):
    """lhs as the kernels read it: padded and dilated (zeros), (N, D, H, W, C)."""
    x = _five(x, dt)
    if any(p != (0, 0) for p in geo.pads) or any(d != 1 for d in geo.ld):
        x = _five(rc._padded(x.reshape(geo.lhs), geo), dt)
    return x


def _three(t, fill):
    return (fill,) * (3 - len(t)) + tuple(t)


def _direct_plan(geo, dt):
    """(groups, batch, lhs channels and output channels per group, vectors per block,
    blocks, block width, the kernels' strides and dilations) of a direct convolution."""
    g = max(geo.fg, geo.bg)
    nb, cg, og = geo.lhs[0] // geo.bg, geo.lhs[-1] // geo.fg, geo.rhs[-1] // g
    rv, nob = _blocks(og, _LANES[dt])
    return g, nb, cg, og, rv, nob, rv * _LANES[dt], _three(geo.strides, 1) + _three(geo.rd, 1)


def _group_offsets(geo, k, nb, cg, og):
    """Group ``k``'s first lhs batch, lhs channel and output channel."""
    return (k * nb if geo.bg > 1 else 0), (k * cg if geo.fg > 1 else 0), k * og


def _direct_forward(x, w, geo, dt):
    g, nb, cg, og, rv, nob, vw, geom = _direct_plan(geo, dt)
    o = geo.rhs[-1]
    xp, w5 = _padded5(x, geo, dt), _kernel5(w, dt)
    out5 = (nb,) + _three(geo.out[1:-1], 1) + (o,)
    out = np.empty(out5, dt)
    rows = nb * out5[1] * out5[2]
    kernel = _pick(ck.FORWARD, rv, out5[3])
    for k in range(g):
        n0, c0, o0 = _group_offsets(geo, k, nb, cg, og)
        wpk = np.zeros(w5.shape[:-1] + (nob * vw,), dt)
        wpk[..., :og] = w5[..., o0:o0 + og]
        wpk = np.ascontiguousarray(np.moveaxis(wpk.reshape(w5.shape[:-1] + (nob, vw)), -2, 0))
        dst, at = (out, o0) if og == nob * vw else (np.empty(out5[:-1] + (nob * vw,), dt), 0)
        flops = 2.0 * rows * out5[3] * np.prod(w5.shape[:3]) * cg * nob * vw
        _run_rows(kernel, rows, _threads(flops),
                  lambda r0, r1: (xp, wpk, dst, r0, r1, n0, c0, at) + geom)
        if dst is not out:
            out[..., o0:o0 + og] = dst[..., :og]
    return out.reshape(geo.out)


def _direct_wgrad(x, ct, geo, dt):
    g, nb, cg, og, rv, nob, vw, geom = _direct_plan(geo, dt)
    xp, g5 = _padded5(x, geo, dt), _five(ct, dt)
    window = _three(geo.rhs[:-2], 1)
    gw = np.empty(window + (cg, geo.rhs[-1]), dt)
    rows = nb * g5.shape[1] * g5.shape[2]
    kernel = _pick(ck.WGRAD, rv, cg)
    for k in range(g):
        n0, c0, o0 = _group_offsets(geo, k, nb, cg, og)
        if og == nob * vw:
            src, at = g5, o0
        else:
            src, at = np.zeros(g5.shape[:-1] + (nob * vw,), dt), 0
            src[..., :og] = g5[..., o0:o0 + og]
        flops = 2.0 * rows * g5.shape[3] * np.prod(window) * cg * nob * vw
        calls = _run_rows(kernel, rows, _threads(flops),
                          lambda r0, r1: (xp, src, np.zeros((nob,) + window + (cg, vw), dt),
                                          r0, r1, n0, c0, at) + geom)
        gpk = calls[0][2]
        for a in calls[1:]:
            gpk += a[2]
        gw[..., o0:o0 + og] = np.moveaxis(gpk, 0, -2).reshape(window + (cg, nob * vw))[..., :og]
    return gw.reshape(geo.rhs)


def _direct_lhs(ct, w, geo, dt):
    """The lhs transpose as a convolution (JAX's): the cotangent, dilated by the strides,
    with the kernel flipped and its channels swapped within each group."""
    nsp = len(geo.lhs) - 2
    g = geo.fg
    window = geo.rhs[:-2]
    cg, o = geo.rhs[-2], geo.rhs[-1]
    og = o // g
    wt = np.asarray(w, dt)[(slice(None, None, -1),) * nsp].reshape(window + (cg, g, og))
    wt = np.ascontiguousarray(np.swapaxes(wt, -3, -1)).reshape(window + (og, g * cg))
    pads = []
    for i in range(nsp):
        k = rc.dilated(window[i], geo.rd[i])
        lo = k - geo.pads[i][0] - 1
        hi = rc.dilated(geo.lhs[1 + i], geo.ld[i]) + k - 1 - \
            rc.dilated(geo.out[1 + i], geo.strides[i]) - lo
        pads.append((lo, hi))
    t = rc.Geometry(ct.shape, wt.shape, geo.ld, tuple(pads), geo.strides, geo.rd, g, 1)
    if t.out != geo.lhs or not _direct_ok(t, dt, ct, wt):
        return None
    return _direct_forward(ct, wt, t, dt)


def forward(lhs, rhs, *params):
    dt = np.result_type(lhs, rhs)
    geo, (t0, t1, t2, fg, bg) = _plan(lhs.shape, rhs.shape, *params)
    if _direct_ok(geo, dt, lhs, rhs):
        return _direct_forward(lhs, rhs, geo, dt)
    x, w = _five(lhs, dt), _kernel5(rhs, dt)
    wk = w.reshape(-1, w.shape[-1])
    groups, nb, cg = _group_slices(x.shape[0], x.shape[-1], w.shape[-1], fg, bg)
    if len(groups) == 1:
        return np.dot(_patches(x, 0, nb, 0, cg, t0, t1, t2), wk).reshape(geo.out)
    out = np.empty((nb * t0.shape[0] * t1.shape[0] * t2.shape[0], w.shape[-1]), dt)
    for n0, c0, outs in groups:
        out[:, outs] = np.dot(_patches(x, n0, nb, c0, cg, t0, t1, t2),
                              np.ascontiguousarray(wk[:, outs]))
    return out.reshape(geo.out)


def transpose_lhs(ct, rhs, lhs_shape, *params):
    dt = np.result_type(ct, rhs)
    geo, (t0, t1, t2, fg, bg) = _plan(tuple(lhs_shape), rhs.shape, *params)
    if ct.shape != geo.out:
        raise ValueError(f"convolution: the cotangent's shape {ct.shape} is not the "
                         f"output's {geo.out}")
    if bg == 1 and _direct_ok(geo, dt, ct, rhs):
        gx = _direct_lhs(ct, rhs, geo, dt)
        if gx is not None:
            return gx
    gx = np.zeros(lhs_shape, dt)
    gx5, w = _five(gx, dt), _kernel5(rhs, dt)
    g2, wk = _five(ct, dt).reshape(-1, ct.shape[-1]), w.reshape(-1, w.shape[-1])
    groups, nb, cg = _group_slices(gx5.shape[0], gx5.shape[-1], w.shape[-1], fg, bg)
    for n0, c0, outs in groups:
        cols = np.dot(np.ascontiguousarray(g2[:, outs]), np.ascontiguousarray(wk[:, outs]).T)
        _add_patches(gx5, cols, n0, nb, c0, cg, t0, t1, t2)
    return gx


def transpose_rhs(lhs, ct, rhs_shape, *params):
    dt = np.result_type(lhs, ct)
    geo, (t0, t1, t2, fg, bg) = _plan(lhs.shape, tuple(rhs_shape), *params)
    if ct.shape != geo.out:
        raise ValueError(f"convolution: the cotangent's shape {ct.shape} is not the "
                         f"output's {geo.out}")
    if _direct_ok(geo, dt, lhs, ct):
        return _direct_wgrad(lhs, ct, geo, dt)
    gw = np.zeros(rhs_shape, dt)
    x, g2 = _five(lhs, dt), _five(ct, dt).reshape(-1, ct.shape[-1])
    wk = gw.reshape(-1, gw.shape[-1])
    groups, nb, cg = _group_slices(x.shape[0], x.shape[-1], gw.shape[-1], fg, bg)
    for n0, c0, outs in groups:
        wk[:, outs] = np.dot(_patches(x, n0, nb, c0, cg, t0, t1, t2).T,
                             np.ascontiguousarray(g2[:, outs]))
    return gw


def _supported(*ts):
    return all(isinstance(t, types.Array) and isinstance(t.dtype, types.Float) and
               2 <= t.ndim <= 5 for t in ts) and len({t.ndim for t in ts}) == 1


def _out_type(rank, *ts):
    dt = numba.from_dtype(np.result_type(*[as_dtype(t.dtype) for t in ts]))
    return types.Array(dt, rank, "C")


@overload(rc.conv_forward)
def _conv_forward(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
                  batch_groups):
    if not _supported(lhs, rhs):
        return None
    run = _through_numpy(forward, _out_type(lhs.ndim, lhs, rhs))
    return lambda lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, feature_groups, \
        batch_groups: run((lhs, rhs, strides, padding, lhs_dilation, rhs_dilation,
                           feature_groups, batch_groups))


@overload(rc.conv_transpose_lhs)
def _conv_transpose_lhs(ct, rhs, lhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                        feature_groups, batch_groups):
    if not _supported(ct, rhs):
        return None
    run = _through_numpy(transpose_lhs, _out_type(ct.ndim, ct, rhs))
    return lambda ct, rhs, lhs_shape, strides, padding, lhs_dilation, rhs_dilation, \
        feature_groups, batch_groups: run((ct, rhs, lhs_shape, strides, padding, lhs_dilation,
                                           rhs_dilation, feature_groups, batch_groups))


@overload(rc.conv_transpose_rhs)
def _conv_transpose_rhs(lhs, ct, rhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                        feature_groups, batch_groups):
    if not _supported(lhs, ct):
        return None
    run = _through_numpy(transpose_rhs, _out_type(lhs.ndim, lhs, ct))
    return lambda lhs, ct, rhs_shape, strides, padding, lhs_dilation, rhs_dilation, \
        feature_groups, batch_groups: run((lhs, ct, rhs_shape, strides, padding, lhs_dilation,
                                           rhs_dilation, feature_groups, batch_groups))


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
