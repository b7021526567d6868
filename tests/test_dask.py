"""strop on Dask (strop/dask.py), on a LocalCluster of 2 worker processes: results and
gradients equal the NumPy path, chunks that do not divide the batch, errors at the user's
line, and a worker killed mid-computation.  Select with ``-m dask``."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import strop

pytestmark = pytest.mark.dask
distributed = pytest.importorskip("dask.distributed", reason="Dask is not installed "
                                  "(pip install 'strop[dask]')")
da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
sdask = strop.dask


@pytest.fixture(scope="module")
def client():
    # the workers inherit STROP_CACHE_DIR/NUMBA_CACHE_DIR (tests/conftest.py): one disk cache
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None, silence_logs=40)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def mlp(p, x):   # p a tuple: Numba cannot compile strop's gradient of a dict's items yet
    h = np.tanh(x @ p[0] + p[1])
    return h @ p[2]


def mean_loss(p, x, y):
    return np.mean((mlp(p, x) - y) ** 2)


def data(n=23, seed=0):
    rng = np.random.default_rng(seed)
    f = np.float32
    p = (rng.normal(size=(3, 4)).astype(f), rng.normal(size=4).astype(f),
         rng.normal(size=4).astype(f))
    return p, rng.normal(size=(n, 3)).astype(f), rng.normal(size=n).astype(f)


def close(a, b):
    a, b = dask.compute(a, b)   # one graph: Dask warns when a task is submitted twice
    return all(np.allclose(x, y, rtol=1e-5, atol=1e-5) and np.shape(x) == np.shape(y)
               for x, y in zip(strop.tree_util.tree_leaves(a), strop.tree_util.tree_leaves(b)))


def test_vmap_lazy_pytrees_axes(client):
    def f(p, x, z):   # pytrees in and out, out_axes other than 0, an output the same in all lanes
        return {"h": mlp(p, x), "outer": np.outer(x, z)}, np.outer(x, z), p[2]

    p, x, _ = data()
    z = np.arange(46, dtype=np.float32).reshape(2, 23)
    t = strop.vmap(f, in_axes=(None, 0, 1), out_axes=(0, -1, None))
    out = t(p, da.from_array(x, chunks=(5, 3)), da.from_array(z, chunks=(1, 7)))
    assert isinstance(out[1], da.Array) and out[1].shape == (3, 2, 23)
    assert out[1].chunks[2] == (5, 5, 5, 5, 3)   # the first batched argument's
    graph = dict(out[1].__dask_graph__())   # the function and p: one key, for all 5 tasks
    assert sum(isinstance(getattr(v, "value", v), sdask._Shared) for v in graph.values()) == 1
    assert close(out, t(p, x, z)) and close(out[0]["h"], np.array([mlp(p, r) for r in x]))


def example_loss(w, x, y):   # small models where Numba compiles: a test compiles in seconds
    return (np.tanh(x @ w) - y) ** 2


def linear_loss(w, x, y):
    return np.sum((x @ w - y) ** 2)


def test_jit_vmap_per_example_gradients(client):
    _, x, y = data()
    w = np.linspace(-1, 1, 3).astype(np.float32)
    t = strop.jit(strop.vmap(strop.grad(example_loss), in_axes=(None, 0, 0)))
    want = t(w, x, y)   # compiled here first: the workers load it from the disk cache
    got = t(w, da.from_array(x, chunks=4), da.from_array(y, chunks=4))   # 23 = 5 * 4 + 3
    assert isinstance(got, da.Array) and got.shape == (23, 3) and got.dtype == np.float32
    got = client.compute(got).result()
    assert close(got, want) and close(got[7], strop.grad(example_loss)(w, x[7], y[7]))

    def made(digest):   # on a worker: the code made for the function, one for all chunks
        import strop.dask
        fn = strop.dask._MADE.get(digest)
        return 0 if fn is None else len(fn._cache)

    counts = client.run(made, sdask._Sent(t).digest)
    assert set(counts.values()) <= {0, 1} and sum(counts.values()) >= 1, counts


@pytest.mark.parametrize("mean", [False, True])
def test_grad_sum(client, mean):
    p, x, y = data(n=31)
    # compiled (jit, on the workers) for a linear model; for the MLP, as Python
    f, p, backend = (mean_loss, p, "python") if mean else (linear_loss, p[0][:, 0], "cpu")
    dx, dy = da.from_array(x, chunks=6), da.from_array(y, chunks=(10, 10, 11))   # unaligned
    g = sdask.grad_sum(f, p, dx, dy, mean=mean, split_every=2, backend=backend)
    assert close(g, strop.grad(f)(p, x, y))
    value, g2 = sdask.value_and_grad_sum(f, p, dx, dy, mean=mean, backend=backend)
    assert np.isclose(value, f(p, x, y), rtol=1e-5) and close(g2, g)


def lane_fails(a):
    return np.linalg.cholesky(a)   # raises in a lane whose matrix is not positive definite


def test_worker_error_names_user_line(client):
    a = np.tile(np.eye(2), (6, 1, 1))
    a[4, 0, 0] = -1.0
    out = strop.vmap(lane_fails)(da.from_array(a, chunks=3))
    with pytest.raises(np.linalg.LinAlgError) as e:
        out.compute()
    assert "return np.linalg.cholesky(a)" in str(e.value) and "test_dask.py" in str(e.value)


def slow(x):
    for _ in range(300):
        x = np.tanh(x) * 1.5 + 0.1
    return x.sum()


def test_killed_worker_still_right(client):
    x = np.random.default_rng(1).normal(size=(64 * 80, 256)).astype(np.float32)
    t = strop.vmap(slow)
    future = client.compute(t(da.from_array(x, chunks=64)))
    deadline = time.time() + 60
    while time.time() < deadline and not client.run_on_scheduler(_some_done):
        time.sleep(0.05)
    pid = next(iter(client.run(os.getpid).values()))
    os.kill(pid, signal.SIGKILL)   # the nanny starts another; Dask reruns the lost tasks
    assert not future.done()
    got = future.result(timeout=120)
    assert np.allclose(got, t(x), rtol=1e-5)


def _some_done(dask_scheduler):
    return any(k[0].startswith("strop-vmap(slow)") and ts.state == "memory"
               for k, ts in dask_scheduler.tasks.items() if isinstance(k, tuple))


def test_sent_by_reference_or_by_source():
    def local(x):   # not importable by name: by value, with its source for strop to parse
        return x * 2.0

    by_ref = sdask._Sent(strop.jit(strop.vmap(slow)))
    by_source = sdask._Sent(strop.vmap(local))
    assert by_ref.sources == {} and slow.__name__.encode() in by_ref.blob
    lines = by_source.sources[local.__code__.co_filename]
    assert "        return x * 2.0\n" in lines
    made = sdask.cloudpickle.loads(by_ref.blob)   # what a worker makes: the same transform
    assert made.recipe[0] == "jit" and made.recipe[1].recipe[:2] == ("vmap", slow)


def test_strop_without_dask(tmp_path):
    script = tmp_path / "nodask.py"
    script.write_text("import sys\nsys.modules['dask'] = None   # as if not installed\n"
                      "import numpy as np, strop\n\n\ndef f(x):\n    return x * 2\n\n\n"
                      "print(strop.vmap(f)(np.ones(3)).sum())\n"
                      "try:\n    import strop.dask\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("6.0") and "strop[dask]" in out.stdout
