"""A function made by a transform: its code generated per kind of arguments and static values,
cached, and called with the arguments bound as the user's function takes them."""
import copy
import dataclasses
import functools
import inspect
import types
import warnings

import gast
import numpy as np
from numba._dispatcher import compute_fingerprint as _fingerprint

from . import dtypes
from .config import config
from .runner import Rerun, Staged, _is_numba_error
from .runtime.trips import NoTrip, first_trip
from .errors import JitFallbackWarning, LaxTypeError, Location, user_stacklevel
from .placement import devices, placed
from .runtime.cuda import arrays
from .transformer import ir
from .transformer.check import check
from .transformer.common import merge_common
from .transformer.keyreuse import check_key_reuse
from .transformer.normalize import normalize
from .transformer.parse import parse
from .transformer.peel import split_first_trips
from .transformer.rank_tests import decide_rank_tests
from .transformer.call_kinds import Local
from .transformer.ranks import given_ranks
from .transformer.flatten import dict_orders, flatten_params, leaf_paths
from .transformer.unroll import unroll
from .transformer.zip_index import zip_by_index
from .results import ready
from .tree_util import tree_leaves, tree_structure


class Transformed:
    """A function made by a transform: call it like the original; ``strop.source`` shows it.

    The code is generated at the first call, once per key — the "kind" of each argument
    (containers are differentiated leaf by leaf) and the values of static arguments — and
    cached.  ``backend`` "python" runs the generated code as Python, "cpu" through Numba.
    """
    check_args = None
    check_all = None        # checks of all the arguments, static ones included (jit(grad))
    shape_keyed = False     # code made per the arguments' dtypes and equal lengths: reverse
    #                         mode's (transformer/shapes.py) and any transform's of it
    batches = False         # a vmap is among the transforms this is made of (lane_dims)
    rebuilds_trees = False  # finish() rebuilds pytrees its code returns as leaves
    returns_arrays = False  # its results' leaves are arrays whatever the function's are
    nargs = None            # vjp, jvp: the arguments are the first nargs inputs (of a call)
    backend = "python"
    static_argnums = ()
    differentiates = True   # helpers without a rule are inlined, to be differentiated
    plain = None            # what an outer transform transforms, when not this one's code
    device = None           # "cuda": jit(backend="cuda"), results on the GPU
    elementwise_kernels = False   # jit(f): elementwise code given GPU arrays runs as a kernel
    _cuda_elementwise = None
    _warned_gpu = False
    runs_on_device = False  # the copy on_gpu runs: its code launches kernels (backend "device")
    _on_device = None       # that copy
    _device_refused = None  # why this code cannot run on the device (codegen/cuda_program.py)

    def __init__(self, fun, build, name):
        self.fun = fun                     # the function transformed (maybe itself Transformed)
        self._build = build                # (normalized input, leaf params) -> ir.Function
        self._cache = {}                   # key -> Staged
        self._assumed = {}                 # kinds, settings -> the equal lengths code assumes
        self._last_key = None
        self._fast = {}                    # _signature -> (_cache, Staged, key, narrowed)
        functools.update_wrapper(self, _user_function(fun), updated=())
        self.__name__ = name
        self.__wrapped__ = None            # inspect.unwrap must stop here
        self.signature = inspect.signature(_user_function(fun))
        self._bound = _bound_names(fun)
        self._positional = not self._bound and sum(
            1 for p in self.signature.parameters.values()
            if p.kind is p.POSITIONAL_OR_KEYWORD) == len(self.signature.parameters)
        self._arity = _arity(fun)
        self._nparams = len(self.signature.parameters)
        self.shape_keyed = self.shape_keyed or getattr(fun, "shape_keyed", False)
        self.batches = self.batches or getattr(fun, "batches", False)

    def staged(self, key=None, reason=None):
        """The Staged code for ``key`` (by default: the last call's, else all leaves)."""
        key = key or self._last_key or (self.default_kinds(), (), _settings())
        st = self._cache.get(key)
        if st is not None and not st.guards_hold():
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
            kinds, statics, settings = key
            self._kinds_now = kinds
            nargs = len(kinds) if self.nargs is None else self.nargs
            inner = normalized(self.fun, self.inner_kinds(kinds[:nargs]), self.differentiates,
                               settings)
            groups = inner.groups or tuple((False, (a.id,)) for a in
                                           inner.node.args.args[:inner.nparams])
            start = [sum(len(g[1]) for g in groups[:i]) for i in range(len(groups))]

            def by_name(kinds):   # each parameter's kind (a tree's: its leaves')
                return {n: leaf for (tree, names), k in zip(groups, kinds)
                        for n, leaf in zip(names, k[2] if tree else [k] * len(names))}
            kind_of = by_name(kinds)
            self._dtypes_now, self._dims_now = (
                {n: d for (tree, names), ds in zip(groups, by_arg)
                 for n, d in zip(names, ds if tree and ds is not None else [ds] * len(names))
                 if d is not None}   # (a tree's: none known for a vmap lane's)
                for by_arg in _shapes_in(settings))
            inner, free_kinds = _with_free_kinds(inner)
            kind_of.update(free_kinds)
            if statics:
                inner = bind_statics(inner, {start[i]: v for i, v in
                                             zip(self.static_argnums, statics)})
            whole, ranks = settings[-1:] == (WHOLE_LOOPS,), given_ranks(kind_of)
            if not whole and self.backend != "device":   # (Numba typing aids)
                # (``inner`` is one lane's code under vmap: its tests read a lane's ranks)
                lanes = {**by_name(self.inner_kinds(kinds[:nargs]) + kinds[nargs:]),
                         **free_kinds}
                inner = decide_rank_tests(inner, given_ranks(lanes), inner.callee)
                inner = split_first_trips(inner, ranks, first_trip)
            fn = self._build(inner, kind_of)
            donated = [start[i] - sum(1 for j in self.static_argnums if j < i)
                       for i in getattr(self, "donate_argnums", ())]
            # (the code for a call whose split loop runs no trip: as Python, where a name may
            # stay a number; made for such calls alone)
            backend = "python" if whole else self.backend
            self._cache[key] = Staged(fn, _origin(self.fun), backend, reason, donated,
                                      tuple(ranks.items()),
                                      tuple(n for n, k in kind_of.items() if k == INT))
        return self._cache[key]

    def defaulted(self, npassed, keywords):
        """The positions of the positional parameters a call with ``npassed`` positional
        arguments and these ``keywords`` leaves to their defaults (none where *args or bound
        parameters make positions ambiguous)."""
        if self._bound or self._arity[1]:
            return ()
        params = [p for p in self.signature.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return tuple(i for i, p in enumerate(params) if i >= npassed and
                     p.name not in keywords and p.default is not p.empty)

    def inlined(self, npositional=None, kinds=None):
        """The Staged code inlined where this transform is called inside a function being
        transformed (with ``npositional`` positional arguments, if known), for the kinds of
        its arguments known there (transformer/call_kinds.py).  An argument of unknown kind
        is taken for an array or a container (cotangents accumulate with add(), which takes
        both): the code must not depend on how this transform was last called either."""
        n = len(self.signature.parameters)
        if npositional is not None and self._arity[1]:   # f(*xs): one parameter per argument
            n = npositional + self._arity[2]
        if kinds is None or len(kinds) != n:
            kinds = (TREE,) * n
        return self.staged((tuple(kinds), (), _settings()))

    def takes_leaves(self):
        """Whether its code, inlined in other code, may be staged for a pytree argument's
        leaves: neither it nor a transform it is made of rebuilds results in finish()."""
        return not self.rebuilds_trees and (not isinstance(self.fun, Transformed)
                                            or self.fun.takes_leaves())

    def rebuilt_inline(self, out, kinds, read, display):
        """finish() as code (api.ReverseTransformed's): None where nothing is rebuilt."""
        return self.fun.rebuilt_inline(out, kinds, read, display) if isinstance(
            self.fun, Transformed) else None

    def inner_kinds(self, kinds):
        """The kinds of the arguments the transformed function itself receives."""
        return kinds

    def default_kinds(self):
        return (ARRAY,) * len(self.signature.parameters)

    def generated(self, key=None):
        return self.staged(key).generated

    def shown(self, key=None):
        """The generated source as strop.source shows it."""
        return self.staged(key).shown

    def ir(self, key=None):
        return self.staged(key).fn

    @property
    def last_backend(self):
        """The backend that ran the last call: "cpu", or "python" after a fallback."""
        return self.staged(self._last_key).backend if self._last_key else None

    def __call__(self, *args, **kwargs):
        npos, star, nkw = self._arity
        if not kwargs and (self._positional and len(args) == self._nparams
                           or star and not nkw and not self._bound and len(args) >= npos):
            return self.call_positional(list(args))   # the common case, without binding
        return self.call_positional(_bind(self.fun, args, kwargs, self.signature, self._bound))

    def call_positional(self, args):
        fast = self._fast.get(_signature(args, self.shape_keyed)) if self._fast else None
        if fast is not None and fast[0] is self._cache and fast[1].guards_hold():
            _, st, key, narrowed, direct = fast   # a call like an earlier one: unchecked
            self._last_key = key
            if direct is not None:
                try:
                    return ready(self.finish(st.run_direct(direct, args), key[0]))
                except Rerun:
                    pass
            if narrowed:
                args = [dtypes.canonicalize(a) if i in narrowed else a
                        for i, a in enumerate(args)]
            return ready(self.finish(self._run(st, key, args, args, args), key[0]))
        swap = None
        if self.runs_on_device:   # kinds and shapes from stand-ins, the run on the arrays
            args, swap = arrays.stand_ins(args)
        elif arrays.MADE[0] or self.device == "cuda":   # (a DeviceArray exists: any here?)
            device = placed(args)
            if device is not None or self.device == "cuda":
                return self.on_gpu(args, device)
        if self.static_argnums:
            if self.static_argnums[-1] >= len(args):
                raise ValueError(f"static_argnums {list(self.static_argnums)} out of range for "
                                 f"a call with {len(args)} arguments{defined_at(self.fun)}")
            full = args
            statics = tuple(_hashable(args[i], i) for i in self.static_argnums)
            args = [a for i, a in enumerate(args) if i not in self.static_argnums]
        else:
            statics = ()
        raw = args
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
        key = (kinds, statics, self._shape_settings(args, kinds) if self.shape_keyed
               else _settings())
        self._last_key = key
        if any(type(k) is tuple for k in kinds):   # pytrees go in as their leaves
            dynamic = [k for i, k in enumerate(kinds) if i not in self.static_argnums]
            args = [x for a, k in zip(args, dynamic) for x in (
                tree_leaves(a) if type(k) is tuple else [a])]
        st = self._cache.get(key)
        if st is None or not st.guards_hold():
            st = self.staged(key)     # new, or a function it calls was rebound
        if not st.branches_checked:
            if st.backend == "python" and "branch_type(" in st.generated.source:
                self.check_branches(full if statics else given)   # raises on every call
            st.branches_checked = True
        kept = None
        if swap:
            args = arrays.swapped(args, swap)
        else:
            kept = self._remember(raw, given, args, st, key)
        out = self._run(st, key, args, full if statics else given, given)
        if kept is not None:
            self._direct(kept, st, args)
        return ready(self.finish(out, key[0]))   # arrays answer .block_until_ready()

    def _run(self, st, key, args, full, given):
        """``st`` run on ``args`` (``full``: the call's arguments, statics too; ``given``:
        its dynamic ones), its errors as the user's."""
        try:
            try:
                return st.run(args)
            except NoTrip:    # a loop split at its first trip runs none: code without splits
                return self.staged(key[:2] + (key[2] + (WHOLE_LOOPS,),)).run(args)
        except LaxTypeError as e:
            if getattr(e, "compiled_branches", False):   # Numba's types: a plain call may
                self.check_branches(full)   # say which lengths, paths
            raise
        except TypeError as e:
            raise _argument_hint(e, self.fun, given, self.static_argnums) from None

    def _remember(self, raw, given, args, st, key):
        """Keep what this call found for calls like it (``_signature``: the same types,
        Numba types, settings and, where the code is made per lengths, shapes), which then
        skip the checks, kinds and key: each is decided by those alone.  Only calls of
        numbers and arrays with no static argument, on the CPU, that took no pytree apart.
        Returns the signature kept, or None."""
        if self.static_argnums or self.device is not None or args is not given or \
                not st.branches_checked or any(type(k) is not str or k == TREE for k in key[0]):
            return
        sig = _signature(raw, self.shape_keyed)
        if sig is None:
            return
        if len(self._fast) >= 64:   # (calls of ever new shapes: a bounded table)
            self._fast.clear()
        narrowed = frozenset(i for i, (a, b) in enumerate(zip(raw, given)) if a is not b)
        self._fast[sig] = (self._cache, st, key, narrowed, None)
        return sig

    def _direct(self, sig, st, args):
        """After the first call of a kind _remember kept (``sig``), run on ``args``: its
        machine code, for calls like it to run with nothing around it (Staged.direct)."""
        fast = self._fast.get(sig)
        if fast is not None and fast[1] is st:
            self._fast[sig] = fast[:4] + (st.direct(args, fast[3]),)

    def on_gpu(self, args, device):
        """A call with arrays on a GPU (or of ``jit(backend="cuda")``): one kernel runs
        ``jit`` of elementwise code (cuda_vmap.py); other code runs launch by launch on the
        device (``on_device``, codegen/cuda_program.py); code that calls what has no device
        twin runs on the CPU, on host copies, its results put on the device, after a
        JitFallbackWarning naming the call."""
        device = device or devices("cuda")[0]
        if self.elementwise_kernels:   # jit(f) of elementwise code: one kernel
            if self._cuda_elementwise is None:
                from .cuda_vmap import CudaElementwise
                self._cuda_elementwise = CudaElementwise(self)
            out = self._cuda_elementwise.call(args, device)
            if out is not None:
                return out
        if self._device_refused is None:   # array code: launch by launch
            from .codegen.cuda_arrays import Unsupported
            try:
                return arrays.put(self.on_device().call_positional(
                    arrays.put_arrays(args, device)), device)
            except Unsupported as e:
                self._device_refused = e
            except Exception as e:
                if not _is_numba_error(e):
                    raise
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                self._device_refused = Unsupported(
                    f"Numba could not compile a kernel of it for the GPU ({first})")
        if not self._warned_gpu:
            self._warned_gpu = True
            e = self._device_refused
            warnings.warn(JitFallbackWarning(
                f"{self.__name__} runs on the CPU, its results put on {device!r}: {e.reason}",
                e.loc, fix="nothing is needed (the results are the same); to run it on the "
                           "GPU, write that part with what the CUDA backend covers (README: "
                           "the CUDA backend)"), stacklevel=user_stacklevel())
        device_was, self.device = self.device, None
        try:
            out = self.call_positional(arrays.to_host(args))
        finally:
            self.device = device_was
        return arrays.put(out, device)

    def on_device(self):
        """This transform as the code that runs on a GPU launch by launch (its own cache)."""
        if self._on_device is None:
            t = self._on_device = copy.copy(self)
            t._cache, t._assumed, t._last_key = {}, {}, None
            t.backend, t.runs_on_device, t.device = "device", True, None
        return self._on_device

    def _shape_settings(self, args, kinds):
        """The key's settings with the arguments' dtypes and the equal lengths the code is
        made for: the first call's, while each call has equal lengths where it had (a call
        with more, a last chunk of 3 rows of 3 columns, runs the same code), else none (code
        that assumes no lengths equal, made once)."""
        dtypes, dims = _shapes(args, kinds, self.static_argnums)
        if self.batches:
            dims = self.lane_dims(dims, kinds)
        base = _settings() + (dtypes,)
        assumed = self._assumed.setdefault((kinds, base), dims)
        return base + (assumed if assumed == dims or _holds(assumed, dims) else None,)

    def lane_dims(self, dims, kinds):
        """The classes of lengths (``_shapes``) of the arguments the code that reads them (the
        innermost transform's) receives: vmap's lanes have no batch axis."""
        return self.fun.lane_dims(dims, kinds) if isinstance(self.fun, Transformed) else dims

    def check_branches(self, args):
        """Code run as Python runs one branch of a cond or switch, so the types of the others'
        outputs are unknown to it (compiled code has Numba type them all: runtime/lax.py,
        branch_type).  At the first call with new kinds of arguments, the user's function is
        run once as a plain call, which compares the branches' types as JAX does
        (lax/control.py) and raises its error where they differ; only a function without
        effects (print, strop.debug, callbacks, I/O) is run again, and anything else that run
        raises is left to the transformed code to meet."""
        fun = self
        while isinstance(fun, Transformed):
            args = fun.plain_args(args)
            if args is None:
                return
            fun = fun.fun
        from .lax.control import check_branch_types
        check_branch_types(fun, args)

    def plain_args(self, args):
        """The arguments of ``self.fun`` for a call of this one with ``args`` (None: not
        known)."""
        return list(args[:self.nargs]) if self.nargs is not None else list(args)

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

    def __get__(self, obj, objtype=None):
        """A transform in a class body is a method, as JAX's (``@jit`` or
        ``@partial(jit, static_argnums=0)`` on a method: the FAQ's strategies 2 and 3)."""
        return self if obj is None else types.MethodType(self, obj)


SCALAR, ARRAY, TREE = "scalar", "array", "tree"
INT = "int"   # a Python int: a number, which NumPy treats as weak (float32 array * 2: float32)
_ARRAY_OF_RANK = tuple(f"{ARRAY}{n}" for n in range(65))   # (NumPy's most axes: 64)


def _kind(a):
    """What generated code may assume of an argument: a number (specialized as a scalar), an
    array, a dict/list/tuple flattened to its leaves ((TREE, its structure, each leaf's kind)),
    or another container (differentiated leaf by leaf).  (On every call: kept cheap.)"""
    t = type(a)
    if t is np.ndarray:
        return _ARRAY_OF_RANK[a.ndim]   # the rank: vmap lines lanes up by it
    if t is int:
        return INT
    if t is float or isinstance(a, (float, int, np.floating, np.integer)):
        return SCALAR
    if isinstance(a, np.ndarray):
        return _ARRAY_OF_RANK[a.ndim]
    leaves = tree_leaves(a)
    if len(leaves) == 1 and leaves[0] is a:
        return ARRAY
    treedef = tree_structure(a)
    if leaf_paths(treedef) is None:
        return TREE
    return TREE, treedef, tuple(_kind(x) for x in leaves), dict_orders(a)


def _signature(args, shapes):
    """What decides a call's kinds, key and checks when its arguments are numbers and arrays:
    Numba's fingerprints of them (the type of a number; an array's dtype, rank and layout, a
    subclass's as NumPy's), the settings, and their shapes where ``shapes`` (code made per
    lengths).  None for an argument with no fingerprint."""
    try:
        sig = (tuple(map(_fingerprint, args)), config._values["enable_x64"],
               config._values["threefry_partitionable"])
    except (NotImplementedError, TypeError, ValueError):
        return None
    return sig + (tuple([getattr(a, "shape", None) for a in args]),) if shapes else sig


def _kinds(args, static=()):
    """The kind of each argument; static arguments are bound as constants."""
    if not static:
        return tuple([_kind(a) for a in args])
    out = [_kind(a) for a in args]
    for i in sorted(static):
        out.insert(i, ARRAY)
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class KindGuard:
    """A global or closure variable holding data, a number or an array of some rank when the
    code was made, which specializes on it (transformer/ranks.py): the code is made again
    when the variable holds another kind."""
    var: object
    kind: object

    def holds(self):
        try:
            return _free_kind(self.var.read()) == self.kind
        except (KeyError, ValueError, NameError):
            return False


def _free_kind(value):
    """The kind of a free variable's value; a lifted function's local holds what its
    enclosing function knew of it (transformer/call_kinds.py)."""
    return value.kind if isinstance(value, Local) else _kind(value)


def _with_free_kinds(inner):
    """(``inner`` guarded by the kinds of its free variables that are numbers or arrays,
    {parameter: kind} of those), as the code is made from them."""
    kinds, guards = {}, []
    for name, var in inner.free.items():
        try:
            kind = _free_kind(var.read())
        except (KeyError, ValueError, NameError):
            continue
        if kind in (SCALAR, INT) or isinstance(kind, str) and kind.startswith(ARRAY) and \
                kind != ARRAY:
            kinds[name] = kind
            guards.append(KindGuard(var, kind))
    if not guards:
        return inner, kinds
    return dataclasses.replace(inner, guards=tuple(inner.guards) + tuple(guards)), kinds


# a key's last setting where its code splits no loop at its first trip (transformer/peel.py)
WHOLE_LOOPS = "whole loops"


def _settings():
    """The config values generated code depends on (the dtype policy, the PRNG stream)."""
    values = config._values
    return values["enable_x64"], values["threefry_partitionable"]


def _shapes(args, kinds, static=()):
    """(the dtype of each argument that is a NumPy array or number, the lengths of its axes
    as classes of equal lengths: (500, 64) and (64,) are (0, 1) and (1,)), each by position as
    ``kinds`` (a tree: a tuple by leaf; None for anything else).  Reverse mode's code is made
    for them: transformer/shapes.py proves shapes and dtypes equal from them.  (On every call:
    kept cheap.)"""
    if not static and all([type(a) is np.ndarray for a in args]):   # the common case
        shapes = tuple([a.shape for a in args])
        dims = _PATTERNS.get(shapes)
        if dims is None:
            if len(_PATTERNS) > 4096:
                _PATTERNS.clear()
            dims = _PATTERNS[shapes] = _any_shapes(args, kinds, static)[1]
        return tuple([a.dtype for a in args]), dims
    return _any_shapes(args, kinds, static)


def _any_shapes(args, kinds, static):
    """``_shapes`` of any arguments: trees, numbers, static ones."""
    lengths = {}
    dtypes, dims = [], []
    for a, k in zip(args, [k for i, k in enumerate(kinds) if i not in static] if static
                    else kinds):
        if type(a) is np.ndarray:
            dtypes.append(a.dtype)
            dims.append(tuple([lengths.setdefault(n, len(lengths)) for n in a.shape]))
        elif type(k) is tuple:
            leaves = tree_leaves(a)
            dtypes.append(tuple(_dtype(x) for x in leaves))
            dims.append(tuple(_lengths(x, lengths) for x in leaves))
        else:
            dtypes.append(_dtype(a))
            dims.append(_lengths(a, lengths))
    for i in sorted(static):
        dtypes.insert(i, None)
        dims.insert(i, None)
    return tuple(dtypes), tuple(dims)


_PATTERNS = {}   # the arrays' shapes -> their classes of lengths


def _dtype(a):
    return a.dtype if isinstance(a, (np.ndarray, np.generic)) else None


def _lengths(a, lengths):
    if type(a) is not np.ndarray and not isinstance(a, np.ndarray):
        return None
    return tuple([lengths.setdefault(n, len(lengths)) for n in a.shape])


def _holds(assumed, dims):
    """Whether axes of one class in ``assumed`` are of one length in ``dims`` (both from
    ``_shapes``, for arguments of the same kinds)."""
    seen = {}
    for a, d in zip(_flat(assumed), _flat(dims)):
        if seen.setdefault(a, d) != d:
            return False
    return True


def _flat(dims):
    for d in dims:
        if isinstance(d, tuple):
            yield from _flat(d)
        else:
            yield d


def _shapes_in(settings):
    """The arguments' dtypes and classes of lengths in a key's settings (none known where
    the key has none)."""
    if settings[-1:] == (WHOLE_LOOPS,):
        settings = settings[:-1]
    return (settings[2], settings[3] or ()) if len(settings) > 2 else ((), ())


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
    body, guards = [], []
    for i in sorted(values, reverse=True):
        p = params.pop(i)
        value = values[i]
        if isinstance(value, (bool, int, float, str, type(None))):
            atom = ir.const(value)
        else:
            ref = f"{p.id}_static"
            refs[ref] = value
            atom = ir.name(ref)
        if not isinstance(value, (bool, int, float, str, type(None))):
            guards += _fold_attributes(node, p.id, value, refs)
            if not any(isinstance(n, gast.Name) and n.id == p.id for n in gast.walk(node)):
                continue   # only its attributes were read: compiled code never sees it
        body.insert(0, ir.assign(p.id, atom, getattr(node, "loc", None)))
    node.body = body + node.body
    return dataclasses.replace(fn, node=node, refs=refs, nparams=fn.nparams - len(values),
                               guards=tuple(fn.guards) + tuple(guards))


@dataclasses.dataclass(frozen=True)
class AttributeGuard:
    """An attribute of a static object read as a constant: the code is made again when the
    attribute changes (an object hashed by identity, mutated: no stale result)."""
    var: object    # what staged() names: .user_name
    obj: object
    attr: str
    value: object

    def holds(self):
        now = getattr(self.obj, self.attr, _MISSING)
        return now is self.value or type(now) is type(self.value) and isinstance(
            now, (bool, int, float, str)) and now == self.value


@dataclasses.dataclass(frozen=True)
class _Named:
    user_name: str


_MISSING = object()


def _fold_attributes(node, name, value, refs):
    """Reads of ``name.attr`` of a static object (the FAQ's ``self`` with static_argnums=0) as
    the attribute's value: a constant, or bound like the object (compiled code cannot read a
    Python object's attributes; the object's hash and == key the code, so a changed ``self``
    gets code of its own, and a guard notices a change the hash does not).  Returns the
    guards."""
    guards = []
    if any(isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load)
           for n in gast.walk(node)):
        return guards

    class Fold(gast.NodeTransformer):
        def visit_Attribute(self, a):
            self.generic_visit(a)
            if not (isinstance(a.value, gast.Name) and a.value.id == name
                    and isinstance(a.ctx, gast.Load)):
                return a
            try:
                attr = getattr(value, a.attr)
            except AttributeError:
                return a
            if isinstance(attr, (bool, int, float, str, type(None))):
                folded = ir.const(attr)
            elif isinstance(attr, (np.ndarray, np.generic)):
                ref = f"{name}_{a.attr}"
                while ref in refs and refs[ref] is not attr:
                    ref += "_"
                refs[ref] = attr
                folded = ir.name(ref)
            else:
                return a
            guards.append(AttributeGuard(_Named(f"{name}.{a.attr}"), value, a.attr, attr))
            return folded
    Fold().visit(node)
    return guards


def transformable(fun):
    """``fun``, or for a NumPy function given to a transform itself (``jit(np.split)``) a
    function of the same parameters calling it: strop transforms the user's source, and the
    call is what its rules and Numba know (NumPy's own source is not the user's)."""
    module = getattr(fun, "__module__", None) or ""
    if not (isinstance(fun, np.ufunc) or module in ("numpy", "strop.rng") or module.startswith(
            ("numpy.", "strop.rng."))):   # (strop.random's samplers: called, as NumPy's)
        return fun
    if isinstance(fun, np.ufunc):
        params = [f"x{i + 1}" for i in range(fun.nin)]
        args, defaults = list(params), {}
    else:
        try:
            sig = inspect.signature(fun)
        except (TypeError, ValueError):
            return fun
        # (out= and NumPy's "no value" defaults left out: the call is NumPy's own default)
        kept = [p for p in sig.parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "out"
                and (p.default is p.empty or isinstance(p.default, (bool, int, float, str,
                                                                    type(None)))
                     or isinstance(p.default, tuple) and all(type(d) is int
                                                             for d in p.default))]
        defaults = {f"_default_{p.name}": p.default for p in kept if p.default is not p.empty}
        params = [p.name if p.default is p.empty else f"{p.name}=_default_{p.name}"
                  for p in kept]
        args = [p.name if p.default is p.empty else f"{p.name}={p.name}" for p in kept]
    name = getattr(fun, "__name__", "f")
    target = f"_numpy_{name}"
    source = f"def {name}({', '.join(params)}):\n    return {target}({', '.join(args)})\n"
    from .codegen import load as loader
    made = loader.load(name, source, {}, {target: fun, **defaults}).function
    made.__strop_numpy__ = fun
    return made


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


def normalized(fun, kinds=None, differentiate=True, settings=None):
    """The normalized IR of a user function or of a transformed function's generated code
    (``settings``: the outer key's, which carry the arguments' dtypes)."""
    if isinstance(fun, Transformed):
        fun = fun.plain or fun     # jit(vmap(f)) inside a transform: as vmap(f)
        st = fun.staged((kinds, (), settings or _settings()) if kinds is not None else None)
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
                    keep_custom=differentiate, classes=_classes(fun, kinds, bound),
                    sequences=_sequences(fun, kinds, bound), trees=_trees(fun, kinds, bound),
                    statics=_static_objects(fun, bound), kinds=_param_kinds(fun, kinds, bound))
    check_key_reuse(out)
    out = bind_statics(out, bound) if bound else out
    trees = {i: k[1] for i, k in enumerate(kinds or ()) if type(k) is tuple}
    orders = {i: k[3] for i, k in enumerate(kinds or ()) if type(k) is tuple and k[3]}
    spread = None
    params = list(inspect.signature(fun).parameters.values())
    star = [i for i, p in enumerate(params) if p.kind is p.VAR_POSITIONAL]
    if star:   # *xs: one parameter per argument it was called with
        at = star[0] - sum(1 for i in bound if i < star[0])
        spread = (at, max(len(kinds) - out.nparams + 1, 0) if kinds is not None else 1)
    return merge_common(zip_by_index(unroll(flatten_params(out, trees, spread, orders)
                                            if trees or spread else out)))


def _static_objects(fun, bound):
    """parameter name -> the function, module or constant a partial or bound method binds
    to it."""
    names = list(inspect.signature(fun).parameters)
    return {names[i]: v for i, v in bound.items() if i < len(names) and (isinstance(
        v, (bool, int, float, str, type(None))) or ir.is_constant_object(v))}


def _param_kinds(fun, kinds, bound):
    """{parameter: kind} of the parameters a call passes, and of the arrays and numbers a
    partial binds (constants of the code, of known ranks)."""
    every = list(inspect.signature(fun).parameters.values())
    params = [p.name for i, p in enumerate(every)
              if i not in bound and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    out = {every[i].name: _kind(v) for i, v in bound.items()
           if i < len(every) and isinstance(v, (np.ndarray, float, np.floating))}
    # a pytree of arrays bound (vmap(partial(maml_loss, params))): a transform called inside
    # on it takes its leaves
    out.update({every[i].name: k for i, v in bound.items() if i < len(every) and isinstance(
        v, (list, tuple, dict)) and type(k := _kind(v)) is tuple})
    out.update(zip(params, kinds or ()))
    return out


def _sequences(fun, kinds, bound):
    """The parameters whose arguments are lists or tuples (NumPy functions read them as
    arrays: transformer/operands.py)."""
    if not kinds or bound:
        return set()
    params = [p for p in inspect.signature(fun).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return {p.name for p, k in zip(params, kinds)
            if type(k) is tuple and k[1].node_type in (list, tuple)}


def _trees(fun, kinds, bound):
    """{parameter: structure} of the pytree arguments (tree_util inside the function reads
    them: transformer/normalize_trees.py)."""
    if not kinds or bound:
        return {}
    params = [p for p in inspect.signature(fun).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return {p.name: k[1] for p, k in zip(params, kinds) if type(k) is tuple}


def _classes(fun, kinds, bound):
    """{parameter: class} of the arguments that are instances of registered pytree classes
    (their methods are inlined: normalize_calls.class_method)."""
    if not kinds or bound:
        return {}
    params = [p for p in inspect.signature(fun).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return {p.name: k[1].node_type for p, k in zip(params, kinds)
            if type(k) is tuple and k[1].node_type not in (dict, list, tuple, type(None))}


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


def defined_at(fun):
    """Where the user's function is defined, shown as errors show it ("" if unknown)."""
    code = getattr(_unwrap(_user_function(fun))[0], "__code__", None)
    return f"\n{Location(code.co_filename, code.co_firstlineno).show()}" if code else ""


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
