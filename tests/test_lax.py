"""strop.lax: against JAX (reference values made once with JAX: tests/data/make_lax_reference.py),
against the same code written as Python control flow, against central differences, and its
errors.  Each function runs as a plain call (strop.lax's own code), under jit (Python and
compiled), grad, jvp, hessian and vmap."""
import functools
import json
import os
import re
import warnings

import numpy as np
import pytest

import strop
from helpers import check_grad, numeric_vjp, x64_fixture
from lax_cases import cases
from strop import grad, hessian, jit, jvp, lax, vmap
from strop.errors import JitFallbackWarning, LaxTypeError, LaxValueError, PurityError
from strop.tree_util import tree_leaves

x64 = pytest.fixture(autouse=True)(x64_fixture)
DATA = os.path.join(os.path.dirname(__file__), "data")
REFERENCE = np.load(os.path.join(DATA, "lax_reference.npz"))
with open(os.path.join(DATA, "lax_reference.json")) as _f:
    META = json.load(_f)["cases"]
CASES = cases(lax, np)


def compiled(f):
    """jit(f), failing on a JitFallbackWarning: the code compiles whole."""
    fn = jit(f)

    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("error", JitFallbackWarning)
            return fn(*args)
    return run


def assert_reference(name, what, got):
    leaves = [np.asarray(x) for x in tree_leaves(got)]
    dtypes = META[name][what]
    assert len(leaves) == len(dtypes), (name, what, len(leaves), dtypes)
    for k, (leaf, dtype) in enumerate(zip(leaves, dtypes)):
        want = REFERENCE[f"{name}/{what}/{k}"]
        assert leaf.shape == want.shape, (name, what, k, leaf.shape, want.shape)
        assert leaf.dtype.kind == want.dtype.kind, (name, what, k, leaf.dtype, dtype)
        np.testing.assert_allclose(leaf, want, rtol=1e-9, atol=1e-12,
                                   err_msg=f"{name} {what} leaf {k}")


TRANSFORMED = {"value": lambda f: jit(f, backend="python"), "grad": grad, "vmap": vmap}
COMPILED = {"value": compiled, "grad": lambda f: compiled(grad(f)),
            "vmap": lambda f: compiled(vmap(f))}
PLAIN = [(n, w) for n, (_, _, whats) in CASES.items() for w in whats if w == "value"]
ALL = [(n, w) for n, (_, _, whats) in CASES.items() for w in whats]


@pytest.mark.parametrize("name, what", PLAIN)
def test_plain_call_matches_jax(name, what):
    f, args, _ = CASES[name]
    assert_reference(name, what, f(*args))


@pytest.mark.parametrize("name, what", ALL)
def test_transformed_matches_jax(name, what):
    f, args, _ = CASES[name]
    assert_reference(name, what, TRANSFORMED[what](f)(*args))


# compiled: one case of each kind (compiling is the slow part of the suite)
COMPILED_CASES = ["cond_tree/grad", "while_count/value", "fori_array/value", "newton/grad",
                  "fori_bounds/grad", "scan_reverse_tree/grad", "scan_length/value",
                  "rnn/grad", "map_sin/value", "stop/grad", "slices_-5/value",
                  "slice_grad/grad", "switch_7/value", "vmap_cond/vmap", "vmap_switch/vmap",
                  "vmap_fori/vmap", "vmap_newton/vmap", "vmap_slice_grad/vmap"]


@pytest.mark.parametrize("case", COMPILED_CASES)
def test_compiled_matches_jax(case):
    name, what = case.split("/")
    f, args, _ = CASES[name]
    assert_reference(name, what, COMPILED[what](f)(*args))


# --- the same code written as Python control flow ------------------------------------------

def body_sin(i, acc):   # a module function given to fori_loop
    return acc * 0.9 + np.sin(acc * i)


def fori_lax(x, n):
    return lax.fori_loop(n // 3, n, body_sin, x)


def fori_py(x, n):
    acc = x
    for i in range(n // 3, n):
        acc = acc * 0.9 + np.sin(acc * i)
    return acc


def while_lax(a, n=0):
    def body(c):
        x, k = c
        return 0.5 * (x + a / x), k + 1
    x, k = lax.while_loop(lambda c: np.abs(c[0] * c[0] - a) > 1e-9 * a, body, (a, 0))
    return x + 0.01 * k + n


def while_py(a, n=0):
    x, k = a, 0
    while np.abs(x * x - a) > 1e-9 * a:
        x, k = 0.5 * (x + a / x), k + 1
    return x + 0.01 * k + n


def scan_lax(w, n):
    xs = np.linspace(-1., 1., n)
    scale = 0.5   # read by the nested def

    def cell(h, x):
        h = np.tanh(w * h + x * scale)
        return h, h ** 2
    h, ys = lax.scan(cell, 0.1, xs)
    return h + np.sum(ys)


def scan_py(w, n):
    xs = np.linspace(-1., 1., n)
    h, ys = 0.1, np.zeros(len(xs))
    for t in range(len(xs)):
        h = np.tanh(w * h + xs[t] * 0.5)
        ys[t] = h ** 2
    return h + np.sum(ys)


def switch_lax(x, n):
    i = n
    return lax.switch(i, [lambda y: y * 2., np.sin, lambda y: -y * y], x)


def switch_py(x, n):
    i = min(max(n, 0), 2)
    if i == 0:
        return x * 2.
    if i == 1:
        return np.sin(x)
    return -x * x


def cond_lax(x, n=0):
    return lax.cond(x > 0, lambda y: np.sqrt(y), lambda y: y ** 3, x)


def cond_py(x, n=0):
    return np.sqrt(x) if x > 0 else x ** 3


PAIRS = [(fori_lax, fori_py, (0.4, 7)), (while_lax, while_py, (3., 0)),
         (scan_lax, scan_py, (0.8, 6)), (cond_lax, cond_py, (2., 0)),
         (cond_lax, cond_py, (-2., 0))] + [(switch_lax, switch_py, (0.7, i)) for i in (-3, 1, 2, 8)]


@pytest.mark.parametrize("f, py, args", PAIRS)
def test_as_python_control_flow(f, py, args):
    """Values and derivatives equal those of the same code written as Python control flow."""
    np.testing.assert_allclose(f(*args), py(*args), rtol=1e-12)
    np.testing.assert_allclose(jit(f, backend="python")(*args), py(*args), rtol=1e-12)
    np.testing.assert_allclose(grad(f)(*args), grad(py)(*args), rtol=1e-12)
    rest = dict(zip(PARAMS, args[1:]))
    np.testing.assert_allclose(jvp(functools.partial(f, **rest), args[:1], (0.5,)),
                               jvp(functools.partial(py, **rest), args[:1], (0.5,)), rtol=1e-12)


PARAMS = ("n",)   # the name of the second parameter of each pair (the one not differentiated)


@pytest.mark.parametrize("f, py, args", [PAIRS[0], PAIRS[1], PAIRS[2], PAIRS[5]])
def test_compiles_as_python_control_flow(f, py, args):
    """jit and jit(grad) compile whole, as the Python control flow does."""
    np.testing.assert_allclose(compiled(f)(*args), py(*args), rtol=1e-12)
    np.testing.assert_allclose(compiled(grad(f))(*args), compiled(grad(py))(*args), rtol=1e-12)


def test_vmap_as_python_control_flow():
    """Batched predicates, indices and trip counts: each lane as the Python code gives it."""
    ns, xs = np.array([3, 7, 0, 5]), np.array([0.4, -0.3, 0.2, 0.9])
    want = [fori_py(x, n) for x, n in zip(xs, ns)]
    np.testing.assert_allclose(vmap(fori_lax)(xs, ns), want, rtol=1e-12)
    np.testing.assert_allclose(compiled(vmap(fori_lax))(xs, ns), want, rtol=1e-12)
    a = np.array([2., 9., 0.5, 100.])
    np.testing.assert_allclose(compiled(vmap(while_lax))(a), [while_py(v) for v in a],
                               rtol=1e-12)
    np.testing.assert_allclose(compiled(vmap(grad(while_lax)))(a),
                               [grad(while_py)(v) for v in a], rtol=1e-12)
    i = np.array([-1, 0, 1, 2, 3])
    np.testing.assert_allclose(compiled(vmap(switch_lax))(xs[[0, 1, 2, 3, 0]], i),
                               [switch_py(x, k) for k, x in zip(i, xs[[0, 1, 2, 3, 0]])],
                               rtol=1e-12)
    np.testing.assert_allclose(compiled(vmap(grad(cond_lax)))(np.array([-2., 2.])),
                               [grad(cond_py)(-2.), grad(cond_py)(2.)], rtol=1e-12)


# --- derivatives against central differences -----------------------------------------------

def test_grad_through_while_loop_against_differences():
    """Reverse mode through while_loop (JAX cannot): the trip count is fixed near the point."""
    check_grad(while_lax, 3.)
    check_grad(while_lax, 0.7)


def test_grad_fori_loop_bounds_from_arguments():
    for n in (1, 5, 9):
        check_grad(fori_lax, 0.4, n)


def test_grad_scan_against_differences():
    def loss(w, xs, h0):
        def cell(h, x):
            h = np.tanh(w @ h + x)
            return h, np.sum(h * x)
        h, ys = lax.scan(cell, h0, xs, reverse=True)
        return np.sum(ys) + np.sum(h ** 2)
    rng = np.random.default_rng(1)
    w, xs, h0 = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((5, 3)), np.ones(3)
    check_grad(loss, w, xs, h0, argnums=(0, 1, 2))


def scan_rebinds_carry(w, xs, h0):
    def cell(h, x):
        old = h                      # the carry before it is rebound, read after
        h = np.tanh(w @ h + x)
        return h, old * h
    h, ys = lax.scan(cell, h0, xs)
    return np.sum(ys) + np.sum(h ** 2)


def fori_rebinds_carry(x, n):
    def body(i, v):
        v = v * 1.1 + np.sin(v)
        v = v - 0.01 * i
        return v
    return lax.fori_loop(0, n, body, x)


def while_rebinds_carry(x):
    def body(c):
        s, k = c
        s = s * 1.5 + np.cos(s)
        return s, k + 1
    s, k = lax.while_loop(lambda c: c[1] < 4, body, (x, 0))
    return s


def fori_swaps_carry(x, y, n):
    def body(i, c):
        a, b = c
        a = a * 0.9 + np.sin(b)
        return b, a
    a, b = lax.fori_loop(0, n, body, (x, y))
    return a * b


@pytest.mark.parametrize("f, args, copy", [
    (scan_rebinds_carry, (np.eye(3) * 0.5, np.linspace(-1, 1, 12).reshape(4, 3), np.ones(3)),
     r"h_\d+ = h_\d+"),
    (fori_rebinds_carry, (0.3, 5), r"v_\d+ = v_\d+"),
    (while_rebinds_carry, (0.2,), r"s_\d+ = c_0"),
    (fori_swaps_carry, (0.3, 0.7, 5), None)])   # a swap: the copies stay
def test_loop_body_rebinds_the_carry_itself(f, args, copy):
    """A body function that rebinds its carry parameter is inlined reading and rebinding the
    carry's own variable (transformer/coalesce.py): no copy in at the top of each trip and out at
    the end, so reverse mode tapes the carry once a trip.  Values and derivatives unchanged."""
    if copy is not None:
        copies = [line.strip() for line in strop.source(jit(grad(f))).splitlines()
                  if re.fullmatch(" {8,}" + copy, line)]   # in a loop
        assert not copies, copies
    check_grad(f, *args, argnums=tuple(i for i, a in enumerate(args) if not isinstance(a, int)))
    np.testing.assert_allclose(compiled(grad(f))(*args), grad(f)(*args), rtol=1e-12)


def test_hessian_through_while_and_fori():
    def f(x):
        y = lax.while_loop(lambda c: c[1] < 3, lambda c: (np.sin(c[0]) * x, c[1] + 1), (x, 0))
        return lax.fori_loop(0, 3, lambda i, acc: acc * x + y[0], 0.)
    for x in (0.3, 1.2):
        want = numeric_vjp(grad(f), [x], 0, 1.0)
        np.testing.assert_allclose(hessian(f)(x), want, rtol=1e-6)
        np.testing.assert_allclose(compiled(hessian(f))(x), want, rtol=1e-6)


def test_grad_dynamic_slices_against_differences():
    def f(x, i):
        part = lax.dynamic_slice(x, (i, -1), (2, 2))
        y = lax.dynamic_update_slice(x, part * part, (1 - i, i))
        z = lax.dynamic_update_index_in_dim(y, np.sin(y[0]), i, 0)
        return np.sum(z ** 2) + np.sum(lax.dynamic_index_in_dim(z, i, 1, keepdims=False))
    x = np.random.default_rng(2).standard_normal((4, 3))
    for i in (-3, 0, 2, 5):
        check_grad(f, x, i)


def test_stop_gradient():
    def f(x):
        d = lax.stop_gradient({"a": x, "b": (x * 2,)})
        return np.sum(x * d["a"] + d["b"][0])
    x = np.array([1., 2.])
    np.testing.assert_allclose(grad(f)(x), x)
    np.testing.assert_allclose(compiled(grad(f))(x), x)
    assert jvp(f, (x,), (np.ones(2),))[1] == pytest.approx(3.)


# --- errors: JAX's, naming the user's line --------------------------------------------------

def branches_differ(x):
    return lax.cond(x > 0, lambda: (x, x), lambda: x)


def switch_differs(x):
    return lax.switch(1, [lambda: {"a": x}, lambda: {"b": x}])


def carry_structure(x):
    return lax.fori_loop(0, 3, lambda i, c: (c[0],), (x, x))


def carry_list(x):
    return lax.while_loop(lambda c: c[0] < 3., lambda c: [c[0] + 1., c[1]], (x, x))


def not_a_pair(x):
    return lax.scan(lambda c, v: c + v, 0., x)


def no_xs(x):
    return lax.scan(lambda c, v: (c, v), x, None)


@pytest.mark.parametrize("f, message", [
    (branches_differ, "cond branch outputs must have the same pytree structure"),
    (switch_differs, "switch branch outputs must have the same pytree structure"),
    (carry_structure, "fori_loop body function carry input and carry output must have the "
                      "same pytree structure"),
    (carry_list, "The input carry is (*, *) but the carry output is [*, *]"),
    (not_a_pair, "scan body output must be a pair")])
def test_structure_errors_name_the_line(f, message):
    for t in (jit, grad):
        with pytest.raises(LaxTypeError) as e:
            t(f)(np.ones(3) if f is not_a_pair else 1.)
        assert message in str(e.value)
        assert e.value.location.lineno == f.__code__.co_firstlineno + 1


def test_no_xs_and_no_length():
    with pytest.raises(LaxValueError, match="no values to scan over"):
        jit(no_xs)(1.)


def carry_type(x):
    return lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, x)


def carry_shape(x):
    return lax.fori_loop(0, 3, lambda i, c: c.sum(), x)


def carry_length(x):
    return lax.fori_loop(0, 3, lambda i, c: np.ones(3), x)


def xs_lengths(x):
    return lax.scan(lambda c, v: (c + v[0] * v[1], c), 0., (x, np.ones(4)))


@pytest.mark.parametrize("f, arg, kind, message", [
    (carry_type, np.int32(0), TypeError, "while_loop body function carry input and carry "
                                         "output must have equal types, but they differ:\n"
                                         "The input carry has type int32\\[\\] but the "
                                         "corresponding output has type float"),
    (carry_shape, np.zeros(2), TypeError, "fori_loop body function carry input and carry "
                                          "output must have equal types, but they differ:\n"
                                          "The input carry has type float64\\[2\\] but the "
                                          "corresponding output has type float64\\[\\], so "
                                          "the shapes do not match"),
    (carry_length, np.zeros(2), TypeError, "The input carry has type float64\\[2\\] but the "
                                           "corresponding output has type float64\\[3\\], so "
                                           "the shapes do not match"),
    (xs_lengths, np.ones(3), ValueError, "scan got values with different leading axis sizes")])
def test_type_errors_when_running(f, arg, kind, message):
    """Checked when the code runs: the same error as a plain call, at the user's line."""
    with pytest.raises(kind, match=message):
        f(arg)
    for t in (lambda f: jit(f, backend="python"), jit) + (
            (lambda f: grad(lambda x: f(x).sum()),) if f is not carry_type else ()):
        with pytest.raises(kind, match=message) as e:
            t(f)(arg)
        if kind is TypeError:
            assert isinstance(e.value, LaxTypeError)
        assert e.value.location.lineno == f.__code__.co_firstlineno + 1


def test_weak_carry_may_become_a_float():
    """0 is weakly typed, as in JAX: a loop may make it a float."""
    def f(x):
        return lax.fori_loop(0, 4, lambda i, acc: acc + x[i], 0)
    x = np.arange(4.) / 2
    assert f(x) == jit(f)(x) == compiled(f)(x) == 3.


# --- branch outputs of different types: JAX's TypeError on every path --------------------

def branch_dtypes(x):
    return lax.cond(x > 0, lambda v: v * 2., lambda v: np.int32(1), x)


def branch_shapes(x):
    return lax.switch(1, [lambda v: v, lambda v: np.ones(3)], x).sum()


def branch_trees(x):
    return lax.cond(x > 0, lambda v: (v, v), lambda v: v, x)


def branch_leaf(x):
    return lax.cond(x > 0, lambda v: (v, v * 2., np.int32(1)), lambda v: (v, np.ones(2), 1.),
                    x)[0]


def branch_weak_int(x):
    return lax.cond(x > 0, lambda v: 1, lambda v: v, x)


BRANCH_ERRORS = [
    (branch_dtypes, "The output of true_fun has type float32[] but the corresponding output "
                    "of false_fun has type int32[], so the dtypes do not match"),
    (branch_shapes, "The output of branch 0 has type float32[] but the corresponding output "
                    "of branch 1 has type float32[3], so the shapes do not match"),
    (branch_trees, "true_fun output is (*, *) but false_fun output is *"),
    (branch_leaf, "at path [1] has type float32[] but the corresponding output of false_fun "
                  "has type float32[2]"),
    (branch_weak_int, "The output of true_fun has type int32[] but the corresponding output of "
                      "false_fun has type float32[], so the dtypes do not match")]
COMPILED_TEXT = {branch_dtypes: "has an output of type float32[] where another has type "
                                "int32[]",
                 branch_shapes: "has an output of type float32[] where another has type "
                                "float32[?]",
                 branch_leaf: "has an output of type float32[] where another has type "
                              "float32[?]"}
BRANCH_TRANSFORMS = {
    "plain": lambda f: f,
    "python": lambda f: jit(f, backend="python"),
    "jit": jit,
    "grad": grad,
    "jit_grad": lambda f: jit(grad(f)),
    "jvp": lambda f: lambda x: jvp(f, (x,), (np.float32(1.),)),
    "jit_jvp": lambda f: lambda x: jit(lambda v: jvp(f, (v,), (np.float32(1.),))[1])(x),
    "vmap": lambda f: lambda x: vmap(f)(np.array([x, -x], np.float32)),
    "jit_vmap": lambda f: lambda x: jit(vmap(f))(np.array([x, -x], np.float32)),
    "vmap_grad": lambda f: lambda x: vmap(grad(f))(np.array([x, -x], np.float32))}


@pytest.mark.parametrize("how", list(BRANCH_TRANSFORMS))
@pytest.mark.parametrize("f, message", BRANCH_ERRORS, ids=lambda v: getattr(v, "__name__", ""))
def test_branch_types_differ(f, message, how):
    """JAX rejects branches whose outputs differ in structure, dtype or shape; so does strop on
    every path, though only one branch runs: compiled code through the types Numba gives both
    branches, code run as Python and plain calls by running the others for their types."""
    if how in ("grad", "jit_grad", "vmap_grad") and f is branch_trees:
        pytest.skip("grad needs a scalar output")
    with strop.config.override(enable_x64=False):
        with pytest.raises(LaxTypeError) as e:
            BRANCH_TRANSFORMS[how](f)(np.float32(1.5))
    text = str(e.value)
    if f is branch_trees:
        assert "cond branch outputs must have the same pytree structure" in text
    else:
        assert "branches must have equal output types but they differ" in text
        assert message in text or how.startswith("jit") and COMPILED_TEXT[f] in text
    assert "please report" not in text
    assert e.value.location.filename == __file__
    assert e.value.location.lineno == f.__code__.co_firstlineno + 1


def weak_branches(x, n):
    """Python numbers in one branch and arrays of their dtype in the other: JAX takes them
    (weakly typed), as strop does on every path."""
    a = lax.cond(x > 0, lambda v: v * 2., lambda v: 1., x)
    b = lax.switch(n, [lambda v: (v, 0.), lambda v: (0., v), lambda v: (v + 1., v * v)], x)
    c = lax.cond(x < 0, lambda: {"s": x, "t": 3.}, lambda: {"s": 0.5, "t": x})
    return a + b[0] * b[1] + c["s"] - c["t"]


def weak_ints(n):
    return lax.cond(n > 2, lambda m: m * 2, lambda m: 1, n) + lax.switch(
        n, [lambda m: 7, lambda m: m - 1], n)


def test_weak_branches_pass():
    for x64 in (False, True):
        with strop.config.override(enable_x64=x64):
            dtype = np.float64 if x64 else np.float32
            for x, n in ((1.5, 0), (-0.5, 2), (2., 1)):
                x = dtype(x)
                want = weak_branches(x, n)
                for how in ("python", "jit", "grad", "jvp"):
                    got = BRANCH_TRANSFORMS[how](lambda v: weak_branches(v, n))(x)
                    if how in ("plain", "python", "jit"):
                        assert got == pytest.approx(want)
            xs = np.array([1.5, -0.5, 2.], dtype)
            want = [weak_branches(v, 1) for v in xs]
            np.testing.assert_allclose(vmap(weak_branches, in_axes=(0, None))(xs, 1), want,
                                       rtol=1e-6)
            # jit, not compiled: with x64 off vmap broadcasts the unbatched 0. of a branch to
            # float64 lanes, which Numba cannot unify with float32 ones (a fallback to Python,
            # older than the branch checks, which rightly take it for no error)
            np.testing.assert_allclose(jit(vmap(weak_branches, in_axes=(0, None)))(xs, 1),
                                       want, rtol=1e-6)
            np.testing.assert_allclose(compiled(grad(weak_branches))(xs[0], 2),
                                       grad(weak_branches)(xs[0], 2), rtol=1e-6)
            ints = np.int32 if not x64 else np.int64
            for n in (ints(0), ints(1), ints(3)):
                want = weak_ints(n)
                assert jit(weak_ints)(n) == compiled(weak_ints)(n) == want
                assert jit(weak_ints, backend="python")(n) == want
            np.testing.assert_array_equal(vmap(weak_ints)(np.arange(4, dtype=ints)),
                                          [weak_ints(k) for k in range(4)])
            np.testing.assert_array_equal(compiled(vmap(weak_ints))(np.arange(4, dtype=ints)),
                                          [weak_ints(k) for k in range(4)])


def small_ints(n):
    return lax.cond(n > 2, lambda m: m * 2, lambda m: m, n)


@pytest.mark.parametrize("x64", [False, True])
def test_compiled_numbers_of_one_kind_pass(x64):
    """Numba's arithmetic widens numbers (int8 * int8 is an int64) where NumPy keeps them:
    compiled code compares numbers by kind, and makes no error of it."""
    with strop.config.override(enable_x64=x64):
        for n in (np.int8(3), np.int32(3), np.int32(1)):
            assert compiled(small_ints)(n) == small_ints(n)


def test_branches_not_taken_run_without_effects(capsys):
    """A plain call runs the branches not taken for their types only where nothing can see
    it: never one with effects, never on an iterator, never writing into an operand."""
    x = np.zeros(3)
    lax.cond(True, lambda v: v.sum(), lambda v: (strop.debug.print("not taken"), v.sum())[1], x)
    assert "not taken" not in capsys.readouterr().out
    it = iter(range(5))
    assert lax.cond(True, lambda i: next(i), lambda i: next(i) * 10, it) == 0
    assert next(it) == 1
    assert lax.cond(True, lambda v: v.sum(), lambda v: np.copyto(v, 5.) or v.sum(), x) == 0.
    assert not x.any()
    # a branch not taken that fails on these operands: its type is not known, no error
    assert lax.switch(0, [lambda v: v[0], lambda v: v[10]], x) == 0.

    def f(v):
        print("called")   # an effect: the function is never run again for the check
        return lax.cond(v > 0, lambda w: w * 2., lambda w: np.int32(1), v)
    with pytest.raises(LaxTypeError):   # the plain call's own check still holds
        f(1.5)
    capsys.readouterr()
    assert grad(f)(1.5) == 2.     # run as Python: the function is not run again to compare
    assert capsys.readouterr().out == "called\n"


iterator = iter(range(10))


def next_in_fori(x):
    return lax.fori_loop(0, 10, lambda i, v: v + next(iterator), x)


def iterator_operand(x):
    return lax.cond(True, lambda it: next(it) + x, lambda it: next(it) - x, iter(range(3)))


def iterator_xs(x):
    it = iter(range(16))
    return lax.scan(lambda c, a: (c + a, a), x, it)


def test_iterators():
    """The seeds' iterator examples: JAX gives 0 for the first silently; strop says why, at
    the user's line, or runs Python's own meaning as a plain call."""
    global iterator
    for t in (jit, grad):
        with pytest.raises(PurityError, match="next") as e:
            t(next_in_fori)(0.)
        assert e.value.location.lineno == next_in_fori.__code__.co_firstlineno + 1
        with pytest.raises(PurityError, match="next"):
            t(iterator_operand)(1.)
        with pytest.raises(TypeError, match="range_iterator") as e:
            t(iterator_xs)(0.)
        assert e.value.location.lineno == iterator_xs.__code__.co_firstlineno + 2
    iterator = iter(range(10))
    assert next_in_fori(0) == 45                      # Python's own meaning, as a plain call
    with pytest.raises(LaxTypeError, match="no leading axis"):
        lax.scan(lambda c, a: (c + a, a), 0, iter(range(16)))


def test_plain_call_errors_name_the_line():
    with pytest.raises(LaxTypeError, match="equal types") as e:
        lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, np.int32(0))
    assert e.value.location.filename == __file__
    with pytest.raises(LaxValueError, match="Empty branch sequence"):
        lax.switch(0, [])
    with pytest.raises(LaxTypeError, match="Pred must be a scalar"):
        lax.cond(np.array([True, False]), lambda: 1, lambda: 2)
    with pytest.raises(LaxTypeError, match="slice_sizes must be less than or equal"):
        lax.dynamic_slice(np.ones((3, 3)), (1, 1), (4, 2))
    with pytest.raises(LaxValueError, match="Length of slice indices"):
        lax.dynamic_slice(np.ones((3, 3)), (1,), (2, 2))


# --- what runs can be read ------------------------------------------------------------------

def test_source_is_the_python_it_means():
    text = strop.source(jit(while_lax))
    assert "while _c" in text and "# line" in text
    assert f"# line {while_lax.__code__.co_firstlineno + 4}:" in text   # the body's line
    assert "if " in strop.source(jit(cond_lax)) and "for i in range(" in strop.source(
        jit(scan_lax))


XS_GLOBAL = (np.ones(3), np.ones(3))


def global_pytree_xs(x):
    return lax.scan(lambda c, v: (c + v[0] * v[1], c), x, XS_GLOBAL)


def test_global_pytree_is_not_taken_for_an_array():
    with pytest.raises(LaxTypeError, match="pass `XS_GLOBAL` as an argument"):
        jit(global_pytree_xs)(0.)
    assert global_pytree_xs(0.)[0] == 3.
