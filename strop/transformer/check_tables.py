"""What check knows of calls and values: the tables of calls that change, share or copy their
arguments or draw hidden random state, what a value may share with the outside (``Value``),
the names a function's own scope binds, and the fixes its errors suggest."""
import copy
import inspect
import operator
import random
import types
from typing import NamedTuple, Optional

import gast
import numpy as np

from .parse import _params

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
    x = src(base)
    i = ", ".join(src(e) for n in index for e in (n.elts if isinstance(n, gast.Tuple) else [n]))
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
