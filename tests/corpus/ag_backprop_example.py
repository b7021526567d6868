"""Modeled on the autograd example of Atry/lift-tutorial (autograd.rst, "a simple example with
autograd"), which ports Matt Mazur's "A Step by Step Backpropagation Example"
(mattmazur.com/2015/03/17) to autograd.

Kept: params = [(W1, B1), (W2, B2)] with scalar biases, unpacked by the nested tuple target
`(W1, B1), (W2, B2) = params`; sigmoid as 1 / (exp(-x) + 1); predict with np.dot(W, input)
(weights on the left, one input vector); the loss sum(0.5 * (target - predict) ** 2); Mazur's
numbers (W1 = [[.15, .20], [.25, .30]], B1 = .35, W2 = [[.40, .45], [.50, .55]], B2 = .60,
input [.05, .10], target [.01, .99]); the tutorial's train step, which unpacks the gradient the
same nested way and rebuilds the list with learning rate 0.5.  Changed: the biases are 0-d
float64 arrays (the tutorial's are Python floats); three training steps.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"


def sigmoid(x):
    return 1.0 / (np.exp(-x) + 1)


def predict(params, input):
    (W1, B1), (W2, B2) = params
    hidden = sigmoid(np.dot(W1, input) + B1)
    output = sigmoid(np.dot(W2, hidden) + B2)
    return output


def loss(params, input, target):
    return (0.5 * (target - predict(params, input)) ** 2).sum()


loss_grad = grad(loss)


def train_step(params, input, target):
    (W1, B1), (W2, B2) = params
    (dW1, dB1), (dW2, dB2) = loss_grad(params, input, target)
    return [(W1 - 0.5 * dW1, B1 - 0.5 * dB1), (W2 - 0.5 * dW2, B2 - 0.5 * dB2)]


def init():
    W1 = onp.array([[0.15, 0.20], [0.25, 0.30]])
    B1 = onp.array(0.35)
    W2 = onp.array([[0.40, 0.45], [0.50, 0.55]])
    B2 = onp.array(0.60)
    return [(W1, B1), (W2, B2)], (onp.array([0.05, 0.10]), onp.array([0.01, 0.99]))


def train(params, input, target):
    for i in range(3):
        params = train_step(params, input, target)
    return params
