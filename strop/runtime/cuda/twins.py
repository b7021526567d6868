"""The device twins of the runtime helpers and NumPy functions whole-array code calls: what
``jit(f)`` of array code runs when its arguments are on a GPU (codegen/cuda_program.py puts
each twin where the generated code names the original).  A call of anything not in
``TWINS`` keeps the code off the device: the CPU runs it, after a warning naming the call.

Each twin takes what the original takes, with DeviceArrays for arrays, and gives what it
gives, with DeviceArrays (0-d for NumPy's scalars) for arrays; numbers and shapes stay on the
host.  Cotangent helpers follow runtime/base.py and products.py.
"""
import numpy as np

from . import ops, ufuncs, views
from .arrays import is_device_array, to_device
from .. import arithmetic, base, containers, indexing, products, reductions, sums
from .. import shape as shapes


def _default_device():
    """Where arrays the code makes from nothing (np.zeros) go: its arguments' device."""
    from .arrays import CURRENT
    return CURRENT[0]


def _on_device(x):
    """An operand as the twins take it: arrays on the device, numbers as they are."""
    if isinstance(x, np.ndarray):
        return to_device(x, _default_device())
    return x


def _array(x):
    return is_device_array(x) or isinstance(x, views.Strided)


def _dtype(x):
    return x.dtype if _array(x) or isinstance(x, (np.ndarray, np.generic)) else \
        np.result_type(x)


def _shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else ()


def elementwise(chain, *operands):
    if not any(map(_array, operands)) and not any(isinstance(x, np.ndarray) for x in operands):
        return arithmetic.elementwise(chain, *operands)   # of numbers: on the host
    return ops.apply(chain, [_on_device(x) for x in operands])


def unbroadcast(g, x):
    """runtime.unbroadcast: ``g`` summed down to ``x``'s shape, in x's float dtype."""
    shape = _shape(x)
    if _array(g) and g.shape != shape:
        extra = len(g.shape) - len(shape)
        axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape)
                                          if n == 1 and g.shape[extra + i] != 1)
        g = ops.reduce("sum", g, axes) if axes else g
        if g.shape != shape:
            g = ops.reshape(g, shape) if int(np.prod(g.shape)) == int(np.prod(shape)) else \
                ops.materialize(views.broadcast_to(g, shape))
    dtype = _dtype(x) if np.issubdtype(_dtype(x), np.inexact) else _dtype(g)
    if not _array(g):
        return np.asarray(g, dtype)[()] if not _array(x) else ops.full(shape, g, dtype,
                                                                     x.device)
    return g if g.dtype == dtype else ops.copy(g, dtype)


def balanced_eq(x, z, y):
    return elementwise("(_0 == _1) / (1.0 + (_2 == _1))", x, z, y)


def unbroadcast_chain(chain, x, *operands):
    return unbroadcast(elementwise(chain, *operands), x)


def expand_to(g, x, axis=None, keepdims=False):
    shape = _shape(x)
    if not _array(g):
        return ops.full(shape, g, _dtype(g), x.device if _array(x) else _default_device())
    if axis is not None and not keepdims:
        axes = sorted(a % len(shape) for a in ((axis,) if np.ndim(axis) == 0 else axis))
        kept = iter(g.shape)
        g = ops.reshape(g, tuple(1 if d in axes else next(kept) for d in range(len(shape))))
    return ops.materialize(views.broadcast_to(g, shape))


def shape_like(x):
    """runtime.shape_like: a view of x's shape and dtype holding one zero (read only for
    them, as on the CPU)."""
    if not _array(x):
        return x
    zero = ops.full((), 0, x.dtype, x.device)
    return views.broadcast_to(zero, x.shape)


def chain_like(chain, *operands):
    arrays = [x for x in operands if _array(x)]
    if not arrays:
        return arithmetic.elementwise(chain, *operands)
    zero = ops.full((), 0, ops.dtype_of(chain, operands), arrays[0].device)
    return views.broadcast_to(zero, np.broadcast_shapes(*(x.shape for x in arrays)))


def astype_like(g, x):
    dtype = _dtype(x)
    if _array(g):
        return g if g.dtype == dtype else ops.copy(g, dtype)
    return dtype.type(g)


def seed_grad(out):
    if _array(out):
        if out.shape != () or not np.issubdtype(out.dtype, np.floating):
            base.seed_grad(np.zeros(out.shape, out.dtype))    # grad's error
        return ops.full((), 1, out.dtype, out.device)
    return base.seed_grad(out)


def zeros_like(x):
    if _array(x):
        dtype = x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64
        return ops.full(x.shape, 0, dtype, x.device)
    if isinstance(x, (list, tuple)):
        return base._rebuild(x, [zeros_like(v) for v in x])
    if isinstance(x, dict):
        return {k: zeros_like(v) for k, v in x.items()}
    return base.zeros_like(x)


def ones_like(x):
    return ops.full(x.shape, 1, x.dtype, x.device) if _array(x) else base.ones_like(x)


def add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, (list, tuple)):
        return base._rebuild(a, [add(x, y) for x, y in zip(a, b)])
    if isinstance(a, dict):
        return {k: add(a[k], b[k]) for k in a}
    return ops.ufunc(np.add, a, b) if _array(a) or _array(b) else a + b


def narrow(x):
    to = base._NARROW.get(getattr(x, "dtype", None))
    return ops.copy(x, to) if to is not None and _array(x) else base.narrow(x)


def matmul(a, b):
    return ops.matmul(_on_device(a), _on_device(b))


def matmul_vjp_x(g, x, y):
    """runtime.matmul_vjp_x: ``g @ y.T`` read through y's strides (no transposed copy)."""
    if len(_shape(y)) == 1:
        if len(_shape(x)) == 1:
            return ops.ufunc(np.multiply, g, y)
        return ops.apply("_0 * _1", [ops.reshape(g, _shape(g) + (1,)), y])
    if len(_shape(x)) == 1:
        product = ops.matmul(ops.reshape(g, _shape(g) + (1,)), _swapaxes(y, -1, -2))
        return ops.reshape(product, product.shape[:-1])
    return ops.matmul(g, _swapaxes(y, -1, -2))


def matmul_vjp_y(g, x, y):
    if len(_shape(x)) == 1:
        if len(_shape(y)) == 1:
            return ops.ufunc(np.multiply, g, x)
        return ops.apply("_0 * _1", [ops.reshape(x, _shape(x) + (1,)),
                                     ops.reshape(g, _shape(g)[:-1] + (1,) + _shape(g)[-1:])])
    if len(_shape(y)) == 1:
        return ops.reshape(ops.matmul(_swapaxes(x, -1, -2), ops.reshape(
            g, _shape(g) + (1,))), _shape(g)[:-1] + _shape(x)[-1:])
    return ops.matmul(_swapaxes(x, -1, -2), g)


def _via_host(fn, *args, **kwargs):
    """``fn`` run on host copies, its arrays put back: the twins' way with arguments their
    kernels do not take (correct, not fast)."""
    from .arrays import put, to_host
    return put(fn(*to_host(args), **to_host(kwargs)), _default_device())


def _float(x):
    dtype = _dtype(x)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def _count(a, axis):
    """How many elements of ``a`` each reduction over ``axis`` takes."""
    ndim = len(a.shape)
    axes = range(ndim) if axis is None else [d % ndim for d in np.atleast_1d(axis)]
    return int(np.prod([a.shape[d] for d in axes], dtype=np.int64))


def mean_grad(a, axis=None, where=True):
    if where is not True or not _array(a):
        return _via_host(reductions.mean_grad, a, axis, where)
    n = _count(a, axis)
    return ops.full(a.shape, 1 / n if n else np.nan, _float(a), a.device)


def var_grad(a, axis=None, ddof=0, where=True, mean=None, correction=None):
    ddof = ddof if correction is None else correction
    if where is not True or not _array(a):
        return _via_host(reductions.var_grad, a, axis, ddof, where, mean)
    n = _count(a, axis)
    mean = ops.reduce("mean", a, axis, True) if mean is None else mean
    return ops.apply("weak(2, _0) * (_0 - _1) / weak(_2, _0)", [a, mean, n - ddof],
                     _float(a))


def extremum_grad(a, ans, axis=None, keepdims=False, where=True):
    """reductions.extremum_grad: ties share the cotangent evenly, NaN where the result is."""
    if where is not True or not _array(a):
        return _via_host(reductions.extremum_grad, a, ans, axis, keepdims, where)
    ans = expand_to(ans, a, axis, keepdims)
    hit = ops.apply("_0 == _1", [a, ans], np.bool_)
    count = ops.reduce("sum", hit, axis, True)
    return ops.apply("_0 / (_2 if _2 > 1 else 1) if _1 == _1 else _1",
                     [ops.copy(hit, _float(a)), ans, count], _float(a))


def _reduction(op):
    def twin(a, axis=None, dtype=None, out=None, keepdims=False, **rest):
        if out is not None or rest or not _array(a) and not isinstance(a, np.ndarray):
            return _via_host(getattr(np, op), a, axis=axis, dtype=dtype, out=out,
                             keepdims=keepdims, **rest)
        return ops.reduce(op, _on_device(a), axis, keepdims, dtype)
    twin.__name__ = f"{op}_device"
    return twin


def _ufunc(u):
    def twin(*inputs, **kwargs):
        if kwargs or not any(map(_array, inputs)):
            return u(*inputs, **kwargs)   # (numbers: on the host; out=, where=: host copies)
        return ops.ufunc(u, *inputs)
    twin.__name__ = f"{u.__name__}_device"
    return twin


def where(condition, x=None, y=None):
    if x is None or y is None:
        raise TypeError("np.where with one argument gives index arrays: not on the device")
    return ops.where(_on_device(condition), _on_device(x), _on_device(y))


def dot(a, b):
    if not _shape(a) or not _shape(b):
        return ops.ufunc(np.multiply, a, b)
    if len(_shape(b)) > 2:
        return tensordot(a, b, products.dot_axes(a, b))
    return matmul(a, b)


def tensordot(a, b, axes=2):
    """np.tensordot as one matmul: each operand's axes put in order and flattened."""
    a, b = _on_device(a), _on_device(b)
    ax_a, ax_b, free_a, free_b = products._tensordot_axes(a, b, axes)
    if [a.shape[i] for i in ax_a] != [b.shape[i] for i in ax_b]:
        raise ValueError("shape-mismatch for sum")
    size = lambda x, axes: int(np.prod([x.shape[i] for i in axes], dtype=np.int64))  # noqa
    left = ops.reshape(ops.materialize(views.transpose(a, free_a + ax_a)),
                       (size(a, free_a), size(a, ax_a)))
    right = ops.reshape(ops.materialize(views.transpose(b, ax_b + free_b)),
                        (size(b, ax_b), size(b, free_b)))
    return ops.reshape(ops.matmul(left, right), tuple(a.shape[i] for i in free_a) +
                       tuple(b.shape[i] for i in free_b))


def _meta(name, of_array):
    def twin(a, *args):
        return of_array(a, *args) if _array(a) else getattr(np, name)(a, *args)
    twin.__name__ = f"{name}_device"
    return twin


def roll(a, shift, axis=None):
    if not _array(a) or np.ndim(shift) or np.ndim(axis):
        return _via_host(np.roll, a, shift, axis)
    flat = ops.reshape(ops.materialize(a), (-1,)) if axis is None else a
    at = 0 if axis is None else axis % len(a.shape)
    n = flat.shape[at]
    k = int(shift) % n if n else 0
    before = (slice(None),) * at
    out = ops.concatenate([views.getitem(flat, before + (slice(n - k, None),)),
                           views.getitem(flat, before + (slice(0, n - k),))], at)
    return ops.reshape(out, a.shape) if axis is None else out


def transpose(a, axes=None):
    return ops.materialize(views.transpose(_on_device(a), axes))


def reshape(a, shape, order="C"):
    if order != "C":
        raise TypeError("np.reshape on the device is in C order only")
    return ops.reshape(_on_device(a), shape)


def _like(value):
    def twin(a, dtype=None, shape=None):
        return ops.full(a.shape if shape is None else shape, value,
                        dtype or a.dtype, a.device)
    return twin


def full_like(a, fill_value, dtype=None, shape=None):
    return ops.full(a.shape if shape is None else shape, fill_value, dtype or a.dtype, a.device)


def _made(name, value):
    def twin(shape, dtype=None, *rest, **kwargs):
        if rest or kwargs:
            return _via_host(getattr(np, name), shape, dtype, *rest, **kwargs)
        return ops.full(shape, value, dtype or np.float64, _default_device())
    twin.__name__ = f"{name}_device"
    return twin


def full(shape, fill_value, dtype=None):
    if _array(fill_value):
        return ops.materialize(views.broadcast_to(fill_value if dtype is None else
                                                ops.copy(fill_value, dtype), _tuple(shape)))
    return ops.full(shape, fill_value, dtype or np.result_type(fill_value), _default_device())


def _tuple(shape):
    return tuple(shape) if np.ndim(shape) else (int(shape),)


def outer(a, b):
    a, b = _on_device(a), _on_device(b)
    n = int(np.prod(_shape(a)))
    return ops.apply("_0 * _1", [ops.reshape(a, (n, 1)) if _array(a) else a,
                                 ops.reshape(b, (-1,)) if _array(b) else b])


def concatenate(arrays, axis=0, dtype=None):
    if axis is None or dtype is not None:
        return _via_host(np.concatenate, arrays, axis=axis, dtype=dtype)
    return ops.concatenate([_on_device(np.asarray(x)) if not _array(x) else x
                            for x in arrays], axis)


def stack(arrays, axis=0):
    arrays = [_on_device(np.asarray(x)) if not _array(x) else x for x in arrays]
    ndim = len(arrays[0].shape) + 1
    axis %= ndim
    return ops.concatenate([ops.reshape(ops.materialize(x), x.shape[:axis] + (1,) +
                                        x.shape[axis:]) for x in arrays], axis)


def setitem(x, idx, v):
    """runtime.setitem of a DeviceArray at a basic index: a copy with the part written."""
    if not _array(x) or not views.basic(idx):
        return _via_host(indexing.setitem, x, idx, v) if _array(x) else indexing.setitem(
            x, idx, v)
    out = ops.copy(x)
    part = views.getitem(out, idx)
    ops.write(part, "_0", [views.broadcast_to(_on_device(v), part.shape) if _array(v) or
                           isinstance(v, np.ndarray) else v])
    return out


def setitem_vjp(g, idx):
    if isinstance(g, (dict, list)):   # the item's cotangent zeroed: zeros made on the device
        out = g.copy()
        out[idx] = zeros_like(g[idx])
        return out
    if g is None or not _array(g):
        return indexing.setitem_vjp(g, idx)
    return setitem(g, idx, 0)


def getitem_vjp(g, x, idx):
    """runtime.getitem_vjp: zeros like x, g written at a basic index (no element twice); of a
    container, its zeros with g added to the item or items taken."""
    if isinstance(x, (dict, list, tuple)):
        out = dict(zeros_like(x)) if isinstance(x, dict) else list(zeros_like(x))
        many = isinstance(idx, slice) and not isinstance(x, dict)
        for k, gk in zip(range(*idx.indices(len(x))) if many else [idx], g if many else [g]):
            out[k] = add(out[k], gk)
        return out if isinstance(x, dict) else base._rebuild(x, out)
    if not _array(x) or not views.basic(idx):
        return _via_host(indexing.getitem_vjp, g, x, idx) if _array(x) else \
            indexing.getitem_vjp(g, x, idx)
    return setitem(zeros_like(x), idx, g)


def _views(fn, name):
    def twin(a, *args, **kwargs):
        if not _array(a):
            return getattr(np, name)(a, *args, **kwargs)
        return ops.materialize(fn(a, *args, **kwargs))
    twin.__name__ = f"{name}_device"
    return twin


def _moveaxis(a, source, destination):
    ndim = len(a.shape)
    source = [s % ndim for s in np.atleast_1d(source)]
    destination = [d % ndim for d in np.atleast_1d(destination)]
    order = [d for d in range(ndim) if d not in source]
    for d, s in sorted(zip(destination, source)):
        order.insert(d, s)
    return views.transpose(a, order)


def _swapaxes(a, axis1, axis2):
    order = list(range(len(a.shape)))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return views.transpose(a, order)


def _squeeze(a, axis=None):
    axes = [d for d, n in enumerate(a.shape) if n == 1] if axis is None else \
        [d % len(a.shape) for d in np.atleast_1d(axis)]
    if any(a.shape[d] != 1 for d in axes):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return ops.reshape(ops.materialize(a), tuple(n for d, n in enumerate(a.shape)
                                                  if d not in axes))


def _expand_dims(a, axis):
    ndim = len(a.shape) + len(np.atleast_1d(axis))
    axes = {d % ndim for d in np.atleast_1d(axis)}
    it = iter(a.shape)
    return ops.reshape(ops.materialize(a), tuple(1 if d in axes else next(it)
                                                  for d in range(ndim)))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if out is not None or not _array(a):
        return _via_host(np.trace, a, offset, axis1, axis2, dtype, out)
    return ops.reduce("sum", views.diagonal(a, offset, axis1, axis2), -1, False, dtype)


def diagonal_vjp(g, a, offset=0, axis1=0, axis2=1):
    """runtime.diagonal_vjp: zeros with g written on the diagonal (g's last axis along it)."""
    if not _array(a):
        return _via_host(shapes.diagonal_vjp, g, a, offset, axis1, axis2)
    out = ops.full(a.shape, 0, np.result_type(_dtype(g), 1.0), a.device)
    part = views.diagonal(out, offset, axis1, axis2)
    ops.write(part, "_0", [views.broadcast_to(g, part.shape) if _array(g) else g])
    return out


def _scan(op):
    def twin(a, axis=None, dtype=None, out=None):
        if out is not None or not _array(a):
            return _via_host(getattr(np, f"cum{op}"), a, axis, dtype, out)
        return ops.scan(op, a, axis, dtype)
    twin.__name__ = f"cum{op}_device"
    return twin


def rev_cumsum(g, axis=None):
    if not _array(g):
        return reductions.rev_cumsum(g, axis)
    flip = (slice(None),) * ((axis or 0) % max(len(g.shape), 1)) + (slice(None, None, -1),)
    summed = ops.scan("sum", views.getitem(g, flip), axis)
    return ops.materialize(views.getitem(summed, flip))


def concatenate_vjp(g, arrays, axis=0, promote=None):
    """runtime.shape.concatenate_vjp: g cut along ``axis`` at the arrays' lengths (views copied)."""
    if not _array(g) or promote is not None or axis is None or not isinstance(
            arrays, (list, tuple)):
        return _via_host(shapes.concatenate_vjp, g, arrays, axis, promote)
    out, at = [], 0
    for a in arrays:
        n = _shape(a)[axis]
        part = views.getitem(g, (slice(None),) * (axis % len(g.shape)) + (slice(at, at + n),))
        out.append(ops.reshape(ops.materialize(part), _shape(a)))
        at += n
    return out


def item_vjp(g, idx, v):
    if _array(g) and views.basic(idx):
        return unbroadcast(ops.materialize(views.getitem(g, idx)), v)
    return _via_host(containers.item_vjp, g, idx, v) if _array(g) else \
        containers.item_vjp(g, idx, v)


def sum_vjp(g, iterable):
    return [unbroadcast(g, e) for e in iterable]


def iterable_vjp(g, x):
    return g if _array(x) else containers.iterable_vjp(g, x)


def asarray(a, dtype=None):
    a = _on_device(a) if not isinstance(a, (list, tuple)) else to_device(
        np.asarray(a), _default_device())
    return a if dtype is None or not _array(a) or a.dtype == dtype else ops.copy(a, dtype)


REDUCTIONS = {np.sum: "sum", np.prod: "prod", np.max: "max", np.amax: "max", np.min: "min",
              np.amin: "min", np.mean: "mean"}

TWINS = {
    arithmetic.elementwise: elementwise, arithmetic.elementwise_into: elementwise,
    arithmetic.unbroadcast_chain: unbroadcast_chain, arithmetic.weak: arithmetic.weak,
    arithmetic.chain_like: chain_like, arithmetic.balanced_eq: balanced_eq,
    containers.shape_like: shape_like,
    base.unbroadcast: unbroadcast, base.expand_to: expand_to, base.astype_like: astype_like,
    base.seed_grad: seed_grad, base.zeros_like: zeros_like, base.ones_like: ones_like,
    base.add: add, base.narrow: narrow,
    products.matmul: matmul, products.matmul_vjp_x: matmul_vjp_x,
    products.matmul_vjp_y: matmul_vjp_y,
    sums.sum_all: _reduction("sum"), sums.mean_all: _reduction("mean"),
    reductions.mean_grad: mean_grad, reductions.var_grad: var_grad,
    reductions.extremum_grad: extremum_grad,
    np.matmul: matmul, np.dot: dot, np.where: where, np.transpose: transpose,
    np.reshape: reshape, np.zeros_like: _like(0), np.ones_like: _like(1),
    np.full_like: full_like, np.asarray: asarray, np.array: asarray,
    np.zeros: _made("zeros", 0), np.ones: _made("ones", 1), np.empty: _made("empty", 0),
    np.full: full, np.outer: outer,
    np.concatenate: concatenate, np.stack: stack, indexing.setitem: setitem,
    indexing.setitem_vjp: setitem_vjp, indexing.getitem_vjp: getitem_vjp,
    np.trace: trace, np.diagonal: _views(views.diagonal, "diagonal"),
    shapes.diagonal_vjp: diagonal_vjp, np.cumsum: _scan("sum"), np.cumprod: _scan("prod"),
    reductions.rev_cumsum: rev_cumsum, containers.item_vjp: item_vjp,
    shapes.concatenate_vjp: concatenate_vjp,
    containers.iterable_vjp: iterable_vjp, containers.sum_vjp: sum_vjp,
    np.moveaxis: _views(_moveaxis, "moveaxis"),
    np.swapaxes: _views(_swapaxes, "swapaxes"), np.squeeze: _views(_squeeze, "squeeze"),
    np.expand_dims: _views(_expand_dims, "expand_dims"), np.tensordot: tensordot,
    np.shape: _meta("shape", lambda a: tuple(a.shape)), np.ndim: _meta("ndim", lambda a: len(
        a.shape)), np.size: _meta("size", lambda a, axis=None: int(np.prod(a.shape)) if axis
                                  is None else a.shape[axis]),
    np.ravel: _views(lambda a: ops.reshape(ops.materialize(a), (-1,)), "ravel"), np.roll: roll,
    # helpers written over NumPy's functions alone, each of which has a twin (through
    # DeviceArray.__array_function__): their own twins
    products.tensordot_vjp_a: products.tensordot_vjp_a,
    products.tensordot_vjp_b: products.tensordot_vjp_b,
    **{f: _reduction(op) for f, op in REDUCTIONS.items()},
    **{u: _ufunc(u) for u in ufuncs.STUBS},
}
__all__ = ["TWINS"]
