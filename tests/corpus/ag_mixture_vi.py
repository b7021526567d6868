"""Modeled on HIPS/autograd examples/mixture_variational_inference.py (black-box variational
inference with a mixture of diagonal Gaussians, Graves' trick of integrating the discrete
choice).

Kept: the component functions bound to local names inside build_mog_bbsvi
(component_log_density = variational_log_density_gaussian, component_sample =
sample_diag_gaussian) and called through them; unpack_mixture_params (log_normalize of the
first k entries, the rest reshaped to (k, -1)); mixture_log_density stacking
`[component_log_density(params_k, x) for params_k in var_params]` (iteration over the rows
of a 2-d array) with np.vstack(...).T and a logsumexp with the log weights; mixture_elbo with
its nested mixture_lower_bound closure, the component ELBOs stacked with np.stack and weighted
by np.exp(log_weights); the bimodal 2-d target density with np.logaddexp; the objective
-elbo.  Changed: k = 3 components, 6 samples each; the samples' noise is drawn in init (see
REFUSED) and zipped with the components' rows; unpack_gaussian_params uses // (the original's
`/` is Python 2 division); norm.logpdf and logsumexp (autograd.scipy) written as NumPy
formulas.
"""
import numpy as np
import numpy as onp

ORIGIN = "autograd"
REFUSED = ("sample_diag_gaussian calls rs.randn(num_samples, D) on a numpy RandomState inside "
           "the differentiated ELBO: stateful RNG inside a transform is a PurityError by design "
           "(Sharp Bits); the noise is drawn in init and passed in the batch")


def norm_logpdf(x, loc, scale):
    return -0.5 * ((x - loc) / scale) ** 2 - np.log(scale) - 0.5 * np.log(2 * np.pi)


def logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    if keepdims:
        return out
    return np.squeeze(out, axis=axis) if axis is not None else np.squeeze(out)


def diag_gaussian_log_density(x, mu, log_std):
    return np.sum(norm_logpdf(x, mu, np.exp(log_std)), axis=-1)


def unpack_gaussian_params(params):
    D = np.shape(params)[0] // 2
    mean, log_std = params[:D], params[D:]
    return mean, log_std


def variational_log_density_gaussian(params, x):
    mean, log_std = unpack_gaussian_params(params)
    return diag_gaussian_log_density(x, mean, log_std)


def sample_diag_gaussian(params, noise):
    mean, log_std = unpack_gaussian_params(params)
    return noise * np.exp(log_std) + mean


def log_normalize(x):
    return x - logsumexp(x)


def build_mog_bbsvi(logprob, num_samples, k):
    component_log_density = variational_log_density_gaussian
    component_sample = sample_diag_gaussian

    def unpack_mixture_params(mixture_params):
        log_weights = log_normalize(mixture_params[:k])
        var_params = np.reshape(mixture_params[k:], (k, -1))
        return log_weights, var_params

    def mixture_log_density(var_mixture_params, x):
        log_weights, var_params = unpack_mixture_params(var_mixture_params)
        component_log_densities = np.vstack([component_log_density(params_k, x)
                                             for params_k in var_params]).T
        return logsumexp(component_log_densities + log_weights, axis=1, keepdims=False)

    def mixture_elbo(var_mixture_params, t, noise):
        def mixture_lower_bound(params, noise_k):
            samples = component_sample(params, noise_k)
            log_qs = mixture_log_density(var_mixture_params, samples)
            log_ps = logprob(samples, t)
            log_ps = np.reshape(log_ps, (num_samples, -1))
            log_qs = np.reshape(log_qs, (num_samples, -1))
            return np.mean(log_ps - log_qs)

        log_weights, var_params = unpack_mixture_params(var_mixture_params)
        component_elbos = np.stack([mixture_lower_bound(params_k, noise_k)
                                    for params_k, noise_k in zip(var_params, noise)])
        return np.sum(component_elbos * np.exp(log_weights))

    return mixture_elbo, mixture_log_density


def log_density(x, t):
    mu, log_sigma = x[:, 0], x[:, 1]
    sigma_density = norm_logpdf(log_sigma, 0, 1.35)
    mu_density = norm_logpdf(mu, -0.5, np.exp(log_sigma))
    sigma_density2 = norm_logpdf(log_sigma, 0.1, 1.35)
    mu_density2 = norm_logpdf(mu, 0.5, np.exp(log_sigma))
    return np.logaddexp(sigma_density + mu_density, sigma_density2 + mu_density2)


K = 3
NUM_SAMPLES = 6
elbo, variational_log_density = build_mog_bbsvi(log_density, num_samples=NUM_SAMPLES, k=K)


def loss(params, noise):
    return -elbo(params, 0, noise)


def init():
    rs = onp.random.RandomState(0)
    D = 2
    component_weights = [onp.concatenate([-1 * onp.ones(D) + rs.randn(D) * 0.5,
                                          -1 * onp.ones(D) + rs.randn(D) * 0.1])
                         for i in range(K)]
    init_params = onp.concatenate([onp.ones(K) + 0.1 * rs.randn(K)] + component_weights)
    noise = rs.randn(K, NUM_SAMPLES, D)
    return init_params, (noise,)
