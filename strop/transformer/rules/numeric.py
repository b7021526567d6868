"""Derivatives of NumPy's numerical routines: differences, grids, selection, interpolation,
convolution, polynomials, order statistics, covariance, the real eigenproblem, and NumPy 2's
cumulative functions.

Templates: ``g`` is the output's cotangent, ``ans`` the output; see table.py.  Most helpers
return the cotangents of several arguments at once (a tuple the template indexes); their
docstrings in runtime/numeric.py give the formulas.

Limits: np.interp with ``period`` and np.quantile's methods other than linear, lower, higher,
nearest and midpoint raise NotImplementedError when differentiated; np.linalg.eig only for a
real matrix with real eigenvalues (complex ones raise), distinct when the vectors are used.
"""
import numpy as np

from .table import defjvp, defvjp

DIFF = "diff_vjp(g, a, n, axis, prepend, append, which={})"
defvjp(np.diff,     "a, n=1, axis=-1, prepend=None, append=None",
       DIFF.format(1), None, None, DIFF.format(0), DIFF.format(2))
LIN = "linspace_vjp(g, start, stop, num, endpoint, retstep, axis, which={})"
defvjp(np.linspace, "start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, "
                    "device=None", LIN.format(0), LIN.format(1))
defvjp(np.select,   "condlist, choicelist, default=0", None,
       "select_vjp(g, condlist, choicelist, default, which=0)",
       "select_vjp(g, condlist, choicelist, default, which=1)")
for _fn, _inverse in ((np.fft.fftshift, "ifftshift"), (np.fft.ifftshift, "fftshift")):
    defvjp(_fn,     "x, axes=None", f"np.fft.{_inverse}(g, axes)")
INTERP = "interp_vjp(g, x, xp, fp, left, right, period, which={})"
defvjp(np.interp,   "x, xp, fp, left=None, right=None, period=None",
       *[INTERP.format(i) for i in range(5)], "not_differentiable('np.interp in period')")
defvjp(np.convolve, "a, v, mode='full'", "convolve_vjp(g, a, v, mode, which=0)",
       "convolve_vjp(g, a, v, mode, which=1)")
defvjp(np.polyval,  "p, x", "polyval_vjp_p(g, p, x)", "unbroadcast(g * polyval_slope(p, x), x)")
COV = "cov_vjp(g, m, y, rowvar, bias, ddof, fweights, aweights, which={})"
defvjp(np.cov,      "m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, "
                    "aweights=None, *, dtype=None", COV.format(0), COV.format(1), None, None,
       None, "not_differentiable('np.cov in fweights')", "not_differentiable('np.cov in aweights')")

# order statistics: (the q of each, its scale, whether NaNs are ignored)
QUANTILE = "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False, *, "\
           "weights=None, interpolation=None"
MEDIAN = "a, axis=None, out=None, overwrite_input=False, keepdims=False"
for _fn, _q, _scale, _nan in ((np.quantile, "q", "1.0", False), (np.nanquantile, "q", "1.0", True),
                              (np.percentile, "q", "0.01", False),
                              (np.nanpercentile, "q", "0.01", True),
                              (np.median, "0.5", "1.0", False), (np.nanmedian, "0.5", "1.0", True)):
    _method = "method" if _q == "q" else "'linear'"
    _vjp = f"quantile_vjp(g, a, {_q}, axis, {_method}, {_nan}, {_scale})"
    _jvp = f"quantile_jvp(a, {_q}, axis, {_method}, {_nan}, {_scale}, {{}}, {{}}, ans)"
    if _q == "q":
        defvjp(_fn, QUANTILE, _vjp[:-1] + ", which=0)", _vjp[:-1] + ", which=1)")
        defjvp(_fn, _jvp.format("da", "None"), _jvp.format("None", "dq"),
               joint=_jvp.format("da", "dq"))
    else:
        defvjp(_fn, MEDIAN, _vjp[:-1] + ", which=0)")
        defjvp(_fn, _jvp.format("da", "None"))

defvjp(np.linalg.eig,     "a", "eig_vjp(g, ans)")
defvjp(np.linalg.eigvals, "a", "eig_vjp((g, None), np.linalg.eig(a))")

# NumPy 2's names that are new functions (np.concat, np.pow, np.acos, ... are the same objects
# as np.concatenate, np.power, np.arccos and share their rules)
if hasattr(np, "cumulative_sum"):
    CUMUL = "x, /, *, axis=None, dtype=None, out=None, include_initial=False"
    defvjp(np.cumulative_sum,  CUMUL, "cumulative_vjp(g, x, axis, include_initial)")
    defvjp(np.cumulative_prod, CUMUL, "cumulative_vjp(g, x, axis, include_initial, True)")
if hasattr(np, "astype"):
    defvjp(np.astype,   "x, dtype, /, *, copy=True, device=None", "astype_like(g, x)")
if hasattr(np, "row_stack"):   # removed in NumPy 2.? (np.vstack under another name)
    defvjp(np.row_stack, "tup, *, dtype=None, casting='same_kind'",
           "concatenate_vjp(g, tup, 0, np.atleast_2d)")

# --- jvps (forward mode) ---
DIFF_T = "diff_jvp(a, n, axis, prepend, append, {}, {}, {})"
defjvp(np.diff,     DIFF_T.format("da", "None", "None"), None, None,
       DIFF_T.format("None", "dprepend", "None"), DIFF_T.format("None", "None", "dappend"),
       joint=DIFF_T.format("da", "dprepend", "dappend"))
LIN_T = "linspace_jvp(start, stop, num, endpoint, retstep, axis, {}, {})"
defjvp(np.linspace, LIN_T.format("dstart", "None"), LIN_T.format("None", "dstop"),
       joint=LIN_T.format("dstart", "dstop"))
SEL_T = "select_jvp(condlist, choicelist, default, {}, {}, ans)"
defjvp(np.select,   None, SEL_T.format("dchoicelist", "None"), SEL_T.format("None", "ddefault"),
       joint=SEL_T.format("dchoicelist", "ddefault"))
defjvp(np.fft.fftshift,  "np.fft.fftshift(dx, axes)")
defjvp(np.fft.ifftshift, "np.fft.ifftshift(dx, axes)")
INTERP_T = "interp_jvp(x, xp, fp, left, right, period, {}, {}, {}, {}, {})"
_none5 = ["None"] * 5
defjvp(np.interp,   *[INTERP_T.format(*(_none5[:i] + [f"d{n}"] + _none5[i + 1:]))
                      for i, n in enumerate(("x", "xp", "fp", "left", "right"))],
       "not_differentiable('np.interp in period')",
       joint=INTERP_T.format("dx", "dxp", "dfp", "dleft", "dright"))
defjvp(np.convolve, "np.convolve(da, v, mode)", "np.convolve(a, dv, mode)")
defjvp(np.polyval,  "tangent_like(np.polyval(dp, x), ans)", "dx * polyval_slope(p, x)")
COV_T = "cov_jvp(m, y, rowvar, bias, ddof, fweights, aweights, {}, {}, ans)"
defjvp(np.cov,      COV_T.format("dm", "None"), COV_T.format("None", "dy"), None, None, None,
       "not_differentiable('np.cov in fweights')", "not_differentiable('np.cov in aweights')",
       joint=COV_T.format("dm", "dy"))
defjvp(np.linalg.eig,     "eig_jvp(da, ans)")
defjvp(np.linalg.eigvals, "eig_jvp(da, np.linalg.eig(a), which=0)")
if hasattr(np, "cumulative_sum"):
    defjvp(np.cumulative_sum,  "np.cumulative_sum(dx, axis=axis, include_initial=include_initial)")
    defjvp(np.cumulative_prod, "cumulative_prod_jvp(dx, x, axis, include_initial)")
if hasattr(np, "astype"):
    defjvp(np.astype,   "astype_tangent(dx, ans)")
if hasattr(np, "row_stack"):
    defjvp(np.row_stack, "np.vstack(dtup)")

# np.gradient: linear in f (the transpose of its stencils); a number spacing h scales by 1/h
defvjp(np.gradient, "f, *varargs, axis=None, edge_order=1",
       "gradient_vjp(g, f, varargs, axis, edge_order)", None, None,   # *varargs last
       "gradient_spacing_vjp(g, f, varargs, axis, edge_order, ans)")
defjvp(np.gradient, "gradient_jvp(f, varargs, axis, edge_order, df, None, ans)", None, None,
       "gradient_jvp(f, varargs, axis, edge_order, None, dvarargs, ans)",
       joint="gradient_jvp(f, varargs, axis, edge_order, df, dvarargs, ans)")
