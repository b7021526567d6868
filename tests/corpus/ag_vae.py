"""Modeled on HIPS/autograd examples/variational_autoencoder.py (auto-encoding variational
Bayes).

Kept: two networks as lists of (W, b) tuples, combined as the tuple (gen_params, rec_params)
that the objective unpacks; neural_net_predict's `for W, b in params[:-1]` with
batch_normalize (np.mean, np.std with keepdims) and relu, then `outW, outb = params[-1]`;
unpack_gaussian_params splitting the last axis with np.shape(params)[-1] // 2;
diag_gaussian_log_density; bernoulli_log_density with np.logaddexp on targets in {-1, 1};
vae_lower_bound with the Monte Carlo KL (p_latents + likelihood - q_latents), p_latents
evaluated at mean 0, log_std 0; the objective -bound / data_dim.  Changed: data_dim 6,
latent_dim 2, hidden 4, 5 binarised examples; the reparameterization noise is drawn in init
(see REFUSED), so sample_diag_gaussian takes it; norm.logpdf written as its NumPy formula;
training is three plain gradient steps on the nested tuple of lists (autograd's adam flattens).
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"
REFUSED = ("sample_diag_gaussian calls rs.randn(*mean.shape) on a numpy RandomState inside "
           "the differentiated objective: stateful RNG inside a transform is a PurityError by "
           "design (Sharp Bits); the noise is drawn in init and passed in the batch")
DATA_DIM = 6
LATENT_DIM = 2


def norm_logpdf(x, mu, sigma):
    return -0.5 * ((x - mu) / sigma) ** 2 - np.log(sigma) - 0.5 * np.log(2 * np.pi)


def diag_gaussian_log_density(x, mu, log_std):
    return np.sum(norm_logpdf(x, mu, np.exp(log_std)), axis=-1)


def unpack_gaussian_params(params):
    D = np.shape(params)[-1] // 2
    mean, log_std = params[:, :D], params[:, D:]
    return mean, log_std


def sample_diag_gaussian(mean, log_std, noise):
    return noise * np.exp(log_std) + mean


def bernoulli_log_density(targets, unnormalized_logprobs):
    label_probabilities = -np.logaddexp(0, -unnormalized_logprobs * targets)
    return np.sum(label_probabilities, axis=-1)


def relu(x):
    return np.maximum(0, x)


def init_net_params(scale, layer_sizes, rs):
    return [(scale * rs.randn(m, n),
             scale * rs.randn(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def batch_normalize(activations):
    mbmean = np.mean(activations, axis=0, keepdims=True)
    return (activations - mbmean) / (np.std(activations, axis=0, keepdims=True) + 1)


def neural_net_predict(params, inputs):
    for W, b in params[:-1]:
        outputs = batch_normalize(np.dot(inputs, W) + b)
        inputs = relu(outputs)
    outW, outb = params[-1]
    outputs = np.dot(inputs, outW) + outb
    return outputs


def nn_predict_gaussian(params, inputs):
    return unpack_gaussian_params(neural_net_predict(params, inputs))


def p_images_given_latents(gen_params, images, latents):
    preds = neural_net_predict(gen_params, latents)
    return bernoulli_log_density(images, preds)


def vae_lower_bound(gen_params, rec_params, data, noise):
    q_means, q_log_stds = nn_predict_gaussian(rec_params, data)
    latents = sample_diag_gaussian(q_means, q_log_stds, noise)
    q_latents = diag_gaussian_log_density(latents, q_means, q_log_stds)
    p_latents = diag_gaussian_log_density(latents, 0, 0)
    likelihood = p_images_given_latents(gen_params, data, latents)
    return np.mean(p_latents + likelihood - q_latents)


def loss(combined_params, images, noise):
    gen_params, rec_params = combined_params
    return -vae_lower_bound(gen_params, rec_params, images, noise) / DATA_DIM


def init():
    rs = onp.random.RandomState(0)
    init_gen_params = init_net_params(0.5, [LATENT_DIM, 4, 4, DATA_DIM], rs)
    init_rec_params = init_net_params(0.5, [DATA_DIM, 4, 4, LATENT_DIM * 2], rs)
    images = onp.where(rs.rand(5, DATA_DIM) > 0.5, 1.0, -1.0)
    noise = rs.randn(5, LATENT_DIM)
    return (init_gen_params, init_rec_params), (images, noise)


def train(combined_params, images, noise):
    objective_grad = grad(loss)
    for i in range(3):
        g_gen, g_rec = objective_grad(combined_params, images, noise)
        gen_params, rec_params = combined_params
        gen_params = [(W - 0.1 * dW, b - 0.1 * db) for (W, b), (dW, db) in zip(gen_params, g_gen)]
        rec_params = [(W - 0.1 * dW, b - 0.1 * db) for (W, b), (dW, db) in zip(rec_params, g_rec)]
        combined_params = (gen_params, rec_params)
    return combined_params
