"""Helpers of vmap's wide loops (transformer/wide.py), as NumPy runs them; their Numba
implementations are in numba/wide.py."""
import numpy as np

__all__ = ["widest", "any_lane"]


def widest(at_loop, after_trip):
    """``at_loop``'s values in the types that also hold ``after_trip``'s (the state a loop keeps
    for many lanes must hold what any trip makes of it)."""
    return tuple(np.asarray(a, np.promote_types(np.result_type(a), np.result_type(b)))[()]
                 for a, b in zip(at_loop, after_trip))


def any_lane(condition, count):
    """Whether the condition holds in any of the first ``count`` lanes."""
    return bool(np.any(condition[:count]))
