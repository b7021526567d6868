"""Derivatives of ``numpy.linalg``, for real (stacks of) matrices.

Templates: ``g`` is the output's cotangent, ``ans`` the output; see table.py.  Where the output
is a tuple (slogdet, eigh, svd, lstsq), ``g`` is the tuple of its parts' cotangents.  ``Aᵀ``
below is ``np.swapaxes(A, -1, -2)``: every rule works on stacked matrices.

Sources of the formulas:
- inv, solve, det, slogdet: M. B. Giles, "An extended collection of matrix derivative results
  for forward and reverse mode algorithmic differentiation" (2008).
- cholesky: I. Murray, "Differentiation of the Cholesky decomposition" (2016).
- eigh: Giles (2008), the symmetric eigenvalue problem.
- svd: J. Townsend, "Differentiating the singular value decomposition" (2016).
- pinv, lstsq: G. H. Golub and V. Pereyra, "The differentiation of pseudo-inverses and
  nonlinear least squares problems whose variables separate" (1973).
- norm: elementwise calculus; the nuclear and spectral norms through the SVD (d‖A‖_* = U Vᵀ,
  d σ_1 = u_1 v_1ᵀ).

Symmetric inputs: np.linalg.cholesky and eigh read one triangle of ``a``.  As in JAX and
autograd, their vjps are the symmetric matrices that act on symmetric perturbations of ``a``
(the gradient within symmetric matrices), not the one-triangle partial derivatives.

Limits: eigh's and svd's vectors need distinct eigenvalues / singular values (repeated ones give
inf); svd with full_matrices=True only for losses that ignore the vectors beyond min(m, n);
pinv and lstsq assume the rank does not change nearby; det and slogdet need an invertible
matrix.  Not covered: eig, eigvals (complex), qr, tensorsolve, tensorinv, cond.
"""
import numpy as np

from .products import VECDOT, VECDOT_JVP
from .table import defjvp, defnondiff, defvjp

INV_T = "np.linalg.inv(np.swapaxes(a, -1, -2))"

defvjp(np.linalg.inv,      "a",
       "-np.swapaxes(ans, -1, -2) @ g @ np.swapaxes(ans, -1, -2)")
defvjp(np.linalg.solve,    "a, b", "solve_vjp_a(solve_adjoint(g, a, b), a, b, ans)",
       "unbroadcast(solve_adjoint(g, a, b), b)")     # (one solve: adjoints.shared_calls)
defvjp(np.linalg.det,      "a", f"np.expand_dims(g * ans, (-2, -1)) * {INV_T}")
defvjp(np.linalg.slogdet,  "a", f"np.expand_dims(g[1], (-2, -1)) * {INV_T}")  # sign: constant
defvjp(np.linalg.cholesky, "a, /, *, upper=False", "cholesky_vjp(g, ans, upper)")
defvjp(np.linalg.eigh,     "a, UPLO='L'", "eigh_vjp(g, ans)")
defvjp(np.linalg.eigvalsh, "a, UPLO='L'", "eigh_vjp((g, None), np.linalg.eigh(a, UPLO))")
defvjp(np.linalg.svd,      "a, full_matrices=True, compute_uv=True, hermitian=False",
       "svd_vjp(g, a, ans, full_matrices, compute_uv, hermitian)")
defvjp(np.linalg.pinv,     "a, rcond=None, hermitian=False, *, rtol=None",
       "pinv_vjp(g, a, ans, hermitian)")
defvjp(np.linalg.lstsq,    "a, b, rcond=None",
       "lstsq_vjp_a(g, a, b, ans)", "lstsq_vjp_b(g, a, b, ans)")
defvjp(np.linalg.matrix_power, "a, n", "matrix_power_vjp(g, a, n)")
defvjp(np.linalg.multi_dot, "arrays, *, out=None", "multi_dot_vjp(g, arrays)")
defvjp(np.linalg.norm,     "x, ord=None, axis=None, keepdims=False",
       "norm_vjp(g, x, ans, ord, axis, keepdims)")

# NumPy 2's array-API functions in numpy.linalg (distinct objects from their np.* namesakes).
if hasattr(np.linalg, "vector_norm"):
    defvjp(np.linalg.svdvals,     "x, /", "svd_vjp(g, x, ans, False, False)")
    defvjp(np.linalg.vector_norm, "x, /, *, axis=None, keepdims=False, ord=2",
           "norm_vjp(g, x, ans, ord, axis, keepdims, vector=True)")
    defvjp(np.linalg.matrix_norm, "x, /, *, keepdims=False, ord='fro'",
           "norm_vjp(g, x, ans, ord, (-2, -1), keepdims)")
    defvjp(np.linalg.matmul,      "x1, x2, /",
           "unbroadcast(matmul_vjp_x(g, x1, x2), x1)", "unbroadcast(matmul_vjp_y(g, x1, x2), x2)")
    defvjp(np.linalg.tensordot,   "x1, x2, /, *, axes=2",
           "tensordot_vjp_a(g, x1, x2, axes)", "tensordot_vjp_b(g, x1, x2, axes)")
    defvjp(np.linalg.outer,       "x1, x2, /", "g @ x2", "x1 @ g")
    defvjp(np.linalg.vecdot,      "x1, x2, /, *, axis=-1", *VECDOT)
    defvjp(np.linalg.cross,       "x1, x2, /, *, axis=-1",
           "cross_vjp(g, x1, x2, axis=axis)", "cross_vjp(-g, x2, x1, axis=axis)")
    defvjp(np.linalg.trace,       "x, /, *, offset=0, dtype=None",
           "diagonal_vjp(np.expand_dims(g, -1), x, offset, -2, -1)")
    defvjp(np.linalg.diagonal,    "x, /, *, offset=0", "diagonal_vjp(g, x, offset, -2, -1)")
    defvjp(np.linalg.matrix_transpose, "x, /", "np.swapaxes(g, -1, -2)")

# The fields of the named result tuples; their ``sign`` carries no derivative.
for _index, _fields in enumerate([("eigenvalues", "U", "sign"), ("eigenvectors", "S", "logabsdet"),
                                  ("Vh",)]):
    for _field in _fields:
        if _field != "sign":
            defvjp(("attr", _field), "self", f"field_vjp(g, self, {_index})")

defnondiff([np.linalg.matrix_rank, ("attr", "sign")])

# --- jvps (forward mode): ``da`` is the tangent of ``a``; the norms, each output element a
# function of its own slice, sum the tangent times the gradient over the reduced axes. ---
TRACE = "np.trace({}, axis1=-2, axis2=-1)"
defjvp(np.linalg.inv,      "-ans @ da @ ans")
defjvp(np.linalg.solve,    "solve_jvp_a(da, a, b, ans)", "np.linalg.solve(a, db)")
defjvp(np.linalg.det,      "ans * " + TRACE.format("np.linalg.solve(a, da)"))
defjvp(np.linalg.slogdet,  "slogdet_jvp(da, a, ans)")
defjvp(np.linalg.cholesky, "cholesky_jvp(da, ans, upper)")
defjvp(np.linalg.eigh,     "eigh_jvp(da, ans)")
defjvp(np.linalg.eigvalsh, "eigvalsh_jvp(da, a, UPLO)")
defjvp(np.linalg.svd,      "svd_jvp(da, a, ans, full_matrices, compute_uv, hermitian)")
defjvp(np.linalg.pinv,     "pinv_jvp(da, a, ans, hermitian)")
defjvp(np.linalg.lstsq,    "lstsq_jvp_a(da, a, b, ans)", "lstsq_jvp_b(db, a, b, ans)")
defjvp(np.linalg.matrix_power, "matrix_power_jvp(da, a, n)")
defjvp(np.linalg.multi_dot, "multi_dot_jvp(darrays, arrays)")
NORM_GRAD = "norm_vjp(np.ones_like(ans), x, ans, ord, axis, keepdims{})"
defjvp(np.linalg.norm,
       f"np.sum({NORM_GRAD.format('')} * dx, axis=axis, keepdims=keepdims)")
if hasattr(np.linalg, "vector_norm"):
    defjvp(np.linalg.svdvals,     "svd_jvp(dx, x, ans, False, False)")
    defjvp(np.linalg.vector_norm,
           f"np.sum({NORM_GRAD.format(', vector=True')} * dx, axis=axis, keepdims=keepdims)")
    defjvp(np.linalg.matrix_norm,
           "np.sum(norm_vjp(np.ones_like(ans), x, ans, ord, (-2, -1), keepdims) * dx, "
           "axis=(-2, -1), keepdims=keepdims)")
    defjvp(np.linalg.matmul,      "np.matmul(dx1, x2)", "np.matmul(x1, dx2)")
    defjvp(np.linalg.tensordot,   "np.linalg.tensordot(dx1, x2, axes=axes)",
                                  "np.linalg.tensordot(x1, dx2, axes=axes)")
    defjvp(np.linalg.outer,       "np.linalg.outer(dx1, x2)", "np.linalg.outer(x1, dx2)")
    defjvp(np.linalg.vecdot,      *VECDOT_JVP)
    defjvp(np.linalg.cross,       "np.linalg.cross(dx1, x2, axis=axis)",
                                  "np.linalg.cross(x1, dx2, axis=axis)")
    defjvp(np.linalg.trace,       "np.linalg.trace(dx, offset=offset)")
    defjvp(np.linalg.diagonal,    "np.linalg.diagonal(dx, offset=offset)")
    defjvp(np.linalg.matrix_transpose, "np.linalg.matrix_transpose(dx)")
for _index, _fields in enumerate([("eigenvalues", "U"), ("eigenvectors", "S", "logabsdet"),
                                  ("Vh",)]):
    for _field in _fields:
        defjvp(("attr", _field), f"field_jvp(dself, {_index})")
