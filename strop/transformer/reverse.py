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
from . import analysis, ir
from .rules import lookup, rule_name
from .chunks import Chunk, Context, annotate_live, flatten, mark_dead
from .templates import instantiate

# Python operators and the NumPy functions whose rules they use.
BINOPS = {gast.Add: np.add, gast.Sub: np.subtract, gast.Mult: np.multiply,
          gast.Div: np.true_divide, gast.Pow: np.power, gast.Mod: np.mod,
          gast.MatMult: np.matmul, gast.FloorDiv: np.floor_divide,
          gast.BitAnd: np.bitwise_and, gast.BitOr: np.bitwise_or, gast.BitXor: np.bitwise_xor}
UNARYOPS = {gast.USub: np.negative, gast.UAdd: np.positive}
NUMPY_RESULT = (gast.BinOp, gast.UnaryOp)
SCALAR_BUILTINS = analysis.SCALAR_CALLS
EFFECT_ONLY = (print, runtime.push, runtime.aux_pair)
# NumPy functions that return (or may take and return) lists and tuples: adjoints add with add()
SEQUENCE_RESULTS = [np.array, np.asarray, np.split, np.array_split, np.hsplit, np.vsplit,
                    np.dsplit, np.broadcast_arrays, np.meshgrid, np.atleast_1d, np.atleast_2d,
                    np.atleast_3d, np.linalg.eigh, np.linalg.svd, np.linalg.slogdet,
                    np.linalg.qr, np.linalg.lstsq, np.linalg.eig, np.gradient, np.linspace] + (
                       [np.unstack] if hasattr(np, "unstack") else [])


class Reverse:
    def __init__(self, fn, wrt, mode, has_aux):
        self.fn = fn
        self.node = ir.clone(fn.node)
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
        self.scalars = self.find_scalars(stmts, [a.id for a in self.node.args.args])
        return active

    def find_scalars(self, stmts, params):
        return analysis.scalar_names(stmts, params, self.scalar_params & set(params),
                                     self.fn.callee)

    def scalar_simplify(self, expr, y):
        """``unbroadcast(e, x)`` with the output ``y`` and the operand ``x`` both numbers is
        ``e``: no shape to undo (and no tape to keep ``x`` for its shape)."""
        if y not in self.scalars:
            return expr
        helper = runtime.unbroadcast

        class Simplify(gast.NodeTransformer):
            def visit_Call(inner, node):   # noqa: N805
                inner.generic_visit(node)
                if (self.fn_callee_is(node.func, helper) and len(node.args) == 2
                        and isinstance(node.args[1], gast.Name)
                        and node.args[1].id in self.scalars):
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
        if not isinstance(value, gast.Call):
            return False
        obj = self.fn.callee(value.func)
        return isinstance(obj, np.ufunc) or (getattr(obj, "__module__", "") or "").startswith(
            "numpy") and obj not in SEQUENCE_RESULTS

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

    # --- the adjoint of one statement ------------------------------------------------------
    def rev_stmts(self, stmts, ctx, init):
        out = []
        for s in reversed(stmts):
            chunk, init = self.rev_stmt(s, ctx, init)
            chunk.writes = _overwritten(s)
            ctx.chunks[id(s)] = chunk
            out.append(chunk)
        return out, init

    def rev_stmt(self, s, ctx, init):
        op = tape_op(self.fn, s)
        if op in ("push", "pop") and s.value.args[0].id in self.active:
            return self.rev_tape(s, op, init)
        if isinstance(s, gast.Assign):
            return self.rev_assign(s, init)
        if isinstance(s, gast.If):
            return self.rev_if(s, ctx, init)
        if isinstance(s, (gast.For, gast.While)):
            return self.rev_loop(s, ctx, init)
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
            self.check_effect(s)
        return Chunk(), init

    def check_effect(self, s):
        """A call made for its effect gets no adjoint: right for print, wrong for a call that
        writes into an array being differentiated, so that is an error, never a zero."""
        fn = self.fn.callee(s.value.func)
        if fn in EFFECT_ONLY:
            return
        names = {n.id for a in s.value.args + [k.value for k in s.value.keywords]
                 for n in gast.walk(a) if isinstance(n, gast.Name)}
        if names & self.active:
            raise TransformError(
                f"this call's result is not used, so it may change "
                f"{', '.join(sorted(names & self.active))} in place; strop cannot "
                f"differentiate an in-place change it does not know", s.loc,
                fix="assign the result to a new name (y = f(x)), or use an out-of-place "
                    "function (x.at[i].add(v) for np.add.at)")

    def rev_tape(self, s, op, init):
        """Tapes of generated code, differentiated again: a tape's adjoint is a tape of
        adjoints, filled as the values come off the tape and emptied as they went on."""
        tape = s.value.args[0].id
        btape = self.adj(tape)
        self.tape_adjoints.add(btape)
        init = set(init)
        if op == "push":
            if btape not in init and tape not in self.popped:
                # nothing fills the tape's adjoint (a Jacobian's rows read only for their
                # shape): every value pushed gets a zero adjoint, so there is nothing to pop
                return Chunk(), init
            value = s.value.args[1].id
            out = self.accumulate(value, ir.call(self.helper("pop"), [ir.name(btape)]), init)
            out[-1].effect = True   # kept even where the adjoint is dead: tapes stay in step
        else:
            v = s.targets[0].id
            bv = self.adj(v)
            g = ir.name(bv) if bv in init else ir.call(self.helper("zeros_like"), [ir.name(v)])
            out = [stmt_expr(ir.call(self.helper("push"), [ir.name(btape), g]), s.loc)]
            init.discard(bv)
        return Chunk(_located(out, s.loc)), init

    def rev_assign(self, s, init):
        y = s.targets[0].id
        by = self.adjoint.get(y)
        if y not in self.active or by not in init:
            return Chunk(), init
        init = set(init)
        init.discard(by)          # y is overwritten: the adjoint of its older value starts over
        self_ref = y in {n.id for n in gast.walk(s.value) if isinstance(n, gast.Name)}
        if not self_ref:
            pre, contributions = self.contributions(s, ir.name(by), ir.name(y))
            contributions = [(v, self.scalar_simplify(e, y)) for v, e in contributions]
            body = pre + [a for v, e in contributions for a in self.accumulate(v, e, init)]
            return Chunk(_located(body, s.loc)), init
        # y = f(y): keep the cotangent and the output, put y back, then use its old value
        g, ans = self.temp("_g"), self.temp("_ans")
        restore = Chunk()
        pre, contributions = self.contributions(s, ir.name(g), ir.name(ans))
        contributions = [(v, self.scalar_simplify(e, y)) for v, e in contributions]
        body = _located([ir.assign(g, ir.name(by)), ir.assign(ans, ir.name(y))], s.loc)
        body += [restore] + _located(pre, s.loc)
        body += _located([a for v, e in contributions for a in self.accumulate(v, e, init)],
                         s.loc)
        return Chunk(body, restore=restore), init

    def accumulate(self, v, expr, init):
        bv = self.adj(v)
        if bv in init:
            if v in self.containers:
                expr = ir.call(self.helper("add"), [ir.name(bv), expr])
            else:
                expr = gast.BinOp(left=ir.name(bv), op=gast.Add(), right=expr)
        init.add(bv)
        return [ir.assign(bv, expr)]

    def contributions(self, s, g, ans):
        """(statements, [(operand name, cotangent expression)]) for the active operands of s."""
        value, pre, out = s.value, [], []
        act = lambda n: isinstance(n, gast.Name) and n.id in self.active  # noqa: E731
        if isinstance(value, gast.Name):
            return pre, [(value.id, g)] if act(value) else []
        if isinstance(value, (gast.Tuple, gast.List)):
            return pre, [(e.id, ir.subscript(ir.clone(g), ir.const(i)))
                         for i, e in enumerate(value.elts) if act(e)]
        if isinstance(value, gast.Dict):
            return pre, [(v.id, ir.subscript(ir.clone(g), ir.clone(k)))
                         for k, v in zip(value.keys, value.values) if act(v)]
        if isinstance(value, gast.Subscript):
            if not act(value.value):
                return pre, []
            index = _index_value(value.slice)
            return pre, [(value.value.id, ir.call(self.helper("getitem_vjp"),
                                                  [g, ir.clone(value.value), index]))]
        op = operation(self.fn, value)
        if op is None:
            return pre, []
        key, args, kws, names = op
        if not any(act(n) for n in names):
            return pre, []
        rule = lookup(key)
        if rule is None and isinstance(key, tuple) and key[0] == "attr":
            # a field of a pytree object (a named tuple, a registered class)
            return pre, [(value.value.id, ir.call(self.helper("getattr_vjp"), [
                g, ir.clone(value.value), ir.const(value.attr)]))]
        if rule is None:
            raise TransformError(
                f"no derivative rule for {_describe(key, value)}, and its result depends on the "
                f"differentiated input", getattr(s, "loc", None),
                fix="use a NumPy function strop differentiates (see docs/rules.md), wrap the "
                    "value in lax.stop_gradient if no derivative should flow, or define the "
                    "derivative with strop.custom_vjp")
        if not rule.differentiable:
            return pre, []
        bound = rule.bind(args, dict(kws))
        if bound is None:
            raise TransformError(f"cannot match the arguments of this call to the signature of "
                                 f"{rule_name(key)}", getattr(s, "loc", None))
        for param, template in rule.vjps.items():
            arg = bound.get(param)
            targets = [n for t in _targets(arg) for n in gast.walk(t) if isinstance(n, gast.Name)]
            if not any(act(t) for t in targets):
                continue
            expr = self.instantiate(template, bound, g, ans)
            if isinstance(arg, gast.Name):
                out.append((arg.id, expr))
                continue
            # a sequence argument (np.stack([a, b]), np.array([[x, 1.], [y, x]])): its
            # cotangent is a sequence, shared out to the (nested) elements
            tmp = self.temp("_bseq")
            pre.append(ir.assign(tmp, expr))
            out.extend(self.share_out(arg, ir.name(tmp), act))
        return pre, out

    def share_out(self, arg, cot, act):
        out = []
        for i, t in enumerate(_targets(arg)):
            part = ir.subscript(ir.clone(cot), ir.const(i))
            if isinstance(t, gast.Name):
                if act(t):
                    out.append((t.id, part))
            elif _targets(t) and any(act(n) for n in gast.walk(t) if isinstance(n, gast.Name)):
                out.extend(self.share_out(t, part, act))
        return out

    def instantiate(self, template, bound, g, ans):
        env = {"g": g, "ans": ans, **{k: _as_node(v) for k, v in bound.items()}}
        return instantiate(template, env, self.ref)

    # --- control flow ----------------------------------------------------------------------
    def zeros(self, bv, s):
        """``bv = zeros_like(v)`` where paths merge; where ``v`` may be undefined there (set on
        another path only, so nothing on this path reads it), a plain 0.0."""
        v = self.primal[bv]
        if v in s.defined_before:
            return ir.assign(bv, ir.call(self.helper("zeros_like"), [ir.name(v)]), s.loc)
        return ir.assign(bv, ir.const(0.0), s.loc)

    def mark_defined(self, stmts, defined):
        """Record on each compound statement the names surely defined before it."""
        for s in stmts:
            if isinstance(s, (gast.If, gast.For, gast.While)):
                s.defined_before = set(defined)
                self.mark_defined(s.body, defined | ({s.target.id} if isinstance(s, gast.For)
                                                     else set()))
                self.mark_defined(s.orelse, defined)
            defined = analysis.definitely_assigned([s], defined)

    def rev_if(self, s, ctx, init):
        b1, i1 = self.rev_stmts(s.body, ctx, set(init))
        b2, i2 = self.rev_stmts(s.orelse, ctx, set(init))
        b1 += [self.zeros(v, s) for v in sorted(i2 - i1)]
        b2 += [self.zeros(v, s) for v in sorted(i1 - i2)]
        node = ir.if_(ir.clone(s.test), b1, b2, s.loc)
        return Chunk([node]), i1 | i2

    def rev_loop(self, s, ctx, init):
        child = Context(s.body, loop=s)
        ctx.children[id(s)] = child
        start = set(init)
        while True:   # adjoints set at the start of an iteration must be set at its end
            body, end = self.rev_stmts(s.body, child, set(start))
            if end <= start:
                break
            start |= end
        body += [self.zeros(v, s) for v in sorted(start - end)]
        pre = [self.zeros(v, s) for v in sorted(start - set(init))]
        child.start = Chunk()
        child.start.writes = analysis.block_writes(s.body) - analysis.carried(s)
        body = [child.start] + body
        if isinstance(s, gast.For):
            it = _reversed_range(s.iter)
            node = gast.For(target=ir.clone(s.target), iter=it, body=body, orelse=[],
                            type_comment=None)
        else:
            node = gast.For(target=ir.name(self.namer.fresh("_"), store=True),
                            iter=ir.call("range", [ir.name(s.counter)]), body=body, orelse=[],
                            type_comment=None)
        node.loc = s.loc
        child.reverse = body
        return Chunk(pre + [node]), start

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
        iteration starts."""
        carried = analysis.carried(loop)
        _, dd_end = self.save_block(ctx.stmts, ctx, set(carried), set(dd_before))
        written = analysis.block_writes(loop.body)
        local = (written - carried) & ctx.start.live_end
        if isinstance(loop, gast.For):   # the backward loop sets it, unless the body changed it
            local.discard(loop.target.id)
            if loop.target.id in written & ctx.start.live_end:
                local.add(loop.target.id)
        for v in sorted(local):
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
        body_out += flatten(reverse, live_only=True)
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


def _reversed_range(it):
    """The iterations of ``range(...)`` backwards: ``range(n - 1, -1, -1)`` when it counts up
    from 0 by 1 (what Numba compiles), else ``reversed(range(...))``."""
    args = it.args
    simple = len(args) == 1 or (len(args) == 2 and isinstance(args[0], gast.Constant)
                                and args[0].value == 0)
    if simple:
        stop = args[-1]
        last = ir.const(stop.value - 1) if isinstance(stop, gast.Constant) else gast.BinOp(
            left=ir.clone(stop), op=gast.Sub(), right=ir.const(1))
        return ir.call("range", [last, ir.const(-1), ir.const(-1)])
    return ir.call("reversed", [ir.clone(it)])


def _overwritten(s):
    """The names whose values before ``s`` a tape may have to keep, pushed just before it (a
    loop pushes the values its iterations carry inside, at each overwrite)."""
    if isinstance(s, gast.Assign):
        return {s.targets[0].id}
    if isinstance(s, (gast.For, gast.While)):
        return analysis.writes(s) - analysis.carried(s)
    return set()


def _located(stmts, loc):
    for st in stmts:
        st.loc = loc
    return stmts


def _atom_name(rev, value, body, loc, base="_out"):
    if isinstance(value, gast.Name):
        return value.id
    n = rev.namer.fresh(base)
    body.append(ir.assign(n, value, loc))
    return n


def _rename(node, mapping):
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in mapping:
            n.id = mapping[n.id]
    return node


def stmt_expr(call, loc):
    return ir.stmt(gast.Expr(value=call), loc)


def tape_op(fn, s):
    """"push", "pop" or "stack" for the tape statements of generated code (differentiated
    again), else None."""
    value = s.value if isinstance(s, (gast.Expr, gast.Assign)) else None
    if isinstance(value, gast.Call):
        callee = fn.callee(value.func)
        if callee is runtime.push and isinstance(s, gast.Expr):
            return "push"
        if callee is runtime.pop and isinstance(s, gast.Assign):
            return "pop"
        if callee is runtime.stack and isinstance(s, gast.Assign):
            return "stack"
    return None


def operation(fn, value):
    """(rule key, positional operands, keyword operands) of an operator, attribute or call
    ``value``, and the names among its operands; None for other values (and operators that
    have no rule: ``not x``)."""
    if isinstance(value, gast.BinOp):
        key, args, kws = BINOPS[type(value.op)], [value.left, value.right], []
    elif isinstance(value, gast.UnaryOp) and type(value.op) in UNARYOPS:
        key, args, kws = UNARYOPS[type(value.op)], [value.operand], []
    elif isinstance(value, gast.Attribute):
        key, args, kws = ("attr", value.attr), [value.value], []
    elif isinstance(value, gast.Call):
        key = fn.callee(value.func)
        args = ([value.func.value] if isinstance(key, tuple) else []) + list(value.args)
        kws = [(k.arg, k.value) for k in value.keywords]
    else:
        return None
    names = [n for a in list(args) + [v for _, v in kws] for t in _targets(a)
             for n in gast.walk(t) if isinstance(n, gast.Name)]
    return key, args, kws, names


def _walk_stmts(stmts):
    for s in stmts:
        yield s
        for field in ("body", "orelse"):
            yield from _walk_stmts(getattr(s, field, []) or [])


def _reads(stmts):
    return {n.id for s in stmts for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _targets(arg):
    if isinstance(arg, gast.Name):
        return [arg]
    if isinstance(arg, (gast.Tuple, gast.List)):
        return list(arg.elts)
    if isinstance(arg, tuple):
        return list(arg)
    return []


def _as_node(v):
    if isinstance(v, gast.AST):
        return v
    if isinstance(v, tuple):
        return gast.Tuple(elts=[_as_node(x) for x in v], ctx=gast.Load())
    return ir.const(v)


def _index_value(index):
    from .normalize import _index_value as convert
    return convert(ir.clone(index))


def _describe(key, value):
    if isinstance(key, tuple):
        return f"the method .{key[1]}()" if key[0] == "method" else f"the attribute .{key[1]}"
    if key is None:
        from ..codegen.emit import unparse
        return unparse(value.func) if isinstance(value, gast.Call) else type(value).__name__
    return rule_name(key)


def reverse(fn, wrt, mode="grad", has_aux=False, multi=False, kinds=None):
    """The reverse-mode derivative of ``fn`` with respect to parameters ``wrt``; ``mode`` is
    "grad", "value_and_grad" or "vjp" (an extra parameter after the leaves, before the free
    variables: the output's cotangent);
    ``kinds``: parameter -> "scalar", "array" or "tree" (a container), as the call gave."""
    r = Reverse(fn, wrt, mode, has_aux)
    kinds = kinds or {}
    r.multi = multi
    r.leaves = {p for p, k in kinds.items() if k != "tree"}
    r.scalar_params = {p for p, k in kinds.items() if k == "scalar"}
    return r.run()
