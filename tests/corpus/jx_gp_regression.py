"""Modeled on jax-ml/jax examples/gaussian_process_regression.py.

Kept: hyperparameters as a dict of (1, 1) arrays {'amplitude', 'noise', 'lengthscale'}
passed through `softplus(x) = logaddexp(x, 0.)`; `cov_map(cov_func, xs)` as nested `vmap`s
of lambdas over a covariance function passed as a value; the exponentiated quadratic; the
Cholesky factor and the two triangular solves giving K^-1 y; the negative log marginal
likelihood with its lognormal prior term; `marginal_likelihood = partial(gp,
compute_marginal_likelihood=True)` and `grad_fun = jit(grad(marginal_likelihood))`; the
train step that walks the dict's keys updating momentums/scales with `grads[k][0]`.
Changed: 5 points; jax.scipy.linalg.cholesky/solve_triangular written with np.linalg
(cholesky, solve), which strop has; numpts and eye are module constants.
"""
from functools import partial

import numpy as np
import numpy as onp
from strop import grad, jit, vmap

ORIGIN = "jax"
NUMPTS = 5
EYE = onp.eye(NUMPTS)
LR = 0.01


def cov_map(cov_func, xs, xs2=None):
    if xs2 is None:
        return vmap(lambda x: vmap(lambda y: cov_func(x, y))(xs))(xs)
    else:
        return vmap(lambda x: vmap(lambda y: cov_func(x, y))(xs))(xs2).T


def softplus(x):
    return np.logaddexp(x, 0.)


def exp_quadratic(x1, x2):
    return np.exp(-np.sum((x1 - x2)**2))


def gp(params, x, y, xtest=None, compute_marginal_likelihood=False):
    noise = softplus(params['noise'])
    amp = softplus(params['amplitude'])
    ls = softplus(params['lengthscale'])
    ymean = np.mean(y)
    y = y - ymean
    x = x / ls
    train_cov = amp * cov_map(exp_quadratic, x) + EYE * (noise + 1e-6)
    chol = np.linalg.cholesky(train_cov)
    kinvy = np.linalg.solve(chol.T, np.linalg.solve(chol, y))
    if compute_marginal_likelihood:
        log2pi = np.log(2. * 3.1415)
        ml = np.sum(-0.5 * np.dot(y.T, kinvy) - np.sum(np.log(np.diag(chol))) -
                    (NUMPTS / 2.) * log2pi)
        ml -= np.sum(-0.5 * np.log(2 * 3.1415) - np.log(amp)**2)  # lognormal prior
        return -ml
    xtest = xtest / ls
    cross_cov = amp * cov_map(exp_quadratic, x, xtest)
    mu = np.dot(cross_cov.T, kinvy) + ymean
    return mu


marginal_likelihood = partial(gp, compute_marginal_likelihood=True)
grad_fun = jit(grad(marginal_likelihood))


def loss(params, x, y):
    return marginal_likelihood(params, x, y)


def init():
    rng = onp.random.RandomState(2)
    x = rng.uniform(size=(NUMPTS, 1)) * 4. + 1
    y = onp.sin(x) + 0.1 * rng.randn(NUMPTS, 1)
    params = {
        "amplitude": onp.zeros((1, 1)),
        "noise": onp.zeros((1, 1)) - 5.,
        "lengthscale": onp.zeros((1, 1)),
    }
    return params, (x, y)


def train_step(params, momentums, scales, x, y):
    grads = grad_fun(params, x, y)
    for k in (params):
        momentums[k] = 0.9 * momentums[k] + 0.1 * grads[k][0]
        scales[k] = 0.9 * scales[k] + 0.1 * grads[k][0]**2
        params[k] -= LR * momentums[k] / np.sqrt(scales[k] + 1e-5)
    return params, momentums, scales


def train(params, x, y):
    params = dict(params)
    momentums = dict([(k, p * 0.) for k, p in params.items()])
    scales = dict([(k, p * 0. + 1.) for k, p in params.items()])
    for i in range(3):
        params, momentums, scales = train_step(params, momentums, scales, x, y)
    return params
