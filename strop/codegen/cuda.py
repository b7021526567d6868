"""CUDA kernels from the code of one lane: ``jit(vmap(f), backend="cuda")`` runs one GPU thread
per lane.

The code strop generates for ``f`` itself (the user's statements for one example) is the
kernel's body: it becomes a device function, and a kernel calls it for lane ``_j`` of the
batch and writes each output number into its array::

    def newton_kernel(a, x0, _out0, _out1, _err):
        _j = cuda.grid(1)
        if _j < _out0.shape[0]:
            _r = newton(a[_j], x0[_j], _err)
            _out0[_j] = _r[0]
            _out1[_j] = _r[1]

A ``while`` on a lane's value runs that lane's own number of trips: no masks.  A kernel cannot
raise, so every integer index into an array is checked (``index_in``, runtime/cuda/helpers.py):
one out of range sets ``_err[0]`` and reads element 0 instead, and the launcher, seeing the
flag, raises IndexError at the user's line (strop/cuda_vmap.py).
"""
import ast
import dataclasses

import gast
import numpy as np

from .. import runtime
from ..runtime.cuda import helpers, ufuncs
from ..transformer import ir
from .cpu import number_params, weaken
from .cuda_arrays import Unsupported, elementwise_operation, local_arrays, loops

ERR = "_err"


@dataclasses.dataclass(frozen=True)
class Lanes:
    """How the kernel reads its arguments and writes its outputs: ``batched[i]`` whether
    parameter i has one value per lane (its leading axis), ``outputs`` the index paths of the
    lane function's outputs in what it returns (``((),)``: it returns one), ``shapes`` each
    output's shape in a lane (``()``: a number), ``samples`` {parameter: a sample of a lane's
    value} where lanes hold arrays (cuda_arrays.py)."""
    batched: tuple
    outputs: tuple
    shapes: tuple = None
    samples: dict = None


def kernel_function(fn, lanes, weak=()):
    """``fn`` (a normalized ir.Function for one lane, as the python backend runs it) with its
    Python numbers weak (as on the CPU: ``0.5 * x`` stays float32), its arrays local to the
    thread (cuda_arrays.py), its indexing checked and a kernel beside it; the kernel is the
    new function's ``node``.  ``weak``: the parameters passed Python ints.  Raises
    cuda_arrays.Unsupported for lane code a kernel cannot run."""
    refs = dict(fn.refs, index_in=helpers.index_in, cuda=helpers.cuda())
    checked = {f.name for f in (fn.node, *fn.companions)}
    # (int_powers: the device has no power_int; a lane's x ** 3 is a number's power anyway)
    weak_fn = dataclasses.replace(fn, node=_dicts_as_tuples(weaken(fn.node, refs, weak,
                                                                int_powers=False)),
                                  refs=refs)
    node, arrays = local_arrays(weak_fn, lanes.samples or {})
    if arrays:
        refs.setdefault("np", np)
    node = _device_ufuncs(node, weak_fn, refs)
    _device_calls(node, dataclasses.replace(fn, refs=refs), checked)
    lane = _checked(node, checked, arrays)
    lane.local_arrays = bool(arrays)    # (compiled inlined: its arrays live in the kernel)
    companions = tuple(_checked(weaken(c, refs, number_params(fn.node, c, refs),
                                         int_powers=False), checked)
                       for c in fn.companions)
    params = [a.id for a in fn.node.args.args]
    outs = [f"_out{i}" for i in range(len(lanes.outputs))]
    shapes = lanes.shapes or ((),) * len(outs)
    lane_args = [ir.subscript(p, ir.name("_j")) if b else ir.name(p)
                 for p, b in zip(params, lanes.batched)] + [ir.name(ERR)]
    result = ir.call(lane.name, lane_args)
    loc = getattr(fn.node, "loc", None)
    if lanes.outputs == ((),) and shapes[0] == ():
        writes = _write(outs[0], result, (), loc)
    else:
        writes = [ir.assign("_r", result, loc)]
        for out, path, shape in zip(outs, lanes.outputs, shapes):
            value = ir.name("_r")
            for i in path:
                value = ir.subscript(value, ir.const(i))
            writes += _write(out, value, shape, loc)
    body = [ir.assign("_j", ir.call(ir.attr("cuda", "grid"), [ir.const(1)]), loc),
            ir.if_(gast.Compare(left=ir.name("_j"), ops=[gast.Lt()], comparators=[
                ir.subscript(ir.attr(outs[0], "shape"), ir.const(0))]), writes, loc=loc)]
    kernel = gast.FunctionDef(
        name=f"{fn.node.name}_kernel", args=_arguments(params + outs + [ERR]), body=body,
        decorator_list=[], returns=None, type_comment=None, type_params=[])
    kernel.loc = loc
    kernel.doc = "One GPU thread per lane: lane _j of the batch, as the user's code runs it."
    return dataclasses.replace(fn, node=kernel, refs=refs, companions=(*companions, lane))


REDUCTIONS = {np.sum: "sum", np.mean: "mean", np.max: "max", np.amax: "max", np.min: "min",
              np.amin: "min", np.prod: "prod"}


def elementwise(fn):
    """``fn`` (normalized, as the python backend runs it) as per-element code, or None where
    it is not such code.  Such code computes each element of its outputs from the same
    element of its array inputs alone: straight-line NumPy ufuncs and operators, no control
    flow, indexing or call of anything else; run per element it is the code run on whole
    arrays (of one shape), so its kernel is the lane kernel with every array a batch of
    elements (one kernel for the whole chain).  A full reduction whose result is only
    returned (``return np.sum(y * y)``) is allowed: per element it is the element, and
    ``reduced`` {output index: "sum", "mean", "max", "min" or "prod"} says which outputs the
    launcher reduces after the kernel.  Returns (the per-element function, reduced)."""
    if fn.companions:
        return None
    body, reduced = [], {}
    for s in fn.node.body:
        if not isinstance(s, (gast.Assign, gast.Return)) or not all(
                isinstance(t, gast.Name) for t in getattr(s, "targets", [])):
            return None
        op = _reduction(s, fn)
        if op is not None:
            reduced[s.targets[0].id] = op
            s = ir.assign(s.targets[0].id, _reduced_operand(s.value), getattr(s, "loc", None))
        elif s.value is not None and not _elementwise(s.value, fn):
            return None
        body.append(s)
    outputs = _returned_names(body)
    if outputs is None or any(n in reduced for s in body if not isinstance(s, gast.Return)
                              and not _packs(s) for n in ir.names_in(s.value, gast.Load)):
        return None       # a reduction read by more than the return
    node = ir.clone(fn.node)
    node.body = body
    return dataclasses.replace(fn, node=node), {
        i: reduced[n] for i, n in enumerate(outputs) if n in reduced}


def _reduction(s, fn):
    value = getattr(s, "value", None)
    if not isinstance(s, gast.Assign) or not isinstance(value, gast.Call) or value.keywords:
        return None
    f = fn.callee(value.func)
    if f in REDUCTIONS and len(value.args) == 1 and isinstance(value.args[0], gast.Name):
        return REDUCTIONS[f]
    if isinstance(f, tuple) and f[1] in ("sum", "mean", "max", "min", "prod") and \
            not value.args and isinstance(value.func.value, gast.Name):
        return f[1]
    return None


def _reduced_operand(call):
    return call.args[0] if call.args else call.func.value


def _returned_names(body):
    """The names the function returns, in the order of the output's leaves (a dict literal:
    by sorted key), or None where that is not names packed in tuples and dicts."""
    if not body or not isinstance(body[-1], gast.Return):
        return None
    packed = {s.targets[0].id: s.value for s in body if isinstance(s, gast.Assign) and
              isinstance(s.value, (gast.Tuple, gast.Dict))}

    def names(e):
        if isinstance(e, gast.Name) and e.id in packed:
            return names(packed[e.id])
        if isinstance(e, gast.Name):
            return [e.id]
        if isinstance(e, gast.Tuple):
            parts = [names(x) for x in e.elts]
        elif isinstance(e, gast.Dict) and all(isinstance(k, gast.Constant) for k in e.keys):
            parts = [names(v) for _, v in sorted(zip([k.value for k in e.keys], e.values),
                                                 key=lambda kv: kv[0])]
        else:
            return None
        return None if any(p is None for p in parts) else [n for p in parts for n in p]
    return names(body[-1].value)


def _packs(s):
    """Whether ``s`` packs values into a tuple or dict (no operation)."""
    return isinstance(s.value, (gast.Tuple, gast.Dict))


def _elementwise(e, fn):
    """Whether ``e`` is made of elementwise operations alone, down to names and constants."""
    if isinstance(e, (gast.Name, gast.Constant)):
        return True
    if isinstance(e, (gast.Tuple, gast.Dict)):
        return all(_elementwise(x, fn) for x in (e.elts if isinstance(e, gast.Tuple)
                                                 else e.values))
    operands = [e.left, e.right] if isinstance(e, gast.BinOp) else \
        [e.operand] if isinstance(e, gast.UnaryOp) else \
        [e.left, *e.comparators] if isinstance(e, gast.Compare) else \
        e.args if isinstance(e, gast.Call) else []
    return elementwise_operation(e, fn) and all(_elementwise(x, fn) for x in operands)


def _write(out, value, shape, loc):
    """``out[_j] = value``; a lane's array is written element by element."""
    idx = [ir.name(f"_i{k}") for k in range(len(shape))]
    target = gast.Subscript(value=ir.name(out), slice=gast.Tuple(
        elts=[ir.name("_j")] + idx, ctx=gast.Load()) if idx else ir.name("_j"),
        ctx=gast.Store())
    if idx:
        value = gast.Subscript(value=value, slice=idx[0] if len(idx) == 1 else gast.Tuple(
            elts=idx, ctx=gast.Load()), ctx=gast.Load())
    return loops(shape, [i.id for i in idx], [ir.assign(target, value, loc)], loc)


def _arguments(names):
    return gast.arguments(args=[ir.name(n, store=False) for n in names], posonlyargs=[],
                          vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def _dicts_as_tuples(node):
    """``node`` with each dict literal it returns (``_retval = {'y': y, 'sq': s}``, as a value
    of what it returns) made a tuple of its values in the order of its sorted keys: the order
    of the output's leaves (tree_flatten's), which a kernel writes.  A dict read otherwise
    stays (and fails to compile: a kernel has no dicts)."""
    assigned = {}
    for sub in gast.walk(node):
        if isinstance(sub, gast.Assign) and len(sub.targets) == 1 and \
                isinstance(sub.targets[0], gast.Name):
            assigned.setdefault(sub.targets[0].id, []).append(sub)
    returned = set(assigned)       # names read only by returns and by what they return
    readers = _readers(node)
    while True:
        kept = {n for n in returned if all(r in returned or r == "return"
                                           for r in readers.get(n, ()))}
        if kept == returned:
            break
        returned = kept
    for name in returned:
        for a in assigned[name]:
            d = a.value
            if isinstance(d, gast.Dict) and all(
                    isinstance(k, gast.Constant) and isinstance(k.value, str) for k in d.keys):
                order = sorted(range(len(d.keys)), key=lambda i: d.keys[i].value)
                a.value = gast.Tuple(elts=[d.values[i] for i in order], ctx=gast.Load())
    return node


def _readers(node):
    """{name: the targets of the statements that read it ("return" for a return)}."""
    out = {}
    for sub in gast.walk(node):
        if isinstance(sub, gast.Return) and sub.value is not None:
            for n in ir.names_in(sub.value, gast.Load):
                out.setdefault(n, set()).add("return")
        elif isinstance(sub, gast.Assign):
            target = sub.targets[0].id if len(sub.targets) == 1 and isinstance(
                sub.targets[0], gast.Name) else None
            for n in ir.names_in(sub.value, gast.Load):
                out.setdefault(n, set()).add(target)
        elif isinstance(sub, gast.stmt) and not isinstance(
                sub, (gast.FunctionDef, gast.Assign, gast.Return)):
            for part in (getattr(sub, f, None) for f in ("test", "iter", "value")):
                for n in ir.names_in(part, gast.Load) if part is not None else ():
                    out.setdefault(n, set()).add(None)
    return out


def _device_ufuncs(node, fn, refs):
    """``node`` with each NumPy ufunc it calls (on numbers, here) called through its device
    stub (runtime/cuda/ufuncs.py), bound in ``refs``."""
    class Stubs(gast.NodeTransformer):
        def visit_Call(self, call):
            self.generic_visit(call)
            stub = ufuncs.STUBS.get(fn.callee(call.func))
            if stub is not None and not call.keywords:
                refs[stub.__name__] = stub
                call.func = ir.name(stub.__name__)
            return call
    return Stubs().visit(node)


_BUILTINS = {abs, min, max, range, int, float, bool, len, round, divmod, pow}


def _device_calls(node, fn, functions):
    """Raises cuda_arrays.Unsupported, naming the statement, where lane code calls what has
    no device implementation (a derivative's tape, a list's methods, a NumPy function left
    after cuda_arrays.py): Numba's simulator would run it as Python, a GPU could not."""
    allowed = set(helpers.NUMBERS) | set(helpers.DEVICE) | set(ufuncs.STUBS.values()) | \
        _BUILTINS
    for s in _statements(node.body):
        for call in (c for c in gast.walk(s) if isinstance(c, gast.Call)):
            if isinstance(call.func, gast.Name) and call.func.id in functions:
                continue
            f = fn.callee(call.func)
            if f in allowed or getattr(f, "__module__", None) == "math" or \
                    isinstance(f, type) and issubclass(f, np.generic) or \
                    _is_cuda(call.func):
                continue
            name = ast.unparse(gast.gast_to_ast(call.func))
            why = "a loop's derivative keeps a tape (a list) of each trip's values" \
                if f is runtime.stack else f"{name}() has no implementation on the device"
            raise Unsupported(why, getattr(s, "loc", None))


def _is_cuda(func):
    while isinstance(func, gast.Attribute):
        func = func.value
    return isinstance(func, gast.Name) and func.id == "cuda"


def _statements(body):
    """The simple statements of ``body``, nested ones included (a compound statement's test
    or iterator counts as its own)."""
    for s in body:
        if isinstance(s, (gast.If, gast.While, gast.For)):
            yield _header(s)
            yield from _statements(s.body)
            yield from _statements(s.orelse)
        else:
            yield s


def _header(s):
    head = gast.Expr(value=getattr(s, "test", None) or s.iter)
    head.loc = getattr(s, "loc", None)
    return head


def _checked(node, functions, arrays=()):
    """A copy of ``node`` taking the error flag ``_err`` last, passing it on to ``functions``
    it calls, and with each integer index of an array (a parameter, a view of one, or one of
    ``arrays``) checked, but for the loop counters cuda_arrays.py makes."""
    node = ir.clone(node)
    node.args.args.append(ir.name(ERR))
    arrays = set(arrays) | {a.id for a in node.args.args[:-1]}
    for sub in gast.walk(node):   # views of parameters are arrays too (row = table[i])
        if isinstance(sub, gast.Assign) and isinstance(sub.value, gast.Subscript) and \
                isinstance(sub.value.value, gast.Name) and sub.value.value.id in arrays:
            arrays |= {t.id for t in sub.targets if isinstance(t, gast.Name)}
    _Check(arrays, functions).visit(node)
    return node


class _Check(gast.NodeTransformer):
    def __init__(self, arrays, functions):
        self.arrays, self.functions = arrays, functions

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id in self.functions:
            node.args.append(ir.name(ERR))
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not (isinstance(node.value, gast.Name) and node.value.id in self.arrays) or \
                getattr(node, "inbounds", False):
            return node
        parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        checked = [p if isinstance(p, gast.Slice) else ir.call("index_in", [
            p, ir.subscript(ir.attr(node.value.id, "shape"), ir.const(axis)), ir.name(ERR)])
            for axis, p in enumerate(parts)]
        node.slice = gast.Tuple(elts=checked, ctx=gast.Load()) if len(checked) > 1 \
            else checked[0]
        return node
