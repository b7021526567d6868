"""NumPy functions whose Numba versions accept what NumPy accepts but fail on it when run
(``np.reshape`` of an array that is not contiguous raises NotImplementedError, where NumPy
copies; ``np.array`` of an array or a list of arrays is refused; ``np.where`` of numbers
gives a 0-d array that cannot share a name with a number), or that Numba lacks where strop
has a helper (``np.matmul``: the helper ``@``
lowers to).  The CPU backend calls a twin in their place (codegen/cpu.py), whose Numba
implementation (numba/twins.py) does what NumPy does; the twin itself, run as Python, is the
NumPy function.  Kept apart from the Numba code so that lowering does not load Numba."""
import numpy as np

from .products import matmul


def reshape(a, newshape=None, order="C", **kwargs):
    return np.reshape(a, newshape, order=order, **kwargs)


def array(object, dtype=None):
    return np.array(object, dtype)


def where(condition, x=None, y=None):
    """np.where; compiled, of three numbers it gives a number (Numba's gives a 0-d array, which
    cannot share a name with a number: NumPy's turns into one at the next operation)."""
    return np.where(condition) if x is None and y is None else np.where(condition, x, y)


def clip(a, a_min, a_max):
    """np.clip; compiled, its result has NumPy's dtype (Numba's keeps ``a``'s:
    ``np.clip(int_array, 0.0, 1)`` stayed an int array)."""
    return np.clip(a, a_min, a_max)


def vdot(a, b):
    """np.vdot; compiled, of arrays of any rank, flattened as NumPy flattens them (Numba's
    takes vectors only)."""
    return np.vdot(a, b)


TWINS = {np.reshape: reshape, np.matmul: matmul, np.array: array, np.where: where,
         np.clip: clip, np.vdot: vdot}
