"""vmap's containers: tuples, lists and dicts of lanes, and what is known of each element."""
import gast
import numpy as np

from .. import runtime
from ..runtime import custom_cotangents
from . import ir
from .operations import is_namedtuple_call
from .unparse import unparse
from .vectorize_base import NotBatchable

DISPLAYS = (gast.Tuple, gast.List, gast.Dict)
# NumPy functions whose result is a tuple of a fixed length (of arrays of unknown rank)
TUPLE_RESULTS = {np.linalg.eigh: 2, np.linalg.eig: 2, np.linalg.svd: 3, np.linalg.slogdet: 2,
                 np.linalg.qr: 2, np.linalg.lstsq: 4, np.modf: 2, np.frexp: 2, divmod: 2,
                 np.divmod: 2}
# NumPy functions whose result is a list of pieces: as many as the sections asked for (an
# int), or one more than the places to cut at (a list)
SPLITS = {np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit}
# helpers that take containers: on containers of lanes they run as they are, leaf by leaf
# (the value: which argument's elements the result's are like)
CONTAINER_CALLS = {runtime.add: 0, runtime.scale: 0, runtime.zeros_like: 0,
                   runtime.ones_like: 0, runtime.getitem_vjp: 1, custom_cotangents: 1}
# cotangents of the elements of the container in this argument, as a container like it
SPLIT_LIKE = {runtime.array_vjp: 1, runtime.sum_vjp: 1}


class Containers:
    """Containers of lanes in Vectorize (a mixin: the names it reads are set by Vectorize)."""

    def elems_of(self, v):
        """(rank, elems of a nested container) of each element of ``v`` if it is a container
        (a tuple, list, or dict with constant keys; else None): a tuple, or a dict by key."""
        if isinstance(v, (gast.Tuple, gast.List)):
            kind = ListElems if isinstance(v, gast.List) else tuple
            return kind((self.rank_of(e), self.elems_of(e)) for e in v.elts)
        if isinstance(v, gast.Dict):
            if not all(isinstance(k, gast.Constant) for k in v.keys):   # None: **d
                return None
            return {k.value: (self.rank_of(e), self.elems_of(e)) for k, e in zip(v.keys,
                                                                                v.values)}
        if isinstance(v, gast.Name):
            return self.elems[v.id] if v.id in self.elems else self.known.get(v.id)
        if isinstance(v, gast.Subscript):
            elem = self.element(v.value, v.slice)
            return elem[1] if elem is not None else None
        if is_namedtuple_call(self.fn, v):   # Layer(w, b): a tuple of its items
            return NamedElems(((self.rank_of(a), self.elems_of(a)) for a in v.args), v.func)
        fn = self.fn.callee(v.func) if isinstance(v, gast.Call) else None
        if fn in CONTAINER_CALLS:   # a container like the one in this argument
            return self.elems_of(v.args[CONTAINER_CALLS[fn]])
        if fn is runtime.concatenate_vjp and len(v.args) >= 2:   # one cotangent per array
            elems = self.elems_of(v.args[1])
            return tuple((r, None) for _, (r, _) in _items(elems)) if isinstance(
                elems, tuple) else None
        if fn in TUPLE_RESULTS and not (fn is np.linalg.svd and any(
                k.arg == "compute_uv" for k in v.keywords)):   # w, v = eigh(a): a pair
            return ((None, None),) * TUPLE_RESULTS[fn]
        if fn in SPLITS and len(v.args) >= 2:   # a, b = np.split(x, 2): the pieces
            return _pieces(v.args[1])
        if fn is runtime.pop:   # what was pushed
            return self.tape_elems.get(v.args[0].id)
        if fn is runtime.each and len(v.args) > 2:   # lane by lane, then stacked leaf by leaf
            return self.elems_of(ir.call(v.args[0], v.args[2:]))
        if fn in SPLIT_LIKE and len(v.args) > SPLIT_LIKE[fn]:   # one cotangent per element
            arg = v.args[SPLIT_LIKE[fn]]   # (of a list whose length is known where it is read)
            if isinstance(arg, gast.Name) and arg.id in self.varies:
                raise NotBatchable(f"vmap cannot batch the cotangents of {arg.id}, a list whose "
                                   f"length changes (append in a loop or a branch)", self.loc)
            return self.elems_of(arg)
        if fn is runtime.append:   # lst.append(x): a container one element longer
            elems = self.elems_of(v.args[0])
            return elems + ((self.rank_of(v.args[1]), self.elems_of(v.args[1])),) if \
                isinstance(elems, tuple) else None
        if fn is runtime.setitem and isinstance(v.args[1], gast.Constant):   # d[k] = x
            return _with(self.elems_of(v.args[0]), v.args[1].value,
                         (self.rank_of(v.args[2]), self.elems_of(v.args[2])))
        return None

    def element(self, x, idx):
        """(rank, elems) of the element ``x[idx]`` of a container (else None)."""
        elems = self.elems_of(x) if isinstance(x, gast.Name) else None
        if elems is None or not isinstance(idx, gast.Constant):
            return None
        if isinstance(elems, dict):
            return elems.get(idx.value)
        if not isinstance(idx.value, int) or not -len(elems) <= idx.value < len(elems):
            return None
        return elems[idx.value]

    def set_elems(self, name, elems, lanes=True):
        """What an assignment to ``name`` tells: it holds a container of lanes (``lanes``), a
        container of unbatched values, or (``elems`` None) something else."""
        table = self.elems if lanes else self.known
        if lanes:
            self.containers.add(name)
        old = table.get(name, elems)
        if old is not None and elems is not None and isinstance(old, dict) != isinstance(
                elems, dict):
            if lanes:
                raise NotBatchable(f"vmap cannot batch {name}: a tuple or list in one place "
                                   f"and a dict in another", self.loc)
            elems = None
        if elems is None or old is None:
            table[name] = None
            return
        if (set(old) if isinstance(old, dict) else len(old)) != (
                set(elems) if isinstance(elems, dict) else len(elems)):
            self.varies.add(name)
        table[name] = _merge(old, elems)

    def same_elems(self, name, why):
        """``name`` holds containers of the same elements (keys) wherever it is assigned."""
        if name in self.varies or name in self.known and self.known[name] is None:
            raise NotBatchable(f"vmap cannot batch {name}, a tuple, list or dict {why}: it "
                               f"does not hold the same elements (keys) wherever it is "
                               f"assigned", self.loc)

    def lanes_of(self, v):
        """``v`` with every element a batched value (None stays None: a placeholder)."""
        elems = self.elems_of(v)
        if elems is not None and not self.is_b(v) and not isinstance(v, DISPLAYS):
            if isinstance(v, gast.Name):
                self.same_elems(v.id, "that meets values that differ between lanes")
            v = _container(elems, [ir.subscript(v, ir.const(k)) for k, _ in _items(elems)])
        if isinstance(v, gast.Dict):
            return gast.Dict(keys=v.keys, values=[e if is_none(e) else self.lanes_of(e)
                                                  for e in v.values])
        if is_namedtuple_call(self.fn, v):
            return ir.call(v.func, [e if is_none(e) else self.lanes_of(e) for e in v.args])
        if not isinstance(v, (gast.Tuple, gast.List)):
            return v if elems is not None else self.bcast(v, self.is_b(v))
        return type(v)(elts=[e if is_none(e) else self.lanes_of(e) for e in v.elts],
                       ctx=gast.Load())

    def select_elems(self, mask, value, t):
        """``t = value`` in the lanes of ``mask``, element by element of the container."""
        self.same_elems(t, "assigned under control flow on a batched value")
        given = dict(zip([k.value for k in value.keys], value.values)) if isinstance(
            value, gast.Dict) else dict(enumerate(value.elts)) if isinstance(
            value, (gast.Tuple, gast.List)) else None
        parts = []
        for k, (r, sub) in _items(self.elems[t]):
            new = given[k] if given is not None else ir.subscript(value, ir.const(k))
            if sub is not None:
                raise NotBatchable("vmap cannot batch a nested tuple, list or dict assigned "
                                   "under control flow on a batched value", self.loc)
            if is_none(new):
                parts.append(new)
                continue
            new = self.bcast(new, self.is_b(new) or isinstance(new, gast.Subscript))
            parts.append(self.pick(mask, new, ir.subscript(t, ir.const(k)), r))
        new = _container(self.elems[t], parts)
        if isinstance(new, gast.Tuple):   # a list stays a list (its items can be assigned)
            new = ir.call(self.helper("container_like"), [ir.name(t), new])
        return new


def shape_of(elems):
    """What must agree between two bindings of a container to share its name: the number of
    its elements, or its keys (None: not a container known element by element)."""
    return None if elems is None else frozenset(elems) if isinstance(elems, dict) else \
        len(elems)


def is_none(node):
    return isinstance(node, gast.Constant) and node.value is None


def _merge(a, b):
    """What two assignments to a container tell of its elements together (of a key only one
    has, what that one tells: ``d[k]`` reads it; of tuples of two lengths, nothing: ``t[-1]``
    is not one element, and the shorter length, so that a list grown in a loop meets a
    fixpoint)."""
    if isinstance(a, dict):
        return {k: _merge_elem(a[k], b[k]) if k in a and k in b else a.get(k, b.get(k))
                for k in {**a, **b}}
    kind = ListElems if isinstance(a, ListElems) and isinstance(b, ListElems) else tuple
    if len(a) != len(b):
        return kind((None, None) for _ in range(min(len(a), len(b))))
    merged = (_merge_elem(x, y) for x, y in zip(a, b))
    if isinstance(a, NamedElems) and isinstance(b, NamedElems) and unparse(a.func) == \
            unparse(b.func):   # the same class
        return NamedElems(merged, a.func)
    return kind(merged)


def _merge_elem(x, y):
    (ra, sa), (rb, sb) = x, y
    same = sa is not None and sb is not None and isinstance(sa, dict) == isinstance(sb, dict)
    return ra if ra == rb else None, _merge(sa, sb) if same else None


def _items(elems):
    """(key, (rank, elems of a nested container)) of each element of a container."""
    return elems.items() if isinstance(elems, dict) else enumerate(elems)


class ListElems(tuple):
    """The elements of a list (a tuple's are a tuple): what vmap returns is a list again."""


class NamedElems(tuple):
    """The elements of a namedtuple ``Layer(w, b)``, with the call's function: what vmap
    returns is made by it again."""
    def __new__(cls, items, func=None):
        made = super().__new__(cls, items)
        made.func = func
        return made


def _container(elems, values):
    """A display of ``values``, one per element of a container like ``elems``."""
    if isinstance(elems, dict):
        return gast.Dict(keys=[ir.const(k) for k in elems], values=list(values))
    if isinstance(elems, NamedElems) and elems.func is not None:
        return ir.call(ir.clone(elems.func), list(values))
    cls = gast.List if isinstance(elems, ListElems) else gast.Tuple
    return cls(elts=list(values), ctx=gast.Load())


def _with(elems, key, elem):
    """``elems`` with the element at ``key`` replaced (or, in a dict, added)."""
    if isinstance(elems, dict):
        return {**elems, key: elem}
    if elems is None or not isinstance(key, int) or not -len(elems) <= key < len(elems):
        return None
    items = elems[:key % len(elems)] + (elem,) + elems[key % len(elems) + 1:]
    return NamedElems(items, elems.func) if isinstance(elems, NamedElems) else type(elems)(items)


def _pieces(sections):
    """The elements of np.split's result for ``sections`` written as a constant, else None."""
    if isinstance(sections, gast.Constant) and isinstance(sections.value, int) and \
            not isinstance(sections.value, bool) and sections.value > 0:
        return ((None, None),) * sections.value
    if isinstance(sections, (gast.Tuple, gast.List)):
        return ((None, None),) * (len(sections.elts) + 1)
    return None
