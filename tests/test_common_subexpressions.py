"""An operation computed again on the same operands is computed once (transformer/common.py):
the generated code shows it once, and every transform gives what the function gives."""
import numpy as np
import pytest

import strop
from strop import grad, jit, vmap

from helpers import numeric_vjp, x64_fixture

x64 = pytest.fixture(autouse=True)(x64_fixture)


def _code(source):
    """``source`` less its comments (which quote the user's lines)."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))


def repeated(x, w):
    a = np.sum(x) + np.sum(x)
    b = np.tanh(x) * np.tanh(x)
    c = np.concatenate([x, x[:1]])
    d = np.dot(np.concatenate([x, x[:1]]), c)
    return a * np.sum(b * w) + x[0] * x[0] + d


def test_an_operation_repeated_on_the_same_operands_is_made_once():
    x, w = np.linspace(0.1, 0.9, 4), np.linspace(1.0, 2.0, 4)
    g = grad(repeated, argnums=(0, 1))
    src = _code(strop.source(g))
    assert src.count("np.tanh(x)") == 1 and src.count("sum_all(x)") + src.count(
        "np.sum(x)") == 1 and src.count("np.concatenate(") == 1, src
    for got, i in zip(g(x, w), (0, 1)):
        np.testing.assert_allclose(got, numeric_vjp(repeated, (x, w), i, 1.0), rtol=1e-7)
    for a, b in zip(jit(g)(x, w), g(x, w)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    xs = np.stack([x, x[::-1], 2 * x])
    np.testing.assert_allclose(jit(vmap(repeated, in_axes=(0, None)))(xs, w),
                               [repeated(xi, w) for xi in xs], rtol=1e-12)
    _, tangent = strop.jvp(repeated, (x, w), (np.ones(4), np.zeros(4)))
    assert tangent == pytest.approx(float(np.sum(numeric_vjp(repeated, (x, w), 0, 1.0))),
                                    rel=1e-7)


def changed_between(x):
    a = np.sum(x)
    x = x * 2.0
    b = np.sum(x)                    # another x: computed again
    z = np.zeros(3)
    y = np.zeros(3)                  # two arrays, each filled
    z[0] = a
    y[0] = b
    for _ in range(2):
        x = np.sin(x)
        a = a + np.sum(x) * np.sum(x)
    return a * b + np.sum(z) - np.sum(y)


def test_an_operand_changed_in_between_or_a_new_array_is_computed_again():
    x = np.linspace(0.1, 0.9, 4)
    g = grad(changed_between)
    assert _code(strop.source(jit(changed_between))).count("np.zeros(3)") == 2
    np.testing.assert_allclose(g(x), numeric_vjp(changed_between, (x,), 0, 1.0), rtol=1e-7)
    np.testing.assert_allclose(jit(g)(x), g(x), rtol=1e-12)
    assert jit(changed_between)(x) == pytest.approx(changed_between(x), rel=1e-12)


def prints_twice(x):
    strop.debug.print("x = {}", x)
    strop.debug.print("x = {}", x)
    return x * 2.0


def test_an_effect_runs_as_often_as_written(capfd):
    jit(prints_twice)(1.0)
    assert capfd.readouterr().out.count("x = ") == 2


def rebinds_its_operand(x):
    x = np.sin(x)
    return np.sum(x * np.sin(x))     # sin of the new x: computed again


def test_a_name_bound_to_an_operation_of_itself_is_not_taken_for_it():
    x = np.linspace(0.1, 0.9, 4)
    assert jit(rebinds_its_operand)(x) == pytest.approx(rebinds_its_operand(x), rel=1e-12)
    np.testing.assert_allclose(grad(rebinds_its_operand)(x),
                               numeric_vjp(rebinds_its_operand, (x,), 0, 1.0), rtol=1e-7)


def sine(x):
    return np.sin(x)


def calls_a_function_twice(x):
    k = sine(x)
    k[0] = 5.0                       # k updated: sine(x) read again is not k
    return np.sum(k) + np.sum(sine(x)) * np.sum(sine(x))


def test_a_function_called_again_on_the_same_argument_is_computed_once():
    x = np.linspace(0.1, 0.9, 4)
    src = _code(strop.source(jit(calls_a_function_twice)))
    assert src.count("sin_np(") + src.count("np.sin(") == 1, src
    assert jit(calls_a_function_twice)(x) == pytest.approx(calls_a_function_twice(x), rel=1e-12)
    np.testing.assert_allclose(grad(calls_a_function_twice)(x),
                               numeric_vjp(calls_a_function_twice, (x,), 0, 1.0), rtol=1e-7)
    np.testing.assert_allclose(jit(grad(calls_a_function_twice))(x),
                               grad(calls_a_function_twice)(x), rtol=1e-12)


def zipped_twice(x):
    pairs = list(zip(x, x[::-1]))
    again = list(zip(x, x[::-1]))    # another iterator: the first one is spent
    return len(pairs) + len(again) + pairs[0][0] * again[-1][1]


def test_an_iterator_is_made_as_often_as_written():
    x = np.linspace(0.1, 0.9, 4)
    assert jit(zipped_twice, backend="python")(x) == pytest.approx(zipped_twice(x), rel=1e-12)
    assert grad(zipped_twice)(x) == pytest.approx(numeric_vjp(zipped_twice, (x,), 0, 1.0),
                                                  rel=1e-7)
