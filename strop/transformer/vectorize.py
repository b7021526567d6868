"""vmap: a normalized function rewritten to run a whole batch at once.

Every value is *batched* (its leading axis runs over the batch; lane ``b`` is what one call of
the user's function saw) or not.  A name is batched when any assignment to it is — found by
running the rewrite to a fixpoint — and each statement is rewritten by the batching rule of
its operation (rules/batching.py); unbatched values stay as they are.  A name rebound at the
top level of the function is one name per binding where their batchedness (or a container's
length) differs (versions.py): an unbatched parameter stays unbatched until it is rebound to a
batched value; one made batched in a loop is batched from the start.  The rank of each lane is
tracked where it is known, so that lanes line up by plain indexing (``x[:, None]``).

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

from .. import runtime
from . import ir, ranks, versions
from .operations import is_namedtuple_call
from .lanes import lane_block  # noqa: F401  (re-exported)
from .vectorize_base import NotBatchable, OutAxesError
from .vectorize_calls import Calls
from .vectorize_containers import Containers, _container, is_none, shape_of
from .vectorize_control import Statements, annotate_live
from .vectorize_exprs import Expressions
from .vectorize_special import SpecialCalls


class Vectorize(Statements, Expressions, Containers, Calls, SpecialCalls):
    """One function batched.  The driver and the outputs are here; the rewrite of statements
    (vectorize_control), expressions (vectorize_exprs), containers of lanes
    (vectorize_containers) and calls (vectorize_calls, vectorize_special) are mixins."""

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
        self.inferred = {}   # name -> the rank ranks.py gives a lane of it

    # --- driver ----------------------------------------------------------------------------
    def run(self):
        initial = (set(self.batched), dict(self.rank))
        self.node, names = versions.split(self.fn.node, ir.names_in(self.fn.node) |
                                          set(self.fn.refs))
        if names:   # a name rebound at the top level: batched per binding
            self.fixpoint()
            keep = versions.merge(names, lambda v: (v in self.batched, shape_of(
                self.elems.get(v, self.known.get(v)))))
            self.node = versions.rename(self.node, keep)
            self.batched, self.rank = set(initial[0]), dict(initial[1])
            self.containers, self.elems, self.known, self.varies = set(), {}, {}, set()
            self.tape_rank, self.tape_elems, self.maybe = {}, {}, set()
        node = self.node
        # ranks.py's ranks of the lane's values where the batching rules know none (a number
        # taken from an array, carried through a loop): operands then line up without align_to
        params = {a.id for a in node.args.args}
        self.inferred = {n: r for n, (r, _) in ranks.ranks(node.body, {
            p: r for p, r in initial[1].items() if p in params and r is not None},
            self.fn.callee).items() if isinstance(r, int)}
        self.fixpoint()
        if self.lanes and self.maybe:   # Numba cannot type a value None in some runs
            raise NotBatchable(f"a value some lanes may not bind ({', '.join(sorted(self.maybe))}"
                               f", under an unbatched if): compiled lane by lane",
                               getattr(self.node, "loc", None))
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
        annotate_live(self.node.body, set())
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
        if is_namedtuple_call(self.fn, node):   # Layer(w, b) in a display: by its items
            return any(self.is_b(a) for a in node.args)
        return isinstance(node, gast.Name) and node.id in self.batched

    def rank_of(self, node):
        if isinstance(node, gast.Constant):
            return 0
        if isinstance(node, gast.Name):
            r = self.rank.get(node.id)
            return self.inferred.get(node.id) if r is None else r
        return None

    def set_name(self, name, batched, rank):
        if batched:
            self.batched.add(name)
        if name in self.rank and self.rank[name] != rank:
            self.rank[name] = None
        elif name not in self.rank:
            self.rank[name] = rank

    # --- outputs ---------------------------------------------------------------------------
    def returned(self, value):
        """The return value with each output's lanes where ``out_axes`` puts them (set by the
        caller in ``self.out_axes``: an int or None for every output, or a tuple, list or
        dict that is a prefix of the output's structure, as JAX takes it)."""
        return self.placed(value, self.out_axes)

    def placed(self, node, spec):
        if not isinstance(spec, (tuple, list, dict)):
            return self.out(node, spec)
        elems = self.elems_of(node)
        if elems is None or isinstance(spec, dict) != isinstance(elems, dict) or (
                set(spec) != set(elems) if isinstance(spec, dict) else len(spec) != len(elems)):
            raise NotBatchable(f"out_axes {spec!r} is not a prefix of the output's structure "
                               f"as vmap knows it", self.loc)
        parts = dict(enumerate(node.elts)) if isinstance(node, (gast.Tuple, gast.List)) else \
            {k.value: v for k, v in zip(node.keys, node.values)} if isinstance(
                node, gast.Dict) else {k: ir.subscript(node, ir.const(k)) for k in (
                    elems if isinstance(elems, dict) else range(len(elems)))}
        keys = list(spec) if isinstance(spec, dict) else range(len(spec))
        out = _container(elems, [parts[k] if is_none(parts[k]) else self.placed(
            parts[k], spec[k]) for k in keys])
        return gast.List(elts=out.elts, ctx=gast.Load()) if isinstance(node, gast.List) else out

    def out(self, node, axis):
        b = self.is_b(node) if isinstance(node, gast.Name) else any(
            self.is_b(n) for n in gast.walk(node) if isinstance(n, gast.Name))
        if axis is None:
            if b:
                raise OutAxesError(self.loc)
            return node
        if isinstance(node, gast.Name) and node.id in self.containers or \
                self.elems_of(node) is not None:
            if not (b and isinstance(node, gast.Subscript)):   # (a batched container's
                node = self.lanes_of(node)   # each element's lanes    element: lanes)
        elif isinstance(node, gast.Dict):
            raise NotBatchable("vmap returns a dict only where its keys are constants",
                               self.loc)
        else:
            node = self.bcast(node, b)
        if axis != 0:   # (of a container: of each element)
            node = ir.call(self.helper("out_axis"), [node, ir.const(axis)])
        return node


def vectorize(fn, batched, ranks, size_expr, out_axes, prologue=(), lanes=False):
    """``fn`` batched: see the module's docstring and Vectorize.__init__."""
    v = Vectorize(fn, batched, ranks, size_expr, prologue, lanes)
    v.out_axes = out_axes
    return v.run()
