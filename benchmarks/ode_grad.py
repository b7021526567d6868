"""Gradient of a long scalar recurrence: a damped pendulum integrated by semi-implicit Euler
for 100,000 steps, and the gradient of its final energy with respect to the initial angle and
the damping (float64 everywhere).

    python benchmarks/ode_grad.py [--steps N] [--repeats R] [--anatomy]

Rows:
  strop jit(grad)       strop.jit(strop.grad(pendulum, argnums=(0, 1))) on the plain loop
  Numba hand adjoint    the limit: forward loop storing theta and omega in preallocated
                        arrays, then the hand-written backward loop, one @numba.njit function
  JAX jit(grad)         jax.jit(jax.grad(...)) with lax.fori_loop (skipped without JAX)
  context rows          the forward pass alone (Numba, strop.jit), and strop grad on the
                        python backend (one timed call: it takes seconds)
  anatomy rows          with --anatomy: the hand adjoint keeping strop's 7 taped values or
                        only the 2 it needs, on lists (append/pop, as strop's generated code)
                        or preallocated arrays: what strop's tapes cost

Targets (the issue): strop within 1.2x of the hand-written Numba adjoint, and at least as fast
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


# --- the user's function, as strop sees it -------------------------------------------------

def pendulum(theta0, damping, dt, n):
    theta = theta0
    omega = 0.0
    for i in range(n):
        omega = omega - dt * (np.sin(theta) + damping * omega)
        theta = theta + dt * omega
    return 0.5 * omega ** 2 + (1.0 - np.cos(theta))


# --- the hand-written Numba limit --------------------------------------------------------------

@numba.njit(cache=False)
def forward_numba(theta0, damping, dt, n):
    theta, omega = theta0, 0.0
    for i in range(n):
        omega = omega - dt * (math.sin(theta) + damping * omega)
        theta = theta + dt * omega
    return 0.5 * omega ** 2 + (1.0 - math.cos(theta))


@numba.njit(cache=False)
def grad_numba(theta0, damping, dt, n):
    """Forward sweep storing the trajectory, then the adjoint sweep: d E / d (theta0, damping)."""
    thetas = np.empty(n + 1)
    omegas = np.empty(n + 1)
    thetas[0], omegas[0] = theta0, 0.0
    for i in range(n):
        omegas[i + 1] = omegas[i] - dt * (math.sin(thetas[i]) + damping * omegas[i])
        thetas[i + 1] = thetas[i] + dt * omegas[i + 1]
    bt = math.sin(thetas[n])          # dE/dtheta_n
    bo = omegas[n]                    # dE/domega_n
    bc = 0.0
    for i in range(n - 1, -1, -1):
        bo += dt * bt                 # theta[i+1] = theta[i] + dt * omega[i+1]
        bt -= dt * math.cos(thetas[i]) * bo      # omega[i+1] = omega[i] - dt*(sin(theta[i])
        bc -= dt * omegas[i] * bo                #                       + damping*omega[i])
        bo *= 1.0 - dt * damping
    return bt, bc


# --- anatomy: the hand adjoint with strop's tapes, to price them (--anatomy) -------------------

VARIANT = """
def variant(theta0, damping, dt, n):
    {new}
    theta, omega = theta0, 0.0
    for i in range(n):
        t1 = math.sin(theta)
        t2 = damping * omega
        t3 = t1 + t2
        t4 = dt * t3
        {push_omega}
        omega = omega - t4
        t5 = dt * omega
        {push_theta}
        theta = theta + t5
        {push_temps}
    bt, bo, bc = math.sin(theta), omega, 0.0
    for i in range(n - 1, -1, -1):
        {pop_temps}
        bo += dt * bt
        {pop_theta}
        {pop_omega}
        bt -= dt * math.cos(theta) * bo
        bc -= dt * omega * bo
        bo *= 1.0 - dt * damping
    return bt, bc
"""


def tape_variant(tapes, kind):
    """The hand adjoint with the forward values kept on tapes as strop keeps them: ``tapes``
    names which of strop's 7 taped values are kept (strop keeps all 7; the adjoint needs only
    theta and omega), ``kind`` "list" (append/pop, as strop's generated code) or "array"
    (preallocated, indexed)."""
    fmt = {"new": "tape_{0} = []", "push": "tape_{0}.append({0})", "pop": "{0} = tape_{0}.pop()"}
    if kind == "array":
        fmt = {"new": "tape_{0} = np.empty(n)", "push": "tape_{0}[i] = {0}",
               "pop": "{0} = tape_{0}[i]"}

    def lines(what, names, indent):
        return ("\n" + " " * indent).join(
            [fmt[what].format(v) for v in names if v in tapes] or ["pass"])
    temps = ("t1", "t2", "t3", "t4", "t5")
    src = VARIANT.format(new=lines("new", ALL_TAPES, 4),
                         push_omega=lines("push", ["omega"], 8),
                         push_theta=lines("push", ["theta"], 8),
                         push_temps=lines("push", temps, 8),
                         pop_temps=lines("pop", temps, 8),
                         pop_theta=lines("pop", ["theta"], 8),
                         pop_omega=lines("pop", ["omega"], 8))
    ns = {"math": math, "np": np}
    exec(src, ns)
    return numba.njit(ns["variant"])


ALL_TAPES = ("omega", "theta", "t1", "t2", "t3", "t4", "t5")


def anatomy_rows(args, ref):
    rows = []
    for tapes, label in ((ALL_TAPES, "7"), (("omega", "theta"), "2")):
        for kind in ("list", "array"):
            f = tape_variant(tapes, kind)
            np.testing.assert_allclose(f(*args), ref, rtol=1e-9)
            rows.append(Row(f"anatomy: hand adjoint, {label} {kind} tapes", lambda f=f: f(*args),
                            "numba njit"))
    return rows


# --- JAX -----------------------------------------------------------------------------------------

def jax_rows(theta0, damping, dt, n, expect):
    jax = _timing.import_jax(x64=True)
    if jax is None:
        return [Row("JAX jit(grad), lax.fori_loop", None, "skipped: JAX not installed")]
    import jax.numpy as jnp
    from jax import lax

    def energy(theta0, damping):
        def body(i, state):
            theta, omega = state
            omega = omega - dt * (jnp.sin(theta) + damping * omega)
            theta = theta + dt * omega
            return theta, omega
        theta, omega = lax.fori_loop(0, n, body, (theta0, jnp.zeros_like(theta0)))
        return 0.5 * omega ** 2 + (1.0 - jnp.cos(theta))

    g = jax.jit(jax.grad(energy, argnums=(0, 1)))
    a, b = jnp.float64(theta0), jnp.float64(damping)
    got = [float(v) for v in g(a, b)]
    np.testing.assert_allclose(got, expect, rtol=1e-9, atol=1e-12)

    def call():
        out = g(a, b)
        out[0].block_until_ready(), out[1].block_until_ready()
    return [Row("JAX jit(grad), lax.fori_loop", call, "jax cpu, x64")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--anatomy", action="store_true",
                    help="also time the hand adjoint with strop's 7 tapes / 2 tapes, as lists "
                         "/ preallocated arrays (prices strop's tapes)")
    args = ap.parse_args()
    n = args.steps
    theta0, damping, dt = 1.0, 0.05, 1e-3          # 100 s of motion, energy decays ~e^-5
    strop.config.update("enable_x64", True)

    # the reference: hand adjoint, checked against central differences of the forward pass
    ref = np.array(grad_numba(theta0, damping, dt, n))
    h = 1e-6
    fd = [(forward_numba(theta0 + h, damping, dt, n) - forward_numba(theta0 - h, damping, dt, n))
          / (2 * h),
          (forward_numba(theta0, damping + h, dt, n) - forward_numba(theta0, damping - h, dt, n))
          / (2 * h)]
    np.testing.assert_allclose(ref, fd, rtol=1e-5)

    def check(out):
        np.testing.assert_allclose(np.array(out, dtype=float), ref, rtol=1e-9, atol=1e-12)

    rows = [Row("Numba hand adjoint (limit)", lambda: grad_numba(theta0, damping, dt, n),
                "numba njit", ref=True)]

    row, g, out = _timing.strop_jitted(
        lambda: strop.jit(strop.grad(pendulum, argnums=(0, 1))),
        lambda f: f(theta0, damping, dt, n), "strop jit(grad)")
    if out is not None:
        check(out)
    rows.insert(0, row)
    rows += jax_rows(theta0, damping, dt, n, ref)

    # context: the forward pass alone
    rows.append(Row("forward only: Numba", lambda: forward_numba(theta0, damping, dt, n),
                    "numba njit"))
    row, _, out = _timing.strop_jitted(lambda: strop.jit(pendulum),
                                       lambda f: f(theta0, damping, dt, n),
                                       "forward only: strop jit")
    if out is not None:
        np.testing.assert_allclose(out, forward_numba(theta0, damping, dt, n), rtol=1e-12)
    rows.append(row)
    if args.anatomy:
        rows += anatomy_rows((theta0, damping, dt, n), ref)

    print(f"ode_grad: damped pendulum, {n:_} semi-implicit Euler steps, float64, gradient of "
          f"the final energy w.r.t. (theta0, damping)")
    print(f"{_timing.versions()}; {_timing.load_average()} at start")
    _timing.run_rows(rows, repeats=args.repeats, min_batch_s=0.05, budget_s=60)

    # the python backend is ~1000x slower: a few single calls, outside the interleaved rounds
    slow, _, out = _timing.strop_jitted(lambda: strop.grad(pendulum, argnums=(0, 1)),
                                        lambda f: f(theta0, damping, dt, n),
                                        "strop grad (python backend)")
    if out is not None:
        check(out)
        _timing.run_rows([slow], repeats=1, warmup=0, min_batch_s=0)
    rows.append(slow)

    print()
    _timing.table(rows, refs=("Numba hand adjoint (limit)", "JAX jit(grad), lax.fori_loop"))
    by = {r.name: r for r in rows}
    s, nb = by["strop jit(grad)"], by["Numba hand adjoint (limit)"]
    jx = by["JAX jit(grad), lax.fori_loop"]
    print()
    if s.samples:
        r = s.median / nb.median
        print(f"target strop <= 1.2x hand Numba: {r:.2f}x -> {'MET' if r <= 1.2 else 'MISSED'}")
        if jx.samples:
            r = s.median / jx.median
            print(f"target strop <= JAX: {r:.2f}x -> {'MET' if r <= 1.0 else 'MISSED'}")
        else:
            print(f"target strop <= JAX: not evaluated ({jx.status})")
    else:
        print(f"strop jit(grad) not timed: {s.status}")
    print(f"{_timing.load_average()} at end")


if __name__ == "__main__":
    main()
