"""Per-example gradients of a small MLP over 10^6 examples on Dask (strop/dask.py): 1 and 2
local worker processes, against ``jit(vmap(grad))`` on one NumPy array.

    python benchmarks/dask_grad.py [--n 1000000] [--chunk 62500] [--repeats 5]

The MLP: 4 -> 8 (tanh) -> 1, float32, params a tuple (w1, b1, w2); the per-example loss is
the squared error of one example, and every row computes each example's gradient (48 floats
an example: 192 MB for 10^6).

Rows:
  NumPy array, jit(vmap(grad))         the whole batch in one call, in this process
  dask, k workers, kept                LocalCluster(k processes, 1 thread each), chunk by
                                       chunk; the gradients stay on the workers (persist),
                                       as for a next distributed step
  NumPy / dask, + norms                the same, then each example's gradient norm (what
                                       per-example clipping needs): dask brings back 4 MB, not
                                       the gradients, but its graph has ~20 tasks a chunk

Every run uses NUMBA_NUM_THREADS=1 (set here, inherited by the workers): strop's jit(vmap)
otherwise cuts a batch over all cores itself (codegen/parallel.py), which would blur the
1-vs-2-worker scaling.  The data is made on the workers (dask.array.random) and persisted
before timing, as data loaded from storage would be; each dask row's results are checked
against the NumPy row's.  Rows are medians of ``--repeats`` runs after a warm-up run (which
compiles, or loads strop's disk cache, in each worker); CPU seconds beside them are summed
over this process (client and scheduler) and the workers.
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")   # before numba is imported, here and there

import numpy as np   # noqa: E402

import _timing   # noqa: E402,F401  (puts this checkout first on sys.path)

import strop   # noqa: E402


def example_loss(p, x, y):
    h = np.tanh(x @ p[0] + p[1])
    return (h @ p[2] - y) ** 2


def params():
    rng = np.random.default_rng(0)
    return (rng.normal(size=(4, 8)).astype(np.float32) / 2,
            rng.normal(size=8).astype(np.float32) / 10,
            rng.normal(size=8).astype(np.float32) / 3)


def norms(g):
    """Each example's gradient norm, from the per-example gradients (NumPy or dask)."""
    total = 0
    for leaf in g:
        total = total + (leaf ** 2).reshape(leaf.shape[0], -1).sum(axis=1)
    return total ** 0.5


PER_EXAMPLE = strop.jit(strop.vmap(strop.grad(example_loss), in_axes=(None, 0, 0)))


def median_time(fn, repeats, client=None):
    """(median wall seconds, median CPU seconds) of ``fn()``, after one warm-up call (which
    compiles, or loads the disk cache, and fills the workers).  CPU seconds: this process's
    (client and LocalCluster's scheduler) and every worker's, which a loaded machine does not
    inflate the way it does wall time."""
    def cpu():
        workers = client.run(time.process_time).values() if client is not None else ()
        return time.process_time() + sum(workers)

    fn()
    walls, cpus = [], []
    for _ in range(repeats):
        c, t = cpu(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t)
        cpus.append(cpu() - c)
    return statistics.median(walls), statistics.median(cpus)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--chunk", type=int, default=62_500)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster, wait

    p = params()
    rows = []
    print(_timing.versions())
    print(_timing.load_average(), f"n={args.n} chunk={args.chunk}")
    want = None
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                          dashboard_address=None, silence_logs=40) as cluster, \
                Client(cluster) as client:
            rng = da.random.default_rng(1)
            x = rng.normal(size=(args.n, 4), chunks=(args.chunk, 4)).astype(np.float32)
            y = rng.normal(size=args.n, chunks=args.chunk).astype(np.float32)
            x, y = client.persist([x, y])
            wait([x, y])
            if want is None:   # the NumPy rows, on the same data
                xn, yn = dask.compute(x, y)
                rows.append(("NumPy array, jit(vmap(grad))", median_time(
                    lambda: PER_EXAMPLE(p, xn, yn), args.repeats)))
                rows.append(("NumPy array, + norms", median_time(
                    lambda: norms(PER_EXAMPLE(p, xn, yn)), args.repeats)))
                want = norms(PER_EXAMPLE(p, xn, yn))
                del xn, yn

            calls = iter(range(1, 1 << 30))

            def fresh():   # new params each call: new keys, so that no result is reused
                k = next(calls)
                return (p[0] * np.float32(1 + k * 1e-3),) + p[1:]

            def kept():
                g = client.persist(list(PER_EXAMPLE(fresh(), x, y)))
                wait(g)
                client.cancel(g)

            name = f"dask, {workers} worker{'s' if workers > 1 else ''}"
            rows.append((f"{name}, kept", median_time(kept, args.repeats, client)))
            rows.append((f"{name}, + norms", median_time(
                lambda: norms(PER_EXAMPLE(fresh(), x, y)).compute(), args.repeats, client)))
            got = norms(PER_EXAMPLE(p, x, y)).compute()
            assert np.allclose(got, want, rtol=1e-5, atol=1e-6), "dask != NumPy"
    base = {"kept": rows[0][1][0], "norms": rows[1][1][0]}
    one = {"kept": rows[2][1][0], "norms": rows[3][1][0]}
    print()
    print("| row | wall s | ÷ NumPy | ÷ dask 1 worker | CPU s |")
    print("|---|---|---|---|---|")
    for i, (name, (t, c)) in enumerate(rows):
        kind = "norms" if "norms" in name else "kept"
        print(f"| {name} | {t:.3f} | {t / base[kind]:.2f} | {t / one[kind]:.2f} | {c:.2f} |")
    print(_timing.load_average())


if __name__ == "__main__":
    main()
