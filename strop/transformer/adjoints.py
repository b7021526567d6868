"""Reverse mode's adjoint sweep, statement by statement (part of Reverse, which mixes it in):
each assignment's rule templates add to its operands' adjoints; an ``if`` replays the branch
its test took, a loop runs backwards over the same iterations."""
import gast

from .. import runtime
from ..runtime.effects import is_effect
from ..errors import TransformError
from . import analysis, ir
from .chunks import Chunk, Context
from .operations import (_as_node, _targets, held_function, is_namedtuple_call, no_rule,
                         operation, tape_op)
from .rules import lookup, rule_name
from .templates import instantiate

EFFECT_ONLY = (print, runtime.push, runtime.aux_pair)


class Adjoints:
    """The adjoint statements of Reverse (a mixin: the names it reads are set by Reverse)."""

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
        if fn in EFFECT_ONLY or is_effect(fn):
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
            contributions = [(v, self.unbroadcast_simplify(e, s)) for v, e in contributions]
            body = pre + [a for v, e in contributions for a in self.accumulate(v, e, init)]
            return Chunk(_located(body, s.loc)), init
        # y = f(y): keep the cotangent and the output, put y back, then use its old value
        g, ans = self.temp("_g"), self.temp("_ans")
        restore = Chunk()
        pre, contributions = self.contributions(s, ir.name(g), ir.name(ans))
        contributions = [(v, self.unbroadcast_simplify(e, s)) for v, e in contributions]
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
        if isinstance(value, (gast.Tuple, gast.List, gast.Dict)) or is_namedtuple_call(
                self.fn, value):
            return pre, self.display_parts(value, g, act, getattr(s, "loc", None))
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
        if isinstance(value, gast.Call) and act(value.func):
            raise held_function(value, getattr(s, "loc", None), self.fn)
        if not any(act(n) for n in names):
            return pre, []
        rule = lookup(key)
        if rule is None and isinstance(key, tuple) and key[0] == "attr":
            # a field of a pytree object (a named tuple, a registered class)
            return pre, [(value.value.id, ir.call(self.helper("getattr_vjp"), [
                g, ir.clone(value.value), ir.const(value.attr)]))]
        if rule is None:
            raise no_rule(key, value, getattr(s, "loc", None), "custom_vjp", self.fn)
        if not rule.differentiable:
            return pre, []
        bound = rule.bind(args, dict(kws))
        if bound is None:
            raise TransformError(f"cannot match the arguments of this call to the signature of "
                                 f"{rule_name(key)}", getattr(s, "loc", None))
        made = []
        for param, template in rule.vjps.items():
            arg = bound.get(param)
            targets = [n for t in _targets(arg) for n in gast.walk(t) if isinstance(n, gast.Name)]
            if any(act(t) for t in targets):
                made.append((arg, self.instantiate(template, bound, g, ans)))
        made = _twins_merged(made)
        shared, exprs = self.shared_calls([expr for _, expr in made])
        pre += shared
        for (arg, _), expr in zip(made, exprs):
            if isinstance(arg, gast.Name):
                out.append((arg.id, expr))
                continue
            # a sequence argument (np.stack([a, b]), np.array([[x, 1.], [y, x]])): its
            # cotangent is a sequence, shared out to the (nested) elements
            tmp = self.temp("_bseq")
            pre.append(ir.assign(tmp, expr))
            out.extend(self.share_out(arg, ir.name(tmp), act))
        return pre, out

    def shared_calls(self, exprs):
        """Calls that one operation's cotangents make alike (``solve_adjoint(g, a, b)`` in both
        of solve's), each made once, first: (the statements making them, ``exprs`` reading
        their names).  The largest such calls only, and only those every evaluation makes (not
        in one branch of ``x if c else y``)."""
        found = {}
        for e in exprs:
            for n in _unconditional_calls(e):
                found.setdefault(gast.dump(n), []).append(n)
        names, out = {}, []
        for key in sorted((k for k, ns in found.items() if len(ns) > 1), key=len, reverse=True):
            call = found[key][0]
            if any(key in k for k in names):   # inside a larger shared call
                continue
            names[key] = self.temp("_" + (call.func.id if isinstance(call.func, gast.Name)
                                          else "shared"))
            out.append(ir.assign(names[key], ir.clone(call)))
        return out, [_Shared(names).visit(e) for e in exprs] if names else exprs

    def display_parts(self, value, g, act, loc):
        """(name, cotangent) of each active name in a display, nested ones too: in ``t = [(a,
        b), {"k": c}]`` a's cotangent is ``bt[0][0]`` and c's ``bt[1]["k"]`` (the prologue
        that rebuilds a pytree argument from its leaves is such a display)."""
        if isinstance(value, gast.Name):
            return [(value.id, g)] if act(value) else []
        if isinstance(value, (gast.Tuple, gast.List)):
            items = [(ir.const(i), e) for i, e in enumerate(value.elts)]
        elif isinstance(value, gast.Dict):
            items = list(zip(value.keys, value.values))
        elif is_namedtuple_call(self.fn, value):   # Layer(w, b), which flatten.py rebuilds
            items = [(ir.const(i), e) for i, e in enumerate(value.args)]
        else:
            items = []
        active = any(act(n) for n in gast.walk(value))
        if not items and active or any(k is None or isinstance(e, gast.Starred)
                                       for k, e in items) and active:
            raise TransformError("strop cannot follow the derivative through this part of a "
                                 "display (a starred item or a ** in a literal)", loc,
                                 fix="build the container with explicit items")
        return [part for k, e in items
                for part in self.display_parts(e, ir.subscript(ir.clone(g), ir.clone(k)),
                                               act, loc)]

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


def _twins_merged(made):
    """``made`` ([(argument, cotangent)]) with the cotangents of one name given twice alike
    (``x * x``: ``g * x`` and ``x * g``, equal but for the order of a product's factors) made
    once and doubled: one product where there were two and their sum (doubling is exact)."""
    out, seen = [], {}
    for arg, expr in made:
        if isinstance(arg, gast.Name):
            key = (arg.id, _commuted(expr))
            if key in seen:
                i = seen.pop(key)
                out[i] = (arg, _doubled(out[i][1]))
                continue
            seen[key] = len(out)
        out.append((arg, expr))
    return out


def _doubled(expr):
    """2 * ``expr``, inside an unbroadcast (linear), where the product fuses with the rest."""
    if isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name) and \
            expr.func.id == "unbroadcast" and expr.args:
        return gast.Call(func=expr.func, args=[_doubled(expr.args[0])] + expr.args[1:],
                         keywords=expr.keywords)
    return gast.BinOp(left=ir.const(2), op=gast.Mult(), right=expr)


def _commuted(expr):
    """``expr``'s dump with each product's two factors in one order."""
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, gast.Mult):
        return "Mult(" + ", ".join(sorted([_commuted(expr.left), _commuted(expr.right)])) + ")"
    if isinstance(expr, gast.AST):
        return type(expr).__name__ + "(" + ", ".join(
            _commuted(getattr(expr, f, None)) for f in expr._fields) + ")"
    if isinstance(expr, list):
        return "[" + ", ".join(_commuted(e) for e in expr) + "]"
    return repr(expr)


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


def stmt_expr(call, loc):
    return ir.stmt(gast.Expr(value=call), loc)


def _index_value(index):
    from .normalize import _index_value as convert
    return convert(ir.clone(index))


def _unconditional_calls(node):
    """The calls in ``node`` that its every evaluation makes."""
    if isinstance(node, gast.IfExp):
        yield from _unconditional_calls(node.test)
        return
    if isinstance(node, gast.BoolOp):
        yield from _unconditional_calls(node.values[0])
        return
    if isinstance(node, gast.Lambda):
        return
    if isinstance(node, gast.Call):
        yield node
    for child in gast.iter_child_nodes(node):
        yield from _unconditional_calls(child)


class _Shared(gast.NodeTransformer):
    """Each call of ``names`` (by its gast.dump) replaced by the name made for it."""
    def __init__(self, names):
        self.names = names

    def visit_Call(self, node):
        name = self.names.get(gast.dump(node))
        return ir.name(name) if name else self.generic_visit(node)
