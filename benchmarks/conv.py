"""Convolutions: one layer (batch 32, 28x28, 3x3, 32 -> 64 channels, NHWC / HWIO, 'SAME',
float32) forward and its gradient w.r.t. both operands, and the gradient of a 2-layer CNN loss,
strop.jit against jax.jit on the CPU, in one run.

    PYTHONPATH=. python benchmarks/conv.py [--repeats R]      (JAX optional)

Rows (each result is checked against the python backend / JAX first):
  layer forward          lax.conv_general_dilated(x, w, (1, 1), 'SAME', NHWC/HWIO/NHWC)
  layer grad (x, w)      grad of sum(ct * conv(x, w)) w.r.t. x and w: the two transposes
  CNN loss grad          conv 1->32 relu, conv 32->64 relu, spatial mean, dense 64->10, MSE;
                         grad w.r.t. the 5 parameter arrays (batch 32, 28x28)
Target (the issue): strop <= 1.0x JAX on each row.  strop's rows are timed (interleaved,
as _timing does) before JAX's, not among them: see the pause in main().
"""
import argparse
import time

import numpy as np

import _timing
from _timing import Row

import strop
from strop import lax

B, H, W, C_IN, C_OUT, K = 32, 28, 28, 32, 64, 3
DN = ("NHWC", "HWIO", "NHWC")


def layer(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)


def layer_loss(x, w, ct):
    return np.sum(ct * lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN))


def cnn_loss(w1, b1, w2, b2, w3, x, y):
    h = lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=DN)
    h = np.maximum(h + b1, np.float32(0))   # (a float 0.0 makes float64 under Numba)
    h = lax.conv_general_dilated(h, w2, (1, 1), "SAME", dimension_numbers=DN)
    h = np.maximum(h + b2, np.float32(0))
    out = np.mean(h, axis=(1, 2)) @ w3
    return np.mean((out - y) ** 2)


def data():
    rng = np.random.default_rng(0)
    f = np.float32
    x = rng.standard_normal((B, H, W, C_IN)).astype(f)
    w = (rng.standard_normal((K, K, C_IN, C_OUT)) / np.sqrt(K * K * C_IN)).astype(f)
    ct = rng.standard_normal((B, H, W, C_OUT)).astype(f)
    params = [(rng.standard_normal((K, K, 1, 32)) / 3).astype(f),
              (0.1 * rng.standard_normal(32)).astype(f),
              (rng.standard_normal((K, K, 32, 64)) / np.sqrt(288)).astype(f),
              (0.1 * rng.standard_normal(64)).astype(f),
              (rng.standard_normal((64, 10)) / 8).astype(f)]
    img = rng.standard_normal((B, H, W, 1)).astype(f)
    y = np.eye(10, dtype=f)[rng.integers(0, 10, B)]
    return x, w, ct, params, img, y


def close(got, want, what):
    for g, r in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        g, r = np.asarray(g), np.asarray(r)
        assert g.shape == r.shape and g.dtype == np.float32, (what, g.shape, r.shape, g.dtype)
        np.testing.assert_allclose(g, r, rtol=2e-3, atol=2e-3 * np.abs(r).max(), err_msg=what)


def jax_rows(x, w, ct, params, img, y):
    jax = _timing.import_jax(x64=False)
    names = ("JAX layer forward", "JAX layer grad (x, w)", "JAX CNN loss grad")
    if jax is None:
        return [Row(n, None, "skipped: JAX not installed", ref=True) for n in names], None
    import jax.numpy as jnp
    from jax import lax as jl

    def jlayer(x, w):
        return jl.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)

    def jlayer_loss(x, w, ct):
        return jnp.sum(ct * jlayer(x, w))

    def jcnn(w1, b1, w2, b2, w3, x, y):
        h = jnp.maximum(jlayer(x, w1) + b1, 0.0)
        h = jnp.maximum(jlayer(h, w2) + b2, 0.0)
        return jnp.mean((jnp.mean(h, axis=(1, 2)) @ w3 - y) ** 2)
    fwd = jax.jit(jlayer)
    g = jax.jit(jax.grad(jlayer_loss, argnums=(0, 1)))
    gc = jax.jit(jax.grad(jcnn, argnums=(0, 1, 2, 3, 4)))
    jx, jw, jct = (jax.device_put(a) for a in (x, w, ct))
    jp = [jax.device_put(p) for p in params]
    jimg, jy = jax.device_put(img), jax.device_put(y)
    outs = (np.asarray(fwd(jx, jw)), tuple(np.asarray(a) for a in g(jx, jw, jct)),
            tuple(np.asarray(a) for a in gc(*jp, jimg, jy)))
    rows = [Row(names[0], lambda: jax.block_until_ready(fwd(jx, jw)), "jax cpu", ref=True),
            Row(names[1], lambda: jax.block_until_ready(g(jx, jw, jct)), "jax cpu", ref=True),
            Row(names[2], lambda: jax.block_until_ready(gc(*jp, jimg, jy)), "jax cpu",
                ref=True)]
    return rows, outs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    strop.config.update("enable_x64", False)
    x, w, ct, params, img, y = data()
    print(f"conv: one layer, batch {B}, {H}x{W}, {K}x{K}, {C_IN}->{C_OUT}, NHWC/HWIO, 'SAME', "
          f"float32; and the gradient of a 2-layer CNN loss")
    print(f"{_timing.versions()}; {_timing.load_average()} at start")
    print("(first calls compile: Numba takes seconds here when its disk cache is cold)")

    jrows, jouts = jax_rows(x, w, ct, params, img, y)
    want = jouts or (strop.jit(layer, backend="python")(x, w),
                     strop.grad(layer_loss, argnums=(0, 1))(x, w, ct),
                     strop.grad(cnn_loss, argnums=(0, 1, 2, 3, 4))(*params, img, y))
    rows = []
    for name, build, call, ref in (
            ("strop layer forward", lambda: strop.jit(layer), lambda f: f(x, w), want[0]),
            ("strop layer grad (x, w)", lambda: strop.jit(strop.grad(layer_loss,
                                                                      argnums=(0, 1))),
             lambda f: f(x, w, ct), want[1]),
            ("strop CNN loss grad", lambda: strop.jit(strop.grad(cnn_loss,
                                                                  argnums=(0, 1, 2, 3, 4))),
             lambda f: f(*params, img, y), want[2])):
        row, _, out = _timing.strop_jitted(build, call, name)
        if out is not None:
            close(out, ref, name)
        rows.append(row)
    # strop's rows, then JAX's, each after a pause: XLA's worker threads keep spinning after a
    # call and took the cores from the rows timed next (benchmarks/README.md, rng), which
    # slowed strop's gradient of the CNN from 0.18 s to 1.15 s when interleaved (one run each)
    time.sleep(1.0)
    _timing.run_rows(rows, repeats=args.repeats, min_batch_s=0.05, budget_s=120)
    time.sleep(1.0)
    _timing.run_rows(jrows, repeats=args.repeats, min_batch_s=0.05, budget_s=120)
    rows += jrows
    print()
    _timing.table(rows, refs=tuple(r.name for r in jrows))
    print()
    for s, j in zip(rows[:3], jrows):
        if s.samples and j.samples:
            ratio = s.median / j.median
            print(f"target {s.name} <= 1.0x JAX: {ratio:.2f}x -> "
                  f"{'MET' if ratio <= 1.0 else 'MISSED'}")
        else:
            print(f"target {s.name} <= 1.0x JAX: not timed ({s.status or j.status})")
    print(f"{_timing.load_average()} at end")


if __name__ == "__main__":
    main()
