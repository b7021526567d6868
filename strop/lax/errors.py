"""Errors of strop.lax called on values: JAX's exception type and words, naming the user's line
(the first frame outside strop)."""
import os
import sys

from ..errors import LaxTypeError, LaxValueError, Location

_STROP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def lax_error(kind, message, fix=None):
    """A LaxTypeError (``kind`` TypeError) or LaxValueError, at the caller's line."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_STROP):
        frame = frame.f_back
    loc = Location(frame.f_code.co_filename, frame.f_lineno) if frame is not None else None
    return (LaxTypeError if kind is TypeError else LaxValueError)(message, loc, fix)
