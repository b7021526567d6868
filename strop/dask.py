"""strop on Dask (the optional extra ``strop[dask]``): ``vmap``/``jit(vmap)`` of dask arrays,
and ``grad_sum``/``value_and_grad_sum``, data-parallel gradients of a loss summed (or
averaged) over examples held in dask arrays.

What happens, and why:

| step                    | how                                   | why                           |
|-------------------------|---------------------------------------|-------------------------------|
| batched arguments       | rechunked to the first one's chunks   | a task needs whole lanes      |
|                         | on the mapped axis, one chunk across  |                               |
| one task per chunk      | runs the transformed function (jit:   | the batch is cut where Dask   |
|                         | compiled) on the chunk's slices       | cut it                        |
| output shapes, dtypes   | strop's vmap of the same arguments    | not a call on a made-up dummy |
|                         | with a batch of zero lanes (1)        | (Dask's default); no data read|
| unbatched arguments and | one graph key (a dask.delayed value)  | sent once to each worker, not |
| the function            | that every task depends on (2)        | pickled into every task       |
| the function on workers | its recipe (vmap(fun, in_axes=...));  | made once per process (memo   |
|                         | ``fun`` by reference where importable | by digest); one compile per   |
|                         | by name, else by value + its source   | machine, the others load it   |
|                         |                                       | from strop's disk cache (3)   |
| errors                  | raised on the worker by strop's runner| the message names the user's  |
|                         |                                       | line, as locally              |
| a lost worker           | Dask reruns its tasks                 | tasks are pure                |
| grad_sum                | jit(value_and_grad(loss)) per chunk,  | the gradient of a sum is the  |
|                         | summed in float64 in a tree, a mean's | sum of the chunks'; a tree    |
|                         | chunks weighted by their sizes        | keeps every sum small         |

(1) strop defines an empty batch, and a lane's shape does not depend on how many lanes there
are.  Where that cannot tell (code run lane by lane has no lane to run), the first example is
computed and run.  (2) Not ``Client.scatter``: scattered data is lost with the workers that
hold it, a graph key is recomputed.  (3) The first call on a machine holds a Dask lock named
after the function and the host, so the workers of one machine compile once between them.
"""
import contextlib
import hashlib
import importlib.util
import linecache
import operator
import os
import sys
import types

import numpy as np

from .transformed import Transformed, arg_names
from .tree_util import tree_flatten, tree_leaves

try:
    import cloudpickle
    import dask
    import dask.array as da
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph
except ImportError as e:   # strop runs without it; this module says what to install
    raise ImportError(f"strop.dask needs Dask: pip install 'strop[dask]' "
                      f"(dask[array,distributed]); {e}") from None

__all__ = ["grad_sum", "value_and_grad_sum"]


# --- sending transformed functions to workers ----------------------------------------------

class _Pickler(cloudpickle.Pickler):
    """cloudpickle, with strop's transformed functions sent as their recipe, and functions
    that a worker cannot import by name sent by value with their source (strop parses it)."""

    def __init__(self, file):
        super().__init__(file)
        self.sources = {}

    def reducer_override(self, obj):
        if isinstance(obj, Transformed):
            recipe = getattr(obj, "recipe", None)
            if recipe is None:
                raise TypeError(f"strop.dask cannot send {obj.__name__} to Dask workers: it "
                                f"was not made by grad, value_and_grad, vmap or jit")
            return _remake, recipe
        if isinstance(obj, types.FunctionType) and not _importable(obj):
            name = obj.__code__.co_filename
            if name not in self.sources:
                self.sources[name] = linecache.getlines(name, obj.__globals__)
            return self._dynamic_function_reduce(obj)
        if isinstance(obj, types.CodeType) and obj.co_filename:
            # cloudpickle >= 3.1 sends code as from "<dynamic-code>"; strop reads the source
            # through the file name, so it travels beside a copy without it
            return _named_code, (obj.replace(co_filename=""), obj.co_filename)
        return super().reducer_override(obj)


def _named_code(code, filename):
    return code.replace(co_filename=filename)


def _importable(fn):
    """A module-level function a worker imports by name (its module found on sys.path)."""
    module = sys.modules.get(fn.__module__ or "")
    if module is None or fn.__module__ == "__main__" or "<locals>" in fn.__qualname__:
        return False
    try:
        spec = importlib.util.find_spec(fn.__module__)
    except (ImportError, ValueError):
        return False
    if spec is None or spec.origin != getattr(module, "__file__", None):
        return False
    obj = module
    for part in fn.__qualname__.split("."):
        obj = getattr(obj, part, None)
    return obj is fn


def _remake(transform, fun, options):
    import strop
    return getattr(strop, transform)(fun, **options)


class _Sent:
    """A function (or anything with functions in it) as sent to workers: pickled once on the
    client, unpickled once per worker process."""

    def __init__(self, obj):
        import io
        from .config import config
        buf = io.BytesIO()
        p = _Pickler(buf)
        p.dump(obj)
        self.blob, self.sources = buf.getvalue(), p.sources
        self.settings = {k: config.read(k) for k in ("enable_x64", "threefry_partitionable",
                                                     "cache_dir")}
        self.digest = hashlib.sha256(self.blob).hexdigest()

    def get(self):
        obj = _MADE.get(self.digest)
        if obj is None:
            from .config import config
            for name, lines in self.sources.items():   # what parse reads, where the file is
                if not os.path.exists(name):           # not on this machine
                    linecache.cache[name] = (sum(map(len, lines)), None, lines, name)
            if self.settings["cache_dir"] is not None:
                config.update("cache_dir", self.settings["cache_dir"])
            obj = _MADE[self.digest] = cloudpickle.loads(self.blob)
        return obj

    def settings_now(self):
        """The client's settings for a call.  Left alone where they already hold: tasks run
        on threads of one process (Dask's threaded scheduler) would otherwise save and
        restore the process-wide values in turn, and could leave one set."""
        from .config import config
        wanted = {k: self.settings[k] for k in ("enable_x64", "threefry_partitionable")}
        if all(config.read(k) == v for k, v in wanted.items()):
            return contextlib.nullcontext()
        return config.override(**wanted)

    def call(self, *args, **kwargs):
        """The function called in this process's settings.  Its first call on each machine
        holds a lock named after it and the machine: the workers there share strop's disk
        cache, so one compiles and the others load what it compiled (on another machine,
        compiling goes on at the same time).  A worker lost while it holds the lock delays the
        others by Dask's lease timeout (distributed.scheduler.locks.lease-timeout, 30 s)."""
        fn = self.get()
        compiled = getattr(fn, "backend", None) == "cpu"
        with self.settings_now(), _first_on_machine(self.digest if compiled else None):
            return fn(*args, **kwargs)


_MADE = {}   # digest -> the function, made once in each worker process
_CALLED = set()   # digests called at least once in this process


class _first_on_machine:
    def __init__(self, digest):
        self.digest, self.lock = digest, None

    def __enter__(self):
        if self.digest is None or self.digest in _CALLED:   # (None: nothing to compile)
            return
        try:
            import socket
            from distributed import Lock, get_worker
            get_worker()   # outside a worker (another scheduler): no lock
            self.lock = Lock(f"strop-compile-{self.digest[:16]}-{socket.gethostname()}")
            self.lock.acquire(timeout=600)
        except (ImportError, ValueError):
            self.lock = None

    def __exit__(self, *exc):
        _CALLED.add(self.digest)
        if self.lock is not None:
            self.lock.release()


# --- vmap of dask arrays ----------------------------------------------------------------------

def is_dask(x):
    return isinstance(x, da.Array)


def vmap_call(t, args, kwargs):
    """``t(*args, **kwargs)`` for a vmap (or jit(vmap)) ``t`` with dask arrays among the
    arguments: a lazy result with the structure of ``t``'s, each leaf a dask array."""
    if any(is_dask(x) for x in tree_leaves(kwargs)):
        raise TypeError(f"{t.__name__}: dask arrays must be passed positionally (vmap maps "
                        f"positional arguments only)")
    statics = t.static_argnums
    dynamic = [a for i, a in enumerate(args) if i not in statics]
    specs = t.arg_axes(len(dynamic))
    t.check_args_axes(dynamic)   # sizes and ranks, with vmap's own messages
    names = arg_names(t.fun, len(dynamic))
    from .vmap import _leaf_axes
    flat = []      # per dynamic argument: (treedef, [(leaf, axis)])
    for i, (a, spec) in enumerate(zip(dynamic, specs)):
        leaves, treedef = tree_flatten(a)
        pairs = _leaf_axes(a, spec, names[i] if i < len(names) else str(i))
        flat.append((treedef, [(x, None if ax is None else ax % max(np.ndim(x), 1))
                               for x, (_, ax) in zip(leaves, pairs)]))
    # unbatched dask leaves are broadcast: computed once, here
    lazy = [x for _, pairs in flat for x, ax in pairs if ax is None and is_dask(x)]
    done = iter(dask.compute(*lazy)) if lazy else iter(())
    flat = [(td, [(next(done) if ax is None and is_dask(x) else x, ax) for x, ax in pairs])
            for td, pairs in flat]
    batched = [(x, ax) for _, pairs in flat for x, ax in pairs if ax is not None]
    ref = next(((x, ax) for x, ax in batched if is_dask(x)), batched[0] if batched else None)
    n = ref[0].shape[ref[1]]
    chunks = ref[0].chunks[ref[1]] if is_dask(ref[0]) else (n,)
    if any(np.isnan(c) for c in chunks):
        raise ValueError(f"{t.__name__}: the mapped axis of a dask argument has unknown chunk "
                         f"sizes\nFix: x.compute_chunk_sizes() first")

    def lined_up(x, ax):
        want = {d: (chunks if d == ax else -1) for d in range(np.ndim(x))}
        return x.rechunk(want) if is_dask(x) else da.from_array(np.asarray(x), chunks=want)

    # the output's structure, shapes and dtypes: strop's vmap on a batch of zero lanes
    def empty(x, ax):
        shape = list(np.shape(x))
        shape[ax] = 0
        return np.empty(tuple(shape), dtype=x.dtype if hasattr(x, "dtype") else
                        np.result_type(x))
    probe = _rebuild_args(args, statics, flat, lambda x, ax: empty(x, ax))
    try:
        with np.errstate(all="ignore"):   # a warning is the chunks' to give, as they run
            out0 = t(*probe, **kwargs)
    except Exception:   # code run lane by lane has no lane to run: the first example's
        out0 = t(*_rebuild_args(args, statics, flat, _first_lane), **kwargs)
    out_leaves, out_tree = tree_flatten(out0)
    out_axes = [None if ax is None else ax % max(np.ndim(x), 1)
                for x, (_, ax) in zip(out_leaves, _leaf_axes(out0, t.out_axes, "the output"))]
    if n == 0:
        return out0
    # one task per chunk, its unbatched inputs one key for all of them
    inputs = [lined_up(x, ax) for x, ax in batched]
    shared = _Shared(_Sent(t), args=[a if i in statics else None for i, a in enumerate(args)],
                     statics=statics, kwargs=kwargs,
                     flat=[(td, [(x if ax is None else None, ax) for x, ax in pairs])
                           for td, pairs in flat])
    bundle = dask.delayed(shared, pure=True, traverse=False)
    token = dask.base.tokenize(shared.sent.digest, [x.name for x in inputs], bundle.key)
    run = f"strop-{t.__name__}-{token}"
    layer = {}
    for c in range(len(chunks)):
        blocks = [(x.name,) + tuple(c if d == ax else 0 for d in range(x.ndim))
                  for x, (_, ax) in zip(inputs, batched)]
        layer[(run, c)] = (_run_chunk, bundle.key, *blocks)
    graph = HighLevelGraph.from_collections(run, layer, dependencies=inputs + [bundle])
    layers, deps = dict(graph.layers), dict(graph.dependencies)
    outs = []
    for j, (x, ax) in enumerate(zip(out_leaves, out_axes)):
        x = np.asarray(x)
        name = f"{run}-{j}"
        if ax is None:   # the same in every lane: chunk 0's
            layers[name] = {(name,) + (0,) * x.ndim: (operator.getitem, (run, 0), j)}
            out_chunks = tuple((s,) for s in x.shape)
        else:
            layers[name] = {(name,) + tuple(c if d == ax else 0 for d in range(x.ndim)):
                            (operator.getitem, (run, c), j) for c in range(len(chunks))}
            out_chunks = tuple(chunks if d == ax else (s,) for d, s in enumerate(x.shape))
        deps[name] = {run}
        outs.append((name, out_chunks, x))
    hlg = HighLevelGraph(layers, deps)
    arrays = [da.Array(hlg, name, out_chunks, meta=x[(slice(0, 0),) * x.ndim])
              for name, out_chunks, x in outs]
    return out_tree.unflatten(arrays)


def _first_lane(x, ax):
    lane = x[tuple(slice(0, 1) if d == ax else slice(None) for d in range(np.ndim(x)))]
    return lane.compute() if is_dask(lane) else lane


def _rebuild_args(args, statics, flat, batched_leaf, unbatched_leaf=lambda x: x):
    """The positional arguments, each batched leaf given by ``batched_leaf(leaf, axis)``."""
    out, it = [], iter(flat)
    for i, a in enumerate(args):
        if i in statics:
            out.append(a)
            continue
        treedef, pairs = next(it)
        out.append(treedef.unflatten([unbatched_leaf(x) if ax is None else batched_leaf(x, ax)
                                      for x, ax in pairs]))
    return out


class _Shared:
    """What every task of one call shares: the function sent, and the values given
    (for vmap: the unbatched arguments; for grad_sum: the parameters)."""

    def __init__(self, sent, **values):
        self.sent = sent
        self.__dict__.update(values)

    def __dask_tokenize__(self):
        return self.sent.digest, dask.base.tokenize(
            sorted((k, v) for k, v in self.__dict__.items() if k != "sent"))


def _run_chunk(shared, *blocks):
    it = iter(blocks)
    args = _rebuild_args(shared.args, shared.statics, shared.flat, lambda x, ax: next(it))
    out = shared.sent.call(*args, **shared.kwargs)
    return [np.asarray(x) for x in tree_leaves(out)]


# --- data-parallel gradients -----------------------------------------------------------------

def grad_sum(loss, params, *data, mean=False, split_every=8, compute=True, backend=None):
    """The gradient w.r.t. ``params`` of ``loss(params, *data)``, a sum over the examples of
    ``data`` (or with ``mean=True`` a mean), its arrays chunked along axis 0: each chunk's
    gradient by ``jit(grad(loss))`` on a worker, reduced as a tree (``split_every`` at a time),
    chunks weighted by their sizes for a mean.  Equals ``grad(loss)(params, *data)`` on the
    whole data.  ``compute=False``: a dask Delayed of it; ``backend``: jit's."""
    return _reduce(loss, params, data, mean, split_every, compute, backend, "grad")


def value_and_grad_sum(loss, params, *data, mean=False, split_every=8, compute=True,
                       backend=None):
    """``(loss(params, *data), grad_sum(loss, params, *data, mean=mean))``, in one pass."""
    return _reduce(loss, params, data, mean, split_every, compute, backend, "value_and_grad")


def _reduce(loss, params, data, mean, split_every, compute, backend, what):
    from .api import jit, value_and_grad
    if not data:
        raise TypeError(f"{what}_sum needs the data: {what}_sum(loss, params, *data)")
    ref = next((x for x in data if is_dask(x)), None)
    if ref is None:
        raise TypeError(f"{what}_sum: none of the data is a dask array (chunked along axis 0)")
    n, chunks = ref.shape[0], ref.chunks[0]
    bad = [np.shape(x) for x in data if np.ndim(x) == 0 or np.shape(x)[0] != n]
    if bad or any(np.isnan(c) for c in chunks):
        raise ValueError(f"{what}_sum: every data array holds the examples along axis 0 "
                         f"({n} of them, in known chunk sizes); got shapes "
                         f"{[np.shape(x) for x in data]}")
    inputs = [x.rechunk({d: (chunks if d == 0 else -1) for d in range(x.ndim)}) if is_dask(x)
              else da.from_array(np.asarray(x), chunks=(chunks,) + tuple(np.shape(x)[1:]))
              for x in data]
    shared = _Shared(_Sent(jit(value_and_grad(loss), backend=backend)), params=params)
    bundle = dask.delayed(shared, pure=True, traverse=False)
    token = dask.base.tokenize(shared.sent.digest, [x.name for x in inputs], bundle.key,
                               mean, what)
    name = f"strop-{what}_sum-{token}"
    layer = {(name, 0, c): (_grad_chunk, bundle.key, mean, *[(x.name, c) + (0,) * (x.ndim - 1)
                                                            for x in inputs])
             for c in range(len(chunks))}
    level, keys = 0, [(name, 0, c) for c in range(len(chunks))]
    while len(keys) > 1:   # a tree of sums, split_every at a time
        level += 1
        groups = [keys[i:i + split_every] for i in range(0, len(keys), split_every)]
        keys = [(name, level, g) for g in range(len(groups))]
        layer.update({k: (_add, list(group)) for k, group in zip(keys, groups)})
    final = (name, "result")
    layer[final] = (_finish, keys[0], bundle.key, mean, what == "grad")
    graph = HighLevelGraph.from_collections(name, layer, dependencies=inputs + [bundle])
    out = Delayed(final, graph, layer=name)
    return out.compute() if compute else out


def _grad_chunk(shared, mean, *blocks):
    """(loss, its gradient's leaves, examples) of one chunk, as sums (a mean's scaled back)."""
    value, g = shared.sent.call(shared.params, *blocks)
    k = len(blocks[0])
    scale = float(k) if mean else 1.0
    return (np.float64(value) * scale,
            [np.asarray(x, dtype=np.float64) * scale for x in tree_leaves(g)],
            [np.result_type(x) for x in tree_leaves(g)], k)


def _add(parts):
    value, grads, dtypes_, n = parts[0]
    grads = list(grads)
    for v, g, _, k in parts[1:]:
        value, n = value + v, n + k
        grads = [a + b for a, b in zip(grads, g)]
    return value, grads, dtypes_, n


def _finish(total, shared, mean, grad_only):
    value, grads, dtypes_, n = total
    if mean:
        value, grads = value / n, [g / n for g in grads]
    treedef = tree_flatten(shared.params)[1]
    g = treedef.unflatten([np.asarray(x, dtype=d) for x, d in zip(grads, dtypes_)])
    value = np.asarray(value, dtype=dtypes_[0] if dtypes_ else np.float64)[()]
    return g if grad_only else (value, g)
