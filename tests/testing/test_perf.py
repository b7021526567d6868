"""The fuzzer's performance oracle (strop/testing/perf.py) on a small budget: it times programs,
its ratios are finite and positive, and none is beyond a generous bound.  Ratios only, never
times (DESIGN, Testing): the bounds are loose enough that a loaded machine cannot fail them (a
ratio's two sides are timed in turns, so load falls on both); perf.BOUNDS, the real ones, are
for ``python -m strop.testing.fuzz --perf`` on a large budget.

Compiling is nearly all of the time a program takes, so the budget is a few programs, and
jit(vmap) is timed only on one small one."""
import ast
import math

import numpy as np
import pytest

import strop
from strop.testing import perf
from strop.testing.fuzz import Workspace
from strop.testing.generate import Program
from strop.testing.oracles import make_case

SEED, PROGRAMS = 3506, 3    # a stream whose first programs njit compiles
GENEROUS = {"jit/njit": 50.0, "jit_grad/njit": 200.0, "jit/python": 20.0,
            "jit_grad/python": 20.0, "jit_vmap/python": 20.0}


@pytest.fixture(scope="module")
def report():
    return perf.run(PROGRAMS, SEED, write=False, shapes="arrays",
                    only=("jit", "jit_grad"))


def test_small_budget_is_timed(report):
    assert report.outcomes["timed"] >= 2, report.table()
    assert {"jit/njit", "jit/python", "jit_grad/njit"} <= set(report.ratios), report.table()
    values = [v for got in report.ratios.values() for v, _ in got]
    assert all(math.isfinite(v) and v > 0 for v in values), report.table()


def beyond(ratios):
    return [(ratio, round(v, 1), index) for ratio, got in ratios.items()
            for v, index in got if v > GENEROUS.get(ratio, math.inf)]


def test_no_ratio_beyond_generous_bounds(report):
    """The whole call, strop's wrapper included: on programs this small the wrapper is most of
    it (perf.dispatch_overhead: a strop.jit call costs ~20 of njit's before any work)."""
    assert not beyond(report.ratios), report.table()


def test_no_compiled_code_beyond_generous_bounds(report):
    """The same bounds on the compiled code alone (perf.compiled_code): strop's wrapper left
    out, what Numba runs for strop against what it runs for the plain function."""
    assert report.code, report.table()
    assert not beyond(report.code), report.table()


SMALL = '''import numpy as np

def f(a, b):
    return np.sum(np.sin(a) * b) + a
'''


def test_an_outlier_is_a_script_that_times_it_again(tmp_path, monkeypatch):
    """With a bound of zero every ratio is an outlier: its script is written, names the ratio,
    and times it again.  (Every transform is timed here, jit(vmap) too, and each one's
    compiled code alone.)"""
    monkeypatch.setitem(perf.BOUNDS, "jit/njit", 0.0)
    program = Program(1, 2, SMALL, ((), (3,)), ())
    case = make_case(program.arg_shapes, 1, 2)
    space = Workspace()
    try:
        with strop.config.override(enable_x64=True):
            f, _ = space.load(SMALL, "small")
            m = perf.measure(f, program, case)
            assert m.outcome == "timed" and "jit/njit" in m.outliers, m
            assert set(m.ratios) == set(m.code) == set(perf.BOUNDS), m
            values = list(m.ratios.values()) + list(m.code.values())
            assert all(math.isfinite(v) and v > 0 for v in values), m
            assert m.cause("jit/njit") == "code"    # over a bound of zero, wrapper or not
            o = perf.Outlier(2, "jit/njit", m.ratios["jit/njit"], m.code["jit/njit"], "code")
            path = perf.write_outlier(space, program, case, o, str(tmp_path), 0, 60)
            text = open(path).read()
            ast.parse(text)
            assert "retime('jit/njit', f, case, code=True)" in text
            values = perf.retime("jit/njit", f, case, times=2, code=True)
            assert len(values) == 2 and all(np.isfinite(values))
    finally:
        space.close()
