"""Elementwise chains over three or more names run as one loop in compiled code
(codegen/loops.py, runtime/numba/loops.py): against the expression NumPy evaluates, for every
kind of operand the loop must leave to the array expression."""
import functools
import textwrap
import warnings

import numpy as np
import pytest

import strop
from strop import config, grad, jit, runtime
from strop.errors import JitFallbackWarning
from helpers import numeric_vjp


@pytest.fixture(autouse=True)
def x64():
    with config.override(enable_x64=True):
        yield


@functools.lru_cache(maxsize=None)
def compiled_chain(text):
    from numba import njit
    from strop.runtime import numba as _implementations  # noqa: F401
    return njit(error_model="numpy")(lambda a, b, c: runtime.elementwise(text, a, b, c))


rng = np.random.default_rng(0)
F64 = rng.normal(size=300)
OPERANDS = {
    "one shape": (F64, F64[::-1].copy(), F64 * 2),
    "two dims": (F64[:200].reshape(10, 20), np.ones((10, 20)), F64[100:].reshape(10, 20)),
    "views": (F64[::3], F64[1::3], F64[2::3]),                    # strided: not contiguous
    "broadcast": (F64.reshape(3, 100), F64[:100], F64[:3].reshape(3, 1)),
    "small": (F64[:5], F64[5:10], F64[10:15]),
    "a number among": (F64, 2.5, F64[::-1].copy()),
    "float32": (F64.astype(np.float32), F64.astype(np.float32), F64.astype(np.float32)),
    "mixed dtypes": (F64.astype(np.float32), F64, F64.astype(np.float32)),
    "integers": (np.arange(300, dtype=np.int8), np.arange(300, dtype=np.int8),
                 np.ones(300, np.int8)),
    "zeros": (np.zeros(300), np.zeros(300), np.ones(300)),
}
CHAINS = ["_0 - weak(2, _1) * _1 + _2", "(_0 + _1) / _2", "-_0 * _1 ** 2 - _2",
          "(_0 < _1) & (_2 >= 0)", "_0 // _1 % _2 + _0",
          "np.sqrt(np.abs(_0)) + np.exp(_1) * _2", "np.maximum(_0, _1) - power_int(_2, 3)"]


@functools.lru_cache(maxsize=None)
def numba_expression(text):
    """The chain as Numba's own array expression: what compiled code ran before."""
    from numba import njit
    from strop.runtime import numba as _implementations  # noqa: F401
    space = {"weak": runtime.weak, "power_int": runtime.power_int, "np": np}
    exec(f"def chain(_0, _1, _2):\n    return {text}\n", space)
    return njit(error_model="numpy")(space["chain"])


# every kind of operand with the first chain; the other chains on a few (compiles are slow)
CASES = [(CHAINS[0], k) for k in sorted(OPERANDS)] + [
    (c, k) for c in CHAINS[1:] for k in ("one shape", "zeros", "integers", "views")]


@pytest.mark.parametrize("chain, operands", CASES)
def test_a_chain_compiled_is_the_array_expression_it_replaces(chain, operands):
    a, b, c = OPERANDS[operands]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = numba_expression(chain)(a, b, c)
        except Exception:          # (& of floats): refused the same way
            with pytest.raises(Exception):
                compiled_chain(chain)(a, b, c)
            return
        got = compiled_chain(chain)(a, b, c)
        numpy = runtime.elementwise(chain, a, b, c)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if numpy.dtype == want.dtype:  # (Numba types some integer arithmetic otherwise)
        # (power_int multiplies where NumPy calls pow, and NumPy's exp is its own: an ulp of a
        # term apart, which a sum that cancels makes a large relative difference)
        scale = np.max(np.abs(numpy)) if want.dtype.kind == "f" else 0.0
        np.testing.assert_allclose(got, numpy, rtol=1e-6 if want.dtype == np.float32 else 1e-14,
                                   atol=1e-14 * scale)


def chained(u, alpha, beta):          # three views of one array, a number, and a second chain
    lap = u[2:] - 2 * u[1:-1] + u[:-2]
    w = u[1:-1] + alpha * lap - beta * u[1:-1] * lap
    return np.sum(w * w) + np.sum(u[:-2] * u[1:-1] * u[2:])


def test_chains_in_a_function_compile_to_loops_with_its_results():
    u = np.sin(np.linspace(0.0, 3.0, 500))
    jf = jit(chained)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        got = jf(u, 0.2, 0.1)
    assert got == pytest.approx(chained(u, 0.2, 0.1), rel=1e-13)
    text = strop.source(jf)
    assert "lap = elementwise('_0 - weak(2, _1) * _1 + _2', " in text, text
    assert "elementwise('_0 * _1 * _2', " in text, text
    g = grad(chained, argnums=(0, 1))
    jg = jit(g)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        got = jg(u, 0.2, 0.1)
    for x, y in zip(got, g(u, 0.2, 0.1)):
        np.testing.assert_allclose(x, y, rtol=1e-12)
    np.testing.assert_allclose(got[0], numeric_vjp(chained, [u, 0.2, 0.1], 0, 1.0), rtol=1e-6,
                               atol=1e-7)


def rewritten(src):
    import gast
    from strop.codegen.loops import loop_chains
    from strop.transformer.unparse import unparse
    node = gast.parse(textwrap.dedent(src)).body[0]
    loop_chains(node, {"weak": runtime.weak, "f": np.sum, "sin": np.sin, "np": np})
    return unparse(node)


def test_only_chains_over_three_names_become_loops():
    text = rewritten("""
        def g(a, b, c, d):
            x = a * b + c * a
            y = a * 2.0 + b
            z = f(a) + b + c
            s = sin(a) + b * np.exp(c)
            w = weak(2, a) * b - c
            u = a * weak(d, a) + c
            v = a @ b + c
            return x, y, z, w, v, u
        """)
    assert "x = elementwise('_0 * _1 + _2 * _0', a, b, c)" in text
    assert "y = a * 2.0 + b" in text              # two names: Numba's loop vectorizes
    assert "z = f(a) + b + c" in text             # a call of no ufunc: not a chain
    assert "s = elementwise('np.sin(_0) + _1 * np.exp(_2)', a, b, c)" in text   # ufuncs: steps
    assert "w = elementwise('weak(2, _0) * _1 - _2', a, b, c)" in text
    assert "u = elementwise('_0 * weak(_1, _0) + _2', a, d, c)" in text  # a number's name
    assert "v = a @ b + c" in text


def ufuncs_among_operators(x, y):
    z = np.sqrt(x) + 1.0
    w = np.abs(z * y) - np.maximum(x, -y) * np.tanh(y)
    return z, w, x ** 3, y ** -3


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ufunc_calls_and_int_powers_are_steps_of_chains(dtype):
    """np.sqrt(x) + 1.0 was two statements, two arrays and two passes (15x njit's one fused
    loop), and x ** 3 a float pow per element (60x): one chain each, multiplying for the
    power, with the python backend's values and dtypes."""
    x = np.linspace(0.5, 2.0, 300).astype(dtype)
    y = np.cos(x)
    f = jit(ufuncs_among_operators)
    got, want = f(x, y), jit(ufuncs_among_operators, backend="python")(x, y)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == dtype
        np.testing.assert_allclose(g, w, rtol=1e-6 if dtype == np.float32 else 1e-13)
    text = strop.source(f)
    assert "z = np.sqrt(x) + weak(1.0, np.sqrt(x))" not in text   # (typed, not computed)
    assert "np.sqrt(x)" in text and "_t1 = np.sqrt(x)" not in text
    # (tanh: NumPy's SIMD loop for large arrays, runtime/via_numpy.py; not a step)
    assert "elementwise_into('np.absolute(_3 * _1) - np.maximum(_2, -_1) * _0', _t" in text
    assert "power_int(x, 3)" in text and "power_int(y, -3)" in text


def test_a_fused_ufunc_still_warns_as_numpy_does():
    def f(x):
        return np.log(x) + 1.0
    x = np.array([1.0, -1.0, 2.0])
    with pytest.warns(RuntimeWarning, match="invalid value"):
        got = jit(f)(x)
    assert np.isnan(got[1]) and got[0] == 1.0


def powers_of_negative_numbers(a, b, c):     # (-0.3) ** 2 is a folded constant -0.3 squared
    return a * (b * (-0.3) ** 2) + c * (-1) ** 3


def test_a_chain_keeps_the_parentheses_of_a_negative_number():
    # found by the fuzzer (seed 9202, program 3): the chain's text read -0.3 ** 2
    args = (np.arange(100.0), np.linspace(0.0, 1.0, 100), np.ones(100))
    got = jit(powers_of_negative_numbers)(*args)
    np.testing.assert_allclose(got, powers_of_negative_numbers(*args), rtol=1e-15)
    # the text of a chain holding a negative constant
    import gast
    from strop.codegen.loops import loop_chains
    from strop.transformer.unparse import unparse
    node = gast.parse("def g(a, d, c):\n    x = a * (d * 0.3 ** 2) + c\n").body[0]
    for n in gast.walk(node):
        if isinstance(n, gast.Constant) and n.value == 0.3:
            n.value = -0.3                 # as the normalizer folds -0.3
    loop_chains(node, {})
    assert "x = elementwise('_0 * (_1 * (-0.3) ** 2) + _2', a, d, c)" in unparse(node)


def stepper(u0, alpha, steps):      # a chain in a loop: the adjoint reads its parts' shapes
    u = u0.copy()
    for _ in range(steps):
        lap = u[2:] - 2 * u[1:-1] + u[:-2]
        u[1:-1] = u[1:-1] + alpha * lap
    return np.sum(u ** 2)


def broadcasting_steps(x, b, c):    # the chain's parts broadcast: their shapes are not x's
    s = 0.0
    for k in range(3):
        t = x[:, None] * b + c * k - x[:, None]
        s = s + np.sum(t * t)
    return s


def rebound_between(x, y):          # y rebound after the chain, before the loop's tapes
    s = 0.0
    for k in range(3):
        t = x * y + x * 2.0 - y
        y = y[:-1]
        x = x[1:]
        s = s + np.sum(t * t)
    return s


@pytest.mark.parametrize("fn, args", [
    (stepper, (np.sin(np.linspace(0.0, 3.0, 200)), 0.2, 5)),
    (broadcasting_steps, (np.linspace(0.0, 1.0, 4), np.linspace(1.0, 2.0, 6), 0.5)),
    (rebound_between, (np.linspace(0.0, 1.0, 8), np.linspace(1.0, 3.0, 8))),
])
def test_parts_of_a_chain_read_for_their_shape_are_fused(fn, args):
    """A temporary taped for its shape only (unbroadcast's second argument) no longer keeps a
    chain from fusing: the tape keeps chain_like(...) of the chain's operands instead."""
    static = (2,) if fn is stepper else ()
    g = grad(fn, argnums=(0, 1))
    jg = jit(g, static_argnums=static)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        got = jg(*args)
    want = g(*args)
    for x, y in zip(got, want):
        assert np.shape(x) == np.shape(y)
        np.testing.assert_allclose(x, y, rtol=1e-12)
    np.testing.assert_allclose(got[0], numeric_vjp(fn, list(args), 0, 1.0), rtol=1e-6, atol=1e-7)
    text = strop.source(jg)
    if fn is stepper:   # its parts are of one shape (transformer/shapes.py): not taped
        assert "chain_like(" not in text and "_tape_t2" not in text, text
        assert "lap = elementwise('_0 - weak(2, _1) * _1 + _2', " in text, text
    if fn is rebound_between:      # x and y are rebound before the tapes: what reads them
        assert "_t1 = x * y\n" in text, text          # is not fused, the rest is
        assert "chain_like('_0 + _1', _t1, _t2)" in text, text   # (in the trip's record)


@functools.lru_cache(maxsize=None)
def compiled_sum(text):
    from numba import njit
    from strop.runtime import numba as _implementations  # noqa: F401
    return njit(error_model="numpy")(
        lambda x, a, b: runtime.unbroadcast_chain(text, x, a, b))


SUMMED = {   # (x, a, b): x the number or array summed to
    "vector": (0.5, F64, F64[::-1].copy()),
    "sizes 0-17": [(0.5, F64[:n], F64[n:2 * n]) for n in (0, 1, 7, 8, 9, 17)],
    "matrix": (1.0, F64[:200].reshape(10, 20), F64[100:].reshape(10, 20)),
    "strided": (1.0, F64[::3], F64[1::3]),
    "float32": (np.float32(1.0), F64.astype(np.float32), F64[::-1].astype(np.float32)),
    "broadcast": (1.0, F64.reshape(3, 100), F64[:100]),             # the expression, summed
    "to a row": (F64[:100].reshape(1, 100), F64.reshape(3, 100), F64[:100]),   # an array x
    "integer x": (3, F64, F64),
}


@pytest.mark.parametrize("chain", ["_0 * _1", "weak(2, -_0) * _1 - _0"])
@pytest.mark.parametrize("case", sorted(SUMMED))
def test_a_chain_summed_as_it_is_computed_is_its_unbroadcast(chain, case):
    for x, a, b in SUMMED[case] if isinstance(SUMMED[case], list) else [SUMMED[case]]:
        got = compiled_sum(chain)(x, a, b)
        want = runtime.unbroadcast(runtime.elementwise(chain, a, b), x)
        assert np.shape(got) == np.shape(want)     # (a raw njit call boxes a float32 number
        if np.ndim(got):                           # as a Python float)
            assert got.dtype == want.dtype
        tol = 1e-5 if np.result_type(want) == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(np.size(a)))


@functools.lru_cache(maxsize=None)
def compiled_add(text):
    from numba import njit
    from strop.runtime import numba as _implementations  # noqa: F401
    return njit(error_model="numpy")(
        lambda acc, x, idx, a, b: runtime.add_at_index_chain(acc, text, x, idx, a, b))


ADDED = {   # (acc's shape, idx, a, b): the chain added into acc[idx]
    "slice": ((10,), slice(1, -1), F64[:8], F64[8:16]),
    "row": ((4, 6), 2, F64[:6], F64[6:12]),
    "rows and a slice": ((4, 6), (1, slice(2, None)), F64[:4], F64[4:8]),
    "strided part": ((12,), slice(None, None, 3), F64[:4], F64[4:8]),
    "broadcast": ((4, 6), slice(None), F64[:6], F64[:24].reshape(4, 6)),  # the expression
    "float32 into float64": ((10,), slice(1, -1), F64[:8].astype(np.float32),
                             F64[8:16].astype(np.float32)),
}


@pytest.mark.parametrize("chain", ["_0 * _1", "weak(2, -_0) * -_0 + _1"])
@pytest.mark.parametrize("case", sorted(ADDED))
def test_a_chain_added_into_part_of_a_sum_is_its_add_at_index(chain, case):
    shape, idx, a, b = ADDED[case]
    acc, x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape), np.zeros(shape)
    want = runtime.add_at_index_inplace(acc.copy(), runtime.elementwise(chain, a, b), x, idx)
    got = compiled_add(chain)(acc.copy(), x, idx, a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_chain_added_at_an_index_out_of_range_raises():
    acc, a = np.zeros((4, 3)), F64[:3]
    with pytest.raises(IndexError):
        compiled_add("_0 * _1")(acc, np.zeros((4, 3)), 4, a, a)


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (4,)), ((3, 1), (1, 4)),
                                    ((2, 3), ())])
def test_chain_like_compiled_has_the_chains_shape_and_dtype(shapes):
    """Its shape is the operands' common one where they share it (np.broadcast_shapes took
    ~90 ns compiled, per trip of a loop that tapes it), else theirs broadcast."""
    from numba import njit
    from strop.runtime import numba as _implementations  # noqa: F401
    a, b = (np.ones(s, np.float32) for s in shapes)
    like = njit(lambda a, b: runtime.chain_like("_0 * _1 + _0", a, b))(a, b)
    want = runtime.elementwise("_0 * _1 + _0", a, b)
    assert like.shape == want.shape and like.dtype == want.dtype


# --- np.roll as a step of a chain: the loop reads the array at shifted indices ----------------

ROLLED = {   # operand, rolls (shift, axis) read by one chain
    "1-D": (F64, [(1, 0), (-1, 0), (7, -1)]),
    "2-D": (F64[:288].reshape(12, 24), [(1, 0), (-1, 0), (1, 1), (-1, 1)]),
    "shifts past the length": (F64[:288].reshape(12, 24), [(25, 1), (-13, 0), (24, 1), (0, 0)]),
    "3-D, last axis": (F64[:288].reshape(3, 4, 24), [(2, 2), (-3, -1), (1, 0)]),
    "a view": (F64[::2][:144].reshape(12, 12), [(1, 0), (-1, 1)]),
    "small": (F64[:12].reshape(3, 4), [(1, 0), (-1, 1)]),   # (under LOOP_SIZE: NumPy's)
    "float32": (F64[:288].reshape(12, 24).astype(np.float32), [(1, 1), (-1, 0)]),
    "1-D, no axis": (F64, [(1, None), (-3, None), (2, 0)]),
    "2-D, no axis": (F64[:288].reshape(12, 24), [(1, None), (5, 0)]),   # (NumPy's flat roll)
}


@functools.lru_cache(maxsize=None)
def compiled_rolls(text, into=False):
    from numba import njit
    from strop.runtime import numba as _implementations  # noqa: F401
    fn = runtime.elementwise_into if into else runtime.elementwise
    return njit(error_model="numpy")(lambda a, b: fn(text, a, b))


@pytest.mark.parametrize("into", [False, True])
@pytest.mark.parametrize("case", sorted(ROLLED))
def test_a_chain_that_rolls_its_operands_is_the_expression_numpy_evaluates(case, into):
    a, rolls = ROLLED[case]
    b = np.cos(a) + 2
    text = " + ".join(f"np.roll(_{k % 2}, {s}, {ax})" for k, (s, ax) in enumerate(rolls)) + \
        " - weak(4, _0) * _1"
    want = runtime.elementwise(text, a, b)
    # into: the result goes over _0, which the chain also reads shifted: a new array instead
    got = compiled_rolls(text, into)(a.copy() if into else a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6 if a.dtype == np.float32 else 1e-15)


def test_a_roll_by_a_computed_shift_or_of_an_expression_stays_numpys():
    text = rewritten("""
        def g(a, b, c, s):
            x = np.roll(a, 1, 0) + b
            y = np.roll(a, s, 0) + b * c
            z = np.roll(a, -1, axis=1) * b
            w = np.roll(a, 1) + b * c
            return x, y, z, w
        """)
    assert "x = elementwise('np.roll(_0, 1, 0) + _1', a, b)" in text   # a roll: a loop
    assert "y = np.roll(a, s, 0) + b * c" in text     # the shift unknown to the loop
    assert "z = elementwise('np.roll(_0, -1, axis=1) * _1', a, b)" in text
    assert "w = elementwise('np.roll(_0, 1) + _1 * _2', a, b, c)" in text   # (a vector's)


def periodic_stencil(p, U0, V0):     # Gray–Scott's update, 2-D, periodic by np.roll
    F, k = p[0], p[1]
    U, V = U0, V0
    for _ in range(3):
        lapU = (np.roll(U, 1, 0) + np.roll(U, -1, 0) + np.roll(U, 1, axis=1)
                + np.roll(U, -1, axis=1) - 4 * U)
        lapV = np.roll(V, 2, 0) + np.roll(V, -1, 1) - 2 * V
        uvv = U * V * V
        U = U + 0.2 * lapU - uvv + F * (1 - U)
        V = V + 0.1 * lapV + uvv - (F + k) * V
    return np.sum(V ** 2) + np.sum(U * np.roll(V, 3, 0))


def test_rolls_fuse_into_the_loops_of_a_stencil_and_of_its_gradient():
    rng = np.random.default_rng(1)
    p, U, V = np.array([0.04, 0.06]), rng.uniform(0.5, 1, (16, 12)), rng.uniform(0, 0.5, (16, 12))
    jf, jg = jit(periodic_stencil), jit(grad(periodic_stencil))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jf(p, U, V) == pytest.approx(periodic_stencil(p, U, V), rel=1e-13)
        got = jg(p, U, V)
    np.testing.assert_allclose(got, grad(periodic_stencil)(p, U, V), rtol=1e-12)
    np.testing.assert_allclose(got, numeric_vjp(periodic_stencil, [p, U, V], 0, 1.0),
                               rtol=1e-6)
    for made in (jf, jg):   # every roll in a step is read inside a chain's loop, none copied
        text = strop.source(made)   # (the last line's is taped, and its cotangent is a roll)
        assert not [line for line in text.splitlines()
                    if "= np.roll(" in line and line.startswith(" " * 8) and "#" not in line], text
    # the cotangents of a step's rolls are added into their array's owned one in one loop
    assert "bU = elementwise_into('_0 + weak(4, -_1) * -_1 + np.roll(_2, 1, 1) + np.roll(_3, " \
           "-1, 1) + np.roll(_4, 1, 0) + np.roll(_5, -1, 0)'," in strop.source(jg)


def merged(src):
    import gast
    from strop.codegen.fuse import fuse
    from strop.transformer.unparse import unparse
    node = gast.parse(textwrap.dedent(src)).body[0]
    fuse(node, {"plus_inplace": runtime.plus_inplace, "np": np, "f": np.sum})
    return unparse(node)


def test_terms_added_into_one_sum_one_after_another_are_added_by_one_statement():
    text = merged("""
        def g(acc, a, b, c, d, s):
            acc = plus_inplace(acc, np.roll(a, 1, 0))
            b2 = b
            acc = acc + np.roll(b2, -1, 0) * c
            acc = plus_inplace(acc, d)
            s = s + a
            t = f(s)
            s = s + b
            b = b * 2
            s = s + c
            a2 = a * 2
            s = s + d
            return acc, s, t, a2
        """)
    # in place, as the first addition was, each term added in its order (the same sum)
    assert "acc = plus_inplace(acc, np.roll(a, 1, 0), np.roll(b2, -1, 0) * c, d)" in text
    assert "t = f(s)" in text and "s = s + b" in text   # (s read between: not moved past)
    assert "s = s + b\n" in text   # (b rebound between: its addition not moved past it)
    assert "s = s + c + d" in text   # (past a statement that touches neither)
    text = merged("""
        def g(acc, a, b):
            acc = acc + a
            acc = plus_inplace(acc, b)
            return acc
        """)
    # acc's array before the first addition may be another name's: a new one
    assert "acc = acc + a + b" in text


def test_merged_additions_compiled_give_the_sum_to_the_last_bit():
    def accumulate(acc, a, b, c):
        acc = acc + np.roll(a, 1, 0)
        acc = acc + b * c
        acc = acc + np.roll(c, -2, 1)
        return acc
    rng = np.random.default_rng(2)
    acc, a, b, c = (rng.normal(size=(9, 11)) for _ in range(4))
    want = jit(accumulate, backend="python")(acc, a, b, c)
    np.testing.assert_array_equal(jit(accumulate)(acc, a, b, c), want)
