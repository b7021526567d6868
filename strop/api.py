"""The public transforms: thin wrappers that check arguments; what they make (a Transformed,
transformed.py) builds, caches and calls the generated code."""
import dataclasses
import functools
import inspect
import sys

import gast
import numpy as np

from . import dtypes
from . import runtime
from .transformer.flat_results import flat_results
from .codegen import highlight
from .config import config
from .transformer import ir
from .transformer.reverse import reverse
from .transformed import (Transformed, _arity, _user_function, arg_names, defined_at,
                          transformable, with_defaults)
# what jacobians.py, custom.py and vmap.py import from here
from .transformed import ARRAY, INT, SCALAR, _origin, _settings  # noqa: F401
from .tree_util import tree_leaves


def made(t, transform, fun, **options):
    """``t`` with how it was made (``strop.<transform>(fun, **options)``), so that it can be
    made again in another process (strop/dask.py sends transformed functions so)."""
    t.recipe = (transform, fun, options)
    return t


# --- argument checks ---------------------------------------------------------------------------

def _is_index(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


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
    rebuilds_trees = True
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
            a = args[i]
            if isinstance(a, (np.ndarray, np.generic)) and a.dtype.kind == "f" \
                    or type(a) is float:
                continue   # the common cases, cheap
            for leaf in tree_leaves(a):
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
        for i, a in enumerate(args):
            if type(a) in dtypes.PYTHON_NUMBERS or isinstance(a, (np.ndarray, np.generic)) \
                    and a.dtype.kind in "biufc":
                continue   # the common cases, cheap
            bad = next((leaf for leaf in tree_leaves(a) if not _is_data(leaf)), _OK)
            if bad is _OK:
                continue
            names = [n for k, n in enumerate(arg_names(fun, len(args) + len(static)))
                     if k not in static]    # (only for the message: inspect is slow)
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


class ReverseTransformed(Differentiating):
    """grad, value_and_grad and vjp: their gradients of flattened pytrees come back as the
    trees' leaves, rebuilt here."""
    shape_keyed = True

    @property
    def returns_arrays(self):
        """grad's gradients (and value_and_grad's value): arrays or numbers at the leaves of
        the arguments' trees (an auxiliary result may be anything)."""
        return self.mode in ("grad", "value_and_grad") and not self.has_aux

    def takes_leaves(self):
        return self.mode in ("grad", "value_and_grad") and (
            not isinstance(self.fun, Transformed) or self.fun.takes_leaves())

    def rebuilt_inline(self, out, kinds, read, display):
        """finish() as code, where this transform's code is inlined in other code for these
        ``kinds``: the expression rebuilding the gradients' trees from ``out`` (the inlined
        code's result), or None where there is none to rebuild.  ``read(x, k)`` is ``x[k]``,
        ``display(kind, leaves)`` the display of the gradient of an argument of ``kind``."""
        trees = [kinds[i] if type(kinds[i]) is tuple else None for i in self.wrt_of(kinds)]
        if not any(trees):
            return None
        pair = self.has_aux or self.mode != "grad"
        parts = [read(out, 0), read(out, 1)] if pair else [out]
        at = 0 if self.mode == "grad" else 1
        grads = [read(parts[at], k) for k in range(len(trees))] if self.multi else [parts[at]]
        rebuilt = [display(t, [read(g, j) for j in range(t[1].num_leaves)]) if t is not None
                   else g for t, g in zip(trees, grads)]
        parts[at] = gast.Tuple(elts=rebuilt, ctx=gast.Load()) if self.multi else rebuilt[0]
        return gast.Tuple(elts=parts, ctx=gast.Load()) if pair else parts[0]

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
    fun = transformable(fun)
    if nums is None:
        nums, multi = _argnums(argnums, fun)
    t = ReverseTransformed(
        fun, lambda ir_fn, kinds: reverse(pair_checked(ir_fn) if has_aux else ir_fn,
                                          t.wrt_of(t._kinds_now), mode, has_aux, multi, kinds,
                                          t._dtypes_now, t._dims_now),
        f"{name}({getattr(_user_function(fun), '__name__', 'f')})")
    t.argnums, t.argnums_given, t.mode, t.has_aux, t.multi = nums, argnums, mode, has_aux, multi
    nkw = t._arity[2]
    t.check_args = _check_real(name, fun, lambda n: t.wrt(n - nkw))
    return t


def grad(fun, argnums=0, has_aux=False):
    """The gradient of a function with a real scalar output, as a function of the same args."""
    return made(_reverse_transform(fun, argnums, has_aux, "grad", "grad"), "grad", fun,
                argnums=argnums, has_aux=has_aux)


grad.__strop_transform__ = True


def value_and_grad(fun, argnums=0, has_aux=False):
    """Like ``grad`` but returns ``(value, gradient)``."""
    return made(_reverse_transform(fun, argnums, has_aux, "value_and_grad", "value_and_grad"),
                "value_and_grad", fun, argnums=argnums, has_aux=has_aux)


value_and_grad.__strop_transform__ = True


def jit(fun=None, static_argnums=(), static_argnames=(), donate_argnums=(), backend=None):
    """``fun`` compiled: through Numba on the CPU (``backend="cpu"``, the default), for a GPU
    (``"cuda"``: cuda_vmap.py), or run as generated Python (``"python"``).  Usable as ``@jit``
    and ``@partial(jit, ...)``."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums,
                                 backend=backend)
    if not callable(fun):
        raise TypeError(f"jit expects a function, got {type(fun).__name__}: {fun!r}")
    fun = transformable(fun)
    backend = backend or config.read("default_backend")
    if backend == "gpu":
        backend = "cuda"
    if backend not in ("cpu", "python", "cuda"):
        raise ValueError(f"jit backend must be 'cpu', 'cuda' or 'python', got {backend!r}")
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
        return made(fun.compiled(statics), "jit", fun, static_argnums=statics)
    if backend == "cuda" and hasattr(fun, "compiled"):   # one GPU thread per lane
        return made(fun.compiled(statics).on_cuda(), "jit", fun, static_argnums=statics,
                    backend=backend)
    t = Transformed(fun, lambda ir_fn, kinds: flat_results(ir_fn),
                    f"jit({getattr(_user_function(fun), '__name__', 'f')})")
    t.backend = "cpu" if backend == "cuda" else backend
    t.device = "cuda" if backend == "cuda" else None
    t.elementwise_kernels = backend != "python"
    t.differentiates = False
    t.static_argnums = statics
    t.check_args = _check_data(fun, statics)
    if isinstance(fun, Transformed) and fun.check_args is not None:
        t.check_all = fun.check_args   # jit(grad(f)): grad's checks too, on all arguments
    t.donate_argnums = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(
        donate_argnums)
    if backend != "python":    # an outer transform sees the code as it was before lowering
        t.plain = jit(fun, statics, (), donate_argnums, backend="python")
    return made(t, "jit", fun, static_argnums=statics, donate_argnums=t.donate_argnums,
                backend=backend)


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
    if not isinstance(fun, Transformed) and not hasattr(fun, "shown"):
        raise TypeError("strop.source expects a function made by a strop transform (grad, jit, "
                        f"vmap, ...), got {fun!r}")
    return fun.shown()


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
