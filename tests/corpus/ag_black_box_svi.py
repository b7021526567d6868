"""Modeled on HIPS/autograd examples/black_box_svi.py (black-box variational inference with
the reparameterization trick).

Kept: black_box_variational_inference(logprob, D, num_samples) as a factory taking the log
posterior as a function value and returning (variational_objective, gradient, unpack_params);
the flat variational vector split as params[:D], params[D:]; gaussian_entropy; samples =
noise * np.exp(log_std) + mean; the lower bound gaussian_entropy + np.mean(logprob(samples, t));
the 2-d example posterior (a Gaussian at zero with a Gaussian prior on its log variance),
unpacking x[:, 0], x[:, 1]; adam's update written out as the training loop.
Changed: the noise `rs.randn(num_samples, D)` is drawn in init and passed in the batch (see
REFUSED); 16 samples; scipy.stats.norm.logpdf written as its NumPy formula; adam (from the
examples' optimizers module) written in train with its defaults over the flat vector.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"
REFUSED = ("the original draws rs.randn(num_samples, D) from a numpy RandomState inside the "
           "differentiated objective: stateful RNG inside a transform is a PurityError by design "
           "(Sharp Bits); the noise is drawn in init and passed in the batch")


def norm_logpdf(x, loc, scale):
    return -0.5 * ((x - loc) / scale) ** 2 - np.log(scale) - 0.5 * np.log(2 * np.pi)


def black_box_variational_inference(logprob, D, num_samples):
    def unpack_params(params):
        mean, log_std = params[:D], params[D:]
        return mean, log_std

    def gaussian_entropy(log_std):
        return 0.5 * D * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)

    def variational_objective(params, t, noise):
        mean, log_std = unpack_params(params)
        samples = noise * np.exp(log_std) + mean
        lower_bound = gaussian_entropy(log_std) + np.mean(logprob(samples, t))
        return -lower_bound

    gradient = grad(variational_objective)

    return variational_objective, gradient, unpack_params


D = 2


def log_posterior(x, t):
    mu, log_sigma = x[:, 0], x[:, 1]
    prior = norm_logpdf(log_sigma, 0, 1.35)
    likelihood = norm_logpdf(mu, 0, np.exp(log_sigma))
    return prior + likelihood


objective, gradient, unpack_params = black_box_variational_inference(log_posterior, D,
                                                                     num_samples=16)


def loss(params, noise):
    return objective(params, 0, noise)


def init():
    init_mean = -1 * onp.ones(D)
    init_log_std = -2 * onp.ones(D)
    noise = onp.random.RandomState(0).randn(16, D)
    return onp.concatenate([init_mean, init_log_std]), (noise,)


def train(x, noise, step_size=0.1, b1=0.9, b2=0.999, eps=10**-8):
    m = np.zeros(len(x))
    v = np.zeros(len(x))
    for i in range(3):
        g = gradient(x, i, noise)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * (g ** 2) + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (np.sqrt(vhat) + eps)
    return x
