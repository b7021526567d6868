"""NumPy's floating-point warnings in compiled code (runtime/fpstatus.py): a generated function
made to clear the CPU's flags first (``fp_enter()``) and report them at each return (``return
fp_leave(value)``, the value computed first).  ``strop.source`` shows the function without them:
they are the backend's, like Numba's bounds checks, not the user's computation.  Where flags
were raised, ``python_warnings`` runs the same code as Python for NumPy's own warnings, at the
user's lines (the runner decides when: runner.py)."""
import re
import sys
import warnings

import gast
import numpy as np

from ..runtime import fpstatus
from ..transformer import ir
from .cpu import _bind
from .emit import helper_imports, user_location
from .load import LINEMAPS

# NumPy's words for each flag (np.errstate's names)
TEXT = {"divide": "divide by zero", "invalid": "invalid value", "over": "overflow"}


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
        listed = match.group(1) if match.group(1) is not None else match.group(2)
        kept = [n for n in re.split(r",\s*", listed.strip()) if n and n not in names]
        return "".join(line + "\n" for line in helper_imports(kept)) if kept else ""
    return re.sub(r"^from strop\.runtime import (?:\(([^)]*)\)|(.*))\n", unimported, text,
                  count=1, flags=re.M)


def _returns(stmts):
    """The return statements of a function body (not of a function defined in it)."""
    for stmt in stmts:
        if isinstance(stmt, gast.Return):
            yield stmt
        elif not isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                yield from _returns(getattr(stmt, field, ()))


def python_warnings(function, args):
    """(the RuntimeWarnings ``function`` (generated code run as Python) gives on ``args``, as
    (message, category, file, line) at the user's lines; the exception it raises, or None: a
    FloatingPointError under ``np.errstate(...="raise")``, Python's ZeroDivisionError where
    a Python int was divided by zero)."""
    given, error = [], None
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, category, filename, lineno, *_: \
            given.append((message, category, *_user_line(filename, lineno)))
        try:
            function(*args)
        except Exception as e:
            error = e
    return [g for g in given if issubclass(g[1], RuntimeWarning)], error


def flag_warnings(kinds, linemap):
    """A warning per flag raised, at the function's first user line: for code not run again
    (it calls the user's callbacks, or overwrote a donated argument).  Raises under
    ``np.errstate(...="raise")``."""
    texts = [f"{TEXT[k]} encountered in compiled code" for k in kinds]
    if any(np.geterr()[k] == "raise" for k in kinds):
        raise FloatingPointError("; ".join(texts))
    loc = user_location(linemap, min(linemap))
    return [(t, RuntimeWarning, loc.filename, loc.lineno) for t in texts]


def _user_line(filename, lineno):
    """(file, line) of the user line that the innermost generated code running made a warning
    at, from a helper it called too (NumPy names the helper's line); else the line given."""
    frame = sys._getframe(1)
    while frame is not None:
        linemap = LINEMAPS.get(frame.f_code.co_filename)
        loc = user_location(linemap, frame.f_lineno) if linemap else None
        if loc is not None:
            return loc.filename, loc.lineno
        frame = frame.f_back
    return filename, lineno
