"""In-place updates in compiled code: ``x = at_set(x, i, v)`` writes into ``x`` itself when no
other name can see ``x``'s old value (JAX does the same for dead inputs under jit).

An array is owned when every value the name gets is new (a NumPy result, an arithmetic
result, an update of another array, or a donated argument) and the name's value never goes
anywhere else: no copy to another name, no view (slices, ``.T``, ``reshape``), no tape, no
container.  Only then is the old value dead at each update, so updating in place is safe.
"""
import gast
import numpy as np

from .. import runtime
from ..transformer.ir import names_in

INPLACE = {runtime.at_set: "at_set_inplace", runtime.at_add: "at_add_inplace",
           runtime.at_multiply: "at_multiply_inplace", runtime.at_min: "at_min_inplace",
           runtime.at_max: "at_max_inplace", runtime.setitem: "setitem_inplace"}
# NumPy functions whose result may share memory with their first argument
VIEWS = {np.asarray, np.reshape, np.ravel, np.transpose, np.squeeze, np.expand_dims,
         np.broadcast_to, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.diagonal,
         np.swapaxes, np.moveaxis, np.asanyarray, np.ascontiguousarray, np.real, np.imag}
SHAPE_ONLY = {"shape", "ndim", "dtype", "size"}


def make_inplace(node, refs, donated=()):
    """Rewrite owned updates of ``node`` (a lowered FunctionDef) in place; returns the names."""
    params = [a.id for a in node.args.args]

    def callee(call):
        f = call.func
        if isinstance(f, gast.Name):
            return refs.get(f.id)
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and \
                refs.get(f.value.id) is np:
            return getattr(np, f.attr, None)
        return None

    def fresh(value, target):
        if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare)):
            return True
        if isinstance(value, gast.Call):
            fn = callee(value)
            if fn in INPLACE:
                return True
            module = getattr(fn, "__module__", "") or ""
            return (isinstance(fn, np.ufunc) or module.startswith("numpy")) and fn not in VIEWS
        return False

    candidates = {p for i, p in enumerate(params) if i in donated}
    assigns = [n for n in gast.walk(node) if isinstance(n, gast.Assign)
               and isinstance(n.targets[0], gast.Name)]
    for a in assigns:
        candidates.add(a.targets[0].id)
    for a in assigns:
        t = a.targets[0].id
        if not fresh(a.value, t):
            candidates.discard(t)
    candidates -= {p for i, p in enumerate(params) if i not in donated}
    for target in (n.target for n in gast.walk(node) if isinstance(n, gast.For)):
        candidates.discard(target.id)

    loads = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            loads[n.id] = loads.get(n.id, 0) + 1
    in_loop = {id(n) for loop in gast.walk(node) if isinstance(loop, (gast.For, gast.While))
               for n in gast.walk(loop)}

    def updates_in_place(a):
        """``x = upd(x, ...)``, or ``t = upd(x, ...)`` where this is x's only read."""
        if not (isinstance(a.value, gast.Call) and callee(a.value) in INPLACE and a.value.args
                and isinstance(a.value.args[0], gast.Name)):
            return False
        x = a.value.args[0].id
        return x == a.targets[0].id or (loads.get(x) == 1 and id(a) not in in_loop)

    # where a name is read without escaping: an update of itself, arithmetic, a NumPy call
    # that makes a new array, its shape, or the value returned
    safe = set()
    for n in gast.walk(node):
        if isinstance(n, gast.Assign) and updates_in_place(n):
            safe.add(id(n.value.args[0]))
        if isinstance(n, (gast.BinOp, gast.UnaryOp, gast.Compare)):
            safe.update(id(c) for c in gast.iter_child_nodes(n) if isinstance(c, gast.Name))
        if isinstance(n, gast.Call) and fresh(n, None) and callee(n) not in INPLACE:
            safe.update(id(a) for a in n.args if isinstance(a, gast.Name))
        if isinstance(n, gast.Attribute) and n.attr in SHAPE_ONLY and isinstance(n.value,
                                                                                 gast.Name):
            safe.add(id(n.value))
        if isinstance(n, gast.Return) and isinstance(n.value, gast.Name):
            safe.add(id(n.value))
    safe |= _moves(node.body)
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in safe:
            candidates.discard(n.id)

    done = set()
    for a in assigns:
        if updates_in_place(a) and a.value.args[0].id in candidates:
            t = a.value.args[0].id
            name = INPLACE[callee(a.value)]
            refs.setdefault(name, getattr(runtime, name))
            a.value.func = gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                     type_comment=None)
            done.add(t)
    return done


def _moves(body):
    """The reads of ``a`` in ``b = a`` statements of the function's top level that are the
    last mention of ``a``: the array moves to ``b`` (strop.lax.scan's ys, filled in place in
    the loop, then given the user's name), so updating ``a`` in place before is safe."""
    last = {}
    for i, s in enumerate(body):
        for n in names_in(s):
            last[n] = i
    return {id(s.value) for i, s in enumerate(body) if isinstance(s, gast.Assign)
            and isinstance(s.value, gast.Name) and last.get(s.value.id) == i}
