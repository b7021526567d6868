"""Gradient through an explicit 1-D heat equation stepper written with in-place slice updates:
400 steps on 2,000 cells, the gradient of sum(u**2) with respect to the initial field u0 and
the diffusion number alpha (float64 everywhere).

    python benchmarks/heat_grad.py [--cells N] [--steps S] [--repeats R] [--anatomy]

Rows:
  strop jit(grad)       strop.jit(strop.grad(heat, argnums=(0, 1))) on the in-place loop
  Numba hand adjoint    the limit: forward sweep storing every step's field in a preallocated
                        (steps+1, cells) array, then the hand-written transposed stencil, cell
                        loops in one @numba.njit function
  JAX jit(grad)         jax.jit(jax.grad(...)) with lax.fori_loop and u.at[1:-1].set(...)
                        (skipped without JAX)
  context rows          the forward pass alone (Numba, strop.jit); with --anatomy the hand
                        adjoint written with slices (array expressions, as strop's code is), and
                        strop grad on the python backend (one call)

Targets (issue 15): strop within 1.2x of the hand-written Numba adjoint, and at least as fast
as JAX.  Every gradient is checked against the hand adjoint (itself checked against central
finite differences) before anything is timed.
"""
import argparse

import numba
import numpy as np

import _timing
from _timing import Row

import strop


# --- the user's function, as strop sees it -------------------------------------------------

def heat(u0, alpha, steps):
    u = u0.copy()
    for _ in range(steps):
        lap = u[2:] - 2 * u[1:-1] + u[:-2]
        u[1:-1] = u[1:-1] + alpha * lap
    return np.sum(u ** 2)


# --- the hand-written Numba limit --------------------------------------------------------------

@numba.njit(cache=False)
def heat_numba(u0, alpha, steps):
    u = u0.copy()
    new = u0.copy()
    m = u.shape[0]
    for _ in range(steps):
        for i in range(1, m - 1):
            new[i] = u[i] + alpha * (u[i + 1] - 2 * u[i] + u[i - 1])
        u, new = new, u
    return np.sum(u ** 2)


@numba.njit(cache=False)
def grad_numba(u0, alpha, steps):
    """Forward sweep storing every field, then the adjoint sweep: d loss / d (u0, alpha)."""
    m = u0.shape[0]
    us = np.empty((steps + 1, m))
    us[0] = u0
    for k in range(steps):
        u, new = us[k], us[k + 1]
        new[0], new[m - 1] = u[0], u[m - 1]
        for i in range(1, m - 1):
            new[i] = u[i] + alpha * (u[i + 1] - 2 * u[i] + u[i - 1])
    g = 2 * us[steps]
    gn = np.empty(m)
    balpha = 0.0
    for k in range(steps - 1, -1, -1):
        u = us[k]
        # u'[i] = u[i] + alpha * lap[i] on the interior: g_u = g + alpha * L^T (g on interior)
        gn[0] = g[0] + alpha * g[1]
        gn[m - 1] = g[m - 1] + alpha * g[m - 2]
        gn[1] = g[1] + alpha * (-2 * g[1] + g[2])
        gn[m - 2] = g[m - 2] + alpha * (g[m - 3] - 2 * g[m - 2])
        for i in range(2, m - 2):
            gn[i] = g[i] + alpha * (g[i - 1] - 2 * g[i] + g[i + 1])
        for i in range(1, m - 1):
            balpha += g[i] * (u[i + 1] - 2 * u[i] + u[i - 1])
        g, gn = gn, g
    return g, balpha


@numba.njit(cache=False)
def grad_numba_slices(u0, alpha, steps):
    """The same adjoint written with slices as strop writes it (one temporary array per
    operation, no cell loops), keeping only the fields: the best strop could do without
    fusing its statements into loops (--anatomy)."""
    m = u0.shape[0]
    us = np.empty((steps + 1, m))
    us[0] = u0
    for k in range(steps):
        u = us[k]
        us[k + 1] = u
        us[k + 1, 1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    g = 2 * us[steps]
    balpha = 0.0
    for k in range(steps - 1, -1, -1):
        u = us[k]
        gi = g[1:-1].copy()
        balpha += np.sum(gi * (u[2:] - 2 * u[1:-1] + u[:-2]))
        g[2:] += alpha * gi
        g[1:-1] -= 2 * alpha * gi
        g[:-2] += alpha * gi
    return g, balpha


# --- JAX -----------------------------------------------------------------------------------------

JAX_ROW = "JAX jit(grad), fori_loop + .at[].set"


def jax_rows(u0, alpha, steps, ref):
    jax = _timing.import_jax(x64=True)
    if jax is None:
        return [Row(JAX_ROW, None, "skipped: JAX not installed")]
    import jax.numpy as jnp
    from jax import lax

    def heat_jax(u0, alpha):
        def body(_, u):
            lap = u[2:] - 2 * u[1:-1] + u[:-2]
            return u.at[1:-1].set(u[1:-1] + alpha * lap)
        return jnp.sum(lax.fori_loop(0, steps, body, u0) ** 2)

    g = jax.jit(jax.grad(heat_jax, argnums=(0, 1)))
    uj, aj = jnp.asarray(u0), jnp.float64(alpha)
    gu, ga = g(uj, aj)
    np.testing.assert_allclose(np.asarray(gu), ref[0], rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(float(ga), ref[1], rtol=1e-8)

    def call():
        a, b = g(uj, aj)
        a.block_until_ready(), b.block_until_ready()
    return [Row(JAX_ROW, call, "jax cpu, x64")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=2_000)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--anatomy", action="store_true", help="also time the slice-written hand adjoint and the python backend")
    args = ap.parse_args()
    strop.config.update("enable_x64", True)
    m, steps, alpha = args.cells, args.steps, 0.2        # alpha <= 0.5: the scheme is stable
    x = np.linspace(0.0, 1.0, m)
    u0 = np.exp(-200 * (x - 0.3) ** 2) + 0.5 * np.sin(7 * np.pi * x) ** 2

    # the reference: hand adjoint, checked against central differences of the forward pass
    ref = grad_numba(u0, alpha, steps)
    rng = np.random.default_rng(0)
    d = rng.standard_normal(m)              # one directional derivative for u0, one for alpha
    eps = 1e-6
    fd_u = (heat_numba(u0 + eps * d, alpha, steps) - heat_numba(u0 - eps * d, alpha, steps)) / (
        2 * eps)
    fd_a = (heat_numba(u0, alpha + eps, steps) - heat_numba(u0, alpha - eps, steps)) / (2 * eps)
    np.testing.assert_allclose([ref[0] @ d, ref[1]], [fd_u, fd_a], rtol=1e-5)

    def check(out):
        np.testing.assert_allclose(np.asarray(out[0]), ref[0], rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(float(out[1]), ref[1], rtol=1e-8)

    rows = [Row("Numba hand adjoint (limit)", lambda: grad_numba(u0, alpha, steps), "numba njit",
                ref=True)]
    row, _, out = _timing.strop_jitted(lambda: strop.jit(strop.grad(heat, argnums=(0, 1))),
                                       lambda f: f(u0, alpha, steps), "strop jit(grad)")
    if out is not None:
        check(out)
    rows.insert(0, row)
    rows += jax_rows(u0, alpha, steps, ref)

    rows.append(Row("forward only: Numba", lambda: heat_numba(u0, alpha, steps), "numba njit"))
    row, _, out = _timing.strop_jitted(lambda: strop.jit(heat), lambda f: f(u0, alpha, steps),
                                       "forward only: strop jit")
    if out is not None:
        np.testing.assert_allclose(out, heat_numba(u0, alpha, steps), rtol=1e-12)
    rows.append(row)
    if args.anatomy:
        check(grad_numba_slices(u0, alpha, steps))
        rows.append(Row("anatomy: hand adjoint with slices", lambda: grad_numba_slices(
            u0, alpha, steps), "numba njit"))

    print(f"heat_grad: explicit 1-D heat equation, {m:_} cells, {steps} steps, in-place slice "
          f"updates, float64, gradient of sum(u**2) w.r.t. (u0, alpha)")
    print(f"{_timing.versions()}; {_timing.load_average()} at start")
    _timing.run_rows(rows, repeats=args.repeats, min_batch_s=0.05, budget_s=60)

    if args.anatomy:
        slow, _, out = _timing.strop_jitted(lambda: strop.grad(heat, argnums=(0, 1)),
                                            lambda f: f(u0, alpha, steps),
                                            "strop grad (python backend)")
        if out is not None:
            check(out)
            _timing.run_rows([slow], repeats=3, warmup=0, min_batch_s=0)
        rows.append(slow)

    print()
    _timing.table(rows, refs=("Numba hand adjoint (limit)", JAX_ROW))
    _timing.targets(rows, "strop jit(grad)", "Numba hand adjoint (limit)", JAX_ROW)
    print(f"{_timing.load_average()} at end")


if __name__ == "__main__":
    main()
