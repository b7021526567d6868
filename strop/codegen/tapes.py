"""Tapes as preallocated arrays in compiled code.

The adjoint sweep's tapes are lists (``append`` going forward, ``pop`` going back). When a
tape gets exactly one number per iteration of a ``for i in range(n)`` loop, and the backward
sweep takes it back in ``for i in range(n - 1, -1, -1)``, it is an array of n numbers indexed
by ``i``: no list growth, and the loops vectorize like a hand-written adjoint.  Over any
other range (``range(1, n)``), an iteration that cannot end early pushes once and the
backward loop pops once per trip: the array is indexed by a count of the trips.

Tapes that stay lists and are pushed together and popped together (each trip's end pushes
the values the backward trip reads, its start pops them) are one list of tuples: one push and
one pop per trip instead of one per value (records_for_tapes).
"""
import copy

import gast

from .. import runtime
from ..transformer import ir
from ..transformer.rules.batching import is_member


def _is_range_up(loop):
    """``for i in range(n)`` or ``range(0, n)``."""
    args = loop.iter.args if _is_range(loop) else ()
    return len(args) == 1 or len(args) == 2 and isinstance(args[0], gast.Constant) and \
        args[0].value == 0


def _range_stop(loop):
    return loop.iter.args[-1]


def _is_range_down_of(loop, stop, defs):
    """``for i in range(stop - 1, -1, -1)`` (how reverse.py walks ``range(stop)`` back), the
    first bound maybe named in A-normal form (``_t9 = n - 1``, from ``defs``)."""
    it = loop.iter
    if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range"
            and len(it.args) == 3):
        return False
    first, end, step = it.args
    if isinstance(first, gast.Name) and first.id in defs:
        first = defs[first.id]
    minus_one = gast.BinOp(left=stop, op=gast.Sub(), right=gast.Constant(value=1, kind=None))
    same = gast.dump(first) == gast.dump(minus_one) or (
        isinstance(stop, gast.Constant) and isinstance(first, gast.Constant)
        and first.value == stop.value - 1)
    return same and all(isinstance(c, gast.Constant) and c.value == -1 for c in (end, step))


def _is_range(loop):
    it = loop.iter
    return isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range"


def _appends(stmts):
    """(statement, tape, value) of each ``tape.append(value)`` among ``stmts``."""
    return [(s, s.value.func.value.id, s.value.args[0].id) for s in stmts
            if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)
            and isinstance(s.value.func, gast.Attribute) and s.value.func.attr == "append"
            and isinstance(s.value.func.value, gast.Name) and len(s.value.args) == 1
            and isinstance(s.value.args[0], gast.Name)]


def _pops(stmts):
    """(statement, tape, target) of each ``target = tape.pop()`` among ``stmts``."""
    return [(s, s.value.func.value.id, s.targets[0].id) for s in stmts
            if isinstance(s, gast.Assign) and isinstance(s.value, gast.Call)
            and isinstance(s.value.func, gast.Attribute) and s.value.func.attr == "pop"
            and isinstance(s.value.func.value, gast.Name) and not s.value.args]


def _leaves_early(loop):
    """Whether an iteration may end before its last statement (its pushes would not run)."""
    return any(isinstance(n, (gast.Break, gast.Continue, gast.Return, gast.Raise))
               for s in loop.body for n in gast.walk(s))


def _writes(stmts, name):
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
               for s in stmts for n in gast.walk(s))


def _typed_before(before, value, params):
    """Whether ``value``, read before the loop to type its tape, surely has there the type it
    has in the loop: it is defined there (a value first made inside the loop is not), and not
    by an integer or a bool (``c = 1`` then ``c = c * x``: an integer tape would truncate)."""
    last = next((s for s in reversed(before) if value in _assigned(s)), None)
    if last is None:
        return value in params
    if not (isinstance(last, gast.Assign) and isinstance(last.targets[0], gast.Name)):
        return False
    v = last.value
    return not (isinstance(v, gast.Constant) and not isinstance(v.value, float)
                or isinstance(v, (gast.Compare, gast.BoolOp))
                or isinstance(v, gast.UnaryOp) and isinstance(v.op, gast.Not))


def _assigned(stmt):
    return {n.id for n in gast.walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def arrays_for_tapes(node, refs, scalars):
    """Rewrite list tapes of the numbers in ``scalars`` into arrays (see the module note)."""
    body = node.body
    helper = {n: o for n, o in refs.items() if n in runtime.__all__}
    tape_array = _helper(refs, helper, runtime.tape_array)

    params = {a.id for a in node.args.args}
    top = {s.targets[0].id: s for s in body if isinstance(s, gast.Assign)
           and isinstance(s.value, gast.List) and not s.value.elts}
    uses = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in top:
            uses[n.id] = uses.get(n.id, 0) + 1
    done = set()
    defs = {}
    for s in body:   # names assigned once at the top level, for the backward loops' bounds
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            defs[s.targets[0].id] = None if s.targets[0].id in defs else s.value
    defs = {k: v for k, v in defs.items() if v is not None}
    loops = [s for s in body if isinstance(s, gast.For)]
    put = _helper(refs, helper, runtime.tape_put)
    namer = ir.Namer(ir.names_in(node) | set(refs))

    def rewrite(fwd, back, index, size):
        """The tapes of numbers ``fwd`` pushes and ``back`` pops, as arrays of ``size`` read
        and written at ``index`` (a name); returns how many."""
        pushed = {t: (s, v) for s, t, v in _appends(fwd.body)}
        popped = {t: (s, v) for s, t, v in _pops(back.body)}
        n = 0
        for tape in sorted(set(pushed) & set(popped) & set(top) - done):
            (ps, value), (qs, target) = pushed[tape], popped[tape]
            # the tape's whole life: made at the top, one append, one pop, nothing else
            if value != target or value not in scalars or uses.get(tape) != 3 or \
                    not _typed_before(body[:body.index(fwd)], value, params):
                continue
            # tape_put(tape, i, v), not tape[i] = v: the tape is typed by the value before
            # the loop, and an integer there may be a float in the loop (s = n, then
            # s = s * x), which an assignment would truncate; tape_put refuses to compile
            new = gast.Expr(value=ir.call(put, [ir.name(tape), ir.name(index), ir.name(value)]))
            new.loc = getattr(ps, "loc", None)
            fwd.body[fwd.body.index(ps)] = new
            qs.value = gast.Subscript(value=ir.name(tape), slice=ir.name(index),
                                      ctx=gast.Load())
            alloc = top[tape]
            alloc.value = ir.call(tape_array, [copy.deepcopy(size), ir.name(value)])
            body.remove(alloc)              # allocated where n and the value are known
            body.insert(body.index(fwd), alloc)
            done.add(tape)
            n += 1
        return n

    for fwd in [s for s in loops if _is_range_up(s)]:   # by the loop's own index
        i, stop = fwd.target.id, _range_stop(fwd)
        if _writes(fwd.body, i) or (isinstance(stop, gast.Name) and _writes(fwd.body, stop.id)):
            continue
        for back in loops:
            if back.target.id == i and _is_range_down_of(back, stop, defs) and not _writes(
                    back.body, i):
                rewrite(fwd, back, i, stop)
    for fwd in [s for s in loops if _is_range(s) and not _leaves_early(s)]:
        # any other range: by a count of the trips, up going forward, down coming back
        k = namer.fresh("_trip")
        for back in loops[loops.index(fwd) + 1:]:
            if rewrite(fwd, back, k, ir.call("len", [copy.deepcopy(fwd.iter)])):
                body.insert(body.index(fwd), ir.assign(k, ir.const(0)))
                fwd.body.append(ir.assign(k, gast.BinOp(left=ir.name(k), op=gast.Add(),
                                                        right=ir.const(1))))
                back.body.insert(0, ir.assign(k, gast.BinOp(left=ir.name(k), op=gast.Sub(),
                                                            right=ir.const(1))))
                k = namer.fresh("_trip")   # another backward loop counts on its own
    if not done:
        for f in (runtime.tape_array, runtime.tape_put):
            if refs.get(f.__name__) is f and f.__name__ not in helper:
                del refs[f.__name__]      # bound for nothing: not in the module's imports
    return done


def _helper(refs, helper, f):
    """The name the module binds runtime helper ``f`` to, binding it if it has none."""
    name = next((n for n, o in helper.items() if o is f), None)
    if name is None:
        refs[f.__name__] = f
        name = f.__name__
    return name


# the arguments helpers read only for their shape and dtype (position, by helper)
SHAPE_ONLY = {runtime.unbroadcast: 1, runtime.expand_to: 1, runtime.getitem_vjp: 1,
              runtime.add_at_index: 2, runtime.add_at_index_inplace: 2,
              runtime.setitem_split: 2, runtime.setitem_split_inplace: 2,
              runtime.add_matmul_vjp_x: 2, runtime.add_matmul_vjp_x_inplace: 2,
              runtime.add_matmul_vjp_y: 3, runtime.add_matmul_vjp_y_inplace: 3,
              runtime.item_vjp: 2, runtime.zeros_like: 0, runtime.unbroadcast_lanes: 1,
              runtime.expand_to_lanes: 1, runtime.getitem_vjp_lanes: 1,
              runtime.unbroadcast_chain: 1, runtime.add_at_index_chain: 2,
              runtime.astype_like: 1}


def shapes_for_tapes(node, refs):
    """Tapes of arrays the adjoint reads only for their shape keep ``shape_like`` stand-ins,
    which hold no memory: the forward loop's arrays are freed as they go (a stencil's ten
    temporaries per step were all kept to the end).  A tape qualifies when every read of its
    value, from the first statement that pops it to the end of the function, is a shape-only
    argument (SHAPE_ONLY), and it is pushed only before that."""
    body = node.body
    shape_only = {n: SHAPE_ONLY[o] for n, o in refs.items() if is_member(o, SHAPE_ONLY)}
    pushes, pops = {}, {}
    for k, top in enumerate(body):   # (k: the top-level statement each is in)
        nested = list(_statements(top))
        for s, tape, _ in _appends(nested):
            pushes.setdefault(tape, []).append((k, s))
        for _, tape, target in _pops(nested):
            pops.setdefault(tape, []).append((k, target))
    done = set()
    for tape in sorted(set(pushes) & set(pops)):
        values = {s.value.args[0].id for _, s in pushes[tape]} | {v for _, v in pops[tape]}
        start = min(k for k, _ in pops[tape])
        if len(values) != 1 or max(k for k, _ in pushes[tape]) >= start:
            continue
        value = values.pop()
        if not all(_shape_read(n, parents, shape_only)
                   for top in body[start:] for n, parents in _reads(top, value)):
            continue
        helper = _helper(refs, {n: o for n, o in refs.items() if n in runtime.__all__},
                         runtime.shape_like)
        for _, s in pushes[tape]:
            s.value.args[0] = ir.call(helper, [ir.name(value)])
        done.add(tape)
    return done


def _statements(stmt):
    yield stmt
    for field in ("body", "orelse"):
        for s in getattr(stmt, field, None) or []:
            yield from _statements(s)


def _reads(node, name, parents=()):
    """(Name node, its parents) of each read of ``name`` in ``node``."""
    if isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, gast.Load):
        yield node, parents
    for child in gast.iter_child_nodes(node):
        yield from _reads(child, name, parents + (node,))


def _shape_read(n, parents, shape_only):
    call = parents[-1] if parents else None
    return (isinstance(call, gast.Call) and isinstance(call.func, gast.Name)
            and call.func.id in shape_only and n in call.args
            and call.args.index(n) == shape_only[call.func.id])


def kept_shapes(node, refs):
    """A tape of stand-ins (``shape_like(t)``, fused ``chain_like(...)``) keeps their shapes
    and dtypes, ``kept_shape(t)`` or ``kept_shape(chain_like(...))``, and each read of the
    popped value makes the stand-in again, ``unbroadcast(g, shaped(t_1))``: a view's record is
    six words, a shape one per axis, and a tape of tuples copies its records in and out each
    trip (Lorenz by RK4 taped 38 stand-ins a trip).  Only tapes made at the top, pushed once
    and popped once, whose popped name is bound nowhere else and read only for its shape
    (SHAPE_ONLY)."""
    helpers = {n: o for n, o in refs.items() if n in runtime.__all__}
    standins = {runtime.shape_like, runtime.chain_like}
    shape_only = {n: SHAPE_ONLY[o] for n, o in refs.items() if is_member(o, SHAPE_ONLY)}
    uses, binds = {}, {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name):
            uses[n.id] = uses.get(n.id, 0) + 1
            if isinstance(n.ctx, gast.Store):
                binds[n.id] = binds.get(n.id, 0) + 1
    pushes, pops = {}, {}
    for stmts in _statement_lists(node):
        for s, tape, value in _appends_of_any(stmts):
            pushes[tape] = value
        for _, tape, target in _pops(stmts):
            pops[tape] = target
    for tape in sorted(set(pushes) & set(pops)):
        value, target = pushes[tape], pops[tape]
        if uses.get(tape) != 3 or binds.get(target) != 1 or not (
                isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
                and helpers.get(value.func.id) in standins):
            continue
        reads = list(_reads(node, target))
        if not all(_shape_read(n, parents, shape_only) for n, parents in reads):
            continue
        if helpers[value.func.id] is runtime.chain_like:
            value.args = [copy.copy(value)]
        value.func = ir.name(_helper(refs, helpers, runtime.kept_shape))
        shaped = _helper(refs, helpers, runtime.shaped)
        for n, parents in reads:
            call = parents[-1]
            call.args[call.args.index(n)] = ir.call(shaped, [n])


def records_for_tapes(node):
    """Lists tapes pushed by statements of one statement list and popped by statements of
    another become one tape of tuples: ``_tape_a.append(a)``, ``_tape_b.append(shape_like(b))``
    then ``b = _tape_b.pop()``, ``a = _tape_a.pop()`` are ``_tape_trip.append((a,
    shape_like(b)))`` then ``[a, b] = _tape_trip.pop()``.  A list's push and pop each cost
    more than copying a number into a tuple (Lorenz by RK4 taped 73 values a trip), and tapes
    pushed and popped together always hold as many entries, so their tuples pair up.  Only
    tapes made at the top (``[]``), pushed once and popped once, nothing else; the pushes
    move to the last of them, the pops to the first, where nothing between reads or writes
    what they move.  Returns the new tapes' names."""
    body = node.body
    top = {s.targets[0].id: s for s in body if isinstance(s, gast.Assign) and isinstance(
        s.targets[0], gast.Name) and isinstance(s.value, gast.List) and not s.value.elts}
    uses = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in top:
            uses[n.id] = uses.get(n.id, 0) + 1
    pushes, pops = {}, {}   # tape -> (the statement list, the statement)
    for stmts in _statement_lists(node):
        for s, tape, _ in _appends_of_any(stmts):
            pushes[tape] = (stmts, s)
        for s, tape, _ in _pops(stmts):
            pops[tape] = (stmts, s)
    groups = {}
    for tape in sorted(set(pushes) & set(pops)):
        if uses.get(tape) == 3:
            groups.setdefault((id(pushes[tape][0]), id(pops[tape][0])), []).append(tape)
    namer = ir.Namer(ir.names_in(node))
    made = []
    for tapes in groups.values():
        if len(tapes) < 2:
            continue
        fwd, back = pushes[tapes[0]][0], pops[tapes[0]][0]
        tapes = sorted(tapes, key=lambda t: fwd.index(pushes[t][1]))
        while len(tapes) >= 2:   # the earliest pushes dropped until the rest can move together
            pushed = [pushes[t][1] for t in tapes]   # (a carried value is pushed before the
            popped = sorted((pops[t][1] for t in tapes), key=back.index)
            if _movable(fwd, pushed) and _movable(back, popped):   # statement overwriting it,
                break                                               # not at the trip's end)
            tapes = tapes[1:]
        if len(tapes) < 2:
            continue
        record = namer.fresh("_tape_trip")
        push = gast.Expr(value=ir.call(ir.attr(record, "append"), [gast.Tuple(
            elts=[s.value.args[0] for s in pushed], ctx=gast.Load())]))
        push.loc = getattr(pushed[-1], "loc", None)
        fwd[fwd.index(pushed[-1])] = push
        for s in pushed[:-1]:
            fwd.remove(s)
        # ([...] = : a target in brackets, which the emitter can break over lines)
        pop = gast.Assign(targets=[gast.List(elts=[ir.name(s.targets[0].id, store=True)
                                                   for s in popped], ctx=gast.Store())],
                          value=ir.call(ir.attr(record, "pop"), []), type_comment=None)
        pop.loc = getattr(popped[0], "loc", None)
        back[back.index(popped[0])] = pop
        for s in popped[1:]:
            back.remove(s)
        allocs = sorted((top[t] for t in tapes), key=body.index)
        body[body.index(allocs[0])] = ir.assign(
            record, gast.List(elts=[], ctx=gast.Load()), getattr(allocs[0], "loc", None))
        for s in allocs[1:]:
            body.remove(s)
        made.append(record)
    return made


def _statement_lists(stmt):
    for field in ("body", "orelse"):
        stmts = getattr(stmt, field, None)
        if isinstance(stmts, list):
            yield stmts
            for s in stmts:
                yield from _statement_lists(s)


def _appends_of_any(stmts):
    """(statement, tape, value) of each ``tape.append(value)``, the value any expression."""
    return [(s, s.value.func.value.id, s.value.args[0]) for s in stmts
            if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)
            and isinstance(s.value.func, gast.Attribute) and s.value.func.attr == "append"
            and isinstance(s.value.func.value, gast.Name) and len(s.value.args) == 1]


def _movable(stmts, moved):
    """Whether the statements ``moved`` (of ``stmts``, in order) can all run where the last
    or the first of them is: nothing between them writes what they read, or reads or writes
    what they write."""
    at = [stmts.index(s) for s in moved]
    between = [s for s in stmts[at[0]:at[-1] + 1] if not any(s is m for m in moved)]
    reads = set().union(*(ir.names_in(s, gast.Load) for s in moved))
    writes = set().union(*(ir.names_in(s, gast.Store) for s in moved))
    for s in between:
        if ir.names_in(s, gast.Store) & (reads | writes) or ir.names_in(s, gast.Load) & writes:
            return False
    return True
