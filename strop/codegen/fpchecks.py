"""NumPy's floating-point warnings in compiled code (runtime/fpstatus.py): a generated function
made to clear the CPU's flags first (``fp_enter()``) and report them at each return (``return
fp_leave(value)``, the value computed first).  ``strop.source`` shows the function without them:
they are the backend's, like Numba's bounds checks, not the user's computation."""
import re

import gast

from ..runtime import fpstatus
from ..transformer import ir
from .cpu import _bind


def with_fp_checks(node, refs):
    """``node`` with the checks (in place); ``refs`` gains the helpers.  Returns the names
    they are bound to, for ``hidden``."""
    taken = ir.names_in(node)
    enter = _bind(refs, fpstatus.fp_enter, "fp_enter", taken)
    leave = _bind(refs, fpstatus.fp_leave, "fp_leave", taken)
    for stmt in _returns(node.body):
        stmt.value = ir.call(leave, [stmt.value or ir.const(None)])
    node.body.insert(0, gast.Expr(value=ir.call(enter)))
    return enter, leave


def hidden(text, names):
    """Generated source ``text`` without the checks ``with_fp_checks`` bound to ``names``
    (nor their import)."""
    enter, leave = map(re.escape, names)
    text = re.sub(rf"^[ \t]*{enter}\(\)\n", "", text, flags=re.M)
    text = re.sub(rf"^([ \t]*return ){leave}\((.*)\)$", r"\1\2", text, flags=re.M)

    def unimported(match):
        kept = [n for n in match.group(1).split(", ") if n not in names]
        return f"from strop.runtime import {', '.join(kept)}\n" if kept else ""
    return re.sub(r"^from strop\.runtime import (.*)\n", unimported, text, count=1, flags=re.M)


def _returns(stmts):
    """The return statements of a function body (not of a function defined in it)."""
    for stmt in stmts:
        if isinstance(stmt, gast.Return):
            yield stmt
        elif not isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                yield from _returns(getattr(stmt, field, ()))
