"""Gradient of a GARCH(1,1) negative log-likelihood: a sequential scalar recurrence over
20,000 returns, differentiated with respect to the three parameters (float64 everywhere).

    python benchmarks/garch_grad.py [--n N] [--repeats R] [--anatomy]

Rows:
  strop jit(grad)       strop.jit(strop.grad(nll)) on the loop as a user writes it
  Numba hand adjoint    the limit: forward loop storing h in a preallocated array, then the
                        hand-written backward loop, one @numba.njit function
  JAX jit(grad)         jax.jit(jax.grad(...)) with lax.scan over (r[t-1], r[t]) (skipped
                        without JAX)
  context rows          the forward pass alone (Numba, strop.jit)
  anatomy rows          with --anatomy: strop jit(grad) of the same loop written over
                        range(n - 1) (strop keeps tapes as preallocated arrays only for loops
                        over range(n)), the hand adjoint keeping strop's 10 list tapes (prices
                        them), and strop grad on the python backend (one call)

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


# --- the user's function, as strop sees it -------------------------------------------------

def nll(p, r):
    w = p[0]; a = p[1]; b = p[2]
    n = r.shape[0]
    h = np.var(r)
    ll = 0.0
    for t in range(1, n):
        h = w + a * r[t - 1] ** 2 + b * h
        ll += np.log(h) + r[t] ** 2 / h
    return 0.5 * ll


def nll_from_zero(p, r):
    """The same likelihood, its loop over range(n - 1) (anatomy: array tapes)."""
    w = p[0]; a = p[1]; b = p[2]
    n = r.shape[0]
    h = np.var(r)
    ll = 0.0
    for t in range(n - 1):
        h = w + a * r[t] ** 2 + b * h
        ll += np.log(h) + r[t + 1] ** 2 / h
    return 0.5 * ll


# --- the hand-written Numba limit --------------------------------------------------------------

@numba.njit(cache=False)
def nll_numba(p, r):
    w, a, b = p[0], p[1], p[2]
    h = np.var(r)
    ll = 0.0
    for t in range(1, r.shape[0]):
        h = w + a * r[t - 1] ** 2 + b * h
        ll += math.log(h) + r[t] ** 2 / h
    return 0.5 * ll


@numba.njit(cache=False)
def grad_numba(p, r):
    """Forward sweep storing h, then the adjoint sweep: d nll / d (w, a, b)."""
    w, a, b = p[0], p[1], p[2]
    n = r.shape[0]
    hs = np.empty(n)
    hs[0] = np.var(r)
    for t in range(1, n):
        hs[t] = w + a * r[t - 1] ** 2 + b * hs[t - 1]
    bh = 0.0
    bw = ba = bb = 0.0
    for t in range(n - 1, 0, -1):
        h = hs[t]
        bh += 0.5 * (1.0 / h - r[t] ** 2 / (h * h))     # ll term of step t
        bw += bh                                        # h_t = w + a r_{t-1}^2 + b h_{t-1}
        ba += bh * r[t - 1] ** 2
        bb += bh * hs[t - 1]
        bh *= b
    out = np.empty(3)
    out[0], out[1], out[2] = bw, ba, bb
    return out


# --- anatomy: the hand adjoint with strop's tapes, to price them (--anatomy) -------------------

@numba.njit(cache=False)
def grad_numba_10_lists(p, r):
    """The hand adjoint keeping what strop's generated code keeps: 10 list tapes (h, ll and 8
    temporaries, most read back only for their shape), append going forward, pop going back."""
    w, a, b = p[0], p[1], p[2]
    n = r.shape[0]
    th, tll, t10, t11, t12, t4, t5, t6, t7, t8 = [0.0], [0.0], [0.0], [0.0], [0.0], [0.0], \
        [0.0], [0.0], [0.0], [0.0]
    for tape in (th, tll, t10, t11, t12, t4, t5, t6, t7, t8):
        tape.pop()
    h = np.var(r)
    ll = 0.0
    for t in range(1, n):
        x4 = r[t - 1] ** 2
        x5 = a * x4
        x6 = w + x5
        x7 = b * h
        th.append(h)
        h = x6 + x7
        x8 = math.log(h)
        x10 = r[t] ** 2
        x11 = x10 / h
        x12 = x8 + x11
        tll.append(ll)
        ll = ll + x12
        t10.append(x10); t11.append(x11); t12.append(x12); t4.append(x4); t5.append(x5)
        t6.append(x6); t7.append(x7); t8.append(x8)
    bll = 0.5
    bw = ba = bb = bh = 0.0
    for t in range(n - 1, 0, -1):
        x10 = t10.pop(); t11.pop(); t12.pop(); x4 = t4.pop(); t5.pop(); t6.pop(); t7.pop()
        t8.pop(); tll.pop()
        bh += -bll * x10 / h ** 2 + bll / h
        h = th.pop()
        bb += bh * h
        bw += bh
        ba += bh * x4
        bh = b * bh
    out = np.empty(3)
    out[0], out[1], out[2] = bw, ba, bb
    return out


# --- JAX -----------------------------------------------------------------------------------------

JAX_ROW = "JAX jit(grad), lax.scan"


def jax_rows(p, r, expect):
    jax = _timing.import_jax(x64=True)
    if jax is None:
        return [Row(JAX_ROW, None, "skipped: JAX not installed")]
    import jax.numpy as jnp
    from jax import lax

    def nll_jax(p, r):
        w, a, b = p[0], p[1], p[2]

        def step(carry, rr):
            h, ll = carry
            prev, cur = rr
            h = w + a * prev ** 2 + b * h
            return (h, ll + jnp.log(h) + cur ** 2 / h), None
        (h, ll), _ = lax.scan(step, (jnp.var(r), jnp.zeros((), r.dtype)), (r[:-1], r[1:]))
        return 0.5 * ll

    g = jax.jit(jax.grad(nll_jax))
    pj, rj = jnp.asarray(p), jnp.asarray(r)
    np.testing.assert_allclose(np.asarray(g(pj, rj)), expect, rtol=1e-8)
    return [Row(JAX_ROW, lambda: g(pj, rj).block_until_ready(), "jax cpu, x64")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--anatomy", action="store_true",
                    help="also time strop on the loop over range(n - 1), and the python backend")
    args = ap.parse_args()
    strop.config.update("enable_x64", True)

    # returns of a GARCH(1,1) with w=2e-6, a=0.08, b=0.9; the gradient is taken elsewhere
    rng = np.random.default_rng(0)
    n, w0, a0, b0 = args.n, 2e-6, 0.08, 0.9
    r = np.empty(n)
    h = w0 / (1 - a0 - b0)
    for t in range(n):
        r[t] = math.sqrt(h) * rng.standard_normal()
        h = w0 + a0 * r[t] ** 2 + b0 * h
    p = np.array([3e-6, 0.1, 0.85])

    # the reference: hand adjoint, checked against central differences of the forward pass
    ref = grad_numba(p, r)
    fd = []
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1e-6 * p[k]
        fd.append((nll_numba(p + e, r) - nll_numba(p - e, r)) / (2 * e[k]))
    np.testing.assert_allclose(ref, fd, rtol=1e-5)

    def check(out):
        np.testing.assert_allclose(np.asarray(out, dtype=float), ref, rtol=1e-8)

    rows = [Row("Numba hand adjoint (limit)", lambda: grad_numba(p, r), "numba njit", ref=True)]
    row, _, out = _timing.strop_jitted(lambda: strop.jit(strop.grad(nll)),
                                       lambda f: f(p, r), "strop jit(grad)")
    if out is not None:
        check(out)
    rows.insert(0, row)
    rows += jax_rows(p, r, ref)

    rows.append(Row("forward only: Numba", lambda: nll_numba(p, r), "numba njit"))
    row, _, out = _timing.strop_jitted(lambda: strop.jit(nll), lambda f: f(p, r),
                                       "forward only: strop jit")
    if out is not None:
        np.testing.assert_allclose(out, nll_numba(p, r), rtol=1e-12)
    rows.append(row)
    if args.anatomy:
        row, _, out = _timing.strop_jitted(lambda: strop.jit(strop.grad(nll_from_zero)),
                                           lambda f: f(p, r),
                                           "anatomy: strop jit(grad), range(n - 1)")
        if out is not None:
            check(out)
        rows.append(row)
        np.testing.assert_allclose(grad_numba_10_lists(p, r), ref, rtol=1e-10)
        rows.append(Row("anatomy: hand adjoint, strop's 10 list tapes",
                        lambda: grad_numba_10_lists(p, r), "numba njit"))

    print(f"garch_grad: GARCH(1,1) negative log-likelihood over {n:_} returns, float64, "
          f"gradient w.r.t. (w, a, b)")
    print(f"{_timing.versions()}; {_timing.load_average()} at start")
    _timing.run_rows(rows, repeats=args.repeats, min_batch_s=0.05, budget_s=60)

    if args.anatomy:       # the python backend: a few single calls, outside the rounds
        slow, _, out = _timing.strop_jitted(lambda: strop.grad(nll), lambda f: f(p, r),
                                            "strop grad (python backend)")
        if out is not None:
            check(out)
            _timing.run_rows([slow], repeats=1, warmup=0, min_batch_s=0)
        rows.append(slow)

    print()
    _timing.table(rows, refs=("Numba hand adjoint (limit)", JAX_ROW))
    _timing.targets(rows, "strop jit(grad)", "Numba hand adjoint (limit)", JAX_ROW)
    print(f"{_timing.load_average()} at end")


if __name__ == "__main__":
    main()
