"""The shapes and dtypes known when code is made (transformer/shapes.py), checked against the
values the normalized code computes: every name given a shape holds a value of that shape
(each symbolic dimension evaluated on the arguments) and, where a dtype is known, of that
dtype, at every binding; on hand-written functions and on the fuzzer's programs."""
import numpy as np
import pytest

from strop.errors import TransformError
from strop.testing import fuzz
from strop.testing.generate import generate
from strop.testing.oracles import make_case
from strop.transformed import normalized
from strop.transformer import shapes
from helpers import instrumented


def _kind(v):
    if type(v) is int:
        return "int"
    if isinstance(v, np.ndarray):
        return f"array{v.ndim}"
    return "scalar"


def run_checked(f, args):
    """Run ``f``'s normalized code on ``args`` checking every known shape and dtype; the names
    known, and the names checked."""
    try:
        fn = normalized(f)
    except TransformError:   # a program strop refuses (aliasing): nothing to check
        return {}, []
    params = [a.id for a in fn.node.args.args]
    values = dict(zip(params, args))
    kinds = {p: _kind(v) for p, v in values.items()}
    dtypes = {p: v.dtype.str for p, v in values.items() if isinstance(v, (np.ndarray, np.generic))}
    known = shapes.known(fn.node.body, kinds, dtypes, fn.callee)
    seen = []

    def length(d):
        if d is None:
            return None
        if d[0] == "lit":
            return d[1]
        return max(0, np.shape(values[d[0]])[d[1]] - d[2])

    def shape_check(name, value):
        shape, dtype = known[name]
        got = np.shape(value)
        assert len(got) == len(shape), f"{name}: shape {got}, {shape} inferred"
        for g, d in zip(got, shape):
            assert d is None or g == length(d), f"{name}: shape {got}, {shape} inferred"
        if isinstance(dtype, np.dtype):
            assert np.asarray(value).dtype == dtype and type(value) not in (int, float), \
                f"{name}: {type(value).__name__} {np.asarray(value).dtype}, {dtype} inferred"
        elif dtype in (int, float):
            assert type(value) is dtype, f"{name}: {type(value).__name__}, {dtype} inferred"
        seen.append(name)
    space = {**f.__globals__, **fn.refs, "_shape_check": shape_check}
    exec(instrumented(fn, known, "_shape_check"), space)
    space[fn.node.name](*args, *[space.get(v) for v in getattr(fn, "free", ())])
    return known, seen


def stencil(u0, alpha, c, steps):
    u = u0.copy()
    for _ in range(steps):
        lap = u[2:] - 2 * u[1:-1] + u[:-2]
        u[1:-1] = u[1:-1] + alpha * lap
    edge = u[:3] * c          # a constant stop: known only for a literal length
    return np.sum(u ** 2) + np.sum(edge)


def mixed(x, y, m):
    a = x * y                 # float32 * float64: float64; two lengths, maybe 1 (unknown)
    b = x + 1.5               # stays float32
    col = m[:, 0]             # a column: m's first axis
    row = m[0]
    t = m.T
    z = m * row               # broadcast against a row: m's shape
    w = x[None]               # a new axis of length 1
    v = x
    for i in range(3):
        v = v[1:]             # shorter each trip: unknown length
    s = np.where(x > 0, x, 0.0)
    return np.sum(a) + np.sum(b) + np.sum(col) + np.sum(t) + np.sum(z) + np.sum(w) + \
        np.sum(v) + np.sum(s)


def test_known_shapes_hold():
    rng = np.random.default_rng(0)
    known, seen = run_checked(stencil, (rng.standard_normal(12), np.float64(0.1),
                                        np.float64(2.0), 3))
    n = ("u0", 0, 0)
    assert known["u"] == ((n,), np.dtype("f8"))
    assert known["lap"] == ((("u0", 0, 2),), np.dtype("f8"))
    assert known["edge"][0] == (None,)
    assert {"u", "lap", "edge"} <= set(seen)
    x32 = rng.standard_normal(5).astype(np.float32)
    known, seen = run_checked(mixed, (x32, rng.standard_normal(5), rng.standard_normal((4, 3))))
    assert known["a"] == ((None,), np.dtype("f8"))
    assert known["b"][1] == np.dtype("f4")
    assert known["col"][0] == (("m", 0, 0),) and known["row"][0] == (("m", 1, 0),)
    assert known["t"][0] == (("m", 1, 0), ("m", 0, 0))
    assert known["z"][0] == (("m", 0, 0), ("m", 1, 0))
    assert known["w"][0] == (("lit", 1), ("x", 0, 0))
    assert known["v"][0] == (None,)
    assert known["s"] == ((("x", 0, 0),), np.dtype("f4"))
    assert shapes.same(known, "x", "b") and not shapes.same(known, "x", "a")
    assert not shapes.same(known, "v", "v")      # an unknown length equals nothing
    assert {"a", "b", "col", "row", "t", "z", "w", "v", "s"} <= set(seen)


@pytest.mark.parametrize("seed", [5, 7])
def test_known_shapes_hold_in_generated_programs(seed):
    space, checked = fuzz.Workspace(), 0
    try:
        for i in range(40):
            program = generate(seed, i)
            f, _ = space.load(program.source, f"shapes{seed}_{i}")
            case = make_case(program.arg_shapes, seed, i)
            if fuzz.plain_problem(f, case):
                continue
            checked += len(run_checked(f, case.points[0])[1])
    finally:
        space.close()
    assert checked > 300   # bindings of names of known shape, each checked
