"""Derivatives of elementwise maths: NumPy's math ufuncs and the elementwise functions beside them.

Templates: ``g`` is the output's cotangent, ``ans`` the output; see table.py.  Binary rules
unbroadcast their cotangents.  Where a constant such as ``np.log(2)`` (a float64 NumPy scalar)
would promote a float32 cotangent, the template casts back with ``astype_like``.

Complex numbers: these rules are for real inputs.  ``np.real`` and ``np.conj`` pass the
cotangent through; ``np.imag`` and ``np.angle`` of a real input are constants (0, and 0 or pi),
so they are registered as not differentiable.
"""
import numpy as np

from .arithmetic import B, U
from .table import RULES, defjvp, defnondiff, defvjp

# --- exponentials and logarithms ---
defvjp(np.exp,        U, "g * ans")
defvjp(np.exp2,       U, "astype_like(g * ans * np.log(2), x)")
defvjp(np.expm1,      U, "g * (ans + 1)")
defvjp(np.log,        U, "g / x")
defvjp(np.log2,       U, "astype_like(g / (x * np.log(2)), x)")
defvjp(np.log10,      U, "astype_like(g / (x * np.log(10)), x)")
defvjp(np.log1p,      U, "g / (x + 1)")

# --- powers ---
defvjp(np.sqrt,       U, "g / (2 * ans)")
defvjp(np.cbrt,       U, "g / (3 * ans ** 2)")
defvjp(np.square,     U, "2 * g * x")
defvjp(np.reciprocal, U, "-g * ans ** 2")

# --- trigonometric and hyperbolic ---
defvjp(np.sin,        U, "g * np.cos(x)")
defvjp(np.cos,        U, "-g * np.sin(x)")
defvjp(np.tan,        U, "g * (1 + ans ** 2)")
defvjp(np.arcsin,     U, "g / np.sqrt(1 - x ** 2)")
defvjp(np.arccos,     U, "-g / np.sqrt(1 - x ** 2)")
defvjp(np.arctan,     U, "g / (1 + x ** 2)")
defvjp(np.sinh,       U, "g * np.cosh(x)")
defvjp(np.cosh,       U, "g * np.sinh(x)")
defvjp(np.tanh,       U, "g * (1 - ans ** 2)")
defvjp(np.arcsinh,    U, "g / np.sqrt(x ** 2 + 1)")
defvjp(np.arccosh,    U, "g / np.sqrt(x ** 2 - 1)")
defvjp(np.arctanh,    U, "g / (1 - x ** 2)")
for _fn in (np.deg2rad, np.radians):  # the same conversion, two ufuncs
    defvjp(_fn,       U, "g * (np.pi / 180)")
for _fn in (np.rad2deg, np.degrees):
    defvjp(_fn,       U, "g * (180 / np.pi)")
# sinc'(x) = (cos(pi x) - sinc(x)) / x, which tends to 0 at x = 0 (and the numerator is 0 there)
defvjp(np.sinc,       "x", "g * (np.cos(np.pi * x) - ans) / np.where(x, x, 1.0)")

# --- magnitude and sign (np.abs is np.absolute; at 0 the subgradient 0 is used) ---
for _fn in (np.absolute, np.fabs):
    defvjp(_fn,       U, "g * np.sign(x)")
defvjp(np.copysign,   B, "unbroadcast(g * np.sign(x) * np.copysign(1.0, y), x)", None)

# --- binary functions ---
# maximum/minimum: ties split the cotangent evenly; fmax/fmin: a NaN operand gets none of it.
for _fn in (np.maximum, np.minimum, np.fmax, np.fmin):
    defvjp(_fn,       B, "unbroadcast(g * balanced_eq(x, ans, y), x)",
                         "unbroadcast(g * balanced_eq(y, ans, x), y)")
defvjp(np.logaddexp,  B, "unbroadcast(g * np.exp(x - ans), x)",
                         "unbroadcast(g * np.exp(y - ans), y)")
defvjp(np.logaddexp2, B, "unbroadcast(g * 2 ** (x - ans), x)",
                         "unbroadcast(g * 2 ** (y - ans), y)")
defvjp(np.hypot,      B, "unbroadcast(g * x / ans, x)",
                         "unbroadcast(g * y / ans, y)")
# arctan2(x, y) is the angle of the point (y, x)
defvjp(np.arctan2,    B, "unbroadcast(g * y / (x ** 2 + y ** 2), x)",
                         "unbroadcast(-g * x / (x ** 2 + y ** 2), y)")
defvjp(np.fmod,       B, "unbroadcast(g, x)",
                         "unbroadcast(-g * np.trunc(x / y), y)")
defvjp(np.ldexp,      B, "unbroadcast(np.ldexp(g, y), x)", None)
defvjp(np.float_power, B, RULES[np.power].vjps["x"], RULES[np.power].vjps["y"])

# --- selection ---
defvjp(np.where,      "condition, x=None, y=None, /",
       None, "unbroadcast(np.where(condition, g, 0.0), x)",
       "unbroadcast(np.where(condition, 0.0, g), y)")
# clip: the cotangent goes to whichever of a, a_min, a_max the output took, a on a tie; with
# a_min > a_max NumPy gives a_max.  (With a_min == a_max and a below, both bounds get it.)
# min=/max= are NumPy 2's spellings of a_min/a_max.
defvjp(np.clip,       "a, a_min=None, a_max=None, out=None, *, min=None, max=None",
       "unbroadcast(np.where(ans == a, g, 0.0), a)",
       "unbroadcast(np.where((a < a_min) & (ans == a_min), g, 0.0), a_min)",
       "unbroadcast(np.where((ans != a) & (ans == a_max), g, 0.0), a_max)",
       None,
       "unbroadcast(np.where((a < min) & (ans == min), g, 0.0), min)",
       "unbroadcast(np.where((ans != a) & (ans == max), g, 0.0), max)")
defvjp(np.nan_to_num, "x, copy=True, nan=0.0, posinf=None, neginf=None",
       "np.where(np.isfinite(x), g, 0.0)")

# --- complex parts, for real inputs (see the module docstring) ---
defvjp(np.real,       "val", "g")
defvjp(np.real_if_close, "a, tol=100", "g")
defvjp(np.conjugate,  U, "np.conj(g)")  # np.conj is np.conjugate

defnondiff([np.heaviside, np.imag, np.angle, np.isneginf, np.isposinf, np.isreal, np.iscomplex,
            np.isrealobj, np.iscomplexobj, np.isclose, np.allclose, np.array_equal,
            np.array_equiv, np.gcd, np.lcm, np.left_shift, np.right_shift, np.bitwise_count])

# --- jvps (forward mode): ``dx`` is the tangent of ``x``.  An elementwise function's jvp is its
# vjp with the tangent for the cotangent; binary ones broadcast against the other operand. ---
defjvp(np.exp,        "dx * ans")
defjvp(np.exp2,       "astype_like(dx * ans * np.log(2), ans)")
defjvp(np.expm1,      "dx * (ans + 1)")
defjvp(np.log,        "dx / x")
defjvp(np.log2,       "astype_like(dx / (x * np.log(2)), ans)")
defjvp(np.log10,      "astype_like(dx / (x * np.log(10)), ans)")
defjvp(np.log1p,      "dx / (x + 1)")
defjvp(np.sqrt,       "dx / (2 * ans)")
defjvp(np.cbrt,       "dx / (3 * ans ** 2)")
defjvp(np.square,     "2 * dx * x")
defjvp(np.reciprocal, "-dx * ans ** 2")
defjvp(np.sin,        "dx * np.cos(x)")
defjvp(np.cos,        "-dx * np.sin(x)")
defjvp(np.tan,        "dx * (1 + ans ** 2)")
defjvp(np.arcsin,     "dx / np.sqrt(1 - x ** 2)")
defjvp(np.arccos,     "-dx / np.sqrt(1 - x ** 2)")
defjvp(np.arctan,     "dx / (1 + x ** 2)")
defjvp(np.sinh,       "dx * np.cosh(x)")
defjvp(np.cosh,       "dx * np.sinh(x)")
defjvp(np.tanh,       "dx * (1 - ans ** 2)")
defjvp(np.arcsinh,    "dx / np.sqrt(x ** 2 + 1)")
defjvp(np.arccosh,    "dx / np.sqrt(x ** 2 - 1)")
defjvp(np.arctanh,    "dx / (1 - x ** 2)")
for _fn in (np.deg2rad, np.radians):
    defjvp(_fn,       "dx * (np.pi / 180)")
for _fn in (np.rad2deg, np.degrees):
    defjvp(_fn,       "dx * (180 / np.pi)")
defjvp(np.sinc,       "dx * (np.cos(np.pi * x) - ans) / np.where(x, x, 1.0)")
for _fn in (np.absolute, np.fabs):
    defjvp(_fn,       "dx * np.sign(x)")
defjvp(np.copysign,   "tangent_like(dx * np.sign(x) * np.copysign(1.0, y), ans)", None)
for _fn in (np.maximum, np.minimum, np.fmax, np.fmin):
    defjvp(_fn,       "dx * balanced_eq(x, ans, y)", "dy * balanced_eq(y, ans, x)")
defjvp(np.logaddexp,  "dx * np.exp(x - ans)",        "dy * np.exp(y - ans)")
defjvp(np.logaddexp2, "dx * 2 ** (x - ans)",         "dy * 2 ** (y - ans)")
defjvp(np.hypot,      "dx * x / ans",                "dy * y / ans")
defjvp(np.arctan2,    "dx * y / (x ** 2 + y ** 2)",  "-dy * x / (x ** 2 + y ** 2)")
defjvp(np.fmod,       "tangent_like(dx, ans)",       "-dy * np.trunc(x / y)")
defjvp(np.ldexp,      "tangent_like(np.ldexp(dx, y), ans)", None)
defjvp(np.float_power, RULES[np.power].jvps["x"], RULES[np.power].jvps["y"])
defjvp(np.where,      None, "tangent_like(np.where(condition, dx, 0.0), ans)",
                            "tangent_like(np.where(condition, 0.0, dy), ans)")
defjvp(np.clip,       "tangent_like(np.where(ans == a, da, 0.0), ans)",
                      "tangent_like(np.where((a < a_min) & (ans == a_min), da_min, 0.0), ans)",
                      "tangent_like(np.where((ans != a) & (ans == a_max), da_max, 0.0), ans)",
                      None,
                      "tangent_like(np.where((a < min) & (ans == min), dmin, 0.0), ans)",
                      "tangent_like(np.where((ans != a) & (ans == max), dmax, 0.0), ans)")
defjvp(np.nan_to_num, "np.where(np.isfinite(x), dx, 0.0)")
defjvp(np.real,       "dval")
defjvp(np.real_if_close, "da")
defjvp(np.conjugate,  "np.conj(dx)")
