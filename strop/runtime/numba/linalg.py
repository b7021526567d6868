"""Numba implementations of linalg.py's helpers, for one matrix (the stacked and mixed-dtype
cases run the helpers' own NumPy source in an island)."""
import numpy as np
from numba import types

from ... import runtime as rt
from ._common import overload


def _one_system(g, a, b):
    """Whether ``solve(a, b)`` is one system of one float dtype: ``a`` a matrix, ``b`` and
    ``g`` (the cotangent of the solution) vectors or matrices alike."""
    arrays = (g, a, b)
    return all(isinstance(t, types.Array) and isinstance(t.dtype, types.Float)
               for t in arrays) and len({t.dtype for t in arrays}) == 1 and \
        a.ndim == 2 and b.ndim in (1, 2) and g.ndim == b.ndim


@overload(rt.solve_adjoint)
def _solve_adjoint(g, a, b):
    """``solve(aᵀ, g)``."""
    if _one_system(g, a, b):
        return lambda g, a, b: np.linalg.solve(np.ascontiguousarray(a.T), g)


@overload(rt.solve_vjp_a)
def _solve_vjp_a(gb, a, b, ans):
    """``-gb xᵀ``: an outer product where ``b`` is a vector."""
    if not (_one_system(gb, a, b) and isinstance(ans, types.Array) and ans.ndim == b.ndim):
        return None
    if b.ndim == 1:
        return lambda gb, a, b, ans: -np.outer(gb, ans)
    return lambda gb, a, b, ans: -(gb @ np.ascontiguousarray(ans.T))


IMPLEMENTED = {rt.solve_adjoint, rt.solve_vjp_a}
