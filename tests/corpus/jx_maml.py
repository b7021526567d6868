"""Modeled on Eric Jang's "Meta-Learning in 50 Lines of JAX"
(https://blog.evjang.com/2019/02/maml-jax.html), MAML on sinusoid regression.

Kept: the network `net_apply` of stax.serial(Dense(40), Relu, Dense(40), Relu, Dense(1))
with parameters a list of per-layer tuples (() for Relu); `loss(params, inputs, targets)`
the mean squared error; `inner_update(p, x1, y1, alpha=.1)` taking `grad(loss)` and mapping
`lambda g, state: (state - alpha*g)` over the gradient and parameter trees (the post's
tree_multimap, now tree_map); `maml_loss(p, x1, y1, x2, y2)` = the loss after the inner
update (a gradient through a gradient); the batched meta-loss `np.mean(vmap(partial(
maml_loss, p))(x1, y1, x2, y2))` over tasks; the jitted meta `step` taking its gradient.
Changed: width 8 instead of 40; 3 tasks of 4 support and 4 query points; plain SGD for the
post's Adam.
"""
from functools import partial

import numpy as np
import numpy as onp
from strop import grad, jit, vmap
from strop.tree_util import tree_map

ORIGIN = "jax"


def net_apply(params, inputs):
    (w1, b1), _, (w2, b2), _, (w3, b3) = params
    h = np.maximum(np.dot(inputs, w1) + b1, 0.)
    h = np.maximum(np.dot(h, w2) + b2, 0.)
    return np.dot(h, w3) + b3


def mse_loss(params, inputs, targets):
    # Computes average loss for the batch
    predictions = net_apply(params, inputs)
    return np.mean((targets - predictions)**2)


def inner_update(p, x1, y1, alpha=.1):
    grads = grad(mse_loss)(p, x1, y1)
    inner_sgd_fn = lambda g, state: (state - alpha*g)  # noqa: E731
    return tree_map(inner_sgd_fn, grads, p)


def maml_loss(p, x1, y1, x2, y2):
    p2 = inner_update(p, x1, y1)
    return mse_loss(p2, x2, y2)


def batch_maml_loss(p, x1_b, y1_b, x2_b, y2_b):
    task_losses = vmap(partial(maml_loss, p))(x1_b, y1_b, x2_b, y2_b)
    return np.mean(task_losses)


def loss(p, x1_b, y1_b, x2_b, y2_b):
    return batch_maml_loss(p, x1_b, y1_b, x2_b, y2_b)


def example_loss(p, x1, y1, x2, y2):
    return maml_loss(p, x1, y1, x2, y2)


@jit
def step(p, x1_b, y1_b, x2_b, y2_b):
    g = grad(batch_maml_loss)(p, x1_b, y1_b, x2_b, y2_b)
    return tree_map(lambda w, dw: w - 0.01 * dw, p, g)


def train(p, x1_b, y1_b, x2_b, y2_b):
    for _ in range(2):
        p = step(p, x1_b, y1_b, x2_b, y2_b)
    return p


def init():
    rng = onp.random.RandomState(28)
    width = 8
    params = [(rng.randn(1, width) * 0.5, rng.randn(width) * 0.1), (),
              (rng.randn(width, width) / onp.sqrt(width), rng.randn(width) * 0.1), (),
              (rng.randn(width, 1) / onp.sqrt(width), rng.randn(1) * 0.1)]
    tasks = 3
    amp = rng.uniform(0.1, 5.0, size=(tasks, 1, 1))
    phase = rng.uniform(0., onp.pi, size=(tasks, 1, 1))
    x1 = rng.uniform(-5., 5., size=(tasks, 4, 1))
    x2 = rng.uniform(-5., 5., size=(tasks, 4, 1))
    return params, (x1, amp * onp.sin(x1 + phase), x2, amp * onp.sin(x2 + phase))
