"""Gradient of a 2-layer MLP loss with respect to a dict of parameters: batch 256,
784 -> 512 (tanh) -> 10, mean squared error, float32.

    python benchmarks/mlp_grad.py [--repeats R]

Rows (every gradient is checked against a float64 NumPy hand-written gradient first):
  strop jit(grad), dict, np.mean   the natural spelling: params a dict, loss = np.mean(...)
  strop jit(grad), dict, sum/size  the same loss spelled np.sum(...) / out.size
  strop jit(grad), 4 arrays        the same with w1, b1, w2, b2 as separate array arguments
                                   (argnums=(0, 1, 2, 3)): what compiled code costs without
                                   the dict
  strop grad (python backend)      plain strop.grad, no jit, dict params, np.mean
  JAX jit(grad)                    jax.jit(jax.grad(loss)) on a dict (skipped without JAX)
  NumPy hand gradient              context: the backward pass written by hand in NumPy

A strop row that fell back to the python backend says so (JitFallbackWarning); one that
raised says which error, and is not timed.  Target (the issue): strop within 1.3x of JAX.
"""
import argparse

import numpy as np

import _timing
from _timing import Row

import strop

B, D_IN, D_HID, D_OUT = 256, 784, 512, 10


# --- the user's functions, as strop sees them ----------------------------------------------------

def loss(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return np.mean((out - y) ** 2)


def loss_sum(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return np.sum((out - y) ** 2) / out.size


def loss_flat(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np.sum((out - y) ** 2) / out.size


def hand_grad(p, x, y):
    """The backward pass written out in NumPy (any float dtype)."""
    h = np.tanh(x @ p["w1"] + p["b1"])
    out = h @ p["w2"] + p["b2"]
    bout = 2 * (out - y) / out.size
    bh = bout @ p["w2"].T
    ba = bh * (1 - h * h)
    return {"w1": x.T @ ba, "b1": ba.sum(0), "w2": h.T @ bout, "b2": bout.sum(0)}


def data():
    rng = np.random.default_rng(0)
    p = {"w1": rng.standard_normal((D_IN, D_HID)) / np.sqrt(D_IN),
         "b1": 0.1 * rng.standard_normal(D_HID),
         "w2": rng.standard_normal((D_HID, D_OUT)) / np.sqrt(D_HID),
         "b2": 0.1 * rng.standard_normal(D_OUT)}
    p = {k: v.astype(np.float32) for k, v in p.items()}
    x = rng.standard_normal((B, D_IN)).astype(np.float32)
    y = np.eye(D_OUT, dtype=np.float32)[rng.integers(0, D_OUT, B)]
    return p, x, y


def check(got, ref):
    """float32 gradients against the float64 reference."""
    assert set(got) == set(ref), (set(got), set(ref))
    for k in ref:
        g = np.asarray(got[k])
        assert g.shape == ref[k].shape and g.dtype == np.float32, (k, g.shape, g.dtype)
        np.testing.assert_allclose(g, ref[k], rtol=2e-3, atol=2e-3 * np.abs(ref[k]).max(),
                                   err_msg=k)


def jax_row(p, x, y, ref):
    jax = _timing.import_jax(x64=False)
    if jax is None:
        return Row("JAX jit(grad)", None, "skipped: JAX not installed", ref=True)
    import jax.numpy as jnp

    def jloss(params, x, y):
        h = jnp.tanh(x @ params["w1"] + params["b1"])
        out = h @ params["w2"] + params["b2"]
        return jnp.mean((out - y) ** 2)

    g = jax.jit(jax.grad(jloss))
    jp = jax.device_put(p)
    jx, jy = jax.device_put(x), jax.device_put(y)
    check(jax.tree_util.tree_map(np.asarray, g(jp, jx, jy)), ref)
    return Row("JAX jit(grad)", lambda: jax.block_until_ready(g(jp, jx, jy)), "jax cpu",
               ref=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    strop.config.update("enable_x64", False)     # float32, as JAX by default
    p, x, y = data()
    ref = hand_grad({k: v.astype(np.float64) for k, v in p.items()}, x.astype(np.float64),
                    y.astype(np.float64))
    names = ("w1", "b1", "w2", "b2")

    print(f"mlp_grad: grad of an MLP loss, batch {B}, {D_IN}->{D_HID} tanh ->{D_OUT}, MSE, "
          f"float32, w.r.t. a dict of 4 arrays")
    print(f"{_timing.versions()}; {_timing.load_average()} at start")
    print("(first calls compile: Numba takes seconds here when its disk cache is cold)")

    rows = []
    for name, fn in (("strop jit(grad), dict, np.mean", loss),
                     ("strop jit(grad), dict, sum/size", loss_sum)):
        row, _, out = _timing.strop_jitted(lambda fn=fn: strop.jit(strop.grad(fn)),
                                           lambda f: f(p, x, y), name)
        if out is not None:
            check(out, ref)
        rows.append(row)
    row, _, out = _timing.strop_jitted(
        lambda: strop.jit(strop.grad(loss_flat, argnums=(0, 1, 2, 3))),
        lambda f: f(p["w1"], p["b1"], p["w2"], p["b2"], x, y), "strop jit(grad), 4 arrays")
    if out is not None:
        check(dict(zip(names, out)), ref)
    rows.append(row)
    row, _, out = _timing.strop_jitted(lambda: strop.grad(loss), lambda f: f(p, x, y),
                                       "strop grad (python backend)")
    if out is not None:
        check(out, ref)
    rows.append(row)
    rows.append(jax_row(p, x, y, ref))
    check(hand_grad(p, x, y), ref)
    rows.append(Row("NumPy hand gradient", lambda: hand_grad(p, x, y), "numpy"))

    _timing.run_rows(rows, repeats=args.repeats, min_batch_s=0.05, budget_s=60)
    print()
    _timing.table(rows, refs=("JAX jit(grad)", "NumPy hand gradient"))
    print()
    jx = rows[-2]
    for r in rows[:4]:
        if r.samples and jx.samples:
            ratio = r.median / jx.median
            print(f"target {r.name} <= 1.3x JAX: {ratio:.2f}x -> "
                  f"{'MET' if ratio <= 1.3 else 'MISSED'}")
        elif not r.samples:
            print(f"target {r.name} <= 1.3x JAX: not timed ({r.status})")
        else:
            print(f"target {r.name} <= 1.3x JAX: not evaluated ({jx.status})")
    print(f"{_timing.load_average()} at end")


if __name__ == "__main__":
    main()
