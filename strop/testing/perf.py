"""The fuzzer's performance oracle: how fast strop's compiled transforms of a generated program
run, against Numba's own compilation of the plain program and against strop's python backend,
timed in one process (``python -m strop.testing.fuzz --perf``).

Only programs ``numba.njit`` compiles as written are timed (each function of the module
decorated, as a Numba user would write it; nothing else changed), and only where njit's answer
is the plain function's.  Every time is warm (each callable is called once first, so compiling
is not counted) and is the median over REPEATS batches of calls, a batch sized to last at least
BATCH_SECONDS; the batches of all the callables of a program are taken in turns, so that a
change in the machine's load falls on all of them alike.  Only ratios are reported, never
times: a ratio is what stays put from one machine to another.

The ratios (BOUNDS: over its bound, a program is an outlier):

- ``jit/njit``: ``strop.jit(f)`` against ``njit(f)``, the same call;
- ``jit_grad/njit``: ``strop.jit(strop.grad(f))`` against njit's forward at the same point:
  reverse mode's cheap-gradient bound (a gradient costs a small multiple of the function),
  with margin;
- ``jit_vmap/njit``: ``strop.jit(strop.vmap(f))`` over the case's batch against njit's forward
  called once per lane (the fair peer: what a Numba user writes for a batch is a loop over
  it); reported, with no bound of its own;
- ``<transform>/python``: each compiled transform against the same transform on the python
  backend (the transformed code run uncompiled): compiled code slower than that is an outlier.

A compiled transform that fell back to the python backend (JitFallbackWarning), that runs a
helper in an object-mode island (PerformanceWarning), that raised, or whose answer is not the
python backend's is counted as that outcome and not timed: its time is not compiled code's.

Generated programs are small, so strop's wrapper (arguments checked and flattened, the cache
looked up, guards on globals checked, results wrapped) can be most of a call.  Each compiled
transform is therefore also timed *without* it: the machine code behind the call, called as
the wrapper calls it (compiled_code), and each ratio is given again as ``code``, that time
over the same peer.  An outlier whose code ratio is within the bound is the wrapper's
("wrapper"); one still over it is the compiled code's ("code").  Outliers are written as
scripts that time them again (script), the first few of each ratio and cause minimized.
"""
import gc
import math
import os
import statistics
import time
import types
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numba
import numpy as np

import strop
from strop.errors import JitFallbackWarning, PerformanceWarning, StropError
from strop.runtime.numba._common import RUNS as SLOW_RUNS
from strop.tree_util import tree_leaves

from . import minimize as _minimize
from .fuzz import Workspace, load_program, plain_problem
from .generate_trees import TreeProgram
from .oracles import OracleTimeout, compare, deadline
from .repro import _namedtuples, literal

BOUNDS = {"jit/njit": 1.5, "jit_grad/njit": 5.0, "jit_vmap/njit": None,
          "jit/python": 1.0, "jit_grad/python": 1.0, "jit_vmap/python": 1.0}
TRANSFORMS = ("jit", "jit_grad", "jit_vmap")
BATCH_SECONDS = 0.004
REPEATS = 7
AGREE = (1e-7, 1e-9)      # rtol, atol: compiled against python backend, njit against Python
RETIMES, NEEDED = 3, 2    # an outlier still, for the minimizer: over its bound in 2 of 3
MARGIN = 1.1              # ... and by this factor, so that shrinking does not end on the edge


# -- timing -----------------------------------------------------------------------------------
def _batch(fn, args, n):
    """Seconds that ``n`` calls of ``fn(*args)`` take, the collector off (as timeit has it:
    a collection started by one callable's garbage would be charged to another)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(n):
            fn(*args)
        return time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()


def calls_per_batch(fn, args, seconds=BATCH_SECONDS):
    """How many calls of ``fn(*args)`` last at least ``seconds``: enough that the timer's
    resolution and the loop's own cost are lost in them."""
    n = 1
    while True:
        took = _batch(fn, args, n)
        if took >= seconds:
            return n
        n = max(2 * n, math.ceil(n * 1.2 * seconds / max(took, 1e-7)))


def per_call(timed, repeats=REPEATS):
    """``{name: seconds per call}`` for ``timed`` (``{name: (fn, args)}``, each called once
    already): the median of ``repeats`` batches, the callables' batches taken in turns."""
    sizes = {name: calls_per_batch(fn, args) for name, (fn, args) in timed.items()}
    samples = defaultdict(list)
    for _ in range(repeats):
        for name, (fn, args) in timed.items():
            samples[name].append(_batch(fn, args, sizes[name]) / sizes[name])
    return {name: statistics.median(s) for name, s in samples.items()}


# -- what is timed ----------------------------------------------------------------------------
def njit_version(f):
    """``f`` compiled by ``numba.njit`` as written: ``f`` and every other plain function of its
    module decorated, rebound in a copy of the module's globals (Numba compiles a helper only
    when it is itself a Numba function)."""
    space = dict(f.__globals__)
    for name, v in list(space.items()):
        if isinstance(v, types.FunctionType) and v.__globals__ is f.__globals__:
            copy = types.FunctionType(v.__code__, space, v.__name__, v.__defaults__,
                                      v.__closure__)
            space[name] = numba.njit(copy)
    return space[f.__name__]


def njit_problem(peer, f, point, timeout):
    """Why ``peer`` (njit_version of ``f``) cannot be the reference at ``point``, or None."""
    try:
        with deadline(timeout), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = peer(*point)
    except OracleTimeout:
        return "njit too slow to compile"
    except Exception:
        return "njit cannot compile"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if compare(got, f(*point), *AGREE):
            return "njit differs from Python"
    return None


@dataclass
class Subject:
    """A transform of ``f`` compiled and on the python backend, and its arguments."""
    name: str
    compiled: object
    python: object
    args: tuple
    code: tuple = None       # (fn, args): the compiled call without strop's wrapper


def subject(name, f, case):
    """The Subject for ``name`` (of TRANSFORMS): the oracles' calls (oracles.ORACLES), argnums
    and in_axes the case's own."""
    if name == "jit":
        inner = f
    elif name == "jit_grad":
        inner = strop.grad(f, argnums=case.argnums)
    else:
        inner = strop.vmap(f, in_axes=case.in_axes)
    return Subject(name, strop.jit(inner), strop.jit(inner, backend="python"),
                   subject_args(name, case))


def subject_args(name, case):
    return case.batched if name == "jit_vmap" else case.points[0]


def compiled_code(t, args):
    """``(fn, args)``: the machine code behind transformed function ``t``'s last call, called
    as strop's wrapper calls it (the arguments flattened to leaves, then the values of the
    globals the code reads), with none of the wrapper.  It reads strop's internals
    (transformed.py, runner.py, codegen/native.py): None where they are not laid out so."""
    try:
        st, kinds = t._cache[t._last_key], t._last_key[0]
        leaves = [x for a, k in zip(args, kinds)
                  for x in (tree_leaves(a) if type(k) is tuple else [a])]
        full = leaves + [v.read() for v in st.fn.free.values()]
        runner = st.runner
        if st.fn.split is not None:    # cut into pieces (a vmap's lanes, a loop's first trip)
            return (lambda *a: st.fn.split(runner, list(a[:len(leaves)]), a[len(leaves):]),
                    tuple(full))
        key = tuple(map(runner._fingerprint, full))
        entry = runner.entries.get(runner._valued(key, full) if runner.literal else key)
        fn = entry or runner
        fn(*full)
        return fn, tuple(full)
    except Exception:
        return None


def transforms(program, case, only=TRANSFORMS):
    """The transforms timed on ``program``, of ``only``: jit; jit_grad where f returns a
    scalar; jit_vmap where the case has a batch."""
    names = ["jit"]
    if program.ret_shape == ():
        names.append("jit_grad")
    if case.lanes:
        names.append("jit_vmap")
    return [n for n in names if n in only]


def warm(s, timeout):
    """Call both of ``s``'s functions (compiling them); how the compiled one ran: "compiled",
    or "fallback", "island" (it runs a helper in object mode: an island, or a trip through
    NumPy), "refused" (a StropError), "crash", "python failed", "wrong" (its answer is not the
    python backend's)."""
    try:
        with deadline(timeout), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = s.compiled(*s.args)
    except OracleTimeout:
        return "crash"
    except StropError:
        return "refused"
    except Exception:
        return "crash"
    try:
        with deadline(timeout), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = s.python(*s.args)
    except (Exception, OracleTimeout):
        return "python failed"
    if any(issubclass(w.category, JitFallbackWarning) for w in caught) \
            or getattr(s.compiled, "last_backend", "cpu") != "cpu":
        return "fallback"
    if any(issubclass(w.category, PerformanceWarning) for w in caught) \
            or runs_python(s.compiled, s.args):
        return "island"
    if compare(got, want, *AGREE):
        return "wrong"
    return "compiled"


def runs_python(fn, args):
    """Whether a call of compiled ``fn`` runs a helper in object mode: the PerformanceWarning
    saying so comes once a process for each helper, the count of such runs
    (runtime/numba/_common.py) moves on every call."""
    before = SLOW_RUNS[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(*args)
    return SLOW_RUNS[0] != before


def lane_loop(peer, lanes):
    """njit's forward once per lane: the peer of jit(vmap(f))."""
    def loop():
        for lane in lanes:
            peer(*lane)
    return loop


def timed_pairs(subjects, peer, case):
    """``{name: (fn, args)}``: each subject compiled and on the python backend, and the njit
    peers they need."""
    timed = {"njit": (peer, case.points[0])}
    for s in subjects:
        timed[s.name] = (s.compiled, s.args)
        timed[f"python {s.name}"] = (s.python, s.args)
        if s.code is not None:
            timed[f"code {s.name}"] = s.code
        if s.name == "jit_vmap":
            timed["njit lanes"] = (lane_loop(peer, case.lanes), ())
    return timed


def ratios(seconds, names):
    """``(ratios, code)`` from per-call ``seconds``: each ratio of BOUNDS whose transform is
    among ``names``, and where the compiled code was timed alone, the same of its time."""
    out, code = {}, {}
    for name in names:
        lanes = "njit lanes" if name == "jit_vmap" else "njit"
        for ratio, peer in ((f"{name}/njit", lanes), (f"{name}/python", f"python {name}")):
            out[ratio] = seconds[name] / seconds[peer]
            if f"code {name}" in seconds:
                code[ratio] = seconds[f"code {name}"] / seconds[peer]
    return out, code


def over(ratio, value, margin=1.0):
    bound = BOUNDS[ratio]
    return bound is not None and value > bound * margin


# -- one program ------------------------------------------------------------------------------
@dataclass
class Measurement:
    outcome: str                                        # "timed", or why not
    transforms: dict = field(default_factory=dict)      # transform -> how it ran (warm)
    ratios: dict = field(default_factory=dict)          # ratio -> value
    code: dict = field(default_factory=dict)            # ratio -> value, the code alone

    @property
    def outliers(self):
        return [r for r, v in self.ratios.items() if over(r, v)]

    def cause(self, ratio):
        """Why ``ratio`` is over its bound: "code" (the compiled code alone is), "wrapper"
        (it is not), or "unknown" (the code could not be timed alone)."""
        if ratio not in self.code:
            return "unknown"
        return "code" if over(ratio, self.code[ratio]) else "wrapper"


def measure(f, program, case, timeout=120, only=TRANSFORMS):
    """Time ``program``'s transforms (its function ``f``, its Case) against njit and the python
    backend: a Measurement.  Where jit(f) itself did not run compiled, its transforms are not
    compiled: they hold f's code, and compiling them is most of the time a program takes."""
    peer = njit_version(f)
    why = njit_problem(peer, f, case.points[0], timeout)
    if why:
        return Measurement(why)
    m = Measurement("timed")
    ready = []
    for name in transforms(program, case, only):
        if name == "jit" or m.transforms.get("jit", "compiled") == "compiled":
            s = subject(name, f, case)
            m.transforms[name] = warm(s, timeout)
            if m.transforms[name] == "compiled":
                s.code = compiled_code(s.compiled, s.args)
                ready.append(s)
        else:   # f's own code in its transforms: they would not be timed either
            m.transforms[name] = "not tried (jit was not)"
    if not ready:
        return Measurement("nothing compiled", m.transforms)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.ratios, m.code = ratios(per_call(timed_pairs(ready, peer, case)),
                                  [s.name for s in ready])
    return m


def retime(ratio, f, case, times=RETIMES, timeout=120, code=False):
    """``ratio`` measured ``times`` times on ``f`` (compiled once): a list of values (with
    ``code``, of the compiled code's alone), or a string saying why it cannot be measured."""
    peer = njit_version(f)
    why = njit_problem(peer, f, case.points[0], timeout)
    if why:
        return why
    s = subject(ratio.split("/")[0], f, case)
    how = warm(s, timeout)
    if how != "compiled":
        return how
    if code:
        s.code = compiled_code(s.compiled, s.args)
        if s.code is None:
            return "the compiled code cannot be called alone"
    timed = timed_pairs([s], peer, case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [ratios(per_call(timed), [s.name])[code][ratio] for _ in range(times)]


# -- wrapper overhead ---------------------------------------------------------------------------
def _identity(x):
    return x


def dispatch_overhead():
    """Seconds per call of a function that returns its argument (a float64 scalar), by njit,
    strop.jit and strop.jit's python backend: what a call costs before any work is done."""
    x = np.float64(0.5)
    timed = {"njit": numba.njit(_identity), "strop.jit": strop.jit(_identity),
             "python backend": strop.jit(_identity, backend="python")}
    for fn in timed.values():
        fn(x)
    return per_call({k: (fn, (x,)) for k, fn in timed.items()})


# -- the run ----------------------------------------------------------------------------------
@dataclass
class Outlier:
    index: int            # the program's
    ratio: str
    value: float
    code: object          # the ratio of the compiled code alone, None where not timed
    cause: str            # Measurement.cause
    path: str = None      # its script


@dataclass
class PerfReport:
    programs: int = 0
    outcomes: Counter = field(default_factory=Counter)     # program -> "timed" or why not
    transforms: dict = field(default_factory=lambda: defaultdict(Counter))
    ratios: dict = field(default_factory=lambda: defaultdict(list))   # ratio -> [(v, index)]
    code: dict = field(default_factory=lambda: defaultdict(list))     # ratio -> [(v, index)]
    outliers: list = field(default_factory=list)           # Outlier
    overhead: dict = field(default_factory=dict)           # dispatch_overhead()
    seconds: float = 0.0

    def add(self, index, m):
        self.outcomes[m.outcome] += 1
        for name, how in m.transforms.items():
            self.transforms[name][how] += 1
        for ratio, v in m.ratios.items():
            self.ratios[ratio].append((v, index))
        for ratio, v in m.code.items():
            self.code[ratio].append((v, index))

    def table(self):
        """Per ratio: count, median, 90th percentile, worst (and its program), bound, how many
        are over it; and of the compiled code alone: median, worst (and its program), over."""
        lines = [f"{'ratio':<16}{'count':>6}{'median':>8}{'p90':>8}{'worst':>8}{'(prog)':>7}"
                 f"{'bound':>6}{'over':>5}  | code alone:{'median':>7}{'worst':>8}"
                 f"{'(prog)':>7}{'over':>5}"]
        for ratio, bound in BOUNDS.items():
            if self.ratios.get(ratio):
                lines.append(self._row(ratio, bound))
        for name in TRANSFORMS:
            if name in self.transforms:
                c = self.transforms[name]
                lines.append(f"{name}: " + ", ".join(f"{n} {k}" for k, n in c.most_common()))
        if self.overhead:
            lines.append("one call of a function returning its argument: " + ", ".join(
                f"{k} {v * 1e6:.2f} us" for k, v in self.overhead.items()))
        causes = Counter((o.ratio, o.cause) for o in self.outliers)
        if causes:
            lines.append("outliers by cause: " + ", ".join(
                f"{r} {c} {n}" for (r, c), n in sorted(causes.items())))
        outcomes = ", ".join(f"{n} {k}" for k, n in self.outcomes.most_common())
        lines.append(f"{self.programs} programs in {self.seconds:.0f} s: {outcomes}")
        return "\n".join(lines)

    def _row(self, ratio, bound):
        values = np.array([v for v, _ in self.ratios[ratio]])
        worst, at = max(self.ratios[ratio])
        n_over = sum(over(ratio, v) for v in values) if bound else "-"
        row = (f"{ratio:<16}{len(values):>6}{np.median(values):>8.2f}"
               f"{np.percentile(values, 90):>8.2f}{worst:>8.2f}{at:>7}{bound or '-':>6}"
               f"{n_over:>5}  | {'':>10}")
        if self.code.get(ratio):
            code = np.array([v for v, _ in self.code[ratio]])
            worst, at = max(self.code[ratio])
            n_code = sum(over(ratio, v) for v in code) if bound else "-"
            row += f"{np.median(code):>7.2f}{worst:>8.2f}{at:>7}{n_code:>5}"
        return row


STOPPED = []    # a reason, once the run is asked to stop (stop)


def stop(signum=None, frame=None):
    """Ask a run to stop after the program it is timing (a signal handler: SIGTERM)."""
    STOPPED.append("stopped by a signal")


def run(n, seed, seconds=None, out="perf-outliers", minimize_seconds=30.0, max_minimized=2,
        timeout=120, log=None, write=True, shapes="all", only=TRANSFORMS):
    """Time ``n`` programs of stream ``seed`` (the fuzzer's programs, fuzz.load_program),
    the transforms of ``only``; returns a PerfReport.  Tree programs that call transforms
    themselves are counted, not timed: njit cannot compile a call of strop's transforms.
    Outliers are written to ``out`` (with ``write``), the first ``max_minimized`` of each
    ratio and cause minimized for ``minimize_seconds``."""
    start = time.monotonic()
    stop_at = start + seconds if seconds else None
    report, seen, space = PerfReport(), Counter(), Workspace()
    if write:
        os.makedirs(out, exist_ok=True)
    try:
        with strop.config.override(enable_x64=True):
            report.overhead = dispatch_overhead()
            STOPPED.clear()
            for index in range(n):
                if stop_at and time.monotonic() > stop_at or STOPPED:
                    break
                report.programs += 1
                program, f, _, case, why = load_program(space, seed, index, shapes)
                if why:
                    report.outcomes[f"skipped: {why}"] += 1
                    continue
                if isinstance(program, TreeProgram) and program.nested:
                    report.outcomes["nested transforms (not timed)"] += 1
                    continue
                m = measure(f, program, case, timeout, only)
                report.add(index, m)
                if log:
                    log(f"program {index}: {m.outcome} {m.transforms} " + " ".join(
                        f"{r}={v:.2f}/{m.code.get(r, math.nan):.2f}"
                        for r, v in m.ratios.items()))
                for ratio in m.outliers:
                    o = Outlier(index, ratio, m.ratios[ratio], m.code.get(ratio),
                                m.cause(ratio))
                    if write:
                        seen[ratio, o.cause] += 1
                        budget = minimize_seconds if seen[ratio, o.cause] <= max_minimized else 0
                        if stop_at:
                            budget = min(budget, max(stop_at - time.monotonic(), 0))
                        o.path = write_outlier(space, program, case, o, out, budget, timeout)
                    report.outliers.append(o)
                    if log:
                        code = "" if o.code is None else f" (code alone {o.code:.2f})"
                        log(f"program {index} {ratio} = {o.value:.2f}{code}: {o.cause} "
                            f"-> {o.path}")
    except KeyboardInterrupt:    # stopped: the programs measured so far are the report
        STOPPED.append("interrupted")
    finally:
        if STOPPED:
            report.outcomes[f"(run {STOPPED[0]})"] += 1
        space.close()
        report.seconds = time.monotonic() - start
    return report


# -- outliers as scripts ------------------------------------------------------------------------
def still_outlier(space, program, case, ratio, code, timeout):
    """The minimizer's predicate: a candidate source whose plain function still runs, that
    njit still compiles, and whose ``ratio`` (of the compiled code alone, with ``code``: an
    outlier of the code's is not shrunk into one of the wrapper's) is over its bound by MARGIN
    in NEEDED of RETIMES measurements."""
    def still(candidate):
        try:
            f, _ = space.load(candidate, f"s{program.seed}_p{program.index}_m", probe=False)
            if plain_problem(f, case):
                return False
            values = retime(ratio, f, case, timeout=timeout, code=code)
        except (Exception, OracleTimeout):
            return False
        return not isinstance(values, str) and \
            sum(over(ratio, v, MARGIN) for v in values) >= NEEDED
    return still


def write_outlier(space, program, case, o, out, seconds, timeout):
    """Outlier ``o`` as a standalone script in ``out`` that times it again, minimized for
    ``seconds`` (a timing predicate is noisy: see still_outlier)."""
    source, note = program.source, " (not minimized)"
    code = o.cause == "code"
    if seconds > 0:
        still = still_outlier(space, program, case, o.ratio, code, timeout)
        source = _minimize.minimize(source, still, seconds)
        f, _ = space.load(source, f"s{program.seed}_p{program.index}_m", probe=False)
        values = retime(o.ratio, f, case, timeout=timeout, code=code)
        now = f"{statistics.median(values):.2f}" if isinstance(values, list) else values
        note = f"; minimized: {'code alone ' if code else ''}{now}"
    name = o.ratio.replace("/", "-over-")
    path = os.path.join(out, f"perf-{name}-{o.cause}-s{program.seed}-p{program.index}.py")
    with open(path, "w") as fh:
        fh.write(script(source, program, case, o, note))
    return path


def script(source, program, case, o, note=""):
    """Python source that times outlier ``o``'s ratio of ``source``'s f again, whole and of
    the compiled code alone, printing both and exiting 1 while two of three (of the code
    alone, for an outlier of the code's) are over the bound."""
    body = "\n".join(line for line in source.splitlines() if line != "import numpy as np")
    values = {"args": case.points[0], "argnums": case.argnums, "in_axes": case.in_axes,
              "lanes": case.lanes, "batched": case.batched}
    classes = _namedtuples(list(values.values()), {})
    if classes:
        body = "\n".join(["from collections import namedtuple"] + [
            f"{k} = namedtuple({k!r}, {list(v)!r})" for k, v in classes.items()
            if f"{k} = " not in body] + [body])
    code = "" if o.code is None else f", the compiled code alone {o.code:.2f}"
    head = (f"strop perf outlier ({o.cause}): {o.ratio} = {o.value:.2f}{code} (bound "
            f"{BOUNDS[o.ratio]}) as generated{note}; seed {program.seed}, program "
            f"{program.index}")
    judged = "code" if o.cause == "code" else "whole"
    return "\n".join([
        f'"""{head}', "",
        "Run: python <this file>; it times the ratio three times, whole and of the compiled code",
        f"alone (perf.compiled_code), and exits 1 while two {judged} values are over the bound.",
        '"""',
        "import numpy as np", "", "import strop",
        "from strop.testing.oracles import Case",
        "from strop.testing.perf import BOUNDS, retime", "",
        body.strip(), "", "",
        *[f"{k} = {literal(v)}" for k, v in values.items()], "",
        'if __name__ == "__main__":',
        '    strop.config.update("enable_x64", True)',
        "    case = Case([args], args, argnums, in_axes, lanes, batched)",
        f"    whole = retime({o.ratio!r}, f, case)",
        f"    code = retime({o.ratio!r}, f, case, code=True)",
        f"    print({o.ratio!r}, 'whole', whole, 'code alone', code, "
        f"'bound', BOUNDS[{o.ratio!r}])",
        f"    raise SystemExit(isinstance({judged}, list) and "
        f"sum(v > BOUNDS[{o.ratio!r}] for v in {judged}) >= 2)",
        "",
    ])
