"""``f(*args)`` and ``f(**kwargs)`` at call sites: spread into plain arguments where the
length of the tuple or the keys of the dict are known when transforming (part of the
normalizer).  Known: a display written in the call (``f(*(a, b))``), a local name last bound
to a display on every path to the call, or a constant global.  A tuple of unknown length given
to a user function whose signature fixes the count is read item by item, its length checked
when the code runs."""
import gast

from . import analysis, ir


class Spreader:
    """The spreading half of the Normalizer (normalize.py), which it mixes in; ``displays``
    maps a generated name to the length (tuple, list) or keys (dict) of the display it holds."""

    def note(self, node):
        """Keep ``displays`` true after the statement ``node`` is emitted."""
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            target, value = node.targets[0].id, node.value
            shape = None
            if isinstance(value, (gast.Tuple, gast.List)):
                shape = len(value.elts)
            elif isinstance(value, gast.Dict) and all(
                    isinstance(k, gast.Constant) and isinstance(k.value, str) for k in value.keys):
                shape = tuple(k.value for k in value.keys)
            elif isinstance(value, gast.Name):
                shape = self.displays.get(value.id)
            if shape is None:
                self.displays.pop(target, None)
            else:
                self.displays[target] = shape
        elif isinstance(node, (gast.If, gast.While, gast.For)):
            for n in analysis.writes(node):
                self.displays.pop(n, None)

    def shape_of(self, atom):
        if isinstance(atom, gast.Name) and atom.id in self.displays:
            return self.displays[atom.id]
        if self.is_ref(atom):
            obj = self.ref_object(atom)
            if isinstance(obj, (tuple, list)):
                return len(obj)
            if isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
                return tuple(obj)
        return None

    def spread(self, e, scope):
        """``e`` (a Call) with its ``*`` and ``**`` arguments spread where known; a ``*``
        argument of unknown length stays, as a Starred of a name (see ``fill``)."""
        if not (any(isinstance(a, gast.Starred) for a in e.args)
                or any(k.arg is None for k in e.keywords)):
            return e
        args, keywords = [], []
        for a in e.args:
            if not isinstance(a, gast.Starred):
                args.append(a)
            elif isinstance(a.value, (gast.Tuple, gast.List)):
                args.extend(a.value.elts)
            else:
                seq, n = self.spread_atom(a.value, scope)
                args.extend([ir.subscript(ir.clone(seq), ir.const(i)) for i in range(n)]
                            if isinstance(n, int) else
                            [gast.Starred(value=seq, ctx=gast.Load())])
        for k in e.keywords:
            if k.arg is not None:
                keywords.append(k)
            elif isinstance(k.value, gast.Dict) and all(
                    isinstance(key, gast.Constant) and isinstance(key.value, str)
                    for key in k.value.keys):
                keywords.extend(gast.keyword(arg=key.value, value=v)
                                for key, v in zip(k.value.keys, k.value.values))
            else:
                d, keys = self.spread_atom(k.value, scope)
                if not isinstance(keys, tuple):
                    raise self.error(f"the keys of `**{gast.unparse(k.value).strip()}` are not "
                                     "known when transforming", e, scope,
                                     fix="build the dict in the function as a display "
                                         "({'a': ..., 'b': ...}), or pass the keywords one by one")
                keywords.extend(gast.keyword(arg=key, value=ir.subscript(ir.clone(d),
                                                                         ir.const(key)))
                                for key in keys)
        return gast.copy_location(gast.Call(func=e.func, args=args, keywords=keywords), e)

    def spread_atom(self, expr, scope):
        """The value of ``expr`` as a name the rest of the call can read, and its shape."""
        atom = self.expr(expr, scope)
        if not isinstance(atom, gast.Name):
            atom = self.to_name(atom, force=True)
        scope.names.setdefault(atom.id, atom.id)   # generated names never clash with the user's
        return ir.name(atom.id), self.shape_of(atom)

    def fill(self, values, params, given, has_vararg, e, scope):
        """Positional ``values`` (atoms, at most one Starred of unknown length) for a function
        with positional ``params``, ``given`` of them by keyword: the Starred read item by item
        when the signature fixes its length, which is checked when the code runs."""
        stars = [i for i, v in enumerate(values) if isinstance(v, gast.Starred)]
        if not stars:
            return values
        n = len(params) - len(given) - (len(values) - 1)
        if len(stars) > 1 or has_vararg or n < 0:
            raise self.unknown_star(e, scope)
        i = stars[0]
        seq = values[i].value
        check = ir.call("len", [ir.clone(seq)])
        bad = self.to_name(gast.Compare(left=check, ops=[gast.NotEq()], comparators=[
            ir.const(n)]))
        fail = gast.Raise(exc=ir.call("TypeError", [ir.const(
            f"a *argument of length {n} expected here (the signature of the callee)")]),
            cause=None)
        fail.loc = self.loc
        self.emit(gast.If(test=bad, body=[fail], orelse=[]))
        items = [self.to_name(ir.subscript(ir.clone(seq), ir.const(k))) for k in range(n)]
        return values[:i] + items + values[i + 1:]

    def unknown_star(self, e, scope):
        return self.error("the length of a *argument is not known when transforming", e, scope,
                          fix="unpack it first (`a, b = t`) and pass the items, or build the "
                              "tuple in the function as a display")
