"""The public transforms: thin wrappers that check arguments and build, cache and call the
generated code."""
import functools
import inspect
import sys
import traceback

import numpy as np

from . import dtypes
from .codegen import highlight
from .codegen import emit as emitter
from .codegen.load import load
from .errors import Location, StropError, TransformError
from .transformer.check import check
from .transformer.normalize import normalize
from .transformer.parse import parse
from .transformer.reverse import reverse
from .tree_util import tree_leaves


class Transformed:
    """A function made by a transform: call it like the original; ``strop.source`` shows it.

    The code is generated at the first call, once per "kind" of the arguments (which are
    containers: a dict of parameters is differentiated leaf by leaf), and cached.
    """
    check_args = None

    def __init__(self, fun, build, name):
        self.fun = fun                     # the function transformed (maybe itself Transformed)
        self._build = build                # (normalized input, leaf params) -> ir.Function
        self._cache = {}                   # argument kinds -> (ir.Function, Generated)
        functools.update_wrapper(self, _user_function(fun), updated=())
        self.__name__ = name
        self.__wrapped__ = None            # inspect.unwrap must stop here

    def staged(self, kinds=None):
        """(normalized transformed function, generated module) for argument ``kinds``."""
        kinds = kinds if kinds is not None else self.default_kinds()
        if kinds not in self._cache:
            inner = normalized(self.fun, kinds)
            leaves = {a.id for a, leaf in zip(inner.node.args.args, kinds) if leaf}
            fn = self._build(inner, leaves)
            text, linemap, injected = emitter.emit(fn, _origin(self.fun))
            self._cache[kinds] = fn, load(fn.name, text, linemap, injected)
        return self._cache[kinds]

    def default_kinds(self):
        n = len(inspect.signature(_user_function(self.fun)).parameters)
        return (True,) * n

    def generated(self, kinds=None):
        """The generated module for ``kinds``: by default the one the last call ran."""
        return self.staged(kinds or getattr(self, "_last_kinds", None))[1]

    def ir(self, kinds=None):
        return self.staged(kinds)[0]

    def __call__(self, *args, **kwargs):
        return self.call_positional(_bind(self.fun, args, kwargs))

    def call_positional(self, args):
        args = [dtypes.canonicalize_tree(a) for a in args]
        if self.check_args is not None:
            self.check_args(args)
        self._last_kinds = _kinds(args)
        fn, gen = self.staged(self._last_kinds)
        free = [v.read() for v in fn.free.values()]
        try:
            return gen.function(*args, *free)
        except StropError:
            raise
        except Exception as e:
            raise _mapped(e, gen) from None

    def __repr__(self):
        return f"<strop {self.__name__} of {getattr(self.fun, '__qualname__', self.fun)}>"


def _kinds(args):
    """Per argument: True for a leaf (an array or a number), False for a container."""
    return tuple(not (len(leaves) != 1 or leaves[0] is not a)
                 for a in args for leaves in [tree_leaves(a)])


def _user_function(fun):
    while isinstance(fun, Transformed):
        fun = fun.fun
    return fun


def _origin(fun):
    user = _user_function(fun)
    code = getattr(user, "__code__", None)
    where = f"{code.co_filename}:{code.co_firstlineno}" if code else repr(user)
    return f"{getattr(user, '__qualname__', user)} ({where})"


def normalized(fun, kinds=None):
    """The normalized IR of a user function or of a transformed function's generated code."""
    if isinstance(fun, Transformed):
        inner, gen = fun.staged(kinds)
        out = normalize(parse(gen.function))
        out.free, out.nparams = inner.free, inner.nparams   # its free variables stay trailing
        return out
    if not callable(fun):
        raise TypeError(f"expected a function to transform, got {type(fun).__name__}: {fun!r}")
    parsed = parse(fun)
    check(parsed)
    return normalize(parsed, check=check)


def _bind(fun, args, kwargs):
    user = _user_function(fun)
    try:
        sig = inspect.signature(user)
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{user.__qualname__}(): {e}") from None
    bound.apply_defaults()
    out = []
    for p in sig.parameters.values():
        v = bound.arguments.get(p.name)
        if p.kind is p.VAR_POSITIONAL:
            out.append(tuple(v or ()))
        else:
            out.append(v)
    return out


def _mapped(e, gen):
    """The same exception, its message naming the user's line the failing code came from."""
    loc = None
    for frame, lineno in traceback.walk_tb(e.__traceback__):
        if frame.f_code.co_filename == gen.path:
            loc = emitter.user_location(gen.linemap, lineno)
    if loc is None:
        return e
    message = f"{e}\n{loc.show()}"
    try:
        new = type(e)(message)
    except Exception:
        e.add_note(loc.show())
        return e
    new.location = loc
    return new


# --- argument checks ---------------------------------------------------------------------------

def _argnums(argnums, fun):
    multi = not isinstance(argnums, int)
    nums = (argnums,) if not multi else tuple(argnums)
    if not nums or not all(isinstance(i, int) for i in nums):
        raise TypeError(f"argnums must be an int or a non-empty tuple of ints, got {argnums!r}")
    n = len(inspect.signature(_user_function(fun)).parameters)
    bad = [i for i in nums if not -n <= i < n]
    if bad:
        raise ValueError(f"argnums {argnums!r} out of range for a function of {n} arguments")
    return tuple(i % n for i in nums), multi


def _check_real(name, fun, argnums):
    def check_args(args):
        for i in argnums:
            for leaf in tree_leaves(args[i]):
                if not dtypes.is_float_leaf(leaf) or np.iscomplexobj(leaf):
                    dtype = np.result_type(leaf) if not isinstance(leaf, (str, type(None))) \
                        else type(leaf).__name__
                    user = _user_function(fun)
                    code = user.__code__
                    raise TypeError(
                        f"{name} requires real-valued (floating point) inputs, but argument "
                        f"{i} of {user.__qualname__} has dtype {dtype}.\n"
                        f"{Location(code.co_filename, code.co_firstlineno).show()}\n"
                        f"Fix: pass floats (e.g. np.asarray(x, float)), or differentiate with "
                        f"respect to another argument (argnums=...)")
    return check_args


def _reverse_transform(fun, argnums, has_aux, mode, name):
    if not callable(fun):
        raise TypeError(f"{name} expects a function, got {type(fun).__name__}: {fun!r}")
    nums, multi = _argnums(argnums, fun)
    t = Transformed(fun, lambda ir_fn, leaves: reverse(ir_fn, nums, mode, has_aux, multi, leaves),
                    f"{name}({getattr(_user_function(fun), '__name__', 'f')})")
    t.check_args = _check_real(name, fun, nums)
    return t


def grad(fun, argnums=0, has_aux=False):
    """The gradient of a function with a real scalar output, as a function of the same args."""
    return _reverse_transform(fun, argnums, has_aux, "grad", "grad")


grad.__strop_transform__ = True


def value_and_grad(fun, argnums=0, has_aux=False):
    """Like ``grad`` but returns ``(value, gradient)``."""
    return _reverse_transform(fun, argnums, has_aux, "value_and_grad", "value_and_grad")


value_and_grad.__strop_transform__ = True


def vjp(fun, *primals, has_aux=False):
    """``(out, vjp_fn)``: ``vjp_fn(cotangent)`` gives the cotangents of all ``primals``."""
    n = len(primals)
    t = Transformed(fun, lambda ir_fn, leaves: reverse(ir_fn, tuple(range(n)), "vjp", has_aux,
                                                       True, leaves),
                    f"vjp({getattr(_user_function(fun), '__name__', 'f')})")
    t.check_args = _check_real("vjp", fun, tuple(range(n)))
    primals = [dtypes.canonicalize_tree(p) for p in primals]
    out = _call_plain(fun, primals)

    def vjp_fn(cotangent):
        result = t.call_positional(list(primals) + [cotangent])
        return result[1]

    vjp_fn.transformed = t
    if has_aux:
        return out[0], vjp_fn, out[1]
    return out, vjp_fn


def _call_plain(fun, args):
    return fun(*args)


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
