"""strop.lax's convolutions, with JAX's signatures, semantics and errors.  Every argument but the
two arrays is static: ``plan`` checks them once and resolves them into the canonical
convolution of runtime/conv.py (channels last: lhs (N, *spatial, C), rhs (*window, I, O)) and
the transposes that bring the operands to it and the result back.  Called on values, that is
what runs; inside a transformed function, the lowering (transformer/lax_conv.py) writes the
same transposes and call into the code, so grad, jvp, vmap and jit see a helper with rules.
"""
import numpy as np

from ..runtime import conv as rc
from ..runtime import lax as rl
from ..runtime.conv_layout import _TRANSPOSE_DEFAULTS, ConvDimensionNumbers, plan, transpose_plan
from ..runtime.conv_layout import conv_dimension_numbers as _dimension_numbers
from .control import lowered
from .errors import lax_error

__all__ = ["conv_general_dilated", "conv", "conv_with_general_padding", "conv_dimension_numbers",
           "conv_transpose", "ConvDimensionNumbers"]


def _operands(lhs, rhs):
    x, w = np.asarray(lhs), np.asarray(rhs)
    if rl.canonical_dtype(x.dtype) != rl.canonical_dtype(w.dtype):
        raise lax_error(TypeError, f"lax.conv_general_dilated requires arguments to have the "
                                   f"same dtypes, got {rl.canonical_dtype(x.dtype)}, "
                                   f"{rl.canonical_dtype(w.dtype)}.")
    if x.ndim != w.ndim:
        raise lax_error(TypeError, f"convolution requires lhs and rhs ndim to be equal, got "
                                   f"{x.ndim} and {w.ndim}.")
    return x, w


def _run(p, x, w, preferred_element_type):
    xs, ws = np.transpose(x, p.lhs_perm).shape, np.transpose(w, p.rhs_perm).shape
    try:   # the checks that need the shapes, before running
        rc.Geometry(xs, ws, *p.params)
    except (TypeError, ValueError) as e:
        raise lax_error(type(e), str(e)) from None
    out = p.run(x, w)
    return out if preferred_element_type is None else \
        out.astype(rl.canonical_dtype(np.dtype(preferred_element_type)))   # 32-bit unless x64


@lowered
def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """General n-dimensional convolution with dilations, layouts and groups, as JAX's
    (``precision`` accepted and ignored: the CPU computes in the operands' precision)."""
    x, w = _operands(lhs, rhs)
    p = plan(x.ndim, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
             feature_group_count, batch_group_count, fail=lax_error)
    return _run(p, x, w, preferred_element_type)


@lowered
def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """conv_general_dilated with NC+spatial / OI+spatial layouts, no dilation, no groups."""
    x, w = _operands(lhs, rhs)
    return _run(plan(x.ndim, window_strides, padding, fail=lax_error), x, w, preferred_element_type)


@lowered
def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """conv_general_dilated with the default layouts and no groups."""
    x, w = _operands(lhs, rhs)
    return _run(plan(x.ndim, window_strides, padding, lhs_dilation, rhs_dilation,
                     fail=lax_error), x, w,
                preferred_element_type)


@lowered
def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """The transposed ("fractionally strided") convolution, as JAX's conv_transpose."""
    x, w = _operands(lhs, rhs)
    dn = _dimension_numbers(x.shape, w.shape, dimension_numbers or
                            _TRANSPOSE_DEFAULTS.get(x.ndim), lax_error)
    window = tuple(w.shape[a] for a in dn.rhs_spec[2:])
    p = transpose_plan(x.ndim, strides, padding, rhs_dilation, dimension_numbers,
                       transpose_kernel, use_consistent_padding, lax_error, window)
    return _run(p, x, w, preferred_element_type)


@lowered
def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """``dimension_numbers`` (None, three layout strings, or a ConvDimensionNumbers) as the
    ConvDimensionNumbers JAX's functions take, for operands of these shapes."""
    return _dimension_numbers(lhs_shape, rhs_shape, dimension_numbers, lax_error)

