"""Modeled on jax-ml/jax examples/newton_method.py (Newton's method with a Wolfe line search).

Kept: the test function `g` written as one lambda over x[0..3]; `newton(fun, x_0)` taking
`grad(fun)(x_0)` and `hessian(fun)(x_0)`, the direction `dk = -np.linalg.inv(hessian).dot(
gradient.T).reshape(1, -1)`, the stopping test on `np.linalg.norm(dk)`; `wolfe(fun, res0,
x_0, dk)` bisecting the step with Python `while`/`if` on values, calling `grad(fun)` inside
(unjitted, as the original).  Changed: the corpus objective is g after one Newton step from
x (a function of grad and hessian, differentiated once more); `train` runs two Newton
iterations with the line search; the x_0 += update written out of place.
"""
import numpy as np
import numpy as onp
from strop import grad, hessian

ORIGIN = "jax"

g = lambda x: (-13 + x[0] + ((5 - x[1])*x[1] - 2)*x[1])**2 + (-29 + x[0] + ((x[1] + 1)*x[1] - 14)*x[1])**2 + (-13 + x[2] + ((5 - x[3])*x[3] - 2)*x[3])**2 + (-29 + x[2] + ((x[3] + 1)*x[3] - 14)*x[3])**2  # noqa: E501


def newton_direction(fun, x_0):
    gradient = grad(fun)(x_0)
    hess = hessian(fun)(x_0)
    return -np.linalg.inv(hess).dot(gradient.T).reshape(1, -1)


def loss(x):
    dk = newton_direction(g, x)
    return g(x + 0.5 * dk[0])


def wolfe(fun, res0, x_0, dk, c1=0.3, c2=0.5, alphas=0., alphae=2., eps=1e-3):
    """Step size finder."""
    alpha = 1
    f0 = fun(x_0)
    while alphas < alphae:
        x = x_0 + (alpha*dk)[0]
        f1 = fun(x)
        if f1 <= f0 + c1*alpha*res0.dot(dk.T):
            res1 = grad(fun)(x)
            if res1.dot(dk.T) >= c2*res0.dot(dk.T):
                break
            else:
                alphas = alpha
                alpha = 0.5 * (alphas + alphae)
        else:
            alphae = alpha
            alpha = 0.5 * (alphas + alphae)
        if np.abs(alphas - alphae) < eps:
            break
    return alpha


def train(x_0, epsilon=1e-6):
    k = 0
    while k < 2:
        gradient = grad(g)(x_0)
        dk = newton_direction(g, x_0)
        if np.linalg.norm(dk) >= epsilon:
            alpha = wolfe(g, gradient, x_0, dk)
            x_0 = x_0 + alpha * dk[0]
            k += 1
        else:
            break
    return x_0


def init():
    rng = onp.random.RandomState(22)
    return onp.array([1., -1., 1., -1.]) + 0.1 * rng.randn(4), ()
