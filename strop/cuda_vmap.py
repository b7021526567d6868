"""``jit(vmap(f), backend="cuda")``: one GPU thread per lane.

The kernel (codegen/cuda.py) runs the code strop generates for ``f`` itself, one lane per
thread, so a ``while`` with per-lane trip counts costs each lane its own trips (JAX's batched
``while_loop`` runs every lane to the longest).  A call:

1. the first time for the arguments' types, lane 0 runs on the host as Python, giving the
   outputs' structure and dtypes, and the code the kernel is made from (later calls with
   those types skip this);
2. the batched arguments (leading axis; another ``in_axes`` is moved there) go to the device
   unless already there, the outputs are allocated there, and the kernel runs;
3. the error flag is read: an index out of range raises IndexError at the user's line (the
   batch is run again on the host as Python, which raises it there).

Outputs stay on the device (``DeviceArray``) until asked for.  A lane may hold small arrays
(codegen/cuda_arrays.py).  What a kernel cannot run (codegen/cuda.py, cuda_arrays.py say
what) runs as the CPU's ``jit(vmap(f))`` after a JitFallbackWarning naming the reason and
line, its results put on the device.
"""
import functools
import traceback
import warnings

import numpy as np

from . import api, dtypes
from .codegen import cuda as cuda_codegen
from .codegen.cuda import elementwise
from .codegen.cuda_arrays import Unsupported
from .codegen import emit as emitter
from .codegen.load import load
from .config import config
from .errors import JitFallbackWarning, user_stacklevel
from .placement import devices, placed
from .runner import numba_location, numba_reason
from .runtime.cuda import helpers
from .runtime.cuda.arrays import is_device_array, put, to_device, to_host, wrap
from .runtime.base import narrow
from .transformed import _bind, _hashable, _settings
from .vmap import _leaf_axes
from .tree_util import tree_flatten, tree_leaves, tree_unflatten

THREADS = 128    # per block
_DATA = (np.ndarray, np.generic, int, float, bool)   # what a kernel takes, with DeviceArray


class CudaVmap:
    """``jit(vmap(f), backend="cuda")`` of a ``Vectorized`` (``compiled``: its CPU jit, with
    the axes and static arguments, which also runs what a kernel cannot)."""

    def __init__(self, compiled):
        self.compiled = compiled
        self.statics = tuple(compiled.static_argnums)
        self.lane = api.jit(compiled.fun, static_argnums=self.statics, backend="python")
        self.kernels = {}       # the lane code's key -> Kernel, or the reason it cannot run
        # the arguments' types (and static values) -> (Kernel, the outputs' dtypes and
        # shapes, their tree): a call like an earlier one runs no lane on the host first
        self.known = {}
        self.last = None
        functools.update_wrapper(self, compiled, updated=())
        self.__name__ = compiled.__name__.replace("jit(", "jit[cuda](", 1)
        self.__wrapped__ = None

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = _bind(self.compiled.fun, args, kwargs, self.compiled.signature,
                         self.compiled._bound)
        return self.call_positional(list(args))

    def call_positional(self, args):
        device = placed(args) or devices("cuda")[0]
        launch = self.prepare(args)
        if isinstance(launch, Refusal):
            return self.fall_back(args, device, launch.reason, launch.loc)
        kernel, dynamic, _, size, out_dtypes, tree = launch
        try:
            outs = kernel.run(dynamic, size, out_dtypes, device)
        except Exception as e:
            if kernel.ran or not _compile_failed(e):
                raise
            why = Refusal(f"Numba could not compile it for the GPU ({numba_reason(e)})",
                          numba_location(e, kernel.generated))
            self.kernels = {k: why if v is kernel else v for k, v in self.kernels.items()}
            self.known = {k: v for k, v in self.known.items() if v[0] is not kernel}
            return self.fall_back(args, device, why.reason, why.loc)
        kernel.ran = True

        def host():    # vmap(f) as Python: it raises at the user's line
            return self.compiled.uncompiled.call_positional(to_host(args))
        if outs is None:   # an index out of range
            host()
            raise IndexError(f"an index out of range in {self.__name__} on the GPU (run on the "
                             f"host, the batch raised nothing)")
        _check_finite(outs, host, self.__name__)
        return tree_unflatten(tree, outs)

    def prepare(self, args):
        """(kernel, the arguments' leaves, their axes, the batch size, the outputs' dtypes
        and shapes, their tree) for a call with ``args``, or the Refusal saying why a kernel
        cannot run it.  Pytrees go in as their leaves (each with its own axis), as the lane
        code takes them."""
        dynamic = [a if is_device_array(a) else dtypes.canonicalize_tree(a)
                   for i, a in enumerate(args) if i not in self.statics]
        specs = self.compiled.arg_axes(len(dynamic))
        size = self.compiled.check_args_axes(dynamic)
        parts = [_leaf_axes(a, spec, str(i)) for i, (a, spec) in enumerate(zip(dynamic, specs))]
        leaves = [leaf for part in parts for leaf, _ in part]
        axes = [ax for part in parts for _, ax in part]
        why = _why_not(leaves)
        if why is None and size == 0:
            why = "an empty batch"
        if why is not None:
            return Refusal(why)
        leaves = [_moved(a, ax) for a, ax in zip(leaves, axes)]
        signature = (tuple(_signature(a, ax) for a, ax in zip(leaves, axes)),
                     tuple(tree_flatten(a)[1] for a in dynamic),
                     tuple(_hashable(args[i], i) for i in self.statics), _settings())
        known = self.known.get(signature)
        if known is not None and all(g.holds() for g in known[0].staged.fn.guards):
            kernel, outs, tree = known       # (no lane run on the host)
            self.last = kernel
            return kernel, leaves, axes, size, outs, tree
        lane = iter(_lane(a, ax, 0) for a, ax in zip(leaves, axes))
        lanes = iter([tree_unflatten(tree_flatten(a)[1], [next(lane) for _ in part])
                      for a, part in zip(dynamic, parts)])
        out0 = self.lane.call_positional([a if i in self.statics else next(lanes)
                                          for i, a in enumerate(args)])
        key = self.lane._last_key
        kernel = self.kernels.get(key)
        if kernel is None:
            kernel = self.kernels[key] = self.make(key, out0, leaves, axes)
        if isinstance(kernel, Refusal):
            return kernel
        self.last = kernel
        out_leaves, tree = tree_flatten(out0)
        outs = [(_dtype(x), np.shape(x)) for x in out_leaves]
        self.known[signature] = (kernel, outs, tree)
        return kernel, leaves, axes, size, outs, tree

    def ptx(self, *args, cc=(8, 0)):
        """The PTX of the kernel a call with ``args`` runs, compiled for compute capability
        ``cc`` (no GPU needed; not in Numba's simulator)."""
        launch = self.prepare(list(args))
        if isinstance(launch, Refusal):
            raise ValueError(f"{self.__name__} has no kernel for these arguments: "
                             f"{launch.reason}")
        kernel, dynamic, _, _, out_dtypes, _ = launch
        return kernel.ptx(dynamic, out_dtypes, cc)

    def make(self, key, out0, dynamic, axes):
        """The kernel for the lane code of ``key``, or the Refusal saying why there is none."""
        paths = _paths(out0)
        if paths is None:
            return Refusal(f"it returns a {type(out0).__name__} holding containers other than "
                           f"tuples; a kernel writes arrays and numbers, one per lane")
        staged = self.lane.staged(key)
        free = [v.read() for v in staged.fn.free.values()]
        batched = [ax is not None for ax in axes] + [False] * len(free)
        params = [a.id for a in staged.fn.node.args.args]
        samples = {p: _sample(v, b) for p, v, b in zip(params, [*dynamic, *free], batched)}
        try:
            return Kernel.made(staged, batched, paths, self.__name__, samples,
                               [np.shape(x) for x in tree_leaves(out0)])
        except Unsupported as e:
            return Refusal(f"the kernel cannot run this lane code: {e.reason}", e.loc)

    def fall_back(self, args, device, why, loc=None):
        warnings.warn(JitFallbackWarning(
            f"{self.__name__} runs on the CPU, not the GPU: {why}", loc,
            fix="nothing is needed (the results are the same); to run it on the GPU, write "
                "that part with what the CUDA backend covers (README: the CUDA backend)"),
            stacklevel=user_stacklevel())
        return put(self.compiled.call_positional(to_host(args)), device)

    def shown(self, key=None):
        """The kernel module's source, as strop.source shows it (after a call)."""
        if self.last is None:
            raise ValueError(f"{self.__name__} has no kernel yet: call it first (a kernel is "
                             f"made for the kinds of arguments a call passes)")
        return self.last.generated.source

    def __repr__(self):
        return f"<strop {self.__name__}>"


class CudaElementwise:
    """``jit(f)`` given GPU arrays, where ``f`` is elementwise code (codegen/cuda.py,
    elementwise) on arrays of one shape and numbers: one thread per element, the whole
    chain of operations one kernel (the lane kernel, every array a batch of elements); an
    output that is a full reduction (``np.sum(y * y)``) is reduced on the device after it."""

    def __init__(self, jitted):
        self.jitted, self.statics = jitted, tuple(jitted.static_argnums)
        self.lane = api.jit(jitted.fun, static_argnums=self.statics, backend="python")
        self.kernels = {}   # the code's key -> Kernel, or None where it is not elementwise
        self.known = {}     # the arguments' types -> made(...) for them (CudaVmap.known)
        self.last = None

    def call(self, args, device):
        """The results on ``device``, or None where this is not such a call."""
        launch = self.prepare(args, device)
        if launch is None:
            return None
        kernel, flat, size, shape, out_dtypes, tree = launch
        try:
            outs = kernel.run(flat, size, out_dtypes, device)
        except Exception as e:
            if kernel.ran or not _compile_failed(e):
                raise
            self.kernels = {k: None if v is kernel else v for k, v in self.kernels.items()}
            self.known = {k: v for k, v in self.known.items() if v is None or v[0] is not kernel}
            return None     # (the CPU runs it, after a JitFallbackWarning)
        kernel.ran = True
        outs = [_reduce(o, kernel.reduced[i], device) if i in kernel.reduced else
                wrap(o.data.reshape(shape), device) for i, o in enumerate(outs)]
        _check_finite(outs, lambda: self.lane.call_positional(to_host(args)),
                      f"jit[cuda]({self.jitted.fun.__name__})")
        return tree_unflatten(tree, outs)

    def ptx(self, *args, cc=(8, 0)):
        """The PTX of the kernel a call with ``args`` (host arrays) runs (no GPU needed)."""
        launch = self.prepare(list(args), None)
        if launch is None:
            raise ValueError(f"jit({self.jitted.fun.__name__}) is not elementwise code on "
                             f"arrays of one shape for these arguments: no kernel")
        kernel, flat, _, _, out_dtypes, _ = launch
        return kernel.ptx(flat, out_dtypes, cc)

    def prepare(self, args, device):
        """(kernel, its arguments flattened, the size, the shape, the outputs' dtypes and
        tree), or None where this is not such a call."""
        dynamic = [a if is_device_array(a) else dtypes.canonicalize_tree(a)
                   for i, a in enumerate(args) if i not in self.statics]
        if _why_not(dynamic) is not None:
            return None
        shapes = {tuple(np.shape(a)) for a in dynamic if np.ndim(a) > 0}
        if len(shapes) != 1:
            return None
        (shape,) = shapes
        size = int(np.prod(shape))
        if size == 0:
            return None
        signature = (tuple((type(a), getattr(a, "dtype", None), np.ndim(a) > 0)
                           for a in dynamic), len(shape),
                     tuple(_hashable(args[i], i) for i in self.statics), _settings())
        known = self.known.get(signature, False)
        if known is None or known and all(g.holds() for g in known[0].staged.fn.guards):
            if known is None:   # (not elementwise code, for such arguments)
                return None
            kernel, outs, tree = known
        else:
            launch = self.made(args, dynamic, shape)
            self.known[signature] = launch
            if launch is None:
                return None
            kernel, outs, tree = launch
        self.last = kernel
        flat = [(_flat(a, size, device) if device is not None else np.ravel(a))
                if np.ndim(a) > 0 else a for a in dynamic]
        return kernel, flat, size, shape, outs, tree

    def made(self, args, dynamic, shape):
        """(kernel, the outputs' dtypes and shapes, their tree) for arguments like
        ``args``, from a run on one element of each array; None where the code is not
        elementwise."""
        stand = iter([np.ones((1,) * len(shape), a.dtype) if np.ndim(a) > 0 else
                      (np.asarray(a)[()] if is_device_array(a) else a) for a in dynamic])
        try:    # one element of each array: the code, and the outputs' structure and dtypes
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                out0 = self.lane.call_positional([a if i in self.statics else next(stand)
                                                  for i, a in enumerate(args)])
        except Exception:   # (the CPU's run raises it, at the user's line)
            return None
        leaves, tree = tree_flatten(out0)
        paths = _paths(tree_unflatten(tree, [0] * len(leaves)))
        if paths is None:
            return None
        key = self.lane._last_key
        if key not in self.kernels:
            self.kernels[key] = self.kernel(self.lane.staged(key), dynamic, paths)
        kernel = self.kernels[key]
        if kernel is None or not all(
                np.ndim(x) == (0 if i in kernel.reduced else len(shape)) and
                isinstance(x, (np.ndarray, np.generic)) for i, x in enumerate(leaves)):
            return None
        return kernel, [(_dtype(x), ()) for x in leaves], tree

    def kernel(self, staged, dynamic, paths):
        """The Kernel running ``staged``'s code per element, or None where it is not
        elementwise code (or reads arrays of its module)."""
        free = [v.read() for v in staged.fn.free.values()]
        per = elementwise(staged.fn) if all(np.ndim(v) == 0 for v in free) else None
        if per is None:
            return None
        batched = [np.ndim(a) > 0 for a in dynamic] + [False] * len(free)
        try:
            kernel = Kernel.made(staged, batched, paths,
                                 f"jit[cuda]({self.jitted.fun.__name__})", fn=per[0])
        except Unsupported:
            return None
        kernel.reduced = per[1]
        return kernel

    def shown(self, key=None):
        if self.last is None:
            raise ValueError("no kernel yet: call it with GPU arrays first")
        return self.last.generated.source


# (a, b) -> one of them, as NumPy's reductions take them: max and min propagate NaN
_REDUCE = {"sum": lambda a, b: a + b, "mean": lambda a, b: a + b, "prod": lambda a, b: a * b,
           "max": lambda a, b: a if a >= b or a != a else b,
           "min": lambda a, b: a if a <= b or a != a else b}
_REDUCERS = {}


def _reduce(out, op, device):
    """The elements of ``out`` (a kernel's output, one per element) reduced on the device:
    a 0-d DeviceArray."""
    reducer = _REDUCERS.get(op)
    if reducer is None:
        reducer = _REDUCERS[op] = helpers.cuda().reduce(_REDUCE[op])
    value = reducer(out.data)
    if op == "mean":
        value = value / out.size
    return to_device(np.asarray(value, dtype=out.dtype), device)


def _flat(a, size, device):
    a = a if is_device_array(a) else to_device(a, device)
    return wrap(a.data.reshape(size), device)


class Kernel:
    """A generated kernel module compiled with numba.cuda, and its launches."""
    ran = False    # once a launch succeeded (compiled): later errors are the code's own
    reduced = {}   # output index -> the reduction made of its elements after the kernel

    @classmethod
    def made(cls, staged, batched, paths, origin, samples=None, shapes=None, fn=None):
        """The kernel running ``staged``'s code (one lane's; ``fn`` instead where given) for
        each lane; ``batched``: per parameter (free values included), whether it has one
        value per lane; ``samples`` and ``shapes``: see codegen/cuda.py, Lanes."""
        lanes = cuda_codegen.Lanes(tuple(batched), tuple(paths),
                                   tuple(shapes) if shapes else None, samples)
        kernel_fn = cuda_codegen.kernel_function(fn or staged.fn, lanes, staged.made[6])
        text, linemap, injected = emitter.emit(kernel_fn, origin)
        return cls(load(kernel_fn.name, text, linemap, injected), kernel_fn, staged)

    def __init__(self, generated, fn, staged):
        self.generated, self.fn, self.staged = generated, fn, staged
        numba_cuda = helpers.cuda()
        helpers.register()
        module = generated.module
        if not hasattr(module, "__strop_python__"):   # (a module loaded before is compiled)
            module.__strop_python__ = {f.name: getattr(module, f.name)
                                       for f in (*fn.companions, fn.node)}
            for f in fn.companions:    # (a lane with local arrays inlined: they live on)
                options = {"inline": "always"} if getattr(f, "local_arrays", False) else {}
                setattr(module, f.name, numba_cuda.jit(device=True, **options)(
                    getattr(module, f.name)))
            for helper in helpers.DEVICE:
                if getattr(module, helper.__name__, None) is helper:
                    setattr(module, helper.__name__, numba_cuda.jit(device=True)(helper))
            module.__strop_kernel__ = numba_cuda.jit(getattr(module, fn.name))
        self.launch = module.__strop_kernel__

    def run(self, args, size, out_dtypes, device):
        """The outputs (DeviceArrays), or None where an index was out of range."""
        numba_cuda = helpers.cuda()
        free = [v.read() for v in self.staged.fn.free.values()]
        values = [_on_device(a, device) for a in args] + [_on_device(v, device) for v in free]
        outs = [numba_cuda.device_array((size, *shape), dtype=d) for d, shape in out_dtypes]
        err = numba_cuda.to_device(np.zeros(1, np.int32))
        blocks = (size + THREADS - 1) // THREADS
        self.launch[blocks, THREADS](*values, *outs, err)
        if err.copy_to_host()[0]:
            return None
        return [wrap(o, device) for o in outs]

    def ptx(self, args, out_dtypes, cc):
        """PTX of this kernel for arguments like ``args`` (their leading axis the batch)."""
        from numba import typeof, types
        free = [v.read() for v in self.staged.fn.free.values()]
        given = [types.Array(typeof(a.dtype.type(0)), a.ndim, "C") if is_device_array(a) else
                 typeof(np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a)
                 for a in [*args, *free]]
        outs = [types.Array(typeof(np.dtype(d).type(0)), 1 + len(shape), "C")
                for d, shape in out_dtypes]
        signature = (*given, *outs, types.Array(types.int32, 1, "C"))
        with helpers.compiling_for(cc):
            text, _ = helpers.cuda().compile_ptx(self.generated.module.__strop_python__[
                self.fn.name], signature, cc=cc)
        return text


def _check_finite(outs, on_host, name):
    """``debug_nans``/``debug_infs`` on a kernel's outputs: where one has such values, the
    call runs again on the host as Python (``on_host``), which raises FloatingPointError at
    the user line that made them."""
    nans, infs = config.read("debug_nans"), config.read("debug_infs")
    if not (nans or infs):
        return
    bad = [o for o in outs if np.issubdtype(o.dtype, np.inexact) and (
        nans and np.isnan(o.host()).any() or infs and np.isinf(o.host()).any())]
    if bad:
        on_host()
        raise FloatingPointError(f"the output of {name} on the GPU has "
                                 f"{'NaN' if nans else 'inf'} values, but no NumPy operation "
                                 f"raised when the code was run again as Python")


def _compile_failed(e):
    """Whether ``e`` came from Numba compiling the kernel (typing or lowering)."""
    parts = ("typeinfer", "typing", "compiler", "lowering", "dispatcher")
    files = [frame.f_code.co_filename for frame, _ in traceback.walk_tb(e.__traceback__)]
    return any("numba" in f and any(part in f for part in parts) for f in files)


def _signature(a, axis):
    """What a kernel's code depends on in an argument: its type, dtype and a lane's shape."""
    if is_device_array(a) or isinstance(a, np.ndarray):
        return (a.dtype, a.shape[1:] if axis is not None else a.shape, axis is not None)
    return (type(a), getattr(a, "dtype", None))


def _why_not(leaves):
    for a in leaves:
        if not (is_device_array(a) or isinstance(a, _DATA)):
            return f"an argument holds a {type(a).__name__} (a kernel takes arrays and numbers)"
    return None


def _moved(a, axis):
    """``a`` with its batch axis first (arrays already are, but for in_axes=-1 of 1-d)."""
    if axis in (None, 0) or np.ndim(a) == 1:
        return a
    return np.moveaxis(np.asarray(a), axis, 0)


def _lane(a, axis, j):
    """Lane ``j``'s value of ``a`` on the host (of a DeviceArray: that lane copied back)."""
    if axis is None:
        return np.asarray(a) if is_device_array(a) else a
    return np.asarray(a[j])[()] if is_device_array(a) else a[j]


def _paths(out):
    """The index paths of the arrays and numbers in ``out`` (one, or nested tuples and dicts
    of them: a dict is a tuple of its values by sorted key in a kernel), in tree_flatten's
    order; None for anything else."""
    if isinstance(out, dict) and all(isinstance(k, str) for k in out):
        out = tuple(out[k] for k in sorted(out))
    if isinstance(out, tuple):
        paths = []
        for i, item in enumerate(out):
            inner = _paths(item)
            if inner is None:
                return None
            paths += [(i, *p) for p in inner]
        return paths
    if isinstance(out, _DATA):
        return [()]
    return None


def _sample(value, batched):
    """What one lane of ``value`` is like: a number of its type, or ones of its shape."""
    if is_device_array(value) or isinstance(value, np.ndarray):
        shape = tuple(value.shape[1:] if batched else value.shape)
        return np.ones(shape, value.dtype) if shape else value.dtype.type(1)
    return value


class Refusal:
    """Why a call runs on the CPU instead: the reason, and the user's line it concerns."""

    def __init__(self, reason, loc=None):
        self.reason, self.loc = reason, loc


def _dtype(x):
    """A lane's output number's dtype in the stacked array (64-bit policy applied)."""
    value = np.asarray(dtypes.canonicalize(x))
    return value.dtype if config.read("enable_x64") else narrow(value).dtype


def _on_device(value, device):
    if is_device_array(value):
        return value.data
    if isinstance(value, np.ndarray):
        return to_device(value, device).data
    return value
