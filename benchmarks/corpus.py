"""The corpus (tests/corpus/) as a benchmark: for each program, ``jit(grad(loss))`` under strop
and, in the same process, under the original library (the program's twin, made the way
tests/data/corpus/make_corpus_reference.py makes it).

    python benchmarks/corpus.py [name ...] [--repeats R]

One row per program: strop's first call (transform, code generation, Numba compile and the
run; strop's and Numba's caches in a fresh temporary directory, so nothing is reused from an
earlier process), how it ran (``cpu``, or the fallback or error), and its warm median; then
the twin's first call and warm median of ``jax.jit(jax.grad(loss))`` (results waited for with
``block_until_ready``).  For programs whose ORIGIN is autograd the twin column times
``autograd.grad(loss)``, which autograd does not compile.  The twin's columns need jax (and
autograd) importable next to strop: ``--twin-path`` appends a directory (the reference
environment's site-packages) to the END of sys.path, so strop's own NumPy and Numba still
come first::

    .venv/bin/python benchmarks/corpus.py --twin-path /tmp/refenv/lib/python3.11/site-packages

Without them those columns say so.  float64 everywhere (x64 on in both libraries).
"""
import argparse
import importlib.util
import os
import sys
import tempfile
import time

# strop and Numba must find empty caches: set before either is imported.
_CACHE = tempfile.mkdtemp(prefix="strop-corpus-bench-")
os.environ["STROP_CACHE_DIR"] = _CACHE
os.environ["NUMBA_CACHE_DIR"] = os.path.join(_CACHE, "numba")

import _timing  # noqa: E402  (puts this checkout first on sys.path)
from _timing import Row, fmt_time, run_rows  # noqa: E402

REPO = _timing.REPO
CORPUS = os.path.join(REPO, "tests", "corpus")
DATA = os.path.join(REPO, "tests", "data", "corpus")


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def program_names():
    return sorted(f[:-3] for f in os.listdir(CORPUS)
                  if f.endswith(".py") and not f.startswith(("test_", "_")))


def first_line(e):
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"[:80]


def strop_row(name):
    """(Row timing strop's jit(grad(loss)) warm, seconds of its first call or None)."""
    import warnings

    import strop
    from strop.errors import JitFallbackWarning
    try:
        mod = load_module(os.path.join(CORPUS, name + ".py"), f"corpus_{name}")
        params, batch = mod.init()
        f = strop.jit(strop.grad(mod.loss))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = time.perf_counter()
            f(params, *batch)
            first = time.perf_counter() - t
    except Exception as e:  # reported in the table, never hidden
        return Row(name, None, "ERROR " + first_line(e)), None
    fallback = [w for w in caught if issubclass(w.category, JitFallbackWarning)]
    status = getattr(f, "last_backend", None) or "jit"
    if fallback:
        status += " (fallback: " + str(fallback[0].message).split("(", 1)[-1][:60] + ")"
    return Row(name, lambda: f(params, *batch), status), first


def twin_row(name):
    """(Row timing the twin's jit(grad(loss)) (JAX) or grad(loss) (autograd), first call)."""
    maker = load_module(os.path.join(DATA, "make_corpus_reference.py"), "_corpus_reference")
    path = os.path.join(CORPUS, name + ".py")
    origin = maker.origin_of(path)
    try:
        if origin == "jax":
            import jax
            import jax.numpy as jnp
            jax.config.update("jax_enable_x64", True)
            mod = maker.load_twin(path, origin)
            params, batch = jax.tree_util.tree_map(jnp.asarray, mod.init())
            g = jax.jit(jax.grad(mod.loss))
            call = lambda: jax.block_until_ready(g(params, *batch))  # noqa: E731
        else:
            import autograd
            mod = maker.load_twin(path, origin)
            params, batch = mod.init()
            g = autograd.grad(mod.loss)
            call = lambda: g(params, *batch)  # noqa: E731
        t = time.perf_counter()
        call()
        first = time.perf_counter() - t
    except ImportError as e:
        return Row(name, None, f"{origin} not importable ({e.name})"), None
    except Exception as e:
        return Row(name, None, f"{origin} ERROR " + first_line(e)), None
    return Row(name, call, "jax.jit" if origin == "jax" else "autograd"), first


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="programs (default: all of tests/corpus)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--twin-path", help="a directory holding jax/autograd, appended to sys.path")
    args = ap.parse_args(argv)
    if args.twin_path:
        sys.path.append(args.twin_path)
    import strop
    strop.config.update("enable_x64", True)
    strop.config.update("threefry_partitionable", True)  # the twin's (current JAX's) stream
    print(_timing.versions())
    print(_timing.load_average())
    print(f"strop and Numba caches: {_CACHE} (fresh)")
    print()
    names = args.names or program_names()
    head = ["program", "strop first call", "strop warm", "strop ran as",
            "twin first call", "twin warm", "twin", "warm strop/twin"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name in names:
        srow, sfirst = strop_row(name)
        trow, tfirst = twin_row(name)
        run_rows([srow, trow], repeats=args.repeats, warmup=1, min_batch_s=0.02, budget_s=10)
        ratio = (f"{srow.median / trow.median:.2f}"
                 if srow.samples and trow.samples else "—")
        cells = [name, fmt_time(sfirst if sfirst is not None else float("nan")),
                 fmt_time(srow.median), srow.status,
                 fmt_time(tfirst if tfirst is not None else float("nan")),
                 fmt_time(trow.median), trow.status, ratio]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
