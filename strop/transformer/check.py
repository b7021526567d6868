"""Purity and immutable-update rules: what a transformed function may not do to the world outside.

A function may change the objects it creates (normalize rewrites those updates into functional
ones) but not its arguments, globals or closure objects, and it may not touch hidden state:
global writes, NumPy's or Python's random state, iterators from outside. ``check`` walks the
function in order, tracking for every local name which outside objects it may be, be a view of,
or hold (so `y = x.T; y[0] = 1` is caught and `x = x.copy(); x[0] = 1` is not), and raises the
first problem in source order.

``check_complex``: under a derivative, complex values made where the code says so (``1j``,
``complex(...)``, complex dtypes, ``np.fft``, complex globals) are refused at their line; the
normalizer calls it (inline.py) for the function and each function it inlines.
"""
import dataclasses
import inspect
import sys

import gast
import numpy as np

from ..errors import (ComplexDerivativeError, ImmutableUpdateError, PurityError,
                      TransformError)
from .check_tables import (AUG_AT, CONTAINER_FUNCTIONS, CONTAINER_METHODS, FRESH,
                           FRESH_ATTRIBUTES, IN_PLACE_FUNCTIONS, MUTATING_METHODS, OPS,
                           PART_FUNCTIONS, PART_METHODS, RNG_FIX, UFUNC_AT, UNKNOWN, Value,
                           _among, _at_fix, _at_update, _copy_fix, _format, _immutable, _merge,
                           _namespace, _root, _scope, _static_attribute, _stateful_rng, _union,
                           src)
from .helper_updates import argument_for, updated_params
from .parse import BUILTIN, CLOSURE, GLOBAL, _params


class _Checker:
    """The problems found in one parsed function, by (line, column)."""

    def __init__(self, parsed, fresh=()):
        self.parsed, self.fresh = parsed, fresh
        self.outside = dataclasses.replace(parsed, local_names=frozenset())  # resolves free names
        self.problems = {}
        self.pending = {}  # id(nested def or lambda) -> (node, enclosing _Function)

    def report(self, error, node, message, fix):
        location = self.parsed.location(node)
        self.problems.setdefault((location.lineno, location.col), error(message, location, fix))

    def run(self):
        _Function(self, self.parsed.node, None, self.fresh)
        while self.pending:  # nested functions, once their enclosing function is fully walked
            _Function(self, *self.pending.pop(next(iter(self.pending))))
        if self.problems:
            raise self.problems[min(self.problems)]


def check(parsed, fresh=()):
    """Raise the first PurityError or ImmutableUpdateError of ``parsed``, in source order;
    ``fresh``: parameters its caller passes objects for that it made and lets it change
    (helper_updates.py)."""
    _Checker(parsed, fresh).run()


def check_complex(parsed):
    """Under a derivative: raise ComplexDerivativeError (a TransformError, and a TypeError as
    in JAX) at the first place ``parsed`` (its nested functions and lambdas included) makes or
    reads a complex value where the code says so: a complex literal (``1j``), a complex
    constructor or dtype (``complex(a, b)``, ``np.complex64``, ``dtype=complex``,
    ``.astype("complex64")``), a function that makes complex values from real ones
    (``np.fft.fft``, ``np.emath.sqrt``, ``cmath.exp``), or a complex global or closure value.
    strop's derivative rules are for real numbers: with a complex intermediate a real
    function's gradient would be silently wrong (a wrong sign, a lost imaginary part).
    ``np.real``, ``np.imag``, ``np.conj`` and ``np.angle`` of real values are right, and stay.
    Complex values that arrive as arguments are caught where their cotangent meets a real
    value (runtime/base.py)."""
    counts = _point_counts(parsed)
    for node in gast.walk(parsed.node):
        if id(node) in counts:
            continue
        what = _complex_source(parsed, node)
        if what is not None:
            raise ComplexDerivativeError(
                f"complex numbers are not supported under differentiation yet: {what} makes a "
                f"complex value here, and strop's derivative rules are for real numbers (the "
                f"derivative would be silently wrong)", parsed.location(node), COMPLEX_FIX)


def _point_counts(parsed):
    """ids of the complex literals NumPy's index tricks read as a count of points, not a
    complex value: the step of a slice in ``np.r_[0:1:5j]``, ``np.mgrid``, ``np.ogrid``."""
    tricks = tuple(getattr(np, n) for n in ("r_", "c_", "mgrid", "ogrid"))
    out = set()
    for node in gast.walk(parsed.node):
        if isinstance(node, gast.Subscript) and any(
                _outside(parsed, node.value) is t for t in tricks):
            out.update(id(n.step) for n in gast.walk(node.slice)
                       if isinstance(n, gast.Slice) and n.step is not None)
    return out


COMPLEX_FIX = ("keep the real and imaginary parts as separate real values (|x + iy|^2 is "
               "x**2 + y**2; exp(i t) is cos(t) and sin(t)), or compute the complex part outside "
               "the differentiated function; jit and vmap run complex code as it is")


def _complex_source(parsed, node):
    """What in ``node`` makes or reads a complex value (its source, for the message), or None."""
    if isinstance(node, gast.Constant) and isinstance(node.value, complex):
        return f"the literal `{src(node)}`"
    if isinstance(node, (gast.Name, gast.Attribute)) and isinstance(node.ctx, gast.Load):
        value = _outside(parsed, node)
        if _complex_data(value):
            return f"`{src(node)}` (a complex {type(value).__name__} defined outside)"
        return None
    if not isinstance(node, gast.Call):
        return None
    callee = _outside(parsed, node.func)
    if _makes_complex(callee):
        return f"`{src(node.func)}(...)`"
    dtypes = [k.value for k in node.keywords if k.arg == "dtype"]
    if isinstance(node.func, gast.Attribute) and node.func.attr in ("astype", "view") \
            and callee is UNKNOWN:
        dtypes += node.args[:1]
    elif _numpy_function(callee) and not _among(callee, DTYPE_QUERIES):
        dtypes += [a for a in node.args if isinstance(_outside(parsed, a), type)]
    for d in dtypes:
        spec = d.value if isinstance(d, gast.Constant) else _outside(parsed, d)
        if spec is not UNKNOWN and _complex_dtype(spec):
            return f"the dtype `{src(d)}`"
    return None


def _outside(parsed, node):
    """The object the name or attribute chain ``node`` refers to where it is not the
    function's own (a global, closure variable, builtin or module attribute), else UNKNOWN."""
    if isinstance(node, gast.Name):
        if node.id in parsed.local_names:
            return UNKNOWN
        kind, obj = parsed.resolve(node.id)
        return obj if kind in (GLOBAL, CLOSURE, BUILTIN) else UNKNOWN
    if isinstance(node, gast.Attribute):
        obj = _outside(parsed, node.value)
        return UNKNOWN if obj is UNKNOWN else _static_attribute(obj, node.attr)
    return UNKNOWN


_COMPLEX_TYPES = {complex, np.complex64, np.complex128, np.clongdouble}
_FFT_REAL = {"fftshift", "ifftshift", "fftfreq", "rfftfreq"}   # real in, real out
_EMATH = {getattr(np.emath, n) for n in dir(np.emath) if callable(getattr(np.emath, n))
          and not n.startswith("_")}
DTYPE_QUERIES = {np.dtype, np.issubdtype, np.can_cast, np.result_type, np.promote_types,
                 np.finfo, np.iinfo, np.isdtype} if hasattr(np, "isdtype") else {
    np.dtype, np.issubdtype, np.can_cast, np.result_type, np.promote_types, np.finfo, np.iinfo}


def _makes_complex(obj):
    if obj is UNKNOWN or not callable(obj):
        return False
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", "")
    return (_among(obj, _COMPLEX_TYPES) or _among(obj, _EMATH) or module == "cmath"
            or module.startswith("numpy.fft") and name not in _FFT_REAL)


def _numpy_function(obj):
    module = getattr(obj, "__module__", None) or ""
    return obj is not UNKNOWN and callable(obj) and module.startswith("numpy")


def _complex_dtype(spec):
    if isinstance(spec, (bool, int, float)) or spec is None:
        return False
    try:
        return np.dtype(spec).kind == "c"
    except (TypeError, ValueError):
        return False


def _complex_data(value):
    """A complex number or array (what a global or closure variable may hold)."""
    if value is UNKNOWN or isinstance(value, type):
        return False
    return isinstance(value, (complex, np.complexfloating)) or (
        isinstance(value, np.ndarray) and value.dtype.kind == "c")


class _Function:
    """One function body, walked statement by statement. ``env`` maps the local names bound so
    far to their Value; ``seen`` to every Value they ever had (what nested functions see)."""

    def __init__(self, checker, node, enclosing, fresh=()):
        self.checker, self.enclosing = checker, enclosing
        self.names, self.declared = _scope(node)
        self.env = {p.id: _root("local", f"{p.id}:parameter") if p.id in fresh else
                    _root("argument", p.id) for p in _params(node.args)}
        for star in (node.args.vararg, node.args.kwarg):  # a new tuple or dict on every call
            if star is not None:
                self.env[star.id] = self.env[star.id].holding()
        self.seen = dict(self.env)
        self.imports = {}  # local name -> module or object bound by an import statement
        self.loops = []    # (break states, continue states) of the loops being walked
        if isinstance(node.body, list):
            self.body(node.body)
        else:  # a lambda
            self.value(node.body)

    def report(self, error, node, message, fix):
        self.checker.report(error, node, message, fix)

    # -- names ---------------------------------------------------------------------------------
    def lookup(self, name):
        """(Value, static object or UNKNOWN) of a name read here."""
        if name in self.env:
            return self.env[name], self.imports.get(name, UNKNOWN)
        fn = self
        while fn is not None and fn.declared.get(name) != "global":
            if name in fn.names:
                return (FRESH if fn is self else fn.seen.get(name, FRESH)), UNKNOWN
            fn = fn.enclosing
        kind, obj = self.checker.outside.resolve(name)
        if kind in (GLOBAL, CLOSURE) and not _immutable(obj):
            return _root("global" if kind == GLOBAL else "closure variable", name), obj
        return FRESH, obj if kind in (GLOBAL, CLOSURE, BUILTIN) else UNKNOWN

    def static(self, node):
        """The object an expression such as `np.random.normal` refers to, or UNKNOWN."""
        if isinstance(node, gast.Name):
            return self.lookup(node.id)[1]
        if isinstance(node, gast.Attribute):
            obj = self.static(node.value)
            return UNKNOWN if obj is UNKNOWN else _static_attribute(obj, node.attr)
        return UNKNOWN

    def write(self, node, value):
        """Bind a local name; a name declared global or nonlocal is a write to outside state."""
        kind = self.declared.get(node.id)
        if kind:
            what = "global" if kind == "global" else "closure"
            self.report(PurityError, node,
                        f"`{node.id}` is declared `{kind}` and assigned here: the function "
                        f"changes the {what} variable `{node.id}`, so it is not pure",
                        f"return the new value of `{node.id}` instead, and assign it where the "
                        f"function is called")
            return
        if not value.same:   # a new object: named after where it was made, to spot aliases
            root = ("local", f"{node.id}:{getattr(node, 'lineno', 0)}")
            value = Value(frozenset([root]), value.inner | {root}, value.items, value.each)
        self.env[node.id] = value
        self.seen[node.id] = self.seen[node.id] | value if node.id in self.seen else value

    def bind(self, target, value, source=None):
        """Assign ``value`` (of the expression ``source``, when known) to a target; items and
        attributes are changes of their object."""
        if isinstance(target, gast.Name):
            self.write(target, value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            items = value.items if value.items and len(value.items) == len(target.elts) else None
            for k, elt in enumerate(target.elts):
                starred = isinstance(elt, gast.Starred)
                part = value.holding() if starred else items[k] if items else value.element()
                self.bind(elt.value if starred else elt, part)
        elif isinstance(target, gast.Subscript):
            obj = self.value(target.value)
            self.value(target.slice)
            self.changed(obj, target.value, target, f"item assignment `{src(target)} = ...`",
                         _at_fix(target, "set", src(source) if source else "v"))
        elif isinstance(target, gast.Attribute):
            self.changed(self.value(target.value), target.value, target,
                         f"attribute assignment `{src(target)} = ...`", _copy_fix(target, "set"))
        elif isinstance(target, gast.Starred):
            self.bind(target.value, value.holding())

    def changed(self, value, obj, node, action, fix):
        """Report the in-place change ``action`` of the expression ``obj`` if it may be outside,
        or if it is a local object that another name also refers to."""
        base = obj
        while isinstance(base, (gast.Subscript, gast.Attribute)):
            base = base.value
        outside = {r for r in value.same if r[0] != "local"}
        if not outside:
            return self.changed_local(value, base, node, action)
        kind, root = min(outside)
        named = isinstance(base, gast.Name) and base.id == root
        via = "" if named else f" (`{src(obj)}` is `{root}` or part of it)"
        self.report(ImmutableUpdateError, node,
                    f"{action} changes {kind} `{root}` in place{via}; a transformed function "
                    f"may change only the objects it creates", fix)

    def changed_local(self, value, base, node, action):
        """strop turns in-place updates of local objects into updates of copies: right unless
        the object has two names (``z = y`` or a view ``z = y[0]``), where the other name
        would not see the change."""
        name = base.id if isinstance(base, gast.Name) else None
        for root in sorted(r for r in value.same if r[0] == "local"):
            owner = root[1].split(":")[0]
            others = sorted(m for m, v in self.env.items() if m != name and root in v.same)
            if name != owner or others:
                other = owner if name != owner else others[0]
                self.report(TransformError, node,
                            f"{action} changes an object that `{name or src(base)}` and "
                            f"`{other}` both refer to; strop rewrites in-place updates of local "
                            f"objects into updates of a copy, so `{other}` would not see it",
                            f"update one name only, or make an explicit copy where the second "
                            f"name is made (`{name or other} = {other}.copy()`)")

    # -- statements ----------------------------------------------------------------------------
    def body(self, stmts):
        for stmt in stmts:
            getattr(self, "s_" + type(stmt).__name__, self.s_other)(stmt)

    def s_other(self, node):  # Return, Expr, Raise, Assert, Pass, ...: their expressions only
        self.value_children(node)

    def s_Assign(self, node):
        value = self.value(node.value)
        for target in node.targets:
            self.bind(target, value, node.value)

    def s_AnnAssign(self, node):
        if node.value is not None:
            self.bind(node.target, self.value(node.value), node.value)

    def s_AugAssign(self, node):
        target, op = node.target, OPS.get(type(node.op), "?")
        v = src(node.value)
        self.value(node.value)
        if isinstance(target, gast.Name):
            if target.id in self.declared:
                return self.write(target, FRESH)
            x = target.id
            self.changed(self.lookup(x)[0], target, target,
                         f"`{x} {op}= ...` (NumPy's `{op}=` writes into the array)",
                         f"`{x} = {x} {op} {v}`")
        elif isinstance(target, gast.Subscript):
            self.changed(self.value(target.value), target.value, target,
                         f"`{src(target)} {op}= ...`",
                         _at_fix(target, AUG_AT[type(node.op)], v) if type(node.op) in AUG_AT
                         else _at_fix(target, "set", f"{src(target)} {op} {v}"))
        else:
            self.bind(target, FRESH)

    def s_Delete(self, node):
        for target in node.targets:
            if isinstance(target, gast.Name):
                self.write(target, FRESH)
                self.env.pop(target.id, None)
            elif isinstance(target, gast.Attribute):
                self.changed(self.value(target.value), target.value, target,
                             f"`del {src(target)}`", _copy_fix(target, "delete"))
            else:
                obj, x = self.value(target.value), src(target.value)
                self.value(target.slice)
                self.changed(obj, target.value, target, f"`del {src(target)}`",
                             f"`{x} = np.delete({x}, {src(target.slice)})` for an array; a list "
                             f"or dict: make a copy first, `{x} = list({x})` or `dict({x})`")

    def s_If(self, node):
        self.value(node.test)
        self.branches(lambda: self.body(node.body), lambda: self.body(node.orelse))

    def branches(self, *walks):
        """Walk alternatives from the current state; after them a name may hold any outcome."""
        start, ends = self.env, []
        for walk in walks:
            self.env = dict(start)
            walk()
            ends.append(self.env)
        self.env = _merge(ends)

    def loop(self, enter, body, orelse):
        """Walk a loop until what its names may share stops growing (a finite, monotone lattice)."""
        start = head = self.env
        while True:
            self.env = dict(head)
            self.loops.append(([], []))
            enter()
            self.body(body)
            breaks, continues = self.loops.pop()
            new_head = _merge([start, self.env] + continues)
            if new_head == head:
                break
            head = new_head
        self.env = dict(head)
        self.body(orelse)
        self.env = _merge([self.env] + breaks)

    def s_For(self, node):
        items = self.value(node.iter)
        self.loop(lambda: self.bind(node.target, items.element()), node.body, node.orelse)

    s_AsyncFor = s_For

    def s_While(self, node):
        self.loop(lambda: self.value(node.test), node.body, node.orelse)

    def s_Break(self, node):
        self.loops[-1][0].append(dict(self.env))

    def s_Continue(self, node):
        self.loops[-1][1].append(dict(self.env))

    def s_With(self, node):
        for item in node.items:
            value = self.value(item.context_expr)
            if item.optional_vars is not None:
                self.bind(item.optional_vars, value)
        self.body(node.body)

    s_AsyncWith = s_With

    def s_Try(self, node):
        states = [dict(self.env)]  # a handler is entered between any two statements of the body
        for stmt in node.body:
            self.body([stmt])
            states.append(dict(self.env))
        walks = [lambda: self.body(node.orelse)]
        for handler in node.handlers:
            def walk(h=handler):
                self.env = _merge(states)
                if h.type is not None:
                    self.value(h.type)
                if h.name is not None:
                    self.bind(h.name, FRESH)
                self.body(h.body)
            walks.append(walk)
        self.branches(*walks)
        self.body(node.finalbody)

    s_TryStar = s_Try

    def s_Match(self, node):
        subject = self.value(node.subject)

        def case(c):
            for n in gast.walk(c.pattern):
                for name in [getattr(n, "name", None), getattr(n, "rest", None)]:
                    if isinstance(name, str):
                        self.env[name] = subject.part()
            if c.guard is not None:
                self.value(c.guard)
            self.body(c.body)
        self.branches(*[lambda c=c: case(c) for c in node.cases], lambda: None)

    def define(self, node, exprs):
        """A nested def, lambda or class: its decorators and defaults are evaluated here, the
        body of a function is checked once this function is walked (classes are left alone)."""
        for expr in exprs:
            if expr is not None:
                self.value(expr)
        if not isinstance(node, gast.ClassDef):
            self.checker.pending[id(node)] = (node, self)
        if not isinstance(node, gast.Lambda):
            self.write(gast.copy_location(gast.Name(node.name, gast.Store(), None, None), node),
                       FRESH)
        return FRESH

    def s_FunctionDef(self, node):
        self.define(node, node.decorator_list + node.args.defaults + node.args.kw_defaults)

    s_AsyncFunctionDef = s_FunctionDef

    def s_ClassDef(self, node):
        self.define(node, node.decorator_list + node.bases)

    def s_Import(self, node):
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]
            self.imports[name] = sys.modules.get(alias.name if alias.asname else name, UNKNOWN)
            self.env[name] = FRESH

    def s_ImportFrom(self, node):
        module = sys.modules.get(node.module) if node.level == 0 and node.module else None
        for alias in node.names:
            name = alias.asname or alias.name
            self.imports[name] = UNKNOWN if module is None else sys.modules.get(
                f"{node.module}.{alias.name}", getattr(module, alias.name, UNKNOWN))
            self.env[name] = FRESH

    # -- expressions ---------------------------------------------------------------------------
    def value(self, node):
        """The Value of an expression; reports the problems of the calls in it on the way."""
        return getattr(self, "e_" + type(node).__name__, self.value_children)(node)

    def value_children(self, node):  # BinOp, Compare, Constant, ...: a new value
        for child in gast.iter_child_nodes(node):
            if isinstance(child, gast.expr):
                self.value(child)
            elif isinstance(child, gast.keyword):
                self.value(child.value)
        return FRESH

    def e_Name(self, node):
        return self.lookup(node.id)[0]

    def e_Attribute(self, node):
        value = self.value(node.value)
        return FRESH if node.attr in FRESH_ATTRIBUTES else value.part()

    def e_Subscript(self, node):
        value = self.value(node.value)
        self.value(node.slice)
        return value.part()

    def e_Starred(self, node):
        return self.value(node.value)

    def e_NamedExpr(self, node):
        value = self.value(node.value)
        self.bind(node.target, value)
        return value

    def e_BoolOp(self, node):  # `a or b` is one of them
        return _union(self.value(v) for v in node.values)

    def e_IfExp(self, node):
        self.value(node.test)
        return self.value(node.body) | self.value(node.orelse)

    def e_Tuple(self, node):
        items = [self.value(e) for e in node.elts]
        starred = any(isinstance(e, gast.Starred) for e in node.elts)
        return _union(items).holding()._replace(items=None if starred else tuple(items))

    e_List = e_Tuple

    def e_Set(self, node):
        return _union(self.value(e) for e in node.elts).holding()

    def e_Dict(self, node):
        return _union(self.value(e) for e in node.keys + node.values if e is not None).holding()

    def e_Lambda(self, node):
        return self.define(node, node.args.defaults + node.args.kw_defaults)

    def comprehension(self, node, *parts):
        """A comprehension builds a new container; its elements may be what ``parts`` are."""
        saved, self.env = self.env, dict(self.env)
        for gen in node.generators:
            self.bind(gen.target, self.value(gen.iter).element())
            for cond in gen.ifs:
                self.value(cond)
        values = [self.value(p) for p in parts]
        self.env = saved
        return _union(values).holding()._replace(each=values[0])

    def e_ListComp(self, node):
        return self.comprehension(node, node.elt)

    e_SetComp = e_GeneratorExp = e_ListComp

    def e_DictComp(self, node):
        return self.comprehension(node, node.key, node.value)

    def e_Call(self, node):
        func = node.func
        method = func.attr if isinstance(func, gast.Attribute) else None
        receiver = self.value(func.value if method else func)
        args = [self.value(a) for a in node.args]
        keywords = {k.arg: k.value for k in node.keywords}
        for k in node.keywords:
            self.value(k.value)
        callee = self.static(func)
        if method and (_namespace(self.static(func.value)) or _at_update(func.value)):
            method = None  # `np.sort(x)`, `x.at[i].add(v)`: functions, judged by what they are
        self.out_keyword(node, keywords.get("out"))
        self.hidden_state(node, callee, method, receiver, args)
        self.in_place(node, callee, method, receiver, args)
        if not method:
            self.passed_to_update(node, callee)
        parts = _union(args + ([receiver] if method else []))
        copy_kw = keywords.get("copy")
        if (_among(callee, PART_FUNCTIONS) or method in PART_METHODS
                or isinstance(copy_kw, gast.Constant) and copy_kw.value in (False, None)):
            return parts.part()
        if callee is zip:
            return parts.holding()._replace(each=Value(items=tuple(a.part() for a in args)))
        if callee is enumerate and args:
            return parts.holding()._replace(each=Value(items=(FRESH, args[0].part())))
        if _among(callee, CONTAINER_FUNCTIONS) or method in CONTAINER_METHODS:
            return parts.holding()
        return FRESH

    def out_keyword(self, node, out):
        """`out=` writes into an array, local or not; `out=None` and `out=...` write nowhere."""
        if out is None or isinstance(out, gast.Constant) and out.value in (None, Ellipsis):
            return
        rest = gast.Call(node.func, node.args, [k for k in node.keywords if k.arg != "out"])
        self.report(ImmutableUpdateError, node,
                    f"`{src(node.func)}(..., out={src(out)})` writes its result into an existing "
                    f"array; strop cannot differentiate through `out=`",
                    f"assign the result instead: `{src(out)} = {src(rest)}`")

    def hidden_state(self, node, callee, method, receiver, args):
        """Stateful random numbers, and iterators from outside advanced by `next`."""
        name = src(node.func)
        if _stateful_rng(callee):
            self.report(PurityError, node,
                        f"`{name}(...)` draws from a hidden, stateful random number generator; "
                        f"a transformed function must be pure", RNG_FIX)
        iterator = (args[0] if callee is next and args
                    else receiver if method == "__next__" else FRESH)
        outside = sorted(r for r in iterator.same if r[0] != "local")
        if outside:
            kind, root = outside[0]
            self.report(PurityError, node,
                        f"`{name}(...)` advances an iterator that was not created in the "
                        f"function ({kind} `{root}`): the function would change it, and give "
                        f"other results on every call",
                        "pass the values in as an array or a list, or create the iterator "
                        "inside the function (`it = iter(values)`)")

    def passed_to_update(self, node, callee):
        """A helper of the user's that changes a parameter in place changes what this call
        passes for it (helper_updates.py): allowed for an object made here that no other name
        sees, as a change written here would be."""
        if not inspect.isfunction(callee):
            return
        for p, arg in argument_for(node, callee, updated_params(callee)).items():
            value = self.value(arg)
            action = f"`{src(node)}` (`{callee.__name__}` changes its parameter `{p}` in place)"
            fix = (f"pass a copy (`{src(arg)}.copy()`), or make `{callee.__name__}` return the "
                   f"new value of `{p}` instead of changing it")
            outside = sorted(r for r in value.inner if r[0] != "local")
            if outside:
                kind, root = outside[0]
                self.report(ImmutableUpdateError, node,
                            f"{action} changes {kind} `{root}` in place; a transformed function "
                            f"may change only the objects it creates", fix)
            elif not isinstance(arg, gast.Name) and value.same:
                base = arg
                while isinstance(base, (gast.Subscript, gast.Attribute)):
                    base = base.value
                self.report(TransformError, node,
                            f"{action} changes `{src(arg)}`, a part of `{src(base)}`: strop "
                            f"turns in-place updates into new values and cannot write this one "
                            f"back into `{src(base)}`", fix)
            else:
                self.changed(value, arg, node, action, fix)

    def in_place(self, node, callee, method, receiver, args):
        """Methods and functions that change their receiver or first argument."""
        name, sources = src(node.func), [src(a) for a in node.args]
        if method in MUTATING_METHODS:
            x = src(node.func.value)
            self.changed(receiver, node.func.value, node, f"`{name}(...)`",
                         f"make a copy first: `{x} = {MUTATING_METHODS[method].format(x=x)}`, "
                         f"then change the copy")
        elif _among(callee, IN_PLACE_FUNCTIONS) and args:
            self.changed(args[0], node.args[0], node, f"`{name}(...)`",
                         _format(IN_PLACE_FUNCTIONS[callee], sources))
        elif (isinstance(getattr(callee, "__self__", None), np.ufunc)
              and getattr(callee, "__name__", "") == "at" and args):
            ufunc = callee.__self__.__name__
            update = UFUNC_AT.get(ufunc, f"set(np.{ufunc}({{0}}[{{1}}], {{2}}))")
            self.changed(args[0], node.args[0], node, f"`{name}(...)`",
                         _format(f"`{{0}} = {{0}}.at[{{1}}].{update}`", sources))
