"""strop.debug: ``print`` and ``callback``, as JAX's ``jax.debug``, for looking at values inside
transformed code (JAX's FAQ: "How can I convert a JAX Tracer to a NumPy array?").

strop traces nothing, so a plain ``print`` already runs every call; these exist so that code
written for JAX runs unchanged, and for what ``print`` cannot do in compiled code (Python's
formatting, any Python function).  In every backend and under every transform they run on
every call, with the values (NumPy arrays, not tracers):

| where | what runs |
|---|---|
| called directly, ``backend="python"`` | the print or the callback, as Python |
| ``jit`` (Numba) | the same, from an object-mode island; the rest stays compiled |
| ``grad``, ``jvp``, ``hessian`` | on the primal values, once per evaluation of the function; no derivative flows through them |
| ``vmap`` | once per lane, with that lane's values, in lane order (as JAX's debug callbacks); with no batched value, once; under an ``if`` on a batched value, for the lanes taking that branch, as a Python loop over the batch would (JAX runs both branches of a batched ``cond``, for every lane) |

``fmt`` follows ``str.format`` with the values as arguments (JAX's rules: ``{}``, ``{0}``,
``{x}``, format specs like ``{:.3f}`` for scalars); it must be a string constant inside a
transformed function.  ``ordered`` is accepted for JAX's signature: effects run in program
order in every backend.  Both return None.
"""
import builtins

__all__ = ["print", "callback"]


def print(fmt, *args, ordered=False, **kwargs):   # noqa: A001  (JAX's name)
    """Print ``fmt.format(*args, **kwargs)``, every call, in every backend."""
    builtins.print(fmt.format(*args, **kwargs), flush=True)


def callback(callback, *args, ordered=False, **kwargs):
    """Call ``callback(*args, **kwargs)`` for its effect, every call, in every backend."""
    callback(*args, **kwargs)


print.__strop_debug__ = "print"
callback.__strop_debug__ = "callback"
