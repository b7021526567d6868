"""Modeled on the JAX documentation "Stateful computations" (docs/stateful-computations),
"A simple example: Linear Regression".

Kept: `class Params(NamedTuple)` with `weight` and `bias` (0-d arrays); `init`; `loss(params,
x, y)` with `pred = params.weight * x + params.bias` and the mean squared error; the jitted
`update` with `tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grad)`.
Changed: 8 points; NumPy's RandomState for the data and the initial parameters.
"""
from typing import NamedTuple

import numpy as np
import numpy as onp
import strop

ORIGIN = "jax"
LEARNING_RATE = 0.005


class Params(NamedTuple):
    weight: np.ndarray
    bias: np.ndarray


def loss(params: Params, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Computes the least squares error of the model's predictions on x against y."""
    pred = params.weight * x + params.bias
    return np.mean((pred - y) ** 2)


def example_loss(params, x, y):
    return loss(params, x, y)


@strop.jit
def update(params: Params, x: np.ndarray, y: np.ndarray) -> Params:
    """Performs one SGD update step on params using the given data."""
    grad = strop.grad(loss)(params, x, y)
    # If we were using Adam or another stateful optimizer, we would also do something like
    #   updates, new_optimizer_state = optimizer(grad, optimizer_state)
    # and then use `updates` instead of `grad` to actually update the params.
    new_params = strop.tree_util.tree_map(lambda param, g: param - g * LEARNING_RATE,
                                          params, grad)
    return new_params


def train(params, x, y):
    for _ in range(4):
        params = update(params, x, y)
    return params


def init():
    rng = onp.random.RandomState(12)
    x = rng.normal(size=(8,))
    noise = rng.normal(size=(8,))
    y = x * 3 - 1 + noise
    params = Params(onp.array(rng.normal()), onp.array(rng.normal()))
    return params, (x, y)
