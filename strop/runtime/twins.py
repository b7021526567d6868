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


def dot(a, b, out=None):
    """np.dot; compiled, of arrays of any layout (Numba's warns of a non-contiguous one, naming
    the generated code: they are made contiguous first, as its BLAS call needs) and of a
    number (which Numba's refuses)."""
    return np.dot(a, b, out)


def _precision_kept(fn, params):
    """A twin of ``fn``, which Numba computes in float64 for a float32 (complex64) array and
    returns so: compiled, its result is cast back to the array's precision, as NumPy's is
    (strop keeps float32 unless ``enable_x64``; a float64 number where the python backend gives
    a float32 one changed a loop-carried value's type, and the function fell back).  ``params``
    are the arguments compiled code passes on (NumPy's, less those no Numba version takes)."""
    def twin(*args, **kwargs):
        return fn(*args, **kwargs)
    twin.__name__ = twin.__qualname__ = fn.__name__
    twin.__module__ = __name__
    twin.__doc__ = f"{fn.__module__.replace('numpy', 'np')}.{fn.__name__}; compiled, of a " \
        "float32 array its result is float32, as NumPy's (Numba's is float64)."
    twin.params = params
    globals()[fn.__name__] = twin
    return twin


# what compiled code passes on: NumPy 2's arguments less ``out``, ``overwrite_input`` and
# the keyword-only ones (a default here is only a mark that the argument was not given)
PRECISION_KEPT = {fn: _precision_kept(fn, params) for fn, params in (
    (np.trace, "a, offset=0, axis1=0, axis2=1, dtype=None"),
    (np.var, "a, axis=None, dtype=None, ddof=None, keepdims=None"),
    (np.std, "a, axis=None, dtype=None, ddof=None, keepdims=None"),
    (np.median, "a, axis=None, keepdims=None"),
    (np.ptp, "a, axis=None, keepdims=None"),
    (np.nanmean, "a, axis=None, dtype=None, keepdims=None"),
    (np.percentile, "a, q, axis=None, method=None, keepdims=None"),
    (np.quantile, "a, q, axis=None, method=None, keepdims=None"),
    (np.linalg.norm, "x, ord=None, axis=None, keepdims=None"),
    (np.linalg.det, "a"), (np.linalg.slogdet, "a"))}

TWINS = {np.reshape: reshape, np.matmul: matmul, np.array: array, np.where: where,
         np.clip: clip, np.vdot: vdot, np.dot: dot, **PRECISION_KEPT}
