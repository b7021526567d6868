"""Per-call overhead of a jitted function: f(x, y) = x * y + 1 on two 3-element float32 arrays,
so the time is almost all dispatch.

    python benchmarks/call_overhead.py [--repeats R] [--profile]

Rows:
  strop jit                    strop.jit(f)(x, y), NumPy float32 inputs
  Numba dispatcher (limit)     numba.njit(f)(x, y): what strop's compiled code costs to call
  JAX jit, device arrays       jax.jit(f)(x, y) on arrays already on the device, with
                               block_until_ready (JAX at its best; skipped without JAX)
  context rows                 JAX jit on NumPy inputs, plain NumPy f(x, y), strop jit on
                               float64 inputs (converted to float32 at the boundary)

Target (the issue): strop's per-call time below JAX's.  ``--profile`` adds a cProfile of
strop's call path (where the time above the Numba dispatcher goes).
"""
import argparse

import numba
import numpy as np

import _timing
from _timing import Row

import strop


def f(x, y):
    return x * y + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    strop.config.update("enable_x64", False)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    y = np.array([4.0, 5.0, 6.0], np.float32)
    expect = x * y + 1

    print("call_overhead: f(x, y) = x * y + 1, x and y float32 arrays of 3 elements")
    print(f"{_timing.versions()}; {_timing.load_average()} at start")
    rows = []
    row, sf, out = _timing.strop_jitted(lambda: strop.jit(f), lambda g: g(x, y), "strop jit")
    if out is not None:
        assert out.dtype == np.float32, out.dtype
        np.testing.assert_array_equal(out, expect)
    rows.append(row)

    nf = numba.njit(f)
    np.testing.assert_array_equal(nf(x, y), expect)
    rows.append(Row("Numba dispatcher (limit)", lambda: nf(x, y), "numba njit", ref=True))

    jax = _timing.import_jax(x64=False)
    if jax is None:
        rows.append(Row("JAX jit, device arrays", None, "skipped: JAX not installed"))
    else:
        jf = jax.jit(f)
        jx, jy = jax.device_put(x), jax.device_put(y)
        np.testing.assert_array_equal(np.asarray(jf(jx, jy)), expect)
        np.testing.assert_array_equal(np.asarray(jf(x, y)), expect)
        rows.append(Row("JAX jit, device arrays", lambda: jf(jx, jy).block_until_ready(),
                        "jax cpu", ref=True))
        rows.append(Row("JAX jit, NumPy inputs", lambda: jf(x, y).block_until_ready(),
                        "jax cpu"))

    rows.append(Row("plain NumPy f(x, y)", lambda: f(x, y), "numpy"))
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    row, _, out = _timing.strop_jitted(lambda: strop.jit(f), lambda g: g(x64, y64),
                                       "strop jit, float64 inputs")
    if out is not None:
        np.testing.assert_array_equal(out, expect)
    rows.append(row)

    _timing.run_rows(rows, repeats=args.repeats, min_batch_s=0.03, budget_s=40)
    print()
    _timing.table(rows, refs=("Numba dispatcher (limit)", "JAX jit, device arrays"))
    print()
    by = {r.name: r for r in rows}
    s, j = by["strop jit"], by.get("JAX jit, device arrays")
    if s.samples and j is not None and j.samples:
        ratio = s.median / j.median
        print(f"target strop jit per call < JAX jit: {ratio:.2f}x -> "
              f"{'MET' if ratio < 1 else 'MISSED'}")
    elif j is None or not j.samples:
        print("target strop jit per call < JAX jit: not evaluated (JAX not installed)")
    print(f"{_timing.load_average()} at end")

    if args.profile and sf is not None:
        import cProfile
        import pstats
        n = 100_000
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(n):
            sf(x, y)
        prof.disable()
        print(f"\ncProfile of {n:_} strop jit calls (tottime per call, µs):")
        st = pstats.Stats(prof)
        items = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:15]
        for (file, line, name), (cc, nc, tt, ct, _) in items:
            where = f"{file.split('/strop/')[-1] if '/strop/' in file else file}:{line}"
            print(f"  {1e6 * tt / n:7.2f}  {nc / n:5.1f} calls  {name}  ({where})")
        print("  (cProfile inflates each Python-level call; read it for proportions)")


if __name__ == "__main__":
    main()
