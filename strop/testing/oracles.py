"""Oracles: each transform of a generated function checked against something that is not the
code under test, and the outcome classified.

An oracle is a pair of expressions (ORACLES): ``subject``, strop's answer, and ``reference``,
the answer it must equal: central finite differences in float64 for derivatives, the plain
function for ``jit``, a Python loop over the batch for ``vmap``.  Both are evaluated in a
namespace holding the function ``f`` and the case (``args``, ``tangents``, ``argnums``,
``in_axes``, ``lanes``, ``batched``), so a failure's standalone script runs exactly the
comparison that failed.

Derivatives are checked only where the function is smooth across the stencil: the reference
is computed with an instrumented copy of the program (``probe``) that records every branch
decision (comparisons, the side ``np.maximum``/``np.minimum`` take); a point where one stencil
evaluation decides differently from another is a kink, and the next candidate point is tried.
"""
import ast
import signal
import warnings
from dataclasses import dataclass

import numpy as np

import strop
from strop.errors import JitFallbackWarning, StropError
from strop.syntax import parse as parse_source

KINDS = ("ok", "mismatch", "crash", "clean-error", "fallback", "skipped")
FAILURES = ("mismatch", "crash")
STEP = 1e-5          # central differences, Richardson-extrapolated (error ~h^4)
HESSIAN_STEP = 1e-3  # second differences, the same


@dataclass(frozen=True)
class Oracle:
    name: str
    subject: str
    reference: str
    rtol: float
    atol: float           # scaled by 1 + max|reference|
    derivative: bool = False   # the reference differences f: needs a point away from kinks
    scalar: bool = False       # only for functions with a scalar output


ORACLES = {o.name: o for o in (
    Oracle("python", 'strop.jit(f, backend="python")(*args)', "f(*args)", 1e-9, 1e-12),
    Oracle("jit", "strop.jit(f)(*args)", "f(*args)", 1e-7, 1e-9),
    Oracle("grad", "strop.grad(f, argnums=argnums)(*args)", "fd_grad(f, args, argnums)",
           1e-5, 1e-5, derivative=True, scalar=True),
    Oracle("jvp", "strop.jvp(f, args, tangents)", "fd_jvp(f, args, tangents)",
           1e-5, 1e-5, derivative=True),
    Oracle("hessian", "strop.hessian(f)(*args)", "fd_hessian(f, args)",
           1e-4, 1e-4, derivative=True, scalar=True),
    Oracle("vmap", "strop.vmap(f, in_axes=in_axes)(*batched)", "loop(f, lanes)", 1e-8, 1e-10),
    Oracle("jit_vmap", "strop.jit(strop.vmap(f, in_axes=in_axes))(*batched)", "loop(f, lanes)",
           1e-7, 1e-9),
    # compiled derivatives against the uncompiled ones (themselves checked by "grad")
    Oracle("jit_grad", "strop.jit(strop.grad(f, argnums=argnums))(*args)",
           "strop.grad(f, argnums=argnums)(*args)", 1e-7, 1e-9, scalar=True),
    Oracle("vmap_grad", "strop.vmap(strop.grad(f, argnums=argnums), in_axes=in_axes)(*batched)",
           "loop(strop.grad(f, argnums=argnums), lanes)", 1e-7, 1e-9, scalar=True),
)}


# -- references -------------------------------------------------------------------------
def _shift(args, k, delta):
    moved = list(args)
    moved[k] = np.asarray(args[k], np.float64) + delta
    return tuple(moved)


def _unit(arg, index, h):
    e = np.zeros(np.shape(arg))
    e[index] = h
    return e


class Unconverged(ArithmeticError):
    """Differences that do not settle as the step shrinks (a steep function): no reference."""


def richardson(estimate, h, rtol=1e-6):
    """A central difference ``estimate(h)`` (error O(h^2)) extrapolated to error O(h^4), leaf
    by leaf, from steps h and h/2, and again from h/2 and h/4: where the two disagree beyond
    ``rtol`` the differences cannot judge a derivative (Unconverged: the check is skipped)."""
    first = estimate(h)
    tree = isinstance(first, tuple)
    e1, e2, e3 = (list(e) if tree else [e] for e in (first, estimate(h / 2), estimate(h / 4)))
    r1, r2 = ([(4 * np.asarray(b) - np.asarray(a)) / 3 for a, b in zip(c, f)]
              for c, f in ((e1, e2), (e2, e3)))
    for a, b in zip(r1, r2):
        scale = 1.0 + (np.max(np.abs(b)) if np.size(b) else 0.0)
        if not np.allclose(a, b, rtol=rtol, atol=rtol * scale, equal_nan=True):
            raise Unconverged(f"central differences do not settle: {np.max(np.abs(a - b)):.3g}")
    return tuple(r2) if tree else r2[0]


def fd_grad(f, args, argnums, h=STEP):
    """The gradient of scalar ``f`` in ``args[argnums]`` by central differences."""
    nums = (argnums,) if isinstance(argnums, int) else argnums

    def estimate(h):
        grads = []
        for k in nums:
            g = np.zeros(np.shape(args[k]))
            for i in np.ndindex(g.shape):
                e = _unit(args[k], i, h)
                g[i] = (float(f(*_shift(args, k, e))) - float(f(*_shift(args, k, -e)))) / (2 * h)
            grads.append(g)
        return grads[0] if isinstance(argnums, int) else tuple(grads)
    return richardson(estimate, h)


def fd_jvp(f, args, tangents, h=STEP):
    """``(f(*args), derivative of f along tangents)`` by central differences."""
    def estimate(h):
        plus = tuple(np.asarray(a, np.float64) + h * np.asarray(t)
                     for a, t in zip(args, tangents))
        minus = tuple(np.asarray(a, np.float64) - h * np.asarray(t)
                      for a, t in zip(args, tangents))
        return (np.asarray(f(*plus), np.float64) - np.asarray(f(*minus), np.float64)) / (2 * h)
    return f(*args), richardson(estimate, h)


def fd_hessian(f, args, h=HESSIAN_STEP):
    """The Hessian of scalar ``f`` in ``args[0]`` by second central differences."""
    shape = np.shape(args[0])
    value = lambda d: float(f(*_shift(args, 0, d)))    # noqa: E731

    def estimate(h):
        out = np.zeros(shape + shape)
        for i in np.ndindex(shape):
            for j in np.ndindex(shape):
                ei, ej = _unit(args[0], i, h), _unit(args[0], j, h)
                out[i + j] = (value(ei + ej) - value(ei - ej) - value(ej - ei)
                              + value(-ei - ej)) / (4 * h * h)
        return out
    return richardson(estimate, h)


def loop(f, lanes):
    """``f`` applied to each lane's arguments, the results stacked (tuples leaf by leaf)."""
    results = [f(*lane) for lane in lanes]
    if isinstance(results[0], tuple):
        return tuple(np.stack([np.asarray(r[k]) for r in results])
                     for k in range(len(results[0])))
    return np.stack([np.asarray(r) for r in results])


def compare(got, want, rtol, atol):
    """None when ``got`` equals ``want`` leaf by leaf within tolerance, else what differs."""
    if isinstance(want, tuple):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return f"structure: got {type(got).__name__} {_short(got)}, want a {len(want)}-tuple"
        for k, (g, w) in enumerate(zip(got, want)):
            bad = compare(g, w, rtol, atol)
            if bad:
                return f"item {k}: {bad}"
        return None
    try:
        g = np.asarray(got, np.float64)
    except (TypeError, ValueError):
        return f"got {type(got).__name__} {_short(got)}"
    w = np.asarray(want, np.float64)
    if g.shape != w.shape:
        return f"shape: got {g.shape}, want {w.shape}"
    scale = 1.0 + (np.max(np.abs(w[np.isfinite(w)])) if np.isfinite(w).any() else 0.0)
    if np.allclose(g, w, rtol=rtol, atol=atol * scale, equal_nan=True):
        return None
    err = np.abs(g - w)
    i = np.unravel_index(np.nanargmax(np.where(np.isnan(err), np.inf, err)), g.shape)
    return f"max |got - want| = {err[i]:.3g} at {i}: got {g[i]!r}, want {w[i]!r}"


def assert_close(got, want, rtol, atol):
    bad = compare(got, want, rtol, atol)
    assert bad is None, bad


def _short(x, n=80):
    text = repr(x)
    return text if len(text) <= n else text[:n] + "..."


# -- branch decisions -------------------------------------------------------------------
class Probe:
    """Records the branch decisions of each call of an instrumented function."""

    def __init__(self):
        self.calls = None    # None: not recording
        self.tie = False     # np.maximum/minimum met a tie between different values
        self.types = {}      # name bound, or "return <function>" -> {(shape, dtype kind)}

    def bind(self, name, value):
        a = np.asarray(value) if not isinstance(value, (list, dict)) else None
        kind = (np.shape(a), a.dtype.kind) if a is not None else type(value).__name__
        self.types.setdefault(name, set()).add(kind)
        return value

    def decide(self, value):
        if self.calls is not None:
            self.calls[-1].append(np.asarray(value).tobytes())
        return value

    def cmp(self, a, op, b):
        return self.decide(_OPS[op](a, b))

    def ext(self, fn, a, b):
        aa, bb = np.asarray(a), np.asarray(b)
        if self.calls is not None and np.any(aa == bb) and np.any(aa != bb):
            self.tie = True
        self.decide(aa >= bb)
        return fn(a, b)

    def wrap(self, f):
        def recorded(*args, **kwargs):
            if self.calls is not None:
                self.calls.append([])
            return f(*args, **kwargs)
        return recorded

    def smooth(self):
        """Whether every call recorded so far took the same decisions."""
        return not self.tie and all(c == self.calls[0] for c in self.calls)


_OPS = {"Gt": lambda a, b: a > b, "Lt": lambda a, b: a < b, "GtE": lambda a, b: a >= b,
        "LtE": lambda a, b: a <= b, "Eq": lambda a, b: a == b, "NotEq": lambda a, b: a != b}


def _probe_call(method, *args):
    return ast.Call(ast.Attribute(ast.Name("_probe", ast.Load()), method, ast.Load()),
                    list(args), [])


class _Instrument(ast.NodeTransformer):
    """Comparisons and np.maximum/minimum through the probe's ``cmp``/``ext``; the values
    bound to plain names and returned through ``bind``."""
    function = "<module>"

    def visit_FunctionDef(self, node):
        outer, self.function = self.function, node.name
        self.generic_visit(node)
        self.function = outer
        node.body[:0] = [ast.Expr(_probe_call("bind", ast.Constant(a.arg),
                                              ast.Name(a.arg, ast.Load())))
                         for a in node.args.args]    # a parameter's own shape counts too
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            node.value = _probe_call("bind", ast.Constant(node.targets[0].id), node.value)
        return node

    def visit_Return(self, node):
        self.generic_visit(node)
        if node.value is not None:
            node.value = _probe_call("bind", ast.Constant(f"return {self.function}"),
                                     node.value)
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        op = type(node.ops[0]).__name__
        if len(node.ops) != 1 or op not in _OPS:
            return node
        return ast.copy_location(
            _probe_call("cmp", node.left, ast.Constant(op), node.comparators[0]), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        fn = node.func
        if (isinstance(fn, ast.Attribute) and fn.attr in ("maximum", "minimum")
                and isinstance(fn.value, ast.Name) and fn.value.id == "np"
                and len(node.args) == 2):
            return ast.copy_location(_probe_call("ext", fn, *node.args), node)
        return node


def instrument(source, filename, name="f"):
    """``(probe, g)``: ``g`` is function ``name`` of ``source`` whose decisions ``probe``
    records."""
    tree = ast.fix_missing_locations(_Instrument().visit(parse_source(source)))
    probe = Probe()
    namespace = {"_probe": probe, "__name__": "strop_fuzz_probe"}
    exec(compile(tree, filename, "exec"), namespace)
    return probe, probe.wrap(namespace[name])


def types(probed, case):
    """What each name of the program holds over the case's points: {name: {(shape, kind)}}.
    The minimizer keeps a reduction only if it changes none (no name, no return, holding a
    value of another shape or type than in the program it reduces)."""
    probe, g = probed
    probe.types = {}
    for point in case.points:
        g(*point)
    return probe.types


# -- cases ------------------------------------------------------------------------------
BATCH = 4   # a size no generated array has, so that a wrong axis shows
POINTS = 6


def make_case(arg_shapes, seed, index):
    """The values program ``index`` of stream ``seed`` is checked on: always the same."""
    rng = np.random.default_rng([seed, index, 0x5eed])
    value = lambda s: np.float64(rng.uniform(-1.2, 1.2)) if s == () else rng.uniform(-1.2, 1.2, s)  # noqa: E731,E501
    points = [tuple(value(s) for s in arg_shapes) for _ in range(POINTS)]
    tangents = tuple(value(s) for s in arg_shapes)
    n = len(arg_shapes)
    argnums = 0 if rng.random() < 0.4 else tuple(sorted(rng.choice(n, rng.integers(1, n + 1),
                                                                   replace=False).tolist()))
    in_axes = tuple(_axis(rng, len(s)) for s in arg_shapes)
    if all(a is None for a in in_axes):
        in_axes = (0,) + in_axes[1:]
    lanes = [tuple(points[0][k] if ax is None else value(s)
                   for k, (s, ax) in enumerate(zip(arg_shapes, in_axes))) for _ in range(BATCH)]
    batched = tuple(points[0][k] if ax is None else np.stack([lane[k] for lane in lanes], ax)
                    for k, ax in enumerate(in_axes))
    return Case(points, tangents, argnums, in_axes, lanes, batched)


def _axis(rng, rank):
    """An in_axes entry for an argument of ``rank``: 0, None, negative or another axis."""
    choices = [0, 0, None, -1] + ([rank, -rank - 1] if rank else [])
    return choices[rng.integers(len(choices))]


# -- running an oracle ------------------------------------------------------------------
@dataclass
class Case:
    """The values an oracle runs on.  ``points``: candidate evaluation points, tried in turn
    by derivative oracles until one is away from kinks."""
    points: list
    tangents: tuple
    argnums: object
    in_axes: tuple
    lanes: list
    batched: tuple

    def namespace(self, f, point):
        return {"strop": strop, "np": np, "f": f, "args": point, "tangents": self.tangents,
                "argnums": self.argnums, "in_axes": self.in_axes, "lanes": self.lanes,
                "batched": self.batched, "fd_grad": fd_grad, "fd_jvp": fd_jvp,
                "fd_hessian": fd_hessian, "loop": loop}


@dataclass
class Outcome:
    oracle: str
    kind: str              # one of KINDS
    detail: str = ""
    error: str = ""        # the exception's type, for crash and clean-error
    point: tuple = None    # the evaluation point used


class OracleTimeout(BaseException):
    """A transform ran past its time (BaseException: no `except Exception` swallows it)."""


def _alarm(signum, frame):
    raise OracleTimeout()


class deadline:
    """Raise OracleTimeout in the block after ``seconds`` (SIGALRM: the main thread only)."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __enter__(self):
        self.old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(self.seconds)

    def __exit__(self, *exc):
        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.old)


def check(oracle, f, probed, case, timeout=120):
    """Run ``oracle`` (a name or an Oracle) on ``f``; ``probed`` is ``instrument``'s pair for
    the same source.  Returns an Outcome."""
    oracle = ORACLES[oracle] if isinstance(oracle, str) else oracle
    probe, g = probed
    try:
        with deadline(timeout):
            want, point = _reference(oracle, f, probe, g, case)
    except OracleTimeout:
        return Outcome(oracle.name, "skipped", f"reference took over {timeout} s")
    except Exception as e:    # the plain function fails here: not strop's fault
        return Outcome(oracle.name, "skipped", f"reference raised {type(e).__name__}: {e}")
    if point is None:
        return Outcome(oracle.name, "skipped", "every candidate point is at a kink")
    ns = case.namespace(f, point)
    try:
        with deadline(timeout), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = eval(oracle.subject, ns)
    except OracleTimeout:
        return Outcome(oracle.name, "crash", f"no answer within {timeout} s", "Timeout", point)
    except StropError as e:
        kind = "clean-error" if e.location is not None else "crash"
        return Outcome(oracle.name, kind, _first(e), type(e).__name__, point)
    except Exception as e:
        return Outcome(oracle.name, "crash", _first(e), type(e).__name__, point)
    bad = compare(got, want, oracle.rtol, oracle.atol)
    if bad:
        return Outcome(oracle.name, "mismatch", bad, "", point)
    fell_back = [w for w in caught if issubclass(w.category, JitFallbackWarning)]
    if fell_back:
        return Outcome(oracle.name, "fallback", _first(fell_back[0].message), "", point)
    return Outcome(oracle.name, "ok", "", "", point)


def _reference(oracle, f, probe, g, case):
    """The reference value and the point it was taken at (None: only kinks)."""
    if not oracle.derivative:
        return eval(oracle.reference, case.namespace(f, case.points[0])), case.points[0]
    for point in case.points:
        probe.calls, probe.tie = [], False
        try:
            want = eval(oracle.reference, case.namespace(g, point))
            g(*point)   # the centre: its decisions are the ones the transform differentiates
            if probe.smooth():
                return want, point
        finally:
            probe.calls = None
    return None, None


def _first(e):
    lines = str(e).strip().splitlines()
    return lines[0][:200] if lines else type(e).__name__
