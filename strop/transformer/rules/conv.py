"""Rules of the convolution helpers (runtime/conv.py).  The three are bilinear and each one's
derivatives are the other two, so the table is closed: reverse mode over reverse mode (a
Hessian-vector product) needs nothing more.

    y = conv_forward(x, w)         x̄ = conv_transpose_lhs(ȳ, w)   w̄ = conv_transpose_rhs(x, ȳ)
    x = conv_transpose_lhs(c, w)   c̄ = conv_forward(x̄, w)         w̄ = conv_transpose_rhs(x̄, c)
    w = conv_transpose_rhs(x, c)   x̄ = conv_transpose_lhs(c, w̄)   c̄ = conv_forward(x, w̄)

``conv_permute`` (a layout to channels-last and back) is a transpose whose rule is the
inverse permutation, given beside it.
vmap: their ``*_lanes`` versions (a batch of images is one convolution of a larger batch).
"""
from ...runtime import conv as rc
from . import batching
from .table import TEMPLATE_NAMESPACE, defjvp, defnondiff, defvjp

TEMPLATE_NAMESPACE.update({n: getattr(rc, n) for n in rc.__all__})
P = rc.PARAMS   # strides, padding, lhs_dilation, rhs_dilation, feature_groups, batch_groups

defvjp(rc.conv_forward, f"lhs, rhs, {P}",
       f"conv_transpose_lhs(g, rhs, np.shape(lhs), {P})",
       f"conv_transpose_rhs(lhs, g, np.shape(rhs), {P})")
defjvp(rc.conv_forward, f"conv_forward(dlhs, rhs, {P})", f"conv_forward(lhs, drhs, {P})")

defvjp(rc.conv_transpose_lhs, f"ct, rhs, lhs_shape, {P}",
       f"conv_forward(g, rhs, {P})",
       f"conv_transpose_rhs(g, ct, np.shape(rhs), {P})")
defjvp(rc.conv_transpose_lhs, f"conv_transpose_lhs(dct, rhs, lhs_shape, {P})",
       f"conv_transpose_lhs(ct, drhs, lhs_shape, {P})")

defvjp(rc.conv_transpose_rhs, f"lhs, ct, rhs_shape, {P}",
       f"conv_transpose_lhs(ct, g, np.shape(lhs), {P})",
       f"conv_forward(lhs, g, {P})")
defjvp(rc.conv_transpose_rhs, f"conv_transpose_rhs(dlhs, ct, rhs_shape, {P})",
       f"conv_transpose_rhs(lhs, dct, rhs_shape, {P})")

defvjp(rc.conv_permute, "x, perm, inverse", "conv_permute(g, inverse, perm)")
defjvp(rc.conv_permute, "conv_permute(dx, perm, inverse)")

defnondiff({rc.conv_padding: None})

batching.LANES.update({rc.conv_forward: rc.conv_forward_lanes,
                       rc.conv_transpose_lhs: rc.conv_transpose_lhs_lanes,
                       rc.conv_transpose_rhs: rc.conv_transpose_rhs_lanes,
                       rc.conv_permute: rc.conv_permute_lanes})
