"""Numba side of runtime/fpstatus.py: <fenv.h>'s flags read around a compiled call.  The error
model that raises the divide-by-zero flag where an integer is divided by zero, ERROR_MODEL, is
runtime/error_model.py's (registered there: code loaded from a cache needs it too)."""
import platform

from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from ... import runtime as rt
from ...runtime.error_model import ERROR_MODEL  # noqa: F401  (re-exported)
from ...runtime.fpstatus import CALLBACK, MASK, available

# an assembly operand constraint per LLVM type: a register of its class
_FLOAT = "w" if platform.machine().lower() in ("aarch64", "arm64") else "x"


@intrinsic
def _computed(typingctx, value):
    """``value``, each number in it computed here: an empty assembly statement reads it.  LLVM
    may otherwise compute a returned number after the flags are read (its arithmetic has no
    side effects), and they would miss it; what is stored to memory is stored before a call."""
    def codegen(context, builder, sig, args):
        _read(builder, args[0])
        context.nrt.incref(builder, sig.return_type, args[0])   # (a result is a new reference)
        return args[0]
    return value(value), codegen


def _read(builder, v):
    t = v.type
    if isinstance(t, (ir.FloatType, ir.DoubleType, ir.HalfType)):
        constraint = _FLOAT
    elif isinstance(t, ir.IntType):
        v, constraint = (builder.zext(v, ir.IntType(8)) if t.width < 8 else v), "r"
    elif isinstance(t, (ir.LiteralStructType, ir.ArrayType)):
        for i in range(len(t.elements) if isinstance(t, ir.LiteralStructType) else t.count):
            _read(builder, builder.extract_value(v, i))
        return
    else:
        return
    asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), [v.type]), "", constraint,
                       side_effect=True)
    builder.call(asm, [v])


if available():
    _test = types.ExternalFunction("fetestexcept", types.intc(types.intc))
    _clear = types.ExternalFunction("feclearexcept", types.intc(types.intc))
    _report = types.ExternalFunction(CALLBACK, types.void(types.intc))

    @overload(rt.fp_enter, inline="always")
    def _enter():
        def impl():
            if _test(MASK):     # (clearing costs more than testing)
                _clear(MASK)
        return impl

    @overload(rt.fp_leave, inline="always")
    def _leave(value):
        def impl(value):
            value = _computed(value)
            raised = _test(MASK)
            if raised:
                _clear(MASK)
                _report(raised)
            return value
        return impl
else:
    @overload(rt.fp_enter, inline="always")
    def _enter():
        return lambda: None

    @overload(rt.fp_leave, inline="always")
    def _leave(value):
        return lambda value: value

IMPLEMENTED = {rt.fp_enter, rt.fp_leave}
