"""Helpers of the rules of reductions (rules/reductions.py).

``<reduction>_grad(a, ...)`` is the derivative of each output element with respect to the
elements of ``a`` it reduces, shaped like ``a``: a rule multiplies it by ``expand_to(g, ...)``.
"""
import numpy as np

from .base import _axes, _float_dtype, expand_to

__all__ = ["mean_grad", "var_grad", "prod_grad", "extremum_grad", "ptp_grad", "rev_cumsum",
           "cumprod_vjp", "average_grad", "average_weights_vjp"]


def _exclusive_cumprod(x):
    """Products of the elements before each one along the last axis (1 for the first)."""
    return np.cumprod(np.concatenate([np.ones_like(x[..., :1]), x[..., :-1]], axis=-1), axis=-1)


def mean_grad(a, axis=None, where=True):
    """d mean(a, axis) / d a: 1/n on the n elements each mean takes (``where``), 0 elsewhere."""
    taken = np.broadcast_to(where, np.shape(a))
    n = np.sum(taken, axis=axis, keepdims=True)
    return (taken / n).astype(_float_dtype(a), copy=False)


def var_grad(a, axis=None, ddof=0, where=True, mean=None, correction=None):
    """d var(a, axis, ddof) / d a: 2 (a - mean) / (n - ddof) on the elements taken, 0 elsewhere.
    ``correction`` is NumPy 2's name for ddof; a given ``mean`` is used as the mean."""
    ddof = ddof if correction is None else correction
    taken = np.broadcast_to(where, np.shape(a))
    if mean is None:
        mean = np.mean(a, axis=axis, keepdims=True, where=taken)
    n = np.sum(taken, axis=axis, keepdims=True)
    return np.where(taken, 2 * (a - mean) / (n - ddof), 0).astype(_float_dtype(a), copy=False)


def prod_grad(a, axis=None, where=True, initial=None):
    """d prod(a, axis) / d a: the product of the other factors of each element's reduction,
    formed without dividing (exact where ``a`` has zeros); 0 outside ``where``."""
    x = np.asarray(np.where(where, a, 1))
    axes = _axes(x, axis)
    order = [i for i in range(x.ndim) if i not in axes] + axes
    moved = np.transpose(x, order)
    n = int(np.prod([x.shape[i] for i in axes]))
    flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (n,))
    others = _exclusive_cumprod(flat) * _exclusive_cumprod(flat[..., ::-1])[..., ::-1]
    others = np.transpose(others.reshape(moved.shape), np.argsort(order))
    if initial is not None:
        others = others * initial
    return np.where(where, others, 0).astype(_float_dtype(a), copy=False)


def extremum_grad(a, ans, axis=None, keepdims=False, where=True):
    """d max(a, axis) / d a (and min, given min's ``ans``): the elements equal to the result share
    it evenly (ties split, as in autograd); 0 elsewhere; NaN where the result is NaN."""
    ans = expand_to(ans, a, axis, keepdims)
    hit = (a == ans) & where
    share = hit / np.maximum(np.sum(hit, axis=axis, keepdims=True), 1)
    return np.where(np.isnan(ans), np.nan, share).astype(_float_dtype(a), copy=False)


def ptp_grad(a, axis=None):
    """d ptp(a, axis) / d a: the max's share minus the min's share."""
    return (extremum_grad(a, np.max(a, axis=axis, keepdims=True), axis, True)
            - extremum_grad(a, np.min(a, axis=axis, keepdims=True), axis, True))


def rev_cumsum(g, axis=None):
    """Sums of ``g`` from each element to the end along ``axis`` (g is 1-D when axis is None):
    the cotangent of ``np.cumsum`` before reshaping."""
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def cumprod_vjp(g, a, axis=None):
    """Cotangent of ``a`` in ``np.cumprod(a, axis)``, formed without dividing (exact at zeros):
    the sum over j >= i of g[j] * prod(a[:j+1] without a[i]) is prod(a[:i]) * s[i], where
    s[i] = g[i] + a[i+1] * s[i+1]."""
    x = np.ravel(a) if axis is None else np.moveaxis(np.asarray(a), axis, -1)
    g = np.moveaxis(np.asarray(g), -1 if axis is None else axis, -1)
    s = np.empty(g.shape, np.result_type(g, x))
    acc = 0
    for i in range(x.shape[-1] - 1, -1, -1):
        acc = g[..., i] + (x[..., i + 1] * acc if i + 1 < x.shape[-1] else 0)
        s[..., i] = acc
    out = _exclusive_cumprod(x) * s
    return out.reshape(np.shape(a)) if axis is None else np.moveaxis(out, -1, axis)


def _weights_like(a, axis, weights):
    """The weights of ``np.average`` broadcast to the shape of ``a``, as NumPy lays them out."""
    if weights is None:
        return np.ones(np.shape(a))
    w = np.asarray(weights)
    if w.shape == np.shape(a):
        return w
    axes = _axes(a, axis)
    w = np.transpose(w, np.argsort(axes))
    return np.reshape(w, [n if i in axes else 1 for i, n in enumerate(np.shape(a))])


def average_grad(a, axis=None, weights=None):
    """d average(a, axis, weights) / d a: each element's weight over its reduction's total."""
    w = _weights_like(a, axis, weights)
    return np.broadcast_to(w / np.sum(w, axis=axis, keepdims=True), np.shape(a)).astype(
        _float_dtype(a), copy=False)


def average_weights_vjp(g, a, ans, axis=None, keepdims=False, weights=None):
    """Cotangent of ``weights`` in ``np.average``: d ans / d w = (a - ans) / sum(w), summed back
    to the shape and axis order of ``weights``."""
    w = _weights_like(a, axis, weights)
    gw = (expand_to(g, a, axis, keepdims) * (a - expand_to(ans, a, axis, keepdims))
          / np.sum(w, axis=axis, keepdims=True))
    if np.shape(weights) == np.shape(a):
        return gw.astype(_float_dtype(weights), copy=False)
    axes = _axes(a, axis)
    gw = np.sum(gw, axis=tuple(i for i in range(np.ndim(a)) if i not in axes))
    return np.transpose(gw, np.argsort(np.argsort(axes))).astype(_float_dtype(weights), copy=False)
