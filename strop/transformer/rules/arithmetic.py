"""Derivatives of arithmetic: the ufuncs behind Python's operators, and their aliases.

Templates: ``g`` is the output's cotangent, ``ans`` the output; see table.py.  jvp templates:
``dx`` is the tangent of ``x``; one that passes a tangent through unchanged spreads it over
the broadcast output (``tangent_like``).
"""
import operator

import numpy as np

from .table import defjvp, defnondiff, defvjp

B = "x, y, /, out=None, *, where=True, casting='same_kind', order='K', dtype=None"
U = "x, /, out=None, *, where=True, casting='same_kind', order='K', dtype=None"

defvjp(np.add,          B, "unbroadcast(g, x)",           "unbroadcast(g, y)")
defvjp(np.subtract,     B, "unbroadcast(g, x)",           "unbroadcast(-g, y)")
defvjp(np.multiply,     B, "unbroadcast(g * y, x)",       "unbroadcast(x * g, y)")
defvjp(np.true_divide,  B, "unbroadcast(g / y, x)",       "unbroadcast(-g * x / y ** 2, y)")
defvjp(np.power,        B, "unbroadcast(g * y * x ** np.where(y, y - 1, 1.0), x)",
                           "unbroadcast(g * np.log(np.where(x, x, 1.0)) * ans, y)")
defvjp(np.mod,          B, "unbroadcast(g, x)",           "unbroadcast(-g * np.floor(x / y), y)")
defvjp(np.negative,     U, "-g")
defvjp(np.positive,     U, "g")
defvjp(np.matmul,       B, "unbroadcast(matmul_vjp_x(g, x, y), x)",
                           "unbroadcast(matmul_vjp_y(g, x, y), y)")

# Aliases: the builtin operators and np.divide are the same functions.
defvjp(np.divide,       B, "unbroadcast(g / y, x)",       "unbroadcast(-g * x / y ** 2, y)")
defvjp(np.remainder,    B, "unbroadcast(g, x)",           "unbroadcast(-g * np.floor(x / y), y)")
defvjp(abs,             "x, /", "g * np.sign(x)")

defnondiff([np.floor_divide, operator.floordiv, np.sign, np.floor, np.ceil, np.round, np.rint,
            np.trunc, np.fix, np.around,
            np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
            np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
            np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.isnan, np.isinf,
            np.isfinite, np.signbit])

# --- jvps (forward mode) ---
LIKE_X, LIKE_Y = "tangent_like(dx, ans)", "tangent_like(dy, ans)"
defjvp(np.add,          LIKE_X,                         LIKE_Y)
defjvp(np.subtract,     LIKE_X,                         "tangent_like(-dy, ans)")
defjvp(np.multiply,     "dx * y",                       "x * dy")
for _fn in (np.true_divide, np.divide):
    defjvp(_fn,         "dx / y",                       "-dy * ans / y")
defjvp(np.power,        "dx * y * x ** np.where(y, y - 1, 1.0)",
                        "dy * np.log(np.where(x, x, 1.0)) * ans")
for _fn in (np.mod, np.remainder):
    defjvp(_fn,         LIKE_X,                         "-dy * np.floor(x / y)")
defjvp(np.negative,     "-dx")
defjvp(np.positive,     "dx")
defjvp(np.matmul,       "dx @ y",                       "x @ dy")
defjvp(abs,             "dx * np.sign(x)")
