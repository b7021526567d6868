"""Derivatives of Python's iteration builtins (zip, enumerate, reversed, sorted, dict of
pairs): each moves elements without changing them, so its vjp moves the cotangents back and
its jvp moves the tangents the same way.  The cotangent of a sequence is a list of its
elements' cotangents (``None``: none, for keys and other non-float items)."""

from .base import like, zeros_like

__all__ = ["zip_vjp", "enumerate_vjp", "enumerate_jvp", "reversed_vjp", "sorted_order",
           "sorted_vjp", "sorted_jvp", "dict_vjp", "dict_jvp"]


def _cotangents(g, n):
    """``g`` (the cotangent of a sequence of ``n`` items, or None) as a list of n."""
    return [None] * n if g is None else list(g)


def _back(parts, x):
    """Cotangents of the items of ``x`` (None: zero) as the cotangent of ``x``."""
    items = list(x) if not isinstance(x, dict) else list(x.values())
    out = [zeros_like(item) if p is None else p for p, item in zip(parts, items)]
    if isinstance(x, dict):
        return dict(zip(x, out))
    return like(out, x)


def zip_vjp(g, iterables):
    """Cotangents of the sequences in ``zip(*iterables)``: the i-th part of each pair back to
    the i-th sequence; items past the shortest get zero."""
    pairs = _cotangents(g, min((len(s) for s in iterables), default=0))
    out = []
    for i, seq in enumerate(iterables):
        parts = [None if p is None else p[i] for p in pairs] + [None] * (len(seq) - len(pairs))
        out.append(_back(parts, seq))
    return tuple(out)


def enumerate_vjp(g, iterable):
    return _back([None if p is None else p[1] for p in _cotangents(g, len(iterable))], iterable)


def enumerate_jvp(diterable):
    """Tangent of ``enumerate(x)``: the counts carry none."""
    return [(0.0, t) for t in diterable]


def reversed_vjp(g, seq):
    return _back(_cotangents(g, len(seq))[::-1], seq)


def sorted_order(iterable, key=None, reverse=False):
    """The positions in ``iterable`` of the items of ``sorted(iterable, key, reverse)``
    (both sorts are stable and compare the same keys)."""
    items = list(iterable)
    by = (lambda i: items[i]) if key is None else (lambda i: key(items[i]))
    return sorted(range(len(items)), key=by, reverse=reverse)


def sorted_vjp(g, iterable, key=None, reverse=False):
    order = sorted_order(iterable, key, reverse)
    parts = [None] * len(order)
    for j, gj in zip(order, _cotangents(g, len(order))):
        parts[j] = gj
    return _back(parts, iterable)


def sorted_jvp(diterable, iterable, key=None, reverse=False):
    tangents = list(diterable.values()) if isinstance(diterable, dict) else list(diterable)
    return [tangents[i] for i in sorted_order(iterable, key, reverse)]


def _pairs(iterable):
    return list(iterable.items()) if isinstance(iterable, dict) else list(iterable)


def dict_vjp(g, iterable):
    """Cotangent of the (key, value) pairs in ``dict(pairs)``: a repeated key's value is the
    last one given, the earlier ones get zero."""
    pairs, seen, parts = _pairs(iterable), set(), []
    for k, v in reversed(pairs):
        parts.append((None, None if g is None or k in seen else g[k]))
        seen.add(k)
    parts = parts[::-1]
    if isinstance(iterable, dict):
        return {k: zeros_like(v) if p[1] is None else p[1] for (k, v), p in zip(pairs, parts)}
    return like([(zeros_like(k), zeros_like(v) if p[1] is None else p[1])
                 for (k, v), p in zip(pairs, parts)], iterable)


def dict_jvp(diterable, iterable):
    """Tangent of ``dict(pairs)``: keyed by the primal keys (a key's tangent is None)."""
    return {k: t[1] for (k, _), t in zip(_pairs(iterable), _pairs(diterable))}
