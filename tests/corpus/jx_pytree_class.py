"""Modeled on the JAX FAQ, "How to use jit with methods?" (docs/faq), strategy 3: a class
registered as a pytree whose method is decorated with `@jit`.

Kept: `class CustomClass` with `__init__(self, x, mul)`, the method `calc(self, y)`
decorated `@jit` and branching on the static attribute `self.mul`; `_tree_flatten`
returning `(children, aux_data)` with `aux_data = {'mul': self.mul}`; the classmethod
`_tree_unflatten(cls, aux_data, children)` returning `cls(*children, **aux_data)`;
`tree_util.register_pytree_node(CustomClass, CustomClass._tree_flatten,
CustomClass._tree_unflatten)`.  Changed: the object is the differentiated parameter of a
loss (`np.sum(np.sin(obj.calc(y)) ** 2)`), and a training step updates it with
`tree_util.tree_map`.
"""
import numpy as np
import numpy as onp
from strop import grad, jit, tree_util

ORIGIN = "jax"


class CustomClass:
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


tree_util.register_pytree_node(CustomClass,
                               CustomClass._tree_flatten,
                               CustomClass._tree_unflatten)


def loss(obj, y):
    return np.sum(np.sin(obj.calc(y)) ** 2)


def example_loss(obj, y):
    return loss(obj, y)


def train(obj, y):
    for _ in range(3):
        g = grad(loss)(obj, y)
        obj = tree_util.tree_map(lambda p, dp: p - 0.1 * dp, obj, g)
    return obj


def init():
    rng = onp.random.RandomState(26)
    return CustomClass(rng.randn(3), True), (rng.randn(4, 3),)
