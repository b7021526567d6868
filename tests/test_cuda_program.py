"""Whole-array code on a GPU: ``jit(f)`` and ``jit(grad(f))`` of array code (not a vmap) given
DeviceArrays run their generated code launch by launch (codegen/cuda_program.py): fused
chains, reductions, ``@`` and the reverse-mode helpers as kernels (runtime/cuda/).

Run in Numba's simulator (small sizes: it runs each GPU thread as a Python thread).  Oracles:
the CPU's compiled code, NumPy, central differences; the kernels are also compiled to PTX in
a process without the simulator.
"""
import os
import warnings

import numpy as np
import pytest

import strop
from strop import grad, jit
from strop.errors import JitFallbackWarning
from strop.runtime.cuda import ops, views
from strop.runtime.cuda.arrays import DeviceArray

from helpers import numeric_vjp, ptx_of

pytestmark = pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") != "1" and
                                not strop.runtime.cuda.available()[0],
                                reason="no GPU, and the simulator is off")


def gpu():
    return strop.devices("cuda")[0]


def put(*xs):
    return [strop.device_put(x, gpu()) for x in xs]


def on_device(f, *args):
    """``f(*args)`` given the arguments on the GPU, with no fallback to the CPU."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        return f(*put(*args))


def host(tree):
    return strop.tree_util.tree_map(np.asarray, tree)


# --- the user's functions -----------------------------------------------------------------

def mlp_loss(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return -np.sum(y * (logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))))


def rnn_loss(w, u, xs, h0):
    h = h0
    total = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + u @ xs[t])
        total = total + np.mean(h ** 2)
    return total


def relu_regression(w, x, y):
    pred = np.maximum(x @ w, 0.0)
    err = pred - y
    return np.mean(err * err) + 0.1 * np.sum(np.abs(w))


def normalized(x):
    mu = x.mean(axis=0)
    centered = x - mu
    scale = np.sqrt((centered ** 2).sum(axis=0, keepdims=True) / x.shape[0])
    return centered / scale, np.max(x, axis=1), x.T @ x


def _mlp_args(rng, dtype):
    return [rng.normal(size=s).astype(dtype) * 0.5 for s in
            [(6, 5), (5,), (5, 3), (3,), (4, 6)]] + \
        [np.eye(3, dtype=dtype)[rng.integers(0, 3, 4)]]


# --- jit(grad) on the device --------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mlp_gradient_on_the_device(dtype):
    rng = np.random.default_rng(0)
    args = _mlp_args(rng, dtype)
    g = jit(grad(mlp_loss, argnums=(0, 1, 2, 3)))
    with strop.config.override(enable_x64=dtype == np.float64):
        want = grad(mlp_loss, argnums=(0, 1, 2, 3))(*args)   # (as Python: no compile)
        got = on_device(g, *args)
    assert all(isinstance(a, DeviceArray) for a in got)
    for a, w in zip(got, want):
        assert a.dtype == w.dtype and a.shape == w.shape
        np.testing.assert_allclose(np.asarray(a), w, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                   atol=1e-6 if dtype == np.float32 else 1e-13)
    source = strop.source(g.on_device())
    assert "matmul_vjp_y(" in source and "# line" in source and "elementwise('" in source


def test_loop_with_a_tape_against_central_differences():
    """A Python loop's reverse mode keeps a tape (a list of DeviceArrays) on the host."""
    rng = np.random.default_rng(1)
    w, u = rng.normal(size=(4, 4)) * 0.4, rng.normal(size=(4, 3)) * 0.4
    xs, h0 = rng.normal(size=(5, 3)), rng.normal(size=4)
    g = jit(grad(rnn_loss, argnums=(0, 1, 3)))
    with strop.config.override(enable_x64=True):
        got = host(on_device(g, w, u, xs, h0))
        want = grad(rnn_loss, argnums=(0, 1, 3))(w, u, xs, h0)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for k, i in ((0, 0), (2, 3)):
        np.testing.assert_allclose(got[k], numeric_vjp(rnn_loss, [w, u, xs, h0], i, 1.0),
                                   rtol=1e-6, atol=1e-8)


def test_maximum_abs_and_mean_gradients():
    rng = np.random.default_rng(2)
    w, x, y = rng.normal(size=3), rng.normal(size=(7, 3)), rng.normal(size=7)
    g = jit(grad(relu_regression))
    with strop.config.override(enable_x64=True):
        got = np.asarray(on_device(g, w, x, y))
        np.testing.assert_allclose(got, grad(relu_regression)(w, x, y), rtol=1e-12)
        np.testing.assert_allclose(got, numeric_vjp(relu_regression, [w, x, y], 0, 1.0),
                                   rtol=1e-6)


def test_array_code_with_several_outputs():
    x = np.random.default_rng(3).normal(size=(5, 3)).astype(np.float32)
    got, want = on_device(jit(normalized), x), normalized(x)
    for a, b in zip(got, want):
        assert isinstance(a, DeviceArray) and a.dtype == b.dtype
        np.testing.assert_allclose(np.asarray(a), b, rtol=2e-6, atol=1e-6)


def test_results_stay_on_the_device_between_calls():
    rng = np.random.default_rng(4)
    args = _mlp_args(rng, np.float32)
    step = jit(lambda w, g: w - 0.1 * g)
    gradient = jit(grad(mlp_loss))
    w = put(args[0])[0]
    for _ in range(2):
        w = on_device(step, w, on_device(gradient, w, *args[1:]))
    assert isinstance(w, DeviceArray) and w._host is None
    v = args[0]
    for _ in range(2):
        v = v - 0.1 * grad(mlp_loss)(v, *args[1:])
    np.testing.assert_allclose(np.asarray(w), v, rtol=1e-5, atol=1e-6)


def test_code_without_a_device_twin_runs_on_the_cpu_with_a_warning():
    def sorting(x):
        return np.sort(x * 2.0) @ x

    f = jit(sorting)
    x = np.arange(4.0, dtype=np.float32)
    with pytest.warns(JitFallbackWarning, match=r"np\.sort\(\) has no implementation on "
                                                 r"the device") as seen:
        out = f(*put(x))
    assert "test_cuda_program.py" in str(seen[0].message)
    assert isinstance(out, DeviceArray)
    np.testing.assert_allclose(np.asarray(out), np.sort(x * 2) @ x)


def test_errors_name_the_user_line():
    def product(a, b):
        c = a * 2.0
        return c @ b     # (4,) @ (3,): no

    with pytest.raises(ValueError, match="mismatch") as e:
        on_device(jit(product), np.ones(4, np.float32), np.ones(3, np.float32))
    assert "test_cuda_program.py" in str(e.value) or any(
        "test_cuda_program.py" in str(t.path) and t.lineno for t in e.traceback)


def test_debug_nans_on_device_results():
    def logs(x):
        return np.log(x) * 2.0 + x @ x

    f = jit(logs)
    strop.config.update("debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match="test_cuda_program.py"):
            on_device(f, np.array([1.0, -1.0], np.float32))
    finally:
        strop.config.update("debug_nans", False)


# --- the operations, against NumPy --------------------------------------------------------

@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod"])
def test_reductions_along_axes(op):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    d = put(x)[0]
    for axis in [None, 0, 1, 2, -1, (0, 2), (1, 2)]:
        for keepdims in (False, True):
            got = getattr(d, op)(axis=axis, keepdims=keepdims)
            want = getattr(x, op)(axis=axis, keepdims=keepdims)
            assert got.shape == want.shape and got.dtype == want.dtype, (axis, keepdims)
            np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6)
    t = views.transpose(d, (2, 0, 1))       # a strided view reduced in place
    np.testing.assert_allclose(np.asarray(ops.reduce(op, t, 1)), getattr(
        x.transpose(2, 0, 1), op)(axis=1), rtol=2e-6, atol=1e-6)


def test_a_long_reduction_splits_into_parts():
    x = np.random.default_rng(6).normal(size=20000)
    d = put(x)[0]
    with strop.config.override(enable_x64=True):
        d = put(x)[0]
        np.testing.assert_allclose(float(np.asarray(d.sum())), x.sum(), rtol=1e-12)
        np.testing.assert_allclose(float(np.asarray(d.max())), x.max())
    nan = put(np.array([1.0, np.nan, 3.0], np.float32))[0]
    assert np.isnan(np.asarray(nan.max())) and np.isnan(np.asarray(nan.min()))
    assert np.asarray(put(np.ones((0, 3), np.float32))[0].sum(axis=0)).tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="zero-size"):
        put(np.ones((0,), np.float32))[0].max()


@pytest.mark.parametrize("shapes", [((5, 3), (3, 4)), ((3,), (3, 4)), ((5, 3), (3,)),
                                    ((3,), (3,)), ((2, 5, 3), (3, 4)), ((2, 1, 1, 3), (4, 3, 2)),
                                    ((17, 33), (33, 18))])
def test_matmul_shapes_against_numpy(shapes):
    rng = np.random.default_rng(7)
    a, b = (rng.normal(size=s).astype(np.float32) for s in shapes)
    got = put(a)[0] @ put(b)[0]
    want = a @ b
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_matmul_of_views_and_mixed_dtypes():
    rng = np.random.default_rng(8)
    a, b = rng.normal(size=(4, 3)), rng.integers(-3, 3, size=(4, 2)).astype(np.int32)
    with strop.config.override(enable_x64=True):
        da, db = put(a, b)
        np.testing.assert_allclose(np.asarray(ops.matmul(views.transpose(da), db)), a.T @ b)
        assert ops.matmul(views.transpose(da), db).dtype == np.float64
        i = put(np.arange(6, dtype=np.int32).reshape(2, 3))[0]
        assert np.asarray(i @ ops.materialize(views.transpose(i))).tolist() == \
            (np.arange(6).reshape(2, 3) @ np.arange(6).reshape(2, 3).T).tolist()


def test_operators_indexing_and_methods_run_on_the_device():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = put(x)[0]
    for got, want in [(d[1], x[1]), (d[:, ::-2], x[:, ::-2]), (d[..., None, 1], x[..., None, 1]),
                      (d[-1, 2], x[-1, 2]), (d.T, x.T), (d.reshape(4, 3), x.reshape(4, 3)),
                      (d * 2 + 1, x * 2 + 1), (2.0 ** d[0], 2.0 ** x[0]),
                      (np.where(d > 5, d, -d), np.where(x > 5, x, -x)),
                      (np.maximum(d, 4.5), np.maximum(x, 4.5)), (-d, -x),
                      (d.astype(np.int32) // 3, x.astype(np.int32) // 3)]:
        assert isinstance(got, DeviceArray) and d._host is None   # (x not copied back)
        assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
        np.testing.assert_allclose(np.asarray(got), want)
    np.testing.assert_allclose(np.asarray(d[np.array([2, 0])]), x[[2, 0]])  # (on the host)
    with pytest.raises(IndexError, match="out of bounds"):
        d[3]


_PTX = r"""
import json, numpy as np
from numba import types
from strop.runtime.cuda import cuda, helpers, kernels
i64, arr = types.int64, lambda t: types.Array(t, 1, "C")
tup = lambda n: types.UniTuple(i64, n)
f32, f64 = types.float32, types.float64
made = {
    "chain": (kernels.elementwise("_0 * (weak(1, _1 ** weak(2, _1)) - _1 ** weak(2, _1))",
                                  ("c", "s"), 2),
              (arr(f32), tup(2), arr(f32), arr(f32), i64, tup(2))),
    "into": (kernels.elementwise("_0", ("s",), 2, True),
             (arr(f32), i64, tup(2), i64, tup(2), arr(f32), i64, tup(2))),
    "scan": (kernels.scan("sum", 1, "<f4"),
             (arr(f32), arr(f32), i64, tup(1), tup(1), i64, i64, i64)),
    "ufunc": (kernels.elementwise("tanh_device(_0)", ("c",), 1), (arr(f32), tup(1), arr(f32))),
    "weak": (kernels.elementwise("multiply_device(_0, weak(_1, _0))", ("c", "n"), 1),
             (arr(f32), tup(1), arr(f32), f64)),
    "reduction": (kernels.reduction("max", 1, 2, "<f4"),
                  (arr(f32), arr(f32), i64, tup(1), tup(1), tup(2), tup(2), i64, i64)),
    "sum": (kernels.reduction("sum", 1, 1, "<f8"),
            (arr(f64), arr(f64), i64, tup(1), tup(1), tup(1), tup(1), i64, i64)),
    "matmul": (kernels.matmul(0, "<f4"),
               (arr(f32), arr(f32), i64, tup(2), arr(f32), i64, tup(2), i64, i64, i64, tup(1))),
    "batched": (kernels.matmul(1, "<f8"),
                (arr(f64), arr(f64), i64, tup(3), arr(f64), i64, tup(3), i64, i64, i64, tup(1))),
}
out = {}
try:
    for name, (kernel, signature) in made.items():
        with helpers.compiling_for((8, 0)):
            out[name] = cuda().compile_ptx(kernel.__strop_python__, signature, cc=(8, 0))[0]
except Exception as e:
    if "nvvm" in str(e).lower() or "libdevice" in str(e).lower() or "cuda" in type(e).__module__:
        out = {"unavailable": str(e)[:300]}
    else:
        raise
print(json.dumps(out))
"""


def test_whole_array_kernels_compile_to_ptx():
    """The kernels the operations launch, through numba-cuda's compiler (NVVM) with no
    device: float32 kernels do their arithmetic in float32."""
    out = ptx_of(_PTX)
    assert len(out) == 9
    for name, ptx in out.items():
        assert ".visible .entry" in ptx, name
    assert "bar.sync" in out["matmul"] and "fma.rn.f32" in out["matmul"]
    assert ".f64" not in out["chain"] and ".f64" not in out["matmul"]
    assert "bar.sync" in out["reduction"]


def test_scans_diagonals_and_axis_moves_against_numpy():
    rng = np.random.default_rng(9)
    x = rng.normal(size=(3, 4, 2)).astype(np.float32)
    d = put(x)[0]
    cases = [(np.cumsum(d, axis=1), np.cumsum(x, axis=1)), (np.cumsum(d), np.cumsum(x)),
             (np.cumprod(d, axis=-1), np.cumprod(x, axis=-1)),
             (np.trace(d[:, :, 0]), np.trace(x[:, :, 0])),
             (np.trace(d, offset=1, axis1=1, axis2=0), np.trace(x, offset=1, axis1=1, axis2=0)),
             (np.diagonal(d, -1), np.diagonal(x, -1)),
             (np.moveaxis(d, 0, -1), np.moveaxis(x, 0, -1)),
             (np.swapaxes(d, 0, 2), np.swapaxes(x, 0, 2)),
             (np.squeeze(d[:1]), np.squeeze(x[:1])), (np.expand_dims(d, 1), np.expand_dims(x, 1)),
             (np.concatenate([d, d[:1]], axis=0), np.concatenate([x, x[:1]], axis=0)),
             (np.stack([d[0], d[1]], axis=-1), np.stack([x[0], x[1]], axis=-1)),
             (np.outer(d[0, :, 0], d[1, :, 1]), np.outer(x[0, :, 0], x[1, :, 1]))]
    for got, want in cases:
        assert isinstance(got, DeviceArray)
        assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6)
    rows = list(d)      # iterating gives the rows, on the device
    assert all(isinstance(r, DeviceArray) for r in rows) and d._host is None


def matrix_statistics(a, b):
    m = a @ b.T
    total = np.trace(m) + np.sum(np.cumsum(a, axis=1) * b)
    parts = np.concatenate([a[:1], b[1:]], axis=0)
    return total + np.sum(np.stack([parts, a], axis=0) ** 2) + np.max(a)


def test_gradients_through_trace_cumsum_concatenate_and_max():
    rng = np.random.default_rng(10)
    a, b = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    g = jit(grad(matrix_statistics, argnums=(0, 1)))
    with strop.config.override(enable_x64=True):
        got = host(on_device(g, a, b))
        want = grad(matrix_statistics, argnums=(0, 1))(a, b)
        for x, w in zip(got, want):
            np.testing.assert_allclose(x, w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[0], numeric_vjp(matrix_statistics, [a, b], 0, 1.0),
                                   rtol=1e-6, atol=1e-8)


def contracted(a, b, c):
    t = np.tensordot(a, b, axes=([1, 2], [0, 1]))
    return np.sum(np.dot(c, b) ** 2) + np.sum(t * t) + np.sum(np.roll(np.ravel(a), 2) * a.ravel())


def test_tensordot_dot_roll_and_their_gradients():
    rng = np.random.default_rng(11)
    a, b, c = rng.normal(size=(2, 3, 4)), rng.normal(size=(3, 4, 2)), rng.normal(size=(5, 4))
    with strop.config.override(enable_x64=True):
        np.testing.assert_allclose(np.asarray(on_device(jit(contracted), a, b, c)),
                                   contracted(a, b, c), rtol=1e-12)
        got = host(on_device(jit(grad(contracted, argnums=(0, 1))), a, b, c))
        want = grad(contracted, argnums=(0, 1))(a, b, c)
        for x, w in zip(got, want):
            np.testing.assert_allclose(x, w, rtol=1e-12, atol=1e-12)
    d = put(np.arange(6.0, dtype=np.float32).reshape(2, 3))[0]
    np.testing.assert_array_equal(np.asarray(np.roll(d, -1, axis=1)),
                                  np.roll(np.arange(6.0).reshape(2, 3), -1, axis=1))


def listed(a, b):
    parts = []
    for k in range(3):
        parts.append(np.tanh(a * k + b))
    return np.sum(sum(parts, 0.0) ** 2) + np.sum(np.concatenate(parts))


def test_python_lists_of_device_arrays_and_their_gradients():
    a, b = np.linspace(-1, 1, 4), np.linspace(0.5, -0.5, 4)
    with strop.config.override(enable_x64=True):
        np.testing.assert_allclose(np.asarray(on_device(jit(listed), a, b)), listed(a, b),
                                   rtol=1e-12)
        got = host(on_device(jit(grad(listed, argnums=(0, 1))), a, b))
        want = grad(listed, argnums=(0, 1))(a, b)
        for x, w in zip(got, want):
            np.testing.assert_allclose(x, w, rtol=1e-12, atol=1e-12)


def test_matmul_through_cupy_where_it_is_installed(monkeypatch):
    """With CuPy (cuBLAS) installed on a GPU, ``@`` calls its matmul on views of the same
    memory.  Here a stand-in for CuPy made of NumPy checks the views' offsets and strides and
    the shapes (CuPy itself needs a GPU)."""
    import types
    from numba import cuda

    fake = types.SimpleNamespace(asarray=lambda x: x.copy_to_host(), matmul=np.matmul,
                                 lib=types.SimpleNamespace(stride_tricks=np.lib.stride_tricks))
    called = []
    monkeypatch.setattr(ops, "_cupy", lambda dtype: called.append(dtype) or fake)
    monkeypatch.setattr(ops, "_from_cupy", lambda a: cuda.to_device(np.ascontiguousarray(a)))
    rng = np.random.default_rng(12)
    x = rng.normal(size=(3, 5, 4)).astype(np.float32)
    y = rng.normal(size=(6, 4)).astype(np.float32)
    dx, dy = put(x, y)
    for got, want in [(ops.matmul(dx, views.transpose(dy)), x @ y.T),
                      (ops.matmul(views.getitem(dx, (1, slice(None, None, -2))),
                                  views.getitem(dy, (slice(0, 4), 0))), x[1, ::-2] @ y[:4, 0]),
                      (ops.matmul(dy[0], views.transpose(dy)), y[0] @ y.T)]:
        assert got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    assert called and all(d == np.float32 for d in called)


def from_a_dict(a, b):
    state = {"a": b * b, "w": np.mean(a)}
    t = np.tanh(state["a"][0])
    pair = (t, state["w"])
    return np.dot(t - 1.0, t * t) + pair[1] * np.sum(state["a"])


def updated_dict(a, b):
    state = {"a": b * b, "w": np.mean(a)}
    state["w"] += np.mean(state["a"])
    state["a"] = state["a"] * state["w"]
    return np.sum(np.tanh(state["a"])) + state["w"]


@pytest.mark.parametrize("f", [from_a_dict, updated_dict])
def test_gradients_through_dicts_and_tuples_of_device_arrays(f):
    """The cotangent of an item of a dict or tuple of arrays, and of one set in a dict: the
    container's zeros made on the device (a generated program once crashed here)."""
    a, b = np.linspace(-1, 1, 3), np.linspace(0.2, 1.4, 6).reshape(2, 3)
    with strop.config.override(enable_x64=True):
        got = host(on_device(jit(grad(f, argnums=(0, 1))), a, b))
        want = grad(f, argnums=(0, 1))(a, b)
        for x, w in zip(got, want):
            np.testing.assert_allclose(x, w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[1], numeric_vjp(f, [a, b], 1, 1.0), rtol=1e-6,
                                   atol=1e-8)
