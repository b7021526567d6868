"""Modeled on the JAX quickstart (docs/quickstart: "JAX as NumPy", "Just-in-time compilation",
"Taking derivatives with jax.grad", "Auto-vectorization with jax.vmap").

Kept: `selu(x, alpha=1.67, lmbda=1.05)` with `np.where`, and `selu_jit = jit(selu)` called
as a value; `sum_logistic(x)`; `derivative_fn = grad(sum_logistic)`; `apply_matrix(x)` that
reads the module-level matrix `mat`, and `vmap(apply_matrix)` over a batch.  Changed: the
pieces are terms of one objective, differentiated (grad of a jitted function, of a grad and
of a vmap); sizes 3 and 4.
"""
import numpy as np
import numpy as onp
from strop import grad, jit, vmap

ORIGIN = "jax"
mat = onp.random.RandomState(8).randn(3, 3)


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * np.where(x > 0, x, alpha * np.exp(x) - alpha)


selu_jit = jit(selu)


def sum_logistic(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


derivative_fn = grad(sum_logistic)


def apply_matrix(x):
    return np.dot(mat, x)


def loss(x, batched_x):
    batched = vmap(apply_matrix)(batched_x * x)
    return (sum_logistic(selu_jit(x)) + np.sum(derivative_fn(x) ** 2)
            + np.sum(selu(batched)) / batched_x.shape[0])


def example_loss(x, one_x):
    return sum_logistic(selu_jit(x)) + np.sum(selu(apply_matrix(one_x * x)))


def init():
    rng = onp.random.RandomState(9)
    x = rng.randn(3)
    batched_x = rng.randn(4, 3)
    return x, (batched_x,)
