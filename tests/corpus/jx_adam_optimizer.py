"""Modeled on jax-ml/jax jax/example_libraries/optimizers.py (the `adam` optimizer and its
`@optimizer` triple) as used by examples/mnist_classifier.py.

Kept: `adam(step_size, b1=0.9, b2=0.999, eps=1e-8)` returning `init, update, get_params`,
the state a tuple `(x, m, v)` per leaf, `update(i, g, state)` with the bias corrections
`mhat = m / (1 - np.asarray(b1, m.dtype) ** (i + 1))`; the optimizer lifted to pytrees by
`tree_map` over the parameters and over the states (`tree_util.tree_map` with
`tree_flatten`/`tree_unflatten`, as the `@optimizer` decorator does); the jitted
`update(i, opt_state, batch)` of mnist_classifier taking `grad(loss)(get_params(opt_state),
batch)`.  Changed: a 3-6-2 softmax classifier on 6 examples written directly (the example
uses stax); 3 steps.
"""
import numpy as np
import numpy as onp
from strop import grad, jit, tree_util
from strop.nn import log_softmax

ORIGIN = "jax"


def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    def init(x0):
        m0 = np.zeros_like(x0)
        v0 = np.zeros_like(x0)
        return x0, m0, v0

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m  # First  moment estimate.
        v = (1 - b2) * np.square(g) + b2 * v  # Second moment estimate.
        mhat = m / (1 - np.asarray(b1, m.dtype) ** (i + 1))  # Bias correction.
        vhat = v / (1 - np.asarray(b2, m.dtype) ** (i + 1))
        x = x - step_size * mhat / (np.sqrt(vhat) + eps)
        return x, m, v

    def get_params(state):
        x, _, _ = state
        return x
    return init, update, get_params


def optimizer(opt_maker):
    """Lifts a per-array optimizer to pytrees of parameters, like example_libraries'."""
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(x0_tree):
            x0_flat, tree = tree_util.tree_flatten(x0_tree)
            return [init(x0) for x0 in x0_flat], tree

        def tree_update(i, grad_tree, opt_state):
            states_flat, tree = opt_state
            grad_flat, _ = tree_util.tree_flatten(grad_tree)
            new_states = [update(i, g, s) for g, s in zip(grad_flat, states_flat)]
            return new_states, tree

        def tree_get_params(opt_state):
            states_flat, tree = opt_state
            return tree_util.tree_unflatten(tree, [get_params(s) for s in states_flat])
        return tree_init, tree_update, tree_get_params
    return tree_opt_maker


def predict(params, inputs):
    hidden = np.tanh(inputs @ params['dense1']['w'] + params['dense1']['b'])
    return log_softmax(hidden @ params['dense2']['w'] + params['dense2']['b'])


def loss(params, inputs, targets):
    preds = predict(params, inputs)
    return -np.mean(np.sum(preds * targets, axis=1))


def train(params, inputs, targets):
    opt_init, opt_update, get_params = optimizer(adam)(0.05)
    opt_state = opt_init(params)

    @jit
    def update(i, states_flat):
        params = get_params((states_flat, tree))
        new_states, _ = opt_update(i, grad(loss)(params, inputs, targets), (states_flat, tree))
        return new_states

    states_flat, tree = opt_state
    for i in range(3):
        states_flat = update(i, states_flat)
    return get_params((states_flat, tree))


def init():
    rng = onp.random.RandomState(19)
    params = {'dense1': {'w': 0.5 * rng.randn(3, 6), 'b': onp.zeros(6)},
              'dense2': {'w': 0.5 * rng.randn(6, 2), 'b': onp.zeros(2)}}
    inputs = rng.randn(6, 3)
    targets = onp.eye(2)[(inputs[:, 0] > 0).astype(int)]
    return params, (inputs, targets)
