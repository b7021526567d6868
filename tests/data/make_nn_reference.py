"""Reference values for strop.nn, computed once with JAX (never imported by strop or its tests).

    /tmp/refenv/bin/python tests/data/make_nn_reference.py   # (a venv with jax installed)

writes tests/data/nn_reference.npz: for each case ``<name>``, ``<name>/x`` (the input),
``<name>/value`` and ``<name>/grad`` (the gradient of the sum of the value), in float64
(jax_enable_x64; the ``*32`` cases in float32), and nn_reference.json (JAX's version and the
cases).  The inputs include
the kinks (0) and extremes (+-1000, -inf) where JAX's conventions matter.
"""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)
HERE = os.path.dirname(os.path.abspath(__file__))

X = np.array([-1000.0, -30.0, -2.5, -1.0, -0.1, 0.0, 0.1, 1.0, 2.5, 30.0, 1000.0])
M = np.array([[1.0, 2.0, 3.0, -1.0], [1000.0, 0.0, -1000.0, 5.0], [-2.0, -2.0, -2.0, -2.0]])
WHERE = np.array([True, False, True, True])

# name -> (function of one array, input)
CASES = {
    "relu": (jax.nn.relu, X), "relu6": (jax.nn.relu6, X), "sigmoid": (jax.nn.sigmoid, X),
    "log_sigmoid": (jax.nn.log_sigmoid, X), "softplus": (jax.nn.softplus, X),
    "soft_sign": (jax.nn.soft_sign, X), "silu": (jax.nn.silu, X), "gelu": (jax.nn.gelu, X),
    "gelu_exact": (lambda x: jax.nn.gelu(x, approximate=False), X),
    "elu": (jax.nn.elu, X), "elu_alpha": (lambda x: jax.nn.elu(x, 0.5), X),
    "celu": (jax.nn.celu, X), "selu": (jax.nn.selu, X), "leaky_relu": (jax.nn.leaky_relu, X),
    "leaky_relu_slope": (lambda x: jax.nn.leaky_relu(x, 0.2), X),
    "hard_tanh": (jax.nn.hard_tanh, X),
    "softmax": (jax.nn.softmax, M), "softmax_axis0": (lambda x: jax.nn.softmax(x, axis=0), M),
    "softmax_where": (lambda x: jax.nn.softmax(x, where=WHERE), M),
    "log_softmax": (jax.nn.log_softmax, M),
    "log_softmax_axis0": (lambda x: jax.nn.log_softmax(x, axis=0), M),
    "logsumexp": (jax.nn.logsumexp, M), "logsumexp_axis1": (lambda x: jax.nn.logsumexp(x, 1), M),
    "logsumexp_keepdims": (lambda x: jax.nn.logsumexp(x, 0, keepdims=True), M),
    "logsumexp_b": (lambda x: jax.nn.logsumexp(x, 1, b=jnp.array([1.0, 2.0, 0.5, 0.0])), M),
    "standardize": (jax.nn.standardize, M),
}

# the exact gelu's left tail and erfc, where 1 + erf(x) cancels (issue 34): in float64 and in
# float32 (x64 on, float32 inputs: JAX computes them in float32, as strop does)
TAIL = np.array([-30.0, -12.0, -9.0, -8.5, -7.0, -6.0, -5.5, -5.0, -4.0, -3.0, -2.0, -1.5,
                 -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 6.0])
TAIL_CASES = {"gelu_tail": lambda x: jax.nn.gelu(x, approximate=False),
              "erfc": jax.scipy.special.erfc}


def main():
    out = {}
    for name, (f, x) in CASES.items():
        out[f"{name}/x"] = x
        out[f"{name}/value"] = np.asarray(f(x))
        out[f"{name}/grad"] = np.asarray(jax.grad(lambda x: jnp.sum(f(x)))(x))
    for name, f in TAIL_CASES.items():
        for suffix, dtype in (("", np.float64), ("32", np.float32)):
            x = TAIL.astype(dtype)
            out[f"{name}{suffix}/x"] = x
            out[f"{name}{suffix}/value"] = np.asarray(f(x))
            out[f"{name}{suffix}/grad"] = np.asarray(jax.grad(lambda x: jnp.sum(f(x)))(x))
    out["logsumexp_neginf/value"] = np.asarray(jax.nn.logsumexp(jnp.array([-jnp.inf] * 3)))
    out["one_hot/value"] = np.asarray(jax.nn.one_hot(jnp.array([0, 2, 5, -1]), 4))
    out["one_hot_axis0/value"] = np.asarray(jax.nn.one_hot(jnp.array([[0, 1], [3, 2]]), 4,
                                                           axis=0))
    np.savez_compressed(os.path.join(HERE, "nn_reference.npz"), **out)
    with open(os.path.join(HERE, "nn_reference.json"), "w") as fh:
        json.dump({"jax": jax.__version__, "x64": True,
                   "cases": sorted(CASES) + [n + s for n in TAIL_CASES for s in ("", "32")]},
                  fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
