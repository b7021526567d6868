"""Helpers of Python's containers and builtins: functional forms of the list and dict methods,
the tapes of the reverse sweep, and their derivatives."""
import numpy as np

from .base import _CONTAINERS, like, unbroadcast, zeros_like
from .indexing import add_at_index_inplace, getitem_vjp, setitem_vjp

__all__ = ["tree_vdot", "append", "insert", "extend", "update", "item_of", "pop_item", "sort_like",
           "iterable", "stack", "push", "pop", "tape_array", "tape_put", "shape_like", "item_vjp",
           "kept_shape", "shaped", "setitem_split", "setitem_split_inplace", "setitem_split_kept",
           "setitem_split_add",
           "pop_item_vjp", "getattr_vjp", "sum_vjp", "minmax_vjp", "iterable_vjp", "get_vjp",
           "get_default_vjp", "items_vjp", "update_vjp"]


def tree_vdot(a, b):
    """<a, b>: the sum of the products of two pytrees' leaves, paired in flattening order (a
    custom_jvp rule's tangent output dotted with its cotangent: custom.py)."""
    from ..tree_util import tree_leaves
    if not isinstance(a, _CONTAINERS):
        return np.sum(a * b)
    return sum(np.sum(x * y) for x, y in zip(tree_leaves(a), tree_leaves(b)))


def append(lst, v):
    """Functional ``lst.append(v)``."""
    return lst + [v]


def insert(lst, i, v):
    """Functional ``lst.insert(i, v)``."""
    return lst[:i] + [v] + lst[i:] if i != -1 else lst[:-1] + [v] + lst[-1:]


def item_of(obj, key=-1):
    """The value ``obj.pop(key)`` returns."""
    return obj[key]


def pop_item(obj, key=-1):
    """``obj`` without ``obj[key]``: the container ``obj.pop(key)`` leaves."""
    if isinstance(obj, dict):
        return {k: v for k, v in obj.items() if k != key}
    key = key % len(obj)
    return obj[:key] + obj[key + 1:]


def sort_like(x):
    """Functional ``x.sort()`` for arrays and lists."""
    return sorted(x) if isinstance(x, list) else np.sort(x)


def extend(lst, values):
    """Functional ``lst.extend(values)``."""
    return list(lst) + list(values)


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


# Tapes of the reverse sweep: per-variable stacks.  push/pop mutate the stack in place; a stack
# is only ever used linearly, so the generated code treats them as values.
def stack():
    return []


def tape_array(n, like):
    """A tape of n numbers of ``like``'s type, indexed by iteration (compiled code's tapes);
    empty for ``range(n)`` of a negative n, which runs no iteration."""
    return np.empty(max(n, 0), np.result_type(like))


def tape_put(tape, i, v):
    """``tape[i] = v`` for an array tape (see tape_array)."""
    tape[i] = v


def shape_like(x):
    """What a tape keeps of an array the adjoint reads only for its shape and dtype (the
    second argument of unbroadcast): an array of that shape and dtype holding no memory."""
    if isinstance(x, np.ndarray):
        return np.broadcast_to(np.zeros((), x.dtype), x.shape)
    return x


class KeptShape(tuple):
    """kept_shape's record of a stand-in, as Python: (shape, a zero of its dtype)."""


def kept_shape(x):
    """What a tape of tuples keeps of a stand-in (shape_like's, chain_like's): its shape and a
    zero of its dtype, a sixth of a view's size, copied in and out of the tape each trip;
    ``shaped`` makes the stand-in again where the adjoint reads it."""
    if isinstance(x, np.ndarray) and x.ndim:
        return KeptShape((x.shape, x.dtype.type(0)))
    return x


def shaped(k):
    """The stand-in ``kept_shape`` kept: an array of that shape and dtype holding no memory."""
    if isinstance(k, KeptShape):
        return np.broadcast_to(np.zeros((), type(k[1])), k[0])
    return k


def push(s, v):
    s.append(v)


def pop(s):
    return s.pop()


def item_vjp(g, idx, v):
    """Cotangent of ``v`` in ``setitem(x, idx, v)``."""
    if isinstance(g, np.ndarray):
        return unbroadcast(g[idx], v)
    return g[idx]


def setitem_split(g, idx, v):
    """``(setitem_vjp(g, idx), item_vjp(g, idx, v))``: the cotangents of the container and of
    the value in ``setitem(x, idx, v)``, both from one ``g``."""
    return setitem_vjp(g, idx), item_vjp(g, idx, v)


def setitem_split_inplace(g, idx, v):
    """setitem_split zeroing ``g[idx]`` in ``g`` itself (after copying out the value's part),
    which compiled code does when no other name sees ``g`` (codegen/inplace.py): a loop
    writing ``hs[t] = h`` then costs a row per step going back, not a copy of ``hs``."""
    return setitem_split(g, idx, v)


def setitem_split_add(g, idx, v, x):
    """``g, t = setitem_split_inplace(g, idx, v)`` and ``x + t``, with no array for ``t`` when
    compiled: the cotangent of ``hs[t] = h`` added to ``h``'s (codegen/reuse.py)."""
    g, t = setitem_split_inplace(g, idx, v)
    return g, x + t


def setitem_split_kept(g, idx, v, x):
    """setitem_split_inplace followed by ``add_at_index_inplace(g, t, x, idx)`` of the value's
    cotangent ``t`` it gave: the derivative of ``u[i] = u[i] + ...`` (codegen/inplace.py).
    Where ``v`` fills ``g[idx]``, ``g`` as it was: compiled code zeroes and adds back nothing."""
    g, t = setitem_split(g, idx, v)
    return add_at_index_inplace(g, t, x, idx), t


def pop_item_vjp(g, obj, key=-1):
    """Cotangent of the container in ``pop_item(obj, key)``: g with a zero put back at key."""
    if isinstance(obj, dict):
        return {k: (g[k] if k != key else zeros_like(obj[k])) for k in obj}
    key = key % len(obj)
    return list(g[:key]) + [zeros_like(obj[key])] + list(g[key:])


def getattr_vjp(g, obj, name):
    """Cotangent of ``obj`` in ``obj.name`` for a pytree object (a named tuple or a registered
    class): zeros everywhere but g at that attribute."""
    out = zeros_like(obj)
    if hasattr(out, "_replace"):
        return out._replace(**{name: g})
    object.__setattr__(out, name, g)
    return out


def sum_vjp(g, iterable):
    """Cotangent of each element in the builtin ``sum(iterable)``."""
    return [unbroadcast(g, e) for e in iterable]


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
