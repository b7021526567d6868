"""Modeled on Michael Nielsen's network.py (mnielsen/neural-networks-and-deep-learning,
src/network.py, the book "Neural Networks and Deep Learning"; plain NumPy with a hand-written
backprop), ported to a gradient library the way its readers do: the Network's two lists
become a dict of lists and backprop becomes grad of the cost.

Kept: biases as a list of (y, 1) columns and weights as a list of (y, x) matrices made by
comprehensions over `sizes[1:]` and `zip(sizes[:-1], sizes[1:])`; feedforward's
`for b, w in zip(biases, weights): a = sigmoid(np.dot(w, a) + b)` on column vectors; the
quadratic cost 0.5 * np.linalg.norm(a - y) ** 2 (the QuadraticCost.fn of network2.py) summed
over the mini batch `for x, y in zip(xs, ys)` and divided by its length; update_mini_batch's
`[w - (eta / len(mini_batch)) * nw for w, nw in zip(weights, nabla_w)]` (here nabla is the
gradient of the summed cost).  Changed: sizes [3, 4, 2], 5 examples, 3 steps of SGD on one
mini batch; the cost is divided by the batch length in the loss (the update then uses eta).
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"
SIZES = [3, 4, 2]


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def feedforward(params, a):
    for b, w in zip(params["biases"], params["weights"]):
        a = sigmoid(np.dot(w, a) + b)
    return a


def cost_fn(a, y):
    return 0.5 * np.linalg.norm(a - y) ** 2


def loss(params, xs, ys):
    total = 0.0
    for x, y in zip(xs, ys):
        total = total + cost_fn(feedforward(params, x), y)
    return total / len(xs)


def example_loss(params, x, y):
    return cost_fn(feedforward(params, x), y)


def init():
    rs = onp.random.RandomState(10)
    biases = [rs.randn(y, 1) for y in SIZES[1:]]
    weights = [rs.randn(y, x) for x, y in zip(SIZES[:-1], SIZES[1:])]
    xs = rs.randn(5, SIZES[0], 1)
    ys = rs.rand(5, SIZES[-1], 1)
    return {"biases": biases, "weights": weights}, (xs, ys)


def train(params, xs, ys, eta=3.0):
    for step in range(3):
        nabla = grad(loss)(params, xs, ys)
        params = {"weights": [w - eta * nw for w, nw in zip(params["weights"], nabla["weights"])],
                  "biases": [b - eta * nb for b, nb in zip(params["biases"], nabla["biases"])]}
    return params
