"""Time to the first result of ``strop.jit(strop.grad(pendulum))`` (the ode_grad function) in a
fresh process: cold (empty strop and Numba caches) and warm (a second process reusing the
disk cache the cold one wrote).

    python benchmarks/first_call.py [--pairs P] [--warm W] [--profile]

Each measurement is its own ``python`` process started with ``subprocess``, with
``STROP_CACHE_DIR`` and ``NUMBA_CACHE_DIR`` pointing at a new temporary directory per pair
(cold, then ``W`` warm processes on the same directory); the child prints its own timings as
JSON: ``import numba``, ``import strop``, the first call of ``jit(grad(f))`` (transform,
code generation, Numba compile or cache load, and the run itself: ~5 ms of the 100,000-step
loop), and a second call (the run alone).  The first call's gradient is checked against the
hand-written Numba adjoint in the child.

Target (the issue): first call under 50 ms with a warm disk cache.  ``--profile`` runs one
more warm child under cProfile and prints where its first call spends its time.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = (1.0, 0.05, 1e-3, 100_000)


def child(profile, what):
    """Runs in the fresh process: time imports and the first two calls of ``what``: "strop"
    (jit(grad(pendulum))) or "numba" (the hand-written adjoint, njit(cache=True): the limit)."""
    import time
    sys.path[:0] = [os.path.dirname(HERE), HERE]      # this checkout's strop; ode_grad
    t0 = time.perf_counter()
    import numba  # noqa: F401   (timed apart: a user of jit pays it once per process)
    t1 = time.perf_counter()
    import strop
    t2 = time.perf_counter()
    strop.config.update("enable_x64", True)
    import ode_grad
    prof = None
    if profile:
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    t3 = time.perf_counter()
    if what == "strop":
        g = strop.jit(strop.grad(ode_grad.pendulum, argnums=(0, 1)))
    else:
        g = numba.njit(cache=True)(ode_grad.grad_numba.py_func)
    out = g(*ARGS)
    t4 = time.perf_counter()
    if prof is not None:
        prof.disable()
    g(*ARGS)
    t5 = time.perf_counter()
    import numpy as np
    np.testing.assert_allclose(np.array(out, float), ode_grad.grad_numba(*ARGS), rtol=1e-9)
    print(json.dumps({"import_numba": t1 - t0, "import_strop": t2 - t1, "first_call": t4 - t3,
                      "second_call": t5 - t4,
                      "backend": getattr(g, "last_backend", "numba njit")}))
    if prof is not None:
        import pstats
        st = pstats.Stats(prof)
        total = t4 - t3
        items = sorted(st.stats.items(), key=lambda kv: -kv[1][3])
        print(f"\ncProfile of the warm first call ({1e3 * total:.1f} ms under the profiler), "
              f"cumulative ms, strop and numba functions:", file=sys.stderr)
        shown = 0
        for (file, line, name), (cc, nc, tt, ct, _) in items:
            if ("/strop/" in file or "/numba/" in file) and shown < 30:
                short = file.split("/strop/")[-1] if "/strop/" in file else \
                    "numba/" + file.split("/numba/")[-1]
                print(f"  {1e3 * ct:7.1f}  {nc:5d}x  {name}  ({short}:{line})", file=sys.stderr)
                shown += 1


def spawn(cache, what, profile=False):
    env = dict(os.environ, STROP_CACHE_DIR=os.path.join(cache, "strop"),
               NUMBA_CACHE_DIR=os.path.join(cache, "numba"), PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", what] + (
        ["--profile"] if profile else [])
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        raise SystemExit(f"child failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    if profile:
        print(res.stderr, end="")
    return json.loads(res.stdout.strip().splitlines()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3, help="cold caches (new temp dirs)")
    ap.add_argument("--warm", type=int, default=3, help="warm processes per cold one")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--child", choices=("strop", "numba"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.profile, args.child)

    import _timing
    print("first_call: jit(grad(pendulum)) of ode_grad (100,000 steps, float64) in fresh "
          "processes; cold = empty STROP_CACHE_DIR and NUMBA_CACHE_DIR, warm = a later "
          "process on the same directories")
    print(f"{_timing.versions()}; {_timing.load_average()} at start")
    runs = {}    # (what, "cold"/"warm") -> child results
    with tempfile.TemporaryDirectory(prefix="strop-first-call-") as tmp:
        for p in range(args.pairs):
            for what in ("strop", "numba"):
                cache = os.path.join(tmp, f"{what}{p}")
                runs.setdefault((what, "cold"), []).append(spawn(cache, what))
                runs.setdefault((what, "warm"), []).extend(
                    spawn(cache, what) for _ in range(args.warm))
        if args.profile:
            print()
            spawn(os.path.join(tmp, "strop0"), "strop", profile=True)

    keys = [("import numba", "import_numba"), ("import strop", "import_strop"),
            ("first call", "first_call"), ("second call (the run alone)", "second_call")]
    cols = [(w, c) for w in ("strop", "numba") for c in ("cold", "warm")]
    names = {"strop": "strop jit(grad)", "numba": "Numba hand adjoint, cache=True"}
    head = ["measure (median)"] + [f"{names[w]} {c} (n={len(runs[w, c])})" for w, c in cols] + [
        "strop warm min–max"]
    tot = lambda r: r["import_numba"] + r["import_strop"] + r["first_call"]  # noqa: E731
    lines = []
    for label, k in keys + [("imports + first call", None)]:
        get = (lambda r, k=k: r[k]) if k else tot
        cells = [label] + [_timing.fmt_time(statistics.median(map(get, runs[c]))) for c in cols]
        w = [get(r) for r in runs["strop", "warm"]]
        cells.append(f"{_timing.fmt_time(min(w))} – {_timing.fmt_time(max(w))}")
        lines.append(cells)
    widths = [max(len(h), *(len(c[i]) for c in lines)) for i, h in enumerate(head)]
    print()
    print(f"strop ran as: {', '.join(sorted({r['backend'] for c in cols[:2] for r in runs[c]}))}")
    print("| " + " | ".join(h.ljust(n) for h, n in zip(head, widths)) + " |")
    print("|" + "|".join("-" * (n + 2) for n in widths) + "|")
    for c in lines:
        print("| " + " | ".join(x.ljust(n) for x, n in zip(c, widths)) + " |")
    first = statistics.median(r["first_call"] for r in runs["strop", "warm"])
    limit = statistics.median(r["first_call"] for r in runs["numba", "warm"])
    print()
    print(f"target warm first call < 50 ms: {1e3 * first:.1f} ms -> "
          f"{'MET' if first < 0.05 else 'MISSED'} (Numba alone, warm: {1e3 * limit:.1f} ms; "
          f"the run itself is ~"
          f"{1e3 * statistics.median(r['second_call'] for r in runs['strop', 'warm']):.1f} ms)")
    print(f"{_timing.load_average()} at end")


if __name__ == "__main__":
    main()
