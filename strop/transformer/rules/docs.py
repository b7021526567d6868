"""The list of differentiated functions, generated from the rule tables (docs/rules.md)."""
import numpy as np

from ... import runtime
from ...runtime import lax as runtime_lax
from .table import RULES, rule_name



LAX = """## strop.lax

`cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map`, `select`, `clamp`, `sort`,
`broadcast`, `expand_dims` are rewritten into the Python control flow and NumPy they mean
before any transform runs: their derivatives are those of that code, in both modes, through
`while_loop` and `fori_loop` with bounds computed from arguments too.  `stop_gradient` has
a zero derivative; `dynamic_slice`, `dynamic_update_slice` and their `_in_dim`/`_index_`
forms become one-axis helpers with derivative rules of their own.
`conv_general_dilated`, `conv`, `conv_with_general_padding` and `conv_transpose` become one
channels-last convolution helper between layout transposes; its derivatives in either operand
are its two transposes, whose own derivatives are the convolution and each other, so every
order and both modes are covered.
"""

CONVENTIONS = """## Conventions where the derivative is a choice

- `np.linalg.cholesky`, `np.linalg.eigh`, `np.linalg.eigvalsh` (and `svd`/`pinv` with
  `hermitian=True`) read one triangle of their input.  Their derivatives, in reverse and
  forward mode alike, are taken within symmetric matrices, as in JAX and autograd: the
  gradient is the symmetric matrix G with <G, dA> the change of the output for a symmetric dA,
  and a tangent dA acts through its symmetric part (dA + dAᵀ) / 2.  Finite differences of the
  NumPy function in a non-symmetric direction (which move only the triangle read) differ from
  it; differentiate `f((A + A.T) / 2)` to compare them.
- `np.std` (and `nanstd`) of values that are all equal (one element, say) has a NaN gradient,
  as in JAX: the derivative of sqrt at 0.  `np.linalg.norm` at 0 likewise.
- `np.linalg.eig` and `eigvals`: real matrices with real eigenvalues only (complex ones raise
  NotImplementedError when differentiated); eigenvectors have unit norm, as NumPy returns them,
  and their derivative needs distinct eigenvalues.
- Order statistics (`np.median`, `np.quantile`, `np.percentile`, their nan variants): the
  cotangent goes to the elements the result interpolates between, with NumPy's weights; at a
  tie or at a quantile falling exactly on an element the derivative is one-sided.
- `np.interp` with `period`, `np.cov` in its weights, `np.gradient` in coordinate arrays
  given as its spacing: no derivative (an error, never a zero).  `np.gradient` is
  differentiated in `f` and in spacings that are numbers.
"""


def markdown():
    numpy_rows, nondiff, other = [], [], []
    for key, rule in RULES.items():
        if isinstance(key, tuple):
            other.append(f"`{'x.' + key[1] + ('()' if key[0] == 'method' else '')}`")
            continue
        if any(getattr(m, getattr(key, "__name__", ""), None) is key
               for m in (runtime, runtime_lax)):
            continue   # helpers of generated code, not user-facing
        if getattr(key, "__strop_custom__", False):
            continue   # custom_jvp/custom_vjp functions (strop.nn's, the user's): their own
        name = rule_name(key)
        if not (name.startswith("np.") or isinstance(key, np.ufunc)):
            other.append(f"`{name}`")
        elif rule.differentiable:
            numpy_rows.append(f"`{name}`")
        else:
            nondiff.append(f"`{name}`")
    lines = ["# Functions strop differentiates", "",
             "Generated from the rule tables (`python -m strop rules`); do not edit.", "",
             f"## NumPy ({len(numpy_rows)} functions with derivative rules)", "",
             ", ".join(sorted(set(numpy_rows))), "",
             f"## NumPy functions whose output carries no derivative ({len(nondiff)})", "",
             ", ".join(sorted(set(nondiff))), "",
             "## Python builtins, array methods and attributes", "",
             ", ".join(sorted(set(other))), "", LAX, CONVENTIONS]
    return "\n".join(lines)
