"""Local dicts of constant keys as one variable per key, in compiled code.

``st = {"a": x, "w": y}`` then ``st["w"] = f(st["w"])`` (``st = setitem(st, "w", ...)`` once
normalized) is a record, but Numba types a dict by one key type and one value type: a dict
of an array and a number does not compile.  Where a name only ever holds such displays (the
same keys in each) and is only read by constant keys and updated at a key it has, each key is
a variable of its own (``st_a``, ``st_w``) and the function compiles.  A dict read whole (
returned, passed to a function, iterated) stays a dict.
"""
import gast

from .. import runtime
from ..transformer.ir import Namer, assign, names_in


def split_records(node, refs):
    """Rewrite the record-like dicts of FunctionDef ``node`` (in place); returns their names."""
    setitem = {n for n, o in refs.items() if o is runtime.setitem}

    def keys_of(display):
        if not (isinstance(display, gast.Dict) and display.keys and all(
                isinstance(k, gast.Constant) and isinstance(k.value, str) for k in display.keys)):
            return None
        keys = [k.value for k in display.keys]
        return tuple(keys) if len(set(keys)) == len(keys) else None

    def update_of(value, name):   # setitem(name, "k", v): the key
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
                value.func.id in setitem and len(value.args) == 3 and isinstance(
                    value.args[0], gast.Name) and value.args[0].id == name and isinstance(
                    value.args[1], gast.Constant) and isinstance(value.args[1].value, str):
            return value.args[1].value
        return None

    keys, bad, allowed = {}, set(), set()
    for s in gast.walk(node):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            t = s.targets[0].id
            k = keys_of(s.value)
            if k is not None:
                if keys.setdefault(t, k) != k:
                    bad.add(t)
            elif update_of(s.value, t) is not None:
                allowed.add(id(s.value.args[0]))
            else:
                bad.add(t)
        elif isinstance(s, (gast.For, gast.comprehension)):
            bad |= {n.id for n in gast.walk(s.target) if isinstance(n, gast.Name)}
        if isinstance(s, gast.Subscript) and isinstance(s.value, gast.Name) and isinstance(
                s.slice, gast.Constant) and isinstance(s.ctx, gast.Load):
            allowed.add(id(s.value))
    records = {t: k for t, k in keys.items() if t not in bad}
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in records and isinstance(n.ctx, gast.Load) and \
                id(n) not in allowed:
            records.pop(n.id)
    for n in gast.walk(node):   # keys read or updated must be the record's
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and \
                n.value.id in records and n.slice.value not in records[n.value.id]:
            records.pop(n.value.id)
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name) and \
                n.targets[0].id in records:
            k = update_of(n.value, n.targets[0].id)
            if k is not None and k not in records[n.targets[0].id]:
                records.pop(n.targets[0].id)
    if not records:
        return set()
    namer = Namer(names_in(node) | set(refs))
    var = {(t, k): namer.fresh(f"{t}_{k}" if k.isidentifier() else t)
           for t, ks in records.items() for k in ks}

    class Split(gast.NodeTransformer):
        def visit_Subscript(self, n):
            self.generic_visit(n)
            if isinstance(n.value, gast.Name) and n.value.id in records:
                return gast.Name(id=var[n.value.id, n.slice.value], ctx=gast.Load(),
                                 annotation=None, type_comment=None)
            return n

        def visit_Assign(self, s):
            t = s.targets[0].id if isinstance(s.targets[0], gast.Name) else None
            if t not in records:
                return self.generic_visit(s)
            k = update_of(s.value, t)
            if k is not None:
                out = [assign(var[t, k], self.visit(s.value.args[2]), getattr(s, "loc", None))]
            else:
                out = [assign(var[t, key.value], self.visit(v), getattr(s, "loc", None))
                       for key, v in zip(s.value.keys, s.value.values)]
            return out
    Split().visit(node)
    return set(records)
