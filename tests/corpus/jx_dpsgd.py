"""Modeled on jax-ml/jax examples/differentially_private_sgd.py (DP-SGD).

Kept: a network built stax-style, `init_fun, predict = serial(Dense(...), Relu, ...,
LogSoftmax)`, whose parameters are a list with one entry per layer ((W, b) tuples for
Dense, empty tuples for Relu and LogSoftmax) and whose apply loop zips functions with
parameters; the cross-entropy loss over a (inputs, targets) batch; `private_grad` with
`_clipped_grad` (grad of a single-example batch, `tree_util.tree_flatten`, the norm of the
leaf norms, the divisor under `stop_gradient`, `tree_unflatten`),
`vmap(partial(_clipped_grad, params))(batch)`, `tree_map` of the sum, the noise (`random.normal(rng, n.shape)`) and the normalization; the jitted
`private_update(rng, i, opt_state, batch)` with `random.fold_in(rng, i)` and SGD.
Changed: current JAX rejects the original's `np.linalg.norm` of a list and `np.amax` of a
tuple, so they are written `np.linalg.norm(np.array([...]))` and `np.maximum(norm / clip,
1.)`; Dense layers of width 6 on 5 features and 3 classes instead of the conv net;
4 examples of shape (1, 5) (the original's dummy_dim batch of one); SGD written out
(the original imports it from jax.experimental.optimizers); stax written out.
"""
from functools import partial

import numpy as np
import numpy as onp
from strop import grad, jit, random, tree_util, vmap
from strop.lax import stop_gradient
from strop.nn import logsumexp

ORIGIN = "jax"
L2_NORM_CLIP = 1.0
NOISE_MULTIPLIER = 1.1
LEARNING_RATE = 0.15
BATCH_SIZE = 4


# A few stax layers: each is (init_fun, apply_fun); init uses a NumPy RandomState.
def Dense(out_dim):
    def init_fun(rng, input_dim):
        return out_dim, (0.3 * rng.randn(input_dim, out_dim), 0.1 * rng.randn(out_dim))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return np.dot(inputs, W) + b
    return init_fun, apply_fun


def elementwise(fun):
    def init_fun(rng, input_dim):
        return input_dim, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs)
    return init_fun, apply_fun


Relu = elementwise(lambda x: np.maximum(x, 0.))
LogSoftmax = elementwise(lambda x: x - logsumexp(x, axis=-1, keepdims=True))


def serial(*layers):
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_dim):
        params = []
        for init in init_funs:
            input_dim, param = init(rng, input_dim)
            params.append(param)
        return input_dim, params

    def apply_fun(params, inputs, **kwargs):
        for fun, param in zip(apply_funs, params):
            inputs = fun(param, inputs, **kwargs)
        return inputs
    return init_fun, apply_fun


init_random_params, predict = serial(Dense(6), Relu, Dense(3), LogSoftmax)


def cross_entropy(params, batch):
    inputs, targets = batch
    logits = predict(params, inputs)
    return -np.mean(np.sum(logits * targets, -1))


def loss(params, inputs, targets):
    return cross_entropy(params, (inputs, targets))


def example_loss(params, inputs, targets):
    return cross_entropy(params, (inputs, targets))


def private_grad(params, batch, rng, l2_norm_clip, noise_multiplier, batch_size):
    """Return differentially private gradients for params, evaluated on batch."""
    def _clipped_grad(params, single_example_batch):
        """Evaluate gradient for a single-example batch and clip its grad norm."""
        grads = grad(cross_entropy)(params, single_example_batch)
        nonempty_grads, tree_def = tree_util.tree_flatten(grads)
        total_grad_norm = np.linalg.norm(
            np.array([np.linalg.norm(neg.ravel()) for neg in nonempty_grads]))
        divisor = stop_gradient(np.maximum(total_grad_norm / l2_norm_clip, 1.))
        normalized_nonempty_grads = [g / divisor for g in nonempty_grads]
        return tree_util.tree_unflatten(tree_def, normalized_nonempty_grads)

    px_clipped_grad_fn = vmap(partial(_clipped_grad, params))
    std_dev = l2_norm_clip * noise_multiplier
    noise_ = lambda n: n + std_dev * random.normal(rng, n.shape)
    normalize_ = lambda n: n / float(batch_size)
    tree_map = tree_util.tree_map
    sum_ = lambda n: np.sum(n, 0)  # aggregate
    aggregated_clipped_grads = tree_map(sum_, px_clipped_grad_fn(batch))
    noised_aggregated_clipped_grads = tree_map(noise_, aggregated_clipped_grads)
    normalized_noised_aggregated_clipped_grads = (
        tree_map(normalize_, noised_aggregated_clipped_grads))
    return normalized_noised_aggregated_clipped_grads


def sgd_update(i, g, params):
    return tree_util.tree_map(lambda x, g: x - LEARNING_RATE * g, params, g)


@jit
def private_update(rng, i, params, batch):
    rng = random.fold_in(rng, i)  # get new key for new random numbers
    return sgd_update(
        i,
        private_grad(params, batch, rng, L2_NORM_CLIP, NOISE_MULTIPLIER, BATCH_SIZE),
        params)


def init():
    rng = onp.random.RandomState(4)
    _, params = init_random_params(rng, 5)
    inputs = rng.randn(BATCH_SIZE, 1, 5)
    targets = onp.eye(3)[rng.randint(0, 3, size=BATCH_SIZE)][:, None, :]
    return params, (inputs, targets)


def train(params, inputs, targets):
    key = random.PRNGKey(0)
    for i in range(3):
        params = private_update(key, i, params, (inputs, targets))
    return params
