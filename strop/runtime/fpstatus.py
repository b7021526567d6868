"""NumPy's floating-point warnings, for compiled code.

NumPy warns (or raises, under ``np.errstate``) when an operation divides by zero, makes a NaN
from numbers ("invalid") or overflows: it reads the CPU's floating-point status flags after
each ufunc loop.  Compiled code computes the same values without looking.  So the CPU backend
wraps a generated function's body in ``fp_enter()`` ... ``return fp_leave(value)``: compiled,
these clear the three flags on entry and, on exit, report any that are raised (a callback into
``RAISED``, made only when one is: ~2 ns a call otherwise); the runner then runs the call
again as Python, where NumPy gives its own warnings at the user's lines (runner.py).  Run as
Python, both do nothing.
"""
import ctypes
import ctypes.util
import functools
import platform

__all__ = ["fp_enter", "fp_leave"]

# the flags compiled code reported since the runner last looked
RAISED = [0]

# <fenv.h>'s FE_INVALID, FE_DIVBYZERO, FE_OVERFLOW, per machine; elsewhere nothing is checked
_BITS = {"x86_64": (1, 4, 8), "amd64": (1, 4, 8), "i386": (1, 4, 8), "i686": (1, 4, 8),
         "aarch64": (1, 2, 4), "arm64": (1, 2, 4)}.get(platform.machine().lower())
# each flag's name in np.errstate
NAMES = dict(zip(_BITS, ("invalid", "divide", "over"))) if _BITS else {}
MASK = sum(_BITS) if _BITS else 0
DIVIDE = _BITS[1] if _BITS else 0
CALLBACK = "strop_fp_raised"     # the symbol compiled code reports through


def fp_enter():
    """Compiled: clear the divide-by-zero, invalid and overflow flags."""


def fp_leave(value):
    """``value``; compiled, after reporting the flags raised since ``fp_enter``."""
    return value


@ctypes.CFUNCTYPE(None, ctypes.c_int)
def _raised(bits):
    RAISED[0] |= bits


@functools.cache
def available():
    """Whether compiled code can read the flags: the C library has <fenv.h>'s functions, and
    they are registered for the JIT's linker (with the callback; once per process: compiled
    code loaded from a cache names them too)."""
    return _register()


def _register():
    if not MASK:
        return False
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m") or None)
        test, clear, raise_ = libm.fetestexcept, libm.feclearexcept, libm.feraiseexcept
    except (OSError, AttributeError):
        return False
    import llvmlite.binding as ll
    for name, fn in (("fetestexcept", test), ("feclearexcept", clear),
                     ("feraiseexcept", raise_), (CALLBACK, _raised)):
        ll.add_symbol(name, ctypes.cast(fn, ctypes.c_void_p).value)
    return True
