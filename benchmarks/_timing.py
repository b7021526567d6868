"""Timing helpers shared by the jit benchmarks (ode_grad, mlp_grad, call_overhead, first_call,
garch_grad, heat_grad, mc_vmap_grad).

The machines these run on are small and shared, so the helpers are built for noise:

* every row is warmed up (compiled, caches filled) before any timing;
* rows are timed **interleaved**: each round times every row once, so a burst of load from
  another process hits all rows of a round instead of one row's whole sample;
* a sample is a batch of ``number`` calls, ``number`` chosen so that a batch lasts at least
  ``min_batch_s`` (this is what makes microsecond calls measurable);
* the reported value is the **median** over rounds of the per-call time, with the
  interquartile spread beside it.

Nothing here imports strop or JAX; the benchmarks do.
"""
import datetime
import os
import platform
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:            # the benchmarks measure this checkout's strop
    sys.path.insert(0, REPO)


class Row:
    """One thing to time: ``fn()`` runs it once; ``status`` says how it ran (backend, fallback,
    error); ``fn`` None means it is not timed (JAX missing, strop raised) and ``status`` says
    why."""

    def __init__(self, name, fn, status="", ref=False):
        self.name, self.fn, self.status, self.ref = name, fn, status, ref
        self.samples = []          # per-call seconds, one per round
        self.number = 1

    @property
    def median(self):
        return statistics.median(self.samples) if self.samples else float("nan")

    @property
    def spread(self):
        """Interquartile range of the samples, relative to the median."""
        if len(self.samples) < 4:
            return float("nan")
        q = statistics.quantiles(self.samples, n=4)
        return (q[2] - q[0]) / self.median


def calibrate(fn, min_batch_s):
    """The number of calls that makes one timed batch last at least ``min_batch_s``."""
    number = 1
    while True:
        t = time.perf_counter()
        for _ in range(number):
            fn()
        dt = time.perf_counter() - t
        if dt >= min_batch_s or number >= 1 << 24:
            return number
        number = max(number * 2, int(number * 1.2 * min_batch_s / max(dt, 1e-9)))


def run_rows(rows, repeats=9, warmup=2, min_batch_s=0.05, budget_s=None):
    """Warm up every timed row, then time them interleaved for ``repeats`` rounds (fewer if
    ``budget_s`` seconds would be exceeded, never fewer than 3).  Fills ``row.samples``."""
    timed = [r for r in rows if r.fn is not None]
    for r in timed:
        for _ in range(warmup):
            r.fn()
        r.number = calibrate(r.fn, min_batch_s)
    start = time.perf_counter()
    for k in range(repeats):
        for r in timed:
            fn, number = r.fn, r.number
            t = time.perf_counter()
            for _ in range(number):
                fn()
            r.samples.append((time.perf_counter() - t) / number)
        if budget_s is not None and k >= 2 and time.perf_counter() - start > budget_s:
            break
    return rows


def fmt_time(s):
    if s != s:          # nan
        return "—"
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.3f} s"


def table(rows, refs=(), title=None, file=None):
    """Print a Markdown table: row, how it ran, median per call, IQR/median, rounds x calls,
    and one ratio column per reference row name in ``refs`` (this row's median / the
    reference's: lower is better for the row)."""
    file = file or sys.stdout
    by_name = {r.name: r for r in rows}
    head = ["row", "ran as", "median", "IQR/med", "rounds×calls"] + [f"÷ {n}" for n in refs]
    lines = []
    for r in rows:
        cells = [r.name, r.status or "", fmt_time(r.median),
                 f"{r.spread:.0%}" if r.spread == r.spread else "—",
                 f"{len(r.samples)}×{r.number}" if r.samples else "—"]
        for n in refs:
            ref = by_name.get(n)
            if ref is None or not ref.samples or not r.samples:
                cells.append("—")
            elif ref is r:
                cells.append("1")
            else:
                cells.append(f"{r.median / ref.median:.2f}")
        lines.append(cells)
    widths = [max(len(h), *(len(c[i]) for c in lines)) for i, h in enumerate(head)]
    if title:
        print(title, file=file)
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |", file=file)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|", file=file)
    for c in lines:
        print("| " + " | ".join(x.ljust(w) for x, w in zip(c, widths)) + " |", file=file)


def versions():
    """A one-line description of the run: date, machine, versions."""
    import numpy
    parts = [datetime.date.today().isoformat(),
             f"{os.cpu_count()} cores ({platform.machine()})",
             f"Python {platform.python_version()}", f"NumPy {numpy.__version__}"]
    try:
        import numba
        parts.append(f"Numba {numba.__version__}")
    except ImportError:
        parts.append("Numba not installed")
    jax = import_jax()
    parts.append(f"JAX {jax.__version__}" if jax else "JAX not installed (its rows skipped)")
    try:
        import strop
        parts.append(f"strop {strop.__version__}")
    except ImportError:
        pass
    blas = [f"{k}={os.environ[k]}" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                              "MKL_NUM_THREADS", "XLA_FLAGS") if k in os.environ]
    parts.append(" ".join(blas) if blas else "BLAS threads: default")
    return "; ".join(parts)


def load_average():
    try:
        return "load average %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "load average n/a"


_JAX = []


def import_jax(x64=None):
    """The jax module, or None when it is not importable.  ``x64`` sets jax_enable_x64."""
    if not _JAX:
        try:
            import jax
            _JAX.append(jax)
        except ImportError:
            _JAX.append(None)
    jax = _JAX[0]
    if jax is not None and x64 is not None:
        jax.config.update("jax_enable_x64", x64)
    return jax


def strop_jitted(build, call, name, ref=False):
    """A Row for a strop function: ``build()`` makes it, ``call(f)`` runs it once.  The first
    call happens here, with warnings recorded: a JitFallbackWarning makes the row say
    "python (fallback: ...)"; an exception makes an untimed row naming it."""
    import warnings
    from strop.errors import JitFallbackWarning
    try:
        f = build()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = call(f)
    except Exception as e:      # reported in the table, never hidden
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        return Row(name, None, f"ERROR {type(e).__name__}: {msg[:90]}", ref), None, None
    fallback = [w for w in caught if issubclass(w.category, JitFallbackWarning)]
    backend = getattr(f, "last_backend", None) or "?"
    status = backend
    if fallback:
        detail = str(fallback[0].message).split("(", 1)[-1].split(");")[0]
        status = f"{backend} (JitFallbackWarning: {detail[:70]})"
    return Row(name, lambda: call(f), status, ref), f, out


def targets(rows, row, limit, jax_row, limit_ratio=1.2, file=None):
    """Print the issue's two targets for ``row``: its median within ``limit_ratio`` of the
    ``limit`` row's (hand-written Numba), and at most the ``jax_row``'s."""
    file = file or sys.stdout
    by = {r.name: r for r in rows}
    s, nb, jx = by[row], by[limit], by[jax_row]
    print(file=file)
    if not s.samples:
        print(f"{row} not timed: {s.status}", file=file)
        return
    r = s.median / nb.median
    print(f"target {row} <= {limit_ratio}x {limit}: {r:.2f}x -> "
          f"{'MET' if r <= limit_ratio else 'MISSED'}", file=file)
    if jx.samples:
        r = s.median / jx.median
        print(f"target {row} <= {jax_row}: {r:.2f}x -> {'MET' if r <= 1.0 else 'MISSED'}",
              file=file)
    else:
        print(f"target {row} <= JAX: not evaluated ({jx.status})", file=file)
