"""NumPy 2's type promotion for the ufuncs of compiled code.

Numba picks a ufunc's loop by NumPy 1's rule for mixed kinds: an integer operand of a float one
casts to any float, so ``int32_array + float32_array`` is float32 where NumPy 2 (NEP 50) gives
float64, and ``uint8_array / uint8_array`` float32 where NumPy gives float64.  strop's generated
code marks Python numbers weak itself (``weak``), so every other operand is strong, as in
NumPy 2: while strop compiles (``numpy_loops``), a ufunc runs the loop NumPy itself resolves
for the operands' dtypes (``ufunc.resolve_dtypes``).  Other Numba code keeps Numba's rule.
"""
import contextlib
import threading

import numpy as np
from numba.core import errors
from numba.core.typing import npydecl
from numba.np import npyimpl, numpy_support

_numba_loop = numpy_support.ufunc_find_matching_loop
_active = threading.local()


@contextlib.contextmanager
def numpy_loops():
    """Ufunc loops chosen as NumPy chooses them, for what compiles inside."""
    _active.depth = getattr(_active, "depth", 0) + 1
    try:
        yield
    finally:
        _active.depth -= 1


def _matching_loop(ufunc, arg_types):
    """Numba's ufunc_find_matching_loop, choosing NumPy's loop while strop compiles.  Typing
    passes the inputs; lowering passes the outputs typing gave too (checked castable, as
    Numba checks them)."""
    loop = _numba_loop(ufunc, arg_types)
    if loop is None or not getattr(_active, "depth", 0):
        return loop
    try:
        given = [numpy_support.as_dtype(t) for t in arg_types]
        want = ufunc.resolve_dtypes(tuple(given[:ufunc.nin]) + (None,) * ufunc.nout)
    except (errors.NumbaNotImplementedError, TypeError, ValueError, NotImplementedError):
        return loop
    if any(d.char in "mMOe" for d in want) or not all(
            np.can_cast(w, g, "same_kind") for w, g in zip(want[ufunc.nin:],
                                                           given[ufunc.nin:])):
        return loop    # datetimes keep their units; no float16 loops
    for candidate in ufunc.types:
        if [np.dtype(c) for c in candidate.replace("->", "")] == list(want):
            if candidate == loop.ufunc_sig:
                return loop
            return numpy_support.UFuncLoopSpec(
                [numpy_support.from_dtype(d) for d in want[:ufunc.nin]],
                [numpy_support.from_dtype(d) for d in want[ufunc.nin:]], candidate)
    return loop


# typing and lowering each import the function by name
npydecl.ufunc_find_matching_loop = _matching_loop
npyimpl.ufunc_find_matching_loop = _matching_loop


def promoting(dispatcher):
    """``dispatcher`` (strop's generated code) compiling with NumPy's loops: a call with new
    argument types compiles through ``compile`` too."""
    plain = dispatcher.compile

    def compile(sig):
        with numpy_loops():
            return plain(sig)
    dispatcher.compile = compile
    return dispatcher
