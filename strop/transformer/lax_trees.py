"""The pytrees the lowering of strop.lax knows when transforming (part of the normalizer): the
structure of a value built as a display (tuples, lists, dicts with string keys, ``None``),
followed through names and constant subscripts, or held by a bound constant; anything else
is a leaf.  A carry is then one variable per leaf, which every transform and Numba handle as
plain numbers and arrays.

A structure is a tuple: ``LEAF``, ``NONE``, ``("tuple", children)``, ``("list", children)``,
``("tuple", children, cls)`` (a namedtuple: a tuple to every walk, rebuilt as ``cls(...)``) or
``("dict", keys, children)``; a dict's leaves come in the order of its sorted keys, as JAX
flattens it, and a dict is rebuilt in that order.
"""
import re

import gast
import numpy as np

from .. import runtime
from . import analysis, ir

# NumPy functions whose result is an array (or a NumPy number) whatever they are given
_TO_ARRAYS = (np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod, np.std, np.var,
              np.dot, np.matmul, np.tensordot, np.einsum, np.reshape, np.transpose, np.ravel,
              np.where, np.clip, np.concatenate, np.stack, np.zeros_like, np.ones_like,
              np.asarray, np.array, np.outer, np.cumsum, np.diff, np.abs)
_ARRAY_METHODS = {"astype", "reshape", "copy", "ravel", "flatten", "transpose", "sum", "mean",
                  "max", "min", "prod", "dot", "clip", "squeeze", "cumsum", "std", "var",
                  "round", "conj"}
LEAF, NONE = ("leaf",), ("none",)
_KEY = "lax-tree"   # displays[(_KEY, name)]: the structure a name holds (beside spread.py's)
_ITEMS = "items"    # displays[(_ITEMS, name)]: its elements' atoms, with the names' versions
_SEQ = "functions"  # displays[(_SEQ, name)]: the constant list or tuple of functions it holds
ARRAY = "array"     # displays[(ARRAY, name)]: it holds an array (a leaf of a gradient's tree)
PYTREE = "pytree"   # displays[(PYTREE, name)]: it holds (part of) a pytree argument, whose
#                     leaves are never lists, tuples or dicts
NAMED = "namedtuple"  # displays[(NAMED, name)]: it holds a namedtuple (a node, not a leaf)


class LaxTrees:
    """Mixed into the Normalizer, before Spreader (whose ``note`` it extends)."""

    def note(self, node):
        super().note(node)
        versions = self.__dict__.setdefault("versions", {})
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            target, value = node.targets[0].id, node.value
            items = _items(value, versions) if not isinstance(value, gast.Name) else \
                self.displays.get((_ITEMS, value.id))   # versions before the target's
            if items is None and isinstance(value, gast.Call) and not value.keywords and \
                    self.makes_namedtuple(value):   # Layer(w, b): its items by position
                items = _items(gast.Tuple(elts=value.args, ctx=gast.Load()), versions)
            versions[target] = versions.get(target, 0) + 1
            functions = self.function_sequence(value)
            if functions is not None:
                self.displays[(_SEQ, target)] = functions
            else:
                self.displays.pop((_SEQ, target), None)
            if self.makes_array(value):
                self.displays[(ARRAY, target)] = True
            else:
                self.displays.pop((ARRAY, target), None)
            if self.makes_namedtuple(value):
                self.displays[(NAMED, target)] = True
            else:
                self.displays.pop((NAMED, target), None)
            shape = self.static_shape(value)
            if shape not in (LEAF, NONE) and self.of_pytree(value):
                self.displays[(PYTREE, target)] = True
            else:
                self.displays.pop((PYTREE, target), None)
            for key, known in (((_KEY, target), shape != LEAF and shape),
                               ((_ITEMS, target), items)):
                if known or known == [] and key[0] == _ITEMS:   # (an empty display too)
                    self.displays[key] = known
                else:
                    self.displays.pop(key, None)
        elif isinstance(node, (gast.If, gast.While, gast.For)):
            for n in analysis.writes(node):
                versions[n] = versions.get(n, 0) + 1
                self.displays.pop((_KEY, n), None)
                self.displays.pop((_ITEMS, n), None)
                self.displays.pop((ARRAY, n), None)
                self.displays.pop((PYTREE, n), None)
                self.displays.pop((NAMED, n), None)

    def makes_array(self, value):
        """Whether the normalized ``value`` surely makes an array or a number, never a
        container: a ufunc or a reduction of NumPy's, arithmetic on an array, or a name that
        holds one (a tree's leaf, for tree_map over a tree the code made)."""
        if isinstance(value, gast.Name):
            return (ARRAY, value.id) in self.displays
        if isinstance(value, (gast.BinOp, gast.UnaryOp)):
            operands = [value.left, value.right] if isinstance(value, gast.BinOp) else \
                [value.operand]
            return any(self.makes_array(o) for o in operands)
        if isinstance(value, gast.Call):
            fn = self.callee_of(value.func)
            if fn == ("method", getattr(value.func, "attr", None)) and \
                    value.func.attr in _ARRAY_METHODS:   # x.astype(int) of an array x
                return self.makes_array(value.func.value)
            return isinstance(fn, np.ufunc) and fn.nout == 1 or any(fn is r for r in _TO_ARRAYS)
        if isinstance(value, gast.Attribute) and value.attr == "T":
            return self.makes_array(value.value)
        if isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Constant):
            return self.of_pytree(value.value) and self.static_shape(value) == LEAF
        return False

    def makes_namedtuple(self, value):
        """Whether the normalized ``value`` is a namedtuple made here (``Layer(w, b)``, a
        gradient's node) or a name holding one."""
        if isinstance(value, gast.Name):
            return (NAMED, value.id) in self.displays
        if not isinstance(value, gast.Call):
            return False
        cls = self.callee_of(value.func)
        return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")

    def of_pytree(self, value):
        """Whether ``value`` (a name, or constant subscripts of one) is part of a pytree
        argument (a leaf of it is an array or a number: isinstance of a list is False)."""
        while isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Constant):
            value = value.value
        return isinstance(value, gast.Name) and (PYTREE, value.id) in self.displays

    def known_item(self, base, index):
        """The atom ``base[index]`` holds, when ``base`` holds a display (``c = (a, b)``),
        ``index`` is a constant and the element's name was not rebound since: ``c[0]`` is
        ``a``.  Reading the element itself keeps derivative code free of the container (a
        tuple or dict carried through a loop would otherwise be taped and indexed)."""
        if not (isinstance(base, gast.Name) and isinstance(index, gast.Constant)):
            return None
        items = self.displays.get((_ITEMS, base.id))
        try:
            atom, version = items[index.value] if items is not None else (None, None)
        except (KeyError, IndexError, TypeError):
            return None
        if isinstance(atom, gast.Name) and self.versions.get(atom.id, 0) != version:
            return None
        return ir.clone(atom) if atom is not None else None

    def display_items(self, atom):
        """The atoms of the display the name ``atom`` holds (each not rebound since, marked
        normalized), else None."""
        items = self.displays.get((_ITEMS, atom.id)) if isinstance(atom, gast.Name) else None
        if not isinstance(items, (list, tuple)):
            return None
        out = [self.known_item(atom, ir.const(i)) for i in range(len(items))]
        if any(x is None for x in out):
            return None
        for x in out:
            x.normalized = True
        return out

    def function_sequence(self, value):
        """The constant list or tuple holding functions that ``value`` (a normalized value)
        is: a global or closure one, iterable() of it, or a name holding one; else None."""
        if isinstance(value, gast.Call) and len(value.args) == 1 and self.is_ref(
                value.func) and self.ref_object(value.func) is runtime.iterable:
            value = value.args[0]
        if isinstance(value, gast.Name) and (_SEQ, value.id) in self.displays:
            return self.displays[(_SEQ, value.id)]
        obj = self.ref_object(value) if self.is_ref(value) else None
        return obj if ir.is_function_table(obj) else None

    def function_item(self, base, index):
        """The function (or other constant) ``base[index]`` is, ``base`` holding a constant
        sequence of functions and ``index`` a constant; else None."""
        seq = self.displays.get((_SEQ, base.id)) if isinstance(base, gast.Name) else None
        if seq is None or not (isinstance(index, gast.Constant) and type(index.value) is int
                               and -len(seq) <= index.value < len(seq)):
            return None
        item = seq[index.value]
        atom = self.constant_atom(item, getattr(item, "__name__", "item"))
        atom.normalized = True
        return atom

    def table_item(self, base, index):
        """The display of ``base[index]`` where ``base`` references a static table
        (ir.is_static_table: ``{layer: (slice(0, 18), (2, 1, 3, 3))}``) and ``index`` is a
        constant or a reference (a user object), else None.  The table's guard makes the
        code again when what it holds changes."""
        table = self.ref_object(base) if isinstance(base, gast.Name) and base.id in \
            self.refs else None
        if not ir.is_static_table(table):
            return None
        if isinstance(index, gast.Constant):
            key = index.value
        elif isinstance(index, gast.Name) and index.id in self.refs:
            key = self.refs[index.id]
        else:
            return None
        try:
            item = table[key]
        except (KeyError, IndexError, TypeError):
            return None

        def ref(obj):
            atom = self.constant_atom(obj, getattr(obj, "__name__", "item"))
            atom.normalized = True
            return atom
        return ir.display(item, ref)

    def trips_over_functions(self, loop, scope):
        """The number of trips of the canonical loop ``for _i in range(...)`` whose body reads
        ``_seq[_i]`` of a constant sequence of functions (each trip calls another: the loop
        is unrolled), else None.  The other sequences it walks with it must have lengths
        known here (a pytree parameter's, a display's)."""
        if not (loop.body and isinstance(loop.target, gast.Name)):
            return None
        read = {n.value.id for n in gast.walk(loop.body[0]) if isinstance(n, gast.Subscript)
                and isinstance(n.value, gast.Name) and isinstance(n.slice, gast.Name)
                and n.slice.id == loop.target.id}
        gens = [ir.name(self.scoped_name(u, scope) or u) for u in sorted(read)]
        if not any((_SEQ, g.id) in self.displays for g in gens):
            return None
        lengths = []
        for g in gens:
            seq, items, tree = self.displays.get((_SEQ, g.id)), self.display_items(g), \
                self.tree_at(g)
            n = len(seq) if seq is not None else len(items) if items is not None else \
                len(tree.children()) if tree is not None and tree.node_type in (
                    list, tuple) else None
            if n is None:
                raise self.error("a loop over a list of functions walks another sequence "
                                 "whose length is not known when transforming", loop, scope,
                                 fix="walk sequences of known length with the functions (a "
                                     "parameter's list, a list display), or index them")
            lengths.append(n)
        return min(lengths)

    def display_constant(self, atom):
        """The tuple of constants (nested) the name ``atom`` holds as a display of them
        (``strides = (2, 2)``, an inlined helper's parameter), else None."""
        if isinstance(atom, gast.Constant):
            return atom.value
        items = self.display_items(atom)
        if items is None:
            return None
        values = [self.display_constant(x) for x in items]
        return None if any(v is None for v in values) else tuple(values)

    def static_shape(self, value):
        """The structure of a value of normalized code (nothing is emitted)."""
        if isinstance(value, (gast.Tuple, gast.List)):
            kind = "tuple" if isinstance(value, gast.Tuple) else "list"
            return kind, tuple(self.static_shape(e) for e in value.elts)
        if isinstance(value, gast.Dict) and value.keys and all(
                isinstance(k, gast.Constant) and isinstance(k.value, str) for k in value.keys):
            return _dict([k.value for k in value.keys],
                         [self.static_shape(v) for v in value.values])
        if isinstance(value, gast.Constant) and value.value is None:
            return NONE
        if isinstance(value, gast.Name):
            if (_KEY, value.id) in self.displays:
                return self.displays[(_KEY, value.id)]
            if value.id in self.refs:
                return _object_shape(self.refs[value.id])
            if value.id in self.trees:   # a pytree parameter never rebound
                treedef = self.trees[value.id]
                return _object_shape(treedef.unflatten(list(range(treedef.num_leaves))))
            return LEAF
        if isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Constant):
            base = self.static_shape(value.value)
            return _child(base, value.slice.value)
        if self.makes_namedtuple(value) and not value.keywords:   # Layer(w, b)
            return "tuple", tuple(self.static_shape(a) for a in value.args), \
                self.callee_of(value.func)
        return LEAF

    def tree_children(self, atom, shape):
        """(atom, structure) of each child of a container, in flattening order."""
        if shape[0] == "dict":
            keys, children = shape[1], shape[2]
            if isinstance(atom, gast.Dict):
                by_key = {k.value: v for k, v in zip(atom.keys, atom.values)}
                return [(by_key[k], c) for k, c in zip(keys, children)]
            return [(self.item(atom, k), c) for k, c in zip(keys, children)]
        if isinstance(atom, (gast.Tuple, gast.List)):
            return list(zip(atom.elts, shape[1]))
        if self.makes_namedtuple(atom) and isinstance(atom, gast.Call):
            return list(zip(atom.args, shape[1]))
        return [(self.item(atom, i), c) for i, c in enumerate(shape[1])]

    def item(self, atom, key):
        """The atom of ``atom[key]``: the element itself where known, else a subscript."""
        index = ir.const(key)
        return self.known_item(atom, index) or self.to_name(ir.subscript(ir.clone(atom), index))

    def tree_leaves(self, atom, shape):
        """The atoms of the leaves of ``atom`` (of structure ``shape``), in flattening order;
        subscripts are emitted where the value is not a display written here."""
        if shape == LEAF:
            return [atom]
        if shape == NONE:
            return []
        return [leaf for child, s in self.tree_children(atom, shape)
                for leaf in self.tree_leaves(child, s)]

    def tree_build(self, shape, leaves, top=True, orders=None):
        """The value of structure ``shape`` with the atoms ``leaves`` (an iterator): a display
        (nested ones get a name, as the normalizer gives them).  ``orders``: an iterator of
        each dict's keys in the order its display writes them, dicts taken as
        flatten.dict_orders takes them (else sorted, as ``shape`` keeps them)."""
        if shape == LEAF:
            return next(leaves)
        if shape == NONE:
            return ir.const(None)
        if shape[0] == "dict":
            keys = next(orders) if orders is not None else shape[1]
            values = dict(zip(shape[1], [self.tree_build(c, leaves, False, orders)
                                         for c in shape[2]]))
            node = gast.Dict(keys=[ir.const(k) for k in keys], values=[values[k] for k in keys])
        elif len(shape) == 3:   # a namedtuple: its class called
            cls = ir.name(self.bind_ref(shape[2].__name__, shape[2]))
            node = ir.call(cls, [self.tree_build(c, leaves, False, orders) for c in shape[1]])
        else:
            cls = gast.Tuple if shape[0] == "tuple" else gast.List
            node = cls(elts=[self.tree_build(c, leaves, False, orders) for c in shape[1]],
                       ctx=gast.Load())
        return node if top else self.to_name(node)

    def dict_orders(self, atom, shape):
        """The keys of each dict display ``atom`` holds (of structure ``shape``) in the order it
        writes them, as tree_build takes them; None where a dict's display is not known."""
        if shape in (LEAF, NONE) or "dict" not in _kinds_in(shape):
            return []
        if isinstance(atom, gast.Name) and atom.id in self.trees and shape == self.static_shape(
                atom):   # a pytree parameter: its argument's orders
            orders = self.tree_orders.get(atom.id)
            return list(orders) if orders else _sorted_orders(shape)
        out = []
        if shape[0] == "dict":
            items = self.displays.get((_ITEMS, atom.id)) if isinstance(atom, gast.Name) else None
            if not isinstance(items, dict) or set(items) != set(shape[1]):
                return None
            out.append(tuple(items))
        keys = shape[1] if shape[0] == "dict" else range(len(shape[1]))
        for key, child in zip(keys, shape[2] if shape[0] == "dict" else shape[1]):
            if child in (LEAF, NONE):
                continue
            inner = self.dict_orders(self.known_item(atom, ir.const(key)), child)
            if inner is None:
                return None
            out += inner
        return out


def _items(value, versions):
    """(atom, version of its name) of each element of a display, by index or key."""
    def entry(atom):
        return atom, versions.get(atom.id, 0) if isinstance(atom, gast.Name) else None
    if isinstance(value, (gast.Tuple, gast.List)):
        return [entry(e) for e in value.elts]
    if isinstance(value, gast.Dict) and all(isinstance(k, gast.Constant) for k in value.keys):
        return {k.value: entry(v) for k, v in zip(value.keys, value.values)}
    return None


def forget(displays, names):
    """``displays`` without what it says of ``names``, or of displays holding them."""
    def holds(value):
        items = value.values() if isinstance(value, dict) else value
        return any(isinstance(a, gast.Name) and a.id in names for a, _ in items)
    return {k: v for k, v in displays.items() if not (
        (k[1] if isinstance(k, tuple) else k) in names
        or isinstance(k, tuple) and k[0] == _ITEMS and holds(v))}


def same_structure(a, b):
    return a == b   # dict keys are kept sorted, so equal structures are equal tuples


def leaf_count(shape):
    return len(leaf_paths(shape))


def leaf_paths(shape, path=()):
    """The key path of each leaf, in flattening order."""
    if shape == LEAF:
        return [path]
    if shape == NONE:
        return []
    keys = shape[1] if shape[0] == "dict" else range(len(shape[1]))
    children = shape[2] if shape[0] == "dict" else shape[1]
    return [p for k, c in zip(keys, children) for p in leaf_paths(c, path + (k,))]


def leaf_name(base, path):
    """``base`` with the path of a leaf: ``carry_0``, ``params_w``."""
    return "_".join([base] + [re.sub(r"\W", "_", str(k)) for k in path])


def text(shape):
    """The structure as JAX prints a tree: ``(*, [*, *])``, ``{'a': *}``, ``None``."""
    if shape == LEAF:
        return "*"
    if shape == NONE:
        return "None"
    if shape[0] == "dict":
        return "{" + ", ".join(f"{k!r}: {text(c)}" for k, c in zip(shape[1], shape[2])) + "}"
    inner = ", ".join(text(c) for c in shape[1])
    if shape[0] == "list":
        return f"[{inner}]"
    if len(shape) == 3:
        return f"{shape[2].__name__}({inner})"
    return f"({inner}{',' if len(shape[1]) == 1 else ''})"


def rebuilt(shape, parts):
    """The Python container of ``shape``'s kind holding ``parts`` (by key, for a dict; in
    order, else): a sample tree of a display's structure."""
    if shape[0] == "dict":
        return dict(parts)
    if len(shape) == 3:
        return shape[2](*parts)
    return tuple(parts) if shape[0] == "tuple" else list(parts)


def _sorted_orders(shape):
    """Each dict's keys in sorted order (the order ``shape`` keeps), as dict_orders walks."""
    if shape in (LEAF, NONE):
        return []
    children = shape[2] if shape[0] == "dict" else shape[1]
    return ([shape[1]] if shape[0] == "dict" else []) + [
        o for c in children for o in _sorted_orders(c)]


def _kinds_in(shape):
    """The kinds of node ("dict", "list", "tuple") in a structure."""
    if shape in (LEAF, NONE):
        return set()
    children = shape[2] if shape[0] == "dict" else shape[1]
    return {shape[0]}.union(*(_kinds_in(c) for c in children))


def _dict(keys, children):
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    return "dict", tuple(keys[i] for i in order), tuple(children[i] for i in order)


def _child(shape, key):
    if shape[0] == "dict" and key in shape[1]:
        return shape[2][shape[1].index(key)]
    if shape[0] in ("tuple", "list") and isinstance(key, int) and -len(shape[1]) <= key < len(
            shape[1]):
        return shape[1][key]
    return LEAF


def _object_shape(obj):
    """The structure of a constant the code binds (a global tuple of functions, say)."""
    if obj is None:
        return NONE
    if type(obj) in (tuple, list):
        return ("tuple" if type(obj) is tuple else "list",
                tuple(_object_shape(o) for o in obj))
    if isinstance(obj, tuple) and hasattr(type(obj), "_fields"):
        return "tuple", tuple(_object_shape(o) for o in obj), type(obj)
    if type(obj) is dict and obj and all(isinstance(k, str) for k in obj):
        return _dict(list(obj), [_object_shape(v) for v in obj.values()])
    return LEAF
