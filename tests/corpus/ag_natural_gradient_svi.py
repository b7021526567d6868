"""Modeled on HIPS/autograd examples/natural_gradient_black_box_svi.py (black-box variational
inference preconditioned by the diagonal Fisher information).

Kept: black_box_variational_inference of black_box_svi.py (a factory returning the objective,
its gradient made by grad inside the factory, and unpack_params); the log density reading
the module-level observation vector Y (made with a fixed seed, as the original's
np.random.seed(42) script does) and splitting x[:, :obs_dim], x[:, obs_dim:] with sums over
axis 1; fisher_diag(lam) with np.concatenate of np.exp(-2.0 * log_sigma) and
np.ones(len(log_sigma)) * 2; natural_gradient as a lambda `(1.0 / fisher_diag(lam)) *
gradient(lam, i)`; autograd.misc.optimizers.sgd with mass 0.001 (written out: velocity =
mass * velocity - (1.0 - mass) * g; x = x + step_size * velocity) as the training loop.
Changed: obs_dim 3 (D = 6); 8 samples whose noise is drawn in init (see REFUSED);
norm.logpdf written as its NumPy formula; 3 SGD steps with step size 0.1.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"
REFUSED = ("black_box_svi's objective draws rs.randn(num_samples, D) inside the differentiated "
           "function: stateful RNG inside a transform is a PurityError by design (Sharp Bits); "
           "the noise is drawn in init and passed to the objective")


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


obs_dim = 3
_rs = onp.random.RandomState(42)
Y = _rs.randn(obs_dim, obs_dim).dot(_rs.randn(obs_dim))


def log_density(x, t):
    mu, log_sigma = x[:, :obs_dim], x[:, obs_dim:]
    sigma_density = np.sum(norm_logpdf(log_sigma, 0, 1.35), axis=1)
    mu_density = np.sum(norm_logpdf(Y, mu, np.exp(log_sigma)), axis=1)
    return sigma_density + mu_density


D = obs_dim * 2
objective, gradient, unpack_params = black_box_variational_inference(log_density, D,
                                                                     num_samples=8)


def fisher_diag(lam):
    mu, log_sigma = unpack_params(lam)
    return np.concatenate([np.exp(-2.0 * log_sigma), np.ones(len(log_sigma)) * 2])


def loss(params, noise):
    return objective(params, 0, noise)


def init():
    init_mean = -1 * onp.ones(D)
    init_log_std = -1 * onp.ones(D)
    noise = onp.random.RandomState(3).randn(8, D)
    return onp.concatenate([init_mean, init_log_std]), (noise,)


def train(x, noise, step_size=0.1, mass=0.001):
    natural_gradient = lambda lam, i: (1.0 / fisher_diag(lam)) * gradient(lam, i, noise)
    velocity = np.zeros(len(x))
    for i in range(3):
        g = natural_gradient(x, i)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x
