"""Modeled on the JAX documentation "Custom derivative rules for JAX-transformable Python
functions" (docs/notebooks/Custom_derivative_rules_for_Python_code), its custom_vjp part.

Kept: `f(x, y) = np.sin(x) * y` with `@custom_vjp` and `f.defvjp(f_fwd, f_bwd)`, the
forward saving `(np.cos(x), np.sin(x), y)` and the backward returning `(cos_x * g * y,
sin_x * g)`; `clip_gradient(lo, hi, x)` whose backward returns `(None, None, np.clip(g, lo,
hi))`.  Changed: both are terms of one objective over parameters (x, y) and a small batch,
with the clip bounds such that some cotangents are clipped.
"""
import numpy as np
import numpy as onp
from strop import custom_vjp

ORIGIN = "jax"


@custom_vjp
def f(x, y):
    return np.sin(x) * y


def f_fwd(x, y):
    # Returns primal output and residuals to be used in backward pass by f_bwd.
    return f(x, y), (np.cos(x), np.sin(x), y)


def f_bwd(res, g):
    cos_x, sin_x, y = res  # Gets residuals computed in f_fwd
    return (cos_x * g * y, sin_x * g)


f.defvjp(f_fwd, f_bwd)


@custom_vjp
def clip_gradient(lo, hi, x):
    return x  # identity function


def clip_gradient_fwd(lo, hi, x):
    return x, (lo, hi)  # save bounds as residuals


def clip_gradient_bwd(res, g):
    lo, hi = res
    return (None, None, np.clip(g, lo, hi))  # use None to indicate zero cotangents for lo and hi


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def example_loss(params, data):
    x, y = params
    return np.sum(f(x, y) * data) + np.sum(clip_gradient(-0.5, 0.5, x * data) ** 2)


def loss(params, data):
    x, y = params
    return np.sum(f(x, y) * data) + np.sum(clip_gradient(-0.5, 0.5, x * data) ** 2)


def init():
    rng = onp.random.RandomState(14)
    x = rng.randn(3)
    y = rng.randn(3)
    data = 2.0 * rng.randn(4, 3)
    return (x, y), (data,)
