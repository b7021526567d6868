"""Helpers for the derivative rules of shape ops, products and ``numpy.linalg`` (rules/shape.py,
rules/products.py, rules/linalg.py).  runtime.py re-exports them, so templates name them directly.

A ``*_vjp`` helper returns the cotangent of one argument, shaped like that argument, from ``g``
(the cotangent of the output) and what the rule passes.  Matrices may be stacked: the last two
axes are the matrix.  Only real inputs are covered.
"""
import string

import numpy as np

# runtime imports this module at its end, when these names are already defined
from .runtime import getitem_vjp, unbroadcast

__all__ = [
    # shape
    "rollaxis_vjp", "atleast_vjp", "unbroadcast_all", "as_column", "concatenate_vjp", "dense",
    "concatenate_join",
    "tile_vjp",
    "repeat_vjp", "pad_vjp", "take_vjp", "take_along_axis_vjp", "diagonal_vjp", "array_vjp",
    # products
    "dot_axes", "tensordot_vjp_a", "tensordot_vjp_b", "kron_vjp_a", "kron_vjp_b", "cross_vjp",
    "einsum_vjp", "einsum_cross",
    # linalg
    "solve_vjp_a", "solve_vjp_b", "cholesky_vjp", "eigh_vjp", "svd_vjp", "off_diagonal_inverse", "norm_vjp",
    "pinv_vjp", "matrix_power_vjp", "lstsq_vjp_a", "lstsq_vjp_b", "multi_dot_vjp", "field_vjp",
]


def _unbroadcast(g, x):
    return unbroadcast(g, x)


def _T(x):
    """Transpose of a (stack of) matrices."""
    return np.swapaxes(x, -1, -2)


def _diag(v):
    """A (stack of) diagonal matrices with ``v`` on the diagonal."""
    v = np.asarray(v)
    return v[..., None, :] * np.eye(v.shape[-1], dtype=v.dtype)


# --- shape ---------------------------------------------------------------------------------

def rollaxis_vjp(g, a, axis, start=0):
    """Cotangent of ``a`` in ``np.rollaxis(a, axis, start)``: the rolled axis moved back."""
    n = np.ndim(a)
    axis, start = axis % n, start + n if start < 0 else start
    return np.moveaxis(g, start - 1 if start > axis else start, axis)


def atleast_vjp(g, arys):
    """Cotangents of ``arys`` in ``np.atleast_1d(*arys)`` (and 2d, 3d): g (a tuple when there
    are several arrays) reshaped back."""
    gs = g if len(arys) > 1 else (g,)
    return tuple(np.reshape(gi, np.shape(a)) for gi, a in zip(gs, arys))


def unbroadcast_all(g, xs):
    """Cotangents of ``xs`` in ``np.broadcast_arrays(*xs)``: each part of g summed back to its
    array's shape (None, an unused part: zeros)."""
    return tuple(_unbroadcast(gi, x) for gi, x in zip(dense(g, np.broadcast_arrays(*xs)), xs))


def as_column(a):
    """``a`` as ``np.column_stack`` lays out one array: 0-d and 1-D as a column."""
    return np.reshape(a, (-1, 1)) if np.ndim(a) < 2 else a


def concatenate_vjp(g, arrays, axis=0, promote=None):
    """Cotangents of ``arrays`` in ``np.concatenate([promote(a) for a in arrays], axis)``
    (np.vstack is ``promote=np.atleast_2d, axis=0``): g cut along ``axis`` at the arrays'
    lengths, each part reshaped to its array's shape (a list; an array when ``arrays`` is one).
    ``axis=None``: the arrays were flattened."""
    parts = [a if promote is None else promote(a) for a in arrays]
    if axis is None:
        g, axis, lengths = np.ravel(g), 0, [np.size(p) for p in parts]
    else:
        lengths = [np.shape(p)[axis] for p in parts]
    pieces = np.split(g, np.cumsum(lengths)[:-1], axis)
    out = [np.reshape(gi, np.shape(a)) for gi, a in zip(pieces, arrays)]
    return np.stack(out) if isinstance(arrays, np.ndarray) else out


def concatenate_join(parts, g, arrays, axis=0, promote=None):
    """The vjp of ``concatenate_vjp(g, arrays, axis, promote)`` in g (it is linear): the
    cotangents ``parts`` of its pieces joined back, in g's shape."""
    like = [a if promote is None else promote(a) for a in arrays]
    pieces = [np.zeros(np.shape(p)) if q is None else np.reshape(q, np.shape(p))
              for q, p in zip(parts, like)]
    if axis is None:
        return np.reshape(np.concatenate([np.ravel(p) for p in pieces]), np.shape(g))
    return np.concatenate(pieces, axis)


def dense(g, ans):
    """The cotangents ``g`` of the parts in ``ans`` (np.split's list, ...), with the None of an
    unused part replaced by zeros."""
    return [np.zeros(np.shape(p), np.result_type(p)) if gi is None else gi
            for gi, p in zip(g, ans)]


def tile_vjp(g, A, reps):
    """Cotangent of ``A`` in ``np.tile(A, reps)``: the sum of g's tiles."""
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    d = max(len(reps), np.ndim(A))
    reps = (1,) * (d - len(reps)) + reps
    shape = (1,) * (d - np.ndim(A)) + np.shape(A)
    tiles = np.reshape(g, [n for pair in zip(reps, shape) for n in pair])
    return np.reshape(tiles.sum(axis=tuple(range(0, 2 * d, 2))), np.shape(A))


def repeat_vjp(g, a, repeats, axis=None):
    """Cotangent of ``a`` in ``np.repeat(a, repeats, axis)``: each element gets the sum of the
    cotangents of its copies."""
    shape = (np.size(a),) if axis is None else np.shape(a)
    axis = 0 if axis is None else axis % len(shape)
    n = shape[axis]
    g = np.moveaxis(np.asarray(g), axis, 0)
    if np.ndim(repeats) == 0 or np.size(repeats) == 1:
        out = g.reshape((n, -1) + g.shape[1:]).sum(axis=1)
    else:
        out = np.zeros((n,) + g.shape[1:], g.dtype)
        np.add.at(out, np.repeat(np.arange(n), repeats), g)
    return np.reshape(np.moveaxis(out, 0, axis), np.shape(a))


def pad_vjp(g, array, pad_width, mode="constant", reflect_type="even"):
    """Cotangent of ``array`` in ``np.pad``.  Modes "constant" and "empty": the middle of g.
    Modes "edge", "wrap", and "reflect"/"symmetric" with reflect_type "even": every padded
    element copies one element of ``array``, found by padding the array of indices; g is summed
    onto the elements copied.  Other modes (statistics, "linear_ramp", "odd") are not covered."""
    shape = np.shape(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (len(shape), 2))
    if mode in ("constant", "empty"):
        return g[tuple(slice(b, b + n) for (b, _), n in zip(widths, shape))]
    if mode in ("edge", "wrap") or (mode in ("reflect", "symmetric") and reflect_type == "even"):
        source = np.pad(np.arange(np.size(array)).reshape(shape), pad_width, mode=mode)
        out = np.bincount(source.ravel(), np.ravel(g), minlength=np.size(array))
        return out.reshape(shape).astype(np.result_type(g), copy=False)
    raise NotImplementedError(f"strop has no derivative for np.pad with mode={mode!r}"
                              + (f", reflect_type={reflect_type!r}" if mode in (
                                  "reflect", "symmetric") else "")
                              + "; use mode 'constant', 'edge', 'wrap', 'reflect' or 'symmetric'")


def take_vjp(g, a, indices, axis=None, mode="raise"):
    """Cotangent of ``a`` in ``np.take(a, indices, axis, mode=mode)``: g added at the elements
    taken (an element taken twice gets both)."""
    shape = np.shape(a)
    n = np.size(a) if axis is None else shape[axis]
    idx = np.asarray(indices)
    if mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    g = np.asarray(g)
    out = np.zeros((n,) if axis is None else shape, g.dtype)
    np.add.at(out, idx if axis is None else (slice(None),) * (axis % len(shape)) + (idx,), g)
    return np.reshape(out, shape)


def take_along_axis_vjp(g, arr, indices, axis=-1):
    """Cotangent of ``arr`` in ``np.take_along_axis(arr, indices, axis)``: g added back where
    each element was taken from.  With np.argsort or np.argpartition as ``indices``, the
    cotangent of np.sort and np.partition."""
    if axis is None:
        return take_vjp(g, arr, indices)
    shape, g = np.shape(arr), np.asarray(g)
    index = list(np.ogrid[tuple(slice(m) for m in g.shape)])
    for i, (m, n) in enumerate(zip(g.shape, shape)):
        if n == 1 and m != 1:  # arr was broadcast along this axis
            index[i] = np.zeros_like(index[i])
    index[axis % len(shape)] = indices
    out = np.zeros(shape, g.dtype)
    np.add.at(out, tuple(index), g)
    return out


def diagonal_vjp(g, a, offset=0, axis1=0, axis2=1):
    """Cotangent of ``a`` in ``np.diagonal(a, offset, axis1, axis2)``: zeros with g written on
    that diagonal (g's last axis runs along it; a last axis of 1 is broadcast, as np.trace's
    ``g[..., None]``)."""
    g = np.asarray(g)
    out = np.zeros(np.shape(a), np.result_type(g, 1.0))
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    row, col = max(-offset, 0), max(offset, 0)
    k = max(0, min(view.shape[-2] - row, view.shape[-1] - col))
    i = np.arange(k)
    view[..., i + row, i + col] = g
    return out


def array_vjp(g, object):
    """Cotangent of ``object`` in ``np.array(object)`` (np.asarray, np.copy, ...): g shaped like
    an array, or split up for a (nested) list or tuple of arrays and numbers."""
    if isinstance(object, (list, tuple)):
        g = np.reshape(g, np.shape(object))  # undoes ndmin
        return type(object)(_array_parts(gi, o) for gi, o in zip(g, object))
    return _array_parts(g, object)


def _array_parts(g, object):
    if isinstance(object, (list, tuple)):
        return type(object)(_array_parts(gi, o) for gi, o in zip(g, object))
    out = np.reshape(g, np.shape(object))
    return out if isinstance(object, np.ndarray) else out[()]


# --- products ------------------------------------------------------------------------------

def dot_axes(a, b):
    """The axes ``np.dot(a, b)`` contracts, as ``np.tensordot`` takes them: a's last with b's
    second-to-last (b's only one when b is 1-D); none when either is a scalar."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return 0
    return [np.ndim(a) - 1], [max(np.ndim(b) - 2, 0)]


def _tensordot_axes(a, b, axes):
    """The contracted axes of ``np.tensordot(a, b, axes)``: two lists of non-negative axes,
    paired in order, and the free axes of a and of b."""
    na, nb = np.ndim(a), np.ndim(b)
    if np.ndim(axes) == 0:
        n = int(axes)
        ax_a, ax_b = list(range(na - n, na)), list(range(n))
    else:
        ax_a, ax_b = ([x] if np.ndim(x) == 0 else list(x) for x in axes)
        ax_a, ax_b = [x % na for x in ax_a], [x % nb for x in ax_b]
    return (ax_a, ax_b, [i for i in range(na) if i not in ax_a],
            [i for i in range(nb) if i not in ax_b])


def tensordot_vjp_a(g, a, b, axes=2):
    """Cotangent of ``a`` in ``np.tensordot(a, b, axes)``: g contracted with b over b's free
    axes, then a's axes put back in their order."""
    ax_a, ax_b, free_a, free_b = _tensordot_axes(a, b, axes)
    ga = np.tensordot(g, b, (list(range(len(free_a), np.ndim(g))), free_b))
    # ga's axes: a's free axes, then b's contracted axes in b's order, i.e. their partners in a
    partners = [ax_a[j] for j in np.argsort(ax_b)]
    return np.transpose(ga, np.argsort(free_a + partners))


def tensordot_vjp_b(g, a, b, axes=2):
    """Cotangent of ``b`` in ``np.tensordot(a, b, axes)``."""
    ax_a, ax_b, free_a, free_b = _tensordot_axes(a, b, axes)
    gb = np.tensordot(a, g, (free_a, list(range(len(free_a)))))
    partners = [ax_b[j] for j in np.argsort(ax_a)]
    return np.transpose(gb, np.argsort(partners + free_b))


def _kron_blocks(g, a, b):
    """g of ``np.kron(a, b)`` with axes (a's axes..., b's axes...), and a and b with leading
    ones up to the same number of axes."""
    d = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (d - np.ndim(a)) + np.shape(a)
    sb = (1,) * (d - np.ndim(b)) + np.shape(b)
    g = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])
    g = np.transpose(g, list(range(0, 2 * d, 2)) + list(range(1, 2 * d, 2)))
    return g, np.reshape(a, sa), np.reshape(b, sb), d


def kron_vjp_a(g, a, b):
    """Cotangent of ``a`` in ``np.kron(a, b)``: each block of g contracted with b."""
    g, _, b, d = _kron_blocks(g, a, b)
    return np.reshape(np.tensordot(g, b, (list(range(d, 2 * d)), list(range(d)))), np.shape(a))


def kron_vjp_b(g, a, b):
    """Cotangent of ``b`` in ``np.kron(a, b)``: the blocks of g weighted by a, summed."""
    g, a, _, d = _kron_blocks(g, a, b)
    return np.reshape(np.tensordot(a, g, (list(range(d)), list(range(d)))), np.shape(b))


def cross_vjp(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cotangent of ``a`` in ``np.cross(a, b, ...)`` (3-vectors): ``b x g``, with its vector axis
    where a has it.  (For b: ``cross_vjp(-g, b, a, ...)``, as a x b = -(b x a).)"""
    if axis is not None:
        axisa = axisb = axisc = axis
    ndim = np.ndim(a)
    return _unbroadcast(np.cross(b, g, axisa=axisb, axisb=axisc, axisc=axisa % ndim - ndim), a)


def _einsum_specs(subscripts, operands):
    """The input subscripts of an einsum and its explicit output subscript, with ``...`` spelled
    out in unused letters (right-aligned, as NumPy broadcasts them)."""
    subscripts = subscripts.replace(" ", "")
    ins, arrow, out = subscripts.partition("->")
    ins = ins.split(",")
    unused = [c for c in string.ascii_letters if c not in subscripts]
    ranks = [np.ndim(x) - len(s.replace("...", "")) if "..." in s else 0
             for s, x in zip(ins, operands)]
    ell = "".join(unused[:max(ranks, default=0)])
    if not arrow:  # implicit output: broadcast axes, then the letters used once, sorted
        joined = "".join(ins).replace(".", "")
        once = sorted(c for c in joined if joined.count(c) == 1)
        out = "..." + "".join(once) if any("..." in s for s in ins) else "".join(once)
    ins = [s.replace("...", ell[len(ell) - r:]) for s, r in zip(ins, ranks)]
    return ins, out.replace("...", ell), unused[len(ell):]


def _einsum_call(subscripts, operands):
    """``(spec, arrays, slots)`` of a call ``np.einsum(subscripts, *operands)``: its subscripts as
    a string, its arrays, and each array's position in ``(subscripts, *operands)``.  The
    interleaved form ``np.einsum(x, [0, 1], y, [1, 2], [0, 2])`` is spelled as a string (axis
    number i as the i-th ASCII letter, as NumPy reads them)."""
    if isinstance(subscripts, str):
        return subscripts, [np.asarray(x) for x in operands], list(range(1, len(operands) + 1))
    args = (subscripts,) + tuple(operands)
    n = len(args) // 2

    def spell(sub):
        return "".join("..." if c is Ellipsis else string.ascii_letters[c] for c in sub)
    spec = ",".join(spell(args[2 * i + 1]) for i in range(n))
    if len(args) % 2:
        spec += "->" + spell(args[-1])
    return spec, [np.asarray(args[2 * i]) for i in range(n)], [2 * i for i in range(n)]


def _einsum_grads(g, spec, operands):
    """Cotangents of the arrays ``operands`` in ``np.einsum(spec, *operands)``: for operand k,
    the einsum of g with the other operands into k's subscripts.  A letter repeated in k's
    subscripts ("ii", a diagonal) gets a fresh letter tied to it by an identity matrix; a letter
    found only in k (summed away) gets a vector of ones; axes k broadcast are summed back."""
    ins, out, unused = _einsum_specs(spec, operands)
    grads = []
    for k, (sub, x) in enumerate(zip(ins, operands)):
        specs = [out] + ins[:k] + ins[k + 1:]
        arrays = [g] + operands[:k] + operands[k + 1:]
        fresh, target = iter(unused), ""
        for c, n in zip(sub, x.shape):
            if c in target:
                f = next(fresh)
                specs.append(c + f)
                arrays.append(np.eye(n))
                c = f
            target += c
        for c, n in zip(target, x.shape):
            if not any(c in s for s in specs):
                specs.append(c)
                arrays.append(np.ones(n))
        gk = np.einsum(",".join(specs) + "->" + target, *arrays, optimize=len(arrays) > 2)
        grads.append(_unbroadcast(gk, x))
    return grads


def _aligned(parts, slots, n, first):
    """Per-array values placed at their positions in ``(subscripts, *operands)``: the part of
    ``subscripts`` (``first``) or the tuple for ``operands`` (None where no array is)."""
    out = [None] * (n + 1)
    for s, p in zip(slots, parts):
        out[s] = p
    return out[0] if first else tuple(out[1:])


def einsum_vjp(g, subscripts, operands, first=False):
    """Cotangents of ``operands`` in ``np.einsum(subscripts, *operands)`` (a tuple, None for a
    sublist of the interleaved form); ``first``: that of ``subscripts`` instead, the first array
    of the interleaved form."""
    spec, arrays, slots = _einsum_call(subscripts, operands)
    return _aligned(_einsum_grads(g, spec, arrays), slots, len(operands), first)


def _einsum_tangents(slots, dsubscripts, doperands, arrays):
    """The tangent of each array (None: none), from those of ``subscripts`` and ``operands``."""
    ts = [dsubscripts] + list(doperands if doperands is not None else [None] * (max(slots)))
    out = []
    for s, x in zip(slots, arrays):
        t = ts[s] if s < len(ts) else None
        out.append(None if t is None or (np.ndim(t) == 0 and np.ndim(x) > 0) else t)
    return out


def einsum_cross(v, subscripts, operands, dsubscripts, doperands, first=False):
    """The derivative of ``einsum_vjp(v, subscripts, operands, first)`` along the tangents of
    the arrays (a vjp of einsum_vjp, and its jvp in the arrays): for each array j, the sum over
    the arrays k != j with a tangent of the cotangent of j with k replaced by its tangent."""
    spec, arrays, slots = _einsum_call(subscripts, operands)
    ts = _einsum_tangents(slots, dsubscripts, doperands, arrays)
    parts = [None] * len(arrays)
    for k, t in enumerate(ts):
        if t is None:
            continue
        swapped = arrays[:k] + [np.asarray(t)] + arrays[k + 1:]
        for j, gj in enumerate(_einsum_grads(v, spec, swapped)):
            if j != k:
                parts[j] = gj if parts[j] is None else parts[j] + gj
    parts = [np.zeros(x.shape, np.result_type(x, 1.0)) if p is None else p
             for p, x in zip(parts, arrays)]
    return _aligned(parts, slots, len(operands), first)


# --- linalg --------------------------------------------------------------------------------

def _solve_adjoint(g, a, b):
    """``solve(aᵀ, g)``, with b a vector exactly when it is 1-D (NumPy 2's rule)."""
    if np.ndim(b) == 1:
        return np.linalg.solve(_T(a), np.asarray(g)[..., None])[..., 0]
    return np.linalg.solve(_T(a), g)


def solve_vjp_a(g, a, b, ans):
    """Cotangent of ``a`` in ``x = np.linalg.solve(a, b)``: ``-solve(aᵀ, g) xᵀ``."""
    gb = _solve_adjoint(g, a, b)
    if np.ndim(b) == 1:
        return _unbroadcast(-gb[..., :, None] * ans[..., None, :], a)
    return _unbroadcast(-gb @ _T(ans), a)


def solve_vjp_b(g, a, b):
    """Cotangent of ``b`` in ``np.linalg.solve(a, b)``: ``solve(aᵀ, g)``."""
    return _unbroadcast(_solve_adjoint(g, a, b), b)


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
        raise NotImplementedError(f"strop has no derivative for the matrix norm ord={ord!r}")
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
