"""Modeled on HIPS/autograd examples/logistic_regression.py (the README's first example).

Kept: sigmoid through tanh; logistic_predictions(weights, inputs) = sigmoid(np.dot(inputs,
weights)); training_loss as the negative log of label_probabilities = preds * targets +
(1 - preds) * (1 - targets); the training loop `weights -= training_gradient_fun(weights) *
0.01` with the gradient function made once by grad.  Changed: the original's data are module
globals read by training_loss(weights); here they come in the batch (inputs, targets), the
same 4 x 3 toy inputs and targets as the original; 5 steps instead of 100.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"


def sigmoid(x):
    return 0.5 * (np.tanh(x / 2.0) + 1)


def logistic_predictions(weights, inputs):
    return sigmoid(np.dot(inputs, weights))


def loss(weights, inputs, targets):
    preds = logistic_predictions(weights, inputs)
    label_probabilities = preds * targets + (1 - preds) * (1 - targets)
    return -np.sum(np.log(label_probabilities))


def example_loss(weights, input, target):
    return loss(weights, input, target)


def init():
    inputs = onp.array([[0.52, 1.12, 0.77],
                        [0.88, -1.08, 0.15],
                        [0.52, 0.06, -1.30],
                        [0.74, -2.49, 1.39]])
    targets = onp.array([1.0, 1.0, 0.0, 1.0])
    weights = onp.array([0.0, 0.0, 0.0])
    return weights, (inputs, targets)


def train(weights, inputs, targets):
    training_gradient_fun = grad(loss)
    weights = weights.copy()
    for i in range(5):
        weights -= training_gradient_fun(weights, inputs, targets) * 0.01
    return weights
