"""The CPU backend: generated source compiled by ``numba.njit``.

Generated code reads as plain Python; two things change for Numba: tapes become lists used
with ``append``/``pop`` (Numba infers their item type), and runtime helpers resolve to their
Numba implementations (``strop/runtime/numba/``, registered with ``numba.extending.overload``).
"""
import builtins
import functools
import hashlib
import pickle
import types

import gast
import numpy as np

from .. import runtime
from ..runtime.arithmetic import multiplied_power
from ..transformer.ir import Namer, clone, name as ir_name, names_in
from .records import split_records
from ..syntax import gast_parse


def lower(node, refs, replace=lambda obj: None):
    """A copy of the generated FunctionDef with tape helpers spelled as list operations,
    ``@`` as a call of ``matmul``, and each reference (``random.split``) to an object that
    ``replace`` maps to another bound to that one; ``refs`` gains what the copy needs."""
    node = clone(node)
    local = names_in(node) - set(refs)     # the function's own names: no helper takes one

    def resolve(expr):
        if isinstance(expr, gast.Name):
            return refs.get(expr.id)
        if isinstance(expr, gast.Attribute):
            base = resolve(expr.value)
            return getattr(base, expr.attr, None) if base is not None else None
        return None

    def bind(obj, base):
        return _bind(refs, obj, base, local)

    def substitute(obj):   # ``replace``'s choice, else the NumPy function's twin
        new = replace(obj)
        if new is None and callable(obj):
            try:
                new = twins().get(obj)
            except TypeError:   # unhashable
                pass
        return new

    def matmul_name():
        return _bind(refs, runtime.matmul, "matmul", local)

    helpers = {n: o for n, o in refs.items() if n in runtime.__all__}

    def helper(call):
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Name):
            return helpers.get(call.func.id)
        return None

    class Lower(gast.NodeTransformer):
        def visit_BinOp(self, node):   # a @ b: through NumPy's BLAS (Numba's needs SciPy)
            self.generic_visit(node)
            if isinstance(node.op, gast.MatMult):
                return gast.Call(func=gast.Name(id=matmul_name(), ctx=gast.Load(),
                                                annotation=None, type_comment=None),
                                 args=[node.left, node.right], keywords=[])
            return node

        def visit_Name(self, node):
            obj = refs.get(node.id) if isinstance(node.ctx, gast.Load) else None
            new = substitute(obj) if obj is not None else None
            if new is not None:
                node.id = bind(new, getattr(new, "__name__", node.id))
            return node

        def visit_Attribute(self, node):
            obj = resolve(node)
            new = substitute(obj) if obj is not None else None
            if new is not None:
                return gast.Name(id=bind(new, getattr(new, "__name__", node.attr)),
                                 ctx=gast.Load(), annotation=None, type_comment=None)
            return self.generic_visit(node)

        def visit_Call(self, call):
            self.generic_visit(call)
            target = resolve(call.func)
            stub = one_argument_stubs().get(target) if _hashable(target) else None
            if stub is not None and len(call.args) == 1 and not call.keywords and \
                    not isinstance(call.args[0], gast.Starred):
                call.func = gast.Name(id=bind(stub, stub.__name__), ctx=gast.Load(),
                                      annotation=None, type_comment=None)
                return call
            fn = helper(call)
            if fn is runtime.stack:
                return gast.List(elts=[], ctx=gast.Load())
            if fn is runtime.pop:
                return gast.Call(func=gast.Attribute(value=call.args[0], attr="pop",
                                                     ctx=gast.Load()), args=[], keywords=[])
            if fn is runtime.push:
                return gast.Call(func=gast.Attribute(value=call.args[0], attr="append",
                                                     ctx=gast.Load()),
                                 args=[call.args[1]], keywords=[])
            return call

    node = Lower().visit(node)
    node = _never_filled(_appends_in_place(node, helpers, refs), refs)
    _displays_as_tuples(node, refs)
    split_records(node, refs, bind)
    return node


# what reads a list whole, without changing it or keeping it, the same whatever its item type
# when it is empty (sum([], 0.0) is 0.0): the position of the list among the arguments
# (getitem_vjp, concatenate_vjp: new lists of cotangents shaped like its elements)
READS_EMPTY = ((sum, 0), (len, 0), (np.sum, 0), (np.array, 0), (np.asarray, 0),
               (np.concatenate, 0), (np.stack, 0), (np.vstack, 0), (np.hstack, 0),
               (np.column_stack, 0), (np.dstack, 0), (runtime.iterable, 0), (runtime.sum_vjp, 1),
               (runtime.getitem_vjp, 1), (runtime.concatenate_vjp, 1))


def _read_whole(node, refs):
    """The Name nodes given as the list argument of a call of READS_EMPTY."""
    out = set()
    for n in gast.walk(node):
        if not isinstance(n, gast.Call):
            continue
        f = None
        if isinstance(n.func, gast.Name):
            f = refs.get(n.func.id, {"sum": sum, "len": len}.get(n.func.id))
        elif isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Name) and \
                refs.get(n.func.value.id) is np:
            f = getattr(np, n.func.attr, None)
        f = untwin(f)      # (lowering put twins in: np.sum's reads a list as np.sum does)
        at = next((k for r, k in READS_EMPTY if f is r), None)
        if at is not None and len(n.args) > at and isinstance(n.args[at], gast.Name):
            out.add(id(n.args[at]))
    return out


def _never_filled(node, refs):
    """``x = []`` bound once and only read whole by READS_EMPTY as a list of floats
    (``[0.0 for _k in range(0)]``): Numba types a list by what is put in it, and nothing is.
    NumPy too makes ``np.array([])`` of floats."""
    stores, ok = {}, _read_whole(node, refs)
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
    empty = {s.targets[0].id for s in gast.walk(node) if isinstance(s, gast.Assign)
             and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.List)
             and not s.value.elts and stores.get(s.targets[0].id) == 1}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in empty and isinstance(n.ctx, gast.Load) and \
                id(n) not in ok:
            empty.discard(n.id)
    k = Namer(names_in(node) | set(refs)).fresh("_k") if empty else None
    for s in gast.walk(node):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and \
                s.targets[0].id in empty:
            s.value = gast_parse(f"[0.0 for {k} in range(0)]").body[0].value
    return node


def _appends_in_place(node, helpers, refs):
    """``lst = append(lst, v)`` as ``lst.append(v)`` where ``lst`` starts as ``[]`` and is only
    appended to, indexed, read whole (READS_EMPTY: no other name can see it change), pushed on
    a tape or bound to another name (a copy, as lists are values here) and popped from a tape:
    Numba infers an empty list's item type from the list's own ``append``, not from a function
    given the list."""
    def is_append(value, name):
        return isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
            helpers.get(value.func.id) is runtime.append and len(value.args) == 2 and \
            isinstance(value.args[0], gast.Name) and value.args[0].id == name

    candidates = {t.id for s in gast.walk(node) if isinstance(s, gast.Assign)
                  for t in s.targets if isinstance(t, gast.Name)
                  and isinstance(s.value, gast.List) and not s.value.elts}
    for sub in gast.walk(node):
        if isinstance(sub, gast.Assign):
            for t in sub.targets:
                if isinstance(t, gast.Name) and t.id in candidates and not (
                        is_append(sub.value, t.id) or isinstance(sub.value, gast.List)
                        and not sub.value.elts or _is_pop(sub.value)):
                    candidates.discard(t.id)
    allowed = _read_whole(node, refs)   # and the Name nodes used as append's list or indexed
    for sub in gast.walk(node):
        if isinstance(sub, gast.Call) and isinstance(sub.func, gast.Name) and \
                helpers.get(sub.func.id) is runtime.append and sub.args and \
                isinstance(sub.args[0], gast.Name):
            allowed.add(id(sub.args[0]))
        if isinstance(sub, gast.Subscript) and isinstance(sub.value, gast.Name):
            allowed.add(id(sub.value))
        if _is_push(sub):
            allowed.add(id(sub.args[0]))
        if isinstance(sub, gast.Assign) and isinstance(sub.value, gast.Name):
            allowed.add(id(sub.value))   # (parts = _list1: a copy)
    for sub in gast.walk(node):
        if isinstance(sub, gast.Name) and sub.id in candidates and \
                isinstance(sub.ctx, gast.Load) and id(sub) not in allowed:
            candidates.discard(sub.id)
    if not candidates:
        return node

    def copy(name):
        return gast.Call(func=gast.Name(id="list", ctx=gast.Load(), annotation=None,
                                        type_comment=None), args=[name], keywords=[])

    class InPlace(gast.NodeTransformer):
        def visit_Assign(self, s):
            t = s.targets[0]
            if isinstance(s.value, gast.Name) and s.value.id in candidates:
                s.value = copy(s.value)   # a list is a value: the other name keeps this one
                return s
            if len(s.targets) == 1 and isinstance(t, gast.Name) and t.id in candidates and \
                    is_append(s.value, t.id):
                new = gast.Expr(value=gast.Call(
                    func=gast.Attribute(value=s.value.args[0], attr="append",
                                        ctx=gast.Load()),
                    args=[s.value.args[1]], keywords=[]))
                new.__dict__.update({k: v for k, v in s.__dict__.items()
                                     if k not in ("targets", "value", "type_comment")})
                return new
            return s

        def visit_Expr(self, s):   # a push keeps the list as it is now: a copy
            if _is_push(s.value) and s.value.args[0].id in candidates:
                s.value.args[0] = copy(s.value.args[0])
            return s
    return InPlace().visit(node)


def _displays_as_tuples(node, refs):
    """``t = [a, b, c]`` as ``t = (a, b, c)`` where ``t`` is bound once and only made an array
    (``np.array(t)``), taped for that array's cotangent (``array_vjp(g, t)``) or given to it:
    a tuple is a value to Numba, a list a heap object (``np.array([...])`` of a state each
    step of a loop: a list made, taped and freed per step).  NumPy reads both alike."""
    stores = {}   # (a pop may bind the pushed name again: the reverse sweep's reading)
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            stores[n.id] = stores.get(n.id, 0) + 1
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                n.targets[0], gast.Name) and _is_pop(n.value):
            stores[n.targets[0].id] = stores.get(n.targets[0].id, 0) - 1
    displays = {s.targets[0].id: s for s in gast.walk(node) if isinstance(s, gast.Assign)
                and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                and isinstance(s.value, gast.List) and s.value.elts
                and not any(isinstance(e, gast.Starred) for e in s.value.elts)
                and stores.get(s.targets[0].id) == 1}
    if not displays:
        return
    read, pushed, popped = set(), {}, {}   # Name nodes read as allowed; tape -> names
    for n in gast.walk(node):
        if isinstance(n, gast.Call):
            fn = untwin(callee_of(n, refs))
            at = 0 if fn in (np.array, np.asarray) else 1 if fn is runtime.array_vjp else None
            if at is not None and len(n.args) > at and isinstance(n.args[at], gast.Name):
                read.add(id(n.args[at]))
            if _is_push(n):
                read.add(id(n.args[0]))
                pushed.setdefault(n.func.value.id, set()).add(n.args[0].id)
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                n.targets[0], gast.Name) and _is_pop(n.value):
            popped.setdefault(n.value.func.value.id, set()).add(n.targets[0].id)
    # a tape holds tuples only if all it holds are such displays, and what it gives back
    # is read as they are: the names pushed on a tape and popped from it stand or fall together
    shown = set(displays)
    groups = [(held, held | popped.get(tape, set())) for tape, held in pushed.items()
              if held & shown]
    names = shown.union(*(group for _, group in groups))
    changed = True
    while changed:
        changed = False
        for held, group in groups:
            if (not held <= shown or not group <= names) and group & names:
                names -= group
                changed = True
        for n in gast.walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and \
                    n.id in names and id(n) not in read:
                names.discard(n.id)
                changed = True
    for name in names & shown:
        s = displays[name]
        s.value = gast.Tuple(elts=s.value.elts, ctx=gast.Load())


def _is_push(node):
    """``tape.append(name)``: a push, as lowering writes it."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
        node.func.attr == "append" and isinstance(node.func.value, gast.Name) and \
        len(node.args) == 1 and isinstance(node.args[0], gast.Name) and not node.keywords


def _is_pop(node):
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
        node.func.attr == "pop" and not node.args and isinstance(node.func.value, gast.Name)


def weaken(node, refs, params=(), scalars=(), int_powers=True):
    """Python numbers in arithmetic, as NumPy types them: weak (float32 * 0.5 is float32),
    where Numba would make float64 of it.  Run after the passes that read constants (tapes).
    ``params``: the parameters passed Python ints, or (a companion's) Python numbers
    (number_params); see _weak_names.  ``scalars``: names surely holding a number, whose
    ``x ** 2`` stays an integer power (multiplies; Numba keeps a float32 number float32): of
    an array, Numba would take the 2 for an int64 array and make float64 of float32, so with
    ``int_powers`` an array's ``x ** 3`` is ``power_int(x, 3)``, which multiplies too (a
    weak 3 would be a float exponent: ``pow`` per element).  Powers LLVM turns into
    arithmetic itself (``x ** 2.0``: ``x * x``) stay weak."""
    local = names_in(node) - set(refs)
    stored = names_in(node, gast.Store) | {a.id for a in gast.walk(node.args)
                                           if isinstance(a, gast.Name)}

    def bind():
        return _bind(refs, runtime.weak, "weak", local)
    numbers = _weak_names(node, refs, params)

    def is_number(c):   # 0.5, or a name only ever bound to a Python number
        return _is_number(c) or isinstance(c, gast.Name) and c.id in numbers

    def callee(call):
        return callee_of(call, refs)

    def weak(c, other):
        return gast.Call(func=gast.Name(id=bind(), ctx=gast.Load(), annotation=None,
                                        type_comment=None), args=[c, other], keywords=[])

    class Weaken(gast.NodeTransformer):
        def visit_Call(self, node):
            """A number among the operands of a ufunc, np.where's values or np.clip's bounds:
            weak against the operand beside it (np.maximum(x32, 0.0) is float32)."""
            self.generic_visit(node)
            fn = callee(node)
            fn = untwin(fn)     # (lowering put twins in)
            if isinstance(fn, np.ufunc) and fn.nin == 2 and len(node.args) >= 2:
                pairs = ((0, 1), (1, 0))
            elif _builtin_extremum(node, refs, stored) and len(node.args) >= 2:
                # max(x32, 0.0): Python returns either; Numba would make both float64
                pairs = tuple((i, j) for i in range(len(node.args))
                              for j in range(len(node.args)) if i != j)
            else:
                pairs = ELEMENTWISE_OPERANDS.get(fn, ()) if _hashable(fn) else ()
            args = list(node.args)
            for at, beside in pairs:
                if max(at, beside) < len(args) and is_number(args[at]) and not is_number(
                        args[beside]) and isinstance(args[beside], gast.Name):
                    node.args[at] = weak(args[at], args[beside])
            return node

        def visit_BinOp(self, node):
            self.generic_visit(node)
            if int_powers and isinstance(node.op, gast.Pow) and _is_number(node.right) and \
                    multiplied_power(node.right.value) and not is_number(node.left) \
                    and isinstance(node.left, gast.Name) and node.left.id not in scalars:
                return gast.Call(func=ir_name(_bind(refs, runtime.power_int, "power_int",
                                                    local)),
                                 args=[node.left, node.right], keywords=[])
            for side, other in (("left", node.right), ("right", node.left)):
                c = getattr(node, side)
                if isinstance(node.op, gast.Pow) and side == "right" and _is_number(c) and \
                        type(c.value) is int and isinstance(other, gast.Name) and \
                        other.id in scalars:
                    continue
                if is_number(c) and not is_number(other) and not isinstance(
                        other, (gast.Constant, gast.List, gast.Tuple)) and not isinstance(
                        node.op, (gast.LShift, gast.RShift, gast.BitAnd, gast.BitOr,
                                  gast.BitXor)):
                    setattr(node, side, gast.Call(func=gast.Name(
                        id=bind(), ctx=gast.Load(), annotation=None, type_comment=None),
                        args=[c, other], keywords=[]))
            return node
    return Weaken().visit(node)


def _builtin_extremum(call, refs, stored):
    """Whether ``call`` is Python's own ``max(...)`` or ``min(...)`` (``stored``: the names
    the function binds, which may hide them)."""
    f = call.func
    return isinstance(f, gast.Name) and f.id in ("max", "min") and f.id not in stored and \
        refs.get(f.id, builtins.max if f.id == "max" else builtins.min) in (max, min)


# (operand, the operand it is weak against) of NumPy's elementwise functions that are not
# ufuncs of two inputs
ELEMENTWISE_OPERANDS = {np.where: ((1, 2), (2, 1)), np.clip: ((1, 0), (2, 0))}


def _hashable(obj):
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def callee_of(call, refs):
    """The function a generated call names (``f(...)`` or ``np.f(...)``), or None."""
    f = call.func
    if isinstance(f, gast.Name):
        return refs.get(f.id)
    if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and \
            refs.get(f.value.id) is np:
        return getattr(np, f.attr, None)
    return None


def _number_names(node):
    """Names stored once, by ``name = <Python number>``: as weak as the number itself."""
    numbers = set()
    for n in gast.walk(node):
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                n.targets[0], gast.Name) and _is_number(n.value):
            numbers.add(n.targets[0].id)
    return numbers & _stored_once(node)


def _stored_once(node):
    """Names stored (a parameter counts) exactly once in ``node``."""
    stores = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            stores[n.id] = stores.get(n.id, 0) + 1
    return {name for name, count in stores.items() if count == 1}


def number_params(caller, callee, refs):
    """The parameters of ``callee`` (a companion: vmap's per-lane code) to which every call in
    ``caller`` passes a Python number or a name that holds one in ``caller`` (``dt = 0.01``
    hoisted out of a lane group, ``n = z.shape[1:][0]``): as weak in the callee as in the
    caller."""
    params = [a.id for a in callee.args.args]
    numbers, found = _number_names(caller) | _weak_names(caller, refs), None
    for n in gast.walk(caller):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                n.func.id == callee.name and not n.keywords:
            these = {p for p, a in zip(params, n.args)
                     if _is_number(a) or isinstance(a, gast.Name) and a.id in numbers}
            found = these if found is None else found & these
    return found or set()


def _weak_names(node, refs, params=()):
    """Names every binding of which is a Python number, which NumPy treats as weak (a float32
    array times one is float32) where Numba types it int64 or float64: a number, ``len()``, an
    item of a shape, ``.size``/``.ndim``, ``int()``/``float()``/``round()``, the counter of
    ``for i in range(...)``, a parameter ``params`` names (passed a Python int), and
    arithmetic of those.  The largest such set: ``i = i + 1`` keeps ``i`` a Python int."""
    local = {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and not isinstance(
        n.ctx, gast.Load)}     # (a builtin is a name only read)
    bindings = {}    # name -> [its bound value, or None where that is not a Python number]

    def bind(target, value):
        for n in gast.walk(target):
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
                bindings.setdefault(n.id, []).append(value if n is target else None)
    for n in gast.walk(node):
        if isinstance(n, gast.Assign):
            for t in n.targets:
                bind(t, n.value if len(n.targets) == 1 else None)
        elif isinstance(n, gast.For):
            bind(n.target, _RANGE if _calls(n.iter, range, refs, local) else None)
        elif isinstance(n, (gast.AugAssign, gast.AnnAssign, gast.NamedExpr)):
            bind(n.target, None)
        elif isinstance(n, (gast.withitem, gast.comprehension)):
            for t in (getattr(n, "optional_vars", None), getattr(n, "target", None)):
                if t is not None:
                    bind(t, None)
        elif isinstance(n, gast.arguments):
            for a in n.args + n.posonlyargs + n.kwonlyargs + [n.vararg, n.kwarg]:
                if a is not None:
                    bind(a, _RANGE if a.id in params else None)
    shapes = set()

    def is_shape(v):   # x.shape, np.shape(x), and a cut of one (vmap's lane shape[1:])
        if isinstance(v, gast.Subscript) and isinstance(v.slice, gast.Slice):
            v = v.value
            return isinstance(v, gast.Name) and v.id in shapes or is_shape(v)
        return isinstance(v, gast.Attribute) and v.attr == "shape" or _calls(
            v, np.shape, refs, local)
    for name, values in bindings.items():   # (in the order bound: a cut follows its shape)
        if len(values) == 1 and values[0] is not None and is_shape(values[0]):
            shapes.add(name)
    weak = {name for name, values in bindings.items() if all(v is not None for v in values)}

    def is_weak(e):
        if e is _RANGE or _is_number(e):
            return True
        if isinstance(e, gast.Name):
            return e.id in weak
        if isinstance(e, gast.BinOp):
            return not isinstance(e.op, gast.MatMult) and is_weak(e.left) and is_weak(e.right)
        if isinstance(e, gast.UnaryOp):
            return not isinstance(e.op, gast.Not) and is_weak(e.operand)
        if isinstance(e, gast.Attribute):
            return e.attr in ("size", "ndim")
        if isinstance(e, gast.Subscript):
            return isinstance(e.value, gast.Name) and e.value.id in shapes and not isinstance(
                e.slice, gast.Slice)
        if isinstance(e, gast.Call) and not e.keywords:
            fn = _callee(e, refs, local)
            if any(fn is f for f in (len, int, float, np.size, np.ndim)) or (
                    fn is round and len(e.args) == 1):
                return True
            return any(fn is f for f in (abs, min, max)) and all(map(is_weak, e.args))
        return False
    changed = True
    while changed:
        changed = False
        for name in sorted(weak):
            if not all(map(is_weak, bindings[name])):
                weak.discard(name)
                changed = True
    return weak


_RANGE = object()   # the binding of a range's counter, or of a parameter given a Python int


def resolver(node, refs):
    """What a call's function expression in lowered ``node`` names (builtins included), as
    transformer/ranks.py takes it."""
    local = {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and not isinstance(
        n.ctx, gast.Load)}     # (a builtin is a name only read)
    return lambda func: _callee(gast.Call(func=func, args=[], keywords=[]), refs, local)


def _callee(call, refs, local):
    """``callee_of``, builtins included (generated code names them without binding them)."""
    fn = callee_of(call, refs)
    f = call.func
    if fn is None and isinstance(f, gast.Name) and f.id not in local:
        fn = getattr(builtins, f.id, None)
    return fn


def _calls(e, fn, refs, local):
    return isinstance(e, gast.Call) and _callee(e, refs, local) is fn


def _bind(refs, obj, base, taken=()):
    """The name ``refs`` binds ``obj`` to, binding it to ``base`` (made free, and not one of
    the function's own names, ``taken``) if none."""
    for n, o in refs.items():
        if o is obj:
            return n
    n = base
    while n in refs or n in taken:
        n += "_"
    refs[n] = obj
    return n


def _is_number(node):
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)


def twins():
    from ..runtime.twins import TWINS
    return TWINS


def untwin(fn):
    """The NumPy function that twin or whole-array stub ``fn`` stands in for, else ``fn``."""
    if not _hashable(fn):
        return fn
    if not _UNTWINNED:
        from ..runtime.sums import NUMPY_OF
        _UNTWINNED.update({twin: f for f, twin in twins().items()})
        _UNTWINNED.update(NUMPY_OF)
    return _UNTWINNED.get(fn, fn)


_UNTWINNED = {}


def one_argument_stubs():
    """NumPy functions called with one argument, and what compiled code calls instead: the
    transcendental ufuncs' stubs (runtime/via_numpy.py), np.sum's and np.mean's of a whole
    array (runtime/sums.py)."""
    if not _ONE_ARGUMENT:
        from ..runtime.sums import WHOLE
        from ..runtime.via_numpy import VIA_NUMPY
        _ONE_ARGUMENT.update(VIA_NUMPY)
        _ONE_ARGUMENT.update(WHOLE)
    return _ONE_ARGUMENT


_ONE_ARGUMENT = {}


def compile_function(function, cache=True, companions=()):
    """``numba.njit`` of a generated function (cached on disk next to its module).

    ``companions``: (name, checked) of functions of the same module it calls (vmap's per-lane
    code); checked ones are compiled inlined into it and with bounds checks, which then runs
    without the GIL (vmap's lane chunks run on threads).  The module keeps the Python
    versions, for the code run as Python."""
    import numba
    from ..numba_ids import install
    install()     # before the helpers compile: their symbols never meet another process's
    from ..runtime import numba as _implementations  # noqa: F401  (the helpers' Numba code)
    from ..runtime.error_model import ERROR_MODEL
    from ..runtime.numba.promotion import promoting
    if companions:
        # NumPy's error model: a lane sees array elements, whose division by zero NumPy
        # makes inf, not an error (and vmap's wide loops compute lanes that are done)
        space = dict(function.__globals__)
        for name, checked in companions:
            # a wide loop indexes only the lanes it was given: unchecked, it vectorizes
            options = dict(boundscheck=True, inline="always") if checked else {}
            space[name] = _sealed(numba.njit(cache=cache, error_model=ERROR_MODEL,
                                             **options)(space[name]))
        seen = types.FunctionType(function.__code__, space, function.__name__,
                                  function.__defaults__, function.__closure__)
        seen.__qualname__, seen.__module__ = function.__qualname__, function.__module__
        return _sealed(promoting(numba.njit(cache=cache, boundscheck=True, nogil=True,
                                            error_model=ERROR_MODEL)(seen)))
    # boundscheck: an index out of range raises IndexError, never reads garbage; NumPy's error
    # model: 1.0 / 0.0 is inf and 0.0 / 0.0 nan, as NumPy computes them, not ZeroDivisionError
    # (an integer's // 0 is 0, and raises the flag NumPy warns by: runtime/numba/fpstatus.py)
    return _sealed(promoting(numba.njit(cache=cache, boundscheck=True,
                                        error_model=ERROR_MODEL)(function)))


def _sealed(dispatcher):
    """The dispatcher, its disk cache's data files sealed with the names of the function and
    file they belong to: Numba's index finds a data file by name and its key hashes only the
    bytecode, so another function's data file put in its place (two functions differing in a
    constant) served that function's code."""
    cache = getattr(dispatcher, "_cache", None)
    files = getattr(cache, "_cache_file", None)
    if files is not None and type(files).__name__ == "IndexDataCacheFile":
        files.__class__ = _sealed_class(type(files))
    return dispatcher


@functools.cache
def _sealed_class(base):
    class Sealed(base):
        def seal(self, name, data):
            tag = f"{self._index_name}\0{name}\0".encode()
            return hashlib.sha256(tag + data).digest()

        def _save_data(self, name, data):
            data = self._dump(data)
            with self._open_for_write(self._data_path(name)) as f:
                f.write(self.seal(name, data) + data)

        def _load_data(self, name):
            with open(self._data_path(name), "rb") as f:
                data = f.read()
            if self.seal(name, data[32:]) != data[:32]:
                raise OSError(f"{name}: not this function's cache file")  # load(): a miss
            return pickle.loads(data[32:])

    return Sealed
