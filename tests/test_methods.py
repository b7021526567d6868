"""JAX's FAQ "How to use jit with methods?", with the FAQ's classes: a helper function, the
method marked static (with and without __hash__/__eq__: never a stale result), and the class
registered as a pytree whose aux data is a dict; grad with respect to such an object."""
import warnings
from functools import partial

import numpy as np
import pytest

from strop import grad, jit, tree_util
from strop.errors import JitFallbackWarning

pytestmark = pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")


# strategy 1: a helper function
class Helper:
    def __init__(self, x, mul):
        self.x = x
        self.mul = mul

    def calc(self, y):
        return _calc(self.mul, self.x, y)


@partial(jit, static_argnums=0)
def _calc(mul, x, y):
    if mul:
        return x * y
    return y


# strategy 2: self static (the FAQ's first version has no __hash__/__eq__)
class Static:
    def __init__(self, x, mul):
        self.x = x
        self.mul = mul

    @partial(jit, static_argnums=0)
    def calc(self, y):
        if self.mul:
            return self.x * y
        return y


class StaticHashed(Static):
    def __hash__(self):
        return hash((self.x, self.mul))

    def __eq__(self, other):
        return (isinstance(other, StaticHashed) and
                (self.x, self.mul) == (other.x, other.mul))

    @partial(jit, static_argnums=0)
    def calc(self, y):
        if self.mul:
            return self.x * y
        return y


# strategy 3: a pytree
class Tree:
    def __init__(self, x, mul):
        self.x = x
        self.mul = mul

    @jit
    def calc(self, y):
        if self.mul:
            return self.x * y
        return y

    def _tree_flatten(self):
        children = (self.x,)  # arrays / dynamic values
        aux_data = {'mul': self.mul}  # static values
        return (children, aux_data)

    @classmethod
    def _tree_unflatten(cls, aux_data, children):
        return cls(*children, **aux_data)


tree_util.register_pytree_node(Tree, Tree._tree_flatten, Tree._tree_unflatten)


@tree_util.register_pytree_node_class
class Decorated(Tree):
    def tree_flatten(self):
        return self._tree_flatten()

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        return cls(*children, **aux_data)


@pytest.mark.parametrize("cls", [Helper, Static, StaticHashed, Tree, Decorated])
def test_each_strategy_and_a_changed_object(cls):
    c = cls(2, True)
    assert c.calc(3) == 6
    c.mul = False
    assert c.calc(3) == 3    # no stale result (JAX's unhashed strategy 2 would give 6)
    c.mul = True
    c.x = 5
    assert c.calc(3) == 15


def test_compiled_not_fallen_back():
    assert StaticHashed(2.0, True).calc(3.0) == 6.0
    assert StaticHashed.calc.last_backend == "cpu"
    assert Tree(np.array([1.0, 2.0]), True).calc(3.0).tolist() == [3.0, 6.0]
    assert Tree.calc.last_backend == "cpu"


def test_grad_with_respect_to_the_object():
    t = Tree(np.array([1.0, 2.0]), True)
    g = grad(lambda t, y: np.sum(t.calc(y)))(t, 3.0)
    assert type(g) is Tree and g.mul is True and g.x.tolist() == [3.0, 3.0]
    g = grad(lambda t: np.sum(t.x ** 2) * (2.0 if t.mul else 1.0))(Decorated(np.array([1.0]),
                                                                             False))
    assert g.x.tolist() == [2.0]
    gy = grad(lambda y, t: np.sum(t.calc(y)), argnums=0)(3.0, t)
    assert gy == 3.0


def test_unhashable_aux_data_keys_the_cache():
    a, b = Tree(1.0, True), Tree(1.0, False)
    assert tree_util.tree_structure(a) == tree_util.tree_structure(Tree(7.0, True))
    assert tree_util.tree_structure(a) != tree_util.tree_structure(b)
    assert hash(tree_util.tree_structure(a)) == hash(tree_util.tree_structure(Tree(2.0, True)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        assert jit(lambda t: t.x + 1.0 if t.mul else t.x)(b) == 1.0
