"""What a transform refuses, as the plain function would or because strop cannot yet do it right
(issue 34): never a silently wrong result.

- complex values under a derivative: a TransformError at the user's line (strop's derivative
  rules are for real numbers; the gradient of |x + iy|^2 had come out complex or with the wrong
  sign); jit and vmap of the same code keep giving Python's results;
- operators on lists and tuples: exactly Python's outcome under every transform (its TypeError
  where Python raises one, repetition and concatenation where Python does them);
- library code (SciPy, the standard library) is never inlined: under a derivative an error at
  the user's line naming the function, under jit and vmap the call as written.

Oracles: the plain function (its value, or the TypeError it raises), central differences.
"""
import inspect
import os
import statistics
import warnings

import numpy as np
import pytest

import strop
from strop import grad, hessian, jacfwd, jacrev, jit, jvp, value_and_grad, vjp, vmap
from strop.errors import TransformError
from strop.transformer.inline import library_of
from helpers import numeric_vjp

HERE = os.path.basename(__file__)


def line_of(fn, text):
    """The line of this file where ``fn``'s source holds ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def names_line(error, fn, text):
    return f"{HERE}, line {line_of(fn, text)}" in str(error)


# --- complex values under a derivative --------------------------------------------------------
R, C = 2.0, 0.5
Z = np.array([1.0 + 2.0j, 3.0 - 1.0j])


def modulus(x):
    return np.sum(np.abs(x + 1j * x[::-1]) ** 2)                 # marker: 1j


def rc_filter(w):
    h = 1 / (1 + 1j * w * R * C)                                  # marker: 1j
    return np.sum(np.abs(h))


def log_of_complex(x):
    return np.sum(np.real(np.log(x + 1j)))                        # marker: 1j


def phase(x):
    return np.sum(np.angle(x * complex(1.0, 2.0)))                # marker: complex(


def constructed(x):
    z = np.zeros(2, dtype=complex)                                # marker: dtype=complex
    return np.sum(np.abs(z + x))


def cast(x):
    return np.sum(np.imag(x.astype(np.complex64) * 1.5) + x)      # marker: astype


def spectrum(x):
    return np.sum(np.real(np.fft.fft(x)) * x)                     # marker: np.fft.fft


def global_matrix(x):
    return np.sum(np.abs(Z * x) ** 2)                             # marker: Z * x


def helper_conj(x):
    return np.conj(x * 1j)                                        # marker: x * 1j


def through_helper(x):
    return np.sum(np.real(helper_conj(x)) * x)


COMPLEX = [(modulus, "1j"), (rc_filter, "1j"), (log_of_complex, "1j"), (phase, "complex("),
           (constructed, "dtype=complex"), (cast, "astype"), (spectrum, "np.fft.fft"),
           (global_matrix, "Z * x"), (through_helper, "x * 1j")]
x2 = np.array([0.5, 1.5])

DIFFERENTIATING = {
    "grad": lambda f: grad(f)(x2),
    "value_and_grad": lambda f: value_and_grad(f)(x2),
    "vjp": lambda f: vjp(f, x2)[1](np.float32(1.0)),
    "jvp": lambda f: jvp(f, (x2,), (np.ones(2),)),
    "jacfwd": lambda f: jacfwd(f)(x2),
    "jacrev": lambda f: jacrev(f)(x2),
    "hessian": lambda f: hessian(f)(x2),
    "vmap(grad)": lambda f: vmap(grad(f))(np.stack([x2, x2])),
    "jit(grad)": lambda f: jit(grad(f))(x2),
}


@pytest.mark.parametrize("transform", list(DIFFERENTIATING))
@pytest.mark.parametrize("f, marker", COMPLEX, ids=[f.__name__ for f, _ in COMPLEX])
def test_complex_under_a_derivative_raises_at_the_users_line(f, marker, transform):
    f(x2)   # the plain function runs
    where = helper_conj if f is through_helper else f
    with pytest.raises(TransformError, match="complex numbers are not supported under "
                                             "differentiation") as e:
        DIFFERENTIATING[transform](f)
    assert names_line(e.value, where, "marker: " + marker), str(e.value)
    assert "Fix:" in str(e.value)
    assert isinstance(e.value, TypeError)   # as JAX refuses complex values: code catches it


def with_factor(x, c):
    return np.sum(np.abs(x * c) ** 2)                             # marker: x * c


def test_a_complex_argument_raises_where_its_cotangent_meets_a_real_value():
    with pytest.raises(TransformError, match="complex numbers are not supported") as e:
        grad(with_factor)(x2, Z)
    assert names_line(e.value, with_factor, "marker: x * c"), str(e.value)


def test_the_runtime_guard_replaces_the_silent_cast():
    from strop.runtime import astype_like, unbroadcast
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no ComplexWarning: an error
        with pytest.raises(TransformError, match="complex"):
            unbroadcast(np.array([1 + 1j, 2j]), np.ones(2))
        with pytest.raises(TransformError, match="complex"):
            unbroadcast(np.complex64(1 + 1j), 1.5)
        with pytest.raises(TransformError, match="complex"):
            astype_like(np.complex64(1j), np.float32(1.0))
        # complex primals keep their complex cotangents; real ones their real ones
        assert unbroadcast(np.array([[1j, 2j]]), np.ones(2, complex)).dtype == complex
        assert unbroadcast(np.ones((3, 2)), np.ones(2)).tolist() == [3.0, 3.0]


@pytest.mark.parametrize("f", [modulus, rc_filter, global_matrix],
                         ids=["modulus", "rc_filter", "global_matrix"])
def test_jit_and_vmap_of_complex_code_keep_pythons_results(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(jit(f)(x2), f(x2), rtol=1e-5)
    xs = np.stack([x2, x2 * 2.0])
    np.testing.assert_allclose(vmap(f)(xs), [f(xs[0]), f(xs[1])], rtol=1e-5)


def real_parts(x):
    return np.sum(np.real(x) * x + np.conj(x) ** 2 + np.imag(x))


def test_complex_functions_of_real_values_still_differentiate():
    with strop.config.override(enable_x64=True):
        np.testing.assert_allclose(grad(real_parts)(x2), numeric_vjp(real_parts, (x2,), 0, 1.0),
                                   rtol=1e-6)


# --- operators on lists and tuples: Python's outcome --------------------------------------
def tuple_power(x, y):
    t = (x, x)
    return np.sum(t ** 3)


def list_minus_number(x, y):
    return np.sum([x, y] - 1.0)


def tuple_times_float(x, y):
    return np.sum((x, y) * 2.0)


def tuple_times_argument(x, y):
    return np.sum((x, x) * y)


def tuples_matmul(x, y):
    return (x, y) @ (x, y)


def list_plus_tuple(x, y):
    return np.sum([x] + (y,))


def list_minus_bound_number(x, y):
    c = 1.0
    return np.sum([x, y] - c)


def list_param_squared(p, y):
    return np.sum(p ** 2) * y


REFUSED = [tuple_power, list_minus_number, tuple_times_float, tuple_times_argument,
           tuples_matmul, list_plus_tuple, list_minus_bound_number]


def list_repeated(x, y):
    return np.sum(np.asarray([x, y] * 2) * np.arange(4.0))


def lists_concatenated(x, y):
    a = [x]
    return np.sum(np.asarray(a + [y, x * y]) ** 2)


def repeated_by_name(x, y):
    n = 3
    return np.sum([x, y * 2.0] * n)


def numpy_reads_them(x, y):
    return np.sum(np.array((x, y)) * 2.0) + np.sum([x, y]) + np.mean(np.asarray([x, y]) ** 2)


def refused_in_a_branch_not_taken(x, y):
    if y > 10.0:
        return np.sum((x, y) ** 2)
    return x * y


ACCEPTED = [list_repeated, lists_concatenated, repeated_by_name, numpy_reads_them,
            refused_in_a_branch_not_taken]
TRANSFORMS = {
    "grad": lambda f, x, y: grad(f)(x, y),
    "jvp": lambda f, x, y: jvp(f, (x, y), (1.0, 0.5)),
    "vmap": lambda f, x, y: vmap(f)(np.array([x, x]), np.array([y, y])),
    "jit": lambda f, x, y: jit(f)(x, y),
}


def plain_error(f, *args):
    with pytest.raises(TypeError) as e:
        f(*args)
    return str(e.value)


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("f", REFUSED, ids=[f.__name__ for f in REFUSED])
def test_operators_python_refuses_raise_its_type_error(f, transform):
    message = plain_error(f, 1.5, 2.0)
    with pytest.raises(TypeError) as e:
        TRANSFORMS[transform](f, 1.5, 2.0)
    got = str(e.value)
    # Python's message (a float argument is a 32-bit NumPy float inside a transform)
    assert got.split("\n")[0].replace("numpy.float32", "float") == message
    assert f"{HERE}, line" in got


def test_a_list_argument_under_an_operator_raises_as_in_python():
    p = [1.0, 2.0]
    message = plain_error(list_param_squared, p, 2.0)
    for transform in (lambda: grad(list_param_squared)(p, 2.0),
                      lambda: jit(list_param_squared, backend="python")(p, 2.0)):
        with pytest.raises(TypeError) as e:
            transform()
        # (whether the argument was a list or a tuple is not known where the code is made)
        assert str(e.value).split("\n")[0] == message.replace("'list'", "'tuple' or 'list'")


@pytest.mark.parametrize("f", ACCEPTED, ids=[f.__name__ for f in ACCEPTED])
def test_operators_python_accepts_keep_their_meaning(f):
    x, y = 1.5, 2.0
    want = f(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(jit(f)(x, y), want, rtol=1e-6)
    np.testing.assert_allclose(vmap(f)(np.array([x, x]), np.array([y, y])), [want, want],
                               rtol=1e-6)
    with strop.config.override(enable_x64=True):
        gx, gy = grad(f, argnums=(0, 1))(x, y)
        np.testing.assert_allclose([gx, gy], [numeric_vjp(f, (x, y), 0, 1.0),
                                              numeric_vjp(f, (x, y), 1, 1.0)], rtol=1e-6)
        out, tangent = jvp(f, (x, y), (1.0, 0.5))
        np.testing.assert_allclose(out, want, rtol=1e-12)
        np.testing.assert_allclose(tangent, gx + 0.5 * gy, rtol=1e-6)


# --- library code is never inlined ----------------------------------------------------------
scipy_special = pytest.importorskip("scipy.special")
scipy_stats = pytest.importorskip("scipy.stats")


def lse(x):
    return scipy_special.logsumexp(x) * 2.0                       # marker: logsumexp


def log_density(x):
    return np.sum(scipy_stats.norm.logpdf(x, 0.5, 2.0))           # marker: logpdf


def mean_of(x):
    return statistics.fmean([x[0], x[1]]) * x[0]                  # marker: fmean


def users_helper(x):
    return np.sum(x ** 2)


def calls_users_helper(x):
    return users_helper(x) + strop.nn.logsumexp(x)


x3 = np.array([0.5, 1.0, 2.0])


@pytest.mark.parametrize("f, marker, name", [(log_density, "logpdf", "logpdf"),
                                             (mean_of, "fmean", "statistics.fmean")])
def test_a_library_function_under_a_derivative_is_an_error_at_the_users_line(f, marker, name):
    for transform in (lambda: grad(f)(x3), lambda: jit(grad(f))(x3),
                      lambda: vmap(grad(f))(np.stack([x3, x3]))):
        with pytest.raises(TransformError) as e:
            transform()
        message = str(e.value)
        assert names_line(e.value, f, "marker: " + marker), message
        assert name in message and "site-packages" not in message.split("\n")[1:2][0]
        assert "_helpers.py" not in message and "try/except" not in message


def test_scipys_logsumexp_runs_strops_twin_and_is_not_refused():
    """(It was refused with a hint to use strop.nn.logsumexp: strop.scipy.special's twin now
    runs in its place, tests/test_scipy_special.py.)"""
    with strop.config.override(enable_x64=True):
        np.testing.assert_allclose(grad(lse)(x3), numeric_vjp(lse, (x3,), 0, 1.0), rtol=1e-6)


@pytest.mark.parametrize("f", [lse, log_density, mean_of], ids=["logsumexp", "logpdf", "fmean"])
def test_jit_and_vmap_call_library_functions_as_written(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(jit(f)(x3), f(x3), rtol=1e-6)
    xs = np.stack([x3, x3 * 0.5])
    np.testing.assert_allclose(vmap(f)(xs), [f(xs[0]), f(xs[1])], rtol=1e-5)


def test_users_helpers_and_strops_own_are_still_inlined():
    with strop.config.override(enable_x64=True):
        np.testing.assert_allclose(grad(calls_users_helper)(x3),
                                   numeric_vjp(calls_users_helper, (x3,), 0, 1.0), rtol=1e-6)


def test_library_of():
    assert library_of(scipy_special.logsumexp) == "scipy"
    assert library_of(statistics.fmean) == "statistics"
    assert library_of(np.linalg.norm) == "numpy"
    assert library_of(users_helper) is None            # a test module: the user's code
    assert library_of(strop.nn.logsumexp) is None      # strop's own, written to be inlined
    assert library_of(lambda x: x) is None
