"""The differential fuzzer (strop/testing): its generator is deterministic and makes programs
that run, its oracles catch a wrong answer and a crash, its failures are standalone scripts
that fail, and a small fixed budget of programs runs through every transform."""
import ast
import json
import os
import runpy
import subprocess
import sys

import numpy as np
import pytest

import strop
from strop.errors import Location, TransformError
from strop.testing import fuzz
from strop.testing.generate import generate
from strop.testing.minimize import minimize
from strop.testing.oracles import Case, check, make_case


def test_same_seed_same_programs_and_values():
    for i in range(5):
        assert generate(7, i).source == generate(7, i).source
        a, b = make_case(generate(7, i).arg_shapes, 7, i), make_case(generate(7, i).arg_shapes, 7, i)
        for p, q in zip(a.points[0] + a.batched, b.points[0] + b.batched):
            np.testing.assert_array_equal(p, q)
    assert generate(7, 0).source != generate(8, 0).source


def test_every_program_runs_as_plain_python():
    space = fuzz.Workspace()
    try:
        for i in range(60):
            program = generate(11, i)
            ast.parse(program.source)
            f, _ = space.load(program.source, f"plain{i}")
            case = make_case(program.arg_shapes, 11, i)
            why = fuzz.plain_problem(f, case)
            assert why in (None, "untame values"), (why, program.source)
            if why is None:
                assert np.shape(f(*case.points[0])) == program.ret_shape, program.source
    finally:
        space.close()


SMOOTH = '''import numpy as np

def f(a, b):
    s = 0.0
    for i in range(3):
        s = s + np.sin(a) * b[i]
    return s + np.sum(b ** 2)
'''


@pytest.fixture
def smooth():
    space = fuzz.Workspace()
    f, probed = space.load(SMOOTH, "smooth")
    case = make_case(((), (3,)), 0, 0)
    yield f, probed, case
    space.close()


def test_oracles_pass_a_correct_function(smooth):
    f, probed, case = smooth
    with strop.config.override(enable_x64=True):
        for name in ("python", "grad", "jvp", "hessian", "vmap", "vmap_grad"):
            outcome = check(name, f, probed, case)
            assert outcome.kind == "ok", outcome


@pytest.mark.parametrize("name, transform", [("grad", "grad"), ("jvp", "jvp"),
                                             ("hessian", "hessian"), ("vmap", "vmap")])
def test_a_wrong_answer_is_a_mismatch(smooth, monkeypatch, name, transform):
    """A transform made to return a slightly perturbed value is caught: the fuzzer can fail."""
    f, probed, case = smooth
    real = getattr(strop, transform)

    def perturbed(*args, **kwargs):
        inner = real(*args, **kwargs)
        return lambda *a: _bump(inner(*a))
    monkeypatch.setattr(strop, transform, perturbed if transform != "jvp" else
                        lambda *a, **k: _bump(real(*a, **k)))
    with strop.config.override(enable_x64=True):
        assert check(name, f, probed, case).kind == "mismatch"


def _bump(x):
    if isinstance(x, tuple):
        return tuple(_bump(v) for v in x)
    return np.asarray(x) * (1 + 1e-3) + 1e-4


def test_exceptions_are_classified(smooth, monkeypatch):
    f, probed, case = smooth

    def broken(fun, **kwargs):
        raise IndexError("pop from empty list")
    monkeypatch.setattr(strop, "jit", broken)
    assert check("jit", f, probed, case).kind == "crash"

    def unsupported(fun, **kwargs):
        raise TransformError("`x` is not supported", Location(__file__, 1))
    monkeypatch.setattr(strop, "jit", unsupported)
    assert check("jit", f, probed, case).kind == "clean-error"


def test_kinks_are_skipped_for_derivatives():
    """A branch decided differently within the stencil: no verdict, not a mismatch (central
    differences across a jump are not a derivative)."""
    space = fuzz.Workspace()
    try:
        f, probed = space.load("import numpy as np\n\ndef f(a):\n    if a > 0.5:\n"
                               "        return a * 2.0\n    return a * 3.0\n", "kink")
        at = lambda x: Case([(np.float64(x),)], (np.float64(1.0),), 0, (0,),  # noqa: E731
                            [(np.float64(x),)], (np.array([x]),))
        with strop.config.override(enable_x64=True):
            for name in ("grad", "jvp", "hessian"):
                assert check(name, f, probed, at(0.5)).kind == "skipped"
                assert check(name, f, probed, at(0.7)).kind == "ok"
    finally:
        space.close()


def test_minimize_keeps_the_failure_and_drops_the_rest():
    source = generate(3, 1).source
    keep = "np.sin" if "np.sin" in source else "np."
    small = minimize(source, lambda s: keep in s and _compiles(s), seconds=20)
    assert keep in small
    assert len(small) < len(source)


def test_minimize_never_makes_a_loop_endless():
    source = ("def f(a):\n    k = 0\n    s = 0.0\n    while k < 3 and a > 0.0:\n"
              "        k = k + 1\n        s = s + a\n    return s\n")
    small = minimize(source, lambda s: "while" in s, seconds=10)
    assert "k = k + 1" in small and "while k < 3 and a > 0.0" in small, small
    assert "s = s + a" not in small


def _compiles(source):
    try:
        compile(source, "<m>", "exec")
        return True
    except SyntaxError:
        return False


def test_a_failure_is_written_as_a_script_that_fails(tmp_path, monkeypatch):
    real = strop.grad
    monkeypatch.setattr(strop, "grad", lambda *a, **k: (lambda *x: _bump(real(*a, **k)(*x))))
    report = fuzz.run(4, seed=5, only=["grad"], out=str(tmp_path), minimize_seconds=5)
    assert report.counts["grad"]["mismatch"] >= 1 and report.failed
    path, outcome = report.failures[0]
    with pytest.raises(AssertionError):
        runpy.run_path(path, run_name="__main__")


def test_command_line_exit_status(tmp_path):
    status = fuzz.main(["--n", "3", "--seed", "2", "--only", "python,grad,jvp,vmap",
                        "--out", str(tmp_path), "--minimize-seconds", "2"])
    assert status in (0, 1)
    with pytest.raises(SystemExit):
        fuzz.main(["--n", "1", "--only", "nonsense"])


# 30 programs of seed 0 through every transform that compiles nothing: no mismatch, no crash.
BUDGET = (30, ["python", "grad", "jvp", "hessian", "vmap", "vmap_grad"])
# The first 4 compiled (Numba's compiles cost seconds each), in a process of their own at
# Numba's optimization level, 3, as users get it: the rest of the suite compiles at 1
# (tests/conftest.py).
COMPILED = (4, ["jit", "jit_vmap"])
_COMPILED_RUN = """
import json, sys
from strop.testing import fuzz
n, only = json.loads(sys.argv[1])
report = fuzz.run(n, seed=0, only=only, out=sys.argv[2], minimize_seconds=0)
print(json.dumps([[p, o.oracle, f"{o.kind} {o.error} {o.detail}"] for p, o in report.failures]))
"""


def _found(failures):
    return {(int(p.rsplit("-p", 1)[1][:-3]), oracle): what for p, oracle, what in failures}


def test_fixed_budget_has_no_mismatch_and_no_crash(tmp_path):
    report = fuzz.run(BUDGET[0], seed=0, only=BUDGET[1], out=str(tmp_path), minimize_seconds=0)
    found = _found([(p, o.oracle, f"{o.kind} {o.error} {o.detail}") for p, o in report.failures])
    assert not found, found


def test_fixed_budget_compiled_at_numbas_own_level(tmp_path):
    env = dict(os.environ, NUMBA_OPT="3")
    done = subprocess.run([sys.executable, "-c", _COMPILED_RUN, json.dumps(COMPILED),
                           str(tmp_path)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    found = _found(json.loads(done.stdout.strip().splitlines()[-1]))
    assert not found, found
