"""``vmap``: the public wrapper of the vectorizing transform (transformer/vectorize.py).

It checks ``in_axes``/``out_axes``/``axis_size`` against the arguments (messages name the
argument and the sizes, as JAX's do), resolves pytree prefixes of ``in_axes`` to one axis per
leaf parameter, and moves each batched argument's axis to the front in the generated code.
A function the rewrite cannot batch runs lane by lane (``each``): the generated source says
why, at the user line.

What an outer transform transforms (``grad(vmap(f))``, ``jvp(vmap(f))``, ``vmap(f)`` called in
a transformed function) is ``plain``: the same vmap with calls of custom_jvp/custom_vjp
functions kept, as calls of their batched versions (custom.py), so that their rules are used.
vmap's own code calls their primal functions, inlined.
"""
import copy
import inspect
import sys

import gast
import numpy as np

from . import api
from . import runtime
from .codegen.parallel import Split
from .config import config
from .runner import Staged
from .transformer import ir
from .transformer.lanes import companion, lane_loop
from .transformer.vectorize import NotBatchable, OutAxesError, vectorize
from .tree_util import tree_leaves, tree_map, tree_structure


_WIDE = {np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.complex128)}


def _is_axis(a):
    return a is None or isinstance(a, (int, np.integer)) and not isinstance(a, bool)


def _check_axes_spec(spec, what):
    for leaf in tree_leaves(spec, is_leaf=lambda x: x is None):
        if not _is_axis(leaf):
            raise TypeError(f"vmap {what} must be an int, None, or a (nested) tuple, list or "
                            f"dict of them, got {spec!r} (with {leaf!r})")


def vmap(fun, in_axes=0, out_axes=0, axis_size=None):
    """``fun`` mapped over a leading (or ``in_axes``) axis of its arguments: the result equals
    stacking ``fun`` applied to each slice, computed on the whole batch at once."""
    if not callable(fun):
        raise TypeError(f"vmap expects a function, got {type(fun).__name__}: {fun!r}")
    fun = api.transformable(fun)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if axis_size is not None and (not isinstance(axis_size, (int, np.integer)) or axis_size < 0):
        raise TypeError(f"vmap axis_size must be a non-negative int, got {axis_size!r}")
    name = getattr(api._user_function(fun), "__name__", "f")
    return api.made(Vectorized.make(fun, f"vmap({name})", in_axes, out_axes, axis_size), "vmap",
                    fun, in_axes=in_axes, out_axes=out_axes, axis_size=axis_size)


vmap.__strop_transform__ = True


class Vectorized(api.Transformed):
    differentiates = False   # custom functions inlined as their primal (see plain)
    returns_arrays = True    # (each leaf batched, or broadcast to the batch)
    lanes = False    # per-lane code fused into loops over the batch (transformer/lanes.py)
    uncompiled = None   # jit(vmap(f)): vmap(f), for an empty batch and after a fallback
    _cuda = None        # jit(vmap(f)) on a GPU (cuda_vmap.py)

    @classmethod
    def make(cls, fun, name, in_axes, out_axes, axis_size):
        t = cls(fun, None, name)
        t._build = t.build
        t.in_axes, t.out_axes, t.axis_size = in_axes, out_axes, axis_size
        t._outer = None
        t._unmapped = {}   # {(defaulted, passed): this vmap with those defaults unmapped}
        return t

    def plain_args(self, args):
        """Lane 0 of the arguments, where each is mapped on its leading axis or not at all
        (None: another ``in_axes``)."""
        axes = list(self.in_axes) if isinstance(self.in_axes, (tuple, list)) else \
            [self.in_axes] * len(args)
        if len(axes) != len(args) or any(a not in (0, None) for a in axes):
            return None
        mapped = [a for a, axis in zip(args, axes) if axis == 0]
        if not mapped or not all(np.ndim(leaf) > 0 and len(leaf) > 0
                                 for a in mapped for leaf in tree_leaves(a)):
            return None
        return [tree_map(lambda leaf: leaf[0], a) if axis == 0 else a
                for a, axis in zip(args, axes)]

    @property
    def plain(self):
        """What an outer transform transforms: this vmap, custom functions kept (as calls of
        their batched versions, whose rules are the rules vmapped)."""
        if self.differentiates:
            return None
        if self._outer is None:
            self._outer = Vectorized.make(self.fun, self.__name__, self.in_axes,
                                          self.out_axes, self.axis_size)
            self._outer.differentiates = True
        if self._outer._last_key is None and self._last_key and not self._last_key[1]:
            self._outer._last_key = self._last_key   # the kinds it was called with
        return self._outer

    def compiled(self, static_argnums=()):
        """``jit(vmap(f))``: the batched code with per-lane runs fused into loops over the
        batch, compiled by Numba, and run in chunks of lanes on all cores where that pays."""
        t = Vectorized.make(self.fun, f"jit({self.__name__})", self.in_axes, self.out_axes,
                            self.axis_size)
        t._outer = self.plain
        t.backend, t.lanes, t.uncompiled, t.static_argnums = "cpu", True, self, static_argnums
        return t

    def on_cuda(self):
        """This ``jit(vmap(f))`` with one GPU thread per lane (made once)."""
        if self._cuda is None:
            from .cuda_vmap import CudaVmap
            self._cuda = CudaVmap(self)
        return self._cuda

    def on_gpu(self, args, device):
        if self.uncompiled is not None:   # jit(vmap(f)) on GPU arrays: its kernel
            return self.on_cuda().call_positional(args)
        return super().on_gpu(args, device)

    def call_positional(self, args):
        if self.check_args_axes(args) == 0 and self.uncompiled is not None:
            return self.uncompiled.call_positional(args)   # no lane to run: vmap(f)'s code
        return super().call_positional(args)

    def staged(self, key=None, reason=None):
        st = super().staged(key, reason)
        if self.uncompiled is not None and st.python is None:   # a fallback runs vmap(f)'s
            st.python = lambda: self.uncompiled.staged(key).generated.function   # code
        return st

    def finish(self, out, kinds):
        """Lanes stacked into arrays: with 64-bit values off, a 64-bit one (the lanes' Python
        ints or floats, as a trip counter) is 32-bit, as JAX stacks weak values."""
        out = super().finish(out, kinds)
        if config.read("enable_x64") or not any(
                getattr(leaf, "dtype", None) in _WIDE for leaf in tree_leaves(out)):
            return out
        return tree_map(runtime.narrow, out)

    def inner_kinds(self, kinds):
        """A lane of a batched array has one dimension less."""
        def lane(k, axis):
            r = _rank(k)
            return f"{api.ARRAY}{r - 1}" if axis is not None and r is not None and r > 0 else k
        out = []
        for i, (k, spec) in enumerate(zip(kinds, self.arg_axes(len(kinds)))):
            if type(k) is tuple:   # a tree: each leaf by its own axis
                axes = _tree_axes(k[1], spec, str(i))
                k = k[:2] + (tuple(lane(x, axes[j]) for j, x in enumerate(k[2])),) + k[3:]
            out.append(lane(k, spec) if type(k) is not tuple else k)
        return tuple(out)

    # --- the arguments' axes ---------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if "dask" in sys.modules and _has_dask(args):   # dask arrays: a lazy dask result
            from . import dask as strop_dask
            return strop_dask.vmap_call(self, args, kwargs)
        kwonly = [k for k in kwargs if k in self.signature.parameters and
                  self.signature.parameters[k].kind is inspect.Parameter.KEYWORD_ONLY]
        if kwonly:
            raise ValueError(
                f"vmap: keyword-only argument {kwonly[0]!r} passed to {self.__name__}: strop "
                f"does not map keyword arguments (JAX maps them along axis 0), and leaves "
                f"keyword-only parameters unbatched{api.defined_at(self.fun)}\nFix: bind it "
                f"outside, vmap(functools.partial(f, {kwonly[0]}=...)), or make it a "
                f"positional parameter to map it")
        defaulted = self.defaulted(len(args), kwargs)
        if defaulted:
            return self.with_unmapped(defaulted, len(args))(*args, **kwargs)
        return super().__call__(*args, **kwargs)

    def defaulted(self, npassed, keywords):
        """JAX maps only the arguments passed: a default is the same in every lane (a vmap
        made for defaults already unmapped has none left to find)."""
        if self.__dict__.get("_unmapped") is None:
            return ()
        return super().defaulted(npassed, keywords)

    def with_unmapped(self, defaulted, npassed):
        """This vmap with in_axes None at the ``defaulted`` positions (made once for each)."""
        key = (defaulted, npassed)
        if key not in self._unmapped:
            n = self._arity[0]
            axes = self.in_axes
            if isinstance(axes, tuple) and len(axes) == npassed:   # a tuple for those passed
                axes = axes + (None,) * (n - npassed)
            if isinstance(axes, tuple):
                axes = tuple(None if i in defaulted else a for i, a in enumerate(axes))
            else:
                axes = tuple(None if i in defaulted else axes for i in range(n))
            t = copy.copy(self)
            t.__dict__.update(_cache={}, _last_key=None, _outer=None, _unmapped=None,
                              _cuda=None,
                              in_axes=axes)
            t._build = t.build
            if hasattr(self.fun, "with_unmapped"):   # vmap(vmap(f)): unmapped at every level
                t.fun = self.fun.with_unmapped(defaulted, npassed)
            if self.uncompiled is not None:
                t.uncompiled = self.uncompiled.with_unmapped(defaulted, npassed)
            self._unmapped[key] = t
        return self._unmapped[key]

    batches = True

    def lane_dims(self, dims, kinds):
        """Each batched array's batch axis dropped (a tree's lengths, batched: not known)."""
        try:
            axes = self.arg_axes(len(kinds))
        except ValueError:     # (the call reports it)
            return super().lane_dims(dims, kinds)
        def lane(d, k, a):
            if d is None or a is None:          # not an array, or not batched: as it is
                return d
            if type(k) is tuple or not isinstance(a, int) or not d:
                return None                     # a batched tree: not followed
            return d[:a % len(d)] + d[a % len(d) + 1:]
        return super().lane_dims(tuple(map(lane, dims, kinds, axes)), kinds)

    def arg_axes(self, n):
        """``in_axes`` as one entry per argument (of ``n``: all of them, or those left when
        static arguments are bound): a tuple counts the positional arguments as passed (those
        ``*args`` takes included); keyword-only parameters are not mapped."""
        nkw = self._arity[2]
        return self.positional_axes(n - nkw) + [None] * nkw

    def positional_axes(self, n):
        if isinstance(self.in_axes, tuple):
            if len(self.in_axes) == n + len(self.static_argnums) and self.static_argnums:
                return [a for i, a in enumerate(self.in_axes) if i not in self.static_argnums]
            if len(self.in_axes) != n:
                raise ValueError(
                    f"vmap in_axes must be an int, None, or a tuple of entries corresponding "
                    f"to the positional arguments passed to the function, but got "
                    f"len(in_axes)={len(self.in_axes)}, len(args)={n}")
            return list(self.in_axes)
        return [self.in_axes] * n

    def check_args_axes(self, args):
        def name(i):    # (only for messages: inspect.signature costs tens of us a call)
            names = api.arg_names(self.fun, len(args))
            return names[i] if i < len(names) else str(i)
        sizes = []
        for i, (a, spec) in enumerate(zip(args, self.arg_axes(len(args)))):
            if spec is None:
                continue
            if type(a) is np.ndarray and type(spec) is int:   # the common case, cheap
                if -a.ndim <= spec < a.ndim:
                    sizes.append((i, spec, a.shape[spec]))
                    continue
            for leaf, axis in _leaf_axes(a, spec, lambda: name(i)):
                if axis is None:
                    continue
                nd = np.ndim(leaf)
                if not -nd <= axis < max(nd, 1) or nd == 0:
                    tree = f"an item of argument {name(i)!r}, a {type(a).__name__}," if \
                        leaf is not a else f"argument {name(i)!r}"
                    fix = (f"\nFix: vmap maps each leaf of a {type(a).__name__} (a pytree) "
                           f"along its own axis, as JAX does; to map over the items, pass "
                           f"np.array({name(i)})" if type(a) in (list, tuple) else
                           "\nFix: give that leaf in_axes=None (in_axes may be a prefix of "
                           "the argument's tree)" if leaf is not a else
                           "\nFix: give in_axes=None to this argument if it is not batched, "
                           "or an axis it has")
                    raise ValueError(
                        f"vmap was requested to map its argument along axis {axis}, which "
                        f"implies that its rank should be at least {axis + 1 if axis >= 0 else -axis}"
                        f", but {tree} has rank {nd} (shape {np.shape(leaf)})"
                        f"{api.defined_at(self.fun)}{fix}")
                sizes.append((i, axis, np.shape(leaf)[axis]))
        if not sizes and self.axis_size is None:
            raise ValueError(f"vmap must have at least one non-None value in in_axes, or be "
                             f"given axis_size= (every argument is unbatched, so the batch "
                             f"size is unknown){api.defined_at(self.fun)}\nFix: "
                             f"vmap(f, in_axes=..., axis_size=n)")
        found = {s for _, _, s in sizes} | ({self.axis_size} if self.axis_size is not None
                                           else set())
        if len(found) > 1:
            lines = "\n".join(f"  argument {name(i)!r} has size {s} along axis {ax}"
                              for i, ax, s in sizes)
            extra = f"\n  axis_size={self.axis_size}" if self.axis_size is not None else ""
            raise ValueError(f"vmap got inconsistent sizes for array axes to be mapped:\n"
                             f"{lines}{extra}{api.defined_at(self.fun)}\nFix: give every batched argument the same size along its "
                             f"in_axes axis")
        return found.pop()

    # --- building the batched code ---------------------------------------------------------
    def build(self, inner, kind_of):
        kinds = self._kinds_now
        groups = inner.groups or tuple((False, (a.id,)) for a in
                                       inner.node.args.args[:inner.nparams])
        names = api.arg_names(self.fun, len(groups))
        axes = {}
        for i, ((tree, leaves), spec) in enumerate(zip(groups, self.arg_axes(len(groups)))):
            kind = kinds[i] if i < len(kinds) else api.ARRAY
            if type(kind) is tuple:
                for idx, axis in _tree_axes(kind[1], spec, names[i]).items():
                    axes[leaves[idx]] = axis
            else:
                for leaf in leaves:
                    axes[leaf] = spec
        batched = {n: a for n, a in axes.items() if a is not None}
        ranks = {n: _rank(kind_of.get(n)) for n in axes}
        ranks = {n: (r - 1 if n in batched and r is not None else r) for n, r in ranks.items()}
        for n, k in kind_of.items():    # free variables (unbatched): the kinds they hold
            if n not in ranks and _rank(k) is not None:
                ranks[n] = _rank(k)
        loc = getattr(inner.node, "loc", None)
        prologue = [ir.assign(n, ir.call(ir.name("moveaxis_lanes"), [ir.name(n), ir.const(a)]),
                              loc) for n, a in batched.items() if a != 0]
        if batched:
            first = next(iter(batched))
            size = ir.subscript(ir.call(ir.attr("np", "shape"), [ir.name(first)]), ir.const(0))
        else:
            size = ir.const(int(self.axis_size))
        refs_extra = {"np": np, **({"moveaxis_lanes": runtime.moveaxis_lanes} if prologue
                                   else {})}
        fn = ir.Function(inner.node, {**inner.refs, **refs_extra}, inner.free, inner.nparams,
                         inner.guards, inner.groups)
        try:
            out = vectorize(fn, batched, ranks, size, self.out_axes, prologue, self.lanes)
        except OutAxesError as e:
            raise ValueError(f"vmap has an output that differs between lanes, but out_axes "
                             f"is None for it.\n{e.loc.show() if e.loc else ''}\nFix: give "
                             f"that output an int out_axes, or make it not depend on the "
                             f"batched arguments") from None
        except NotBatchable as e:
            out = self.lane_by_lane(fn, batched, prologue, size, e)
        if out.companions:   # lane loops: the batch can be cut in chunks run on threads
            params = [a.id for a in fn.node.args.args]
            out.split = Split([axes.get(p) for p in params], self.out_axes)
        return out

    def lane_by_lane(self, fn, batched, prologue, size, why):
        """The function run on each lane in turn: for code the rewrite cannot batch.  As
        Python (``each``), or, compiled, as a loop over the lanes calling it."""
        node = fn.node
        loc = why.loc or getattr(node, "loc", None)
        params = [a.id for a in node.args.args]
        refs = {"np": np, **({"moveaxis_lanes": runtime.moveaxis_lanes} if prologue else {})}
        companions = ()
        if self.lanes:
            namer = ir.Namer(ir.names_in(node) | set(refs) | set(fn.refs))
            refs.update(fn.refs)
            name, n = namer.fresh(node.name + "_lanes"), namer.fresh("batch_size")
            companions = (companion(name, params, copy.deepcopy(node.body), loc),)
            body = [ir.assign(n, size, loc)] + lane_loop(
                name, params, batched, ir.name("_lanes", store=True), n, namer,
                lambda h: ir.name(ir.bind_ref(refs, namer, getattr(runtime, h), h)), loc,
                f"run lane by lane, compiled: {why.reason}")
        else:
            lane = Staged(fn, api._origin(self.fun), "python").generated.function
            refs.update({"each": runtime.each, fn.name + "_lane": lane})
            flags = gast.Tuple(elts=[ir.const(p in batched) for p in params], ctx=gast.Load())
            body = [ir.assign("_lanes", ir.call("each", [ir.name(fn.name + "_lane"), flags] + [
                ir.name(p) for p in params]), loc)]
            body[0].note = f"run lane by lane: {why.reason}"
        refs.update(out_axis=runtime.out_axis, unbatched=runtime.unbatched)
        ret = ir.stmt(gast.Return(value=_placed(ir.name("_lanes"), self.out_axes)), loc)
        new = copy.copy(node)
        new.name, new.body = node.name + "_vmap", prologue + body + [ret]
        return ir.Function(new, refs, fn.free, fn.nparams, fn.guards, fn.groups, companions)


def _placed(lanes, spec):
    """The outputs of a run lane by lane (``lanes``, each stacked lanes first) where
    ``out_axes`` (``spec``, a prefix of their structure) puts them."""
    if isinstance(spec, (tuple, list)):
        return gast.Tuple(elts=[_placed(ir.subscript(lanes, ir.const(i)), a)
                                for i, a in enumerate(spec)], ctx=gast.Load())
    if isinstance(spec, dict):
        return gast.Dict(keys=[ir.const(k) for k in spec], values=[
            _placed(ir.subscript(lanes, ir.const(k)), a) for k, a in spec.items()])
    if spec is None:
        return ir.call("unbatched", [lanes])
    return lanes if spec == 0 else ir.call("out_axis", [lanes, ir.const(spec)])


def _has_dask(args):
    """Whether a leaf of the arguments is a dask collection (dask itself already imported:
    strop never imports it for a call without one)."""
    return any(getattr(type(leaf), "__dask_graph__", None) is not None
               for leaf in tree_leaves(args))


def _rank(kind):
    if kind in (api.SCALAR, api.INT):
        return 0
    if isinstance(kind, str) and kind.startswith("array") and kind[5:].isdigit():
        return int(kind[5:])
    return None


def _tree_axes(treedef, spec, name):
    """The axis of each leaf of a tree argument of structure ``treedef``, by leaf index."""
    return dict(_leaf_axes(treedef.unflatten(range(treedef.num_leaves)), spec, name))


def _leaf_axes(value, spec, name):
    """(leaf, axis) for each leaf of an argument, ``spec`` a prefix of its structure.  ``name``:
    the argument's, for a message, or a function of nothing giving it (computed only then)."""
    if _is_axis(spec):
        return [(leaf, spec) for leaf in tree_leaves(value)]
    try:
        parts = tree_structure(spec, is_leaf=lambda x: x is None).flatten_up_to(value)
    except ValueError:
        raise ValueError(f"vmap in_axes {spec!r} for argument "
                         f"{name() if callable(name) else name!r} does not match its "
                         f"structure {tree_structure(value)}: in_axes must be an int or None, "
                         f"or a tree prefix of the argument") from None
    specs = tree_leaves(spec, is_leaf=lambda x: x is None)
    return [(leaf, axis) for part, axis in zip(parts, specs) for leaf in tree_leaves(part)]
