"""``tree_util`` called inside a transformed function, on a parameter whose structure the call
gives (part of the normalizer, which mixes it in).

``tree_leaves(params)`` becomes the display of the leaves' reads (``[params[0][0], ...]``) and
``tree_map(f, params, grads)`` the display of the tree rebuilt from ``f(params[k][j],
grads[k][j])`` at each leaf, with ``f`` inlined at each: a regularizer over the leaves and an
SGD update written with ``tree_map`` are then ordinary code, differentiated leaf by leaf and
compiled.  The structure is the argument's at this call (the code is made per structure);
``tree_map``'s other trees must have it, as JAX requires.  A tree whose structure is not known
here (a value the code computes) is left to the call as written.
"""
import gast

from .. import tree_util
from . import ir
from .flatten import Attr, leaf_paths
from .lax_trees import _KEY, ARRAY, LEAF, NAMED, NONE, rebuilt


class Trees:
    """The tree_util half of the Normalizer: ``trees`` maps a parameter never rebound to the
    structure of its argument."""

    def tree_call(self, obj, e, scope, into):
        """The atom of a tree_util call rewritten as displays, or None to leave it."""
        if obj not in _REWRITTEN or e.keywords or any(
                isinstance(a, gast.Starred) for a in e.args):
            return None
        if obj is tree_util.tree_unflatten:
            return self.unflatten_call(e, scope, into)
        first = 1 if obj is tree_util.tree_map else 0
        if len(e.args) > first and not isinstance(e.args[first], (gast.Name, gast.Constant)):
            # tree_map(f, vmap(g)(xs)): the tree computed first, once; the call then made
            # with it as a name (rewritten or not)
            args = list(e.args)
            args[first] = self.once(args[first], scope)
            return self.call(gast.copy_location(gast.Call(func=e.func, args=args,
                                                          keywords=e.keywords), e),
                             scope, into)
        if len(e.args) <= first or obj is not tree_util.tree_map and len(e.args) != 1:
            return None
        treedef = self.tree_of(e.args[first], scope)
        if treedef is None and obj is not tree_util.tree_map and isinstance(e.args[0],
                                                                            gast.Name):
            treedef = self.display_tree(self.expr(e.args[0], scope))   # a gradient's, say
        if treedef is None and obj is tree_util.tree_map:
            # grads = grad(f)(params) then tree_map(sgd, grads, params): the first tree is a
            # display the code made, of the structure of a parameter given after it
            first_atom = self.expr(e.args[first], scope) if isinstance(
                e.args[first], gast.Name) else None
            for other in e.args[first + 1:]:
                known = self.tree_of(other, scope)
                if known is not None and first_atom is not None and \
                        self.holds_display_of(first_atom, known):
                    treedef = known
                    break
            else:   # per-example gradients from vmap(grad(f)): displays down to arrays
                treedef = self.display_tree(first_atom) if first_atom is not None else None
        paths = leaf_paths(treedef) if treedef is not None else None
        if paths is None or any(isinstance(step, Attr) for p in paths for step in p):
            return None
        structure = self.constant_atom(treedef, "treedef")   # (a constant: known here)
        structure.normalized = True
        if obj is tree_util.tree_structure:
            return self.to_name(structure, into) if into else structure
        trees = [self.once(t, scope) for t in e.args[first:]]
        if obj is not tree_util.tree_map:
            leaves = gast.List(elts=[_read(trees[0], p) for p in paths], ctx=gast.Load())
            if obj is tree_util.tree_flatten:
                leaves = gast.Tuple(elts=[leaves, structure], ctx=gast.Load())
            return self.expr(leaves, scope, into)
        leaves = [gast.Call(func=ir.clone(e.args[0]), args=[_read(t, p) for t in trees],
                            keywords=[]) for p in paths]
        return self.expr(self.tree_display(treedef.unflatten(range(len(paths))), leaves),
                         scope, into)

    def unflatten_call(self, e, scope, into):
        """``tree_unflatten(treedef, leaves)`` of a treedef known here (tree_flatten's or
        tree_structure's of a known tree): the display of the tree, its leaves read from
        ``leaves`` by position (a list a comprehension made: unroll.py reads its items)."""
        if len(e.args) != 2:
            return None
        atom = self.expr(e.args[0], scope)
        treedef = self.ref_object(atom) if self.is_ref(atom) else None
        if not isinstance(treedef, tree_util.PyTreeDef):
            return None
        paths = leaf_paths(treedef)
        if paths is None or any(isinstance(step, Attr) for p in paths for step in p):
            return None
        leaves = self.once(e.args[1], scope)
        reads = [gast.Subscript(value=ir.clone(leaves), slice=ir.const(i), ctx=gast.Load())
                 for i in range(len(paths))]
        return self.expr(self.tree_display(treedef.unflatten(range(len(paths))), reads),
                         scope, into)

    def display_tree(self, atom):
        """The structure of the displays of lists, tuples and dicts the name ``atom`` holds,
        nested down to leaves known to hold arrays (a gradient's leaves: mark_array_leaves;
        names whose rank is known, as an assumption call_kinds.py checks), else None: a leaf
        that might be a container would make tree_map apply its function to the container."""
        shape = self.displays.get((_KEY, atom.id))
        if not shape:
            return None
        leaves = []

        def collect(a, shape):
            if shape == LEAF:
                leaves.append(a)
            elif shape != NONE:
                keys = shape[1] if shape[0] == "dict" else range(len(shape[1]))
                children = shape[2] if shape[0] == "dict" else shape[1]
                for k, c in zip(keys, children):
                    collect(self.known_item(a, ir.const(k)), c)
        collect(atom, shape)
        unmarked = [a for a in leaves if isinstance(a, gast.Name) and
                    (ARRAY, a.id) not in self.displays]
        kinds = self.kinds_at(unmarked) if unmarked else ()
        known = {a.id for a, k in zip(unmarked, kinds or ()) if isinstance(k, str) and
                 k.startswith("array")}

        def sample(a, shape):
            if shape == LEAF:
                return 0 if isinstance(a, gast.Name) and ((ARRAY, a.id) in self.displays or
                                                          a.id in known) else None
            if shape == NONE:
                return None
            keys = shape[1] if shape[0] == "dict" else range(len(shape[1]))
            children = shape[2] if shape[0] == "dict" else shape[1]
            parts = [sample(self.known_item(a, ir.const(k)), c) for k, c in zip(keys, children)]
            if any(p is None for p in parts):
                return None
            return rebuilt(shape, zip(keys, parts) if shape[0] == "dict" else parts)
        made = sample(atom, shape)
        return tree_util.tree_structure(made) if made is not None else None

    def mark_array_leaves(self, atom):
        """Record that the leaves of the displays ``atom`` holds are arrays (the gradients a
        transform inlined here returns, rebuilt as its argument's tree)."""
        shape = self.displays.get((_KEY, atom.id)) if isinstance(atom, gast.Name) else None
        if not shape or shape == LEAF:
            if isinstance(atom, gast.Name) and (NAMED, atom.id) not in self.displays:
                self.displays[(ARRAY, atom.id)] = True   # (a namedtuple: a node, not a leaf)
            return
        if shape == NONE:
            return
        keys = shape[1] if shape[0] == "dict" else range(len(shape[1]))
        for k in keys:
            item = self.known_item(atom, ir.const(k))
            if item is not None:
                self.mark_array_leaves(item)

    def holds_display_of(self, atom, treedef):
        """Whether ``atom`` holds displays of lists and tuples nested as ``treedef``'s nodes
        are, each down to a leaf of it (so that ``treedef`` is its structure)."""
        if treedef.node_type is None:
            return self.display_items(atom) is None if isinstance(atom, gast.Name) else True
        if treedef.node_type not in (list, tuple) or not isinstance(atom, gast.Name):
            return False
        items = self.display_items(atom)
        children = treedef.children()
        return items is not None and len(items) == len(children) and all(
            self.holds_display_of(x, c) for x, c in zip(items, children))

    def once(self, node, scope):
        """``node`` evaluated once, as an atom each leaf's read can start from."""
        atom = self.expr(node, scope)
        if not isinstance(atom, gast.Name):
            atom = self.to_name(atom, force=True)
        atom.normalized = True
        return atom

    def tree_of(self, node, scope):
        """The structure of the argument the parameter ``node`` names, if it is one."""
        if not isinstance(node, gast.Name):
            return None
        inner = scope
        while scope.parent is not None and node.id not in scope.names:
            scope = scope.parent   # (a comprehension's scope)
        if scope.parent is None and scope.parsed is self.root and node.id in self.trees:
            return self.trees[node.id]
        return self.tree_at(self.expr(node, inner))   # an inlined function's parameter

    def tree_display(self, sample, leaves):
        """The display that rebuilds ``sample`` (a tree of leaf indices) from ``leaves``."""
        if type(sample) is dict:
            return gast.Dict(keys=[ir.const(k) for k in sample],
                             values=[self.tree_display(v, leaves) for v in sample.values()])
        if type(sample) in (list, tuple):
            cls = gast.List if type(sample) is list else gast.Tuple
            return cls(elts=[self.tree_display(v, leaves) for v in sample], ctx=gast.Load())
        if isinstance(sample, tuple) and hasattr(type(sample), "_fields"):
            cls = type(sample)
            atom = ir.name(self.bind_ref(cls.__name__, cls))
            atom.normalized = True
            return gast.Call(func=atom, args=[self.tree_display(v, leaves) for v in sample],
                             keywords=[])
        if sample is None:
            return ir.const(None)
        return leaves[sample]


_REWRITTEN = (tree_util.tree_leaves, tree_util.tree_map, tree_util.tree_flatten,
              tree_util.tree_unflatten, tree_util.tree_structure)


def _read(tree, path):
    node = ir.clone(tree)
    for step in path:
        node = gast.Subscript(value=node, slice=ir.const(step), ctx=gast.Load())
    return node
