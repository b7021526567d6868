"""Derivatives of reductions (sum, mean, var, max, ...) and cumulative sums and products.

Templates: ``g`` is the output's cotangent, ``ans`` the output; see table.py.  A reduction's
rule reads: the cotangent broadcast back over the reduced axes (``expand_to``), times the
derivative of the reduction with respect to each element (``where`` masks those not taken).
The NaN-ignoring variants give NaN elements no cotangent.  ``out=`` is in the signatures so
that calls bind; ``dtype=`` does not change the derivative.
"""
import numpy as np

from ... import runtime as rt
from .table import defjvp, defnondiff, defvjp

SUM = "a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True"
MEAN = "a, axis=None, dtype=None, out=None, keepdims=False, *, where=True"
MAX = "a, axis=None, out=None, keepdims=False, initial=None, where=True"
VAR = ("a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None, "
       "correction=None")
CUM = "a, axis=None, dtype=None, out=None"
NOT_NAN = "(where & ~np.isnan(a))"  # the elements a nan-reduction takes

defvjp(np.sum,     SUM, "expand_to(g, a, axis, keepdims) * where")
defvjp(np.nansum,  SUM, f"expand_to(g, a, axis, keepdims) * {NOT_NAN}")
defvjp(np.mean,    MEAN, "expand_to(g, a, axis, keepdims) * mean_grad(a, axis, where)")
defvjp(np.nanmean, MEAN, f"expand_to(g, a, axis, keepdims) * mean_grad(a, axis, {NOT_NAN})")
defvjp(np.prod,    SUM, "expand_to(g, a, axis, keepdims) * prod_grad(a, axis, where, initial)")
defvjp(np.nanprod, SUM,
       f"expand_to(g, a, axis, keepdims) * prod_grad(a, axis, {NOT_NAN}, initial)")

# the weights of mean and of max/min/ptp are constant in ``a`` (piecewise, for max and min):
# their own derivative is zero, so grad(grad(f)) and vmap of a derivative call them as they are
defnondiff([rt.mean_grad, rt.extremum_grad, rt.ptp_grad])

# var and std: ddof (or NumPy 2's correction) and a given mean; std' = var' / (2 std).
defvjp(np.var,     VAR,
       "expand_to(g, a, axis, keepdims) * var_grad(a, axis, ddof, where, mean, correction)")
defvjp(np.nanvar,  VAR,
       f"expand_to(g, a, axis, keepdims) * var_grad(a, axis, ddof, {NOT_NAN}, mean, correction)")
defvjp(np.std,     VAR,
       "expand_to(g / (2 * ans), a, axis, keepdims) * var_grad(a, axis, ddof, where, mean, "
       "correction)")
defvjp(np.nanstd,  VAR,
       f"expand_to(g / (2 * ans), a, axis, keepdims) * var_grad(a, axis, ddof, {NOT_NAN}, mean, "
       "correction)")

# max and min: the cotangent goes to the elements equal to the result, ties split evenly.
for _fn in (np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin):
    defvjp(_fn,    MAX,
           "expand_to(g, a, axis, keepdims) * extremum_grad(a, ans, axis, keepdims, where)")
defvjp(np.ptp,     "a, axis=None, out=None, keepdims=False",
       "expand_to(g, a, axis, keepdims) * ptp_grad(a, axis)")

# average: weights optional, 1-D weights lie along axis; returned=True is not differentiable.
defvjp(np.average, "a, axis=None, weights=None, returned=False, *, keepdims=False",
       "expand_to(g, a, axis, keepdims) * average_grad(a, axis, weights)", None,
       "average_weights_vjp(g, a, ans, axis, keepdims, weights)")

# cumulative sums and products (axis=None runs over the flattened array)
defvjp(np.cumsum,     CUM, "np.reshape(rev_cumsum(g, axis), np.shape(a))")
defvjp(np.nancumsum,  CUM,
       "np.where(np.isnan(a), 0.0, np.reshape(rev_cumsum(g, axis), np.shape(a)))")
defvjp(np.cumprod,    CUM, "cumprod_vjp(g, a, axis)")
defvjp(np.nancumprod, CUM,
       "np.where(np.isnan(a), 0.0, cumprod_vjp(g, np.where(np.isnan(a), 1.0, a), axis))")

defnondiff([np.all, np.any, np.argmax, np.argmin, np.nanargmax, np.nanargmin, np.argsort,
            np.argpartition, np.searchsorted, np.count_nonzero, np.nonzero, np.flatnonzero,
            np.argwhere])

# --- jvps (forward mode): ``da`` is the tangent of ``a``.  Linear reductions reduce the
# tangent; the others sum the tangent times each element's derivative (the ``*_grad``
# helpers above) over the reduced axes. ---
KEEP = "axis=axis, keepdims=keepdims"
NAN_ZERO = "np.where(np.isnan(a), 0.0, da)"


def _weighted(grad):
    return f"np.sum({grad} * da, {KEEP})"


defjvp(np.sum,     f"np.sum(da, {KEEP}, where=where)")
defjvp(np.nansum,  f"np.sum({NAN_ZERO}, {KEEP}, where=where)")
defjvp(np.mean,    f"np.mean(da, {KEEP}, where=where)")
defjvp(np.nanmean, f"np.nanmean(np.where(np.isnan(a), np.nan, da), {KEEP}, where=where)")
defjvp(np.prod,    _weighted("prod_grad(a, axis, where, initial)"))
defjvp(np.nanprod, _weighted(f"prod_grad(a, axis, {NOT_NAN}, initial)"))
defjvp(np.var,     _weighted("var_grad(a, axis, ddof, where, mean, correction)"))
defjvp(np.nanvar,  _weighted(f"var_grad(a, axis, ddof, {NOT_NAN}, mean, correction)"))
defjvp(np.std,     _weighted("var_grad(a, axis, ddof, where, mean, correction)") + " / (2 * ans)")
defjvp(np.nanstd,  _weighted(f"var_grad(a, axis, ddof, {NOT_NAN}, mean, correction)")
       + " / (2 * ans)")
for _fn in (np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin):
    defjvp(_fn,    _weighted("extremum_grad(a, ans, axis, keepdims, where)"))
defjvp(np.ptp,     _weighted("ptp_grad(a, axis)"))
defjvp(np.average, _weighted("average_grad(a, axis, weights)"), None,
       "average_weights_jvp(dweights, a, ans, axis, keepdims, weights)")
defjvp(np.cumsum,     "np.cumsum(da, axis=axis)")
defjvp(np.nancumsum,  f"np.cumsum({NAN_ZERO}, axis=axis)")
defjvp(np.cumprod,    "cumprod_jvp(da, a, axis)")
defjvp(np.nancumprod, f"cumprod_jvp({NAN_ZERO}, np.where(np.isnan(a), 1.0, a), axis)")
