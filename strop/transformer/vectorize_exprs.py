"""vmap's expressions: each operation rewritten by its batching rule, the lanes of its operands
lined up by their ranks (``x[:, None]``) where those are known."""
import gast
import numpy as np

from . import ir
from ..config import config
from .operations import BINOPS
from .rules import batching as table
from .vectorize_base import NotBatchable
from .vectorize_containers import DISPLAYS
from ..syntax import gast_parse

COMPARES = {gast.Lt: np.less, gast.LtE: np.less_equal, gast.Gt: np.greater,
            gast.GtE: np.greater_equal, gast.Eq: np.equal, gast.NotEq: np.not_equal}


class Expressions:
    """The expressions of Vectorize (a mixin: the names it reads are set by Vectorize)."""

    def bcast(self, node, batched):
        """``node`` as a batched value (an unbatched one repeated in every lane)."""
        if batched:
            return node
        lanes = ir.call(self.helper("broadcast_lanes"), [node, ir.name(self.size)])
        if config.read("enable_x64"):
            return lanes
        # the 64-bit policy: a Python number repeated in lanes is a 32-bit array, as the
        # values it meets are (a loop's tape holds a carried `s = 100.0` in its first trip
        # beside the float32 lanes of the trips after it: one dtype, or Numba cannot type it)
        return ir.call(self.helper("narrow"), [lanes])

    def expr(self, v, mask, pre):
        """(new expression, batched?, rank of a lane or None) of an assigned value."""
        if isinstance(v, gast.Constant):
            return v, False, 0
        if isinstance(v, gast.Name):
            return v, self.is_b(v), self.rank.get(v.id)
        if isinstance(v, DISPLAYS):
            return self.display(v)
        if isinstance(v, (gast.BinOp, gast.UnaryOp, gast.Compare)) and any(
                self.is_b(p) and self.elems_of(p) is not None for p in _operands(v)):
            raise NotBatchable("vmap cannot batch an operator (+, ==, ...) on a tuple, list or "
                               "dict of values that differ between lanes", self.loc)
        if isinstance(v, gast.BinOp):
            fn = BINOPS.get(type(v.op))
            if fn is np.matmul:
                return self.matmul(v.left, v.right, v)
            return self.elementwise(v, [v.left, v.right], lambda a: gast.BinOp(
                left=a[0], op=v.op, right=a[1]))
        if isinstance(v, gast.UnaryOp):
            if isinstance(v.op, gast.Not) and self.is_b(v.operand):
                return self.elementwise(v, [v.operand], lambda a: ir.call(
                    self.np_("logical_not"), a))
            return self.elementwise(v, [v.operand], lambda a: gast.UnaryOp(op=v.op,
                                                                            operand=a[0]))
        if isinstance(v, gast.Compare):
            if len(v.ops) == 1 and type(v.ops[0]) in COMPARES:
                return self.elementwise(v, [v.left] + v.comparators, lambda a: gast.Compare(
                    left=a[0], ops=v.ops, comparators=a[1:]))
            if not any(self.is_b(p) for p in [v.left] + v.comparators):
                return v, False, 0
            raise NotBatchable("vmap cannot batch this comparison of a batched value", self.loc)
        if isinstance(v, gast.Attribute):
            return self.attribute(v)
        if isinstance(v, gast.Subscript):
            return self.subscript(v, mask)
        if isinstance(v, gast.Call):
            return self.call(v, mask, pre)
        if not any(self.is_b(n) for n in gast.walk(v) if isinstance(n, gast.Name)):
            return v, False, None
        raise NotBatchable(f"vmap cannot batch a {type(v).__name__} expression", self.loc)

    def display(self, v):
        """A tuple, list or dict display: a container of lanes where it holds a batched value."""
        if not self.is_b(v):
            return v, False, None
        if self.elems_of(v) is None:
            raise NotBatchable("vmap batches a dict of values that differ between lanes only "
                               "where its keys are constants", self.loc)
        return self.lanes_of(v), True, None

    def pick(self, mask, new, old, rank):
        """``new`` in the lanes of ``mask``, else ``old``: lanes of ``rank`` (None: unknown,
        or differing) pick by the mask lined up to them (which Numba compiles)."""
        if rank is None:
            return ir.call(self.helper("select"), [ir.name(mask), new, old])
        return ir.call(self.np_("where"), [_expand(ir.name(mask), rank), new, old])

    def aligned(self, parts):
        """Operands of an elementwise operation with batched lanes lined up: (nodes, batched,
        rank)."""
        flags = [self.is_b(p) for p in parts]
        if not any(flags):
            return parts, False, max_rank([self.rank_of(p) for p in parts])
        ranks = [self.rank_of(p) for p in parts]
        top = max_rank(ranks)
        out = []
        for p, b, r in zip(parts, flags, ranks):
            if not b or len(parts) == 1 or isinstance(p, gast.Constant):
                out.append(p)
            elif top is not None:
                out.append(_expand(p, top - r))
            else:   # ranks known when it compiles: lined up to each other operand in turn
                node = p
                for q, qb in zip(parts, flags):
                    if q is not p and not isinstance(q, gast.Constant):
                        node = ir.call(self.helper("align_to"), [node, q, ir.const(qb)])
                out.append(node)
        return out, True, top

    def elementwise(self, v, parts, build):
        parts, batched, rank = self.aligned(parts)
        if not batched:
            return v, False, rank
        return build(parts), True, rank

    def matmul(self, a, b, v):
        ab, bb = self.is_b(a), self.is_b(b)
        ra, rb = self.rank_of(a), self.rank_of(b)
        rank = None if ra is None or rb is None or ra < 1 or rb < 1 else max(
            ra, rb, 2) - (ra == 1) - (rb == 1)   # a vector's axis is dropped
        if not (ab or bb):
            return v, False, rank
        if ab and not bb and ra is not None and ra >= 1 and rb in (1, 2) or (
                ra is not None and ra == rb and ra >= 2) or (not ab and ra in (1, 2) and rb
                                                             is not None and rb >= 2):
            return v, True, rank    # NumPy's matmul broadcasts over the batch axis
        if not ab and ra == 1 and rb == 1:   # each lane's dot with one vector: b @ a
            return gast.BinOp(left=b, op=gast.MatMult(), right=a), True, 0
        if not ab and ra == 2 and rb == 1:   # one matrix times each lane's vector: b @ a.T
            return gast.BinOp(left=b, op=gast.MatMult(), right=ir.attr(a, "T")), True, 1
        return ir.call(self.helper("matmul_lanes"), [a, b, ir.const(ab), ir.const(bb)]), True, rank

    def attribute(self, v):
        x = v.value
        if not self.is_b(x):
            return v, False, None
        if v.attr in table.LANE_ATTRS:
            src = table.LANE_ATTRS[v.attr].format(x="__x")
            node = gast_parse(src, mode="eval").body
            for n in gast.walk(node):
                if isinstance(n, gast.Name) and n.id == "__x":
                    n.id = x.id
            return node, False, None
        if v.attr == "T":
            r = self.rank_of(x)
            if r is not None:
                axes = gast.Tuple(elts=[ir.const(0)] + [ir.const(i) for i in range(r, 0, -1)],
                                  ctx=gast.Load())
                return ir.call(self.np_("transpose"), [x, axes]), True, r
            return ir.call(self.helper("transpose_lanes"), [x]), True, None
        if v.attr in ("real", "imag", "dtype"):
            return v, v.attr != "dtype", self.rank_of(x)
        raise NotBatchable(f"vmap cannot batch the attribute .{v.attr} of a batched value",
                           self.loc)

    def subscript(self, v, mask):
        x, idx = v.value, v.slice
        parts = list(idx.elts) if isinstance(idx, gast.Tuple) else [idx]
        xb = self.is_b(x)
        ib = [self.is_b(p) for p in parts]
        if isinstance(x, gast.Name) and (x.id in self.containers or
                                         self.elems_of(x) is not None):
            if any(ib):
                raise NotBatchable("vmap cannot batch an index into a tuple, list or dict that "
                                   "differs between lanes", self.loc)
            elem = self.element(x, idx)   # an element of a container: batched like it
            return v, xb, None if elem is None else elem[0]
        if not xb and not any(ib):
            return v, False, self.index_rank(x, parts)
        if mask is not None and any(ib):
            parts = [ir.call(self.helper("safe_index"), [p, ir.name(mask)]) if b else p
                     for p, b in zip(parts, ib)]
        if xb and not any(ib):
            if self.simple_index(parts):
                new = gast.Tuple(elts=[gast.Slice(lower=None, upper=None, step=None)] + parts,
                                 ctx=gast.Load())
                return ir.subscript(x, new), True, self.index_rank(x, parts)
        elif not xb and len(parts) == 1:
            r = self.rank_of(parts[0])
            return ir.subscript(x, parts[0]), True, None if r is None or \
                self.rank_of(x) is None else r + self.rank_of(x) - 1
        elif xb and len(parts) == 1 and self.rank_of(parts[0]) == 0:
            return ir.call(self.helper("take_lanes"), [x, parts[0]]), True, \
                None if self.rank_of(x) is None else self.rank_of(x) - 1
        tup = gast.Tuple(elts=parts, ctx=gast.Load()) if len(parts) > 1 else parts[0]
        flags = gast.Tuple(elts=[ir.const(b) for b in ib], ctx=gast.Load()) if len(parts) > 1 \
            else ir.const(ib[0])
        return ir.call(self.helper("getitem_lanes"), [x, tup, ir.const(xb), flags]), True, None

    def simple_index(self, parts):
        """True when prefixing ``:`` keeps every axis where it was: at most one group of
        array-valued (or unknown) indices, with no slice inside it."""
        kinds = []
        for p in parts:
            if isinstance(p, gast.Slice) or isinstance(p, gast.Constant) and p.value is None \
                    or isinstance(p, gast.Constant) and p.value is Ellipsis:
                kinds.append("s")
            elif isinstance(p, gast.Constant):
                kinds.append("i")
            else:
                kinds.append("a")
        if "a" not in kinds:
            return True
        first, last = kinds.index("a"), len(kinds) - 1 - kinds[::-1].index("a")
        return all(k != "s" for k in kinds[first:last + 1]) and (
            "i" not in kinds or all(k != "s" for k in kinds[min(
                kinds.index("i"), first):max(last, len(kinds) - 1 - kinds[::-1].index("i")) + 1]))

    def index_rank(self, x, parts):
        r = self.rank_of(x)
        if r is None:
            return None
        for p in parts:
            if isinstance(p, gast.Slice):
                continue
            if isinstance(p, gast.Constant):
                if p.value is None:
                    r += 1
                elif p.value is Ellipsis:
                    continue
                else:
                    r -= 1
            elif self.rank_of(p) == 0:
                r -= 1
            else:
                return None
        return r


def _operands(v):
    if isinstance(v, gast.BinOp):
        return [v.left, v.right]
    return [v.operand] if isinstance(v, gast.UnaryOp) else [v.left] + v.comparators


def max_rank(ranks):
    if any(r is None for r in ranks):
        return None
    return max(ranks) if ranks else 0


def _expand(node, k):
    """``x[:, None, ...]``: ``k`` axes after the batch axis."""
    if not k:
        return node
    elts = [gast.Slice(lower=None, upper=None, step=None)] + [ir.const(None)] * k
    return ir.subscript(node, gast.Tuple(elts=elts, ctx=gast.Load()))
