"""Gradient of an RNN's loss written with lax.scan: a 64-unit tanh cell over 500 steps
(inputs of 64), the loss summed over every step's output, float32; the gradient with respect
to the cell's three parameters.

    python benchmarks/lax_rnn.py [--repeats R]

Rows (every gradient is checked against a float64 NumPy hand-written backward pass first):
  strop jit(grad), lax.scan     the RNN as JAX code: strop.lax.scan, a nested def for the cell
  strop jit(grad), Python for   the same written as a Python loop filling an array of states
  JAX jit(grad), lax.scan       jax.jit(jax.grad(...)) of the same code (skipped without JAX)
  NumPy hand gradient           context: forward and backward passes written by hand

A strop row that fell back to the python backend says so (JitFallbackWarning).
"""
import argparse

import numpy as np

import _timing
from _timing import Row

import strop
from strop import lax

H, D, T = 64, 64, 500


# --- the user's functions, as strop sees them ----------------------------------------------------

def loss(w, u, b, xs, h0):
    def cell(h, x):
        h = np.tanh(w @ h + u @ x + b)
        return h, h
    h, hs = lax.scan(cell, h0, xs)
    return np.sum(hs ** 2) / hs.shape[0]


def loss_loop(w, u, b, xs, h0):
    h = h0
    hs = np.zeros((xs.shape[0], h0.shape[0]), h0.dtype)
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + u @ xs[t] + b)
        hs[t] = h
    return np.sum(hs ** 2) / hs.shape[0]


def hand_grad(w, u, b, xs, h0):
    """Backpropagation through time, written out in NumPy (any float dtype)."""
    hs, h = [], h0
    for x in xs:
        h = np.tanh(w @ h + u @ x + b)
        hs.append(h)
    bw, bu, bb, bh = np.zeros_like(w), np.zeros_like(u), np.zeros_like(b), np.zeros_like(h0)
    for t in range(len(xs) - 1, -1, -1):
        bh = bh + 2 * hs[t] / len(xs)
        ba = bh * (1 - hs[t] ** 2)
        prev = hs[t - 1] if t > 0 else h0
        bw += np.outer(ba, prev)
        bu += np.outer(ba, xs[t])
        bb += ba
        bh = w.T @ ba
    return bw, bu, bb


def data():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    u = (rng.standard_normal((H, D)) / np.sqrt(D)).astype(np.float32)
    b = (0.1 * rng.standard_normal(H)).astype(np.float32)
    xs = rng.standard_normal((T, D)).astype(np.float32)
    return w, u, b, xs, np.zeros(H, np.float32)


def check(got, ref):
    for g, r, name in zip(got, ref, ("w", "u", "b")):
        g = np.asarray(g)
        assert g.shape == r.shape and g.dtype == np.float32, (name, g.shape, g.dtype)
        np.testing.assert_allclose(g, r, rtol=2e-3, atol=2e-3 * np.abs(r).max(), err_msg=name)


def jax_row(args, ref):
    jax = _timing.import_jax(x64=False)
    if jax is None:
        return Row("JAX jit(grad), lax.scan", None, "skipped: JAX not installed", ref=True)
    import jax.numpy as jnp

    def jloss(w, u, b, xs, h0):
        def cell(h, x):
            h = jnp.tanh(w @ h + u @ x + b)
            return h, h
        h, hs = jax.lax.scan(cell, h0, xs)
        return jnp.sum(hs ** 2) / hs.shape[0]

    g = jax.jit(jax.grad(jloss, argnums=(0, 1, 2)))
    jargs = [jax.device_put(a) for a in args]
    check([np.asarray(x) for x in g(*jargs)], ref)
    return Row("JAX jit(grad), lax.scan", lambda: jax.block_until_ready(g(*jargs)), "jax cpu",
               ref=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    strop.config.update("enable_x64", False)     # float32, as JAX by default
    inputs = data()
    ref = hand_grad(*[a.astype(np.float64) for a in inputs])

    print(f"lax_rnn: grad of an RNN loss, lax.scan over {T} steps of a {H}-unit tanh cell "
          f"(inputs {D}), float32, w.r.t. the cell's 3 parameters")
    print(f"{_timing.versions()}; {_timing.load_average()} at start")
    print("(first calls compile: Numba takes seconds here when its disk cache is cold)")

    rows = []
    for name, fn in (("strop jit(grad), lax.scan", loss),
                     ("strop jit(grad), Python for", loss_loop)):
        row, _, out = _timing.strop_jitted(
            lambda fn=fn: strop.jit(strop.grad(fn, argnums=(0, 1, 2))),
            lambda f: f(*inputs), name)
        if out is not None:
            check(out, ref)
        rows.append(row)
    rows.append(jax_row(inputs, ref))
    check(hand_grad(*inputs), ref)
    rows.append(Row("NumPy hand gradient", lambda: hand_grad(*inputs), "numpy"))

    _timing.run_rows(rows, repeats=args.repeats, min_batch_s=0.05, budget_s=60)
    print()
    _timing.table(rows, refs=("JAX jit(grad), lax.scan", "NumPy hand gradient"))
    print(f"{_timing.load_average()} at end")


if __name__ == "__main__":
    main()
