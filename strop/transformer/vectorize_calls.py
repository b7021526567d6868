"""vmap's calls: the batching rule of the function called, else the call run lane by lane."""
import gast
import numpy as np

from .. import runtime
from ..runtime import custom_cotangents
from . import ir
from .rules import lookup as rule_lookup
from .operations import is_namedtuple_call
from .rules import batching as table
from .vectorize_base import NotBatchable
from .vectorize_containers import CONTAINER_CALLS, DISPLAYS
from .vectorize_exprs import max_rank
from .vectorize_special import SPECIAL
from .unparse import unparse

LANE_QUERIES = {np.shape: "shape", np.ndim: "ndim", np.size: "size"}


class Calls:
    """The calls of Vectorize (a mixin: the names it reads are set by Vectorize)."""

    def call(self, v, mask, pre):
        fn = self.fn.callee(v.func)
        args = [self.display(a)[0] if isinstance(a, DISPLAYS) else a for a in v.args]
        kws = {k.arg: k.value for k in v.keywords}
        flags = [self.is_b(a) for a in args] + [self.is_b(x) for x in kws.values()]
        if isinstance(v.func, gast.Attribute) and isinstance(fn, tuple) and \
                self.is_b(v.func.value):
            flags.append(True)   # a method of a batched value
        if fn is runtime.pop or fn is runtime.stack:
            if mask is not None and fn is runtime.pop:
                raise NotBatchable("vmap cannot batch a derivative's tape inside control flow "
                                   "on a batched value", self.loc)
            tape = args[0] if args else None
            return v, tape is not None and self.is_b(tape), \
                self.tape_rank.get(tape.id) if fn is runtime.pop else None
        if not any(flags):   # a method's receiver is an operand too (y.copy())
            receiver = [v.func.value] if isinstance(v.func, gast.Attribute) and \
                isinstance(fn, tuple) else []
            return v, False, self.call_rank(fn, receiver + args, kws)
        if is_namedtuple_call(self.fn, v):   # Layer(w, b): a container of lanes
            return self.lanes_of(v), True, None
        if getattr(fn, "__strop_custom__", False):
            return self.custom(v, fn, args, kws)
        if fn in (float, int, bool):
            return ir.call(ir.attr(args[0], "astype"), [ir.name(fn.__name__)]), True, 0
        if fn is len and self.elems_of(args[0]) is not None:
            return v, False, 0   # a container of lanes has the elements of each lane
        if fn is len:
            return ir.subscript(ir.attr(args[0], "shape"), ir.const(1)), False, 0
        if table.is_member(fn, table.SHAPE_ONLY) and not kws:   # the same in every lane
            return ir.call(v.func, [ir.call(self.helper("one_lane"), [a]) if self.is_b(a)
                                    else a for a in args]), False, None
        if fn in LANE_QUERIES and len(args) == 1 and not kws:
            return self.attribute(ir.attr(args[0], LANE_QUERIES[fn]))
        if fn in CONTAINER_CALLS and self.elems_of(args[CONTAINER_CALLS[fn]]) is not None:
            # on containers of lanes as they are, leaf by leaf
            lanes = {CONTAINER_CALLS[fn]} | ({0} if fn is runtime.getitem_vjp else set())
            new = ir.call(v.func, [self.lanes_of(a) if i in lanes or self.elems_of(a)
                                   else a for i, a in enumerate(v.args)])
            if fn is custom_cotangents:   # its messages give the shapes of one lane
                new.args.append(ir.const(1))
            return new, True, None
        if fn is runtime.append and isinstance(self.elems_of(args[0]), tuple) and (
                self.is_b(args[0]) or self.is_b(args[1])):
            # a batched value appended to a list: a list of lanes, element by element
            lst = self.lanes_of(args[0])
            if isinstance(lst, gast.Tuple):
                lst = gast.List(elts=lst.elts, ctx=gast.Load())
            return ir.call(v.func, [lst, self.lanes_of(args[1])]), True, None
        if fn is sum and args and self.is_b(args[0]) and isinstance(self.elems_of(args[0]),
                                                                    tuple):
            # the sum of a container of lanes is the sum of its elements, lane by lane; its
            # start in every lane, so that an empty one sums to lanes too
            ranks = {r for r, _ in self.elems_of(args[0])}
            if isinstance(args[0], gast.Name) and args[0].id in self.varies or None in ranks \
                    or len(ranks) > 1:
                raise NotBatchable("vmap cannot batch sum() of a list whose elements' shapes "
                                   "it does not know (a list grown in a loop, or elements of "
                                   "unknown rank)", self.loc)
            rank = ranks.pop() if ranks else 0
            start = args[1] if len(args) > 1 else kws.pop("start", ir.const(0))
            start = self.bcast(start, self.is_b(start))
            if rank and self.rank_of(start) != rank:   # one number per lane, lined up
                start = ir.call(self.helper("align_lanes"), [start, ir.const(rank)])
            return ir.call(v.func, [self.lanes_of(args[0]), start], kws.items()), True, rank
        if fn is runtime.setitem and self.elems_of(v) is not None:   # d[k] = x, k a constant
            return ir.call(v.func, [self.lanes_of(args[0]), args[1], self.lanes_of(args[2])]), \
                True, None
        if fn is abs:   # Numba's abs takes numbers only
            v = ir.call(self.np_("abs"), args)
            fn = np.abs
        if table.is_elementwise(fn):
            method = isinstance(v.func, gast.Attribute) and isinstance(fn, tuple)
            operands = [v.func.value] + args if method else args + list(kws.values())
            # x.astype(dtype), np.asarray(x, dtype): only the first is an operand
            first_only = table.is_member(fn, table.ONE_OPERAND) and not any(
                self.is_b(a) for a in operands[1:])
            if first_only:
                parts, batched, rank = self.aligned(operands[:1])
                parts = parts + operands[1:]
            else:
                parts, batched, rank = self.aligned(operands)
            if method:
                return ir.call(ir.attr(parts[0], v.func.attr), parts[1:], kws.items()), \
                    True, rank
            if fn is np.where and len(args) == 1:
                raise NotBatchable("np.where with one argument gives a different number of "
                                   "elements in each lane", self.loc)
            if fn in (np.array, np.asarray) and isinstance(args[0], gast.Name) and \
                    args[0].id in self.containers:
                return ir.call(self.helper("array_lanes"), [args[0]] + (
                    [kws["dtype"]] if "dtype" in kws else [])), True, None
            return ir.call(v.func, parts[:len(args)], zip(kws, parts[len(args):])), True, rank
        if table.is_member(fn, table.MATMUL):
            return self.matmul(args[0], args[1], v)
        if table.is_member(fn, table.LIKE):
            return self.like(v, fn, args, kws)
        if table.lookup(table.REDUCTIONS, fn) is not None:
            out = self.reduction(v, fn, args, kws)
            if out is not None:
                return out
        if table.is_member(fn, table.CONSTRUCTORS):
            raise NotBatchable(f"{getattr(fn, '__name__', fn)} with an argument that differs "
                               f"between lanes makes arrays of a different shape in each lane",
                               self.loc)
        lanes = table.lookup(table.LANES, fn)
        if lanes is not None and not kws:   # called with a flag per argument: is it batched
            flags = [ir.const(self.is_b(a)) for a in args]
            return ir.call(ir.name(self.ref(lanes, lanes.__name__)), args + flags), True, \
                self.rank_of(args[table.RANK_OF.get(fn, 0)])
        special = getattr(self, "call_" + getattr(fn, "__name__", ""), None) if \
            fn in SPECIAL else None
        if special is not None:
            out = special(v, args, kws)
            if out is not None:
                return out
        return self.each(v, fn, args, kws)

    def custom(self, v, fn, args, kws):
        """A custom_jvp/custom_vjp call, kept where an outer transform differentiates this
        code: a call of its batched version (custom.py), whose rule is its rule vmapped."""
        bound = rule_lookup(fn).bind(args, kws) if rule_lookup(fn) else None
        if bound is None or not all(isinstance(a, (gast.AST, bool, int, float, str,
                                                   type(None))) for a in bound.values()):
            raise NotBatchable(f"vmap cannot batch this call of {fn.__name__}", self.loc)
        values = [a if isinstance(a, gast.AST) else ir.const(a)
                  for a in (bound[p] for p in fn.params)]
        batched = fn.batched(tuple((self.is_b(a), self.rank_of(a)) for a in values))
        return ir.call(ir.name(self.ref(batched, batched.__name__)), values), True, None

    def call_rank(self, fn, args, kws):
        if table.is_elementwise(fn):
            return max_rank([self.rank_of(a) for a in args])
        return None

    def like(self, v, fn, args, kws):
        if not self.is_b(args[0]):   # e.g. full_like(x, batched value)
            return self.each(v, fn, args, kws)
        rest = [self.is_b(a) for a in args[1:]] + [self.is_b(a) for a in kws.values()]
        if any(rest):
            return self.each(v, fn, args, kws)
        return v, True, self.rank_of(args[0])

    def reduction(self, v, fn, args, kws):
        rule = rule_lookup(fn)
        if rule is None:
            return None
        bound = rule.bind(args, kws)
        names = [n for n, _ in rule.params]
        if bound is None or "axis" not in names:
            return None
        a = bound.get(table.REDUCTIONS[fn])
        others = [x for k, x in bound.items() if k != table.REDUCTIONS[fn] and
                  isinstance(x, gast.AST) and self.is_b(x)]
        if not self.is_b(a) or others:
            return None
        axis = bound["axis"] if isinstance(bound["axis"], gast.AST) else ir.const(bound["axis"])
        r = self.rank_of(a)
        keep = bound.get("keepdims")
        keepdims = keep.value if isinstance(keep, gast.Constant) else (
            keep if isinstance(keep, bool) else None)
        flatten = table.is_member(fn, table.FLATTENING)
        kw = {k.arg: k.value for k in v.keywords}
        pos = list(v.args)
        if isinstance(axis, gast.Constant) and axis.value is None:
            if flatten:
                flat = ir.call(self.np_("reshape"), [a, gast.Tuple(
                    elts=[ir.name(self.size), ir.const(-1)], ctx=gast.Load())])
                new_axis = ir.const(1)
                a_new = flat
                rank = 1 if table.is_member(fn, table.KEEPS_RANK) else 0
            else:
                a_new = a
                new_axis = _tuple_const(range(1, r + 1)) if r is not None else ir.call(
                    self.helper("lane_axes"), [a])
                rank = r if keepdims else 0
        elif isinstance(axis, gast.Constant) and isinstance(axis.value, int):
            a_new = a
            new_axis = ir.const(axis.value + 1 if axis.value >= 0 else axis.value)
            rank = None if r is None else (r if keepdims or table.is_member(
                fn, table.KEEPS_RANK) else r - 1)
        elif isinstance(axis, gast.Tuple) and all(isinstance(e, gast.Constant) for e in
                                                  axis.elts):
            a_new = a
            new_axis = _tuple_const(e.value + 1 if e.value >= 0 else e.value
                                    for e in axis.elts)
            rank = None if r is None else (r if keepdims else r - len(axis.elts))
        else:
            if flatten:
                return None
            a_new = a
            new_axis = ir.call(self.helper("lane_axis"), [axis, a])
            rank = None
        # the same call with the array and axis replaced (by keyword where they were)
        a_name = table.REDUCTIONS[fn]
        pos_names = names[:rule.npositional]
        new_pos = []
        for i, p in enumerate(pos):
            n = pos_names[i] if i < len(pos_names) else None
            new_pos.append(a_new if n == a_name else new_axis if n == "axis" else p)
        if "axis" not in pos_names[:len(pos)]:
            kw["axis"] = new_axis
        if a_name in kw:
            kw[a_name] = a_new
        return ir.call(v.func, new_pos, kw.items()), True, rank

    def each(self, v, fn, args, kws):
        """A call without a batching rule: run lane by lane."""
        if kws:
            raise NotBatchable(f"vmap has no batching rule for "
                               f"{getattr(fn, '__name__', 'this call')} with keyword arguments",
                               self.loc)
        if isinstance(fn, tuple) or fn is None:
            raise NotBatchable(f"vmap cannot batch this call ({_describe(v)})", self.loc)
        if any(self.is_b(a) and self.elems_of(a) is not None for a in args):   # each slices
            raise NotBatchable(f"vmap has no batching rule for {getattr(fn, '__name__', fn)} "
                               f"with a tuple, list or dict of batched values", self.loc)
        flags = gast.Tuple(elts=[ir.const(self.is_b(a)) for a in args], ctx=gast.Load())
        return ir.call(self.helper("each"), [v.func, flags] + args), True, None


def _describe(v):
    return unparse(v)


def _tuple_const(values):
    values = list(values)
    if len(values) == 1:
        return ir.const(values[0])
    return gast.Tuple(elts=[ir.const(v) for v in values], ctx=gast.Load())
