"""Helpers for the derivatives of the runtime helpers themselves (so that generated code can
be differentiated again: grad(grad(f))) and of Python's builtins and containers."""
import numpy as np

__all__ = ["broadcast_like", "item_vjp", "pop_item_vjp", "at_get_vjp", "at_value_vjp",
           "sum_vjp", "like", "minmax_vjp", "at_multiply_value_vjp", "getattr_vjp"]


def broadcast_like(g, v):
    """Cotangent of ``v`` in ``unbroadcast(v, x)``: g spread back over v's shape."""
    return np.broadcast_to(g, np.shape(v)).astype(np.result_type(v), copy=False) \
        if isinstance(v, np.ndarray) else np.result_type(v).type(g) if np.ndim(g) == 0 \
        else np.asarray(g)


def item_vjp(g, idx, v):
    """Cotangent of ``v`` in ``setitem(x, idx, v)``."""
    if isinstance(g, np.ndarray):
        from .runtime import unbroadcast
        return unbroadcast(g[idx], v)
    return g[idx]


def pop_item_vjp(g, obj, key=-1):
    """Cotangent of the container in ``pop_item(obj, key)``: g with a zero put back at key."""
    from .runtime import zeros_like
    if isinstance(obj, dict):
        return {k: (g[k] if k != key else zeros_like(obj[k])) for k in obj}
    key = key % len(obj)
    return list(g[:key]) + [zeros_like(obj[key])] + list(g[key:])


def at_get_vjp(g, x, idx, mode=None):
    """Cotangent of ``x`` in ``at_get(x, idx, mode)``: g added back where it was read;
    clamped reads accumulate at the clamped position, filled reads contribute nothing."""
    from .runtime import at_add
    return at_add(np.zeros(np.shape(x), np.result_type(x, np.float32) if not np.issubdtype(
        np.result_type(x), np.inexact) else np.result_type(x)), idx, g,
        mode="clip" if mode in (None, "clip", "promise_in_bounds") else None)


def at_value_vjp(g, idx, v, mode=None):
    """Cotangent of the values ``v`` in ``at_set/at_add(x, idx, v, mode)``: what reached x;
    dropped updates get zero."""
    from .runtime import at_get, unbroadcast
    read = at_get(g, idx, mode="clip") if mode == "clip" else \
        at_get(g, idx, mode="fill", fill_value=0)
    return unbroadcast(read, v)


def sum_vjp(g, iterable):
    """Cotangent of each element in the builtin ``sum(iterable)``."""
    from .runtime import unbroadcast
    return [unbroadcast(g, e) for e in iterable]


def like(g, x):
    """``g`` as the same kind of container as ``x`` (for ``list(x)``, ``tuple(x)``)."""
    if isinstance(x, np.ndarray):
        return np.asarray(g)
    return type(x)(g) if isinstance(x, (list, tuple)) else g


def minmax_vjp(g, args, ans):
    """Cotangents of the builtin ``max(*args)``/``min(*args)``: to the first argument (or
    element of a single iterable) equal to the result, as Python picks it."""
    items = list(args[0]) if len(args) == 1 else list(args)
    out, given = [], False
    for a in items:
        hit = (not given) and bool(np.all(a == ans))
        given |= hit
        out.append(g if hit else 0.0 * g)
    return [out] if len(args) == 1 else tuple(out)


def at_multiply_value_vjp(g, x, idx, v, mode=None):
    """Cotangent of the factors ``v`` in ``at_multiply(x, idx, v, mode)``: each factor's
    cotangent is g times x times the other factors that hit the same element."""
    from .runtime import scatter_positions, unbroadcast
    x = np.asarray(x)
    pos = scatter_positions(x.shape, idx, mode)
    vb = np.broadcast_to(np.asarray(v, np.result_type(x, v)), pos.shape)
    flat_g, flat_x = np.asarray(g).reshape(-1), x.reshape(-1)
    out = np.zeros(pos.shape, np.result_type(g, x, v))
    for k in np.ndindex(pos.shape):
        p = pos[k]
        if p < 0:
            continue
        others = np.prod([vb[j] for j in np.ndindex(pos.shape) if pos[j] == p and j != k])
        out[k] = flat_g[p] * flat_x[p] * others
    return unbroadcast(out, v)


def getattr_vjp(g, obj, name):
    """Cotangent of ``obj`` in ``obj.name`` for a pytree object (a named tuple or a registered
    class): zeros everywhere but g at that attribute."""
    from .runtime import zeros_like
    out = zeros_like(obj)
    if hasattr(out, "_replace"):
        return out._replace(**{name: g})
    object.__setattr__(out, name, g)
    return out
