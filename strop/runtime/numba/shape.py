"""Numba implementations of shape.py's helpers."""
import numpy as np
from numba import types
from numba.np.numpy_support import as_dtype

from ... import runtime as rt
from ._common import CHECKED, SCALARS, _float_of, _given, _none, _unrolled, overload
from .axes import _norm_axis


def _axis_first(n):
    """The text making ``order``, the axes of a rank-``n`` array with ``ax`` first and the
    others in turn, and ``back``, its inverse (``transpose(_UNDO(n))`` undoes it)."""
    perm = "(ax, " + "".join(f"rest[{i}], " for i in range(n - 1)) + ")"
    return f"""
    rest = np.empty({n - 1}, np.intp)
    j = 0
    for i in range({n}):
        if i != ax:
            rest[j] = i
            j += 1
    order = {perm}
    back = np.empty({n}, np.intp)
    for i in range({n}):
        back[order[i]] = i"""


def _UNDO(n):
    return "(" + "".join(f"back[{i}], " for i in range(n)) + ")"


def _pieces(n, lead, dt):
    """The text of an implementation cutting ``g`` (rank ``n``) along ``ax`` into one piece per
    array, each as long as its array along ``ax`` (less ``lead`` where ``lead(i)`` is true:
    an unbatched array's axis comes one earlier), in a list."""
    return _axis_first(n) + f"""
    moved = g.transpose(order)   # g with the axis first: each piece is a run of its rows
    out = []
    start = 0
    for i in range(len(arrays)):
        m = arrays[i].shape[ax - 1 if {lead} else ax]
        piece = moved[start:start + m]
        out.append(np.ascontiguousarray(piece.transpose({_UNDO(n)})).astype(dt))
        start += m
    return out
"""


def _promoted_pieces(n, length):
    """The text cutting ``g`` (rank ``n``) along ``ax`` into one piece per array, each
    ``length`` long (the text of its promoted array's length along the axis), shaped back as
    the array, in a list."""
    return _axis_first(n) + f"""
    moved = g.transpose(order)
    out = []
    start = 0
    for i in range(len(arrays)):
        m = {length}
        piece = np.ascontiguousarray(moved[start:start + m].transpose({_UNDO(n)}))
        out.append(piece.astype(dt).reshape(arrays[i].shape))
        start += m
    return out
"""


def _same_items(arrays):
    """The array type of every item of a list or a tuple of one type (else None)."""
    if isinstance(arrays, (types.List, types.UniTuple)) and isinstance(arrays.dtype,
                                                                       types.Array):
        return arrays.dtype
    return None


@overload(rt.concatenate_vjp, prefer_literal=True)
def _concatenate_vjp(g, arrays, axis=0, promote=None):
    """Arrays of g's rank in a list or tuple, joined along an axis: g's pieces, in a list."""
    item = _same_items(arrays)
    if isinstance(g, types.Array) and isinstance(axis, types.Integer) and isinstance(
            arrays, types.BaseTuple) and len(arrays) and (item is None or not _none(promote)):
        return _concatenate_vjp_tuple(g, arrays, promote)
    if isinstance(g, types.Array) and isinstance(axis, types.Integer) and item is not None \
            and not _none(promote):
        return _concatenate_vjp_promoted(g, item, promote)
    if not (isinstance(g, types.Array) and isinstance(axis, types.Integer) and _none(promote)
            and item is not None and item.ndim == g.ndim):
        return None
    return _unrolled(f"""
def impl(g, arrays, axis=0, promote=None):
    ax = _norm_axis(axis, {g.ndim})""" + _pieces(g.ndim, "False", "dt"),
        np=np, _norm_axis=_norm_axis, dt=_float_of(item))


# the shape each promotion gives an array of a lower rank, as text of its ``shape`` (np.vstack's
# atleast_2d makes a vector a row; np.column_stack's as_column, a column)
_PROMOTED = {np.atleast_1d: {0: "(1,)"},
             np.atleast_2d: {0: "(1, 1)", 1: "(1, {s}[0])"},
             np.atleast_3d: {0: "(1, 1, 1)", 1: "(1, {s}[0], 1)", 2: "({s}[0], {s}[1], 1)"},
             rt.as_column: {0: "(1, 1)", 1: "({s}[0], 1)"}}


# the rank each promotion gives (an array of that rank or more is left as it is)
_LEAST_RANK = {np.atleast_1d: 1, np.atleast_2d: 2, np.atleast_3d: 3, rt.as_column: 2}


def _promotion(promote):
    """The promotion function a ``promote`` argument names (None: none given), or False."""
    if _none(promote):
        return None
    key = getattr(promote, "typing_key", None) or getattr(
        getattr(promote, "dispatcher", None), "py_func", None)
    return key if key in _PROMOTED else False


def _concatenate_vjp_promoted(g, item, promote):
    """concatenate_vjp of a list of arrays of one type that ``promote`` made g's rank
    (np.vstack of the vectors a loop appended): each piece cut as long as its promoted array,
    shaped back as the array."""
    kind = _promotion(promote)
    if kind is False or not (item.ndim == g.ndim or kind is not None and
                             item.ndim in _PROMOTED[kind]):
        return None
    shape = "arrays[i].shape" if item.ndim == g.ndim else \
        _PROMOTED[kind][item.ndim].format(s="arrays[i].shape")
    return _unrolled(f"""
def impl(g, arrays, axis=0, promote=None):
    ax = _norm_axis(axis, {g.ndim})""" + _promoted_pieces(g.ndim, f"{shape}[ax]"),
        np=np, _norm_axis=_norm_axis, dt=_float_of(item))


def _concatenate_vjp_tuple(g, arrays, promote):
    """concatenate_vjp of a tuple of arrays of other layouts, dtypes or (promoted) ranks: one
    piece per array, cut and shaped for it, in a tuple (a list holds one type)."""
    kind = _promotion(promote)
    if kind is False or not all(isinstance(a, types.Array) and (
            a.ndim == g.ndim or kind is not None and a.ndim in _PROMOTED[kind])
            for a in arrays):
        return None
    lines = [f"    ax = _norm_axis(axis, {g.ndim})", "    start = 0"]
    for i, a in enumerate(arrays):
        shape = f"arrays[{i}].shape" if a.ndim == g.ndim else \
            _PROMOTED[kind][a.ndim].format(s=f"arrays[{i}].shape")
        lines += [f"    m = {shape}[ax]",
                  f"    p{i} = np.ascontiguousarray(moved[start:start + m].transpose("
                  f"{_UNDO(g.ndim)})).astype(dt{i}).reshape(arrays[{i}].shape)",
                  "    start += m"]
    text = ("def impl(g, arrays, axis=0, promote=None):\n" + lines[0] + "\n" +
            _axis_first(g.ndim)[1:] + "\n    moved = g.transpose(order)\n" +
            "\n".join(lines[1:]) + "\n    return (" +
            "".join(f"p{i}, " for i in range(len(arrays))) + ")\n")
    return _unrolled(text, np=np, _norm_axis=_norm_axis,
                     **{f"dt{i}": _float_of(a) for i, a in enumerate(arrays)})


@overload(rt.concatenate_vjp_lanes, prefer_literal=True)
def _concatenate_vjp_lanes(g, arrays, axis, promote, batched):
    """The same, lane by lane: ``g`` batched, the arrays batched or not (``batched``); the
    pieces are batched."""
    item = _same_items(arrays)
    kind = _promotion(promote)
    if kind and item is not None and item.ndim - 1 >= _LEAST_RANK[kind]:
        kind = None   # (every lane already has the rank the promotion gives)
    if kind and isinstance(g, types.Array) and isinstance(axis, types.Integer) and \
            isinstance(arrays, types.List) and item is not None and \
            item.ndim - 1 in _PROMOTED[kind] and isinstance(batched, types.BaseTuple) and \
            all(getattr(b, "literal_value", False) is True for b in batched):
        return _concatenate_vjp_lanes_promoted(g, item, kind)
    if not (isinstance(g, types.Array) and isinstance(axis, types.Integer) and kind is None
            and item is not None and item.ndim in (g.ndim, g.ndim - 1)
            and isinstance(batched, types.BaseTuple)):
        return None
    return _unrolled(f"""
def impl(g, arrays, axis, promote, batched):
    ax = _norm_axis(axis, {g.ndim - 1}) + 1""" + _pieces(g.ndim, "not batched[i]", "dt"),
        np=np, _norm_axis=_norm_axis, dt=_float_of(g))


def _concatenate_vjp_lanes_promoted(g, item, kind):
    """concatenate_vjp_lanes of a list of batched arrays whose lanes the join promoted
    (np.vstack of vectors, lane by lane): each piece as long as its promoted lane, shaped back
    as the array."""
    shape = _PROMOTED[kind][item.ndim - 1].format(s="arrays[i].shape[1:]")
    return _unrolled(f"""
def impl(g, arrays, axis, promote, batched):
    ax = _norm_axis(axis, {g.ndim - 1}) + 1""" + _promoted_pieces(g.ndim, f"{shape}[ax - 1]"),
        np=np, _norm_axis=_norm_axis, dt=_float_of(item))


@overload(rt.array_vjp)
def _array_vjp(g, object):
    """The cotangent of ``np.array(object)``: g in object's shape, or one part of g per item
    of a list or tuple of numbers or arrays (a flat list, as ``np.array([x, 2 * x])``)."""
    if not isinstance(g, types.Array):
        return None
    if isinstance(object, types.Array):
        return lambda g, object: np.ascontiguousarray(g).reshape(object.shape)
    if isinstance(object, types.List) and _part_of(object.dtype):
        return lambda g, object: [_array_part(g[k], object[k]) for k in range(len(object))]
    if isinstance(object, types.BaseTuple) and all(_part_of(t) for t in object):
        parts = ", ".join(f"_array_part(g[{k}], object[{k}])" for k in range(len(object)))
        return _unrolled(f"def impl(g, object):\n    return ({parts},)\n",
                         _array_part=_array_part)
    return None


def _part_of(t):
    """Whether ``t`` is a number, an array, or a list or tuple of such parts (a matrix
    written ``np.array([[1.0, 1.0], [0.0, a]])``)."""
    if isinstance(t, types.List):
        return _part_of(t.dtype)
    if isinstance(t, types.BaseTuple):
        return all(_part_of(e) for e in t)
    return isinstance(t, (types.Float, types.Integer)) or isinstance(t, types.Array)


def _array_part(gk, ok):
    return gk


@overload(_array_part)
def _array_part_impl(gk, ok):
    if isinstance(ok, types.Array):
        return lambda gk, ok: np.ascontiguousarray(gk).reshape(ok.shape)
    if isinstance(ok, types.List):
        return lambda gk, ok: [_array_part(gk[j], ok[j]) for j in range(len(ok))]
    if isinstance(ok, types.BaseTuple):
        parts = "".join(f"_array_part(gk[{j}], ok[{j}]), " for j in range(len(ok)))
        return _unrolled(f"def impl(gk, ok):\n    return ({parts})\n",
                         _array_part=_array_part)
    return lambda gk, ok: gk


# none replaced: the helpers' own source stays for the arguments these do not take

@overload(np.concatenate)
def _concatenate_list(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Arrays of one type in a list (Numba's own takes tuples: a list grown in a loop, the
    cotangents of np.split's pieces): each array's rows along the axis copied in turn."""
    if not (isinstance(arrays, (types.List, types.ListType)) and isinstance(
            arrays.dtype, types.Array) and (isinstance(axis, types.Integer) or axis == 0)
            and _none(out) and _none(dtype)):
        return None     # (axis == 0: left out, np.concatenate([a, b]) as users write it)
    n, dt = arrays.dtype.ndim, as_dtype(arrays.dtype.dtype)
    return _unrolled(f"""
def impl(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    ax = _norm_axis(axis, {n})
    if len(arrays) == 0:
        raise ValueError("need at least one array to concatenate")""" + _axis_first(n) + """
    first = arrays[0].transpose(order)
    total = 0
    for a in arrays:
        moved = a.transpose(order)
        if moved.shape[1:] != first.shape[1:]:
            raise ValueError("all the input array dimensions except for the concatenation "
                             "axis must match exactly")
        total += moved.shape[0]
    res = np.empty((total,) + first.shape[1:], dt)
    start = 0
    for a in arrays:
        moved = a.transpose(order)
        res[start:start + moved.shape[0]] = moved
        start += moved.shape[0]
    return np.ascontiguousarray(res.transpose(""" + _UNDO(n) + """))
""", np=np, _norm_axis=_norm_axis, dt=dt)


def _joined_list(tup, shapes, axis):
    """np.vstack and its kin of a list of arrays of one type (Numba's take tuples): each array
    reshaped as the function promotes it (``shapes``: item rank -> the text of the shape, the
    array as ``a``; other ranks as they are), then concatenated along ``axis``."""
    if not (isinstance(tup, (types.List, types.ListType)) and
            isinstance(tup.dtype, types.Array)):
        return None
    shape = shapes.get(tup.dtype.ndim, "a.shape")
    return _unrolled(f"""
def impl(tup):
    return np.concatenate([np.ascontiguousarray(a).reshape({shape}) for a in tup], {axis})
""", np=np)


@overload(np.stack)
def _stack_list(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """np.stack of a list (Numba's takes tuples): of numbers, the vector of them; of arrays of
    one type, each given a new axis, concatenated along it."""
    if not (isinstance(arrays, (types.List, types.ListType)) and isinstance(
            axis, (types.Integer, types.Omitted, int)) and _none(out) and _none(dtype)):
        return None     # (an axis left out comes as Omitted(0), or as the default itself)
    item = arrays.dtype
    if isinstance(item, SCALARS):
        def numbers(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
            if axis != 0 and axis != -1:
                raise ValueError("axis is out of bounds for array of dimension 1")
            return np.array(arrays)
        return numbers
    if not isinstance(item, types.Array):
        return None
    n = item.ndim
    shape = "(" + "".join(f"1 if {k} == ax else a.shape[{k} - ({k} > ax)], "
                          for k in range(n + 1)) + ")"
    return _unrolled(f"""
def impl(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    ax = _norm_axis(axis, {n + 1})
    return np.concatenate([np.ascontiguousarray(a).reshape({shape}) for a in arrays], ax)
""", np=np, _norm_axis=_norm_axis)


@overload(np.vstack)
def _vstack_list(tup):
    return _joined_list(tup, {0: "(1, 1)", 1: "(1, a.shape[0])"}, 0)


@overload(np.hstack)
def _hstack_list(tup):
    if isinstance(tup, (types.List, types.ListType)) and isinstance(tup.dtype, types.Array):
        return _joined_list(tup, {0: "(1,)"}, 0 if tup.dtype.ndim <= 1 else 1)
    return None


@overload(np.column_stack)
def _column_stack_list(tup):
    return _joined_list(tup, {0: "(1, 1)", 1: "(a.shape[0], 1)"}, 1)


@overload(np.dstack)
def _dstack_list(tup):
    return _joined_list(tup, {0: "(1, 1, 1)", 1: "(1, a.shape[0], 1)",
                              2: "(a.shape[0], a.shape[1], 1)"}, 2)


@overload(np.meshgrid, prefer_literal=True)
def _meshgrid(x, y, indexing="xy"):
    """np.meshgrid of two arrays (raveled), with indexing "xy" or "ij" (Numba has none)."""
    if not (isinstance(x, types.Array) and isinstance(y, types.Array)):
        return None
    mode = getattr(indexing, "literal_value", indexing if isinstance(indexing, str) else "xy")
    if mode not in ("xy", "ij"):
        return None
    dx, dy = as_dtype(x.dtype), as_dtype(y.dtype)

    def grids(x, y, indexing="xy"):
        a, b = x.ravel(), y.ravel()
        rows, cols = (b, a) if mode == "xy" else (a, b)
        first = np.empty((rows.size, cols.size), dx)
        second = np.empty((rows.size, cols.size), dy)
        for i in range(rows.size):
            for j in range(cols.size):
                first[i, j] = a[j] if mode == "xy" else a[i]
                second[i, j] = b[i] if mode == "xy" else b[j]
        return first, second
    return grids


@overload(rt.inverse_axes)
def _inverse_axes(axes, n):
    """The inverse permutation, made in compiled code (Numba's np.mod takes no tuple)."""
    if _none(axes):
        return lambda axes, n: None
    if not isinstance(axes, types.BaseTuple):
        return None
    k = len(axes)
    inverse = "(" + "".join(f"back[{i}], " for i in range(k)) + ")"
    return _unrolled(f"""def impl(axes, n):
    back = np.empty({k}, np.intp)
    for i in range({k}):
        back[axes[i] % {k}] = i
    return {inverse}
""", np=np)


@overload(rt.dense)
def _dense(g, ans):
    """A list's cotangents in compiled code are arrays, never None: g itself."""
    if isinstance(g, (types.List, types.ListType)) and not _none(g.dtype):
        return lambda g, ans: g


@overload(rt.diagonal_vjp, jit_options=CHECKED)
def _diagonal_vjp(g, a, offset=0, axis1=0, axis2=1):
    """Of a matrix (np.trace's and np.diagonal's of a 2-D array): zeros with g on the
    diagonal, g's one value on each of its places where g has one (np.trace's ``g[..., None]``).
    Other ranks run the helper's NumPy source in an island."""
    if not (isinstance(a, types.Array) and a.ndim == 2 and all(
            isinstance(t, (types.Integer, int)) for t in (offset, axis1, axis2)) and (
            isinstance(g, SCALARS) or isinstance(g, types.Array) and g.ndim <= 1)):
        return None
    dt = _float_of(g)

    def impl(g, a, offset=0, axis1=0, axis2=1):
        first, second = axis1 % 2, axis2 % 2
        if first == second:
            raise ValueError("axis1 and axis2 cannot be the same")
        out = np.zeros(a.shape, dt)
        row, col = max(-offset, 0), max(offset, 0)
        k = max(0, min(a.shape[first] - row, a.shape[second] - col))
        values = np.asarray(g).ravel()
        if values.size != 1 and values.size != k:
            raise ValueError("the cotangent of a diagonal of another length")
        for i in range(k):
            v = values[0] if values.size == 1 else values[i]
            if first == 0:
                out[i + row, i + col] = v
            else:
                out[i + col, i + row] = v
        return out
    return impl


IMPLEMENTED = {rt.diagonal_vjp}


def _of_optional(fn):
    """``fn`` (np.shape, np.ndim, np.size) of an Optional array: reverse mode asks a taped
    temporary's shape, and a temporary bound in one branch only is Optional; Numba's versions
    refuse it (the gradient fell back to Python)."""
    @overload(fn, optional=True)
    def typing(a):
        if isinstance(a, types.Optional):
            return lambda a: fn(_given(a))
    return typing


for _fn in (np.shape, np.ndim, np.size):
    _of_optional(_fn)
