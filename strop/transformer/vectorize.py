"""vmap: a normalized function rewritten to run a whole batch at once.

Every value is *batched* (its leading axis runs over the batch; lane ``b`` is what one call of
the user's function saw) or not.  A name is batched when any assignment to it is — found by
running the rewrite to a fixpoint — and each statement is rewritten by the batching rule of
its operation (rules/batching.py); unbatched values stay as they are.  A name rebound at the
top level of the function is one name per binding where their batchedness differs
(versions.py): an unbatched parameter stays unbatched until it is rebound to a batched value;
one made batched in a loop is batched from the start.  The rank of each lane is tracked
where it is known, so that lanes line up by plain indexing (``x[:, None]``).

Control flow on a batched condition runs every lane under a mask:
- ``if c:`` runs both branches, the ``else`` branch after the ``then`` branch; an assignment
  to a name read after the ``if`` (or in the ``else`` branch, which must see the value from
  before the ``if``) becomes ``x = np.where(c, new, x)`` (``select`` for lanes of rank > 0),
  so each lane keeps the branch it took; a list's length cannot differ between lanes
  (``append`` under the condition: NotBatchable).  Early returns are flags and guards by
  then (controlflow.py), batched like any value: each lane keeps the first value it
  returned.  Values a lane did not take are computed and dropped (NaN or inf there never
  reaches the result), and a batched index in such code reads index 0 on those lanes.
- ``while c:`` loops while any lane runs; a lane whose condition fails keeps its values.
- ``for i in range(n)`` with a batched ``n`` runs to the largest ``n``, lane ``b`` while
  ``i < n[b]``.

A tuple, list or dict (with constant keys) holding batched values is a *container* of lanes:
a container of batched values (every element batched, None kept as a placeholder), not a
batched array, so ``t[0]`` stays ``t[0]`` and ``d['w']`` stays ``d['w']``.  The rank of each
element's lanes (and of a nested container's) is kept in ``elems`` (a tuple, or a dict by
key): ``x, = primals`` in a custom rule, and the cotangents of tuples and dicts in derivative
code, keep what is known of their lanes.  What is known of containers of unbatched values is
kept too (``known``), to make them containers of lanes where a batched value meets them.

What the rewrite cannot batch (a loop that defines a value it needs on every lane, tapes in
a batched loop) raises NotBatchable: the caller then runs the function lane by lane.
"""
import copy

import gast
import numpy as np

from ..codegen import runtime
from ..codegen.runtime_forward import custom_cotangents
from . import analysis, ir, versions
from .lanes import lane_block
from .rules import RULES, lookup as rule_lookup
from .rules import batching as table
from .reverse import BINOPS, UNARYOPS

COMPARES = {gast.Lt: np.less, gast.LtE: np.less_equal, gast.Gt: np.greater,
            gast.GtE: np.greater_equal, gast.Eq: np.equal, gast.NotEq: np.not_equal}


class NotBatchable(Exception):
    def __init__(self, reason, loc=None):
        super().__init__(reason)
        self.reason, self.loc = reason, loc


class Vectorize:
    def __init__(self, fn, batched, ranks, size_expr, prologue=(), lanes=False):
        """``batched``: the parameters that are batched; ``ranks``: parameter -> rank of a lane
        (None: unknown); ``size_expr``: the batch size as an expression; ``lanes``: fuse
        per-lane code into loops over the batch (for compiled code: lanes.py)."""
        self.fn, self.lanes = fn, lanes
        self.size_expr = size_expr
        self.prologue = list(prologue)
        self.batched, self.rank, self.containers = set(batched), dict(ranks), set()
        self.elems = {}   # container -> (rank, elems of a nested one) of each element
        self.known = {}   # the same of containers of unbatched values (None: not only those)
        self.varies = set()   # containers assigned different elements (number, keys)
        self.tape_rank = {}   # tape -> the rank of the lanes pushed on it (None: differ)
        self.tape_elems = {}  # tape -> the elements of the containers pushed on it
        self.maybe = set()   # names a lane may keep while the batched code may not bind them

    # --- driver ----------------------------------------------------------------------------
    def run(self):
        initial = (set(self.batched), dict(self.rank))
        self.node, names = versions.split(self.fn.node, ir.names_in(self.fn.node) |
                                          set(self.fn.refs))
        if names:   # a name rebound at the top level: batched per binding
            self.fixpoint()
            keep = versions.merge(names, self.batched)
            self.node = versions.rename(self.node, keep)
            self.batched, self.rank = set(initial[0]), dict(initial[1])
            self.containers, self.elems, self.known, self.varies = set(), {}, {}, set()
            self.tape_rank, self.tape_elems, self.maybe = {}, {}, set()
        node = self.node
        self.fixpoint()
        self.start()
        size = [ir.assign(self.size, self.size_expr, getattr(node, "loc", None))]
        body = self.prologue + size + self.entry(initial[0]) + self.block(node.body, None, None)
        new = copy.copy(node)
        new.body = body
        new.name = node.name + "_vmap"
        refs = self.refs
        if self.lanes:   # drop what only the masked code, set aside for lane loops, used
            used = ir.names_in(new) | set().union(*(ir.names_in(c) for c in self.companions))
            refs = {k: o for k, o in refs.items() if k in used or k in self.fn.refs}
        return ir.Function(new, refs, dict(self.fn.free), self.fn.nparams,
                           self.fn.guards, self.fn.groups, tuple(self.companions))

    def fixpoint(self):
        """The batched names (and what is known of each), to a fixpoint."""
        _annotate_live(self.node.body, set())
        for _ in range(20):
            before = (set(self.batched), dict(self.rank), set(self.containers),
                      dict(self.elems), dict(self.known), set(self.varies), set(self.maybe))
            self.start()
            self.block(self.node.body, None, None)
            if (self.batched, self.rank, self.containers, self.elems, self.known,
                    self.varies, self.maybe) == before:
                break

    def entry(self, given):
        """A parameter given unbatched but batched later in a loop (``w = w + x`` in its body,
        one name for every trip): batched from the start, every lane the value given.  A name
        a masked assignment keeps in some lanes where the code binding it may not have run
        (``_retval`` set under an unbatched ``if``, then under a batched one): None at first,
        which ``select`` replaces in every lane."""
        loc = getattr(self.node, "loc", None)
        out = [ir.assign(t, ir.const(None), loc) for t in sorted(self.maybe)]
        for a in self.node.args.args:
            if a.id in self.batched and a.id not in given and a.id not in self.containers:
                out.append(ir.assign(a.id, self.bcast(ir.name(a.id), False), loc))
        return out

    def start(self):
        self.refs = dict(self.fn.refs)
        self.namer = ir.Namer(ir.names_in(self.node) | set(self.refs) |
                              {self.node.name + "_vmap"})   # the function made
        self.size = self.namer.fresh("batch_size")
        self.companions = []
        self.defined = {a.id for a in self.node.args.args}
        self.sure = set(self.defined)   # bound on every path the batched code may take

    def ref(self, obj, base):
        return ir.bind_ref(self.refs, self.namer, obj, base)

    def helper(self, name):
        return ir.name(self.ref(getattr(runtime, name), name))

    def np_(self, attr):
        return ir.attr(ir.name(self.ref(np, "np")), attr)

    def is_b(self, node):
        if isinstance(node, (gast.Tuple, gast.List)):
            return any(self.is_b(e) for e in node.elts)
        if isinstance(node, gast.Dict):
            return any(self.is_b(e) for e in node.values)
        return isinstance(node, gast.Name) and node.id in self.batched

    def rank_of(self, node):
        if isinstance(node, gast.Constant):
            return 0
        if isinstance(node, gast.Name):
            return self.rank.get(node.id)
        return None

    def set_name(self, name, batched, rank):
        if batched:
            self.batched.add(name)
        if name in self.rank and self.rank[name] != rank:
            self.rank[name] = None
        elif name not in self.rank:
            self.rank[name] = rank

    # --- statements ------------------------------------------------------------------------
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
        masked = mask is not None and region is not None and t in region and t in self.defined
        fn = self.fn.callee(s.value.func) if isinstance(s.value, gast.Call) else None
        if masked and fn in RESIZING:
            raise NotBatchable(f"vmap cannot batch {fn.__name__} on {t} under control flow on a "
                               f"batched value: its length would differ between lanes", loc)
        if _is_none(s.value) and not masked:   # a placeholder (a tape's slot for a value the
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

    # --- expressions -----------------------------------------------------------------------
    def bcast(self, node, batched):
        """``node`` as a batched value (an unbatched one repeated in every lane)."""
        if batched:
            return node
        return ir.call(self.helper("broadcast_lanes"), [node, ir.name(self.size)])

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

    # --- containers: tuples, lists and dicts of lanes --------------------------------------
    def elems_of(self, v):
        """(rank, elems of a nested container) of each element of ``v`` if it is a container
        (a tuple, list, or dict with constant keys; else None): a tuple, or a dict by key."""
        if isinstance(v, (gast.Tuple, gast.List)):
            return tuple((self.rank_of(e), self.elems_of(e)) for e in v.elts)
        if isinstance(v, gast.Dict):
            if not all(isinstance(k, gast.Constant) for k in v.keys):   # None: **d
                return None
            return {k.value: (self.rank_of(e), self.elems_of(e)) for k, e in zip(v.keys,
                                                                                v.values)}
        if isinstance(v, gast.Name):
            return self.elems[v.id] if v.id in self.elems else self.known.get(v.id)
        if isinstance(v, gast.Subscript):
            elem = self.element(v.value, v.slice)
            return elem[1] if elem is not None else None
        fn = self.fn.callee(v.func) if isinstance(v, gast.Call) else None
        if fn in CONTAINER_CALLS:   # a container like the one in this argument
            return self.elems_of(v.args[CONTAINER_CALLS[fn]])
        if fn is runtime.concatenate_vjp and len(v.args) >= 2:   # one cotangent per array
            elems = self.elems_of(v.args[1])
            return tuple((r, None) for _, (r, _) in _items(elems)) if isinstance(
                elems, tuple) else None
        if fn in TUPLE_RESULTS and not (fn is np.linalg.svd and any(
                k.arg == "compute_uv" for k in v.keywords)):   # w, v = eigh(a): a pair
            return ((None, None),) * TUPLE_RESULTS[fn]
        if fn is runtime.pop:   # what was pushed
            return self.tape_elems.get(v.args[0].id)
        if fn is runtime.array_vjp and len(v.args) == 2:   # split up like the list it made
            return self.elems_of(v.args[1])
        if fn is runtime.append:   # lst.append(x): a container one element longer
            elems = self.elems_of(v.args[0])
            return elems + ((self.rank_of(v.args[1]), self.elems_of(v.args[1])),) if \
                isinstance(elems, tuple) else None
        if fn is runtime.setitem and isinstance(v.args[1], gast.Constant):   # d[k] = x
            return _with(self.elems_of(v.args[0]), v.args[1].value,
                         (self.rank_of(v.args[2]), self.elems_of(v.args[2])))
        return None

    def element(self, x, idx):
        """(rank, elems) of the element ``x[idx]`` of a container (else None)."""
        elems = self.elems_of(x) if isinstance(x, gast.Name) else None
        if elems is None or not isinstance(idx, gast.Constant):
            return None
        if isinstance(elems, dict):
            return elems.get(idx.value)
        if not isinstance(idx.value, int) or not -len(elems) <= idx.value < len(elems):
            return None
        return elems[idx.value]

    def set_elems(self, name, elems, lanes=True):
        """What an assignment to ``name`` tells: it holds a container of lanes (``lanes``), a
        container of unbatched values, or (``elems`` None) something else."""
        table = self.elems if lanes else self.known
        if lanes:
            self.containers.add(name)
        old = table.get(name, elems)
        if old is not None and elems is not None and isinstance(old, dict) != isinstance(
                elems, dict):
            if lanes:
                raise NotBatchable(f"vmap cannot batch {name}: a tuple or list in one place "
                                   f"and a dict in another", self.loc)
            elems = None
        if elems is None or old is None:
            table[name] = None
            return
        if (set(old) if isinstance(old, dict) else len(old)) != (
                set(elems) if isinstance(elems, dict) else len(elems)):
            self.varies.add(name)
        table[name] = _merge(old, elems)

    def same_elems(self, name, why):
        """``name`` holds containers of the same elements (keys) wherever it is assigned."""
        if name in self.varies or name in self.known and self.known[name] is None:
            raise NotBatchable(f"vmap cannot batch {name}, a tuple, list or dict {why}: it "
                               f"does not hold the same elements (keys) wherever it is "
                               f"assigned", self.loc)

    def lanes_of(self, v):
        """``v`` with every element a batched value (None stays None: a placeholder)."""
        elems = self.elems_of(v)
        if elems is not None and not self.is_b(v) and not isinstance(v, DISPLAYS):
            if isinstance(v, gast.Name):
                self.same_elems(v.id, "that meets values that differ between lanes")
            v = _container(elems, [ir.subscript(v, ir.const(k)) for k, _ in _items(elems)])
        if isinstance(v, gast.Dict):
            return gast.Dict(keys=v.keys, values=[e if _is_none(e) else self.lanes_of(e)
                                                  for e in v.values])
        if not isinstance(v, (gast.Tuple, gast.List)):
            return v if elems is not None else self.bcast(v, self.is_b(v))
        return type(v)(elts=[e if _is_none(e) else self.lanes_of(e) for e in v.elts],
                       ctx=gast.Load())

    def select_elems(self, mask, value, t):
        """``t = value`` in the lanes of ``mask``, element by element of the container."""
        self.same_elems(t, "assigned under control flow on a batched value")
        given = dict(zip([k.value for k in value.keys], value.values)) if isinstance(
            value, gast.Dict) else dict(enumerate(value.elts)) if isinstance(
            value, (gast.Tuple, gast.List)) else None
        parts = []
        for k, (r, sub) in _items(self.elems[t]):
            new = given[k] if given is not None else ir.subscript(value, ir.const(k))
            if sub is not None:
                raise NotBatchable("vmap cannot batch a nested tuple, list or dict assigned "
                                   "under control flow on a batched value", self.loc)
            if _is_none(new):
                parts.append(new)
                continue
            new = self.bcast(new, self.is_b(new) or isinstance(new, gast.Subscript))
            parts.append(self.pick(mask, new, ir.subscript(t, ir.const(k)), r))
        new = _container(self.elems[t], parts)
        if isinstance(new, gast.Tuple):   # a list stays a list (its items can be assigned)
            new = ir.call(self.helper("container_like"), [ir.name(t), new])
        return new

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
            return parts, False, _max_rank([self.rank_of(p) for p in parts])
        ranks = [self.rank_of(p) for p in parts]
        top = _max_rank(ranks)
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
        if ab and not bb and ra is not None and ra >= 1 and rb == 2 or (
                ra is not None and ra == rb and ra >= 2) or (not ab and ra == 2 and rb
                                                             is not None and rb >= 2):
            return v, True, rank    # NumPy's matmul broadcasts over the batch axis
        return ir.call(self.helper("matmul_lanes"), [a, b, ir.const(ab), ir.const(bb)]), True, rank

    def attribute(self, v):
        x = v.value
        if not self.is_b(x):
            return v, False, None
        if v.attr in table.LANE_ATTRS:
            src = table.LANE_ATTRS[v.attr].format(x="__x")
            node = gast.parse(src, mode="eval").body
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
            ranks = [r for r, _ in self.elems_of(args[0])]
            rank = max(ranks) if ranks and None not in ranks else None
            start = args[1] if len(args) > 1 else kws.pop("start", ir.const(0))
            return ir.call(v.func, [self.lanes_of(args[0]), self.bcast(start, self.is_b(start))],
                           kws.items()), True, rank
        if fn is runtime.setitem and self.elems_of(v) is not None:   # d[k] = x, k a constant
            return ir.call(v.func, [self.lanes_of(args[0]), args[1], self.lanes_of(args[2])]), \
                True, None
        if fn is abs:   # Numba's abs takes numbers only
            v = ir.call(self.np_("abs"), args)
            fn = np.abs
        if table.is_elementwise(fn):
            if isinstance(v.func, gast.Attribute) and isinstance(fn, tuple):
                parts, batched, rank = self.aligned([v.func.value] + args)
                return ir.call(ir.attr(parts[0], v.func.attr), parts[1:], kws.items()), \
                    True, rank
            if fn is np.where and len(args) == 1:
                raise NotBatchable("np.where with one argument gives a different number of "
                                   "elements in each lane", self.loc)
            parts, batched, rank = self.aligned(args + list(kws.values()))
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
                self.rank_of(args[0])
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
            return _max_rank([self.rank_of(a) for a in args])
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
        if ra is None or rb is None or ra > 2 or rb > 2:
            return None
        if ra == 0 or rb == 0:
            return self.elementwise(v, [a, b], lambda p: gast.BinOp(left=p[0], op=gast.Mult(),
                                                                   right=p[1]))
        return self.matmul(a, b, gast.BinOp(left=a, op=gast.MatMult(), right=b))

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

    # --- outputs ---------------------------------------------------------------------------
    def returned(self, value):
        """The return value with each output's lanes as ``out_axes`` asks (set by the caller
        in ``self.out_axes``: an int, None, or a tuple for a returned tuple)."""
        spec = self.out_axes
        if isinstance(value, gast.Tuple) and isinstance(spec, tuple):
            if len(spec) != len(value.elts):
                raise NotBatchable(f"out_axes {spec!r} has {len(spec)} entries but the function "
                                   f"returns {len(value.elts)} values", self.loc,)
            return gast.Tuple(elts=[self.out(e, a) for e, a in zip(value.elts, spec)],
                              ctx=gast.Load())
        return self.out(value, spec)

    def out(self, node, axis):
        b = self.is_b(node) if isinstance(node, gast.Name) else any(
            self.is_b(n) for n in gast.walk(node) if isinstance(n, gast.Name))
        if axis is None:
            if b:
                raise OutAxesError(self.loc)
            return node
        if isinstance(node, gast.Name) and node.id in self.containers or \
                self.elems_of(node) is not None:
            if axis != 0:
                raise NotBatchable("out_axes other than 0 for an output that is a container",
                                   self.loc)
            return self.lanes_of(node)   # each element's lanes
        if isinstance(node, gast.Dict):
            raise NotBatchable("vmap returns a dict only where its keys are constants",
                               self.loc)
        node = self.bcast(node, b)
        if axis != 0:
            node = ir.call(self.helper("out_axis"), [node, ir.const(axis)])
        return node


class OutAxesError(Exception):
    def __init__(self, loc):
        super().__init__("out_axes is None for an output that differs between lanes")
        self.loc = loc


# helpers that change a container's length: under a batched condition lanes would differ
RESIZING = {runtime.append, runtime.insert, runtime.extend, runtime.pop_item, runtime.update}
LANE_QUERIES = {np.shape: "shape", np.ndim: "ndim", np.size: "size"}
DISPLAYS = (gast.Tuple, gast.List, gast.Dict)
# helpers that take containers: on containers of lanes they run as they are, leaf by leaf
# (the value: which argument's elements the result's are like)
# NumPy functions whose result is a tuple of a fixed length (of arrays of unknown rank)
TUPLE_RESULTS = {np.linalg.eigh: 2, np.linalg.eig: 2, np.linalg.svd: 3, np.linalg.slogdet: 2,
                 np.linalg.qr: 2, np.linalg.lstsq: 4, np.modf: 2, np.frexp: 2, divmod: 2,
                 np.divmod: 2}
CONTAINER_CALLS = {runtime.add: 0, runtime.scale: 0, runtime.zeros_like: 0,
                   runtime.ones_like: 0, runtime.getitem_vjp: 1, custom_cotangents: 1}
SPECIAL = {runtime.extremum_grad, runtime.unbroadcast, runtime.seed_grad, runtime.expand_to, runtime.matmul_vjp_x,
           runtime.matmul_vjp_y, runtime.getitem_vjp, np.reshape, np.ravel, np.transpose,
           np.squeeze, np.expand_dims, np.swapaxes, np.moveaxis, np.concatenate, np.stack,
           np.einsum, runtime.align_to, runtime.unalign, np.dot, np.tensordot, np.inner,
           runtime.tensordot_vjp_a, runtime.tensordot_vjp_b, runtime.concatenate_vjp}


def _describe(v):
    from ..codegen.emit import unparse
    return unparse(v)


def _is_none(node):
    return isinstance(node, gast.Constant) and node.value is None


def _merge(a, b):
    """What two assignments to a container tell of its elements together (of a key only one
    has, what that one tells: ``d[k]`` reads it; of tuples of two lengths, nothing: ``t[-1]``
    is not one element)."""
    if isinstance(a, dict):
        return {k: _merge_elem(a[k], b[k]) if k in a and k in b else a.get(k, b.get(k))
                for k in {**a, **b}}
    if len(a) != len(b):
        return tuple((None, None) for _ in range(max(len(a), len(b))))
    return tuple(_merge_elem(x, y) for x, y in zip(a, b))


def _merge_elem(x, y):
    (ra, sa), (rb, sb) = x, y
    same = sa is not None and sb is not None and isinstance(sa, dict) == isinstance(sb, dict)
    return ra if ra == rb else None, _merge(sa, sb) if same else None


def _items(elems):
    """(key, (rank, elems of a nested container)) of each element of a container."""
    return elems.items() if isinstance(elems, dict) else enumerate(elems)


def _container(elems, values):
    """A display of ``values``, one per element of a container like ``elems``."""
    if isinstance(elems, dict):
        return gast.Dict(keys=[ir.const(k) for k in elems], values=list(values))
    return gast.Tuple(elts=list(values), ctx=gast.Load())


def _with(elems, key, elem):
    """``elems`` with the element at ``key`` replaced (or, in a dict, added)."""
    if isinstance(elems, dict):
        return {**elems, key: elem}
    if elems is None or not isinstance(key, int) or not -len(elems) <= key < len(elems):
        return None
    return elems[:key % len(elems)] + (elem,) + elems[key % len(elems) + 1:]


def _operands(v):
    if isinstance(v, gast.BinOp):
        return [v.left, v.right]
    return [v.operand] if isinstance(v, gast.UnaryOp) else [v.left] + v.comparators


def _max_rank(ranks):
    if any(r is None for r in ranks):
        return None
    return max(ranks) if ranks else 0


def _expand(node, k):
    """``x[:, None, ...]``: ``k`` axes after the batch axis."""
    if not k:
        return node
    elts = [gast.Slice(lower=None, upper=None, step=None)] + [ir.const(None)] * k
    return ir.subscript(node, gast.Tuple(elts=elts, ctx=gast.Load()))


def _tuple_const(values):
    values = list(values)
    if len(values) == 1:
        return ir.const(values[0])
    return gast.Tuple(elts=[ir.const(v) for v in values], ctx=gast.Load())


def _annotate_live(stmts, live, region=None):
    """Set ``live_out`` on each statement (and ``live_in`` on loops: live at the loop head,
    which covers values carried between iterations); returns the names live before.
    ``region``: the names live at the end of the enclosing if or loop body; under a batched
    test an assignment there selects between the new value and the old one, so it does not
    end the old value's life (a later masked assignment reads it)."""
    for s in reversed(stmts):
        s.live_out = set(live)
        if isinstance(s, gast.If):   # on a batched test the else branch runs after the
            # then branch, and must see what was before the if: what it reads is live there
            orelse = _annotate_live(s.orelse, set(live), set(live))
            s.live_then = live | orelse
            live = _annotate_live(s.body, set(s.live_then), s.live_then) | orelse | \
                analysis.reads(s)
        elif isinstance(s, (gast.While, gast.For)):
            head = set(live) | (analysis.reads(s) if isinstance(s, gast.While) else set())
            while True:
                body_in = _annotate_live(s.body, set(head), head)
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


def vectorize(fn, batched, ranks, size_expr, out_axes, prologue=(), lanes=False):
    """``fn`` batched: see the module's docstring and Vectorize.__init__."""
    v = Vectorize(fn, batched, ranks, size_expr, prologue, lanes)
    v.out_axes = out_axes
    return v.run()
