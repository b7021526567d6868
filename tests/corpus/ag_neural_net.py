"""Modeled on HIPS/autograd examples/neural_net.py (an MLP classifier for MNIST).

Kept: parameters as a list of (weights, biases) tuples built by a comprehension over
zip(layer_sizes[:-1], layer_sizes[1:]); neural_net_predict's `for W, b in params` loop with
tanh and the normalization `outputs - logsumexp(outputs, axis=1, keepdims=True)` with logsumexp
imported from scipy.special as written (autograd.scipy.special in the twin; strop runs
strop.scipy.special's logsumexp in its place); the L2 prior on all parameters; log_posterior
and the negated objective. Changed: layer sizes 5-8-6-3 and 6 random examples instead of MNIST;
autograd's `flatten` in l2_norm is written as a sum over the (W, b) pairs (autograd.misc is not
part of a port by imports); the training loop is plain gradient descent over the list of tuples
(autograd.misc.optimizers.adam flattens the parameters internally).
"""
import numpy as np
import numpy as onp
from scipy.special import logsumexp
from strop import grad

ORIGIN = "autograd"
LAYER_SIZES = [5, 8, 6, 3]
L2_REG = 0.1
STEP_SIZE = 0.05


def init_random_params(scale, layer_sizes, rs):
    """Build a list of (weights, biases) tuples, one for each layer in the net."""
    return [(scale * rs.randn(m, n),   # weight matrix
             scale * rs.randn(n))      # bias vector
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def neural_net_predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)


def l2_norm(params):
    return sum(np.sum(W ** 2) + np.sum(b ** 2) for W, b in params)


def log_posterior(params, inputs, targets, L2_reg):
    log_prior = -L2_reg * l2_norm(params)
    log_lik = np.sum(neural_net_predict(params, inputs) * targets)
    return log_prior + log_lik


def loss(params, inputs, targets):
    return -log_posterior(params, inputs, targets, L2_REG)


def example_loss(params, inputs, targets):
    return -np.sum(neural_net_predict(params, inputs[None, :]) * targets[None, :])


def init():
    rs = onp.random.RandomState(0)
    params = init_random_params(0.1, LAYER_SIZES, rs)
    inputs = rs.randn(6, LAYER_SIZES[0])
    targets = onp.eye(LAYER_SIZES[-1])[rs.randint(0, LAYER_SIZES[-1], size=6)]
    return params, (inputs, targets)


def train(params, inputs, targets):
    objective_grad = grad(loss)
    for i in range(3):
        g = objective_grad(params, inputs, targets)
        params = [(W - STEP_SIZE * dW, b - STEP_SIZE * db)
                  for (W, b), (dW, db) in zip(params, g)]
    return params
