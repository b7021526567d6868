"""Modeled on Chinnasf/My-Notes-on-PINNs (https://github.com/Chinnasf/My-Notes-on-PINNs), the
notebook "Simple example on Poisson Equation": a physics-informed neural network for
u''(x) = pi^2 sin(pi x) on [0, 1] with u(0) = u(1) = 0.

Kept: an MLP u_theta(x) with tanh layers over a list of (W, b) pairs, taking a scalar x;
the residual r(x) = d2u/dx2 - f(x) computed by nesting `grad(grad(u))` with respect to the
input; `vmap` of the residual over the collocation points; the loss = mean squared residual
+ the boundary term; a jitted gradient step.  Changed: width 8, 6 collocation points, the
sign convention of the source term chosen so that sin(pi x) solves it; plain gradient
descent for the notebook's optimizer.
"""
import numpy as np
import numpy as onp
from strop import grad, jit, vmap

ORIGIN = "jax"


def u_hat(params, x):
    h = np.array([x])
    for W, b in params[:-1]:
        h = np.tanh(W @ h + b)
    W, b = params[-1]
    return (W @ h + b)[0]


def source(x):
    return -np.pi ** 2 * np.sin(np.pi * x)


def residual(params, x):
    u_xx = grad(grad(u_hat, argnums=1), argnums=1)(params, x)
    return u_xx - source(x)


def example_loss(params, x):
    return residual(params, x) ** 2


def loss(params, xs):
    r = vmap(residual, in_axes=(None, 0))(params, xs)
    bc = u_hat(params, 0.0) ** 2 + u_hat(params, 1.0) ** 2
    return np.mean(r ** 2) + bc


@jit
def step(params, xs):
    grads = grad(loss)(params, xs)
    return [(W - 1e-3 * dW, b - 1e-3 * db) for (W, b), (dW, db) in zip(params, grads)]


def train(params, xs):
    for _ in range(2):
        params = step(params, xs)
    return params


def init():
    rng = onp.random.RandomState(23)
    sizes = [1, 8, 8, 1]
    params = [(rng.randn(n, m) / onp.sqrt(m), onp.zeros(n)) for m, n in zip(sizes[:-1], sizes[1:])]
    xs = onp.linspace(0.05, 0.95, 6)
    return params, (xs,)
