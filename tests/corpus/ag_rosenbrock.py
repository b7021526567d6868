"""Modeled on HIPS/autograd examples/rosenbrock.py (minimizing the Rosenbrock function with
value_and_grad, the gradient function handed to an optimizer).

Kept: rosenbrock(x) = 100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2 summed
(the original writes its 2-d form, here the n-d sum over slices); value_and_grad(rosenbrock)
as the function the optimizer calls (the original passes it to scipy.optimize.minimize with
jac=True).  Changed: 4 dimensions starting at (-1.2, 1, -0.5, 0.8); train is 4 steps of
gradient descent with backtracking on the value returned next to the gradient, instead of
scipy's CG; example_loss is the function at one row of a batch of points.
"""
import numpy as np
import numpy as onp
from strop import value_and_grad

ORIGIN = "autograd"


def rosenbrock(x):
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def loss(x, shifts):
    return sum(rosenbrock(x + s) for s in shifts) / len(shifts)


def example_loss(x, shift):
    return rosenbrock(x + shift)


def init():
    x0 = onp.array([-1.2, 1.0, -0.5, 0.8])
    shifts = 0.05 * onp.random.RandomState(2).randn(3, 4)
    return x0, (shifts,)


def train(x, shifts):
    f_and_g = value_and_grad(loss)
    step = 1e-3
    for i in range(4):
        value, g = f_and_g(x, shifts)
        while loss(x - step * g, shifts) > value:
            step = step / 2
        x = x - step * g
    return x
