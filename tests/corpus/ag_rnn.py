"""Modeled on HIPS/autograd examples/rnn.py (a character-level recurrent net).

Kept: parameters in a dict whose keys have spaces ("init hiddens", "change", "predict");
rnn_predict's nested helpers update_rnn and hiddens_to_output_probs that close over `params`;
concat_and_multiply(weights, *args) with np.hstack of the args plus a column of ones; the
np.repeat of the initial hidden state over the sequences; the output list built with append
over `for input in inputs` (time steps of a 3-d array); rnn_log_likelihood's `loglik +=` loop
over range(num_time_steps); the negated training loss with the inputs as their own targets.
Changed: 5 time steps, 3 sequences, an alphabet of 6 one-hot characters, 4 hidden units;
logsumexp written as a NumPy expression (max-shifted) where the original imports
autograd.scipy.special's; the adam of autograd.misc replaced by three plain gradient steps on
the dict.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"


def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)


def logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def create_rnn_params(input_size, state_size, output_size, param_scale, rs):
    return {"init hiddens": rs.randn(1, state_size) * param_scale,
            "change": rs.randn(input_size + state_size + 1, state_size) * param_scale,
            "predict": rs.randn(state_size + 1, output_size) * param_scale}


def rnn_predict(params, inputs):
    def update_rnn(input, hiddens):
        return np.tanh(concat_and_multiply(params["change"], input, hiddens))

    def hiddens_to_output_probs(hiddens):
        output = concat_and_multiply(params["predict"], hiddens)
        return output - logsumexp(output, axis=1, keepdims=True)

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params["init hiddens"], num_sequences, axis=0)
    output = [hiddens_to_output_probs(hiddens)]

    for input in inputs:  # Iterate over time steps.
        hiddens = update_rnn(input, hiddens)
        output.append(hiddens_to_output_probs(hiddens))
    return output


def rnn_log_likelihood(params, inputs, targets):
    logprobs = rnn_predict(params, inputs)
    loglik = 0.0
    num_time_steps, num_examples, _ = inputs.shape
    for t in range(num_time_steps):
        loglik += np.sum(logprobs[t] * targets[t])
    return loglik / (num_time_steps * num_examples)


def loss(params, train_inputs):
    return -rnn_log_likelihood(params, train_inputs, train_inputs)


def init():
    rs = onp.random.RandomState(1)
    params = create_rnn_params(6, 4, 6, 0.5, rs)
    chars = rs.randint(0, 6, size=(5, 3))
    train_inputs = onp.eye(6)[chars]  # (time steps, sequences, alphabet)
    return params, (train_inputs,)


def train(params, train_inputs):
    training_loss_grad = grad(loss)
    for i in range(3):
        g = training_loss_grad(params, train_inputs)
        params = {k: params[k] - 0.5 * g[k] for k in params}
    return params
