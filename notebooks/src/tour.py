# %% [markdown]
# # A tour of strop
#
# strop gives plain NumPy functions JAX's transforms — `grad`, `jvp`, `vmap`, `jit`, a
# splittable PRNG — by rewriting their source code. Each section is one short, real example;
# each result is checked by an `assert` (the tests execute this notebook). The functions are
# written in cells, as you would: strop reads their source from the notebook.

# %%
import numpy as np
import matplotlib.pyplot as plt

import strop
from strop import grad, hessian, jit, jvp, lax, nn, random, value_and_grad, vmap

# %% [markdown]
# ## `grad` of Python, and the code that runs
#
# Branches, loops and early returns are differentiated as written; `strop.source` shows the
# derivative as Python, each block under a comment naming your line.

# %%
def f(x):
    if x < 3:
        return 3. * x ** 2
    return -4 * x

assert grad(f)(2.) == 12. and grad(f)(4.) == -4. and grad(grad(f))(2.) == 6.
strop.show(grad(f))

# %% [markdown]
# ## A trajectory and its gradient
#
# A ball thrown at an angle, with air drag, stepped until it lands: a `while` on a value. The
# landing point is interpolated between the last two steps, so the range is a smooth function
# of the angle; `grad` of it goes through the loop, whatever its number of trips.

# %%
def flight(angle, speed, drag):
    dt = 0.01
    pos = np.zeros(2)
    vel = speed * np.array([np.cos(angle), np.sin(angle)])
    gravity = np.array([0.0, -9.81])
    last = pos
    while pos[1] >= 0.0:
        last = pos
        vel = vel + dt * (gravity - drag * np.sqrt(np.sum(vel ** 2)) * vel)
        pos = pos + dt * vel
    share = last[1] / (last[1] - pos[1])       # where y crossed 0 in the last step
    return last[0] + share * (pos[0] - last[0])

def path(angle, speed, drag, steps):            # the same steps, kept for a plot
    dt = 0.01
    pos = np.zeros(2)
    vel = speed * np.array([np.cos(angle), np.sin(angle)])
    gravity = np.array([0.0, -9.81])
    points = np.zeros((steps, 2))
    for i in range(steps):
        vel = vel + dt * (gravity - drag * np.sqrt(np.sum(vel ** 2)) * vel)
        pos = pos + dt * vel
        points[i] = pos
    return points

value, slope = value_and_grad(flight)(0.6, 20., 0.05)
eps = 1e-2
numeric = (flight(0.6 + eps, 20., 0.05) - flight(0.6 - eps, 20., 0.05)) / (2 * eps)
print(f"range {value:.3f} m, d range / d angle {slope:.3f} (central difference {numeric:.3f})")
assert abs(slope - numeric) < 0.02 * abs(numeric)

# %% [markdown]
# The range for 40 angles and its derivative, in one call: under `vmap` each angle's loop runs
# its own number of steps (`jit` of it compiles the same to one loop per angle).

# %%
ranges = vmap(value_and_grad(flight), in_axes=(0, None, None))
angles = np.linspace(0.1, 1.4, 40).astype(np.float32)
values, slopes = ranges(angles, 20., 0.05)
best = angles[np.argmax(values)]

fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.5))
for angle in (0.3, best, 1.1):
    p = np.vstack([[0., 0.], path(angle, 20., 0.05, 300)])
    p = p[p[:, 1] >= 0]
    a.plot(p[:, 0], p[:, 1], label=f"angle {angle:.2f}")
a.set_xlabel("x (m)"); a.set_ylabel("y (m)"); a.legend(); a.set_title("trajectories")
b.plot(angles, values, label="range")
b.plot(angles, slopes, label="d range / d angle")
b.axhline(0, color="gray", lw=0.5); b.axvline(best, color="gray", ls=":")
b.set_xlabel("angle (rad)"); b.legend(); b.set_title("range and its gradient")

assert np.allclose(values, [flight(a, 20., 0.05) for a in angles], rtol=1e-4)
assert slopes[0] > 0 > slopes[-1] and np.all(np.diff(np.sign(slopes)) <= 0)   # one maximum
assert best < np.pi / 4       # drag makes the best angle flatter than 45°

# %% [markdown]
# Gradient ascent finds the best angle. (The range is smooth between changes of the number of
# steps, and has a kink at each: its derivative jumps a little there, which is why this is not
# Newton's method.)

# %%
angle = 0.3
for _ in range(30):
    angle = angle + 0.01 * grad(flight)(angle, 20., 0.05)
print(f"best angle {angle:.4f} rad = {np.degrees(angle):.1f}°, "
      f"range {flight(angle, 20., 0.05):.3f} m")
assert abs(angle - best) < 0.04 and flight(angle, 20., 0.05) > values.max() - 0.01

# %% [markdown]
# ## Per-example gradients
#
# `vmap(grad(loss), in_axes=(None, 0, 0))` gives one gradient per example, not their sum —
# here for logistic regression on data with a few mislabelled points, whose gradients stand out.

# %%
def loss(params, x, y):
    logit = x @ params["w"] + params["b"]
    return -(y * nn.log_sigmoid(logit) + (1 - y) * nn.log_sigmoid(-logit))

k1, k2 = random.split(random.PRNGKey(0))
X = random.normal(k1, (200, 2))
Y = (X @ np.array([2., -1.]) > 0).astype(np.float32)
flipped = np.argsort(np.abs(X @ np.array([2., -1.])))[-5:]   # far from the boundary,
Y[flipped] = 1 - Y[flipped]                                   # and labelled wrong

params = {"w": np.array([2., -1.], np.float32), "b": np.float32(0.)}
per_example = vmap(grad(loss), in_axes=(None, 0, 0))(params, X, Y)
norms = np.sqrt(np.sum(per_example["w"] ** 2, axis=1) + per_example["b"] ** 2)

fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.5))
a.scatter(X[:, 0], X[:, 1], c=Y, cmap="coolwarm", s=12)
a.scatter(X[flipped, 0], X[flipped, 1], facecolors="none", edgecolors="k", s=80, label="flipped")
a.legend(); a.set_title("data")
b.bar(range(200), norms); b.set_title("per-example gradient norm"); b.set_xlabel("example")

total = grad(lambda p: np.sum(loss(p, X, Y)))(params)
assert per_example["w"].shape == (200, 2) and per_example["b"].shape == (200,)
assert np.allclose(per_example["w"].sum(axis=0), total["w"], rtol=1e-4, atol=1e-4)
assert set(np.argsort(norms)[-5:]) == set(flipped)

# %% [markdown]
# ## Newton's method, a different number of trips per lane
#
# Under `vmap` each lane of a `while` stops on its own; the function returns its trip count,
# so the plot shows how many steps each input took.

# %%
def newton_sqrt(a):
    x = a
    trips = 0
    while abs(x * x - a) > 1e-6 * a:
        x = 0.5 * (x + a / x)
        trips += 1
    return x, trips

a = np.logspace(-4, 8, 300).astype(np.float32)
root, trips = jit(vmap(newton_sqrt))(a)

fig, ax = plt.subplots(figsize=(8, 3))
ax.semilogx(a, trips, ".")
ax.set_xlabel("a"); ax.set_ylabel("Newton steps"); ax.set_title("trips per lane")

assert np.allclose(root, np.sqrt(a), rtol=1e-5)
assert [newton_sqrt(v)[1] for v in a[::50]] == trips[::50].tolist()   # lane by lane
assert trips.min() < 5 < 10 < trips.max()

# %% [markdown]
# `strop.source` shows what `vmap` made of the `while`: it runs while any lane runs, and
# keeps the values of the lanes that stopped.

# %%
print(strop.source(vmap(newton_sqrt)))

# %% [markdown]
# ## Random numbers, explicit keys
#
# `strop.random` is JAX's Threefry PRNG, bit for bit: keys are split, never reused; samplers
# work under `jit` and `grad` (the reparameterization trick).

# %%
key = random.PRNGKey(42)
key, k_normal, k_gamma = random.split(key, 3)
normal = random.normal(k_normal, (20_000,))
gamma = random.gamma(k_gamma, 3.0, (20_000,))

fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3))
t = np.linspace(-4, 4, 200)
a.hist(normal, bins=60, density=True, alpha=0.6)
a.plot(t, np.exp(-t ** 2 / 2) / np.sqrt(2 * np.pi))
a.set_title("normal")
b.hist(gamma, bins=60, density=True, alpha=0.6); b.set_title("gamma(3)")
assert abs(normal.mean()) < 0.03 and abs(normal.std() - 1) < 0.03 and abs(gamma.mean() - 3) < 0.05

# %% [markdown]
# The gradient of an expectation by sampling: $\frac{d}{d\mu} E[(\mu + \sigma z)^2] = 2\mu$.

# %%
def expected_square(mu, sigma, key):
    z = random.normal(key, (10_000,))
    return np.mean((mu + sigma * z) ** 2)

d_mu = grad(expected_square)(1.5, 0.5, random.PRNGKey(1))
assert abs(d_mu - 3.0) < 0.05

# %% [markdown]
# ## Forward mode, Hessians and `lax.scan`
#
# `jvp` pushes a tangent forward; `hessian` is forward over reverse. A recurrent cell written
# with `lax.scan` (as in JAX) is differentiated and compiled like a loop.

# %%
def rosenbrock(p):
    return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2

p = np.array([0.5, 0.5], np.float32)
value, tangent = jvp(rosenbrock, (p,), (np.array([1., 0.], np.float32),))
assert np.isclose(tangent, grad(rosenbrock)(p)[0])
H = hessian(rosenbrock)(p)
assert np.allclose(H, [[2 - 400 * (p[1] - 3 * p[0] ** 2), -400 * p[0]], [-400 * p[0], 200]])

# %%
def rnn_loss(w, xs, h0):
    def cell(h, x):
        h = np.tanh(w @ h + x)
        return h, h
    h, hs = lax.scan(cell, h0, xs)
    return np.sum(hs ** 2)

k1, k2 = random.split(random.PRNGKey(3))
w = 0.5 * random.normal(k1, (4, 4))
xs = random.normal(k2, (30, 4))
h0 = np.zeros(4, np.float32)
dw = grad(rnn_loss)(w, xs, h0)

bump = np.zeros_like(w); bump[1, 2] = 1e-2
numeric = (rnn_loss(w + bump, xs, h0) - rnn_loss(w - bump, xs, h0)) / 2e-2
assert abs(dw[1, 2] - numeric) < 2e-2 * max(1, abs(numeric))

# %% [markdown]
# ## Training a small network
#
# `jit(value_and_grad(...))` compiles a training step's value and gradient, with respect to a
# list of dicts of parameters (a pytree, as in JAX). A two-layer network learns a sine.

# %%
def init(key, sizes):
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, sub = random.split(key)
        params.append({"w": random.normal(sub, (n_in, n_out)) / np.sqrt(n_in),
                       "b": np.zeros(n_out, np.float32)})
    return params

def predict(params, x):
    h = np.tanh(x @ params[0]["w"] + params[0]["b"])
    return h @ params[1]["w"] + params[1]["b"]

def mse(params, x, y):
    return np.mean((predict(params, x) - y) ** 2)

x = np.linspace(-3, 3, 128, dtype=np.float32)[:, None]
y = np.sin(x)
params = init(random.PRNGKey(0), [1, 32, 1])
step = jit(value_and_grad(mse))
losses = []
for i in range(300):
    value, g = step(params, x, y)
    losses.append(value)
    params = [{k: layer[k] - 0.05 * gl[k] for k in layer} for layer, gl in zip(params, g)]

fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3))
a.semilogy(losses); a.set_title("training loss")
b.plot(x, y, label="sin"); b.plot(x, predict(params, x), label="network"); b.legend()
assert losses[-1] < losses[0] / 10 and step.last_backend == "cpu"

# %% [markdown]
# ## More
#
# [sharp_bits.ipynb](sharp_bits.ipynb) runs JAX's "Sharp Bits" under strop and
# [faq.ipynb](faq.ipynb) JAX's FAQ; strop's README describes how it works.
