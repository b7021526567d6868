"""Modeled on jax-ml/jax examples/mnist_classifier_fromscratch.py (an MLP from scratch).

Kept: parameters as a list of (w, b) tuples made by a comprehension over zip(sizes[:-1],
sizes[1:]); predict's `for w, b in params[:-1]` loop with tanh and the final layer read as
`final_w, final_b = params[-1]`; log-softmax by `logits - logsumexp(logits, axis=1,
keepdims=True)`; the loss `-mean(preds * targets)` over a (inputs, targets) batch; the jitted
`update` that takes `grad(loss)` and rebuilds the list with a comprehension over
`zip(params, grads)`.  Changed: layer sizes 5-8-6-3 and 6 examples instead of MNIST;
logsumexp from `nn` (jax.nn.logsumexp) where the original imports jax.scipy.special's.
"""
import numpy as np
import numpy as onp
from strop import grad, jit
from strop.nn import logsumexp

ORIGIN = "jax"
LAYER_SIZES = [5, 8, 6, 3]
PARAM_SCALE = 0.1
STEP_SIZE = 0.5


def init_random_params(scale, layer_sizes, rng):
    return [(scale * rng.randn(m, n), scale * rng.randn(n))
            for m, n, in zip(layer_sizes[:-1], layer_sizes[1:])]


def predict(params, inputs):
    activations = inputs
    for w, b in params[:-1]:
        outputs = np.dot(activations, w) + b
        activations = np.tanh(outputs)

    final_w, final_b = params[-1]
    logits = np.dot(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, inputs, targets):
    preds = predict(params, inputs)
    return -np.mean(preds * targets)


def example_loss(params, inputs, targets):
    # one example: predict on a batch of one, as a per-example gradient would
    return loss(params, inputs[None, :], targets[None, :])


def init():
    rng = onp.random.RandomState(0)
    params = init_random_params(PARAM_SCALE, LAYER_SIZES, rng)
    inputs = rng.randn(6, LAYER_SIZES[0])
    labels = rng.randint(0, LAYER_SIZES[-1], size=6)
    targets = onp.eye(LAYER_SIZES[-1])[labels]
    return params, (inputs, targets)


@jit
def update(params, inputs, targets):
    grads = grad(loss)(params, inputs, targets)
    return [(w - STEP_SIZE * dw, b - STEP_SIZE * db)
            for (w, b), (dw, db) in zip(params, grads)]


def train(params, inputs, targets):
    for _ in range(3):
        params = update(params, inputs, targets)
    return params
