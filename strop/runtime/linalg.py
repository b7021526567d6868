"""Helpers of the rules of ``numpy.linalg`` (rules/linalg.py).

A ``*_vjp`` helper returns the cotangent of one argument, shaped like that argument, from ``g``
(the cotangent of the output) and what the rule passes.  Matrices may be stacked: the last two
axes are the matrix.  Only real inputs are covered.
"""
import numpy as np

from .base import unbroadcast
from .indexing import getitem_vjp

__all__ = ["solve_adjoint", "solve_vjp_a", "cholesky_vjp", "eigh_vjp", "svd_vjp",
           "off_diagonal_inverse", "norm_vjp", "pinv_vjp", "matrix_power_vjp", "lstsq_vjp_a",
           "lstsq_vjp_b", "multi_dot_vjp", "field_vjp"]


def _T(x):
    """Transpose of a (stack of) matrices."""
    return np.swapaxes(x, -1, -2)


def _diag(v):
    """A (stack of) diagonal matrices with ``v`` on the diagonal."""
    v = np.asarray(v)
    return v[..., None, :] * np.eye(v.shape[-1], dtype=v.dtype)


def solve_adjoint(g, a, b):
    """``solve(aᵀ, g)``, with b a vector exactly when it is 1-D (NumPy 2's rule): of ``x =
    np.linalg.solve(a, b)``, b's cotangent (unbroadcast to b), and what a's is made of."""
    if np.ndim(b) == 1:
        return np.linalg.solve(_T(a), np.asarray(g)[..., None])[..., 0]
    return np.linalg.solve(_T(a), g)


def solve_vjp_a(gb, a, b, ans):
    """Cotangent of ``a`` in ``x = np.linalg.solve(a, b)``: ``-gb xᵀ``, ``gb`` the
    solve_adjoint (``solve(aᵀ, g)``)."""
    if np.ndim(b) == 1:
        return unbroadcast(-gb[..., :, None] * ans[..., None, :], a)
    return unbroadcast(-gb @ _T(ans), a)


def cholesky_vjp(g, ans, upper=False):
    """Cotangent of ``a`` in ``L = np.linalg.cholesky(a)`` (``upper``: ``ans`` is Lᵀ):
    ``L⁻ᵀ Φ(Lᵀ ḡ) L⁻¹``, symmetrized, with Φ the lower triangle with its diagonal halved."""
    L, gL = (_T(ans), _T(g)) if upper else (ans, g)
    P = _T(L) @ gL
    phi = np.tril(P) - 0.5 * _diag(np.diagonal(P, axis1=-2, axis2=-1))
    S = _T(np.linalg.solve(_T(L), _T(np.linalg.solve(_T(L), phi))))
    return (S + _T(S)) / 2


def off_diagonal_inverse(d):
    """1 / d off the diagonal of the last two axes, 0 on it (inf where d is 0 there).  It has
    its own derivative rule, so eigh's and svd's rules differentiate again."""
    eye = np.eye(d.shape[-1], dtype=bool)
    with np.errstate(divide="ignore"):
        return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, d))


def eigh_vjp(g, ans):
    """Cotangent of ``a`` in ``w, v = np.linalg.eigh(a)`` from ``g = (gw, gv)`` (None or zeros:
    unused, and then repeated eigenvalues are fine):
    ``v (diag(gw) + F ∘ vᵀgv) vᵀ``, symmetrized, with F_ij = 1 / (w_j - w_i) off the
    diagonal."""
    w, v = ans
    gw, gv = g
    inner = np.zeros(np.shape(v))
    if gw is not None:
        inner = inner + _diag(gw)
    if gv is not None and np.any(gv):  # skipped for zeros: F is inf at repeated eigenvalues
        inner = inner + off_diagonal_inverse(w[..., None, :] - w[..., :, None]) * (_T(v) @ gv)
    ga = v @ inner @ _T(v)
    return (ga + _T(ga)) / 2


def _thin(x, gx, k, cols):
    """U (``cols``) or Vh of a full SVD cut to its first k singular vectors, and their
    cotangent: the other vectors are arbitrary, so the loss must not depend on them."""
    cut = (Ellipsis, slice(None), slice(k)) if cols else (Ellipsis, slice(k), slice(None))
    rest = ((Ellipsis, slice(None), slice(k, None)) if cols
            else (Ellipsis, slice(k, None), slice(None)))
    if gx is not None and np.any(gx[rest]):
        raise ValueError("strop cannot differentiate a function of the singular vectors that "
                         "np.linalg.svd(full_matrices=True) adds beyond min(m, n): they are "
                         "arbitrary; use full_matrices=False")
    return x[cut], None if gx is None else gx[cut]


def svd_vjp(g, a, ans, full_matrices=True, compute_uv=True, hermitian=False):
    """Cotangent of ``a`` in ``np.linalg.svd(a, ...)``; ``g`` is ``(gu, gs, gvh)`` (None: unused),
    or gs alone when ``compute_uv`` is False.  Needs distinct nonzero singular values when the
    vectors are used."""
    if not compute_uv:
        u, _, vh = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        ga = u @ (np.asarray(g)[..., :, None] * vh)
        return (ga + _T(ga)) / 2 if hermitian else ga
    (u, s, vh), (gu, gs, gvh) = ans, g
    m, n = np.shape(a)[-2:]
    k = min(m, n)
    if full_matrices:
        u, gu = _thin(u, gu, k, cols=True)
        vh, gvh = _thin(vh, gvh, k, cols=False)
    inner = np.zeros(np.shape(s) + (k,))
    if gs is not None:
        inner = inner + _diag(gs)
    F = off_diagonal_inverse(s[..., None, :] ** 2 - s[..., :, None] ** 2)
    ga = 0.0
    if gu is not None and np.any(gu):  # zeros skipped, as F is inf at repeated values
        inner = inner + F * (_T(u) @ gu - _T(gu) @ u) * s[..., None, :]
        ga = ga + (gu - u @ (_T(u) @ gu)) / s[..., None, :] @ vh
    if gvh is not None and np.any(gvh):
        inner = inner + s[..., :, None] * F * (vh @ _T(gvh) - gvh @ _T(vh))
        ga = ga + u @ ((gvh - (gvh @ _T(vh)) @ vh) / s[..., :, None])
    ga = ga + u @ inner @ vh
    return (ga + _T(ga)) / 2 if hermitian else ga


def _max_share(x, ext, axis):
    """Where ``x`` attains ``ext`` (broadcast), each of the tied elements' share of 1."""
    hit = x == ext
    return hit / np.sum(hit, axis=axis, keepdims=True)


def _vector_norm_grad(x, ans, ord, axis):
    """d ‖x‖_ord / dx over ``axis`` (``ans`` broadcast against x)."""
    if ord is None or ord == 2:
        return x / ans
    if ord == 1:
        return np.sign(x)
    if ord == 0:
        return np.zeros(np.shape(x))
    if np.isinf(ord):
        return np.sign(x) * _max_share(np.abs(x), ans, axis)
    return np.sign(x) * (np.abs(x) / ans) ** (ord - 1)


def _matrix_norm_grad(x, ans, ord, axes):
    """d ‖x‖_ord / dx for a matrix norm over the two ``axes`` (``ans`` broadcast against x)."""
    row, col = axes
    if ord in (None, "fro"):
        return x / ans
    if ord in (1, -1, np.inf, -np.inf):  # largest/smallest column (1) or row (inf) abs sum
        sums = np.sum(np.abs(x), axis=row if abs(ord) == 1 else col, keepdims=True)
        return np.sign(x) * _max_share(sums, ans, col if abs(ord) == 1 else row)
    xm = np.moveaxis(x, axes, (-2, -1))
    u, s, vh = np.linalg.svd(xm, full_matrices=False)
    if ord == "nuc":
        d = u @ vh
    elif ord in (2, -2):  # the largest (smallest) singular value
        j = 0 if ord == 2 else -1
        d = u[..., :, j, None] * vh[..., j, None, :]
    else:
        raise NotImplementedError(f"strop has no derivative for the matrix norm ord={repr(ord)}")
    return np.moveaxis(d, (-2, -1), axes)


def norm_vjp(g, x, ans, ord=None, axis=None, keepdims=False, vector=False):
    """Cotangent of ``x`` in ``np.linalg.norm(x, ord, axis, keepdims)`` (and vector_norm:
    ``vector=True``, matrix_norm: ``axis=(-2, -1)``).  Where the norm is not differentiable
    (0 for the 2-norm, ties for max-type norms) this gives NaN or shares the cotangent."""
    x = np.asarray(x)
    if axis is None and (ord is None or vector):
        axes = tuple(range(x.ndim))
        vector = True
    else:
        axes = tuple(range(x.ndim)) if axis is None else (axis,) if np.ndim(axis) == 0 else axis
        axes = tuple(ax % x.ndim for ax in axes)
    if not keepdims:
        g, ans = np.expand_dims(g, axes), np.expand_dims(ans, axes)
    if vector or len(axes) == 1:
        return g * _vector_norm_grad(x, ans, ord, axes)
    return g * _matrix_norm_grad(x, ans, ord, axes)


def pinv_vjp(g, a, ans, hermitian=False):
    """Cotangent of ``a`` in ``p = np.linalg.pinv(a)``, rank held constant:
    ``-pᵀ g pᵀ + (I - a p) gᵀ p pᵀ + pᵀ p gᵀ (I - p a)``."""
    p = ans
    m, n = np.shape(a)[-2:]
    ga = (-_T(p) @ g @ _T(p) + (np.eye(m) - a @ p) @ _T(g) @ p @ _T(p)
          + _T(p) @ p @ _T(g) @ (np.eye(n) - p @ a))
    return (ga + _T(ga)) / 2 if hermitian else ga


def matrix_power_vjp(g, a, n):
    """Cotangent of ``a`` in ``np.linalg.matrix_power(a, n)``: the sum over k < n of
    ``(aᵏ)ᵀ g (aⁿ⁻¹⁻ᵏ)ᵀ``; for n < 0 through ``inv(a)``."""
    if n < 0:
        b = np.linalg.inv(a)
        return -_T(b) @ matrix_power_vjp(g, b, -n) @ _T(b)
    powers = [np.broadcast_to(np.eye(np.shape(a)[-1]), np.shape(a))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ a)
    ga = np.zeros(np.shape(a))
    for k in range(n):
        ga = ga + _T(powers[k]) @ g @ _T(powers[n - 1 - k])
    return ga


def _lstsq_parts(g, a, b, ans):
    """For ``x, res, rank, s = np.linalg.lstsq(a, b)``: x̄, the residuals' cotangent as
    multiples of the residual vectors r = b - a x (None: unused), and the cotangent of s."""
    (x, res, _, _), (gx, gres, _, gs) = ans, g
    r = None
    if gres is not None and np.size(res):
        r = 2 * (b - a @ x) * gres  # d‖r‖² = 2 rᵀ(db - da x), as x is optimal
    return (np.zeros(np.shape(x)) if gx is None else gx), r, gs


def _outer_like(u, x):
    """``u xᵀ`` for matrices, ``outer(u, x)`` for vectors."""
    return np.outer(u, x) if np.ndim(x) == 1 else u @ _T(x)


def lstsq_vjp_a(g, a, b, ans):
    """Cotangent of ``a`` in ``np.linalg.lstsq(a, b)`` (full column rank): through
    ``x = pinv(a) b``, the residuals and the singular values; the rank carries none."""
    gx, r, gs = _lstsq_parts(g, a, b, ans)
    x, p = ans[0], np.linalg.pinv(a)
    ga = pinv_vjp(_outer_like(gx, b), a, p)
    if r is not None:
        ga = ga - _outer_like(r, x)
    return ga if gs is None else ga + svd_vjp(gs, a, ans[3], compute_uv=False)


def lstsq_vjp_b(g, a, b, ans):
    """Cotangent of ``b`` in ``np.linalg.lstsq(a, b)``: ``pinv(a)ᵀ x̄`` plus the residuals'."""
    gx, r, _ = _lstsq_parts(g, a, b, ans)
    gb = _T(np.linalg.pinv(a)) @ gx
    return gb if r is None else gb + r


def multi_dot_vjp(g, arrays):
    """Cotangents of ``arrays`` in ``np.linalg.multi_dot(arrays)``: for each matrix,
    ``leftᵀ g rightᵀ`` with left and right the products of the matrices before and after it
    (a 1-D first array is a row, a 1-D last array a column)."""
    mats = [np.asarray(x) for x in arrays]
    if mats[0].ndim == 1:
        mats[0] = mats[0][None, :]
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1][:, None]
    g = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
    left, acc = [], None
    for m in mats:
        left.append(acc)
        acc = m if acc is None else acc @ m
    right, acc = [], None
    for m in reversed(mats):
        right.append(acc)
        acc = m if acc is None else m @ acc
    out = []
    for x, l, r in zip(arrays, left, reversed(right)):
        gx = g if l is None else _T(l) @ g
        gx = gx if r is None else gx @ _T(r)
        out.append(np.reshape(gx, np.shape(x)))
    return out


def field_vjp(g, result, index):
    """Cotangent of a result tuple of numpy.linalg (SlogdetResult, EighResult, SVDResult) from
    that of its field number ``index`` (``.logabsdet``, ``.eigenvectors``, ``.S``, ...): a plain
    tuple, zeros but for g there."""
    return getitem_vjp(g, tuple(result), index)
