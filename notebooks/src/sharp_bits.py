# %% [markdown]
# # 🔪 The Sharp Bits, told for strop 🔪
#
# JAX's notebook *"🔪 JAX - The Sharp Bits 🔪"* lists the places where JAX surprises a NumPy
# user. strop gives plain NumPy functions JAX's transforms (`grad`, `vmap`, `jit`, ...) by
# rewriting their **source code** instead of tracing them, so most of those places behave
# differently. Each section below states in one line what JAX does, then runs the seed's
# example under strop. Every claim is checked by an `assert`: this notebook is executed by the
# tests (`python -m pytest tests/test_notebooks.py`), so it stays true.
#
# The functions are defined in cells, as you would: strop reads their source from the notebook.

# %%
import contextlib
import io
import warnings

import numpy as np
import matplotlib.pyplot as plt

import strop
from strop import grad, jit, lax, random
from strop.errors import ImmutableUpdateError, KeyReuseWarning, PurityError


# Three small helpers, so that each cell can both show and check what happened.
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
# ## 🔪 Pure functions
#
# **JAX:** a jitted function's `print` runs once, while tracing; a global it reads is frozen at
# its first value; a global it writes leaks a tracer. **strop:** the compiled function runs its
# `print` on every call, reads the current value of its globals, and a function that assigns a
# global is refused with a `PurityError` that names the line.

# %%
def impure_print_side_effect(x):
    print("Executing function")  # This is a side-effect
    return x

f = jit(impure_print_side_effect)
with printed() as out:
    print("First call: ", f(4.))
    print("Second call: ", f(5.))
    print("Third call, different type: ", f(np.array([5.])))

assert out.getvalue().count("Executing function") == 3   # JAX: 2 (once per trace)
assert f.last_backend == "cpu"                           # compiled by Numba, print included

# %%
g = 0.
def impure_uses_globals(x):
    return x + g

f = jit(impure_uses_globals)
print("First call: ", f(4.))
g = 10.  # Update the global
print("Second call: ", f(5.))

assert f(5.) == 15.   # JAX: 5.0, the value of g when it traced
assert f.last_backend == "cpu"

# %%
g = 0.
def impure_saves_global(x):
    global g
    g = x
    return x

with raises(PurityError):
    jit(impure_saves_global)(4.)
assert g == 0.   # JAX: g is now a leaked tracer

# %% [markdown]
# A function may use state it creates itself. JAX compiles this one, and so does strop: a local
# dict becomes one variable per key, and the key computed here is one of two constants, so
# each read and update of `state` at it becomes a choice between the two variables.

# %%
def pure_uses_internal_state(x):
    state = dict(even=0, odd=0)
    for i in range(10):
        state['even' if i % 2 == 0 else 'odd'] += x
    return state['even'] + state['odd']

f = jit(pure_uses_internal_state)
with warned() as w:
    print(f(5.))
assert f(5.) == 50.
assert not w and f.last_backend == "cpu"
assert grad(pure_uses_internal_state)(5.) == 10.   # the local dict is differentiated too
assert jit(grad(pure_uses_internal_state))(5.) == 10.
print(strop.source(f))

# %% [markdown]
# With constant keys the dict becomes two local variables directly:

# %%
def pure_uses_internal_state(x):
    state = dict(even=0, odd=0)
    for i in range(10):
        if i % 2 == 0:
            state['even'] += x
        else:
            state['odd'] += x
    return state['even'] + state['odd']

f = jit(pure_uses_internal_state)
assert f(5.) == 50. and f.last_backend == "cpu"
print(strop.source(f))

# %% [markdown]
# ### Iterators
#
# **JAX:** an iterator in a `lax` loop body gives a silently wrong result (`fori_loop` with
# `next(iterator)` returns 0) or a tracing error. **strop:** called on values, the `lax`
# functions are the Python they mean, so `next` works as in Python; in a transformed function,
# advancing an iterator that came from outside is a `PurityError`, and an iterator given where
# an array is expected is a `TypeError`.

# %%
array = np.arange(10)
print(lax.fori_loop(0, 10, lambda i, x: x + array[i], 0))  # expected result 45
iterator = iter(range(10))
print(lax.fori_loop(0, 10, lambda i, x: x + next(iterator), 0))  # Python's meaning: 45, JAX: 0

assert lax.fori_loop(0, 10, lambda i, x: x + array[i], 0) == 45

# %%
iterator = iter(range(10))
def sum_of_next(x):
    return lax.fori_loop(0, 10, lambda i, v: v + next(iterator), x)

with raises(PurityError):
    jit(sum_of_next)(0.)

# %%
def func11(arr, extra):
    ones = np.ones(arr.shape)
    def body(carry, aelems):
        ae1, ae2 = aelems
        return (carry + ae1 * ae2 + extra, carry)
    return lax.scan(body, 0., (arr, ones))

carry, ys = jit(func11)(np.arange(16.), 5.)
assert carry == np.arange(16.).sum() + 16 * 5.

with raises(TypeError):
    jit(func11)(iter(range(16)), 5.)

# %%
def cond_on_iterator(x):
    return lax.cond(True, lambda it: next(it) + x, lambda it: next(it) - x, iter(range(10)))

with raises(PurityError):
    jit(cond_on_iterator)(1.)

# %% [markdown]
# ## 🔪 In-place updates
#
# **JAX:** its arrays are immutable: `x[1, :] = 1.0` is a `TypeError`, and `x.at[idx].set(y)`
# returns an updated copy (in place under `jit` when `x` is not used again). **strop:** arrays
# are NumPy's, so outside a transform they are mutable as always. Inside a transformed function,
# changing an *argument* in place is an `ImmutableUpdateError` (a `TypeError` too) whose fix is
# the `.at` line to write; arrays the function creates may be changed in place, and that is
# differentiated.

# %%
numpy_array = np.zeros((3, 3), dtype=np.float32)
numpy_array[1, :] = 1.0   # In place, mutating update: NumPy, outside any transform
print(numpy_array)

# %%
def set_row(x):
    x[1, :] = 1.0
    return x

with raises(ImmutableUpdateError):
    jit(set_row)(np.zeros((3, 3)))
assert issubclass(ImmutableUpdateError, TypeError)   # what JAX raises

# %% [markdown]
# The fix the message gives, `x = x.at[1, :].set(1.0)`, works inside transformed code (NumPy
# arrays have no `.at`: strop rewrites it). The argument is not changed (unless it is donated,
# `jit(f, donate_argnums=0)`: the FAQ notebook shows that).

# %%
def set_row(x):
    x = x.at[1, :].set(1.0)
    return x

jax_array = np.zeros((3, 3), dtype=np.float32)
new = jit(set_row)(jax_array)
print("old array unchanged:\n", jax_array)
print("new array:\n", new)
assert (jax_array == 0).all() and (new[1] == 1).all() and (new[[0, 2]] == 0).all()

# %% [markdown]
# Outside transformed code, `strop.at(x)` gives the same updates on a plain array, and
# `strop.ops` keeps the older functional API the seed shows (`index_update`, `index_add`, ...).

# %%
from strop import ops

jax_array = np.ones((5, 6))
new_jax_array = ops.index_add(jax_array, ops.index[::2, 3:], 7.)
print(new_jax_array)
assert (strop.at(jax_array)[::2, 3:].add(7.) == new_jax_array).all()
assert (ops.index_update(jax_array, ops.index[1, :], 0.)[1] == 0).all() and (jax_array == 1).all()

# %% [markdown]
# An array the function creates is its own to change: `y[i] = ...` and `y[i] += ...` on a local
# array are rewritten into functional updates, so `grad` goes through them.

# %%
def build(x):
    y = np.zeros(3)
    y[0] = x
    y[1] = x ** 2
    y[2] += 3 * y[1]
    return np.sum(y)          # x + x**2 + 3 x**2

assert build(2.) == 18. and grad(build)(2.) == 17. and jit(grad(build))(2.) == 17.

# %% [markdown]
# ## 🔪 Out-of-bounds indexing
#
# **JAX:** an index out of range is clamped silently (`jnp.arange(10)[11]` is 9) and
# out-of-range updates are dropped. **strop:** plain indexing raises NumPy's `IndexError` on
# every backend, compiled code included, naming your line; `.at[...]` keeps JAX's modes (`get`
# clamps or fills, updates out of range are dropped), the same compiled and not.

# %%
try:
    np.arange(10)[11]
except Exception as e:
    print("Exception {}".format(e))

# %%
def read(x, i):
    return x[i]

with raises(IndexError):
    jit(read)(np.arange(10.), 11)     # JAX: 9.0

# %%
def at_modes(x, i):
    return x.at[i].get(), x.at[i].get(mode="fill", fill_value=np.nan), x.at[i].add(100.)

for backend in ("cpu", "python"):
    clamped, filled, added = jit(at_modes, backend=backend)(np.arange(10.), 11)
    print(backend, clamped, filled, added)
    assert clamped == 9. and np.isnan(filled) and (added == np.arange(10.)).all()

# %% [markdown]
# ## 🔪 Non-array inputs: NumPy vs. JAX
#
# **JAX:** `jnp.sum([1, 2, 3])` is a `TypeError`: a list is not an array, and under a transform
# it would be a separate input per element. **strop:** functions are NumPy's, so a list given to
# a NumPy function is an array, as in NumPy, and no `TypeError` is raised. Given to a
# transform, a list is a pytree: `grad` returns a list; under `jit` a NumPy function given the
# list reads the array NumPy would make of it (`np.asarray`), so the function compiles and gives
# what NumPy gives.

# %%
def permissive_sum(x):
    return np.sum(x)

assert permissive_sum([1, 2, 3]) == 6          # NumPy (JAX: TypeError)
assert grad(permissive_sum)([1., 2., 3.]) == [1., 1., 1.]

f = jit(permissive_sum)
with warned() as w:
    assert f(list(range(10))) == 45
assert not w and f.last_backend == "cpu"
print(strop.source(f))

# %% [markdown]
# An array compiles too:

# %%
assert f(np.arange(10)) == 45 and f.last_backend == "cpu"

# %% [markdown]
# ## 🔪 Random numbers
#
# **JAX:** NumPy's generator hides its state; JAX's PRNG is explicit, splittable Threefry-2x32
# keys, and a key reused gives the same numbers, silently. **strop:** the same algorithm bit for
# bit (the seed's printed values below), `np.random` inside a transformed function is a
# `PurityError`, and a key used twice in a function is a `KeyReuseWarning`.
#
# The Sharp Bits printed its values with JAX's original stream of keys; current JAX, and
# strop by default, use the *partitionable* one (`jax_threefry_partitionable`, the default
# since JAX 0.5). To show the seed's values, this section sets the original stream:

# %%
print(np.random.random())
print(np.random.random())
print(np.random.random())

# %%
def noisy(x):
    return x + np.random.normal()

with raises(PurityError):
    jit(noisy)(1.)

# %%
strop.config.update("threefry_partitionable", False)   # JAX's original stream, as printed
key = random.PRNGKey(0)
print(key)
assert key.tolist() == [0, 0] and key.dtype == np.uint32

# %%
print(random.normal(key, shape=(1,)))
print(key)
# No no no!
print(random.normal(key, shape=(1,)))
print(key)
assert random.normal(key, shape=(1,))[0] == np.float32(-0.20584226)

# %%
print("old key", key)
key, subkey = random.split(key)
normal_pseudorandom = random.normal(subkey, shape=(1,))
print(r"    \---SPLIT --> new key   ", key)
print(r"             \--> new subkey", subkey, "--> normal", normal_pseudorandom)
assert key.tolist() == [4146024105, 967050713] and subkey.tolist() == [2718843009, 1272950319]
assert normal_pseudorandom[0] == np.float32(-1.2515389)

# %%
print("old key", key)
key, subkey = random.split(key)
normal_pseudorandom = random.normal(subkey, shape=(1,))
print(r"    \---SPLIT --> new key   ", key)
print(r"             \--> new subkey", subkey, "--> normal", normal_pseudorandom)
assert key.tolist() == [2384771982, 3928867769] and subkey.tolist() == [1278412471, 2182328957]
assert normal_pseudorandom[0] == np.float32(-0.58665055)

# %%
key, *subkeys = random.split(key, 4)
draws = [random.normal(subkey, shape=(1,)) for subkey in subkeys]
for d in draws:
    print(d)
assert np.allclose(np.concatenate(draws), [-0.37533438, 0.98645043, 0.14553197])

# %% [markdown]
# Back to the default, current JAX's *partitionable* stream: the same seed splits into other
# keys, JAX's own (`jax.random.split(jax.random.key(0))`):

# %%
strop.config.update("threefry_partitionable", True)   # the default
keys = random.split(random.key(0))      # random.key: current JAX's spelling of PRNGKey
print(keys)   # JAX 0.10's values (tests/data/rng_reference.json)
assert keys.tolist() == [[1797259609, 2579123966], [928981903, 3453687069]]

# %% [markdown]
# A key used twice inside a function is found when the function is transformed:

# %%
def twice(key):
    a = random.normal(key, (2,))
    b = random.uniform(key, (2,))
    return a + b

with warned() as w:
    jit(twice, backend="python")(random.PRNGKey(1))   # found when transforming: any backend
assert [x.category for x in w] == [KeyReuseWarning]

# %% [markdown]
# ## 🔪 Control flow
#
# ### ✔ Python control flow + autodiff ✔
#
# **JAX:** `grad` of Python control flow works. **strop:** the same, the branch kept in the
# generated derivative you can read.

# %%
def f(x):
    if x < 3:
        return 3. * x ** 2
    else:
        return -4 * x

print(grad(f)(2.))  # ok!
print(grad(f)(4.))  # ok!
assert grad(f)(2.) == 12. and grad(f)(4.) == -4.
print(strop.source(grad(f)))

# %% [markdown]
# ### Python control flow + JIT
#
# **JAX:** `jit` traces with abstract values, so `if x < 3` on an argument is an error and
# `range(n)` or `np.ones((n,))` needs `n` static (`static_argnums`), one compile per value.
# **strop:** nothing is traced: Numba compiles the `if` and the loop as they are, so they all work
# with no `static_argnums`; one compile serves every value.

# %%
@jit
def f(x):
    for i in range(3):
        x = 2 * x
    return x

assert f(3) == 24

@jit
def g(x):
    y = 0.
    for i in range(x.shape[0]):
        y = y + x[i]
    return y

assert g(np.array([1., 2., 3.])) == 6.

# %%
@jit
def f(x):
    if x < 3:
        return 3. * x ** 2
    else:
        return -4 * x

print(f(2), f(4.))   # JAX: ConcretizationTypeError unless x is static
assert f(2) == 12. and f(4.) == -16.

# %%
def f(x, n):
    y = 0.
    for i in range(n):
        y = y + x[i]
    return y

assert jit(f)(np.array([2., 3., 4.]), 2) == 5.      # JAX needs static_argnums=(1,)
assert jit(f, static_argnums=(1,))(np.array([2., 3., 4.]), 2) == 5.   # which strop accepts

# %%
def example_fun(length, val):
    return np.ones((length,)) * val

good_example_jit = jit(example_fun)   # JAX: static_argnums=(0,), and a compile per length
print(good_example_jit(10, 4))
print(good_example_jit(5, 4))
assert good_example_jit(5, 4).tolist() == [4.] * 5

# %% [markdown]
# `static_argnums` remains for arguments that are not numbers or arrays (a function, a string,
# a flag object); a static argument must be hashable, as in JAX:

# %%
with raises(ValueError):
    jit(example_fun, static_argnums=1)(5, np.ones(2))

# %% [markdown]
# A `print` in a jitted function prints values, on every call (JAX prints tracers, once):

# %%
@jit
def f(x):
    print(x)
    y = 2 * x
    print(y)
    return y

with printed() as out:
    f(2)
    f(3.)
assert out.getvalue().split() == ["2", "4", "3.0", "6.0"]

# %% [markdown]
# ### Structured control flow primitives
#
# **JAX:** `lax.cond` and `lax.scan` are differentiable, `lax.while_loop` and a `fori_loop` with
# bounds that are not constants only in forward mode. **strop:** each is rewritten into the
# Python loop or `if` it means before any transform runs, so all four are differentiable in both
# modes, and `strop.source` shows the loop.

# %%
operand = np.array([0.])
print(lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand))
print(lax.cond(False, lambda x: x + 1, lambda x: x - 1, operand))
assert lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand) == 1.

init_val = 0
cond_fun = lambda x: x < 10
body_fun = lambda x: x + 1
assert lax.while_loop(cond_fun, body_fun, init_val) == 10

body_fun = lambda i, x: x + i
assert lax.fori_loop(0, 10, body_fun, init_val) == 45

# %% [markdown]
# Reverse mode through `while_loop` and through a `fori_loop` whose bounds are arguments
# (JAX: "Reverse-mode differentiation does not work for lax.while_loop"):

# %%
def power_while(x):
    def body(carry):
        i, y = carry
        return i + 1, y * x
    return lax.while_loop(lambda c: c[0] < 3, body, (0, 1.))[1]    # x ** 3

def power_fori(x, n):
    return lax.fori_loop(0, n, lambda i, y: y * x, 1.)             # x ** n

print(grad(power_while)(2.), grad(power_fori)(2., 3), jit(grad(power_fori))(2., 3))
assert grad(power_while)(2.) == 12. and grad(power_fori)(2., 3) == 12.
assert jit(grad(power_fori))(2., 3) == 12.

# %%
def cumulative(xs):
    def step(total, x):
        total = total + x ** 2
        return total, total
    return lax.scan(step, 0., xs)

total, running = cumulative(np.array([1., 2., 3.]))
assert total == 14. and running.tolist() == [1., 5., 14.]
assert grad(lambda xs: cumulative(xs)[0])(np.array([1., 2., 3.])).tolist() == [2., 4., 6.]
print(strop.source(grad(power_fori)))

# %% [markdown]
# #### Summary
#
# | construct | JAX `jit` | JAX `grad` | strop `jit` | strop `grad` |
# |---|---|---|---|---|
# | `if` | ❌ | ✔ | ✔ | ✔ |
# | `for` | ✔* | ✔ | ✔ | ✔ |
# | `while` | ✔* | ✔ | ✔ | ✔ |
# | `lax.cond` | ✔ | ✔ | ✔ | ✔ |
# | `lax.while_loop` | ✔ | fwd | ✔ | ✔ |
# | `lax.fori_loop` | ✔ | fwd | ✔ | ✔ |
# | `lax.scan` | ✔ | ✔ | ✔ | ✔ |
#
# \* JAX: argument-*value*-independent loop condition, and the loop is unrolled. strop never
# unrolls: Numba compiles the loop.

# %% [markdown]
# ## 🔪 Dynamic shapes
#
# **JAX:** an array whose shape depends on values (`x[~np.isnan(x)]`) cannot be made under
# `jit`. **strop:** the shapes are NumPy's at run time, so it can, and `grad` goes through it.

# %%
def nansum(x):
    mask = ~np.isnan(x)   # boolean mask: the result's shape depends on the values of x
    x_without_nans = x[mask]
    return x_without_nans.sum()

x = np.array([1, 2, np.nan, 3, 4])
f = jit(nansum)
print(f(x))
assert f(x) == 10. and f.last_backend == "cpu"
assert grad(nansum)(x).tolist() == [1., 1., 0., 1., 1.]

# %% [markdown]
# ## 🔪 NaNs
#
# **JAX:** `jax_debug_nans` checks the outputs of jitted functions and on a NaN re-runs them
# de-optimized to find the primitive. **strop:** `config.debug_nans` checks the outputs of
# compiled calls; on a NaN it re-runs the code as NumPy with NumPy raising, and the error names
# your line (for a gradient, the line whose derivative made the NaN).

# %%
@jit
def f(x, y):
    a = x * y
    b = (x + y) / (x - y)
    c = a + 2
    return a + b * c

x = np.array([2., 0.])
y = np.array([3., 0.])
with np.errstate(invalid="ignore"):
    print(f(x, y))     # debug_nans off: a NaN, as NumPy gives

with strop.config.override(debug_nans=True):
    with raises(FloatingPointError):
        f(x, y)

# %%
def sqrt_where_positive(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.))

with strop.config.override(debug_nans=True), np.errstate(invalid="ignore"):
    with raises(FloatingPointError):
        jit(grad(sqrt_where_positive))(np.array([-1., 4.]))

# %% [markdown]
# (The FAQ notebook explains that NaN: `where` after `sqrt` of a negative number.)
#
# ## 🔪 Double (64bit) precision
#
# **JAX:** 32-bit unless `jax_enable_x64`; asking for `float64` gives `float32` with a warning.
# **strop:** the same policy, `strop.config.update("enable_x64", True)` or `STROP_ENABLE_X64=1`;
# float64 arguments are made float32 at the transform's boundary, and arrays a function makes
# are float32 too. It can be switched in a running program (`config.override`).

# %%
with warned() as w:
    x = random.uniform(random.PRNGKey(0), (1000,), dtype=np.float64)
print(x.dtype)
assert x.dtype == np.float32 and len(w) == 1

def make(n):
    return np.linspace(0., 1., n) * 2

assert jit(make)(3).dtype == np.float32
assert jit(lambda a: a * 2)(np.ones(3)).dtype == np.float32      # a float64 argument

# %%
with strop.config.override(enable_x64=True):
    x = random.uniform(random.PRNGKey(0), (1000,), dtype=np.float64)
    print(x.dtype)
    assert x.dtype == np.float64 and jit(make)(3).dtype == np.float64

# %% [markdown]
# One divergence remains, and it is a bug: a Python number that a loop updates with 32-bit
# values is a 64-bit number in compiled code (Numba types `0.0` as float64), where NumPy and
# the Python backend keep float32. The compiled result is a NumPy float64 holding float32's
# value widened; the values agree to float32's precision. (When this is fixed, this cell fails:
# update it.)

# %%
def accumulate(a):
    x = 0.0
    for i in range(3):
        x = x + a
    return x

as_python = jit(accumulate, backend="python")(0.1)
compiled = jit(accumulate)(0.1)
print(repr(as_python), repr(compiled))
assert isinstance(as_python, np.float32) and compiled.dtype == np.float64
assert np.float32(compiled) == as_python

# %% [markdown]
# ## 🔪 Miscellaneous divergences from NumPy
#
# **JAX:** its own type promotion, and XLA's arithmetic (no warnings, out-of-range casts
# implementation-defined). **strop:** NumPy's arithmetic on every backend, with the same result
# types compiled and not: `1.0 / 0.0` is `inf` and `0.0 / 0.0` is `nan`, with NumPy's
# `RuntimeWarning`s at your line. Compiled code reads the CPU's floating-point flags around
# each call; when one is raised it runs the call again as Python, so the warnings (or, under
# `np.errstate(...="raise")`, the `FloatingPointError`) are NumPy's own.

# %%
def ratios(x):
    return 1.0 / x, x / x

for backend in ("cpu", "python"):
    with warned() as w:
        inf, nan = jit(ratios, backend=backend)(0.)
    print(backend, inf, nan)
    assert np.isinf(inf) and np.isnan(nan) and isinstance(inf, np.float32)
    assert len(w) == 2

with np.errstate(divide="raise"):
    try:
        jit(ratios)(0.)
    except FloatingPointError as e:
        print("FloatingPointError:", e)

# %% [markdown]
# ## 🔪 Convolutions
#
# **JAX:** `lax.conv_general_dilated` with dimension numbers, and `jnp.convolve` for NumPy's
# 1-D convolution. **strop:** `np.convolve` (with its derivative) inside transformed code, and
# `strop.lax`'s convolutions with JAX's signatures and results, differentiable and compiled.
#
# ### 1-D: smoothing a noisy signal
#
# A moving average is a convolution with a window:

# %%
key = random.PRNGKey(1701)
x = np.linspace(0, 10, 500)
y = np.sin(x) + 0.2 * random.normal(key, shape=(500,))
window = np.ones(10) / 10

def smooth(y, window):
    return np.convolve(y, window, mode="same")

y_smooth = smooth(y, window)
fig, ax = plt.subplots(figsize=(8, 3))
ax.plot(x, y, lw=0.8, alpha=0.6, label="noisy")
ax.plot(x, y_smooth, lw=2, label="smoothed")
ax.legend()

inner = slice(10, -10)   # away from the ends, where "same" pads with zeros
assert np.abs(y_smooth - np.sin(x))[inner].max() < np.abs(y - np.sin(x))[inner].max() / 2

# %% [markdown]
# `grad` differentiates through `np.convolve`: here it fits the window itself, a few steps of
# gradient descent on the distance to the clean signal.

# %%
def misfit(window, y, clean):
    return np.mean((np.convolve(y, window, mode="same") - clean)[10:-10] ** 2)

step = grad(misfit)
learned = np.zeros(10, np.float32)
losses = []
for _ in range(200):
    losses.append(misfit(learned, y, np.sin(x)))
    learned = learned - 0.1 * step(learned, y, np.sin(x))

fig, (a, b) = plt.subplots(1, 2, figsize=(8, 2.5))
a.semilogy(losses, label="learned window")
a.axhline(misfit(window, y, np.sin(x)), color="gray", ls=":", label="moving average")
a.set_title("misfit"); a.legend()
b.bar(range(10), learned); b.set_title("learned window")
assert losses[-1] < misfit(window, y, np.sin(x))     # better than the moving average
assert abs(learned.sum() - 1) < 0.1                  # and it still averages

# %% [markdown]
# ### 2-D: blurring and edges of an image
#
# A synthetic picture (no download): a disk, a square and some stripes, with noise.

# %%
n = 96
r, c = np.mgrid[0:n, 0:n]
picture = ((r - 30) ** 2 + (c - 34) ** 2 < 18 ** 2).astype(np.float32)
picture[55:85, 50:85] = 0.6
picture += 0.3 * (np.sin(c / 2.5) > 0) * (r > 60) * (c < 40)
picture += 0.15 * random.normal(random.PRNGKey(0), (n, n))

def gaussian(size, sigma):
    t = np.arange(size) - size // 2
    k = np.exp(-t ** 2 / (2 * sigma ** 2))
    return np.outer(k, k) / np.sum(k) ** 2

sobel_x = np.array([[1, 0, -1], [2, 0, -2], [1, 0, -1]], np.float32)
print("blur kernel:", gaussian(7, 1.5).shape, " edge kernels:", sobel_x.shape)

# %% [markdown]
# Images are `NHWC` (batch, height, width, channels) and kernels `HWIO` here; the dimension
# numbers say so. The two Sobel kernels are two output channels of one convolution.

# %%
img = picture[None, :, :, None]                                # N H W C
blur_kernel = gaussian(7, 1.5)[:, :, None, None]                # H W I O
edge_kernel = np.stack([sobel_x, sobel_x.T], axis=-1)[:, :, None, :]

def conv2d(img, kernel):
    return lax.conv_general_dilated(img, kernel, (1, 1), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))

def edges(img):
    gxy = conv2d(img, edge_kernel)             # the gradient along x and along y
    return np.sqrt(np.sum(gxy ** 2, axis=-1))  # its length

conv = jit(conv2d)
blurred = conv(img, blur_kernel.astype(np.float32))
edge = edges(blurred)

fig, axes = plt.subplots(1, 3, figsize=(10, 3.5))
for ax, im, title in zip(axes, [picture, blurred[0, :, :, 0], edge[0]],
                         ["picture", "blurred", "edges of the blurred picture"]):
    ax.imshow(im, cmap="gray")
    ax.set_title(title)
    ax.axis("off")

assert conv.last_backend == "cpu" and blurred.shape == img.shape
assert blurred[0, 5:25, 70:90, 0].std() < picture[5:25, 70:90].std() / 3   # the noise is gone
assert edge[0, 30, 50] > 4 * edge[0, 30, 34]     # the disk's rim, against its middle

# %% [markdown]
# `lax` convolutions are cross-correlations, as JAX's (and `scipy.signal.correlate2d`):

# %%
from scipy.signal import correlate2d

assert np.allclose(conv2d(img, edge_kernel)[0, :, :, 0],
                   correlate2d(picture, sobel_x, mode="same"), atol=1e-4)

# %% [markdown]
# ### The seed's examples: padding, strides, dilation
#
# The seed's diagonal edge kernel on three coloured squares, through the seed's calls: the
# output shapes are JAX's.

# %%
kernel = np.zeros((3, 3, 3, 3), dtype=np.float32)   # 2D kernel - HWIO layout
kernel += np.array([[1, 1, 0],
                    [1, 0, -1],
                    [0, -1, -1]])[:, :, np.newaxis, np.newaxis]

img = np.zeros((1, 200, 198, 3), dtype=np.float32)  # NHWC layout
for k in range(3):
    x = 30 + 60 * k
    y = 20 + 60 * k
    img[0, x:x + 10, y:y + 10, k] = 1.0

out = lax.conv(np.transpose(img, [0, 3, 1, 2]),      # lhs = NCHW image tensor
               np.transpose(kernel, [3, 2, 0, 1]),   # rhs = OIHW conv kernel tensor
               (1, 1),  # window strides
               "SAME")  # padding mode
assert out.shape == (1, 3, 200, 198)

out = lax.conv_with_general_padding(
    np.transpose(img, [0, 3, 1, 2]),    # lhs = NCHW image tensor
    np.transpose(kernel, [2, 3, 0, 1]),  # rhs = IOHW conv kernel tensor
    (1, 1),  # window strides
    ((2, 2), (2, 2)),  # general padding 2x2
    (1, 1),  # lhs/image dilation
    (1, 1))  # rhs/kernel dilation
assert out.shape == (1, 3, 202, 200)

dn = lax.conv_dimension_numbers(img.shape,     # only ndim matters, not shape
                                kernel.shape,  # only ndim matters, not shape
                                ("NHWC", "HWIO", "NHWC"))  # the important bit
print(dn)

# %%
cases = {   # window strides, padding, lhs dilation, rhs dilation -> JAX's output shape
    "SAME padding": ((1, 1), "SAME", (1, 1), (1, 1), (1, 200, 198, 3)),
    "VALID padding": ((1, 1), "VALID", (1, 1), (1, 1), (1, 198, 196, 3)),
    "SAME, stride 2": ((2, 2), "SAME", (1, 1), (1, 1), (1, 100, 99, 3)),
    "VALID, rhs dilation 12 (atrous)": ((1, 1), "VALID", (1, 1), (12, 12), (1, 176, 174, 3)),
    "lhs dilation 2 (transposed)": ((1, 1), ((0, 0), (0, 0)), (2, 2), (1, 1), (1, 397, 393, 3)),
}
fig, axes = plt.subplots(1, len(cases), figsize=(15, 3.2))
for ax, (title, (strides, padding, lhs_d, rhs_d, shape)) in zip(axes, cases.items()):
    out = lax.conv_general_dilated(img, kernel, strides, padding, lhs_d, rhs_d, dn)
    assert out.shape == shape, (title, out.shape)
    ax.imshow(out[0, :, :, 0])
    ax.set_title(f"{title}\n{out.shape}", fontsize=8)

# the seed's transposed convolution: the kernel turned 180°, lhs dilation and its own padding
kernel_rot = np.rot90(np.rot90(kernel, axes=(0, 1)), axes=(0, 1))
out = lax.conv_general_dilated(img, kernel_rot, (1, 1), ((2, 1), (2, 1)), (2, 2), (1, 1), dn)
assert out.shape == (1, 400, 396, 3)

# %% [markdown]
# `grad` with respect to the kernel (to learn one), against a central difference:

# %%
def response(kernel, img):
    return np.sum(lax.conv_general_dilated(img, kernel, (1, 1), "SAME", (1, 1), (1, 1), dn) ** 2)

dk = grad(response)(kernel, img)
eps = 1e-2
bump = np.zeros_like(kernel); bump[1, 2, 0, 0] = eps
numeric = (response(kernel + bump, img) - response(kernel - bump, img)) / (2 * eps)
assert dk.shape == kernel.shape and abs(dk[1, 2, 0, 0] - numeric) < 1e-2 * abs(numeric)

# %% [markdown]
# ### 1-D and 3-D
#
# The seed's two-channel 1-D signal and a 3-D field, with `NWC`/`WIO` and `NHWDC`/`HWDIO`:

# %%
kernel = np.array([[[1, 0, -1], [-1, 0, 1]],
                   [[1, 1, 1], [-1, -1, -1]]],
                  dtype=np.float32).transpose([2, 1, 0])   # 1D kernel - WIO layout
data = np.zeros((1, 200, 2), dtype=np.float32)              # 1D data - NWC layout
for i in range(2):
    for k in range(2):
        x = 35 * i + 30 + 60 * k
        data[0, x:x + 30, k] = 1.0

dn = lax.conv_dimension_numbers(data.shape, kernel.shape, ("NWC", "WIO", "NWC"))
out = lax.conv_general_dilated(data, kernel, (1,), "SAME", (1,), (1,), dn)
fig, (a, b) = plt.subplots(1, 2, figsize=(10, 2.5))
a.plot(data[0]); a.set_title("in")
b.plot(out[0]); b.set_title("out")
assert out.shape == (1, 200, 2)

# %%
kernel = np.array([
    [[0, 0, 0], [0, 1, 0], [0, 0, 0]],
    [[0, -1, 0], [-1, 0, -1], [0, -1, 0]],
    [[0, 0, 0], [0, 1, 0], [0, 0, 0]]],
    dtype=np.float32)[:, :, :, np.newaxis, np.newaxis]     # 3D kernel - HWDIO layout
x, y, z = np.mgrid[0:1:30j, 0:1:30j, 0:1:30j]
data = (np.sin(2 * x * np.pi) * np.cos(2 * y * np.pi) * np.cos(2 * z * np.pi))
data = data[None, :, :, :, None].astype(np.float32)        # 3D data - NHWDC layout
dn = lax.conv_dimension_numbers(data.shape, kernel.shape, ("NHWDC", "HWDIO", "NHWDC"))
out = lax.conv_general_dilated(data, kernel, (1, 1, 1), "SAME", (1, 1, 1), (1, 1, 1), dn)
assert out.shape == (1, 30, 30, 30, 1)

from scipy.signal import correlate
assert np.allclose(out[0, ..., 0], correlate(data[0, ..., 0], kernel[..., 0, 0], mode="same"),
                   atol=1e-5)

# %% [markdown]
# ## Fin.
#
# JAX's FAQ, told for strop, is [faq.ipynb](faq.ipynb), and a tour of what strop does is
# [tour.ipynb](tour.ipynb); strop's README says how it works.
