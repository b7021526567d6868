"""The rank of each value of a normalized function, from the ranks of its arguments.

``jit`` and the transforms specialize per argument kinds (a number, or an array of a given
rank), so the rank of most values is known when the code is made: ``w = p[0]`` of a vector is
a number, ``r[t - 1] ** 2`` in ``for t in range(n)`` too, and so is ``h`` carried through
the loop.  Derivative code uses it to drop ``unbroadcast`` between numbers (there is no shape
to undo, and no tape to keep the operand for its shape) and compiled code to keep numbers
taped in a loop in arrays.

A name's rank is the one every binding gives it (flow-insensitive, to a fixpoint: a loop's
carried value meets itself); where bindings differ, or a value is anything but an array or a
number of known rank (a list, a tuple, a helper's result), nothing is known.  A rank decided
wrongly would drop a needed sum of a cotangent, so every rule here is one NumPy guarantees.
A value taken back from a tape (``x = pop(t)``) is what was pushed: the join of the pushed
values' ranks.
"""
import gast
import numpy as np

from .. import runtime
from .rules.batching import is_member

UNKNOWN = None
_UNSEEN = "unseen"   # a name no binding has typed yet (the fixpoint starts from it)
_SHAPE = "shape"     # a tuple of ints: ``x.shape``, ``np.shape(x)`` (its length as the kind)
_SLICE = "slice"     # a slice object (``idxs = slice(0, 18)``; ``x[idxs]`` keeps the axis)

# what a number of each kind is; the kind matters only for indices (an int takes an axis, a
# bool adds one)
_KINDS = ((bool, "b"), (int, "i"), (float, "f"), (complex, "c"))
# reductions of the whole array (no axis): a number (np.trace and det of a matrix only: of a
# stack they give one per matrix)
REDUCTIONS = {np.sum, np.mean, np.var, np.std, np.max, np.min, np.amax, np.amin, np.prod,
              np.median, np.nansum, np.nanmean, np.ptp, np.linalg.norm, np.vdot, np.any,
              np.all, np.count_nonzero, np.size, np.ndim, np.argmax, np.argmin}
MATRIX_REDUCTIONS = {np.trace, np.linalg.det}
INT_RESULTS = {np.size, np.ndim, np.count_nonzero, round, np.argmax, np.argmin}
# one argument, a result of its rank (not np.cumsum: it flattens; not tril: a vector gives a
# matrix)
SAME_RANK = {np.asarray, np.array, np.copy, np.ascontiguousarray, np.conj, np.conjugate,
             np.real, np.imag, abs, np.sort, np.flip, np.transpose, np.nan_to_num}
# arguments broadcast together (np.where of three: of one it gives a tuple)
ELEMENTWISE = {np.where: 3, np.clip: 3, pow: 2, min: 2, max: 2}
INT_OPS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)


def given_ranks(kinds):
    """{parameter: rank} from the kinds a call gave ("scalar", "int", "array<rank>"; see
    strop/transformed.py); other kinds (a container, an array of unknown rank) are absent."""
    out = {}
    for p, k in kinds.items():
        if k in ("scalar", "int"):
            out[p] = 0
        elif isinstance(k, str) and k.startswith("array") and k[5:].isdigit():
            out[p] = int(k[5:])
    return out


def scalar_names(stmts, given, callee):
    """Names surely holding a number (rank 0) at every binding; ``given``: parameter -> its
    rank (absent: unknown), ``callee(func)`` resolves a call's function."""
    return {n for n, t in ranks(stmts, given, callee).items() if t[0] == 0}


def ranks(stmts, given, callee, fixed=()):
    """{name: (rank, kind)} for the names of ``stmts`` whose rank is known (see the module
    note; the rank of a tuple of ints from ``x.shape`` is "shape"); ``kind`` is "i", "f",
    "b", "c" or None.  ``fixed``: names of ``given`` whose bindings give their rank (a
    pytree's leaf read from it) and are not typed again."""
    bindings, opaque = [], set()
    _bindings(stmts, bindings, opaque)
    table = {n: (r, None) for n, r in given.items() if r is not None}
    table.update({n: (_UNSEEN, None) for n, _ in bindings if n not in given})
    for n in opaque | {n for n, r in given.items() if r is None}:
        table[n] = (UNKNOWN, None)
    typer = _Typer(table, callee, _pushes(stmts, callee))
    changed = True
    while changed:
        changed = False
        for name, how in bindings:
            if name in fixed:
                continue
            new = typer.binding(how)
            if new[0] == _UNSEEN:
                continue
            old = table[name]
            joined = new if old[0] == _UNSEEN else _join(old, new)
            if joined != old:
                table[name] = joined
                changed = True
    return {n: t for n, t in table.items() if t[0] not in (UNKNOWN, _UNSEEN)}


def _bindings(stmts, out, opaque):
    """(name, ("value", expr) or ("item of", iterable)) for each binding of a name in
    ``stmts``; names bound any other way (tuple targets, nested functions, ``with``) go to
    ``opaque``."""
    for s in stmts:
        if isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            opaque.add(s.name)
            opaque.update(_stored(s))
            continue
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0],
                                                                              gast.Name):
            out.append((s.targets[0].id, ("value", s.value)))
            opaque.update(_stored(s.value))     # names bound inside (a comprehension's)
        elif isinstance(s, gast.For) and isinstance(s.target, gast.Name):
            out.append((s.target.id, ("item of", s.iter)))
            opaque.update(_stored(s.iter))
        elif not isinstance(s, (gast.If, gast.While, gast.For)):
            opaque.update(_stored(s))
        else:
            opaque.update(_stored(s.target) if isinstance(s, gast.For) else ())
            opaque.update(_stored(s.test) if not isinstance(s, gast.For) else ())
        for field in ("body", "orelse"):
            _bindings(getattr(s, field, []) or [], out, opaque)


def _stored(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(
        n.ctx, (gast.Store, gast.Del))}


def _join(a, b):
    if a[0] != b[0]:
        return UNKNOWN, None
    return a[0], a[1] if a[1] == b[1] else None


class _Typer:
    def __init__(self, table, callee, pushes=None):
        self.table, self.callee, self.pushes = table, callee, pushes or {}

    def binding(self, how):
        kind, node = how
        if kind == "value":
            if _is_pop(node, self.callee):   # what was pushed, where every push is known
                tape = node.args[0].id if node.args and isinstance(node.args[0], gast.Name) \
                    else None
                pushed = [self.of(v) for v in self.pushes.get(tape, ())]
                if not pushed or any(t[0] == _UNSEEN for t in pushed):
                    return _UNSEEN, None
                return self.joined(pushed)
            return self.of(node)
        if isinstance(node, gast.Call) and self.callee(node.func) is range:
            return 0, "i"
        r, k = self.of(node)
        if isinstance(r, int):
            return (r - 1, k) if r >= 1 else (UNKNOWN, None)
        return (_UNSEEN, None) if r == _UNSEEN else (UNKNOWN, None)

    def of(self, node):
        """(rank, kind) of expression ``node``; rank UNKNOWN, _UNSEEN or _SHAPE otherwise."""
        method = getattr(self, "of_" + type(node).__name__, None)
        return method(node) if method else (UNKNOWN, None)

    def of_Constant(self, node):   # noqa: N802
        for t, k in _KINDS:
            if type(node.value) is t:
                return 0, k
        return UNKNOWN, None

    def of_Name(self, node):   # noqa: N802
        return self.table.get(node.id, (UNKNOWN, None))

    def of_BinOp(self, node):   # noqa: N802
        a, b = self.of(node.left), self.of(node.right)
        if isinstance(node.op, gast.Add) and a[0] == b[0] == _SHAPE:   # shapes joined
            return _joined_shapes(a, b)
        bad = _not_numeric(a, b)
        if bad:
            return bad
        (ra, ka), (rb, kb) = a, b
        if isinstance(node.op, gast.MatMult):
            return _matmul(ra, rb), None
        kind = "i" if ka == kb == "i" and isinstance(node.op, INT_OPS) else \
            "f" if isinstance(node.op, gast.Div) else None
        return max(ra, rb), kind

    def of_UnaryOp(self, node):   # noqa: N802
        r, k = self.of(node.operand)
        if isinstance(node.op, gast.Not):
            return (0, "b") if r == 0 else (UNKNOWN, None)
        return (r, k) if isinstance(r, int) or r == _UNSEEN else (UNKNOWN, None)

    def of_Compare(self, node):   # noqa: N802
        types = [self.of(node.left)] + [self.of(c) for c in node.comparators]
        return _not_numeric(*types) or (max(r for r, _ in types), "b")

    def of_BoolOp(self, node):   # noqa: N802   (returns one of its operands)
        return self.joined([self.of(v) for v in node.values])

    def of_IfExp(self, node):   # noqa: N802
        return self.joined([self.of(node.body), self.of(node.orelse)])

    def joined(self, types):
        seen = [t for t in types if t[0] != _UNSEEN]
        if not seen:
            return _UNSEEN, None
        out = seen[0]
        for t in seen[1:]:
            out = _join(out, t)
        return out if isinstance(out[0], int) else (UNKNOWN, None)

    def of_Tuple(self, node):   # noqa: N802   (a shape written out)
        parts = [self.of(e) for e in node.elts]
        if any(p[0] == _UNSEEN for p in parts):
            return _UNSEEN, None
        return (_SHAPE, len(parts)) if all(p == (0, "i") for p in parts) else (UNKNOWN, None)

    def of_Attribute(self, node):   # noqa: N802
        obj = self.callee(node)   # a module's number: np.pi
        if isinstance(obj, (int, float, np.integer, np.floating)) and not isinstance(obj, bool):
            return 0, "i" if isinstance(obj, (int, np.integer)) else "f"
        r, k = self.of(node.value)
        if not isinstance(r, int):
            return (r, None) if r == _UNSEEN else (UNKNOWN, None)
        if node.attr == "shape":
            return _SHAPE, r
        if node.attr in ("ndim", "size"):
            return 0, "i"
        if node.attr in ("T", "real", "imag"):
            return r, k if node.attr == "T" else None
        return UNKNOWN, None

    def of_Subscript(self, node):   # noqa: N802
        r, k = self.of(node.value)
        if r == _SHAPE:
            if isinstance(node.slice, gast.Slice):   # x.shape[1:]: a shape of known length
                bounds = [node.slice.lower, node.slice.upper, node.slice.step]
                if isinstance(k, int) and all(b is None or isinstance(b, gast.Constant) and
                                              type(b.value) is int for b in bounds):
                    cut = slice(*(b.value if b is not None else None for b in bounds))
                    return _SHAPE, len(range(k)[cut])
                return UNKNOWN, None
            i = self.of(node.slice)
            return (0, "i") if i == (0, "i") else (UNKNOWN, None)
        if not isinstance(r, int):
            return (r, None) if r == _UNSEEN else (UNKNOWN, None)
        parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        taken = added = 0
        for p in parts:
            if isinstance(p, gast.Slice):
                taken, added = taken + 1, added + 1
            elif isinstance(p, gast.Constant) and p.value is None:
                added += 1
            else:
                t = self.of(p)
                if t[0] == _UNSEEN:
                    return _UNSEEN, None
                if t[0] == _SLICE:
                    taken, added = taken + 1, added + 1
                    continue
                if t != (0, "i"):   # an array, a bool, an Ellipsis: not followed
                    return UNKNOWN, None
                taken += 1
        return (r - taken + added, k) if taken <= r else (UNKNOWN, None)

    def of_Call(self, node):   # noqa: N802
        fn = self.callee(node.func)
        if fn is runtime.weak and len(node.args) == 2:   # a Python number, as ``like``
            return self.of(node.args[0])
        if is_member(fn, AXIS_REDUCTIONS) and node.args and (len(node.args) == 2 or
                                                            node.keywords):
            return self.reduced(node)
        if node.keywords or any(isinstance(a, gast.Starred) for a in node.args):
            return UNKNOWN, None
        args = [self.of(a) for a in node.args]
        if fn is np.shape and len(args) == 1:
            return (_SHAPE, args[0][0]) if isinstance(args[0][0], int) else args[0]
        drawn = _drawn(fn, args)
        if drawn is not None:
            return drawn
        if fn is np.reshape and len(args) == 2:   # (a shape of n ints, or one int)
            (r, k), shape = args
            if _UNSEEN in (r, shape[0]):
                return _UNSEEN, None
            n = shape[1] if shape[0] == _SHAPE else 1 if shape == (0, "i") else None
            return (n, k) if isinstance(r, int) and isinstance(n, int) else (UNKNOWN, None)
        if fn is np.einsum and node.args and isinstance(node.args[0], gast.Constant) and \
                isinstance(node.args[0].value, str):
            return _einsum(node.args[0].value, args[1:])
        if fn is slice:
            return _SLICE, None
        if fn is runtime.plus and len(args) == 2 and args[0][0] == args[1][0] == _SHAPE:
            return _joined_shapes(*args)   # new_shape += (n, k)
        if fn is float:
            return 0, "f"
        if fn is int or fn is len:
            return 0, "i"
        bad = _not_numeric(*args) if args else (UNKNOWN, None)
        if bad:
            return bad
        one = args[0] if len(args) == 1 else None
        if one and (is_member(fn, REDUCTIONS) or fn is round and one[0] == 0 or
                    is_member(fn, MATRIX_REDUCTIONS) and one[0] == 2):
            return 0, "i" if is_member(fn, INT_RESULTS) else None
        if one and is_member(fn, SAME_RANK):
            return one[0], one[1] if fn not in (np.real, np.imag) else None
        if one and fn is runtime.iterable:   # what a for loop walks: an array as it is
            return one if one[0] >= 1 else (UNKNOWN, None)
        if one and fn in (min, max):   # the largest item of a vector
            return (0, one[1]) if one[0] == 1 else (UNKNOWN, None)
        if fn is np.matmul and len(args) == 2:   # (a ufunc with a core signature: not
            return _matmul(args[0][0], args[1][0]), None     # elementwise)
        if isinstance(fn, np.ufunc) and fn.signature is None and len(args) == fn.nin and \
                fn.nout == 1 or \
                is_member(fn, ELEMENTWISE) and len(args) == ELEMENTWISE[fn]:
            return max(r for r, _ in args), None
        if fn is np.dot and len(args) == 2:
            (ra, _), (rb, _) = args
            return (ra + rb if 0 in (ra, rb) else _matmul(ra, rb) if max(ra, rb) <= 2
                    else UNKNOWN), None
        return UNKNOWN, None

    def reduced(self, node):
        """(rank, kind) of a reduction given an axis or keepdims (``np.sum(x, -1,
        keepdims=True)``): the array's rank kept, or less one per axis."""
        kws = {k.arg: k.value for k in node.keywords}
        if len(node.args) > 2 or set(kws) - {"axis", "keepdims"} or len(node.args) == 2 and \
                "axis" in kws:
            return UNKNOWN, None
        r, _ = self.of(node.args[0])
        if not isinstance(r, int):
            return (r, None) if r == _UNSEEN else (UNKNOWN, None)
        axis = node.args[1] if len(node.args) == 2 else kws.get("axis")
        keep = kws.get("keepdims")
        if keep is not None and not (isinstance(keep, gast.Constant) and type(
                keep.value) is bool):
            return UNKNOWN, None
        if keep is not None and keep.value:
            return r, None
        if axis is None or isinstance(axis, gast.Constant) and axis.value is None:
            return 0, None
        axes = axis.elts if isinstance(axis, gast.Tuple) else [axis]
        if not all(isinstance(a, gast.Constant) and type(a.value) is int for a in axes) or \
                len(axes) > r:
            return UNKNOWN, None
        return r - len(axes), None


# reductions taking an axis and keepdims, of their array's kind of numbers (not argmax)
AXIS_REDUCTIONS = {np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod, np.nansum,
                   np.nanmean}


# strop.random's samplers taking (key, shape, ...): an array of the shape's rank
_SHAPED = frozenset("bits uniform normal exponential laplace logistic gumbel randint".split())


def _drawn(fn, args):
    """(rank, kind) of a PRNG key or a sample strop.random makes, else None."""
    module, name = getattr(fn, "__module__", None), getattr(fn, "__name__", None)
    if module == "strop.rng.keys":
        if name in ("PRNGKey", "key", "fold_in"):
            return 1, "i"
        if name == "split" and args and args[0][0] == 1 and (
                len(args) == 1 or args[1][0] == 0):
            return 2, "i"
    if module == "strop.rng.samplers" and name in _SHAPED and len(args) >= 2 and \
            args[1][0] == _SHAPE and isinstance(args[1][1], int):
        return args[1][1], "i" if name in ("bits", "randint") else "f"
    return None


def _not_numeric(*types):
    """None if every one of ``types`` is an array or a number of known rank; else what an
    expression made of them is (unseen yet, or unknown)."""
    if any(t[0] == _UNSEEN for t in types):
        return _UNSEEN, None
    if all(isinstance(t[0], int) for t in types):
        return None
    return UNKNOWN, None





def _joined_shapes(a, b):
    """A shape of ``a``'s and then ``b``'s ints."""
    if isinstance(a[1], int) and isinstance(b[1], int):
        return _SHAPE, a[1] + b[1]
    return UNKNOWN, None


def _einsum(spec, operands):
    """(rank, kind) of ``np.einsum(spec, *operands)``: its output's letters, and the axes
    ``...`` stands for (explicit ``->``, or implicit: the letters written once, sorted)."""
    bad = _not_numeric(*operands)
    if bad:
        return bad
    inputs, arrow, out = spec.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        return UNKNOWN, None
    dots = max([r - len(t.replace("...", "")) for t, (r, _) in zip(terms, operands)
                if "..." in t], default=0)
    if not arrow:
        letters = inputs.replace("...", "").replace(",", "")
        out = "..." * ("..." in inputs) + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    return len(out.replace("...", "")) + (max(dots, 0) if "..." in out else 0), None


def _matmul(ra, rb):
    if ra == 0 or rb == 0:
        return UNKNOWN   # an error in NumPy
    if ra == 1 and rb == 1:
        return 0
    if ra == 1 or rb == 1:
        return max(ra, rb) - 1
    return max(ra, rb)


def _pushes(stmts, callee):
    """{tape: the values pushed on it} for tapes every push of which is ``push(tape, value)``
    (generated code's, before compiled code spells tapes as lists)."""
    out, other = {}, set()
    for n in (n for s in stmts for n in gast.walk(s)):
        if isinstance(n, gast.Call) and getattr(callee(n.func), "__name__", "") == "push":
            if len(n.args) == 2 and isinstance(n.args[0], gast.Name):
                out.setdefault(n.args[0].id, []).append(n.args[1])
        elif isinstance(n, gast.Attribute) and n.attr == "append" and isinstance(
                n.value, gast.Name):
            other.add(n.value.id)
    return {t: vs for t, vs in out.items() if t not in other}


def _is_pop(node, callee):
    return isinstance(node, gast.Call) and (
        isinstance(node.func, gast.Attribute) and node.func.attr == "pop" and not node.args
        or getattr(callee(node.func), "__name__", "") == "pop")
