"""Numba side of runtime/effects.py: an effect called from compiled code runs in an
object-mode island (Python's own formatting and the user's callback, every call)."""
import numba
from numba.extending import overload, register_jitable


def compiled(effect):
    """A function compiled code calls in place of ``effect`` (made once per effect)."""
    stub = getattr(effect, "_compiled", None)
    if stub is not None:
        return stub

    def stub(*values):
        effect(*values)

    @register_jitable
    def run(values):
        with numba.objmode():
            effect(*values)

    @overload(stub)
    def _impl(*values):
        return lambda *values: run(values)

    stub.__name__ = stub.__qualname__ = effect.__name__
    effect._compiled = stub
    return stub
