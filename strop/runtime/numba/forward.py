"""Numba implementations of forward.py's helpers: spreading a tangent over an output, and the
check of what a custom_vjp's bwd returns."""
import numpy as np
from numba import types

from ... import runtime as rt
from ._common import SCALARS, _float_of, _none, _unrolled, overload


@overload(rt.output_tangent)
def _output_tangent(t, out):
    if isinstance(out, types.Array) and isinstance(t, types.Float):
        dt = _float_of(out)
        return lambda t, out: np.zeros(out.shape, dt)
    return lambda t, out: t


@overload(rt.tangent_like)
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


@overload(rt.custom_cotangents)
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


IMPLEMENTED = {rt.tangent_like, rt.output_tangent, rt.custom_cotangents}
