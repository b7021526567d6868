"""Modeled on the JAX documentation "Pseudorandom numbers" (docs/random-numbers): keys made
with `random.key`, split before every use (`key, subkey = random.split(key)`) and threaded
through a computation, here used for dropout in an MLP's training loss (the pattern of the
"Training a simple neural network" tutorial with the random-numbers page's key discipline).

Kept: `random.key(seed)`, `random.split(key)` and `random.split(key, num)`, the
`key, subkey = ...` idiom in a loop, `random.bernoulli(subkey, keep, shape)` for the dropout
mask and `random.normal` for input noise, parameters as a list of (w, b) tuples read with
`for w, b in params`.  Changed: a 4-8-8-1 regression MLP on 6 points; the key derived from a
fixed seed inside the loss so that the loss is a pure function of its arguments.
"""
import numpy as np
import numpy as onp
from strop import grad, jit, random

ORIGIN = "jax"
KEEP = 0.8


def dropout(key, x, keep):
    mask = random.bernoulli(key, keep, x.shape)
    return np.where(mask, x / keep, 0.0)


def forward(params, x, key):
    *hidden, (w_out, b_out) = params
    keys = random.split(key, len(hidden))
    for (w, b), k in zip(hidden, keys):
        x = np.tanh(x @ w + b)
        x = dropout(k, x, KEEP)
    return x @ w_out + b_out


def loss_with_key(params, x, y, key):
    key, subkey = random.split(key)
    x = x + 0.01 * random.normal(subkey, x.shape)
    pred = forward(params, x, key)
    return np.mean((pred - y) ** 2)


def loss(params, x, y):
    return loss_with_key(params, x, y, random.key(0))


@jit
def step(params, x, y, key):
    g = grad(loss_with_key)(params, x, y, key)
    return [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(params, g)]


def train(params, x, y):
    key = random.key(42)
    for _ in range(3):
        key, subkey = random.split(key)
        params = step(params, x, y, subkey)
    return params


def init():
    rng = onp.random.RandomState(17)
    sizes = [4, 8, 8, 1]
    params = [(0.5 * rng.randn(m, n), 0.1 * rng.randn(n)) for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.randn(6, 4)
    y = onp.sin(x.sum(axis=1, keepdims=True))
    return params, (x, y)
