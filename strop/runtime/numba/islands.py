"""Object-mode islands: a helper or NumPy function Numba cannot compile runs through NumPy
from compiled code, and the rest of the function stays compiled.

Each island is the last implementation Numba tries for its function: it is used only when
Numba's own (or the helper compiled from its source) does not type.  An object-mode block
must declare the Numba type of what it returns; the island finds it by running the function
at compile time on small arguments of the argument types (arrays of the same dtype and rank,
every axis of length 3, then of length 1; matrices symmetric positive definite, so that
factorizations succeed; constants their own value).  Where both runs fail, or give types that
differ (a rank that depends on the shapes: ``np.squeeze(x)``), there is no island and jit
falls back to the python backend as before; a result of another rank at run time raises."""
import inspect

import numba
import numpy as np
from numba import types
from numba.extending import register_jitable

from ...errors import IslandResultError
from ._common import LAST_RUN, RUNS, WHY, _unrolled, note_slow_run, overload  # noqa: F401

SIDES = (3, 1)   # the lengths of every axis of the arrays tried, in turn


def _sample(t, side):
    """A Python value of Numba type ``t`` (a constant's own value), or raise TypeError."""
    if isinstance(t, types.Omitted):
        return t.value
    if isinstance(t, tuple):    # star arguments
        return tuple(_sample(e, side) for e in t)
    if not isinstance(t, types.Type):   # an omitted argument's default
        return t
    if isinstance(t, types.Literal):
        return t.literal_value
    if t is None or isinstance(t, types.NoneType):
        return None
    if isinstance(t, types.Array):
        dt = np.dtype(str(t.dtype)) if not isinstance(t.dtype, types.Boolean) else np.dtype(bool)
        v = np.random.default_rng(0).uniform(0.2, 0.9, (side,) * t.ndim)
        if t.ndim >= 2:
            v = (v + np.swapaxes(v, -1, -2)) / 2 + side * np.eye(side)
        return v.astype(dt) if dt.kind in "fc" else np.ones(v.shape, dt)
    if isinstance(t, types.Boolean):
        return True
    if isinstance(t, types.Integer):
        return 1
    if isinstance(t, types.Float):
        return np.dtype(str(t)).type(0.5)
    if isinstance(t, types.Complex):
        return np.dtype(str(t)).type(0.5)
    if isinstance(t, types.BaseTuple):
        return tuple(_sample(e, side) for e in t)
    if isinstance(t, types.List):
        if t.initial_value is not None:
            return list(t.initial_value)
        return [_sample(t.dtype, side) for _ in range(2)]
    raise TypeError(t)


def _numba_type(value):
    """The Numba type an island's result is declared as (arrays C-contiguous), or None."""
    if isinstance(value, tuple):
        parts = [_numba_type(v) for v in value]
        return None if None in parts else types.Tuple(parts)
    if isinstance(value, list):
        parts = {_numba_type(v) for v in value}
        return types.ListType(parts.pop()) if len(parts) == 1 and \
            None not in parts else None
    if value is None:
        return types.none
    value = np.asarray(value)
    if value.dtype.kind not in "biufc":
        return None
    dtype = numba.from_dtype(value.dtype)
    return types.Array(dtype, value.ndim, "C") if value.ndim else dtype


def _as_declared(value, t):
    """``value`` converted to what an island declared (run in object mode)."""
    if isinstance(t, types.BaseTuple):
        return tuple(_as_declared(v, e) for v, e in zip(value, t))
    if isinstance(t, types.ListType):   # object mode returns typed lists only
        out = numba.typed.List.empty_list(t.item_type)
        for v in value:
            out.append(_as_declared(v, t.item_type))
        return out
    if isinstance(t, types.Array):
        if np.ndim(value) != t.ndim:
            raise IslandResultError(f"{np.ndim(value)}-d result where compiling found "
                                    f"{t.ndim}-d: the rank depends on the values here")
        return np.ascontiguousarray(value, dtype=str(t.dtype))
    if isinstance(t, types.NoneType):
        return None
    return np.dtype(str(t)).type(value)


def _runner(fn, out_type, spec):
    """``fn`` of the arguments run in object mode, its result as ``out_type`` declares;
    ``spec``: how each argument is passed ("" positionally, "*" spread, else by that name)."""
    def run(args):
        with numba.objmode(out=out_type):
            out = _as_declared(_call(fn, spec, args), out_type)
        return out
    return register_jitable(run)


def _call(fn, spec, args):
    note_slow_run(fn.__name__, "in an object-mode island: Numba did not compile it for these "
                               "arguments' types")
    positional, named = [], {}
    for how, value in zip(spec, args):
        if how == "":
            positional.append(value)
        elif how == "*":
            positional.extend(value)
        else:
            named[how] = value
    return fn(*positional, **named)


def island(fn, signature=None):
    """Register an object-mode implementation of ``fn``, the last one Numba tries
    (``signature``: fn's, where inspect cannot find it)."""
    try:
        sig = signature or inspect.signature(fn)
    except (TypeError, ValueError):
        return
    params = [p for p in sig.parameters.values() if p.kind != p.VAR_KEYWORD]
    if any(p.kind == p.VAR_POSITIONAL for p in params[:-1]):
        return    # Numba binds what follows star arguments wrongly when it runs
    defaults = {f"_default_{p.name}": p.default for p in params if p.default is not p.empty}
    head, spec = [], []
    for p in params:
        if p.kind == p.VAR_POSITIONAL:
            head.append(f"*{p.name}")
            spec.append("*")
        else:
            head.append(p.name if p.default is p.empty else f"{p.name}=_default_{p.name}")
            spec.append(p.name if p.kind == p.KEYWORD_ONLY else "")
    head = ", ".join(head)
    names = [p.name for p in params]
    star = [p.name for p in params if p.kind == p.VAR_POSITIONAL]

    def typing(*args, **kws):
        bound = dict(kws)
        for n, a in zip([n for n in names if n not in star], args):
            bound[n] = a
        found = set()
        for side in SIDES:
            try:
                values = {n: _sample(t, side) for n, t in bound.items()}
                if star:
                    values[star[0]] = tuple(values.get(star[0], ()))
                with np.errstate(all="ignore"):
                    found.add(_numba_type(_call(fn, spec, [values[n] for n in names])))
            except Exception:
                continue
        found.discard(None)
        if len(found) != 1:   # none, or a type that depends on the shapes (np.squeeze(x))
            return None
        out_type = found.pop()
        text = f"def impl({head}):\n    return run(({', '.join(names)},))\n"
        return _unrolled(text, run=_runner(fn, out_type, tuple(spec)), **defaults)

    passed = ", ".join(f"{n}={n}" for n in names)
    text = f"def typer({head}):\n    return typing({passed})\n"
    space = {"typing": typing, **defaults}
    exec(text, space)
    overload(fn, prefer_literal=True)(space["typer"])


def islands(families, never):
    """An island for every helper of ``families`` (modules of strop.runtime) but ``never``'s
    and the in-place ones: their Numba implementations refuse some types on purpose (a tape
    typed by an int before its loop must fail to compile, to become a list, not truncate)."""
    for family in families:
        for name in family.__all__:
            fn = getattr(family, name)
            if callable(fn) and getattr(fn, "__module__", "").startswith("strop.runtime") \
                    and fn not in never and not name.endswith("_inplace"):
                island(fn)


def _concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """np.concatenate's signature (a builtin: inspect cannot read it)."""


def _einsum(subscripts, *operands):
    """np.einsum's, less its keywords (Numba binds keywords after star arguments wrongly)."""


# NumPy functions Numba lacks, or has for fewer arguments than NumPy
NUMPY = (np.tile, np.pad, np.tensordot, np.kron, np.polyval,
         np.fft.fftshift, np.fft.ifftshift, np.repeat, np.roll, np.flip, np.sort, np.argsort,
         np.stack, np.cumsum, np.cumprod, np.interp, np.convolve, np.select,
         np.cov, np.diag, np.trace, np.tril, np.triu, np.expand_dims,
         np.moveaxis, np.swapaxes, np.take_along_axis, np.put_along_axis, np.linalg.norm,
         np.broadcast_to, np.diff, np.gradient, np.meshgrid, np.atleast_1d, np.atleast_2d)
SIGNATURES = {np.concatenate: inspect.signature(_concatenate),
              np.einsum: inspect.signature(_einsum)}
