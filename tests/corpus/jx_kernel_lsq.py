"""Modeled on jax-ml/jax examples/kernel_lsq.py (kernel least squares).

Kept: `gram(kernel, xs)` as two nested `vmap`s of lambdas closing over a kernel passed as a
value; the Gram matrix made by `jit(partial(gram, kernel))`; the objective `risk + reg` over
the dual weights `v`; minimization by momentum with a jitted `update(i, opt_state)` that
takes `grad(f)`; the prediction `vmap(lambda x_: kernel(x, x_))(xs)`.  Changed: 6 points in
3 dimensions; the momentum optimizer written out (the original imports it from
jax.experimental.minmax); the linear kernel of the original's main; a few steps; the
Gram matrix is built inside the loss so that the gradient goes through the nested vmaps.
"""
from functools import partial

import numpy as np
import numpy as onp
from strop import grad, jit, vmap

ORIGIN = "jax"
REGULARIZATION = 0.01


def kernel(x, y):
    return np.dot(x, y)


def gram(kernel, xs):
    return vmap(lambda x: vmap(lambda y: kernel(x, y))(xs))(xs)


def loss(v, xs, ys):
    gram_mat = jit(partial(gram, kernel))(xs)
    risk = .5 * np.sum((np.dot(gram_mat, v) - ys) ** 2.0)
    reg = REGULARIZATION * np.sum(v ** 2.0)
    return risk + reg


def predict(v, xs, x):
    prods = vmap(lambda x_: kernel(x, x_))(xs)
    return np.sum(v * prods)


def init():
    rng = onp.random.RandomState(1)
    truth = rng.randn(3)
    xs = rng.randn(6, 3)
    ys = onp.dot(xs, truth)
    v = 0.1 * rng.randn(6)
    return v, (xs, ys)


def momentum(step_size, mass):
    def init_fun(x0):
        return x0, np.zeros_like(x0)

    def update_fun(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        x = x - step_size * velocity
        return x, velocity

    def get_params(state):
        x, _ = state
        return x
    return init_fun, update_fun, get_params


def train(v, xs, ys):
    opt_init, opt_update, get_params = momentum(0.001, 0.9)
    f = partial(loss, xs=xs, ys=ys)

    @jit
    def update(i, opt_state):
        x = get_params(opt_state)
        return opt_update(i, grad(f)(x), opt_state)

    opt_state = opt_init(v)
    for i in range(3):
        opt_state = update(i, opt_state)
    return get_params(opt_state)
