"""NumPy's reductions and scans over an ``axis`` (an int, a tuple of ints or None, negative
axes counted from the end) with ``keepdims``, which Numba implements over a whole array only.

These are further implementations of the NumPy functions themselves: Numba tries its own
first and comes here when its own does not take the arguments, so user code and the helpers
compiled from their own source both get them.  One general scheme serves every function: the
reduced axes are moved last, the array is made a C-contiguous (rows, reduced) matrix, and the
whole-array function Numba has is applied to each row (a float row's sum and mean: NumPy's
pairwise sum, sums.py)."""
import inspect
import textwrap

import numpy as np
from numba import types
from numba.core.errors import ForceLiteralArg, TypingError
from numba.extending import register_jitable
from numba.np.numpy_support import as_dtype

from ._common import _none, _unrolled, overload
from .sums import pairwise, pairwise_type, sum_all


@register_jitable
def _norm_axis(axis, ndim):
    if axis < -ndim or axis >= ndim:
        raise ValueError("axis is out of bounds for array of this dimension")
    return axis + ndim if axis < 0 else axis


@register_jitable
def _rest(axes, ndim):
    """The axes not in ``axes``, in order (a repeated axis is an error, as in NumPy)."""
    keep = np.ones(ndim, np.bool_)
    for i in axes:
        if not keep[i]:
            raise ValueError("duplicate value in 'axis'")
        keep[i] = False
    rest = np.empty(ndim - len(axes), np.intp)
    j = 0
    for i in range(ndim):
        if keep[i]:
            rest[j] = i
            j += 1
    return rest


def _axes_text(axis, ndim):
    """Source of the tuple of normalized axes that ``axis`` (a Numba type) names, and its
    length; None when it names none that this scheme takes."""
    if _none(axis):
        return "(" + "".join(f"{i}, " for i in range(ndim)) + ")", ndim
    if isinstance(axis, types.Integer):
        return f"(_norm_axis(axis, {ndim}),)", 1
    if isinstance(axis, types.BaseTuple) and all(isinstance(t, types.Integer) for t in axis):
        return "(" + "".join(f"_norm_axis(axis[{i}], {ndim}), "
                             for i in range(len(axis))) + ")", len(axis)
    return None


def _tuple(items):
    return "(" + "".join(f"{s}, " for s in items) + ")"


def _result_dtype(fn, dtype, *extra):
    """The dtype of ``fn`` of a 1-D array of ``dtype`` (NumPy's promotion rules)."""
    return np.asarray(fn(np.ones(2, as_dtype(dtype)), *extra)).dtype


# sum and mean of a C-contiguous array over a block of consecutive axes before the last:
# (before, block, after) summed over the block with the after axis innermost (vectorized),
# each sum in the same order as the row's (the transposing copy of the scheme below took
# 4 ms of 4.4 for mean(h, axis=(1, 2)) on (32, 28, 28, 64) float32)
_BLOCK = """
    lo, hi = ax[0], ax[0]
    for i in ax:
        lo, hi = min(lo, i), max(hi, i)
    if hi - lo + 1 == {k} and hi < {ndim} - 1 and m > 0 and n > 0:
        q = 1
        for i in range(hi + 1, {ndim}):
            q *= a.shape[i]
        b3 = a.reshape((m // q, n, q))
        acc = np.zeros((m // q, q), b3.dtype)
        for i in range(m // q):
            s = acc[i]
            for r in range(n):
                row = b3[i, r]
                for j in range(q):
                    s[j] += row[j]
        out = np.empty(m, dt)
        flat = acc.reshape(-1)
        for r in range(m):
            out[r] = {finish}
        return {result}
"""


def _reduce_text(ndim, axes, k, keep, params, call, block=None):
    """An implementation reducing the ``k`` axes ``axes`` of an ``ndim``-array by ``call`` of
    one row (``row``; or a pair, FLOAT_CALLS'), shaped as NumPy shapes it (``keep``:
    keepdims); ``block``: the sum's (``"sum"``) or the mean's, of a C-contiguous array, over a
    block of axes (_BLOCK)."""
    rest = [f"rest[{i}]" for i in range(ndim - k)]
    perm = _tuple(rest + [f"ax[{i}]" for i in range(k)])
    if keep:
        shape = _tuple(f"1 if kept[{i}] else a.shape[{i}]" for i in range(ndim))
    else:
        shape = _tuple(f"a.shape[{r}]" for r in rest)
    each = "    for r in range(m):\n        row = b[r]\n        out[r] = {}"
    if isinstance(call, tuple):    # (a float sum or mean: FLOAT_CALLS)
        rows = ("    if n < 8:\n" + textwrap.indent(each.format(call[1]), "    ") +
                "\n    else:\n        runs = b.reshape(-1)\n"
                f"        for r in range(m):\n            out[r] = {call[0]}")
    else:
        rows = each.format(call)
    scalar = not keep and k == ndim
    result = "out[0]" if scalar else f"out.reshape({shape})"
    block_text = "" if block is None else _BLOCK.format(
        k=k, ndim=ndim, result=result,
        finish="flat[r]" if block == "sum" else "flat[r] / n").rstrip("\n")
    return f"""
def impl({params}):
    ax = {axes}
    rest = _rest(ax, {ndim})
    kept = np.zeros({ndim}, np.bool_)
    for i in ax:
        kept[i] = True
    m = 1
    for i in range({ndim - k}):
        m *= a.shape[rest[i]]
    n = 1
    for i in ax:
        n *= a.shape[i]{block_text}
    b = np.ascontiguousarray(a.transpose({perm})).reshape((m, n))
    out = np.empty(m, dt)
{rows}
    return {result}
"""


def _reduction(fn, params, call, extra=()):
    """Register ``fn(a, axis, ..., keepdims)`` over any axes: ``params`` its parameters as
    NumPy names them (``out`` must be None), ``call`` the source reducing one ``row``."""
    names = [p.split("=")[0] for p in params.split(", ")]
    pysig = inspect.signature(_with_params(None, params))

    def typer(a, *args, **kws):
        bound = dict(zip(names[1:], args), **kws)
        axis, keepdims = bound.get("axis"), bound.get("keepdims")
        if not isinstance(a, types.Array) or a.ndim == 0 or not _none(bound.get("out")):
            return None
        if any(not _none(bound.get(n)) for n in ("dtype", "where", "initial")):
            return None
        keep = _literal_flag(keepdims)
        if keep is None:
            # a bool argument (not a constant): the result's rank depends on its value, so
            # the function is compiled for each value it is called with (Numba's literal
            # dispatch; codegen/native.py keys saved code by the value too).  Where the flag
            # is no argument of the function compiled, typing fails: jit falls back
            _literal_keepdims(pysig)
        if _none(axis) and not keep and "ddof" not in names:
            return None          # Numba's own, over the whole array
        found = _axes_text(axis, a.ndim)
        if found is None:
            return None
        axes, k = found
        dt = _result_dtype(fn, a.dtype, *extra)
        block = None
        if fn in (np.sum, np.mean) and a.layout == "C" and isinstance(a.dtype, types.Float):
            # the row's accumulator: Numba sums a row in its dtype, the mean divides after
            block = "sum" if fn is np.sum else "mean"
        row_call = FLOAT_CALLS.get(fn, call) if pairwise_type(a) else call
        return _unrolled(_reduce_text(a.ndim, axes, k, keep, params, row_call, block), np=np,
                         dt=dt, _norm_axis=_norm_axis, _rest=_rest, **HELPERS)

    overload(fn, prefer_literal=True)(_with_params(typer, params))


def _literal_keepdims(pysig):
    """Raise Numba's request that the call's ``keepdims`` be typed as a literal: Numba then
    compiles the function whose argument it is again, for its value."""
    def folded(args, kws):   # every parameter, by position (keywords come as pairs)
        bound = pysig.bind(*args, **dict(kws))
        bound.apply_defaults()
        return tuple(bound.arguments.values())
    at = list(pysig.parameters).index("keepdims")
    raise ForceLiteralArg({at}).bind_fold_arguments(folded)


def _literal_flag(t):
    """keepdims as a Python bool, from its Numba type or default; None if not a constant."""
    if isinstance(t, types.Omitted):
        t = t.value
    if t is None or isinstance(t, (bool, types.NoneType)):
        return bool(t)
    if isinstance(t, types.BooleanLiteral):
        return bool(t.literal_value)
    if isinstance(t, types.Boolean):
        return None
    raise TypingError("keepdims must be a constant True or False")


def _with_params(typer, params):
    """``typer`` behind a function whose signature is ``params`` (Numba's overload matches
    the implementation's signature against the typing function's)."""
    text = f"def typing({params}):\n    return typer({', '.join(_call_args(params))})\n"
    space = {"typer": typer}
    exec(text, space)
    return space["typing"]


def _call_args(params):
    out = []
    for p in params.split(", "):
        name = p.split("=")[0]
        out.append(name if name == "a" else f"{name}={name}")
    return out


@register_jitable
def _var_row(row, ddof):
    n = row.size
    mean = sum_all(row) / n
    d = row - mean
    return sum_all((d * np.conj(d)).real) / (n - ddof)


@register_jitable
def _std_row(row, ddof):
    return np.sqrt(_var_row(row, ddof))


HELPERS = {"_var_row": _var_row, "_std_row": _std_row, "pairwise": pairwise}
# a float row's sum and mean: NumPy's pairwise sum (sums.py) of row r as the run of ``runs``
# (all rows, one after another) from r * n: no view of each row, and the mean written here,
# not in a helper: Numba counts the references to an array made or passed on, 15 ns a row
# against 3.5.  Rows shorter than 8: Numba's own, inlined (1.2 ns a row), which adds them in
# order as NumPy does.
FLOAT_CALLS = {np.sum: ("pairwise(runs, r * n, n)", "np.sum(row)"),
               np.mean: ("pairwise(runs, r * n, n) / n", "np.mean(row)")}

_SUM = "a, axis=None, dtype=None, out=None, keepdims=False"
_MAX = "a, axis=None, out=None, keepdims=False"
_VAR = "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False"
for _fn, _params, _call in (
        (np.sum, _SUM, "np.sum(row)"), (np.prod, _SUM, "np.prod(row)"),
        (np.mean, _SUM, "np.mean(row)"), (np.max, _MAX, "np.max(row)"),
        (np.min, _MAX, "np.min(row)"), (np.amax, _MAX, "np.max(row)"),
        (np.amin, _MAX, "np.min(row)"), (np.all, _MAX, "np.all(row)"),
        (np.any, _MAX, "np.any(row)"), (np.ptp, _MAX, "np.ptp(row)"),
        (np.median, "a, axis=None, out=None, overwrite_input=False, keepdims=False",
         "np.median(row)"),
        (np.var, _VAR, "_var_row(row, ddof)"), (np.std, _VAR, "_std_row(row, ddof)")):
    _reduction(_fn, _params, _call)


@overload(np.squeeze, prefer_literal=True)
def _squeeze(a, axis=None):
    """Over given axes (with axis None the rank depends on the shape: not compiled)."""
    if not isinstance(a, types.Array) or _none(axis):
        return None
    found = _axes_text(axis, a.ndim)
    if found is None:
        return None
    axes, k = found
    shape = _tuple(f"a.shape[rest[{i}]]" for i in range(a.ndim - k))
    return _unrolled(f"""
def impl(a, axis=None):
    ax = {axes}
    rest = _rest(ax, {a.ndim})
    for i in ax:
        if a.shape[i] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return np.ascontiguousarray(a).reshape({shape})
""", np=np, _norm_axis=_norm_axis, _rest=_rest)


@overload(np.prod)
def _prod_of_numbers(a):
    """``np.prod(x.shape[1:])``: the product of a tuple of numbers (Numba's takes arrays)."""
    if isinstance(a, types.UniTuple) and isinstance(a.dtype, (types.Integer, types.Float)):
        def prod(a):
            out = 1
            for v in a:
                out = out * v
            return out
        return prod
    if isinstance(a, types.Tuple) and len(a) == 0:
        return lambda a: 1.0   # NumPy: the product of nothing is the float 1.0


@overload(np.ndim)
def _ndim(a):
    if isinstance(a, types.Array):
        n = a.ndim
        return lambda a: n
    if isinstance(a, (types.Number, types.Boolean)):
        return lambda a: 0


@register_jitable
def _around(a, axis):
    """``a`` as a C-contiguous (before, along, after) array around ``axis``."""
    ax = _norm_axis(axis, a.ndim)
    before, after = 1, 1
    for i in range(ax):
        before *= a.shape[i]
    for i in range(ax + 1, a.ndim):
        after *= a.shape[i]
    return np.ascontiguousarray(a).reshape((before, a.shape[ax], after))


@register_jitable
def _roll_along(a, shift, axis):
    b = _around(a, axis)
    n = b.shape[1]
    out = np.empty_like(b)
    if n > 0:
        s = shift % n
        out[:, s:, :] = b[:, :n - s, :]
        out[:, :s, :] = b[:, n - s:, :]
    return out.reshape(a.shape)


@overload(np.roll)
def _roll(a, shift, axis=None):
    """Along given axes (Numba's own rolls the flattened array only, and takes no axis)."""
    if isinstance(a, types.Array) and isinstance(axis, types.NoneType) and isinstance(
            shift, types.Integer):   # axis=None given (roll's cotangent passes it): Numba's
        return lambda a, shift, axis=None: np.roll(a, shift)
    if not isinstance(a, types.Array) or a.ndim == 0 or _none(axis):
        return None
    if isinstance(axis, types.Integer) and isinstance(shift, types.Integer):
        return lambda a, shift, axis=None: _roll_along(a, shift, axis)
    if not (isinstance(axis, types.BaseTuple) and all(isinstance(t, types.Integer)
                                                      for t in axis)):
        return None
    if isinstance(shift, types.Integer):      # one shift along every axis named
        pick = "shift"
    elif isinstance(shift, types.BaseTuple) and len(shift) == len(axis) and all(
            isinstance(t, types.Integer) for t in shift):
        pick = "shift[{i}]"
    else:
        return None
    steps = "".join(f"    out = _roll_along(out, {pick.format(i=i)}, axis[{i}])\n"
                    for i in range(len(axis)))
    return _unrolled(f"def impl(a, shift, axis=None):\n    out = a\n{steps}"
                     "    return np.ascontiguousarray(out)\n", np=np, _roll_along=_roll_along)


@register_jitable
def _flip_along(a, axis):
    b = _around(a, axis)
    return np.ascontiguousarray(b[:, ::-1, :]).reshape(a.shape)


@overload(np.flip)
def _flip(m, axis=None):
    """Along given axes (an int or a tuple of ints), or all of them."""
    if not isinstance(m, types.Array) or m.ndim == 0:
        return None
    if isinstance(axis, types.Integer):
        return lambda m, axis=None: _flip_along(m, axis)
    if _none(axis):
        axes = tuple(range(m.ndim))
    elif isinstance(axis, types.BaseTuple) and all(isinstance(t, types.Integer) for t in axis):
        axes = None
    else:
        return None
    n = m.ndim if axes is not None else len(axis)
    pick = (lambda i: str(i)) if axes is not None else (lambda i: f"axis[{i}]")
    steps = "".join(f"    out = _flip_along(out, {pick(i)})\n" for i in range(n))
    return _unrolled(f"def impl(m, axis=None):\n    out = m\n{steps}"
                     "    return np.ascontiguousarray(out)\n", np=np, _flip_along=_flip_along)


@overload(np.expand_dims)
def _expand_dims(a, axis):
    """Of a number, or along a tuple of axes (Numba's own takes an array and one axis)."""
    if isinstance(axis, types.Integer):
        k, axes = 1, "(axis,)"
    elif isinstance(axis, types.BaseTuple) and all(isinstance(t, types.Integer) for t in axis):
        k, axes = len(axis), "axis"
    else:
        return None
    if isinstance(a, (types.Number, types.Boolean)):
        ones = _tuple(["1"] * k)
        return _unrolled(f"""
def impl(a, axis):
    for ax in {axes}:
        _norm_axis(ax, {k})
    return np.full({ones}, a)
""", np=np, _norm_axis=_norm_axis)
    if not isinstance(a, types.Array) or isinstance(axis, types.Integer):
        return None
    n = a.ndim + k
    shape = _tuple(f"sh[{i}]" for i in range(n))
    return _unrolled(f"""
def impl(a, axis):
    kept = np.zeros({n}, np.bool_)
    for ax in axis:
        i = _norm_axis(ax, {n})
        if kept[i]:
            raise ValueError("repeated axis")
        kept[i] = True
    sh = np.empty({n}, np.intp)
    j = 0
    for i in range({n}):
        if kept[i]:
            sh[i] = 1
        else:
            sh[i] = a.shape[j]
            j += 1
    return np.ascontiguousarray(a).reshape({shape})
""", np=np, _norm_axis=_norm_axis)
