"""A function (or module attribute) the transformed code reads, rebound between calls: every
transform, nested ones included, serves code made for the current value (DESIGN: current value
every call).  Oracle: the un-transformed function and central differences, after the rebinding."""
import sys
import types

import numpy as np
import pytest

import strop
from strop import grad, jit, vmap

from helpers import numeric_vjp


def square(x):
    return x * x


def triple(x):
    return 3.0 * x


def inner(x):
    return square(x) + 1.0     # `square` is rebound: a callee's callee


def f(x):
    return np.sin(inner(x))


def outer(x):
    return grad(f)(x) * 2.0    # a transform made inside the transformed function


helpers = types.ModuleType("strop_test_helpers")   # a user's module: helpers.h, helpers.scale
sys.modules[helpers.__name__] = helpers


def fm(x):
    return np.sin(helpers.h(x)) * helpers.scale


TRANSFORMS = {
    "jit": jit, "grad": grad, "vmap": vmap,
    "jit(grad)": lambda g: jit(grad(g)), "vmap(grad)": lambda g: vmap(grad(g)),
    "jit(vmap(grad))": lambda g: jit(vmap(grad(g))), "grad(grad)": lambda g: grad(grad(g)),
    "jit(vmap)": lambda g: jit(vmap(g)), "grad(jit)": lambda g: grad(jit(g)),
}


def oracle(name, fun, x):
    """What the transform must give, from the un-transformed function as it is now."""
    d1 = lambda v: numeric_vjp(fun, [v], 0, 1.0)                # noqa: E731
    scalar = {"jit": fun, "grad": d1, "vmap": fun, "jit(vmap)": fun, "grad(jit)": d1,
              "jit(grad)": d1, "vmap(grad)": d1, "jit(vmap(grad))": d1,
              "grad(grad)": lambda v: numeric_vjp(d1, [v], 0, 1.0, eps=1e-4)}[name]
    return np.array([scalar(v) for v in x]) if "vmap" in name else scalar(x)


def arg(name):
    return np.array([0.3, 0.8]) if "vmap" in name else 0.3


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_rebound_callee_of_callee(name, monkeypatch):
    with strop.config.override(enable_x64=True):
        t = TRANSFORMS[name](f)
        t(arg(name))
        monkeypatch.setitem(globals(), "square", triple)
        np.testing.assert_allclose(t(arg(name)), oracle(name, f, arg(name)), rtol=1e-5)


@pytest.mark.parametrize("name", ["jit", "grad", "jit(grad)", "vmap(grad)"])
def test_rebound_module_attribute(name, monkeypatch):
    monkeypatch.setattr(helpers, "h", square, raising=False)
    monkeypatch.setattr(helpers, "scale", 2.0, raising=False)
    with strop.config.override(enable_x64=True):
        t = TRANSFORMS[name](fm)
        t(arg(name))
        monkeypatch.setattr(helpers, "h", triple)       # a function: transformed again
        np.testing.assert_allclose(t(arg(name)), oracle(name, fm, arg(name)), rtol=1e-5)
        monkeypatch.setattr(helpers, "scale", 5.0)      # data: read on every call
        np.testing.assert_allclose(t(arg(name)), oracle(name, fm, arg(name)), rtol=1e-5)


def test_rebound_callee_of_a_transform_inside(monkeypatch):
    with strop.config.override(enable_x64=True):
        t = jit(outer)
        t(0.3)
        monkeypatch.setitem(globals(), "square", triple)
        np.testing.assert_allclose(t(0.3), 2.0 * numeric_vjp(f, [0.3], 0, 1.0), rtol=1e-5)


WEIGHT = 2.0


def weighted(x):
    y = x * WEIGHT
    for i in range(3):
        y = y + WEIGHT * x[i]
    return np.sum(y * y)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_global_number_rebound_to_an_array(compiled, monkeypatch):
    # the code specializes on WEIGHT being a number (no unbroadcast between numbers); holding
    # an array, it is made again: the gradient sums the cotangent over WEIGHT's axis
    g = grad(weighted)
    run = jit(g) if compiled else g
    x = np.array([0.3, -0.5, 0.8])
    np.testing.assert_allclose(run(x), numeric_vjp(weighted, [x], 0, 1.0), rtol=1e-6)
    monkeypatch.setattr(sys.modules[__name__], "WEIGHT", np.array([[1.0], [2.0]]))
    np.testing.assert_allclose(run(x), numeric_vjp(weighted, [x], 0, 1.0), rtol=1e-6)
    monkeypatch.setattr(sys.modules[__name__], "WEIGHT", 3.0)
    np.testing.assert_allclose(run(x), numeric_vjp(weighted, [x], 0, 1.0), rtol=1e-6)
