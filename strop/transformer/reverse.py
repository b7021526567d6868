"""Reverse mode: a forward sweep that keeps what the adjoint needs, then the adjoint sweep.

For each assignment ``y = op(x1, x2)`` with an active output, the adjoint sweep adds the
rule's templates to the operands' adjoints (``bx1``, ``bx2``) in reverse order.  Control flow
is replayed: an ``if`` takes the branch its test took; a loop runs backwards over the same
iterations (a ``while`` counts its iterations).  A variable the adjoint sweep reads is put
back to the value it had at each statement by tapes (``push`` before an overwrite, ``pop``
after the statement's adjoint) — only where a value is overwritten and later needed.

Adjoints start "unset": the first contribution assigns (``bx = ...``), later ones add, and a
statement whose output adjoint is unset contributes nothing.  Where paths merge (branches,
loop iterations) unset adjoints are set to zeros so that every path agrees.
"""

import gast
import numpy as np

from .. import runtime
from ..errors import TransformError
from . import versions
from . import analysis, ir, ranks, recompute, shapes
from .adjoints import Adjoints, _overwritten, stmt_expr
from .chunks import Context, annotate_live, flatten, mark_dead
from .operations import (BINOPS, SEQUENCE_RESULTS, UNARYOPS, _as_node, _rename, _walk_stmts,
                         tape_op)
from .rules import lookup

NUMPY_RESULT = (gast.BinOp, gast.UnaryOp)
SCALAR_BUILTINS = analysis.SCALAR_CALLS
# NumPy functions among SEQUENCE_RESULTS that take lists and tuples but return an array: the
# name they bind holds an array, its adjoint added with + (add() kept the 2x2 matrix of
# np.array([[1.0, 1.0], [0.0, a]]) out of in-place sums)
ARRAYS_OF_SEQUENCES = (np.array, np.asarray)


class Reverse(Adjoints):
    """One function differentiated: names, preparation, activity, tapes and the whole
    function are here; the adjoint statements are a mixin (adjoints.py)."""

    def __init__(self, fn, wrt, mode, has_aux):
        self.fn = fn
        # a name rebound at the top level (h = relu(h), h = h.reshape(...)), or in one trip of
        # a loop, gets a name per binding: each value is kept, not taped and popped (as Numba
        # needs: a tape holds values of one rank)
        self.node, _ = versions.split(fn.node, ir.names_in(fn.node) | set(fn.refs), loops=True)
        self.refs = dict(fn.refs)
        self.wrt, self.mode, self.has_aux = wrt, mode, has_aux
        self.namer = ir.Namer(ir.names_in(self.node) | set(self.refs))
        self.adjoint, self.primal = {}, {}
        self.tapes, self.placeholders = {}, set()
        self.containers = set()
        self.pure = set()         # adjoints and temporaries: dead assignments to them go
        self.tape_adjoints = set()

    # --- names -----------------------------------------------------------------------------
    def adj(self, v):
        if v not in self.adjoint:
            self.adjoint[v] = self.namer.fresh("b" + v.lstrip("_") if not v.startswith("_t")
                                               else "_b" + v.lstrip("_"))
            self.primal[self.adjoint[v]] = v
            self.pure.add(self.adjoint[v])
        return self.adjoint[v]

    def temp(self, base):
        n = self.namer.temp(base)
        self.pure.add(n)
        return n

    def ref(self, base, obj):
        return ir.bind_ref(self.refs, self.namer, obj, base)

    def helper(self, n):
        return ir.name(self.ref(n, getattr(runtime, n)))

    def loc_of(self, s):
        return getattr(s, "loc", None)

    # --- preparation -----------------------------------------------------------------------
    def prepare(self, stmts):
        """Count while-loop iterations; copy an if's test when its body reassigns it."""
        out = []
        for s in stmts:
            if isinstance(s, gast.If):
                s.body, s.orelse = self.prepare(s.body), self.prepare(s.orelse)
                if isinstance(s.test, gast.Name) and s.test.id in analysis.block_writes(
                        s.body + s.orelse):
                    cond = self.namer.temp("_cond")
                    out.append(ir.assign(cond, s.test, s.loc))
                    s.test = ir.name(cond)
            elif isinstance(s, gast.While):
                s.body = self.prepare(s.body)
                s.counter = self.namer.fresh("_iterations")
                out.append(ir.assign(s.counter, ir.const(0), s.loc))
                s.body.append(ir.assign(s.counter, gast.BinOp(
                    left=ir.name(s.counter), op=gast.Add(), right=ir.const(1)), s.loc))
            elif isinstance(s, gast.For):
                s.body = self.prepare(s.body)
                changed = analysis.block_writes(s.body)
                for i, a in enumerate(s.iter.args):   # the backward loop needs the same range
                    if isinstance(a, gast.Name) and a.id in changed:
                        copy_ = self.namer.temp("_range")
                        out.append(ir.assign(copy_, a, s.loc))
                        s.iter.args[i] = ir.name(copy_)
            out.append(s)
        return out

    # --- activity --------------------------------------------------------------------------
    def find_active(self, stmts, params):
        active = set(params)
        assigns = [n for n in _walk_stmts(stmts) if isinstance(n, gast.Assign)]
        pushes = [n.value.args for n in _walk_stmts(stmts) if tape_op(self.fn, n) == "push"]
        self.popped = {n.value.args[0].id for n in _walk_stmts(stmts)
                       if tape_op(self.fn, n) == "pop"}
        changed = True
        while changed:
            changed = False
            for s in assigns:
                t = s.targets[0].id
                if t not in active and self.value_active(s.value, active):
                    active.add(t)
                    changed = True
            for tape, value in pushes:   # a tape holding active values is active
                if tape.id not in active and isinstance(value, gast.Name) and value.id in active:
                    active.add(tape.id)
                    changed = True
        self.containers = self.find_containers(assigns, params)
        params = [a.id for a in self.node.args.args]
        self.scalars = self.find_scalars(stmts, params)
        self.shapes = shapes.known(stmts, {p: k for p, k in self.kinds.items() if p in params},
                                   self.dtypes, self.fn.callee, self.dims)
        return active

    def find_scalars(self, stmts, params):
        return ranks.scalar_names(stmts, {p: r for p, r in self.param_ranks.items()
                                          if p in params}, self.fn.callee)

    def unbroadcast_simplify(self, expr, s):
        """``unbroadcast(e, x)`` in the cotangent of an operand ``x`` of ``y = value`` is
        ``e`` where there is no shape to undo and no dtype to cast to: ``y`` and ``x`` both
        numbers, ``value`` elementwise and ``x`` surely of y's shape and dtype, or a product
        of vectors and matrices and ``x`` of y's dtype (shapes.py).  Nor is there a tape to
        keep ``x`` for its shape."""
        y = s.targets[0].id
        if y in self.scalars:
            def plain(x):
                return x in self.scalars
        elif y in self.shapes and shapes.elementwise(s.value, self.fn.callee):
            def plain(x):
                return shapes.same(self.shapes, x, y)
        elif shapes.matrix_product(s.value, self.shapes):
            def plain(x):
                return shapes.same_dtype(self.shapes, x, y)
        else:
            return expr
        helper = runtime.unbroadcast

        class Simplify(gast.NodeTransformer):
            def visit_Call(inner, node):   # noqa: N805
                inner.generic_visit(node)
                if (self.fn_callee_is(node.func, helper) and len(node.args) == 2
                        and isinstance(node.args[1], gast.Name) and plain(node.args[1].id)):
                    return node.args[0]
                return node
        return Simplify().visit(expr)

    def fn_callee_is(self, func, obj):
        return isinstance(func, gast.Name) and self.refs.get(func.id) is obj

    def find_containers(self, assigns, params):
        """Names that may hold a list, tuple or dict: their adjoints accumulate with add()."""
        out = set(params) - self.leaves
        changed = True
        while changed:
            changed = False
            for s in assigns:
                t, v = s.targets[0].id, s.value
                if t in out:
                    continue
                if isinstance(v, gast.Name):
                    maybe = v.id in out
                elif isinstance(v, gast.Subscript):
                    maybe = isinstance(v.value, gast.Name) and v.value.id in out
                elif isinstance(v, gast.Call) and self.fn.callee(v.func) in (
                        runtime.setitem, runtime.at_set, runtime.at_add):
                    maybe = isinstance(v.args[0], gast.Name) and v.args[0].id in out
                else:
                    maybe = not (isinstance(v, (gast.Constant, gast.Attribute) + NUMPY_RESULT)
                                 or self.numpy_call(v) or isinstance(v, gast.Call) and
                                 self.fn.callee(v.func) in SCALAR_BUILTINS)
                if maybe:
                    out.add(t)
                    changed = True
        return out

    def numpy_call(self, value):
        """Whether ``value`` calls NumPy for an array (never a list or tuple)."""
        if not isinstance(value, gast.Call):
            return False
        obj = self.fn.callee(value.func)
        return isinstance(obj, np.ufunc) or (getattr(obj, "__module__", "") or "").startswith(
            "numpy") and (obj not in SEQUENCE_RESULTS or obj in ARRAYS_OF_SEQUENCES)

    def value_active(self, value, active):
        names = ir.names_in(value) & active
        if not names:
            return False
        if isinstance(value, gast.Call) and self.fn.callee(value.func) is runtime.pop:
            return True
        if isinstance(value, gast.Compare) or isinstance(value, gast.JoinedStr):
            return False
        if isinstance(value, gast.UnaryOp):
            return type(value.op) in UNARYOPS
        if isinstance(value, gast.BinOp):
            return lookup(BINOPS[type(value.op)]).differentiable
        if isinstance(value, gast.Attribute):
            rule = lookup(("attr", value.attr))
            return rule is None or rule.differentiable
        if isinstance(value, gast.Call):
            rule = lookup(self.fn.callee(value.func))
            return rule is None or rule.differentiable
        return True


    # --- tapes -----------------------------------------------------------------------------
    def tape(self, v):
        if v not in self.tapes:
            self.tapes[v] = self.namer.fresh(f"_tape_{v.lstrip('_')}")
        return self.tapes[v]

    def push(self, v, loc):
        return stmt_expr(ir.call(self.helper("push"), [ir.name(self.tape(v)), ir.name(v)]), loc)

    def pop(self, v, loc):
        return ir.assign(v, ir.call(self.helper("pop"), [ir.name(self.tape(v))]), loc)

    def save_block(self, stmts, ctx, pd, dd):
        """Tape pushes into ``ctx``'s forward code, pops into its adjoint code, for each value
        a statement overwrites that the adjoint code reads after that statement's adjoint
        (``live_end`` of its chunk).  ``pd``/``dd``: names possibly/surely defined here."""
        i = 0
        while i < len(stmts):
            s = stmts[i]
            overwritten = _overwritten(s)
            if isinstance(s, gast.If):
                pd1, dd1 = self.save_block(s.body, ctx, set(pd), set(dd))
                pd2, dd2 = self.save_block(s.orelse, ctx, set(pd), set(dd))
                pd, dd = pd1 | pd2, dd1 & dd2
                i += 1
                continue
            elif isinstance(s, (gast.For, gast.While)):
                child = ctx.children[id(s)]
                self.save_loop(s, child, dd)
            elif not isinstance(s, gast.Assign):
                i += 1
                continue
            chunk = ctx.chunks[id(s)]
            live = chunk.restore.live_end if chunk.inline_restore else chunk.live_end
            pushes = []
            for v in sorted(overwritten & live & pd):
                if v not in dd:
                    self.placeholders.add(v)
                pushes.append(self.push(v, s.loc))
                chunk.restore.append(self.pop(v, s.loc))
            stmts[i:i] = pushes
            i += len(pushes) + 1
            pd |= analysis.writes(s)
            if isinstance(s, gast.Assign):
                dd |= overwritten
        return pd, dd

    def save_loop(self, loop, ctx, dd_before):
        """In a loop, values carried between iterations are taped at each overwrite; values an
        iteration makes afresh are taped once, at its end, and restored when the backward
        iteration starts (or made again there: recompute.py)."""
        carried = analysis.carried(loop)
        _, dd_end = self.save_block(ctx.stmts, ctx, set(carried), set(dd_before))
        written = analysis.block_writes(loop.body)
        local = (written - carried) & ctx.start.live_end
        if isinstance(loop, gast.For):   # the backward loop sets it, unless the body changed it
            local.discard(loop.target.id)
            if loop.target.id in written & ctx.start.live_end:
                local.add(loop.target.id)
        for v in sorted(local):
            again = (recompute.chain if v in self.scalars else recompute.view)(
                loop, v, self.scalars, self.fixed, self.fn.callee)
            if again is not None:   # made again in the backward iteration, not taped
                have = {gast.dump(s) for s in ctx.start}
                ctx.start.extend(s for s in again if gast.dump(s) not in have)
                continue
            if v not in dd_end:
                self.placeholders.add(v)
            loop.body.append(self.push(v, loop.loc))
            ctx.start.append(self.pop(v, loop.loc))

    # --- the whole function ----------------------------------------------------------------
    def run(self):
        node = self.node
        params = [a.id for a in node.args.args]
        groups = self.fn.groups or tuple((False, (p,)) for p in params)
        wrt_groups = [groups[i] for i in self.wrt]
        wrt = [p for _, names in wrt_groups for p in names]
        body = self.prepare(list(node.body))
        self.mark_defined(body, set(params) | set(self.fn.free))
        ret = body.pop()
        if not isinstance(ret, gast.Return):
            raise TransformError("the function must return a value to be differentiated",
                                 self.fn.node.loc)
        out, aux = self.outputs(ret, body)
        self.active = self.find_active(body, wrt)
        g = self.namer.fresh("g")
        seed_name = self.adj(out)
        if self.mode == "vjp":
            seed = ir.name(g)
        else:
            seed = ir.call(self.helper("seed_grad"), [ir.name(out)])
        top = Context(body)
        reverse, init = self.rev_stmts(body, top, {seed_name} if out in self.active else set())
        top.reverse = reverse
        returned = {self.adjoint[p] for p in wrt if self.adjoint.get(p) in init}
        mark_dead(flatten(reverse), returned, self.pure)
        annotate_live(reverse, set(returned))
        defined = set(params) | set(self.fn.free)
        self.fixed = recompute.bound_once(params + list(self.fn.free), body)
        self.save_block(top.stmts, top, set(defined), set(defined))
        grad_of = {p: ir.name(self.adjoint[p]) if self.adjoint.get(p) in init else
                   ir.call(self.helper("zeros_like"), [ir.name(p)]) for p in wrt}
        grads = [gast.Tuple(elts=[grad_of[p] for p in names], ctx=gast.Load()) if tree
                 else grad_of[names[0]] for tree, names in wrt_groups]
        results = self.results(out, aux, grads)
        kept = {}
        returned_values = ([out] if self.mode != "grad" else []) + ([aux] if aux else [])
        for v in returned_values:   # values the adjoint sweep may rewind
            if v in self.tapes:
                kept[v] = self.namer.fresh(f"{v.lstrip('_')}_value")
        body_out = [ir.assign(v, ir.const(None), ret.loc) for v in sorted(self.placeholders)]
        body_out += [ir.assign(t, ir.call(self.helper("stack")), ret.loc)
                     for t in sorted(self.tapes.values())]
        self.run_fwd(body)
        body_out += body
        body_out += [ir.assign(k, ir.name(v), ret.loc) for v, k in kept.items()]
        if out in self.active:
            body_out.append(ir.assign(seed_name, seed, ret.loc))
        elif self.mode != "vjp":
            body_out.append(stmt_expr(ir.call(self.helper("seed_grad"), [ir.name(out)]),
                                      ret.loc))
        body_out += [ir.assign(b, ir.call(self.helper("stack")), ret.loc)
                     for b in sorted(self.tape_adjoints)]
        mark_dead(flatten(reverse), returned, self.pure)
        numbers = {b for v, b in self.adjoint.items() if v in self.scalars}
        body_out += _sums_regrouped(flatten(reverse, live_only=True), numbers)
        results = _rename(results, kept)
        ret_node = gast.Return(value=results)
        ret_node.loc = ret.loc
        body_out.append(ret_node)
        args = ir.clone(node.args)
        if self.mode == "vjp":   # after the leaves, before the free variables (passed last)
            args.args.insert(len(args.args) - len(self.fn.free), gast.Name(
                id=g, ctx=gast.Param(), annotation=None, type_comment=None))
        suffix = {"grad": "grad", "value_and_grad": "value_and_grad", "vjp": "vjp"}[self.mode]
        fdef = gast.FunctionDef(name=f"{node.name}_{suffix}", args=args, body=body_out,
                                decorator_list=[], returns=None, type_comment=None,
                                type_params=[])
        fdef.loc = node.loc
        return ir.Function(fdef, self.refs, dict(self.fn.free), self.fn.nparams,
                           self.fn.guards, self.fn.groups)

    def run_fwd(self, body):
        """The forward sweep computes an active custom_vjp call by its ``fwd``, as JAX does
        (``y = f_fwd(x)[0]``): a transform of this code differentiates ``fwd`` (and the
        adjoint's ``bwd``) as ordinary code, so ``hessian`` and ``jvp(grad)`` go through."""
        for s in _walk_stmts(body):
            if not (isinstance(s, gast.Assign) and isinstance(s.value, gast.Call)):
                continue
            fn = self.fn.callee(s.value.func)
            if not getattr(fn, "__strop_custom_vjp__", False) or \
                    not self.value_active(s.value, self.active):
                continue
            bound = lookup(fn).bind(s.value.args, {k.arg: k.value for k in s.value.keywords})
            args = [_as_node(bound[p]) for p in fn.params]
            fwd = ir.name(self.ref(getattr(fn.fwd, "__name__", "fwd"), fn.fwd))
            s.value = ir.subscript(ir.call(fwd, args), ir.const(0))

    def outputs(self, ret, body):
        value = ret.value
        aux = None
        if self.has_aux:
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == 2:
                value, auxv = value.elts
            else:
                tmp = _atom_name(self, value, body, ret.loc)
                value, auxv = ir.subscript(tmp, ir.const(0)), ir.subscript(tmp, ir.const(1))
            aux = _atom_name(self, auxv, body, ret.loc, "_aux")
        out = _atom_name(self, value, body, ret.loc, "_out")
        return out, aux

    def results(self, out, aux, grads):
        grads = grads[0] if len(grads) == 1 and not self.multi else gast.Tuple(elts=grads,
                                                                             ctx=gast.Load())
        value = gast.Tuple(elts=[ir.name(out), ir.name(aux)], ctx=gast.Load()) if aux \
            else ir.name(out)
        if self.mode == "grad":
            return gast.Tuple(elts=[grads, ir.name(aux)], ctx=gast.Load()) if aux else grads
        return gast.Tuple(elts=[value, grads], ctx=gast.Load())


def _atom_name(rev, value, body, loc, base="_out"):
    if isinstance(value, gast.Name):
        return value.id
    n = rev.namer.fresh(base)
    body.append(ir.assign(n, value, loc))
    return n


def reverse(fn, wrt, mode="grad", has_aux=False, multi=False, kinds=None, dtypes=None,
            dims=None):
    """The reverse-mode derivative of ``fn`` with respect to parameters ``wrt``; ``mode`` is
    "grad", "value_and_grad" or "vjp" (an extra parameter after the leaves, before the free
    variables: the output's cotangent);
    ``kinds``: parameter -> "scalar", "array" or "tree" (a container), as the call gave;
    ``dtypes``: parameter -> the dtype of its array or NumPy number, ``dims``: parameter ->
    the classes of equal lengths of its array's axes, where known (transformer/shapes.py)."""
    r = Reverse(fn, wrt, mode, has_aux)
    kinds = kinds or {}
    r.multi = multi
    r.leaves = {p for p, k in kinds.items() if k != "tree"}
    r.kinds, r.dtypes, r.dims = kinds, dtypes or {}, dims or {}
    r.param_ranks = ranks.given_ranks(kinds)
    return r.run()


def _sums_regrouped(stmts, numbers):
    """``x = x + a`` then ``x = x + b`` (``x`` a number's cotangent, ``a`` and ``b`` not
    reading it: its parts from two uses of the number) as ``x = x + (a + b)``.  In a loop
    carrying ``x`` the chain of dependent operations each trip waits on is one addition
    shorter: a sequential recurrence runs at that chain's latency.  (strop's own order of
    summing cotangents, the same on every backend.)"""
    out = []
    for s in stmts:
        for field in ("body", "orelse"):
            if getattr(s, field, None):
                setattr(s, field, _sums_regrouped(getattr(s, field), numbers))
        a, b = (_accumulation(out[-1], numbers) if out else None), _accumulation(s, numbers)
        if a and b and a[0] == b[0]:
            s.value.right = gast.BinOp(left=a[1], op=gast.Add(), right=b[1])
            out[-1] = s
        else:
            out.append(s)
    return out


def _accumulation(s, numbers):
    """(x, a) of a statement ``x = x + a`` where ``x`` is in ``numbers`` and ``a`` does not
    read it."""
    if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id in numbers and isinstance(s.value, gast.BinOp)
            and isinstance(s.value.op, gast.Add) and isinstance(s.value.left, gast.Name)):
        return None
    x = s.targets[0].id
    return (x, s.value.right) if s.value.left.id == x and x not in ir.names_in(
        s.value.right) else None
