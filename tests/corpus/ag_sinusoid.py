"""Modeled on HIPS/autograd examples/sinusoid.py (derivatives of a Taylor-series sine whose
loop stops on a value-dependent test).

Kept: fun(x) summing the series term by term, `currterm = -currterm * x ** 2 / ((2 * i + 3) *
(2 * i + 2))`, with `if np.abs(currterm) < 0.2: break` (the original's "very generous
tolerance"); d_fun = grad(fun) and dd_fun = grad(d_fun) made at module level and evaluated
pointwise over a grid, as the original's `map(d_fun, x)` does for its plot.  Changed: the loss
sums fun, d_fun and dd_fun over 5 points given in the batch (so its gradient is a third
derivative through a data-dependent loop), where the original plots them over 100 points; the
parameter is a scalar offset added to the grid.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"


def fun(x):
    currterm = x
    ans = currterm
    for i in range(1000):
        currterm = - currterm * x ** 2 / ((2 * i + 3) * (2 * i + 2))
        ans = ans + currterm
        if np.abs(currterm) < 0.2:
            break  # (Very generous tolerance!)
    return ans


d_fun = grad(fun)
dd_fun = grad(d_fun)


def loss(shift, xs):
    total = 0.0
    for x in xs:
        total = total + fun(x + shift) + d_fun(x + shift) + dd_fun(x + shift)
    return total


def example_loss(shift, x):
    return fun(x + shift) + d_fun(x + shift) + dd_fun(x + shift)


def init():
    return onp.array(0.3), (onp.array([-2.3, -0.7, 0.4, 1.6, 2.9]),)
