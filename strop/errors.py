"""strop's exceptions and warnings; each names the user's file and line, shows it, and says what to do."""
import linecache
import os
import sys
from typing import NamedTuple, Optional


# path of a generated module -> its line map {generated line: (user file, line)}: how an
# error, or a transform of generated code, sees through it to the user's line
LINEMAPS = {}


class Location(NamedTuple):
    """A place in the user's source: file, 1-based line, 0-based column range."""
    filename: str
    lineno: int
    col: int = 0
    end_col: Optional[int] = None

    def __str__(self):
        return f"{self.filename}:{self.lineno}"

    def line(self):
        return linecache.getline(self.filename, self.lineno).rstrip("\n")

    def show(self):
        """'file:line' then the line with a caret under the offending part."""
        text = self.line()
        if not text:
            return f"  File {self.filename}, line {self.lineno}"
        stripped = text.lstrip()
        indent = len(text) - len(stripped)
        col = max(self.col - indent, 0)
        end = self.end_col - indent if self.end_col and self.end_col > self.col else col + 1
        return (f"  File {self.filename}, line {self.lineno}\n    {stripped}\n"
                f"    {' ' * col}{'^' * max(end - col, 1)}")


def describe(message, location=None, fix=None):
    parts = [message]
    if location is not None:
        parts.append(location.show())
    if fix:
        parts.append("Fix: " + fix)
    return "\n".join(parts)


class StropError(Exception):
    """Base class of strop's errors. ``location`` is the user line, when known."""

    def __init__(self, message, location=None, fix=None):
        self.location, self.fix, self.message = location, fix, message
        super().__init__(describe(message, location, fix))


class TransformError(StropError):
    """A construct that a transform does not support."""


class TransformTypeError(TransformError, TypeError):
    """A transform refused for the kind of function it was given, where JAX raises TypeError
    (forward mode of a custom_vjp function)."""


class ComplexDerivativeError(TransformError, TypeError):
    """A complex value under a derivative: strop's derivative rules are for real numbers
    (complex support is to come).  Also a TypeError, as JAX's refusal of complex outputs and
    inputs is."""


class PurityError(StropError):
    """A function with side effects (global writes, stateful RNG, outside iterators) given to a transform."""


class ImmutableUpdateError(StropError, TypeError):
    """An in-place update of an argument, a global or a closure object."""


class LaxTypeError(StropError, TypeError):
    """strop.lax given functions or values whose types do not fit together (JAX's TypeError):
    branches returning different structures, a carry that changes structure, ..."""


class LaxValueError(StropError, ValueError):
    """strop.lax given values JAX rejects with a ValueError (xs of different lengths, ...)."""


class IslandResultError(TypeError):
    """An object-mode island's result (runtime/numba/islands.py) has another rank than
    compiling found: the compiled code's types do not hold for these values (the runner falls
    back to the python backend)."""


class StropWarning(UserWarning):
    def __init__(self, message, location=None, fix=None):
        self.location = location
        super().__init__(describe(message, location, fix))


class KeyReuseWarning(StropWarning):
    """The same PRNG key consumed twice without a split."""


class JitFallbackWarning(StropWarning):
    """Numba could not compile a function; it runs on the python backend instead."""


class PerformanceWarning(StropWarning):
    """Compiled code takes a path known to be slow (a helper run in an object-mode island,
    at Python's speed): the results are right, the time is not."""


class DonationWarning(StropWarning):
    """A donated argument (``jit(donate_argnums=...)``) is overwritten in place: the caller's
    array changes (JAX deletes a donated buffer and raises on its reuse; NumPy cannot)."""


_STROP = os.path.dirname(os.path.abspath(__file__))


def user_stacklevel():
    """warnings.warn's stacklevel, for its caller, of the first frame outside strop (so that
    a warning names the user's line)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_STROP):
        frame, level = frame.f_back, level + 1
    return level
