"""vmap's statements: each rewritten by its batching rule, control flow on a batched value
run for every lane under a mask (see vectorize.py), and the liveness that tells which masked
assignments keep other lanes' values."""
import gast

from .. import runtime
from ..runtime import lax as rl
from ..runtime.effects import is_effect
from . import analysis, ir
from .lanes import lane_block
from .vectorize_base import NotBatchable
from .vectorize_containers import is_none

# helpers that change a container's length: under a batched condition lanes would differ
RESIZING = {runtime.append, runtime.insert, runtime.extend, runtime.pop_item, runtime.update}


class Statements:
    """The statements of Vectorize (a mixin: the names it reads are set by Vectorize)."""

    def block(self, stmts, mask, region):
        """``mask``: the name of the lanes running this code (None: all); ``region``: the
        names read after the masked region (assignments to them keep other lanes' values)."""
        if self.lanes and mask is None:
            return lane_block(self, stmts)
        out = []
        for s in stmts:
            out.extend(self.stmt(s, mask, region))
        return out

    def stmt(self, s, mask, region):
        loc = getattr(s, "loc", None)
        self.loc = loc
        if isinstance(s, gast.Assign):
            return self.assign(s, mask, region)
        if isinstance(s, gast.If):
            return self.if_(s, mask, region)
        if isinstance(s, (gast.While, gast.For)):   # the body may run no trip
            sure = set(self.sure)
            out = (self.while_ if isinstance(s, gast.While) else self.for_)(s, mask, region)
            self.sure = sure
            return out
        if isinstance(s, gast.Return):
            return [ir.stmt(gast.Return(value=self.returned(s.value)), loc)]
        if isinstance(s, gast.Expr):
            return self.effect(s, mask)
        if isinstance(s, gast.Pass):
            return [s]
        raise NotBatchable(f"vmap cannot batch a {type(s).__name__} statement", loc)

    def assign(self, s, mask, region):
        loc = s.loc
        target = s.targets[0]
        if not isinstance(target, gast.Name):
            raise NotBatchable("vmap cannot batch an assignment to " + type(target).__name__,
                               loc)
        t = target.id
        pre = []
        elems = self.elems_of(s.value)
        value, batched, rank = self.expr(s.value, mask, pre)
        fn = self.fn.callee(s.value.func) if isinstance(s.value, gast.Call) else None
        if fn is rl.branch_type:
            # a witness of a branch's output type (lax_lower.py) is the same in every lane (it
            # asks one); under a batched predicate the branches run one after the other, and
            # each compares its witness with the one the branch before set
            if mask is not None and t in self.defined:
                s = ir.assign(t, gast.Call(func=s.value.func, args=[s.value.args[0], ir.name(t)]
                                           + s.value.args[2:], keywords=[]), loc)
            value, _, _ = self.expr(s.value, mask, pre)
            self.batched.discard(t)
            self.set_name(t, False, None)
            self.defined.add(t)
            self.sure.add(t)
            return pre + [ir.assign(t, value, loc)]
        masked = mask is not None and region is not None and t in region and t in self.defined
        if masked and fn in RESIZING:
            raise NotBatchable(f"vmap cannot batch {fn.__name__} on {t} under control flow on a "
                               f"batched value: its length would differ between lanes", loc)
        if is_none(s.value) and not masked:   # a placeholder (a tape's slot for a value the
            self.defined.add(t)                # code may not compute): a lane keeps None until
            self.sure.discard(t)               # a masked assignment selects a value for it
            return pre + [ir.assign(t, value, loc)]
        if elems is not None and (batched or masked or t in self.elems):
            self.set_elems(t, elems)
            if not batched:   # unbatched here, a container of lanes elsewhere
                value, batched = self.lanes_of(value), True
        else:
            self.set_elems(t, elems, lanes=False)
        if masked and t in self.elems:
            value = self.select_elems(mask, value, t)
        elif masked and t not in self.sure:   # no value to keep where the code binding it
            self.maybe.add(t)                  # did not run (None): select takes new there
            value = self.bcast(value, batched=self.is_b(value) or batched)
            batched = True
            self.set_name(t, True, rank)
            value = self.pick(mask, value, ir.name(t), None)
        elif masked:
            value = self.bcast(value, batched=self.is_b(value) or batched)
            batched = True
            if t not in self.batched:
                self.set_name(t, True, rank)
                old = ir.call(self.helper("broadcast_lanes"), [ir.name(t), ir.name(self.size)])
            else:
                old = ir.name(t)
            value = self.pick(mask, value, old, rank if rank == self.rank.get(t) else None)
        elif t in self.batched and not batched and t not in self.containers:
            value = self.bcast(value, batched=False)   # unbatched here, batched elsewhere
            batched = True
        self.set_name(t, batched, rank)
        self.defined.add(t)
        self.sure.add(t)
        return pre + [ir.assign(t, value, loc)]

    def effect(self, s, mask):
        v = s.value
        fn = self.fn.callee(v.func) if isinstance(v, gast.Call) else None
        if fn is runtime.push:
            tape, val = v.args
            if mask is not None:
                raise NotBatchable("vmap cannot batch a derivative's tape inside control flow "
                                   "on a batched value", self.loc)
            if self.is_b(val) or tape.id in self.batched:
                self.batched.add(tape.id)
                val = self.bcast(val, self.is_b(val))
            r, elems = self.rank_of(val), self.elems_of(val)
            self.tape_rank[tape.id] = r if self.tape_rank.get(tape.id, r) == r else None
            self.tape_elems[tape.id] = elems if self.tape_elems.get(tape.id, elems) == elems \
                else None
            self.containers.add(tape.id)
            return [ir.stmt(gast.Expr(value=ir.call(v.func, [tape, val])), s.loc)]
        if is_effect(fn):   # debug.print/callback: once per lane (the lanes running here)
            batched = tuple(bool(self.is_b(a)) for a in v.args)
            if not any(batched) and mask is None:
                return [s]
            lanes = fn.lanes(batched, mask is not None)
            args = ([ir.name(mask)] if mask is not None else []) + list(v.args)
            call = ir.call(ir.name(self.ref(lanes, lanes.__name__)), args)
            return [ir.stmt(gast.Expr(value=call), s.loc)]
        if fn is print or fn is None or fn is runtime.aux_pair:   # a pair of lanes: a pair
            return [s]
        pre = []
        new, _, _ = self.expr(v, mask, pre)
        return pre + [ir.stmt(gast.Expr(value=new), s.loc)]

    def if_(self, s, mask, region):
        test = s.test
        if not self.is_b(test):
            defined, sure = set(self.defined), set(self.sure)
            body = self.block(s.body, mask, region)
            (after_body, self.defined), (sure_body, self.sure) = (self.defined, defined), (
                self.sure, sure)
            orelse = self.block(s.orelse, mask, region)
            self.defined |= after_body
            self.sure &= sure_body
            return [ir.if_(test, body or [gast.Pass()], orelse, s.loc)]
        live = s.live_out
        fresh = mask is not None or test.id in analysis.block_writes(s.body)
        m_then = self.namer.fresh("_m", numbered=True) if fresh else test.id
        m_else = self.namer.fresh("_m", numbered=True)
        then = test if mask is None else gast.BinOp(left=ir.name(mask), op=gast.BitAnd(),
                                                   right=test)
        neg = gast.UnaryOp(op=gast.Invert(), operand=test)
        other = neg if mask is None else gast.BinOp(left=ir.name(mask), op=gast.BitAnd(),
                                                   right=neg)
        self.batched |= {m_then, m_else}
        self.rank[m_then] = self.rank[m_else] = 0
        out = [ir.assign(m_then, then, s.loc)] if fresh else []
        out += self.block(s.body, m_then, s.live_then)
        if s.orelse:
            out.append(ir.assign(m_else, other, s.loc))
            out += self.block(s.orelse, m_else, live)
        return out

    def while_(self, s, mask, region):
        if not self.is_b(s.test):
            return [ir.stmt(gast.While(test=s.test, body=self.block(s.body, mask, region),
                                       orelse=[]), s.loc)]
        live = s.live_in
        before = set(self.defined)
        self.require_defined(s, live, before)
        m = self.namer.fresh("_m", numbered=True)
        self.batched.add(m)
        self.rank[m] = 0
        running = s.test if mask is None else gast.BinOp(left=ir.name(mask), op=gast.BitAnd(),
                                                        right=s.test)
        body = self.block(s.body, m, live)
        body.append(ir.assign(m, gast.BinOp(left=ir.name(m), op=gast.BitAnd(), right=s.test),
                              s.loc))
        loop = gast.While(test=ir.call(self.np_("any"), [ir.name(m)]), body=body, orelse=[])
        return [ir.assign(m, running, s.loc), ir.stmt(loop, s.loc)]

    def for_(self, s, mask, region):
        it = s.iter
        args = it.args
        self.rank[s.target.id] = 0
        if not any(self.is_b(a) for a in args):
            body = self.block(s.body, mask, region)
            return [ir.stmt(gast.For(target=s.target, iter=it, body=body, orelse=[],
                                     type_comment=None), s.loc)]
        if len(args) > 2:
            raise NotBatchable("vmap batches range(n) and range(a, b) with batched bounds; "
                               "not a step", s.loc)
        if s.target.id in s.live_out:
            raise NotBatchable("vmap cannot batch a loop variable read after a loop with a "
                               "batched trip count", s.loc)
        live = s.live_in
        self.require_defined(s, live, set(self.defined))
        lo, hi = (ir.const(0), args[0]) if len(args) == 1 else args
        m = self.namer.fresh("_m", numbered=True)
        self.batched.add(m)
        self.rank[m] = 0
        i = ir.name(s.target.id)
        test = gast.Compare(left=i, ops=[gast.Lt()], comparators=[hi])
        if len(args) == 2:
            test = gast.BinOp(left=gast.Compare(left=lo, ops=[gast.LtE()], comparators=[i]),
                              op=gast.BitAnd(), right=test)
        if mask is not None:
            test = gast.BinOp(left=ir.name(mask), op=gast.BitAnd(), right=test)
        bounds = [ir.call(self.helper("lanes_min"), [lo]) if self.is_b(lo) else lo,
                  ir.call(self.helper("lanes_max"), [hi]) if self.is_b(hi) else hi]
        self.defined.add(s.target.id)
        body = [ir.assign(m, test, s.loc)] + self.block(s.body, m, live)
        rng = ir.call(it.func, bounds if len(args) == 2 else bounds[1:])
        return [ir.stmt(gast.For(target=s.target, iter=rng, body=body, orelse=[],
                                 type_comment=None), s.loc)]

    def require_defined(self, loop, live, defined):
        missing = sorted((analysis.block_writes(loop.body) & live) - defined
                         - {loop.target.id if isinstance(loop, gast.For) else None})
        if missing:
            raise NotBatchable(f"a loop on a batched condition assigns {', '.join(missing)}, "
                               f"which is read after an iteration but has no value before the "
                               f"loop", loop.loc)


def annotate_live(stmts, live, region=None):
    """Set ``live_out`` on each statement (and ``live_in`` on loops: live at the loop head,
    which covers values carried between iterations); returns the names live before.
    ``region``: the names live at the end of the enclosing if or loop body; under a batched
    test an assignment there selects between the new value and the old one, so it does not
    end the old value's life (a later masked assignment reads it)."""
    for s in reversed(stmts):
        s.live_out = set(live)
        if isinstance(s, gast.If):   # on a batched test the else branch runs after the
            # then branch, and must see what was before the if: what it reads is live there
            orelse = annotate_live(s.orelse, set(live), set(live))
            s.live_then = live | orelse
            live = annotate_live(s.body, set(s.live_then), s.live_then) | orelse | \
                analysis.reads(s)
        elif isinstance(s, (gast.While, gast.For)):
            head = set(live) | (analysis.reads(s) if isinstance(s, gast.While) else set())
            while True:
                body_in = annotate_live(s.body, set(head), head)
                if isinstance(s, gast.For):
                    body_in.discard(s.target.id)
                new = head | body_in
                if new == head:
                    break
                head = new
            s.live_in = head
            live = head | analysis.reads(s)
        elif isinstance(s, gast.Assign):
            killed = {t.id for t in s.targets if isinstance(t, gast.Name)} - (region or set())
            live = (live - killed) | analysis.reads(s)
        elif isinstance(s, gast.Return):
            live = analysis.reads(s)
        else:
            live = live | analysis.reads(s)
    return live
