"""Modeled on jax-ml/jax examples/sentiment_analysis.py (word embeddings and a 1-D
convolution classifying movie reviews).

Kept: `binary_cross_entropy(y_true, y_pred)` reshaping both, `astype('int32')`, clipping to
[1e-6, 1 - 1e-6] and `np.where(y_true == 1, y_pred, 1 - y_pred)`; `forward_and_loss(params,
x, y)` as the mean; a stax-like serial network: an Embedding table indexed by the integer
tokens, a 1-D convolution ('NWC' data, 'WIO' kernel), Relu, Flatten, Dense, Relu, Dense,
Sigmoid, its parameters a list of per-layer tuples (() for parameterless layers);
`backward_fn = jit(value_and_grad(forward_and_loss))`; the training loop splitting the key
and drawing the batch with `random.randint(subkey, shape=(BATCH_SIZE,), minval=0,
maxval=x_train.shape[0])` then indexing `x_train[batch_idx]`.  Changed: vocabulary 7,
embedding 3, sequences of 5 tokens, 4 filters, 6 reviews, batch 4; SGD with `tree_map` for
the example's jitted Adam; the layers written out (no stax); no max-pool (strop's lax has
no reduce_window).
"""
import numpy as np
import numpy as onp
from strop import jit, lax, random, value_and_grad
from strop.nn import relu, sigmoid
from strop.tree_util import tree_map

ORIGIN = "jax"
BATCH_SIZE = 4


def binary_cross_entropy(y_true, y_pred):
    y_true = y_true.reshape(-1).astype('int32')
    y_pred = y_pred.reshape(-1)
    y_pred = np.clip(y_pred, 1e-6, 1 - 1e-6)

    pt = np.where(y_true == 1, y_pred, 1 - y_pred)
    return -np.log(pt)


def apply_fn(params, x):
    (table,), (conv_w, conv_b), _, _, (w1, b1), _, (w2, b2), _ = params
    h = table[x]                                                 # Embedding
    h = lax.conv_general_dilated(h, conv_w, (1,), 'SAME', (1,), (1,),
                                 ('NWC', 'WIO', 'NWC')) + conv_b   # Conv1d
    h = relu(h)
    h = h.reshape(h.shape[0], -1)                                # Flatten
    h = relu(np.dot(h, w1) + b1)
    return sigmoid(np.dot(h, w2) + b2)


def forward_and_loss(params, x, y):
    predictions = apply_fn(params, x)
    return np.mean(binary_cross_entropy(y, predictions))


def loss(params, x, y):
    return forward_and_loss(params, x, y)


backward_fn = jit(value_and_grad(forward_and_loss))


def train(params, x_train, y_train):
    key = random.PRNGKey(0)
    for step in range(3):
        key, subkey = random.split(key)
        batch_idx = random.randint(subkey, shape=(BATCH_SIZE,), minval=0,
                                   maxval=x_train.shape[0])
        x = x_train[batch_idx]
        y = y_train[batch_idx]
        loss, grads = backward_fn(params, x, y)
        params = tree_map(lambda p, g: p - 0.5 * g, params, grads)
    return params


def init():
    rng = onp.random.RandomState(27)
    vocab, emb, seq, filters = 7, 3, 5, 4
    params = [
        (0.5 * rng.randn(vocab, emb),),
        (0.5 * rng.randn(3, emb, filters), 0.1 * rng.randn(filters)),
        (),
        (),
        (0.3 * rng.randn(seq * filters, 6), 0.1 * rng.randn(6)),
        (),
        (0.3 * rng.randn(6, 1), 0.1 * rng.randn(1)),
        (),
    ]
    x = rng.randint(0, vocab, size=(6, seq))
    y = onp.array([1., 0., 1., 1., 0., 0.])
    return params, (x, y)
