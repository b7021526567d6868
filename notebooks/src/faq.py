# %% [markdown]
# # The JAX FAQ, told for strop
#
# Each question of JAX's *Frequently Asked Questions*: what JAX does in one line, then what
# strop does, run and checked by an `assert` (the tests execute this notebook:
# `python -m pytest tests/test_notebooks.py`). strop transforms plain NumPy functions by
# rewriting their source, and compiles them with Numba; the functions below are defined in
# cells, and strop reads their source from the notebook.

# %%
import contextlib
import io
import time
import warnings

import numpy as np
import matplotlib.pyplot as plt

import strop
from strop import debug, grad, jit, nn, tree_util, vmap
from strop.errors import DonationWarning, JitFallbackWarning


@contextlib.contextmanager
def raises(kind):
    """Show the error the block raises, and check that it is a `kind`."""
    try:
        yield
    except kind as e:
        print(f"{type(e).__name__}: {e}")
    else:
        raise AssertionError(f"no {kind.__name__} was raised")


@contextlib.contextmanager
def warned():
    """Show the warnings the block gives; the list of them is for the asserts."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    for w in caught:
        print(f"{w.category.__name__}: {w.message}")


@contextlib.contextmanager
def printed():
    """Show what the block prints; `.getvalue()` is for the asserts."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        yield out
    print(out.getvalue(), end="")


# %% [markdown]
# ## `jit` changes the behavior of my function
#
# **JAX:** a jitted function prints once, while tracing, and keeps the first value of a global
# it reads. **strop:** it behaves as without `jit`: `print` on every call, the global's current
# value.

# %%
y = 0

@jit
def impure_func(x):
    print("Inside:", y)
    return x + y

with printed() as out:
    for y in range(3):
        print("Result:", impure_func(y))

assert out.getvalue().splitlines() == [
    "Inside: 0", "Result: 0", "Inside: 1", "Result: 2", "Inside: 2", "Result: 4"]
assert impure_func.last_backend == "cpu"

# %% [markdown]
# ## `jit` changes the exact numerics of outputs
#
# **JAX:** XLA rewrites algebra (`log(sqrt(x))` into `0.5 * log(x)`, `log(exp(x))` into `x`),
# so results change under `jit`. **strop:** Numba compiles the operations as written, without
# fast-math: the compiled result is the un-compiled one.

# %%
def f(x):
    return np.log(np.sqrt(x))

x = np.float32(np.pi)
print(f(x), jit(f)(x))
assert jit(f)(x) == f(x)

def f(x):
    return np.log(np.exp(x))

with np.errstate(over="ignore"):
    print(f(np.float32(100.)), jit(f)(100.))     # JAX: inf, and 100.0 under jit
    assert np.isinf(jit(f)(100.)) and np.isinf(f(np.float32(100.)))

# %% [markdown]
# ## `jit` decorated function is very slow to compile
#
# **JAX:** Python loops are unrolled into the trace, so compile time grows with the trip count;
# use `lax.scan`/`fori_loop`. **strop:** loops are compiled as loops, so the compile time does
# not depend on the trips; compiled code is cached on disk (a later process, or a new `jit` of
# the same function, loads it in milliseconds), and `config.log_compiles` says what compiled
# and why.

# %%
def energy(theta, damping, steps):
    omega = 0.0
    for _ in range(steps):          # a plain Python loop: compiled, not unrolled
        omega = omega - 0.01 * (np.sin(theta) + damping * omega)
        theta = theta + 0.01 * omega
    return 0.5 * omega ** 2 + (1 - np.cos(theta))

with strop.config.override(log_compiles=True):
    f = jit(grad(energy))
    start = time.perf_counter()
    f(0.3, 0.1, 10)
    first = time.perf_counter() - start
    start = time.perf_counter()
    f(0.3, 0.1, 100_000)           # the same compiled code
    again = time.perf_counter() - start
    start = time.perf_counter()
    jit(grad(energy))(0.3, 0.1, 10)  # a new jit of the same function: from the disk cache
    cached = time.perf_counter() - start
print(f"first call {first:.2f} s, 100,000 trips {again * 1e3:.1f} ms, "
      f"a new jit of it {cached * 1e3:.1f} ms")
assert f.last_backend == "cpu"

# %% [markdown]
# ## How to use `jit` with methods?
#
# **JAX:** `@jit` on a method fails on `self`; use a helper function, mark `self` static (and
# get stale results when the object changes, unless it hashes its fields), or register the
# class as a pytree. **strop:** the same three ways work, and the static way never gives a
# stale result: a changed object recompiles.

# %%
from functools import partial

class CustomClass:            # strategy 1: a jitted helper function
    def __init__(self, x, mul):
        self.x = x
        self.mul = mul

    def calc(self, y):
        return _calc(self.mul, self.x, y)

@partial(jit, static_argnums=0)
def _calc(mul, x, y):
    if mul:
        return x * y
    return y

c = CustomClass(2, True)
print(c.calc(3))
assert c.calc(3) == 6

# %%
class CustomClass:            # strategy 2: self static (the FAQ's version "broken below")
    def __init__(self, x, mul):
        self.x = x
        self.mul = mul

    @partial(jit, static_argnums=0)
    def calc(self, y):
        if self.mul:
            return self.x * y
        return y

c = CustomClass(2, True)
print(c.calc(3))
c.mul = False
print(c.calc(3))  # Should print 3: JAX prints 6
assert c.calc(3) == 3

# %%
class CustomClass:            # strategy 3: a pytree
    def __init__(self, x, mul):
        self.x = x
        self.mul = mul

    @jit
    def calc(self, y):
        if self.mul:
            return self.x * y
        return y

    def _tree_flatten(self):
        children = (self.x,)  # arrays / dynamic values
        aux_data = {'mul': self.mul}  # static values
        return (children, aux_data)

    @classmethod
    def _tree_unflatten(cls, aux_data, children):
        return cls(*children, **aux_data)

tree_util.register_pytree_node(CustomClass,
                               CustomClass._tree_flatten,
                               CustomClass._tree_unflatten)

c = CustomClass(2, True)
assert c.calc(3) == 6
c.mul = False  # mutation is detected
assert c.calc(3) == 3
c = CustomClass(np.array(2.), True)  # non-hashable x is supported
assert c.calc(3) == 6 and CustomClass.calc.last_backend == "cpu"

# %% [markdown]
# A pytree is also what `grad` differentiates with respect to: the gradient is an object of
# the same class.

# %%
c = CustomClass(np.array([1., 2.]), True)
g = grad(lambda c, y: np.sum(c.calc(y)))(c, 3.)
print(type(g).__name__, g.x, g.mul)
assert type(g) is CustomClass and g.x.tolist() == [3., 3.]

# %% [markdown]
# ## Controlling data and computation placement on devices
#
# **JAX:** computation follows data: `device_put(x, device)` commits `x`, and a jitted function
# runs where its committed inputs are. **strop:** the same functions. `device_put` applies the
# 64-bit policy to a pytree; put on a GPU (`devices("cuda")`, with the `cuda` extra: a GPU, or
# Numba's simulator under `NUMBA_ENABLE_CUDASIM=1`), arrays stay there and a `jit(vmap(f))`
# called on them runs there, one CUDA thread per lane. Where there is no GPU, asking for one
# raises RuntimeError saying why.

# %%
print(strop.devices(), strop.default_backend())
assert strop.devices() == [strop.devices("cpu")[0]] and strop.default_backend() == "cpu"

x = strop.device_put({"w": np.ones(3), "n": [1.0, 2.0]}, strop.devices()[0])
print(x)
assert x["w"].dtype == np.float32

def newton(a):
    x, n = a, 0
    while abs(x * x - a) > 1e-4 * a:
        x, n = 0.5 * (x + a / x), n + 1
    return x, n


found, why = strop.runtime.cuda.available()
if found:
    gpu = strop.devices("cuda")[0]
    a = strop.device_put(np.array([2.0, 9.0, 1e6]), gpu)
    roots, steps = jit(vmap(newton))(a)          # on the GPU: the data is there
    print(gpu, type(roots).__name__, np.asarray(roots), np.asarray(steps))
    assert roots.device == gpu and np.allclose(np.asarray(roots), [2 ** 0.5, 3, 1000], rtol=1e-4)
else:
    print(why)
    with raises(RuntimeError):
        strop.devices("cuda")

# %% [markdown]
# ## Benchmarking JAX code
#
# **JAX:** jit the outermost function, call `block_until_ready()` (dispatch is asynchronous),
# compare in 32 bits, move data to the device first, and count the compile apart. **strop:** the
# same advice, with its own reasons: the first call compiles (or loads from the disk cache),
# results are NumPy arrays (`block_until_ready` returns them at once, so code written for JAX
# runs unchanged), and values are 32-bit unless `enable_x64`.

# %%
import timeit

def f(x):  # function we're benchmarking (works in both NumPy & strop)
    return x.T @ (x - x.mean(axis=0))

x_np = np.ones((300, 300), dtype=np.float32)  # same as strop's default dtype
per_call = lambda fn: min(timeit.repeat(fn, number=20, repeat=3)) / 20

numpy_time = per_call(lambda: f(x_np))
x_strop = strop.device_put(x_np)
f_jit = jit(f)
start = time.perf_counter()
strop.block_until_ready(f_jit(x_strop))      # compiles
compile_time = time.perf_counter() - start
strop_time = per_call(lambda: strop.block_until_ready(f_jit(x_strop)))
print(f"NumPy {numpy_time * 1e3:.2f} ms, strop compile {compile_time:.2f} s, "
      f"strop {strop_time * 1e3:.2f} ms per call")
assert np.allclose(f_jit(x_strop), f(x_np))

# %% [markdown]
# ### Is strop faster than NumPy?
#
# For one large operation, as above, there is little to gain: the matrix product is BLAS
# either way. strop wins where NumPy runs many small operations from Python: loops, branches,
# scalar code, and `vmap` of code with control flow, which become one compiled loop.
# `benchmarks/README.md` has measured comparisons with JAX, NumPy and hand-written Numba.

# %%
def damped(theta, steps):
    omega = 0.0
    for _ in range(steps):
        omega = omega - 0.01 * (np.sin(theta) + 0.1 * omega)
        theta = theta + 0.01 * omega
    return theta

damped_jit = jit(damped)
damped_jit(0.3, 10)
python_time = per_call(lambda: damped(np.float32(0.3), 2000))
strop_time = per_call(lambda: damped_jit(0.3, 2000))
print(f"Python loop {python_time * 1e3:.2f} ms, compiled {strop_time * 1e3:.3f} ms")
assert np.isclose(damped_jit(0.3, 2000), damped(np.float32(0.3), 2000), rtol=1e-4)

# %% [markdown]
# ## Different kinds of JAX values
#
# **JAX:** `jit` replaces arguments by abstract tracers, so `y >= 1.` on an argument needs
# `static_argnums`, while `grad` (concrete tracers) works. **strop:** there are no tracers: a
# compiled function receives values, so both work as written.

# %%
def divide(x, y):
    return x / y if y >= 1. else 0.

print(jit(divide)(3., 2.), jit(divide)(3., 0.5), grad(divide)(3., 2.))
assert jit(divide)(3., 2.) == 1.5 and jit(divide)(3., 0.5) == 0. and grad(divide)(3., 2.) == 0.5

# %% [markdown]
# ## Buffer donation
#
# **JAX:** `donate_argnums` lets XLA reuse an input's buffer for an output; the donated array
# may not be used again. **strop:** a donated argument is updated in place where the compiled
# code allows it (an `.at` update of it, a loop rewriting it); NumPy cannot delete the caller's
# array, so it is *overwritten*, and a `DonationWarning` says so when that happens.

# %%
def update(x, v):
    return x.at[0].set(v)

a = np.zeros(3, np.float32)
with warned() as w:
    out = jit(update, donate_argnums=0)(a, 5.0)
print(out, a)
assert out[0] == 5. and a[0] == 5.             # the caller's array: overwritten
assert [x.category for x in w] == [DonationWarning]

b = np.zeros(3, np.float32)
jit(update)(b, 5.0)
assert b[0] == 0.                                # without donation: untouched

# %% [markdown]
# The FAQ's `add`, with `y` donated: strop computes `x + y` into a new array, so `y` is left
# alone and nothing is said (JAX would give `y`'s buffer to the result).

# %%
def add(x, y):
    return x + y

x = np.ones((2, 3), np.float32)
y = np.ones((2, 3), np.float32)
with warned() as w:
    z = jit(add, donate_argnums=(1,))(x, y)
assert (z == 2).all() and (y == 1).all() and w == []

# %% [markdown]
# ## Gradients contain `NaN` where using `where`
#
# **JAX:** `where(x > 0, log(x), 0)` has a NaN gradient at 0: the untaken branch's derivative
# is `inf`, and `0 * inf` is NaN. **strop:** the same maths, the same NaN, and the FAQ's double
# `where` gives 0.

# %%
def my_log(x):
    return np.where(x > 0., np.log(x), 0.)

with np.errstate(divide="ignore", invalid="ignore"):
    print(my_log(0.), grad(my_log)(0.))
    assert my_log(0.) == 0. and np.isnan(grad(my_log)(0.))

def safe_for_grad_log(x):
    return np.log(np.where(x > 0., x, 1.))

print(safe_for_grad_log(0.), grad(safe_for_grad_log)(0.))
assert safe_for_grad_log(0.) == 0. and grad(safe_for_grad_log)(0.) == 0.

def my_log_or_y(x, y):
    """Return log(x) if x > 0 or y"""
    return np.where(x > 0., np.log(np.where(x > 0., x, 1.)), y)

assert grad(my_log_or_y, argnums=(0, 1))(0., 2.) == (0., 1.)

# %% [markdown]
# `strop.source` shows where the NaN comes from: the adjoint of `log` divides by `x` for both
# branches, and `where` then picks the branch.

# %%
print(strop.source(grad(my_log)))

# %% [markdown]
# ## Why are gradients zero for functions based on sort order?
#
# **JAX:** a step function (`x > 0`), `max`, `argsort`... have derivative zero almost
# everywhere, and zero is what autodiff gives; use a smooth relaxation (`nn.sigmoid`). **strop:**
# the same zeros, and `strop.nn` has JAX's smooth functions.

# %%
def f(x):
    return (x > 0).astype(float)

df = vmap(grad(f))
x = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
print(f"f(x)  = {f(x)}")
print(f"df(x) = {df(x)}")
assert df(x).tolist() == [0.] * 5

def g(x):
    return nn.sigmoid(x)

dg = vmap(grad(g))
x = np.array([-10.0, -1.0, 0.0, 1.0, 10.0])
with np.printoptions(suppress=True, precision=2):
    print(f"g(x)  = {g(x)}")
    print(f"dg(x) = {dg(x)}")
assert np.allclose(dg(x), [0., 0.2, 0.25, 0.2, 0.], atol=5e-3)

# %%
xs = np.linspace(-4, 4, 201)
fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3))
a.plot(xs, f(xs), label="step: (x > 0)")
a.plot(xs, g(xs), label="nn.sigmoid")
a.set_title("function"); a.legend()
b.plot(xs, df(xs), label="grad of step")
b.plot(xs, dg(xs), label="grad of sigmoid")
b.set_title("gradient"); b.legend()

# %% [markdown]
# A sort, a maximum and an `argsort` pass the gradient to the elements they pick, and nothing
# through the order itself:

# %%
def smallest_plus_largest(x):
    return np.sort(x)[0] + np.max(x) + np.argsort(x)[0]

print(grad(smallest_plus_largest)(np.array([3., 1., 2.])))
assert grad(smallest_plus_largest)(np.array([3., 1., 2.])).tolist() == [1., 1., 0.]

# %% [markdown]
# ## How can I convert a JAX Tracer to a NumPy array?
#
# **JAX:** it is impossible: inside `jit` values are tracers; use `jax.debug.print`, or
# `pure_callback`/`io_callback` to run NumPy code. **strop:** there are no tracers. A compiled
# function sees values: `print` prints them, `debug.print` and `debug.callback` run on every
# call on every backend (and once per lane under `vmap`, as JAX's), with the values.

# %%
LOG = []
def log(step, x):            # any Python: it runs with the values
    LOG.append((int(step), float(x)))

@jit
def descend(x, steps):
    for i in range(steps):
        x = x - 0.1 * 2 * x
        debug.callback(log, i, x)
        debug.print("step {i}: x = {x:.4f}", i=i, x=x)
    return x

with printed() as out:
    descend(1.0, 3)
assert [i for i, _ in LOG] == [0, 1, 2] and np.allclose([v for _, v in LOG], [.8, .64, .512])
assert out.getvalue().splitlines()[-1] == "step 2: x = 0.5120" and descend.last_backend == "cpu"

# %% [markdown]
# Python that Numba cannot compile is another matter: `type(x)` of an array has no Numba
# implementation, so that line runs as Python in an object-mode island, after a
# `JitFallbackWarning` naming it, and the rest of the function stays compiled. The result is
# the same; only that line's speed is lost. (A line whose result the compiled code reads, not
# only a `print`, makes the whole function run as Python instead.)

# %%
@jit
def show_type(x):
    print(type(x))
    return x

with warned() as w:
    show_type(np.arange(5))
assert [x.category for x in w] == [JitFallbackWarning] and show_type.last_backend == "cpu"
print(strop.source(show_type))

# %% [markdown]
# ## Why do some CUDA libraries fail to load/initialize?
#
# **JAX:** a question of `LD_LIBRARY_PATH` and GPU memory preallocation. **strop:** its CUDA
# backend loads through numba-cuda (the `cuda` extra, which brings NVIDIA's compiler libraries
# as wheels); `devices("cuda")` says what is missing where it fails (see *placement* above).
# Nothing is preallocated: arrays are allocated as they are made.
