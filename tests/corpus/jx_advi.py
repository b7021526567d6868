"""Modeled on jax-ml/jax examples/advi.py (automatic differentiation variational inference).

Kept: variational parameters as a tuple (mean, log_std); `diag_gaussian_sample(rng, mean,
log_std)` with `random.normal(rng, mean.shape)`; `diag_gaussian_logpdf` as
`np.sum(vmap(norm.logpdf)(x, mean, np.exp(log_std)))`; `elbo(logprob, rng, params)`;
`batch_elbo` splitting the key and vectorizing `vmap(partial(elbo, logprob), in_axes=(0,
None))`; the funnel density; the jitted objective making `random.PRNGKey(t)`; the jitted
momentum `update(i, opt_state)`.  Changed: 8 samples instead of 40, D = 2 as the original;
jax.scipy.stats.norm.logpdf written out as `norm_logpdf` (strop has no jax.scipy); the
momentum optimizer written out (the original imports it from jax.experimental.minmax); the
starting point (0.1, -0.2) instead of zeros so the gradient is not symmetric.
"""
from functools import partial

import numpy as np
import numpy as onp
from strop import grad, jit, random, vmap

ORIGIN = "jax"
NUM_SAMPLES = 8


def norm_logpdf(x, loc=0., scale=1.):
    return -0.5 * ((x - loc) / scale) ** 2 - np.log(scale) - 0.5 * np.log(2 * np.pi)


def diag_gaussian_sample(rng, mean, log_std):
    # Take a single sample from a diagonal multivariate Gaussian.
    return mean + np.exp(log_std) * random.normal(rng, mean.shape)


def diag_gaussian_logpdf(x, mean, log_std):
    # Evaluate a single point on a diagonal multivariate Gaussian.
    return np.sum(vmap(norm_logpdf)(x, mean, np.exp(log_std)))


def elbo(logprob, rng, params):
    # Single-sample Monte Carlo estimate of the variational lower bound.
    mean, log_std = params
    sample = diag_gaussian_sample(rng, mean, log_std)
    return logprob(sample) - diag_gaussian_logpdf(sample, mean, log_std)


def batch_elbo(logprob, rng, params, num_samples):
    # Average over a batch of random samples.
    rngs = random.split(rng, num_samples)
    vectorized_elbo = vmap(partial(elbo, logprob), in_axes=(0, None))
    return np.mean(vectorized_elbo(rngs, params))


def funnel_log_density(params):
    return norm_logpdf(params[0], 0, np.exp(params[1])) + \
        norm_logpdf(params[1], 0, 1.35)


@jit
def objective(params, t):
    rng = random.PRNGKey(t)
    return -batch_elbo(funnel_log_density, rng, params, NUM_SAMPLES)


def loss(params):
    return objective(params, 0)


def init():
    rng = onp.random.RandomState(3)
    init_mean = onp.array([0.1, -0.2]) + 0.01 * rng.randn(2)
    init_std = onp.zeros(2) + 0.01 * rng.randn(2)
    return (init_mean, init_std), ()


def momentum(step_size, mass):
    def init_fun(x0):
        v0 = tuple(np.zeros_like(x) for x in x0)
        return x0, v0

    def update_fun(i, g, state):
        x, velocity = state
        velocity = tuple(mass * v + gi for v, gi in zip(velocity, g))
        x = tuple(xi - step_size * v for xi, v in zip(x, velocity))
        return x, velocity

    def get_params(state):
        return state[0]
    return init_fun, update_fun, get_params


def train(params):
    opt_init, opt_update, get_params = momentum(step_size=0.1, mass=0.9)
    opt_state = opt_init(params)

    @jit
    def update(i, opt_state):
        params = get_params(opt_state)
        gradient = grad(objective)(params, i)
        return opt_update(i, gradient, opt_state)

    for t in range(3):
        opt_state = update(t, opt_state)
    return get_params(opt_state)
