"""What the Numba implementations of the families share: the Numba types of numbers, the float
type of a cotangent, literal flags, implementations written out for a tuple's length, calls
into NumPy from compiled code, and the step that compiles the other helpers from their own
source."""
import numba
import numpy as np
from numba import types
from numba.extending import register_jitable
from numba.np.numpy_support import as_dtype

SCALARS = (types.Float, types.Integer, types.Boolean)

# Numba compiles an overload with its own options, not its caller's boundscheck: a helper that
# indexes with the user's index (x[idx] = v) takes these, so that an index out of range raises
# IndexError (the runner then names the user's line) instead of writing outside the array
CHECKED = {"boundscheck": True}


def _float_of(t):
    """The NumPy float type a cotangent of a value of Numba type ``t`` has."""
    dtype = t.dtype if isinstance(t, types.Array) else t
    if isinstance(dtype, types.Float):
        return as_dtype(dtype).type
    return np.float64


def _none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def _flag(t):
    """The value of a literal bool argument (batched code passes True/False), or None."""
    return bool(t.literal_value) if isinstance(t, types.BooleanLiteral) else None


def _unrolled(text, **names):
    """An implementation written out for a tuple's length (Numba types tuples by length).
    Its globals name this module, so that compiled code calling it can be saved and linked
    again (codegen/native.py finds environments by module)."""
    space = {"__name__": __name__, **names}
    exec(text, space)
    return space["impl"]


def _through_numpy(fn, out_type):
    """``fn(*args)`` run through NumPy from compiled code (BLAS products), its result
    C-contiguous in ``out_type``'s dtype; called as ``run((a, b, ...))``."""
    dt = out_type.dtype.name

    def run(args):
        with numba.objmode(out=out_type):
            out = np.ascontiguousarray(fn(*args), dtype=dt)
        return out
    return register_jitable(run)


def compile_the_rest(families, implemented):
    """Register the helpers of ``families`` (modules of strop.runtime) that have no
    implementation in ``implemented``: Numba compiles them from their own source when it can;
    when it cannot, the compile fails and jit falls back to the python backend with a
    JitFallbackWarning."""
    for family in families:
        for name in family.__all__:
            fn = getattr(family, name)
            if callable(fn) and fn not in implemented and getattr(
                    fn, "__module__", "").startswith("strop.runtime"):
                register_jitable(**CHECKED)(fn)
