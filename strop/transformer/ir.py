"""The normalized function every transform takes and returns, and helpers to build its nodes."""
import builtins
import functools
import keyword
import operator
import sys
import types
from dataclasses import dataclass, field

import gast
import numpy as np

# Objects bound once in the generated module (a function, a module, a class, a dtype) rather
# than read on every call like the data globals a function reads.
CONSTANT_KINDS = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type,
                  np.ufunc, types.MethodType, types.BuiltinMethodType, np.dtype)


def is_constant_object(obj):
    return isinstance(obj, CONSTANT_KINDS) or callable(obj) and not isinstance(obj, np.ndarray)


@dataclass(frozen=True)
class FreeVar:
    """A global or closure variable holding data: read on every call, passed as an argument."""
    user_name: str
    owner: object      # the globals dict, or the closure cell
    is_cell: bool

    def read(self):
        return self.owner.cell_contents if self.is_cell else self.owner[self.user_name]

    # the same variable is the same name in the same dict or cell: compared by value, two
    # module dicts holding arrays would raise (ambiguous truth value), and dicts do not hash
    def __eq__(self, other):
        return (isinstance(other, FreeVar) and self.owner is other.owner
                and self.user_name == other.user_name and self.is_cell == other.is_cell)

    def __hash__(self):
        return hash((self.user_name, id(self.owner), self.is_cell))

    def guard(self, value):
        return Guard(self, value)


@dataclass(frozen=True)
class Guard:
    """A global or closure variable bound as a constant (a function, a module): the code is
    transformed again when it is rebound."""
    var: FreeVar
    value: object

    def holds(self):
        return self.now() is self.value

    def now(self):
        """The variable's value now (_GONE once it is deleted)."""
        try:
            return self.var.read()
        except (KeyError, ValueError):
            return _GONE


_GONE = object()


def guards_check(guards):
    """A function saying whether all of ``guards`` hold, cheap enough for every call: the plain
    guards of one module's globals (most: the functions and modules the code calls) compared
    at once, each by identity, the others one by one."""
    plain, rest = {}, []
    for g in guards:
        if type(g) is Guard and not g.var.is_cell:
            owner, names, values = plain.setdefault(id(g.var.owner), (g.var.owner, [], []))
            names.append(g.var.user_name)
            values.append(g.value)
        else:
            rest.append(g)
    groups = [(owner, operator.itemgetter(*names) if len(names) > 1 else
               (lambda d, n=names[0]: (d[n],)), tuple(values))
              for owner, names, values in plain.values()]

    if len(groups) == 1 and not rest:    # (the common case, a call's fixed cost)
        (owner, get, values), = groups

        def hold_one():
            try:
                return all(map(operator.is_, get(owner), values))
            except KeyError:   # deleted
                return False
        return hold_one

    def hold():
        try:
            for owner, get, values in groups:
                if not all(map(operator.is_, get(owner), values)):
                    return False
        except KeyError:   # deleted
            return False
        for g in rest:
            if not g.holds():
                return False
        return True
    return hold


@dataclass(frozen=True)
class ItemsGuard(Guard):
    """A global or closure list or tuple of functions bound as a constant: the code is made
    again when it is rebound or an item is replaced, added or removed."""
    items: tuple = ()

    def holds(self):
        now = self.now()
        return now is self.value and len(now) == len(self.items) and all(
            a is b for a, b in zip(now, self.items))


@dataclass(frozen=True)
class ContentsGuard(Guard):
    """A global or closure container of numbers and strings (``shapes = [(1, 4), (4, 1)]``)
    written into the code as a display: the code is made again when it is rebound or what it
    holds changes (``frozen`` compares types too: 1 and 1.0 make other code)."""
    contents: tuple = ()

    def holds(self):
        now = self.now()
        return now is self.value and frozen(now) == self.contents


@dataclass(frozen=True)
class EqualGuard(Guard):
    """A global or closure variable holding a value known while transforming that the code
    reads by what it is, not by which object (a treedef ``tree_unflatten`` rebuilds): the
    code is made again when it holds an unequal one."""

    def holds(self):
        now = self.now()
        return now is self.value or now is not _GONE and bool(now == self.value)


MAX_DISPLAYED = 64   # a container with more leaves stays data passed on every call
_SCALARS = (bool, int, float, str, type(None))


def is_number_structure(obj):
    """A list, tuple or dict (nested) of Python numbers, strings and None, small enough to be
    written into the code: its structure is static, as a pytree argument's is."""
    if type(obj) not in (list, tuple, dict):
        return False
    leaves = []

    def walk(x):
        if type(x) in (list, tuple):
            return all(walk(v) for v in x)
        if type(x) is dict:
            return all(type(k) in _SCALARS and walk(v) for k, v in x.items())
        leaves.append(x)
        return type(x) in _SCALARS and (type(x) is not float or np.isfinite(x)) and \
            len(leaves) <= MAX_DISPLAYED
    return walk(obj)


def is_static_table(obj):
    """A list, tuple or dict (nested) of constants that is not a number structure: numbers,
    strings, None, slices, functions, classes and user objects, keyed by numbers, strings
    or objects (a parameter parser's ``{layer: (slice(0, 18), (2, 1, 3, 3))}``).  Bound as
    a constant of the code, read with constant keys while transforming."""
    if type(obj) not in (list, tuple, dict) or is_number_structure(obj):
        return False
    leaves = []

    def constant(x):
        leaves.append(x)
        return len(leaves) <= MAX_DISPLAYED and (
            type(x) in _SCALARS and (type(x) is not float or np.isfinite(x))
            or type(x) is slice and all(type(v) in (int, type(None))
                                        for v in (x.start, x.stop, x.step))
            or is_user_object(x) or is_constant_object(x))

    def walk(x):
        if type(x) in (list, tuple):
            return all(walk(v) for v in x)
        if type(x) is dict:
            return all(constant(k) and walk(v) for k, v in x.items())
        return constant(x)
    return walk(obj)


def frozen(obj):
    """A hashable, type-exact copy of a number structure (what ContentsGuard compares)."""
    if type(obj) is dict:
        return dict, tuple((frozen(k), frozen(v)) for k, v in obj.items())
    if type(obj) in (list, tuple):
        return type(obj), tuple(frozen(v) for v in obj)
    return type(obj), obj


def display(obj, ref=None):
    """The gast display (of constants) that builds the number structure ``obj``; of a static
    table's item, ``ref(x)`` the atom of each object in it that is not a number or string."""
    if type(obj) is dict:
        return gast.Dict(keys=[display(k, ref) for k in obj],
                         values=[display(v, ref) for v in obj.values()])
    if type(obj) in (list, tuple):
        kind = gast.List if type(obj) is list else gast.Tuple
        return kind(elts=[display(v, ref) for v in obj], ctx=gast.Load())
    if type(obj) is slice:
        return call("slice", [const(obj.start), const(obj.stop), const(obj.step)])
    if ref is not None and type(obj) not in _SCALARS:
        return ref(obj)
    return const(obj)


def is_function_table(obj):
    """A list or tuple holding functions or user objects (``derivatives = [f, grad(f)]``,
    ``layers = [Conv(3), Dense(10)]``): its items are known while transforming."""
    return isinstance(obj, (list, tuple)) and any(
        callable(x) and not isinstance(x, (type, np.ndarray)) or is_user_object(x)
        for x in obj)


# Installed libraries, by top-level module: their functions are never inlined wherever they
# are installed (a checkout on sys.path, a development install: inline.library_of), their
# objects are never user objects
LIBRARIES = frozenset("""numpy scipy jax jaxlib autograd torch sklearn pandas numba llvmlite
    tensorflow statsmodels sympy networkx cupy dask xarray matplotlib gast""".split())


def is_user_object(obj):
    """An instance of a class the user wrote (a layer, a parameter parser, a settings
    object): bound as a constant of the code, its attributes read while transforming as a
    user module's are (normalize_exprs.py), its methods inlined."""
    return hasattr(obj, "__dict__") and not isinstance(
        obj, CONSTANT_KINDS + (np.ndarray, np.generic, functools.partial)) and \
        _top_module(type(obj)) not in LIBRARIES | {"strop", "strop_generated", "site-packages"} \
        and _top_module(type(obj)) not in sys.stdlib_module_names


def _top_module(cls):
    """The top-level module of ``cls``'s, or "site-packages" for an installed library's."""
    module = getattr(cls, "__module__", None) or ""
    path = getattr(sys.modules.get(module), "__file__", None) or ""
    if "site-packages" in path or "dist-packages" in path:
        return "site-packages"
    return module.partition(".")[0]


@dataclass
class Function:
    """A normalized function: one operation per assignment, structured control flow, one return.

    ``node`` takes the user's parameters, then one parameter per free variable (``free``);
    ``refs`` are the objects the generated module binds by name (numpy as ``np``, helpers).
    """
    node: gast.FunctionDef
    refs: dict
    free: dict = field(default_factory=dict)   # generated name -> FreeVar
    nparams: int = 0                           # the user's parameters come first
    guards: tuple = ()                         # Guards of the bound globals
    groups: tuple = None                       # per user parameter: its leaf parameters
    companions: tuple = ()                     # FunctionDefs it calls, emitted beside it
    split: object = None                       # compiled vmap: runs in chunks of lanes
    user_names: dict = field(default_factory=dict)   # a renamed local -> the user's name
    result_tree: tuple = None                  # returns leaves: how to rebuild (flat_results)

    @property
    def name(self):
        return self.node.name

    def callee(self, func):
        """The object (or ("method", name) key) a call's ``func`` expression refers to."""
        return callee(self.refs, func)


def callee(refs, func):
    """The object (or ("method", name) key) ``func`` refers to, with ``refs`` bound."""
    if isinstance(func, gast.Name):
        if func.id in refs:
            return refs[func.id]
        return getattr(builtins, func.id, None)
    if isinstance(func, gast.Attribute):
        base = callee(refs, func.value) if _is_ref_chain(func.value, refs) else None
        if base is not None:
            return getattr(base, func.attr, None)
        return ("method", func.attr)
    return None


def _is_ref_chain(node, refs):
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name) and (node.id in refs or hasattr(builtins, node.id))


class Namer:
    """Fresh, deterministic names: the user's name when free, else name_1, name_2, ...;
    temporaries are _t1, _t2, ... (counters are per function, never shared)."""

    def __init__(self, taken=()):
        self.taken = set(taken) | set(dir(builtins)) | set(keyword.kwlist)
        self.counts = {}

    def reserve(self, name):
        self.taken.add(name)

    def fresh(self, base, numbered=False):
        if not numbered and base not in self.taken:
            self.taken.add(base)
            return base
        n = self.counts.get(base, 0)
        while True:
            n += 1
            candidate = f"{base}{n}" if numbered else f"{base}_{n}"
            if candidate not in self.taken:
                self.counts[base] = n
                self.taken.add(candidate)
                return candidate

    def temp(self, base="_t"):
        return self.fresh(base, numbered=True)


def bind_ref(refs, namer, obj, base):
    """The name ``refs`` binds ``obj`` to, binding it to a fresh name from ``base`` if none."""
    for k, v in refs.items():
        if v is obj:
            return k
    n = namer.fresh(base)
    refs[n] = obj
    return n


# --- node builders ---------------------------------------------------------------------------

def clone(node):
    """A deep copy of a tree (or list) of nodes; other values (locations, constants) are shared,
    never being mutated.  copy.deepcopy, with its memo and reflection, is 4x slower: a
    transform copies whole functions several times."""
    if isinstance(node, list):
        return [clone(n) for n in node]
    if isinstance(node, gast.AST):
        new = type(node).__new__(type(node))
        new.__dict__.update({k: clone(v) if isinstance(v, (list, gast.AST)) else v
                             for k, v in node.__dict__.items()})
        return new
    return node


def name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def const(value):
    return gast.Constant(value=value, kind=None)


def assign(target, value, loc=None):
    node = gast.Assign(targets=[name(target, store=True) if isinstance(target, str) else target],
                       value=value, type_comment=None)
    node.loc = loc
    return node


def call(func, args=(), keywords=()):
    func = name(func) if isinstance(func, str) else func
    return gast.Call(func=func, args=list(args),
                     keywords=[gast.keyword(arg=k, value=v) for k, v in keywords])


def attr(value, attr_):
    return gast.Attribute(value=name(value) if isinstance(value, str) else value, attr=attr_,
                          ctx=gast.Load())


def subscript(value, index):
    return gast.Subscript(value=name(value) if isinstance(value, str) else value, slice=index,
                          ctx=gast.Load())


def stmt(node, loc):
    node.loc = loc
    return node


def if_(test, body, orelse=(), loc=None):
    return stmt(gast.If(test=test, body=list(body), orelse=list(orelse)), loc)


def names_in(node, ctx=None):
    """The ids of the names in ``node`` (of context ``ctx`` only: gast.Load, gast.Store).
    A walk of its own, depth first: the transforms ask this of every statement, and
    ast.walk's breadth-first generator was a third of the time they took."""
    out, todo = set(), [node]
    while todo:
        n = todo.pop()
        if type(n) is gast.Name:
            if ctx is None or type(n.ctx) is ctx:
                out.add(n.id)
            continue
        for f in n._fields:
            v = getattr(n, f, None)
            if type(v) is list:
                todo.extend(x for x in v if isinstance(x, gast.AST))
            elif isinstance(v, gast.AST):
                todo.append(v)
    return out


def fresh_each_trip(body, names, namer, loc):
    """For a loop that runs a function's body once per basis vector (jacfwd, jacrev): the
    names in ``names`` (its parameters) that the body rebinds are saved before the loop and
    restored at the top of each trip, so that every trip starts from the arguments.  Returns
    (statements for before the loop, the new body, {name: the name holding the argument})."""
    rebound = sorted({n.id for s in body for n in gast.walk(s) if isinstance(n, gast.Name)
                      and isinstance(n.ctx, gast.Store) and n.id in names})
    saved = {p: namer.fresh(f"_{p}0") for p in rebound}
    return ([assign(k, name(p), loc) for p, k in saved.items()],
            [assign(p, name(k), loc) for p, k in saved.items()] + list(body),
            {p: saved.get(p, p) for p in names})
