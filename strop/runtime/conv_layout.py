"""The static arguments of strop.lax's convolutions, checked as JAX checks them (its words)
and resolved into a Plan: the canonical convolution of conv.py (channels last) and the
transposes that bring the operands to it and the result back.  strop.lax uses it on values
(lax/conv.py), the lowering when transforming (transformer/lax_conv.py): each passes ``fail``,
which makes the exception that names the user's line."""
import operator
from collections import namedtuple

import numpy as np

from . import conv as rc

__all__ = []   # nothing here is called by generated code


def plain(kind, message, fix=None):
    return kind(message)


ConvDimensionNumbers = namedtuple("ConvDimensionNumbers", ["lhs_spec", "rhs_spec", "out_spec"])
ConvDimensionNumbers.__doc__ = """The positions of (batch, feature, *spatial) in lhs and the
output, and of (out feature, in feature, *spatial) in rhs (JAX's)."""

_TRANSPOSE_DEFAULTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                       4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


class Plan(namedtuple("Plan", "lhs_perm rhs_perm out_perm flip strides padding lhs_dilation "
                              "rhs_dilation feature_groups batch_groups")):
    """The canonical convolution a call means: transpose lhs by ``lhs_perm`` and rhs by
    ``rhs_perm`` (then reverse its first ``flip`` axes), run conv_forward with the rest, and
    transpose the result by ``out_perm``."""

    @property
    def params(self):
        return (self.strides, self.padding, self.lhs_dilation, self.rhs_dilation,
                self.feature_groups, self.batch_groups)

    def run(self, lhs, rhs):
        x = np.transpose(lhs, self.lhs_perm)
        w = np.transpose(rhs, self.rhs_perm)
        if self.flip:
            w = w[(slice(None, None, -1),) * self.flip]
        return np.transpose(rc.conv_forward(x, w, *self.params), self.out_perm)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers, fail=plain):
    """``dimension_numbers`` (None, three layout strings, or a ConvDimensionNumbers) as a
    ConvDimensionNumbers for operands of these shapes (or ranks: only their lengths count)."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise fail(TypeError, f"convolution requires lhs and rhs ndim to be equal, got "
                              f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise fail(TypeError, f"convolution dimension_numbers must be tuple/list or None, got "
                              f"{type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise fail(TypeError, f"convolution dimension_numbers list/tuple must be length 3, got "
                              f"{len(dimension_numbers)}.")
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise fail(TypeError, f"convolution dimension_numbers elements must be strings, got "
                              f"{tuple(map(type, dimension_numbers))}.")
    for i, s in enumerate(dimension_numbers):
        if len(s) != len(lhs_shape):
            raise fail(TypeError, f"convolution dimension_numbers[{i}] must have len equal to "
                                  f"the ndim of lhs and rhs, got {len(s)} for lhs and rhs "
                                  f"shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    return ConvDimensionNumbers(*_permutations(dimension_numbers, fail))


def _permutations(specs, fail):
    """JAX's conv_general_permutations: spatial axes in the order rhs's string names them."""
    pairs = ("N", "C"), ("O", "I"), ("N", "C")
    for i, (a, b) in enumerate(pairs):
        if not specs[i].count(a) == specs[i].count(b) == 1:
            raise fail(TypeError, f"convolution dimension_numbers[{i}] must contain the "
                                  f"characters '{a}' and '{b}' exactly once, got {specs[i]}.")
        if len(specs[i]) != len(set(specs[i])):
            raise fail(TypeError, f"convolution dimension_numbers[{i}] cannot have duplicate "
                                  f"characters, got {specs[i]}.")
    spatial = [set(s) - set(p) for s, p in zip(specs, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise fail(TypeError, f"convolution dimension_numbers elements must each have the same "
                              f"set of spatial characters, got {tuple(specs)}.")
    rhs = specs[1]

    def perm(spec, pair):
        axes = sorted((i for i, c in enumerate(spec) if c not in pair),
                      key=lambda i: rhs.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(axes)
    return tuple(perm(s, p) for s, p in zip(specs, pairs))


def _ints(values, what, n, fail, positive, kind=ValueError):
    try:
        out = tuple(operator.index(v) for v in values)
    except TypeError:
        raise fail(TypeError, f"conv_general_dilated {what} must be a sequence of integers, "
                              f"got {values!r}") from None
    if len(out) != n:
        raise fail(ValueError, f"conv_general_dilated {what} must have one entry per spatial "
                               f"dimension ({n}), got {out}")
    if any(v < 1 for v in out) and positive:
        raise fail(kind, positive.format(out))
    return out


def plan(ndim, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
         dimension_numbers=None, feature_group_count=1, batch_group_count=1, fail=plain,
         modes=False, flip=False):
    """The Plan of a call on operands of rank ``ndim``, every static argument checked as JAX
    checks it (messages in its words).  ``modes``: padding given as a string may stay a mode
    (resolved from the shapes when the code runs); ``flip``: conv_transpose's
    ``transpose_kernel``."""
    dn = conv_dimension_numbers((0,) * ndim, (0,) * ndim, dimension_numbers, fail)
    nsp = len(dn.rhs_spec) - 2
    try:
        strides = tuple(window_strides)
    except TypeError:
        raise fail(TypeError, f"conv_general_dilated window_strides must be a sequence of "
                              f"integers, got {window_strides!r}") from None
    if len(strides) != nsp:
        raise fail(ValueError, f"conv_general_dilated window and window_strides must have the "
                               f"same number of dimensions, but got {nsp} and {len(strides)}")
    strides = _ints(strides, "window_strides", nsp, fail,
                    "conv_general_dilated window_strides must be positive, got {}.")
    dilation = "All dilations must be positive, got {}."
    ld = (1,) * nsp if lhs_dilation is None else \
        _ints(lhs_dilation, "lhs_dilation", nsp, fail, dilation, TypeError)
    rd = (1,) * nsp if rhs_dilation is None else \
        _ints(rhs_dilation, "rhs_dilation", nsp, fail, dilation, TypeError)
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "SAME_LOWER", "VALID") and not (
                modes and padding in rc.MODES):
            raise fail(ValueError, f"Unrecognized padding type: expected 'VALID', 'SAME', or "
                                   f"'SAME_LOWER', got {padding}.")
        padding = padding.upper() if padding in ("same", "valid", "same_lower") else padding
        if padding in ("SAME", "SAME_LOWER") and any(d != 1 for d in ld):
            raise fail(ValueError, "String padding is not implemented for transposed "
                                   "convolution using this op. Please either exactly specify "
                                   "the required padding or use conv_transpose.")
        if padding == "VALID":
            padding = ((0, 0),) * nsp
    else:
        try:
            padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError):
            raise fail(ValueError, f"padding argument to conv_general_dilated should be a "
                                   f"string or a sequence of (low, high) pairs, got "
                                   f"{padding}") from None
        if len(padding) != nsp:
            raise fail(TypeError, f"Wrong number of explicit pads for convolution: expected "
                                  f"{nsp}, got {len(padding)}.")
    groups = []
    for what, count in (("feature_group_count", feature_group_count),
                        ("batch_group_count", batch_group_count)):
        try:
            count = operator.index(count)
        except TypeError:
            raise fail(TypeError, f"conv_general_dilated {what} must be an integer, got "
                                  f"{count!r}") from None
        if count < 1:
            raise fail(ValueError, f"conv_general_dilated {what} must be a positive integer, "
                                   f"got {count}.")
        groups.append(count)
    if groups[0] > 1 and groups[1] > 1:
        raise fail(ValueError, f"At most one of batch_group_count and feature_group_count may "
                               f"be > 1, got batch_group_count={groups[1]} and "
                               f"feature_group_count={groups[0]}")
    ls, rs, os_ = dn
    lhs_perm = (ls[0],) + tuple(ls[2:]) + (ls[1],)
    io = (rs[0], rs[1]) if flip else (rs[1], rs[0])
    rhs_perm = tuple(rs[2:]) + io
    canonical = {os_[0]: 0, os_[1]: nsp + 1, **{a: 1 + i for i, a in enumerate(os_[2:])}}
    out_perm = tuple(canonical[a] for a in range(nsp + 2))
    return Plan(lhs_perm, rhs_perm, out_perm, nsp if flip else 0, strides, padding, ld, rd,
                groups[0], groups[1])


def transpose_plan(ndim, strides, padding, rhs_dilation, dimension_numbers, transpose_kernel,
                   use_consistent_padding, fail=plain, window=None):
    """The Plan of conv_transpose: a convolution with ``lhs_dilation=strides``; 'SAME' and
    'VALID' are the modes TSAME and TVALID (they depend on the kernel's size); explicit
    padding with ``use_consistent_padding`` needs the kernel's spatial ``window`` sizes."""
    if dimension_numbers is None:
        if ndim not in _TRANSPOSE_DEFAULTS:
            raise fail(ValueError, "No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULTS[ndim]
    nsp = ndim - 2
    if isinstance(padding, str) and padding in ("SAME", "VALID"):
        padding = "T" + padding
    elif use_consistent_padding and not isinstance(padding, str):
        if window is None:
            raise fail(TypeError, "conv_transpose with explicit padding and "
                                  "use_consistent_padding=True is supported outside "
                                  "transformed code only")
        rd = (1,) * nsp if rhs_dilation is None else tuple(rhs_dilation)
        padding = tuple((rc.dilated(k, d) - lo - 1, rc.dilated(k, d) - hi - 1)
                        for k, d, (lo, hi) in zip(window, rd, padding))
    if isinstance(padding, str) and padding not in ("TSAME", "TVALID"):
        raise fail(ValueError, f"Invalid padding mode: {padding}")
    return plan(ndim, (1,) * nsp, padding, strides, rhs_dilation, dimension_numbers,
                fail=fail, modes=True, flip=bool(transpose_kernel))


