"""Numba implementations of jacobians.py's helpers.

``jit(jacfwd(f))``, ``jit(jacrev(f))`` and ``jit(hessian(f))`` compile when the Jacobian has
no trees: the arguments differentiated are arrays or numbers and the output is one array or
number (the layout argument is then the constant True/False).  Tuples of arguments are typed
by their length, so the implementations for them are written out for that length.  Other
layouts have no implementation here: Numba refuses them and jit runs the python backend after
a JitFallbackWarning.  The helpers without an overload are compiled from their own source
where Numba can (__init__.py).
"""
import numpy as np
from numba import types
from numba.core.errors import TypingError

from ... import runtime as rt
from ._common import SCALARS, _float_of, _none, _unrolled, overload

LEAVES = (types.Array,) + SCALARS


def _size(x):
    pass


@overload(_size)
def _size_impl(x):
    if isinstance(x, types.Array):
        return lambda x: x.size
    if isinstance(x, SCALARS):
        return lambda x: 1


@overload(rt.jac_size)
def _jac_size(xs):
    if isinstance(xs, types.BaseTuple):
        terms = "".join(f" + size(xs[{k}])" for k in range(len(xs)))
        return _unrolled(f"def impl(xs):\n    return 0{terms}\n", size=_size)


@overload(rt.basis)
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


@overload(rt.out_size)
def _out_size(out):
    if isinstance(out, LEAVES):
        return lambda out: _size(out)


@overload(rt.out_basis)
def _out_basis(out, i):
    dtype = out.dtype if isinstance(out, types.Array) else out
    if isinstance(out, LEAVES) and not isinstance(dtype, types.Float):
        raise TypingError(f"jacrev requires real floating point outputs, got {out}")
    if isinstance(out, LEAVES):
        return lambda out, i: rt.basis(out, i, 0)


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


overload(rt.jac_fwd, prefer_literal=True)(_jacobian("fwd"))
overload(rt.jac_rev, prefer_literal=True)(_jacobian("rev"))


IMPLEMENTED = {rt.jac_size, rt.basis, rt.out_size, rt.out_basis, rt.jac_fwd, rt.jac_rev}
