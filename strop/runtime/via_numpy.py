"""Transcendental ufuncs on large arrays in compiled code, through NumPy's SIMD loops (Numba
calls the scalar libm function per element when SVML is absent).  The CPU backend calls a stub
in place of each such ufunc; its Numba implementation (numba/via_numpy.py) hands arrays of ``LARGE``
elements or more to NumPy and compiles the rest.  The stubs live apart from their Numba
implementations so that lowering, which names them, does not load Numba's compiler."""
import numpy as np

LARGE = 4096
NUMPY_UFUNCS = (np.tanh, np.exp, np.log, np.sin, np.cos, np.log1p, np.expm1)


def _stub(ufunc):
    def stub(x, out=None):
        """``ufunc(x)``; compiled, written over ``x`` where ``out`` is ``x``: a temporary
        nothing reads again (codegen/reuse.py).  As Python, a new array."""
        return ufunc(x)
    stub.__name__ = stub.__qualname__ = f"{ufunc.__name__}_np"
    return stub


VIA_NUMPY = {u: _stub(u) for u in NUMPY_UFUNCS}
