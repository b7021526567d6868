"""The small lax functions ported code uses beside the control flow, called on values.  Inside
a transformed function each becomes the NumPy it means (transformer/lax_lower.py):

- ``stop_gradient(x)``: ``x``, leaf by leaf, with a zero derivative;
- ``select(pred, on_true, on_false)``: ``np.where``, with JAX's checks here (same shapes and
  dtypes, ``pred`` boolean, a scalar or of the cases' shape);
- ``clamp(min, x, max)``: ``np.minimum(np.maximum(x, min), max)``;
- ``sort(operand, dimension=-1, is_stable=True, num_keys=1)``: ``np.sort`` for one array; for a
  sequence, every array ordered by the first ``num_keys`` (a stable sort, as JAX's default);
- ``broadcast(operand, sizes)``: new leading axes of those sizes (``np.broadcast_to``);
- ``expand_dims(array, dimensions)``: ``np.expand_dims`` (dimensions as in the result).
"""
import numpy as np

from ..runtime import lax as rl
from ..tree_util import tree_map
from .control import lowered
from .errors import lax_error

__all__ = ["stop_gradient", "select", "clamp", "sort", "broadcast", "expand_dims"]


@lowered
def stop_gradient(x):
    """``x`` (a pytree), through which no derivative flows."""
    return tree_map(rl.stop_gradient, x)


@lowered
def select(pred, on_true, on_false):
    """``on_true`` where ``pred``, else ``on_false``, element by element."""
    shape = np.shape(on_true)
    if np.shape(on_false) != shape:
        raise lax_error(TypeError, f"select cases must have the same shapes, got "
                                   f"[{', '.join(map(str, (shape, np.shape(on_false))))}].")
    if np.shape(pred) not in ((), shape):
        raise lax_error(TypeError, f"select `which` must be scalar or have the same shape as "
                                   f"cases, got `which` shape {np.shape(pred)} but case shape "
                                   f"{shape}.")
    if np.result_type(pred) != np.bool_:
        raise lax_error(TypeError, f"select `which` must be boolean, got "
                                   f"{rl.type_text(pred)}.")
    a, b = (rl.canonical_dtype(np.result_type(v)) for v in (on_true, on_false))
    if a != b and not any(type(v) in (int, float, complex) for v in (on_true, on_false)):
        raise lax_error(TypeError, f"lax.select requires arguments to have the same dtypes, "
                                   f"got {a}, {b}. (Tip: np.where is a similar function that "
                                   f"does automatic type promotion on inputs).")
    return np.where(pred, on_true, on_false)


@lowered
def clamp(min, x, max):   # noqa: A002  (JAX's names)
    """``x`` clipped into [min, max]."""
    return np.minimum(np.maximum(x, min), max)


@lowered
def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """``operand`` sorted along ``dimension``; a sequence of arrays is sorted by its first
    ``num_keys`` (the first the primary key), the others carried along."""
    if not isinstance(operand, (tuple, list)):
        return np.sort(operand, axis=dimension, kind="stable")
    if not 1 <= num_keys <= len(operand):
        raise lax_error(ValueError, f"num_keys={num_keys} must be between 1 and the number of "
                                    f"operands, {len(operand)}")
    keys = [np.asarray(k) for k in operand[:num_keys]]
    moved = [np.moveaxis(k, dimension, -1) for k in keys]
    order = np.lexsort(moved[::-1], axis=-1) if num_keys > 1 else \
        np.argsort(moved[0], axis=-1, kind="stable")
    order = np.moveaxis(order, -1, dimension)
    return tuple(np.take_along_axis(np.asarray(x), order, axis=dimension) for x in operand)


@lowered
def broadcast(operand, sizes):
    """``operand`` repeated along new leading axes of the given ``sizes``."""
    return np.broadcast_to(operand, tuple(sizes) + np.shape(operand)).copy()


@lowered
def expand_dims(array, dimensions):
    """``array`` with axes of length 1 inserted at ``dimensions`` (of the result)."""
    return np.expand_dims(array, tuple(dimensions))
