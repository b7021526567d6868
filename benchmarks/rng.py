"""Time strop.random against JAX (CPU, jax.jit, block_until_ready) and NumPy's Generator for
bits, uniform and normal of 10_000_000 float32/uint32 values, in both Threefry streams.

    PYTHONPATH=. python benchmarks/rng.py [--size N] [--repeats R]

Prints medians (ms) after warm-up calls and a pause (see median_ms), and the ratios
strop/JAX and strop/NumPy (lower is better for strop). JAX is optional: without it its
column says "n/a".
"""
import argparse
import os
import platform
import statistics
import time

import numpy as np

import strop.rng as random
from strop.config import config


def median_ms(fn, repeats, settle_s=0.5, warmup=3):
    for _ in range(warmup):   # compiles; starts threads; the first large allocations are slow
        fn()
    # XLA's worker threads keep spinning for a while after a call, taking the cores from
    # whatever runs next (strop's rows ran 2-3x slower right after a JAX row): let them stop
    time.sleep(settle_s)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def jax_timers(size):
    try:
        import jax
        from jax import random as jr
    except ImportError:
        return None, None
    key = jr.PRNGKey(0)
    samplers = {"bits": jr.bits, "uniform": jr.uniform, "normal": jr.normal}

    def timer(name, partitionable):
        jax.config.update("jax_threefry_partitionable", partitionable)
        # a fresh jit per stream: the flag is read at trace time
        fn = jax.jit(lambda k: samplers[name](k, (size,)))
        return lambda: fn(key).block_until_ready()
    return timer, jax.__version__


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    n, reps = args.size, args.repeats
    key = random.PRNGKey(0)
    gen = np.random.default_rng(0)
    numpy_fns = {
        "bits": lambda: gen.integers(0, 2 ** 32, n, dtype=np.uint32),
        "uniform": lambda: gen.random(n, dtype=np.float32),
        "normal": lambda: gen.standard_normal(n, dtype=np.float32),
    }
    strop_fns = {
        "bits": lambda: random.bits(key, (n,)),
        "uniform": lambda: random.uniform(key, (n,)),
        "normal": lambda: random.normal(key, (n,)),
    }
    jax_timer, jax_version = jax_timers(n)
    print(f"n = {n:_}, float32/uint32, median of {reps} after warm-up; cores: {os.cpu_count()}; "
          f"{platform.processor() or platform.machine()}; numpy {np.__version__}; "
          f"jax {jax_version or 'not installed'}")
    header = f"| {'function':8s} | {'stream':13s} | {'strop ms':>9s} | {'JAX ms':>9s} | " \
             f"{'NumPy ms':>9s} | {'strop/JAX':>9s} | {'strop/NumPy':>11s} |"
    print(header)
    print("|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|")
    numpy_ms = {name: median_ms(fn, reps) for name, fn in numpy_fns.items()}
    for name in ("bits", "uniform", "normal"):
        for part in (False, True):
            with config.override(threefry_partitionable=part, enable_x64=False):
                s = median_ms(strop_fns[name], reps)
            j = median_ms(jax_timer(name, part), reps) if jax_timer else float("nan")
            stream = "partitionable" if part else "original"
            print(f"| {name:8s} | {stream:13s} | {s:9.1f} | {j:9.1f} | {numpy_ms[name]:9.1f} | "
                  f"{s / j:9.2f} | {s / numpy_ms[name]:11.2f} |")


if __name__ == "__main__":
    main()
