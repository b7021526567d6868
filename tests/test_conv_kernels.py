"""The direct convolution kernels (runtime/numba/conv_kernels.py, called by runtime/numba/
conv.py) against the NumPy convolution and its transposes (runtime/conv.py, itself checked
against JAX's reference data and a naive loop in test_lax_conv.py), on random geometries:
1 to 3 spatial dimensions, strides, dilations of both kinds, explicit and negative padding,
feature and batch groups, channel counts that leave partial vector blocks, rows that leave
pixels to the one-row loop, float32 and float64, one thread and several."""
import numba
import numpy as np
import pytest

from strop.runtime import conv as rc
from strop.runtime.numba import conv as nc
from strop.runtime.numba import conv_kernels_gen


def _geometry(rng):
    nsp = int(rng.integers(1, 4))
    fg = bg = 1
    r = rng.random()
    if r < 0.25:
        fg = int(rng.integers(2, 4))
    elif r < 0.35:
        bg = int(rng.integers(2, 4))
    n = int(rng.integers(1, 4)) * bg
    cg, og = int(rng.integers(1, 12)), int(rng.integers(1, 40))
    sp = tuple(int(v) for v in rng.integers(1, 11, nsp))
    win = tuple(int(v) for v in rng.integers(1, 4, nsp))
    strides = tuple(int(v) for v in rng.integers(1, 3, nsp))
    ld = tuple(int(v) for v in rng.integers(1, 3, nsp)) if rng.random() < 0.3 else (1,) * nsp
    rd = tuple(int(v) for v in rng.integers(1, 3, nsp)) if rng.random() < 0.3 else (1,) * nsp
    pad = str(rng.choice(["SAME", "VALID", "explicit"])) if ld == (1,) * nsp else "explicit"
    if pad == "explicit":
        pad = tuple((int(a), int(b)) for a, b in rng.integers(-1, 3, (nsp, 2)))
    dt = np.float64 if rng.random() < 0.25 else np.float32
    x = rng.standard_normal((n,) + sp + (cg * fg,)).astype(dt)
    w = rng.standard_normal(win + (cg, og * max(fg, bg))).astype(dt)
    return x, w, (strides, pad, ld, rd, fg, bg)


def _close(got, want, dt):
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 2e-5 if dt == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * (np.abs(want).max() + 1))


def _kernels_match_numpy(x, w, ct, out, params):
    """The direct kernels' forward and both transposes against runtime/conv.py's NumPy ones."""
    _close(nc.forward(x, w, *params), out, x.dtype)
    _close(nc.transpose_lhs(ct, w, x.shape, *params),
           rc.conv_transpose_lhs(ct, w, x.shape, *params), x.dtype)
    _close(nc.transpose_rhs(x, ct, w.shape, *params),
           rc.conv_transpose_rhs(x, ct, w.shape, *params), x.dtype)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("seed", range(4))
def test_direct_kernels_match_numpy(seed, threads, monkeypatch):
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", threads)
    monkeypatch.setattr(nc, "_threads", lambda flops: threads)   # small problems too
    rng = np.random.default_rng(seed)
    done = 0
    while done < 40:
        x, w, params = _geometry(rng)
        try:
            geo = rc.Geometry(x.shape, w.shape, *params)
        except ValueError:
            continue
        if not all(geo.out):
            continue
        assert nc._direct_ok(geo, x.dtype, x, w)
        out = rc.conv_forward(x, w, *params)
        ct = rng.standard_normal(out.shape).astype(x.dtype)
        _kernels_match_numpy(x, w, ct, out, params)
        done += 1


def test_benchmark_layer_matches_numpy():
    """The benchmark's shape (benchmarks/conv.py), with its full vector blocks, on threads."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 28, 28, 32)).astype(np.float32)
    w = rng.standard_normal((3, 3, 32, 64)).astype(np.float32)
    params = ((1, 1), "SAME", (1, 1), (1, 1), 1, 1)
    out = rc.conv_forward(x, w, *params)
    ct = rng.standard_normal(out.shape).astype(np.float32)
    _kernels_match_numpy(x, w, ct, out, params)


def test_generated_kernels_are_current():
    with open(conv_kernels_gen.PATH) as f:
        assert f.read() == conv_kernels_gen.source(), \
            "run python -m strop.runtime.numba.conv_kernels_gen"
