"""Modeled on HIPS/autograd examples/deep_gaussian_process.py (a two-layer GP whose hidden
values are parameters).

Kept: build_deep_gp(input_dimension, hidden_dimension, covariance_function) calling
gaussian_process.py's factory make_gp_funs twice and returning closures; unpack_all_params
slicing the flat vector into layer-1 kernel parameters, layer-2 kernel parameters and the
hidden values; log_marginal_likelihood(all_params) summing the first GP (inputs X to targets
h) and the second (inputs np.atleast_2d(h).T to targets y), reading the data X, y and n_data
as module globals, as the original's closures read the script's globals; the step-function
data set; the objective `lambda params: -log_marginal_likelihood(params)`.  Changed: n_data 7;
the batch is empty (the data are globals); the multivariate normal log density
(scipy.stats) is written in NumPy through a Cholesky factor (np.linalg.cholesky, two
np.linalg.solve with the triangles, the log determinant from the diagonal); the CG
minimization is not kept.
"""
import numpy as np
import numpy as onp

ORIGIN = "autograd"


def mvn_logpdf(x, mean, cov):
    L = np.linalg.cholesky(cov)
    z = np.linalg.solve(L, x - mean)
    return -0.5 * np.dot(z, z) - np.sum(np.log(np.diag(L))) - 0.5 * len(x) * np.log(2 * np.pi)


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


def build_step_function_dataset(D=1, n_data=40, noise_std=0.1):
    rs = onp.random.RandomState(0)
    inputs = onp.linspace(-2, 2, num=n_data)
    targets = onp.sign(inputs) + rs.randn(n_data) * noise_std
    inputs = inputs.reshape((len(inputs), D))
    return inputs, targets


def build_deep_gp(input_dimension, hidden_dimension, covariance_function):
    num_params_layer1, log_marginal_likelihood_layer1 = make_gp_funs(
        covariance_function, num_cov_params=input_dimension + 1)
    num_params_layer2, log_marginal_likelihood_layer2 = make_gp_funs(
        covariance_function, num_cov_params=hidden_dimension + 1)

    num_hidden_params = hidden_dimension * n_data
    total_num_params = num_params_layer1 + num_params_layer2 + num_hidden_params

    def unpack_all_params(all_params):
        layer1_params = all_params[:num_params_layer1]
        layer2_params = all_params[num_params_layer1:num_params_layer1 + num_params_layer2]
        hiddens = all_params[num_params_layer1 + num_params_layer2:]
        return layer1_params, layer2_params, hiddens

    def log_marginal_likelihood(all_params):
        layer1_params, layer2_params, h = unpack_all_params(all_params)
        return log_marginal_likelihood_layer1(layer1_params, X, h) + \
            log_marginal_likelihood_layer2(layer2_params, np.atleast_2d(h).T, y)

    return total_num_params, log_marginal_likelihood, unpack_all_params


n_data = 7
input_dimension = 1
hidden_dimension = 1
X, y = build_step_function_dataset(D=input_dimension, n_data=n_data)
total_num_params, log_marginal_likelihood, unpack_all_params = build_deep_gp(
    input_dimension, hidden_dimension, rbf_covariance)
objective = lambda params: -log_marginal_likelihood(params)


def loss(params):
    return objective(params)


def init():
    rs = onp.random.RandomState(0)
    return 0.1 * rs.randn(total_num_params), ()
