"""Functional array updates outside transformed code.

``index_update(x, index[1, :], 1.)`` and friends are the older JAX API that the Sharp Bits show;
``at(x)[idx].set(v)`` is ``x.at[idx].set(v)`` for plain NumPy arrays, which have no ``.at``.
Both return a new array and leave ``x`` unchanged.  They call the same runtime helpers as the
``.at[...]`` updates in generated code, so the out-of-bounds ``mode`` behaves as in JAX
everywhere: updates at out-of-bounds indices are dropped unless ``mode="clip"``, and ``get``
clamps unless ``mode="fill"``.
"""
import numpy as np

from strop.runtime import at_add, at_get, at_max, at_min, at_multiply, at_set

__all__ = ["index", "index_update", "index_add", "index_mul", "index_min", "index_max", "at"]

_MODES = (None, "clip", "drop", "fill", "promise_in_bounds")


class _Index:
    """``index[1:, :]`` evaluates to the index itself, ``(slice(1, None), slice(None))``."""

    def __getitem__(self, idx):
        return idx


index = _Index()


def _check(name, x, mode=None):
    # Lists and tuples are refused for the array, as JAX does, so that code moves between the two
    # unchanged; the values may be any array-like, as in JAX.
    if isinstance(x, (list, tuple)):
        raise TypeError(f"{name} requires an array or a scalar, got a "
                        f"{type(x).__name__}; pass np.asarray(x) instead")
    if mode not in _MODES:
        raise ValueError(f"unknown out-of-bounds mode {mode!r}; use one of "
                         + ", ".join(repr(m) for m in _MODES[1:]))


def _update(name, scatter, x, idx, y, mode):
    _check(name, x, mode)
    return scatter(x, idx, y, mode)


def index_update(x, idx, y, mode=None):
    """``x[idx] = y``, out of place."""
    return _update("index_update", at_set, x, idx, y, mode)


def index_add(x, idx, y, mode=None):
    """``x[idx] += y``, out of place; every occurrence of a repeated index adds."""
    return _update("index_add", at_add, x, idx, y, mode)


def index_mul(x, idx, y, mode=None):
    """``x[idx] *= y``, out of place; every occurrence of a repeated index multiplies."""
    return _update("index_mul", at_multiply, x, idx, y, mode)


def index_min(x, idx, y, mode=None):
    """``x[idx] = np.minimum(x[idx], y)``, out of place, over every occurrence of an index."""
    return _update("index_min", at_min, x, idx, y, mode)


def index_max(x, idx, y, mode=None):
    """``x[idx] = np.maximum(x[idx], y)``, out of place, over every occurrence of an index."""
    return _update("index_max", at_max, x, idx, y, mode)


def at(x):
    """JAX's ``x.at[idx]`` for a NumPy array: ``at(x)[idx].set(v)``, ``.add``, ``.multiply`` (or
    ``.mul``), ``.min``, ``.max``, ``.apply(func)`` and ``.get(mode=..., fill_value=...)``."""
    _check("at", x)
    return _At(x)


class _At:
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _AtIndex(self.x, idx)


class _AtIndex:
    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def get(self, mode=None, fill_value=None):
        _check("at(x)[idx].get", self.x, mode)
        return at_get(self.x, self.idx, mode, fill_value)

    def set(self, values, mode=None):
        return _update("at(x)[idx].set", at_set, self.x, self.idx, values, mode)

    def add(self, values, mode=None):
        return _update("at(x)[idx].add", at_add, self.x, self.idx, values, mode)

    def multiply(self, values, mode=None):
        return _update("at(x)[idx].multiply", at_multiply, self.x, self.idx, values, mode)

    mul = multiply

    def min(self, values, mode=None):
        return _update("at(x)[idx].min", at_min, self.x, self.idx, values, mode)

    def max(self, values, mode=None):
        return _update("at(x)[idx].max", at_max, self.x, self.idx, values, mode)

    def apply(self, func, mode=None):
        """``func`` (elementwise, e.g. a unary ufunc) applied at ``idx`` as ``ufunc.at(x, idx)``
        does: once for each occurrence of an index."""
        _check("at(x)[idx].apply", self.x, mode)
        x = np.asarray(self.x)
        # The flat positions that idx names, under the same out-of-bounds rule as the updates:
        # clamped for "clip", else dropped (filled with -1).
        where = np.arange(x.size).reshape(x.shape)
        if mode == "clip":
            pos = at_get(where, self.idx, "clip")
        else:
            pos = at_get(where, self.idx, "fill", fill_value=-1)
        pos = np.ravel(pos)
        positions, counts = np.unique(pos[pos >= 0], return_counts=True)
        out = x.copy()
        flat = out.reshape(-1)  # a view: out is a fresh contiguous copy
        for k in range(counts.max(initial=0)):
            hit = positions[counts > k]  # the positions named more than k times
            flat[hit] = func(flat[hit])
        return out
