"""Modeled on HIPS/autograd examples/neural_net_regression.py (an MLP regression with a
Gaussian prior on all weights).

Kept: init_random_params' list of (weights, biases) tuples; nn_predict(params, inputs,
nonlinearity=np.tanh) with the nonlinearity as a default argument and `for W, b in params`;
log_gaussian(params, scale) taking all parameters through `flat_params, _ = flatten(params)`;
logprob with a Gaussian likelihood of noise_scale 0.1; the objective
-logprob(weights, inputs, targets) - log_gaussian(weights, weight_prior_variance); the toy
data set (two clusters of cos(x) plus noise, rescaled).  Changed: autograd.misc.flatten is
written here as a helper returning (vector, None) that ravels every leaf in a two-level
list comprehension and concatenates them (autograd.misc is not part of a port by imports; a
recursive isinstance(list) walk would not work under autograd, whose containers are boxed); norm.logpdf written as its NumPy
formula; layer sizes 1-4-4-1 and 8 points; 3 steps of gradient descent instead of adam.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"
WEIGHT_PRIOR_VARIANCE = 10.0


def norm_logpdf(x, loc, scale):
    return -0.5 * ((x - loc) / scale) ** 2 - np.log(scale) - 0.5 * np.log(2 * np.pi)


def flatten(params):
    return np.concatenate([np.ravel(p) for layer in params for p in layer]), None


def init_random_params(scale, layer_sizes, rs):
    return [(rs.randn(insize, outsize) * scale,
             rs.randn(outsize) * scale)
            for insize, outsize in zip(layer_sizes[:-1], layer_sizes[1:])]


def nn_predict(params, inputs, nonlinearity=np.tanh):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = nonlinearity(outputs)
    return outputs


def log_gaussian(params, scale):
    flat_params, _ = flatten(params)
    return np.sum(norm_logpdf(flat_params, 0, scale))


def logprob(weights, inputs, targets, noise_scale=0.1):
    predictions = nn_predict(weights, inputs)
    return np.sum(norm_logpdf(predictions, targets, noise_scale))


def loss(weights, inputs, targets):
    return -logprob(weights, inputs, targets) - log_gaussian(weights, WEIGHT_PRIOR_VARIANCE)


def build_toy_dataset(n_data=8, noise_std=0.1):
    rs = onp.random.RandomState(0)
    inputs = onp.concatenate([onp.linspace(0, 3, num=n_data // 2),
                              onp.linspace(6, 8, num=n_data // 2)])
    targets = onp.cos(inputs) + rs.randn(n_data) * noise_std
    inputs = (inputs - 4.0) / 2.0
    inputs = inputs[:, onp.newaxis]
    targets = targets[:, onp.newaxis] / 2.0
    return inputs, targets


def init():
    params = init_random_params(0.5, [1, 4, 4, 1], onp.random.RandomState(0))
    return params, build_toy_dataset()


def train(params, inputs, targets):
    objective_grad = grad(loss)
    for t in range(3):
        g = objective_grad(params, inputs, targets)
        params = [(W - 0.002 * dW, b - 0.002 * db) for (W, b), (dW, db) in zip(params, g)]
    return params
