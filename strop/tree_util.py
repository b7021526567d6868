"""Pytrees with JAX's semantics: nested tuples, lists, dicts, namedtuples, ``None`` and registered
classes are nodes; everything else is a leaf.

Dict keys are visited in sorted order, so ``{'b': 1, 'a': 2}`` and ``{'a': 2, 'b': 1}`` have one
structure; ``None`` is a node with no children, so it has no leaves.
"""
import collections
import operator
from typing import Any, Callable, NamedTuple

__all__ = [
    "PyTreeDef", "register_pytree_node", "register_pytree_node_class", "tree_flatten",
    "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
]


class _NodeKind(NamedTuple):
    flatten: Callable[[Any], tuple]        # node -> (children, aux data)
    unflatten: Callable[[Any, tuple], Any]  # (aux data, children) -> node


def _flatten_dict(d):
    keys = tuple(sorted(d))
    return tuple(d[k] for k in keys), keys


def _flatten_defaultdict(d):
    children, keys = _flatten_dict(d)
    return children, (d.default_factory, keys)


# The one global registry, as in JAX: node type -> how to take it apart and rebuild it.
_registry = {
    tuple: _NodeKind(lambda x: (x, None), lambda _, children: tuple(children)),
    list: _NodeKind(lambda x: (x, None), lambda _, children: list(children)),
    dict: _NodeKind(_flatten_dict, lambda keys, children: dict(zip(keys, children))),
    type(None): _NodeKind(lambda _: ((), None), lambda *_: None),
    collections.OrderedDict: _NodeKind(
        lambda d: (tuple(d.values()), tuple(d)),
        lambda keys, children: collections.OrderedDict(zip(keys, children))),
    collections.defaultdict: _NodeKind(
        _flatten_defaultdict,
        lambda aux, children: collections.defaultdict(aux[0], zip(aux[1], children))),
}


def _is_namedtuple(cls):
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


def _node_kind(cls):
    """How to flatten a node of type ``cls``, or None for a leaf type.  Lookup is by exact type
    (a dict subclass is a leaf), except that every namedtuple class is a node."""
    kind = _registry.get(cls)
    if kind is None and _is_namedtuple(cls):
        kind = _NodeKind(lambda t: (tuple(t), None), lambda _, children: cls(*children))
    return kind


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    """Make ``nodetype`` a pytree node: ``flatten_func(x) -> (children, aux_data)`` and
    ``unflatten_func(aux_data, children) -> x``.  ``aux_data`` is part of the structure:
    compared with ``==``; it may be unhashable (a dict), as JAX allows."""
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__qualname__} is already registered as a pytree node; "
                         "register each type once")
    _registry[nodetype] = _NodeKind(flatten_func, unflatten_func)


def register_pytree_node_class(cls):
    """Class decorator: registers ``cls`` through its ``tree_flatten()`` method and its
    ``tree_unflatten(aux_data, children)`` classmethod."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


class PyTreeDef:
    """The structure of a pytree: its nodes with their aux data, and a ``*`` where each leaf is.
    Hashable and comparable, so it can key a cache."""
    __slots__ = ("node_type", "node_data", "_children", "num_leaves", "num_nodes")

    def __init__(self, node_type, node_data=None, children=()):
        self.node_type = node_type  # None for a leaf
        self.node_data = node_data
        self._children = children
        self.num_leaves = 1 if node_type is None else sum(c.num_leaves for c in children)
        self.num_nodes = 1 + sum(c.num_nodes for c in children)

    def children(self):
        return list(self._children)

    def unflatten(self, leaves):
        """The tree of this structure with ``leaves`` in flattening order."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"{self} has {self.num_leaves} leaves, got {len(leaves)}")
        return self._build(iter(leaves))

    def _build(self, leaves):
        if self.node_type is None:
            return next(leaves)
        children = tuple(child._build(leaves) for child in self._children)
        return _node_kind(self.node_type).unflatten(self.node_data, children)

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` that stand where this structure has leaves; ``tree`` must
        have this structure or have it as a prefix (as the extra trees of ``tree_map`` do)."""
        out = []
        if not self._up_to(tree, out):
            raise ValueError(f"expected a tree of structure {self} (or one it is a prefix of), "
                             f"got {tree_structure(tree)}")
        return out

    def _up_to(self, tree, out):
        if self.node_type is None:
            out.append(tree)
            return True
        if type(tree) is not self.node_type:
            return False
        children, data = _node_kind(self.node_type).flatten(tree)
        children = tuple(children)
        return (data == self.node_data and len(children) == len(self._children)
                and all(d._up_to(c, out) for d, c in zip(self._children, children)))

    def _key(self):
        return self.node_type, self.node_data, self._children

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self):
        return hash((self.node_type, _data_hash(self.node_data), self._children))

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self):
        t = self.node_type
        if t is None:
            return "*"
        kids = [c._str() for c in self._children]
        if t is type(None):
            return "None"
        if t is tuple:
            return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"
        if t is list:
            return "[" + ", ".join(kids) + "]"
        if t is dict:
            return "{" + ", ".join(f"{k!r}: {s}" for k, s in zip(self.node_data, kids)) + "}"
        name = f"namedtuple[{t.__name__}]" if _is_namedtuple(t) and t not in _registry \
            else f"{t.__name__}[{self.node_data!r}]"
        return f"CustomNode({name}, [{', '.join(kids)}])"


def _data_hash(data):
    """A hash of aux data consistent with ``==``: its own, or for unhashable data (a dict, as
    JAX's FAQ passes) one of what it is made of, as far as that is hashable."""
    try:
        return hash(data)
    except TypeError:
        pass
    if isinstance(data, dict):
        return hash(("dict", frozenset(_data_hash(k) for k in data)))
    if isinstance(data, (list, tuple)):
        return hash((type(data).__name__, tuple(_data_hash(x) for x in data)))
    return hash(type(data))   # coarse, but equal data hash equal: == decides


_LEAF = PyTreeDef(None)


def _flatten(tree, is_leaf, leaves):
    kind = None if is_leaf is not None and is_leaf(tree) else _node_kind(type(tree))
    if kind is None:
        leaves.append(tree)
        return _LEAF
    children, data = kind.flatten(tree)
    return PyTreeDef(type(tree), data, tuple(_flatten(c, is_leaf, leaves) for c in children))


def tree_flatten(tree, is_leaf=None):
    """``(leaves, treedef)``.  ``is_leaf(subtree)`` returning True stops the descent there."""
    leaves = []
    treedef = _flatten(tree, is_leaf, leaves)
    return leaves, treedef


def tree_unflatten(treedef, leaves):
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """``f`` applied leaf by leaf: ``f(x, *ys)`` for each leaf x of ``tree`` and the subtrees ys
    at the same place in each of ``rest``, which must have the structure of ``tree`` or have it
    as a prefix.  ``is_leaf`` applies to ``tree`` only."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for i, other in enumerate(rest, 2):
        try:
            others.append(treedef.flatten_up_to(other))
        except ValueError as e:
            raise ValueError(f"tree_map: tree {i} does not match tree 1: {e}") from None
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))
