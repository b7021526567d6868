"""Helpers of forward mode (the jvp templates of rules/), the check of the tangents given to
jvp, and the check of what a custom_vjp's bwd returns.  Like the other helpers they are
plain NumPy, called by generated code."""
import numpy as np

from .base import _CONTAINERS, _axes, _dtype, _float_dtype, expand_to, zeros_like
from .indexing import scatter_positions
from .linalg import off_diagonal_inverse
from .products import _einsum_call, _einsum_tangents
from .reductions import _weights_like

__all__ = ["tangent_like", "output_tangent", "atleast_jvp", "broadcast_arrays_jvp", "pad_jvp", "sort_jvp",
           "einsum_jvp", "einsum_jvp2", "cumprod_jvp", "average_weights_jvp", "cholesky_jvp",
           "eigh_jvp", "eigvalsh_jvp", "svd_jvp", "pinv_jvp", "lstsq_jvp_a", "lstsq_jvp_b",
           "matrix_power_jvp", "multi_dot_jvp", "minmax_jvp", "astype_tangent", "item_tangent",
           "sort_like_jvp", "at_multiply_value_jvp", "slogdet_jvp", "field_jvp",
           "solve_jvp_a", "custom_cotangents", "check_tangent"]


def _T(x):
    return np.swapaxes(x, -1, -2)


def tangent_like(t, ans):
    """The tangent ``t`` spread over the shape of the output ``ans`` (a broadcasting op whose
    other operands carry no tangent), in ans's float dtype."""
    shape = np.shape(ans)
    if np.shape(t) != shape:
        t = np.broadcast_to(t, shape).copy()
    dtype = _dtype(ans)
    if not np.issubdtype(dtype, np.inexact):
        return t
    if isinstance(ans, np.ndarray):
        return np.asarray(t).astype(dtype, copy=False)
    return dtype.type(t)


def output_tangent(t, out):
    """The tangent of an output, where a merge may have given its name a plain 0.0 on a path
    that did not bind it (an early return's value, set in a loop): zeros of out's shape."""
    if type(t) is float and t == 0.0 and np.ndim(out) > 0 or isinstance(out, _CONTAINERS) and \
            not isinstance(t, _CONTAINERS):
        return zeros_like(out)
    return t


# --- shape ops ---------------------------------------------------------------------------------

def atleast_jvp(darys, ans):
    """Tangent of ``np.atleast_Nd(*arys)``: each tangent reshaped like its output."""
    if len(darys) == 1:
        return np.reshape(darys[0], np.shape(ans))
    return tuple(np.reshape(d, np.shape(a)) for d, a in zip(darys, ans))


def broadcast_arrays_jvp(dargs, ans):
    return tuple(tangent_like(d, a) for d, a in zip(dargs, ans))


def pad_jvp(darray, pad_width, mode="constant", reflect_type="even"):
    """Tangent of ``np.pad``: the same padding of the tangent, with zeros where the padding is
    made of constants (mode "constant", "empty", "linear_ramp"'s end values)."""
    if mode in ("constant", "empty"):
        return np.pad(darray, pad_width)
    if mode in ("edge", "wrap"):
        return np.pad(darray, pad_width, mode)
    if mode in ("reflect", "symmetric"):
        return np.pad(darray, pad_width, mode, reflect_type=reflect_type)
    raise NotImplementedError(f"strop differentiates np.pad in modes constant, edge, wrap, "
                              f"reflect and symmetric, not {repr(mode)}")


def sort_jvp(da, a, axis=-1):
    """Tangent of ``np.sort(a, axis)``: the tangent in the sorting order."""
    if axis is None:
        return np.ravel(da)[np.argsort(a, axis=None)]
    return np.take_along_axis(da, np.argsort(a, axis=axis), axis=axis)


def sort_like_jvp(dx, x):
    if isinstance(x, list):
        order = sorted(range(len(x)), key=lambda i: x[i])
        return [dx[i] for i in order]
    return sort_jvp(dx, x, -1)


# --- products ----------------------------------------------------------------------------------

def einsum_jvp(subscripts, operands, doperands, dsubscripts=None):
    """Tangent of ``np.einsum(subscripts, *operands)``: the sum over the arrays with a tangent
    of the einsum with that array replaced by its tangent (``dsubscripts``: the tangent of the
    first array of the interleaved form)."""
    spec, arrays, slots = _einsum_call(subscripts, operands)
    out = 0.0
    for k, t in enumerate(_einsum_tangents(slots, dsubscripts, doperands, arrays)):
        if t is not None:
            args = arrays[:k] + [np.asarray(t)] + arrays[k + 1:]
            out = out + np.einsum(spec, *args, optimize=len(args) > 2)
    return out


def einsum_jvp2(subscripts, operands, tangent0, tangents, dsubscripts, doperands):
    """The derivative of ``einsum_jvp(subscripts, operands, tangents, tangent0)`` along the
    tangents ``d*`` of the arrays: the sum over pairs j != k of the einsum with array k replaced
    by its tangent and array j by its ``d`` tangent."""
    spec, arrays, slots = _einsum_call(subscripts, operands)
    ts = _einsum_tangents(slots, tangent0, tangents, arrays)
    us = _einsum_tangents(slots, dsubscripts, doperands, arrays)
    out = 0.0
    for k, t in enumerate(ts):
        for j, u in enumerate(us):
            if j != k and t is not None and u is not None:
                args = list(arrays)
                args[k], args[j] = np.asarray(t), np.asarray(u)
                out = out + np.einsum(spec, *args, optimize=len(args) > 2)
    return out


# --- reductions --------------------------------------------------------------------------------

def cumprod_jvp(da, a, axis=None):
    """Tangent of ``np.cumprod(a, axis)``: sum over j <= i of da[j] * prod(a[:i+1] without
    a[j]), formed without dividing (exact at zeros)."""
    x = np.ravel(a) if axis is None else np.moveaxis(np.asarray(a), axis, -1)
    d = np.ravel(da) if axis is None else np.moveaxis(np.asarray(da), axis, -1)
    out = np.zeros(np.broadcast_shapes(x.shape, d.shape), np.result_type(x, d, 1.0))
    prod = np.ones(x.shape[:-1])
    acc = np.zeros(out.shape[:-1])
    for i in range(x.shape[-1]):
        # acc: d/dt of prod(a[:i]) ; prod: prod(a[:i])
        acc = acc * x[..., i] + prod * d[..., i]
        prod = prod * x[..., i]
        out[..., i] = acc
    return out if axis is None else np.moveaxis(out, -1, axis)


def average_weights_jvp(dweights, a, ans, axis=None, keepdims=False, weights=None):
    """Tangent of ``np.average(a, axis, weights)`` in the weights: sum(dw (a - ans)) / sum(w)."""
    w = _weights_like(a, axis, weights)
    dw = _weights_like(a, axis, dweights)
    mean = expand_to(ans, a, axis, keepdims)
    axes = tuple(_axes(a, axis))
    out = np.sum(dw * (a - mean), axis=axes, keepdims=keepdims) / np.sum(
        np.broadcast_to(w, np.shape(a)), axis=axes, keepdims=keepdims)
    return out.astype(_float_dtype(ans), copy=False) if isinstance(out, np.ndarray) else out


# --- linalg ------------------------------------------------------------------------------------

def solve_jvp_a(da, a, b, ans):
    """Tangent of ``x = np.linalg.solve(a, b)`` in ``a``: ``solve(a, -da x)``, with b a vector
    exactly when it is 1-D (NumPy 2's rule)."""
    if np.ndim(b) == 1:
        return -np.linalg.solve(a, (da @ ans[..., None]))[..., 0]
    return -np.linalg.solve(a, da @ ans)


def slogdet_jvp(da, a, ans):
    """Tangents of ``(sign, logabsdet) = np.linalg.slogdet(a)``: (0, tr(a⁻¹ da))."""
    return (np.zeros(np.shape(ans[0])), np.trace(np.linalg.solve(a, da), axis1=-2, axis2=-1))


def field_jvp(dresult, index):
    """Tangent of a field of a numpy.linalg result tuple (``.eigenvalues``, ``.S``, ...)."""
    return dresult[index]


def cholesky_jvp(da, ans, upper=False):
    """Tangent of ``L = np.linalg.cholesky(a)``: ``L Φ(L⁻¹ sym(da) L⁻ᵀ)``, Φ the lower triangle
    with the diagonal halved (I. Murray, 2016); ``upper``: ``ans`` is Lᵀ."""
    L = _T(ans) if upper else ans
    sym = (da + _T(da)) / 2
    X = np.linalg.solve(L, _T(np.linalg.solve(L, _T(sym))))
    n = X.shape[-1]
    phi = np.tril(X) - 0.5 * X * np.eye(n)
    dL = L @ phi
    return _T(dL) if upper else dL


def eigh_jvp(da, ans):
    """Tangents of ``(w, v) = np.linalg.eigh(a)`` for the symmetric part of ``da``:
    dw = diag(vᵀ da v), dv = v (F ∘ vᵀ da v), F_ij = 1 / (w_j - w_i) off the diagonal."""
    w, v = ans
    sym = (da + _T(da)) / 2
    inner = _T(v) @ sym @ v
    dw = np.diagonal(inner, axis1=-2, axis2=-1)
    dv = v @ (off_diagonal_inverse(w[..., None, :] - w[..., :, None]) * inner)
    return (dw, dv)


def eigvalsh_jvp(da, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    return np.diagonal(_T(v) @ ((da + _T(da)) / 2) @ v, axis1=-2, axis2=-1)


def svd_jvp(da, a, ans, full_matrices=True, compute_uv=True, hermitian=False):
    """Tangents of ``np.linalg.svd(a)`` (J. Townsend, 2016; JAX's svd_jvp_rule), real inputs.
    With ``full_matrices`` the vectors beyond min(m, n) are arbitrary: their tangent is 0."""
    if hermitian:
        da = (da + _T(da)) / 2
    u, s, vh = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
    v = _T(vh)
    dS = _T(u) @ da @ v
    ds = np.diagonal(dS, axis1=-2, axis2=-1)
    if not compute_uv:
        return ds
    sd = s[..., None, :]
    F = off_diagonal_inverse((sd + _T(sd)) * (sd - _T(sd)))
    dSS, SdS = sd * dS, _T(sd) * dS
    du = u @ (F * (dSS + _T(dSS)))
    dv = v @ (F * (SdS + _T(SdS)))
    m, n = np.shape(a)[-2:]
    if m > n:
        dav = da @ v
        du = du + (dav - u @ (_T(u) @ dav)) / sd
    if n > m:
        dau = _T(da) @ u
        dv = dv + (dau - v @ (vh @ dau)) / sd
    dvh = _T(dv)
    if full_matrices and m != n:
        U, _, Vh = ans
        du = np.concatenate([du, np.zeros(np.shape(U)[:-1] + (m - du.shape[-1],))], axis=-1)
        dvh = np.concatenate([dvh, np.zeros((n - dvh.shape[-2],) + np.shape(Vh)[-1:])], axis=-2)
    return (du, ds, dvh)


def pinv_jvp(da, a, ans, hermitian=False):
    """Tangent of ``A⁺ = np.linalg.pinv(a)`` (Golub and Pereyra, 1973), the rank kept:
    -A⁺ dA A⁺ + A⁺A⁺ᵀ dAᵀ (I - A A⁺) + (I - A⁺A) dAᵀ A⁺ᵀ A⁺."""
    if hermitian:
        da = (da + _T(da)) / 2
    p = ans
    m, n = np.shape(a)[-2:]
    return (-p @ da @ p + p @ _T(p) @ _T(da) @ (np.eye(m) - a @ p)
            + (np.eye(n) - p @ a) @ _T(da) @ _T(p) @ p)


def _lstsq_x(ans):
    return ans[0]


def lstsq_jvp_a(da, a, b, ans):
    """Tangents of ``(x, residuals, rank, s) = np.linalg.lstsq(a, b)`` in ``a`` (full rank)."""
    x = ans[0]
    p = np.linalg.pinv(a)
    dp = pinv_jvp(da, a, p)
    dx = dp @ b
    dres = np.zeros(np.shape(ans[1]))
    if np.size(ans[1]):
        r = b - a @ x
        dres = np.reshape(-2 * np.sum(r * (da @ x + a @ dx), axis=0), np.shape(ans[1]))
    ds = svd_jvp(da, a, np.linalg.svd(a, compute_uv=False), False, False)
    return (dx, dres, 0.0, ds)


def lstsq_jvp_b(db, a, b, ans):
    x = ans[0]
    dx = np.linalg.pinv(a) @ db
    dres = np.zeros(np.shape(ans[1]))
    if np.size(ans[1]):
        r = b - a @ x
        dres = np.reshape(2 * np.sum(r * (db - a @ dx), axis=0), np.shape(ans[1]))
    return (dx, dres, 0.0, np.zeros(np.shape(ans[3])))


def matrix_power_jvp(da, a, n):
    """Tangent of ``np.linalg.matrix_power(a, n)``: sum over k of a^k da a^(n-1-k); for n < 0,
    that of the inverse's power, d(a⁻¹) = -a⁻¹ da a⁻¹."""
    if n < 0:
        inv = np.linalg.inv(a)
        return matrix_power_jvp(-inv @ da @ inv, inv, -n)
    out = np.zeros(np.broadcast_shapes(np.shape(a), np.shape(da)))
    for k in range(n):
        out = out + np.linalg.matrix_power(a, k) @ da @ np.linalg.matrix_power(a, n - 1 - k)
    return out


def multi_dot_jvp(darrays, arrays):
    out = 0.0
    for k in range(len(arrays)):
        parts = list(arrays[:k]) + [darrays[k]] + list(arrays[k + 1:])
        out = out + np.linalg.multi_dot(parts)
    return out


# --- builtins, methods, functional updates -----------------------------------------------------

def minmax_jvp(dargs, args, ans):
    """Tangent of the builtin ``max(*args)``/``min(*args)``: that of the first argument (or
    element of a single iterable) equal to the result, as Python picks it."""
    items, tangents = (list(args[0]), list(dargs[0])) if len(args) == 1 else (list(args),
                                                                              list(dargs))
    for a, d in zip(items, tangents):
        if bool(np.all(a == ans)):
            return d
    return zeros_like(ans)


def astype_tangent(dself, ans):
    """Tangent of ``x.astype(dtype)``: in the new dtype, 0 when it is not a float type."""
    if np.issubdtype(np.result_type(ans), np.inexact):
        return np.asarray(dself).astype(np.result_type(ans)) if isinstance(ans, np.ndarray) \
            else np.result_type(ans).type(dself)
    return zeros_like(ans)


def item_tangent(dself, args):
    """Tangent of ``x.item(*args)``."""
    if not args:
        return np.asarray(dself).reshape(-1)[0].item()
    return np.asarray(dself)[args[0] if len(args) == 1 else tuple(args)].item()


def at_multiply_value_jvp(dv, x, idx, v, mode=None):
    """Tangent of ``at_multiply(x, idx, v, mode)`` in the factors ``v``: at each element hit,
    x times the sum over its factors of that factor's tangent times the other factors."""
    x = np.asarray(x)
    pos = scatter_positions(x.shape, idx, mode)
    vb = np.broadcast_to(np.asarray(v, np.result_type(x, v)), pos.shape)
    db = np.broadcast_to(np.asarray(dv, np.result_type(x, dv)), pos.shape)
    out = np.zeros(x.size, np.result_type(x, v, dv))
    flat_x = x.reshape(-1)
    for k in np.ndindex(pos.shape):
        p = pos[k]
        if p < 0:
            continue
        others = np.prod([vb[j] for j in np.ndindex(pos.shape) if pos[j] == p and j != k])
        out[p] += flat_x[p] * others * db[k]
    return out.reshape(x.shape)


# --- custom rules ------------------------------------------------------------------------------

def custom_cotangents(cts, args, name, lanes=0):
    """The cotangents a custom_vjp's ``bwd`` returned, one per differentiable argument
    (``args``), checked against them; None (no cotangent) becomes zeros.  ``lanes``: 1 under
    vmap (messages give the shapes of one lane)."""
    n = len(args)
    if not isinstance(cts, (tuple, list)) or len(cts) != n:
        got = f"a {type(cts).__name__} of length {len(cts)}" if isinstance(
            cts, (tuple, list)) else f"a {type(cts).__name__}"
        raise TypeError(f"the bwd function of the custom_vjp {name} must return a tuple of "
                        f"{n} cotangent(s), one per differentiable argument, but returned {got}")
    out = []
    for i, (c, a) in enumerate(zip(cts, args)):
        if c is not None and not isinstance(a, _CONTAINERS + (dict,)) and \
                np.shape(c) != np.shape(a):   # (a container's cotangent: its own shapes)
            raise ValueError(f"the bwd function of the custom_vjp {name} returned a cotangent "
                             f"of shape {np.shape(c)[lanes:]} for its differentiable argument "
                             f"{i}, which has shape {np.shape(a)[lanes:]}: they must match")
        out.append(zeros_like(a) if c is None else c)
    return tuple(out)


def check_tangent(t, x, name, i):
    """Check that a tangent given to jvp matches its primal in shape and dtype."""
    if np.shape(t) != np.shape(x):
        raise ValueError(f"jvp: the tangent of {name} (primal {i}) has shape {np.shape(t)}, "
                         f"but its primal has shape {np.shape(x)}: they must match")
    dt, dx = np.result_type(t), np.result_type(x)
    if dt != dx:
        raise TypeError(f"jvp: the tangent of {name} (primal {i}) has dtype {dt}, but its "
                        f"primal has dtype {dx}: they must match (pass e.g. "
                        f"np.asarray(t, {dx}))")
    return t
