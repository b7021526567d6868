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
    # the transforms called inside f (grad, vmap, jvp, value_and_grad, vjp) against the same
    # program with oracles in their place (reference_version): for tree programs only
    Oracle("nested", "f(*args)", "reference_version(f)(*args)", 1e-5, 1e-6),
    Oracle("python", 'strop.jit(f, backend="python")(*args)', "f(*args)", 1e-9, 1e-12),
    Oracle("jit", "strop.jit(f)(*args)", "f(*args)", 1e-7, 1e-9),
    Oracle("grad", "strop.grad(f, argnums=argnums)(*args)", "fd_grad(f, args, argnums)",
           1e-5, 1e-5, derivative=True, scalar=True),
    Oracle("jvp", "strop.jvp(f, args, tangents)", "fd_jvp(f, args, tangents)",
           1e-5, 1e-5, derivative=True),
    Oracle("vjp", "(lambda o: (o[0], o[1](cotangent)))(strop.vjp(f, *args))",
           "fd_vjp(f, args, cotangent)", 1e-5, 1e-5, derivative=True),
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


# -- pytrees (the oracles' own: strop's tree_util is code under test) -------------------
def is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def leaves(tree):
    """The leaves of ``tree`` (lists, tuples, namedtuples, dicts in their own order)."""
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in leaves(v)]
    if isinstance(tree, (list, tuple)):
        return [leaf for v in tree for leaf in leaves(v)]
    return [tree]


def tmap(fn, tree, *rest):
    """``fn`` applied leaf by leaf to ``tree`` and trees of the same structure."""
    if isinstance(tree, dict):
        return {k: tmap(fn, v, *(r[k] for r in rest)) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        items = [tmap(fn, *parts) for parts in zip(tree, *rest)]
        if is_namedtuple(tree):
            return type(tree)(*items)
        return type(tree)(items)
    return fn(tree, *rest)


def rebuild(tree, new):
    """``tree`` with its leaves replaced, in order, by ``new``."""
    it = iter(new)
    return tmap(lambda _: next(it), tree)


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
    ``rtol`` the differences cannot judge a derivative (Unconverged: the check is skipped).
    ``estimate`` may return a pytree; the result has its structure."""
    first = estimate(h)
    e1, e2, e3 = (leaves(e) for e in (first, estimate(h / 2), estimate(h / 4)))
    r1, r2 = ([(4 * np.asarray(b) - np.asarray(a)) / 3 for a, b in zip(c, f)]
              for c, f in ((e1, e2), (e2, e3)))
    for a, b in zip(r1, r2):
        scale = 1.0 + (np.max(np.abs(b)) if np.size(b) else 0.0)
        if not np.allclose(a, b, rtol=rtol, atol=rtol * scale, equal_nan=True):
            raise Unconverged(f"central differences do not settle: {np.max(np.abs(a - b)):.3g}")
    return rebuild(first, r2)


def _moved(args, k, j, index, h):
    """``args`` with leaf ``j`` of argument ``k`` moved by ``h`` at ``index`` (float64)."""
    moved = list(args)
    parts = leaves(args[k])
    parts[j] = np.asarray(parts[j], np.float64) + _unit(parts[j], index, h)
    moved[k] = rebuild(args[k], parts)
    return tuple(moved)


def fd_grad(f, args, argnums, h=STEP):
    """The gradient of scalar ``f`` in ``args[argnums]`` by central differences; an argument
    that is a pytree gets a gradient of its structure, leaf by leaf."""
    nums = (argnums,) if isinstance(argnums, int) else argnums

    def estimate(h):
        grads = []
        for k in nums:
            out = []
            for j, leaf in enumerate(leaves(args[k])):
                g = np.zeros(np.shape(leaf))
                for i in np.ndindex(g.shape):
                    g[i] = (float(f(*_moved(args, k, j, i, h)))
                            - float(f(*_moved(args, k, j, i, -h)))) / (2 * h)
                out.append(g)
            grads.append(rebuild(args[k], out))
        return grads[0] if isinstance(argnums, int) else tuple(grads)
    return richardson(estimate, h)


def fd_jvp(f, args, tangents, h=STEP):
    """``(f(*args), derivative of f along tangents)`` by central differences (pytrees leaf by
    leaf)."""
    def along(s):
        return tuple(tmap(lambda a, t: np.asarray(a, np.float64) + s * np.asarray(t), a, t)
                     for a, t in zip(args, tangents))

    def estimate(h):
        return tmap(lambda p, m: (np.asarray(p, np.float64) - np.asarray(m, np.float64))
                    / (2 * h), f(*along(h)), f(*along(-h)))
    return f(*args), richardson(estimate, h)


def fd_vjp(f, args, cotangent, h=STEP):
    """``(f(*args), the cotangent pulled back to every argument)`` by central differences:
    the gradient of the scalar <f(*args), cotangent>."""
    def inner(*a):
        return sum(float(np.sum(np.asarray(y, np.float64) * np.asarray(c)))
                   for y, c in zip(leaves(f(*a)), leaves(cotangent)))
    return f(*args), fd_grad(inner, args, tuple(range(len(args))), h)


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


# -- the transforms a program calls inside itself, as oracles --------------------------
NESTED_STEP = 1e-3   # Richardson makes it accurate; a larger step keeps nested differences sane


def ref_grad(fun, argnums=0, has_aux=False):
    def g(*args):
        if has_aux:
            return fd_grad(lambda *a: fun(*a)[0], args, argnums, NESTED_STEP), fun(*args)[1]
        return fd_grad(fun, args, argnums, NESTED_STEP)
    return g


def ref_value_and_grad(fun, argnums=0, has_aux=False):
    def g(*args):     # with has_aux: ((value, aux), grad), as JAX
        value = (lambda *a: fun(*a)[0]) if has_aux else fun
        return fun(*args), fd_grad(value, args, argnums, NESTED_STEP)
    return g


def ref_jvp(fun, primals, tangents, has_aux=False):
    return fd_jvp(fun, tuple(primals), tuple(tangents), NESTED_STEP)


def ref_vjp(fun, *primals, has_aux=False):
    out = fun(*primals)
    return out, lambda ct: fd_vjp(fun, primals, ct, NESTED_STEP)[1]


def ref_vmap(fun, in_axes=0, out_axes=0, axis_size=None):
    """A Python loop over the batch (in_axes: an int, None, or one entry per argument)."""
    def batched(*args):
        axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
        sizes = [np.shape(leaf)[ax] for a, ax in zip(args, axes) if ax is not None
                 for leaf in leaves(a)]
        n = sizes[0] if sizes else axis_size
        lanes = [tuple(a if ax is None else tmap(lambda x: np.take(x, i, axis=ax), a)
                       for a, ax in zip(args, axes)) for i in range(n)]
        out = loop(fun, lanes)
        return out if out_axes == 0 else tmap(lambda x: np.moveaxis(x, 0, out_axes), out)
    return batched


REFERENCE_TRANSFORMS = {"grad": ref_grad, "value_and_grad": ref_value_and_grad,
                        "jvp": ref_jvp, "vjp": ref_vjp, "vmap": ref_vmap}


def reference_version(f):
    """``f`` with the transforms its module calls (by these names) replaced by oracles: every
    plain function of its module is rebound to a copy of the module's globals."""
    import types as _types
    space = dict(f.__globals__)
    for name, v in list(space.items()):
        if isinstance(v, _types.FunctionType) and v.__globals__ is f.__globals__:
            copy = _types.FunctionType(v.__code__, space, v.__name__, v.__defaults__,
                                       v.__closure__)
            copy.__kwdefaults__ = v.__kwdefaults__
            space[name] = copy
    space.update(REFERENCE_TRANSFORMS)
    space["strop"] = _StropWithReferences()
    return space[f.__name__]


class _StropWithReferences:
    """``strop.grad`` and the like inside a program, as oracles; the rest is strop's."""

    def __getattr__(self, name):
        return REFERENCE_TRANSFORMS.get(name) or getattr(strop, name)


def loop(f, lanes):
    """``f`` applied to each lane's arguments, the results stacked leaf by leaf."""
    results = [f(*lane) for lane in lanes]
    return tmap(lambda *xs: np.stack([np.asarray(x) for x in xs]), *results)


def compare(got, want, rtol, atol):
    """None when ``got`` equals ``want`` leaf by leaf within tolerance, else what differs.
    Containers must match: a dict's keys, a namedtuple's type, a list or tuple's length (a
    list where a tuple is wanted, or back, is a difference too)."""
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return f"structure: got {_kind(got)} {_short(got)}, want a dict of {sorted(want)}"
        for k in want:
            bad = compare(got[k], want[k], rtol, atol)
            if bad:
                return f"item {k!r}: {bad}"
        return None
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return (f"structure: got {_kind(got)} {_short(got)}, "
                    f"want a {len(want)}-{type(want).__name__}")
        if is_namedtuple(want) and type(got).__name__ != type(want).__name__:
            return f"structure: got {_kind(got)}, want a {type(want).__name__}"
        if isinstance(want, list) != isinstance(got, list):
            return f"structure: got a {_kind(got)}, want a {_kind(want)}"
        for k, (g, w) in enumerate(zip(got, want)):
            bad = compare(g, w, rtol, atol)
            if bad:
                return f"item {k}: {bad}"
        return None
    if isinstance(got, (dict, list, tuple)):
        return f"structure: got {_kind(got)} {_short(got)}, want an array"
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


def _kind(x):
    return type(x).__name__


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
        kind = type(value).__name__
        if isinstance(value, (np.ndarray, np.generic, float, int)):
            a = np.asarray(value)
            kind = (np.shape(a), a.dtype.kind)
        elif isinstance(value, tuple) and not is_namedtuple(value):
            kind = ("tuple", tuple(np.shape(v) if isinstance(v, np.ndarray) else type(v).__name__
                                   for v in value))
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


def cotangent_like(out, seed, index):
    """A fixed random cotangent of the structure and shapes of ``out`` (vjp's oracle)."""
    rng = np.random.default_rng([seed, index, 0xc07])
    return tmap(lambda y: np.float64(rng.uniform(-1, 1)) if np.ndim(y) == 0
                else rng.uniform(-1, 1, np.shape(y)), out)


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
    cotangent: object = None   # a pytree like f's output (vjp's oracle), made from f

    def namespace(self, f, point):
        return {"strop": strop, "np": np, "f": f, "args": point, "tangents": self.tangents,
                "argnums": self.argnums, "in_axes": self.in_axes, "lanes": self.lanes,
                "batched": self.batched, "cotangent": self.cotangent, "fd_grad": fd_grad,
                "fd_jvp": fd_jvp, "fd_vjp": fd_vjp, "fd_hessian": fd_hessian, "loop": loop,
                "reference_version": reference_version}


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
        # refused cleanly only when the error names a line of the program, not strop's own
        where = getattr(getattr(e, "location", None), "filename", None)
        user = getattr(getattr(f, "__code__", None), "co_filename", None)
        kind = "clean-error" if where is not None and (user is None or where == user) \
            else "crash"
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
