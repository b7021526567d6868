"""Modeled on HIPS/autograd examples/gplvm.py (a Gaussian process latent-variable model: the
latent coordinates and the GP hyperparameters of every output dimension in one flat vector).

Kept: make_gp_funs and rbf_covariance of gaussian_process.py (the factory taking the kernel as
a function value); unpack_params reshaping the first total_gp_params entries into
(data_dimension, params_per_gp) and the rest into (datalen, latent_dimension); the objective
`sum([log_marginal_likelihood(gp_params[i], latents, data[:, i]) for i in
range(data_dimension)])` (Python's sum over a list comprehension of row reads) plus a standard
normal prior on the latents.  Changed: 7 data points of dimension 2 (a small pinwheel-like
set from RandomState); scipy.stats' mvn.logpdf and norm.logpdf written as NumPy formulas; the
CG minimization is not kept.
"""
import numpy as np
import numpy as onp

ORIGIN = "autograd"


def mvn_logpdf(x, mean, cov):
    diff = x - mean
    sign, logdet = np.linalg.slogdet(cov)
    return -0.5 * (len(x) * np.log(2 * np.pi) + logdet + np.dot(diff, np.linalg.solve(cov, diff)))


def norm_logpdf(x):
    return -0.5 * x ** 2 - 0.5 * np.log(2 * np.pi)


def make_gp_funs(cov_func, num_cov_params):
    def unpack_kernel_params(params):
        mean = params[0]
        cov_params = params[2:]
        noise_scale = np.exp(params[1]) + 0.0001
        return mean, cov_params, noise_scale

    def log_marginal_likelihood(params, x, y):
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        prior_mean = mean * np.ones(len(y))
        return mvn_logpdf(y, prior_mean, cov_y_y)

    return num_cov_params + 2, log_marginal_likelihood


def rbf_covariance(kernel_params, x, xp):
    output_scale = np.exp(kernel_params[0])
    lengthscales = np.exp(kernel_params[1:])
    diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs ** 2, axis=2))


data_dimension = 2
latent_dimension = 2
datalen = 7
params_per_gp, log_marginal_likelihood = make_gp_funs(rbf_covariance,
                                                      num_cov_params=latent_dimension + 1)
total_gp_params = data_dimension * params_per_gp
num_latent_params = datalen * latent_dimension


def unpack_params(params):
    gp_params = np.reshape(params[:total_gp_params], (data_dimension, params_per_gp))
    latents = np.reshape(params[total_gp_params:], (datalen, latent_dimension))
    return gp_params, latents


def loss(params, data):
    gp_params, latents = unpack_params(params)
    gp_likelihood = sum([log_marginal_likelihood(gp_params[i], latents, data[:, i])
                         for i in range(data_dimension)])
    latent_prior_likelihood = np.sum(norm_logpdf(latents))
    return -gp_likelihood - latent_prior_likelihood


def init():
    rs = onp.random.RandomState(1)
    angles = onp.linspace(0, 2 * onp.pi, datalen, endpoint=False)
    data = onp.stack([onp.cos(angles), onp.sin(2 * angles)], axis=1) + 0.05 * rs.randn(datalen, 2)
    init_params = rs.randn(total_gp_params + num_latent_params) * 0.1
    return init_params, (data,)
