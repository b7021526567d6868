"""Modeled on the JAX documentation "Custom derivative rules for JAX-transformable Python
functions" (docs/notebooks/Custom_derivative_rules_for_Python_code), its custom_jvp part.

Kept: the numerically stable `log1pexp` with `@custom_jvp` and `@log1pexp.defjvp`
(`ans_dot = (1 - 1/(1 + np.exp(x))) * x_dot`), used where `np.log(1 + np.exp(x))` would
give nan gradients at large x; the two-argument `f(x, y) = np.sin(x) * y` with its
`f_jvp(primals, tangents)` unpacking both; both under grad, jit and vmap.  Changed: the two
are terms of a logistic-style objective over parameters (w, c) and 4 examples, one of
which drives log1pexp's argument past 100 (the documentation's example point).
"""
import numpy as np
import numpy as onp
from strop import custom_jvp

ORIGIN = "jax"


@custom_jvp
def log1pexp(x):
    return np.log(1. + np.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    ans = log1pexp(x)
    ans_dot = (1 - 1/(1 + np.exp(x))) * x_dot
    return ans, ans_dot


@custom_jvp
def f(x, y):
    return np.sin(x) * y


@f.defjvp
def f_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    primal_out = f(x, y)
    tangent_out = np.cos(x) * x_dot * y + np.sin(x) * y_dot
    return primal_out, tangent_out


def example_loss(params, inputs, label):
    w, c = params
    z = np.dot(inputs, w)
    return log1pexp(-label * z) + np.sum(f(w, c))


def loss(params, inputs, labels):
    w, c = params
    z = np.dot(inputs, w)
    return np.sum(log1pexp(-labels * z)) + np.sum(f(w, c))


def init():
    rng = onp.random.RandomState(13)
    w = rng.randn(3)
    c = rng.randn(3)
    inputs = rng.randn(4, 3)
    inputs[2] = 60. * onp.sign(w)  # makes -label * z of the third example > 100
    labels = onp.array([1., -1., -1., 1.])
    return (w, c), (inputs, labels)
