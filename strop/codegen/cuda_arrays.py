"""A lane's arrays in a CUDA kernel: each array the lane makes is a per-thread local array, each
operation on arrays a loop nest over it (a GPU thread cannot allocate).

A lane of ``jit(vmap(rk4))`` over small ODE systems holds small arrays (the state, the
stages); numba-cuda compiles neither NumPy's array expressions nor its constructors in a
kernel.  Their shapes are static (vmap's lanes all have one shape), so each statement making
an array gets a ``cuda.local.array`` of its shape and dtype (one per statement: registers or
the thread's stack) and a loop nest::

    # k2 = -k * (y + 0.5 * h * k1), one operation per statement:
    _t4 = cuda.local.array((3,), np.float32)
    for _i0 in range(3):
        _t4[_i0] = y[_i0] + _t3[_i0]

The shapes and dtypes come from running each statement's operation on sample values of the
operands' kinds (ones of their shapes and dtypes): NumPy's own broadcasting and type rules.
A statement's buffer is reused each time the statement runs, which is correct because no two
names share a buffer: an array assigned to another name is copied, an integer index that
leaves an array (a row) is copied, and an array in a tuple other than the returned one is
refused.  What the rules below do not cover raises ``Unsupported`` (the call then runs on the
CPU, saying why).
"""
import ast
import builtins
import warnings

import gast
import numpy as np

from .. import runtime
from ..runtime import arithmetic
from ..runtime.base import narrow
from ..transformer import ir

_REDUCE = {np.sum: ("+", 0), np.prod: ("*", 1), np.max: ("max", None), np.amax: ("max", None),
           np.min: ("min", None), np.amin: ("min", None), np.mean: ("+", 0)}
_METHODS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean}
_MAKE = {np.zeros: 0, np.ones: 1, np.empty: 0, np.full: None, np.zeros_like: 0,
         np.ones_like: 1, np.empty_like: 0, np.full_like: None}


class Unsupported(Exception):
    """Lane code a kernel cannot run: the reason, and the statement's user location."""

    def __init__(self, reason, loc=None):
        super().__init__(reason)
        self.reason, self.loc = reason, loc


def local_arrays(fn, samples):
    """(``fn``'s lane function, ``fn.node``, with its arrays local; the names of the arrays
    it holds).  ``samples``: {parameter: a sample value} (a number of its type, or ones of a
    lane's shape and dtype).  Code that makes and takes no array is returned as it is."""
    if not any(isinstance(v, np.ndarray) and v.ndim for v in samples.values()) and \
            not _may_make_arrays(fn):
        return fn.node, set()
    if fn.companions:
        raise Unsupported("a lane with arrays calls a nested function")
    if fn.refs.get("np", np) is not np:
        raise Unsupported("the name np is not NumPy in this function")
    rewrite = _Rewrite(fn, dict(samples))
    node = ir.clone(fn.node)
    node.body = rewrite.block(node.body)
    return node, rewrite.arrays


def _may_make_arrays(fn):
    for sub in gast.walk(fn.node):
        if isinstance(sub, gast.Call):
            f = fn.callee(sub.func)
            if f in _MAKE or f in (np.array, np.stack, np.asarray, np.arange, np.linspace):
                return True
    return False


class _Rewrite:
    def __init__(self, fn, env):
        self.fn, self.env = fn, env
        self.scope = {**vars(builtins), "np": np, **fn.refs}
        self.arrays = {n for n, v in env.items() if isinstance(v, np.ndarray)}
        self.lists = {}         # name -> the items of the list literal it holds
        self.packed = set()     # names of tuples holding arrays (only returned)

    # --- statements --------------------------------------------------------------------------
    def block(self, stmts):
        out = []
        for s in stmts:
            out += self.stmt(s)
        return out

    def stmt(self, s):
        loc = getattr(s, "loc", None)
        if isinstance(s, gast.Assign) and isinstance(s.value, gast.List) and \
                isinstance(s.targets[0], gast.Name):
            items = [self.sample(e, loc) for e in s.value.elts]
            if all(not isinstance(v, (list, tuple, np.ndarray)) for v in items):
                self.lists[s.targets[0].id] = s.value.elts   # read by np.array alone
                self.env[s.targets[0].id] = list(items)
                return []
        reads = set(ir.names_in(s, gast.Load))
        lists = set(self.lists)
        if reads & lists and not _reads_list_into_array(s, self.fn, lists):
            raise Unsupported("a list in a lane (other than one np.array reads)", loc)
        if reads & self.packed and not (isinstance(s, gast.Return) or isinstance(
                s, gast.Assign) and _names_only(s.value)):   # (its buffers may change)
            raise Unsupported("a tuple holding arrays read other than to return it", loc)
        if isinstance(s, gast.If):
            self.number(s.test, loc)
            before = dict(self.env)
            body = self.block(s.body)
            after_body, self.env = self.env, dict(before)
            orelse = self.block(s.orelse)
            self.env = self.merged(after_body, self.env, loc)
            return [ir.if_(s.test, body, orelse, loc)]
        if isinstance(s, (gast.While, gast.For)):
            if isinstance(s, gast.While):
                self.number(s.test, loc)
            else:
                self.loop_target(s, loc)
            first = dict(self.env)
            self.block(ir.clone(s.body))           # once, to learn what the trips carry
            self.env = self.merged(first, self.env, loc)
            body = self.block(s.body)
            self.env = self.merged(first, self.env, loc)
            s.body = body
            return [s]
        if isinstance(s, gast.Return):
            self.returns(s.value, loc)
            return [s]
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
            if isinstance(target, gast.Name):
                return self.assign(target.id, s.value, loc)
            if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
                return self.setitem(target, s.value, loc)
            if isinstance(target, gast.Tuple):
                value = self.sample(s.value, loc)
                if any(isinstance(v, np.ndarray) for v in _leaves(value)):
                    raise Unsupported("arrays unpacked from a tuple", loc)
                for t, v in zip(target.elts, value):
                    if isinstance(t, gast.Name):
                        self.env[t.id] = v
                return [s]
        if isinstance(s, gast.Expr) or isinstance(s, gast.Pass):
            self.sample(s.value, loc) if isinstance(s, gast.Expr) else None
            return [s]
        raise Unsupported(f"a {type(s).__name__} statement in a lane with arrays", loc)

    def loop_target(self, s, loc):
        it = s.iter
        if not (isinstance(it, gast.Call) and self.fn.callee(it.func) is range and
                isinstance(s.target, gast.Name)):
            raise Unsupported("a for loop over something other than range()", loc)
        self.env[s.target.id] = 1

    def merged(self, a, b, loc):
        """The kinds after two paths (a name bound on one path alone keeps its kind)."""
        out = {**a, **b}
        for name in set(a) & set(b):
            if _kind(a[name]) != _kind(b[name]):
                if isinstance(a[name], np.ndarray) or isinstance(b[name], np.ndarray):
                    raise Unsupported(f"{name!r} holds arrays of two shapes or dtypes (or an "
                                      f"array and a number) on two paths", loc)
        return out

    def returns(self, value, loc):
        sample = self.sample(value, loc)
        for leaf in _leaves(sample):
            if isinstance(leaf, np.ndarray) and leaf.dtype == object:
                raise Unsupported("a returned array of objects", loc)

    def assign(self, target, value, loc):
        result = self.sample(value, loc)
        if isinstance(result, np.ndarray) and result.ndim == 0:
            result = result[()]     # a 0-d array is a number in a kernel
        if isinstance(result, tuple):
            if any(isinstance(v, np.ndarray) for v in _leaves(result)):
                if _names_only(value):
                    self.env[target] = result    # the returned tuple, packed: read once
                    self.packed.add(target)
                    return [ir.assign(target, value, loc)]
                raise Unsupported("arrays in a tuple", loc)
            self.env[target] = result
            return [ir.assign(target, value, loc)]
        if not isinstance(result, np.ndarray):
            arrays = self.array_operands(value)
            self.env[target] = result
            if not arrays:
                return [ir.assign(target, value, loc)]
            return self.to_number(target, value, result, loc)
        code = self.to_array(target, value, result, loc)
        self.env[target] = result
        self.arrays.add(target)
        return code

    def setitem(self, target, value, loc):
        array = self.env.get(target.value.id)
        if not isinstance(array, np.ndarray) or target.value.id not in self.owned():
            raise Unsupported("an item set in an array the lane did not make", loc)
        axes, rest = self.region(array, target.slice, loc)
        v = self.sample(value, loc)
        if not rest and not isinstance(v, np.ndarray):
            return [gast.Assign(targets=[target], value=value, type_comment=None)]
        if isinstance(v, np.ndarray) and np.broadcast_shapes(v.shape, rest) != rest:
            raise Unsupported(f"a value of shape {v.shape} set into a region of {rest}", loc)
        idx = _indices(len(rest))
        store = gast.Subscript(value=ir.name(target.value.id), slice=_tuple(self.at(axes)),
                               ctx=gast.Store())
        kind = ir.attr("np", array.dtype.name)
        body = [ir.assign(store, ir.call(kind, [self.element(value, rest, loc)]), loc)]
        return loops(rest, idx, body, loc)

    def owned(self):
        params = {a.id for a in self.fn.node.args.args}
        return set(self.env) - params

    # --- expressions ---------------------------------------------------------------------------
    def sample(self, e, loc):
        """The value ``e`` gives for the operands' samples: its kind."""
        if isinstance(e, gast.Subscript):
            base = self.sample(e.value, loc)
            if isinstance(base, np.ndarray):
                _, shape = self.region(base, e.slice, loc)
                return np.ones(shape, base.dtype) if shape else base.dtype.type(1)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                tree = ast.fix_missing_locations(ast.Expression(gast.gast_to_ast(e)))
                return eval(compile(tree, "<lane>", "eval"), self.scope, self.env)
        except Exception as err:
            raise Unsupported(f"{ast.unparse(gast.gast_to_ast(e))} ({err})", loc) from None

    def number(self, e, loc):
        if isinstance(self.sample(e, loc), np.ndarray):
            raise Unsupported("control flow on an array's truth value", loc)

    def region(self, base, index, loc):
        """(per axis of ``base``: the index node of an integer index, or (start, step, n) of
        a slice with constant bounds, or None for an axis the index leaves whole; the shape
        of the region)."""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        if len(parts) > base.ndim:
            raise Unsupported("too many indices for the array", loc)
        axes, shape = [], []
        for p, n in zip(parts, base.shape):
            made = None if isinstance(p, gast.Slice) else self.sample(p, loc)
            if isinstance(p, gast.Slice) or isinstance(made, slice):   # (slice(1, 3) too)
                bounds = [made.start, made.stop, made.step] if made is not None else [
                    None if b is None else self.sample(b, loc) for b in (p.lower, p.upper,
                                                                         p.step)]
                if not all(b is None or isinstance(b, (int, np.integer)) and
                           not isinstance(b, (bool, np.bool_)) for b in bounds):
                    raise Unsupported("a slice whose bounds are not constant integers", loc)
                r = range(n)[slice(*bounds)]
                axes.append((r.start, r.step, len(r)))
                shape.append(len(r))
            else:
                self.int_index(p, loc)
                axes.append(p)
        axes += [None] * (base.ndim - len(parts))
        return axes, tuple(shape) + base.shape[len(parts):]

    def at(self, axes):
        """The index of a region's element _i0, _i1, ... in its base array (region's axes)."""
        out, k = [], 0
        for a in axes:
            if a is None or isinstance(a, tuple):
                i = ir.name(f"_i{k}")
                k += 1
                if isinstance(a, tuple) and (a[0], a[1]) != (0, 1):
                    i = gast.BinOp(left=ir.const(int(a[0])), op=gast.Add(), right=gast.BinOp(
                        left=ir.const(int(a[1])), op=gast.Mult(), right=i))
                out.append(i)
            else:
                out.append(a)
        return out

    def int_index(self, index, loc):
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        for p in parts:
            v = self.sample(p, loc)
            if isinstance(v, (np.ndarray, slice)) or not isinstance(
                    v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
                raise Unsupported("an index other than integers (a slice, an array)", loc)
        return parts

    def array_operands(self, e):
        return [n for n in ir.names_in(e, gast.Load)
                if isinstance(self.env.get(n), np.ndarray)]

    def element(self, e, shape, loc):
        """``e`` (one elementwise operation) for the element at _i0, _i1, ... of a result of
        ``shape``: each array operand indexed as broadcasting reads it."""
        env = self.env

        class Index(gast.NodeTransformer):
            def visit_Name(self, node):
                v = env.get(node.id)
                if not isinstance(v, np.ndarray) or not isinstance(node.ctx, gast.Load):
                    return node
                lead = len(shape) - v.ndim
                return _inbounds(gast.Subscript(value=node, slice=_tuple([
                    ir.const(0) if n == 1 else ir.name(f"_i{lead + k}")
                    for k, n in enumerate(v.shape)]), ctx=gast.Load()))
        return Index().visit(ir.clone(e))

    def to_array(self, target, value, result, loc):
        if result.dtype == object or result.ndim == 0:
            raise Unsupported("a value that is not an array of numbers", loc)
        call = value if isinstance(value, gast.Call) else None
        f = self.fn.callee(call.func) if call is not None else None
        if f is runtime.setitem and len(call.args) == 3:
            return self.functional_setitem(target, call.args, loc)
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult) or \
                f is np.dot or f is np.matmul:
            if target in ir.names_in(value, gast.Load):   # y = A @ y: into a new buffer first
                code = self.to_array(f"{target}_mm", value, result, loc)
                self.env[f"{target}_mm"] = result
                self.arrays.add(f"{target}_mm")
                return code + self.to_array(target, ir.name(f"{target}_mm"), result, loc)
            return [_alloc(target, result, loc)] + self.matmul(target, value, result, loc)
        shape, idx = result.shape, _indices(result.ndim)
        # the statement's buffer, under the target's name unless the operands read the
        # target's value: ``y = y + d`` fills y_new, then y is y_new (element by element,
        # in place, from the second time the statement runs: each element reads its own)
        buffer = f"{target}_new" if target in ir.names_in(value, gast.Load) else target
        store = _inbounds(gast.Subscript(value=ir.name(buffer), slice=_tuple(
            [ir.name(i) for i in idx]), ctx=gast.Store()))
        if isinstance(value, gast.Name):                      # an alias: a copy
            element = self.element(value, shape, loc)
        elif f in _MAKE:
            fill = _MAKE[f]
            if fill is None:
                fill_node = call.args[1] if len(call.args) > 1 else None
                if fill_node is None or isinstance(self.sample(fill_node, loc), np.ndarray):
                    raise Unsupported("np.full of an array fill value", loc)
                element = fill_node
            else:
                element = ir.const(fill)
        elif (f is narrow or f in (np.copy, np.asarray, np.array)) and len(call.args) == 1 \
                and isinstance(call.args[0], gast.Name) and call.args[0].id in self.lists:
            items = self.lists[call.args[0].id]     # np.array(xs), xs = [a, b]: as stacked
            return _filled(target, buffer, result, self.stacked(buffer, items, result, loc), loc)
        elif (f is narrow or f in (np.copy, np.asarray, np.array)) and len(call.args) == 1 \
                and isinstance(self.env.get(getattr(call.args[0], "id", None)), np.ndarray):
            element = self.element(call.args[0], shape, loc)
        elif isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
                value.func.attr in ("copy", "astype") and f == ("method", value.func.attr):
            element = self.element(value.func.value, shape, loc)
        elif f in (np.stack, np.array, np.asarray) and call.args and isinstance(
                call.args[0], (gast.List, gast.Tuple)) and len(call.args) == 1 and \
                not call.keywords:
            return _filled(target, buffer, result,
                           self.stacked(buffer, call.args[0].elts, result, loc), loc)
        elif f in _REDUCE:                                     # along an axis
            return _filled(target, buffer, result, self.reduce_axis(buffer, call, result, loc),
                           loc)
        elif isinstance(value, gast.Attribute) and value.attr == "T" or f is np.transpose \
                and len(call.args) == 1:
            source = value.value if isinstance(value, gast.Attribute) else call.args[0]
            if not isinstance(source, gast.Name):
                raise Unsupported("a transpose of something other than a named array", loc)
            element = _inbounds(gast.Subscript(value=source, slice=_tuple(
                [ir.name(i) for i in reversed(idx)]), ctx=gast.Load()))
        elif (f is np.reshape or f == ("method", "reshape")) and result.size <= 64:
            source = call.args[0] if f is np.reshape else call.func.value
            return _filled(target, buffer, result, self.reshaped(buffer, source, result, loc),
                           loc)
        elif isinstance(value, gast.Subscript) and isinstance(
                self.sample(value.value, loc), np.ndarray):     # a region: a copy of it
            axes, _ = self.region(self.sample(value.value, loc), value.slice, loc)
            element = gast.Subscript(value=value.value, slice=_tuple(self.at(axes)),
                                     ctx=gast.Load())
        elif elementwise_operation(value, self.fn):
            element = self.element(value, shape, loc)
        else:
            raise Unsupported(f"{ast.unparse(gast.gast_to_ast(value))} makes an array the "
                              f"kernel has no loop for", loc)
        cast = ir.call(ir.attr("np", result.dtype.name), [element])
        return _filled(target, buffer, result,
                       loops(shape, idx, [ir.assign(store, cast, loc)], loc), loc)

    def stacked(self, buffer, items, result, loc):
        """``np.stack([a, b])`` / ``np.array([x, y])``: item k into ``buffer[k]``."""
        code = []
        kind = ir.attr("np", result.dtype.name)
        for k, item in enumerate(items):
            v = self.sample(item, loc)
            rest = result.shape[1:]
            idx = _indices(len(rest))
            if isinstance(v, np.ndarray) and v.ndim and not isinstance(item, gast.Name):
                raise Unsupported("a stacked array that is not named", loc)
            value = _inbounds(gast.Subscript(value=item, slice=_tuple(
                [ir.name(i) for i in idx]), ctx=gast.Load())) if rest else item
            store = _inbounds(gast.Subscript(value=ir.name(buffer), slice=_tuple(
                [ir.const(k)] + [ir.name(i) for i in idx]), ctx=gast.Store()))
            code += loops(rest, idx, [ir.assign(store, ir.call(kind, [value]), loc)], loc)
        return code

    def reshaped(self, buffer, source, result, loc):
        """``np.reshape(x, shape)`` of a small array: element by element, in C order."""
        array = self.sample(source, loc)
        if not isinstance(source, gast.Name) or not isinstance(array, np.ndarray):
            raise Unsupported("a reshape of something other than a named array", loc)
        kind = ir.attr("np", result.dtype.name)
        code = []
        for flat, to in enumerate(np.ndindex(*result.shape)):
            at = np.unravel_index(flat, array.shape)
            store = _inbounds(gast.Subscript(value=ir.name(buffer), slice=_tuple(
                [ir.const(int(i)) for i in to]), ctx=gast.Store()))
            item = _inbounds(gast.Subscript(value=ir.name(source.id), slice=_tuple(
                [ir.const(int(i)) for i in at]), ctx=gast.Load()))
            code.append(ir.assign(store, ir.call(kind, [item]), loc))
        return code

    def reduce_axis(self, buffer, call, result, loc):
        """``np.sum(x, axis=k)`` (and prod, max, min, mean): a loop along the axis for each
        element of the result."""
        f = self.fn.callee(call.func)
        axis = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "axis"), None)
        if axis is None or len(call.args) > 2 or any(k.arg != "axis" for k in call.keywords):
            raise Unsupported("a reduction with arguments other than an axis", loc)
        operand, ax = call.args[0], self.sample(axis, loc)
        array = self.sample(operand, loc)
        if not isinstance(operand, gast.Name) or not isinstance(array, np.ndarray) or \
                not isinstance(ax, (int, np.integer)) or array.shape[int(ax)] == 0:
            raise Unsupported("a reduction along an axis of other than a named array", loc)
        ax = int(ax) % array.ndim
        op, init = _REDUCE[f]
        kind = ir.attr("np", result.dtype.name)
        idx = _indices(result.ndim)
        at = [ir.name(i) for i in idx]
        item = _inbounds(gast.Subscript(value=ir.name(operand.id), slice=_tuple(
            at[:ax] + [ir.name("_k")] + at[ax:]), ctx=gast.Load()))
        first = _inbounds(gast.Subscript(value=ir.name(operand.id), slice=_tuple(
            at[:ax] + [ir.const(0)] + at[ax:]), ctx=gast.Load()))
        acc = ir.name("_acc")
        step = ir.call(op, [acc, item]) if op in ("max", "min") else gast.BinOp(
            left=acc, op=gast.Add() if op == "+" else gast.Mult(), right=item)
        total = gast.BinOp(left=acc, op=gast.Div(), right=ir.const(array.shape[ax])) \
            if f is np.mean else acc
        store = _inbounds(gast.Subscript(value=ir.name(buffer), slice=_tuple(at),
                                         ctx=gast.Store()))
        body = [ir.assign("_acc", ir.call(kind, [ir.const(init) if init is not None
                                                 else first]), loc),
                _for("_k", array.shape[ax], [ir.assign("_acc", ir.call(kind, [step]), loc)],
                     loc),
                ir.assign(store, ir.call(kind, [total]), loc)]
        return loops(result.shape, idx, body, loc)

    def functional_setitem(self, target, args, loc):
        """``x = setitem(x, idx, v)`` (``x[idx] = v`` on an array the lane made): in place;
        into another name, a copy first."""
        x, index, v = args
        if not isinstance(x, gast.Name) or x.id not in self.owned():
            raise Unsupported("an item set in an array the lane did not make", loc)
        code = [] if target == x.id else self.to_array(target, x, self.env[x.id], loc)
        self.env[target] = self.env[x.id]
        store = gast.Subscript(value=ir.name(target), slice=index, ctx=gast.Store())
        return code + self.setitem(store, v, loc)

    def to_number(self, target, value, result, loc):
        """A number computed from arrays: a reduction, a dot product, an element."""
        if isinstance(value, gast.Subscript) and isinstance(
                self.sample(value.value, loc), np.ndarray):
            self.region(self.sample(value.value, loc), value.slice, loc)
            return [ir.assign(target, value, loc)]
        call = value if isinstance(value, gast.Call) else None
        f = self.fn.callee(call.func) if call is not None else None
        if isinstance(f, tuple) and f[1] in _METHODS and not call.args:
            operand, f = call.func.value, _METHODS[f[1]]
        elif f in _REDUCE and len(call.args) == 1 and not call.keywords:
            operand = call.args[0]
        elif isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult) or \
                f in (np.dot, np.matmul):
            return self.matmul(target, value, result, loc)
        else:
            raise Unsupported(f"{ast.unparse(gast.gast_to_ast(value))}: a number from arrays "
                              f"the kernel has no loop for", loc)
        array = self.sample(operand, loc)
        if not isinstance(operand, gast.Name) or not isinstance(array, np.ndarray) or \
                array.size == 0:
            raise Unsupported("a reduction of something other than a named array", loc)
        op, init = _REDUCE[f]
        kind = ir.attr("np", np.asarray(result).dtype.name)
        idx = _indices(array.ndim)
        item = _inbounds(gast.Subscript(value=ir.name(operand.id), slice=_tuple(
            [ir.name(i) for i in idx]), ctx=gast.Load()))
        first = _inbounds(gast.Subscript(value=ir.name(operand.id), slice=_tuple(
            [ir.const(0)] * array.ndim), ctx=gast.Load()))
        start = ir.call(kind, [ir.const(init) if init is not None else first])
        acc = ir.name(target)
        if op in ("max", "min"):
            step = ir.call(op, [acc, item])
        else:
            step = gast.BinOp(left=acc, op=gast.Add() if op == "+" else gast.Mult(),
                              right=item)
        code = [ir.assign(target, start, loc)] + loops(
            array.shape, idx, [ir.assign(target, ir.call(kind, [step]), loc)], loc)
        if f is np.mean:
            code.append(ir.assign(target, ir.call(kind, [gast.BinOp(
                left=acc, op=gast.Div(), right=ir.const(array.size))]), loc))
        return code

    def matmul(self, target, value, result, loc):
        a_node, b_node = (value.left, value.right) if isinstance(value, gast.BinOp) else \
            value.args[:2]
        a, b = self.sample(a_node, loc), self.sample(b_node, loc)
        if not (isinstance(a_node, gast.Name) and isinstance(b_node, gast.Name) and
                isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and
                a.ndim in (1, 2) and b.ndim in (1, 2)):
            raise Unsupported("a matrix product of other than named vectors and matrices", loc)
        kind = ir.attr("np", np.asarray(result).dtype.name)
        n = a.shape[-1]
        rows = [ir.name("_i0")] if a.ndim == 2 else []
        cols = [ir.name(f"_i{len(rows)}")] if b.ndim == 2 else []
        k = ir.name("_k")
        left = _inbounds(gast.Subscript(value=ir.name(a_node.id), slice=_tuple(rows + [k]),
                                        ctx=gast.Load()))
        right = _inbounds(gast.Subscript(value=ir.name(b_node.id), slice=_tuple([k] + cols),
                                         ctx=gast.Load()))
        acc = "_acc"
        inner = [ir.assign(acc, ir.call(kind, [ir.const(0)]), loc),
                 _for("_k", n, [ir.assign(acc, ir.call(kind, [gast.BinOp(
                     left=ir.name(acc), op=gast.Add(), right=gast.BinOp(
                         left=left, op=gast.Mult(), right=right))]), loc)], loc)]
        if not rows and not cols:
            return inner + [ir.assign(target, ir.name(acc), loc)]
        if target in (a_node.id, b_node.id):
            raise Unsupported("a matrix product assigned to one of its factors", loc)
        store = _inbounds(gast.Subscript(value=ir.name(target), slice=_tuple(rows + cols),
                                         ctx=gast.Store()))
        shape = ([a.shape[0]] if rows else []) + ([b.shape[1]] if cols else [])
        idx = [f"_i{i}" for i in range(len(shape))]
        return loops(shape, idx, inner + [ir.assign(store, ir.name(acc), loc)], loc)


def _names_only(e):
    """Whether ``e`` is a name or a tuple (of tuples) of names: a packing, no operation."""
    return isinstance(e, gast.Name) or isinstance(e, gast.Tuple) and all(
        _names_only(x) for x in e.elts)


def _reads_list_into_array(s, fn, lists):
    """Whether ``s`` is ``x = np.array(xs)`` (or stack, asarray) of a list literal's name."""
    value = getattr(s, "value", None)
    return isinstance(s, gast.Assign) and isinstance(value, gast.Call) and \
        fn.callee(value.func) in (np.array, np.asarray, np.stack) and len(value.args) == 1 \
        and isinstance(value.args[0], gast.Name) and value.args[0].id in lists


def elementwise_operation(e, fn):
    """Whether ``e`` (its top level) is one NumPy operation applied element by element: an
    operator other than ``@``, one comparison, a ufunc of one output, ``np.where`` of three
    operands, ``weak``."""
    if isinstance(e, gast.BinOp):
        return not isinstance(e.op, gast.MatMult)
    if isinstance(e, gast.UnaryOp):      # (not x of an array raises in NumPy)
        return not isinstance(e.op, gast.Not)
    if isinstance(e, gast.Compare):      # (a < b < c of arrays raises in NumPy)
        return len(e.ops) == 1
    if isinstance(e, gast.Call) and not e.keywords:
        f = fn.callee(e.func)
        return isinstance(f, np.ufunc) and f.nout == 1 or f is arithmetic.weak or \
            f is np.where and len(e.args) == 3
    return False


def _filled(target, buffer, sample, code, loc):
    """``buffer`` allocated for ``sample``, filled by ``code``, and bound to ``target``."""
    rebind = [ir.assign(target, ir.name(buffer), loc)] if buffer != target else []
    return [_alloc(buffer, sample, loc)] + code + rebind


def _alloc(name, sample, loc):
    return ir.assign(name, ir.call(ir.attr(ir.attr("cuda", "local"), "array"), [
        ir.const(tuple(int(n) for n in sample.shape)), ir.attr("np", sample.dtype.name)]), loc)


def _inbounds(subscript):
    """A subscript whose indices are loop counters over the array's own shape: no check."""
    subscript.inbounds = True
    return subscript


def _kind(v):
    if isinstance(v, np.ndarray):
        return ("array", v.shape, v.dtype)
    if isinstance(v, tuple):
        return tuple(_kind(x) for x in v)
    return "number"


def _leaves(v):
    if isinstance(v, (tuple, list)):
        return [x for item in v for x in _leaves(item)]
    return [v]


def _indices(n):
    return [f"_i{k}" for k in range(n)]


def _tuple(parts):
    return parts[0] if len(parts) == 1 else gast.Tuple(elts=list(parts), ctx=gast.Load())


def _for(index, n, body, loc):
    return ir.stmt(gast.For(target=ir.name(index, store=True), iter=ir.call("range", [
        ir.const(int(n))]), body=body, orelse=[], type_comment=None), loc)


def loops(shape, idx, body, loc):
    """``body`` in loops over ``shape``, the counters named ``idx`` (outermost first)."""
    for i, n in reversed(list(zip(idx, shape))):
        body = [_for(i, n, body, loc)]
    return body
