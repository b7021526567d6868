"""Common subexpressions: an operation computed again on the same operands in one block is
computed once.

Users write ``np.sum(a) + np.sum(a)``, ``np.tanh(x) * np.tanh(x)``, ``x[0] * x[0]``, or build
``np.concatenate([a, a[:1]])`` twice for a dot product of it with itself.  Normalized, each
is a temporary of its own (``_t7 = sum_all(a)``, ``_t8 = sum_all(a)``): the forward code
computes it twice, the reverse code tapes both and adds two cotangents, and compiled code makes
an array for each (LLVM merges repeated arithmetic on numbers, not calls that allocate).

The normalized code is functional (``x[i] = v`` is ``x = setitem(x, i, v)``, and
``lst.append(v)`` is ``lst = append(lst, v)``), so a temporary ``_tJ = op(operands)`` whose
operation and operands are those of an earlier ``v = op(operands)`` in the same block (``v``
bound there only), with none of those operands changed in between, holds ``v``'s value: the
statement goes and ``_tJ`` is read as ``v``.  Only operations that depend on nothing but their
operands: operators, items, and calls of functions strop has a rule for that are not effects
(``debug.print``) and make no new array to be filled (``np.zeros(3)`` twice are two arrays),
no container and no iterator (``zip(a, b)`` twice are two iterators).
"""
import builtins
import dataclasses
import re

import gast

from ..runtime.effects import is_effect
from . import ir
from .operations import operation
from .rules import lookup
from .versions import rename

_TEMP = re.compile(r"_t\d+$")
_SIMPLE = (gast.Name, gast.Constant)


def merge_common(fn):
    """``fn`` with repeated operations computed once; ``fn`` itself where there is none."""
    stored = _stores(fn.node)
    # a name bound once to a name never bound (an argument an inlined function's parameter
    # takes: ``x_1 = x``) reads as that name, in the operations compared
    aliases = {s.targets[0].id: s.value.id for s in gast.walk(fn.node)
               if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                   s.targets[0], gast.Name) and isinstance(s.value, gast.Name) and
               stored.get(s.targets[0].id) == 1 and not stored.get(s.value.id)}
    renames = {}
    node = ir.clone(fn.node)
    for block in list(_blocks(node)):
        block[:] = _merged(block, fn, stored, renames, aliases)
    if not renames:
        return fn
    rename(node, renames)   # (the merged temporaries' statements are gone: reads only)
    return dataclasses.replace(fn, node=node)


def _merged(stmts, fn, stored, renames, aliases):
    """``stmts`` less the statements that compute again what an earlier one did (each such
    temporary recorded in ``renames`` as the earlier one's)."""
    seen, out = {}, []    # operation's dump -> (the name it was assigned, the names it reads)
    for s in stmts:
        found = _operation(s, fn, stored)
        if found is not None:
            read = {**aliases, **renames}
            found = {read.get(n, n) for n in found}
            key = _dump(s.value, read)
            target = s.targets[0].id
            if key in seen and _TEMP.match(target) and stored.get(target) == 1:
                renames[target] = seen[key][0]
                continue
        changed = _changed(s)
        if changed:
            seen = {k: v for k, v in seen.items() if not (v[1] & changed or v[0] in changed)}
        if found is not None and stored.get(target) == 1 and target not in found:
            seen[key] = (target, found)
        out.append(s)
    return out


def _operation(s, fn, stored):
    """The names a pure operation on simple operands assigned to a name reads; None for any
    other statement."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
            s.targets[0], gast.Name)):
        return None
    value = s.value
    if isinstance(value, gast.Subscript):
        # not the items of a name bound again (``u[1:-1] = u[1:-1] + ...``: a read of the slice
        # it updates keeps its own cotangent, which the update's adjoint keeps in place)
        if not isinstance(value.value, gast.Name) or stored.get(value.value.id, 0) > 1:
            return None
        operands = [value.value, value.slice]
    else:
        op = operation(fn, value)
        if op is None or isinstance(value, gast.Attribute):
            return None
        key, args, kws, _ = op
        if isinstance(value, gast.Call) and not _pure(key):
            return None
        operands = list(args) + [v for _, v in kws]
    names = set()
    for a in operands:
        for n in gast.walk(a):
            if isinstance(n, gast.Name):
                names.add(n.id)
            elif not isinstance(n, (*_SIMPLE, gast.Tuple, gast.List, gast.Slice, gast.expr_context,
                                    gast.UnaryOp, gast.USub, gast.UAdd)):
                return None
    return names


def _pure(key):
    """Whether calls of ``key`` depend on their operands alone and make no array to fill, no
    container and no iterator (two ``zip(a, b)`` are two iterators)."""
    if isinstance(key, tuple):        # ("method", name)
        return key[1] not in _CONTAINER_METHODS
    if getattr(builtins, getattr(key, "__name__", ""), None) is key:
        return key in _BUILTINS
    rule = lookup(key)
    if rule is None or is_effect(key):
        return False
    return getattr(key, "__name__", None) not in _FRESH


# the functions that make a new array from shapes or values, which code goes on to fill or
# update: two calls are two arrays
_FRESH = {"zeros", "ones", "empty", "full", "eye", "identity", "arange", "linspace",
          "zeros_like", "ones_like", "empty_like", "full_like", "array", "asarray", "copy",
          "asfortranarray", "ascontiguousarray", "iterable"}
_BUILTINS = {abs, all, any, bool, callable, divmod, float, int, isinstance, len, max, min, pow,
             round, sum, tuple, type}
_CONTAINER_METHODS = {"tolist", "copy", "items", "keys", "values", "pop", "setdefault"}


def _changed(s):
    """The names statement ``s`` (with its nested blocks) binds, deletes or changes in place:
    the root of an item or attribute assigned, the object of a method call."""
    out = set()
    for n in gast.walk(s):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            out.add(n.id)
        elif isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(
                n.ctx, (gast.Store, gast.Del)):
            root = n
            while isinstance(root, (gast.Subscript, gast.Attribute)):
                root = root.value
            if isinstance(root, gast.Name):
                out.add(root.id)
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and isinstance(
                n.func.value, gast.Name):
            out.add(n.func.value.id)
    return out


def _stores(node):
    """{name: how many times the function binds it}."""
    out = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            out[n.id] = out.get(n.id, 0) + 1
    return out


def _blocks(node):
    """Every statement list of the function, its body first."""
    for n in gast.walk(node):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                yield block


def _dump(value, read):
    """``value``'s dump, its names read as ``read`` says (the temporaries merged so far as the
    names they merged into, aliases as their names)."""
    if read:
        value = rename(ir.clone(value), read)
    return gast.dump(value)
