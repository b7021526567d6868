"""In-place updates in compiled code: ``x = at_set(x, i, v)`` writes into ``x`` itself when no
other name can see ``x``'s old value (JAX does the same for dead inputs under jit).

An array is owned when every value the name gets is new (a NumPy result, an arithmetic
result, an update of another array, or a donated argument) and the name's value never goes
anywhere else: no copy to another name, no view (slices, ``.T``, ``reshape``), no tape, no
container.  Only then is the old value dead at each update, so updating in place is safe.
"""
import gast
import numpy as np

from .. import runtime
from ..runtime.sums import NUMPY_OF
from ..transformer import ir
from ..transformer.ir import Namer, names_in
from ..transformer.rules.batching import is_member
from .cpu import callee_of
from .fuse import OPERATORS, TEMP
from .tapes import SHAPE_ONLY

INPLACE = {runtime.at_set: "at_set_inplace", runtime.at_add: "at_add_inplace",
           runtime.at_multiply: "at_multiply_inplace", runtime.at_min: "at_min_inplace",
           runtime.at_max: "at_max_inplace", runtime.setitem: "setitem_inplace"}
# NumPy functions whose result may share memory with their first argument
VIEWS = {np.asarray, np.reshape, np.ravel, np.transpose, np.squeeze, np.expand_dims,
         np.broadcast_to, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.diagonal,
         np.swapaxes, np.moveaxis, np.asanyarray, np.ascontiguousarray, np.real, np.imag}
SHAPE_ONLY_ATTRIBUTES = {"shape", "ndim", "dtype", "size"}


def make_inplace(node, refs, donated=()):
    """Rewrite owned updates of ``node`` (a lowered FunctionDef) in place; returns the names."""
    params = [a.id for a in node.args.args]

    def callee(call):
        return callee_of(call, refs)

    def fresh(value, target):
        if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare)):
            return True
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
                value.func.attr == "copy" and not value.args and isinstance(
                    value.func.value, gast.Name) and refs.get(value.func.value.id) is None:
            return True    # x.copy() of a local array
        if isinstance(value, gast.Call):
            fn = callee(value)
            if fn in INPLACE:
                return True
            fn = NUMPY_OF.get(fn, fn)   # (a whole-array sum's stub: as new as np.sum's)
            module = getattr(fn, "__module__", "") or ""
            return (isinstance(fn, np.ufunc) or module.startswith("numpy")) and fn not in VIEWS
        return False

    _private_loops(node, {a.value.args[0].id for a in gast.walk(node) if isinstance(
        a, gast.Assign) and isinstance(a.value, gast.Call) and callee(a.value) in INPLACE
        and a.value.args and isinstance(a.value.args[0], gast.Name)})
    updates = _accumulations(node, refs) + _products(node, refs) + _splits(node, refs)
    candidates = {p for i, p in enumerate(params) if i in donated}
    assigns = [n for n in gast.walk(node) if isinstance(n, gast.Assign)
               and isinstance(n.targets[0], gast.Name)]
    for a in assigns:
        candidates.add(a.targets[0].id)
    for a in assigns:
        t = a.targets[0].id
        if not fresh(a.value, t):
            candidates.discard(t)
    candidates -= {p for i, p in enumerate(params) if i not in donated}
    simple = {id(a.targets[0]) for a in assigns}
    stores = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
            if id(n) not in simple:      # a loop's target, a tuple unpacked, ...
                candidates.discard(n.id)

    loads = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            loads[n.id] = loads.get(n.id, 0) + 1
    in_loop = {id(n) for loop in gast.walk(node) if isinstance(loop, (gast.For, gast.While))
               for n in gast.walk(loop)}

    def updates_in_place(a):
        """``x = upd(x, ...)``, or ``t = upd(x, ...)`` where this is x's only read."""
        if not (isinstance(a.value, gast.Call) and callee(a.value) in INPLACE and a.value.args
                and isinstance(a.value.args[0], gast.Name)):
            return False
        x = a.value.args[0].id
        return x == a.targets[0].id or (loads.get(x) == 1 and id(a) not in in_loop)

    # where a name is read without escaping: an update of itself, arithmetic, a NumPy call
    # that makes a new array, its shape, or the value returned
    safe, shape_reads = set(), set()
    for n in gast.walk(node):
        if isinstance(n, gast.Assign) and updates_in_place(n):
            safe.add(id(n.value.args[0]))
        if isinstance(n, (gast.BinOp, gast.UnaryOp, gast.Compare)):
            safe.update(id(c) for c in gast.iter_child_nodes(n) if isinstance(c, gast.Name))
        if isinstance(n, gast.Call) and fresh(n, None) and callee(n) not in INPLACE:
            safe.update(id(a) for a in n.args if isinstance(a, gast.Name))
        if isinstance(n, gast.Call) and is_member(callee(n), OWNED):   # read into the first
            first = 0 if callee(n) in PRODUCTS else 1     # argument (updated), or a new array
            safe.update(id(a) for a in n.args[first:] if isinstance(a, gast.Name))
        if isinstance(n, gast.Return) and isinstance(n.value, gast.Name):
            safe.add(id(n.value))
        if isinstance(n, gast.Attribute) and n.attr in SHAPE_ONLY_ATTRIBUTES or isinstance(
                n, gast.Call) and callee(n) is runtime.shape_like:
            shape_reads.update(id(a) for a in gast.iter_child_nodes(n)
                               if isinstance(a, gast.Name))
        if isinstance(n, gast.Call) and is_member(callee(n), SHAPE_ONLY) and \
                len(n.args) > SHAPE_ONLY[callee(n)]:   # (a helper's shape-only argument)
            shape_reads.add(id(n.args[SHAPE_ONLY[callee(n)]]))
    safe |= shape_reads
    consumed = set(safe)   # read into a new value (not moved to another name)
    moves = _moves(node.body) | _handovers(node)
    safe |= moves | _after_last_binding(node.body)
    safe |= _dead_views(node, lambda a: updates_in_place(a) and a.value.args[0].id ==
                        a.targets[0].id, callee, consumed, shape_reads)
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in safe:
            candidates.discard(n.id)

    done = set()
    for a in assigns:
        if updates_in_place(a) and a.value.args[0].id in candidates:
            t = a.value.args[0].id
            name = INPLACE[callee(a.value)]
            refs.setdefault(name, getattr(runtime, name))
            a.value.func = gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                     type_comment=None)
            done.add(t)
    single = {n.targets[0].id: n.value for n in assigns if stores.get(n.targets[0].id) == 1}

    def makes_new(v, depth=0):
        if fresh(v, None) or isinstance(v, gast.Call) and is_member(callee(v), OWNED):
            return True
        # unbroadcast(t, x) or narrow(t) (the 64-bit policy) of a new array t read only
        # there: t itself, or a new sum or copy
        return isinstance(v, gast.Call) and callee(v) in PASS_THROUGH \
            and v.args and \
            isinstance(v.args[0], gast.Name) and loads.get(v.args[0].id) == 1 and \
            v.args[0].id in single and depth < 8 and makes_new(single[v.args[0].id], depth + 1)

    owned = Owned(node, refs, makes_new, consumed, moves, loads)
    for s in updates:
        if owned.at(s):
            s.value.func.id = _helper(refs, IN_PLACE[refs[s.value.func.id]])
            done.add(_target(s))
    for s, t in _sums(node, loads, stores):
        if owned.at(s):
            s.value = ir.call(_helper(refs, runtime.plus_inplace), [ir.name(_target(s)),
                                                                   ir.name(t)])
            done.add(_target(s))
    _kept_splits(node, refs)
    return done


def _kept_splits(node, refs):
    """``acc, t = setitem_split_inplace(acc, i, v); ...; a = t; ...; acc =
    add_at_index_inplace(acc, a, x, i)`` (the derivative of ``u[i] = u[i] + ...``: the part
    zeroed, then its cotangent added back; nothing between reads ``acc`` or rebinds ``t``,
    ``a`` or ``i``) become one ``acc, t = setitem_split_kept(acc, i, v, x)``, which leaves the
    part as it is where ``v`` fills it (two passes over the part fewer)."""
    stores = _counts(node, gast.Store)
    defs = {n.targets[0].id: n.value for n in gast.walk(node) if isinstance(n, gast.Assign)
            and isinstance(n.targets[0], gast.Name) and stores.get(n.targets[0].id) == 1}
    split, back = runtime.setitem_split_inplace, runtime.add_at_index_inplace
    for block in _blocks(node):
        for j, s in enumerate(block):
            if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Tuple) and
                    _call_of(s.value, refs) is split and len(s.value.args) == 3):
                continue
            acc, t = (e.id for e in s.targets[0].elts)
            idx = s.value.args[1].id
            names = {t}       # t and the names it is moved to
            bound = set()     # names bound since (x, read at the split, must not be one)
            for k in range(j + 1, len(block)):
                b = block[k]
                if isinstance(b, gast.Assign) and isinstance(b.targets[0], gast.Name) and \
                        isinstance(b.value, gast.Name) and b.value.id in names and \
                        stores.get(b.targets[0].id) == 1:
                    names.add(b.targets[0].id)
                    continue
                v = b.value if isinstance(b, gast.Assign) and \
                    isinstance(b.targets[0], gast.Name) else None
                if _call_of(v, refs) is back and len(v.args) == 4 and \
                        b.targets[0].id == acc and v.args[0].id == acc and \
                        v.args[1].id in names and v.args[2].id not in bound and \
                        _same_value(v.args[3].id, idx, defs):
                    s.value = ir.call(_helper(refs, runtime.setitem_split_kept),
                                      [*s.value.args, v.args[2]])
                    block[k] = gast.Pass()
                    break
                if acc in names_in(b) or ({idx} | names) & names_in(b, gast.Store):
                    break
                bound |= names_in(b, gast.Store)
    _drop_passes(node)


def _same_value(a, b, defs):
    """Two names of one index: one name, or two bound once each to one constant expression."""
    return a == b or a in defs and b in defs and not names_in(defs[a]) - {"slice"} and \
        gast.dump(defs[a]) == gast.dump(defs[b])


# helpers whose result is a new array (or what they were given when that is not an array),
# and the updates made in place once their first argument is owned
IN_PLACE = {runtime.add_at_index: runtime.add_at_index_inplace,
            runtime.setitem_split: runtime.setitem_split_inplace,
            runtime.add_matmul_vjp_x: runtime.add_matmul_vjp_x_inplace,
            runtime.add_matmul_vjp_y: runtime.add_matmul_vjp_y_inplace}
OWNED = {runtime.setitem_vjp, runtime.getitem_vjp, runtime.zeros_like, runtime.matmul,
         runtime.matmul_vjp_x, runtime.matmul_vjp_y, runtime.plus_inplace, *IN_PLACE,
         *IN_PLACE.values()}
# helpers whose result is a new array made from all of their arguments
PRODUCTS = (runtime.matmul, runtime.matmul_vjp_x, runtime.matmul_vjp_y)
# helpers returning their first argument where it already fits, else a new array
PASS_THROUGH = (runtime.unbroadcast, runtime.narrow)


def _helper(refs, fn):
    name = fn.__name__
    refs.setdefault(name, fn)
    return name


def _target(s):
    t = s.targets[0]
    return (t.elts[0] if isinstance(t, gast.Tuple) else t).id


def _calls(node, refs, fn, constants=False):
    """``(block, position, call)`` of each ``name = fn(names...)`` statement (``constants``:
    its arguments may be constants too: ``getitem_vjp(g, s, 2)``)."""
    helpers = {n: o for n, o in refs.items() if n in runtime.__all__}
    taken = (gast.Name, gast.Constant) if constants else gast.Name
    for block in _blocks(node):
        for k, s in enumerate(block):
            v = s.value if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name) else None
            if isinstance(v, gast.Call) and isinstance(v.func, gast.Name) and \
                    helpers.get(v.func.id) is fn and not v.keywords and all(
                        isinstance(a, taken) for a in v.args):
                yield block, k, v


def _counts(node, ctx):
    out = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, ctx):
            out[n.id] = out.get(n.id, 0) + 1
    return out


def _accumulations(node, refs):
    """``t = getitem_vjp(g, x, i)`` then ``acc = add(acc, t)`` (or ``acc + t``), ``t`` read
    nowhere else, become ``acc = add_at_index(acc, g, x, i)`` (where nothing the first reads
    is rebound between): a cotangent of ``x[i]`` goes into ``acc`` without a zero array the
    size of ``x``.  Returns the statements made, for Owned.at to judge."""
    loads = _counts(node, gast.Load)
    vjps = {(id(b), b[k].targets[0].id): (k, v)
            for b, k, v in _calls(node, refs, runtime.getitem_vjp, constants=True)}
    found = []
    sums = [(block, j) for block in _blocks(node) for j, s in enumerate(block)
            if _summands(s, refs) is not None]
    for block, j in sums:
        s = block[j]
        names, acc = _summands(s, refs), s.targets[0].id
        if acc not in names or names[0] == names[1]:
            continue
        t = names[1 - names.index(acc)]
        i, vjp = vjps.get((id(block), t), (None, None))
        if vjp is None or i > j or loads.get(t) != 1 or len(vjp.args) != 3 or any(
                (names_in(vjp) | {acc}) & names_in(b, gast.Store) for b in block[i + 1:j]):
            continue
        s.value = ir.call(_helper(refs, runtime.add_at_index), [ir.name(acc), *vjp.args])
        block[i] = gast.Pass()
        found.append(s)
    _drop_passes(node)
    return found


# matmul_vjp_x/y, the operand whose cotangent it gives, and the helper adding it into a sum
_PRODUCT_VJPS = {runtime.matmul_vjp_x: (1, runtime.add_matmul_vjp_x),
                 runtime.matmul_vjp_y: (2, runtime.add_matmul_vjp_y)}


def _products(node, refs):
    """``t = matmul_vjp_x(g, x, y); u = unbroadcast(t, x); acc = acc + u`` (``t`` and ``u``
    read nowhere else, nothing the first reads rebound between; the unbroadcast absent where
    reverse mode proved it does nothing) become ``acc = add_matmul_vjp_x(acc, g, x, y)`` (and
    likewise for y): a cotangent of an operand of ``@`` goes into ``acc`` with no array of its
    own.  Returns the statements made."""
    loads, stores = _counts(node, gast.Load), _counts(node, gast.Store)
    found = []
    for block in _blocks(node):
        defs = {s.targets[0].id: k for k, s in enumerate(block) if isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name) and stores.get(s.targets[0].id) == 1
                and loads.get(s.targets[0].id) == 1}
        for j, s in enumerate(block):
            names = _summands(s, refs)
            if names is None or s.targets[0].id not in names or names[0] == names[1]:
                continue
            acc = s.targets[0].id
            k2 = defs.get(names[1 - names.index(acc)])
            unb = block[k2].value if k2 is not None and k2 < j else None
            if _call_of(unb, refs) is runtime.unbroadcast and len(unb.args) == 2:
                k1 = defs.get(unb.args[0].id)
            else:
                k1, k2, unb = k2, None, None
            vjp = block[k1].value if k1 is not None and k1 < (j if k2 is None else k2) \
                else None
            if _call_of(vjp, refs) not in _PRODUCT_VJPS or len(vjp.args) != 3:
                continue
            operand, helper = _PRODUCT_VJPS[_call_of(vjp, refs)]
            read = {a.id for a in vjp.args} | {acc}
            if unb is not None and vjp.args[operand].id != unb.args[1].id or any(
                    read & names_in(b, gast.Store) for b in block[k1 + 1:j]):
                continue
            s.value = ir.call(_helper(refs, helper), [ir.name(acc), *vjp.args])
            block[k1] = gast.Pass()
            if k2 is not None:
                block[k2] = gast.Pass()
            found.append(s)
    _drop_passes(node)
    return found


def _sums(node, loads, stores):
    """``(statement, t)`` of each ``acc = acc + t`` (or ``t + acc``; two names) whose ``t`` is
    not a temporary fuse.py would write into the sum (made by one operator, read once there):
    for an owned ``acc``, ``plus_inplace`` adds into its array, where ``+`` makes one."""
    defs = {n.targets[0].id: n.value for n in gast.walk(node) if isinstance(n, gast.Assign)
            and isinstance(n.targets[0], gast.Name) and stores.get(n.targets[0].id) == 1}
    for s in gast.walk(node):
        v = s.value if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
            isinstance(s.targets[0], gast.Name) else None
        if not (isinstance(v, gast.BinOp) and isinstance(v.op, gast.Add) and
                isinstance(v.left, gast.Name) and isinstance(v.right, gast.Name)):
            continue
        acc, names = s.targets[0].id, [v.left.id, v.right.id]
        if acc not in names or names[0] == names[1]:
            continue
        t = names[1 - names.index(acc)]
        if TEMP.match(t) and loads.get(t) == 1 and isinstance(defs.get(t), OPERATORS):
            continue
        yield s, t


def _call_of(value, refs):
    """The runtime helper ``value`` calls with names only (``helper(a, b)``), or None."""
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
            value.func.id in runtime.__all__ and not value.keywords and \
            all(isinstance(a, gast.Name) for a in value.args):
        return refs.get(value.func.id)
    return None


def _summands(s, refs):
    """The two names ``s`` adds (``n = a + b`` or ``n = add(a, b)``), or None."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)):
        return None
    v = s.value
    if isinstance(v, gast.BinOp) and isinstance(v.op, gast.Add) and all(
            isinstance(o, gast.Name) for o in (v.left, v.right)):
        return [v.left.id, v.right.id]
    if _call_of(v, refs) is runtime.add and len(v.args) == 2:
        return [a.id for a in v.args]
    return None


def _splits(node, refs):
    """``g = acc; ...; acc = setitem_vjp(g, i); ...; t = item_vjp(g, i, v)`` (g read nowhere else,
    the two indices the same value, nothing the last reads rebound between) become
    ``acc, t = setitem_split(acc, i, v)``: the derivative of ``x[i] = v``, whose container's
    cotangent can then be zeroed at ``i`` in place.  Returns the statements made."""
    loads, stores = _counts(node, gast.Load), _counts(node, gast.Store)
    defs = {n.targets[0].id: n.value for n in gast.walk(node) if isinstance(n, gast.Assign)
            and isinstance(n.targets[0], gast.Name) and stores.get(n.targets[0].id) == 1}

    def same(a, b):     # two names of one value: one name, or one expression bound once each
        return a == b or a in defs and b in defs and not names_in(defs[a]) - {"slice"} and \
            gast.dump(defs[a]) == gast.dump(defs[b])

    items = {(id(b), v.args[0].id): (k, v) for b, k, v in _calls(node, refs, runtime.item_vjp)
             if len(v.args) == 3}
    found = []
    for block, j, zeroed in list(_calls(node, refs, runtime.setitem_vjp)):
        if len(zeroed.args) != 2:
            continue
        s = block[j]
        g, idx = (a.id for a in zeroed.args)
        acc = s.targets[0].id
        m = next((m for m in range(j - 1, -1, -1) if g in names_in(block[m], gast.Store)), None)
        move = block[m] if m is not None else None
        if not (isinstance(move, gast.Assign) and isinstance(move.value, gast.Name)
                and move.value.id == acc and loads.get(g) == 2 and stores.get(g) == 1
                and not any({g, acc} & names_in(b) for b in block[m + 1:j])):
            continue
        k, item = items.get((id(block), g), (None, None))
        if item is None or k < j or not same(item.args[1].id, idx) or any(
                {item.args[2].id, g} & names_in(b, gast.Store)
                or block[k].targets[0].id in names_in(b) for b in block[j + 1:k]):
            continue    # (the item's cotangent is made at j: its name untouched until k)
        s.targets = [gast.Tuple(elts=[ir.name(acc, store=True),
                                      ir.name(block[k].targets[0].id, store=True)],
                                ctx=gast.Store())]
        s.value = ir.call(_helper(refs, runtime.setitem_split),
                          [ir.name(acc), ir.name(idx), item.args[2]])
        block[m] = block[k] = gast.Pass()
        found.append(s)
    _drop_passes(node)
    return found


def _drop_passes(node):
    for block in _blocks(node):
        block[:] = [s for s in block if not isinstance(s, gast.Pass)] or [gast.Pass()]


class Owned:
    """Whether a name holds an array no other name sees, where an update of it runs: the
    binding that reaches there makes a new array (``makes_new``), and every read of the name
    since is into a new value (``consumed``).  Flow-sensitive within a block; through the
    blocks that hold it (an ``if``'s, a loop's), a loop's value also coming round from the end
    of its body."""

    def __init__(self, node, refs, makes_new, consumed, moves, loads):
        self.refs, self.makes_new, self.consumed, self.moves = refs, makes_new, consumed, moves
        self.loads = loads
        self.where = {}      # id(statement) -> (block, position)
        self.parent = {}     # id(block) -> (statement holding it, its block)
        for block in _blocks(node):
            for k, s in enumerate(block):
                self.where[id(s)] = (block, k)
                for field in ("body", "orelse"):
                    inner = getattr(s, field, None)
                    if isinstance(inner, list):
                        self.parent[id(inner)] = (s, block)

    def at(self, s):
        block, k = self.where[id(s)]
        return self.before(_target(s), block, k)

    def before(self, name, block, k):
        """Whether ``name`` is owned when ``block[k]`` starts."""
        for b in reversed(block[:k]):
            if name in names_in(b, gast.Store):
                return self.binds_new(b, name, k)
            if self.seen(name, b):
                return False
        holder, outer = self.parent.get(id(block), (None, None))
        if holder is None:
            return False       # the function's body: an argument's array is the caller's
        header = [holder.test] if isinstance(holder, (gast.If, gast.While)) else [holder.iter]
        if any(self.seen(name, h) for h in header):
            return False
        if isinstance(holder, (gast.For, gast.While)) and block is holder.body:
            for b in reversed(block):     # what the previous trip leaves
                if name in names_in(b, gast.Store):
                    if not self.binds_new(b, name):
                        return False
                    break
                if self.seen(name, b):
                    return False
        return self.before(name, outer, self.where[id(holder)][1])

    def binds_new(self, s, name, upto=None):
        """Whether ``s`` binds ``name`` to an array nothing else holds by ``upto`` (a later
        position in s's block, where the update runs; None: s's own reads only)."""
        if not (isinstance(s, gast.Assign) and _target(s) == name):
            return False
        if id(s.value) in self.moves:
            block, k = self.where[id(s)]      # b = a, a's array handed over: a's array moves
            return self.before(s.value.id, block, k)
        if not (len(s.targets) == 1 and (
                isinstance(s.targets[0], gast.Name) or isinstance(s.targets[0], gast.Tuple)
                and isinstance(s.value, gast.Call) and s.targets[0].elts
                and isinstance(s.targets[0].elts[0], gast.Name))):
            return False
        return self.makes_new(s.value) or self._passed_through(s, upto)

    def _passed_through(self, s, upto):
        """``name = unbroadcast(t, x)`` (t itself where it fits), ``t`` owned before and not
        read after ``upto`` but into new values: the loop's ``_g = bx; bx = unbroadcast(_g,
        x); d = -_g; bx = bx + ...``."""
        v = s.value
        if not (isinstance(v, gast.Call) and callee_of(v, self.refs) in PASS_THROUGH
                and v.args and isinstance(v.args[0], gast.Name)):
            return False
        t = v.args[0].id
        block, k = self.where[id(s)]
        between = block[k + 1:upto] if upto is not None else []
        reads = [n for b in between for n in gast.walk(b) if isinstance(n, gast.Name)
                 and n.id == t and isinstance(n.ctx, gast.Load)]
        if self.loads.get(t) != 1 + len(reads) or any(
                id(n) not in self.consumed and not self._dead_alias(n, between) for n in reads):
            return False
        return not any(t in names_in(b, gast.Store) for b in between) and \
            self.before(t, block, k)

    def _dead_alias(self, n, between):
        """Whether read ``n`` passes its value on to another name (``u = unbroadcast(t, x)``,
        one of ``between``) read only after that among ``between``, into new values: Kalman's
        ``_g5 = bm; bm = unbroadcast(_g5, m); _bt25 = unbroadcast(_g5, ...)``, _bt25 read into
        products before bm is updated."""
        for j, b in enumerate(between):
            if isinstance(b, gast.Assign) and len(b.targets) == 1 and isinstance(
                    b.targets[0], gast.Name) and isinstance(b.value, gast.Call) and callee_of(
                    b.value, self.refs) in PASS_THROUGH and b.value.args and b.value.args[0] is n:
                u, rest = b.targets[0].id, between[j + 1:]
                reads = [m for c in rest for m in gast.walk(c) if isinstance(m, gast.Name)
                         and m.id == u and isinstance(m.ctx, gast.Load)]
                return self.loads.get(u) == len(reads) and all(
                    id(m) in self.consumed for m in reads) and not any(
                    u in names_in(c, gast.Store) for c in rest)
        return False

    def seen(self, name, node):
        """Whether ``node`` reads ``name`` other than into a new value."""
        return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
                   and id(n) not in self.consumed for n in gast.walk(node))


def _dead_views(node, is_update, callee, consumed, shape_reads):
    """The reads of ``x`` in ``v = x[...]`` (or another view of x) whose view is dead at the
    next update of x in place in the same block: ``v`` is bound only there, and read only
    between there and the update, into new values (``consumed``: never moved to another
    name; the update itself excluded: NumPy copies an overlapping right-hand side, an update
    in place would not), or for its shape (``shape_reads``).  A
    stencil's ``u[2:] - 2 * u[1:-1] + u[:-2]`` then ``u[1:-1] = ...`` updates u in place."""
    stores, out = {}, set()
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
    for block in _blocks(node):
        for k, u in enumerate(block):
            if not (isinstance(u, gast.Assign) and is_update(u)):
                continue
            x = u.targets[0].id
            for i in range(k):
                s = block[i]
                view = _view_of(s, x, callee)
                if view is None or stores.get(s.targets[0].id) != 1:
                    continue
                v = s.targets[0].id
                between = {id(n) for t in block[i + 1:k] for n in gast.walk(t)}
                if all(id(n) in between and id(n) in consumed or id(n) in shape_reads
                       for n in gast.walk(node)
                       if isinstance(n, gast.Name) and n.id == v and isinstance(
                           n.ctx, gast.Load)):
                    out.add(id(view))
    return out


def _blocks(node):
    """Every list of statements in function ``node``: its body, and each nested body."""
    yield node.body
    for n in gast.walk(node):
        for field in ("body", "orelse"):
            if n is not node and isinstance(getattr(n, field, None), list) and isinstance(
                    n, gast.stmt):
                yield getattr(n, field)


def _view_of(s, x, callee):
    """The Name ``x`` read in ``s`` if ``s`` is ``v = x[...]`` or ``v = <a view of x>``."""
    if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
        return None
    v = s.value
    if isinstance(v, gast.Subscript) and isinstance(v.value, gast.Name) and v.value.id == x:
        return v.value
    if isinstance(v, gast.Call) and callee(v) in VIEWS and v.args and isinstance(
            v.args[0], gast.Name) and v.args[0].id == x:
        return v.args[0]
    return None


def _moves(body):
    """The reads of ``a`` in ``b = a`` statements of the function's top level that are the
    last mention of ``a``: the array moves to ``b`` (strop.lax.scan's ys, filled in place in
    the loop, then given the user's name), so updating ``a`` in place before is safe."""
    last = {}
    for i, s in enumerate(body):
        for n in names_in(s):
            last[n] = i
    return {id(s.value) for i, s in enumerate(body) if isinstance(s, gast.Assign)
            and isinstance(s.value, gast.Name) and last.get(s.value.id) == i}


def _handovers(node):
    """The reads of ``a`` in ``b = a`` statements of any block after which ``a`` is bound
    again in that block, with nothing but plain statements between and no read of ``a``
    there: ``a``'s array moves to ``b`` (reverse mode's ``_g = bx; x = pop(); bx =
    unbroadcast(_g, x)`` at the top of a loop's trip)."""
    out = set()
    for block in _blocks(node):
        for i, s in enumerate(block):
            if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and
                    isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Name)):
                continue
            a = s.value.id
            for b in block[i + 1:] if a != s.targets[0].id else ():
                if not isinstance(b, (gast.Assign, gast.Expr)) or a in names_in(b, gast.Load):
                    break
                if a in names_in(b, gast.Store):
                    out.add(id(s.value))
                    break
    return out


def _after_last_binding(body):
    """The reads of a name in statements of the function's top level after the last one that
    binds it: no update in place can follow them, so what they keep (a view, a cotangent
    sharing its memory) never changes under them (scan's adjoint reads its stacked cotangent
    once more after the loop that zeroes it in place)."""
    last = {}
    for i, s in enumerate(body):
        for n in names_in(s, gast.Store):
            last[n] = i
    return {id(n) for i, s in enumerate(body) for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
            and i > last.get(n.id, len(body))}


def _private_loops(node, updated):
    """Give a name its own name inside a loop of the function's top level that binds it afresh
    on every trip before any read and leaves it unread after: the loop's value and the rest of
    the function's are then two arrays, each judged owned on its own.  The derivative's
    backward loop restores the forward loop's names from their tapes (``u = pop(_tape_u)``,
    ``_t1 = pop(_tape_t1)`` for a view ``_t1 = u[2:]``), which alone kept the forward loop's
    ``u`` from being updated in place.  Only arrays updated somewhere (``updated``), their
    views and temporaries are renamed (``name_1``)."""
    namer = Namer(names_in(node))
    views = {a.targets[0].id for a in gast.walk(node) if isinstance(a, gast.Assign)
             and isinstance(a.targets[0], gast.Name) and names_in(a.value) & updated}
    body = node.body
    for i, loop in enumerate(body):
        if not isinstance(loop, (gast.For, gast.While)):
            continue
        keep = set().union(
            *(names_in(s, gast.Load) for s in body[i + 1:]), *map(names_in, loop.orelse),
            names_in(loop.target) | names_in(loop.iter) if isinstance(loop, gast.For)
            else names_in(loop.test))
        earlier = set().union(*(names_in(s, gast.Store) for s in body[:i]))
        seen, private = set(), {}
        for s in loop.body:
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                name = s.targets[0].id
                if name not in seen and name not in names_in(s.value) and name in earlier \
                        and name not in keep and (name in updated or name in views
                                                  or TEMP.match(name)):
                    private[name] = namer.fresh(name)
            seen |= names_in(s)
        for n in gast.walk(loop):
            if isinstance(n, gast.Name) and n.id in private:
                n.id = private[n.id]
