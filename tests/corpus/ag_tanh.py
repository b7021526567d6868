"""Modeled on HIPS/autograd examples/tanh.py (higher derivatives of tanh by repeated grad).

Kept: tanh written from exponentials, `y = np.exp(-2.0 * x); return (1.0 - y) / (1.0 + y)`;
the chain of derivatives made by applying grad to the previous derivative (the original
goes to the sixth with elementwise_grad and plots them).  Changed: scalar points given in the
batch with grad (autograd's elementwise_grad has no counterpart among strop's names; a loop of
grad over points is its meaning); the loss sums the first four derivatives at each point,
so the checks differentiate to fifth order; the parameter is a scale on the points.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"


def tanh(x):
    y = np.exp(-2.0 * x)
    return (1.0 - y) / (1.0 + y)


d1 = grad(tanh)
d2 = grad(d1)
d3 = grad(d2)
d4 = grad(d3)
derivatives = [d1, d2, d3, d4]


def loss(scale, xs):
    total = 0.0
    for x in xs:
        for d in derivatives:
            total = total + d(scale * x)
    return total


def example_loss(scale, x):
    return sum(d(scale * x) for d in derivatives)


def init():
    return onp.array(1.1), (onp.array([-1.5, -0.2, 0.6, 1.3]),)
