"""The CUDA backend against JAX on the same GPU, medians in one run.

    python benchmarks/gpu.py [--repeats R] [--quick]

Workloads (issue 19's):
  newton   jit(vmap(newton)) over 10,000,000 inputs whose Newton iterations take 1 to 50 trips
           (a per-lane ``while``): strop runs one thread per lane, each its own trips; JAX's
           vmap of ``lax.while_loop`` runs every lane to the longest.  Target: >= 3x faster.
  rk4      jit(vmap(rk4)) of 1,000,000 small linear ODE systems (3 states, 100 RK4 steps;
           the state a per-lane array).  Target: <= 1.0x JAX.
  mlp      jit(grad) of an MLP loss (256 -> 512 -> 10, batch 4096, float32) on GPU arrays.
           Target: <= 1.0x JAX.

Inputs are put on the device first and every timed call ends in ``block_until_ready`` on both
sides.  Each strop result is checked against the CPU's before timing.  Without a GPU (or in
Numba's simulator, whose times mean nothing) it prints why and measures nothing.
"""
import argparse
import os
import sys

import numpy as np

import _timing
from _timing import Row

import strop


def newton(a):
    x = a
    n = 0
    while abs(x * x * x + x - a) > 1e-6 * (1.0 + abs(a)) and n < 50:
        x = x - (x * x * x + x - a) / (3.0 * x * x + 1.0)
        n += 1
    return x


def rk4(y, k):
    h = 0.01
    for i in range(100):
        k1 = -k * y
        k2 = -k * (y + 0.5 * h * k1)
        k3 = -k * (y + 0.5 * h * k2)
        k4 = -k * (y + h * k3)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y


def loss(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return -np.sum(y * (logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))))


def jax_rows(jax, data):
    jnp, lax = jax.numpy, jax.lax
    gpu = jax.devices("gpu")[0]

    def newton_j(a):
        def go(c):
            x, n = c
            return (jnp.abs(x ** 3 + x - a) > 1e-6 * (1 + jnp.abs(a))) & (n < 50)

        def step(c):
            x, n = c
            return x - (x ** 3 + x - a) / (3 * x * x + 1), n + 1
        return lax.while_loop(go, step, (a, 0))[0]

    def rk4_j(y, k):
        def body(i, y):
            h = 0.01
            k1 = -k * y
            k2 = -k * (y + 0.5 * h * k1)
            k3 = -k * (y + 0.5 * h * k2)
            k4 = -k * (y + h * k3)
            return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return lax.fori_loop(0, 100, body, y)

    def loss_j(w1, b1, w2, b2, x, y):
        h = jnp.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        return -jnp.sum(y * jax.nn.log_softmax(logits))

    put = {k: [jax.device_put(v, gpu) for v in vs] for k, vs in data.items()}
    fns = {"newton": jax.jit(jax.vmap(newton_j)), "rk4": jax.jit(jax.vmap(rk4_j)),
           "mlp": jax.jit(jax.grad(loss_j, argnums=(0, 1, 2, 3)))}
    return {k: Row(f"{k}: JAX jit", lambda f=f, a=put[k]: jax.block_until_ready(f(*a)),
                   "XLA on the GPU", ref=True) for k, f in fns.items()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="a tenth of the sizes")
    args = p.parse_args()
    found, why = strop.runtime.cuda.available()
    if not found or strop.runtime.cuda.simulated():
        why = why or "Numba's simulator (NUMBA_ENABLE_CUDASIM=1): its times mean nothing"
        print(f"not measured: {why}")
        return 0
    gpu = strop.devices("cuda")[0]
    scale = 10 if args.quick else 1
    rng = np.random.default_rng(0)
    f32 = np.float32
    data = {"newton": [np.exp(rng.uniform(-2, 8, 10_000_000 // scale)).astype(f32)],
            "rk4": [rng.normal(size=(1_000_000 // scale, 3)).astype(f32),
                    rng.uniform(0.5, 2.0, 1_000_000 // scale).astype(f32)],
            "mlp": [rng.normal(size=s).astype(f32) * 0.05 for s in
                    ((256, 512), (512,), (512, 10), (10,))] +
                   [rng.normal(size=(4096 // scale, 256)).astype(f32),
                    np.eye(10, dtype=f32)[rng.integers(0, 10, 4096 // scale)]]}
    fns = {"newton": strop.jit(strop.vmap(newton)), "rk4": strop.jit(strop.vmap(rk4)),
           "mlp": strop.jit(strop.grad(loss, argnums=(0, 1, 2, 3)))}
    print(f"{_timing.versions()}; GPU {gpu} ({os.environ.get('STROP_GPU_NAME', 'CUDA')})")
    rows = []
    for name, f in fns.items():
        on_gpu = [strop.device_put(a, gpu) for a in data[name]]
        row, _, out = _timing.strop_jitted(
            lambda f=f: f, lambda f, a=on_gpu: strop.block_until_ready(f(*a)),
            f"{name}: strop jit on GPU arrays")
        if out is not None:
            want = f(*[a[:1000] if name != "mlp" else a for a in data[name]])
            got = [np.asarray(x)[:1000] if name != "mlp" else np.asarray(x)
                   for x in strop.tree_util.tree_leaves(out)]
            for g, w in zip(got, strop.tree_util.tree_leaves(want)):
                np.testing.assert_allclose(g, np.asarray(w)[:len(g)], rtol=2e-3, atol=1e-4)
        rows.append(row)
    jax = _timing.import_jax(x64=False)
    try:
        refs = jax_rows(jax, data) if jax is not None else {}
    except Exception as e:    # no GPU for JAX (a CPU-only jaxlib)
        print(f"JAX rows skipped: {e}")
        refs = {}
    rows += list(refs.values())
    _timing.run_rows(rows, repeats=args.repeats, min_batch_s=0.2, budget_s=240)
    _timing.table(rows, refs=[r.name for r in refs.values()])
    return 0


if __name__ == "__main__":
    sys.exit(main())
