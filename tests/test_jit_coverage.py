"""Coverage of jit: every function the python backend runs also compiles (issue 15).

A table of small user functions, one per construct and NumPy family of the derivative rules,
each run under ``jit(f)``, ``jit(grad(f))`` and ``jit(vmap(f))`` with JitFallbackWarning an
error, compared with the python backend.  What still falls back is listed in ``FALLS_BACK``
with the reason, as a strict xfail: it fails the day it compiles."""
import re
import warnings

import numpy as np
import pytest

import strop
from helpers import x64_fixture

x64 = pytest.fixture(autouse=True)(x64_fixture)


# --- reductions ------------------------------------------------------------------------------
def sum_axis(x):
    return np.sum(np.sum(x * x, axis=0))


def sum_axis_tuple(x):
    return np.sum(np.sum(x ** 2, axis=(0, 1)))


def sum_keepdims(x):
    return np.sum(x / np.sum(x ** 2, axis=-1, keepdims=True))


def mean_axis(x):
    return np.sum(np.mean(x, axis=1) ** 2)


def mean_keepdims(x):
    return np.sum((x - np.mean(x, axis=0, keepdims=True)) ** 2)


def max_axis(x):
    return np.sum(np.max(x, axis=0))


def min_axis(x):
    return np.sum(np.min(x, axis=1))


def prod_axis(x):
    return np.sum(np.prod(x, axis=0))


def var_axis(x):
    return np.sum(np.var(x, axis=0))


def std_axis(x):
    return np.sum(np.std(x, axis=1))


def method_sum(x):
    return x.sum(axis=0).sum()


def cumsum_axis(x):
    return np.sum(np.cumsum(x, axis=1) ** 2)


def cumprod_axis(x):
    return np.sum(np.cumprod(x, axis=0))


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return np.sum((e / np.sum(e, axis=-1, keepdims=True)) * x)


def faq_centered(x):
    return np.sum(x.T @ (x - x.mean(axis=0)))


# --- shape ops -------------------------------------------------------------------------------
def tile(x):
    return np.sum(np.tile(x, (2, 1)) ** 2)


def repeat(x):
    return np.sum(np.repeat(x, 2, axis=0) ** 2)


def pad(x):
    return np.sum(np.pad(x, 1) ** 2)


def roll(x):
    return np.sum(np.roll(x, 1, axis=0) * x)


def concatenate_list(x):
    """np.concatenate of a list, the axis left out, as users write it: Numba's own takes a
    tuple, strop's a list only where the axis was given; it ran in an object-mode island."""
    return np.sum(np.concatenate([x, x[:1]]) ** 2)


def roll_flat(x):
    """np.roll without an axis (of the flattened array): its cotangent, np.roll(g, -1,
    None), ran in an object-mode island (Numba's np.roll takes no axis argument)."""
    return np.sum(np.roll(x, 1) * x)


def flip(x):
    return np.sum(np.flip(x, 0) * x)


def broadcast_to(x):
    return np.sum(np.broadcast_to(x[0], (4, 3)) ** 2)


def transpose_reshape(x):
    return np.sum(np.reshape(x.T, (-1,)) * np.arange(12.0))


def concatenate(x):
    return np.sum(np.concatenate([x, x * 2], axis=1) ** 2)


def stack_rows(x):
    return np.sum(np.stack([x[0], x[1]]) ** 2)


def split(x):
    a, b = np.split(x, 2)
    return np.sum(a * b)


def expand_squeeze(x):
    return np.sum(np.squeeze(np.expand_dims(x, 0), 0) ** 2)


def diag(x):
    return np.sum(np.diag(x[:3, :3]) ** 2)


def trace(x):
    return np.trace(x[:3, :3] * x[:3, :3])


def tril_triu(x):
    return np.sum(np.tril(x) ** 2 + np.triu(x))


def astype(x):
    return np.sum(x.astype(np.float64) ** 2)


# --- products --------------------------------------------------------------------------------
def einsum(x):
    return np.sum(np.einsum("ij,kj->ik", x, x))


def outer(x):
    return np.sum(np.outer(x[0], x[1]))


def kron(x):
    return np.sum(np.kron(x[0], x[1]) ** 2)


def tensordot(x):
    return np.sum(np.tensordot(x, x, axes=([1], [1])))


def dot_stack(x):
    return np.sum(np.dot(x, x[0]) ** 2)


def matmul(x):   # also named like the helper `@` compiles to
    return np.sum(x @ x.T)


# --- sorting, linalg -------------------------------------------------------------------------
def sort(x):
    return np.sum(np.sort(x, axis=1) * np.arange(3.0))


def _spd(x):
    a = x[:3, :3]
    return a @ a.T + 3.0 * np.eye(3)


def solve(x):
    return np.sum(np.linalg.solve(_spd(x), x[0]))


def inv(x):
    return np.sum(np.linalg.inv(_spd(x)))


def det(x):
    return np.linalg.det(_spd(x))


def cholesky(x):
    return np.sum(np.linalg.cholesky(_spd(x)))


def eigh(x):
    w, v = np.linalg.eigh(_spd(x))
    return np.sum(w)


def norm(x):
    return np.linalg.norm(x) + np.linalg.norm(x[0])


# --- elementwise, constructs -----------------------------------------------------------------
def ufuncs(x):
    return np.sum(np.tanh(x) + np.exp(-x * x) + np.sqrt(np.abs(x) + 1.0) + np.arctan2(x, 2.0))


def where_clip(x):
    return np.sum(np.where(x > 0.5, x, x * x) + np.clip(x, 0.2, 0.9))


def keywords(x):
    return np.sum(np.clip(x, a_min=0.1, a_max=0.8))


def builtins(x):
    return max(x[0, 0], x[1, 1]) + min(x[0, 1], 2.0) + abs(x[2, 2])


def local_list(x):
    out = []
    for i in range(x.shape[0]):
        out.append(np.sum(x[i] ** 2))
    return out[0] + out[-1]


def local_dict(x):
    d = {"a": x[0, 0]}
    for i in range(3):
        d["a"] = d["a"] * x[i, 0] + 1.0
    return d["a"]


def at_set_slice(x):
    y = x.at[0:2].set(1.0)
    return np.sum(y * x)


def at_add(x):   # also named like its helper
    return np.sum(x.at[1, 2].add(3.0) ** 2)


def loop_branch(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i, 0] > 0.5:
            s = s + np.sum(x[i])
        else:
            s = s - x[i, 1]
    return s


def while_loop(x):
    s = x[0, 0]
    while s < 10.0:
        s = s * 2.0 + 1.0
    return s


# --- numeric ---------------------------------------------------------------------------------
def interp(x):
    return np.sum(np.interp(np.array([0.1, 0.5, 0.9]), np.arange(4.0) / 3.0, x[:, 0]))


def convolve(x):
    return np.sum(np.convolve(x[0], x[1]) ** 2)


def select(x):
    return np.sum(np.select([x < 0.3, x > 0.7], [x * 2.0, x * x], 0.0))


def cov(x):
    return np.sum(np.cov(x))


def fftshift(x):
    return np.sum(np.fft.fftshift(x[0]) * np.arange(3.0))


def polyval(x):
    return np.sum(np.polyval(x[0], x[1]))


def stack(a):   # a user function whose name is a runtime helper's
    return np.sum(a * a)


def calls_stack(x):
    return stack(x) + 1.0


def lane_axes(x):
    return np.sum(strop.vmap(lambda r: np.sum(r * r))(x))


def np_matmul(x):
    return np.sum(np.matmul(x, x[0]) ** 2)


def empty_and_grown_lists(x):
    never = []
    grown = []
    for i in range(3):
        grown.append(x[i, 0] * i)
    return sum(grown, 0.0) + sum(never, 0.0) + len(never)


def record(x):
    st = {"a": np.tanh(x), "w": x[1, 0] * 2.0}
    for i in range(3):
        st["w"] = np.sin(st["w"] * 2.0) + st["a"][0, 1]
        st["a"] = st["a"] * 0.5
    return st["w"] + np.sum(st["a"])


def number_becomes_array(x):
    s = 0
    for i in range(x.shape[0]):
        s = s * 0.5 + x[i]
    return np.sum(s * s)


def where_in_a_branch(x):     # a mask made in a branch the loop may skip: taped as Optional
    a = x[0]
    for i in range(3):
        if a[1] > 0.5:
            a = np.maximum(a * 0.5, np.where(a > 0.25, a, a * 2.0))
        if a[1] > 0.3:
            break
    return np.sum(a ** 2)


def hstack_with_ones(x):   # autograd's rnn.py: np.hstack(args + (np.ones(...),))
    return np.sum(np.tanh(np.hstack((x[0], np.ones(2), x[1, :2]))) ** 2)


def vstack_of_layouts(x):   # F-ordered (x.T) and C-ordered arrays (ag_mlrefined_mlp)
    return np.sum(np.vstack((x[:3].T, x[1:], x[:1] * 2.0)) ** 3)


def column_stack_vector(x):
    return np.sum(np.column_stack((x[:, 0], x)) ** 2)


def dot_of_3d(x):   # a Dense layer on a batch of sequences: np.dot(3-d, 2-d)
    return np.sum(np.tanh(np.dot(np.stack([x, x * 2.0]), x[:3].T)))


def dot_of_3d_vector(x):
    return np.sum(np.dot(np.stack([x, x + 1.0]), x[0]) ** 2)


def logsumexp_squeezed(x):
    """np.squeeze(x) has a rank the shape decides: here known (every axis kept, of length 1)."""
    m = np.max(x, keepdims=True)
    out = m + np.log(np.sum(np.exp(x - m), keepdims=True))
    return np.squeeze(out)


def zip_of_starred_rows(x):
    """zip(*xs): known as sequences only once xs is a display (it walked a list of tuples)."""
    total = 0.0
    for a, b in zip(*(x[:2], x[2:])):
        total = total + np.sum(a * np.sin(b))
    return total


def stack_of_appended(x):
    """Numba's np.stack and its kin take tuples; lists grown in a loop are joined too."""
    rows = []
    sums = []
    for r in x:
        rows.append(np.tanh(r))
        sums.append(np.sum(r ** 2))
    return (np.sum(np.vstack(rows) * 2.0) + np.sum(np.stack(sums) ** 2) +
            np.sum(np.hstack(rows) ** 3) + np.sum(np.column_stack(rows) ** 2) +
            np.sum(np.stack(rows, 1) * np.arange(4.0)))


def rebinds_to_another_rank_in_a_trip(x):
    """q is a vector then a matrix in one trip: one tape could not hold both."""
    total = 0.0
    for r in x:
        q = np.exp(r)
        q = np.reshape(q, (1, -1))
        total = total + np.sum(q @ q.T)
    return total


def list_rebuilt_each_trip(x):
    """parts = _list1 (a comprehension's list given the user's name) kept the list from
    growing in place, and Numba could not type the empty list."""
    total = 0.0
    for k in range(2):
        parts = [np.sin(r * (k + 1)) for r in x]
        total = total + np.sum(np.vstack(parts).T ** 2)
    return total


def tensordot_axes_pairs(x):
    """np.tensordot with axes a pair of tuples, and of ints (Numba has no np.tensordot; its
    object-mode island failed on samples where the axes' values matter)."""
    v = np.tensordot(x, x[0], ((1,), (0,)))
    return np.sum(np.tensordot(x, x, (0, 0)) ** 2) + np.sum(v) * np.sum(np.tensordot(x.T, v, 1))


FUNCTIONS = [
    where_in_a_branch, record, np_matmul, empty_and_grown_lists, sum_axis, sum_axis_tuple, sum_keepdims,
    mean_axis, mean_keepdims, max_axis, min_axis,
    prod_axis, var_axis, std_axis, method_sum, cumsum_axis, cumprod_axis, softmax,
    faq_centered, tile, repeat, pad, roll, roll_flat, concatenate_list, flip, broadcast_to, transpose_reshape, concatenate,
    stack_rows, split, expand_squeeze, diag, trace, tril_triu, astype, einsum, outer, kron,
    tensordot, dot_stack, matmul, sort, solve, inv, det, cholesky, eigh, norm, ufuncs,
    where_clip, keywords, builtins, local_list, local_dict, at_set_slice, at_add, loop_branch,
    while_loop, interp, convolve, select, cov, fftshift, polyval, calls_stack, lane_axes,
    number_becomes_array, hstack_with_ones, vstack_of_layouts, column_stack_vector, dot_of_3d,
    dot_of_3d_vector, logsumexp_squeezed, zip_of_starred_rows, stack_of_appended,
    rebinds_to_another_rank_in_a_trip, list_rebuilt_each_trip, tensordot_axes_pairs]

# (transform, function name) -> why it still runs as Python (or fails)
FALLS_BACK = {
    ("vmap", "logsumexp_squeezed"):
        "vmap runs np.max(x, keepdims=True) lane by lane, so the lengths np.squeeze(out) "
        "needs are not known in the lane function",
}


# (transform, function name) -> the helpers its compiled code runs in object mode, at
# Python's speed (a PerformanceWarning each: an island, or NumPy's product on arrays this
# small): the slow paths still to remove (issue 35).  Strict: a helper that compiles fails
# the test until its entry goes.
SLOW_PATHS = {
    ('jit', 'cumprod_axis'): ['cumprod'],
    ('jit', 'tile'): ['tile'],
    ('jit', 'repeat'): ['repeat'],
    ('jit', 'pad'): ['pad'],
    ('jit', 'einsum'): ['einsum'],
    ('jit', 'tensordot'): ['tensordot'],
    ('jit', 'sort'): ['sort'],
    ('jit', 'fftshift'): ['fftshift'],
    ('jit', 'polyval'): ['polyval'],
    ('grad', 'prod_axis'): ['prod_grad'],
    ('grad', 'cumprod_axis'): ['cumprod', 'cumprod_vjp'],
    ('grad', 'tile'): ['tile', 'tile_vjp'],
    ('grad', 'repeat'): ['repeat', 'repeat_vjp'],
    ('grad', 'pad'): ['pad', 'pad_vjp'],
    ('grad', 'einsum'): ['einsum', 'einsum_vjp'],
    ('grad', 'kron'): ['kron_vjp_a', 'kron_vjp_b'],
    ('grad', 'tensordot'): ['tensordot', 'tensordot_vjp_a', 'tensordot_vjp_b'],
    ('grad', 'dot_of_3d'): ['tensordot_vjp_a', 'tensordot_vjp_b'],
    ('grad', 'dot_of_3d_vector'): ['tensordot_vjp_a', 'tensordot_vjp_b'],
    ('grad', 'tensordot_axes_pairs'): ['tensordot_vjp_a', 'tensordot_vjp_b'],
    ('grad', 'sort'): ['sort'],
    ('grad', 'cholesky'): ['cholesky_vjp'],
    ('grad', 'eigh'): ['eigh_vjp'],
    ('grad', 'norm'): ['norm_vjp'],
    ('grad', 'interp'): ['interp_vjp'],
    ('grad', 'convolve'): ['convolve_vjp'],
    ('grad', 'select'): ['select_vjp'],
    ('grad', 'cov'): ['cov_vjp'],
    ('grad', 'fftshift'): ['fftshift', 'ifftshift'],
    ('grad', 'polyval'): ['polyval'],
    ('grad', 'logsumexp_squeezed'): ['expand_to'],
    ('grad', 'stack_of_appended'): ['add'],
    ('vmap', 'cumprod_axis'): ['cumprod'],
    ('vmap', 'tile'): ['tile'],
    ('vmap', 'repeat'): ['repeat'],
    ('vmap', 'pad'): ['pad'],
    ('vmap', 'einsum'): ['einsum'],
    ('vmap', 'kron'): ['kron'],
    ('vmap', 'tensordot'): ['tensordot'],
    ('vmap', 'sort'): ['sort'],
    ('vmap', 'fftshift'): ['fftshift'],
    ('vmap', 'polyval'): ['polyval'],
}


def _x():
    return np.random.default_rng(0).uniform(0.1, 1.0, (4, 3))


TRANSFORMS = {
    "jit": lambda f: f,
    "grad": strop.grad,
    "vmap": strop.vmap,
}


def _cases():
    for name in TRANSFORMS:
        for f in FUNCTIONS:
            marks = ()
            why = FALLS_BACK.get((name, f.__name__))
            if why:
                marks = pytest.mark.xfail(strict=True, reason=why)
            yield pytest.param(name, f, id=f"{name}-{f.__name__}", marks=marks)


@pytest.mark.parametrize("transform,f", list(_cases()))
def test_compiles(transform, f):
    g = TRANSFORMS[transform](f)
    x = _x()
    if transform == "vmap":
        x = np.stack([x, x[::-1] * 0.5])
    want = strop.jit(g, backend="python")(x)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got = strop.jit(g)(x)
    slow = {re.search(r"helper (\w+)\(\)", str(w.message)).group(1) for w in seen
            if issubclass(w.category, strop.errors.PerformanceWarning)}
    assert slow == set(SLOW_PATHS.get((transform, f.__name__), ())), slow
    for a, b in zip(strop.tree_util.tree_leaves(got), strop.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
