"""Modeled on HIPS/autograd examples/gaussian_process.py (GP regression, kernel parameters fit
by maximizing the log marginal likelihood).

Kept: make_gp_funs(cov_func, num_cov_params), a factory taking the covariance function as a
value and returning (num_params, predict, log_marginal_likelihood) closures;
unpack_kernel_params reading the flat vector as params[0], params[2:] and
np.exp(params[1]) + 0.0001; rbf_covariance with np.expand_dims differences over lengthscales;
cov_y_y + noise_scale * np.eye(len(y)); prior_mean = mean * np.ones(len(y)); the objective as
a lambda-like -log_marginal_likelihood.  Changed: 8 one-dimensional inputs (the toy data
generator's shape, fewer points); scipy.stats.multivariate_normal.logpdf written as its NumPy
formula (np.linalg.solve and np.linalg.slogdet); the CG minimization is not kept.
"""
import numpy as np
import numpy as onp

ORIGIN = "autograd"


def mvn_logpdf(x, mean, cov):
    diff = x - mean
    sign, logdet = np.linalg.slogdet(cov)
    return -0.5 * (len(x) * np.log(2 * np.pi) + logdet + np.dot(diff, np.linalg.solve(cov, diff)))


def make_gp_funs(cov_func, num_cov_params):
    def unpack_kernel_params(params):
        mean = params[0]
        cov_params = params[2:]
        noise_scale = np.exp(params[1]) + 0.0001
        return mean, cov_params, noise_scale

    def predict(params, x, y, xstar):
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_f_f = cov_func(cov_params, xstar, xstar)
        cov_y_f = cov_func(cov_params, x, xstar)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        pred_mean = mean + np.dot(np.linalg.solve(cov_y_y, cov_y_f).T, y - mean)
        pred_cov = cov_f_f - np.dot(np.linalg.solve(cov_y_y, cov_y_f).T, cov_y_f)
        return pred_mean, pred_cov

    def log_marginal_likelihood(params, x, y):
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        prior_mean = mean * np.ones(len(y))
        return mvn_logpdf(y, prior_mean, cov_y_y)

    return num_cov_params + 2, predict, log_marginal_likelihood


def rbf_covariance(kernel_params, x, xp):
    output_scale = np.exp(kernel_params[0])
    lengthscales = np.exp(kernel_params[1:])
    diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs ** 2, axis=2))


D = 1
num_params, predict, log_marginal_likelihood = make_gp_funs(rbf_covariance, num_cov_params=D + 1)


def loss(params, X, y):
    return -log_marginal_likelihood(params, X, y)


def build_toy_dataset(D=1, n_data=8, noise_std=0.1):
    rs = onp.random.RandomState(0)
    inputs = onp.concatenate([onp.linspace(0, 3, num=n_data // 2),
                              onp.linspace(6, 8, num=n_data // 2)])
    targets = (onp.cos(inputs) + rs.randn(n_data) * noise_std) / 2.0
    inputs = (inputs - 4.0) / 2.0
    inputs = inputs.reshape((len(inputs), D))
    return inputs, targets


def init():
    X, y = build_toy_dataset(D=D)
    init_params = 0.1 * onp.random.RandomState(0).randn(num_params)
    return init_params, (X, y)
