"""strop.debug.print and debug.callback run on every call in every backend (compiled code
through an object-mode island), under grad and jvp on the primal values with no derivative,
and under vmap once per lane (as JAX's debug callbacks)."""
import numpy as np
import pytest

import strop
from strop import debug, grad, jit, jvp, vmap

pytestmark = pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")
SEEN = []


def record(x, tag=None):
    SEEN.append((np.array(x).tolist(), tag))


def f(x):
    y = np.sin(x)
    debug.print("x = {}, s = {s:.3f}", x, s=np.sum(y))
    debug.callback(record, x * 2, tag="t")
    return np.sum(y ** 2)


X = np.array([0.5, 1.0])


@pytest.fixture(autouse=True)
def clear():
    SEEN.clear()


def test_every_call_in_every_backend(capsys):
    want = f(X)
    assert SEEN == [([1.0, 2.0], "t")]
    g = jit(f)
    for _ in range(2):
        assert np.isclose(g(X), want)
    assert g.last_backend == "cpu"
    # never from a cache: a cached copy would call a pickled copy of the callback
    assert g.staged().runner.save is False
    assert np.isclose(jit(f, backend="python")(X), want)
    assert SEEN == [([1.0, 2.0], "t")] * 4
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["x = [0.5 1. ], s = 1.321"] * 4


def test_no_derivative_and_primal_values(capsys):
    g = grad(f)(X)
    np.testing.assert_allclose(g, 2 * np.sin(X) * np.cos(X), rtol=1e-6)
    out, t = jvp(f, (X,), (np.ones(2),))
    np.testing.assert_allclose(jit(grad(f))(X), g, rtol=1e-6)
    assert SEEN == [([1.0, 2.0], "t")] * 3
    assert capsys.readouterr().out.count("x = [0.5 1. ]") == 3


def test_once_per_lane_under_vmap(capsys):
    xs = np.array([[0.5, 1.0], [2.0, 3.0]])
    vmap(f)(xs)
    jit(vmap(f))(xs)
    assert SEEN == [([1.0, 2.0], "t"), ([4.0, 6.0], "t")] * 2
    assert capsys.readouterr().out.splitlines() == [
        "x = [0.5 1. ], s = 1.321", "x = [2. 3.], s = 1.050"] * 2


def branchy(x):
    if x > 0:
        debug.print("pos {}", x)
        return x * 2
    return -x


def test_under_a_batched_if_the_lanes_taking_the_branch(capsys):
    xs = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(jit(vmap(branchy))(xs), [2.0, 2.0, 6.0])
    assert capsys.readouterr().out.splitlines() == ["pos 1.0", "pos 3.0"]


def test_outside_transforms_and_errors(capsys):
    assert debug.print("{a}-{0}", 1, a=2) is None
    assert capsys.readouterr().out == "2-1\n"

    def bad(x):
        fmt = "x"
        debug.print(fmt + "{}", x)
        return x
    with pytest.raises(strop.errors.TransformError, match="string constant"):
        jit(bad)(1.0)
