"""Purity and immutable-update rules: what a transformed function may not do to the world outside.

A function may change the objects it creates (normalize rewrites those updates into functional
ones) but not its arguments, globals or closure objects, and it may not touch hidden state:
global writes, NumPy's or Python's random state, iterators from outside. ``check`` walks the
function in order, tracking for every local name which outside objects it may be, be a view of,
or hold (so `y = x.T; y[0] = 1` is caught and `x = x.copy(); x[0] = 1` is not), and raises the
first problem in source order.
"""
import copy
import dataclasses
import inspect
import operator
import random
import sys
import types
from typing import NamedTuple, Optional

import gast
import numpy as np

from ..errors import ImmutableUpdateError, PurityError, TransformError
from .parse import BUILTIN, CLOSURE, GLOBAL, _params

UNKNOWN = object()  # a callee or receiver that cannot be known before the function runs

# Receiver methods that change the receiver -> the copy to make first (the fix).
_LIST, _DICT, _SET, _ANY = "list({x})", "dict({x})", "set({x})", "{x}.copy()"
MUTATING_METHODS = {
    **dict.fromkeys(["append", "extend", "insert", "remove", "reverse"], _LIST),
    **dict.fromkeys(["update", "setdefault", "popitem"], _DICT),
    **dict.fromkeys(["add", "discard", "difference_update", "intersection_update",
                     "symmetric_difference_update"], _SET),
    **dict.fromkeys(["pop", "clear", "sort", "fill", "resize", "put", "itemset", "setflags",
                     "partition", "setfield", "appendleft", "extendleft", "popleft", "rotate",
                     "__setitem__", "__delitem__", "__setattr__", "__iadd__", "__isub__",
                     "__imul__", "__imatmul__", "__itruediv__", "__ifloordiv__", "__imod__",
                     "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
                     "__irshift__"], _ANY),
}

# Functions that write into their first argument -> the same result as a new value; {0}, {1}...
# are the sources of the call's positional arguments.
_COPY_FIRST = "make a copy first and change the copy: `{0} = {0}.copy()`"
IN_PLACE_FUNCTIONS = {
    np.copyto: "`{0} = np.broadcast_to({1}, {0}.shape).astype({0}.dtype)`",
    np.put: "`{0} = {0}.ravel().at[{1}].set({2}).reshape({0}.shape)`",
    np.place: "`{0} = {0}.at[{1}].set({2})`",
    np.putmask: "`{0} = np.where({1}, {2}, {0})`",
    np.fill_diagonal: "`{0} = {0}.at[np.diag_indices_from({0})].set({1})`",
    np.put_along_axis: _COPY_FIRST,
    operator.setitem: "`{0} = {0}.at[{1}].set({2})`",
    operator.delitem: _COPY_FIRST,
    setattr: "make a copy first: `{0} = copy.copy({0})`, then set the attribute of the copy",
    delattr: "make a copy first: `{0} = copy.copy({0})`, then delete the attribute of the copy",
}
# ufunc.at(a, indices, b) -> the `.at` update that computes the same
UFUNC_AT = {"add": "add({2})", "multiply": "multiply({2})", "minimum": "min({2})",
            "maximum": "max({2})"}

# Calls whose result may be (a view of, or an element of) their arguments or receiver.
PART_METHODS = {"reshape", "ravel", "view", "transpose", "swapaxes", "squeeze", "diagonal",
                "__array__", "__enter__", "get", "__getitem__", "__next__"}
PART_FUNCTIONS = {getattr(np, n) for n in """asarray asanyarray ascontiguousarray asfortranarray
    asmatrix require reshape ravel transpose matrix_transpose permute_dims swapaxes moveaxis
    rollaxis squeeze expand_dims atleast_1d atleast_2d atleast_3d broadcast_to broadcast_arrays
    diagonal real imag split array_split hsplit vsplit dsplit unstack flip fliplr flipud
    rot90""".split() if hasattr(np, n)} | {
    np.lib.stride_tricks.as_strided, np.lib.stride_tricks.sliding_window_view,
    next, getattr, vars, operator.getitem}
# Attributes that are new values, not parts of their object (`n = x.shape[0]; n += 1` is fine).
FRESH_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"}
# Calls that make a new container holding their arguments' elements (shallow copies).
CONTAINER_METHODS = {"items", "values", "keys"}
CONTAINER_FUNCTIONS = {list, tuple, dict, set, frozenset, sorted, reversed, iter, filter, zip,
                       enumerate, copy.copy}

RNG_TYPES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator,
             np.random.SeedSequence, random.Random)
# Outside values that no code can change: they are never reported.
IMMUTABLE = (int, float, complex, str, bytes, type(None), range, np.generic, type(Ellipsis))
AUG_AT = {gast.Add: "add", gast.Mult: "multiply"}
OPS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.FloorDiv: "//",
       gast.Mod: "%", gast.Pow: "**", gast.MatMult: "@", gast.BitAnd: "&", gast.BitOr: "|",
       gast.BitXor: "^", gast.LShift: "<<", gast.RShift: ">>"}
RNG_FIX = ("use `strop.random` with an explicit key: `key, sub = strop.random.split(key)`, then "
           "e.g. `strop.random.normal(sub, shape)`; pass `key` in as an argument")


class Value(NamedTuple):
    """What a value may share with the outside. A root is (kind, name), e.g. ("argument", "x").

    ``same``: roots the value may be or be a view of (changing it changes them); ``inner``: roots
    its elements may be (a superset of ``same``); ``items``: the values of a tuple's elements;
    ``each``: the value of its elements when iterated, when known better than ``part()``.
    """
    same: frozenset = frozenset()
    inner: frozenset = frozenset()
    items: Optional[tuple] = None
    each: Optional["Value"] = None

    def __or__(self, other):
        return Value(self.same | other.same, self.inner | other.inner)

    def part(self):
        """An element, attribute or view of this value."""
        return Value(self.inner, self.inner)

    def element(self):
        return self.each or self.part()

    def holding(self):
        """A new container holding this value's elements."""
        return Value(frozenset(), self.inner)


FRESH = Value()


def _union(values):
    out = FRESH
    for v in values:
        out = out | v
    return out


def _merge(envs):
    """The states that meet after branches. ``|`` drops tuple structure, so loops converge."""
    names = {name for env in envs for name in env}
    return {name: _union(env.get(name, FRESH) for env in envs) for name in names}


def _immutable(obj):
    if isinstance(obj, (tuple, frozenset)):
        return all(_immutable(item) for item in obj)
    return isinstance(obj, IMMUTABLE)


def _root(kind, name):
    return Value(frozenset([(kind, name)]), frozenset([(kind, name)]))


def src(node):
    return gast.unparse(node).strip()


def _stateful_rng(obj):
    """Whether calling ``obj`` (or a method of it) draws from hidden random state."""
    if obj is UNKNOWN:
        return False
    owner = getattr(obj, "__self__", None)
    module = getattr(obj, "__module__", None) or ""
    return (isinstance(obj, RNG_TYPES) or isinstance(owner, RNG_TYPES) or module == "random"
            or module == "numpy.random" or module.startswith("numpy.random."))


def _among(obj, table):
    try:
        return obj in table
    except TypeError:  # an unhashable callee (a callable array subclass, ...) is in no table
        return False


def _namespace(obj):
    """Modules and classes: `np.sort(x)` calls a function, it does not sort `np`."""
    return isinstance(obj, (types.ModuleType, type))


def _static_attribute(obj, attr):
    """getattr, except that no property of a user object is run to find out."""
    if not _namespace(obj) and isinstance(inspect.getattr_static(obj, attr, None), property):
        return UNKNOWN
    try:
        return getattr(obj, attr)
    except Exception:  # noqa: BLE001 - any failure means "cannot know"
        return UNKNOWN


def _scope(fn):
    """(names bound in fn's own scope, {name: "global"/"nonlocal"}); nested scopes not entered."""
    names, declared = {p.id for p in _params(fn.args)}, {}
    stack = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            names.add(node.name)
            stack += node.decorator_list
            stack += getattr(node, "bases", [])
            if hasattr(node, "args"):
                stack += node.args.defaults + [d for d in node.args.kw_defaults if d]
            continue
        if isinstance(node, gast.Lambda):
            stack += node.args.defaults + [d for d in node.args.kw_defaults if d]
            continue
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            declared.update(dict.fromkeys(node.names, type(node).__name__.lower()))
        elif isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            names.add(node.id)
        elif isinstance(node, gast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, gast.comprehension):  # its target is the comprehension's own
            stack += [node.iter] + node.ifs
            continue
        stack.extend(gast.iter_child_nodes(node))
    return names - set(declared), declared


def _copy_fix(target, verb):
    """For `x.a = v` / `del x.a`: change a shallow copy of `x` instead."""
    x = src(target.value)
    return f"make a copy first: `{x} = copy.copy({x})`, then {verb} `.{target.attr}` of the copy"


def _at_fix(target, method, value):
    """`x = x.at[i].set(v)` for the item target x[i]; x[i][j] becomes x.at[i, j]."""
    base, index = target.value, [target.slice]
    while isinstance(base, gast.Subscript) and not isinstance(base.slice, (gast.Slice, gast.Tuple)):
        base, index = base.value, [base.slice] + index
    if not isinstance(base, gast.Name):
        base, index = target.value, [target.slice]
    x, i = src(base), ", ".join(src(n) for n in index)
    name = x if isinstance(base, gast.Name) else "new_" + x.split(".")[-1].split("[")[0]
    fix = f"`{name} = {x}.at[{i}].{method}({value})`"
    if name != x:
        fix += f" and return `{name}` instead of changing `{x}`"
    return fix + f" (a list or dict: copy it first, `{name} = list({x})` or `dict({x})`)"


def _at_update(node):
    """Whether ``node`` is `x.at[i]`: `x.at[i].add(v)` makes a new array, it is not set.add."""
    return (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute)
            and node.value.attr == "at")


def _format(template, sources):
    """A fix from a template of the call's argument sources {0}, {1}, ..."""
    try:
        return template.format(*sources)
    except IndexError:  # arguments passed by keyword
        return _COPY_FIRST.format(*sources)


class _Checker:
    """The problems found in one parsed function, by (line, column)."""

    def __init__(self, parsed):
        self.parsed = parsed
        self.outside = dataclasses.replace(parsed, local_names=frozenset())  # resolves free names
        self.problems = {}
        self.pending = {}  # id(nested def or lambda) -> (node, enclosing _Function)

    def report(self, error, node, message, fix):
        location = self.parsed.location(node)
        self.problems.setdefault((location.lineno, location.col), error(message, location, fix))

    def run(self):
        _Function(self, self.parsed.node, None)
        while self.pending:  # nested functions, once their enclosing function is fully walked
            _Function(self, *self.pending.pop(next(iter(self.pending))))
        if self.problems:
            raise self.problems[min(self.problems)]


def check(parsed):
    """Raise the first PurityError or ImmutableUpdateError of ``parsed``, in source order."""
    _Checker(parsed).run()


class _Function:
    """One function body, walked statement by statement. ``env`` maps the local names bound so
    far to their Value; ``seen`` to every Value they ever had (what nested functions see)."""

    def __init__(self, checker, node, enclosing):
        self.checker, self.enclosing = checker, enclosing
        self.names, self.declared = _scope(node)
        self.env = {p.id: _root("argument", p.id) for p in _params(node.args)}
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

