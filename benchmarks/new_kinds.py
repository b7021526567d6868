"""Workloads of kinds the other benchmarks do not have (issue 35), each written the way its
users write it, float64: `strop.jit(strop.grad(f))` against `numba.njit(f)` (the plain forward
function, the bound `jit(grad) <= 4x njit` is read against) and JAX's `jax.jit(jax.grad(f))`
of the same code with `np` bound to `jax.numpy` (ported by changing the import only), its long
loops written as `lax.fori_loop` (unrolled, XLA took minutes to compile them).

    python benchmarks/new_kinds.py [--only NAME ...] [--repeats R]

Every strop gradient is checked against strop's python backend and central differences
before anything is timed; a row that fell back or ran a helper in an object-mode island says
so in its "ran as" column (the PerformanceWarning is recorded, not hidden).
"""
import argparse
import types
import warnings

import numba
import numpy as np

import _timing
from _timing import Row

import strop
from strop.errors import PerformanceWarning


def gray_scott(p, U0, V0):
    """Reaction-diffusion on a periodic grid, the Laplacian by np.roll (20 steps)."""
    F, k = p[0], p[1]
    U, V = U0, V0
    for _ in range(20):
        lapU = (np.roll(U, 1, 0) + np.roll(U, -1, 0) + np.roll(U, 1, 1) + np.roll(U, -1, 1)
                - 4 * U)
        lapV = (np.roll(V, 1, 0) + np.roll(V, -1, 0) + np.roll(V, 1, 1) + np.roll(V, -1, 1)
                - 4 * V)
        uvv = U * V * V
        U = U + 0.2 * lapU - uvv + F * (1 - U)
        V = V + 0.1 * lapV + uvv - (F + k) * V
    return np.sum(V ** 2)


def kalman(theta, ys):
    """A local-linear-trend Kalman filter's log-likelihood: 2x2 matrices, a solve per step."""
    a, q, r = theta[0], theta[1], theta[2]
    A = np.array([[1.0, 1.0], [0.0, a]])
    H = np.array([[1.0, 0.0]])
    m, P = np.zeros(2), np.eye(2)
    ll = 0.0
    for t in range(ys.shape[0]):
        m = A @ m
        P = A @ P @ A.T + q * np.eye(2)
        S = H @ P @ H.T + r
        v = ys[t] - H @ m
        K = np.linalg.solve(S, H @ P).T
        m = m + K @ v
        P = P - K @ H @ P
        ll = ll - 0.5 * (np.log(S[0, 0]) + v[0] ** 2 / S[0, 0])
    return ll


def lorenz(s0, dt):
    """Lorenz-63 by RK4, the state built by np.array([...]) each stage (200 steps)."""
    def f(s):
        return np.array([10.0 * (s[1] - s[0]), s[0] * (28.0 - s[2]) - s[1],
                         s[0] * s[1] - 8.0 / 3.0 * s[2]])
    s = s0
    for _ in range(200):
        k1 = f(s)
        k2 = f(s + dt / 2 * k1)
        k3 = f(s + dt / 2 * k2)
        k4 = f(s + dt * k3)
        s = s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.sum(s ** 2)


def lennard_jones(x):
    """Pairwise Lennard-Jones energy of 64 particles by broadcasting."""
    d = x[:, None, :] - x[None, :, :]
    r2 = np.sum(d ** 2, axis=-1) + np.eye(x.shape[0])
    inv6 = (1.0 / r2) ** 3
    e = 4.0 * (inv6 ** 2 - inv6) * (1.0 - np.eye(x.shape[0]))
    return 0.5 * np.sum(e)


def verlet(x0, v0):
    """Velocity Verlet of 256 anharmonic oscillators (100 steps)."""
    x, v = x0, v0
    dt = 0.01
    a = -x - 0.1 * x ** 3
    for _ in range(100):
        x = x + v * dt + 0.5 * a * dt ** 2
        a_new = -x - 0.1 * x ** 3
        v = v + 0.5 * (a + a_new) * dt
        a = a_new
    return np.sum(x ** 2) + np.sum(v ** 2)


def heat_1d(u0, alpha):
    """A periodic 1-D heat equation, written with keywords and no axis (50 steps of 512)."""
    u = u0
    for _ in range(50):
        u = u + alpha * (np.roll(u, shift=1) - 2 * u + np.roll(u, shift=-1))
    return np.sum(u ** 2)


def allen_cahn_3d(u, k):
    """A periodic 3-D Allen–Cahn step, the six-point Laplacian by np.roll (16³, 5 steps)."""
    for _ in range(5):
        lap = (np.roll(u, 1, 2) + np.roll(u, -1, 2) + np.roll(u, 1, 1) + np.roll(u, -1, 1)
               + np.roll(u, 1, 0) + np.roll(u, -1, 0) - 6 * u)
        u = u + k * lap - 0.01 * u ** 3
    return np.mean(u ** 2)


def softmax_regression(W, x, y):
    """Multinomial logistic regression's loss, max-shifted log-softmax (256 x 20 -> 10)."""
    z = x @ W
    z = z - np.max(z, axis=-1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))
    return -np.mean(np.sum(logp * y, axis=-1))


# --- JAX's versions: the same math, the loops as lax.fori_loop (unrolled by tracing, the
# Kalman filter's 100 steps took XLA 3 minutes to compile, and the unrolled stencils ran
# 60-200x slower than these loops) ------------------------------------------------------------

def _jax_versions(jax, jnp):
    fori = jax.lax.fori_loop

    def gray_scott_jax(p, U0, V0):
        F, k = p[0], p[1]

        def lap(Z):
            return (jnp.roll(Z, 1, 0) + jnp.roll(Z, -1, 0) + jnp.roll(Z, 1, 1)
                    + jnp.roll(Z, -1, 1) - 4 * Z)

        def step(_, UV):
            U, V = UV
            uvv = U * V * V
            return (U + 0.2 * lap(U) - uvv + F * (1 - U),
                    V + 0.1 * lap(V) + uvv - (F + k) * V)
        U, V = fori(0, 20, step, (U0, V0))
        return jnp.sum(V ** 2)

    def kalman_jax(theta, ys):
        a, q, r = theta[0], theta[1], theta[2]
        A = jnp.array([[1.0, 1.0], [0.0, a]])
        H = jnp.array([[1.0, 0.0]])

        def step(t, carry):
            m, P, ll = carry
            m = A @ m
            P = A @ P @ A.T + q * jnp.eye(2)
            S = H @ P @ H.T + r
            v = ys[t] - H @ m
            K = jnp.linalg.solve(S, H @ P).T
            return (m + K @ v, P - K @ H @ P,
                    ll - 0.5 * (jnp.log(S[0, 0]) + v[0] ** 2 / S[0, 0]))
        return fori(0, ys.shape[0], step, (jnp.zeros(2), jnp.eye(2), 0.0))[2]

    def lorenz_jax(s0, dt):
        def f(s):
            return jnp.array([10.0 * (s[1] - s[0]), s[0] * (28.0 - s[2]) - s[1],
                              s[0] * s[1] - 8.0 / 3.0 * s[2]])

        def step(_, s):
            k1 = f(s)
            k2 = f(s + dt / 2 * k1)
            k3 = f(s + dt / 2 * k2)
            k4 = f(s + dt * k3)
            return s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return jnp.sum(fori(0, 200, step, s0) ** 2)

    def verlet_jax(x0, v0):
        dt = 0.01

        def step(_, xva):
            x, v, a = xva
            x = x + v * dt + 0.5 * a * dt ** 2
            a_new = -x - 0.1 * x ** 3
            return x, v + 0.5 * (a + a_new) * dt, a_new
        x, v, _ = fori(0, 100, step, (x0, v0, -x0 - 0.1 * x0 ** 3))
        return jnp.sum(x ** 2) + jnp.sum(v ** 2)

    def heat_1d_jax(u0, alpha):
        def step(_, u):
            return u + alpha * (jnp.roll(u, shift=1) - 2 * u + jnp.roll(u, shift=-1))
        return jnp.sum(fori(0, 50, step, u0) ** 2)

    def allen_cahn_3d_jax(u, k):
        def step(_, u):
            lap = (jnp.roll(u, 1, 2) + jnp.roll(u, -1, 2) + jnp.roll(u, 1, 1)
                   + jnp.roll(u, -1, 1) + jnp.roll(u, 1, 0) + jnp.roll(u, -1, 0) - 6 * u)
            return u + k * lap - 0.01 * u ** 3
        return jnp.mean(fori(0, 5, step, u) ** 2)

    return {"gray_scott": gray_scott_jax, "kalman": kalman_jax, "lorenz": lorenz_jax,
            "verlet": verlet_jax, "heat_1d": heat_1d_jax, "allen_cahn_3d": allen_cahn_3d_jax}


def _lattice(rng):
    """64 particles on a 4x4x4 lattice of spacing 1.2, jittered (random positions put pairs
    so close that the energy is ~1e11 and no difference quotient can check its gradient)."""
    grid = np.stack(np.meshgrid(*[np.arange(4.0)] * 3, indexing="ij"), -1).reshape(-1, 3)
    return 1.2 * grid + rng.uniform(-0.05, 0.05, grid.shape)


def _cases():
    rng = np.random.default_rng(0)
    return {
        "gray_scott": (gray_scott, (np.array([0.04, 0.06]), rng.uniform(0.5, 1, (64, 64)),
                                    rng.uniform(0, 0.3, (64, 64)))),
        "kalman": (kalman, (np.array([0.9, 0.1, 0.5]), rng.normal(size=(100, 1)))),
        "lorenz": (lorenz, (np.array([1.0, 1.0, 1.0]), 0.01)),
        "lennard_jones": (lennard_jones, (_lattice(rng),)),
        "verlet": (verlet, (rng.normal(size=256), rng.normal(size=256))),
        "heat_1d": (heat_1d, (rng.normal(size=512), 0.1)),
        "allen_cahn_3d": (allen_cahn_3d, (rng.normal(size=(16, 16, 16)), 0.05)),
        "softmax_regression": (softmax_regression, (
            rng.normal(size=(20, 10)) * 0.1, rng.normal(size=(256, 20)),
            np.eye(10)[rng.integers(0, 10, 256)])),
    }


def _check(name, f, args, got):
    want = strop.grad(f)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=name)
    x, rest = args[0], args[1:]
    flat = x.reshape(-1)
    for i in np.linspace(0, flat.size - 1, min(3, flat.size)).astype(int):
        e = np.zeros_like(flat)
        e[i] = 1e-6 * max(1.0, abs(flat[i]))
        up = f((flat + e).reshape(x.shape), *rest)
        down = f((flat - e).reshape(x.shape), *rest)
        numeric = (up - down) / (2 * e[i])
        assert abs(got.reshape(-1)[i] - numeric) <= 1e-5 * max(1.0, abs(numeric)), \
            (name, i, got.reshape(-1)[i], numeric)


def _strop_row(name, f, args):
    g = strop.jit(strop.grad(f))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = g(*args)
        except Exception as e:
            return Row("strop jit(grad)", None, f"ERROR {type(e).__name__}: {str(e)[:80]}")
    _check(name, f, args, got)
    slow = sorted({str(w.message).split("helper ")[1].split("(")[0] for w in caught
                   if issubclass(w.category, PerformanceWarning)})
    status = g.last_backend or "?"
    if slow:
        status += " (islands: " + ", ".join(slow) + ")"
    return Row("strop jit(grad)", lambda: g(*args), status)


def _jax_row(name, f, args):
    jax = _timing.import_jax(x64=True)
    if jax is None:
        return Row("JAX jit(grad)", None, "skipped: JAX not installed")
    import jax.numpy as jnp
    ported = _jax_versions(jax, jnp).get(name) or types.FunctionType(
        f.__code__, {**f.__globals__, "np": jnp}, f.__name__, f.__defaults__, f.__closure__)
    g = jax.jit(jax.grad(ported))
    jargs = [jnp.asarray(a) for a in args]
    g(*jargs).block_until_ready()
    return Row("JAX jit(grad)", lambda: g(*jargs).block_until_ready(), "jax cpu")


def _numba_row(f, args):
    forward = numba.njit(f)
    try:
        forward(*args)
    except Exception as e:
        return Row("njit forward", None, f"ERROR {type(e).__name__}: {str(e)[:80]}")
    return Row("njit forward", lambda: forward(*args), "numba")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--repeats", type=int, default=9)
    opts = parser.parse_args()
    strop.config.update("enable_x64", True)
    print(_timing.versions())
    print(_timing.load_average())
    for name, (f, args) in _cases().items():
        if opts.only and name not in opts.only:
            continue
        rows = [_strop_row(name, f, args), _numba_row(f, args), _jax_row(name, f, args)]
        _timing.run_rows(rows, repeats=opts.repeats)
        print()
        _timing.table(rows, refs=("njit forward", "JAX jit(grad)"), title=f"### {name}")
    print(_timing.load_average())


if __name__ == "__main__":
    main()
