"""Modeled on forgi86/dl-sysid-lyon2026 (https://github.com/forgi86/dl-sysid-lyon2026), the
notebook "State-space identification with Jax" of a course on deep learning for system
identification.

Kept: parameters organized in a dictionary {"W1", "b1", "W2", "b2"} with W1 of shape
(nh, nu + nx) and W2 of shape (nx, nh) scaled by 1e-3; a neural state-space model whose
state update is `x + W2 @ tanh(W1 @ concat(u, x) + b1) + b2` and whose output is the first
state; the simulation over the input sequence with `lax.scan`; the mean squared simulation
error as the loss; inputs and outputs standardized by hand (`(u - mean) / std`); a jitted
training step.  Changed: 12 time steps of a synthetic cascaded-tanks-like response instead
of the benchmark data; nh = 8; plain gradient descent instead of optax's Adam.
"""
import numpy as np
import numpy as onp
from strop import grad, jit, lax

ORIGIN = "jax"
NU, NX, NY, NH = 1, 2, 1, 8
LR = 0.05


def f_xu(params, x, u):
    xu = np.concatenate([u, x])
    dx = params["W2"] @ np.tanh(params["W1"] @ xu + params["b1"]) + params["b2"]
    return x + dx


def g_x(x):
    return x[0:NY]


def simulate(params, x0, u_seq):
    def step(x, u):
        y = g_x(x)
        x_new = f_xu(params, x, u)
        return x_new, y

    _, y_sim = lax.scan(step, x0, u_seq)
    return y_sim


def loss(params, u, y):
    x0 = np.zeros(NX)
    y_sim = simulate(params, x0, u)
    return np.mean((y - y_sim) ** 2)


@jit
def train_step(params, u, y):
    grads = grad(loss)(params, u, y)
    return {k: params[k] - LR * grads[k] for k in params}


def train(params, u, y):
    for _ in range(3):
        params = train_step(params, u, y)
    return params


def init():
    rng = onp.random.RandomState(16)
    params = {
        "W1": rng.randn(NH, NU + NX),
        "b1": rng.randn(NH),
        "W2": rng.randn(NX, NH) * 1e-3,
        "b2": rng.randn(NX) * 1e-3,
    }
    u = onp.sin(onp.arange(12) / 2.0)[:, None] + 0.1 * rng.randn(12, 1)
    y = onp.zeros((12, 1))
    level = 0.0
    for t in range(12):  # a leaky tank driven by u
        level = 0.8 * level + 0.3 * onp.sqrt(abs(u[t, 0]) + 0.1)
        y[t, 0] = level
    u_sc = (u - u.mean()) / u.std()
    y_sc = (y - y.mean()) / y.std()
    return params, (u_sc, y_sc)
