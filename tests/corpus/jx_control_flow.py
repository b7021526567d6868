"""Modeled on the JAX documentation "Control flow and logical operators with JIT"
(docs/control-flow): `lax.fori_loop`, `lax.cond`, `lax.switch`, `lax.while_loop`, and the
Sharp Bits' remark that `fori_loop` with static bounds is reverse-differentiable.

Kept: `fori_loop(lower, upper, body_fun, init_val)` with a tuple carry and a body closing
over parameters; `lax.cond(pred, true_fun, false_fun, operand)`; `lax.switch(index,
branches, operand)` with a list of lambdas; `lax.while_loop(cond_fun, body_fun, init_val)`
on values the gradient does not flow through (JAX cannot reverse-differentiate it).
Changed: the pieces are one objective over a dict of parameters, so that gradients flow
through fori_loop, cond and switch.
"""
import numpy as np
import numpy as onp
from strop import lax

ORIGIN = "jax"


def loss(params, xs):
    a, b = params['a'], params['b']

    def body_fun(i, carry):
        x, acc = carry
        x = np.tanh(a * x + b)
        return x, acc + np.sum(x ** 2)

    x, acc = lax.fori_loop(0, 4, body_fun, (xs, 0.0))
    y = lax.cond(acc > 1.0,
                 lambda v: np.sum(np.sin(v)),
                 lambda v: np.sum(np.cos(v)),
                 x)
    branches = [lambda v: np.sum(v * 2.0),
                lambda v: np.sum(np.exp(v)),
                lambda v: np.sum(v ** 3)]
    index = np.argmax(np.sum(xs, axis=1))
    z = lax.switch(index, branches, x)
    # how many halvings bring the data's scale under 0.1: no gradient flows through it
    n, _ = lax.while_loop(lambda c: c[1] > 0.1,
                          lambda c: (c[0] + 1, c[1] / 2.0),
                          (0, np.max(np.abs(xs))))
    return acc + y + z / (n + 1)


def init():
    rng = onp.random.RandomState(15)
    params = {'a': rng.randn(3), 'b': onp.array(0.2)}
    xs = rng.randn(3, 3)
    return params, (xs,)
