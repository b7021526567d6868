"""Modeled on HIPS/autograd examples/hmm_em.py (EM for a hidden Markov model, the E step as
the gradient of the log partition function).

Kept: log_partition_function(natural_params, data) that recurses over a list of sequences with
`sum(map(partial(log_partition_function, natural_params), data))`, unpacks `log_pi, log_A,
log_B = natural_params` and runs the forward recursion `log_alpha = logsumexp(log_alpha[:,
None] + log_A, axis=0) + log_B[:, y]` over the symbols; logsumexp imported from scipy.special
as written (autograd.scipy.special in the twin, which newer autograd uses instead of
autograd.scipy.misc; strop runs strop.scipy.special's logsumexp in its place); normalize with
its nested replace_zeros and np.where; the EM update (value_and_grad of the log partition
function at the logs of the parameters, then normalize each expected statistic) as train.
Changed: 3 states, 4 symbols, two sequences of 5 and 4 symbols given as float arrays and turned
into a list of int arrays inside loss (the original reads a text file); three EM steps instead
of iterating to a fixed point; autograd.convenience_wrappers' vgrad is today's
autograd.value_and_grad.
"""
from functools import partial

import numpy as np
import numpy as onp
from scipy.special import logsumexp
from strop import value_and_grad

ORIGIN = "autograd"


def normalize(a):
    def replace_zeros(a):
        return np.where(a > 0., a, 1.)
    return a / replace_zeros(a.sum(-1, keepdims=True))


def log_partition_function(natural_params, data):
    if isinstance(data, list):
        return sum(map(partial(log_partition_function, natural_params), data))

    log_pi, log_A, log_B = natural_params

    log_alpha = log_pi
    for y in data:
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, y]

    return logsumexp(log_alpha)


def as_sequences(seq_a, seq_b):
    return [seq_a.astype(int), seq_b.astype(int)]


def loss(natural_params, seq_a, seq_b):
    return log_partition_function(natural_params, as_sequences(seq_a, seq_b))


def init():
    rs = onp.random.RandomState(4)
    pi = normalize(rs.rand(3))
    A = normalize(rs.rand(3, 3))
    B = normalize(rs.rand(3, 4))
    natural_params = (onp.log(pi), onp.log(A), onp.log(B))
    seq_a = onp.array([0., 2., 1., 3., 1.])
    seq_b = onp.array([3., 3., 0., 2.])
    return natural_params, (seq_a, seq_b)


def train(natural_params, seq_a, seq_b):
    data = as_sequences(seq_a, seq_b)
    params = tuple(np.exp(p) for p in natural_params)

    def EM_update(params):
        natural_params = list(map(np.log, params))
        loglike, E_stats = value_and_grad(log_partition_function)(natural_params, data)  # E step
        return list(map(normalize, E_stats))                                            # M step

    for i in range(3):
        params = EM_update(params)
    return params
