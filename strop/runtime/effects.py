"""Calls made for their effect alone: ``strop.debug.print`` and ``strop.debug.callback`` at one
line of transformed code.  Each call site becomes an ``effect`` function that generated code
calls with the values (positional, then keyword ones): it has no derivative (reverse and
forward mode skip it), is never removed as dead code, runs once per lane under ``vmap``
(``effect.lanes``, as JAX's debug callbacks; under an ``if`` on a batched value, for the lanes
taking that branch, as the Python loop over the batch would), and in compiled code runs in an object-mode
island (runtime/numba/effects.py)."""
import builtins

__all__ = []   # not helpers generated code names: each site is bound as an object


def site(kind, target, fmt, nargs, keys):
    """The effect of one call: ``kind`` "print" (``fmt.format(*args, **kwargs)``, printed) or
    "callback" (``target(*args, **kwargs)``); ``nargs`` positional values, then ``keys``."""
    def effect(*values):
        args, kwargs = values[:nargs], dict(zip(keys, values[nargs:]))
        if kind == "print":
            builtins.print(fmt.format(*args, **kwargs), flush=True)
        else:
            target(*args, **kwargs)
    effect.__name__ = effect.__qualname__ = f"debug_{kind}"
    effect.__strop_effect__ = True
    effect.lanes = lambda batched, masked=False: _lanes(effect, batched, masked)
    return effect


def _lanes(effect, batched, masked):
    """``effect`` called once per lane: values batched (``batched[i]``) on their first axis
    give one lane each, the others are passed to every call; ``masked``: the first value says
    which lanes run (those whose branch of an ``if`` on a batched value is taken)."""
    def per_lane(*values):
        mask = values[0] if masked else None
        values = values[1:] if masked else values
        n = len(mask) if masked else next(len(v) for v, b in zip(values, batched) if b)
        for i in range(n):
            if mask is None or mask[i]:
                effect(*[v[i] if b else v for v, b in zip(values, batched)])
    per_lane.__name__ = per_lane.__qualname__ = f"{effect.__name__}_lanes"
    per_lane.__strop_effect__ = True
    per_lane.lanes = lambda inner, masked=False: _lanes(per_lane, inner, masked)
    return per_lane


def is_effect(fn):
    return getattr(fn, "__strop_effect__", False)
