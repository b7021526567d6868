"""Numba implementations of base.py's helpers: the algebra of cotangents."""
import numpy as np
from numba import types
from numba.extending import register_jitable
from numba.typed import Dict
from numba.np.numpy_support import as_dtype

from ... import runtime as rt
from ._common import SCALARS, _float_of, _none, _unrolled, overload
from .sums import sum_all


@register_jitable
def _not_a_real_number(out):
    raise TypeError("grad requires a real scalar output: use strop.vjp or strop.jacrev "
                    "for non-scalar outputs, or reduce it (e.g. .sum())")


@overload(rt.seed_grad, optional=True)
def _seed_grad(out):
    real = out.type if isinstance(out, types.Optional) else out   # (None on another path)
    if isinstance(real, types.Float) or isinstance(real, types.Array) and real.ndim == 0 and \
            isinstance(real.dtype, types.Float):     # (a 0-d array: np.where of numbers)
        one = _float_of(real)(1.0)
        if real is not out:
            def checked(out):
                if out is None:
                    _not_a_real_number(out)
                return one
            return checked
        return lambda out: one
    return _not_a_real_number


@overload(rt.aux_pair)
def _aux_pair(out):
    if isinstance(out, types.BaseTuple) and len(out) == 2:
        return lambda out: None
    if isinstance(out, types.List):
        def check_list(out):
            if len(out) != 2:
                raise TypeError("has_aux=True requires the function to return a pair "
                                "(output, aux)")
        return check_list

    def fail(out):
        raise TypeError("has_aux=True requires the function to return a pair (output, aux)")
    return fail


@overload(rt.zeros_like)
def _zeros_like(x):
    dt = _float_of(x)
    if isinstance(x, types.Array) and x.ndim > 0:
        return lambda x: np.zeros(x.shape, dt)
    # a 0-d array's zero is a number: what NumPy makes of it at the first addition (a 0-d
    # array plus a number is a number), so a sum carried through a loop keeps one type
    if isinstance(x, SCALARS) or isinstance(x, types.Array):
        zero = dt(0.0)
        return lambda x: zero
    if isinstance(x, types.NoneType):   # a temporary not assigned yet: no tangent either
        return lambda x: None
    if isinstance(x, types.List) and not _none(x.dtype):   # a list's: a list of zeros
        return lambda x: [rt.zeros_like(e) for e in x]
    if isinstance(x, types.DictType):   # a dict's: the same keys, each a zero
        key, value = x.key_type, x.value_type

        def dict_of_zeros(x):
            out = Dict.empty(key, value)
            for k, v in x.items():
                out[k] = rt.zeros_like(v)
            return out
        return dict_of_zeros


@overload(rt.add)
def _add(a, b):
    """Cotangents accumulated: None is zero, tuples add element by element (``+`` would
    concatenate them: a tuple argument's gradient twice as long)."""
    if isinstance(a, types.NoneType):
        return lambda a, b: b
    if isinstance(b, types.NoneType):
        return lambda a, b: a
    if isinstance(a, types.BaseTuple) or isinstance(b, types.BaseTuple):
        if not (isinstance(a, types.BaseTuple) and isinstance(b, types.BaseTuple)) or \
                len(a) != len(b):
            return None
        parts = "".join(f"add(a[{i}], b[{i}]), " for i in range(len(a)))
        return _unrolled(f"def impl(a, b):\n    return ({parts})\n", add=rt.add)
    if isinstance(a, types.DictType) and isinstance(b, types.DictType):   # key by key
        key, value = a.key_type, a.value_type

        def dicts(a, b):
            out = Dict.empty(key, value)
            for k, v in a.items():
                out[k] = v
            for k, v in b.items():
                out[k] = rt.add(out[k], v) if k in out else v
            return out
        return dicts
    if isinstance(a, types.List) or isinstance(b, types.List):   # element by element
        if not (isinstance(a, types.List) and isinstance(b, types.List)):
            return None

        def lists(a, b):
            if len(a) != len(b):
                raise ValueError("cotangents of lists of different lengths")
            return [rt.add(a[i], b[i]) for i in range(len(a))]
        return lists
    return lambda a, b: a + b


@overload(rt.tree_vdot)
def _tree_vdot(a, b):
    """<a, b> of two arrays or numbers, or of tuples of them item by item."""
    if isinstance(a, types.BaseTuple) and isinstance(b, types.BaseTuple) and len(a) == len(b):
        parts = " + ".join(f"tree_vdot(a[{i}], b[{i}])" for i in range(len(a))) or "0.0"
        return _unrolled(f"def impl(a, b):\n    return {parts}\n", tree_vdot=rt.tree_vdot)
    if isinstance(a, (types.Array,) + SCALARS) and isinstance(b, (types.Array,) + SCALARS):
        return lambda a, b: np.sum(a * b)


@overload(rt.astype_like)
def _astype_like(g, x):
    dt = _float_of(x)
    if isinstance(x, types.Array):
        return lambda g, x: np.asarray(g).astype(dt)
    return lambda g, x: dt(g)


def _sum_to(g, shape, dt):
    """g summed to ``shape`` (NumPy broadcasting undone)."""


@overload(_sum_to)
def _sum_to_impl(g, shape, dt):
    """Where g has at least shape's rank: a loop over g's axes, each element added at the
    index it was broadcast from (its index times 0 along a summed axis), in g's order, as
    _sum_to_any adds them, without dividing each element's index (a pair's distances
    ``x[:, None] - x[None, :]`` summed over one particle took most of a gradient so)."""
    nd, nx = g.ndim, len(shape)
    if nd < nx or nd == 0:
        return _sum_to_any
    padded = "(" + "1, " * (nd - nx) + "".join(f"shape[{a}], " for a in range(nx)) + ")"
    lines = ["def impl(g, shape, dt):", "    out = np.zeros(shape, dt)",
             f"    o = out.reshape({padded})"]
    for a in range(nd):
        lines += [f"    if o.shape[{a}] != 1 and o.shape[{a}] != g.shape[{a}]:",
                  "        raise ValueError('a cotangent of a shape its value cannot have')",
                  f"    s{a} = 0 if o.shape[{a}] == 1 else 1"]
    for a in range(nd):
        lines.append("    " * (a + 1) + f"for i{a} in range(g.shape[{a}]):")
    at, of = (", ".join(f"i{a}{f' * s{a}' if times else ''}" for a in range(nd))
              for times in (True, False))
    lines.append("    " * (nd + 1) + f"o[{at}] += g[{of}]")
    lines.append("    return out")
    return _unrolled("\n".join(lines) + "\n", np=np)


@register_jitable
def _sum_to_any(g, shape, dt):
    """g summed to ``shape`` (NumPy broadcasting undone), any ranks (a 0-d g, or one of
    fewer axes than shape), each element's place found by dividing its index."""
    out = np.zeros(shape, dt)
    flat = out.reshape(-1)
    gc = np.ascontiguousarray(g).reshape(-1)
    nd, nx = g.ndim, len(shape)
    off = nd - nx
    strides = np.ones(max(nx, 1), np.int64)
    for a in range(nx - 2, -1, -1):
        strides[a] = strides[a + 1] * shape[a + 1]
    for i in range(gc.size):
        rem, pos = i, 0
        for a in range(nd - 1, -1, -1):
            k = rem % g.shape[a]
            rem //= g.shape[a]
            xa = a - off
            if xa >= 0 and shape[xa] != 1:
                pos += k * strides[xa]
        flat[pos] += gc[i]
    return out


@overload(rt.unbroadcast)
def _unbroadcast(g, x):
    dt = _float_of(x) if isinstance(x, (types.Array, types.Float)) else _float_of(g)
    if isinstance(x, SCALARS) or isinstance(x, types.Array) and x.ndim == 0:   # (zeros_like)
        if isinstance(g, types.Array):
            return lambda g, x: dt(sum_all(g))     # (pairwise for floats: sums.py)
        return lambda g, x: dt(g)
    if isinstance(x, types.Array):
        if isinstance(g, SCALARS):
            return lambda g, x: np.full(x.shape, dt(g))
        same_dtype = isinstance(g, types.Array) and as_dtype(g.dtype).type is dt
        if g.ndim == x.ndim:
            def same_rank(g, x):
                if g.shape == x.shape:
                    return g if same_dtype else g.astype(dt)
                return _sum_to(g, x.shape, dt)
            return same_rank
        if g.ndim == x.ndim + 1:
            def one_more(g, x):   # a bias added to each row: the rows' sum
                if g.shape[1:] == x.shape:
                    return g.sum(axis=0).astype(dt)
                return _sum_to(g, x.shape, dt)
            return one_more
        return lambda g, x: _sum_to(g, x.shape, dt)


@overload(rt.broadcast_like)
def _broadcast_like(g, v):
    dt = _float_of(v)
    if isinstance(v, types.Array) and v.ndim == 0:   # a number, as zeros_like's of it
        return lambda g, v: np.asarray(g).astype(dt).reshape(1)[0]
    if isinstance(v, types.Array):
        return lambda g, v: np.broadcast_to(np.asarray(g).astype(dt), v.shape).copy()
    return lambda g, v: dt(g)


@overload(rt.expand_to)
def _expand_to(g, x, axis=None, keepdims=False):
    if not isinstance(x, types.Array):
        return lambda g, x, axis=None, keepdims=False: g
    if _none(axis) or isinstance(g, SCALARS):
        return lambda g, x, axis=None, keepdims=False: np.full(x.shape, g)
    if isinstance(axis, types.Integer):
        def one_axis(g, x, axis=None, keepdims=False):
            if keepdims:
                return np.broadcast_to(g, x.shape)
            return np.broadcast_to(np.expand_dims(g, axis % x.ndim), x.shape)
        return one_axis
    if isinstance(axis, types.BaseTuple) and all(isinstance(a, types.Integer) for a in axis):
        n = x.ndim   # g reshaped to the reduction's keepdims shape, then broadcast
        shape = "(" + "".join(f"1 if kept[{i}] else x.shape[{i}], " for i in range(n)) + ")"
        return _unrolled(f"""
def impl(g, x, axis=None, keepdims=False):
    if keepdims:
        return np.broadcast_to(g, x.shape)
    kept = np.zeros({n}, np.bool_)
    for a in axis:
        kept[a % {n}] = True
    return np.broadcast_to(np.ascontiguousarray(g).reshape({shape}), x.shape)
""", np=np)


@overload(rt.narrow)
def _narrow(x):
    if isinstance(x, types.Array) and str(x.dtype) in _NARROW:
        to = _NARROW[str(x.dtype)]
        return lambda x: x.astype(to)
    return lambda x: x


_NARROW = {"float64": np.float32, "int64": np.int32, "complex128": np.complex64}


IMPLEMENTED = {rt.narrow, rt.seed_grad, rt.aux_pair, rt.zeros_like, rt.add, rt.astype_like, rt.unbroadcast,
               rt.broadcast_like, rt.expand_to}
