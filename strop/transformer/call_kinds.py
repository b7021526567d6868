"""The kinds of the arguments of a transform called inside a function being transformed.

``vmap(predict)(params, xs)`` in a loss is staged while the loss is normalized.  Staged for
arguments of unknown kinds, its code must take an array of any rank or a container: NumPy
calls then run lane by lane (``each()``) or through rank-generic helpers, which neither
differentiate nor compile.  Most arguments' kinds are known there: a parameter of the
function being transformed has the kind its call gave (a pytree's structure and leaves
too), a name computed from such values the rank ranks.py finds over the statements made so
far.  Those ranks are assumptions, since a later statement may rebind the name (a loop
carrying it): the function's final statements are checked against them, and where one does
not hold the function is normalized again without any (``RanksChanged``).

The kind strings are transformed.py's: "scalar", "int", "array<rank>", "tree" (anything),
and a pytree's (TREE, structure, leaf kinds, dict orders).
"""
import gast
import numpy as np

from .. import runtime, tree_util
from . import ir
from .flatten import dict_orders, leaf_paths
from .lax_trees import _KEY, ARRAY, LEAF, NONE, rebuilt
from .ranks import given_ranks, ranks

TREE = "tree"


class Local:
    """What a lifted local function's closure cell holds for a local of the function being
    transformed: never read, the local itself is passed where the lifted code is inlined.
    ``kind``: what the local is known to be there (call_kinds.py), which the transform's
    code is made for."""

    def __init__(self, kind):
        self.kind = kind


class RanksChanged(Exception):
    """A rank assumed while normalizing does not hold for the finished function."""


class CallKinds:
    """Mixin of the Normalizer: ``self.param_kinds`` (root parameter -> the kind its call
    gave), ``self.assumed`` (name -> the rank assumed for it, or the pytree parameter it
    is assumed to hold, as (parameter, ())), ``self.outer`` and ``self.out``."""

    def kinds_at(self, atoms):
        """The kind of each normalized argument atom, TREE where it is not known; None when
        assumptions are off (the second normalization)."""
        if self.param_kinds is None:
            return None
        known, out = None, []
        for a in atoms:
            kind = TREE
            if isinstance(a, gast.Name) and a.id in self.param_kinds and \
                    a.id not in self.rebound:
                kind = self.param_kinds[a.id]
            elif isinstance(a, gast.Constant) and type(a.value) in (int, float):
                kind = "int" if type(a.value) is int else "scalar"
            elif isinstance(a, gast.Name) and a.id in self.free:
                kind = _kind_of_value(self.free[a.id].read())
            elif isinstance(a, gast.Name) and not self.is_ref(a):
                known = self.known_so_far() if known is None else known
                table, at = known
                rank = table.get(a.id, (None,))[0]
                display = self.display_kind(a, table)
                if display is not None:   # a display the code made (of a loop's leaves)
                    kind = display
                elif type(rank) is int and rank > 0:   # (a number may be a 0-d array)
                    self.assumed[a.id] = rank
                    kind = f"array{rank}"
                elif a.id in at:   # a pytree parameter or a part of one
                    p, path = at[a.id]
                    kind = _part(self.param_kinds[p], path)
                    if kind != TREE:
                        self.assumed[a.id] = at[a.id]
            out.append(kind)
        return tuple(out)

    def display_kind(self, atom, table):
        """The pytree kind of the display of lists, tuples and dicts the name ``atom`` holds
        (the leaves' kinds from the ranks ``table`` has, assumed; "array" of an unknown
        rank), else None."""
        shape = self.displays.get((_KEY, atom.id))
        orders = self.dict_orders(atom, shape) if shape and shape not in (LEAF, NONE) else None
        if orders is None:
            return None
        leaves = []

        def sample(a, shape):
            if shape == NONE:
                return None
            if shape == LEAF:
                leaves.append(a)
                return len(leaves) - 1
            keys = shape[1] if shape[0] == "dict" else range(len(shape[1]))
            children = shape[2] if shape[0] == "dict" else shape[1]
            written = next(order) if shape[0] == "dict" else None   # (taken as tree_build does)
            parts = {k: sample(self.known_item(a, ir.const(k)), c) for k, c in zip(
                keys, children)}
            if written is not None:
                return {k: parts[k] for k in written}
            return rebuilt(shape, parts.values())
        order = iter(orders)
        made = sample(atom, shape)
        kinds = []
        for a in leaves:
            rank = table.get(a.id, (None,))[0] if isinstance(a, gast.Name) else None
            if isinstance(a, gast.Constant) and type(a.value) in (int, float):
                kinds.append("int" if type(a.value) is int else "scalar")
            elif not isinstance(a, gast.Name) or type(rank) is not int and (
                    ARRAY, a.id) not in self.displays:
                return None   # (a leaf that may be a container)
            elif type(rank) is int and rank > 0:
                self.assumed[a.id] = rank
                kinds.append(f"array{rank}")
            else:   # (a number, or a 0-d array)
                kinds.append("array")
        return (TREE, tree_util.tree_structure(made),
                tuple(kinds[i] for i in tree_util.tree_leaves(made)), dict_orders(made))

    def tree_at(self, atom):
        """The structure of the pytree parameter, or part of one, the name ``atom`` holds
        (an inlined function's parameter bound to it), else None."""
        if self.param_kinds is None or not isinstance(atom, gast.Name) or not any(
                type(k) is tuple for k in self.param_kinds.values()):
            return None   # (no pytree parameter: nothing to look for)
        at = self.known_so_far()[1].get(atom.id)
        kind = _part(self.param_kinds[at[0]], at[1]) if at is not None else TREE
        if type(kind) is not tuple:
            return None
        self.assumed[atom.id] = at
        return kind[1]

    def holds_classes(self):
        """Whether a pytree parameter holds an instance of a registered class."""
        def classes(t):
            return t.node_type not in (None, dict, list, tuple) or any(
                classes(c) for c in t.children())
        return any(type(k) is tuple and classes(k[1]) for k in (self.param_kinds or {}).values())

    def known_so_far(self):
        statements = [s for block in self.outer if block for s in block] + (self.out or [])
        return self.known_of(statements)

    def known_of(self, statements):
        """({name: (rank, kind)} as ranks.py finds them, {name: (parameter, key path)} of
        the names bound to a part of a pytree parameter) over ``statements``."""
        given, leaves, at = self.given_ranks(statements)
        return ranks(statements, given, self.callee_of, leaves), at

    def given_ranks(self, statements):
        """(the parameters' ranks and those of the names bound to a leaf of a pytree
        parameter by constant subscripts (``w = params['w']``, ``w = params[0][0]``), the
        latter names, {name: (parameter, key path)} of the names bound once to a part of a
        pytree parameter)."""
        kinds = self.param_kinds or {}
        given = given_ranks({p: k for p, k in kinds.items() if type(k) is str})
        entry = given_ranks(self.leaf_kinds)   # (a rebound parameter's, a gradient's leaves)
        given.update(entry)
        trees = {p: dict(zip(map(tuple, paths), k[2])) for p, k in kinds.items()
                 if type(k) is tuple and p not in self.rebound
                 for paths in [leaf_paths(k[1])] if paths is not None}
        if not trees:
            return given, set(entry), {}
        at = {p: (p, ()) for p in trees}   # name -> (the parameter, the path it reads)
        leaves, bound = {}, [n.id for s in statements for n in gast.walk(s) if isinstance(
            n, gast.Name) and isinstance(n.ctx, gast.Store)]
        for s in statements:
            for node in gast.walk(s):
                if not (isinstance(node, gast.Assign) and len(node.targets) == 1 and
                        isinstance(node.targets[0], gast.Name)):
                    continue
                name, value = node.targets[0].id, node.value
                if bound.count(name) != 1:   # (what it reads then is not all it holds)
                    continue
                if isinstance(value, gast.Call) and len(value.args) == 1 and \
                        self.callee_of(value.func) is runtime.iterable:
                    value = value.args[0]   # (what a for loop walks: a list as it is)
                if isinstance(value, gast.Name) and value.id in at:   # an inlined parameter
                    at[name] = at[value.id]
                    continue
                if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)
                        and value.value.id in at and isinstance(value.slice, gast.Constant)):
                    continue
                p, path = at[value.value.id]
                path += (value.slice.value,)
                if path in trees[p]:
                    rank = given_ranks({name: trees[p][path]}).get(name)
                    if rank is not None:
                        leaves[name] = rank
                else:
                    at[name] = (p, path)
        given.update(leaves)
        return given, set(leaves) | set(entry), at

    def callee_of(self, func):
        """The object a call's ``func`` atom names (ir.Function.callee, while normalizing)."""
        return ir.callee(self.refs, func)

    def check_assumed(self, body):
        """Raise RanksChanged where the finished ``body`` does not give an assumed rank."""
        if not self.assumed:
            return
        table, at = self.known_of(body)
        for name, assumed in self.assumed.items():
            if (at.get(name) if type(assumed) is tuple else table.get(name, (None,))[0]) \
                    != assumed:
                raise RanksChanged(name)


def _kind_of_value(value):
    """The kind of a free variable's value, as transformed.py's _with_free_kinds finds it."""
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return f"array{value.ndim}"
    return value.kind if isinstance(value, Local) else TREE


def _part(kind, path):
    """The kind of the part of a pytree argument of ``kind`` at the key ``path`` (TREE where
    it is not known: a registered class, dicts in the user's own key order)."""
    if not path:
        return kind
    node, orders = kind[1], kind[3] if len(kind) > 3 else None
    paths = leaf_paths(node)
    if orders is not None or paths is None:
        return TREE
    for step in path:
        if node.node_type is dict and step in node.node_data:
            node = node.children()[list(node.node_data).index(step)]
        elif node.node_type is not None and issubclass(node.node_type, (list, tuple)) and \
                type(step) is int and -len(node.children()) <= step < len(node.children()):
            node = node.children()[step]
        else:
            return TREE
    if node.node_type is None:
        return TREE   # (a leaf: ranks.py types it)
    leaves = tuple(k for p, k in zip(paths, kind[2]) if tuple(p[:len(path)]) == tuple(path))
    return (TREE, node, leaves, None) if len(leaves) == node.num_leaves else TREE
