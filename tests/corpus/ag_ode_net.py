"""Modeled on HIPS/autograd examples/ode_net.py (learning the dynamics of a trajectory with a
neural ODE).

Kept: nn_predict(inputs, t, params) with `for W, b in params` over a list of (W, b) tuples
and relu by np.maximum(0, outputs); init_nn_params building that list with a comprehension
over zip of layer sizes; ode_pred(params, y0, t) integrating nn_predict as the dynamics;
L1_loss = mean(abs(pred - targets)); the training data from the true cubic dynamics
func(y, t0, A) = np.dot(y**3, A); adam over the list of tuples (written out: autograd's adam
flattens).  Changed: scipy's odeint (autograd.scipy.integrate.odeint, no NumPy counterpart) is
replaced by a fixed-step RK4 integrator written in NumPy, used both for the true trajectory
(in init) and for the prediction (stacked with np.stack); 8 time points up to 0.7; hidden
width 6; 3 adam steps.
"""
import numpy as np
import numpy as onp
from strop import grad

ORIGIN = "autograd"
N = 8
D = 2
MAX_T = 0.7


def func(y, t0, A):
    return np.dot(y ** 3, A)


def nn_predict(inputs, t, params):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.maximum(0, outputs)
    return outputs


def init_nn_params(scale, layer_sizes, rs):
    return [(rs.randn(insize, outsize) * scale,
             rs.randn(outsize) * scale)
            for insize, outsize in zip(layer_sizes[:-1], layer_sizes[1:])]


def odeint_rk4(f, y0, t, args):
    ys = [y0]
    y = y0
    for i in range(len(t) - 1):
        h = t[i + 1] - t[i]
        k1 = f(y, t[i], *args)
        k2 = f(y + h / 2 * k1, t[i] + h / 2, *args)
        k3 = f(y + h / 2 * k2, t[i] + h / 2, *args)
        k4 = f(y + h * k3, t[i] + h, *args)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return np.stack(ys)


def ode_pred(params, y0, t):
    return odeint_rk4(nn_predict, y0, t, (params,))


def L1_loss(pred, targets):
    return np.mean(np.abs(pred - targets))


def loss(params, true_y0, t, true_y):
    pred = ode_pred(params, true_y0, t)
    return L1_loss(pred, true_y)


def init():
    true_y0 = onp.array([2.0, 0.0])
    t = onp.linspace(0.0, MAX_T, N)
    true_A = onp.array([[-0.1, 2.0], [-2.0, -0.1]])
    true_y = odeint_rk4(func, true_y0, t, (true_A,))
    params = init_nn_params(0.5, [D, 6, D], onp.random.RandomState(0))
    return params, (true_y0, t, true_y)


def train(params, true_y0, t, true_y, step_size=0.01, b1=0.9, b2=0.999, eps=10**-8):
    g_fun = grad(loss)
    m = [(np.zeros(W.shape), np.zeros(b.shape)) for W, b in params]
    v = [(np.zeros(W.shape), np.zeros(b.shape)) for W, b in params]
    for i in range(3):
        g = g_fun(params, true_y0, t, true_y)
        m = [((1 - b1) * gW + b1 * mW, (1 - b1) * gb + b1 * mb)
             for (gW, gb), (mW, mb) in zip(g, m)]
        v = [((1 - b2) * gW ** 2 + b2 * vW, (1 - b2) * gb ** 2 + b2 * vb)
             for (gW, gb), (vW, vb) in zip(g, v)]
        params = [(W - step_size * (mW / (1 - b1 ** (i + 1))) / (np.sqrt(vW / (1 - b2 ** (i + 1))) + eps),
                   b - step_size * (mb / (1 - b1 ** (i + 1))) / (np.sqrt(vb / (1 - b2 ** (i + 1))) + eps))
                  for (W, b), (mW, mb), (vW, vb) in zip(params, m, v)]
    return params
