"""Modeled on the Stanford CS231n assignment 1 two-layer net (cs231n/classifiers/neural_net.py,
TwoLayerNet.loss; NumPy, gradients by hand in the original).

Kept: parameters in a dict {'W1', 'b1', 'W2', 'b2'} with W1 of shape (D, H) and 'W2' (H, C);
the forward pass `hidden = np.maximum(0, X.dot(W1) + b1)`, `scores = hidden.dot(W2) + b2`
(written with np.dot: autograd's arrays have no .dot method, the change an autograd port needs);
the softmax loss with the max subtracted (`scores - np.max(scores, axis=1, keepdims=True)`),
probabilities normalized over axis 1, `-np.log(probs[np.arange(N), y])` averaged, plus
`reg * (np.sum(W1 * W1) + np.sum(W2 * W2))`; the SGD step over the dict keys
(`self.params[k] -= learning_rate * grads[k]`).  Changed: the hand-written backward pass is
replaced by grad of the loss; D = 4, H = 6, C = 3, N = 5; labels stored as floats and cast
with astype(int).
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"


def loss(params, X, y, reg=0.05):
    W1, b1 = params['W1'], params['b1']
    W2, b2 = params['W2'], params['b2']
    N, D = X.shape

    hidden = np.maximum(0, np.dot(X, W1) + b1)
    scores = np.dot(hidden, W2) + b2

    shifted = scores - np.max(scores, axis=1, keepdims=True)
    exp_scores = np.exp(shifted)
    probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
    correct_logprobs = -np.log(probs[np.arange(N), y.astype(int)])
    data_loss = np.sum(correct_logprobs) / N
    reg_loss = reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
    return data_loss + reg_loss


def example_loss(params, x, y):
    return loss(params, x[None, :], y[None], reg=0.0)


def init():
    rs = onp.random.RandomState(9)
    params = {'W1': 0.5 * rs.randn(4, 6), 'b1': 0.1 * rs.randn(6),
              'W2': 0.5 * rs.randn(6, 3), 'b2': 0.1 * rs.randn(3)}
    X = rs.randn(5, 4)
    y = rs.randint(0, 3, size=5).astype(float)
    return params, (X, y)


def train(params, X, y, learning_rate=0.1):
    params = {k: v.copy() for k, v in params.items()}
    for it in range(3):
        grads = grad(loss)(params, X, y)
        for k in params:
            params[k] -= learning_rate * grads[k]
    return params
