"""The convolution strop.lax's conv functions become (strop/lax/conv.py resolves their layouts),
and its two transposes.  Plain NumPy; the compiled versions are in numba/conv.py, the rules in
transformer/rules/conv.py.

One layout, channels last: ``lhs`` (N, *spatial, C), ``rhs`` (*window, I, O), the output
(N', *spatial', O): a patch of ``lhs`` times ``rhs`` flattened to (window * I, O) is one
matrix product.  Every parameter is static except ``padding`` may be a mode resolved from the
shapes when the code runs (``"SAME"``, ``"SAME_LOWER"``, ``"VALID"``; ``"TSAME"``, ``"TVALID"``:
conv_transpose's, the stride being ``lhs_dilation``), so the three functions agree on it.

    conv_forward(lhs, rhs, ...)                  out[n, p, o] = sum_kc x[n, p*s + k*d, c] w[k, c, o]
    conv_transpose_lhs(ct, rhs, lhs_shape, ...)  its transpose in lhs (d out / d lhs applied to ct)
    conv_transpose_rhs(lhs, ct, rhs_shape, ...)  its transpose in rhs

(x: ``lhs`` dilated by ``lhs_dilation`` and padded).  All three are bilinear, and each one's
derivatives are the other two: the rules are three lines each, second order included.
Groups: ``feature_groups`` G splits C into G blocks, each convolved with its block of O;
``batch_groups`` B splits N into B blocks (N' = N / B), each with its block of O.
"""
import itertools

import numpy as np

__all__ = ["conv_forward", "conv_transpose_lhs", "conv_transpose_rhs", "conv_padding",
           "conv_permute", "conv_forward_lanes", "conv_transpose_lhs_lanes",
           "conv_transpose_rhs_lanes", "conv_permute_lanes"]

PARAMS = "strides, padding, lhs_dilation, rhs_dilation, feature_groups, batch_groups"
MODES = ("SAME", "SAME_LOWER", "VALID", "TSAME", "TVALID")


def dilated(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


def conv_padding(padding, in_sp, window, strides, lhs_dilation, rhs_dilation):
    """The (low, high) pairs ``padding`` means for these spatial sizes (JAX's padtype_to_pads
    and, for TSAME/TVALID, conv_transpose's _conv_transpose_padding)."""
    if not isinstance(padding, str):
        return tuple((int(lo), int(hi)) for lo, hi in padding)
    out = []
    for n, k, s, ld, rd in zip(in_sp, window, strides, lhs_dilation, rhs_dilation):
        k = dilated(k, rd)
        if padding == "VALID":
            out.append((0, 0))
        elif padding in ("SAME", "SAME_LOWER"):
            total = max((-(-n // s) - 1) * s + k - n, 0)
            lo = total // 2 if padding == "SAME" else (total + 1) // 2
            out.append((lo, total - lo))
        elif padding == "TSAME":    # the stride of conv_transpose is the lhs dilation
            total = k + ld - 2
            lo = k - 1 if ld > k - 1 else -(-total // 2)
            out.append((lo, total - lo))
        elif padding == "TVALID":
            out.append((k - 1, k + ld - 2 + max(k - ld, 0) - (k - 1)))
        else:
            raise ValueError(f"Unrecognized padding type: expected 'VALID', 'SAME', or "
                             f"'SAME_LOWER', got {padding}.")
    return tuple(out)


def out_shape(lhs_shape, rhs_shape, strides, pads, lhs_dilation, rhs_dilation, batch_groups):
    """The output's shape (channels last), after the checks the shapes need."""
    nsp = len(lhs_shape) - 2
    if len(rhs_shape) != nsp + 2:
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    sizes = []
    for n, k, s, (lo, hi), ld, rd in zip(lhs_shape[1:-1], rhs_shape[:-2], strides, pads,
                                         lhs_dilation, rhs_dilation):
        padded = dilated(n, ld) + lo + hi
        if padded < 0:
            raise ValueError(f"Negative padding is larger than the size of the corresponding "
                             f"dimension: got padding={pads} for spatial shape "
                             f"{tuple(lhs_shape[1:-1])}")
        sizes.append(max((padded - dilated(k, rd)) // s + 1, 0))
    return (lhs_shape[0] // batch_groups,) + tuple(sizes) + (rhs_shape[-1],)


def check_channels(lhs_shape, rhs_shape, feature_groups, batch_groups):
    """JAX's checks of the feature and batch dimensions (conv_general_dilated's shape rule)."""
    c, i, o, n = lhs_shape[-1], rhs_shape[-2], rhs_shape[-1], lhs_shape[0]
    for what, count in (("feature_group_count", feature_groups),
                        ("batch_group_count", batch_groups)):
        if not count > 0:
            raise ValueError(f"conv_general_dilated {what} must be a positive integer, got "
                             f"{count}.")
    if c % feature_groups:
        raise ValueError(f"conv_general_dilated feature_group_count must divide lhs feature "
                         f"dimension size, but {feature_groups} does not divide {c}.")
    if c // feature_groups != i:
        raise ValueError(f"conv_general_dilated lhs feature dimension size divided by "
                         f"feature_group_count must equal the rhs input feature dimension "
                         f"size, but {c} // {feature_groups} != {i}.")
    if o % feature_groups:
        raise ValueError(f"conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of feature_group_count, but {o} is not a multiple of "
                         f"{feature_groups}.")
    if batch_groups > 1 and n % batch_groups:
        raise ValueError(f"conv_general_dilated batch_group_count must divide lhs batch "
                         f"dimension size, but {batch_groups} does not divide {n}.")
    if o % batch_groups:
        raise ValueError(f"conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of batch_group_count, but {o} is not a multiple of "
                         f"{batch_groups}.")
    if batch_groups > 1 and feature_groups > 1:
        raise ValueError(f"At most one of batch_group_count and feature_group_count may be "
                         f"> 1, got batch_group_count={batch_groups} and "
                         f"feature_group_count={feature_groups}")


class Geometry:
    """What the three functions share: the resolved padding, the shapes, the groups."""

    def __init__(self, lhs_shape, rhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                 feature_groups, batch_groups):
        lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
        nsp = len(lhs_shape) - 2
        strides, ld, rd = (tuple(int(v) for v in t) for t in (strides, lhs_dilation,
                                                                rhs_dilation))
        if not (len(strides) == len(ld) == len(rd) == nsp):
            raise ValueError(f"convolution: window_strides {strides}, lhs_dilation {ld} and "
                             f"rhs_dilation {rd} must each have one entry per spatial "
                             f"dimension ({nsp})")
        check_channels(lhs_shape, rhs_shape, feature_groups, batch_groups)
        self.pads = conv_padding(padding, lhs_shape[1:-1], rhs_shape[:-2], strides, ld, rd)
        self.out = out_shape(lhs_shape, rhs_shape, strides, self.pads, ld, rd, batch_groups)
        self.lhs, self.rhs, self.strides, self.ld, self.rd = lhs_shape, rhs_shape, strides, ld, rd
        self.fg, self.bg = feature_groups, batch_groups

    def groups(self):
        """(lhs batch slice, lhs channel slice, output channel slice) of each group."""
        n, c, o = self.lhs[0], self.lhs[-1], self.rhs[-1]
        g = max(self.fg, self.bg)
        nb = n // self.bg
        for k in range(g):
            rows = slice(k * nb, (k + 1) * nb) if self.bg > 1 else slice(None)
            chans = slice(k * (c // self.fg), (k + 1) * (c // self.fg)) if self.fg > 1 \
                else slice(None)
            yield rows, chans, slice(k * (o // g), (k + 1) * (o // g))

    def padded_shape(self):
        return (self.lhs[0],) + tuple(dilated(n, d) + lo + hi for n, d, (lo, hi) in zip(
            self.lhs[1:-1], self.ld, self.pads)) + (self.lhs[-1],)

    def placement(self):
        """(index into the padded lhs, index into lhs): where lhs's elements land (the ones
        negative padding crops left out)."""
        dst, src = [slice(None)], [slice(None)]
        for n, d, (lo, _), size in zip(self.lhs[1:-1], self.ld, self.pads,
                                       self.padded_shape()[1:-1]):
            first = max(0, -(-(-lo) // d))            # the first i with lo + i*d >= 0
            last = min(n - 1, (size - 1 - lo) // d)   # the last with lo + i*d < size
            if last < first:
                first, last = 0, -1
            dst.append(slice(lo + first * d, lo + last * d + 1, d) if last >= first
                       else slice(0, 0))
            src.append(slice(first, last + 1))
        return tuple(dst + [slice(None)]), tuple(src + [slice(None)])

    def windows(self):
        """(kernel offset, index into the padded lhs) for each offset of the window: the
        elements each output position reads at that offset."""
        for k in itertools.product(*(range(n) for n in self.rhs[:-2])):
            index = tuple(slice(j * d, j * d + (p - 1) * s + 1, s) if p > 0 else slice(0, 0)
                          for j, d, p, s in zip(k, self.rd, self.out[1:-1], self.strides))
            yield k, (slice(None),) + index + (slice(None),)


def _dtype(*xs):
    return np.result_type(*xs)


def _padded(x, geo):
    out = np.zeros(geo.padded_shape(), x.dtype)
    dst, src = geo.placement()
    out[dst] = x[src]
    return out


def conv_permute(x, perm, inverse):
    """``np.transpose(x, perm)``, ``inverse`` the inverse permutation: a layout brought to the
    canonical one and back, with a rule that needs no arithmetic on ``perm``."""
    return np.transpose(x, perm)


def conv_forward(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
                 batch_groups):
    """The convolution (channels last; module docstring)."""
    x, w = np.asarray(lhs), np.asarray(rhs)
    geo = Geometry(x.shape, w.shape, strides, padding, lhs_dilation, rhs_dilation,
                    feature_groups, batch_groups)
    dt = _dtype(x, w)
    xp = _padded(x.astype(dt, copy=False), geo)
    out = np.zeros(geo.out, dt)
    for rows, chans, outs in geo.groups():
        o = out[..., outs]
        for k, index in geo.windows():
            o += np.matmul(xp[index][rows][..., chans], w[k][:, outs].astype(dt, copy=False))
    return out


def conv_transpose_lhs(ct, rhs, lhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                       feature_groups, batch_groups):
    """The transpose of conv_forward in ``lhs`` applied to ``ct`` (an output's cotangent): the
    lhs of shape ``lhs_shape`` whose inner product with x equals ``ct``'s with
    conv_forward(x, rhs)."""
    g, w = np.asarray(ct), np.asarray(rhs)
    geo = Geometry(lhs_shape, w.shape, strides, padding, lhs_dilation, rhs_dilation,
                    feature_groups, batch_groups)
    dt = _dtype(g, w)
    gp = np.zeros(geo.padded_shape(), dt)
    for rows, chans, outs in geo.groups():
        for k, index in geo.windows():
            view = gp[index][rows]     # a view: += writes into gp
            view[..., chans] += np.matmul(g[..., outs], w[k][:, outs].T.astype(dt, copy=False))
    dst, src = geo.placement()
    out = np.zeros(tuple(lhs_shape), dt)
    out[src] = gp[dst]
    return out


def conv_transpose_rhs(lhs, ct, rhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                       feature_groups, batch_groups):
    """The transpose of conv_forward in ``rhs`` applied to ``ct``."""
    x, g = np.asarray(lhs), np.asarray(ct)
    geo = Geometry(x.shape, rhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                    feature_groups, batch_groups)
    dt = _dtype(x, g)
    xp = _padded(x.astype(dt, copy=False), geo)
    out = np.zeros(tuple(rhs_shape), dt)
    for rows, chans, outs in geo.groups():
        gg = g[..., outs].reshape(-1, outs_size(g, outs))
        for k, index in geo.windows():
            patch = xp[index][rows][..., chans]
            # np.dot: np.matmul runs a transposed operand without BLAS
            out[k][:, outs] += np.dot(patch.reshape(-1, patch.shape[-1]).T, gg)
    return out


def outs_size(g, outs):
    return len(range(*outs.indices(g.shape[-1])))


# --- vmap: lanes on the leading axis; ``*_b``: which arguments are batched ----------------

def _fold_lanes(x, batch_groups):
    """(V, N, ...) as (V * N, ...) with each batch group's lanes together: group b of the
    result holds group b of every lane."""
    v, n = x.shape[:2]
    x = x.reshape((v, batch_groups, n // batch_groups) + x.shape[2:])
    return np.swapaxes(x, 0, 1).reshape((v * n,) + x.shape[3:])


def _unfold_lanes(y, v):
    return y.reshape((v, y.shape[0] // v) + y.shape[1:])


def conv_forward_lanes(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, feature_groups,
                       batch_groups, lhs_b, rhs_b, strides_b=False, padding_b=False,
                       lhs_dilation_b=False, rhs_dilation_b=False, feature_groups_b=False,
                       batch_groups_b=False):
    """conv_forward in each lane: a batch of images is one convolution of a larger batch; a
    batch of kernels (or both batched) runs lane by lane."""
    _static(strides_b, padding_b, lhs_dilation_b, rhs_dilation_b, feature_groups_b,
            batch_groups_b)
    params = (strides, padding, lhs_dilation, rhs_dilation, feature_groups, batch_groups)
    if not rhs_b:
        v = lhs.shape[0]
        out = conv_forward(_fold_lanes(lhs, batch_groups), rhs, *params)
        # with batch groups the output batch is (lane, n'): the lanes folded into each group
        return _unfold_lanes(out, v)
    v = len(rhs)
    return np.stack([conv_forward(lhs[k] if lhs_b else lhs, rhs[k], *params)
                     for k in range(v)])


def conv_transpose_lhs_lanes(ct, rhs, lhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                             feature_groups, batch_groups, ct_b, rhs_b, lhs_shape_b=False,
                             strides_b=False, padding_b=False, lhs_dilation_b=False,
                             rhs_dilation_b=False, feature_groups_b=False,
                             batch_groups_b=False):
    """conv_transpose_lhs in each lane; lane by lane but for a batch of cotangents with one
    kernel and no batch groups (one transpose of a larger batch)."""
    _static(lhs_shape_b, strides_b, padding_b, lhs_dilation_b, rhs_dilation_b,
            feature_groups_b, batch_groups_b)
    params = (strides, padding, lhs_dilation, rhs_dilation, feature_groups, batch_groups)
    if not rhs_b and batch_groups == 1:
        v = ct.shape[0]
        shape = (v * lhs_shape[0],) + tuple(lhs_shape[1:])
        out = conv_transpose_lhs(ct.reshape((-1,) + ct.shape[2:]), rhs, shape, *params)
        return _unfold_lanes(out, v)
    v = len(ct) if ct_b else len(rhs)
    return np.stack([conv_transpose_lhs(ct[k] if ct_b else ct, rhs[k] if rhs_b else rhs,
                                        lhs_shape, *params) for k in range(v)])


def conv_transpose_rhs_lanes(lhs, ct, rhs_shape, strides, padding, lhs_dilation, rhs_dilation,
                             feature_groups, batch_groups, lhs_b, ct_b, rhs_shape_b=False,
                             strides_b=False, padding_b=False, lhs_dilation_b=False,
                             rhs_dilation_b=False, feature_groups_b=False,
                             batch_groups_b=False):
    """conv_transpose_rhs in each lane (each lane's kernel gradient: lane by lane)."""
    _static(rhs_shape_b, strides_b, padding_b, lhs_dilation_b, rhs_dilation_b,
            feature_groups_b, batch_groups_b)
    params = (strides, padding, lhs_dilation, rhs_dilation, feature_groups, batch_groups)
    v = len(lhs) if lhs_b else len(ct)
    return np.stack([conv_transpose_rhs(lhs[k] if lhs_b else lhs, ct[k] if ct_b else ct,
                                        rhs_shape, *params) for k in range(v)])


def conv_permute_lanes(x, perm, inverse, x_b, perm_b=False, inverse_b=False):
    """conv_permute of each lane (the lanes' axis stays first)."""
    _static(perm_b, inverse_b)
    return np.transpose(x, (0,) + tuple(p + 1 for p in perm))


def _static(*flags):
    if any(flags):
        raise ValueError("convolution: the strides, padding, dilations and groups must be the "
                         "same in every lane of vmap (they fix the result's shape)")
