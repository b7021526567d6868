"""Modeled on "How to Train a Neural Network from Scratch in JAX with Example" (a 2021
beginner's tutorial training an MLP on the 2-bit XOR gate; text found in the public
web-text dataset huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1).

Kept: the XOR toy dataset (4 input pairs, targets 0/1); the weight matrices generated from
a list of layer sizes (one (w, b) pair per layer in a list); a forward pass with a sigmoid
hidden layer looping over the layers; the mean squared error loss; gradients with
`grad(loss)` and a manual weight update ("backpropagation") in a jitted step; a training
loop.  Changed: 16 hidden units as the tutorial but a handful of steps; NumPy's
RandomState for the weights.
"""
import numpy as np
import numpy as onp
from strop import grad, jit
from strop.nn import sigmoid

ORIGIN = "jax"
LEARNING_RATE = 1.0


def init_weights(layer_sizes, rng):
    weights = []
    for n_in, n_out in zip(layer_sizes[:-1], layer_sizes[1:]):
        weights.append([0.5 * rng.randn(n_in, n_out), 0.1 * rng.randn(n_out)])
    return weights


def forward(weights, x):
    for i, (w, b) in enumerate(weights):
        x = x @ w + b
        if i < len(weights) - 1:
            x = sigmoid(x)
    return sigmoid(x)


def loss(weights, x, y):
    return np.mean((forward(weights, x) - y) ** 2)


def example_loss(weights, x, y):
    return np.mean((forward(weights, x) - y) ** 2)


@jit
def update(weights, x, y):
    grads = grad(loss)(weights, x, y)
    return [[w - LEARNING_RATE * dw, b - LEARNING_RATE * db]
            for (w, b), (dw, db) in zip(weights, grads)]


def train(weights, x, y):
    for _ in range(4):
        weights = update(weights, x, y)
    return weights


def init():
    rng = onp.random.RandomState(21)
    x = onp.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    y = onp.array([[0.], [1.], [1.], [0.]])
    return init_weights([2, 16, 1], rng), (x, y)
