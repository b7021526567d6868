"""Modeled on the convolutional network of jax-ml/jax examples/differentially_private_sgd.py
(stax.Conv(16, (8, 8), padding='SAME', strides=(2, 2)), Relu, MaxPool, Conv, Flatten,
Dense) and on stax's `GeneralConv` apply function, which calls
`lax.conv_general_dilated(inputs, W, strides, padding, one, one, dimension_numbers) + b`.

Kept: NHWC images with HWIO kernels and `dimension_numbers=('NHWC', 'HWIO', 'NHWC')`;
`lax.conv_general_dilated` with strides (2, 2) and 'SAME' padding, then a 'VALID' one;
relu; a flatten by `reshape(inputs.shape[0], -1)`; a Dense layer; log-softmax
cross-entropy; parameters a list of per-layer tuples, () for parameterless layers.
Changed: 6x6 single-channel images, 2 and 3 channels, no max-pool (strop's lax has no
reduce_window), 3 examples.
"""
import numpy as np
import numpy as onp
from strop import grad, jit, lax
from strop.nn import log_softmax, relu

ORIGIN = "jax"
DN = ('NHWC', 'HWIO', 'NHWC')


def conv(params, inputs, strides, padding):
    W, b = params
    return lax.conv_general_dilated(inputs, W, strides, padding, (1, 1), (1, 1), DN) + b


def predict(params, inputs):
    conv1, _, conv2, _, dense = params
    x = conv(conv1, inputs, (2, 2), 'SAME')
    x = relu(x)
    x = conv(conv2, x, (1, 1), 'VALID')
    x = relu(x)
    x = x.reshape(x.shape[0], -1)
    W, b = dense
    return log_softmax(np.dot(x, W) + b)


def loss(params, inputs, targets):
    logits = predict(params, inputs)
    return -np.mean(np.sum(logits * targets, 1))


def example_loss(params, image, target):
    return loss(params, image[None], target[None])


@jit
def update(params, inputs, targets):
    g = grad(loss)(params, inputs, targets)
    return [tuple(p - 0.1 * dp for p, dp in zip(layer, dlayer))
            for layer, dlayer in zip(params, g)]


def train(params, inputs, targets):
    for _ in range(2):
        params = update(params, inputs, targets)
    return params


def init():
    rng = onp.random.RandomState(20)
    params = [
        (0.3 * rng.randn(3, 3, 1, 2), 0.1 * rng.randn(2)),
        (),
        (0.3 * rng.randn(2, 2, 2, 3), 0.1 * rng.randn(3)),
        (),
        (0.3 * rng.randn(2 * 2 * 3, 4), 0.1 * rng.randn(4)),
    ]
    inputs = rng.randn(3, 6, 6, 1)
    targets = onp.eye(4)[[0, 3, 1]]
    return params, (inputs, targets)
