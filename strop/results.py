"""What a transformed function's caller gets: NumPy arrays and scalars that also answer JAX's
``.block_until_ready()``.

Real JAX code times and synchronizes with ``f(x).block_until_ready()`` on what a transformed
function returns. strop computes synchronously on the CPU, so the method has nothing to wait
for; it returns the value itself, as JAX's does. NumPy's arrays and scalars have no such
method, and no method can be added to them, so ``ready(tree)`` returns each array leaf as an
``Array`` (a view of the same memory: nothing is copied) and each NumPy scalar leaf as the
matching ``ReadyScalar`` subclass of its type, which differ from NumPy's own in this one method:

- ``isinstance(r, np.ndarray)`` (and ``np.float32`` etc. for scalars) holds, ``np.asarray(r)``
  is a plain ndarray, NumPy's functions and operators work and give the same values and dtypes;
  ``repr`` and ``str`` are NumPy's own (``array([...])``, ``np.float32(1.5)``);
- pickling gives a plain ndarray / NumPy scalar (loading it needs no strop);
- strop's transforms and Numba take them as they take NumPy's.

What NumPy's functions and operators compute from one (``np.sin(r)``, ``r + 1``, ``r.sum()``)
is exactly what they compute from an ndarray: a plain ndarray or NumPy scalar (the method is
on the results, not on what is made of them later); views (``r[0]``, ``r.T``, ``r.reshape``)
keep it. Python numbers and other objects in a result are returned as they are.
``strop.block_until_ready(tree)`` is the function form, for anything.
"""
import numpy as np

__all__ = ["Array", "ready"]


class Array(np.ndarray):
    """An ndarray with JAX's ``block_until_ready()`` (strop's results are always ready)."""

    def block_until_ready(self):
        """The array itself: strop's CPU results are computed before the call returns."""
        return self

    def __array_wrap__(self, obj, context=None, return_scalar=False):
        # what NumPy's functions and operators make of it is what they make of an ndarray:
        # a plain ndarray, or a NumPy scalar where a plain ndarray gives one (np.sum)
        obj = obj.view(np.ndarray) if isinstance(obj, np.ndarray) else obj
        return obj[()] if return_scalar and isinstance(obj, np.ndarray) else obj

    def __repr__(self):
        return repr(self.view(np.ndarray))

    def __str__(self):
        return str(self.view(np.ndarray))

    def __reduce__(self):
        return self.view(np.ndarray).__reduce__()

    def __reduce_ex__(self, protocol):
        return self.view(np.ndarray).__reduce_ex__(protocol)


def _block_until_ready(self):
    """The value itself: strop's CPU results are computed before the call returns."""
    return self


def _reduce(self):
    return self.dtype.type(self).__reduce__()


def _scalar_class(base):
    return type(base.__name__, (base,), {
        "__doc__": f"A NumPy {base.__name__} with JAX's block_until_ready().",
        "__module__": __name__, "__qualname__": f"ReadyScalar[{base.__name__}]",
        "block_until_ready": _block_until_ready, "__reduce__": _reduce,
        "__reduce_ex__": lambda self, protocol: _reduce(self), "__slots__": ()})


_SCALARS = {}   # NumPy scalar type -> its ReadyScalar subclass


def ready_leaf(x):
    """One leaf as the user gets it (see the module's docstring)."""
    t = type(x)
    if t is np.ndarray:
        return x.view(Array)
    if isinstance(x, np.generic) and t.__module__ == "numpy":
        cls = _SCALARS.get(t)
        if cls is None:
            try:
                cls = _SCALARS[t] = _scalar_class(t)
            except TypeError:   # a type NumPy does not let us subclass: as it is
                cls = _SCALARS[t] = t
        return x if cls is t else cls(x)
    return x


def ready(tree):
    """A transformed function's result as the user gets it: every NumPy array and scalar in the
    pytree ``tree`` answering ``.block_until_ready()``; containers and other leaves unchanged."""
    t = type(tree)
    if t is np.ndarray:   # the common cases, kept cheap
        return tree.view(Array)
    if t is tuple:
        return tuple([ready(x) for x in tree])
    if t is list:
        return [ready(x) for x in tree]
    if t is dict:   # (the user's order of keys kept)
        return {k: ready(v) for k, v in tree.items()}
    if tree is None or isinstance(tree, (np.generic, float, int)):   # (a bool is an int)
        return ready_leaf(tree)
    from .tree_util import tree_map
    return tree_map(ready_leaf, tree)
