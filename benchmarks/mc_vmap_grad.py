"""Per-path Monte Carlo sensitivities: a geometric Brownian motion stepped by Euler-Maruyama
over 100 steps, driven by each path's own array of normal increments, a softplus-smoothed
call payoff, and its gradient with respect to (s0, rate, sigma, strike) for each of 10,000
paths (float64 everywhere).

    python benchmarks/mc_vmap_grad.py [--paths P] [--steps S] [--repeats R] [--anatomy]

Rows:
  strop jit(vmap(grad))   strop.jit(strop.vmap(strop.grad(payoff), in_axes=(None, 0)))
  ..., 4 number args      the same with (s0, rate, sigma, strike) as four arguments instead
                          of params[0..3] (the first falls back to the python backend)
  Numba hand adjoint      the limit: a loop over paths, each a forward sweep storing s in a
                          preallocated buffer and the hand-written backward sweep, one
                          @numba.njit function (single thread)
  JAX jit(vmap(grad))     jax.jit(jax.vmap(jax.grad(...), in_axes=(None, 0))) with
                          lax.fori_loop (skipped without JAX)
  context rows            the forward pass alone (Numba path loop, strop jit(vmap)); with
                          --anatomy strop vmap(grad) on the python backend (one call)

Targets (issue 15): strop within 1.2x of the hand-written Numba adjoint, and at least as fast
as JAX.  Every gradient is checked against the hand adjoint (itself checked against central
finite differences) before anything is timed.
"""
import argparse
import math

import numba
import numpy as np

import _timing
from _timing import Row

import strop

T = 1.0          # maturity (years)
EPS = 2.0        # softplus width of the payoff's kink


# --- the user's function, as strop sees it -------------------------------------------------

def payoff(params, z):
    s0 = params[0]; rate = params[1]; sigma = params[2]; strike = params[3]
    n = z.shape[0]
    dt = T / n
    s = s0
    for i in range(n):
        s = s + rate * s * dt + sigma * s * np.sqrt(dt) * z[i]
    return np.exp(-rate * T) * EPS * np.log(1.0 + np.exp((s - strike) / EPS))


def payoff_args(s0, rate, sigma, strike, z):
    """The same payoff, the parameters as four numbers: no params[k] to differentiate (strop's
    batched cotangent of params[k], getitem_vjp_lanes, has no Numba version: jit falls back)."""
    n = z.shape[0]
    dt = T / n
    s = s0
    for i in range(n):
        s = s + rate * s * dt + sigma * s * np.sqrt(dt) * z[i]
    return np.exp(-rate * T) * EPS * np.log(1.0 + np.exp((s - strike) / EPS))


# --- the hand-written Numba limit --------------------------------------------------------------

@numba.njit(cache=False)
def payoff_numba(params, zs):
    s0, rate, sigma, strike = params[0], params[1], params[2], params[3]
    paths, n = zs.shape
    dt = T / n
    sq = math.sqrt(dt)
    out = np.empty(paths)
    for k in range(paths):
        s = s0
        for i in range(n):
            s = s + rate * s * dt + sigma * s * sq * zs[k, i]
        out[k] = math.exp(-rate * T) * EPS * math.log(1.0 + math.exp((s - strike) / EPS))
    return out


@numba.njit(cache=False)
def grad_numba(params, zs):
    """Per path: forward sweep storing s, then the adjoint sweep: d payoff / d params."""
    s0, rate, sigma, strike = params[0], params[1], params[2], params[3]
    paths, n = zs.shape
    dt = T / n
    sq = math.sqrt(dt)
    disc = math.exp(-rate * T)
    out = np.empty((paths, 4))
    ss = np.empty(n + 1)
    for k in range(paths):
        ss[0] = s0
        for i in range(n):
            ss[i + 1] = ss[i] * (1.0 + rate * dt + sigma * sq * zs[k, i])
        x = (ss[n] - strike) / EPS
        e = math.exp(x)
        soft = EPS * math.log(1.0 + e)
        sig = e / (1.0 + e)                      # d softplus / d x
        bs = disc * sig                          # d payoff / d s_n
        brate = -T * disc * soft
        bsigma = 0.0
        for i in range(n - 1, -1, -1):           # s_{i+1} = s_i (1 + rate dt + sigma sq z_i)
            brate += bs * ss[i] * dt
            bsigma += bs * ss[i] * sq * zs[k, i]
            bs *= 1.0 + rate * dt + sigma * sq * zs[k, i]
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = bs, brate, bsigma, -disc * sig
    return out


# --- JAX -----------------------------------------------------------------------------------------

JAX_ROW = "JAX jit(vmap(grad)), fori_loop"


def jax_rows(params, zs, ref):
    jax = _timing.import_jax(x64=True)
    if jax is None:
        return [Row(JAX_ROW, None, "skipped: JAX not installed")]
    import jax.numpy as jnp
    from jax import lax

    def payoff_jax(params, z):
        s0, rate, sigma, strike = params[0], params[1], params[2], params[3]
        n = z.shape[0]
        dt = T / n

        def body(i, s):
            return s + rate * s * dt + sigma * s * jnp.sqrt(dt) * z[i]
        s = lax.fori_loop(0, n, body, s0)
        return jnp.exp(-rate * T) * EPS * jnp.log(1.0 + jnp.exp((s - strike) / EPS))

    g = jax.jit(jax.vmap(jax.grad(payoff_jax), in_axes=(None, 0)))
    pj, zj = jnp.asarray(params), jnp.asarray(zs)
    np.testing.assert_allclose(np.asarray(g(pj, zj)), ref, rtol=1e-8, atol=1e-12)
    return [Row(JAX_ROW, lambda: g(pj, zj).block_until_ready(), "jax cpu, x64")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--paths", type=int, default=10_000)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--anatomy", action="store_true", help="also time the python backend")
    args = ap.parse_args()
    strop.config.update("enable_x64", True)
    params = np.array([100.0, 0.03, 0.2, 105.0])           # s0, rate, sigma, strike
    zs = np.random.default_rng(0).standard_normal((args.paths, args.steps))

    # the reference: hand adjoint, checked against central differences of the forward pass
    ref = grad_numba(params, zs)
    fd = np.empty((args.paths, 4))
    for j in range(4):
        e = np.zeros(4)
        e[j] = 1e-6 * params[j]
        fd[:, j] = (payoff_numba(params + e, zs) - payoff_numba(params - e, zs)) / (2 * e[j])
    np.testing.assert_allclose(ref, fd, rtol=1e-5, atol=1e-6)   # rounding of tiny steps

    def check(out):
        np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-8, atol=1e-12)

    rows = [Row("Numba hand adjoint (limit)", lambda: grad_numba(params, zs), "numba njit",
                ref=True)]
    row, _, out = _timing.strop_jitted(
        lambda: strop.jit(strop.vmap(strop.grad(payoff), in_axes=(None, 0))),
        lambda f: f(params, zs), "strop jit(vmap(grad))")
    if out is not None:
        check(out)
    rows.insert(0, row)
    row, _, out = _timing.strop_jitted(
        lambda: strop.jit(strop.vmap(strop.grad(payoff_args, argnums=(0, 1, 2, 3)),
                                     in_axes=(None, None, None, None, 0))),
        lambda f: f(*params, zs), "strop jit(vmap(grad)), 4 number args")
    if out is not None:
        check(np.stack(out, axis=1))
    rows.insert(1, row)
    rows += jax_rows(params, zs, ref)

    rows.append(Row("forward only: Numba", lambda: payoff_numba(params, zs), "numba njit"))
    row, _, out = _timing.strop_jitted(
        lambda: strop.jit(strop.vmap(payoff, in_axes=(None, 0))), lambda f: f(params, zs),
        "forward only: strop jit(vmap)")
    if out is not None:
        np.testing.assert_allclose(out, payoff_numba(params, zs), rtol=1e-12)
    rows.append(row)

    print(f"mc_vmap_grad: GBM Euler-Maruyama, {args.paths:_} paths x {args.steps} steps, "
          f"softplus call payoff, float64, per-path gradient w.r.t. (s0, rate, sigma, strike)")
    print(f"{_timing.versions()}; {_timing.load_average()} at start")
    _timing.run_rows(rows, repeats=args.repeats, min_batch_s=0.05, budget_s=60)

    if args.anatomy:
        slow, _, out = _timing.strop_jitted(
            lambda: strop.vmap(strop.grad(payoff), in_axes=(None, 0)), lambda f: f(params, zs),
            "strop vmap(grad) (python backend)")
        if out is not None:
            check(out)
            _timing.run_rows([slow], repeats=1, warmup=0, min_batch_s=0)
        rows.append(slow)

    print()
    _timing.table(rows, refs=("Numba hand adjoint (limit)", JAX_ROW))
    _timing.targets(rows, "strop jit(vmap(grad))", "Numba hand adjoint (limit)", JAX_ROW)
    print(f"{_timing.load_average()} at end")


if __name__ == "__main__":
    main()
