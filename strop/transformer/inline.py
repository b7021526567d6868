"""Inlining: calls to user functions, nested defs, lambdas and strop transforms become the
callee's own normalized statements, its locals renamed apart (part of the normalizer)."""

import types

import gast

from . import ir
from .controlflow import canonicalize
from .parse import local_names, parse


class _Local:
    """What a lifted local function's closure cell holds for a local of the function being
    transformed: never read, the local itself is passed where the lifted code is inlined."""


class Scope:
    """The names of one function body being normalized (the top function or an inlined one)."""

    def __init__(self, parsed, node, names, parent=None):
        self.parsed, self.node, self.names, self.parent = parsed, node, names, parent


class Inliner:
    """The inlining half of the Normalizer (normalize.py), which it mixes in."""

    def local_function(self, user_name, scope):
        s = scope
        while s is not None:
            if user_name in s.names:
                return self.functions.get(s.names[user_name])
            s = s.parent
        return None

    # --- inlining --------------------------------------------------------------------------
    def inline_object(self, fn, e, scope, into, extra=()):
        if fn in self.inlining:
            raise self.error(f"recursive call to {fn.__name__}: strop inlines the functions a "
                             "transformed function calls", e, scope,
                             fix="write the recursion as a loop")
        parsed = parse(fn)
        if self.check is not None:
            self.check(parsed)
        names = {}
        callee = Scope(parsed, parsed.node, names)
        node = canonicalize(parsed.node, self.namer, parsed.location)
        defaults = fn.__defaults__ or ()
        default_atoms = [self.constant_atom(v, f"{fn.__name__}_default") for v in defaults]
        kwdefaults = fn.__kwdefaults__ or {}
        kw_atoms = [self.constant_atom(kwdefaults[a.id], f"{fn.__name__}_default")
                    if a.id in kwdefaults else None for a in node.args.kwonlyargs]
        return self.inline(node, callee, e, scope, into, default_atoms, fn,
                           sorted(parsed.local_names), extra, kw_atoms)

    def inline_ast(self, node, closure, e, scope, into):
        if node in self.inlining:
            raise self.error("recursive call of a nested function is not supported", e, scope)
        parsed = closure.parsed
        if isinstance(node, gast.Lambda):
            ret = gast.copy_location(gast.Return(value=node.body), node.body)
            node = gast.copy_location(gast.FunctionDef(
                name="lambda", args=node.args, body=[ret], decorator_list=[], returns=None,
                type_comment=None, type_params=[]), node)
        callee = Scope(parsed, node, {}, parent=closure)
        canon = canonicalize(node, self.namer, parsed.location)
        defaults = [self.expr(d, closure) for d in node.args.defaults]
        kw_defaults = [self.expr(d, closure) if d is not None else None
                       for d in node.args.kw_defaults]
        return self.inline(canon, callee, e, scope, into, defaults, node,
                           sorted(local_names(node)), (), kw_defaults)

    def inline(self, node, callee, e, scope, into, defaults, key, local_names, extra=(),
               kw_defaults=None):
        """``kw_defaults``: atoms of the keyword-only parameters' defaults (None: none)."""
        args = node.args
        for n in local_names:
            callee.names[n] = self.namer.fresh(n)
            self.user_names[callee.names[n]] = n   # (messages name the user's variable)
        params = [a.id for a in args.posonlyargs + args.args]
        kwonly = [a.id for a in args.kwonlyargs]
        values = [gast.Starred(value=self.expr(a.value, scope), ctx=gast.Load())
                  if isinstance(a, gast.Starred) else self.expr(a, scope) for a in e.args]
        values = self.fill(values + list(extra), params,
                           [k.arg for k in e.keywords if k.arg in params],
                           args.vararg is not None, e, scope)
        bound = dict(zip(params, values))
        if args.vararg is not None:
            bound[args.vararg.id] = gast.Tuple(elts=values[len(params):], ctx=gast.Load())
        elif len(values) > len(params):
            raise self.error(f"too many arguments: {len(values)} given, {len(params)} expected",
                             e, scope)
        extra_kws = {}
        for k in e.keywords:
            if k.arg in bound or k.arg not in params + kwonly and args.kwarg is None:
                raise self.error(f"unexpected keyword argument {k.arg!r}", e, scope)
            (bound if k.arg in params + kwonly else extra_kws)[k.arg] = self.expr(k.value, scope)
        if args.kwarg is not None:   # def f(**kw): the keywords no parameter takes, as a dict
            bound[args.kwarg.id] = gast.Dict(keys=[ir.const(k) for k in extra_kws],
                                             values=list(extra_kws.values()))
        for p, d in zip(params[len(params) - len(defaults):], defaults):
            bound.setdefault(p, d)
        for p, d in zip(kwonly, kw_defaults or [None] * len(kwonly)):
            if d is not None:
                bound.setdefault(p, d)
        missing = [p for p in params + kwonly if p not in bound]
        if missing:
            raise self.error(f"missing argument(s) {', '.join(missing)}", e, scope)
        stored = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
                  and isinstance(n.ctx, (gast.Store, gast.Del))}
        for p in params + kwonly + [a.id for a in (args.vararg, args.kwarg) if a is not None]:
            value = bound[p]
            if isinstance(value, gast.Attribute) and self.is_ref(value):   # np.tanh
                obj = self.ref_object(value)
                value = ir.name(self.bind_ref(getattr(obj, "__name__", p), obj))
            if isinstance(value, gast.Name) and (value.id in self.refs
                                                 or value.id in self.functions):
                callee.names[p] = value.id   # a function passed in: call it directly
            elif isinstance(value, gast.Name) and getattr(e, "alias", False) and not any(
                    isinstance(n, gast.Name) and n.id == p and isinstance(n.ctx, gast.Store)
                    for n in gast.walk(node)):
                callee.names[p] = value.id   # strop.lax's operand itself (lax_lower.py)
            else:
                self.emit(ir.assign(callee.names[p], value))
                if isinstance(value, gast.Constant) and p not in stored:
                    self.constants[callee.names[p]] = value.value   # for static_test
        saved = getattr(self, "inline_result", None), self.loc
        self.inlining.append(key)
        self.inline_result = ir.const(None)
        try:
            for s in node.body:
                self.loc = callee.parsed.location(s)
                self.stmt(s, callee)
            result = self.inline_result
        finally:
            self.inlining.pop()
            self.inline_result, self.loc = saved
        return self.to_name(result, into) if into else result

    def constant_atom(self, value, base):
        if value is None or isinstance(value, (bool, int, float, str)):
            return ir.const(value)
        return ir.name(self.bind_ref(base, value))

    def materialize(self, gen, e, scope):
        """Define the local function ``gen`` in the generated code, for a call that is not
        inlined (``functools.reduce(lambda a, b: ..., xs)``): it runs as written."""
        node, closure = self.functions[gen]
        if not isinstance(node, gast.Lambda):
            raise self.error("a nested function passed to a function strop does not inline is "
                             "not supported", e, scope,
                             fix="pass a lambda, or define the function at module level")
        lam = ir.clone(node)
        params = {a.id for a in lam.args.args}

        class Rename(gast.NodeTransformer):
            def visit_Name(inner, n):   # noqa: N805  (the normalizer is `self`)
                if isinstance(n.ctx, gast.Load) and n.id not in params:
                    return self.load(n.id, closure, n)
                return n
        self.emit(ir.assign(gen, Rename().visit(lam)))

    # --- local functions given to a transform: grad(g) with g a nested def ----------------
    def lift(self, gen, e, scope):
        """The local function ``gen`` as a function object a transform can take: made from its
        code, its closure cells holding the enclosing function's cells, or placeholders for its
        locals (``lifted`` remembers which: where the transform's code is inlined, they are
        passed the locals themselves, so that derivatives flow through them too)."""
        node, closure = self.functions[gen]
        outer = closure.parsed.fn
        code = _nested_code(outer.__code__, node)
        if code is None:
            raise self.error("cannot find the code of this local function", e, scope,
                             fix="define the function at module level")
        cells = []
        for name in code.co_freevars:
            if name in closure.parsed.cells and not _is_local(name, closure):
                cells.append(closure.parsed.cells[name])
                continue
            cell = types.CellType(_Local())
            self.lifted[id(cell)] = (cell, name, closure, node)
            cells.append(cell)
        fn = types.FunctionType(code, outer.__globals__, code.co_name, None, tuple(cells))
        if node.args.defaults or node.args.kw_defaults and any(node.args.kw_defaults):
            raise self.error("a local function with default values given to a transform is "
                             "not supported", e, scope, fix="pass every argument explicitly")
        return fn

    def free_or_local(self, var):
        """The atom passed for the free variable ``var`` of inlined transform code."""
        if var.is_cell and id(var.owner) in self.lifted:
            _, name, closure, node = self.lifted[id(var.owner)]
            return self.load(name, closure, node)
        return self.free_atom(var)


def _is_local(name, scope):
    while scope is not None:
        if name in scope.names:
            return True
        scope = scope.parent
    return False


def _nested_code(code, node):
    """The code object compiled from the nested def or lambda ``node``, found among the
    constants of ``code`` (at any depth) by its name, line and parameters."""
    name = "<lambda>" if isinstance(node, gast.Lambda) else node.name
    params = tuple(a.id for a in node.args.posonlyargs + node.args.args)
    for const in code.co_consts:
        if not isinstance(const, types.CodeType):
            continue
        if (const.co_name == name and const.co_firstlineno == node.lineno
                and const.co_varnames[:const.co_argcount] == params):
            return const
        found = _nested_code(const, node)
        if found is not None:
            return found
    return None
