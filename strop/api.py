"""The public transforms: thin wrappers that check arguments and build, cache and call the
generated code."""
import dataclasses
import functools
import inspect
import sys

import gast
import numpy as np

from . import dtypes
from . import runtime
from .codegen import highlight
from .config import config
from .runner import Staged
from .errors import Location
from .transformer import ir
from .transformer.check import check
from .transformer.keyreuse import check_key_reuse
from .transformer.normalize import normalize
from .transformer.parse import parse
from .transformer.reverse import reverse
from .transformer.flatten import flatten_params, leaf_paths
from .tree_util import tree_leaves, tree_structure


class Transformed:
    """A function made by a transform: call it like the original; ``strop.source`` shows it.

    The code is generated at the first call, once per key — the "kind" of each argument
    (containers are differentiated leaf by leaf) and the values of static arguments — and
    cached.  ``backend`` "python" runs the generated code as Python, "cpu" through Numba.
    """
    check_args = None
    check_all = None        # checks of all the arguments, static ones included (jit(grad))
    nargs = None            # vjp, jvp: the arguments are the first nargs inputs (of a call)
    backend = "python"
    static_argnums = ()
    differentiates = True   # helpers without a rule are inlined, to be differentiated
    plain = None            # what an outer transform transforms, when not this one's code

    def __init__(self, fun, build, name):
        self.fun = fun                     # the function transformed (maybe itself Transformed)
        self._build = build                # (normalized input, leaf params) -> ir.Function
        self._cache = {}                   # key -> Staged
        self._last_key = None
        functools.update_wrapper(self, _user_function(fun), updated=())
        self.__name__ = name
        self.__wrapped__ = None            # inspect.unwrap must stop here
        self.signature = inspect.signature(_user_function(fun))
        self._bound = _bound_names(fun)
        self._positional = not self._bound and sum(
            1 for p in self.signature.parameters.values()
            if p.kind is p.POSITIONAL_OR_KEYWORD) == len(self.signature.parameters)
        self._arity = _arity(fun)

    def staged(self, key=None, reason=None):
        """The Staged code for ``key`` (by default: the last call's, else all leaves)."""
        key = key or self._last_key or (self.default_kinds(), (), _settings())
        st = self._cache.get(key)
        if st is not None and not all(g.holds() for g in st.fn.guards):
            # a function it calls was rebound: transform it again.  Checked here, not only
            # on a call, so that an outer transform (jit(grad(f))) never re-transforms this
            # one's stale code
            changed = sorted({g.var.user_name for g in st.fn.guards if not g.holds()})
            reason = reason or f"changed global {', '.join(changed)}"
            del self._cache[key]
        if key not in self._cache:
            if reason is None:
                same_kinds = any(k[0] == key[0] for k in self._cache)
                reason = "new static value" if same_kinds else (
                    "new argument kinds" if self._cache else "first call")
            kinds, statics, _ = key
            self._kinds_now = kinds
            nargs = len(kinds) if self.nargs is None else self.nargs
            inner = normalized(self.fun, self.inner_kinds(kinds[:nargs]), self.differentiates)
            groups = inner.groups or tuple((False, (a.id,)) for a in
                                           inner.node.args.args[:inner.nparams])
            start = [sum(len(g[1]) for g in groups[:i]) for i in range(len(groups))]
            kind_of = {n: leaf for (tree, names), k in zip(groups, kinds)
                       for n, leaf in zip(names, k[2] if tree else [k] * len(names))}
            if statics:
                inner = bind_statics(inner, {start[i]: v for i, v in
                                             zip(self.static_argnums, statics)})
            fn = self._build(inner, kind_of)
            donated = [start[i] - sum(1 for j in self.static_argnums if j < i)
                       for i in getattr(self, "donate_argnums", ())]
            scalars = {n for n, k in kind_of.items() if k == SCALAR}
            self._cache[key] = Staged(fn, _origin(self.fun), self.backend, reason, donated,
                                      scalars)
        return self._cache[key]

    def inlined(self, npositional=None):
        """The Staged code inlined where this transform is called inside a function being
        transformed (with ``npositional`` positional arguments, if known).  Its arguments'
        kinds are unknown there, so each is taken for an array or a container (cotangents
        accumulate with add(), which takes both): the code must not depend on how this
        transform was last called either."""
        n = len(self.signature.parameters)
        if npositional is not None and self._arity[1]:   # f(*xs): one parameter per argument
            n = npositional + self._arity[2]
        return self.staged(((TREE,) * n, (), _settings()))

    def inner_kinds(self, kinds):
        """The kinds of the arguments the transformed function itself receives."""
        return kinds

    def default_kinds(self):
        return (ARRAY,) * len(self.signature.parameters)

    def generated(self, key=None):
        return self.staged(key).generated

    def ir(self, key=None):
        return self.staged(key).fn

    @property
    def last_backend(self):
        """The backend that ran the last call: "cpu", or "python" after a fallback."""
        return self.staged(self._last_key).backend if self._last_key else None

    def __call__(self, *args, **kwargs):
        npos, star, nkw = self._arity
        if not kwargs and (self._positional and len(args) == len(self.signature.parameters)
                           or star and not nkw and not self._bound and len(args) >= npos):
            return self.call_positional(list(args))   # the common case, without binding
        return self.call_positional(_bind(self.fun, args, kwargs, self.signature, self._bound))

    def call_positional(self, args):
        if self.static_argnums:
            if self.static_argnums[-1] >= len(args):
                raise ValueError(f"static_argnums {list(self.static_argnums)} out of range for "
                                 f"a call with {len(args)} arguments{defined_at(self.fun)}")
            full = args
            statics = tuple(_hashable(args[i], i) for i in self.static_argnums)
            args = [a for i, a in enumerate(args) if i not in self.static_argnums]
        else:
            statics = ()
        args = [dtypes.canonicalize_tree(a) for a in args]
        if self.check_args is not None:
            self.check_args(args)
        if self.check_all is not None:   # as the inner transform takes them: statics too
            dynamic = iter(args)
            self.check_all([a if i in self.static_argnums else next(dynamic)
                            for i, a in enumerate(full)] if statics else args)
        kinds = _kinds(args, self.static_argnums)
        given = args
        n = len(kinds) if self.nargs is None else self.nargs
        if len(kinds) > n:   # vjp's cotangent: passed whole, never flattened
            kinds = kinds[:n] + tuple(TREE if type(k) is tuple else k for k in kinds[n:])
        key = (kinds, statics, _settings())
        self._last_key = key
        if any(type(k) is tuple for k in kinds):   # pytrees go in as their leaves
            dynamic = [k for i, k in enumerate(kinds) if i not in self.static_argnums]
            args = [x for a, k in zip(args, dynamic) for x in (
                tree_leaves(a) if type(k) is tuple else [a])]
        st = self._cache.get(key)
        if st is None or not all(g.holds() for g in st.fn.guards):
            st = self.staged(key)     # new, or a function it calls was rebound
        try:
            out = st.run(args)
        except TypeError as e:
            raise _argument_hint(e, self.fun, given, self.static_argnums) from None
        return self.finish(out, key[0])

    def finish(self, out, kinds):
        """The result as the user sees it: gradients of flattened pytrees rebuilt (the
        transforms that differentiate override this; others pass it through)."""
        return self.fun.finish(out, kinds) if isinstance(self.fun, Transformed) else out

    def inspect_llvm(self, signature=None):
        """Numba's LLVM IR of the compiled code (for ``signature``, default: the last one)."""
        return self._numba("inspect_llvm", signature)

    def inspect_asm(self, signature=None):
        """The machine code of the compiled code, as assembly text."""
        return self._numba("inspect_asm", signature)

    def _numba(self, what, signature):
        st = self.staged()
        if st.backend != "cpu" or not st.runner.signatures:
            raise ValueError(f"{self.__name__} has no compiled code yet: call it first (with "
                             f"backend='cpu')")
        signature = signature or st.runner.signatures[-1]
        fresh = st.compile(cache=False)  # cached code has no IR
        fresh.compile(signature)
        return getattr(fresh, what)(signature)

    def __repr__(self):
        return f"<strop {self.__name__} of {getattr(self.fun, '__qualname__', self.fun)}>"


SCALAR, ARRAY, TREE = "scalar", "array", "tree"


def _kind(a):
    """What generated code may assume of an argument: a number (specialized as a scalar), an
    array, a dict/list/tuple flattened to its leaves ((TREE, its structure, each leaf's kind)),
    or another container (differentiated leaf by leaf)."""
    if isinstance(a, (float, int, np.floating, np.integer)):
        return SCALAR
    if isinstance(a, np.ndarray):
        return f"{ARRAY}{a.ndim}"   # the rank: vmap lines lanes up by it
    leaves = tree_leaves(a)
    if len(leaves) == 1 and leaves[0] is a:
        return ARRAY
    treedef = tree_structure(a)
    if leaf_paths(treedef) is None:
        return TREE
    return TREE, treedef, tuple(_kind(x) for x in leaves)


def _kinds(args, static=()):
    """The kind of each argument; static arguments are bound as constants."""
    out = [_kind(a) for a in args]
    for i in sorted(static):
        out.insert(i, ARRAY)
    return tuple(out)


def _settings():
    """The config values generated code depends on (the dtype policy, the PRNG stream)."""
    values = config._values
    return values["enable_x64"], values["threefry_partitionable"]


def _hashable(value, i):
    try:
        hash(value)
    except TypeError as e:
        raise ValueError(
            f"Non-hashable static arguments are not supported: static argument {i} has type "
            f"{type(value).__name__} ({e}). Pass a hashable value (a tuple instead of a list, "
            f"an object with __hash__ and __eq__), or do not mark it static") from None
    return value


def bind_statics(fn, values):
    """The function with static parameters (index -> value) bound as constants."""
    node = ir.clone(fn.node)
    refs = dict(fn.refs)
    params = node.args.args
    body = []
    for i in sorted(values, reverse=True):
        p = params.pop(i)
        value = values[i]
        if isinstance(value, (bool, int, float, str, type(None))):
            atom = ir.const(value)
        else:
            ref = f"{p.id}_static"
            refs[ref] = value
            atom = ir.name(ref)
        body.insert(0, ir.assign(p.id, atom, getattr(node, "loc", None)))
    node.body = body + node.body
    return dataclasses.replace(fn, node=node, refs=refs, nparams=fn.nparams - len(values))


def _user_function(fun):
    while isinstance(fun, Transformed):
        fun = fun.fun
    return fun


def _unwrap(fun):
    """(the Python function, {parameter index: bound value}) of a bound method or a
    functools.partial (nested ones too); the bound values become constants of the code."""
    if inspect.ismethod(fun):
        inner, bound = _unwrap(fun.__func__)
        first = min(set(range(len(bound) + 1)) - set(bound))
        return inner, {**bound, first: fun.__self__}
    if isinstance(fun, functools.partial):
        inner, bound = _unwrap(fun.func)
        params = [i for i in range(len(inspect.signature(inner).parameters)) if i not in bound]
        names = list(inspect.signature(inner).parameters)
        new = dict(bound)
        for i, value in zip(params, fun.args):
            new[i] = value
        for k, value in fun.keywords.items():
            if k not in names:
                raise TypeError(f"functools.partial of {inner.__qualname__} binds an unknown "
                                f"keyword {k!r}")
            new[names.index(k)] = value
        return inner, new
    return fun, {}


def _origin(fun):
    user = _unwrap(_user_function(fun))[0]
    code = getattr(user, "__code__", None)
    where = f"{code.co_filename}:{code.co_firstlineno}" if code else repr(user)
    return f"{getattr(user, '__qualname__', user)} ({where})"


def normalized(fun, kinds=None, differentiate=True):
    """The normalized IR of a user function or of a transformed function's generated code."""
    if isinstance(fun, Transformed):
        fun = fun.plain or fun     # jit(vmap(f)) inside a transform: as vmap(f)
        st = fun.staged((kinds, (), _settings()) if kinds is not None else None)
        inner, gen = st.fn, st.generated
        out = normalize(parse(gen.function), inline_helpers=differentiate,
                        keep_custom=differentiate)
        # its free variables stay trailing parameters; its guards still hold
        out.free, out.nparams, out.guards = inner.free, inner.nparams, inner.guards + out.guards
        out.groups = inner.groups
        return out
    if not callable(fun):
        raise TypeError(f"expected a function to transform, got {type(fun).__name__}: {fun!r}")
    if getattr(fun, "__strop_custom__", False) and differentiate:
        fun = fun.trampoline()   # grad(f) of a custom_jvp f: through its rule
    fun, bound = _unwrap(fun)
    parsed = parse(fun)
    check(parsed)
    out = normalize(parsed, check=check, inline_helpers=differentiate,
                    keep_custom=differentiate)
    check_key_reuse(out)
    out = bind_statics(out, bound) if bound else out
    trees = {i: k[1] for i, k in enumerate(kinds or ()) if type(k) is tuple}
    spread = None
    params = list(inspect.signature(fun).parameters.values())
    star = [i for i, p in enumerate(params) if p.kind is p.VAR_POSITIONAL]
    if star:   # *xs: one parameter per argument it was called with
        at = star[0] - sum(1 for i in bound if i < star[0])
        spread = (at, max(len(kinds) - out.nparams + 1, 0) if kinds is not None else 1)
    return flatten_params(out, trees, spread) if trees or spread else out


def _bind(fun, args, kwargs, sig=None, bound_names=()):
    user = _user_function(fun)
    try:
        sig = sig or inspect.signature(user)
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{user.__qualname__}(): {e}") from None
    bound.apply_defaults()
    out = []
    for p in sig.parameters.values():
        if p.name in bound_names:
            continue
        v = bound.arguments.get(p.name)
        if p.kind is p.VAR_POSITIONAL:   # as passed: argnums and in_axes count them
            out.extend(v or ())
        else:
            out.append(v)
    return out


def with_defaults(fun, primals):
    """vjp's and jvp's primals as a call passes them: *args spread, defaults added."""
    npos, star, nkw = _arity(fun)
    if len(primals) == npos and not star and not nkw and not _bound_names(fun):
        return list(primals)
    return _bind(fun, primals, {}, None, _bound_names(fun))


def arg_names(fun, n):
    """The names of the ``n`` arguments a call passes (``xs[0]``, ... for ``*xs``), as error
    messages show them."""
    bound = _bound_names(fun)
    ps = [p for p in inspect.signature(_user_function(fun)).parameters.values()
          if p.name not in bound and p.kind is not p.VAR_KEYWORD]
    star = [p.name for p in ps if p.kind is p.VAR_POSITIONAL]
    if not star:
        return [p.name for p in ps] + [f"#{i}" for i in range(len(ps), n)]
    before = [p.name for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    after = [p.name for p in ps if p.kind is p.KEYWORD_ONLY]
    many = max(n - len(before) - len(after), 0)
    return before + [f"{star[0]}[{k}]" for k in range(many)] + after


def _bound_names(fun):
    """The parameters of the signature a bound method or partial shows whose values are
    bound, not passed (partial(f, s=3.0) still shows s)."""
    inner, bound = _unwrap(_user_function(fun))
    names = list(inspect.signature(inner).parameters)
    return {names[i] for i in bound} & set(inspect.signature(_user_function(fun)).parameters)


def _arity(fun):
    """(number of positional parameters, has *args, number of keyword-only parameters) of
    what a call passes: the arguments come as that many, then those *args takes, then the
    keyword-only ones (_bind)."""
    bound = _bound_names(fun)
    ps = [p for p in inspect.signature(_user_function(fun)).parameters.values()
          if p.name not in bound]
    return (sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in ps),
            any(p.kind is p.VAR_POSITIONAL for p in ps),
            sum(p.kind is p.KEYWORD_ONLY for p in ps))


# --- argument checks ---------------------------------------------------------------------------

def _is_index(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def defined_at(fun):
    """Where the user's function is defined, shown as errors show it ("" if unknown)."""
    code = getattr(_unwrap(_user_function(fun))[0], "__code__", None)
    return f"\n{Location(code.co_filename, code.co_firstlineno).show()}" if code else ""


def _argnums(argnums, fun):
    multi = not _is_index(argnums)
    nums = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)
    if not nums or not all(_is_index(i) for i in nums):
        raise TypeError(f"argnums must be an int or a non-empty tuple of ints, got "
                        f"{argnums!r}{defined_at(fun)}\nFix: argnums=0 for the first "
                        f"argument, argnums=(0, 1) for the first two")
    n, star, _ = _arity(fun)
    if star:   # f(*xs): checked at each call, against the arguments passed
        return tuple(int(i) for i in nums), multi
    return resolve_argnums(nums, n, fun, argnums), multi


def resolve_argnums(nums, n, fun, given=None, passed=False):
    """``nums`` as indices of the ``n`` positional arguments (a function's parameters, or the
    arguments a call of ``f(*xs)`` passed), or a ValueError naming the function."""
    bad = [i for i in nums if not -n <= i < n]
    if bad:
        what = f"a call with {n} positional arguments" if passed else \
            f"a function of {n} arguments"
        raise ValueError(f"argnums {given if given is not None else nums!r} out of range for "
                         f"{what}{defined_at(fun)}\nFix: argnums counts positional arguments "
                         f"from 0, up to {n - 1}" + (" (the arguments *args takes included)"
                                                     if passed else ""))
    return tuple(int(i) % n for i in nums)


class Differentiating(Transformed):
    """A transform with ``argnums``: ``wrt``, the indices differentiated, for a call of ``n``
    positional arguments (a function with ``*args`` differentiates them as passed)."""
    argnums = ()

    def wrt(self, n):
        if not self._arity[1]:
            return self.argnums
        return resolve_argnums(self.argnums, n, self.fun, self.argnums_given, passed=True)

    def wrt_of(self, kinds):
        nargs = len(kinds) if self.nargs is None else self.nargs
        return self.wrt(nargs - self._arity[2])


def _check_real(name, fun, argnums):
    """The arguments differentiated (``argnums``: indices, or a function of the number of
    positional arguments) must be real floating point."""
    def check_args(args):
        for i in argnums(len(args)) if callable(argnums) else argnums:
            for leaf in tree_leaves(args[i]):
                if not dtypes.is_float_leaf(leaf) or np.iscomplexobj(leaf):
                    dtype = np.result_type(leaf) if _is_data(leaf) or isinstance(
                        leaf, np.ndarray) else type(leaf).__name__
                    user = _user_function(fun)
                    raise TypeError(
                        f"{name} requires real-valued (floating point) inputs, but argument "
                        f"{i} of {getattr(user, '__qualname__', user)} has dtype {dtype}."
                        f"{defined_at(fun)}\n"
                        f"Fix: pass floats (e.g. np.asarray(x, float)), or differentiate with "
                        f"respect to another argument (argnums=...)")
    return check_args


def pair_checked(fn):
    """``has_aux=True``: the function with its result checked to be a pair (output, aux)
    before the transform splits it (a 3-tuple would lose its last item, a scalar has none).
    A return of a two-item display needs no check."""
    ret = fn.node.body[-1] if fn.node.body else None
    if not isinstance(ret, gast.Return) or isinstance(ret.value, (gast.Tuple, gast.List)) and \
            len(ret.value.elts) == 2:
        return fn
    node = ir.clone(fn.node)
    refs = dict(fn.refs)
    check = ir.bind_ref(refs, ir.Namer(ir.names_in(node) | set(refs)), runtime.aux_pair,
                        "aux_pair")
    value = node.body[-1].value
    node.body.insert(-1, ir.stmt(gast.Expr(value=ir.call(check, [ir.clone(value)])),
                                 getattr(node.body[-1], "loc", None)))
    return dataclasses.replace(fn, node=node, refs=refs)


def _is_data(leaf):
    """What compiled code takes as an argument's leaf: a number or a numeric array."""
    if isinstance(leaf, np.ndarray):
        return leaf.dtype.kind in "biufc"
    return isinstance(leaf, (int, float, complex, np.bool_, np.number))


def _check_data(fun, static):
    """jit's arguments: numbers, numeric arrays, and lists/tuples/dicts of them (as JAX's
    "not a valid JAX type"): a string or an object would reach the user's code as it is."""
    def check_args(args):
        names = [n for i, n in enumerate(arg_names(fun, len(args) + len(static)))
                 if i not in static]
        for i, a in enumerate(args):
            if type(a) is np.ndarray and a.dtype.kind in "biufc" or type(a) is float:
                continue   # the common case, cheap
            bad = next((leaf for leaf in tree_leaves(a) if not _is_data(leaf)), _OK)
            if bad is _OK:
                continue
            name = names[i] if i < len(names) else f"#{i}"
            what = f"an array of dtype {bad.dtype}" if isinstance(bad, np.ndarray) else \
                f"{bad!r} of type {type(bad).__name__}"
            inside = "" if bad is a else f" (inside its {type(a).__name__})"
            raise TypeError(
                f"jit: argument {name!r} of {getattr(_user_function(fun), '__qualname__', fun)} "
                f"is {what}{inside}, which is not a valid array: compiled code takes numbers, "
                f"numeric arrays, and lists, tuples and dicts of them{defined_at(fun)}\n"
                f"Fix: mark it static (jit(f, static_argnames={name!r}) or static_argnums=...) "
                f"if it configures the function, or pass it as a numeric array "
                f"(np.asarray(...))")
    return check_args


_OK = object()


def _argument_hint(e, fun, args, static=()):
    """A TypeError raised by the user's code called with a list, tuple or None where it
    expects an array: the same error, saying which argument and what to pass."""
    names = [n for i, n in enumerate(arg_names(fun, len(args) + len(static)))
             if i not in static]
    odd = [(names[i] if i < len(names) else f"#{i}", a) for i, a in enumerate(args)
           if a is None or type(a) in (list, tuple)]
    if not odd:
        return e
    name, a = odd[0]
    hint = (f"Note: argument {name!r} is None." if a is None else
            f"Note: argument {name!r} is a {type(a).__name__}: strop passes lists, tuples and "
            f"dicts to the function as they are (pytrees: differentiated and mapped leaf by "
            f"leaf, as JAX does), not as arrays.")
    hint += (f"\nFix: pass an array (np.asarray({name})) where the function expects one"
             + (", or mark it static (jit(f, static_argnames=...))" if a is None else ""))
    try:
        new = type(e)(f"{e}\n{hint}")
    except Exception:
        e.add_note(hint)
        return e
    new.location = getattr(e, "location", None)
    return new.with_traceback(e.__traceback__)


class ReverseTransformed(Differentiating):
    """grad, value_and_grad and vjp: their gradients of flattened pytrees come back as the
    trees' leaves, rebuilt here."""

    def finish(self, out, kinds):
        trees = [kinds[i][1] if type(kinds[i]) is tuple else None for i in self.wrt_of(kinds)]
        if not any(trees):
            return out
        has_grads_first = self.mode == "grad"
        parts = list(out) if (self.has_aux or not has_grads_first) else [out]
        at = 0 if has_grads_first else 1
        grads = parts[at]
        rebuilt = [t.unflatten(g) if t is not None else g for t, g in zip(
            trees, grads if self.multi else [grads])]
        parts[at] = tuple(rebuilt) if self.multi else rebuilt[0]
        return tuple(parts) if (self.has_aux or not has_grads_first) else parts[0]


def _reverse_transform(fun, argnums, has_aux, mode, name, nums=None, multi=None):
    if not callable(fun):
        raise TypeError(f"{name} expects a function, got {type(fun).__name__}: {fun!r}")
    if nums is None:
        nums, multi = _argnums(argnums, fun)
    t = ReverseTransformed(
        fun, lambda ir_fn, kinds: reverse(pair_checked(ir_fn) if has_aux else ir_fn,
                                          t.wrt_of(t._kinds_now), mode, has_aux, multi, kinds),
        f"{name}({getattr(_user_function(fun), '__name__', 'f')})")
    t.argnums, t.argnums_given, t.mode, t.has_aux, t.multi = nums, argnums, mode, has_aux, multi
    nkw = t._arity[2]
    t.check_args = _check_real(name, fun, lambda n: t.wrt(n - nkw))
    return t


def grad(fun, argnums=0, has_aux=False):
    """The gradient of a function with a real scalar output, as a function of the same args."""
    return _reverse_transform(fun, argnums, has_aux, "grad", "grad")


grad.__strop_transform__ = True


def value_and_grad(fun, argnums=0, has_aux=False):
    """Like ``grad`` but returns ``(value, gradient)``."""
    return _reverse_transform(fun, argnums, has_aux, "value_and_grad", "value_and_grad")


value_and_grad.__strop_transform__ = True


def jit(fun=None, static_argnums=(), static_argnames=(), donate_argnums=(), backend=None):
    """``fun`` compiled: through Numba on the CPU (``backend="cpu"``, the default), or run as
    generated Python (``"python"``).  Usable as ``@jit`` and ``@partial(jit, ...)``."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums,
                                 backend=backend)
    if not callable(fun):
        raise TypeError(f"jit expects a function, got {type(fun).__name__}: {fun!r}")
    backend = backend or config.read("default_backend")
    if backend not in ("cpu", "python"):
        raise ValueError(f"jit backend must be 'cpu' or 'python' (the CUDA backend is not "
                         f"available yet), got {backend!r}")
    params = list(inspect.signature(_user_function(fun)).parameters)
    statics = {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)
    names = {static_argnames} if isinstance(static_argnames, str) else set(static_argnames)
    npos, star, nkw = _arity(fun)
    for n in names:
        if n not in params:
            raise ValueError(f"static_argnames {n!r} is not a parameter of "
                             f"{_user_function(fun).__qualname__}{tuple(params)}")
        if star and params.index(n) >= npos:
            raise ValueError(f"static_argnames {n!r}: *args and the keyword-only parameters "
                             f"after it cannot be static{defined_at(fun)}\nFix: bind it with "
                             f"functools.partial(f, {n}=...) before jit")
        statics.add(params.index(n))
    bad = [i for i in statics if not -len(params) <= i < len(params)]
    if bad and not (star and all(i >= 0 for i in bad)):   # f(*xs): counted as passed
        raise ValueError(f"static_argnums {bad} out of range for a function of {len(params)} "
                         f"arguments{defined_at(fun)}")
    if star and any(i < 0 for i in statics):
        raise ValueError(f"static_argnums {sorted(statics)}: a function with *args takes a "
                         f"varying number of arguments, so static_argnums must count from the "
                         f"first (>= 0){defined_at(fun)}")
    statics = tuple(sorted(i % len(params) if not star else i for i in statics))
    if backend == "cpu" and hasattr(fun, "compiled"):    # jit(vmap(f)): fused lane loops
        return fun.compiled(statics)
    t = Transformed(fun, lambda ir_fn, kinds: ir_fn,
                    f"jit({getattr(_user_function(fun), '__name__', 'f')})")
    t.backend = backend
    t.differentiates = False
    t.static_argnums = statics
    t.check_args = _check_data(fun, statics)
    if isinstance(fun, Transformed) and fun.check_args is not None:
        t.check_all = fun.check_args   # jit(grad(f)): grad's checks too, on all arguments
    t.donate_argnums = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(
        donate_argnums)
    if backend == "cpu":    # an outer transform sees the code as it was before lowering
        t.plain = jit(fun, statics, (), donate_argnums, backend="python")
    return t


jit.__strop_transform__ = True


def vjp(fun, *primals, has_aux=False):
    """``(out, vjp_fn)``: ``vjp_fn(cotangent)`` gives the cotangents of all ``primals``."""
    n = len(primals)
    t = _reverse_transform(fun, None, has_aux, "vjp", "vjp", tuple(range(n)), True)
    primals = [dtypes.canonicalize_tree(p) for p in with_defaults(fun, primals)]
    t.nargs = len(primals)
    out = jit(fun, backend="python").call_positional(list(primals))   # as transformed code runs

    def vjp_fn(cotangent):
        result = t.call_positional(list(primals) + [cotangent])
        return result[1]

    vjp_fn.transformed = t
    if has_aux:
        return out[0], vjp_fn, out[1]
    return out, vjp_fn


def source(fun):
    """The generated Python source of a transformed function."""
    if not isinstance(fun, Transformed):
        fun = getattr(fun, "transformed", fun)
    if not isinstance(fun, Transformed):
        raise TypeError("strop.source expects a function made by a strop transform (grad, jit, "
                        f"vmap, ...), got {fun!r}")
    return fun.generated().source


def show(fun, file=None):
    """Print the generated source: colored in a terminal, as highlighted HTML in a notebook."""
    text = source(fun)
    file = file or sys.stdout
    if file is sys.stdout and "ipykernel" in sys.modules:
        from IPython.display import HTML, display
        display(HTML(highlight.html(text)))
        return
    if getattr(file, "isatty", lambda: False)():
        text = highlight.ansi(text)
    print(text, file=file, end="" if text.endswith("\n") else "\n")
