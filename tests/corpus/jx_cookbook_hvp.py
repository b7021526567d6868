"""Modeled on the JAX autodiff cookbook (docs/notebooks/autodiff_cookbook), "Hessian-vector
products with grad-of-grad" and "Hessian-vector products using both forward- and
reverse-mode".

Kept: the cookbook's `f(X) = np.sum(np.tanh(X)**2)` on a matrix; `hvp(f, primals, tangents)
= jvp(grad(f), primals, tangents)[1]` (forward-over-reverse) next to the grad-of-grad
`hvp_revrev` with `np.vdot`; both used as values in the objective, which is the curvature
v^T H v along a direction (what the cookbook's HVPs are for).  Changed: X is 3x4; the
objective is differentiated once more (a third-order derivative) so that the corpus
measures grad of jvp of grad; per-example: one direction per example.
"""
import numpy as np
import numpy as onp
from strop import grad, jvp

ORIGIN = "jax"


def f(X):
    return np.sum(np.tanh(X)**2)


def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def hvp_revrev(f, x, v):
    return grad(lambda x: np.vdot(grad(f)(x), v))(x)


def example_loss(X, V):
    # curvature of f at X along V, both ways the cookbook computes it
    return np.vdot(V, hvp(f, (X,), (V,))) + 0.5 * np.vdot(V, hvp_revrev(f, X, V))


def loss(X, Vs):
    total = 0.0
    for V in Vs:
        total = total + example_loss(X, V)
    return total / len(Vs)


def init():
    rng = onp.random.RandomState(5)
    X = rng.randn(3, 4)
    Vs = rng.randn(2, 3, 4)
    return X, (Vs,)
