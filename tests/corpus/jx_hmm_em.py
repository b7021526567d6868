"""Modeled on jax-ml/jax examples/hmm_em.py (expectation-maximization for a hidden Markov
model, the E step as the gradient of the log normalizer).

Kept: parameters a list [log_pi, log_A, log_B]; `log_normalizer(params, seq)` unpacking them
and running the forward recursion `marginalize(log_alpha, obs)` under `lax.scan` with
`logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, obs]` (an integer observation
indexing a column) and returning `(log_alpha, None)`; the jitted `EM(params, seq, num_steps)`
whose `update(i, params)` takes `grad(log_normalizer)` (the expected counts) and
renormalizes with a list comprehension `np.log(x / x.sum(-1, keepdims=True))`, iterated by
`lax.fori_loop(0, num_steps, update, params)`.  Changed: 3 states, 4 symbols, a sequence of
10 integer observations (kept integer: the original indexes with them); logsumexp from `nn`
(the original imports jax.scipy.special's); 2 EM steps.
"""
import numpy as np
import numpy as onp
from strop import grad, jit, lax
from strop.nn import logsumexp

ORIGIN = "jax"


def log_normalizer(params, seq):
    log_pi, log_A, log_B = params

    def marginalize(log_alpha, obs):
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, obs]
        return log_alpha, None
    log_alpha, _ = lax.scan(marginalize, log_pi, seq)
    return logsumexp(log_alpha)


def loss(params, seq):
    return log_normalizer(params, seq)


@jit
def EM(params, seq, num_steps):
    def update(i, params):
        moments = grad(log_normalizer)(params, seq)                     # E step
        return [np.log(x / x.sum(-1, keepdims=True)) for x in moments]  # M step
    return lax.fori_loop(0, num_steps, update, params)


def train(params, seq):
    return EM(params, seq, 2)


def init():
    rng = onp.random.RandomState(24)
    num_states, num_obs = 3, 4
    log_pi = rng.randn(num_states)
    log_A = rng.randn(num_states, num_states)
    log_B = rng.randn(num_states, num_obs)
    seq = rng.randint(0, num_obs, size=10)
    return [log_pi, log_A, log_B], (seq,)
