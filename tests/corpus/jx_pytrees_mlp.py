"""Modeled on the JAX documentation "Working with pytrees" (docs/working-with-pytrees),
"Example of a simple MLP training loop".

Kept: `init_mlp_params(layer_widths)` returning a list of dicts
`dict(weights=..., biases=...)` with weights scaled by sqrt(2/n_in); `forward(params, x)`
unpacking `*hidden, last = params` and looping `for layer in hidden` with
`nn.relu(x @ layer['weights'] + layer['biases'])`; `loss_fn` the mean squared error; the
jitted `update` with `tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)`.
Changed: widths 1-8-8-1 on 6 points of y = x**2; NumPy's RandomState for the weights;
tree_util.tree_map (the page now writes jax.tree.map, the same function).
"""
import numpy as np
import numpy as onp
from strop import grad, jit, nn
from strop.tree_util import tree_map

ORIGIN = "jax"
LEARNING_RATE = 0.05


def init_mlp_params(layer_widths, rng):
    params = []
    for n_in, n_out in zip(layer_widths[:-1], layer_widths[1:]):
        params.append(
            dict(weights=rng.normal(size=(n_in, n_out)) * onp.sqrt(2 / n_in),
                 biases=onp.ones(shape=(n_out,)))
        )
    return params


def forward(params, x):
    *hidden, last = params
    for layer in hidden:
        x = nn.relu(x @ layer['weights'] + layer['biases'])
    return x @ last['weights'] + last['biases']


def loss_fn(params, x, y):
    return np.mean((forward(params, x) - y) ** 2)


def loss(params, x, y):
    return loss_fn(params, x, y)


def example_loss(params, x, y):
    return loss_fn(params, x[None], y[None])


@jit
def update(params, x, y):
    grads = grad(loss_fn)(params, x, y)
    return tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)


def train(params, x, y):
    for _ in range(3):
        params = update(params, x, y)
    return params


def init():
    rng = onp.random.RandomState(11)
    params = init_mlp_params([1, 8, 8, 1], rng)
    x = rng.uniform(-1, 1, size=(6, 1))
    y = x ** 2
    return params, (x, y)
