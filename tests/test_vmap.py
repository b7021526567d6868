"""vmap against its oracle: a Python loop over the batch, stacked."""
import warnings

import numpy as np
import pytest

import strop
from strop import grad, jit, vmap

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def x64():
    with strop.config.override(enable_x64=True):
        yield


def loop(f, in_axes, *args, out_axes=0):
    """The oracle: f on each lane, stacked along out_axes."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = [f(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes)])
            for i in range(n)]
    if isinstance(outs[0], dict):
        return {k: np.stack([o[k] for o in outs], axis=out_axes) for k in outs[0]}
    if isinstance(outs[0], tuple):
        oa = out_axes if isinstance(out_axes, tuple) else (out_axes,) * len(outs[0])
        return tuple(np.stack([o[k] for o in outs], axis=a) if a is not None else outs[0][k]
                     for k, a in enumerate(oa))
    return np.stack(outs, axis=out_axes)


def check(f, *args, in_axes=0, out_axes=0, **tol):
    """vmap(f) and jit(vmap(f)) (compiled, per-lane runs fused) against the loop."""
    # the per-example code as strop runs it (plain NumPy has no x.at)
    want = loop(jit(f, backend="python"), in_axes, *args, out_axes=out_axes)
    batched = vmap(f, in_axes=in_axes, out_axes=out_axes)
    for got in batched(*args), compiled(batched, f, in_axes, args)(*args):
        if isinstance(want, (tuple, dict)):
            assert type(got) is type(want) and len(got) == len(want)
            for k in (want if isinstance(want, dict) else range(len(want))):
                np.testing.assert_allclose(got[k], want[k], **tol)
                assert np.result_type(got[k]) == np.result_type(want[k])
        else:
            np.testing.assert_allclose(got, want, **tol)
    return got


def compiled(batched, f, in_axes, args):
    """jit(vmap(f)), which must compile wherever jit(f) compiles one example."""
    fast = jit(batched)
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    one = jit(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
        one(*[a if ax is None else np.take(a, 0, axis=ax) for a, ax in zip(args, axes)])

    def call(*args):
        with warnings.catch_warnings():
            if one.last_backend == "cpu":
                warnings.simplefilter("error", strop.errors.JitFallbackWarning)
            else:
                warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
            out = fast(*args)
        assert fast.last_backend == one.last_backend
        return out
    return call


# --- statement rules ----------------------------------------------------------------------

def elementwise(x, w):
    return np.tanh(x) * w + np.exp(-x ** 2) / 2


def reductions(x):
    return x.sum(), x.mean(axis=0), np.max(x, axis=-1), np.cumsum(x), np.argmax(x)


def shapes(x):
    y = x.reshape(6)
    z = x.T @ x
    return y[::2], z, np.concatenate([x[0], x[1]]), np.expand_dims(x, 0).sum(axis=1), x.shape[1]


def indexing(x, i):
    return x[i] * 2.0 + x[0]


def updates(x):
    y = x.at[1].set(0.0)
    y = y.at[0].add(x[2])
    return y


def rank_mix(s, v):
    return s * v + s     # a number per lane against a vector per lane


@pytest.mark.parametrize("f,shape", [(elementwise, (5, 3)), (reductions, (4, 2, 3)),
                                     (shapes, (4, 2, 3)), (updates, (3, 4))])
def test_rules_against_loop(f, shape):
    args = (RNG.normal(size=shape),) + ((0.5,) if f is elementwise else ())
    axes = (0, None) if f is elementwise else 0
    check(f, *args, in_axes=axes, rtol=1e-12)


def test_lanes_of_different_rank_line_up():
    check(rank_mix, RNG.normal(size=4), RNG.normal(size=(4, 3)), rtol=1e-12)
    check(rank_mix, RNG.normal(size=4), RNG.normal(size=3), in_axes=(0, None), rtol=1e-12)


def test_batched_index():
    x = RNG.normal(size=(5, 6))
    check(indexing, x, np.array([0, 3, 5, 1, 2]), in_axes=(0, 0))
    check(indexing, x[0], np.array([0, 3, 5, 1, 2]), in_axes=(None, 0))


def test_in_axes_out_axes_negative_and_none():
    x = RNG.normal(size=(3, 4))
    check(elementwise, x, 2.0, in_axes=(1, None), out_axes=1)
    check(elementwise, x, 2.0, in_axes=(-1, None), out_axes=-1)
    f = lambda x, y: (x + y, y * 2.0)   # noqa: E731
    got = vmap(f, in_axes=(0, None), out_axes=(0, None))(x, np.ones(4))
    np.testing.assert_allclose(got[0], x + 1)
    np.testing.assert_allclose(got[1], 2 * np.ones(4))


def test_pytree_in_axes_prefix():
    def f(p, x):
        return p["w"] * x + p["b"]
    p = {"w": RNG.normal(size=(5, 3)), "b": RNG.normal(size=3)}
    x = RNG.normal(size=(5, 3))
    got = vmap(f, in_axes=({"w": 0, "b": None}, 0))(p, x)
    np.testing.assert_allclose(got, p["w"] * x + p["b"])


def test_axis_size_with_nothing_batched():
    got = vmap(lambda x: x * 2.0, in_axes=None, axis_size=3)(np.ones(2))
    np.testing.assert_allclose(got, 2 * np.ones((3, 2)))


def test_nested_vmap():
    x = RNG.normal(size=(3, 4, 5))
    got = vmap(vmap(reductions_simple))(x)
    want = np.array([[reductions_simple(r) for r in m] for m in x])
    np.testing.assert_allclose(got, want, rtol=1e-12)


def reductions_simple(v):
    return np.sum(v ** 2) - v.max()


# --- per-example control flow --------------------------------------------------------------

def branchy(x):
    if x > 0:
        y = np.sqrt(x)          # NaN on the lanes that do not take it
    elif x > -1:
        y = x ** 2
    else:
        y = -np.log(-x)
    return y * 2.0


def newton_sqrt(a):
    x = a
    n = 0
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
        n = n + 1
    return x, n


def trips(n, v):
    s = 0.0
    for i in range(n):
        s = s + v[i]
    return s


def early(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            return float(i)
    return -1.0


def guarded_index(x, i):
    if i < x.shape[0]:
        return x[i]
    return 0.0


def test_if_elif_with_nan_branch():
    with np.errstate(invalid="ignore", divide="ignore"):
        check(branchy, np.array([4.0, -0.5, -3.0, 0.25, -1.0]))


def test_while_each_lane_stops_on_its_own():
    a = np.array([2.0, 9.0, 1e6, 0.01])
    x, n = vmap(newton_sqrt)(a)
    np.testing.assert_allclose(x, np.sqrt(a), rtol=1e-12)
    np.testing.assert_array_equal(n, [newton_sqrt(v)[1] for v in a])
    assert len(set(n.tolist())) > 1      # the lanes really ran different trip counts


def drop(angle, speed, drag):
    dt = 0.01                      # hoisted out of the lane group: a parameter of its lanes
    pos = np.zeros(2)
    vel = speed * np.array([np.cos(angle), np.sin(angle)])
    while pos[1] >= 0.0:
        vel = vel + dt * (np.array([0.0, -9.81]) - drag * vel)
        pos = pos + dt * vel
    return pos[0]


def test_number_given_to_the_lanes_is_weak():
    """A Python number bound once outside a lane group and read inside it is weak in the lanes
    as it is outside (dt * float32 is float32): jit(vmap) compiled this, instead of falling
    back on 'Cannot unify array(float32) and array(float64)'."""
    with strop.config.override(enable_x64=False):
        check(drop, np.array([0.5, 0.9], np.float32), np.float32(20.0), np.float32(0.05),
              in_axes=(0, None, None), rtol=1e-6)


def test_for_with_batched_trip_count():
    check(trips, np.array([0, 3, 5, 1]), RNG.normal(size=(4, 6)), in_axes=(0, 0))


def test_early_return():
    x = np.array([[1.0, -2.0, 3.0], [1.0, 2.0, 3.0], [-1.0, 0.0, 0.0]])
    check(early, x)


def test_out_of_bounds_in_a_branch_not_taken():
    x = RNG.normal(size=(4, 3))
    check(guarded_index, x, np.array([0, 7, 2, 3]), in_axes=(0, 0))


# --- composition --------------------------------------------------------------------------

def loss(w, x, y):
    h = np.tanh(x @ w["w1"] + w["b1"])
    out = h @ w["w2"]
    return np.sum((out - y) ** 2)


def test_per_example_gradients():
    w = {"w1": RNG.normal(size=(3, 4)), "b1": RNG.normal(size=4), "w2": RNG.normal(size=(4, 2))}
    xs, ys = RNG.normal(size=(6, 3)), RNG.normal(size=(6, 2))
    got = vmap(grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    for k in w:
        want = np.stack([grad(loss)(w, x, y)[k] for x, y in zip(xs, ys)])
        np.testing.assert_allclose(got[k], want, rtol=1e-10)


def mlp_loss(w, x, y):
    h = np.tanh(x @ w["w1"] + w["b1"])
    logits = h @ w["w2"] + w["b2"]
    logits = logits - logits.max()
    return -np.sum((logits - np.log(np.sum(np.exp(logits)))) * y)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compiled_per_example_gradients_of_an_mlp(dtype):
    """jit(vmap(grad)) compiles (no fallback where jit(grad) compiles one example), keeps
    float32 float32, and equals grad example by example, through a max with ties."""
    w = {"w1": RNG.normal(size=(5, 8)), "b1": RNG.normal(size=8),
         "w2": RNG.normal(size=(8, 3)), "b2": np.zeros(3)}
    xs, ys = RNG.normal(size=(7, 5)), np.eye(3)[RNG.integers(0, 3, 7)]
    w["w2"][:, 1] = w["w2"][:, 0]       # the first two logits tie in every example
    w, xs, ys = ({k: v.astype(dtype) for k, v in w.items()}, xs.astype(dtype),
                 ys.astype(dtype))
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-6)
    with strop.config.override(enable_x64=dtype == np.float64):
        got = check(grad(mlp_loss), w, xs, ys, in_axes=(None, 0, 0), **tol)
    assert got["w1"].dtype == dtype and got["w1"].shape == (7, 5, 8)
    fast = jit(vmap(grad(mlp_loss), in_axes=(None, 0, 0)))
    with strop.config.override(enable_x64=dtype == np.float64):
        fast(w, xs, ys)
    src = strop.source(fast)    # the code for the last call's kinds (the leaves' ranks)
    # the products and the per-example weight gradients run on the whole batch, not per lane
    lanes = src.split("def mlp_loss_grad_vmap")[0]
    assert "matmul_vjp_y_lanes(" in src and "matmul_vjp_y(" not in lanes
    # values whose lanes are arrays are computed on the whole batch (a lane loop would
    # allocate each lane's array); lane loops compute numbers (each lane's max, sums)
    assert "extremum_grad_lanes(" in src and "expand_to_lanes(" in src
    for name in ("extremum_grad(", "expand_to(", "tanh_np(", " ** 2", "weak("):
        assert name not in lanes, name


def product(a, b):
    return np.sum(np.tanh(a @ b))


@pytest.mark.parametrize("sa,sb,in_axes", [
    ((3,), (3, 4), (0, None)),        # a layer: one BLAS call, outer products per example
    ((2, 3), (3,), (None, 0)),        # a matrix times a batch of vectors
    ((2, 3), (3,), (0, None)),        # a batch of matrices times a vector
    ((3,), (3, 4), (None, 0)),        # a vector times a batch of matrices
    ((3,), (3,), (0, None)),          # dot products
    ((2, 3), (3, 4), (0, 0)),         # both batched
    ((4, 2, 3), (3, 5), (0, None)),   # stacked matrices per example
])
def test_products_and_their_gradients(sa, sb, in_axes):
    n = 5
    a = RNG.normal(size=((n,) if in_axes[0] == 0 else ()) + sa)
    b = RNG.normal(size=((n,) if in_axes[1] == 0 else ()) + sb)
    check(grad(product, argnums=(0, 1)), a, b, in_axes=in_axes, rtol=1e-10)


def affine(x, b, s):
    return np.sum(np.tanh(x * s + b) ** 2)


def test_cotangents_summed_to_unbatched_shapes():
    """Per-example gradients of a broadcast row and of a number: each lane's cotangent
    summed to their shapes."""
    x = RNG.normal(size=(4, 2, 3))
    check(grad(affine, argnums=(1, 2)), x, RNG.normal(size=(1, 3)), 0.7,
          in_axes=(0, None, None), rtol=1e-10)


def peak(x):
    return np.max(np.sin(x)) * 2.0


def test_gradient_through_a_max_with_nan_and_ties():
    x = np.array([[0.1, 0.5, 0.2], [np.nan, 1.0, 0.0], [0.3, 0.3, 0.1]])
    check(grad(peak), x, rtol=1e-12)


def row_energy(x, w):
    return np.sin(w * x).sum()


def total(w, xs):
    return np.sum(vmap(row_energy, in_axes=(0, None))(xs, w))


def test_grad_of_vmap():
    w, xs = 0.7, RNG.normal(size=(5, 3))
    g = grad(total)(w, xs)
    eps = 1e-6
    fd = (total(w + eps, xs) - total(w - eps, xs)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_grad_with_branches_under_vmap():
    xs = np.array([2.0, -0.5, 0.3, -3.0])
    got = vmap(grad(branchy))(xs)
    np.testing.assert_allclose(got, [grad(branchy)(x) for x in xs], rtol=1e-12)


def test_vmap_of_random_with_a_batch_of_keys():
    from strop import random
    keys = random.split(random.PRNGKey(0), 4)
    got = vmap(lambda k: random.normal(k, (3,)))(keys)
    want = np.stack([random.normal(k, (3,)) for k in keys])
    np.testing.assert_array_equal(got, want)


def test_jit_of_vmap():
    a = np.array([2.0, 9.0, 1e6, 0.01])
    x, n = jit(vmap(newton_sqrt))(a)
    np.testing.assert_allclose(x, np.sqrt(a), rtol=1e-12)
    np.testing.assert_array_equal(n, [newton_sqrt(v)[1] for v in a])


# --- errors -------------------------------------------------------------------------------

def test_inconsistent_sizes():
    with pytest.raises(ValueError, match="(?s)inconsistent sizes.*'x' has size 3.*'y' has size 4"):
        vmap(lambda x, y: x + y)(np.ones(3), np.ones(4))


def test_in_axes_out_of_range():
    with pytest.raises(ValueError, match="axis 2.*argument 'x' has rank 1"):
        vmap(lambda x: x, in_axes=2)(np.ones(3))


def test_prefix_mismatch():
    with pytest.raises(ValueError, match="does not match its structure"):
        vmap(lambda p: p["a"], in_axes=({"b": 0},))({"a": np.ones(3)})


def test_axis_size_missing():
    with pytest.raises(ValueError, match="axis_size"):
        vmap(lambda x: x, in_axes=None)(np.ones(3))


def test_in_axes_length():
    with pytest.raises(ValueError, match="len\\(in_axes\\)=1, len\\(args\\)=2"):
        vmap(lambda x, y: x, in_axes=(0,))(np.ones(3), np.ones(3))


def test_out_axes_none_for_batched_output():
    with pytest.raises(ValueError, match="out_axes is None"):
        vmap(lambda x: x * 2.0, out_axes=None)(np.ones(3))


# --- compiled: jit(vmap(f)) ---------------------------------------------------------------

def decay(y0, k, steps):
    y = y0
    t = 0.0
    for i in range(steps):
        t = t + 0.1
        y = y - 0.1 * k * y + 0.01 * np.cos(t)
    return y, t


def test_compiled_lane_loops_match_the_loop_in_chunks(monkeypatch):
    """Cut in chunks on threads (forced), with in_axes and out_axes not 0 and an unbatched
    output: the same as the loop."""
    from strop.codegen import parallel
    monkeypatch.setattr(parallel, "MIN_SECONDS", 0.0)
    monkeypatch.setattr(parallel, "threads", lambda: 3)
    y0, k = RNG.normal(size=(2, 11)), RNG.uniform(0.5, 2.0, 11)
    f = jit(vmap(decay, in_axes=(1, 0, None), out_axes=(1, None)))
    joined, join = [], parallel.join
    monkeypatch.setattr(parallel, "join", lambda outs, spec: joined.append(len(outs)) or join(
        outs, spec))
    for _ in range(3):     # compiled, then measured (whole batches), then run in chunks
        y, t = f(y0, k, 30)
    assert joined[-1] == 3
    want = loop(decay, (1, 0, None), y0, k, 30, out_axes=(1, None))
    np.testing.assert_allclose(y, want[0], rtol=1e-13)
    assert t == pytest.approx(want[1])
    assert f.last_backend == "cpu"
    src = strop.source(f)
    assert "def decay_lanes1(" in src and "for _j in range(batch_size):" in src
    assert "np.cos(t)" in src.split("def decay_vmap")[1]   # hoisted: once per step


def test_compiled_vmap_keeps_static_arguments():
    y0, k = RNG.normal(size=5), RNG.uniform(0.5, 2.0, 5)
    f = jit(vmap(decay, in_axes=(0, 0, None)), static_argnums=2)
    y, t = f(y0, k, 7)
    want = loop(decay, (0, 0, None), y0, k, 7, out_axes=(0, None))
    np.testing.assert_allclose(y, want[0], rtol=1e-13)


def test_compiled_vmap_of_an_empty_batch():
    y, t = jit(vmap(decay, in_axes=(0, 0, None), out_axes=(0, None)))(np.zeros(0), np.zeros(0), 3)
    assert y.shape == (0,)


def lookup(x, i):
    return x[i] * 2.0


def test_compiled_vmap_index_error_names_the_user_line():
    with pytest.raises(IndexError) as e:
        jit(vmap(lookup))(RNG.normal(size=(4, 3)), np.array([0, 1, 5, 2]))
    assert "test_vmap.py" in str(e.value) and "return x[i] * 2.0" in str(e.value)


def test_grad_of_compiled_vmap():
    def total_c(w, xs):
        return np.sum(jit(vmap(row_energy, in_axes=(0, None)))(xs, w))
    w, xs = 0.7, RNG.normal(size=(5, 3))
    g = grad(total_c)(w, xs)
    eps = 1e-6
    fd = (total_c(w + eps, xs) - total_c(w - eps, xs)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def log_softmax_loss(w, x, y):
    logits = x @ w
    logits = logits - logits.max()
    return -np.sum((logits - np.log(np.sum(np.exp(logits)))) * y)


def test_per_example_gradients_through_a_max():
    w = RNG.normal(size=(3, 4))
    xs, ys = RNG.normal(size=(6, 3)), np.eye(4)[RNG.integers(0, 4, 6)]
    xs[2] = 0.0      # a lane where every logit ties for the max
    f = vmap(grad(log_softmax_loss), in_axes=(None, 0, 0))
    want = np.stack([grad(log_softmax_loss)(w, x, y) for x, y in zip(xs, ys)])
    np.testing.assert_allclose(f(w, xs, ys), want, rtol=1e-12, atol=1e-15)
    assert "each(" not in strop.source(f)


# --- vmap(g) called inside a jitted function: lanes of unknown rank aligned by align_to ---
def sin_times(x):
    return np.sin(x) * x


def scale_rows(a, v):
    return np.tanh(a) + v       # a lane: a number; v's: a vector


def cos_times(a, m):
    return np.cos(a) * m        # a lane: a number, m: one matrix for every lane


def calls_vmap(x, a, v, m):
    return np.sum(vmap(sin_times)(x)) + np.sum(vmap(scale_rows)(a, v) ** 2) + \
        np.sum(vmap(cos_times, in_axes=(0, None))(a, m) ** 2)


CALLS_VMAP_ARGS = (np.linspace(0.1, 1.0, 5), RNG.normal(size=4), RNG.normal(size=(4, 3)),
                   RNG.normal(size=(2, 3)))


def test_jit_of_a_function_calling_vmap_compiles():
    want = jit(calls_vmap, backend="python")(*CALLS_VMAP_ARGS)
    assert want == pytest.approx(sum(
        np.sum(loop(f, axes, *args) ** p) for f, axes, args, p in (
            (sin_times, 0, CALLS_VMAP_ARGS[:1], 1), (scale_rows, 0, CALLS_VMAP_ARGS[1:3], 2),
            (cos_times, (0, None), CALLS_VMAP_ARGS[1:4:2], 2))), rel=1e-12)
    f = jit(calls_vmap)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        assert f(*CALLS_VMAP_ARGS) == pytest.approx(want, rel=1e-12)
    assert f.last_backend == "cpu"
    src = strop.source(f)
    # staged for the ranks the arguments have where vmap is called: no lane by lane code,
    # and no rank-generic helper inlined
    assert "each(" not in src and "runtime/batching.py" not in src and "np.ndim" not in src


def test_jit_grad_of_a_function_calling_vmap_compiles():
    from helpers import numeric_vjp
    f = jit(grad(calls_vmap, argnums=(0, 1, 2, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got = f(*CALLS_VMAP_ARGS)
    assert f.last_backend == "cpu"
    for k in range(4):
        np.testing.assert_allclose(got[k], numeric_vjp(calls_vmap, CALLS_VMAP_ARGS, k, 1.0),
                                   rtol=1e-6, atol=1e-8)
    src = strop.source(f)     # vmap's code for the ranks known there: nothing to realign
    assert "each(" not in src and "runtime/batching.py" not in src and "unalign(" not in src


def test_jit_hessian_and_jacfwd_of_a_function_calling_vmap():
    from helpers import numeric_vjp
    x = CALLS_VMAP_ARGS[0]

    def energy(x):
        return np.sum(vmap(sin_times)(x) ** 2)
    h, fwd = jit(strop.hessian(energy)), jit(strop.jacfwd(energy))
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got_h, got_fwd = h(x), fwd(x)
    assert h.last_backend == fwd.last_backend == "cpu"
    want = np.stack([numeric_vjp(grad(energy), (x,), 0, e) for e in np.eye(5)])
    np.testing.assert_allclose(got_h, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got_fwd, numeric_vjp(energy, (x,), 0, 1.0), rtol=1e-6)


def test_vmap_of_grad_of_a_function_calling_vmap():
    def loss(a, m):
        return np.sum(vmap(cos_times, in_axes=(0, None))(a, m) ** 2)
    a_s, m = RNG.normal(size=(3, 4)), CALLS_VMAP_ARGS[3]
    want = loop(grad(loss), (0, None), a_s, m)
    for f in vmap(grad(loss), in_axes=(0, None)), jit(vmap(grad(loss), in_axes=(0, None))):
        np.testing.assert_allclose(f(a_s, m), want, rtol=1e-12)


def test_chunks_or_one_piece_is_chosen_by_the_best_times_seen():
    from strop.codegen import parallel
    split = parallel.Split([0], 0)
    first = [split.choose(2) for _ in range(2 * parallel.TRIES)]
    assert first == [1] * parallel.TRIES + [2] * parallel.TRIES   # each way a few calls first
    split.best = {1: 10.0, 2: 4.0}   # one piece timed while another process held the cores
    picks = [split.choose(2) for _ in range(parallel.EXPLORE)]
    assert picks.count(1) == parallel.TRIES     # one piece tried again, a few calls in a row
    split.best[1] = 1.0                         # ... and found faster: kept
    picks = [split.choose(2) for _ in range(2 * parallel.EXPLORE)]
    assert picks.count(2) == parallel.TRIES and picks.count(1) == 2 * parallel.EXPLORE - 3
    # chunks stay behind: tried again after twice as many calls each time, up to BACKOFF x
    picks = [split.choose(2) for _ in range(200 * parallel.EXPLORE)]
    runs = [i for i in range(1, len(picks)) if picks[i] == 2 and picks[i - 1] == 1]
    gaps = [b - a for a, b in zip(runs, runs[1:])]
    assert gaps == sorted(gaps) and gaps[-1] == parallel.BACKOFF * parallel.EXPLORE


# --- dicts of lanes, and grad of a dict of parameters called inside a vmapped function ----
def dict_sum(x):
    d = {'a': x, 'b': 2 * x}
    return d['a'] + d['b']


def dict_out(x):
    return {'s': np.sum(x), 'x2': x * 2.0, 'c': 1.5}     # 'c' the same in every lane


def dict_setitem(x):
    d = {}
    d['a'] = x
    d['b'] = d['a'] * 3.0
    return d


def dict_branch(x):
    d = {'a': x, 'b': np.sin(x)}
    if np.sum(x) > 0:
        d = {'a': -x, 'b': d['a'] * 2.0}
    return d['a'] + d['b']


def dict_keys_differ(x):
    d = {'a': x}
    if np.sum(x) > 0:
        d = {'a': x, 'b': 2.0 * x}
    return d['a'] * 2.0


def tuple_concat(x):
    t = (x, 2 * x)
    u = t + (x,)
    return u[2] + u[0]


def tanh_layer_loss(p, x):
    return np.sum(np.tanh(x @ p['w']) * p['b'])


def tanh_layer_grad_w(p, x):
    return grad(tanh_layer_loss)(p, x)['w']


def mlp_grad_w1(w, x, y):
    return grad(mlp_loss)(w, x, y)['w1']


def test_dict_of_lanes_is_indexed_by_its_keys():
    x = RNG.normal(size=(4, 3))
    check(dict_sum, x, rtol=1e-12)
    src = strop.source(vmap(dict_sum))
    assert "d['a']" in src and "d[:, 'a']" not in src
    check(dict_setitem, x, rtol=1e-12)
    # a dict of mixed types: vmap's own code only (Numba cannot return it from jit(f) either)
    want, got = loop(dict_out, 0, x), vmap(dict_out)(x)
    assert type(got) is dict and list(got) == ['s', 'x2', 'c']
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12)
    assert got['c'].shape == (4,) and got['x2'].shape == (4, 3)


def test_dict_assigned_under_a_batched_if_selects_key_by_key():
    x = RNG.normal(size=(6, 3))
    x[::2] = np.abs(x[::2])           # both branches taken
    x[1::2] = -np.abs(x[1::2])
    check(dict_branch, x, rtol=1e-12)
    assert "each(" not in strop.source(vmap(dict_branch))


def test_containers_vmap_cannot_batch_run_lane_by_lane():
    x = RNG.normal(size=(6, 3))
    x[::2] = np.abs(x[::2])
    x[1::2] = -np.abs(x[1::2])
    check(dict_keys_differ, x, rtol=1e-12)
    src = strop.source(vmap(dict_keys_differ))
    assert "run lane by lane: vmap cannot batch d, a tuple, list or dict assigned under " \
           "control flow on a batched value: it does not hold the same elements (keys)" in src
    check(tuple_concat, x, rtol=1e-12)     # was a sum of the stacked tuples
    # t + (x,) is Python's + of sequences (runtime.plus): lane by lane
    assert "run lane by lane: vmap has no batching rule for plus" in strop.source(
        vmap(tuple_concat))


def test_vmap_of_a_function_calling_grad_of_a_dict_of_parameters():
    p = {'w': RNG.normal(size=(2, 4)), 'b': RNG.normal(size=4)}
    x = RNG.normal(size=(3, 2))
    got = check(tanh_layer_grad_w, p, x, in_axes=(None, 0), rtol=1e-12)
    want = np.stack([grad(tanh_layer_loss)(p, xi)['w'] for xi in x])   # outside strop's code
    np.testing.assert_allclose(got, want, rtol=1e-12)
    f = vmap(tanh_layer_grad_w, in_axes=(None, 0))
    f(p, x)
    src = strop.source(f)     # the code for the call's kinds: grad's for p's leaves
    assert "each(" not in src and "bp_w" in src and "add(bp, " not in src


def test_vmap_of_a_function_calling_grad_of_an_mlp():
    w = {"w1": RNG.normal(size=(5, 8)), "b1": RNG.normal(size=8),
         "w2": RNG.normal(size=(8, 3)), "b2": np.zeros(3)}
    xs, ys = RNG.normal(size=(7, 5)), np.eye(3)[RNG.integers(0, 3, 7)]
    got = check(mlp_grad_w1, w, xs, ys, in_axes=(None, 0, 0), rtol=1e-10, atol=1e-12)
    want = np.stack([grad(mlp_loss)(w, x, y)['w1'] for x, y in zip(xs, ys)])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    # the runtime helpers stay calls, to their batching rules (not inlined as source)
    f = vmap(mlp_grad_w1, in_axes=(None, 0, 0))
    f(w, xs, ys)
    src = strop.source(f)
    assert "extremum_grad_lanes(" in src and "each(" not in src and "_float_dtype" not in src


# --- parameters left to their defaults are not mapped (JAX maps the arguments passed) -----
def scaled_sum(x, s=2.0, shift=np.array([0.5, -1.0])):
    return np.sum(x * s + shift)


def calls_vmap_with_defaults(xs):
    return np.sum(vmap(scaled_sum)(xs))


@pytest.mark.parametrize("in_axes", [0, (0,), -1])
def test_defaults_are_the_same_in_every_lane(in_axes):
    xs = np.arange(4.0).reshape(2, 2) + np.array([[0.0], [3.0]])
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,)
    want = loop(scaled_sum, axes, xs)
    np.testing.assert_allclose(vmap(scaled_sum, in_axes=in_axes)(xs), want)
    np.testing.assert_allclose(jit(vmap(scaled_sum, in_axes=in_axes))(xs), want)
    np.testing.assert_allclose(vmap(scaled_sum, in_axes=(axes[0], None))(xs, 3.0),
                               loop(lambda x: scaled_sum(x, 3.0), axes, xs))
    g = loop(grad(scaled_sum), axes, xs)
    np.testing.assert_allclose(vmap(grad(scaled_sum), in_axes=in_axes)(xs), g)


def test_defaults_of_a_vmap_called_inside_a_transformed_function():
    xs = np.arange(6.0).reshape(3, 2)
    want = sum(scaled_sum(x) for x in xs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
        assert jit(calls_vmap_with_defaults)(xs) == pytest.approx(want)
    np.testing.assert_allclose(grad(calls_vmap_with_defaults)(xs), np.full((3, 2), 2.0))
    np.testing.assert_allclose(vmap(vmap(scaled_sum))(xs[None]), [[scaled_sum(x) for x in xs]])


def sliced_and_indexed(p, y):
    return np.sum(p[1:3] * y) + np.sum(p[0, 1:] ** 2) + p[2, 0] * np.sum(p[np.array([0, 0])])


def test_jit_of_vmap_of_grad_of_indexing_compiles():
    # getitem_vjp_lanes (the cotangent of p[idx] in each lane) has a Numba implementation:
    # basic indices and vectors of ints (repeats accumulate)
    rng = np.random.default_rng(3)
    p, y = rng.standard_normal((5, 4, 3)), rng.standard_normal((5, 2, 3))
    g = grad(sliced_and_indexed)
    f = jit(vmap(g))
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got = f(p, y)
    np.testing.assert_allclose(got, np.stack([g(a, b) for a, b in zip(p, y)]), rtol=1e-12)
    assert f.last_backend == "cpu"


def rows_filled_with_dots(a, m):
    y = np.zeros((3, 2))
    for i in range(3):
        y[i] = np.dot(a, a) * i          # a batched value into a row: setitem_lanes
        y[i, 1] = np.dot(m, a)[i]
    return np.dot(m, a) + y[:, 0] + np.dot(a, m) + y[:, 1]


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_item_assignment_and_dot_batched_compile(in_axes):
    # y[i] = batched value: one assignment at (:, i) (was each(setitem, ...), lane by lane,
    # with no Numba version); np.dot of vectors and matrices: matmul's batching
    rng = np.random.default_rng(0)
    a, m = rng.standard_normal((4, 3)), rng.standard_normal((4, 3, 3))
    args = [a if in_axes[0] == 0 else a[0], m if in_axes[1] == 0 else m[0]]
    want = np.stack([rows_filled_with_dots(*[x[k] if ax == 0 else x
                                             for x, ax in zip(args, in_axes)])
                     for k in range(4)])
    np.testing.assert_allclose(vmap(rows_filled_with_dots, in_axes=in_axes)(*args), want,
                               rtol=1e-12)
    f = jit(vmap(rows_filled_with_dots, in_axes=in_axes))
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(f(*args), want, rtol=1e-12)


def outers_traces_rows(a, b):
    s = 0.0
    for row in a:                       # iterable() of a batched array: its lanes' rows
        s = s + np.sum(row * row)
    return np.sum(np.outer(a, b) * 2.0) + np.trace(np.outer(a, a)) + s


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_outer_trace_and_rows_batched_compile(in_axes):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    args = [a if in_axes[0] == 0 else a[0], b if in_axes[1] == 0 else b[0]]
    for f in (outers_traces_rows, grad(outers_traces_rows, argnums=(0, 1))):
        lanes = [f(*[x[k] if ax == 0 else x for x, ax in zip(args, in_axes)])
                 for k in range(4)]
        want = tuple(np.stack(w) for w in zip(*lanes)) if isinstance(lanes[0], tuple) \
            else np.stack(lanes)
        got = [vmap(f, in_axes=in_axes)(*args)]
        with warnings.catch_warnings():
            warnings.simplefilter("error", strop.errors.JitFallbackWarning)
            if f is outers_traces_rows:   # (the batched adjoint of np.outer: lane by lane)
                got.append(jit(vmap(f, in_axes=in_axes))(*args))
        for g in got:
            for x, y in zip(strop.tree_util.tree_leaves(g), strop.tree_util.tree_leaves(want)):
                np.testing.assert_allclose(x, y, rtol=1e-12)


# --- out_axes as a pytree prefix, and an empty batch run lane by lane ----------------------

def metrics(x):
    return {"scaled": x * 2.0, "shifted": (x + 1.0, x[0] * x)}


def nested(x):
    return x, (x * 2.0, x + 1.0)


def until_above(x):   # vmap(grad): an array taped in a loop whose trip count differs between
    s = 0.0           # lanes, run lane by lane
    while s < x[0] + 2.0:
        s = s + np.sum(x[1] * x[1] * np.ones(2)) + 0.5   # (>= 0.5: it ends)
    return s


def stacked_along(outs, spec):
    """The oracle's stacking of per-lane outputs ``outs`` by the out_axes prefix ``spec``."""
    first = outs[0]
    if isinstance(first, dict):
        return {k: stacked_along([o[k] for o in outs], spec[k] if isinstance(spec, dict)
                                 else spec) for k in first}
    if isinstance(first, tuple):
        return tuple(stacked_along([o[k] for o in outs], spec[k] if isinstance(spec, tuple)
                                   else spec) for k in range(len(first)))
    return np.stack(outs, axis=spec)


@pytest.mark.parametrize("f,spec", [
    (metrics, {"scaled": 1, "shifted": 0}), (metrics, {"scaled": 0, "shifted": (1, -1)}),
    (metrics, 1), (nested, 1), (nested, (1, 0)), (nested, (0, (1, 0)))])
def test_out_axes_a_prefix_of_the_output_tree(f, spec):
    """out_axes as JAX takes it: an int for every leaf (of nested tuples too), or a tuple or
    dict that is a prefix of the output's structure (a dict prefix failed, and an int on
    nested tuples ran lane by lane into a stacking error)."""
    x = RNG.normal(size=(4, 3))
    want = stacked_along([f(x[i]) for i in range(4)], spec)
    got = vmap(f, out_axes=spec)(x)
    for g, w in zip(strop.tree_util.tree_leaves(got), strop.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert strop.tree_util.tree_structure(got) == strop.tree_util.tree_structure(want)
    if f is nested:   # (a dict of values of two ranks does not compile: jit falls back)
        got = jit(vmap(f, out_axes=spec))(x)
        for g, w in zip(strop.tree_util.tree_leaves(got), strop.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("spec", [1, (1, (1,)), (1, 1)])
def test_out_axes_of_code_run_lane_by_lane(spec):
    x = RNG.normal(size=(4, 2))
    f = grad(until_above)
    g = vmap(lambda x: (f(x), (f(x) * 2.0,)), out_axes=spec)(x)   # (each(): stacked lanes)
    want = np.stack([f(x[i]) for i in range(4)], axis=1)
    np.testing.assert_allclose(g[0], want, rtol=1e-12)
    np.testing.assert_allclose(g[1][0], 2.0 * want, rtol=1e-12)


@pytest.mark.parametrize("compiled_", [False, True])
def test_an_empty_batch_run_lane_by_lane_says_why_it_fails(compiled_):
    """With no lane to run, code run lane by lane cannot know its outputs' shapes: the error
    says so (it was NumPy's "need at least one array to stack")."""
    f = vmap(grad(until_above))
    f(np.ones((2, 2)))
    assert "run lane by lane" in strop.source(f)
    f = jit(f) if compiled_ else f
    with pytest.raises(ValueError, match="empty batch \\(0 lanes\\) of code that runs lane by "
                                         "lane") as e:
        f(np.zeros((0, 2)))
    assert "test_vmap.py" in str(e.value)


def newton_steps(a):          # a per-lane Python int counter, and a Python float per lane
    x = a
    n = 0
    while abs(x * x - a) > 1e-4 * a:
        x = 0.5 * (x + a / x)
        n = n + 1
    return x, n, 1.0


@pytest.mark.parametrize("x64", [False, True])
def test_lanes_of_python_numbers_stack_as_jax_stacks_weak_values(x64):
    a = np.linspace(1.0, 50.0, 6)
    want = [newton_steps(v) for v in a]
    with strop.config.override(enable_x64=x64):
        for t in (strop.vmap(newton_steps), strop.jit(strop.vmap(newton_steps))):
            x, n, one = t(a)
            assert n.dtype == (np.int64 if x64 else np.int32), t
            assert x.dtype == one.dtype == (np.float64 if x64 else np.float32), t
            np.testing.assert_array_equal(n, [w[1] for w in want])
            np.testing.assert_allclose(x, [w[0] for w in want], rtol=1e-5)


def path_payoff(params, z):    # parameters read from an unbatched array, a loop per example
    s0 = params[0]; rate = params[1]; sigma = params[2]
    s = s0
    for i in range(z.shape[0]):
        s = s + rate * s * 0.01 + sigma * s * z[i]
    return np.log(1.0 + s * s)


def test_cotangents_of_items_of_an_unbatched_array_are_one_array_for_the_batch():
    params, zs = np.array([1.0, 0.05, 0.2]), np.random.default_rng(3).normal(size=(40, 9)) * 0.1
    with strop.config.override(enable_x64=True):
        t = jit(vmap(grad(path_payoff), in_axes=(None, 0)))
        got = t(params, zs)
        want = np.array([grad(path_payoff)(params, z) for z in zs])
        np.testing.assert_allclose(got, want, rtol=1e-12)
        text = strop.source(t)
    # not a lane function: one (batch, 3) array per item, not one small array per lane
    assert "bparams = getitem_vjp_lanes(" in text, text
