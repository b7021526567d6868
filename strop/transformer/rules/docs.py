"""The list of differentiated functions, generated from the rule tables (docs/rules.md)."""
import numpy as np

from ...codegen import runtime, runtime_forward
from .table import RULES, rule_name



def markdown():
    numpy_rows, nondiff, other = [], [], []
    for key, rule in RULES.items():
        if isinstance(key, tuple):
            other.append(f"`{'x.' + key[1] + ('()' if key[0] == 'method' else '')}`")
            continue
        if any(getattr(m, getattr(key, "__name__", ""), None) is key
               for m in (runtime, runtime_forward)):
            continue   # helpers of generated code, not user-facing
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
             ", ".join(sorted(set(other))), ""]
    return "\n".join(lines)
