"""The helpers every family builds on: the algebra of cotangents (zeros, sums, scaling) over
pytrees, undoing broadcasting, and the checks that start a gradient.

Every helper is a plain function of its arguments; containers (list, tuple, dict, None) are
handled as pytrees so that adjoints of containers are containers of adjoints.
"""
import sys

import numpy as np

from ..errors import LINEMAPS, ComplexDerivativeError, Location

__all__ = ["unbroadcast", "zeros_like", "ones_like", "add", "scale", "expand_to", "astype_like",
           "broadcast_like", "like", "seed_grad", "aux_pair", "narrow"]

_CONTAINERS = (list, tuple, dict)


def _is_float(x):
    return isinstance(x, float) or (isinstance(x, np.generic) and np.issubdtype(x.dtype, np.inexact))


def _dtype(x):
    """The dtype ``np.asarray(x)`` has: a list or tuple of arrays given to a NumPy function (as
    in ``np.mean([x, y])``) is an array to it (np.result_type would read it as a dtype spec)."""
    return np.asarray(x).dtype if isinstance(x, (list, tuple)) else np.result_type(x)


def _float_dtype(x):
    dtype = _dtype(x)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def _axes(x, axis):
    """``axis`` of a reduction over ``x`` as a list of non-negative axes, in the order given."""
    ndim = np.ndim(x)
    if axis is None:
        return list(range(ndim))
    return [a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis)]


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x`` (undoing NumPy broadcasting), in x's float dtype."""
    shape = np.shape(x)
    g = np.asarray(g)
    if g.shape != shape:
        extra = g.ndim - len(shape)
        g = g.sum(axis=tuple(range(extra))) if extra > 0 else g
        axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
        if axes:
            g = g.sum(axis=axes, keepdims=True)
        if g.shape != shape:
            g = np.broadcast_to(g, shape)
    dtype = _dtype(x) if np.issubdtype(_dtype(x), np.inexact) else g.dtype
    _refuse_complex(g, dtype)
    if shape == () and not isinstance(x, np.ndarray):
        return g.astype(dtype)[()]
    return g.astype(dtype, copy=False)


def _refuse_complex(g, dtype):
    """A complex cotangent for a real value: the function computed with complex numbers, which
    strop does not differentiate yet (casting it to real would silently drop its imaginary
    part, NumPy's ComplexWarning the only trace)."""
    if np.iscomplexobj(g) and not np.issubdtype(dtype, np.complexfloating):
        raise ComplexDerivativeError(
            "complex numbers are not supported under differentiation yet: a complex value "
            "(an argument, or one computed from it) reaches the derivative of a real one, and "
            "strop's derivative rules are for real numbers", _generated_caller(),
            fix="keep the real and imaginary parts as separate real values, or compute the "
                "complex part outside the differentiated function; jit and vmap run complex "
                "code as it is")


def _generated_caller():
    """The user line of the nearest generated code on the stack (a StropError raised here is
    not mapped to one by the runner: it names its line itself)."""
    frame = sys._getframe(2)
    while frame is not None:
        hit = LINEMAPS.get(frame.f_code.co_filename, {}).get(frame.f_lineno)
        if hit:
            return Location(*hit)
        frame = frame.f_back
    return None


def expand_to(g, x, axis=None, keepdims=False):
    """Broadcast the cotangent of a reduction over ``axis`` back to the shape of ``x``."""
    shape = np.shape(x)
    g = np.asarray(g)
    if axis is not None and not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        g = np.expand_dims(g, tuple(a % len(shape) for a in axes))
    return np.broadcast_to(g, shape)


def astype_like(g, x):
    """``g`` in the dtype of ``x`` (float dtypes only; integer primals carry no derivative)."""
    dtype = _dtype(x)
    _refuse_complex(g, dtype)
    if isinstance(x, np.ndarray):
        return np.asarray(g).astype(dtype, copy=False)
    return dtype.type(g) if np.ndim(g) == 0 else np.asarray(g, dtype)


_NARROW = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32,
           np.dtype(np.complex128): np.complex64}


def narrow(x):
    """An array made inside a function with 64-bit values off: its 64-bit dtype as the
    32-bit one (DESIGN's 64-bit policy holds inside functions, as at their boundary)."""
    to = _NARROW.get(getattr(x, "dtype", None))
    return x.astype(to) if to is not None and isinstance(x, (np.ndarray, np.generic)) else x


def _registered(x):
    from ..tree_util import _registry
    return type(x) in _registry and not isinstance(x, _CONTAINERS) and x is not None


def _tree_map(fn, *trees):
    from ..tree_util import tree_map
    return tree_map(fn, *trees)


def zeros_like(x):
    if isinstance(x, _CONTAINERS):
        return _map(zeros_like, x)
    if _registered(x):
        return _tree_map(zeros_like, x)
    if x is None or isinstance(x, (str, bool, np.bool_)):
        return None
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64)
    if _is_float(x):
        return type(x)(0)
    if isinstance(x, (int, np.integer)):
        return 0.0
    raise TypeError(f"strop cannot make a zero cotangent for a value of type {type(x).__name__}")


def seed_grad(out):
    """The cotangent 1 that starts the adjoint sweep of ``grad``: only for a real scalar."""
    shape = np.shape(out) if not isinstance(out, (str, bytes)) else ()
    dtype = np.result_type(out) if isinstance(out, (np.ndarray, np.generic, float, int)) \
        else None
    if shape != () or dtype is None or not np.issubdtype(dtype, np.floating):
        what = f"shape {shape} and dtype {dtype}" if dtype is not None else type(out).__name__
        raise TypeError(f"grad requires a real scalar output, got a value of {what}. Use "
                        f"strop.vjp or strop.jacrev for non-scalar outputs, or reduce it "
                        f"(e.g. .sum())")
    return np.ones((), dtype)[()] if not isinstance(out, float) else 1.0


def aux_pair(out):
    """``has_aux=True``: the function must return a pair (output, aux), as JAX requires (a
    longer tuple would lose its other items, a scalar has no aux)."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        what = f"a {type(out).__name__} of length {len(out)}" if isinstance(
            out, (tuple, list)) else f"a value of type {type(out).__name__}"
        raise TypeError(f"has_aux=True requires the function to return a pair (output, aux), "
                        f"but it returned {what}. Fix: return output, aux (e.g. return loss, "
                        f"{{'acc': acc}}), or drop has_aux=True")


def ones_like(x):
    return np.ones_like(x) if isinstance(x, np.ndarray) else type(x)(1)


def _map(fn, *trees):
    first = trees[0]
    if isinstance(first, dict):
        return {k: fn(*(t[k] for t in trees)) for k in first}
    return _rebuild(first, [fn(*parts) for parts in zip(*trees)])


def _rebuild(like, items):
    """A list, tuple or named tuple (np.linalg's results) of the same type as ``like``."""
    return type(like)(*items) if hasattr(like, "_fields") else type(like)(items)


def add(a, b):
    """Accumulate two cotangents; ``None`` is zero; containers add leaf by leaf."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict) and isinstance(b, dict):   # a dict grown by d[k] = v: its
        return {k: add(a.get(k), b.get(k)) for k in {**a, **b}}   # keys so far, and later
    if isinstance(a, _CONTAINERS):
        return _map(add, a, b)
    if _registered(a):
        return _tree_map(add, a, b)
    return a + b


def scale(a, s):
    if isinstance(a, _CONTAINERS):
        return _map(lambda v: scale(v, s), a)
    return None if a is None else a * s


def broadcast_like(g, v):
    """Cotangent of ``v`` in ``unbroadcast(v, x)``: g spread back over v's shape."""
    return np.broadcast_to(g, np.shape(v)).astype(np.result_type(v), copy=False) \
        if isinstance(v, np.ndarray) else np.result_type(v).type(g) if np.ndim(g) == 0 \
        else np.asarray(g)


def like(g, x):
    """``g`` as the same kind of container as ``x`` (for ``list(x)``, ``tuple(x)``)."""
    if isinstance(x, np.ndarray):
        return np.asarray(g)
    return type(x)(g) if isinstance(x, (list, tuple)) else g
