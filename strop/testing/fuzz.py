"""Differential fuzzing of every transform:

    python -m strop.testing.fuzz --n N --seed S [--seconds T] [--only grad,vmap] [--out DIR]
                                 [--shapes trees|arrays|all] [--jit SHARE] [--perf]

Generates N programs (the same seed gives the same programs): ``--shapes arrays``, scalars
and small arrays (generate.py); ``trees``, the shapes real programs have: pytree parameters
read every way, functions as values, transforms nested inside the function, custom rules,
training loops (generate_trees.py); ``all`` (the default), each program one or the other
by a coin of its own.  Each is written to a real file (strop reads source) and each
transform is checked against its oracle (oracles.py).  Prints a table of outcomes per
transform: ok, wrong (a silent wrong answer: ``mismatch``), crash (an exception that is not
a clean strop error, or a strop error naming no line of the program), refused (a StropError
naming the program's line: ``clean-error``), fallback (JitFallbackWarning) and skipped (no
kink-free point, or the reference itself failed).  Programs whose plain function raises or
gives huge values are skipped and counted (a tree program that raises is first replaced by
another, up to twice).  Compiling is the slow part: the compiled transforms (jit, jit_grad,
jit_vmap) run on every array program and on a share ``--jit`` (default 0.25) of the tree
programs.
Every mismatch and crash is written to DIR as a standalone script, minimized (minimize.py) for
the first few failures of each kind.  Exits 1 when any mismatch or crash happened.

``--perf`` times the programs instead of checking them (perf.py): strop's jit, jit(grad) and
jit(vmap) against Numba's njit of the plain function and against the python backend; prints
the distribution of the ratios and writes each outlier to DIR as a script that times it
again.  ``--only`` picks among jit,jit_grad,jit_vmap there; ``--jit`` does not apply (every
program njit compiles is timed).  Exits 1 when any ratio is over its bound.
"""
import argparse
import importlib.util
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

import strop

import random

from . import generate_trees
from . import minimize as _minimize
from .generate import generate
from .oracles import (FAILURES, KINDS, ORACLES, OracleTimeout, check, cotangent_like,
                      deadline, instrument, leaves, make_case, reference_version, types, Probe)
from .repro import script

TAME = 1e6    # a plain result beyond this is a generator accident, not a test
PLAIN_SECONDS = 10
SHAPES = ("all", "trees", "arrays")
COMPILED = ("jit", "jit_grad", "jit_vmap")
LABELS = {"mismatch": "wrong", "clean-error": "refused"}   # the table's words for KINDS
# not run on tree programs that call transforms themselves (sgd steps, per-example gradients,
# HVPs, training loops): vjp's differences move every argument, vmap_grad transforms a
# transform of transforms; grad and jvp still differentiate through them
NESTED_SKIP = ("vjp", "vmap_grad", "jit_grad")


@dataclass
class Report:
    counts: dict = field(default_factory=lambda: defaultdict(Counter))   # oracle -> kind -> n
    programs: int = 0
    skipped: Counter = field(default_factory=Counter)    # why a whole program was skipped
    failures: list = field(default_factory=list)         # (path, outcome)
    seconds: float = 0.0
    kinds: Counter = field(default_factory=Counter)      # tree programs by shape
    by_shape: dict = field(default_factory=lambda: defaultdict(Counter))  # shape -> kind -> n

    @property
    def failed(self):
        return any(c[k] for c in self.counts.values() for k in FAILURES)

    def table(self):
        width = max(len(n) for n in list(ORACLES) + list(self.by_shape) + ['tree shape'])
        lines = [f"{'transform':<{width}}  "
                 + "  ".join(f"{LABELS.get(k, k):>11}" for k in KINDS)]
        for name in ORACLES:
            if name in self.counts:
                c = self.counts[name]
                lines.append(f"{name:<{width}}  " + "  ".join(f"{c[k]:>11}" for k in KINDS))
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items())) or "none"
        if self.by_shape:
            lines.append(f"{'tree shape':<{width}}  "
                         + "  ".join(f"{LABELS.get(k, k):>11}" for k in KINDS))
            for shape in sorted(self.by_shape):
                c = self.by_shape[shape]
                lines.append(f"{shape:<{width}}  " + "  ".join(f"{c[k]:>11}" for k in KINDS)
                             + f"   ({self.kinds[shape]} programs)")
        lines.append(f"{self.programs} programs ({sum(self.kinds.values())} of them trees) "
                     f"in {self.seconds:.0f} s; programs skipped: {skipped}")
        return "\n".join(lines)


class Workspace:
    """A directory of generated modules, each imported under a name of its own."""

    def __init__(self, root=None):
        self.root = root or tempfile.mkdtemp(prefix="strop-fuzz-")
        self.n = 0

    def load(self, source, stem, probe=True):
        """``(f, probed)``: ``probed`` is oracles.instrument's pair, or with ``probe=False``
        (programs that call strop's transforms themselves: strop reads the file, and an
        instrumented copy is not the code in it) a probe that records nothing."""
        self.n += 1
        name = f"strop_fuzz_{stem}_{self.n}"
        path = os.path.join(self.root, name + ".py")
        with open(path, "w") as fh:
            fh.write(source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        self.namespace = module.__dict__
        with warnings.catch_warnings():   # reductions make odd code: `(0.5 ** 2)[1:]`
            warnings.simplefilter("ignore", SyntaxWarning)
            spec.loader.exec_module(module)
            if not probe:
                blind = Probe()
                return module.f, (blind, blind.wrap(module.f))
            return module.f, instrument(source, path)

    def close(self):
        for name in [m for m in sys.modules if m.startswith("strop_fuzz_")]:
            del sys.modules[name]
        shutil.rmtree(self.root, ignore_errors=True)


def plain_problem(f, case):
    """Why the plain function is no test (it raises, or its values are not tame), or None."""
    try:
        with deadline(PLAIN_SECONDS), warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            values = [f(*p) for p in case.points] + [f(*lane) for lane in case.lanes]
    except OracleTimeout:
        return "plain function too slow"
    except Exception as e:
        return f"plain function raised {type(e).__name__}"
    for v in values:
        for leaf in leaves(v):
            try:
                a = np.asarray(leaf, dtype=np.float64)
            except (TypeError, ValueError):
                return f"plain function returned {type(leaf).__name__}"
            if not np.all(np.isfinite(a)) or np.any(np.abs(a) > TAME):
                return "untame values"
    return None


def applies(oracle, program):
    tree = isinstance(program, generate_trees.TreeProgram)
    if tree and oracle == "hessian":
        return False    # fd_hessian differences one array argument
    if oracle == "nested":
        return tree and program.nested
    if tree and program.nested and oracle in NESTED_SKIP:
        return False    # differences of a function that runs transforms: too slow
    return not ORACLES[oracle].scalar or program.ret_shape == ()


def is_tree(seed, index, shapes):
    """Whether program ``index`` of stream ``seed`` is a tree program (its own coin)."""
    if shapes != "all":
        return shapes == "trees"
    return random.Random(f"strop-fuzz-shape:{seed}:{index}").random() < 0.5


def compiles(seed, index, share):
    """Whether the compiled transforms run on tree program ``index`` (a share of them)."""
    return random.Random(f"strop-fuzz-jit:{seed}:{index}").random() < share


def load_program(space, seed, index, shapes):
    """Program ``index`` of stream ``seed``, loaded: (program, f, probed, case, why), ``why``
    saying why the plain function is no test (None: it is one)."""
    if not is_tree(seed, index, shapes):
        program = generate(seed, index)
        case = make_case(program.arg_shapes, seed, index)
        f, probed = space.load(program.source, f"s{seed}_p{index}")
        why = plain_problem(f, case)
        if not why:
            case.cotangent = cotangent_like(f(*case.points[0]), seed, index)
        return program, f, probed, case, why
    for attempt in range(3):    # the plain run: transforms inside f replaced by oracles
        program = generate_trees.generate(seed, index, attempt)
        f, probed = space.load(program.source, f"s{seed}_t{index}", not program.nested)
        plain = reference_version(f)
        case = generate_trees.make_case(program, space.namespace, plain, seed, index)
        why = plain_problem(plain, case)
        if not why or "raised" not in why:
            break
    return program, f, probed, case, why


def signature(outcome):
    """Failures of one signature are one bug, probably: minimize only the first few."""
    detail = re.sub(r"[-+.\w]*\d[\w.+-]*", "#", outcome.detail)[:60]
    return outcome.oracle, outcome.kind, outcome.error, (detail if outcome.kind == "crash" else "")


def run(n, seed, seconds=None, only=None, out="fuzz-failures", minimize_seconds=30.0,
        max_minimized=2, timeout=120, log=None, write=True, shapes="all", jit_share=0.25):
    """Fuzz ``n`` programs of stream ``seed``; returns a Report.  ``shapes``: "arrays",
    "trees" or "all"; ``jit_share``: the share of tree programs the compiled transforms
    run on."""
    oracles = list(only or ORACLES)
    start = time.monotonic()
    stop_at = start + seconds if seconds else None
    report, seen = Report(), Counter()
    space = Workspace()
    if write:
        os.makedirs(out, exist_ok=True)
    assert not set(oracles) - set(ORACLES), f"unknown transforms {set(oracles) - set(ORACLES)}"
    try:
        with strop.config.override(enable_x64=True):
            for index in range(n):
                if stop_at and time.monotonic() > stop_at:
                    break
                report.programs += 1
                program, f, probed, case, why = load_program(space, seed, index, shapes)
                tree = isinstance(program, generate_trees.TreeProgram)
                if tree:
                    report.kinds[program.kind.split("/")[0]] += 1
                if why:
                    report.skipped[why] += 1
                    continue
                nested_failed = False
                for name in oracles:
                    if nested_failed:
                        break    # f itself fails: no reference for the other transforms
                    if not applies(name, program):
                        continue
                    if tree and name in COMPILED and not compiles(seed, index, jit_share):
                        continue
                    outcome = check(name, f, probed, case, timeout)
                    report.counts[name][outcome.kind] += 1
                    nested_failed = name == "nested" and outcome.kind in ("crash", "clean-error")
                    if tree:
                        report.by_shape[program.kind.split("/")[0]][outcome.kind] += 1
                    if log and outcome.kind != "ok":
                        log(f"program {index}{' ' + program.kind if tree else ''} {name}: "
                            f"{outcome.kind} {outcome.error} {outcome.detail}")
                    if outcome.kind in FAILURES and write:
                        sig = signature(outcome)
                        seen[sig] += 1
                        budget = minimize_seconds if seen[sig] <= max_minimized else 0
                        if stop_at:
                            budget = min(budget, max(stop_at - time.monotonic(), 0))
                        path = _write(space, program, case, outcome, out, budget, timeout)
                        report.failures.append((path, outcome))
                        if log:
                            log(f"  -> {path}")
    finally:
        space.close()
        report.seconds = time.monotonic() - start
    return report


def _write(space, program, case, outcome, out, seconds, timeout):
    """The failure as a standalone script in ``out``, minimized for ``seconds``."""
    source = program.source
    tree = isinstance(program, generate_trees.TreeProgram)
    probe = not (tree and program.nested)
    if seconds > 0:
        _, probed = space.load(source, f"s{program.seed}_p{program.index}_m", probe)
        try:
            with deadline(PLAIN_SECONDS):
                original = types(probed, case)
        except (Exception, OracleTimeout):
            seconds = 0
    if seconds > 0:

        def still_fails(candidate):
            try:
                f, probed = space.load(candidate, f"s{program.seed}_p{program.index}_m", probe)
                if plain_problem(reference_version(f) if tree else f, case):
                    return False
                with deadline(PLAIN_SECONDS):
                    held = types(probed, case)
                if any(len(t) > 1 or original.get(n, t) != t for n, t in held.items()):
                    return False
                again = check(outcome.oracle, f, probed, case, timeout)
            except (Exception, OracleTimeout):
                return False
            return again.kind == outcome.kind and again.error == outcome.error
        source = _minimize.minimize(source, still_fails, seconds)
        f, probed = space.load(source, f"s{program.seed}_p{program.index}_m", probe)
        outcome = check(outcome.oracle, f, probed, case, timeout)   # its detail and point
    note = "" if seconds > 0 else " (not minimized)"
    path = os.path.join(out, f"{outcome.oracle}-{outcome.kind}-s{program.seed}"
                             f"-p{program.index}.py")
    with open(path, "w") as fh:
        fh.write(script(source, outcome, case, program, note))
    return path


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m strop.testing.fuzz", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=100, help="programs to generate")
    p.add_argument("--seed", type=int, default=0, help="the program stream")
    p.add_argument("--seconds", type=float, default=None,
                   help="stop generating programs after this many seconds")
    p.add_argument("--only", default=None,
                   help=f"comma-separated transforms, of: {','.join(ORACLES)}")
    p.add_argument("--out", default="fuzz-failures", help="where failures are written")
    p.add_argument("--minimize-seconds", type=float, default=30.0,
                   help="time to shrink each of the first failures of a kind")
    p.add_argument("--max-minimized", type=int, default=2,
                   help="failures of one kind minimized; later ones are written as they are")
    p.add_argument("--timeout", type=int, default=120, help="seconds one transform may take")
    p.add_argument("--shapes", choices=SHAPES, default="all",
                   help="arrays: scalars and arrays; trees: pytrees, functions as values, "
                        "nested transforms, custom rules, training loops; all: both, mixed")
    p.add_argument("--jit", type=float, default=0.25, dest="jit_share",
                   help="share of tree programs the compiled transforms run on (compiling "
                        "is the slow part)")
    p.add_argument("--perf", action="store_true",
                   help="time the compiled transforms against njit and the python backend "
                        "instead of checking their answers (perf.py)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every outcome not ok")
    a = p.parse_args(argv)
    if a.perf:
        return _perf(a)
    only = a.only.split(",") if a.only else None
    unknown = [o for o in only or () if o not in ORACLES]
    if unknown:
        p.error(f"unknown transform(s) {unknown}; choose from {','.join(ORACLES)}")
    log = (lambda s: print(s, flush=True)) if a.verbose else None
    report = run(a.n, a.seed, a.seconds, only, a.out, a.minimize_seconds, a.max_minimized,
                 a.timeout, log, shapes=a.shapes, jit_share=a.jit_share)
    print(report.table())
    if report.failures:
        print(f"{len(report.failures)} failures written to {a.out}/")
    return 1 if report.failed else 0


def _perf(a):
    from . import perf     # (perf.py reads this module's programs: imported here, not above)
    signal.signal(signal.SIGTERM, perf.stop)     # a stopped run still prints what it timed
    log = (lambda s: print(s, flush=True)) if a.verbose else None
    only = [o for o in a.only.split(",") if o in perf.TRANSFORMS] if a.only else perf.TRANSFORMS
    report = perf.run(a.n, a.seed, a.seconds, a.out, a.minimize_seconds, a.max_minimized,
                      a.timeout, log, shapes=a.shapes, only=only)
    print(report.table())
    if report.outliers:
        print(f"{len(report.outliers)} outliers written to {a.out}/")
    return 1 if report.outliers else 0


if __name__ == "__main__":
    sys.exit(main())
