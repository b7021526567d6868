"""NumPy's ufuncs on numbers in a kernel.

numba-cuda types many ufuncs of numbers through a table that lacks them (``np.exp(x)`` of a
float32 failed with KeyError: exp; so did sqrt, floor, power, add, ...).  A kernel calls a stub
instead (codegen/cuda.py puts it in place of the ufunc): run as Python (Numba's simulator), the
stub is the ufunc itself; compiled, its overload below computes it with ``math``, libdevice or
operators, in NumPy's result type (float32 stays float32, integers give float64).  NaN and the
infinities come out as NumPy's do (maximum propagates NaN, log(0) is -inf).
"""
import math

import numpy as np

from . import simulated

# ufunc -> (device expression of x (and y), with m for math and d for libdevice).  A
# function of float32 named with an f suffix in libdevice is chosen by the argument's type.
UNARY = {
    np.sin: "m.sin(x)", np.cos: "m.cos(x)", np.tan: "m.tan(x)", np.arcsin: "m.asin(x)",
    np.arccos: "m.acos(x)", np.arctan: "m.atan(x)", np.sinh: "m.sinh(x)",
    np.cosh: "m.cosh(x)", np.tanh: "m.tanh(x)", np.arcsinh: "m.asinh(x)",
    np.arccosh: "m.acosh(x)", np.arctanh: "m.atanh(x)", np.exp: "m.exp(x)",
    np.expm1: "m.expm1(x)", np.exp2: "d.exp2{f}(x)", np.log: "m.log(x)",
    np.log2: "m.log2(x)", np.log10: "m.log10(x)", np.log1p: "m.log1p(x)",
    np.sqrt: "m.sqrt(x)", np.cbrt: "d.cbrt{f}(x)", np.square: "x * x",
    np.absolute: "abs(x)", np.fabs: "abs(x)", np.negative: "-x", np.positive: "x",
    np.sign: "(x > 0) - (x < 0) if x == x else x", np.floor: "d.floor{f}(x)",
    np.ceil: "d.ceil{f}(x)", np.trunc: "d.trunc{f}(x)", np.rint: "d.rint{f}(x)",
    np.reciprocal: "1 / x", np.isnan: "x != x", np.isinf: "m.isinf(x)",
    np.isfinite: "m.isfinite(x)", np.logical_not: "not x",
}
BINARY = {
    np.add: "x + y", np.subtract: "x - y", np.multiply: "x * y", np.divide: "x / y",
    np.power: "x ** y", np.maximum: "x if x >= y or x != x else y",
    np.minimum: "x if x <= y or x != x else y", np.fmax: "x if x >= y or y != y else y",
    np.fmin: "x if x <= y or y != y else y", np.arctan2: "m.atan2(x, y)",
    np.hypot: "m.hypot(x, y)", np.remainder: "x % y", np.fmod: "m.fmod(x, y)",
    np.floor_divide: "x // y", np.copysign: "m.copysign(x, y)",
    np.logaddexp: "(x if x > y else y) + m.log1p(m.exp(-abs(x - y))) if x == x and y == y "
                  "else x + y",
    np.greater: "x > y", np.greater_equal: "x >= y", np.less: "x < y",
    np.less_equal: "x <= y", np.equal: "x == y", np.not_equal: "x != y",
    np.logical_and: "bool(x) and bool(y)", np.logical_or: "bool(x) or bool(y)",
}


def _stub(ufunc):
    if ufunc in UNARY:
        def stub(x):
            return ufunc(x)
    else:
        def stub(x, y):
            return ufunc(x, y)
    stub.__name__ = stub.__qualname__ = f"{ufunc.__name__}_device"
    stub.__module__ = __name__
    return stub


STUBS = {u: _stub(u) for u in (*UNARY, *BINARY)}
globals().update({s.__name__: s for s in STUBS.values()})
_registered = []


def register():
    """The stubs' numba-cuda overloads (once; not in the simulator, which runs the stubs)."""
    if _registered or simulated():
        return
    _registered.append(True)
    from numba import types
    from numba.cuda import libdevice
    from numba.cuda.extending import overload

    def implementation(ufunc, text, params, *argtypes):
        if not all(isinstance(t, (types.Number, types.Boolean)) for t in argtypes):
            return None
        # NumPy's result dtype for numbers of these types (the ufunc's own loop choice)
        dts = [np.dtype("bool" if isinstance(t, types.Boolean) else str(t)) for t in argtypes]
        with np.errstate(all="ignore"):
            out = np.dtype(ufunc(*[d.type(1) for d in dts]).dtype)
        suffix = "f" if out == np.float32 else ""
        cast = "    x = out_(x)\n" if ufunc in UNARY and out.kind == "f" else ""
        code = f"def impl({params}):\n{cast}    return out_({text.replace('{f}', suffix)})\n"
        scope = {"m": math, "d": libdevice, "out_": out.type}
        exec(code, scope)
        return scope["impl"]

    def typer(ufunc, text):    # (its parameters must be the stub's)
        if ufunc in UNARY:
            return lambda x: implementation(ufunc, text, "x", x)
        return lambda x, y: implementation(ufunc, text, "x, y", x, y)

    for ufunc, text in {**UNARY, **BINARY}.items():
        overload(STUBS[ufunc], inline="always")(typer(ufunc, text))
