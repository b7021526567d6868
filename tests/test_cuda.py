"""The CUDA backend: placement on a GPU, ``jit(vmap(f), backend="cuda")`` with one thread per
lane, computation following data, errors from kernels.

Run in Numba's simulator (tests/conftest.py sets NUMBA_ENABLE_CUDASIM=1; set it to 0 on a
machine with a GPU to run them for real).  Oracles: the CPU's ``jit(vmap(f))`` and a Python
loop over the lanes.  The kernels are also compiled to PTX (test_kernels_compile_to_ptx), in a
process without the simulator: what a GPU would run.
"""
import os
import warnings

import numpy as np
import pytest

import strop
from strop import jit, lax, vmap
from strop.errors import JitFallbackWarning
from strop.runtime.cuda.arrays import DeviceArray

from helpers import ptx_of

pytestmark = pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") != "1" and
                                not strop.runtime.cuda.available()[0],
                                reason="no GPU, and the simulator is off")

GPU = None


def gpu():
    global GPU
    GPU = GPU or strop.devices("cuda")[0]
    return GPU


# --- functions of one example (numbers), as users write them --------------------------------

def newton(a, x0):
    x = x0
    n = 0
    while abs(x * x - a) > 1e-5 * a and n < 50:
        x = x - (x * x - a) / (2.0 * x)
        n += 1
    return x, n


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def lookup(i, table, scale):
    return table[i] * scale + np.sin(table[-1 - i])


def logistic_steps(r, x):
    def body(k, x):
        return r * x * (1.0 - x)
    x = lax.fori_loop(0, 20, body, x)
    y = lax.cond(x > 0.5, lambda v: v - 0.5, lambda v: v + 0.5, x)
    return x, (y, x > 0.5)


OFFSET = np.array([0.5, 1.5, 2.5], dtype=np.float32)


def shifted(x, k):
    return x + OFFSET[k]


def test_devices_device_put_and_device_arrays():
    (d,) = strop.devices("cuda")
    assert d.platform == "cuda" and repr(d) == "CudaDevice(id=0)"
    assert strop.devices("gpu") == [d]
    x = strop.device_put(np.arange(4.0), d)
    assert isinstance(x, DeviceArray) and x.device == d and x.devices() == {d}
    assert x.dtype == np.float32 and x.shape == (4,) and x.ndim == 1 and len(x) == 4
    np.testing.assert_array_equal(np.asarray(x), np.arange(4.0, dtype=np.float32))
    assert strop.block_until_ready(x) is x
    assert "CudaDevice(id=0)" in repr(x)
    y = x * 2 + 1                       # NumPy operators: the result stays on the device
    assert isinstance(y, DeviceArray)
    np.testing.assert_array_equal(np.asarray(y), 2 * np.arange(4.0) + 1)
    assert x.sum() == 6 and x.tolist() == [0, 1, 2, 3]     # NumPy's methods, on the host
    assert isinstance(x.reshape(2, 2), DeviceArray) and x.reshape(2, 2).T.shape == (2, 2)
    with pytest.raises(AttributeError):
        x.no_such_thing
    tree = strop.device_put({"w": np.ones(2), "n": 3}, d)
    assert isinstance(tree["w"], DeviceArray) and isinstance(tree["n"], DeviceArray)
    back = strop.device_put(x, strop.devices("cpu")[0])
    assert type(back) is np.ndarray and back.dtype == np.float32


def test_newton_one_thread_per_lane_matches_the_cpu():
    rng = np.random.default_rng(0)
    a = rng.uniform(1, 1e4, 1000).astype(np.float32)
    x0 = np.ones(1000, np.float32)
    f = jit(vmap(newton), backend="cuda")
    x, n = f(a, x0)
    assert isinstance(x, DeviceArray) and isinstance(n, DeviceArray)
    cx, cn = jit(vmap(newton))(a, x0)
    assert x.dtype == cx.dtype and n.dtype == cn.dtype
    np.testing.assert_array_equal(np.asarray(n), cn)      # per-lane trip counts, all equal
    np.testing.assert_allclose(np.asarray(x), cx, rtol=1e-6)
    assert len(set(np.asarray(n).tolist())) > 5          # lanes ran different trip counts
    np.testing.assert_allclose(np.asarray(x), np.sqrt(a), rtol=1e-4)


def test_integer_lanes_against_a_python_loop():
    ns = np.arange(1, 301)
    steps = jit(vmap(collatz), backend="cuda")(ns)
    expected = [collatz(int(n)) for n in ns]
    np.testing.assert_array_equal(np.asarray(steps), expected)
    assert steps.dtype == np.int32     # x64 off: lanes' Python ints stacked as int32


def test_unbatched_table_and_number_and_free_variable():
    table = np.linspace(0.0, 1.0, 11).astype(np.float32)
    idx = np.arange(11)
    got = jit(vmap(lookup, in_axes=(0, None, None)), backend="cuda")(idx, table, 3.0)
    want = [lookup(i, table, np.float32(3.0)) for i in idx]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    got = jit(vmap(shifted), backend="cuda")(np.ones(6), np.array([0, 1, 2, 2, 1, 0]))
    np.testing.assert_allclose(np.asarray(got), 1 + OFFSET[[0, 1, 2, 2, 1, 0]])


def test_out_of_bounds_index_raises_at_the_user_line():
    table = np.ones(5, np.float32)
    f = jit(vmap(lookup, in_axes=(0, None, None)), backend="cuda")
    with pytest.raises(IndexError) as e:
        f(np.array([0, 1, 9]), table, 1.0)
    assert "test_cuda.py" in str(e.value) and "return table[i] * scale" in str(e.value)
    with pytest.raises(IndexError):
        f(np.array([0, -7]), table, 1.0)       # below -len as well
    np.testing.assert_allclose(np.asarray(f(np.array([-1]), table, 1.0)),
                               [1 + np.sin(1.0)], rtol=1e-6)   # -1: the last, as NumPy


def test_lax_control_flow_and_nested_tuple_outputs():
    r = np.linspace(2.5, 3.9, 64).astype(np.float32)
    x0 = np.full(64, 0.3, np.float32)
    x, (y, above) = jit(vmap(logistic_steps), backend="cuda")(r, x0)
    cx, (cy, cabove) = jit(vmap(logistic_steps))(r, x0)
    np.testing.assert_allclose(np.asarray(x), cx, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(y), cy, rtol=1e-5)
    assert above.dtype == np.bool_ and np.array_equal(np.asarray(above), cabove)


def test_results_stay_on_the_device_and_computation_follows_data():
    a = strop.device_put(np.linspace(1, 50, 40), gpu())
    x0 = strop.device_put(np.ones(40), gpu())
    f = jit(vmap(newton))                    # no backend given: the arguments' device decides
    x, n = f(a, x0)
    assert isinstance(x, DeviceArray) and f.on_cuda().last is not None
    y, _ = f(x * x, x)                       # a device result passed on: no copy to the host
    assert isinstance(y, DeviceArray) and y._host is None
    np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=1e-4)


def test_a_call_like_an_earlier_one_runs_no_lane_on_the_host(monkeypatch):
    f = jit(vmap(newton), backend="cuda")
    a = np.linspace(1, 9, 32)
    f(a, np.ones(32))
    ran = []
    lane = f.lane.call_positional
    monkeypatch.setattr(f.lane, "call_positional", lambda args: ran.append(1) or lane(args))
    x, _ = f(a * 2, np.ones(32))                  # the same types: the kernel known
    np.testing.assert_allclose(np.asarray(x), np.sqrt(a * 2), rtol=1e-4)
    assert ran == []
    f(np.arange(1, 9), np.ones(8))                 # integers: new code, one lane first
    assert ran == [1]


def test_a_kernel_numba_cannot_compile_runs_on_the_cpu_once_refused(monkeypatch):
    """What only a GPU's compile finds (the simulator compiles nothing): said once, then the
    CPU runs every call without trying again."""
    import strop.cuda_vmap as cv
    tries = []

    def refuse(self, *args):
        tries.append(1)
        raise RuntimeError("No implementation of function (a stand-in for Numba's error)")
    monkeypatch.setattr(cv.Kernel, "run", refuse)
    monkeypatch.setattr(cv, "_compile_failed", lambda e: True)
    f = jit(vmap(collatz), backend="cuda")
    with pytest.warns(JitFallbackWarning, match="Numba could not compile it for the GPU"):
        out = f(np.arange(1, 9))
    np.testing.assert_array_equal(np.asarray(out), [collatz(n) for n in range(1, 9)])
    with pytest.warns(JitFallbackWarning):
        f(np.arange(1, 9))
    assert tries == [1]


def test_kwargs_and_in_axes_minus_one():
    f = jit(vmap(newton, in_axes=(-1, None)), backend="cuda")
    x, _ = f(a=np.array([4.0, 9.0, 16.0]), x0=1.0)
    np.testing.assert_allclose(np.asarray(x), [2, 3, 4], rtol=1e-4)


def rk4(y, k, h):            # a small linear ODE system per lane: its state a 3-vector
    for i in range(20):
        k1 = -k * y
        k2 = -k * (y + 0.5 * h * k1)
        k3 = -k * (y + 0.5 * h * k2)
        k4 = -k * (y + h * k3)
        y = y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y, np.sqrt(np.sum(y * y))


def lorenz(s, dt):          # arrays made in the lane, items set, matrix products
    x = s
    for i in range(50):
        d = np.zeros(3)
        d[0] = 10.0 * (x[1] - x[0])
        d[1] = x[0] * (28.0 - x[2]) - x[1]
        d[2] = x[0] * x[1] - 8.0 / 3.0 * x[2]
        x = x + dt * d
    m = np.full((2, 3), 0.5)
    return x, m @ x, x @ x, np.max(np.abs(x))


def pendulum_pair(state, g):   # slices, stacks, reductions along an axis, a reshape
    q, p = state[:2], state[2:]
    for i in range(10):
        acc = np.stack([-g * np.sin(q[0]), -g * np.sin(q[1])])
        p = p + 0.01 * acc
        q = q + 0.01 * p
    m = np.stack([q, p]).reshape(4, 1)
    out = np.zeros(4)
    out[1:3] = q[::-1]
    return np.sum(np.stack([q, p]), axis=0), m[:, 0].T, out, np.mean(m)


def test_lanes_holding_small_arrays():
    rng = np.random.default_rng(1)
    y, k = rng.normal(size=(64, 3)), rng.uniform(0.5, 2.0, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # a kernel ran them: no fallback
        out = jit(vmap(rk4, in_axes=(0, 0, None)), backend="cuda")(y, k, 0.05)
        lor = jit(vmap(lorenz, in_axes=(0, None)), backend="cuda")(y + 1.0, 0.01)
    ref = jit(vmap(rk4, in_axes=(0, 0, None)))(y, k, 0.05)
    assert out[0].shape == (64, 3) and out[1].shape == (64,)
    for got, want in zip(out, ref):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(out[0]), y * np.exp(-k * 1.0)[:, None], rtol=1e-4)
    s = rng.normal(size=(16, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pend = jit(vmap(pendulum_pair, in_axes=(0, None)), backend="cuda")(s, 9.8)
    for got, want in zip(pend, jit(vmap(pendulum_pair, in_axes=(0, None)))(s, 9.8)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    for got, want in zip(lor, [np.array(leaf) for leaf in zip(*[
            lorenz(np.float32(1.0) + yi.astype(np.float32), np.float32(0.01)) for yi in y])]):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)


def affine_stats(p, x):     # pytrees: a dict of parameters in, a dict out
    y = p["w"] * x[0] + p["b"] + np.sum(p["v"] * x)
    if y > 0:
        return {"y": y, "sq": (y * y, x * 2.0)}
    return {"y": -y, "sq": (y * y, x * 3.0)}


def test_pytrees_in_and_out():
    p = {"w": 2.0, "b": 1.0, "v": np.array([0.5, -1.0, 2.0])}
    x = np.random.default_rng(2).normal(size=(10, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = jit(vmap(affine_stats, in_axes=(None, 0)), backend="cuda")(p, x)
    want = vmap(affine_stats, in_axes=(None, 0))(p, x)
    assert set(out) == {"y", "sq"} and isinstance(out["sq"], tuple)
    for got, ref in zip(strop.tree_util.tree_leaves(out), strop.tree_util.tree_leaves(want)):
        assert isinstance(got, DeviceArray)
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-6)


def first_of_cumsum(p, x):
    return np.cumsum(p["v"] * x)[0]


def test_a_pytree_of_gpu_arrays_falls_back_to_the_cpu():
    """Its leaves come to the host for the CPU's run (they once went round in circles)."""
    p = strop.device_put({"v": np.full(3, 2.0)}, gpu())
    x = strop.device_put(np.arange(12.0).reshape(4, 3), gpu())
    with pytest.warns(JitFallbackWarning, match="np.cumsum"):
        out = jit(vmap(first_of_cumsum, in_axes=(None, 0)))(p, x)
    assert isinstance(out, DeviceArray)
    np.testing.assert_allclose(np.asarray(out), 2 * np.arange(0.0, 12.0, 3.0))


def test_what_a_kernel_cannot_run_falls_back_to_the_cpu_with_a_warning():
    def ordered(v):
        return np.sort(v)[0] + v[1]
    v = np.arange(12.0).reshape(4, 3)[:, ::-1]
    with pytest.warns(JitFallbackWarning, match="runs on the CPU, not the GPU: the kernel "
                                                "cannot run this lane code") as w:
        out = jit(vmap(ordered), backend="cuda")(v)
    assert "return np.sort(v)[0] + v[1]" in str(w[0].message)      # the line named
    assert isinstance(out, DeviceArray)
    np.testing.assert_allclose(np.asarray(out), v.min(axis=1) + v[:, 1])

    def hazard(x):                   # a tuple keeps y's buffer, which the loop rewrites
        y = x * 1.0
        for i in range(3):
            pair = (y, x)
            y = y + 1.0
            z = pair[0]
        return z
    with pytest.warns(JitFallbackWarning, match="a tuple holding arrays read"):
        out = jit(vmap(hazard), backend="cuda")(np.ones((4, 3)))
    np.testing.assert_array_equal(np.asarray(out), np.full((4, 3), 3.0))

    def looped(x, n):                # its derivative keeps a tape: no kernel (yet)
        for i in range(n):
            x = np.sin(x) * 1.5
        return x
    g = jit(vmap(strop.grad(looped), in_axes=(0, None)), backend="cuda")
    with pytest.warns(JitFallbackWarning, match="a loop's derivative keeps a tape"):
        out = g(np.linspace(0, 1, 5), 3)
    np.testing.assert_allclose(np.asarray(out), jit(vmap(strop.grad(looped), in_axes=(
        0, None)))(np.linspace(0, 1, 5), 3), rtol=1e-6)
    # whole-array code with a call that has no device twin: computed on the CPU, the result
    # put on the device
    g = jit(lambda x: np.sort(x) * 2)
    with pytest.warns(JitFallbackWarning, match="runs on the CPU, its results put on"):
        out = g(strop.device_put(np.arange(5.0)[::-1], gpu()))
    assert isinstance(out, DeviceArray)
    np.testing.assert_allclose(np.asarray(out), 2 * np.arange(5.0))


def activation(x, y, s):
    z = np.tanh(x * s) + y ** 2
    return z, np.where(z > 1.0, z, -z) * 0.5


def squared_error(x, y, s):
    d = np.tanh(x * s) - y
    return np.sum(d * d), np.max(d), (d * 2).mean(), d


def product_plus_one(a, b):   # arrays of one shape, but @ is no elementwise operation
    return a @ b + 1.0


def test_elementwise_code_is_one_kernel():
    x = np.linspace(-2, 2, 12).reshape(3, 4)
    y = np.cos(x)
    f = jit(activation, backend="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # no fallback: a kernel ran it
        z, w = f(x, y, 1.5)
    assert isinstance(z, DeviceArray) and z.shape == (3, 4) and w.dtype == np.float32
    cz, cw = jit(activation)(x, y, 1.5)
    np.testing.assert_allclose(np.asarray(z), cz, rtol=1e-5, atol=1e-6)   # (tanh: 1 ulp)
    np.testing.assert_allclose(np.asarray(w), cw, rtol=1e-5, atol=1e-6)
    assert "def activation_kernel(x, y, s, _out0, _out1, _err):" in \
        f._cuda_elementwise.shown()
    # full reductions of what it returns: reduced on the device after the kernel
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = jit(squared_error, backend="cuda")(x, y, 1.5)
    for got, want in zip(out, jit(squared_error)(x, y, 1.5)):
        assert isinstance(got, DeviceArray) and got.shape == np.shape(want)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    # not elementwise: a product, arrays of two shapes broadcast; run launch by launch
    # (test_cuda_program.py)
    m = np.arange(4.0).reshape(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = jit(product_plus_one, backend="cuda")(m, m)
        assert isinstance(out, DeviceArray)
        np.testing.assert_allclose(np.asarray(out), m @ m + 1)
        out = f(x, np.ones(4), 2.0)
    np.testing.assert_allclose(np.asarray(out[0]), jit(activation)(x, np.ones(4), 2.0)[0],
                               rtol=2e-6)   # (float32 tanh: NumPy's in the simulator)


def lane_grad(x, k):
    return x * np.sin(k * x) + x ** 3


def test_per_example_gradients_and_debug_nans_on_the_device():
    x = np.linspace(0.1, 2.0, 32)
    k = np.linspace(1.0, 3.0, 32)
    g = jit(vmap(strop.grad(lane_grad)), backend="cuda")(x, k)
    np.testing.assert_allclose(np.asarray(g), jit(vmap(strop.grad(lane_grad)))(x, k),
                               rtol=1e-5)

    def root(x):
        return np.sqrt(x - 1.0)
    f = jit(vmap(root), backend="cuda")
    with strop.config.override(debug_nans=True), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_allclose(np.asarray(f(np.array([2.0, 5.0]))), [1.0, 2.0])
        with pytest.raises(FloatingPointError) as e:
            f(np.array([2.0, 0.5]))
    assert "test_cuda.py" in str(e.value) and "np.sqrt(x - 1.0)" in str(e.value)


def test_source_shows_the_kernel():
    f = jit(vmap(newton), backend="cuda")
    with pytest.raises(ValueError, match="call it first"):
        strop.source(f)
    f(np.array([2.0, 3.0]), np.ones(2))
    text = strop.source(f)
    assert "def newton_kernel(a, x0, _out0, _out1, _err):" in text
    assert "_j = cuda.grid(1)" in text and "newton(a[_j], x0[_j], _err)" in text
    assert "# line" in text and "while abs(x * x - a)" in text      # the user's lines named


def test_x64_lanes():
    with strop.config.override(enable_x64=True):
        x, n = jit(vmap(newton), backend="cuda")(np.array([2.0, 10.0]), np.ones(2))
        assert x.dtype == np.float64 and n.dtype == np.int64
        np.testing.assert_allclose(np.asarray(x), np.sqrt([2.0, 10.0]), rtol=1e-5)


_PTX = """
import json, numpy as np, strop
from strop import jit, vmap
from strop.cuda_vmap import CudaElementwise
import test_cuda as t
try:
    from numba import cuda, types
    cuda.compile_ptx(lambda x: None, (types.float32[:],), cc=(8, 0))
except Exception as e:   # no NVVM/NVRTC library here (numba-cuda without its toolkit wheels)
    if not any(w in repr(e).lower() for w in ("nvvm", "nvrtc", "dynamiclib", "cuda_home")):
        raise
    print(json.dumps({"unavailable": repr(e)})); raise SystemExit
a = np.linspace(1, 9, 8)
out = {
    "newton": jit(vmap(t.newton), backend="cuda").ptx(a, np.ones(8)),
    "collatz": jit(vmap(t.collatz), backend="cuda").ptx(np.arange(1, 9)),
    "lookup": jit(vmap(t.lookup, in_axes=(0, None, None)), backend="cuda").ptx(
        np.arange(3), np.ones(5), 2.0),
    "logistic_steps": jit(vmap(t.logistic_steps), backend="cuda").ptx(a / 3, a / 10),
    "shifted": jit(vmap(t.shifted), backend="cuda").ptx(a, np.arange(8) % 3),
    "lane_grad": jit(vmap(strop.grad(t.lane_grad)), backend="cuda").ptx(a, a),
    "rk4": jit(vmap(t.rk4, in_axes=(0, 0, None)), backend="cuda").ptx(
        a.reshape(4, 2), a[:4], 0.1),
    "lorenz": jit(vmap(t.lorenz, in_axes=(0, None)), backend="cuda").ptx(
        np.ones((5, 3)), 0.01),
    "affine_stats": jit(vmap(t.affine_stats, in_axes=(None, 0)), backend="cuda").ptx(
        {"w": 2.0, "b": 1.0, "v": np.ones(3)}, np.ones((4, 3))),
    "pendulum_pair": jit(vmap(t.pendulum_pair, in_axes=(0, None)), backend="cuda").ptx(
        np.ones((5, 4)), 9.8),
    "activation": CudaElementwise(jit(t.activation, backend="cuda")).ptx(
        a.reshape(2, 4), a.reshape(2, 4), 2.0),
    "squared_error": CudaElementwise(jit(t.squared_error, backend="cuda")).ptx(
        a.reshape(2, 4), a.reshape(2, 4), 2.0),
}
print(json.dumps(out))
"""


def test_kernels_compile_to_ptx():
    """What a GPU would run: the same kernels through numba-cuda's compiler (NVVM), with no
    device, in float32 arithmetic where the lanes are float32 (weak Python numbers)."""
    out = ptx_of(_PTX)
    for name, ptx in out.items():
        assert ".visible .entry" in ptx and name in ptx and "_kernel" in ptx, name
    assert len(out) == 12
    newton_ptx = out["newton"]
    assert "div.rn.f32" in newton_ptx and "div.rn.f64" not in newton_ptx   # float32 lanes
