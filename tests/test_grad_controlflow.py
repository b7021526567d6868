"""Control flow under every derivative transform, against central differences (float64):
``if`` without ``else`` in loops whose branches overwrite values the adjoint reads, loops left
by ``break``/``continue``/``return``, and negative constants in precedence-sensitive places
(issue 13).  Each function is checked by grad, jit(grad) (compiled, with no fallback), jvp,
jacfwd, vmap(grad) against a loop of grads, and hessian against differences of grad."""
import ast
import functools
import random
import warnings

import gast
import numpy as np
import pytest

import strop
from helpers import numeric_vjp, x64_fixture
from strop import grad, hessian, jacfwd, jit, jvp, vmap
from strop.transformer.unparse import unparse

x64 = pytest.fixture(autouse=True)(x64_fixture)


# --- negative constants: (-1) ** n is not -1 ** n -------------------------------------------

def taylor_sin(x):
    s, term = 0.0, x
    for n in range(6):
        s = s + (-1) ** n * term
        term = term * x * x / ((2 * n + 2) * (2 * n + 3))
    return s


def negative_bases(x):
    return (-0.24) ** 2 * x + (-x) ** 3 + (-2.0) ** 3 * x ** 2 - x ** -2 + (-1.5) ** 2 ** 1


def negative_pow_int(x, n):
    return (-1) ** n * x + (-2) ** n * x ** 2


# --- an if without else in a loop, overwriting what the adjoint reads -------------------------

def schedule(x):   # the step-size schedule: the test is on the loop index
    c = 1.5
    for n in range(3):
        if n > 0:
            c = c * 2.0
        x = x * c
    return x


def schedule_active(x):   # the same, c depending on x
    c = 0.5 * x
    for n in range(3):
        if n > 0:
            c = c * x
        x = x * c
    return x


def untaken_then_overwritten(x):   # c overwritten inside the if and after it
    c = 0.5
    for n in range(3):
        if x > 10.0:
            c = c * 2.0
        x = x * c
        c = c + 0.25
    return x


def elif_chain(x):
    c = 1.25
    for n in range(4):
        if n == 1:
            c = c * 2.0
        elif n == 2:
            c = c - 0.5
        elif x > 0.0:
            c = c + 0.1
        x = np.sin(x) * c
    return x


def nested_ifs(x):
    c, d = 1.5, 0.5
    for n in range(4):
        if n > 0:
            if n < 3:
                c = c * 1.5
                d = d + c
            if x < 100.0:
                d = d * 0.5
        x = x * c + d * x
    return x


def in_for_in_while(x):
    k = 0
    c = 1.1
    while k < 2:
        for n in range(3):
            if n != k:
                c = c * 1.5
            x = x * c
        c = 1.0 / c + 1.0
        k = k + 1
    return x


def first_defined_in_loop(x):
    s = 0.0
    for n in range(3):
        c = x * 0.5
        if n > 0:
            c = c * x
            e = c + 1.0
        s = s + np.sin(c) * x
    return s


def while_index(x):
    k = 0
    c = 0.75
    while k < 4:
        if k % 2 == 1:
            c = c * x
        x = x * c + 0.5
        k = k + 1
    return x


# --- loops left early, then a return under an if -------------------------------------------

def break_then_return(x):
    for i in range(3):
        x = x * 2.0
        if i == 0:
            break
    if x > 100.0:
        return x
    return x * 3.0


def break_while_then_return(x):
    k = 0
    while k < 5:
        x = np.sin(x) + x
        k = k + 1
        if x > 1.0:
            break
    if x < -100.0:
        return -x
    return x * x


def continue_then_return(x):
    for i in range(4):
        if i % 2 == 0:
            continue
        x = x * 1.5
    if x > 100.0:
        return x * 0.0
    return x * x


def return_in_loop(x):
    for i in range(5):
        x = x * 1.5
        if x > 2.0:
            return x * 3.0
    if x < -100.0:
        return x
    return x * x


def nested_break(x):
    s = 0.0
    for i in range(3):
        for j in range(4):
            s = s + x * (j + 1)
            if j == i:
                break
        x = np.sin(x) + s * 0.1
    if s > 1000.0:
        return s
    return x * s


def overwritten_in_branch(x):   # hessian: c's tangent tape popped where its tangent is dead
    c = 1.5
    d = x * 0.5
    for i in range(2):
        x = x * c
    c = x - d
    if c < 10.0:
        c = np.sin(d) * d
    return x * 0.5 + d * d


FUNCTIONS = [taylor_sin, negative_bases, schedule, schedule_active, untaken_then_overwritten,
             elif_chain, nested_ifs, in_for_in_while, first_defined_in_loop, while_index,
             break_then_return, break_while_then_return, continue_then_return, return_in_loop,
             nested_break, overwritten_in_branch]
POINTS = [0.7, 1.3, -0.4, 2.5]


def fd(f, x, eps=1e-6):
    return numeric_vjp(f, [x], 0, 1.0, eps=eps)


def close(got, want, what):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-5, atol=1e-6,
                               err_msg=what)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_grad_and_jvp(f):
    for x in POINTS:
        want = fd(f, x)
        close(grad(f)(x), want, f"grad at {x}")
        close(jvp(f, (x,), (1.0,))[1], want, f"jvp at {x}")
        close(jacfwd(f)(x), want, f"jacfwd at {x}")


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_jit_grad_compiles(f):
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        g = jit(grad(f))
        for x in POINTS:
            close(g(x), fd(f, x), f"jit(grad) at {x}")


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_vmap_grad(f):
    xs = np.array(POINTS)
    close(vmap(grad(f))(xs), np.array([grad(f)(x) for x in POINTS]), "vmap(grad)")


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_hessian(f):
    for x in POINTS:
        want = (grad(f)(x + 1e-5) - grad(f)(x - 1e-5)) / 2e-5
        np.testing.assert_allclose(hessian(f)(x), want, rtol=1e-4, atol=1e-5,
                                   err_msg=f"hessian at {x}")


def test_negative_power_of_int_argument():
    for n in range(4):
        f = lambda x: negative_pow_int(x, n)   # noqa: E731
        close(grad(negative_pow_int)(1.25, n), fd(f, 1.25), f"grad, n={n}")
        close(jvp(functools.partial(negative_pow_int, n=n), (1.25,), (1.0,))[1], fd(f, 1.25),
              f"jvp, n={n}")
        close(jit(negative_pow_int, backend="python")(1.25, n), f(1.25), f"jit python, n={n}")
        close(vmap(negative_pow_int, in_axes=(0, None))(np.array([1.25, 2.0]), n),
              [f(1.25), f(2.0)], f"vmap, n={n}")


def test_source_reads_well():
    """The condition of an else-less if whose branch a pop restores is made again in the
    backward iteration (a comparison of the loop index: cheaper than a tape); a negative base
    keeps its parentheses."""
    src = strop.source(grad(schedule))
    assert src.count("_t1 = n > 0") == 2 and "c = pop(_tape_c)" in src and "(-1)" not in src
    assert "(-1) ** n" in strop.source(grad(taylor_sin))


def rows_read(w, xs, picks):
    h = np.zeros(w.shape[0])
    for t in range(1, xs.shape[0]):
        x = xs[t]                  # a view of an argument: made again, not taped
        prev = xs[t - 1, :]
        chosen = xs[picks]         # fancy indexing makes an array: taped
        h = np.tanh(w @ h + x * prev) + chosen[0] * 0.1
    return np.sum(h ** 2)


def test_parts_of_arguments_picked_by_the_loop_index_are_made_again():
    rng = np.random.default_rng(0)
    w, xs, picks = rng.normal(size=(3, 3)) / 2, rng.normal(size=(6, 3)), np.array([2, 0])
    g = grad(rows_read, argnums=(0, 1))
    src = strop.source(g)
    assert "_tape_x" not in src and "_tape_prev" not in src and "_tape_chosen" in src, src
    for compiled in (False, True):
        got = (jit(g) if compiled else g)(w, xs, picks)
        for i, a in enumerate(got):
            np.testing.assert_allclose(a, numeric_vjp(rows_read, [w, xs, picks], i, 1.0),
                                       rtol=1e-6, atol=1e-9)


def transposed_fixed(w, xs):
    a = w * 0.5
    h = np.zeros(w.shape[0])
    for t in range(xs.shape[0]):
        at = a.T                   # the transpose of a value bound once: made again
        h = np.tanh(at @ h + xs[t])
    return np.sum(h ** 2)


def test_the_transpose_of_a_fixed_array_is_made_again_not_taped():
    rng = np.random.default_rng(1)
    w, xs = rng.normal(size=(3, 3)), rng.normal(size=(5, 3))
    g = grad(transposed_fixed, argnums=(0, 1))
    assert "_tape_at" not in strop.source(g), strop.source(g)
    for compiled in (False, True):
        got = (jit(g) if compiled else g)(w, xs)
        for i, a in enumerate(got):
            np.testing.assert_allclose(a, numeric_vjp(transposed_fixed, [w, xs], i, 1.0),
                                       rtol=1e-6, atol=1e-9)


def _random_expr(rng, depth):
    """A random expression tree over x, holding number constants of either sign (as the
    normalizer folds ``-4`` into one Constant) in every operand position."""
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.3:
            return gast.Name(id="x", ctx=gast.Load(), annotation=None, type_comment=None)
        value = rng.choice([-2, -1, 3, -0.5, 1.5, -0.0, -2.25, 2, -1e309, complex(0, -2), complex(-1, 2)])
        return gast.Constant(value=value, kind=None)
    kind = rng.random()
    if kind < 0.6:
        op = rng.choice([gast.Pow, gast.Pow, gast.Mult, gast.Sub, gast.Add, gast.Div])
        return gast.BinOp(left=_random_expr(rng, depth - 1), op=op(),
                          right=_random_expr(rng, depth - 1))
    if kind < 0.8:
        return gast.UnaryOp(op=rng.choice([gast.USub, gast.UAdd])(),
                            operand=_random_expr(rng, depth - 1))
    attr = gast.Attribute(value=_random_expr(rng, depth - 1), attr="conjugate",
                          ctx=gast.Load())
    return gast.Call(func=attr, args=[], keywords=[])


def _value(code_or_tree, x):
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return complex(eval(code_or_tree, {}, {"x": x}))
    except (ArithmeticError, ValueError, TypeError, OverflowError) as e:
        return type(e).__name__


def test_unparse_keeps_the_meaning_of_signed_constants():
    """unparse -> parse gives the same value as the tree itself (compiled as an AST, where a
    Constant's sign binds tightest), for random trees: (-1) ** n, (-2).conjugate(), -x ** 2."""
    rng = random.Random(13)
    for _ in range(2000):
        tree = _random_expr(rng, 4)
        text = unparse(tree)
        direct = compile(ast.fix_missing_locations(ast.Expression(gast.gast_to_ast(tree))),
                         "<tree>", "eval")
        for x in (0.75, -1.5):
            a, b = _value(direct, x), _value(text, x)
            assert repr(a) == repr(b), (text, x, a, b)   # the same operations: the same bits


def int_then_float(x):   # c's tape is typed by its first value: an int would truncate
    c = 1
    k = 0
    for i in range(4):
        c = c * x
        k = k + 1
        x = x + 0.1 * k
    return c * x


def test_tape_arrays_keep_the_loop_type():
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        for x in POINTS:
            close(jit(grad(int_then_float))(x), fd(int_then_float, x), f"jit(grad) at {x}")
            close(jit(grad(first_defined_in_loop))(x), fd(first_defined_in_loop, x),
                  f"jit(grad) at {x}")


def power_from_int_argument(x, n):
    s = n                     # an int argument, a float after the first trip
    for _ in range(3):
        s = s * x
    return s


def test_tape_of_an_int_argument_that_becomes_a_float():
    # its array tape was typed by the int before the loop: jit(grad) truncated every value
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        g = jit(grad(power_from_int_argument))
        for x, n in [(0.7, 2), (1.3, -3)]:
            want = fd(lambda v: power_from_int_argument(v, n), x)
            close(g(x, n), want, f"jit(grad) at {x}, {n}")
            close(g(x, float(n)), want, f"jit(grad) at {x}, float {n}")
    assert g.last_backend == "cpu"
