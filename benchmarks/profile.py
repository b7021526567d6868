"""Where a compiled gradient spends its time, by function: `perf` over a loop of
`strop.jit(strop.grad(f))` calls of one of new_kinds.py's workloads, with the names of
the JIT's functions (strop's helpers, the generated function, Numba's runtime).

    python benchmarks/profile.py NAME [--seconds S] [--top N]

Needs Linux's `perf`.  perf reads the names of code made at run time from
/tmp/perf-<pid>.map; this script writes that map from every compiled library's functions
after the first call (and compiles into a fresh cache directory: code loaded from a cache
has no module to list).
"""
import argparse
import gc
import os
import subprocess
import sys
import tempfile
import time

import new_kinds
import strop


def _perf_map():
    """Lines of perf's map format, ``start size name``, for every finalized function."""
    from numba.core.codegen import JITCodeLibrary
    from numba.core.registry import cpu_target
    engine = cpu_target.target_context.codegen()._engine._ee
    starts = {}
    for lib in gc.get_objects():
        if isinstance(lib, JITCodeLibrary) and lib._finalized:
            for fn in lib._final_module.functions:
                if not fn.is_declaration:
                    address = engine.get_function_address(fn.name)
                    if address:
                        starts[address] = fn.name
    ordered = sorted(starts.items())
    ends = [a for a, _ in ordered[1:]] + [ordered[-1][0] + 4096]
    return [f"{a:x} {min(end - a, 1 << 20):x} {name}\n"
            for (a, name), end in zip(ordered, ends)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("name", choices=sorted(new_kinds._cases()))
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--top", type=int, default=30)
    opts = parser.parse_args()
    strop.config.update("enable_x64", True)
    strop.config.update("cache_dir", tempfile.mkdtemp())
    f, args = new_kinds._cases()[opts.name]
    g = strop.jit(strop.grad(f))
    g(*args)
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        out.writelines(_perf_map())
    data = tempfile.mktemp(suffix=".perf")
    perf = subprocess.Popen(["perf", "record", "-q", "-p", str(os.getpid()), "-o", data],
                            stderr=subprocess.DEVNULL)
    time.sleep(0.5)     # (perf attaching)
    end = time.time() + opts.seconds
    while time.time() < end:
        g(*args)
    perf.terminate()
    perf.wait()
    report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "sym"],
                            capture_output=True, text=True).stdout
    rows = [line for line in report.splitlines() if "%" in line and not line.startswith("#")]
    print("\n".join(row[:160] for row in rows[:opts.top]))


if __name__ == "__main__":
    sys.exit(main())
