"""strop.random against JAX's own outputs (tests/data/rng_reference.*, made by
tests/data/make_rng_reference.py with the JAX version recorded in the JSON), for every
function, both streams, both precisions and several shapes.

Tolerances, in units in the last place (ulp) of the result dtype, are per function below.
Zero means bit for bit. The non-zero ones and why:
- multivariate_normal: the factor comes from NumPy's LAPACK, not JAX's, and XLA's matrix
  product may sum in another order: 64 ulp (relative to the largest |value|).
- beta, float64: XLA's float64 exp is its own, up to 2 ulp from the C library's; the ratio
  of two exps then differs by a few ulp: 8 ulp.
- gamma, loggamma, beta in float32: see RTOL_F32 below.
Rejection samplers (gamma, loggamma, beta, poisson) use JAX's algorithms element by element
with the same keys; poisson and the float64 gamma family match bit for bit, and a rounding
difference that flipped an accept/reject decision would show up here as a large mismatch.
"""
import json
import os
import warnings

import numpy as np
import pytest

import strop.rng as rng
from strop.config import config

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, os.pardir, "data")
with open(os.path.join(DATA, "rng_reference.json")) as _fh:
    META = json.load(_fh)
ARRAYS = np.load(os.path.join(DATA, "rng_reference.npz"))
CASES = META["cases"]

ULP = {"multivariate_normal": 64}
ULP_X64 = {"beta": 8}
# float32 gamma family: XLA computes 1/sqrt(d) with the processor's approximate rsqrt plus a
# Newton step (see gamma_one in strop/rng/rejection.py); about 1 value in 8 differs, by a
# relative 1e-6 at most in gamma and beta, and by 4e-6 absolute in loggamma (whose values
# near 0 make ulps meaningless).
RTOL_F32 = {"gamma": 1e-6, "beta": 1e-6}
ATOL_F32 = {"loggamma": 4e-6}


def _call(case):
    kw = {k: v for k, v in case.items()
          if k not in ("fn", "key", "array", "x64", "partitionable", "id", "error", "default")}
    fn = getattr(rng, case["fn"])
    if case["fn"] in ("PRNGKey", "key"):   # (JAX's typed key(seed): its key_data)
        return fn(kw["seed"])
    key = rng.PRNGKey(case["key"])
    ftype = "float64" if case["x64"] else "float32"
    for name in ("minval", "maxval", "lower", "upper", "p", "a", "b", "lam", "logits", "mean",
                 "cov", "x"):
        if isinstance(kw.get(name), list):
            raw = case.get("array") or name == "x" or (name == "a" and case["fn"] == "choice")
            kw[name] = np.asarray(kw[name], None if raw else ftype)
    if "shape" in kw and isinstance(kw["shape"], list) and case["fn"] != "choice":
        kw["shape"] = tuple(kw["shape"])
    if case["fn"] == "split" and isinstance(kw["num"], list):
        kw["num"] = tuple(kw["num"])
    return fn(key, **kw)


def _ulp_diff(a, b):
    it = {4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ai, bi = a.view(it).astype(object), b.view(it).astype(object)
    lo = np.iinfo(it).min
    ai = np.where(ai < 0, lo - ai, ai)
    bi = np.where(bi < 0, lo - bi, bi)
    return np.abs(ai - bi).astype(float)


def _label(case):
    extra = {k: v for k, v in case.items()
             if k not in ("fn", "x64", "partitionable", "id", "default")}
    return f"{case['id']}-{case['fn']}-{'x64' if case['x64'] else 'x32'}-" \
           f"{'part' if case['partitionable'] else 'orig'}-{json.dumps(extra)[:60]}"


@pytest.mark.parametrize("case", CASES, ids=[_label(c) for c in CASES])
def test_matches_jax(case):
    expected = ARRAYS[case["id"]]
    with config.override(enable_x64=case["x64"], threefry_partitionable=case["partitionable"]):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = np.asarray(_call(case))
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected)
        return
    tol = (ULP_X64 if case["x64"] else {}).get(case["fn"], ULP.get(case["fn"], 0))
    both_nan = np.isnan(got) & np.isnan(expected)
    if got.dtype == np.float32 and case["fn"] in RTOL_F32:
        np.testing.assert_allclose(got, expected, rtol=RTOL_F32[case["fn"]], atol=0)
    elif got.dtype == np.float32 and case["fn"] in ATOL_F32:
        np.testing.assert_allclose(got, expected, rtol=0, atol=ATOL_F32[case["fn"]])
    elif tol == 0:
        assert np.array_equal(got.view(f"u{got.itemsize}")[~both_nan],
                              expected.view(f"u{got.itemsize}")[~both_nan]), \
            f"not bit-exact: {np.sum(got != expected)} of {got.size} differ, " \
            f"max {np.max(_ulp_diff(got, expected)) if got.size else 0} ulp"
    elif case["fn"] == "multivariate_normal":
        scale = np.max(np.abs(expected)) * np.finfo(got.dtype).eps
        np.testing.assert_allclose(got, expected, rtol=0, atol=tol * scale)
    else:
        assert np.max(_ulp_diff(got, expected)[~both_nan], initial=0) <= tol


def test_reference_provenance():
    assert META["jax_version"] and META["backend"] == "cpu"
    assert len(CASES) == len(ARRAYS.files)


DEFAULTS = [c for c in CASES if c.get("default")]


def test_the_default_stream_is_current_jaxs():
    # made under JAX's defaults as installed (True since JAX 0.5): strop's defaults reproduce
    # them with no setting changed
    assert DEFAULTS and META["default_partitionable"] is True
    assert config.read("threefry_partitionable") is True
    for case in DEFAULTS:
        with config.override(enable_x64=case["x64"]):   # (the tests' x64 may differ)
            got = np.asarray(_call(case))
        np.testing.assert_array_equal(got, ARRAYS[case["id"]], err_msg=_label(case))
