"""Numba implementations of forward mode's and the Jacobians' helpers (runtime_forward.py).

``jit(jacfwd(f))``, ``jit(jacrev(f))`` and ``jit(hessian(f))`` compile when the Jacobian has
no trees: the arguments differentiated are arrays or numbers and the output is one array or
number (the layout argument is then the constant True/False).  Tuples of arguments are typed
by their length, so the implementations for them are written out for that length.  Other
layouts have no implementation here: Numba refuses them and jit runs the python backend after
a JitFallbackWarning.  The helpers without an overload are compiled from their own source
where Numba can (as runtime_numba does for runtime.py's).
"""
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from . import runtime as rt
from . import runtime_forward as rf
from .runtime_numba import SCALARS, _float_of, _none, _unrolled

LEAVES = (types.Array,) + SCALARS


def _size(x):
    pass


@overload(_size)
def _size_impl(x):
    if isinstance(x, types.Array):
        return lambda x: x.size
    if isinstance(x, SCALARS):
        return lambda x: 1


@overload(rf.tangent_like)
def _tangent_like(t, ans):
    dtype = ans.dtype if isinstance(ans, types.Array) else ans
    if not isinstance(dtype, types.Float):
        return None
    dt = _float_of(ans)
    if isinstance(ans, types.Array) and isinstance(t, types.Array) and t.ndim == ans.ndim:
        def same_rank(t, ans):
            if t.shape == ans.shape:
                return t.astype(dt)
            return np.broadcast_to(t.astype(dt), ans.shape).copy()
        return same_rank
    if isinstance(ans, types.Array):
        return lambda t, ans: np.broadcast_to(np.asarray(t).astype(dt), ans.shape).copy()
    if isinstance(t, SCALARS):
        return lambda t, ans: dt(t)


@overload(rf.jac_size)
def _jac_size(xs):
    if isinstance(xs, types.BaseTuple):
        terms = "".join(f" + size(xs[{k}])" for k in range(len(xs)))
        return _unrolled(f"def impl(xs):\n    return 0{terms}\n", size=_size)


@overload(rf.basis)
def _basis(x, i, start):
    dt = _float_of(x)
    if isinstance(x, types.Array):
        def impl(x, i, start):
            out = np.zeros(x.shape, dt)
            k = i - start
            if 0 <= k < x.size:
                out.reshape(-1)[k] = 1.0
            return out
        return impl
    if isinstance(x, SCALARS):
        one, zero = dt(1.0), dt(0.0)
        return lambda x, i, start: one if i == start else zero


@overload(rf.out_size)
def _out_size(out):
    if isinstance(out, LEAVES):
        return lambda out: _size(out)


@overload(rf.out_basis)
def _out_basis(out, i):
    dtype = out.dtype if isinstance(out, types.Array) else out
    if isinstance(out, LEAVES) and not isinstance(dtype, types.Float):
        raise TypingError(f"jacrev requires real floating point outputs, got {out}")
    if isinstance(out, LEAVES):
        return lambda out, i: rf.basis(out, i, 0)


def _put(b, row, col, v):
    """``b[row, :]`` (``col`` None) or ``b[:, col]`` set to the elements of ``v``."""


@overload(_put)
def _put_impl(b, row, col, v):
    if isinstance(v, types.Array) and _none(col):
        def impl(b, row, col, v):
            b[row, :] = np.ravel(v)
        return impl
    if isinstance(v, types.Array):
        def impl(b, row, col, v):
            b[:, col] = np.ravel(v)
        return impl
    if isinstance(v, SCALARS) and _none(col):
        def impl(b, row, col, v):
            b[row, 0] = v
        return impl
    if isinstance(v, SCALARS):
        def impl(b, row, col, v):
            b[0, col] = v
        return impl


def _shaped(b, out, x):
    """The (out.size, x.size) matrix ``b`` shaped ``out.shape + x.shape`` (a number when
    both are numbers)."""


@overload(_shaped)
def _shaped_impl(b, out, x):
    out_array, x_array = isinstance(out, types.Array), isinstance(x, types.Array)
    if out_array and x_array:
        return lambda b, out, x: b.reshape(out.shape + x.shape)
    if x_array:
        return lambda b, out, x: b.reshape(x.shape)
    if out_array:
        return lambda b, out, x: b.reshape(out.shape)
    return lambda b, out, x: b[0, 0]


def _dtype(out, x):
    return np.result_type(_float_of(out), _float_of(x))


def _layout_of(spec):
    if isinstance(spec, types.BooleanLiteral):
        return spec.literal_value
    return None


def _blocks_text(kind, n):
    """Source of jac_fwd/jac_rev for ``n`` differentiated leaves: one block per leaf."""
    lines = ["def impl(cols, out, xs, spec):", "    n = size(out)", "    start = 0"]
    for k in range(n):
        lines += [f"    m = size(xs[{k}])", f"    b{k} = np.empty((n, m), dtypes[{k}])"]
        if kind == "fwd":   # column c: the tangent of out for the basis tangent start + c
            lines += ["    for c in range(m):", "        put(b" + str(k) +
                      ", 0, c, cols[start + c])"]
        else:               # row r: the cotangents of the inputs for basis cotangent r
            lines += ["    for r in range(n):", f"        put(b{k}, r, None, cols[r][{k}])"]
        lines += ["    start += m", f"    j{k} = shaped(b{k}, out, xs[{k}])"]
    return lines


def _jacobian(kind):
    def typer(cols, out, xs, spec):
        multi = _layout_of(spec)
        if multi is None or not isinstance(out, LEAVES) or not isinstance(xs, types.BaseTuple):
            return None
        n = len(xs)
        lines = _blocks_text(kind, n)
        result = "(" + "".join(f"j{k}, " for k in range(n)) + ")" if multi else "j0"
        lines.append(f"    return {result}")
        return _unrolled("\n".join(lines) + "\n", np=np, size=_size, put=_put,
                            shaped=_shaped, dtypes=tuple(_dtype(out, x) for x in xs))
    return typer


@overload(rf.custom_cotangents)
def _custom_cotangents(cts, args, name, lanes=0):
    """Checked as the Python version checks; on a mismatch the compiled code raises and the
    Python version, run again, says what was wrong."""
    if not isinstance(cts, types.BaseTuple) or len(cts) != len(args):
        def wrong(cts, args, name, lanes=0):
            raise TypeError("the bwd function of a custom_vjp must return a tuple of one "
                            "cotangent per differentiable argument")
        return wrong
    lines = ["def impl(cts, args, name, lanes=0):"]
    for k, (c, a) in enumerate(zip(cts, args)):
        if _none(c):
            lines.append(f"    c{k} = zeros_like(args[{k}])")
            continue
        if isinstance(c, types.Array) != isinstance(a, types.Array) or (
                isinstance(a, types.Array) and c.ndim != a.ndim):
            lines.append("    raise ValueError('a cotangent of the wrong shape')")
        elif isinstance(a, types.Array):
            lines += [f"    if cts[{k}].shape != args[{k}].shape:",
                      "        raise ValueError('a cotangent of the wrong shape')"]
        lines.append(f"    c{k} = cts[{k}]")
    lines.append("    return (" + "".join(f"c{k}, " for k in range(len(cts))) + ")")
    return _unrolled("\n".join(lines) + "\n", zeros_like=rt.zeros_like)


@overload(rt.getitem_vjp, prefer_literal=True)
def _getitem_vjp_tuple(g, x, idx):
    """The cotangent of ``x[idx]`` for a tuple ``x`` and a constant index (runtime_numba's
    overload takes arrays)."""
    if not isinstance(x, types.BaseTuple) or not isinstance(idx, types.IntegerLiteral):
        return None
    at = idx.literal_value % len(x)
    parts = "".join("g, " if k == at else "None, " if _none(t) else f"zeros_like(x[{k}]), "
                    for k, t in enumerate(x))
    return _unrolled(f"def impl(g, x, idx):\n    return ({parts})\n",
                        zeros_like=rt.zeros_like)


overload(rf.jac_fwd, prefer_literal=True)(_jacobian("fwd"))
overload(rf.jac_rev, prefer_literal=True)(_jacobian("rev"))

_OVERLOADED = {rf.custom_cotangents, rf.tangent_like, rf.jac_size, rf.basis, rf.out_size,
               rf.out_basis, rf.jac_fwd, rf.jac_rev}
for _name in rf.__all__:   # the rest: compiled from their own source, where Numba can
    _fn = getattr(rf, _name)
    if callable(_fn) and _fn not in _OVERLOADED:
        register_jitable(_fn)
