"""Local dicts of constant keys as one variable per key, in compiled code.

``st = {"a": x, "w": y}`` then ``st["w"] = f(st["w"])`` (``st = setitem(st, "w", ...)`` once
normalized) is a record, but Numba types a dict by one key type and one value type: a dict
of an array and a number does not compile.  Where a name only ever holds such records (the
same keys in each) and is only read by constant keys, updated at a key it has, or given to
the helpers of RECORD_CALLS, each key is a variable of its own (``st_a``, ``st_w``) and the
function compiles.  The cotangent of a record is a record too (``getitem_vjp``, ``add``,
``zeros_like`` of dicts in a gradient), and so is a tape of records (``_tape_st.append(st)``
... ``st = _tape_st.pop()``): one tape per key.  A dict read whole otherwise (returned, passed
to another function, iterated) stays a dict.

A key may also be a name that holds one of some constant keys (``k = "even" if i % 2 == 0
else "odd"`` normalized: ``k`` bound to "even" in one branch and "odd" in the other, or taken
back from a tape of such names in a gradient): ``st[k]`` reads ``st_even if k == "even" else
st_odd``, and ``st = setitem(st, k, v)`` gives each key it may be ``v if k == key else`` what
it held.
"""
import gast

from .. import runtime
from ..transformer.ir import Namer, assign, call, clone, names_in

# helpers that make a record from records, key by key: (the positions of the record
# arguments, the position of a constant key or None, and the value at key ``j`` from the
# records' values at j (``r``), the call's arguments (``a``), whether j is the key (``at``),
# and ``h(name, args)``, a call of a runtime helper)
RECORD_CALLS = {
    runtime.getitem_vjp: ((1,), 2, lambda r, a, at, h: h("add", [h("zeros_like", r), a[0]])
                          if at else h("zeros_like", r)),
    runtime.setitem_vjp: ((0,), 1, lambda r, a, at, h: h("zeros_like", r) if at else r[0]),
    runtime.setitem: ((0,), 1, lambda r, a, at, h: a[2] if at else r[0]),
    runtime.add: ((0, 1), None, lambda r, a, at, h: h("add", r)),
    runtime.zeros_like: ((0,), None, lambda r, a, at, h: h("zeros_like", r)),
    runtime.shape_like: ((0,), None, lambda r, a, at, h: h("shape_like", r)),
}
# helpers that read one value of a record at a constant key: (record, key) positions
RECORD_READS = {runtime.item_vjp: (0, 1)}


def split_records(node, refs, bind=None):
    """Rewrite the record-like dicts of FunctionDef ``node`` (in place); returns their names.
    ``bind(obj, name)``: the name ``refs`` binds a helper to (binding it if none)."""
    _hoist_displays(node, refs)
    f = _Function(node, refs)
    records, tapes = f.find()
    if records:
        _rewrite(f, records, tapes, bind)
    return set(records)


def _hoist_displays(node, refs):
    """A dict display given to a helper of RECORD_CALLS (vmap writes ``setitem({"a": ...,
    "w": ...}, "a", v)``) assigned to a name of its own first, so that it can be a record."""
    namer = None
    for n in gast.walk(node):
        for field in ("body", "orelse"):
            body = getattr(n, field, None)
            if not isinstance(body, list):
                continue
            out = []
            for s in body:
                v = getattr(s, "value", None) if isinstance(s, gast.Assign) else None
                fn = refs.get(v.func.id) if isinstance(v, gast.Call) and isinstance(
                    v.func, gast.Name) else None
                for p in RECORD_CALLS[fn][0] if fn in RECORD_CALLS else ():
                    if p < len(v.args) and _keys_of(v.args[p]) is not None:
                        namer = namer or Namer(names_in(node) | set(refs))
                        t = namer.fresh("_record", numbered=True)
                        out.append(assign(t, v.args[p], getattr(s, "loc", None)))
                        v.args[p] = gast.Name(id=t, ctx=gast.Load(), annotation=None,
                                              type_comment=None)
                out.append(s)
            setattr(n, field, out)


def _keys_of(display):
    if not (isinstance(display, gast.Dict) and display.keys and all(
            isinstance(k, gast.Constant) and isinstance(k.value, str) for k in display.keys)):
        return None
    keys = [k.value for k in display.keys]
    return tuple(keys) if len(set(keys)) == len(keys) else None


def _name_of(e):
    return e.id if isinstance(e, gast.Name) else None


class _Function:
    """What the search for records reads of a function: its assignments to names, its tape
    pushes, and the helpers its calls name."""

    def __init__(self, node, refs):
        self.node, self.refs = node, refs
        self.assigns = [s for s in gast.walk(node) if isinstance(s, gast.Assign)
                        and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)]
        self.appends = [a for a in map(self.appended, gast.walk(node)) if a is not None]
        self.loops = {n.id for s in gast.walk(node) if isinstance(s, (gast.For,
                                                                      gast.comprehension))
                      for n in gast.walk(s.target) if isinstance(n, gast.Name)}
        self.choices = self.find_choices()

    def helper(self, value):
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Name):
            return self.refs.get(value.func.id)
        return None

    @staticmethod
    def key_arg(value, at):
        k = value.args[at] if at is not None and len(value.args) > at else None
        return k.value if isinstance(k, gast.Constant) and isinstance(k.value, str) else None

    def keys_of(self, k):
        """The keys the key expression ``k`` may be: a constant's, or those a name holding one
        of some constants may hold (``choices``); None where they are not known."""
        if isinstance(k, gast.Constant) and isinstance(k.value, str):
            return frozenset((k.value,))
        return self.choices.get(k.id) if isinstance(k, gast.Name) else None

    def key_at(self, value, at):
        """keys_of the key argument of call ``value`` at position ``at``."""
        return self.keys_of(value.args[at]) if at is not None and len(value.args) > at \
            else None

    def find_choices(self):
        """{name: the string constants it may hold} of the names bound only to string
        constants, to other such names, or to what a tape only such names are pushed on gives
        back (``k = _tape_k.pop()`` in a gradient), and bound no other way."""
        stores = {}
        for n in gast.walk(self.node):
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
                stores[n.id] = stores.get(n.id, 0) + 1
        by_name = {}
        for s in self.assigns:
            by_name.setdefault(s.targets[0].id, []).append(s.value)
        names = {t for t, values in by_name.items() if len(values) == stores.get(t) and all(
            isinstance(v, gast.Constant) and isinstance(v.value, str) or isinstance(
                v, gast.Name) or self.pop_of(v) is not None for v in values)} - self.loops
        tapes = {t for t, _, _ in self.appends} - names
        choices, held = {t: set() for t in names}, {t: set() for t in tapes}
        changed = True
        while changed:
            changed = False
            for t, e, shape in self.appends:
                if t not in held:
                    continue
                if shape or not (isinstance(e, gast.Name) and e.id in choices):
                    del held[t]
                    changed = True
                elif not choices[e.id] <= held[t]:
                    held[t] |= choices[e.id]
                    changed = True
            for t in list(choices):
                for v in by_name[t]:
                    came = {v.value} if isinstance(v, gast.Constant) else \
                        choices.get(v.id) if isinstance(v, gast.Name) else \
                        held.get(self.pop_of(v))
                    if came is None:
                        del choices[t]
                        changed = True
                        break
                    if not came <= choices[t]:
                        choices[t] |= came
                        changed = True
        used = self.tape_uses()
        return {t: frozenset(c) for t, c in choices.items() if c and all(
            used.get(self.pop_of(v), True) for v in by_name[t] if self.pop_of(v) is not None)}

    def tape_uses(self):
        """{name: whether every read of it is a ``.append`` or ``.pop`` of it}."""
        out = {}
        for n in gast.walk(self.node):
            if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name) and \
                    n.attr in ("append", "pop"):
                out.setdefault(n.value.id, True)
        ok = {id(n.value) for n in gast.walk(self.node) if isinstance(n, gast.Attribute)
              and isinstance(n.value, gast.Name) and n.attr in ("append", "pop")}
        for n in gast.walk(self.node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in out and \
                    id(n) not in ok:
                out[n.id] = False
        return out

    @staticmethod
    def pop_of(value):   # T.pop(): the tape's name
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
                value.func.attr == "pop" and not value.args and isinstance(value.func.value,
                                                                           gast.Name):
            return value.func.value.id
        return None

    def appended(self, s):   # T.append(R) or T.append(shape_like(R)): (T, R's node)
        v = s.value if isinstance(s, gast.Expr) else None
        if isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute) and \
                v.func.attr == "append" and len(v.args) == 1 and isinstance(v.func.value,
                                                                             gast.Name):
            e = v.args[0]
            if self.helper(e) is runtime.shape_like and len(e.args) == 1:
                return v.func.value.id, e.args[0], True
            return v.func.value.id, e, False
        return None

    def find(self):
        """(records: name -> keys, tapes of records: name -> keys).  Every name is taken
        for a record, and what is not one is dropped, until nothing changes."""
        bad, not_tapes = set(self.loops), set()
        while True:
            keys, tapes = self.keys(bad, not_tapes)
            misread = self.misread(keys, tapes)
            if not misread:
                return keys, tapes
            bad |= misread
            not_tapes |= misread

    def keys(self, bad, not_tapes):
        """The keys of each name assigned only records (``bad`` grows by the others), and
        the tapes only records of the same keys are pushed on."""
        keys = {}
        empty = {s.targets[0].id for s in self.assigns if isinstance(s.value, gast.List)
                 and not s.value.elts} - not_tapes
        tapes = {t: None for t in empty if all(
            isinstance(s.value, gast.List) and not s.value.elts
            for s in self.assigns if s.targets[0].id == t)}
        changed = True
        while changed:
            changed = False
            for t, e, _ in self.appends:
                r = _name_of(e)
                if t in tapes and (r is None or r in bad):
                    del tapes[t]
                elif t in tapes and r in keys:
                    if tapes[t] is None:
                        tapes[t], changed = keys[r], True
                    elif tapes[t] != keys[r]:
                        del tapes[t]
            for s in self.assigns:
                t = s.targets[0].id
                if t in bad:
                    continue
                k = self.made(s.value, keys, tapes, bad)
                if k is False:
                    bad.add(t)
                    changed = True
                elif k is not None and keys.get(t, k) != k:
                    bad.add(t)
                    changed = True
                elif k is not None and t not in keys:
                    keys[t], changed = k, True
        bad |= {s.targets[0].id for s in self.assigns if s.targets[0].id not in keys}
        return {t: k for t, k in keys.items() if t not in bad}, \
            {t: k for t, k in tapes.items() if k is not None and all(
                keys.get(_name_of(e)) == k for tt, e, _ in self.appends if tt == t)}

    def made(self, v, keys, tapes, bad):
        """The keys of the record ``v`` makes; None where they are not known yet; False
        where ``v`` is no record."""
        def of(name):
            return False if name is None or name in bad else keys.get(name)
        if _keys_of(v) is not None:
            return _keys_of(v)
        if isinstance(v, gast.Name):
            return of(v.id)
        if self.pop_of(v) is not None:
            return tapes.get(self.pop_of(v), False) if self.pop_of(v) in tapes else False
        fn = self.helper(v)
        if fn not in RECORD_CALLS:
            return False
        positions, at, _ = RECORD_CALLS[fn]
        if any(p >= len(v.args) for p in positions) or at is not None and \
                self.key_at(v, at) is None:
            return False
        found = [of(_name_of(v.args[p])) for p in positions]
        if False in found:
            return False
        if None in found:
            return None
        if len(set(found)) != 1 or at is not None and not self.key_at(v, at) <= set(found[0]):
            return False
        return found[0]

    def misread(self, keys, tapes):
        """The records read otherwise than by a constant key they have, by the calls that
        make records, or by a tape's push, and the tapes used otherwise than by push/pop."""
        allowed = set()
        for s in self.assigns:
            v = s.value
            if s.targets[0].id not in keys:
                continue
            if isinstance(v, gast.Name):
                allowed.add(id(v))
            elif self.helper(v) in RECORD_CALLS:
                allowed.update(id(v.args[p]) for p in RECORD_CALLS[self.helper(v)][0])
        for t, e, _ in self.appends:
            if t in tapes:
                allowed.add(id(e))
        for n in gast.walk(self.node):
            if isinstance(n, gast.Subscript) and _name_of(n.value) in keys and \
                    isinstance(n.ctx, gast.Load) and self.keys_of(n.slice) is not None and \
                    self.keys_of(n.slice) <= set(keys[n.value.id]):
                allowed.add(id(n.value))
            read = RECORD_READS.get(self.helper(n))
            if read is not None and len(n.args) > max(read) and \
                    _name_of(n.args[read[0]]) in keys and \
                    self.key_at(n, read[1]) is not None and \
                    self.key_at(n, read[1]) <= set(keys[n.args[read[0]].id]):
                allowed.add(id(n.args[read[0]]))
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                    n.func.attr in ("append", "pop") and _name_of(n.func.value) in tapes:
                allowed.add(id(n.func.value))
        return {n.id for n in gast.walk(self.node) if isinstance(n, gast.Name) and
                isinstance(n.ctx, gast.Load) and (n.id in keys or n.id in tapes) and
                id(n) not in allowed}


def _rewrite(f, records, tapes, bind):
    namer = Namer(names_in(f.node) | set(f.refs))
    var = {(t, k): namer.fresh(f"{t}_{k}" if k.isidentifier() else t)
           for t, ks in {**records, **tapes}.items() for k in ks}

    def h(name, args):   # a call of a runtime helper, by the name the module binds it to
        return call(bind(getattr(runtime, name), name) if bind is not None else name, args)

    def at(t, k):
        return gast.Name(id=var[t, k], ctx=gast.Load(), annotation=None, type_comment=None)

    def method(t, k, name, args=()):
        return call(gast.Attribute(value=at(t, k), attr=name, ctx=gast.Load()), args)

    def is_key(key, k):   # key == "k"
        return gast.Compare(left=clone(key), ops=[gast.Eq()],
                            comparators=[gast.Constant(value=k, kind=None)])

    def read(t, key):
        """The value of record ``t`` at the key expression ``key``: one of its variables, or
        a choice among those the key may name."""
        ks = [k for k in records[t] if k in f.keys_of(key)]
        out = at(t, ks[-1])
        for k in reversed(ks[:-1]):
            out = gast.IfExp(test=is_key(key, k), body=at(t, k), orelse=out)
        return out

    class Split(gast.NodeTransformer):
        def visit_Subscript(self, n):
            self.generic_visit(n)
            if _name_of(n.value) in records:
                return read(n.value.id, n.slice)
            return n

        def visit_Call(self, n):
            self.generic_visit(n)
            found = RECORD_READS.get(f.helper(n))
            if found is not None and _name_of(n.args[found[0]]) in records:
                return read(n.args[found[0]].id, n.args[found[1]])
            return n

        def visit_Expr(self, s):
            found = f.appended(s)
            if found is None or found[0] not in tapes:
                return self.generic_visit(s)
            t, e, shape = found
            return [gast.Expr(value=method(t, k, "append", [
                h("shape_like", [at(e.id, k)]) if shape else at(e.id, k)]))
                for k in tapes[t]]

        def visit_Assign(self, s):
            t = s.targets[0].id if isinstance(s.targets[0], gast.Name) and \
                len(s.targets) == 1 else None
            loc = getattr(s, "loc", None)
            if t in tapes:
                return [assign(var[t, k], gast.List(elts=[], ctx=gast.Load()), loc)
                        for k in tapes[t]]
            if t not in records:
                return self.generic_visit(s)
            v = s.value
            if isinstance(v, gast.Dict):
                return [assign(var[t, key.value], self.visit(e), loc)
                        for key, e in zip(v.keys, v.values)]
            if isinstance(v, gast.Name):
                return [assign(var[t, k], at(v.id, k), loc) for k in records[t]]
            if f.pop_of(v) is not None:
                return [assign(var[t, k], method(f.pop_of(v), k, "pop"), loc)
                        for k in records[t]]
            positions, key_at, value = RECORD_CALLS[f.helper(v)]
            args = [self.visit(a) for a in v.args]
            if key_at is None or isinstance(v.args[key_at], gast.Constant):
                key = f.key_arg(v, key_at)
                return [assign(var[t, k], value([at(v.args[p].id, k) for p in positions],
                                                args, k == key, h), loc)
                        for k in records[t]]
            key, may = v.args[key_at], f.key_at(v, key_at)

            def made(k, hit):   # the value at k, where the key is k (hit) or another
                return value([at(v.args[p].id, k) for p in positions],
                             [clone(a) for a in args], hit, h)
            return [assign(var[t, k], gast.IfExp(test=is_key(key, k), body=made(k, True),
                                                 orelse=made(k, False))
                           if k in may else made(k, False), loc)
                    for k in records[t]]
    Split().visit(f.node)
