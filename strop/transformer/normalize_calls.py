"""A-normal form of calls (part of the normalizer, which mixes it in): ``.at[...]`` updates,
methods resolved to NumPy functions, user functions and strop transforms inlined."""
import functools
import inspect
import os
import warnings

import gast
import numpy as np

from .. import runtime
from ..config import config
from ..errors import StropWarning, TransformError, user_stacklevel
from . import ir
from .parse import BUILTIN, CLOSURE, GLOBAL
from .controlflow import ITERABLE
from .inline import library_twin
from .normalize_exprs import is_at

# Array methods that are NumPy functions of the array: ``x.sum(0)`` is ``np.sum(x, 0)``.
# ``copy``, ``astype``, ``item`` and ``tolist`` stay methods (lists and dicts have ``copy`` too).
ARRAY_METHODS = {m: getattr(np, m) for m in (
    "sum", "mean", "prod", "max", "min", "std", "var", "cumsum", "cumprod", "dot", "ravel",
    "squeeze", "swapaxes", "clip", "round", "any", "all", "argmax", "argmin", "argsort",
    "trace", "diagonal", "nonzero", "repeat", "take", "conj", "conjugate", "ptp")
    if hasattr(np, m)}
ARRAY_METHODS.update(flatten=np.ravel)
VARARG_METHODS = {"reshape": np.reshape, "transpose": np.transpose}   # x.reshape(2, 3)

# Mutating methods on local objects, as functional updates: name -> (helper, returns a value)
AT_OPS = {"set": "at_set", "add": "at_add", "multiply": "at_multiply", "mul": "at_multiply",
          "min": "at_min", "max": "at_max", "get": "at_get"}

# NumPy's functions that make an array, and where their dtype goes when passed by position:
# with 64-bit values off, one made without a dtype is narrowed to 32 bits (DESIGN: the
# 64-bit policy holds inside functions)
MAKERS = {np.ones: 1, np.zeros: 1, np.empty: 1, np.full: 2, np.eye: 3, np.identity: 1,
          np.linspace: 5, np.arange: 3, np.array: 1, np.asarray: 1}

# with 64-bit values off, a dtype asked for explicitly: a 64-bit one is made 32-bit, with a
# warning (as JAX warns); Python's number types name the default types, 32-bit, silently
WIDE_DTYPES = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32,
               np.dtype(np.uint64): np.uint32, np.dtype(np.complex128): np.complex64}
NUMBER_TYPES = {float: np.float32, int: np.int32, complex: np.complex64}

# builtins that make an iterator: a value made by one in transformed code is made a list
ITERATORS = (zip, enumerate, reversed)


# strop's modules written as plain NumPy for the user's functions to call: inlined like them
INLINED_MODULES = ("strop.demo", "strop.nn", "strop.scipy")


def _as_comprehension(obj, e, namer):
    """``map(f, xs, ys)`` as ``[f(a, b) for a, b in zip(xs, ys)]``; ``filter(f, xs)`` as
    ``[a for a in xs if f(a)]``."""
    items = [namer.temp("_item") for _ in e.args[1:]]
    target = ir.name(items[0], store=True) if len(items) == 1 else gast.Tuple(
        elts=[ir.name(i, store=True) for i in items], ctx=gast.Store())
    source = e.args[1] if len(items) == 1 else gast.Call(
        func=ir.name("zip"), args=list(e.args[1:]), keywords=[])
    applied = gast.Call(func=e.args[0], args=[ir.name(i) for i in items], keywords=[])
    if obj is filter:
        element, tests = ir.name(items[0]), [applied]
    else:
        element, tests = applied, []
    made = gast.ListComp(elt=element, generators=[gast.comprehension(
        target=target, iter=source, ifs=tests, is_async=0)])
    return gast.copy_location(made, e)


def _as_loop(e, namer):
    """(statements, the name of their result): ``functools.reduce(f, xs[, init])``, its
    loop in the form controlflow.py gives loops: ``_f = f; _seq = iterable(xs); _acc = init
    (or _seq[0]); for _i in range(len(_seq)) (or from 1): _item = _seq[_i]; _acc =
    _f(_acc, _item)``."""
    fn, seq, acc, item, i = (namer.temp(n) for n in ("_reduce_f", "_seq", "_acc", "_item", "_i"))
    first = e.args[2] if len(e.args) == 3 else ir.subscript(ir.name(seq), ir.const(0))
    bounds = [ir.call("len", [ir.name(seq)])]
    bounds = bounds if len(e.args) == 3 else [ir.const(1)] + bounds
    body = [ir.assign(item, ir.subscript(ir.name(seq), ir.name(i))),
            ir.assign(acc, gast.Call(func=ir.name(fn), args=[ir.name(acc), ir.name(item)],
                                     keywords=[]))]
    out = [ir.assign(fn, e.args[0]), ir.assign(seq, ir.call(ITERABLE, [e.args[1]])),
           ir.assign(acc, first),
           gast.For(target=ir.name(i, store=True), iter=ir.call("range", bounds), body=body,
                    orelse=[], type_comment=None)]
    for s in out:
        for n in gast.walk(s):
            gast.copy_location(n, e)
    return out, acc


def _made(atom):
    """A copy of an atom strop made, marked so: not a user name to look up."""
    atom = ir.clone(atom)
    atom.normalized = True
    return atom


def _is_user_function(obj):
    if not inspect.isfunction(obj):
        return False
    module = getattr(obj, "__module__", "") or ""
    return not (module.startswith("numpy") or module == "strop" or module.startswith("strop.")
                and not module.startswith(INLINED_MODULES))


class Calls:
    """The calls of Normalizer (a mixin: the names it reads are set by Normalizer)."""

    def with_defaults(self, obj, e, scope):
        """A transform called inside with parameters left to their defaults: the call with
        those passed (its generated code has none), and for vmap the one that leaves them
        unmapped (JAX maps only the arguments passed)."""
        if not hasattr(obj, "defaulted") or any(isinstance(a, gast.Starred) for a in e.args):
            return obj, e   # custom rules' transforms take what they get
        missing = obj.defaulted(len(e.args), {k.arg for k in e.keywords})
        if not missing:
            return obj, e
        params = list(obj.signature.parameters.values())
        if hasattr(obj, "with_unmapped"):
            obj = obj.with_unmapped(missing, len(e.args))
        keywords = list(e.keywords)
        for p in (params[i] for i in missing):
            atom = self.constant_atom(p.default, f"{p.name}_default")
            atom.normalized = True   # a generated name already: not the user's to look up
            keywords.append(gast.keyword(arg=p.name, value=atom))
        return obj, gast.Call(func=e.func, args=e.args, keywords=keywords)

    def is_partial(self, value, scope):
        """Whether ``value`` is a call of functools.partial with plain arguments."""
        return isinstance(value, gast.Call) and bool(value.args) and isinstance(
            value.func, (gast.Name, gast.Attribute)) and self._names_ref(value.func, scope) \
            and self.ref_object(self.expr(value.func, scope)) is functools.partial and not any(
                isinstance(a, gast.Starred) for a in value.args) and not any(
                k.arg is None for k in value.keywords)

    def bind_partial(self, user_name, value, scope):
        """``f = functools.partial(g, *args, **kws)``, ``g`` a function strop can see into
        and ``f`` bound nowhere else: the bound values are kept in names of their own and a
        call ``f(x)`` becomes ``g(*args, x, **kws)`` (so derivatives flow into what is
        bound).  False for other values, which are assigned as they are."""
        if not self.is_partial(value, scope):
            return False
        target = self.expr(value.args[0], scope)
        if not self.bound_once(user_name, scope) or not (
                self.is_ref(target) and callable(self.ref_object(target)) or
                isinstance(target, gast.Name) and target.id in self.functions):
            return False
        target.normalized = True
        self.partials[self.store_name(user_name, scope)] = (
            target, [self.kept(a, scope) for a in value.args[1:]],
            [(k.arg, self.kept(k.value, scope)) for k in value.keywords])
        return True

    def bound_once(self, user_name, scope):
        """Whether the function of ``scope`` assigns ``user_name`` in one place only."""
        return sum(isinstance(n, gast.Name) and n.id == user_name and
                   isinstance(n.ctx, gast.Store) for n in gast.walk(scope.node)) == 1

    def kept(self, node, scope):
        """The value of ``node`` as bound now, in a name no later statement rebinds (a
        partial's bound values)."""
        atom = self.expr(node, scope)
        if isinstance(atom, gast.Name) and not self.is_ref(atom) and \
                atom.id not in self.functions:
            atom = self.to_name(atom, force=True)
        atom.normalized = True
        return atom

    def made_partial(self, gen):
        """``gen = functools.partial(...)`` emitted where the partial is used as a value."""
        target, args, kws = self.partials[gen]
        made = ir.call(ir.name(self.bind_ref("partial", functools.partial)),
                       [ir.clone(target)] + [ir.clone(a) for a in args],
                       [(k, ir.clone(v)) for k, v in kws])
        self.emit(ir.assign(gen, made))

    def call(self, e, scope, into):
        e = self.spread(e, scope)
        func = e.func
        deferred = self.scoped(self.deferred, func.id, scope) if isinstance(
            func, gast.Name) else None
        if deferred is not None:   # f(x) of f = vmap(partial(g, p)): vmap(partial(g, p))(x)
            e = gast.Call(func=ir.clone(deferred), args=e.args, keywords=e.keywords)
            func = e.func
        bound = self.scoped(self.partials, func.id, scope) if isinstance(func, gast.Name) \
            else None
        if bound is not None:   # f(x) of f = partial(g, a, k=v): g(a, x, k=v)
            target, args, kws = bound
            given = {k.arg for k in e.keywords}
            kws = [(k, _made(v)) for k, v in kws if k not in given]
            e = gast.Call(func=_made(target), args=[_made(a) for a in args] + e.args,
                          keywords=[gast.keyword(arg=k, value=v) for k, v in kws] + e.keywords)
            func = e.func
        if isinstance(func, gast.Call) and func.args and self.is_partial(func.args[0], scope):
            moved = self.transform_of_partial(func, e, scope)
            if moved is not None:   # vmap(partial(f, p))(xs): vmap(f, (None, 0))(p, xs)
                e = moved
                func = e.func
        if isinstance(func, gast.Call) and self.is_partial(func, scope):
            # partial(g, a, k=v)(x): g(a, x, k=v)
            given = {k.arg for k in e.keywords}
            e = gast.Call(func=func.args[0], args=func.args[1:] + e.args, keywords=[
                k for k in func.keywords if k.arg not in given] + e.keywords)
            func = e.func
        # x.at[idx].set(v): a functional update
        if isinstance(func, gast.Attribute) and is_at(func.value):
            if func.attr not in AT_OPS:
                raise self.error(f".at[...].{func.attr} is not supported; use one of "
                                 + ", ".join(AT_OPS), e, scope)
            base = self.expr(func.value.value.value, scope)
            index = self.index_value(func.value.slice, scope)
            args = [base, index] + [self.expr(a, scope) for a in e.args]
            kws = [(k.arg, self.expr(k.value, scope)) for k in e.keywords]
            return self.to_name(ir.call(self.helper(AT_OPS[func.attr]), args, kws), into)
        # a method of an argument of a registered pytree class (known from its structure):
        # the class's function, self passed explicitly (inlined, so differentiated)
        method = self.class_method(func, scope)
        if method is not None:
            atom = ir.name(self.bind_ref(func.attr, method))
            atom.normalized = True
            return self.call(gast.Call(func=atom, args=[func.value] + list(e.args),
                                       keywords=e.keywords), scope, into)
        # a method of a user object known while transforming: its function, the object
        # bound as self (inlined, so differentiated)
        held = self.object_method(func, scope)
        if held is not None:
            method, instance = held
            atom = ir.name(self.bind_ref(func.attr, method))
            atom.normalized = True
            return self.call(gast.Call(func=atom, args=[instance] * (instance is not None)
                                       + list(e.args), keywords=e.keywords), scope, into)
        # a method of a local value
        if isinstance(func, gast.Attribute) and not self._names_ref(func.value, scope):
            obj = self.expr(func.value, scope)
            args = [self.expr(a, scope) for a in e.args]
            kws = [(k.arg, self.expr(k.value, scope)) for k in e.keywords]
            if func.attr in VARARG_METHODS and len(args) > 1:
                args = [gast.Tuple(elts=args, ctx=gast.Load())]
            if func.attr == "astype":
                args, kws = self.requested_dtype("astype", 0, args, kws, e, scope)
            np_fn = ARRAY_METHODS.get(func.attr) or VARARG_METHODS.get(func.attr)
            if np_fn is not None:
                target = ir.attr(self.bind_ref("np", np), np_fn.__name__)
                return self.to_name(ir.call(target, [obj] + args, kws), into)
            if func.attr == "pop" and isinstance(func.value, gast.Name) and is_local(
                    func.value.id, scope):
                result = self.to_name(ir.call(self.helper("item_of"), [obj] + args), into)
                self.emit(ir.assign(self.store_name(func.value.id, scope),
                                    ir.call(self.helper("pop_item"), [obj] + args)))
                return result
            return self.to_name(ir.call(ir.attr(obj, func.attr), args, kws), into)
        # a local function (nested def or lambda, maybe passed in as an argument)
        if isinstance(func, gast.Lambda):
            return self.inline_ast(func, scope, e, scope, into)
        if isinstance(func, gast.Name):
            local = self.local_function(func.id, scope)
            if local is not None:
                node, closure = local
                return self.inline_ast(node, closure, e, scope, into)
        callee = self.expr(func, scope)
        if isinstance(callee, gast.Name) and callee.id in self.functions:   # make(2.0)(x)
            node, closure = self.functions[callee.id]
            return self.inline_ast(node, closure, gast.Call(func=callee, args=e.args,
                                                            keywords=e.keywords), scope, into)
        obj = self.ref_object(callee) if self.is_ref(callee) or isinstance(callee, gast.Name) \
            else None
        if isinstance(obj, functools.partial) and inspect.isfunction(obj.func):
            # a partial object a global or closure holds: its function called with what it
            # binds (constants of the code) before the call's arguments
            given = {k.arg for k in e.keywords}

            def bound(value, base):
                atom = self.constant_atom(value, base)
                atom.normalized = True
                return atom
            fn = bound(obj.func, obj.func.__name__)
            return self.call(gast.Call(
                func=fn, args=[bound(a, "bound") for a in obj.args] + list(e.args),
                keywords=[gast.keyword(arg=k, value=bound(v, k))
                          for k, v in obj.keywords.items() if k not in given] + e.keywords),
                scope, into)
        twin = library_twin(obj) if obj is not None else None
        if twin is not None:   # scipy.special.logsumexp: strop.scipy's, inlined in its place
            atom = self.constant_atom(twin, twin.__name__)
            atom.normalized = True
            return self.call(gast.Call(func=atom, args=e.args, keywords=e.keywords), scope, into)
        if getattr(obj, "__strop_debug__", None):   # strop.debug: a call for its effect
            return self.debug_call(obj.__strop_debug__, e, scope, into)
        if getattr(obj, "__strop_lax__", None):   # strop.lax: the Python it means
            return self.lax_call(obj, e, scope, into)
        if getattr(obj, "__strop_setting__", False) and not e.args and not e.keywords:
            # a value of the settings the code is made for (dtypes.default_float())
            return self.to_name(self.constant_atom(obj(), obj.__name__), into)
        if (obj is map and len(e.args) >= 2 or obj is filter and len(e.args) == 2) and \
                not e.keywords and \
                not any(isinstance(a, gast.Starred) for a in e.args):
            # map(f, xs) as [f(x) for x in xs]: f inlined at each item (a list, which what
            # consumes the iterator reads as it would)
            return self.expr(_as_comprehension(obj, e, self.namer), scope, into)
        if obj is functools.reduce and len(e.args) in (2, 3) and not e.keywords and \
                not any(isinstance(a, gast.Starred) for a in e.args):
            # reduce(f, xs, init) as the loop it means: f inlined at each item, the loop
            # unrolled where xs is known (a lambda calling a local function stays inlinable)
            stmts, acc = _as_loop(e, self.namer)
            for s in stmts:
                self.stmt(s, scope)
            return self.expr(gast.copy_location(ir.name(acc), e), scope, into)
        made = self.tree_call(obj, e, scope, into)
        if made is not None:   # tree_map / tree_leaves of a tree of known structure
            return made
        if obj is dict and not e.args:
            return self.to_name(gast.Dict(keys=[ir.const(k.arg) for k in e.keywords],
                                          values=[self.expr(k.value, scope) for k in e.keywords]),
                                into)
        pairs = self.jvp_pairs(obj, e, scope)
        if pairs is not None:   # jvp(f, primals, tangents) in code being differentiated
            return self.jvp_call(obj, e, pairs, scope, into)
        if getattr(obj, "__strop_transform__", False):   # grad(g) inside: made now
            return self.made_transform(obj, e, scope, into)
        if hasattr(obj, "staged") and hasattr(obj, "call_positional"):   # vmap(g)(x) inside
            return self.inline_transform(obj, e, scope, into)
        if getattr(obj, "__strop_custom__", False) and not self.keep_custom:
            # a custom_jvp/custom_vjp function where nothing differentiates: its primal
            return self.inline_object(obj.fun, e, scope, into)
        if _is_user_function(obj):
            return self.inline_object(obj, e, scope, into)
        if self.inline_helpers and _is_helper_without_rule(obj) and not (
                obj is runtime.each and self.runs_underived(e.args[0], scope)):
            where = self.loc   # the statement calling it: a user line, or generated code's
            try:
                return self.inline_object(obj, e, scope, into)
            except TransformError as error:   # said at the line that called it, not in strop
                if "strop" + os.sep + "runtime" not in str(error):
                    raise
                raise TransformError(
                    f"strop cannot differentiate through its helper {obj.__name__}() here "
                    f"(what a transform inside this line made: e.g. vmap running a call lane by "
                    f"lane)", where,
                    fix="compute that part outside the differentiated function, or write it "
                        "without the inner transform (a batched expression instead of vmap)") \
                    from None
        if any(isinstance(a, gast.Starred) for a in e.args):
            raise self.unknown_star(e, scope)
        args = [self.expr(a, scope) for a in e.args]
        kws = [(k.arg, self.expr(k.value, scope)) for k in e.keywords]
        for atom in args + [v for _, v in kws]:   # a lambda given to a call left as it is
            if isinstance(atom, gast.Name) and atom.id in self.functions:
                self.materialize(atom.id, e, scope)
        args, kws = self.array_operands(obj, e.args, args, kws)
        args, kws = self.requested_dtype(obj, _dtype_position(obj), args, kws, e, scope)
        if kws and isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields"):
            args, kws = _fields_by_position(obj, args, kws)   # Layer(w=w, b=b) as Layer(w, b)
        if isinstance(obj, type) and issubclass(obj, np.generic) and np.dtype(
                obj) in WIDE_DTYPES and not config.read("enable_x64"):   # np.float64(x)
            callee = self.dtype_atom(callee, f"{obj.__name__}()", e, scope)
        if any(obj is it for it in ITERATORS):
            # an iterator as a value: a list, which its consumer and its adjoint can both read
            made = self.to_name(ir.call(callee, args, kws))
            return self.to_name(ir.call("list", [made]), into)
        if _makes_wide(obj, args, kws):
            made = self.to_name(ir.call(callee, args, kws))
            return self.to_name(ir.call(self.helper("narrow"), [made]), into)
        return self.to_name(ir.call(callee, args, kws), into)

    def requested_dtype(self, fn, at, args, kws, e, scope):
        """The arguments of a call of ``fn`` that takes a dtype (``dtype=``, or by position
        ``at``), the dtype as ``dtype_atom`` makes it."""
        what = fn if isinstance(fn, str) else getattr(fn, "__name__", "this call")
        kws = [(k, self.dtype_atom(v, what, e, scope) if k == "dtype" else v) for k, v in kws]
        if at is not None and at < len(args):
            args = list(args)
            args[at] = self.dtype_atom(args[at], what, e, scope)
        return args, kws

    def dtype_atom(self, atom, what, e, scope):
        """A dtype written in the code (``np.float64``, ``"int64"``, ``float``) as the NumPy
        type it names (Numba takes no strings), under the 64-bit policy: with 64-bit values
        off, a 64-bit type asked for is its 32-bit counterpart, with a warning (as JAX warns),
        and Python's number types name the default ones, 32-bit.  Anything else as it is."""
        value = atom.value if isinstance(atom, gast.Constant) else self.ref_object(atom) \
            if self.is_ref(atom) or isinstance(atom, gast.Name) and atom.id in ("float", "int",
                                                                              "complex") \
            else None
        if value is None or isinstance(value, bool):
            return atom
        x64 = config.read("enable_x64")
        if isinstance(value, type) and value in NUMBER_TYPES:
            dt = np.dtype(value if x64 else NUMBER_TYPES[value])
        else:
            try:
                dt = np.dtype(value)
            except TypeError:
                return atom
            if not x64 and dt in WIDE_DTYPES:
                warnings.warn(StropWarning(
                    f"explicitly requested dtype {dt} in {what} is not available with 64-bit "
                    f"values off, and is truncated to {np.dtype(WIDE_DTYPES[dt])}",
                    scope.parsed.location(e),
                    fix="turn 64-bit values on: strop.config.update('enable_x64', True) or "
                        "STROP_ENABLE_X64=1 (as JAX's jax_enable_x64); or ask for the 32-bit "
                        "dtype"), stacklevel=user_stacklevel())
                dt = np.dtype(WIDE_DTYPES[dt])
            elif not isinstance(value, str) or dt.kind not in "biufc":
                return atom
        return ir.attr(self.bind_ref("np", np), dt.type.__name__)

    def debug_call(self, kind, e, scope, into):
        """``debug.print(fmt, *args)`` / ``debug.callback(fn, *args)``: a call of an effect
        made for this site (runtime/effects.py), with the values; its result is None."""
        from ..runtime.effects import site
        if not e.args or any(isinstance(a, gast.Starred) for a in e.args):
            raise self.error(f"debug.{kind} needs its first argument, and no *args here", e,
                             scope)
        try:
            first = self.static_value(e.args[0], scope)
        except TransformError:
            first = None
        if kind == "print" and not isinstance(first, str):
            raise self.error("debug.print's format must be a string constant", e.args[0],
                             scope, fix='debug.print("x = {}", x)')
        if kind == "callback" and not callable(first):
            raise self.error("debug.callback's first argument must be a function defined "
                             "outside the transformed function", e.args[0], scope)
        kws = [k for k in e.keywords if k.arg != "ordered"]
        values = [self.expr(a, scope) for a in e.args[1:]] + [self.expr(k.value, scope)
                                                                for k in kws]
        effect = site(kind, first if kind == "callback" else None,
                      first if kind == "print" else None, len(e.args) - 1,
                      tuple(k.arg for k in kws))
        self.emit(gast.Expr(value=ir.call(ir.name(self.bind_ref(effect.__name__, effect)),
                                          values)))
        none = ir.const(None)
        return self.to_name(none, into) if into else none

    def class_method(self, func, scope):
        """The function ``x.m`` calls where ``x`` is a parameter that holds an instance of a
        registered pytree class (``self.classes``; an inlined function's parameter bound to
        one, call_kinds.tree_at) and ``m`` a function of that class."""
        if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
            return None
        if scope.parent is None and scope.parsed is self.root:
            cls = self.classes.get(func.value.id)
        elif is_local(func.value.id, scope) and self.local_function(func.value.id, scope) \
                is None and self.holds_classes():
            tree = self.tree_at(self.expr(func.value, scope))
            cls = tree.node_type if tree is not None and tree.node_type not in (
                dict, list, tuple) else None
        else:
            cls = None
        if cls is None or any(isinstance(n, gast.Name) and n.id == func.value.id and not
                              isinstance(n.ctx, (gast.Load, gast.Param))
                              for n in gast.walk(scope.node)):
            return None   # (rebound: no longer the argument)
        method = inspect.getattr_static(cls, func.attr, None)
        if isinstance(method, staticmethod) or not callable(method) or isinstance(method, type):
            return None
        return method

    def object_method(self, func, scope):
        """(the function, self's atom) of ``obj.m(...)`` where ``obj`` holds a user object
        known while transforming (a global or closure variable, an attribute of one, an item
        of a table of layers, an inlined method's ``self``) and ``m`` a plain method of its
        class, else None.  The instance is a constant of the code, guarded where it was read
        (rebinding the variable makes the code again); a static method has no self."""
        if not isinstance(func, gast.Attribute):
            return None
        obj = self.held_object(func.value, scope)
        if not ir.is_user_object(obj) or func.attr in vars(obj):
            return None   # (an attribute holding a function: called as a value)
        method = inspect.getattr_static(type(obj), func.attr, None)
        if isinstance(method, staticmethod) and _is_user_function(method.__func__):
            return method.__func__, None
        if not _is_user_function(method):
            return None
        atom = self.expr(func.value, scope)   # a reference: nothing is emitted
        atom.normalized = True
        return method, atom

    def held_object(self, node, scope):
        """The object a name or attribute chain holds where that is known while transforming
        without emitting anything: a reference (a local bound to one), a global or closure
        variable, an attribute of a user's module or object; else None."""
        if isinstance(node, gast.Name):
            gen = self.scoped_name(node.id, scope)
            if gen is not None:
                return self.refs.get(gen)
            kind, obj = scope.parsed.resolve(node.id)
            return obj if kind in (GLOBAL, CLOSURE) else None
        if isinstance(node, gast.Attribute):
            base = self.held_object(node.value, scope)
            if inspect.ismodule(base) or ir.is_user_object(base):
                return inspect.getattr_static(base, node.attr, None)
        return None

    def _names_ref(self, node, scope):
        """Whether ``node`` (a.b.c) names a module or other bound object rather than a value."""
        while isinstance(node, gast.Attribute):
            node = node.value
        if not isinstance(node, gast.Name):
            return False
        s = scope
        while s is not None:
            if node.id in s.names:
                return False
            s = s.parent
        kind, value = scope.parsed.resolve(node.id)
        return kind in (GLOBAL, CLOSURE, BUILTIN) and ir.is_constant_object(value)


def _makes_wide(obj, args, kws):
    """Whether a call makes an array whose dtype the 64-bit policy may narrow."""
    try:
        at = MAKERS.get(obj)
    except TypeError:   # unhashable
        return False
    return at is not None and len(args) <= at and not any(
        k in ("dtype", "retstep") for k, _ in kws) and not config.read("enable_x64")


def _dtype_position(fn):
    """Where ``fn`` takes its dtype by position (np.zeros: 1, np.full: 2), or None."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    for i, p in enumerate(params):
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            return None
        if p.name == "dtype":
            return i
    return None


def _fields_by_position(cls, args, kws):
    """A named tuple's fields given by keyword, in the order of its fields (derivative code
    reads a named tuple made by position), where every field is given or has a default."""
    given = dict(zip(cls._fields, args))
    for k, v in kws:
        if k not in cls._fields or k in given:
            return args, kws    # (Python's error at the call, as written)
        given[k] = v
    defaults = getattr(cls, "_field_defaults", {})
    if not all(f in given or f in defaults and isinstance(
            defaults[f], (bool, int, float, str, type(None))) for f in cls._fields):
        return args, kws
    return [given[f] if f in given else ir.const(defaults[f]) for f in cls._fields], []


def _is_helper_without_rule(obj):
    """A runtime helper with no derivative rule of its own (e.g. one inside a derivative
    template, met again by grad(grad(f))): differentiate its source, inlined."""
    from .rules import lookup
    module = getattr(obj, "__module__", "") or ""
    return (inspect.isfunction(obj) and module.startswith("strop.runtime")
            and lookup(obj) is None)


def is_local(user_name, scope):
    s = scope
    while s is not None:
        if user_name in s.names:
            return True
        s = s.parent
    return False
