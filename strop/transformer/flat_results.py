"""jit's results returned as their leaves, and rebuilt after the call.

A train step returns its new parameters as it was given them: a dict of a matrix and a
vector, a list of ``[w, b]`` lists.  Compiled code cannot make such a value (a list holds
items of one type; a dict of arrays of different ranks cannot go back to Python), but its
structure is known when the code is made: the displays the returned name was built from
(``unroll.py`` turns comprehensions over known containers into them).  ``flat_results``
returns the leaves as one tuple and drops the displays no other statement reads;
``rebuild`` makes the value again from the leaves after the call, as the user wrote it.
Tuples alone are left as they are (compiled code returns them).
"""
import collections
import dataclasses

import gast

from . import ir

# a skeleton: ("leaf", index) | ("list" | "tuple", [skeletons]) | ("dict", [(key, skeleton)])


def flat_results(fn):
    """``fn`` returning its result's leaves as a tuple where the result is built of known
    displays holding a list or a dict; ``fn.result_tree`` then says how to rebuild it."""
    body = fn.node.body
    if not body or not isinstance(body[-1], gast.Return) or body[-1].value is None:
        return fn
    stores = collections.Counter(n.id for n in gast.walk(fn.node) if isinstance(n, gast.Name)
                                 and isinstance(n.ctx, gast.Store))
    bound = {s.targets[0].id: s for s in body[:-1] if isinstance(s, gast.Assign) and
             len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) and
             stores[s.targets[0].id] == 1}
    leaves, used = [], set()

    def skeleton(node):
        if isinstance(node, gast.Name) and node.id in bound and isinstance(
                bound[node.id].value, (gast.Name, gast.Tuple, gast.List, gast.Dict)):
            used.add(node.id)
            return skeleton(bound[node.id].value)
        if isinstance(node, (gast.Tuple, gast.List)):
            kind = "tuple" if isinstance(node, gast.Tuple) else "list"
            return kind, [skeleton(e) for e in node.elts]
        if isinstance(node, gast.Dict) and all(isinstance(k, gast.Constant) for k in node.keys):
            return "dict", [(k.value, skeleton(v)) for k, v in zip(node.keys, node.values)]
        leaves.append(ir.clone(node))
        return "leaf", len(leaves) - 1

    tree = skeleton(body[-1].value)
    if not _holds_list_or_dict(tree):
        return fn
    node = ir.clone(fn.node)
    node.body[-1].value = gast.Tuple(elts=leaves, ctx=gast.Load())
    while True:   # the displays (and aliases of them) nothing reads any more
        read = {n.id for s in node.body for n in gast.walk(s) if isinstance(n, gast.Name)
                and isinstance(n.ctx, gast.Load)}
        kept = [s for s in node.body if not (
            isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and
            s.targets[0].id in used and s.targets[0].id not in read)]
        if len(kept) == len(node.body):
            break
        node.body = kept
    return dataclasses.replace(fn, node=node, result_tree=tree)


def _holds_list_or_dict(tree):
    kind, parts = tree
    if kind == "leaf":
        return False
    if kind in ("list", "dict"):
        return True
    return any(_holds_list_or_dict(p) for p in parts)


def rebuild(tree, leaves):
    """The value ``tree`` describes, from the tuple of leaves the code returned."""
    kind, parts = tree
    if kind == "leaf":
        return leaves[parts]
    if kind == "dict":
        return {k: rebuild(p, leaves) for k, p in parts}
    items = [rebuild(p, leaves) for p in parts]
    return items if kind == "list" else tuple(items)


def rebuilt_display(tree, leaf):
    """The display making the value ``tree`` describes, ``leaf(k)`` the expression of leaf
    ``k`` (where the code is inlined in other code: rebuild's twin, as code)."""
    kind, parts = tree
    if kind == "leaf":
        return leaf(parts)
    if kind == "dict":
        return gast.Dict(keys=[ir.const(k) for k, _ in parts],
                         values=[rebuilt_display(p, leaf) for _, p in parts])
    cls = gast.List if kind == "list" else gast.Tuple
    return cls(elts=[rebuilt_display(p, leaf) for p in parts], ctx=gast.Load())
