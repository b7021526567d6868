"""NumPy's floating-point warnings from compiled code (runtime/fpstatus.py, issue 15): a compiled
call that divides by zero, makes a NaN or overflows warns as NumPy run on the same values warns
(same message, same user line), raises FloatingPointError under ``np.errstate(...="raise")``,
is quiet under "ignore", and gives no warning for a division its own code guards."""
import warnings

import numpy as np
import pytest

from strop import debug, grad, jit, source, vmap

from helpers import x64_fixture

x64 = pytest.fixture(autouse=True)(x64_fixture)


def divides(x):
    return 1.0 / x


def logs(x):
    y = x * 2.0
    return np.log(y) + 1.0


def roots(x):
    return np.sqrt(x - 1.0)


def overflows(x):
    return np.exp(x) * 2.0


def zero_by_zero(x):
    return np.sum(x / x)


def guarded(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] != 0.0:
            s = s + 1.0 / x[i]
    return s


def branches(x):
    if x[0] > 0:
        return np.log(x[0])
    return np.log(-x[0]) * 2.0


def _warned(f, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = f(*args)
    return out, sorted((str(w.message), w.filename, w.lineno) for w in caught
                       if issubclass(w.category, RuntimeWarning))


CASES = [(divides, np.array([0.0, 2.0])), (divides, np.float32(0)),
         (logs, np.array([0.0, 1.0], np.float32)), (roots, np.array([0.0, 4.0])),
         (overflows, np.array([1.0, 1000.0])), (zero_by_zero, np.zeros(3)),
         (branches, np.array([0.0])), (branches, np.array([-0.0, 3.0])),
         (guarded, np.array([0.0, 2.0, 0.0])), (divides, np.array([1.0, 2.0]))]


@pytest.mark.parametrize("f, x", CASES)
def test_compiled_code_warns_as_numpy(f, x):
    want_out, want = _warned(f, x)
    compiled = jit(f)
    for _ in range(2):     # the second call gives the warnings again, without running as Python
        out, got = _warned(compiled, x)
        np.testing.assert_array_equal(out, want_out)
        assert got == want
    assert compiled.last_backend == "cpu"


@pytest.mark.parametrize("f, x", CASES[:5])
def test_errstate_raise_names_the_user_line_and_ignore_is_quiet(f, x):
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError) as python:
            f(x)
        with pytest.raises(FloatingPointError, match="encountered") as compiled:
            jit(f)(x)
    line = python.traceback[-1].lineno + 1
    assert f"{__file__}, line {line}" in str(compiled.value)
    with np.errstate(all="ignore"):
        assert _warned(jit(f), x)[1] == []


def test_a_warning_filter_turning_them_into_errors_applies():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning, match="divide by zero"):
            jit(divides)(np.zeros(2))


def test_transformed_code_warns_at_the_user_line():
    x = np.array([0.0, 1.0])
    out, got = _warned(jit(grad(lambda x: np.sum(np.log(x)))), x)
    assert np.isposinf(out[0]) and out[1] == 1.0
    lines = {(m.split(" in ")[0], line) for m, path, line in got}
    here = test_transformed_code_warns_at_the_user_line.__code__.co_firstlineno + 2
    assert lines == {("divide by zero encountered", here)} and {p for _, p, _ in got} == {__file__}
    out, got = _warned(jit(vmap(divides)), x)
    assert np.isposinf(out[0]) and {(m, ln) for m, _, ln in got} == {
        ("divide by zero encountered in scalar divide", divides.__code__.co_firstlineno + 1)}


def printing(x):
    debug.print("x = {}", x)
    return 1.0 / x


def test_code_with_effects_is_not_run_again(capfd):
    out, got = _warned(jit(printing), np.zeros(2))
    assert np.all(np.isposinf(out))
    assert capfd.readouterr().out.count("x = ") == 1
    assert [(m, ln) for m, _, ln in got] == [("divide by zero encountered in compiled code",
                                             printing.__code__.co_firstlineno)]


def test_source_does_not_show_the_checks():
    text = source(jit(branches))
    assert "fp_" not in text and "return _retval" in text


def floor_divides(n):
    return 7 // n + 7 % n


def test_an_integer_divided_by_zero_as_python_and_numpy():
    with pytest.raises(ZeroDivisionError):   # Python's ints: Python's error, as run as Python
        jit(floor_divides)(0)
    out, got = _warned(jit(floor_divides), np.int64(0))
    want_out, want = _warned(floor_divides, np.int64(0))
    assert out == want_out == 0 and got == want and len(got) == 2
