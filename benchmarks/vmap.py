"""vmap against ``jax.jit(jax.vmap(...))`` on the CPU, medians in one run.

    python benchmarks/vmap.py [--repeats R] [--quick] [--only rk4,newton,mlp,mlp_w1]

Workloads (the issue's):
  rk4      4096 independent RK4 integrations of a damped, driven oscillator (2 states) over
           2000 steps; the per-example function is a plain Python loop.
  newton   a per-element Newton iteration for x**3 + x = a with a data-dependent ``while``
           (1 to 50 trips) over 1,000,000 inputs.
  mlp      per-example gradients of a small MLP (64 -> 128 -> 10, batch 512, float32):
           vmap(grad(loss), in_axes=(None, 0, 0)), every parameter's gradient (the dict), on
           both sides.
  mlp_w1   the same, the gradient of the first layer's weights only (grad with argnums=0 of
           the loss with the parameters as arguments, on both sides): XLA then computes only
           what that gradient needs, and so does strop.

Rows per workload: strop vmap (the generated batched NumPy code, python backend), strop
jit(vmap) (the same code compiled by Numba), JAX jit(vmap) with lax.fori_loop /
lax.while_loop (skipped without JAX).  Every result is checked against a Python loop over
lanes (a few lanes for the big ones) before timing.
"""
import argparse

import numpy as np

import _timing
from _timing import Row

import strop


# --- workloads, as a user writes them ------------------------------------------------------

def rk4(y0, v0, k, steps):
    h = 0.01
    y, v = y0, v0
    for i in range(steps):
        t = i * h
        a1, b1 = v, -k * y - 0.1 * v + np.cos(t)
        a2, b2 = v + 0.5 * h * b1, -k * (y + 0.5 * h * a1) - 0.1 * (v + 0.5 * h * b1) + np.cos(t + 0.5 * h)
        a3, b3 = v + 0.5 * h * b2, -k * (y + 0.5 * h * a2) - 0.1 * (v + 0.5 * h * b2) + np.cos(t + 0.5 * h)
        a4, b4 = v + h * b3, -k * (y + h * a3) - 0.1 * (v + h * b3) + np.cos(t + h)
        y = y + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
        v = v + h / 6 * (b1 + 2 * b2 + 2 * b3 + b4)
    return y


def newton(a):
    x = a
    fx = x * x * x + x - a
    while np.abs(fx) > 1e-9 * (1.0 + np.abs(a)):
        x = x - fx / (3 * x * x + 1)
        fx = x * x * x + x - a
    return x


def loss(params, x, y):
    return loss_parts(params["w1"], params["b1"], params["w2"], params["b2"], x, y)


def loss_parts(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    logits = logits - logits.max()
    lp = logits - np.log(np.sum(np.exp(logits)))
    return -np.sum(lp * y)


def jax_versions(jax):
    jnp, lax = jax.numpy, jax.lax

    def rk4_j(y0, v0, k, steps):
        h = 0.01

        def body(i, s):
            y, v = s
            t = i * h
            a1, b1 = v, -k * y - 0.1 * v + jnp.cos(t)
            a2, b2 = v + 0.5 * h * b1, -k * (y + 0.5 * h * a1) - 0.1 * (v + 0.5 * h * b1) + jnp.cos(t + 0.5 * h)
            a3, b3 = v + 0.5 * h * b2, -k * (y + 0.5 * h * a2) - 0.1 * (v + 0.5 * h * b2) + jnp.cos(t + 0.5 * h)
            a4, b4 = v + h * b3, -k * (y + h * a3) - 0.1 * (v + h * b3) + jnp.cos(t + h)
            return (y + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4), v + h / 6 * (b1 + 2 * b2 + 2 * b3 + b4))
        return lax.fori_loop(0, steps, body, (y0, v0))[0]

    def newton_j(a):
        def cond(s):
            return jnp.abs(s[1]) > 1e-9 * (1.0 + jnp.abs(a))

        def body(s):
            x, fx = s
            x = x - fx / (3 * x * x + 1)
            return x, x * x * x + x - a
        return lax.while_loop(cond, body, (a, a * a * a + a - a))[0]

    def loss_j(w1, b1, w2, b2, x, y):
        h = jnp.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        logits = logits - logits.max()
        lp = logits - jnp.log(jnp.sum(jnp.exp(logits)))
        return -jnp.sum(lp * y)

    def loss_jd(params, x, y):
        return loss_j(params["w1"], params["b1"], params["w2"], params["b2"], x, y)
    return rk4_j, newton_j, loss_j, loss_jd


def rows_for(name, strop_f, strop_args, jax_f, jax_args, check, jax):
    rows = []
    row, _, out = _timing.strop_jitted(lambda: strop.vmap(strop_f[0], **strop_f[1]),
                                       lambda g: g(*strop_args), f"{name}: strop vmap")
    if out is not None:
        check(out)
    rows.append(row)
    row, _, out = _timing.strop_jitted(lambda: strop.jit(strop.vmap(strop_f[0], **strop_f[1])),
                                       lambda g: g(*strop_args), f"{name}: strop jit(vmap)")
    if out is not None:
        check(out)
    rows.append(row)
    if jax is None:
        rows.append(Row(f"{name}: JAX jit(vmap)", None, "skipped: JAX not installed"))
    else:
        jf = jax.jit(jax_f)
        check(jax.tree_util.tree_map(np.asarray, jf(*jax_args)))
        rows.append(Row(f"{name}: JAX jit(vmap)", lambda: jax.block_until_ready(jf(*jax_args)),
                        "jax cpu", ref=True))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    ap.add_argument("--only", default="rk4,newton,mlp,mlp_w1", help="the workloads to run, by name")
    args = ap.parse_args()
    only = set(args.only.split(","))
    strop.config.update("enable_x64", True)
    jax = _timing.import_jax(x64=True)
    rng = np.random.default_rng(0)
    nb, steps, nn = (256, 200, 10_000) if args.quick else (4096, 2000, 1_000_000)

    print(f"vmap: rk4 {nb} lanes x {steps} steps; newton {nn:_} inputs; per-example MLP "
          f"gradients 64-128-10 batch 512")
    print(f"{_timing.versions()}; {_timing.load_average()} at start")
    rows = []
    jr = jax_versions(jax) if jax is not None else (None,) * 4

    y0, v0, k = rng.normal(size=nb), rng.normal(size=nb), rng.uniform(0.5, 2.0, nb)
    lanes = [0, nb // 2, nb - 1]

    def check_rk4(out):
        np.testing.assert_allclose(np.asarray(out)[lanes],
                                   [rk4(y0[i], v0[i], k[i], steps) for i in lanes], rtol=1e-9)
    if "rk4" in only:
        rows += rows_for("rk4", (rk4, dict(in_axes=(0, 0, 0, None))), (y0, v0, k, steps),
                         jax and jax.vmap(lambda a, b, c: jr[0](a, b, c, steps)), (y0, v0, k),
                         check_rk4, jax)

    a = np.exp(rng.uniform(-3, 12, nn))      # trip counts from a few to ~50

    def check_newton(out):
        out = np.asarray(out)
        np.testing.assert_allclose(out ** 3 + out, a, rtol=1e-8)
    if "newton" in only:
        rows += rows_for("newton", (newton, {}), (a,), jax and jax.vmap(jr[1]), (a,),
                         check_newton, jax)

    # timed now, under x64 (the MLP below runs in float32, where Newton's 1e-9 tolerance
    # would never be met)
    _timing.run_rows(rows, repeats=args.repeats, min_batch_s=0.05, budget_s=120)

    f32 = np.float32
    params = {"w1": (rng.normal(size=(64, 128)) * 0.1).astype(f32), "b1": np.zeros(128, f32),
              "w2": (rng.normal(size=(128, 10)) * 0.1).astype(f32), "b2": np.zeros(10, f32)}
    xs = rng.normal(size=(512, 64)).astype(f32)
    ys = np.eye(10, dtype=f32)[rng.integers(0, 10, 512)]
    parts = (params["w1"], params["b1"], params["w2"], params["b2"])
    strop.config.update("enable_x64", False)
    if jax is not None:
        jax.config.update("jax_enable_x64", False)
    one = [strop.grad(loss)(params, xs[i], ys[i]) for i in (0, 511)]

    def check_mlp(out):
        for k in (out if isinstance(out, dict) else {"w1": out}):
            got = np.asarray(out[k] if isinstance(out, dict) else out)[[0, 511]]
            np.testing.assert_allclose(got, [o[k] for o in one], rtol=2e-4, atol=1e-6)
    mlp_rows = []
    if "mlp" in only:
        mlp_rows += rows_for(
            "mlp", (strop.grad(loss), dict(in_axes=(None, 0, 0))), (params, xs, ys),
            jax and jax.vmap(jax.grad(jr[3]), in_axes=(None, 0, 0)), (params, xs, ys),
            check_mlp, jax)
    if "mlp_w1" in only:
        axes = (None,) * 4 + (0, 0)
        mlp_rows += rows_for(
            "mlp_w1", (strop.grad(loss_parts), dict(in_axes=axes)), parts + (xs, ys),
            jax and jax.vmap(jax.grad(jr[2]), in_axes=axes), parts + (xs, ys), check_mlp, jax)
    _timing.run_rows(mlp_rows, repeats=args.repeats, min_batch_s=0.05, budget_s=120)
    rows += mlp_rows
    print()
    _timing.table(rows, refs=())
    print()
    by = {r.name: r for r in rows}
    for name, target in (("rk4", 1.0), ("newton", 1 / 3), ("mlp", 1.3), ("mlp_w1", 1.3)):
        if name not in only:
            continue
        best = min((by[f"{name}: strop {v}"] for v in ("vmap", "jit(vmap)")
                    if by[f"{name}: strop {v}"].samples), key=lambda r: r.median, default=None)
        j = by[f"{name}: JAX jit(vmap)"]
        if best is None or not j.samples:
            print(f"{name}: not evaluated")
            continue
        ratio = best.median / j.median
        print(f"{name}: best strop ({best.name.split(': ')[1]}) / JAX = {ratio:.2f} "
              f"(target <= {target:.2f}) -> {'MET' if ratio <= target else 'MISSED'}")
    print(f"{_timing.load_average()} at end")


if __name__ == "__main__":
    main()
