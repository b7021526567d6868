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
        raise TransformError("`x` is not supported", Location(fun.__code__.co_filename, 1))
    monkeypatch.setattr(strop, "jit", unsupported)
    assert check("jit", f, probed, case).kind == "clean-error"

    def elsewhere(fun, **kwargs):    # a strop error naming strop's own file is a crash
        raise TransformError("`x` is not supported", Location(strop.__file__, 1))
    monkeypatch.setattr(strop, "jit", elsewhere)
    assert check("jit", f, probed, case).kind == "crash"


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
    report = fuzz.run(4, seed=5, only=["grad"], out=str(tmp_path), minimize_seconds=5,
                      shapes="arrays")
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
report = fuzz.run(n, seed=0, only=only, out=sys.argv[2], minimize_seconds=0, shapes="arrays")
print(json.dumps([[p, o.oracle, f"{o.kind} {o.error} {o.detail}"] for p, o in report.failures]))
"""


def _found(failures):
    return {(int(p.rsplit("-p", 1)[1][:-3]), oracle): what for p, oracle, what in failures}


def test_fixed_budget_has_no_mismatch_and_no_crash(tmp_path):
    report = fuzz.run(BUDGET[0], seed=0, only=BUDGET[1], out=str(tmp_path), minimize_seconds=0,
                      shapes="arrays")
    found = _found([(p, o.oracle, f"{o.kind} {o.error} {o.detail}") for p, o in report.failures])
    assert not found, found


def test_fixed_budget_compiled_at_numbas_own_level(tmp_path):
    env = dict(os.environ, NUMBA_OPT="3")
    done = subprocess.run([sys.executable, "-c", _COMPILED_RUN, json.dumps(COMPILED),
                           str(tmp_path)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    found = _found(json.loads(done.stdout.strip().splitlines()[-1]))
    assert not found, found


# -- tree programs (generate_trees.py) ---------------------------------------------------
def _tree_programs(seed=3, limit=400):
    """One (index, program) of every shape and of every layout, the first of each."""
    from strop.testing import generate_trees
    shapes = {name for name, _ in generate_trees.SHAPES}
    layouts = {name for name, _ in generate_trees.LAYOUTS}
    found = {}
    for i in range(limit):
        program = generate_trees.generate(seed, i)
        shape, layout = program.kind.split("/")
        for key in (("shape", shape), ("layout", layout)):
            found.setdefault(key, (i, program))
        if len(found) == len(shapes) + len(layouts):
            break
    assert {k for kind, k in found if kind == "shape"} == shapes
    assert {k for kind, k in found if kind == "layout"} == layouts
    return sorted({i: p for i, p in found.values()}.items())


def test_tree_programs_are_deterministic():
    from strop.testing import generate_trees
    for i in range(5):
        assert generate_trees.generate(7, i).source == generate_trees.generate(7, i).source
    assert any(generate_trees.generate(7, i).source != generate_trees.generate(8, i).source
               for i in range(3))


def test_a_tree_program_of_each_kind_runs_and_goes_through_the_oracles():
    """Every shape and every layout: the plain program (transforms inside it replaced by
    oracles) runs, and the python-backend transforms go through the oracles to a verdict."""
    from strop.testing.oracles import KINDS, reference_version
    space = fuzz.Workspace()
    try:
        with strop.config.override(enable_x64=True):
            for i, _ in _tree_programs():
                program, f, probed, case, why = fuzz.load_program(space, 3, i, "trees")
                assert why in (None, "untame values"), (why, program.source)
                if why:
                    continue
                out = reference_version(f)(*case.points[0])
                assert (np.shape(out) == ()) == (program.ret_shape == ()), program.source
                name = "nested" if program.nested else (
                    "grad" if program.ret_shape == () else "vmap")
                assert check(name, f, probed, case, timeout=60).kind in KINDS
    finally:
        space.close()


TREE = '''import numpy as np
from collections import namedtuple
from strop import grad, vmap

Layer = namedtuple("Layer", ["w", "b"])


def f(params, x):
    h = x
    for w, b in params[:-1]:
        h = np.tanh(h @ w + b)
    last = params[-1]
    return np.sum((h @ last.w + last.b) ** 2) + np.sum(params[0][1] ** 2)


def inner(params, x):
    g = grad(f)(params, x[0] * x[1])
    return np.sum(g[0][0] ** 2) + np.sum(g[-1].w)
'''


@pytest.fixture
def tree():
    from strop.testing.generate_trees import Leaf, NT
    from strop.testing.oracles import make_case as _unused  # noqa: F401
    space = fuzz.Workspace()
    f, probed = space.load(TREE, "tree")
    Layer = space.namespace["Layer"]
    rng = np.random.default_rng(0)
    params = [(rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, 2)),
              Layer(rng.uniform(-1, 1, (2, 2)), rng.uniform(-1, 1, 2))]
    x = rng.uniform(-1, 1, 3)
    lanes = [(params, rng.uniform(-1, 1, 3)) for _ in range(4)]
    case = Case([(params, x)], (params, x), 0, (None, 0), lanes,
                (params, np.stack([lane[1] for lane in lanes])), 0.5)
    assert Leaf and NT
    yield space, f, probed, case
    space.close()


def test_tree_oracles_pass_a_correct_function(tree):
    space, f, probed, case = tree
    with strop.config.override(enable_x64=True):
        for name in ("python", "grad", "jvp", "vjp", "vmap"):
            outcome = check(name, f, probed, case)
            assert outcome.kind in ("ok", "clean-error"), outcome


def _zero_one_leaf(g):
    """The silent bug the tree fuzzer hunts: one leaf's gradient all zeros."""
    params = g if not isinstance(g, tuple) or hasattr(g, "_fields") else g[0]
    first = params[0]
    params[0] = (np.zeros_like(first[0]), first[1])
    return g


@pytest.mark.parametrize("name", ["grad", "vjp"])
def test_a_zero_leaf_gradient_is_a_mismatch(tree, monkeypatch, name):
    """A gradient wrong in one leaf of a pytree, the rest right, is caught."""
    space, f, probed, case = tree
    from strop.testing.oracles import fd_grad, fd_vjp
    monkeypatch.setattr(strop, "grad", lambda fun, argnums=0: (
        lambda *a: _zero_one_leaf(fd_grad(fun, a, argnums))))
    monkeypatch.setattr(strop, "vjp", lambda fun, *a: (
        fun(*a), lambda ct: _zero_one_leaf(fd_vjp(fun, a, ct)[1])))
    with strop.config.override(enable_x64=True):
        outcome = check(name, f, probed, case)
    assert outcome.kind == "mismatch" and "item 0" in outcome.detail, outcome


def test_a_wrong_container_is_a_mismatch(tree, monkeypatch):
    """A gradient with the right numbers in the wrong structure (a namedtuple returned as a
    tuple, a list as a tuple) is caught."""
    space, f, probed, case = tree
    from strop.testing.oracles import fd_grad
    monkeypatch.setattr(strop, "grad", lambda fun, argnums=0: (
        lambda *a: tuple(tuple(layer) for layer in fd_grad(fun, a, argnums))))
    with strop.config.override(enable_x64=True):
        outcome = check("grad", f, probed, case)
    assert outcome.kind == "mismatch" and "structure" in outcome.detail, outcome


def test_a_wrong_inner_transform_is_a_mismatch(tree, monkeypatch):
    """The nested oracle: f calls grad(...) itself; the same program with oracles in
    place of the transforms is the reference, so a wrong inner gradient is caught."""
    space, f, probed, case = tree
    g = space.namespace["inner"]
    real = space.namespace["grad"]
    case = Case([case.batched], case.tangents, 0, (None, 0), case.lanes, case.batched)
    with strop.config.override(enable_x64=True):
        first = check("nested", g, probed, case)
        assert first.kind == "ok", first
        space.namespace["grad"] = lambda fun, **k: (lambda *a: _zero_one_leaf(real(fun, **k)(*a)))
        try:
            outcome = check("nested", g, probed, case)
        finally:
            space.namespace["grad"] = real
    assert outcome.kind == "mismatch", outcome
