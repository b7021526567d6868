"""strop.lax: against JAX (reference values made once with JAX: tests/data/make_lax_reference.py),
against the same code written as Python control flow, against central differences, and its
errors.  Each function runs as a plain call (strop.lax's own code), under jit (Python and
compiled), grad, jvp, hessian and vmap."""
import json
import os
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
