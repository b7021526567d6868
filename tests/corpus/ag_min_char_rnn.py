"""Modeled on Andrej Karpathy's min-char-rnn.py (gist karpathy/d4dee566867f8291f086,
"Minimal character-level Vanilla RNN model", plain NumPy with a hand-written backward pass).

Kept: the five parameters Wxh, Whh, Why, bh, by (column-vector biases); lossFun's forward pass
over the time steps with dicts keyed by t: xs[t] a one-hot column made with np.zeros and an
item assignment, hs[-1] = np.copy(hprev) and hs[t] = np.tanh(Wxh @ xs[t] + Whh @ hs[t-1] +
bh), ys[t], ps[t] = exp / sum, `loss += -np.log(ps[t][targets[t], 0])`; Adagrad's update
(`mem += dparam * dparam; param += -learning_rate * dparam / np.sqrt(mem + 1e-8)`) zipped over
the parameters and their memories.  Changed: the hand-written backward pass is replaced by
grad of the forward loss (the port a reader of this gist makes); parameters as a tuple in the
gist's order; a vocabulary of 5, 6 hidden units, sequences of 5 given as float arrays of
character indices; 3 Adagrad steps on one sequence pair.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"
VOCAB_SIZE = 5
HIDDEN_SIZE = 6


def lossFun(params, inputs, targets, hprev):
    Wxh, Whh, Why, bh, by = params
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0
    for t in range(len(inputs)):
        xs[t] = np.zeros((VOCAB_SIZE, 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
        ys[t] = np.dot(Why, hs[t]) + by
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
        loss += -np.log(ps[t][targets[t], 0])
    return loss


def loss(params, inputs, targets, hprev):
    return lossFun(params, [int(c) for c in inputs], [int(c) for c in targets], hprev)


def init():
    rs = onp.random.RandomState(8)
    Wxh = rs.randn(HIDDEN_SIZE, VOCAB_SIZE) * 0.3
    Whh = rs.randn(HIDDEN_SIZE, HIDDEN_SIZE) * 0.3
    Why = rs.randn(VOCAB_SIZE, HIDDEN_SIZE) * 0.3
    bh = onp.zeros((HIDDEN_SIZE, 1))
    by = onp.zeros((VOCAB_SIZE, 1))
    data = rs.randint(0, VOCAB_SIZE, size=6).astype(float)
    hprev = onp.zeros((HIDDEN_SIZE, 1))
    return (Wxh, Whh, Why, bh, by), (data[:-1], data[1:], hprev)


def train(params, inputs, targets, hprev):
    learning_rate = 1e-1
    dloss = grad(loss)
    mems = [np.zeros_like(p) for p in params]
    params = [p.copy() for p in params]
    for n in range(3):
        dparams = dloss(tuple(params), inputs, targets, hprev)
        for param, dparam, mem in zip(params, dparams, mems):
            mem += dparam * dparam
            param += -learning_rate * dparam / np.sqrt(mem + 1e-8)
    return tuple(params)
