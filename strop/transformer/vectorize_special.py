"""vmap's calls of functions with a batching rule of their own: the derivative helpers of
generated code (unbroadcast, matmul_vjp_x, ...) and NumPy functions whose axes or shapes
name the axes of a lane (reshape, einsum, dot, ...).  Each ``call_<name>`` gives (the new
expression, batched?, rank of a lane) or None where it does not apply (then the call runs
lane by lane)."""
import gast
import numpy as np

from .. import runtime
from . import ir

SPECIAL = {runtime.extremum_grad, runtime.unbroadcast, runtime.seed_grad, runtime.expand_to,
           runtime.matmul_vjp_x, runtime.matmul_vjp_y, runtime.getitem_vjp, np.reshape,
           np.ravel, np.transpose, np.squeeze, np.expand_dims, np.swapaxes, np.moveaxis,
           np.concatenate, np.stack, np.einsum, runtime.align_to, runtime.unalign, np.dot,
           np.tensordot, np.inner, runtime.tensordot_vjp_a, runtime.tensordot_vjp_b,
           runtime.concatenate_vjp, runtime.iterable, np.outer, np.trace, runtime.array_vjp}


class SpecialCalls:
    """The calls in SPECIAL (a mixin of Vectorize: the names it reads are set by Vectorize)."""

    # --- derivative helpers ----------------------------------------------------------------
    def call_unbroadcast(self, v, args, kws):
        g, x = args
        if self.is_b(g) and self.is_b(x) and self.rank_of(g) is not None and \
                self.rank_of(g) == self.rank_of(x):   # lanes of one rank: as it is
            return v, True, self.rank_of(x)
        return ir.call(self.helper("unbroadcast_lanes"), [g, x, ir.const(self.is_b(g)),
                                                         ir.const(self.is_b(x))]), \
            self.is_b(g), self.rank_of(x)

    def call_align_to(self, v, args, kws):
        """Axes inserted after the lanes' own batch axis (ranks known), else lane by lane."""
        x, other, ob = args
        rx, ro = self.rank_of(x), self.rank_of(other)
        if kws or rx is None or ro is None or not isinstance(ob, gast.Constant):
            return None
        extra = ro - ob.value - (rx - 1)
        return self.lane_axes_at(x, [ir.const(None)] * extra), self.is_b(x), rx + max(extra, 0)

    def call_unalign(self, v, args, kws):
        g, x = args
        rg, rx = self.rank_of(g), self.rank_of(x)
        if kws or rg is None or rx is None:
            return None
        return self.lane_axes_at(g, [ir.const(0)] * (rg - rx)), self.is_b(g), rx

    def lane_axes_at(self, x, index):
        """``x[:, index]`` in each lane: ``index`` after the axis align_to keeps first."""
        if not index:
            return x
        lead = [gast.Slice(lower=None, upper=None, step=None) for _ in range(1 + self.is_b(x))]
        return ir.subscript(x, gast.Tuple(elts=lead + index, ctx=gast.Load()))

    def call_seed_grad(self, v, args, kws):
        return ir.call(self.helper("seed_grad_lanes"), args), True, 0

    def call_expand_to(self, v, args, kws):
        g, x = args[0], args[1]
        new = [self.bcast(g, self.is_b(g)), self.bcast(x, self.is_b(x))] + args[2:]
        return ir.call(self.helper("expand_to_lanes"), new), True, self.rank_of(x)

    def call_extremum_grad(self, v, args, kws):
        a, ans, rest = args[0], args[1], args[2:]
        if kws or len(rest) != 3 or self.is_b(rest[2]):   # a batched where: lane by lane
            return None
        new = [self.bcast(a, self.is_b(a)), self.bcast(ans, self.is_b(ans))] + rest
        return ir.call(self.helper("extremum_grad_lanes"), new), True, self.rank_of(a)

    def call_matmul_vjp_x(self, v, args, kws):
        return self.matmul_vjp(args, "matmul_vjp_x_lanes", args[1])

    def call_matmul_vjp_y(self, v, args, kws):
        return self.matmul_vjp(args, "matmul_vjp_y_lanes", args[2])

    def matmul_vjp(self, args, helper, like):
        g, x, y = args
        return ir.call(self.helper(helper), [self.bcast(g, self.is_b(g)), x, y,
                                             ir.const(self.is_b(x)), ir.const(self.is_b(y))]
                       ), True, self.rank_of(like)

    def call_getitem_vjp(self, v, args, kws):
        g, x, idx = args
        if self.is_b(idx):
            return None
        return ir.call(self.helper("getitem_vjp_lanes"), [
            self.bcast(g, self.is_b(g)), self.bcast(x, self.is_b(x)), idx]), True, \
            self.rank_of(x)

    # --- NumPy functions -------------------------------------------------------------------
    def call_reshape(self, v, args, kws):
        if len(args) != 2 or kws or not self.is_b(args[0]) or self.is_b(args[1]):
            return None
        shape = args[1]
        if isinstance(shape, gast.Tuple):
            new = gast.Tuple(elts=[ir.name(self.size)] + list(shape.elts), ctx=gast.Load())
            return ir.call(v.func, [args[0], new]), True, len(shape.elts)
        if isinstance(shape, gast.Constant):
            new = gast.Tuple(elts=[ir.name(self.size), shape], ctx=gast.Load())
            return ir.call(v.func, [args[0], new]), True, 1
        return ir.call(self.helper("reshape_lanes"), [args[0], shape]), True, None

    def call_ravel(self, v, args, kws):
        if len(args) != 1 or kws:
            return None
        new = gast.Tuple(elts=[ir.name(self.size), ir.const(-1)], ctx=gast.Load())
        return ir.call(self.np_("reshape"), [args[0], new]), True, 1

    def call_transpose(self, v, args, kws):
        if kws or not self.is_b(args[0]) or len(args) > 1 and self.is_b(args[1]):
            return None
        return ir.call(self.helper("transpose_lanes"), args), True, self.rank_of(args[0])

    def call_squeeze(self, v, args, kws):
        if kws or len(args) > 1 and self.is_b(args[1]):
            return None
        return ir.call(self.helper("squeeze_lanes"), args), True, None

    def call_expand_dims(self, v, args, kws):
        return self.axis_call(v, args, kws, 1, lambda r: None if r is None else r + 1)

    def call_swapaxes(self, v, args, kws):
        return self.axis_call(v, args, kws, 2, lambda r: r)

    def call_moveaxis(self, v, args, kws):
        return self.axis_call(v, args, kws, 2, lambda r: r)

    def call_concatenate(self, v, args, kws):
        return self.axis_call(v, args, kws, 1, lambda r: None, container=True)

    def call_stack(self, v, args, kws):
        return self.axis_call(v, args, kws, 1, lambda r: None, container=True)

    def axis_call(self, v, args, kws, naxes, rank, container=False):
        """A call whose arguments after the first are axes of a lane (ints)."""
        if kws:
            return None
        axes = args[1:1 + naxes]
        if len(axes) < naxes and not container or any(self.is_b(a) for a in axes):
            return None
        if container:
            axes = axes or [ir.const(0)]
        new = []
        for a in axes:
            if isinstance(a, gast.Constant) and isinstance(a.value, int):
                new.append(ir.const(a.value + 1 if a.value >= 0 else a.value))
            else:
                new.append(ir.call(self.helper("lane_axis"), [a, args[0]]))
        return ir.call(v.func, [args[0]] + new + args[1 + naxes:]), True, rank(
            self.rank_of(args[0]))

    def call_dot(self, v, args, kws):
        """np.dot of 1-D and 2-D lanes is their matrix product; of a number, a product."""
        a, b = args if len(args) == 2 and not kws else (None, None)
        ra, rb = self.rank_of(a), self.rank_of(b)
        if a is None or ra is not None and ra > 2 or rb is not None and rb > 2:
            return None
        if (ra is None or rb is None) and ra != 0 and rb != 0:
            # lanes of ranks not known here (vmap inlined in a transform of other code):
            # their product, for any ranks, at run time; a lane that is a number is refused
            # there by np.matmul, never a silently other product
            return ir.call(self.helper("matmul_lanes"), [a, b, ir.const(self.is_b(a)),
                                                         ir.const(self.is_b(b))]), True, None
        if ra == 0 or rb == 0:
            return self.elementwise(v, [a, b], lambda p: gast.BinOp(left=p[0], op=gast.Mult(),
                                                                   right=p[1]))
        return self.matmul(a, b, gast.BinOp(left=a, op=gast.MatMult(), right=b))

    def call_iterable(self, v, args, kws):
        """What a for loop walks: a batched array as it is (each lane's rows: axis 1)."""
        if len(args) != 1 or kws or self.elems_of(args[0]) is not None:
            return None
        return args[0], True, self.rank_of(args[0])

    def call_outer(self, v, args, kws):
        """np.outer of each lane's arguments, flattened as NumPy flattens them: a matrix."""
        if len(args) != 2 or kws or any(self.elems_of(a) is not None for a in args):
            return None
        return ir.call(self.helper("outer_lanes"), args + [ir.const(self.is_b(a))
                                                           for a in args]), True, 2

    def call_trace(self, v, args, kws):
        if len(args) != 1 or kws or self.rank_of(args[0]) != 2:
            return None
        return ir.call(self.helper("trace_lanes"), args), True, 0

    def call_tensordot(self, v, args, kws):
        a, b, axes = self.bind(args, kws, ("a", "b", "axes"), {"axes": ir.const(2)})
        if a is None or self.is_b(axes):
            return None
        return ir.call(self.helper("tensordot_lanes"), [a, b, axes, ir.const(self.is_b(a)),
                                                        ir.const(self.is_b(b))]), True, None

    def call_inner(self, v, args, kws):
        a, b = args if len(args) == 2 and not kws else (None, None)
        ra, rb = self.rank_of(a), self.rank_of(b)
        if ra is None or rb is None or not (ra and rb):
            return None
        axes = gast.Tuple(elts=[gast.List(elts=[ir.const(-1)], ctx=gast.Load())] * 2,
                          ctx=gast.Load())
        return ir.call(self.helper("tensordot_lanes"), [a, b, axes, ir.const(self.is_b(a)),
                                                        ir.const(self.is_b(b))]), True, \
            ra + rb - 2

    def call_tensordot_vjp_a(self, v, args, kws):
        return self.tensordot_vjp(args, kws, 0)

    def call_tensordot_vjp_b(self, v, args, kws):
        return self.tensordot_vjp(args, kws, 1)

    def tensordot_vjp(self, args, kws, wrt):
        """The cotangent of a factor of np.tensordot (dot, inner) with axes the same in
        every lane: one einsum over the lanes."""
        g, a, b, axes = self.bind(args, kws, ("g", "a", "b", "axes"), {"axes": ir.const(2)})
        if g is None or self.is_b(axes):
            return None
        flags = [self.is_b(g), self.is_b(a), self.is_b(b)]
        if not (flags[0] or flags[2 - wrt]):   # the same in every lane
            return ir.call(self.helper("tensordot_vjp_" + "ab"[wrt]), [g, a, b, axes]), \
                False, self.rank_of((a, b)[wrt])
        return ir.call(self.helper("tensordot_vjp_lanes"), [g, a, b, axes, ir.const(wrt)] + [
            ir.const(f) for f in flags]), True, self.rank_of((a, b)[wrt])

    def bind(self, args, kws, names, defaults):
        """The arguments of a call by parameter name (None each where it does not bind)."""
        if len(args) > len(names) or set(kws) - set(names[len(args):]):
            return (None,) * len(names)
        given = {**defaults, **dict(zip(names, args)), **kws}
        if any(n not in given for n in names):
            return (None,) * len(names)
        return tuple(given[n] for n in names)

    def call_array_vjp(self, v, args, kws):
        """The cotangents of the items of a list or tuple np.array stacked (``np.array([x,
        y])``): each lane's ``g[i]``, i.e. ``g[:, i]`` of the lanes."""
        if len(args) != 2 or kws:
            return None
        g, items = args
        elems = self.elems_of(items)
        if not isinstance(elems, tuple) or any(e is not None for _, e in elems):
            return None   # (nested containers: lane by lane)
        b = self.is_b(g)
        parts = [ir.subscript(g, gast.Tuple(elts=[gast.Slice(lower=None, upper=None,
                                                             step=None), ir.const(i)],
                                            ctx=gast.Load()) if b else ir.const(i))
                 for i in range(len(elems))]
        display = gast.Tuple if isinstance(items, gast.Tuple) else gast.List
        return display(elts=parts, ctx=gast.Load()), b, None

    def call_concatenate_vjp(self, v, args, kws):
        """The cotangents of a list of arrays joined (concatenate, hstack, ...): a list of
        lanes, cut from each lane of ``g``."""
        g, arrays, axis, promote = self.bind(args, kws, ("g", "arrays", "axis", "promote"),
                                             {"axis": ir.const(0), "promote": ir.const(None)})
        elems = self.elems_of(arrays) if g is not None else None
        if not isinstance(elems, tuple) or self.is_b(axis) or self.is_b(promote):
            return None
        flags = [self.is_b(arrays)] * len(elems)   # a list of lanes: every element batched
        return ir.call(self.helper("concatenate_vjp_lanes"), [
            self.bcast(g, self.is_b(g)), arrays, axis, promote,
            gast.Tuple(elts=[ir.const(f) for f in flags], ctx=gast.Load())]), True, None

    def call_einsum(self, v, args, kws):
        spec = args[0]
        if kws or not isinstance(spec, gast.Constant) or not isinstance(spec.value, str) or \
                "." in spec.value:
            return None
        operands = args[1:]
        ins, _, out = spec.value.replace(" ", "").partition("->")
        terms = ins.split(",")
        if not _ or len(terms) != len(operands):
            if _:
                return None
            letters = "".join(terms)
            out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        free = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
                    if c not in ins and c not in out)
        terms = [free + t if self.is_b(o) else t for t, o in zip(terms, operands)]
        new = ",".join(terms) + "->" + free + out
        return ir.call(v.func, [ir.const(new)] + operands), True, len(out)
