"""Modeled on HIPS/autograd examples/ica.py (independent component analysis with a Student-t
likelihood, all parameters in one flat vector).

Kept: the factory make_ica_funs(observed_dimension, latent_dimension) returning
(num_weights, sample, logprob, unpack_weights) as closures; predict = np.dot(weights,
latents).T; unpack_params slicing the flat vector into the weight matrix (reshape), the latents
(reshape) and noise_std = np.exp(params[-1]); the objective -logprob(...) / n_samples.
Changed: observed dimension 4, 2 latents, 6 samples; data made by the same sample() with a
RandomState outside the differentiated function; scipy.stats.t.logpdf(x, df, loc, scale) is
written as its NumPy formula, with the gammaln terms of the constant df = 2.4 computed once
by math.lgamma at import.  The CG minimization through scipy.optimize is not kept.
"""
import math

import numpy as np
import numpy as onp

ORIGIN = "autograd"

DF = 2.4
T_LOG_NORM = (math.lgamma((DF + 1) / 2) - math.lgamma(DF / 2)
              - 0.5 * math.log(DF * math.pi))


def t_logpdf(x, df, loc, scale):
    z = (x - loc) / scale
    return T_LOG_NORM - np.log(scale) - (df + 1) / 2 * np.log1p(z ** 2 / df)


def make_ica_funs(observed_dimension, latent_dimension):
    def sample(weights, n_samples, noise_std, rs):
        latents = rs.randn(latent_dimension, n_samples)
        latents = onp.array(sorted(latents.T, key=lambda a_entry: a_entry[0])).T
        noise = rs.randn(n_samples, observed_dimension) * noise_std
        observed = predict(weights, latents) + noise
        return latents, observed

    def predict(weights, latents):
        return np.dot(weights, latents).T

    def logprob(weights, latents, noise_std, observed):
        preds = predict(weights, latents)
        log_lik = np.sum(t_logpdf(preds, DF, observed, noise_std))
        return log_lik

    num_weights = observed_dimension * latent_dimension

    def unpack_weights(weights):
        return np.reshape(weights, (observed_dimension, latent_dimension))

    return num_weights, sample, logprob, unpack_weights


observed_dimension = 4
latent_dimension = 2
n_samples = 6
num_weights, sample, logprob, unpack_weights = make_ica_funs(observed_dimension,
                                                             latent_dimension)
num_latent_params = latent_dimension * n_samples
total_num_params = num_weights + num_latent_params + 1


def unpack_params(params):
    weights = unpack_weights(params[:num_weights])
    latents = np.reshape(params[num_weights:num_weights + num_latent_params],
                         (latent_dimension, n_samples))
    noise_std = np.exp(params[-1])
    return weights, latents, noise_std


def loss(params, data):
    weight_matrix, latents, noise_std = unpack_params(params)
    return -logprob(weight_matrix, latents, noise_std, data) / n_samples


def init():
    rs = onp.random.RandomState(0)
    true_weights = onp.zeros((observed_dimension, latent_dimension))
    for i in range(latent_dimension):
        true_weights[:, i] = onp.sin(onp.linspace(0, 4 + i * 3.2, observed_dimension))
    true_latents, data = sample(true_weights, n_samples, 1.0, rs)
    init_params = onp.random.RandomState(1).randn(total_num_params)
    return init_params, (data,)
