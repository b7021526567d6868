"""The tour ``python -m strop demo`` prints: each capability, run, with its result checked."""
import linecache
import os
import time
import warnings

import numpy as np

import strop
from strop import grad, lax, random, value_and_grad


def f(x):
    if x < 3:
        return 3. * x ** 2
    return -4 * x


def pure_uses_internal_state(x):
    state = dict(even=0, odd=0)
    for i in range(10):
        state['even' if i % 2 == 0 else 'odd'] += x
    return state['even'] + state['odd']


def loss(params, x, y):
    hidden = np.tanh(x @ params["w1"] + params["b1"])
    pred = hidden @ params["w2"]
    return np.mean((pred - y) ** 2)


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-6 * a:
        x = 0.5 * (x + a / x)
    return x


def newton_steps(a, x):   # per-lane numbers: what a CUDA kernel runs, one thread each
    n = 0
    while abs(x * x - a) > 1e-4 * a and n < 100:
        x = 0.5 * (x + a / x)
        n += 1
    return x, n


def gpu_loss(w, xs):      # array code: on a GPU, a kernel per fused chain, reduction, @
    return np.sum(np.tanh(xs @ w) ** 2)


def pendulum(theta, damping):
    omega = 0.0
    for _ in range(20_000):
        omega = omega - 0.001 * (np.sin(theta) + damping * omega)
        theta = theta + 0.001 * omega
    return 0.5 * omega ** 2 + (1 - np.cos(theta))


def horner(c, x):   # s is the number 0, then an array: compiled, the first trip apart
    s = 0
    for i in range(c.shape[0]):
        s = s * x + c[i]
    return s


def reciprocal(x):
    return 1.0 / x


def lax_newton(a):   # newton_sqrt as JAX code: lax.while_loop over a (value, steps) carry
    def step(c):
        x, k = c
        return 0.5 * (x + a / x), k + 1
    return lax.while_loop(lambda c: abs(c[0] * c[0] - a) > 1e-6 * a, step, (a, 0))[0]


def section(title):
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def run():
    print("strop", strop.__version__, "- NumPy functions, transformed by rewriting their source")

    section("grad of Python control flow (the Sharp Bits' example)")
    print("def f(x):\n    if x < 3:\n        return 3. * x ** 2\n    return -4 * x")
    print("grad(f)(2.) =", grad(f)(2.), "   grad(f)(4.) =", grad(f)(4.))

    section("read what runs: strop.source(grad(f))")
    print(strop.source(grad(f)))

    section("local state is fine: a dict updated in a loop")
    print("grad(pure_uses_internal_state)(5.) =", grad(pure_uses_internal_state)(5.))

    section("pytrees: the gradient of an MLP loss w.r.t. a dict of parameters")
    rng = np.random.default_rng(0)
    params = {"w1": rng.normal(size=(3, 8)) * 0.5, "b1": np.zeros(8),
              "w2": rng.normal(size=(8, 1)) * 0.5}
    x, y = rng.normal(size=(16, 3)), rng.normal(size=(16, 1))
    value, grads = value_and_grad(loss)(params, x, y)
    print(f"loss = {value:.5f}; gradient shapes:",
          {k: v.shape for k, v in sorted(grads.items())})

    section("a while loop on data, differentiated; and a second derivative")
    print("d/da newton_sqrt(a) at a=2:", grad(newton_sqrt)(2.), " (1/(2*sqrt(2)) =",
          round(1 / (2 * np.sqrt(2)), 6), ")")
    d2 = grad(grad(lambda x: np.sin(x) * x))
    print("d2/dx2 of x sin(x) at 0.5:", d2(0.5), " (2 cos(0.5) - 0.5 sin(0.5) =",
          round(2 * np.cos(0.5) - 0.5 * np.sin(0.5), 6), ")")

    section("jit: the same generated code, compiled by Numba")
    fast = strop.jit(grad(pendulum, argnums=(0, 1)))
    slow = grad(pendulum, argnums=(0, 1))
    fast(0.3, 0.1)                                   # compiles (cached on disk for next time)
    t0 = time.perf_counter()
    g_fast = fast(0.3, 0.1)
    t1 = time.perf_counter()
    g_slow = slow(0.3, 0.1)
    t2 = time.perf_counter()
    print(f"d energy / d (theta0, damping) after 20,000 pendulum steps: "
          f"({g_fast[0]:.6f}, {g_fast[1]:.6f})")
    print(f"jit(grad): {1e3 * (t1 - t0):.2f} ms on {fast.last_backend}; grad as Python: "
          f"{1e3 * (t2 - t1):.0f} ms; same numbers: {np.allclose(g_fast, g_slow)}")
    print(f"what the adjoint keeps: {', '.join(sorted(fast.staged().array_tapes))} (numbers, "
          f"in arrays indexed by the loop: strop.source(fast) shows them)")

    section("jit keeps NumPy's semantics: a number a loop makes an array; NumPy's warnings")
    coeffs, points = np.array([1.0, -2.0, 0.5]), np.linspace(0.0, 1.0, 4)
    compiled = strop.jit(horner)
    print("horner compiled:", compiled(coeffs, points), "on", compiled.last_backend,
          " equal to Python's (float32):",
          np.allclose(compiled(coeffs, points), horner(coeffs, points), rtol=1e-6))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        print("jit(reciprocal)([0, 2]):", strop.jit(reciprocal)(np.array([0.0, 2.0])))
    for w in caught:
        print(f"  {w.category.__name__}: {w.message}  ({os.path.basename(w.filename)}, "
              f"line {w.lineno}: {linecache.getline(w.filename, w.lineno).strip()})")

    section("strop.random: JAX's Threefry PRNG, bit for bit")
    key = random.PRNGKey(0)
    key, subkey = random.split(key)
    print("key, subkey =", key, subkey, "  normal(subkey, (1,)) =", random.normal(subkey, (1,)))

    section("vmap: per-example control flow; jit(vmap) fuses each lane's loop")
    a = np.array([2.0, 9.0, 1e6, 0.01])
    print("vmap(newton_sqrt)(", a, ") =", strop.vmap(newton_sqrt)(a),
          " (each lane's while stops on its own)")
    per_example = strop.vmap(grad(loss), in_axes=(None, 0, 0))(params, x, y)
    print("per-example gradients, vmap(grad(loss), in_axes=(None, 0, 0)): w1",
          per_example["w1"].shape)
    compiled = strop.jit(strop.vmap(grad(loss), in_axes=(None, 0, 0)))
    same = all(np.allclose(compiled(params, x, y)[k], v) for k, v in per_example.items())
    print(f"jit(vmap(grad(loss))) on {compiled.last_backend}: the same gradients: {same}")
    many = np.exp(rng.uniform(-3, 12, 200_000))
    fused = strop.jit(strop.vmap(newton_sqrt))
    fused(many)                                      # compiles
    t0 = time.perf_counter()
    roots = fused(many)
    t1 = time.perf_counter()
    print(f"jit(vmap(newton_sqrt)) on 200,000 inputs: {1e3 * (t1 - t0):.1f} ms on "
          f"{fused.last_backend}; max |x*x - a| / a = {np.max(np.abs(roots ** 2 - many) / many):.1e}")
    print(strop.source(fused))

    section("strop.lax: JAX's control flow, rewritten into the Python it means")
    print("lax.fori_loop(0, 10, lambda i, acc: acc + i, 0) =",
          lax.fori_loop(0, 10, lambda i, acc: acc + i, 0))
    print("grad through lax.while_loop (JAX cannot):", grad(lax_newton)(2.),
          "  vmap:", strop.vmap(lax_newton)(np.array([2.0, 9.0])))
    print(strop.source(strop.jit(lax_newton)))

    section("on a GPU: one CUDA thread per vmap lane; other array code launch by launch")
    found, why = strop.runtime.cuda.available()
    if found:
        roots, steps = strop.jit(strop.vmap(newton_steps, in_axes=(0, None)),
                                     backend="cuda")(a, 1.0)
        print(f"on {strop.devices('cuda')[0]}: roots {np.asarray(roots)}, steps per lane "
              f"{np.asarray(steps)}")
        gpu = strop.devices("cuda")[0]
        w, xs = (strop.device_put(v, gpu) for v in (np.full(3, 0.5), np.eye(3)[:2]))
        loss_grad = strop.jit(grad(gpu_loss))
        g = loss_grad(w, xs)    # array code: launch by launch on the GPU
        print(f"jit(grad(gpu_loss)) on the GPU: {type(g).__name__} {np.asarray(g)}")
        print(strop.source(loss_grad.on_device()))
    else:
        print(f"(not run: {why})")

    section("a transform never silently changes behaviour")

    def mutates(x):
        x[0] = 1.0
        return x.sum()
    try:
        grad(mutates)(np.zeros(3))
    except strop.errors.ImmutableUpdateError as e:
        print(type(e).__name__ + ":", e)
    print("\nMore: README.md; tests: python -m pytest -q")
