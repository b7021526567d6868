"""Pytree arguments flattened at the boundary: a parameter ``params`` that a call passes a dict,
list or tuple for becomes one parameter per leaf (``params_w1``, ``params_b1``, ...), and
``params["w1"]`` reads that leaf.  Compiled code then sees only arrays and numbers, and a
gradient is one adjoint per leaf.  A tree the code uses otherwise (iterated, passed whole) is
rebuilt from its leaves at the start instead.
"""
import dataclasses
import functools
import re

import gast

from . import ir

STATIC_NODES = (dict, list, tuple)


class Attr(str):
    """A step of a key path reading an attribute (of a registered pytree class's instance)."""


class _Leaf:
    """Where a leaf goes, in a sample tree built to find each leaf's path."""

    def __init__(self, i):
        self.i = i


_CONSTANT = (bool, int, float, str, type(None))


@functools.lru_cache(maxsize=None)
def _analyse(treedef):
    """(the key path of each leaf, {path: constant} of the aux data a registered class keeps
    as attributes), or None unless every node is a dict, list, tuple or an object whose
    attributes hold its children (a class registered with ``tree_flatten``, JAX's FAQ's)."""
    from ..tree_util import _registry
    try:
        sample = treedef.unflatten([_Leaf(i) for i in range(treedef.num_leaves)])
    except Exception:   # a class whose constructor computes with its children
        return None
    paths, constants = [None] * treedef.num_leaves, {}

    def walk(node, path):
        if type(node) is dict:
            return all(walk(v, path + (k,)) for k, v in node.items())
        if type(node) in (list, tuple):
            return all(walk(v, path + (i,)) for i, v in enumerate(node))
        if _is_namedtuple(node):   # its fields read by name or by index (fields())
            return all(walk(v, path + (i,)) for i, v in enumerate(node))
        if isinstance(node, _Leaf):
            paths[node.i] = path
            return True
        if type(node) in _registry and hasattr(node, "__dict__"):
            for k, v in vars(node).items():
                if isinstance(v, _CONSTANT):
                    constants[path + (Attr(k),)] = v
                elif not walk(v, path + (Attr(k),)):
                    return False
            return True
        return False
    if not walk(sample, ()) or any(p is None for p in paths):
        return None
    return paths, constants


def _is_namedtuple(node):
    return isinstance(node, tuple) and hasattr(type(node), "_fields")


@functools.lru_cache(maxsize=None)
def fields(treedef):
    """{path: the field names} of each named tuple in ``treedef``."""
    out = {}

    def walk(node, path):
        if _is_namedtuple(node):
            out[path] = type(node)._fields
        children = node.values() if type(node) is dict else node if isinstance(
            node, (list, tuple)) else ()
        keys = node.keys() if type(node) is dict else range(len(children))
        for k, v in zip(keys, children):
            walk(v, path + (k,))
    if leaf_paths(treedef) is not None:
        walk(treedef.unflatten([_Leaf(i) for i in range(treedef.num_leaves)]), ())
    return out


def leaf_paths(treedef):
    """The key path of each leaf, in flattening order (an attribute's step an ``Attr``); None
    unless every node is a dict, list, tuple or a registered class keeping its children as
    attributes."""
    found = _analyse(treedef)
    return None if found is None else found[0]


def tree_constants(treedef):
    """{path: value} of the constants (aux data) registered classes in ``treedef`` hold."""
    found = _analyse(treedef)
    return {} if found is None else found[1]


def dict_orders(tree):
    """The keys of each dict in ``tree`` in the user's order, dicts taken in flattening order
    (which sorts keys, as JAX's does); None where every dict's keys are already sorted.  The
    code a call gets rebuilds each dict in this order, so that iterating it walks the keys as
    the user's dict does."""
    from ..tree_util import _node_kind
    orders = []

    def walk(node):
        kind = _node_kind(type(node))
        if kind is None:
            return
        if type(node) is dict:
            orders.append(tuple(node))
        for child in kind.flatten(node)[0]:
            walk(child)
    walk(tree)
    try:
        return None if all(list(o) == sorted(o) for o in orders) else tuple(orders)
    except TypeError:   # keys that do not sort: their order is the flattening order
        return None


def _in_order(sample, orders):
    """``sample`` (a tree of dicts, lists and tuples, dicts in sorted order) with each dict's
    keys in the order ``orders`` gives, taken as ``dict_orders`` walks."""
    if type(sample) is dict:
        order = next(orders)
        items = {k: _in_order(sample[k], orders) for k in sample}
        return {k: items[k] for k in order}
    if type(sample) in (list, tuple):
        return type(sample)(_in_order(v, orders) for v in sample)
    if _is_namedtuple(sample):
        return type(sample)(*(_in_order(v, orders) for v in sample))
    return sample


def _leaf_name(param, path, taken):
    parts = [re.sub(r"\W", "_", str(k)) or "_" for k in path]
    base = "_".join([param] + parts)
    name, n = base, 1
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


class _Sample:
    """A tree with a registered class in it, rebuilt by its ``tree_unflatten`` (in Python)."""

    def __init__(self, treedef, indices):
        self.treedef, self.indices = treedef, list(indices)


def _rebuild(sample, names, refs):
    """A literal that rebuilds the tree (dicts, lists, tuples) from leaf parameters; one with a
    registered class in it, a call of its structure's ``unflatten``."""
    if isinstance(sample, _Sample):
        name = "unflatten"
        while name in refs and refs[name] is not sample.treedef.unflatten:
            name += "_"
        refs[name] = sample.treedef.unflatten
        return ir.call(name, [gast.List(elts=[ir.name(names[i]) for i in sample.indices],
                                        ctx=gast.Load())])
    if type(sample) is dict:
        return gast.Dict(keys=[ir.const(k) for k in sample],
                         values=[_rebuild(v, names, refs) for v in sample.values()])
    if type(sample) in (list, tuple):
        cls = gast.List if type(sample) is list else gast.Tuple
        return cls(elts=[_rebuild(v, names, refs) for v in sample], ctx=gast.Load())
    if _is_namedtuple(sample):
        name = type(sample).__name__
        while name in refs and refs[name] is not type(sample):
            name += "_"
        refs[name] = type(sample)
        return ir.call(name, [_rebuild(v, names, refs) for v in sample])
    return ir.name(names[sample])


def flatten_params(fn, trees, spread=None, orders=None):
    """``fn`` with the parameters at the indices of ``trees`` (index -> treedef, counting the
    arguments as passed) replaced by their leaves; ``fn.groups`` records, per argument,
    (flattened?, its parameters).

    ``spread`` = (index, n): the parameter at that index is ``*xs``, called with n arguments:
    it becomes n parameters ``xs_0 .. xs_{n-1}`` (each flattened if a tree), so that argnums,
    in_axes and static_argnums count arguments as passed, as JAX's do; ``xs[k]`` reads them
    directly (or ``xs = (xs_0, ...)`` first, where the tuple is used whole).

    ``orders``: index -> ``dict_orders`` of the argument, where its dicts are not in sorted
    order: a tree rebuilt whole keeps the user's order of keys."""
    node = ir.clone(fn.node)
    taken = ir.names_in(node) | set(fn.refs)
    refs = dict(fn.refs)
    args, groups, prologue = [], [], []
    at = 0    # the index of the argument as passed
    for i, a in enumerate(node.args.args):
        items = [trees.get(at + k) for k in range(spread[1])] if spread and \
            i == spread[0] else [trees.get(at)]
        at += len(items)
        spreads = len(items) != 1 or spread and i == spread[0]
        if not spreads and (items[0] is None or leaf_paths(items[0]) is None):
            args.append(a)
            groups.append((False, (a.id,)))
            continue
        by_path, samples, names, constants, custom, names_of = {}, [], [], {}, [], {}
        for k, treedef in enumerate(items):
            prefix = (k,) if spreads else ()
            paths = leaf_paths(treedef) if treedef is not None else None
            if treedef is not None:
                constants.update({prefix + p: v for p, v in tree_constants(treedef).items()})
                names_of.update({prefix + p: f for p, f in fields(treedef).items()})
                custom.append(any(isinstance(step, Attr) for p in paths or () for step in p))
            leaf_steps = paths if paths is not None else [()]   # (an empty tuple has none)
            mine = [_leaf_name(a.id, prefix + p, taken) for p in leaf_steps]
            for pre in [prefix, (k - len(items),)] if spreads else [prefix]:   # xs[-1] too
                by_path.update(zip([pre + p for p in leaf_steps], mine))
            order = (orders or {}).get(at - len(items) + k)
            samples.append(_Sample(treedef, range(len(names), len(names) + len(mine)))
                           if paths and custom[-1] else
                           _in_order(treedef.unflatten(range(len(names), len(names) + len(mine))),
                                     iter(order)) if paths and order else
                           treedef.unflatten(range(len(names), len(names) + len(mine)))
                           if paths is not None else len(names))
            groups.append((paths is not None, tuple(mine)))
            names += mine
        args.extend(gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
                    for n in names)
        if not _rewrite(node.body, a.id, by_path, constants, dry=True, names_of=names_of):
            sample = tuple(samples) if spreads else samples[0]
            prologue.append(ir.assign(a.id, _rebuild(sample, names, refs),
                                      getattr(node, "loc", None)))
        else:
            _rewrite(node.body, a.id, by_path, constants, dry=False, names_of=names_of)
    node.args.args = args
    node.body = prologue + node.body
    added = len(args) - len(fn.node.args.args)
    nargs = fn.nparams + (spread[1] - 1 if spread else 0)
    return dataclasses.replace(fn, node=node, groups=tuple(groups[:nargs]),
                               nparams=fn.nparams + added, refs=refs)


def _rewrite(stmts, param, by_path, constants, dry, names_of):
    """Read leaves directly: ``t = param[k]`` or ``t = param.x`` (a leaf) becomes ``t =
    param_k``; ``t = param[k]`` (a subtree) makes ``t`` a name for it; ``t = param.mul`` (aux
    data a registered class keeps) becomes its constant.  With ``dry``, only say whether every
    use of the tree is such a read (else it is rebuilt, and nothing is rewritten)."""
    alias = {param: ()}
    prefixes = {p[:i] for p in by_path for i in range(len(p))}
    stores = {}
    for n in _walk(stmts):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
    if stores.get(param):
        return False
    reads = set()
    for s in _statements(stmts):
        v = s.value if isinstance(s, gast.Assign) else None
        if isinstance(v, gast.Name) and v.id in alias and len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name) and stores.get(s.targets[0].id) == 1:
            alias[s.targets[0].id] = alias[v.id]   # self = c (an inlined method's self)
            reads.add(id(v))
            if not dry:
                s.value = ir.const(None)
            continue
        step = v.slice.value if isinstance(v, gast.Subscript) and isinstance(
            v.slice, gast.Constant) else Attr(v.attr) if isinstance(v, gast.Attribute) else None
        if step is not None and isinstance(v.value, gast.Name) and v.value.id in alias:
            named = names_of.get(alias[v.value.id], ())
            if isinstance(step, Attr) and step in named:   # a named tuple's field
                step = named.index(step)
            path = alias[v.value.id] + (step,)
            target = s.targets[0].id
            if path in constants:
                reads.add(id(v.value))
                if not dry:
                    s.value = ir.const(constants[path])
                continue
            if path in by_path:
                reads.add(id(v.value))
                if not dry:
                    s.value = ir.name(by_path[path])
                continue
            if path in prefixes and stores.get(target) == 1:
                alias[target] = path
                reads.add(id(v.value))
                if not dry:
                    s.value = ir.const(None)    # the subtree's name is not used any more
                continue
    for n in _walk(stmts):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in alias \
                and id(n) not in reads:
            return False
    return True


def _statements(stmts):
    for s in stmts:
        yield s
        for field in ("body", "orelse"):
            yield from _statements(getattr(s, field, []) or [])


def _walk(stmts):
    for s in stmts:
        yield from gast.walk(s)
