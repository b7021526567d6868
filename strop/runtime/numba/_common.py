"""What the Numba implementations of the families share: the Numba types of numbers, the float
type of a cotangent, literal flags, implementations written out for a tuple's length, calls
into NumPy from compiled code, and the step that compiles the other helpers from their own
source."""
import functools

import numba
import numba.extending
import numpy as np
from numba import types
from numba.extending import register_jitable
from numba.np.numpy_support import as_dtype

SCALARS = (types.Float, types.Integer, types.Boolean)

# Numba compiles an overload with its own options, not its caller's boundscheck: a helper that
# indexes with the user's index (x[idx] = v) takes these, so that an index out of range raises
# IndexError (the runner then names the user's line) instead of writing outside the array
CHECKED = {"boundscheck": True}


def overload(fn, optional=False, **options):
    """``numba.extending.overload`` for strop's implementations: an argument typed Optional
    (a name bound to None before a branch assigns it, as reverse mode's taped temporaries are)
    is refused unless the implementation says it takes one (``optional=True``), so that Numba
    types the call with the value's own type and checks at run time that it is not None.
    Without this, an implementation that tells arrays from numbers by their Numba type reads
    an Optional array as a number: a silent wrong shape (``expand_to`` returned its cotangent
    unexpanded)."""
    def register(typer):
        if optional:
            return numba.extending.overload(fn, **options)(typer)

        @functools.wraps(typer)
        def typing(*args, **kws):
            if any(isinstance(t, types.Optional) for t in (*args, *kws.values())):
                return None
            return typer(*args, **kws)
        numba.extending.overload(fn, **options)(typing)
        return typer
    return register


def _given(a):
    """``a``, typed as the value an Optional holds (``overload`` refuses Optional, so Numba
    types the call again with the value's type and checks at run time it is not None)."""


@overload(_given)
def _given_impl(a):
    return lambda a: a


def add_into(out, idx, g):
    """``out[idx] += g``; compiled through a view where ``idx`` picks a view (below)."""
    out[idx] += g


def put_into(out, idx, v):
    """``out[idx] = v``; compiled through a view where ``idx`` picks a view (below)."""
    out[idx] = v


def _picks_view(out, idx):
    """Whether ``out[idx]`` is a view of array ``out`` (a basic index that leaves at least one
    axis): Numba's ``out[idx] += g`` and ``out[idx] = v`` with such an index take a general
    slice-assignment path 10 to 100x slower than the same operation on the view."""
    parts = list(idx) if isinstance(idx, types.BaseTuple) else [idx]
    if not isinstance(out, types.Array) or not all(
            isinstance(p, (types.Integer, types.SliceType, types.EllipsisType)) for p in parts):
        return False
    return any(isinstance(p, (types.SliceType, types.EllipsisType)) for p in parts) or \
        sum(isinstance(p, types.Integer) for p in parts) < out.ndim


@numba.extending.overload(add_into, jit_options=CHECKED, inline="always")
def _add_into(out, idx, g):
    if _picks_view(out, idx):
        def view(out, idx, g):
            part = out[idx]
            part += g
        return view

    def item(out, idx, g):
        out[idx] += g
    return item


@numba.extending.overload(put_into, jit_options=CHECKED, inline="always")
def _put_into(out, idx, v):
    if _picks_view(out, idx):
        def view(out, idx, v):
            part = out[idx]
            part[...] = v
        return view

    def item(out, idx, v):
        out[idx] = v
    return item


def _float_of(t):
    """The NumPy float type a cotangent of a value of Numba type ``t`` has."""
    dtype = t.dtype if isinstance(t, types.Array) else t
    if isinstance(dtype, types.Float):
        return as_dtype(dtype).type
    return np.float64


def _none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def _flag(t):
    """The value of a literal bool argument (batched code passes True/False), or None."""
    return bool(t.literal_value) if isinstance(t, types.BooleanLiteral) else None


def _unrolled(text, **names):
    """An implementation written out for a tuple's length (Numba types tuples by length).
    Its globals name this module, so that compiled code calling it can be saved and linked
    again (codegen/native.py finds environments by module)."""
    space = {"__name__": __name__, **names}
    exec(text, space)
    return space["impl"]


# helpers run in object mode so far, the count at each one's latest run, and why it ran there
# (runner.py warns once of each a call ran at Python's speed, naming the user's line)
RUNS = [0]
LAST_RUN = {}
WHY = {}
# arrays of fewer elements than this, all told, are small: object mode's fixed cost (tens of
# microseconds) is most of a call through NumPy
SMALL = 4096


def note_slow_run(name, why):
    RUNS[0] += 1
    LAST_RUN[name] = RUNS[0]
    WHY[name] = why


def _through_numpy(fn, out_type):
    """``fn(*args)`` run through NumPy from compiled code (BLAS products), its result
    C-contiguous in ``out_type``'s dtype; called as ``run((a, b, ...))``.  Where its arrays
    are small the trip costs more than the work: noted, for a PerformanceWarning."""
    dt = out_type.dtype.name

    def run(args):
        with numba.objmode(out=out_type):
            out = np.ascontiguousarray(fn(*args), dtype=dt)
            _note_if_small(fn, args)
        return out
    return register_jitable(run)


def _note_if_small(fn, args):
    """(Python: an object-mode block compiles no generator.)"""
    if sum(a.size for a in args if isinstance(a, np.ndarray)) < SMALL:
        note_slow_run(getattr(fn, "__name__", "?"), "through NumPy in object mode, whose "
                      "cost is most of a call on arrays this small")


def compile_the_rest(families, implemented):
    """Register the helpers of ``families`` (modules of strop.runtime) that have no
    implementation in ``implemented``: Numba compiles them from their own source when it can;
    when it cannot, the compile fails and jit falls back to the python backend with a
    JitFallbackWarning."""
    for family in families:
        for name in family.__all__:
            fn = getattr(family, name)
            if callable(fn) and fn not in implemented and getattr(
                    fn, "__module__", "").startswith("strop.runtime"):
                register_jitable(**CHECKED)(fn)
