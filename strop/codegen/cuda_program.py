"""Whole-array code on a GPU: ``jit(f)`` (and ``jit(grad(f))``, ...) of array code, not a vmap,
given arrays on a GPU.

The generated code runs on the host, as the python backend runs it, and each array operation
in it is a kernel launch on the device: fused chains of elementwise operators (fuse.py) are one
kernel each, reductions, ``@`` and the reverse-mode helpers have device twins
(runtime/cuda/twins.py), and NumPy's operators on DeviceArrays launch kernels themselves.
Python control flow stays Python: a loop's trips are launches, a tape is a list of
DeviceArrays, and a test of a device value (``if loss > 0``) copies that one number back.

A call of anything without a device twin keeps the code off the device: ``device_program``
raises Unsupported naming it and the user's line, and the call runs on the CPU after a
warning saying so.
"""
import ast
import builtins

import gast
import numpy as np

from .. import runtime
from ..runtime.cuda import twins
from ..transformer.ir import clone, names_in
from .cpu import _bind, callee_of, weaken
from .cuda_arrays import Unsupported
from .fuse import fuse
from .loops import loop_chains

# what the host part of the program may call besides device twins: Python's own, on numbers,
# shapes and lists, and the runtime's helpers of tapes and structure (host lists and tuples)
HOST = {abs, min, max, range, int, float, bool, len, round, divmod, pow, tuple, list, zip,
        enumerate, reversed, isinstance, sorted, sum, slice, np.shape, np.ndim, np.size,
        runtime.stack, runtime.push, runtime.pop, runtime.aux_pair, runtime.iterable,
        runtime.dot_axes, runtime.append, runtime.insert, runtime.extend, runtime.update,
        runtime.item_of, runtime.pop_item}
# the methods a value may have called: a DeviceArray's on the device, a tape's list methods
METHODS = {"sum", "mean", "max", "min", "prod", "reshape", "transpose", "astype", "copy",
           "ravel", "flatten", "append", "pop"}


def device_program(node, refs, weak=()):
    """``node`` (generated code as the python backend runs it) for the device: Python
    numbers weak, elementwise chains fused, and ``np.f`` bound to f's device twin (``refs``
    gains them).  Raises Unsupported for a call of what has no twin.  Once every function of
    the code is made so, ``twin_refs`` binds the names it imports to their twins."""
    node = loop_chains(fuse(weaken(clone(node), refs, weak, int_powers=False), refs,
                            calls=False), refs, min_names=1, calls=False)
    _check(node, refs)
    local = names_in(node) - set(refs)

    class Twins(gast.NodeTransformer):
        def visit_Attribute(self, node):   # np.sum -> sum_device
            obj = callee_of(gast.Call(func=node, args=[], keywords=[]), refs)
            twin = _twin(obj)
            if twin is None or not isinstance(node.ctx, gast.Load):
                return self.generic_visit(node)
            return gast.Name(id=_bind(refs, twin, twin.__name__, local), ctx=gast.Load(),
                             annotation=None, type_comment=None)
    return Twins().visit(node)


def twin_refs(refs):
    """``refs`` with each object that has a device twin replaced by it (same name)."""
    for name, obj in list(refs.items()):
        twin = _twin(obj)
        if twin is not None:
            refs[name] = twin


def _twin(obj):
    try:
        return twins.TWINS.get(obj)
    except TypeError:    # unhashable
        return None


def _check(node, refs):
    """Raises Unsupported at the first call (in the order of the code) that has neither a
    device twin nor a place in HOST or METHODS."""
    statements = [s for s in gast.walk(node) if isinstance(s, gast.stmt)]
    located = {id(c): s for s in statements for c in gast.walk(s)
               if isinstance(c, gast.Call)}    # (the innermost statement: walked last)
    for call in (c for c in gast.walk(node) if isinstance(c, gast.Call)):
        f = callee_of(call, refs)
        if f is None and isinstance(call.func, gast.Name) and call.func.id not in refs:
            f = vars(builtins).get(call.func.id)
        if f is not None and (_twin(f) is not None or _host(f)):
            continue
        if f is None and isinstance(call.func, gast.Attribute) and \
                call.func.attr in METHODS and not _names_module(call.func.value, refs):
            continue
        name = ast.unparse(gast.gast_to_ast(call.func))
        why = f"{name}() has no implementation on the device"
        raise Unsupported(why, getattr(located.get(id(call)), "loc", None))


def _host(f):
    try:
        return f in HOST
    except TypeError:
        return False


def _names_module(value, refs):
    return isinstance(value, gast.Name) and type(refs.get(value.id)).__name__ == "module"
