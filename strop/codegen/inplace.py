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
from ..transformer import ir
from ..transformer.ir import Namer, names_in
from ..transformer.rules.batching import is_member
from .fuse import TEMP
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
        f = call.func
        if isinstance(f, gast.Name):
            return refs.get(f.id)
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and \
                refs.get(f.value.id) is np:
            return getattr(np, f.attr, None)
        return None

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
            module = getattr(fn, "__module__", "") or ""
            return (isinstance(fn, np.ufunc) or module.startswith("numpy")) and fn not in VIEWS
        return False

    _private_loops(node, {a.value.args[0].id for a in gast.walk(node) if isinstance(
        a, gast.Assign) and isinstance(a.value, gast.Call) and callee(a.value) in INPLACE
        and a.value.args and isinstance(a.value.args[0], gast.Name)})
    accumulations = _accumulations(node, refs)
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
    for target in (n.target for n in gast.walk(node) if isinstance(n, gast.For)):
        candidates.discard(target.id)

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
    safe |= _moves(node.body)
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
    owned = (lambda v: fresh(v, None) or isinstance(v, gast.Call) and callee(v) in OWNED)
    for block, s in accumulations:
        if _owned_at(block, s, owned, consumed):
            s.value.func.id = _helper(refs, runtime.add_at_index_inplace)
            done.add(s.targets[0].id)
    return done


# helpers whose result is a new array (or what they were given when that is not an array)
OWNED = {runtime.setitem_vjp, runtime.getitem_vjp, runtime.add_at_index,
         runtime.add_at_index_inplace, runtime.zeros_like}


def _helper(refs, fn):
    name = fn.__name__
    refs.setdefault(name, fn)
    return name


def _accumulations(node, refs):
    """``t = getitem_vjp(g, x, i)`` then ``acc = add(acc, t)``, ``t`` read nowhere else, become
    ``acc = add_at_index(acc, g, x, i)`` (where nothing the first reads is rebound between):
    a cotangent of ``x[i]`` goes into ``acc`` without a zero array the size of ``x``.  Returns
    (block, statement) of each, for _owned_at to judge."""
    helpers = {n: o for n, o in refs.items() if n in runtime.__all__}
    loads = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            loads[n.id] = loads.get(n.id, 0) + 1

    def call_of(s, fn):
        v = s.value if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
            s.targets[0], gast.Name) else None
        return v if isinstance(v, gast.Call) and isinstance(v.func, gast.Name) and \
            helpers.get(v.func.id) is fn and not v.keywords and all(
                isinstance(a, gast.Name) for a in v.args) else None

    found = []
    for block in _blocks(node):
        for j, s in enumerate(block):
            add = call_of(s, runtime.add)
            if add is None or len(add.args) != 2:
                continue
            acc = s.targets[0].id
            names = [a.id for a in add.args]
            if acc not in names or names[0] == names[1]:
                continue
            t = names[1 - names.index(acc)]
            for i in range(j - 1, -1, -1):
                vjp = call_of(block[i], runtime.getitem_vjp)
                if vjp is not None and block[i].targets[0].id == t:
                    break
                if t in names_in(block[i]):
                    vjp = None
                    break
            if vjp is None or loads.get(t) != 1 or len(vjp.args) != 3:
                continue
            read = {a.id for a in vjp.args} | {acc}
            if any(read & names_in(b, gast.Store) for b in block[i + 1:j]):
                continue
            s.value = ir.call(_helper(refs, runtime.add_at_index), [ir.name(acc), *vjp.args])
            block[i] = gast.Pass()
            found.append((block, s))
    for block in _blocks(node):
        block[:] = [s for s in block if not isinstance(s, gast.Pass)] or [gast.Pass()]
    return found


def _owned_at(block, s, owned, consumed):
    """Whether ``acc`` in ``acc = add_at_index(acc, ...)`` holds an array no other name sees:
    the last statement before it in the block that binds acc makes a new array, and acc is
    read since only into new values (``consumed``)."""
    acc = s.targets[0].id
    k = next(i for i, b in enumerate(block) if b is s)
    for b in reversed(block[:k]):
        if acc in names_in(b, gast.Store):
            return isinstance(b, gast.Assign) and len(b.targets) == 1 and isinstance(
                b.targets[0], gast.Name) and owned(b.value)
        if any(isinstance(n, gast.Name) and n.id == acc and isinstance(n.ctx, gast.Load)
               and id(n) not in consumed for n in gast.walk(b)):
            return False
    return False


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
