"""Modeled on HIPS/autograd examples/bayesian_neural_net.py (a Bayesian MLP fit by black-box
variational inference; the net is vectorized over weight samples).

Kept: make_nn_funs(layer_sizes, L2_reg, noise_variance, nonlinearity) returning closures;
unpack_layers as a generator that yields (W, b) per layer from the rows of sampled weight
vectors (`weights[:, :m*n].reshape((num_weight_sets, m, n))`, then slices off what it used);
predictions with np.expand_dims and np.einsum('mnd,mdo->mno', ...); the nonlinearity passed as
a function value (the original's rbf lambda of norm.pdf); logprob with its L2 prior and
Gaussian likelihood `[:, 0]`; the black_box_variational_inference objective of
black_box_svi.py on top.  Changed: layer sizes 1-4-1, 6 data points, 5 weight samples whose
noise is drawn in init (see REFUSED); norm.pdf written as its NumPy formula; `shapes` is made
a list (the original's zip is consumed by the num_weights sum under Python 3 and would yield
no layers).
"""
import numpy as np
import numpy as onp

ORIGIN = "autograd"
REFUSED = ("black_box_svi's objective draws rs.randn(num_samples, D) inside the differentiated "
           "function: stateful RNG inside a transform is a PurityError by design (Sharp Bits); "
           "the noise is drawn in init and passed in the batch")


def make_nn_funs(layer_sizes, L2_reg, noise_variance, nonlinearity=np.tanh):
    shapes = list(zip(layer_sizes[:-1], layer_sizes[1:]))
    num_weights = sum((m + 1) * n for m, n in shapes)

    def unpack_layers(weights):
        num_weight_sets = len(weights)
        for m, n in shapes:
            yield weights[:, :m * n].reshape((num_weight_sets, m, n)), \
                weights[:, m * n:m * n + n].reshape((num_weight_sets, 1, n))
            weights = weights[:, (m + 1) * n:]

    def predictions(weights, inputs):
        inputs = np.expand_dims(inputs, 0)
        for W, b in unpack_layers(weights):
            outputs = np.einsum('mnd,mdo->mno', inputs, W) + b
            inputs = nonlinearity(outputs)
        return outputs

    def logprob(weights, inputs, targets):
        log_prior = -L2_reg * np.sum(weights ** 2, axis=1)
        preds = predictions(weights, inputs)
        log_lik = -np.sum((preds - targets) ** 2, axis=1)[:, 0] / noise_variance
        return log_prior + log_lik

    return num_weights, predictions, logprob


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

    return variational_objective, unpack_params


rbf = lambda x: np.exp(-0.5 * x ** 2) / np.sqrt(2 * np.pi)
num_weights, predictions, logprob = make_nn_funs(layer_sizes=[1, 4, 1], L2_reg=0.01,
                                                 noise_variance=0.01, nonlinearity=rbf)


def loss(params, inputs, targets, noise):
    log_posterior = lambda weights, t: logprob(weights, inputs, targets)
    objective, unpack_params = black_box_variational_inference(log_posterior, num_weights,
                                                               num_samples=5)
    return objective(params, 0, noise)


def build_toy_dataset(n_data=6, noise_std=0.1):
    rs = onp.random.RandomState(0)
    inputs = onp.concatenate([onp.linspace(0, 2, num=n_data // 2),
                              onp.linspace(6, 8, num=n_data // 2)])
    targets = onp.cos(inputs) + rs.randn(n_data) * noise_std
    inputs = (inputs - 4.0) / 4.0
    return inputs.reshape((len(inputs), 1)), targets.reshape((len(targets), 1))


def init():
    inputs, targets = build_toy_dataset()
    rs = onp.random.RandomState(0)
    init_mean = rs.randn(num_weights)
    init_log_std = -5 * onp.ones(num_weights)
    noise = rs.randn(5, num_weights)
    return onp.concatenate([init_mean, init_log_std]), (inputs, targets, noise)
