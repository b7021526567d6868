"""The corpus: programs modeled on public ones, run under strop and compared with the outputs of
their twins under the original library (tests/data/corpus/, made by make_corpus_reference.py).

Every program module here (``*.py`` not starting with ``test_`` or ``_``) defines ``init()``,
``loss(params, *batch)`` and optionally ``example_loss`` and ``train`` (tests/corpus/README.md).
Each applicable check is its own test id, ``test_corpus[<program>-<check>]``:

    value  loss(params, *batch), the plain function (it may call strop.nn, strop.random, ...)
    grad   strop.grad(loss), leaf by leaf
    jit    strop.jit(strop.grad(loss)), with JitFallbackWarning as an error
    vmap   strop.vmap(strop.grad(example_loss), in_axes=(None, 0, ...)): per-example gradients
    train  the program's own training steps, fallback warnings as errors

A check strop gets wrong today is listed in KNOWN_FAILURES (strict xfail: when strop is fixed
the test fails until the entry is removed).  Nothing is skipped.
"""
import importlib.util
import os
import sys
import warnings

import numpy as np
import pytest

import strop
from strop.errors import JitFallbackWarning, PerformanceWarning

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "corpus")
RTOL, ATOL = 1e-7, 1e-10

# (program, check) -> what fails and why, one line.  Remove an entry when strop is fixed.
KNOWN_FAILURES = {
    # (jx_: programs modeled on JAX's examples and documentation, and on JAX tutorials: none)
    # ag_: programs modeled on scientific scripts written for autograd
    ("ag_min_char_rnn", "jit"):
        "JitFallbackWarning: Numba cannot type the dict hs grown by hs[t] = ... in the loop "
        "(its keys are the loop's values)",
}


def program_names():
    return sorted(f[:-3] for f in os.listdir(HERE)
                  if f.endswith(".py") and not f.startswith(("test_", "_")))


_modules = {}


def load(name):
    """The program as a module (imported once per run, under a name of its own)."""
    if name not in _modules:
        spec = importlib.util.spec_from_file_location(f"corpus_{name}",
                                                      os.path.join(HERE, name + ".py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses and namedtuples look their module up
        spec.loader.exec_module(module)
        _modules[name] = module
    return _modules[name]


def reference(name):
    path = os.path.join(DATA, name + ".npz")
    if not os.path.exists(path):
        pytest.fail(f"no reference for {name}: run "
                    f"/tmp/refenv/bin/python tests/data/corpus/make_corpus_reference.py {name}")
    with np.load(path) as data:
        return dict(data)


def ref_leaves(ref, prefix):
    n = sum(k.startswith(prefix + "/") for k in ref)
    return [ref[f"{prefix}/{i}"] for i in range(n)]


def assert_leaves(got_tree, expected, what):
    got = strop.tree_util.tree_leaves(got_tree)
    assert len(got) == len(expected), f"{what}: {len(got)} leaves, the reference has {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        g = np.asarray(g)
        assert g.shape == e.shape, f"{what} leaf {i}: shape {g.shape}, expected {e.shape}"
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL, err_msg=f"{what} leaf {i}")


def checks_of(name):
    mod = load(name)
    checks = ["value", "grad", "jit"]
    if hasattr(mod, "example_loss"):
        checks.append("vmap")
    if hasattr(mod, "train"):
        checks.append("train")
    return checks


def cases():
    out = []
    for name in program_names():
        for check in checks_of(name):
            reason = KNOWN_FAILURES.get((name, check))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(name, check, marks=marks, id=f"{name}-{check}"))
    return out


def test_known_failures_name_real_checks():
    """A stale entry (a renamed program or check) would otherwise hide nothing and mean nothing."""
    real = {(n, c) for n in program_names() for c in checks_of(n)}
    assert set(KNOWN_FAILURES) <= real, sorted(set(KNOWN_FAILURES) - real)


@pytest.fixture
def strict_jit():
    """x64 as the references were made, JAX's current default PRNG stream, and no fallback.
    A helper run in object mode (a PerformanceWarning) is a slow path, not a wrong result:
    test_jit_coverage.py's SLOW_PATHS lists them, the corpus checks what programs compute."""
    with strop.config.override(enable_x64=True, threefry_partitionable=True):
        with warnings.catch_warnings():
            warnings.simplefilter("error", JitFallbackWarning)
            warnings.simplefilter("ignore", PerformanceWarning)
            yield


@pytest.mark.parametrize("name, check", cases())
def test_corpus(name, check, strict_jit):
    mod = load(name)
    ref = reference(name)
    params, batch = mod.init()
    if check == "value":
        np.testing.assert_allclose(np.asarray(mod.loss(params, *batch)), ref["value"],
                                   rtol=RTOL, atol=ATOL)
    elif check == "grad":
        assert_leaves(strop.grad(mod.loss)(params, *batch), ref_leaves(ref, "grad"), "grad")
    elif check == "jit":
        assert_leaves(strop.jit(strop.grad(mod.loss))(params, *batch),
                      ref_leaves(ref, "grad"), "jit(grad)")
    elif check == "vmap":
        per_example = strop.vmap(strop.grad(mod.example_loss),
                                 in_axes=(None,) + (0,) * len(batch))
        assert_leaves(per_example(params, *batch), ref_leaves(ref, "example_grad"),
                      "vmap(grad(example_loss))")
    elif check == "train":
        assert_leaves(mod.train(params, *batch), ref_leaves(ref, "train"), "train")
    else:
        raise AssertionError(check)
