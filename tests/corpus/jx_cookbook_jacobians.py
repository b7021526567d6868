"""Modeled on the JAX autodiff cookbook (docs/notebooks/autodiff_cookbook), "Jacobians and
Hessians using jacfwd and jacrev".

Kept: the cookbook's logistic `predict(W, b, inputs)`; `jacfwd(predict)(W, b, inputs)` and
`jacrev(predict)(W, b, inputs)` (the same Jacobian two ways); `hessian(f) =
jacfwd(jacrev(f))`; argnums picking W.  Changed: the Jacobians and the Hessian are terms of
a differentiated objective (a Jacobian penalty and the Hessian's trace added to the
negative log likelihood), so the corpus measures grad of jacfwd/jacrev/hessian; W, b as
one tuple of parameters.
"""
import numpy as np
import numpy as onp
from strop import hessian, jacfwd, jacrev

ORIGIN = "jax"


def sigmoid(x):
    return 0.5 * (np.tanh(x / 2) + 1)


def predict(W, b, inputs):
    return sigmoid(np.dot(inputs, W) + b)


def nll(W, b, inputs, targets):
    preds = predict(W, b, inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -np.sum(np.log(label_probs))


def loss(params, inputs, targets):
    W, b = params
    J_fwd = jacfwd(predict)(W, b, inputs)
    J_rev = jacrev(predict)(W, b, inputs)
    H = hessian(nll)(W, b, inputs, targets)
    return (nll(W, b, inputs, targets) + 0.1 * np.sum(J_fwd ** 2)
            + 0.05 * np.sum(J_rev * J_fwd) + 0.01 * np.trace(H))


def init():
    rng = onp.random.RandomState(7)
    inputs = rng.randn(4, 3)
    targets = onp.array([1.0, 0.0, 0.0, 1.0])
    W = rng.randn(3)
    b = onp.array(0.3)
    return (W, b), (inputs, targets)
