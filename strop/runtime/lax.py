"""Helpers that the lowering of ``strop.lax`` puts in generated code (and that strop.lax's own
functions call): a dynamic slice and a dynamic update along one axis, with JAX's index rules;
``stop_gradient``; the test that a loop's carry keeps its type.  Plain NumPy: their Numba
versions are in numba/lax.py, their rules in transformer/rules/lax.py.
(In the strop/runtime/ layout this is runtime/lax.py.)

``dynamic_slice`` and ``dynamic_update_slice`` over several axes are these two, one axis at a
time (transformer/lax_lower.py), so that each rule has one start index to deal with.
"""
import re

import numpy as np

from ..config import config

__all__ = ["slice_in_dim", "update_slice_in_dim", "stop_gradient", "carry_matches",
           "start_in_dim", "branch_type", "branch_types_agree", "carry_check"]

# the lane-by-lane versions vmap calls (batching table: transformer/rules/lax.py)
LANES = ["slice_in_dim_lanes", "update_slice_in_dim_lanes"]


def start_in_dim(start, dim, size, negative=True):
    """JAX's rule for a dynamic start index: a negative one counts from the end (when
    ``negative``: allow_negative_indices), then it is clamped so that ``size`` elements fit:
    into [0, dim - size]."""
    start = int(start)
    if negative and start < 0:
        start += dim
    return min(max(start, 0), dim - size)


def _check_size(shape, axis, size, what):
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"{what}: axis {axis} is out of bounds for an operand of shape "
                         f"{tuple(shape)}")
    if not 0 <= size <= shape[axis]:
        raise TypeError(f"{what}: the slice size {size} along axis {axis} must be in [0, "
                        f"{shape[axis]}] (the operand's shape is {tuple(shape)})")


def _at(axis, ndim, index):
    return (slice(None),) * (axis % ndim) + (index,)


def slice_in_dim(operand, start, size, axis, negative):
    """``operand[..., s:s + size, ...]`` along ``axis``, ``s`` the start as JAX clamps it; a
    new array, as in JAX (never a view of the operand)."""
    x = np.asarray(operand)
    _check_size(x.shape, axis, size, "dynamic_slice")
    s = start_in_dim(start, x.shape[axis], size, negative)
    return x[_at(axis, x.ndim, slice(s, s + size))].copy()


def update_slice_in_dim(operand, update, start, axis, negative):
    """A copy of ``operand`` with ``update`` written at the (clamped) start along ``axis``;
    the other axes of ``update`` are the operand's."""
    x, u = np.asarray(operand), np.asarray(update)
    if u.ndim != x.ndim:
        raise TypeError(f"dynamic_update_slice update must have the same rank as operand, "
                        f"got update shape {u.shape} for operand shape {x.shape}")
    _check_size(x.shape, axis, u.shape[axis], "dynamic_update_slice")
    s = start_in_dim(start, x.shape[axis], u.shape[axis], negative)
    out = x.copy()
    out[_at(axis, x.ndim, slice(s, s + u.shape[axis]))] = u
    return out


def stop_gradient(x):
    """``x`` itself; its derivative is zero (the rule table says so)."""
    return x


# --- the carry of a loop keeps its type (JAX checks it when tracing) ------------------------

_WEAK_KINDS = {int: "iufc", float: "fc", complex: "c"}   # kinds a Python number can become


def carry_matches(init, new):
    """Whether ``new`` (what a loop body returned) has the type of ``init`` (the carry it was
    given) as JAX's check sees it: the same shape, and the same dtype, 64-bit ones taken as
    32-bit unless enable_x64; a Python number is weakly typed: it may become an array of a
    kind that holds it (0 becomes a float, 0. does not become an int), and a Python number
    returned matches an array of a kind that holds it."""
    if type(init) is type(new) and (type(init) is not np.ndarray or (
            init.dtype == new.dtype and init.shape == new.shape)):
        return True     # the common case, quickly: the same Python type, or array type
    if np.shape(init) != np.shape(new):
        return False
    for weak, other in ((init, new), (new, init)):
        kinds = _WEAK_KINDS.get(type(weak))
        if kinds is not None:
            return np.result_type(other).kind in kinds or type(other) in _WEAK_KINDS
    return canonical_dtype(np.result_type(init)) == canonical_dtype(np.result_type(new))


def carry_check(init, new, what, where):
    """Generated code's check that a loop's carry kept its type: raises JAX's error, with both
    types (``where``: "carry", or "carry[1]")."""
    if not carry_matches(init, new):
        raise LaxCheckError(carry_type_message(what, where, init, new))


def canonical_dtype(dtype, x64=None):
    """``dtype`` as JAX has it: 64-bit ones 32-bit unless ``x64`` (by default enable_x64)."""
    if x64 is None:
        x64 = config.read("enable_x64")
    if dtype.itemsize == 8 and dtype.kind in "iuf" and not x64:
        return np.dtype(f"{dtype.kind}4")
    if dtype.kind == "c" and dtype.itemsize == 16 and not x64:
        return np.dtype(np.complex64)
    return dtype


# --- vmap: a batch of lanes on the leading axis; ``*_b``: which arguments are batched ------

def slice_in_dim_lanes(operand, start, size, axis, negative, operand_b, start_b, size_b, axis_b,
                       negative_b):
    """slice_in_dim in each lane: one call on the lane axis's neighbour when every lane starts
    at the same place, else lane by lane (a gather)."""
    _same_in_lanes(size_b or axis_b or negative_b, "dynamic_slice")
    if not start_b:
        return slice_in_dim(operand, start, size, _lane_axis(axis), negative)
    return np.stack([slice_in_dim(operand[k] if operand_b else operand, start[k], size, axis,
                                  negative) for k in range(len(start))])


def update_slice_in_dim_lanes(operand, update, start, axis, negative, operand_b, update_b,
                              start_b, axis_b, negative_b):
    """update_slice_in_dim in each lane."""
    _same_in_lanes(axis_b or negative_b, "dynamic_update_slice")
    n = len(start) if start_b else len(operand) if operand_b else len(update)
    lanes = [operand_b, update_b]
    x, u = [v if b else np.broadcast_to(v, (n,) + np.shape(v))
            for v, b in zip((operand, update), lanes)]
    if not start_b:
        return update_slice_in_dim(x, u, start, _lane_axis(axis), negative)
    return np.stack([update_slice_in_dim(x[k], u[k], start[k], axis, negative)
                     for k in range(n)])


def _lane_axis(axis):
    return axis + 1 if axis >= 0 else axis


def _same_in_lanes(batched, what):
    if batched:
        raise ValueError(f"{what}: the slice size and axis must be the same in every lane of "
                         f"vmap (they fix the result's shape)")


# --- messages, as JAX words them (strop.lax's own checks and the lowering's share them) ----

REVISE_STRUCTURE = "Revise the function so that the carry output has the same pytree " \
                   "structure as the carry input."
REVISE_TYPES = "Revise the function so that all output types match the corresponding input " \
               "types."


def type_text(x):
    """``float32[2]``: a value's type as JAX prints it (64-bit as 32-bit unless enable_x64)."""
    return _type_text(canonical_dtype(np.result_type(x)), np.shape(x))


def carry_structure_message(what, given, returned):
    return (f"{what} body function carry input and carry output must have the same pytree "
            f"structure, but they differ:\nThe input carry is {given} but the carry output is "
            f"{returned}.\n{REVISE_STRUCTURE}")


def carry_type_message(what, where, init=None, new=None):
    """``where``: "carry", or "carry component [1]"; with the values (strop.lax's own
    check), or without (generated code's constant)."""
    if init is None:
        detail = f"The input {where} and the corresponding output differ in dtype or shape."
    else:
        part = "shapes" if np.shape(init) != np.shape(new) else "dtypes"
        detail = (f"The input {where} has type {type_text(init)} but the corresponding output "
                  f"has type {type_text(new)}, so the {part} do not match.")
    return (f"{what} body function carry input and carry output must have equal types, but "
            f"they differ:\n{detail}\n{REVISE_TYPES}")


def branch_names(what, index):
    """How JAX names branch 0 and branch ``index`` of a cond (true_fun, false_fun) or a
    switch."""
    if what == "cond":
        return "true_fun", "false_fun"
    return "branch 0", f"branch {index}"


def branch_structure_message(what, first, other, index, where=""):
    """``where``: lines naming the two functions (a plain call knows them), or ""."""
    a, b = branch_names(what, index)
    return (f"{what} branch outputs must have the same pytree structure, but they differ:\n\n"
            f"{where + chr(10) if where else ''}{a} output is {first} but {b} output is "
            f"{other}, so their pytree structures differ.\n\nRevise {a} and/or {b} so that "
            f"they have the same pytree structure.")


def branch_leaf_matches(a, b):
    """Whether two leaves of branch outputs have the same type as JAX's check sees it: the
    same shape and the same dtype, 64-bit ones taken as 32-bit unless enable_x64.  A Python
    number is JAX's weakly typed int32, float32 or complex64 (64-bit with enable_x64): it
    matches an array of that dtype (1.0 and a float32 array), not one of another (1 and a
    float32 array: JAX rejects it too)."""
    return np.shape(a) == np.shape(b) and \
        canonical_dtype(np.result_type(a)) == canonical_dtype(np.result_type(b))


def branch_type_message(what, index, diffs, where=""):
    """``diffs``: (path text or "", type of branch 0's leaf, type of branch ``index``'s,
    "shapes" or "dtypes") for each leaf that differs."""
    a, b = branch_names(what, index)
    lines = [f"the output of {a}{' at path ' + p if p else ''} has type {t0} but the "
             f"corresponding output of {b} has type {t1}, so the {part} do not match"
             for p, t0, t1, part in diffs]
    detail = lines[0][0].upper() + lines[0][1:] + "." if len(lines) == 1 else \
        ";\n".join("  * " + line for line in lines) + "."
    return (f"{what} branches must have equal output types but they differ.\n\n"
            f"{where + chr(10) if where else ''}{detail}\n\nRevise {a} and/or {b} so that all "
            f"output types match.")


def branch_diff(path, a, b):
    """The ``diffs`` entry of two leaves, or None where they match."""
    if branch_leaf_matches(a, b):
        return None
    part = "shapes" if np.shape(a) != np.shape(b) else "dtypes"
    return path, type_text(a), type_text(b), part


SCAN_LENGTHS = "scan got values with different leading axis sizes"


class LaxCheckError(TypeError):
    """Raised by generated code's checks of strop.lax (branch outputs, a loop's carry) where
    types differ: the runner makes it a LaxTypeError at the user's line."""


# --- the branches' types in generated code ---------------------------------------------------
#
# The lowering of a cond or switch sets, in each branch, a witness of each output leaf's type:
#     if p:  _cond_type1 = branch_type(a, None, "cond", 0, "", False); ...; _cond1 = a
#     else:  _cond_type1 = branch_type(b, None, "cond", 1, "", False); ...; _cond1 = b
#     branch_types_agree(_cond_type1)
# Compiled, the witness is a value of no size whose Numba type is the leaf's dtype (as JAX
# canonicalizes it) and rank; Numba types both branches and cannot unify two witnesses of
# different types where the branches meet (read by ``branch_types_agree``), so code whose
# branches differ fails to compile, and the runner says why in JAX's words
# (``compile_error_message``); code whose branches agree pays nothing.  Compiled code compares
# numbers by kind only (runtime/numba/lax.py: Numba widens int8 * int8 to int64).  Run as
# Python, the witness is the leaf itself (read only where compared).  Where vmap runs the
# branches of a batched predicate one after the other, it passes each branch the witness the
# one before set (vectorize_control.py), and the two are compared: compiled, by their Numba
# types; as Python, with the shapes of a lane.


def branch_type(x, prev, what, index, path, x64):
    """The witness of branch ``index``'s leaf ``x`` (at ``path``): run as Python, the leaf
    itself, whose type is read only where ``prev`` (an earlier branch's witness under vmap,
    or None) is compared with it, as JAX compares them (``x64``: enable_x64 when the code was
    made, which its source thus names)."""
    if prev is None:
        return x
    try:
        a, b = [(canonical_dtype(np.result_type(v), x64), np.shape(v)) for v in (prev, x)]
    except TypeError:        # not an array or a number: its structure was compared
        return x
    if a != b:
        part = "shapes" if a[1] != b[1] else "dtypes"
        raise LaxCheckError(branch_type_message(what, index, [
            (path, _type_text(*a), _type_text(*b), part)]))
    return x


def branch_types_agree(witness):
    """Reads the witness where the branches meet (so that Numba unifies its types)."""
    return None


def _type_text(dtype, shape):
    return f"{dtype.name}[{','.join(map(str, shape))}]"


_UNIFY = re.compile(r"Cannot unify (.+?) and (.+?) for '(_(cond|switch)(_type)?\d*)(\.\d+)?'")
_NUMBA_TYPE = re.compile(r"(?:UniTuple\()?(?:dtype\()?([a-z]+\d*)\)?(?: x (\d+)\))?$")
_NUMBA_ARRAY = re.compile(r"array\(([a-z]+\d*), (\d+)d, \w+\)$")


def compile_error_message(text):
    """JAX's words for a Numba typing error where a lowered cond's or switch's branches meet
    with outputs of different types, or None for any other error (or for outputs JAX takes as
    one type: a number and an array of rank 0, which Numba cannot unify either)."""
    m = _UNIFY.search(text)
    if m is None:
        return None
    what = m.group(4)
    types_ = [_jax_type(t, witness=m.group(5) is not None) for t in m.group(1, 2)]
    if None in types_ or types_[0] == types_[1]:
        return None
    (d0, r0), (d1, r1) = types_
    if r0 == r1 == 0 and d0.kind.replace("u", "i") == d1.kind.replace("u", "i"):
        return None   # numbers of one kind: Numba's widths are not NumPy's
    part = "shapes" if r0 != r1 else "dtypes"
    a, b = (_unknown_text(d0, r0), _unknown_text(d1, r1))
    return (f"{what} branches must have equal output types but they differ.\n\n"
            f"One branch has an output of type {a} where another has type {b}, so the {part} "
            f"do not match (compiled code knows ranks, not lengths: ? is a length).\n\n"
            f"Revise the branches so that all output types match.")


_LITERAL = {"int": "int64", "float": "float64", "bool": "bool_", "complex": "complex128"}


def _jax_type(text, witness):
    text = text.strip()
    lit = re.match(r"Literal\[(\w+)\]", text)
    if lit is not None:
        text = _LITERAL.get(lit.group(1), "?")
    m = _NUMBA_ARRAY.match(text)
    if m is not None:
        dtype, rank = m.group(1), int(m.group(2))
    else:
        m = _NUMBA_TYPE.match(text)
        if m is None:
            return None
        dtype = m.group(1)
        rank = int(m.group(2)) - 1 if witness and m.group(2) else 0
    if dtype.startswith("bool"):
        dtype = "bool_"
    try:
        return canonical_dtype(np.dtype(dtype)), rank
    except TypeError:
        return None


def _unknown_text(dtype, rank):
    return f"{dtype.name}[{','.join('?' * rank)}]"
