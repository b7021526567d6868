"""Helpers for the derivatives of the runtime helpers themselves (so that generated code can
be differentiated again: grad(grad(f))) and of Python's builtins and containers."""
import numpy as np

# runtime imports this module at its end, when these names are already defined
from .runtime import (_CONTAINERS, add, at_add, at_get, getitem_vjp, scatter_positions,
                      unbroadcast, zeros_like)

__all__ = ["broadcast_like", "item_vjp", "pop_item_vjp", "at_get_vjp", "at_value_vjp",
           "sum_vjp", "like", "minmax_vjp", "at_multiply_value_vjp", "getattr_vjp", "extend",
           "update", "iterable", "iterable_vjp", "get_vjp", "get_default_vjp", "items_vjp",
           "update_vjp", "put_along_axis", "copyto", "plus", "plus_vjp", "times", "times_vjp",
           "times_jvp"]


def broadcast_like(g, v):
    """Cotangent of ``v`` in ``unbroadcast(v, x)``: g spread back over v's shape."""
    return np.broadcast_to(g, np.shape(v)).astype(np.result_type(v), copy=False) \
        if isinstance(v, np.ndarray) else np.result_type(v).type(g) if np.ndim(g) == 0 \
        else np.asarray(g)


def item_vjp(g, idx, v):
    """Cotangent of ``v`` in ``setitem(x, idx, v)``."""
    if isinstance(g, np.ndarray):
        return unbroadcast(g[idx], v)
    return g[idx]


def pop_item_vjp(g, obj, key=-1):
    """Cotangent of the container in ``pop_item(obj, key)``: g with a zero put back at key."""
    if isinstance(obj, dict):
        return {k: (g[k] if k != key else zeros_like(obj[k])) for k in obj}
    key = key % len(obj)
    return list(g[:key]) + [zeros_like(obj[key])] + list(g[key:])


def at_get_vjp(g, x, idx, mode=None):
    """Cotangent of ``x`` in ``at_get(x, idx, mode)``: g added back where it was read;
    clamped reads accumulate at the clamped position, filled reads contribute nothing."""
    return at_add(np.zeros(np.shape(x), np.result_type(x, np.float32) if not np.issubdtype(
        np.result_type(x), np.inexact) else np.result_type(x)), idx, g,
        mode="clip" if mode in (None, "clip", "promise_in_bounds") else None)


def at_value_vjp(g, idx, v, mode=None):
    """Cotangent of the values ``v`` in ``at_set/at_add(x, idx, v, mode)``: what reached x;
    dropped updates get zero."""
    read = at_get(g, idx, mode="clip") if mode == "clip" else \
        at_get(g, idx, mode="fill", fill_value=0)
    return unbroadcast(read, v)


def sum_vjp(g, iterable):
    """Cotangent of each element in the builtin ``sum(iterable)``."""
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
    out = zeros_like(obj)
    if hasattr(out, "_replace"):
        return out._replace(**{name: g})
    object.__setattr__(out, name, g)
    return out


def extend(lst, values):
    """Functional ``lst.extend(values)``."""
    return list(lst) + list(values)


def plus(a, b):
    """Python's ``a + b`` where an operand is a list or tuple (normalize emits it, see
    transformer/operands.py): two sequences concatenate, else NumPy adds."""
    return a + b


def _is_seq(v):
    return isinstance(v, (list, tuple))


def plus_vjp(g, a, b, which):
    """Cotangent of ``(a, b)[which]`` in ``plus(a, b)``."""
    if _is_seq(a) and _is_seq(b):
        return like(g[:len(a)], a) if which == 0 else like(g[len(a):], b)
    x = (a, b)[which]
    return unbroadcast(g, np.asarray(x) if _is_seq(x) else x)


def times(a, b):
    """Python's ``a * b`` where an operand is a list or tuple: a sequence repeated by an int,
    else NumPy's product."""
    return a * b


def _repeated(a, b):
    """0 or 1: which operand of ``a * b`` is a sequence repeated by the other; None: a product."""
    for k, (s, n) in enumerate(((a, b), (b, a))):
        if _is_seq(s) and isinstance(n, (int, np.integer)):
            return k
    return None


def times_vjp(g, a, b, which):
    """Cotangent of ``(a, b)[which]`` in ``times(a, b)``: a repeated sequence's, the sum of its
    copies' (the count has none); a factor's, NumPy's."""
    k = _repeated(a, b)
    if k is not None:
        if which != k:
            return None
        s, n = (a, b) if k == 0 else (b, a)
        out = zeros_like(s)
        for i in range(max(n, 0)):
            out = [add(o, gi) for o, gi in zip(out, g[i * len(s):(i + 1) * len(s)])]
        return like(out, s)
    x, y = ((a, b) if which == 0 else (b, a))
    return unbroadcast(g * np.asarray(y), np.asarray(x) if _is_seq(x) else x)


def times_jvp(a, b, da, db):
    """Tangent of ``times(a, b)`` (None: no tangent)."""
    k = _repeated(a, b)
    if k is not None:
        return times(zeros_like(a) if da is None else da, b) if k == 0 else \
            times(a, zeros_like(b) if db is None else db)
    arr = lambda v: np.asarray(v) if _is_seq(v) else v  # noqa: E731
    out = 0.0 if da is None else arr(da) * arr(b)
    return out if db is None else out + arr(a) * arr(db)


def update(d, other):
    """Functional ``d.update(other)``."""
    return {**d, **other}


def iterable(x):
    """What a ``for`` loop walks: dicts (their keys) and other iterables as a list; arrays,
    lists and tuples as they are."""
    if isinstance(x, (np.ndarray, list, tuple)) or not isinstance(x, _CONTAINERS + (
            range,)) and hasattr(x, "__getitem__") and hasattr(x, "__len__"):
        return x
    return list(x)


def iterable_vjp(g, x):
    if isinstance(x, dict):   # its keys carry no derivative
        return zeros_like(x)
    return like(g, x) if not isinstance(x, (np.ndarray, list, tuple)) else g


def get_vjp(g, d, key, default=None):
    """Cotangent of the dict in ``d.get(key, default)``."""
    return getitem_vjp(g, d, key) if key in d else zeros_like(d)


def get_default_vjp(g, d, key):
    """Cotangent of ``default`` in ``d.get(key, default)``: g when the key is missing."""
    return 0.0 * g if key in d else g


def items_vjp(g, d):
    """Cotangent of the dict in ``d.items()``, from the cotangents of the (key, value) pairs."""
    return {k: pair[1] for k, pair in zip(d, g)}


def update_vjp(g, d, other, which):
    """Cotangents in ``update(d, other)``: of ``d`` (0), zero where ``other`` overwrote it; of
    ``other`` (1), its entries."""
    if which == 1:
        return {k: g[k] for k in other}
    return {k: (zeros_like(d[k]) if k in other else g[k]) for k in d}


def put_along_axis(arr, indices, values, axis):
    """Functional ``np.put_along_axis(arr, indices, values, axis)``."""
    out = np.array(arr, copy=True)
    np.put_along_axis(out, indices, values, axis)
    return out


def copyto(dst, src):
    """Functional ``np.copyto(dst, src)``: src broadcast into dst's shape and dtype."""
    return np.broadcast_to(np.asarray(src, dtype=np.result_type(dst)), np.shape(dst)).copy()
