"""Modeled on HIPS/autograd examples/convnet.py (a LeNet-like convnet with all weights in one
flat vector).

Kept: the WeightsParser class (a dict from names to (slice, shape), `get` reshapes a slice of
the vector); layer objects with build_weights_dict and forward_pass methods, each conv/full
layer owning its own parser; make_nn_funs building the top-level parser over the layer specs
and returning closures (predictions loops `for layer in layer_specs`, `parser.get(W_vect,
layer)` keyed by the layer object, `layer.forward_pass(cur_units, cur_weights)`); maxpool by a
reshape and two np.max; full layers with `inputs.reshape(...)` when ndim > 2 and a
nonlinearity method (tanh_layer, softmax_layer subclasses); the file's own logsumexp; the loss
with its L2 term; the SGD-with-momentum training loop.  Changed: one 1x6x6 input channel, a
3x3 conv with 2 filters, 2x2 pooling, tanh(5), softmax(3), 4 images; autograd.scipy.signal's
convolve (no NumPy counterpart) is written as a sum over kernel offsets of shifted slices
contracted with np.einsum (a 'valid' correlation: the kernel is flipped first to keep
convolve's orientation); the momentum loop runs 3 steps.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"


class WeightsParser(object):
    """A helper class to index into a parameter vector."""

    def __init__(self):
        self.idxs_and_shapes = {}
        self.N = 0

    def add_weights(self, name, shape):
        start = self.N
        self.N += int(onp.prod(shape))
        self.idxs_and_shapes[name] = (slice(start, self.N), shape)

    def get(self, vect, name):
        idxs, shape = self.idxs_and_shapes[name]
        return np.reshape(vect[idxs], shape)


def logsumexp(X, axis, keepdims=False):
    max_X = np.max(X)
    return max_X + np.log(np.sum(np.exp(X - max_X), axis=axis, keepdims=keepdims))


def convolve(inputs, params):
    # [data, color_in, y, x] with [color_in, color_out, ky, kx] -> [data, color_out, y', x']
    ky, kx = params.shape[2], params.shape[3]
    flipped = params[:, :, ::-1, ::-1]
    out_y = inputs.shape[2] - ky + 1
    out_x = inputs.shape[3] - kx + 1
    out = 0.0
    for i in range(ky):
        for j in range(kx):
            patch = inputs[:, :, i:i + out_y, j:j + out_x]
            out = out + np.einsum('dcyx,co->doyx', patch, flipped[:, :, i, j])
    return out


def make_nn_funs(input_shape, layer_specs, L2_reg):
    parser = WeightsParser()
    cur_shape = input_shape
    for layer in layer_specs:
        N_weights, cur_shape = layer.build_weights_dict(cur_shape)
        parser.add_weights(layer, (N_weights,))

    def predictions(W_vect, inputs):
        cur_units = inputs
        for layer in layer_specs:
            cur_weights = parser.get(W_vect, layer)
            cur_units = layer.forward_pass(cur_units, cur_weights)
        return cur_units

    def loss(W_vect, X, T):
        log_prior = -L2_reg * np.dot(W_vect, W_vect)
        log_lik = np.sum(predictions(W_vect, X) * T)
        return -log_prior - log_lik

    return parser.N, predictions, loss


class conv_layer(object):
    def __init__(self, kernel_shape, num_filters):
        self.kernel_shape = kernel_shape
        self.num_filters = num_filters

    def forward_pass(self, inputs, param_vector):
        params = self.parser.get(param_vector, "params")
        biases = self.parser.get(param_vector, "biases")
        conv = convolve(inputs, params)
        return conv + biases

    def build_weights_dict(self, input_shape):
        self.parser = WeightsParser()
        self.parser.add_weights("params", (input_shape[0], self.num_filters) + self.kernel_shape)
        self.parser.add_weights("biases", (1, self.num_filters, 1, 1))
        output_shape = (self.num_filters,) + self.conv_output_shape(input_shape[1:],
                                                                    self.kernel_shape)
        return self.parser.N, output_shape

    def conv_output_shape(self, A, B):
        return (A[0] - B[0] + 1, A[1] - B[1] + 1)


class maxpool_layer(object):
    def __init__(self, pool_shape):
        self.pool_shape = pool_shape

    def build_weights_dict(self, input_shape):
        output_shape = list(input_shape)
        for i in [0, 1]:
            assert input_shape[i + 1] % self.pool_shape[i] == 0
            output_shape[i + 1] = input_shape[i + 1] // self.pool_shape[i]
        return 0, output_shape

    def forward_pass(self, inputs, param_vector):
        new_shape = inputs.shape[:2]
        for i in [0, 1]:
            pool_width = self.pool_shape[i]
            img_width = inputs.shape[i + 2]
            new_shape += (img_width // pool_width, pool_width)
        result = inputs.reshape(new_shape)
        return np.max(np.max(result, axis=3), axis=4)


class full_layer(object):
    def __init__(self, size):
        self.size = size

    def build_weights_dict(self, input_shape):
        input_size = int(onp.prod(input_shape))
        self.parser = WeightsParser()
        self.parser.add_weights("params", (input_size, self.size))
        self.parser.add_weights("biases", (self.size,))
        return self.parser.N, (self.size,)

    def forward_pass(self, inputs, param_vector):
        params = self.parser.get(param_vector, "params")
        biases = self.parser.get(param_vector, "biases")
        if inputs.ndim > 2:
            inputs = inputs.reshape((inputs.shape[0], int(np.prod(inputs.shape[1:]))))
        return self.nonlinearity(np.dot(inputs[:, :], params) + biases)


class tanh_layer(full_layer):
    def nonlinearity(self, x):
        return np.tanh(x)


class softmax_layer(full_layer):
    def nonlinearity(self, x):
        return x - logsumexp(x, axis=1, keepdims=True)


layer_specs = [conv_layer((3, 3), 2),
               maxpool_layer((2, 2)),
               tanh_layer(5),
               softmax_layer(3)]
N_weights, pred_fun, loss_fun = make_nn_funs((1, 6, 6), layer_specs, L2_reg=0.1)


def loss(W, train_images, train_labels):
    return loss_fun(W, train_images, train_labels)


def init():
    rs = onp.random.RandomState(0)
    W = rs.randn(N_weights) * 0.3
    train_images = rs.rand(4, 1, 6, 6)
    train_labels = onp.eye(3)[rs.randint(0, 3, size=4)]
    return W, (train_images, train_labels)


def train(W, train_images, train_labels):
    loss_grad = grad(loss_fun)
    cur_dir = np.zeros(N_weights)
    learning_rate, momentum = 1e-2, 0.9
    W = W.copy()
    for idxs in [slice(0, 2), slice(2, 4), slice(0, 4)]:
        grad_W = loss_grad(W, train_images[idxs], train_labels[idxs])
        cur_dir = momentum * cur_dir + (1.0 - momentum) * grad_W
        W -= learning_rate * cur_dir
    return W
