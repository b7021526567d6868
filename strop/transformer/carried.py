"""Containers a loop carries, carried leaf by leaf (part of the normalizer).

``for step in range(n): ...; params = tree_map(sgd, params, grads)``: ``params`` enters the
loop holding a display (a list of ``(w, b)`` tuples, say) and every trip binds it to a display
of the same structure again.  The loop then carries each leaf in a variable of its own
(``params_0_0``, ...), and the body starts from the display of those leaves.  The body sees a
display, as the code before the loop did: a loop over it unrolls, ``tree_map`` of it is
rewritten leaf by leaf (normalize_trees.py), ``for w, b in params`` reads each layer's arrays,
and the derivative and batched code carry arrays, never a container, from trip to trip.  After
the loop the name is the display of the leaves again.

That each trip ends with the structure it began with is an assumption, checked where the
body's code is made: where it fails (an ``append``, a branch that rebinds the name, another
structure), ``CarriedChanged`` says which loop and name, and the function is normalized again
with that name carried as it is.  A dict's keys keep their order too (the body may walk
them); where only the first trip changes it (``tree_map`` of the user's ``{'w': .., 'b': ..}``
makes a dict in sorted order, as JAX's does), a loop of a constant trip count makes its
first trip on its own (peel_first_trip).  A leaf known to hold an array at the loop's entry is
taken to hold one in the body where the body's end keeps it one (the same check).  An error
while the body's code is made with these assumptions (``f(*t)`` of a tuple a later trip
lengthens) makes the function again without them too.
"""
import gast

from . import ir
from .lax_trees import (_KEY, ARRAY, LEAF, NONE, _object_shape, _sorted_orders, leaf_name,
                        leaf_paths)


class CarriedChanged(Exception):
    """A loop does not keep the structure (or the array leaves) of a name it carries."""

    def __init__(self, key):
        super().__init__(key)
        self.key = key


class Carried:
    """One name a loop carries leaf by leaf: its structure, the variable of each leaf and
    whether the body takes that leaf to hold an array."""

    def __init__(self, key, name, shape, orders, leaves, arrays):
        self.key, self.name, self.shape, self.orders = key, name, shape, orders
        self.leaves, self.arrays = leaves, arrays

    def display(self, n):
        """The display of the leaves' variables, each dict's keys in the order it had."""
        return n.tree_build(self.shape, iter(ir.name(v) for v in self.leaves),
                            orders=iter(self.orders))


def carried_names(n, names, where):
    """The names among ``names`` (generated names a loop may rebind) that enter it holding a
    display with leaves, each now bound leaf by leaf before the loop (emitted into ``n.out``).
    ``where``: the loop's user location (with the name, what ``n.unsteady`` records)."""
    out = []
    for name in sorted(names):
        shape = n.displays.get((_KEY, name))
        key = (where, name)
        if not shape or shape in (LEAF, NONE) or not leaf_paths(shape) or key in n.unsteady:
            continue
        orders = n.dict_orders(ir.name(name), shape)
        if orders is None or key + ("orders", tuple(orders)) in n.unsteady:
            continue   # (a dict the loop would walk in another order)
        atoms = n.tree_leaves(ir.name(name), shape)
        leaves, arrays = [], []
        for path, atom in zip(leaf_paths(shape), atoms):
            var = n.namer.fresh(leaf_name(name, path))
            n.emit(ir.assign(var, atom))
            leaves.append(var)
            arrays.append((where, name, "arrays") not in n.unsteady and
                          (ARRAY, var) in n.displays)
        out.append(Carried(key, name, shape, orders, leaves, arrays))
    return out


def begin_trip(n, carried):
    """The body's first statements: each carried name the display of its leaves."""
    for c in carried:
        for var, is_array in zip(c.leaves, c.arrays):
            if is_array:
                n.displays[(ARRAY, var)] = True
            else:
                n.displays.pop((ARRAY, var), None)
        n.emit(ir.assign(c.name, c.display(n)))


def end_trip(n, carried):
    """The body's last statements: each leaf's variable bound to the leaf the trip made;
    CarriedChanged where the trip made another structure or lost an array leaf.  (The
    display the trip bound the name to is then dead where only its leaves are read: the next
    trip and the code after the loop make their own; unroll.py drops it.)"""
    for c in carried:
        if n.displays.get((_KEY, c.name)) != c.shape:
            raise CarriedChanged(c.key)
        if n.dict_orders(ir.name(c.name), c.shape) != c.orders:
            # (tree_map's dicts are in sorted order: the first trip's may be the user's)
            raise CarriedChanged(c.key + ("orders", tuple(c.orders)))
        atoms = n.tree_leaves(ir.name(c.name), c.shape)
        if any(is_array and not n.makes_array(a) for a, is_array in zip(atoms, c.arrays)):
            raise CarriedChanged(c.key + ("arrays",))
        # a leaf may be another's variable (a swap): read all of them before binding any
        own = set(c.leaves)
        atoms = [n.to_name(a, force=True) if isinstance(a, gast.Name) and a.id in own and
                 a.id != var else a for a, var in zip(atoms, c.leaves)]
        for var, atom in zip(c.leaves, atoms):
            if not (isinstance(atom, gast.Name) and atom.id == var):
                n.emit(ir.assign(var, atom))


def peel_first_trip(n, s, scope, target, args):
    """``for target in range(args)``, after a trip of it changed the order of a dict it carries
    (what ``tree_map`` makes is sorted): its first trip on its own, before the loop, where the
    trip count is a constant; the loop then starts from the second, with the order it keeps.
    Returns the loop's new ``range`` arguments (``args`` where there is nothing to peel)."""
    where = str(scope.parsed.location(s.body[0]))
    if not any(k[0] == where and k[2:3] == ("orders",) for k in n.unsteady if len(k) == 4):
        return args
    values = [a.value if isinstance(a, gast.Constant) else n.constants.get(a.id) if isinstance(
        a, gast.Name) else None for a in args]   # (an inlined function's constant parameter)
    if any(type(v) is not int for v in values):
        return args
    trips = range(*values)
    if not trips:
        return args
    n.emit(ir.assign(target, ir.const(trips[0])))
    for b in s.body:
        n.loc = scope.parsed.location(b)
        n.stmt(b, scope)
    return [ir.const(v) for v in (trips.start + trips.step, trips.stop, trips.step)]


def after_loop(n, carried):
    """After the loop: each carried name the display of its leaves' last values."""
    for c in carried:
        for var, is_array in zip(c.leaves, c.arrays):
            if is_array:
                n.displays[(ARRAY, var)] = True
        n.emit(ir.assign(c.name, c.display(n)))


def display_parameters(n, trees):
    """At the function's entry, each parameter ``trees`` gives a structure (name -> (treedef,
    each leaf's kind, flatten.dict_orders): parameters the function rebinds) bound to the
    display of its leaves' reads: what a loop then does to it is followed (carried_names).  A
    leaf given an array or a number is marked one.  (A parameter never rebound is read
    through ``n.trees``.)"""
    for name, (treedef, kinds, orders) in trees.items():
        sample = treedef.unflatten(list(range(treedef.num_leaves)))
        shape = _object_shape(sample)
        if shape in (LEAF, NONE) or not leaf_paths(shape) or orders and len(orders) != len(
                _sorted_orders(shape)):   # (a dict in a namedtuple: the structure's leaf)
            continue
        atoms = n.tree_leaves(ir.name(name), shape)
        for path, atom in zip(leaf_paths(shape), atoms):
            index = _at(sample, path)
            if type(index) is int and isinstance(kinds[index], str) and (
                    kinds[index].startswith("array") or kinds[index] in ("scalar", "int")):
                n.displays[(ARRAY, atom.id)] = True
                n.leaf_kinds[atom.id] = kinds[index]   # (its rank: call_kinds.py)
        n.emit(ir.assign(name, n.tree_build(shape, iter(atoms), orders=iter(orders) if orders
                                            else None)))


def _at(tree, path):
    for key in path:
        tree = tree[key]
    return tree

