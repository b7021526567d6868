"""``np.squeeze(x)`` without an axis, where the shapes pass (transformer/shapes.py) knows every
length of ``x``, as ``np.squeeze(x, axis)`` with the axes of length 1: the rank of the first
depends on the shape, which compiled code does not know, and Numba compiles only the second.
(``logsumexp`` written with ``keepdims=True`` and squeezed at the end is the common case.)"""
import gast
import numpy as np

from ..transformer import ir, shapes


def squeeze_known_axes(node, ranks, callee):
    """``node`` (a FunctionDef; not changed) with such squeezes given their axes; ``ranks``:
    (parameter, rank) the call gave."""
    squeezes = [s for s in gast.walk(node) if isinstance(s, gast.Assign) and _bare_squeeze(
        s.value, callee)]
    if not squeezes:
        return node
    kinds = {p: "scalar" if r == 0 else f"array{r}" for p, r in ranks}
    known = shapes.known(node.body, kinds, {}, callee)
    node = ir.clone(node)
    for s in gast.walk(node):
        if isinstance(s, gast.Assign) and _bare_squeeze(s.value, callee):
            x = s.value.args[0]
            shape = known.get(x.id, (None,))[0] if isinstance(x, gast.Name) else None
            if shape and all(d is not None and d[0] == "lit" for d in shape):
                axes = [i for i, d in enumerate(shape) if d == ("lit", 1)]
                s.value.keywords = [gast.keyword(arg="axis", value=gast.Tuple(
                    elts=[ir.const(a) for a in axes], ctx=gast.Load()))]
    return node


def _bare_squeeze(value, callee):
    return isinstance(value, gast.Call) and callee(value.func) is np.squeeze and \
        len(value.args) == 1 and not value.keywords
