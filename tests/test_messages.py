"""Messages a new user met (issue 18): each is valid advice, names the user's line, or says
what happened, and none of Numba's internals reach the user."""
import ast
import math
import os
import re
import warnings

import numpy as np
import pytest

import strop
from strop import grad, jit, lax
from strop.errors import DonationWarning, ImmutableUpdateError, TransformError


def set_row(x):
    x[1, :] = 0.0
    return x


def add_block(x):
    x[1:3, ::2] += 1.0
    return x


@pytest.mark.parametrize("f, want", [(set_row, "x.at[1, :].set(0.0)"),
                                     (add_block, "x.at[1:3, ::2].add(1.0)")])
def test_suggested_update_is_valid_python(f, want):
    with pytest.raises(ImmutableUpdateError) as e:
        jit(f, backend="python")(np.ones((3, 3)))
    fix = re.search(r"Fix: `([^`]*)`", str(e.value)).group(1)
    assert want in fix
    ast.parse(fix)


erf = np.vectorize(math.erf)


def no_rule(x):
    return np.sum(erf(x) * x)


def stopped(x):
    return np.sum(lax.stop_gradient(erf(x)) * x)


def test_stop_gradient_advice_is_valid():
    with pytest.raises(TransformError, match=r"strop\.lax\.stop_gradient") as e:
        grad(no_rule)(np.ones(2))
    assert "test_messages.py" in str(e.value)
    np.testing.assert_allclose(grad(stopped)(np.ones(2)), [math.erf(1.0)] * 2, rtol=1e-6)


def vectorized_sin(x):
    return np.sum(np.vectorize(math.sin)(x))


@pytest.mark.parametrize("transform", ["grad", "jvp"])
def test_no_derivative_rule_names_the_users_expression(transform):
    """The function without a rule is named as the user wrote it, not as the temporary the
    normalized code holds it in (``_t1``)."""
    with pytest.raises(TransformError, match=r"no derivative rule for np\.vectorize\(math\.sin"
                                             r"\)") as e:
        if transform == "grad":
            grad(vectorized_sin)(np.ones(2))
        else:
            strop.jvp(vectorized_sin, (np.ones(2),), (np.ones(2),))
    assert "_t1" not in str(e.value) and "test_messages.py" in str(e.value)


def test_numpy_functions_given_to_transforms():
    parts = jit(np.split, backend="python")(np.arange(6.0), 3)
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3], [4, 5]]
    assert grad(np.sum)(np.arange(3.0)).tolist() == [1.0, 1.0, 1.0]
    np.testing.assert_allclose(jit(np.sin, backend="python")(np.ones(2)), np.sin(1.0),
                               rtol=1e-6)


def test_show_of_a_missing_file_or_function(tmp_path):
    from strop.__main__ import main
    with pytest.raises(SystemExit, match="no file"):
        main(["show", str(tmp_path / "missing.py") + ":f"])
    src = tmp_path / "mod.py"
    src.write_text("def g(x):\n    return x * x\n")
    with pytest.raises(SystemExit, match=r"has no function 'f'; its functions: g"):
        main(["show", f"{src}:f"])


def test_numba_reason_is_whole():
    from strop.runner import _fallback_fix, numba_reason
    message = ("Failed in nopython mode pipeline (step: nopython frontend)\n"
               "No implementation of function Function(<function expm1_np at 0x7f37d8c0f060>)"
               " found for signature:\n \n >>> expm1_np(array(float32, 0d, C))\n \n"
               "There are 2 candidate implementations:")
    assert numba_reason(Exception(message)) == (
        "No implementation of function expm1_np found for signature: "
        "expm1_np(array(float32, 0d, C))")
    own = strop.errors.Location(strop.nn.__file__, 40)
    assert "report it" in _fallback_fix(own)
    assert "rewrite the line" in _fallback_fix(None)


def test_no_numba_deprecation_notice(tmp_path):
    import numba
    from strop.codegen.native import Native

    def first(xs):
        return xs[0]
    f = Native(lambda: numba.njit(first), str(tmp_path / "first.py"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f([1.0, 2.0]) == 1.0    # a reflected list: Numba's pending deprecation


def update(x, v):
    return x.at[0].set(v)


def test_donation_warns_where_the_array_is_overwritten():
    a = np.zeros(3, np.float32)
    with pytest.warns(DonationWarning, match="overwritten"):
        out = jit(update, donate_argnums=0)(a, 5.0)
    assert out[0] == 5.0 and a[0] == 5.0    # the caller's array: what the warning says
    with warnings.catch_warnings():
        warnings.simplefilter("error", DonationWarning)
        b = np.zeros(3, np.float32)
        jit(update)(b, 1.0)
        assert b[0] == 0.0


def test_readme_is_current():
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md")).read()
    assert "forward mode and `lax` are on their way" not in readme
    assert "strop.nn" in readme and "debug.print" in readme
