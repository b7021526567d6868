"""strop.tree_util against JAX's documented pytree semantics, written out by hand: leaves in
order (dict keys sorted, None a node without leaves), structures as JAX prints them, and round
trips through flatten/unflatten."""
import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from strop.tree_util import (register_pytree_node, register_pytree_node_class, tree_flatten,
                             tree_leaves, tree_map, tree_structure, tree_unflatten)

Point = collections.namedtuple("Point", "x y")


@register_pytree_node_class
class Box:
    """A registered class: ``contents`` are children, ``label`` is aux data."""

    def __init__(self, contents, label):
        self.contents, self.label = contents, label

    def tree_flatten(self):
        return self.contents, self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(tuple(children), label)

    def __eq__(self, other):
        return type(other) is Box and (self.contents, self.label) == (other.contents, other.label)

    def __repr__(self):
        return f"Box({self.contents!r}, {self.label!r})"


class Pair:
    """Registered with register_pytree_node, children in the order (b, a)."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return type(other) is Pair and (self.a, self.b) == (other.a, other.b)


register_pytree_node(Pair, lambda p: ((p.b, p.a), None), lambda _, ch: Pair(ch[1], ch[0]))


class MyDict(dict):
    """Not registered: lookup is by exact type, so a dict subclass is a leaf."""


# (tree, its leaves in JAX's order, its structure as JAX prints it)
CASES = [
    (1, [1], "*"),
    ("text", ["text"], "*"),
    (None, [], "None"),
    ((), [], "()"),
    ((7,), [7], "(*,)"),
    ([1, (2, 3), [4, 5]], [1, 2, 3, 4, 5], "[*, (*, *), [*, *]]"),
    ((1, {"a": 2}), [1, 2], "(*, {'a': *})"),
    ({"b": 1, "a": 2, "c": {"z": 3, "y": 4}}, [2, 1, 4, 3],
     "{'a': *, 'b': *, 'c': {'y': *, 'z': *}}"),
    ([None, 1, (None,), {"a": None}], [1], "[None, *, (None,), {'a': None}]"),
    (Point(1, (2, None)), [1, 2], "CustomNode(namedtuple[Point], [*, (*, None)])"),
    (Box((1, [2]), "lbl"), [1, 2], "CustomNode(Box['lbl'], [*, [*]])"),
    (Pair(1, {"k": 2}), [2, 1], "CustomNode(Pair[None], [{'k': *}, *])"),
    ({"p": Point(x=Box((), 0), y=[Pair(3, None)]), "n": None}, [3],
     "{'n': None, 'p': CustomNode(namedtuple[Point], "
     "[CustomNode(Box[0], []), [CustomNode(Pair[None], [None, *])]])}"),
    (MyDict(a=1), [MyDict(a=1)], "*"),
    (collections.OrderedDict([("b", 1), ("a", 2)]), [1, 2],
     "CustomNode(OrderedDict[('b', 'a')], [*, *])"),
]


@pytest.mark.parametrize("tree, leaves, structure", CASES)
def test_leaves_and_structure(tree, leaves, structure):
    assert tree_leaves(tree) == leaves
    assert repr(tree_structure(tree)) == f"PyTreeDef({structure})"
    assert tree_flatten(tree) == (leaves, tree_structure(tree))
    assert tree_structure(tree).num_leaves == len(leaves)


@pytest.mark.parametrize("tree", [c[0] for c in CASES])
def test_round_trip(tree):
    treedef = tree_structure(tree)
    rebuilt = tree_unflatten(treedef, tree_leaves(tree))
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert treedef.unflatten(tree_leaves(tree)) == tree


def test_arrays_are_leaves():
    x = np.arange(3)
    leaves, treedef = tree_flatten({"w": x, "b": (x, 2.0)})
    assert leaves[0] is x and leaves[1] == 2.0 and leaves[2] is x  # 'b' before 'w'
    assert repr(treedef) == "PyTreeDef({'b': (*, *), 'w': *})"


def test_dict_rebuilt_with_sorted_keys():
    assert list(tree_map(lambda v: v, {"b": 1, "a": 2})) == ["a", "b"]


def test_ordered_dict_keeps_order_and_defaultdict_its_factory():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert list(tree_map(str, od).items()) == [("b", "1"), ("a", "2")]
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    assert tree_leaves(dd) == [2, 1]
    out = tree_map(lambda v: v * 10, dd)
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert out == {"a": 20, "b": 10}


def test_namedtuple_field_order_and_type():
    out = tree_map(lambda v: v + 1, Point(y=1, x=2))
    assert tree_leaves(Point(y=1, x=2)) == [2, 1]
    assert type(out) is Point and out == Point(3, 2)


def test_tuple_subclass_that_is_not_a_namedtuple_is_a_leaf():
    class Tup(tuple):
        pass

    t = Tup((1, 2))
    assert tree_leaves(t) == [t]


# --- treedefs -------------------------------------------------------------------------------

def test_treedef_equality_ignores_leaves():
    a, b = tree_structure([1, {"k": 2}]), tree_structure(["x", {"k": np.ones(3)}])
    assert a == b and hash(a) == hash(b)
    assert {a: "cached"}[b] == "cached"


@pytest.mark.parametrize("left, right", [
    ([1, 2], (1, 2)),
    ([1, 2], [1, 2, 3]),
    ({"a": 1}, {"b": 1}),
    ([1, None], [1, 2]),
    ((1, 2), Point(1, 2)),
    (Box((1,), "a"), Box((1,), "b")),
    (Box((1,), "a"), Box(((1,),), "a")),
])
def test_treedef_inequality(left, right):
    assert tree_structure(left) != tree_structure(right)


def test_treedef_counts_and_children():
    treedef = tree_structure((1, [2, None], {"a": 3}))
    assert treedef.num_leaves == 3
    assert treedef.num_nodes == 7  # the tuple, list, None and dict nodes and the 3 leaves
    assert [repr(c) for c in treedef.children()] == [
        "PyTreeDef(*)", "PyTreeDef([*, None])", "PyTreeDef({'a': *})"]


def test_unflatten_with_wrong_number_of_leaves():
    treedef = tree_structure((1, 2))
    for leaves in ([1], [1, 2, 3]):
        with pytest.raises(ValueError, match="2 leaves"):
            treedef.unflatten(leaves)


# --- is_leaf ----------------------------------------------------------------------------------

def test_is_leaf_stops_the_descent():
    tree = [(1, 2), [3, (4,)]]
    is_tuple = lambda t: isinstance(t, tuple)  # noqa: E731
    assert tree_leaves(tree, is_leaf=is_tuple) == [(1, 2), 3, (4,)]
    assert repr(tree_structure(tree, is_leaf=is_tuple)) == "PyTreeDef([*, [*, *]])"
    assert tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]


# --- tree_map ---------------------------------------------------------------------------------

def test_tree_map_one_tree_keeps_structure():
    tree = {"a": [1, None, 2], "b": Point(3, Box((4,), "t"))}
    out = tree_map(lambda v: v * 2, tree)
    assert out == {"a": [2, None, 4], "b": Point(6, Box((8,), "t"))}


def test_tree_map_several_trees():
    out = tree_map(lambda x, y, z: x + y * z, [1, {"a": 2}], [10, {"a": 20}], [1, {"a": 2}])
    assert out == [11, {"a": 42}]


def test_tree_map_other_trees_may_extend_the_first_at_its_leaves():
    out = tree_map(lambda x, y: (x, y), [1, 2], [(3, 4), {"k": None}])
    assert out == [(1, (3, 4)), (2, {"k": None})]


def test_tree_map_is_leaf_applies_to_the_first_tree():
    out = tree_map(lambda x, y: (x, y), [None, 1], [2, 3], is_leaf=lambda x: x is None)
    assert out == [(None, 2), (1, 3)]


@pytest.mark.parametrize("other, other_structure", [
    ([1, [2, 3]], "PyTreeDef([*, [*, *]])"),
    ([1, (2, 3, 4)], "PyTreeDef([*, (*, *, *)])"),
    ({"a": 1}, "PyTreeDef({'a': *})"),
    ([1, None], "PyTreeDef([*, None])"),
])
def test_tree_map_mismatch_names_both_structures(other, other_structure):
    with pytest.raises(ValueError) as info:
        tree_map(lambda *xs: xs, [1, (2, 3)], other)
    message = str(info.value)
    assert "PyTreeDef([*, (*, *)])" in message and other_structure in message


def test_tree_map_dict_keys_must_match():
    with pytest.raises(ValueError, match=r"\{'a': \*, 'c': \*\}"):
        tree_map(lambda x, y: x, {"a": 1, "b": 2}, {"a": 1, "c": 2})


# --- registration -----------------------------------------------------------------------------

def test_registering_a_type_twice_raises():
    class Once:
        pass

    register_pytree_node(Once, lambda o: ((), None), lambda _, __: Once())
    with pytest.raises(ValueError, match="Once"):
        register_pytree_node(Once, lambda o: ((), None), lambda _, __: Once())
    for builtin in (tuple, list, dict, type(None)):
        with pytest.raises(ValueError):
            register_pytree_node(builtin, lambda o: ((), None), lambda _, __: None)


def test_register_pytree_node_class_returns_the_class():
    class Node:
        def tree_flatten(self):
            return (), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls()

    assert register_pytree_node_class(Node) is Node
    assert tree_leaves(Node()) == [] and repr(tree_structure(Node())) == \
        "PyTreeDef(CustomNode(Node[None], []))"


# --- round trips of random nested trees ------------------------------------------------------

_leaves = st.integers() | st.text(max_size=3) | st.floats(allow_nan=False)
_trees = st.recursive(
    _leaves | st.none(),
    lambda kids: (st.lists(kids, max_size=3) | st.lists(kids, max_size=3).map(tuple)
                  | st.dictionaries(st.text(max_size=2), kids, max_size=3)
                  | st.builds(Point, kids, kids)
                  | st.builds(Box, st.lists(kids, max_size=2).map(tuple), st.integers(0, 3))),
    max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(_trees)
def test_round_trip_random(tree):
    leaves, treedef = tree_flatten(tree)
    assert tree_unflatten(treedef, leaves) == tree
    assert treedef.num_leaves == len(leaves)
    assert tree_structure(tree_map(lambda v: 0, tree)) == treedef
    assert None not in leaves  # None is always a node
