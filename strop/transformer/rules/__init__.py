"""Derivative rules, one module per family of NumPy functions; importing this fills the table."""
from . import arithmetic  # noqa: F401  (each family registers its rules on import)
from .table import (RULES, TEMPLATE_NAMESPACE, Rule, evaluate_jvp, evaluate_vjp, lookup,  # noqa: F401
                    rule_name, template_ast)

for _family in ("ufuncs", "reductions", "shape", "products", "linalg", "numeric", "indexing",
                "containers", "lax", "conv"):
    try:
        __import__(f"{__name__}.{_family}")
    except ModuleNotFoundError as _e:  # a family not written yet
        if _e.name != f"{__name__}.{_family}":
            raise

__all__ = ["RULES", "TEMPLATE_NAMESPACE", "Rule", "evaluate_jvp", "evaluate_vjp", "lookup",
           "rule_name", "template_ast"]
