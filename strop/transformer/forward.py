"""Forward mode: each statement followed by its tangent statement.

For each assignment ``y = op(x1, x2)`` whose operands carry tangents, a statement
``dy = <jvp of x1> + <jvp of x2>`` follows, built from the rule table's jvp templates (the
same table as the vjps: rules/).  Control flow is kept as it is: an ``if`` computes the
tangents of the branch it takes, a loop those of each iteration.  No tape is needed — except
for the tapes of generated reverse-mode code differentiated again (``hessian``, ``jvp(grad)``):
a tape of values gets a tape of their tangents.

Tangents start "unset": a value with no tangent (a constant, an integer counter) contributes
nothing and no zeros are made for it.  Where paths merge (the branches of an ``if``, the
iterations of a loop) a tangent set on one path only is set to zeros on the other.
"""
import copy

import gast
import numpy as np

from .. import runtime
from ..runtime.effects import is_effect
from ..errors import TransformError, TransformTypeError
from . import analysis, ir, ranks
from .operations import (SEQUENCE_RESULTS, _as_node, _rename, _targets, held_function,
                         is_namedtuple_call, no_rule, operation, tape_op)
from .operations import _walk_stmts as _walk
from .rules import RULES, TEMPLATE_NAMESPACE, lookup, rule_name
from .rules.table import _NO_DEFAULT
from .templates import instantiate

_ANS = "__ans__"   # stands for the output in a template until it is known where it lives


class Forward:
    def __init__(self, fn, kinds=None):
        self.fn = fn
        self.node = ir.clone(fn.node)
        self.refs = dict(fn.refs)
        self.namer = ir.Namer(ir.names_in(self.node) | set(self.refs))
        self.tangents = {}
        self.kinds = kinds or {}

    # --- names -----------------------------------------------------------------------------
    def tan(self, v):
        if v not in self.tangents:
            base = "d" + v.lstrip("_") if not v.startswith("_t") else "_d" + v.lstrip("_")
            self.tangents[v] = self.namer.fresh(base)
        return self.tangents[v]

    def ref(self, base, obj):
        return ir.bind_ref(self.refs, self.namer, obj, base)

    def helper(self, n):
        obj = getattr(runtime, n)
        return ir.name(self.ref(n, obj))

    def zeros(self, v, defined):
        """``zeros_like(v)`` where ``v`` is surely defined, else a plain 0.0 (nothing on this
        path reads it)."""
        if isinstance(v, gast.Name):
            if v.id in defined or v.id in self.refs:
                return ir.call(self.helper("zeros_like"), [ir.name(v.id)])
            self.loose.add(v.id)   # an output's tangent must get its shape (out_tangent)
            return ir.const(0.0)
        if isinstance(v, (gast.Tuple, gast.List)):
            return type(v)(elts=[self.zeros(e, defined) for e in v.elts], ctx=gast.Load())
        return ir.const(0.0)

    # --- activity --------------------------------------------------------------------------
    def find_active(self, stmts, params):
        """Names that may hold a value depending on ``params`` (a fixed point over all the
        assignments, flow-insensitive: used for the tapes, whose tangent tapes must exist
        before the first push)."""
        active = set(params)
        assigns = [n for n in _walk(stmts) if isinstance(n, gast.Assign)]
        pushes = [n.value.args for n in _walk(stmts) if tape_op(self.fn, n) == "push"]
        changed = True
        while changed:
            changed = False
            for s in assigns:
                t = s.targets[0].id
                if t not in active and ir.names_in(s.value) & active:
                    active.add(t)
                    changed = True
            for tape, value in pushes:
                if tape.id not in active and ir.names_in(value) & active:
                    active.add(tape.id)
                    changed = True
        return active

    # --- statements ------------------------------------------------------------------------
    def block(self, stmts, init, defined):
        out = []
        for s in stmts:
            new, init = self.stmt(s, init, defined)
            out.extend(new)
            defined = analysis.definitely_assigned([s], defined)
        return out, init

    def stmt(self, s, init, defined):
        op = tape_op(self.fn, s)
        if op is not None:
            return self.tape(s, op, init, defined)
        if isinstance(s, gast.Assign):
            return self.assign(s, init)
        if isinstance(s, gast.If):
            return self.if_(s, init, defined)
        if isinstance(s, (gast.For, gast.While)):
            return self.loop(s, init, defined)
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
            self.check_effect(s, init)
        return [s], init

    def floating(self, value):
        """Whether ``value`` is surely a float or a NumPy array (a float constant, a NumPy
        call): a name given one may hold a tangent elsewhere; an int, a slice or a tuple of
        them never does."""
        if isinstance(value, gast.Constant):
            return isinstance(value.value, float)
        if isinstance(value, gast.Name):
            return value.id in self.float_names
        if isinstance(value, gast.Subscript):   # an item or a slice of floats
            return self.floating(value.value)
        if isinstance(value, gast.BinOp):
            return self.floating(value.left) or self.floating(value.right)
        fn = self.fn.callee(value.func) if isinstance(value, gast.Call) else None
        if fn in _FLOAT_ARRAYS:
            return True
        rule = lookup(fn)    # a NumPy function with a derivative (not a builtin: min(m, n))
        numpy = isinstance(fn, np.ufunc) or (getattr(fn, "__module__", None) or "").startswith(
            "numpy")
        return numpy and rule is not None and rule.differentiable

    def check_effect(self, s, init):
        fn = self.fn.callee(s.value.func)
        if fn is print or fn is runtime.push or fn is runtime.aux_pair or is_effect(fn):
            return
        names = {n.id for a in s.value.args + [k.value for k in s.value.keywords]
                 for n in gast.walk(a) if isinstance(n, gast.Name)} & init
        if names:
            raise TransformError(
                f"this call's result is not used, so it may change {', '.join(sorted(names))} "
                f"in place; strop cannot differentiate an in-place change it does not know",
                s.loc, fix="assign the result to a new name (y = f(x)), or use an out-of-place "
                           "function (x.at[i].add(v) for np.add.at)")

    def tape(self, s, op, init, defined):
        init = set(init)
        if op == "stack":
            t = s.targets[0].id
            if t not in self.active_tapes:
                init.discard(t)
                return [s], init
            self.stacks.add(t)
            init.add(t)
            return [s, ir.assign(self.tan(t), ir.call(self.helper("stack")), s.loc)], init
        tape = s.value.args[0].id
        if tape not in self.active_tapes:
            if op == "pop":
                init.discard(s.targets[0].id)
            return [s], init
        if op == "push":
            t = self.tangent_of(s.value.args[1], init)
            push = ir.stmt(gast.Expr(value=ir.call(self.helper("push"),
                                                   [ir.name(self.tan(tape)), t])), s.loc)
            return [s, push], init
        v = s.targets[0].id
        init.add(v)
        pop = ir.assign(self.tan(v), ir.call(self.helper("pop"), [ir.name(self.tan(tape))]),
                        s.loc)
        pop.effect = True   # kept even where the tangent is dead: the tape must stay in step
        return [s, pop], init

    def assign(self, s, init):
        y = s.targets[0].id
        init = set(init)
        t = self.tangent_expr(s, init)
        floating = self.floating(s.value)
        if floating:
            self.float_names.add(y)
        if t is None and y in self.active_tapes and (floating or y in self.stacks):
            # a constant given to a name that holds a tangent on other paths: its tangent is
            # zeros of its shape (a merge after this path would only know 0.0: a wrong shape);
            # a tape's, a tape of zeros as long (its pops must find one)
            init.add(y)
            return [s, ir.assign(self.tan(y), self.zeros(ir.name(y), {y}), s.loc)], init
        if t is None:
            init.discard(y)
            return [s], init
        init.add(y)
        dy = self.tan(y)
        reads = ir.names_in(s.value)
        uses_ans = _ANS in ir.names_in(t)
        if y not in reads:
            t = _rename(t, {_ANS: y})
            return [s, ir.assign(dy, self.simplify(t, y), s.loc)], init
        if not uses_ans:   # y = f(y): the tangent reads the old y, so it comes first
            return [ir.assign(dy, self.simplify(t, y), s.loc), s], init
        ans = self.namer.temp("_ans")
        first = ir.assign(ans, s.value, s.loc)
        t = _rename(t, {_ANS: ans})
        return [first, ir.assign(dy, self.simplify(t, y), s.loc),
                ir.assign(y, ir.name(ans), s.loc)], init

    def if_(self, s, init, defined):
        b1, i1 = self.block(s.body, set(init), set(defined))
        b2, i2 = self.block(s.orelse, set(init), set(defined))
        d1 = analysis.definitely_assigned(s.body, defined)
        d2 = analysis.definitely_assigned(s.orelse, defined)
        b1 += [ir.assign(self.tan(v), self.zeros(ir.name(v), d1), s.loc) for v in sorted(i2 - i1)]
        b2 += [ir.assign(self.tan(v), self.zeros(ir.name(v), d2), s.loc) for v in sorted(i1 - i2)]
        node = ir.if_(ir.clone(s.test), b1 or [gast.Pass()], b2, s.loc)
        return [node], i1 | i2

    def loop(self, s, init, defined):
        start = set(init)
        inner = set(defined) | ({s.target.id} if isinstance(s, gast.For) else set())
        if isinstance(s, gast.For):
            start.discard(s.target.id)
        while True:   # tangents set at the end of an iteration must be set at its start
            body, end = self.block(s.body, set(start), set(inner))
            end = end - ({s.target.id} if isinstance(s, gast.For) else set())
            if end <= start:
                break
            start |= end
        d_end = analysis.definitely_assigned(s.body, inner)
        body += [ir.assign(self.tan(v), self.zeros(ir.name(v), d_end), s.loc)
                 for v in sorted(start - end)]
        pre = [ir.assign(self.tan(v), self.zeros(ir.name(v), defined), s.loc)
               for v in sorted(start - set(init))]
        node = copy.copy(s)
        node.body = body
        node.loc = s.loc
        return pre + [node], start

    # --- the tangent of one value ----------------------------------------------------------
    def tangent_of(self, node, init, defined=()):
        """The tangent of an argument: a name's, zeros for a constant; displays elementwise."""
        if isinstance(node, gast.Name):
            if node.id in init:
                return ir.name(self.tan(node.id))
            return self.zeros(node, {node.id})   # read here, so defined here
        if isinstance(node, (gast.Tuple, gast.List)):
            return type(node)(elts=[self.tangent_of(e, init) for e in node.elts],
                              ctx=gast.Load())
        if isinstance(node, gast.Dict):
            return gast.Dict(keys=[ir.clone(k) for k in node.keys],
                             values=[self.tangent_of(v, init) for v in node.values])
        if is_namedtuple_call(self.fn, node):
            return ir.call(ir.clone(node.func), [self.tangent_of(e, init) for e in node.args])
        if isinstance(node, tuple):
            return gast.Tuple(elts=[self.tangent_of(e, init) for e in node], ctx=gast.Load())
        return ir.const(0.0)

    def tangent_expr(self, s, init):
        value = s.value
        carries = lambda n: isinstance(n, gast.Name) and n.id in init  # noqa: E731
        if isinstance(value, gast.Name):
            return ir.name(self.tan(value.id)) if carries(value) else None
        if isinstance(value, (gast.Tuple, gast.List, gast.Dict)) or is_namedtuple_call(
                self.fn, value):
            if not any(carries(n) for n in gast.walk(value)):
                return None
            return self.tangent_of(value, init)
        if isinstance(value, gast.Subscript):
            if not carries(value.value):
                return None
            return ir.subscript(self.tan(value.value.id), ir.clone(value.slice))
        op = operation(self.fn, value)
        if op is None:
            return None
        key, args, kws, names = op
        if isinstance(value, gast.Call) and carries(value.func):
            raise held_function(value, getattr(s, "loc", None), self.fn)
        if not any(carries(n) for n in names):
            return None
        if getattr(key, "__strop_custom_vjp__", False):
            raise TransformTypeError(
                f"{getattr(key, '__name__', 'this function')} is a custom_vjp function: its "
                f"derivative is defined for reverse mode only (as in JAX), so forward mode "
                f"(jvp, jacfwd) cannot differentiate it", s.loc,
                fix="define it with strop.custom_jvp instead (grad still works), or use "
                    "jacrev / grad")
        rule = lookup(key)
        if rule is None and isinstance(key, tuple) and key[0] == "attr":
            # a field of a pytree object (a named tuple, a registered class)
            return ir.attr(self.tan(value.value.id), value.attr)
        if rule is None:
            raise no_rule(key, value, getattr(s, "loc", None), "custom_jvp", self.fn)
        if not rule.differentiable:
            return None
        bound = rule.bind(args, dict(kws))
        if bound is None:
            raise TransformError(f"cannot match the arguments of this call to the signature of "
                                 f"{rule_name(key)}", getattr(s, "loc", None))
        active = [p for p in rule.jvps
                  if any(carries(n) for t in _targets(bound.get(p)) for n in gast.walk(t)
                         if isinstance(n, gast.Name))]
        if not active:
            return None
        env = {"ans": ir.name(_ANS), **{k: _as_node(v) for k, v in bound.items()}}
        if len(active) > 1 and rule.jvp_joint:
            env.update({"d" + p: self.tangent_of(_as_node(bound[p]), init) for p in rule.jvps})
            return self.instantiate(rule.jvp_joint, env)
        terms = []
        for p in active:
            env["d" + p] = self.tangent_of(_as_node(bound[p]), init)
            terms.append(self.instantiate(rule.jvps[p], env))
        out = terms[0]
        sequence = key in SEQUENCE_RESULTS or (getattr(key, "__module__", "") or "").startswith(
            "strop.runtime")
        for t in terms[1:]:
            out = ir.call(self.helper("add"), [out, t]) if sequence else gast.BinOp(
                left=out, op=gast.Add(), right=t)
        return out

    def instantiate(self, template, env):
        return _DropDefaults(self.refs).visit(instantiate(template, env, self.ref))

    def simplify(self, expr, y):
        """``tangent_like(t, y)`` with ``y`` surely a number is ``t`` (nothing to spread)."""
        if y not in self.scalars:
            return expr
        helper = runtime.tangent_like
        refs = self.refs

        class Simplify(gast.NodeTransformer):
            def visit_Call(inner, node):   # noqa: N805
                inner.generic_visit(node)
                if (isinstance(node.func, gast.Name) and refs.get(node.func.id) is helper
                        and isinstance(node.args[1], gast.Name)
                        and node.args[1].id in (y,)):
                    return node.args[0]
                return node
        return Simplify().visit(expr)

    # --- the whole function ----------------------------------------------------------------
    def prepare(self, wrt):
        node = self.node
        params = [a.id for a in node.args.args]
        groups = self.fn.groups or tuple((False, (p,)) for p in params[:self.nleaves()])
        self.wrt_groups = [groups[i] for i in wrt]
        self.wrt = [p for _, names in self.wrt_groups for p in names]
        body = list(node.body)
        ret = body.pop()
        if not isinstance(ret, gast.Return):
            raise TransformError("the function must return a value to be differentiated",
                                 self.fn.node.loc)
        self.active_tapes = self.find_active(body, self.wrt)
        self.float_names = set()   # names given a float or a NumPy array (see floating)
        self.stacks = set()        # names given a tape (stack()): a list of values
        self.loose = set()         # names whose tangent a merge may have set to a plain 0.0
        given = {p: r for p, r in ranks.given_ranks(self.kinds).items() if p in params}
        self.scalars = ranks.scalar_names(body, given, self.fn.callee)
        return params, body, ret

    def nleaves(self):
        return len(self.node.args.args) - len(self.fn.free)

    def tangent_body(self, body, params):
        """The statements with their tangent statements, the wrt parameters' tangents set."""
        init = set(self.wrt)
        for p in self.wrt:
            self.tan(p)
        return self.block(body, init, set(params) | set(self.fn.free))

    def outputs(self, ret, body, has_aux):
        value = ret.value
        aux = None
        if has_aux:
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == 2:
                value, auxv = value.elts
            else:
                tmp = self.atom(value, body, ret.loc, "_pair")
                value, auxv = ir.subscript(tmp, ir.const(0)), ir.subscript(tmp, ir.const(1))
            aux = self.atom(auxv, body, ret.loc, "_aux")
        return self.atom(value, body, ret.loc, "_out"), aux

    def atom(self, value, body, loc, base):
        if isinstance(value, gast.Name):
            return value.id
        n = self.namer.fresh(base)
        body.append(ir.assign(n, value, loc))
        return n

    def out_tangent(self, out, init):
        if out not in init:
            return ir.call(self.helper("zeros_like"), [ir.name(out)])
        if out in self.loose:
            return ir.call(self.helper("output_tangent"), [ir.name(self.tan(out)), ir.name(out)])
        return ir.name(self.tan(out))

    def function(self, name, params, body, result, extra_params=()):
        """An ir.Function: ``extra_params`` go after the leaf parameters (before the free
        variables, which the runner passes last)."""
        args = ir.clone(self.node.args)
        n = self.nleaves()
        args.args[n:n] = [gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
                          for p in extra_params]
        body = body + [ir.stmt(gast.Return(value=result), self.node.loc)]
        fdef = gast.FunctionDef(name=self.namer.fresh(name), args=args, body=body,
                                decorator_list=[],
                                returns=None, type_comment=None, type_params=[])
        fdef.loc = self.node.loc
        return ir.Function(fdef, self.refs, dict(self.fn.free), self.fn.nparams,
                           self.fn.guards, self.fn.groups)


def jvp(fn, wrt, has_aux=False, kinds=None):
    """The forward-mode derivative of ``fn`` in the parameters ``wrt`` (indices of the user's
    parameters): a function of the parameters followed by the tangents of the ``wrt`` leaves,
    returning ``(out, tangent of out)`` (and ``aux`` with ``has_aux``)."""
    f = Forward(fn, kinds)
    params, body, ret = f.prepare(wrt)
    tangent_params = [f.tan(p) for p in f.wrt]
    out, aux = f.outputs(ret, body, has_aux)   # named first: a display gets its tangent
    new, init = f.tangent_body(body, params)
    elts = [ir.name(out), f.out_tangent(out, init)] + ([ir.name(aux)] if aux else [])
    new = drop_dead(new, ir.names_in(gast.Tuple(elts=elts, ctx=gast.Load())),
                    set(f.tangents.values()))
    return f.function(f"{fn.node.name}_jvp", params, new, gast.Tuple(elts=elts, ctx=gast.Load()),
                      tangent_params)


def jacfwd(fn, wrt, spec, has_aux=False, kinds=None):
    """The Jacobian by forward mode: the jvp run once per basis tangent of the ``wrt`` leaves
    (a loop in the generated code), the tangents of the output assembled by ``jac_fwd``."""
    f = Forward(fn, kinds)
    params, body, ret = f.prepare(wrt)
    loc = ret.loc
    i, n, cols = f.namer.fresh("_i"), f.namer.fresh("_n"), f.namer.fresh("_cols")
    xs = gast.Tuple(elts=[ir.name(p) for p in f.wrt], ctx=gast.Load())
    head = [ir.assign(n, ir.call("max", [ir.call(f.helper("jac_size"), [xs]), ir.const(1)]),
                      loc),
            ir.assign(cols, ir.call(f.helper("stack")), loc)]
    seeds, start = [], ir.const(0)
    for p in f.wrt:
        seeds.append(ir.assign(f.tan(p), ir.call(f.helper("basis"), [ir.name(p), ir.name(i),
                                                                       ir.clone(start)]),
                               loc))
        size = ir.call(ir.attr(f.ref("np", __import__("numpy")), "size"), [ir.name(p)])
        start = size if isinstance(start, gast.Constant) and start.value == 0 else gast.BinOp(
            left=start, op=gast.Add(), right=size)
    out, aux = f.outputs(ret, body, has_aux)   # named first: a display gets its tangent
    new, init = f.tangent_body(body, params)
    new.append(ir.stmt(gast.Expr(value=ir.call(f.helper("push"), [
        ir.name(cols), f.out_tangent(out, init)])), loc))
    new = drop_dead(new, {out} | ({aux} if aux else set()), set(f.tangents.values()))
    saves, new, arg = ir.fresh_each_trip(seeds + new, params, f.namer, loc)
    loop = gast.For(target=ir.name(i, store=True), iter=ir.call("range", [ir.name(n)]),
                    body=new, orelse=[], type_comment=None)
    loop.loc = loc
    layout = ir.const(spec) if isinstance(spec, bool) else ir.name(f.ref("spec", spec))
    jac = f.namer.fresh("jac")
    xs = gast.Tuple(elts=[ir.name(arg[p]) for p in f.wrt], ctx=gast.Load())
    tail = [ir.assign(jac, ir.call(f.helper("jac_fwd"), [ir.name(cols), ir.name(out),
                                                          xs, layout]), loc)]
    result = gast.Tuple(elts=[ir.name(jac), ir.name(aux)], ctx=gast.Load()) if aux \
        else ir.name(jac)
    return f.function(f"{fn.node.name}_jacfwd", params, head + saves + [loop] + tail, result)


class _DropDefaults(gast.NodeTransformer):
    """Keyword arguments equal to their parameter's default, in calls of functions the rule
    table knows, are left out: ``np.sum(dx, axis=None, keepdims=False)`` reads ``np.sum(dx)``
    (and compiles under Numba, which knows fewer keywords)."""

    def __init__(self, refs):
        self.refs = refs

    def resolve(self, node):
        if isinstance(node, gast.Name):
            return self.refs.get(node.id, TEMPLATE_NAMESPACE.get(node.id))
        if isinstance(node, gast.Attribute):
            base = self.resolve(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        return None

    def visit_Call(self, node):
        self.generic_visit(node)
        try:
            rule = RULES.get(self.resolve(node.func))
        except TypeError:
            return node
        if rule is None or not rule.params:
            return node
        defaults = dict(rule.params)
        node.keywords = [k for k in node.keywords if not (
            isinstance(k.value, gast.Constant) and k.arg in defaults
            and defaults[k.arg] is not _NO_DEFAULT and type(k.value.value) is type(
                defaults[k.arg]) and k.value.value == defaults[k.arg])]
        return node


def drop_dead(stmts, live, pure):
    """``stmts`` without the assignments to ``pure`` names (tangents) that nothing reads
    later: a tangent set to zeros where paths merge, or of a value used only by a
    comparison."""
    out = []
    for s in reversed(stmts):
        if isinstance(s, gast.Assign) and s.targets[0].id in pure and \
                s.targets[0].id not in live and not getattr(s, "effect", False):
            continue
        if isinstance(s, gast.If):
            s.body = drop_dead(s.body, set(live), pure) or [gast.Pass()]
            s.orelse = drop_dead(s.orelse, set(live), pure)
            if all(isinstance(x, gast.Pass) for x in s.body) and not s.orelse and \
                    not isinstance(s.test, gast.Call):
                live = analysis.live_in([s], live)
                continue
        elif isinstance(s, (gast.For, gast.While)):
            head = analysis.live_in([s], live)
            s.body = drop_dead(s.body, head | analysis.reads(s), pure) or [gast.Pass()]
        live = analysis.live_in([s], live)
        out.append(s)
    return out[::-1]


__all__ = ["jvp", "jacfwd", "Forward", "drop_dead"]


# NumPy calls that make float arrays without a derivative rule (their values are constants)
_FLOAT_ARRAYS = {np.zeros, np.ones, np.empty, np.eye, np.identity, np.zeros_like,
                 np.ones_like, np.empty_like}
