"""Modeled on the JAX autodiff cookbook (docs/notebooks/autodiff_cookbook), "Starting with
grad" (logistic regression) and "Per-example gradients" / the quickstart's
`vmap(grad(loss), in_axes=(None, 0, 0))` inside `jit`.

Kept: `sigmoid(x) = 0.5 * (np.tanh(x / 2) + 1)`; `predict(W, b, inputs)`; the loss as the
negative log likelihood `-np.sum(np.log(label_probs))` with `label_probs = preds * targets
+ (1 - preds) * (1 - targets)`; `grad(loss, argnums=(0, 1))`; the per-example gradients
`jit(vmap(grad(loss), in_axes=(None, None, 0, 0)))` summed into a training step.
Changed: parameters passed as one tuple (W, b) so that the corpus harness can take
`grad(loss)` of it; 4 examples with 3 features as in the cookbook; a few SGD steps.
"""
import numpy as np
import numpy as onp
from strop import grad, jit, vmap

ORIGIN = "jax"


def sigmoid(x):
    return 0.5 * (np.tanh(x / 2) + 1)


def predict(W, b, inputs):
    return sigmoid(np.dot(inputs, W) + b)


def wb_loss(W, b, inputs, targets):
    preds = predict(W, b, inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -np.sum(np.log(label_probs))


def loss(params, inputs, targets):
    W, b = params
    return wb_loss(W, b, inputs, targets)


def example_loss(params, inputs, targets):
    return loss(params, inputs, targets)


perex_grads = jit(vmap(grad(wb_loss, argnums=(0, 1)), in_axes=(None, None, 0, 0)))


def train(params, inputs, targets):
    W, b = params
    for _ in range(3):
        W_grads, b_grads = perex_grads(W, b, inputs, targets)
        W = W - 0.1 * np.sum(W_grads, axis=0)
        b = b - 0.1 * np.sum(b_grads, axis=0)
    return W, b


def init():
    rng = onp.random.RandomState(6)
    inputs = onp.array([[0.52, 1.12, 0.77],
                        [0.88, -1.08, 0.15],
                        [0.52, 0.06, -1.30],
                        [0.74, -2.49, 1.39]])
    targets = onp.array([1.0, 1.0, 0.0, 1.0])
    W = rng.randn(3)
    b = onp.array(rng.randn())
    return (W, b), (inputs, targets)
