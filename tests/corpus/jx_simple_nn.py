"""Modeled on the JAX tutorial "Training a simple neural network, with tensorflow/datasets
data loading" (docs/notebooks/neural_network_with_tfds_data).

Kept: parameters as a list of (w, b) with w of shape (n, m) (`random_layer_params`);
`relu(x) = np.maximum(0, x)`; `predict(params, image)` for ONE image, looping `for w, b in
params[:-1]` with `np.dot(w, activations)`, then `final_w, final_b = params[-1]` and
`logits - logsumexp(logits)`; `batched_predict = vmap(predict, in_axes=(None, 0))`; the loss
`-np.mean(preds * targets)`; the jitted `update` rebuilding the list of tuples from
`zip(params, grads)`.  Changed: sizes 4-8-5-3 and 5 images; parameters made with NumPy's
RandomState (the tutorial splits PRNG keys); logsumexp from `nn` (the tutorial imports
jax.scipy.special's).
"""
import numpy as np
import numpy as onp
from strop import grad, jit, vmap
from strop.nn import logsumexp

ORIGIN = "jax"
LAYER_SIZES = [4, 8, 5, 3]
STEP_SIZE = 0.5


def random_layer_params(m, n, rng, scale=1e-1):
    return scale * rng.randn(n, m), scale * rng.randn(n)


def init_network_params(sizes, rng):
    return [random_layer_params(m, n, rng) for m, n in zip(sizes[:-1], sizes[1:])]


def relu(x):
    return np.maximum(0, x)


def predict(params, image):
    # per-example predictions
    activations = image
    for w, b in params[:-1]:
        outputs = np.dot(w, activations) + b
        activations = relu(outputs)

    final_w, final_b = params[-1]
    logits = np.dot(final_w, activations) + final_b
    return logits - logsumexp(logits)


batched_predict = vmap(predict, in_axes=(None, 0))


def loss(params, images, targets):
    preds = batched_predict(params, images)
    return -np.mean(preds * targets)


def example_loss(params, image, target):
    return -np.mean(predict(params, image) * target)


@jit
def update(params, x, y):
    grads = grad(loss)(params, x, y)
    return [(w - STEP_SIZE * dw, b - STEP_SIZE * db)
            for (w, b), (dw, db) in zip(params, grads)]


def train(params, images, targets):
    for _ in range(3):
        params = update(params, images, targets)
    return params


def init():
    rng = onp.random.RandomState(10)
    params = init_network_params(LAYER_SIZES, rng)
    images = rng.randn(5, LAYER_SIZES[0])
    targets = onp.eye(3)[rng.randint(0, 3, size=5)]
    return params, (images, targets)
