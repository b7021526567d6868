"""Modeled on neonwatty/machine_learning_refined (the book "Machine Learning Refined", Watt,
Borhani, Katsaggelos), mlrefined_libraries/nonlinear_superlearn_library/intro_general_library/
multilayer_perceptron.py with its cost_functions/optimizers (autograd throughout).

Kept: the weight layout w = [list of inner layer matrices, final matrix] made by the Setup's
initializer (`w_init = [weights[:-1], weights[-1]]`, each matrix (U_k + 1) x U_k+1 with the
bias as row 0); feature_transforms looping `for W in w` that pads a row of ones with
np.vstack, takes np.dot(a.T, W).T and applies the activation chosen as a lambda; the model
`a = w[1][0] + np.dot(f.T, w[1][1:])`, data as columns (x is N x P); the least-squares cost
indexed by a minibatch of columns `x[:, iter]`; the book's gradient-descent loop (`w = w -
alpha * grad_eval`), here over the nested list since the book flattens with flatten_func.
Changed: 2 inputs, layers 2-4-3-1, 7 points; the batch index is all points.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"
LAYER_SIZES = [2, 4, 3, 1]

activation = lambda data: np.tanh(data)


def initializer(layer_sizes, scale, rs):
    weights = []
    for k in range(len(layer_sizes) - 1):
        U_k = layer_sizes[k]
        U_k_plus_1 = layer_sizes[k + 1]
        weight = scale * rs.randn(U_k + 1, U_k_plus_1)
        weights.append(weight)
    w_init = [weights[:-1], weights[-1]]
    return w_init


def feature_transforms(a, w):
    for W in w:
        o = np.ones((1, np.shape(a)[1]))
        a = np.vstack((o, a))
        a = np.dot(a.T, W).T
        a = activation(a)
    return a


def model(x, w):
    f = feature_transforms(x, w[0])
    a = w[1][0] + np.dot(f.T, w[1][1:])
    return a.T


def least_squares(w, x, y, iter):
    x_p = x[:, iter]
    y_p = y[:, iter]
    cost = np.sum((model(x_p, w) - y_p) ** 2)
    return cost / float(np.size(y_p))


def loss(w, x, y):
    return least_squares(w, x, y, np.arange(np.size(y)))


def init():
    rs = onp.random.RandomState(6)
    w = initializer(LAYER_SIZES, 0.5, rs)
    x = rs.randn(2, 7)
    y = onp.sin(x[:1] * 2.0) + 0.1 * x[1:]
    return w, (x, y)


def train(w, x, y):
    alpha = 0.1
    gradient = grad(loss)
    for k in range(3):
        grad_eval = gradient(w, x, y)
        w = [[W - alpha * dW for W, dW in zip(w[0], grad_eval[0])], w[1] - alpha * grad_eval[1]]
    return w
