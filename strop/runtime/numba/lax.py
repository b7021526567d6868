"""Numba implementations of the strop.lax helpers (runtime/lax.py), chosen by argument types
at compile time; the axis of a slice may be known only when the code runs, so each
implementation has one branch per axis of the operand's rank.
(In the strop/runtime/ layout this is runtime/numba/lax.py.)"""
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, register_jitable
from numba.np.numpy_support import from_dtype

from ...runtime import lax as rl
from ._common import overload

register_jitable(rl.stop_gradient)
register_jitable(rl.start_in_dim)


def _exec(text, **names):
    """An implementation written out for a rank; its globals name this module, so that
    compiled code calling it can be saved and linked again (codegen/native.py)."""
    space = {"__name__": __name__, "np": np, "rl": rl, **names}
    exec(text, space)
    return space["impl"]


def _index(axis, ndim, part):
    """The index text ``[:, :, part]`` for ``axis`` (non-negative)."""
    return "[" + ", ".join([":"] * axis + [part]) + "]"


def _axis_branches(ndim, body):
    """``if a == 0: body(0) elif a == 1: ...``, the last branch unconditional."""
    lines = []
    for a in range(ndim):
        test = "if" if a == 0 else "elif"
        lines.append(f"    {test} a == {a}:\n        {body(a)}")
    return "\n".join(lines) + "\n"


_AXIS = ("    a = axis + {n} if axis < 0 else axis\n"
         "    if a < 0 or a >= {n}:\n"
         "        raise ValueError('{what}: the axis is out of bounds for the operand')\n")
_SIZE = ("    if {size} < 0 or {size} > operand.shape[a]:\n"
         "        raise TypeError('{what}: the slice size must be in [0, the operand\\'s "
         "size along the axis]')\n"
         "    s = rl.start_in_dim(start, operand.shape[a], {size}, negative)\n")


@overload(rl.slice_in_dim)
def _slice_in_dim(operand, start, size, axis, negative):
    if not isinstance(operand, types.Array) or operand.ndim == 0:
        return None
    n = operand.ndim
    text = ("def impl(operand, start, size, axis, negative):\n"
            + _AXIS.format(n=n, what="dynamic_slice")
            + _SIZE.format(size="size", what="dynamic_slice")
            + _axis_branches(n, lambda a: f"return operand{_index(a, n, 's:s + size')}.copy()")
            + "    raise ValueError('dynamic_slice: no such axis')\n")
    return _exec(text)


@overload(rl.update_slice_in_dim)
def _update_slice_in_dim(operand, update, start, axis, negative):
    if not isinstance(operand, types.Array) or operand.ndim == 0:
        return None
    n = operand.ndim
    if not isinstance(update, types.Array) or update.ndim != n:
        def impl(operand, update, start, axis, negative):
            raise TypeError("dynamic_update_slice update must have the same rank as operand")
        return impl
    text = ("def impl(operand, update, start, axis, negative):\n"
            + _AXIS.format(n=n, what="dynamic_update_slice")
            + "    u = update.shape[a]\n"
            + _SIZE.format(size="u", what="dynamic_update_slice")
            + "    out = operand.copy()\n"
            + _axis_branches(n, lambda a: f"out{_index(a, n, 's:s + u')} = update")
            + "    return out\n")
    return _exec(text)


def _flag(t):
    if isinstance(t, types.BooleanLiteral):
        return t.literal_value
    if isinstance(t, types.Omitted):
        return bool(t.value)
    raise TypeError("the batched flags of a lanes helper must be constants")


@overload(rl.slice_in_dim_lanes, prefer_literal=True)
def _slice_in_dim_lanes(operand, start, size, axis, negative, operand_b, start_b, size_b,
                        axis_b, negative_b):
    ob, sb = _flag(operand_b), _flag(start_b)
    if _flag(size_b) or _flag(axis_b) or _flag(negative_b):
        return None   # the Python version says why
    args = "operand, start, size, axis, negative, operand_b, start_b, size_b, axis_b, negative_b"
    if not sb:
        text = (f"def impl({args}):\n"
                "    return rl.slice_in_dim(operand, start, size, axis + 1 if axis >= 0 else "
                "axis, negative)\n")
        return _exec(text)
    lane = "operand[k]" if ob else "operand"
    text = (f"def impl({args}):\n"
            "    n = len(start)\n"
            "    k = 0\n"
            f"    first = rl.slice_in_dim({lane}, start[0], size, axis, negative)\n"
            "    out = np.empty((n,) + first.shape, first.dtype)\n"
            "    for k in range(n):\n"
            f"        out[k] = rl.slice_in_dim({lane}, start[k], size, axis, negative)\n"
            "    return out\n")
    return _exec(text)


@overload(rl.update_slice_in_dim_lanes, prefer_literal=True)
def _update_slice_in_dim_lanes(operand, update, start, axis, negative, operand_b, update_b,
                               start_b, axis_b, negative_b):
    ob, ub, sb = _flag(operand_b), _flag(update_b), _flag(start_b)
    if _flag(axis_b) or _flag(negative_b):
        return None
    args = ("operand, update, start, axis, negative, operand_b, update_b, start_b, axis_b, "
            "negative_b")
    n = "len(start)" if sb else "len(operand)" if ob else "len(update)"
    x = "operand" if ob else "np.broadcast_to(operand, (n,) + np.shape(operand))"
    u = "update" if ub else "np.broadcast_to(update, (n,) + np.shape(update))"
    if not sb:
        text = (f"def impl({args}):\n"
                f"    n = {n}\n"
                f"    return rl.update_slice_in_dim({x}, {u}, start, axis + 1 if axis >= 0 "
                "else axis, negative)\n")
        return _exec(text)
    xl = "operand[k]" if ob else "operand"
    ul = "update[k]" if ub else "update"
    text = (f"def impl({args}):\n"
            f"    n = {n}\n"
            "    k = 0\n"
            f"    first = rl.update_slice_in_dim({xl}, {ul}, start[0], axis, negative)\n"
            "    out = np.empty((n,) + first.shape, first.dtype)\n"
            "    for k in range(n):\n"
            f"        out[k] = rl.update_slice_in_dim({xl}, {ul}, start[k], axis, negative)\n"
            "    return out\n")
    return _exec(text)


def _kind(t):
    dtype = t.dtype if isinstance(t, types.Array) else t
    if isinstance(dtype, types.Boolean):
        return "b"
    if isinstance(dtype, types.Integer):
        return "i" if dtype.signed else "u"
    if isinstance(dtype, types.Float):
        return "f"
    if isinstance(dtype, types.Complex):
        return "c"
    return None


# a number here may have been a Python number (weakly typed): which kinds it may become
_WEAK = {"i": "iufc", "u": "iufc", "f": "fc", "c": "c", "b": "b"}


def _maybe_weak(t):
    """A number compiled code got from a Python number: Python's are 64-bit in Numba (a
    32-bit one is a NumPy scalar, strongly typed)."""
    return isinstance(t, (types.Integer, types.Float, types.Complex)) and t.bitwidth in (64, 128)


def _carry_static(init, new):
    """What the types of a carry and a step's result say: it matches (True), it does not
    (False), the lengths decide ("shape"), or nothing is known (None)."""
    ki, kn = _kind(init), _kind(new)
    if ki is None or kn is None:
        return None
    ni = init.ndim if isinstance(init, types.Array) else 0
    nn = new.ndim if isinstance(new, types.Array) else 0
    if ni != nn:
        return False
    ok = ki == kn or _maybe_weak(init) and kn in _WEAK[ki] or _maybe_weak(new) and \
        ki in _WEAK[kn]
    if not ok:
        return False
    return True if ni == 0 else "shape"


@overload(rl.carry_matches)
def _carry_matches(init, new):
    """Compiled code cannot tell a Python number from a 64-bit NumPy scalar, so such a number
    matches as a weakly typed one would; arrays and other numbers match by kind (their widths
    agree once Numba unifies the carry's type)."""
    known = _carry_static(init, new)
    if known is None:
        return None
    if known == "shape":
        return lambda init, new: init.shape == new.shape
    return (lambda init, new: True) if known else (lambda init, new: False)


# --- the witness of a branch output's type (runtime/lax.py, ``branch_type``) -----------------

# a number's kind, for its witness: Numba's arithmetic on numbers widens them (int8 * int8 is
# an int64, as Python's ints are), where NumPy and JAX keep the width, so compiled code
# compares numbers by kind only (arrays keep NumPy's widths: by dtype)
_NUMBER_KIND = {"b": "bool", "i": "int64", "u": "int64", "f": "float64", "c": "complex128"}


def _witness_type(t, x64=None):
    """A type of no size standing for ``t``'s dtype (as JAX canonicalizes it; a number's
    kind) and rank: a tuple of rank + 1 dtypes, which Numba unifies only with the same
    tuple."""
    t = types.unliteral(t)
    dtype = t.dtype if isinstance(t, types.Array) else t
    if not isinstance(dtype, (types.Boolean, types.Integer, types.Float, types.Complex)):
        return None
    canonical = rl.canonical_dtype(np.dtype(str(dtype) if not isinstance(
        dtype, types.Boolean) else "bool"), x64)
    if not isinstance(t, types.Array) or t.ndim == 0:   # (JAX: a 0-d array is a number)
        canonical = np.dtype(_NUMBER_KIND[canonical.kind])
    ndim = t.ndim if isinstance(t, types.Array) else 0
    return types.UniTuple(types.DType(from_dtype(canonical)), ndim + 1)


def _witness_of(x64):
    """The intrinsic making the witness of a value under enable_x64 = ``x64``: one for each
    setting, as Numba keeps an intrinsic's typing by argument types alone."""
    @intrinsic
    def witness(typingctx, x):
        w = _witness_type(x, x64)

        def codegen(context, builder, signature, args):
            return cgutils.get_null_value(context.get_value_type(signature.return_type))
        return w(x), codegen
    return witness


_witness32, _witness64 = _witness_of(False), _witness_of(True)


@overload(rl.branch_type, prefer_literal=True)
def _branch_type(x, prev, what, index, path, x64):
    """The witness of ``x``'s type; where vmap ran an earlier branch (``prev`` a witness, not
    None), the two must be of one type, else the code raises (the Python run then says which
    shapes)."""
    w = _witness_type(x, _literal(x64))
    if w is None:
        return lambda x, prev, what, index, path, x64: prev
    if isinstance(prev, (types.NoneType, types.Omitted)) or prev == w:
        if _literal(x64):
            return lambda x, prev, what, index, path, x64: _witness64(x)
        return lambda x, prev, what, index, path, x64: _witness32(x)
    message = ("branches must have equal output types but they differ (run as Python, the "
               "function says which)")

    def impl(x, prev, what, index, path, x64):
        raise TypeError(message)
    return impl


@overload(rl.branch_types_agree)
def _branch_types_agree(witness):
    return lambda witness: None


def _literal(t):
    return getattr(t, "literal_value", None)


def _numba_type_text(t):
    """``float32[?]``: a Numba type as JAX prints a type (the lengths unknown)."""
    t = types.unliteral(t)
    dtype = t.dtype if isinstance(t, types.Array) else t
    try:
        name = rl.canonical_dtype(np.dtype("bool" if isinstance(dtype, types.Boolean) else
                                           str(dtype))).name
    except TypeError:
        return str(t)
    return f"{name}[{','.join('?' * (t.ndim if isinstance(t, types.Array) else 0))}]"


@overload(rl.carry_check, prefer_literal=True)
def _carry_check(init, new, what, where):
    """As carry_matches decides; a mismatch its types show raises JAX's message with them; one
    of lengths only (the same rank) raises a shorter one (run as Python, the function says
    which lengths)."""
    ok = _carry_static(init, new)
    if ok is None:
        return None
    ni = init.ndim if isinstance(init, types.Array) else 0
    nn = new.ndim if isinstance(new, types.Array) else 0
    if ok is True:
        return lambda init, new, what, where: None
    w, place = _literal(what) or "loop", _literal(where) or "carry"
    if ok is False:
        detail = (f"The input {place} has type {_numba_type_text(init)} but the corresponding "
                  f"output has type {_numba_type_text(new)}, so the "
                  f"{'shapes' if ni != nn else 'dtypes'} do not match.")
        message = rl.carry_type_message(w, place).replace(
            f"The input {place} and the corresponding output differ in dtype or shape.", detail)

        def impl(init, new, what, where):
            raise TypeError(message)
        return impl
    message = rl.carry_type_message(w, place)

    def impl(init, new, what, where):
        if init.shape != new.shape:
            raise TypeError(message)
    return impl
