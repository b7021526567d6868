"""The ranks known when code is made (transformer/ranks.py), checked against the values the
normalized code computes: every name given a rank holds a value of that rank at every
binding, on hand-written functions and on the fuzzer's programs."""
import numpy as np
import pytest

from strop.errors import TransformError
from strop.testing import fuzz
from strop.testing.generate import generate
from strop.testing.oracles import make_case
from strop.transformed import normalized
from strop.transformer.ranks import ranks, scalar_names
from helpers import instrumented
from test_jit import garch_nll   # w = p[0], a loop over range(1, n) carrying h


def run_checked(f, args):
    """Run ``f``'s normalized code on ``args`` checking every known rank; the names known."""
    try:
        fn = normalized(f)
    except TransformError:   # a program strop refuses (aliasing): nothing to check
        return {}
    given = {a.id: np.ndim(v) for a, v in zip(fn.node.args.args, args)}
    known = {n: t for n, t in ranks(fn.node.body, given, fn.callee).items()
             if isinstance(t[0], int)}     # (not a shape tuple's)
    seen = []

    def rank_check(name, value):
        rank = known[name][0]
        assert np.ndim(value) == rank, f"{name}: rank {np.ndim(value)}, {rank} inferred"
        seen.append(name)
    space = {**f.__globals__, **fn.refs, "_rank_check": rank_check}
    exec(instrumented(fn, known, "_rank_check"), space)
    space[fn.node.name](*args, *[space.get(v) for v in getattr(fn, "free", ())])
    return known


def matrices(m, v):
    row = m[1]
    col = m[:, 0]
    s = m[0, 1] + np.dot(v, v) + np.trace(m)
    q = m @ v
    for x in m:
        s = s + np.sum(x * row)
    mixed = s if s > 0 else v     # a number on one path, a vector on the other
    return s + np.sum(col) + np.sum(q) + np.sum(mixed)


def test_known_ranks_hold():
    rng = np.random.default_rng(0)
    known = run_checked(garch_nll, (np.array([0.1, 0.2, 0.5]), rng.standard_normal(10)))
    assert {"w", "a", "b", "h", "ll", "t"} <= scalar_names(
        normalized(garch_nll).node.body, {"p": 1, "r": 1}, normalized(garch_nll).callee)
    assert known["p"][0] == 1
    known = run_checked(matrices, (rng.standard_normal((3, 3)), rng.standard_normal(3)))
    assert (known["row"][0], known["col"][0], known["s"][0], known["q"][0], known["x"][0]) \
        == (1, 1, 0, 1, 1)
    assert "mixed" not in known     # bindings of two ranks: nothing known


def reductions_along_axes(m):
    kept = np.sum(m, -1, keepdims=True)
    rows = np.max(m, axis=1)
    both = np.mean(m, axis=(0, 1))
    whole = np.sum(m, keepdims=False)
    return np.sum(kept) + np.sum(rows) + both + whole


def test_reductions_given_an_axis_or_keepdims_have_known_ranks():
    known = run_checked(reductions_along_axes, (np.ones((2, 3)),))
    assert [known[n][0] for n in ("kept", "rows", "both", "whole")] == [2, 1, 0, 0]


def einsums(a, b, v):
    explicit = np.einsum('dcyx,co->doyx', a, b)
    implicit = np.einsum('ij,jk', b, b.T)
    trace = np.einsum('ii', b @ b.T)
    batched = np.einsum('...ij,j->...i', a, v)
    dots_kept = np.einsum('...j,j', a, v)
    shape = (9, 2)
    idxs = slice(0, 2)
    new_shape = a.shape[:2] + (a.shape[2] // 2, 2)
    pooled = np.max(a.reshape(new_shape + a.shape[3:]), axis=3)
    reshaped = np.reshape(b, shape) + np.reshape(v[idxs], 2) + b.reshape((-1, 2))
    return np.sum(reshaped) + np.sum(pooled) + np.sum(explicit) + np.sum(implicit) + trace + np.sum(batched) + np.sum(dots_kept)


def test_einsum_reshape_and_shapes_cut_or_joined_have_known_ranks():
    known = run_checked(einsums, (np.ones((2, 3, 4, 5)), np.ones((3, 6)), np.ones(5)))
    assert [known[n][0] for n in ("explicit", "implicit", "trace", "batched", "dots_kept",
                                  "reshaped", "pooled")] == [4, 2, 0, 3, 3, 2, 4]


@pytest.mark.parametrize("seed", [5, 6])
def test_known_ranks_hold_in_generated_programs(seed):
    space, checked = fuzz.Workspace(), 0
    try:
        for i in range(40):
            program = generate(seed, i)
            f, _ = space.load(program.source, f"ranks{seed}_{i}")
            case = make_case(program.arg_shapes, seed, i)
            if fuzz.plain_problem(f, case):
                continue
            checked += len(run_checked(f, case.points[0]))
    finally:
        space.close()
    assert checked > 400   # names of known rank, each checked at every binding
