"""Modeled on HIPS/autograd examples/lstm.py (a character-level LSTM).

Kept: the seven-entry parameter dict made by a local helper rp(*shape) ("init cells",
"init hiddens", "change", "forget", "ingate", "outgate", "predict"); lstm_predict's nested
update_lstm returning a (hiddens, cells) tuple unpacked in the time loop; the gates through
concat_and_multiply(params[...], input, hiddens) with np.hstack; sigmoid written with tanh as
rnn.py has it; the output list and the log-likelihood loop.  Changed: 4 time steps, 2
sequences, 5 characters, 3 hidden units; logsumexp as a NumPy expression (the original imports
autograd.scipy.special's); a per-sequence example_loss so that per-example gradients are
checked (sequences on the leading axis of the batch, moved to axis 1 inside).
"""
import numpy as np
import numpy as onp

ORIGIN = "autograd"


def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)


def logsumexp(x, axis, keepdims):
    max_x = np.max(x, axis=axis, keepdims=True)
    return max_x + np.log(np.sum(np.exp(x - max_x), axis=axis, keepdims=keepdims))


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def init_lstm_params(input_size, state_size, output_size, param_scale, rs):
    def rp(*shape):
        return rs.randn(*shape) * param_scale

    return {"init cells": rp(1, state_size),
            "init hiddens": rp(1, state_size),
            "change": rp(input_size + state_size + 1, state_size),
            "forget": rp(input_size + state_size + 1, state_size),
            "ingate": rp(input_size + state_size + 1, state_size),
            "outgate": rp(input_size + state_size + 1, state_size),
            "predict": rp(state_size + 1, output_size)}


def lstm_predict(params, inputs):
    def update_lstm(input, hiddens, cells):
        change = np.tanh(concat_and_multiply(params["change"], input, hiddens))
        forget = sigmoid(concat_and_multiply(params["forget"], input, hiddens))
        ingate = sigmoid(concat_and_multiply(params["ingate"], input, hiddens))
        outgate = sigmoid(concat_and_multiply(params["outgate"], input, hiddens))
        cells = cells * forget + ingate * change
        hiddens = outgate * np.tanh(cells)
        return hiddens, cells

    def hiddens_to_output_probs(hiddens):
        output = concat_and_multiply(params["predict"], hiddens)
        return output - logsumexp(output, axis=1, keepdims=True)

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params["init hiddens"], num_sequences, axis=0)
    cells = np.repeat(params["init cells"], num_sequences, axis=0)

    output = [hiddens_to_output_probs(hiddens)]
    for input in inputs:  # Iterate over time steps.
        hiddens, cells = update_lstm(input, hiddens, cells)
        output.append(hiddens_to_output_probs(hiddens))
    return output


def lstm_log_likelihood(params, inputs, targets):
    logprobs = lstm_predict(params, inputs)
    loglik = 0.0
    num_time_steps, num_examples, _ = inputs.shape
    for t in range(num_time_steps):
        loglik += np.sum(logprobs[t] * targets[t])
    return loglik / (num_time_steps * num_examples)


def loss(params, sequences):
    train_inputs = np.swapaxes(sequences, 0, 1)  # (time, sequences, chars)
    return -lstm_log_likelihood(params, train_inputs, train_inputs)


def example_loss(params, sequence):
    return loss(params, sequence[None])


def init():
    rs = onp.random.RandomState(2)
    params = init_lstm_params(5, 3, 5, 0.5, rs)
    sequences = onp.eye(5)[rs.randint(0, 5, size=(2, 4))]  # (sequences, time, chars)
    return params, (sequences,)
