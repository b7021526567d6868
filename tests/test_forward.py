"""jvp against central finite differences and against vjp, on the constructs reverse mode
supports: branches on argument values, while and for loops, early return, break, local
mutation, .at[] updates, pytrees, has_aux; and its errors."""
import functools

import numpy as np
import pytest

import strop
from helpers import x64_fixture
from strop import jvp

x64 = pytest.fixture(autouse=True)(x64_fixture)
rng = np.random.default_rng(0)


def numeric_jvp(f, primals, tangents, eps=1e-6):
    plus = f(*[p + eps * t for p, t in zip(primals, tangents)])
    minus = f(*[p - eps * t for p, t in zip(primals, tangents)])
    return (np.asarray(plus, np.float64) - np.asarray(minus, np.float64)) / (2 * eps)


def check(f, *primals, rtol=1e-6, atol=1e-7, oracle=None):
    """``oracle``: plain NumPy equal to ``f`` (for code only a transform runs: ``x.at``)."""
    oracle = oracle or f
    tangents = [rng.standard_normal(np.shape(p)) if np.ndim(p) else float(rng.standard_normal())
                for p in primals]
    out, tout = jvp(f, tuple(primals), tuple(tangents))
    np.testing.assert_allclose(out, oracle(*primals), rtol=1e-12)
    np.testing.assert_allclose(tout, numeric_jvp(oracle, primals, tangents), rtol=rtol,
                               atol=atol)
    assert np.shape(tout) == np.shape(out)
    return tout


def branchy(x):
    if x < 3:
        return 3. * x ** 2
    return -4 * x


def test_branch_on_argument_value():
    assert jvp(branchy, (2.,), (1.,)) == (12.0, 12.0)
    assert jvp(branchy, (4.,), (1.,)) == (-16.0, -4.0)


def newton_sqrt(a):
    x = a
    err = 1.0
    while err > 1e-12:
        new = 0.5 * (x + a / x)
        err = np.abs(new - x)
        x = new
    return x


def test_while_loop():
    check(newton_sqrt, 2.0)


def leaky(x, w):
    h = x
    for i in range(4):
        h = np.tanh(w @ h) + 0.1 * h
        if np.sum(h) > 10.0:
            break
    return h


def test_for_loop_with_break_and_matrices():
    check(leaky, rng.standard_normal(3), rng.standard_normal((3, 3)))


def early(x):
    for i in range(5):
        if x[i] > 0.5:
            return np.sin(x[i]) * x
    return x ** 2


def test_early_return():
    check(early, np.array([0.1, 0.2, 0.9, 0.3, 0.4]))
    check(early, np.array([0.1, 0.2, 0.3, 0.3, 0.4]))


def mutate(x):
    y = np.zeros(4)
    for i in range(3):
        y[i + 1] = y[i] * x[i] + np.cos(x[i])
    y = y.at[0].add(x[3] ** 2)
    z = y.at[1:3].multiply(x[:2])
    lst = []
    for v in z:
        lst.append(v * 2)
    return np.stack(lst) + z.at[2].get()


def mutate_numpy(x):
    y = np.zeros(4)
    for i in range(3):
        y[i + 1] = y[i] * x[i] + np.cos(x[i])
    y = y.copy()
    y[0] += x[3] ** 2
    z = y.copy()
    z[1:3] *= x[:2]
    return np.stack([v * 2 for v in z]) + z[2]


def test_local_mutation_and_at_updates():
    check(mutate, rng.uniform(0.5, 1.5, 4), oracle=mutate_numpy)


def broadcasting(x, y):
    return np.sum((x + y) * 2 - y, axis=0) + np.where(y > 0, x, 0.0)[0]


def test_broadcasting_tangent_spread_over_output():
    x, y = rng.standard_normal(3), rng.standard_normal((2, 3))
    # only x carries a tangent: x + y is (2, 3), so must its tangent be
    out, tout = jvp(lambda x: x + y, (x,), (np.ones(3),))
    assert np.shape(tout) == (2, 3)
    check(broadcasting, x, y)


def tree_fn(params, x):
    h = np.tanh(params["w"] @ x + params["b"])
    return np.sum(h * params["v"][0]) + params["v"][1]


def test_pytrees():
    params = {"w": rng.standard_normal((2, 3)), "b": rng.standard_normal(2),
              "v": (rng.standard_normal(2), 0.5)}
    x = rng.standard_normal(3)
    t = {"w": rng.standard_normal((2, 3)), "b": rng.standard_normal(2),
         "v": (rng.standard_normal(2), 0.3)}
    tx = rng.standard_normal(3)
    out, tout = jvp(tree_fn, (params, x), (t, tx))
    eps = 1e-6
    shift = lambda s: ({k: (tuple(a + s * b for a, b in zip(params[k], t[k])) if k == "v"   # noqa
                            else params[k] + s * t[k]) for k in params}, x + s * tx)
    want = (tree_fn(*shift(eps)) - tree_fn(*shift(-eps))) / (2 * eps)
    np.testing.assert_allclose(tout, want, rtol=1e-6)


def test_jvp_matches_vjp():
    """<v, J t> = <J^T v, t> on a function of a matrix."""
    a = rng.standard_normal((3, 3))
    f = lambda a: np.linalg.solve(a @ a.T + 3 * np.eye(3), np.sin(a[0]))   # noqa: E731
    t, v = rng.standard_normal((3, 3)), rng.standard_normal(3)
    _, jt = jvp(f, (a,), (t,))
    _, vjp_fn = strop.vjp(f, a)
    np.testing.assert_allclose(np.sum(v * jt), np.sum(vjp_fn(v)[0] * t), rtol=1e-10)


def with_aux(x):
    y = np.sin(x)
    return np.sum(y), {"y": y}


def test_has_aux():
    x = rng.standard_normal(3)
    out, tout, aux = jvp(with_aux, (x,), (np.ones(3),), has_aux=True)
    np.testing.assert_allclose(tout, np.sum(np.cos(x)))
    np.testing.assert_allclose(aux["y"], np.sin(x))


def test_constant_output_has_zero_tangent():
    out, tout = jvp(lambda x: np.ones(3) * 2.0, (1.0,), (1.0,))
    np.testing.assert_array_equal(tout, np.zeros(3))


def test_source_is_readable():
    from strop.jacobians import _jvp_transform
    text = strop.source(_jvp_transform(branchy, 1, False))
    assert "def branchy_jvp(x, dx):" in text
    assert "# line" in text and "dretval = -4 * dx" in text
    assert "_dt2 = 0.0" not in text   # no zeros made for a tangent nothing reads


def test_tangent_shape_mismatch():
    with pytest.raises(ValueError, match=r"shape \(2,\), but its primal has shape \(3,\)"):
        jvp(np.sin, (np.ones(3),), (np.ones(2),))


def test_tangent_dtype_mismatch():
    with pytest.raises(TypeError, match="dtype float32, but its primal has dtype float64"):
        jvp(np.sin, (np.ones(3),), (np.ones(3, np.float32),))


def test_tangent_structure_mismatch():
    with pytest.raises(TypeError, match="structure"):
        jvp(tree_fn, ({"a": 1.0}, 1.0), ({"b": 1.0}, 1.0))


def test_primals_must_be_a_tuple():
    with pytest.raises(TypeError, match=r"jvp\(f, \(x,\), \(t,\)\)"):
        jvp(np.sin, np.ones(3), np.ones(3))


def scaled_sin(x, n):
    return np.sin(x) * n


def test_integer_primal_says_what_to_do():
    x = np.array([0.1, 0.2])
    with pytest.raises(TypeError, match=r"primal 1 \(parameter 'n' of scaled_sin\) has dtype "
                                        r"int64(.|\n)*test_forward.py(.|\n)*"
                                        r"functools.partial\(f, n=n\)"):
        jvp(scaled_sin, (x, 3), (np.ones(2), 0))
    out, t = jvp(functools.partial(scaled_sin, n=3), (x,), (np.ones(2),))   # the fix
    np.testing.assert_allclose(t, 3 * np.cos(x), rtol=1e-12)


def constant_return_in_a_loop(a):
    y = np.zeros(3)
    for _ in y.copy():
        y[1] = a
        return np.full(2, 0.25)     # a constant, on the path taken
    return y.copy()


def constant_return_in_a_while(a, b):
    k = 0
    while k < 3 and b < 0.2:
        k = k + 1
        b = 0.25 * k
        return np.stack([b, b])
    return a[:, 0]


def constant_row_returned_in_a_loop(a, b):
    for _ in b:
        return np.full((2, 3), 0.3)[0]
    return b


@pytest.mark.parametrize("f, args", [
    (constant_return_in_a_loop, (0.3,)),
    (constant_row_returned_in_a_loop, (np.ones(3), np.arange(3.) / 4)),
    (constant_return_in_a_while, (np.arange(6.).reshape(2, 3) / 7, -0.4)),
], ids=["for", "row", "while"])
def test_tangent_of_a_constant_output_has_its_shape(f, args):
    # the tangent of an output that is constant on the path taken was 0.0 where it holds a
    # tangent on another path: jvp gave a number for an array output
    tangents = tuple(np.ones_like(np.asarray(a, float)) for a in args)
    out, tangent = jvp(f, args, tangents)
    eps = 1e-6
    want = (np.asarray(f(*[a + eps * t for a, t in zip(args, tangents)]))
            - np.asarray(f(*[a - eps * t for a, t in zip(args, tangents)]))) / (2 * eps)
    assert np.shape(tangent) == np.shape(out) == want.shape
    np.testing.assert_allclose(tangent, want, atol=1e-6)


def returns_a_constant_from_a_loop(a, b):
    for r in b:
        return -np.full(2, 1.5)
    return np.array([a, a])


def test_zero_tangent_of_a_value_returned_from_a_loop_has_its_shape():
    # the merge after the loop knew no value of the return to take zeros of (it may not have
    # run): the tangent came out a plain 0.0 for a (2,) output (found by the fuzzer)
    check(returns_a_constant_from_a_loop, 0.7, np.ones(3))
    check(returns_a_constant_from_a_loop, 0.7, np.ones(0))
    np.testing.assert_allclose(strop.jacfwd(returns_a_constant_from_a_loop)(0.7, np.ones(3)),
                               np.zeros(2))
