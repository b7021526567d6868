"""Derivatives of products and contractions: dot, inner, outer, tensordot, einsum, kron, cross,
and the matrix-structure ops trace, diag, diagflat, triu, tril.

Templates: ``g`` is the output's cotangent, ``ans`` the output; see table.py.  A product is
linear in each factor, so each vjp contracts g with the other factors: np.dot and np.inner are
written as the np.tensordot they are, and np.einsum's vjp is an einsum (einsum_vjp).
Real inputs only.
"""
import numpy as np

from ... import runtime as rt
from .table import defjvp, defvjp

TDOT_A = "tensordot_vjp_a(g, a, b, {})"
TDOT_B = "tensordot_vjp_b(g, a, b, {})"
INNER_AXES = "([-1], [-1]) if np.ndim(a) and np.ndim(b) else 0"

defvjp(np.dot,       "a, b, out=None",
       TDOT_A.format("dot_axes(a, b)"), TDOT_B.format("dot_axes(a, b)"))
defvjp(np.inner,     "a, b, /", TDOT_A.format(INNER_AXES), TDOT_B.format(INNER_AXES))
defvjp(np.tensordot, "a, b, axes=2", TDOT_A.format("axes"), TDOT_B.format("axes"))
defvjp(np.vdot,      "a, b, /", "g * np.reshape(b, np.shape(a))", "g * np.reshape(a, np.shape(b))")
defvjp(np.outer,     "a, b, out=None",
       "np.reshape(g @ np.ravel(b), np.shape(a))", "np.reshape(np.ravel(a) @ g, np.shape(b))")
defvjp(np.kron,      "a, b", "kron_vjp_a(g, a, b)", "kron_vjp_b(g, a, b)")
defvjp(np.cross,     "a, b, axisa=-1, axisb=-1, axisc=-1, axis=None",
       "cross_vjp(g, a, b, axisa, axisb, axisc, axis)",
       "cross_vjp(-g, b, a, axisb, axisa, axisc, axis)")
# The table binds positional arguments of a *args signature to the names after it, so no
# keyword-only parameters (out=, optimize=) are listed: such calls do not bind.
# ``subscripts`` is the first array in the interleaved form np.einsum(x, [0, 1], y, [1, 2]).
defvjp(np.einsum,    "subscripts, *operands", "einsum_vjp(g, subscripts, operands, True)",
       "einsum_vjp(g, subscripts, operands)")

VECDOT = ("unbroadcast(np.expand_dims(g, axis) * x2, x1)",
          "unbroadcast(x1 * np.expand_dims(g, axis), x2)")  # also np.linalg.vecdot's
if hasattr(np, "vecdot"):  # NumPy >= 2.0 (gufuncs; matvec and vecmat from 2.2)
    defvjp(np.vecdot, "x1, x2, /, out=None, *, axis=-1", *VECDOT)
if hasattr(np, "matvec"):
    defvjp(np.matvec, "x1, x2, /, out=None",
           "unbroadcast(np.expand_dims(g, -1) * np.expand_dims(x2, -2), x1)",
           "unbroadcast(np.matvec(np.swapaxes(x1, -1, -2), g), x2)")
    defvjp(np.vecmat, "x1, x2, /, out=None",
           "unbroadcast(np.matvec(x2, g), x1)",
           "unbroadcast(np.expand_dims(x1, -1) * np.expand_dims(g, -2), x2)")

# the cotangents of tensordot are bilinear in (the cotangent, the other factor) and take the
# differentiated factor for its shape only: their own vjps are tensordots again (grad(grad))
defvjp(rt.tensordot_vjp_a, "v, a, b, axes=2",
       "np.tensordot(g, b, axes)", None, "tensordot_vjp_b(v, g, b, axes)")
defvjp(rt.tensordot_vjp_b, "v, a, b, axes=2",
       "np.tensordot(a, g, axes)", "tensordot_vjp_a(v, a, g, axes)")
# ... and vmap's versions of them, in each lane (transformer/vectorize_special.py): their
# results are batched, summed over the lanes back to an unbatched operand (unbroadcast)
defvjp(rt.tensordot_lanes, "a, b, axes, a_batched, b_batched",
       "unbroadcast(tensordot_vjp_lanes(g, a, b, axes, 0, True, a_batched, b_batched), a)",
       "unbroadcast(tensordot_vjp_lanes(g, a, b, axes, 1, True, a_batched, b_batched), b)")
defvjp(rt.tensordot_vjp_lanes, "v, a, b, axes, wrt, v_batched, a_batched, b_batched",
       "unbroadcast(tensordot_lanes(g, b, axes, True, b_batched) if wrt == 0 else "
       "tensordot_lanes(a, g, axes, a_batched, True), v)",
       "zeros_like(a) if wrt == 0 else unbroadcast(tensordot_vjp_lanes(v, a, g, axes, 0, "
       "v_batched, a_batched, True), a)",
       "zeros_like(b) if wrt == 1 else unbroadcast(tensordot_vjp_lanes(v, g, b, axes, 1, "
       "v_batched, True, b_batched), b)")

# --- matrix structure ---
defvjp(np.trace,     "a, offset=0, axis1=0, axis2=1, dtype=None, out=None",
       "diagonal_vjp(np.expand_dims(g, -1), a, offset, axis1, axis2)")
defvjp(np.diag,      "v, k=0", "np.diag(g, k) if np.ndim(v) == 1 else diagonal_vjp(g, v, k)")
defvjp(np.diagflat,  "v, k=0", "np.reshape(np.diagonal(g, k), np.shape(v))")
defvjp(np.triu,      "m, k=0", "unbroadcast(np.triu(g, k), m)")
defvjp(np.tril,      "m, k=0", "unbroadcast(np.tril(g, k), m)")

# --- jvps (forward mode): a product is linear in each factor: the product with that factor's
# tangent (``da``) in its place. ---
defjvp(np.dot,       "np.dot(da, b)",            "np.dot(a, db)")
defjvp(np.inner,     "np.inner(da, b)",          "np.inner(a, db)")
defjvp(np.tensordot, "np.tensordot(da, b, axes)", "np.tensordot(a, db, axes)")
defjvp(np.vdot,      "np.vdot(da, b)",           "np.vdot(a, db)")
defjvp(rt.tensordot_vjp_a, "tensordot_vjp_a(dv, a, b, axes)", None,
       "tensordot_vjp_a(v, a, db, axes)")
defjvp(rt.tensordot_vjp_b, "tensordot_vjp_b(dv, a, b, axes)", "tensordot_vjp_b(v, da, b, axes)")
defjvp(rt.tensordot_lanes, "tensordot_lanes(da, b, axes, a_batched, b_batched)",
       "tensordot_lanes(a, db, axes, a_batched, b_batched)")
defjvp(rt.tensordot_vjp_lanes,
       "tensordot_vjp_lanes(dv, a, b, axes, wrt, v_batched, a_batched, b_batched)",
       "0.0 * ans if wrt == 0 else "
       "tensordot_vjp_lanes(v, da, b, axes, wrt, v_batched, a_batched, b_batched)",
       "0.0 * ans if wrt == 1 else "
       "tensordot_vjp_lanes(v, a, db, axes, wrt, v_batched, a_batched, b_batched)")
defjvp(np.outer,     "np.outer(da, b)",          "np.outer(a, db)")
defjvp(np.kron,      "np.kron(da, b)",           "np.kron(a, db)")
defjvp(np.cross,     "np.cross(da, b, axisa, axisb, axisc, axis)",
                     "np.cross(a, db, axisa, axisb, axisc, axis)")
defjvp(np.einsum,    "einsum_jvp(subscripts, operands, None, dsubscripts)",
                     "einsum_jvp(subscripts, operands, doperands)",
       joint="einsum_jvp(subscripts, operands, doperands, dsubscripts)")
VECDOT_JVP = ("np.vecdot(dx1, x2, axis=axis)", "np.vecdot(x1, dx2, axis=axis)")
if hasattr(np, "vecdot"):
    defjvp(np.vecdot, *VECDOT_JVP)
if hasattr(np, "matvec"):
    defjvp(np.matvec, "np.matvec(dx1, x2)", "np.matvec(x1, dx2)")
    defjvp(np.vecmat, "np.vecmat(dx1, x2)", "np.vecmat(x1, dx2)")
defjvp(np.trace,     "np.trace(da, offset, axis1, axis2)")
defjvp(np.diag,      "np.diag(dv, k)")
defjvp(np.diagflat,  "np.diagflat(dv, k)")
defjvp(np.triu,      "np.triu(dm, k)")
defjvp(np.tril,      "np.tril(dm, k)")
