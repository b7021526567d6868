"""Modeled on jax-ml/jax examples/mnist_vae.py (a variational autoencoder).

Kept: an encoder producing (mu, log-variance) halves and a decoder producing Bernoulli
logits; `gaussian_kl(mu, sigmasq)` and `gaussian_sample(rng, mu, sigmasq)` with
`mu + np.sqrt(sigmasq) * random.normal(rng, mu.shape)`; `bernoulli_logpdf(logits, x)` with
`-np.sum(np.logaddexp(0., np.where(x, -1., 1.) * logits))`; `elbo(rng, params, images)`
averaged over a batch with one key per image from `random.split`; the jitted `run_epoch`
style step `grad(lambda params: -elbo(...))` followed by a gradient step.  Changed: the
stax networks written out by hand as a nested dict {'enc': [(w, b), ...], 'dec': [(w, b),
...]} (a dict of lists of tuples, what stax's serial returns inside a dict); 6-dimensional
"images", latent size 2, hidden width 8; images softened to {0.1, 0.9}-ish reals; SGD
instead of momentum.
"""
import numpy as np
import numpy as onp
from strop import grad, jit, random, vmap

ORIGIN = "jax"
LATENT = 2


def mlp(layers, x):
    for w, b in layers[:-1]:
        x = np.tanh(np.dot(x, w) + b)
    w, b = layers[-1]
    return np.dot(x, w) + b


def encode(enc_params, x):
    out = mlp(enc_params, x)
    mu, log_sigmasq = out[:LATENT], out[LATENT:]
    return mu, np.exp(log_sigmasq)


def gaussian_kl(mu, sigmasq):
    """KL divergence from a diagonal Gaussian to the standard Gaussian."""
    return -0.5 * np.sum(1. + np.log(sigmasq) - mu**2. - sigmasq)


def gaussian_sample(rng, mu, sigmasq):
    """Sample a diagonal Gaussian."""
    return mu + np.sqrt(sigmasq) * random.normal(rng, mu.shape)


def bernoulli_logpdf(logits, x):
    """Bernoulli log pdf of data x given logits."""
    return -np.sum(np.logaddexp(0., np.where(x > 0.5, -1., 1.) * logits))


def image_elbo(rng, params, image):
    mu_z, sigmasq_z = encode(params['enc'], image)
    logits_x = mlp(params['dec'], gaussian_sample(rng, mu_z, sigmasq_z))
    return bernoulli_logpdf(logits_x, image) - gaussian_kl(mu_z, sigmasq_z)


def elbo(rng, params, images):
    rngs = random.split(rng, images.shape[0])
    return np.mean(vmap(image_elbo, in_axes=(0, None, 0))(rngs, params, images))


def loss(params, images):
    return -elbo(random.PRNGKey(0), params, images)


@jit
def body_fun(i, params, images):
    elbo_rng = random.fold_in(random.PRNGKey(1), i)
    g = grad(lambda params: -elbo(elbo_rng, params, images))(params)
    return {part: [(w - 0.05 * dw, b - 0.05 * db)
                   for (w, b), (dw, db) in zip(params[part], g[part])]
            for part in params}


def train(params, images):
    for i in range(3):
        params = body_fun(i, params, images)
    return params


def init():
    rng = onp.random.RandomState(18)

    def layers(sizes):
        return [(0.3 * rng.randn(m, n), 0.1 * rng.randn(n)) for m, n in zip(sizes[:-1], sizes[1:])]
    params = {'enc': layers([6, 8, 2 * LATENT]), 'dec': layers([LATENT, 8, 6])}
    images = (rng.rand(5, 6) > 0.5) * 0.8 + 0.1
    return params, (images,)
