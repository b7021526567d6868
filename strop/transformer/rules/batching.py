"""Batching rules: how each NumPy function (and each runtime helper that derivative code calls)
runs on a batch of lanes at once.

Batched values carry the batch on their leading axis (see transformer/vectorize.py).  Most
functions batch by family, so the table names a family per function; the family's rule is
written once, below:

- ``ELEMENTWISE``: the function is applied as it is; a batched operand whose lanes have fewer
  dimensions than another operand gets axes after the batch axis, so lanes line up.
- ``REDUCTIONS``: ``axis`` is moved past the batch axis (``axis=None`` means every axis of a
  lane); ``FLATTENING`` functions (``argmax``, ``cumsum``, ``sort``) flatten each lane first.
- ``LIKE``: the output has the shape of the first argument (``zeros_like``): batched with it.
- ``SHAPE``: a rule per function (reshape, transpose, concatenate, ...).
- the runtime helpers of derivative code (unbroadcast, expand_to, ...): their batched versions
  in runtime/batching.py, chosen by vectorize.py's ``call_<helper>`` methods.

A function with no rule runs lane by lane (``each``): always right, at Python speed.
"""
import numpy as np

from ... import runtime

# --- elementwise: every ufunc, and these ---
ELEMENTWISE = {np.where, np.clip, np.nan_to_num, np.real, np.imag, np.conj, np.angle,
               np.round, np.around, np.fix, np.i0, np.sinc, np.heaviside, np.isclose,
               abs, runtime.balanced_eq, runtime.astype_like, runtime.narrow, runtime.add, runtime.scale,
               runtime.zeros_like, runtime.ones_like, ("method", "astype"),
               ("method", "copy"), np.copy, np.asarray, np.array, np.ascontiguousarray,
               runtime.first_trip}   # (of a batched test: every lane's)

# elementwise in their first argument only: the others (a dtype, an order) are not operands
ONE_OPERAND = {("method", "astype"), ("method", "copy"), np.copy, np.asarray, np.array,
               np.ascontiguousarray}


def is_elementwise(fn):
    """A ufunc (not a generalized one: np.matmul, np.vecdot work on core axes), or listed."""
    return isinstance(fn, np.ufunc) and fn.signature is None or is_member(fn, ELEMENTWISE)


# --- reductions: the parameter holding the array; axis is the "axis" parameter ---
REDUCTIONS = {fn: "a" for fn in (
    np.sum, np.nansum, np.mean, np.nanmean, np.prod, np.nanprod, np.var, np.nanvar, np.std,
    np.nanstd, np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin, np.ptp, np.any, np.all,
    np.median, np.average, np.count_nonzero, np.cumsum, np.nancumsum, np.cumprod,
    np.nancumprod, np.argmax, np.argmin, np.nanargmax, np.nanargmin, np.sort, np.argsort,
    np.diff, np.flip)}
# axis=None flattens each lane (the result is not a reduction over all axes)
FLATTENING = {np.cumsum, np.nancumsum, np.cumprod, np.nancumprod, np.argmax, np.argmin,
              np.nanargmax, np.nanargmin, np.sort, np.argsort, np.flip}
# functions whose result keeps the lane's rank (cumulative, sorting, flipping)
KEEPS_RANK = {np.cumsum, np.nancumsum, np.cumprod, np.nancumprod, np.sort, np.argsort,
              np.diff, np.flip}

# --- functions whose output is shaped like their first argument ---
LIKE = {np.zeros_like, np.ones_like, np.empty_like, np.full_like}

# --- functions that build arrays of a given shape: never batched by their arguments ---
CONSTRUCTORS = {np.zeros, np.ones, np.empty, np.full, np.eye, np.identity, np.arange,
                np.linspace}

# --- helpers whose result depends only on the shapes of their arguments: one lane's ---
SHAPE_ONLY = {runtime.dot_axes}

# --- functions with a lane-aware version, called with the arguments and then one flag per
# argument saying whether it is batched (strop.lax's dynamic slices: rules/lax.py) ---
LANES = {runtime.setitem: runtime.setitem_lanes,   # (a result of the first argument's rank,
         runtime.broadcast_like: runtime.broadcast_like_lanes,   # or of RANK_OF's)
         runtime.matmul_as_x: runtime.matmul_as_x_lanes,
         runtime.matmul_as_y: runtime.matmul_as_y_lanes}
RANK_OF = {runtime.broadcast_like: 1, runtime.matmul_as_x: 1, runtime.matmul_as_y: 2}

# --- attributes of a batched array that describe one lane ---
LANE_ATTRS = {"shape": "{x}.shape[1:]", "ndim": "{x}.ndim - 1", "size": "{x}[0].size"}

# the operator @ and the functions that are matrix products of 1-D and 2-D lanes
MATMUL = {np.matmul, runtime.matmul}


def is_member(fn, table):
    try:
        return fn in table
    except TypeError:   # an unhashable callee
        return False


def lookup(table, fn):
    try:
        return table.get(fn)
    except TypeError:
        return None
