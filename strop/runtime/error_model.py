"""The error model strop compiles with, registered with Numba when this module is imported.

Numba names an error model in the flags it compiles with (``njit(error_model="strop")``) and
looks the name up whenever it compiles with those flags.  Compiled code loaded from a cache
needs it too: an object-mode block of a helper (``numba.objmode`` in runtime/numba/) is a
dispatcher that compiles itself, with its caller's flags, the first time it runs in a process.
A process that only links saved code (codegen/native.py) imports none of runtime/numba/, so
the model lives here, imported by both, and never only on the compile path.
"""
from llvmlite import ir
from numba.core import callconv, cgutils

from .fpstatus import DIVIDE, available

NAME = "strop"


class FlaggingErrorModel(callconv.NumpyErrorModel):
    """NumPy's error model (an integer divided by zero gives 0), raising the divide-by-zero
    flag as NumPy's loops do: the call is then run again as Python, whose NumPy warns, or whose
    Python ints raise ZeroDivisionError, as the python backend does."""

    def fp_zero_division(self, builder, exc_args=None, loc=None):
        fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32)])
        raise_ = cgutils.get_or_insert_function(builder.module, fnty, "feraiseexcept")
        builder.call(raise_, [ir.Constant(ir.IntType(32), DIVIDE)])
        return False


# registered whatever the C library offers: code compiled where the flags can be read names
# it, and only such code calls feraiseexcept (whose symbol available() registers)
callconv.error_models[NAME] = FlaggingErrorModel

# the error model strop compiles with
ERROR_MODEL = NAME if available() else "numpy"
