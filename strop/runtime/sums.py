"""Sums of a whole array in compiled code: ``np.sum(x)`` and ``np.mean(x)`` called with the
array alone (``x.sum()`` and forward mode's tangents read so too).  Numba adds a float array's
elements one after another into one accumulator, which waits on each addition and rounds more
than NumPy's pairwise sum; the CPU backend calls a stub here in their place, whose Numba
implementation (numba/sums.py) sums a float array as NumPy does, and other values with Numba's
own.  Calls with more arguments (an axis, keepdims) keep NumPy's function: a stub taking them
all would be one more function for Numba to compile for each.  As Python, a stub is the NumPy
function.  Kept apart from the Numba code so that lowering does not load Numba."""
import numpy as np


def sum_all(a):
    """np.sum(a)."""
    return np.sum(a)


def mean_all(a):
    """np.mean(a)."""
    return np.mean(a)


WHOLE = {np.sum: sum_all, np.mean: mean_all}
NUMPY_OF = {stub: fn for fn, stub in WHOLE.items()}
