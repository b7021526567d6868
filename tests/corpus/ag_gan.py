"""Modeled on HIPS/autograd examples/generative_adversarial_net.py (a GAN trained by a minimax
Adam).

Kept: generator and discriminator as lists of (W, b) tuples; neural_net_predict reading
`inpW, inpb = params[0]`, looping `for W, b in params[1:-1]` with batch_normalize and relu,
then `outW, outb = params[-1]`; sigmoid through tanh and logsigmoid through np.logaddexp;
gan_objective = mean(logprobs_real) - mean(logprobs_fake); adam_minimax, which ascends the
generator's parameters and descends the discriminator's, with bias-corrected moments.
Changed: noise_dim 2, data 4-dimensional, hidden width 5, 6 real and 6 fake samples; the
generator's noise `rs.rand(num_samples, noise_dim)` is drawn in init (see REFUSED); the
objective takes the pair (gen_params, dsc_params) as one argument and grad gives both
gradients (the original's grad(objective, argnum=(0, 1)) is autograd's spelling of argnums);
adam_minimax works on the lists of tuples directly, where the original flattens with
autograd.misc.flatten.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"
REFUSED = ("generate_from_noise calls rs.rand(num_samples, noise_dim) on a numpy RandomState "
           "inside the differentiated objective: stateful RNG inside a transform is a "
           "PurityError by design (Sharp Bits); the noise is drawn in init and passed in")


def relu(x):
    return np.maximum(0, x)


def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)


def logsigmoid(x):
    return x - np.logaddexp(0, x)


def init_random_params(scale, layer_sizes, rs):
    return [(scale * rs.randn(m, n),
             scale * rs.randn(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def batch_normalize(activations):
    mbmean = np.mean(activations, axis=0, keepdims=True)
    return (activations - mbmean) / (np.std(activations, axis=0, keepdims=True) + 1)


def neural_net_predict(params, inputs):
    inpW, inpb = params[0]
    inputs = relu(np.dot(inputs, inpW) + inpb)
    for W, b in params[1:-1]:
        outputs = batch_normalize(np.dot(inputs, W) + b)
        inputs = relu(outputs)
    outW, outb = params[-1]
    outputs = np.dot(inputs, outW) + outb
    return outputs


def generate_from_noise(gen_params, noise):
    samples = neural_net_predict(gen_params, noise)
    return sigmoid(samples)


def gan_objective(gen_params, dsc_params, real_data, noise):
    fake_data = generate_from_noise(gen_params, noise)
    logprobs_fake = logsigmoid(neural_net_predict(dsc_params, fake_data))
    logprobs_real = logsigmoid(neural_net_predict(dsc_params, real_data))
    return np.mean(logprobs_real) - np.mean(logprobs_fake)


def loss(both_params, real_data, noise):
    gen_params, dsc_params = both_params
    return gan_objective(gen_params, dsc_params, real_data, noise)


def init():
    rs = onp.random.RandomState(0)
    gen_params = init_random_params(0.5, [2, 5, 5, 4], rs)
    dsc_params = init_random_params(0.5, [4, 5, 5, 1], rs)
    real_data = rs.rand(6, 4)
    noise = rs.rand(6, 2)
    return (gen_params, dsc_params), (real_data, noise)


def adam_minimax(grad_both, init_params_max, init_params_min, num_iters=3,
                 step_size_max=0.01, step_size_min=0.01, b1=0.9, b2=0.999, eps=10**-8):
    def zeros_like(params):
        return [(np.zeros(W.shape), np.zeros(b.shape)) for W, b in params]

    x_max, x_min = init_params_max, init_params_min
    m_max, v_max = zeros_like(x_max), zeros_like(x_max)
    m_min, v_min = zeros_like(x_min), zeros_like(x_min)
    for i in range(num_iters):
        g_max, g_min = grad_both(x_max, x_min, i)
        new_x, new_m, new_v = [], [], []
        for x, g, m, v in zip(x_max, g_max, m_max, v_max):
            m = tuple((1 - b1) * gi + b1 * mi for gi, mi in zip(g, m))
            v = tuple((1 - b2) * (gi ** 2) + b2 * vi for gi, vi in zip(g, v))
            x = tuple(xi + step_size_max * (mi / (1 - b1 ** (i + 1)))
                      / (np.sqrt(vi / (1 - b2 ** (i + 1))) + eps) for xi, mi, vi in zip(x, m, v))
            new_x.append(x), new_m.append(m), new_v.append(v)
        x_max, m_max, v_max = new_x, new_m, new_v
        new_x, new_m, new_v = [], [], []
        for x, g, m, v in zip(x_min, g_min, m_min, v_min):
            m = tuple((1 - b1) * gi + b1 * mi for gi, mi in zip(g, m))
            v = tuple((1 - b2) * (gi ** 2) + b2 * vi for gi, vi in zip(g, v))
            x = tuple(xi - step_size_min * (mi / (1 - b1 ** (i + 1)))
                      / (np.sqrt(vi / (1 - b2 ** (i + 1))) + eps) for xi, mi, vi in zip(x, m, v))
            new_x.append(x), new_m.append(m), new_v.append(v)
        x_min, m_min, v_min = new_x, new_m, new_v
    return x_max, x_min


def train(both_params, real_data, noise):
    both_objective_grad = grad(loss)

    def grad_both(gen_params, dsc_params, iter):
        return both_objective_grad((gen_params, dsc_params), real_data, noise)

    return adam_minimax(grad_both, both_params[0], both_params[1])
