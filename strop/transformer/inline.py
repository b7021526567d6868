"""Inlining: calls to user functions, nested defs, lambdas and strop transforms become the
callee's own normalized statements, its locals renamed apart (part of the normalizer).

Only the user's code is inlined (and strop's own helpers written to be): a function whose
source lives in an installed library (NumPy, SciPy, the standard library, anything under
site-packages) never is.  Its code is not written for strop (``try``, array-API dispatch,
caches), and its derivative is not strop's to guess: where nothing differentiates the call
stays a call, as written; under a derivative it is an error at the user's line
(``library_of``).
"""

import functools
import os
import site
import sys
import sysconfig
import types

import gast

from ..errors import LINEMAPS
from . import ir
from .check import check_complex
from .controlflow import canonicalize
from .generators import as_list_builder, is_generator
from .helper_updates import argument_for, updated_params
from .call_kinds import TREE, Local
from .parse import local_names, parse


_UNKNOWN = object()


class Scope:
    """The names of one function body being normalized (the top function or an inlined one)."""

    def __init__(self, parsed, node, names, parent=None):
        self.parsed, self.node, self.names, self.parent = parsed, node, names, parent


class Inliner:
    """The inlining half of the Normalizer (normalize.py), which it mixes in."""

    def refuse_complex(self):
        """Under a derivative (``inline_helpers``: normalize.py), the function being normalized
        must make no complex value (check.check_complex): checked once, when its first operand
        is made (operands.py), its inlined functions as they are inlined."""
        if self.inline_helpers and not getattr(self, "complex_checked", False):
            self.complex_checked = True
            check_complex(self.root)

    def local_function(self, user_name, scope):
        return self.scoped(self.functions, user_name, scope)

    def scoped(self, table, user_name, scope):
        """``table``'s entry for the local ``user_name`` names in ``scope`` (or an enclosing
        one), None if it names none there or is not in ``table``."""
        gen = self.scoped_name(user_name, scope)
        return table.get(gen) if gen is not None else None

    # --- inlining --------------------------------------------------------------------------
    def inline_object(self, fn, e, scope, into, extra=()):
        library = library_of(fn)
        if library is not None:   # an installed library's code: never inlined
            if self.inline_helpers:
                raise self.library_error(fn, library, e, scope)
            return self.library_call(e, scope, into)
        if fn in self.inlining:   # a recursion: unrolled where structure ends it
            self.recursive_calls = getattr(self, "recursive_calls", 0) + 1
            if self.inlining.count(fn) >= MAX_RECURSION_DEPTH or \
                    self.recursive_calls > MAX_RECURSIVE_CALLS:
                raise self.error(
                    f"recursive call to {fn.__name__} deeper than strop unrolls "
                    f"({MAX_RECURSION_DEPTH} levels, {MAX_RECURSIVE_CALLS} calls): strop "
                    f"inlines the functions a transformed function calls, and ends a recursion "
                    f"where the structure it walks decides its depth (isinstance of a list, "
                    f"tuple or dict, known when transforming), not a value", e, scope,
                    fix="write the recursion as a loop")
        parsed = parse(fn)
        updated = updated_params(fn)   # objects of the caller's it changes (helper_updates.py)
        if self.check is not None:
            self.check(parsed, updated)
        if self.inline_helpers:   # under a derivative (see refuse_complex)
            check_complex(parsed)
        names = {}
        callee = Scope(parsed, parsed.node, names)
        node, local = parsed.node, sorted(parsed.local_names)
        if is_generator(node):
            node = as_list_builder(node, parsed.location)
            local = sorted(local_names(node))
        node = canonicalize(node, self.namer, parsed.location)
        defaults = fn.__defaults__ or ()
        default_atoms = [self.constant_atom(v, f"{fn.__name__}_default") for v in defaults]
        kwdefaults = fn.__kwdefaults__ or {}
        kw_atoms = [self.constant_atom(kwdefaults[a.id], f"{fn.__name__}_default")
                    if a.id in kwdefaults else None for a in node.args.kwonlyargs]
        written_back = [(scope.names[a.id], p) for p, a in argument_for(e, fn, updated).items()
                        if isinstance(a, gast.Name) and a.id in scope.names]
        return self.inline(node, callee, e, scope, into, default_atoms, fn, local, extra,
                           kw_atoms, written_back)

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
        body = as_list_builder(node, parsed.location) if is_generator(node) else node
        canon = canonicalize(body, self.namer, parsed.location)
        defaults = [self.expr(d, closure) for d in node.args.defaults]
        kw_defaults = [self.expr(d, closure) if d is not None else None
                       for d in node.args.kw_defaults]
        return self.inline(canon, callee, e, scope, into, defaults, node,
                           sorted(local_names(body)), (), kw_defaults)

    def inline(self, node, callee, e, scope, into, defaults, key, local_names, extra=(),
               kw_defaults=None, written_back=()):
        """``kw_defaults``: atoms of the keyword-only parameters' defaults (None: none);
        ``written_back``: (the caller's name, parameter) where the function changes the
        caller's object in place: the name is bound to the parameter's last value after."""
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
            for name, p in written_back:
                self.emit(ir.assign(name, ir.name(callee.names[p])))
        finally:
            self.inlining.pop()
            self.inline_result, self.loc = saved
        return self.to_name(result, into) if into else result   # (a nested def: its name)

    def library_error(self, fn, library, e, scope):
        """The error for a call of the library function ``fn`` under a derivative."""
        name = _spelled(fn, e)
        where = fn.__code__.co_filename if hasattr(fn, "__code__") else library
        return self.error(
            f"`{name}` is {library}'s code ({where}), and strop has no derivative rule for it "
            f"yet: strop differentiates the functions a user writes by reading their source, "
            f"never an installed library's", e, scope,
            fix="write it with NumPy functions strop differentiates (see docs/rules.md); or "
            + f"wrap the call in a function decorated with strop.custom_vjp and give its "
              f"derivative with .defvjp; or, if no derivative should flow through it, "
              f"`strop.lax.stop_gradient({name}(...))`")

    def library_call(self, e, scope, into):
        """A call of a library function where nothing differentiates: the call as written
        (compiled code runs what Numba cannot compile as Python, vmap runs it lane by lane)."""
        if any(isinstance(a, gast.Starred) for a in e.args):
            raise self.unknown_star(e, scope)
        callee = self.expr(e.func, scope)
        args = [self.expr(a, scope) for a in e.args]
        kws = [(k.arg, self.expr(k.value, scope)) for k in e.keywords]
        for atom in args + [v for _, v in kws]:   # a lambda given to it runs as written
            if isinstance(atom, gast.Name) and atom.id in self.functions:
                self.materialize(atom.id, e, scope)
        return self.to_name(ir.call(callee, args, kws), into)

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
            known = self.static_local(name, closure, node)
            if known is not _UNKNOWN:   # a local naming a function: the function itself
                cells.append(types.CellType(known))
                continue
            gen = self.scoped_name(name, closure)
            kinds = None if gen in self.partials else self.kinds_at(
                [self.load(name, closure, node)])
            cell = types.CellType(Local(kinds[0] if kinds else TREE))
            self.lifted[id(cell)] = (cell, name, closure, node)
            cells.append(cell)
        fn = types.FunctionType(code, outer.__globals__, code.co_name, None, tuple(cells))
        if node.args.defaults or node.args.kw_defaults and any(node.args.kw_defaults):
            raise self.error("a local function with default values given to a transform is "
                             "not supported", e, scope, fix="pass every argument explicitly")
        return fn

    def static_local(self, name, scope, node):
        """What the local ``name`` holds where that is known when transforming (a function
        passed in or defined here, a module, a constant object), else _UNKNOWN: a lifted
        function's transform then sees the function (``vmap(lambda y: kernel(x, y))`` with
        ``kernel`` a parameter) where a placeholder would hide it."""
        if not _is_local(name, scope):
            return _UNKNOWN
        gen = self.scoped_name(name, scope)
        if gen in self.functions:
            return self.lift(gen, node, scope)
        if gen in self.partials or gen in self.constants:
            return _UNKNOWN
        if gen in self.refs and ir.is_constant_object(self.refs[gen]):
            return self.refs[gen]
        return _UNKNOWN

    def scoped_name(self, user_name, scope):
        """The generated name the local ``user_name`` has in ``scope`` (or an enclosing
        one), None if it is not a local there."""
        s = scope
        while s is not None:
            if user_name in s.names:
                return s.names[user_name]
            s = s.parent
        return None

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


# library functions strop has a twin of, which transformed code runs in their place (as its
# own code: inlined): module -> {name: twin}.  strop.scipy.special registers SciPy's.
LIBRARY_TWINS = {}


def library_twin(obj):
    """strop's twin of the library function ``obj`` (``scipy.special.logsumexp``), else None."""
    for module, twins in LIBRARY_TWINS.items():
        library = sys.modules.get(module)
        if library is not None:
            for name, twin in twins.items():
                if getattr(library, name, None) is obj:
                    return twin
    return None


@functools.lru_cache(maxsize=None)
def _library_roots():
    """The folders installed code lives in: the standard library and site-packages."""
    paths = sysconfig.get_paths()
    roots = [paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    try:
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:   # (an embedded interpreter's site may lack them)
        pass
    roots = {os.path.realpath(r) for r in roots if r}
    return tuple(sorted(r + os.sep for r in roots if r != os.sep))


MAX_RECURSION_DEPTH = 16    # a recursion over a pytree goes as deep as the tree
MAX_RECURSIVE_CALLS = 256


def library_of(fn):
    """The top-level package of the installed library whose code ``fn`` is, or None for the
    user's code (modules, scripts, tests, notebooks), strop's own and the code it generated."""
    module = getattr(fn, "__module__", None) or ""
    top = module.split(".")[0]
    if top in ("strop", "strop_generated"):   # strop's helpers, and the code it generated
        return None
    if top in ir.LIBRARIES:
        return top
    code = getattr(fn, "__code__", None)
    filename = getattr(code, "co_filename", "") or ""
    if not filename or filename in LINEMAPS or filename.startswith("<"):
        return None   # made by exec, a notebook cell or strop
    path = os.path.realpath(filename)
    parts = path.split(os.sep)
    if any(path.startswith(root) for root in _library_roots()) \
            or "site-packages" in parts or "dist-packages" in parts:
        return top or os.path.splitext(os.path.basename(path))[0]
    return None


def _spelled(fn, e):
    """How the user's call names ``fn`` (``scipy.special.logsumexp``), else its module's."""
    if not getattr(e.func, "normalized", False):
        try:
            return gast.unparse(e.func).strip()
        except Exception:   # noqa: BLE001 - a name made by the normalizer
            pass
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', fn)}"
