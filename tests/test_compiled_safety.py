"""One semantics on every backend (issue 15): an index out of range, read or written, plain or
through ``.at``, raises IndexError naming the user's line in compiled code as in Python (never
a write outside the array, never a crash); slices clip as NumPy's do; arithmetic follows
NumPy's error model.  Out-of-range writes run in a subprocess, so that a crash fails the test
instead of killing pytest."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from strop import grad, jit, vmap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The user's code, in a file of its own: the error must name its lines.
USER = textwrap.dedent("""\
    import sys
    import numpy as np
    from strop import grad, jit, vmap


    def constant(x, i):
        y = np.zeros(3)
        y[3] = x
        return y.sum()


    def argument(x, i):
        y = np.zeros(3)
        y[i] = x
        return y.sum()


    def lane_array(x, i):
        y = np.zeros(3) * x
        y[i] = x
        return y.sum()


    def past_the_end(x, i):
        y = np.zeros(3)
        for k in range(i):
            y[k] = x
        return y.sum()


    def two_d(x, i):
        y = np.zeros((2, 3))
        y[1, i] = x
        return y.sum()


    def augmented(x, i):
        y = np.zeros(3)
        y[i] += x
        return y.sum()


    def read(x, i):
        y = np.ones(3) * x
        return y[i]


    def indices(x, i):
        y = np.zeros(3)
        y[np.array([0, i])] = x
        return y.sum()


    TRANSFORMS = {
        "jit": lambda f: jit(f),
        "jit_grad": lambda f: jit(grad(f)),
        "jit_vmap": lambda f: jit(vmap(f, in_axes=(0, None))),
        "jit_vmap_grad": lambda f: jit(vmap(grad(f), in_axes=(0, None))),
    }

    if __name__ == "__main__":
        name, transform, i = sys.argv[1], sys.argv[2], int(sys.argv[3])
        x = np.ones(2) if "vmap" in transform else 1.0
        print(repr(TRANSFORMS[transform](globals()[name])(x, i)))
""")

# the function, the index passed, the line that writes (or reads)
OUT_OF_RANGE = [("constant", 0, "y[3] = x"), ("argument", 3, "y[i] = x"),
                ("argument", -4, "y[i] = x"), ("argument", 100000, "y[i] = x"),
                ("argument", -100000, "y[i] = x"), ("lane_array", 5, "y[i] = x"),
                ("past_the_end", 4, "y[k] = x"), ("two_d", 3, "y[1, i] = x"),
                ("augmented", 3, "y[i] += x"), ("read", -4, "return y[i]"),
                ("indices", 7, "y[np.array([0, i])] = x")]
TRANSFORMS = ["jit", "jit_grad", "jit_vmap", "jit_vmap_grad"]


@pytest.fixture(scope="module")
def user_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("user") / "user_code.py"
    path.write_text(USER)
    return path


def run_user(path, name, transform, i):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, str(path), name, transform, str(i)], env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name,i,line", OUT_OF_RANGE)
def test_out_of_range_raises_index_error_at_the_user_line(user_file, name, i, line, transform):
    out = run_user(user_file, name, transform, i)
    assert out.returncode == 1, (out.returncode, out.stdout, out.stderr[-2000:])
    assert "IndexError" in out.stderr, out.stderr[-2000:]
    lines = [t.strip() for t in USER.splitlines()]
    lineno = lines.index(line, lines.index(f"def {name}(x, i):")) + 1
    assert f"user_code.py, line {lineno}" in out.stderr, out.stderr[-2000:]
    assert line in out.stderr


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name,i", [("argument", -3), ("argument", 2), ("past_the_end", 3),
                                    ("two_d", -1), ("indices", -1)])
def test_in_range_runs(user_file, name, i, transform):
    out = run_user(user_file, name, transform, i)
    assert out.returncode == 0, out.stderr[-2000:]


def _both(f, *args):
    """f compiled and run as Python: the same values and types."""
    got, want = jit(f)(*args), jit(f, backend="python")(*args)
    pairs = zip(got, want) if isinstance(want, tuple) else [(got, want)]
    for g, w in pairs:
        np.testing.assert_array_equal(g, w)
        assert np.asarray(g).dtype == np.asarray(w).dtype
    return got


def write_slice(x, i):
    y = np.zeros(3)
    y[i:i + 5] = x
    return y


def write_slice_back(x, i):
    y = np.arange(4.0)
    y[i:] = x
    y[:i] = y[:i] * 2
    return y


@pytest.mark.parametrize("i", [-100, -2, 0, 1, 2, 3, 100])
def test_slices_clip_as_numpy(i):
    _both(write_slice, 2.0, i)
    _both(write_slice_back, 2.0, i)
    np.testing.assert_array_equal(jit(grad(lambda x, i: write_slice(x, i).sum()))(2.0, i),
                                  grad(lambda x, i: write_slice(x, i).sum())(2.0, i))


def at_updates(x, i):
    y = np.zeros(3)
    y = y.at[i].set(x)
    y = y.at[i].add(x)
    y = y.at[np.array([0, i])].max(x)
    return y, y.at[i].get(mode="fill", fill_value=-1.0), y.at[i].get()


@pytest.mark.parametrize("i", [-4, -1, 0, 2, 3, 100000])
def test_at_out_of_bounds_modes_as_jax(i):
    """.at[] updates out of range are dropped and gets clamp (or fill), on every backend."""
    _both(at_updates, 2.0, i)
    np.testing.assert_array_equal(jit(vmap(at_updates, in_axes=(0, None)))(np.ones(2), i)[0],
                                  np.stack([jit(at_updates, backend="python")(1.0, i)[0]] * 2))


def reciprocal(x):
    return 1.0 / x, x / x, -1.0 / x


def test_division_by_zero_is_inf_and_nan():
    with np.errstate(all="ignore"):
        for x in (0.0, np.zeros(2), np.float32(0)):
            inf, nan, minus = _both(reciprocal, x)
            assert np.all(np.isposinf(inf)) and np.all(np.isnan(nan)) and \
                np.all(np.isneginf(minus))
        g = jit(grad(lambda x: 1.0 / x))(0.0)
        assert np.isneginf(g) or np.isnan(g)


def test_integer_result_stays_an_integer():
    def affine(n):
        return n * 2 + 1
    assert _both(affine, 3) == 7
    assert isinstance(jit(affine)(3), (int, np.integer))


def powers(x, n):
    s = x
    for i in range(n):
        s = s * x
    return s


@pytest.mark.parametrize("n", [-2, 0, 3])
def test_array_tape_of_a_range_that_runs_no_iteration(n):
    """An array tape made for range(n) of a negative n is empty, as the loop runs no trip."""
    assert jit(grad(powers))(2.0, n) == grad(powers)(2.0, n)


def sum_where_positive(a, b):
    s = 0.0
    for r in a:
        if r > 0.0:    # its temporaries are None, taped, in the trips that skip it
            s = s + np.sum(b * r * np.ones((2, 3)), axis=1)[1]
    return s


def return_from_loop(a, b):
    for r in a:
        if b >= 0.5:
            return np.sum(b * np.ones((2, 3)), axis=1)[1]
    return np.sum(a)


@pytest.mark.parametrize("f", [sum_where_positive, return_from_loop])
@pytest.mark.parametrize("a", [[-0.3, 0.5, -0.2, 0.7], [0.4, -0.5]])
def test_temporaries_of_a_branch_taped_in_a_loop(f, a):
    """Compiled code types a name bound to None before the branch that assigns it as an
    Optional array: a helper given one must see an array (it saw a number: expand_to returned
    its cotangent unexpanded, "unable to broadcast" or a wrong shape)."""
    for b in (0.75, 0.25):
        args = (np.array(a), b)
        want = grad(f, argnums=(0, 1))(*args)
        got = jit(grad(f, argnums=(0, 1)))(*args)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def mixed_kinds(i, f, u):
    return i + f, u / u, np.clip(i, 0.0, 1), np.maximum(i, f[0]), i * f[1]


def test_ufunc_results_have_numpy_2_dtypes():
    """An integer and a float operand promote as NumPy 2 promotes them (int32 + float32 is
    float64, uint8 / uint8 float64), where Numba's rule for mixed kinds kept float32;
    np.clip's result has the dtype of its three arguments (Numba's kept the array's)."""
    _both(mixed_kinds, np.array([-1, 0, 2], np.int32), np.array([0.5, 1.5, 2.5], np.float32),
          np.array([1, 3, 7], np.uint8))


def weak_numbers(x, n):
    total = np.sum(x) / len(x) + x.shape[0] * x[0] / x.size
    for i in range(3):
        total = total + x[i] * i
    return x * n, total, np.maximum(x, n - 1), x / (n + len(x))


@pytest.mark.parametrize("x64", [False, True])
def test_python_ints_are_weak(x64):
    """len(), a shape's item, a range's counter and a Python int argument are Python ints,
    which NumPy treats as weak (a float32 array times one stays float32); Numba types them
    int64, and float32 arithmetic with them became float64."""
    from strop import config
    with config.override(enable_x64=x64):
        _both(weak_numbers, np.array([1.5, 2.5, 3.5], np.float32), 3)
        _both(weak_numbers, np.array([1, 2, 4], np.int32), 3)
