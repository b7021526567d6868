"""The shape and dtype of each value of a normalized function, where NumPy's rules prove them.

Reverse mode writes ``unbroadcast(e, x)`` for each operand ``x`` of an elementwise operation:
the cotangent summed down to x's shape and cast to x's float dtype.  Where x has the output's
shape and dtype, that is ``e`` itself, and x need not be kept on a tape for its shape (a
stencil's step kept eight such tapes, and each unbroadcast stopped the cotangent's operators
from fusing into one loop).  Ranks (ranks.py) settle this only for numbers; here a dimension
is symbolic, ``(param, axis, k)``: ``max(0, n - k)`` for the length n of a parameter's axis
(or ``("=", class, k)``, n the length of the axes of one class, as the call's key gives them),
which slices with constant bounds keep in that form (``x[a:-c]`` of a length L is
``max(0, L - a - c)`` for a, c >= 0), or ``("lit", n)``.  Two values have one shape when their
dimensions are the same symbols; anything else (a dimension that may or may not be 1, a
reshape, a computed bound) is unknown, and unknown never equals anything.

Dtypes are known when every float argument has one dtype (``precision``, from the call); a
Python number is weak (its type, ``int`` or ``float``), and the dtype of an operation is what
NumPy gives on one-element samples of its operands.  Flow-insensitive, to a fixpoint, as
ranks.py; a value taken back from a tape does not decide.
"""
import operator

import gast
import numpy as np

from .. import runtime
from .ranks import _bindings, _is_pop, given_ranks
from .rules.batching import is_member

_UNSEEN = "unseen"
UNKNOWN = (None, None)
_OPERATORS = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
              gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv,
              gast.Mod: operator.mod, gast.Pow: operator.pow}
_UNARY = {gast.USub: operator.neg, gast.UAdd: operator.pos}
# one argument, the same shape and dtype
_SAME = {np.copy, np.asarray, np.ascontiguousarray, np.array, abs, np.abs, np.negative,
         np.positive}
_WHOLE = {np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod}   # to a number


def known(stmts, kinds, dtypes, callee, dims=None):
    """{name: (shape, dtype)} for the names of ``stmts`` with a known shape; ``kinds``:
    parameter -> its kind (transformed.py: "int", "scalar", "array<rank>", ...), ``dtypes``:
    parameter -> the dtype of its array or NumPy number, where known; ``dims``: parameter ->
    a class for each axis, axes of one class being of one length in the call (the dimension
    ``("=", class, k)``), where known.  A shape is a tuple of dimensions (None: unknown), a
    dtype an ``np.dtype``, ``int`` or ``float`` for a Python number, or None."""
    bindings, opaque = [], set()
    _bindings(stmts, bindings, opaque)
    dims = dims or {}
    table = {p: (tuple(("=", dims[p][a], 0) if p in dims and len(dims[p]) == r else
                       (p, a, 0) for a in range(r)),
                 int if kinds[p] == "int" else np.dtype(dtypes[p]) if p in dtypes else None)
             for p, r in given_ranks(kinds).items()}
    table.update({n: _UNSEEN for n, _ in bindings if n not in table})
    for n in opaque:
        table[n] = UNKNOWN
    typer = _Typer(table, callee)
    changed = True
    while changed:
        changed = False
        for name, how in bindings:
            new = typer.binding(how)
            if new is _UNSEEN:
                continue
            old = table.get(name, _UNSEEN)
            joined = new if old is _UNSEEN else _join(old, new)
            if old is _UNSEEN or joined[0] != old[0] or not _same_dtype(joined[1], old[1]):
                table[name] = joined
                changed = True
    return {n: t for n, t in table.items() if t is not _UNSEEN and t[0] is not None}


def elementwise(value, callee):
    """Whether expression ``value`` is an elementwise operation (its operands broadcast to its
    shape, each operand's cotangent computed in that shape)."""
    if isinstance(value, gast.BinOp):
        return type(value.op) in _OPERATORS
    if isinstance(value, gast.UnaryOp):
        return type(value.op) in _UNARY
    if isinstance(value, gast.Call):
        fn = callee(value.func)
        return isinstance(fn, np.ufunc) and fn.signature is None and fn.nout == 1 or \
            is_member(fn, (np.where, np.clip))
    return False


def matrix_product(value, info):
    """Whether ``value`` is ``a @ b`` of vectors and matrices (known ranks): no batch axes,
    so each operand's cotangent has that operand's shape."""
    return isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult) and all(
        isinstance(o, gast.Name) and o.id in info and 1 <= len(info[o.id][0]) <= 2
        for o in (value.left, value.right))


def same_dtype(info, a, b):
    """Whether names ``a`` and ``b`` surely have one array dtype."""
    x, y = info.get(a), info.get(b)
    return x is not None and y is not None and isinstance(x[1], np.dtype) and \
        _same_dtype(x[1], y[1])


def same(info, a, b):
    """Whether names ``a`` and ``b`` surely have one shape and one array dtype."""
    x, y = info.get(a), info.get(b)
    return x is not None and y is not None and isinstance(x[1], np.dtype) and \
        _same_dtype(x[1], y[1]) and x[0] == y[0] and None not in x[0]


def _same_dtype(a, b):
    """(``np.dtype("float64") == float`` and ``== None`` both hold: a dtype equals what
    ``np.dtype()`` makes of the other)"""
    return type(a) is type(b) and a == b


def _join(a, b):
    (sa, da), (sb, db) = a, b
    if sa is None or sb is None or len(sa) != len(sb):
        shape = None
    else:
        shape = tuple(x if x == y else None for x, y in zip(sa, sb))
    return shape, da if _same_dtype(da, db) else None


def _broadcast(*shapes):
    if any(s is None for s in shapes):
        return None
    out = []
    for dims in zip(*(((("lit", 1),) * (max(map(len, shapes)) - len(s))) + s for s in shapes)):
        known = {d for d in dims if d != ("lit", 1)}
        out.append(known.pop() if len(known) == 1 and None not in known else
                   ("lit", 1) if not known else None)
    return tuple(out)


def _sample(d):
    if isinstance(d, np.dtype):
        return np.ones(1, d)
    return d(1) if d in (int, float) else None


def _dtype_of(fn, dtypes):
    """The dtype NumPy gives ``fn`` of operands of ``dtypes`` (None where one is unknown)."""
    samples = [_sample(d) for d in dtypes]
    if any(s is None for s in samples):
        return None
    try:
        with np.errstate(all="ignore"):
            out = fn(*samples)
    except Exception:
        return None
    if isinstance(out, (np.ndarray, np.generic)):
        return out.dtype
    return type(out) if type(out) in (int, float) else None


def _slice_dim(d, part):
    """The length of ``part`` (a constant slice) of a dimension ``d``, or None."""
    bounds = [part.lower, part.upper, part.step]
    if not all(b is None or isinstance(b, gast.Constant) and type(b.value) is int
               for b in bounds):
        return None
    lo, hi, step = (None if b is None else b.value for b in bounds)
    if d is not None and d[0] == "lit":
        return "lit", len(range(d[1])[slice(lo, hi, step)])
    if d is None or step not in (None, 1) or (lo or 0) < 0 or (hi is not None and hi >= 0):
        return None
    return d[0], d[1], d[2] + (lo or 0) - (hi or 0)


class _Typer:
    def __init__(self, table, callee):
        self.table, self.callee = table, callee

    def binding(self, how):
        kind, node = how
        if kind == "value":
            return _UNSEEN if _is_pop(node, self.callee) else self.of(node)
        if isinstance(node, gast.Call) and self.callee(node.func) is range:
            return (), int
        t = self.of(node)
        if t is _UNSEEN:
            return _UNSEEN
        return (t[0][1:], t[1]) if t[0] else UNKNOWN

    def of(self, node):
        method = getattr(self, "of_" + type(node).__name__, None)
        return method(node) if method else UNKNOWN

    def each(self, nodes):
        """The types of ``nodes``, or _UNSEEN if one is not typed yet."""
        out = [self.of(n) for n in nodes]
        return _UNSEEN if any(t is _UNSEEN for t in out) else out

    def elementwise(self, fn, nodes):
        ts = self.each(nodes)
        if ts is _UNSEEN:
            return _UNSEEN
        dtypes = [t[1] for t in ts]
        if fn is np.where:     # (the condition's dtype does not count)
            fn, dtypes = (lambda x, y: np.where(True, x, y)), dtypes[1:]
        return _broadcast(*(t[0] for t in ts)), _dtype_of(fn, dtypes)

    def of_Constant(self, node):   # noqa: N802
        return ((), type(node.value)) if type(node.value) in (int, float) else UNKNOWN

    def of_Name(self, node):   # noqa: N802
        return self.table.get(node.id, UNKNOWN)

    def of_BinOp(self, node):   # noqa: N802
        if isinstance(node.op, gast.MatMult):
            return self.matmul(node.left, node.right)
        fn = _OPERATORS.get(type(node.op))
        return self.elementwise(fn, [node.left, node.right]) if fn else UNKNOWN

    def matmul(self, left, right):
        ts = self.each([left, right])
        if ts is _UNSEEN:
            return _UNSEEN
        (a, da), (b, db) = ts
        dtype = _dtype_of(operator.matmul, [da, db])
        if a is None or b is None or not a or not b:
            return None, dtype
        if len(a) == 1 and len(b) == 1:
            return (), dtype
        if len(b) == 1:
            return a[:-1], dtype
        if len(a) == 1:
            return b[:-2] + b[-1:], dtype
        batch = _broadcast(a[:-2], b[:-2])
        return (None if batch is None else batch + (a[-2], b[-1])), dtype

    def of_UnaryOp(self, node):   # noqa: N802
        fn = _UNARY.get(type(node.op))
        return self.elementwise(fn, [node.operand]) if fn else UNKNOWN

    def of_Compare(self, node):   # noqa: N802
        ts = self.each([node.left, *node.comparators])
        if ts is _UNSEEN:
            return _UNSEEN
        return _broadcast(*(t[0] for t in ts)), np.dtype(bool) if len(ts) == 2 else None

    def of_Attribute(self, node):   # noqa: N802
        t = self.of(node.value)
        if t is _UNSEEN or node.attr != "T":
            return t if t is _UNSEEN else UNKNOWN
        return (None if t[0] is None else t[0][::-1]), t[1]

    def of_Subscript(self, node):   # noqa: N802
        t = self.of(node.value)
        if t is _UNSEEN or t[0] is None:
            return t
        parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        dims, out = list(t[0]), []
        for p in parts:
            if isinstance(p, gast.Slice):
                if not dims:
                    return UNKNOWN
                out.append(_slice_dim(dims.pop(0), p))
            elif isinstance(p, gast.Constant) and p.value is None:
                out.append(("lit", 1))
            else:
                i = self.of(p)
                if i is _UNSEEN:
                    return _UNSEEN
                if i[0] != () or not (i[1] is int or isinstance(i[1], np.dtype) and
                                      i[1].kind in "iu") or not dims:
                    return UNKNOWN     # an array, a bool, an Ellipsis: not followed
                dims.pop(0)
        return tuple(out + dims), t[1]

    def of_Call(self, node):   # noqa: N802
        if any(isinstance(a, gast.Starred) for a in node.args):
            return UNKNOWN
        fn = self.callee(node.func)
        args = node.args
        if fn is np.roll and args:   # any shift along any axes: its array's shape and dtype
            return self.of(args[0])
        if node.keywords:
            return self.reduction(fn, args, node.keywords) if is_member(fn, _WHOLE) else UNKNOWN
        if fn == ("method", "copy") and not args:      # x.copy()
            return self.of(node.func.value)
        if fn is runtime.weak and len(args) == 2:
            return self.of(args[0])
        if fn is runtime.setitem and len(args) == 3:
            return self.of(args[0])
        if is_member(fn, _SAME) and len(args) == 1:
            return self.of(args[0])
        if is_member(fn, _WHOLE) and len(args) == 1:
            t = self.of(args[0])
            return t if t is _UNSEEN else ((), _dtype_of(fn, [t[1]]))
        if fn is np.squeeze and len(args) == 1:   # (with every length known, its rank is)
            t = self.of(args[0])
            if t is _UNSEEN or t[0] is None or any(d is None or d[0] != "lit" for d in t[0]):
                return t if t is _UNSEEN else UNKNOWN
            return tuple(d for d in t[0] if d != ("lit", 1)), t[1]
        if isinstance(fn, np.ufunc) and fn.signature is None and fn.nout == 1 and \
                len(args) == fn.nin or fn in (np.where, np.clip) and len(args) == 3:
            return self.elementwise(fn, args)
        return UNKNOWN


    def reduction(self, fn, args, keywords):
        """``np.sum(x, axis=k, keepdims=b)`` and its kind, with constant ``axis`` (an int, a
        tuple of ints or None) and ``keepdims``."""
        given = {k.arg: k.value for k in keywords}
        if len(args) != 1 or set(given) - {"axis", "keepdims"} or not all(
                isinstance(v, gast.Constant) or isinstance(v, gast.Tuple) and all(
                    isinstance(e, gast.Constant) for e in v.elts) for v in given.values()):
            return UNKNOWN
        t = self.of(args[0])
        if t is _UNSEEN or t[0] is None:
            return t if t is _UNSEEN else UNKNOWN
        axis = given.get("axis", gast.Constant(value=None, kind=None))
        axes = [e.value for e in axis.elts] if isinstance(axis, gast.Tuple) else [axis.value]
        keep = given.get("keepdims", gast.Constant(value=False, kind=None)).value
        rank = len(t[0])
        if axes == [None]:
            axes = list(range(rank))
        if not all(type(a) is int and -rank <= a < rank for a in axes) or type(keep) is not bool:
            return UNKNOWN
        axes = {a % rank for a in axes}
        dims = tuple(("lit", 1) if i in axes else d for i, d in enumerate(t[0])) if keep else \
            tuple(d for i, d in enumerate(t[0]) if i not in axes)
        return dims, _dtype_of(fn, [t[1]])
