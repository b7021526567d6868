"""Modeled on neonwatty/machine_learning_refined (the book "Machine Learning Refined"), the
multiclass softmax cost of its MNIST classification demo (mlrefined_libraries, multiclass
cost functions written with autograd.numpy: linear_model and multiclass_softmax).

Kept: linear_model(x, w) = (w[0] + np.dot(x.T, w[1:])).T with the bias as row 0 of the weight
matrix and data as columns; multiclass_softmax(w, x, y, iter) taking the minibatch columns
`x[:, iter]`, the log-sum of exponentials over classes (axis 0), the score of the true class
read by fancy indexing `all_evals[y_p.astype(int).flatten(), np.arange(np.size(y_p))]`, the
cost summed and divided by float(np.size(y_p)); plain gradient descent.  Changed: 3 features,
4 classes, 8 points with labels stored as floats in a 1 x P row (as the book stores y); a
second minibatch in train.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"


def linear_model(x, w):
    a = w[0] + np.dot(x.T, w[1:])
    return a.T


def multiclass_softmax(w, x, y, iter):
    x_p = x[:, iter]
    y_p = y[:, iter]
    all_evals = linear_model(x_p, w)
    a = np.log(np.sum(np.exp(all_evals), axis=0))
    b = all_evals[y_p.astype(int).flatten(), np.arange(np.size(y_p))]
    cost = np.sum(a - b)
    return cost / float(np.size(y_p))


def loss(w, x, y):
    return multiclass_softmax(w, x, y, np.arange(np.size(y)))


def init():
    rs = onp.random.RandomState(7)
    w = 0.3 * rs.randn(3 + 1, 4)
    x = rs.randn(3, 8)
    y = rs.randint(0, 4, size=(1, 8)).astype(float)
    return w, (x, y)


def train(w, x, y):
    gradient = grad(multiclass_softmax)
    for iter in [onp.arange(0, 4), onp.arange(4, 8), onp.arange(8)]:
        w = w - 0.5 * gradient(w, x, y, iter)
    return w
