"""A-normal form of expressions (part of the normalizer, which mixes it in): each operation
emitted into a named temporary, the expression replaced by an atom."""
import builtins
import inspect
import sys

import gast
import numpy as np

from . import ir
from .controlflow import canonicalize
from .inline import Scope

# NumPy's index-trick objects: np.r_[...] and np.c_[...] are rewritten to the joins they make
INDEX_TRICKS = (np.r_, np.c_)

UNSUPPORTED = {gast.Try: "try/except", gast.With: "with", gast.ClassDef: "a class definition",
               gast.Import: "import", gast.ImportFrom: "import", gast.Delete: "del",
               gast.AsyncFunctionDef: "async def", gast.AsyncFor: "async for",
               gast.AsyncWith: "async with", gast.Global: "global", gast.Nonlocal: "nonlocal",
               gast.Yield: "yield", gast.YieldFrom: "yield from", gast.Await: "await",
               gast.NamedExpr: "the walrus operator :=", gast.Set: "a set",
               gast.SetComp: "a set comprehension", gast.Starred: "* unpacking",
               gast.Match: "match"}


def _is_user_module(obj):
    """A module of the user's (not NumPy's, strop's or the standard library's)."""
    if not inspect.ismodule(obj):
        return False
    top = obj.__name__.partition(".")[0]
    return top not in sys.stdlib_module_names and top not in ir.LIBRARIES | {"strop"} or \
        obj.__name__.startswith("strop.demo")


_MISSING = object()


class Expressions:
    """The expressions of Normalizer (a mixin: the names it reads are set by Normalizer)."""

    def expr(self, e, scope, into=None):
        """Normalize expression ``e``: emit its operations, return an atom (in ``into`` if set)."""
        kind = type(e)
        if kind in UNSUPPORTED:
            raise self.error(f"{UNSUPPORTED[kind]} is not supported inside a transformed function",
                             e, scope)
        if kind is gast.Constant:
            return self.to_name(e, into) if into else e
        if kind is gast.Compare or kind is gast.UnaryOp and isinstance(e.op, gast.Not):
            known = self.static_test(e, scope)   # of constants (inlined parameters'): its value
            if known is not None:
                return self.to_name(ir.const(known), into) if into else ir.const(known)
        if kind is gast.Name:
            atom = e if getattr(e, "normalized", False) else self.load(e.id, scope, e)
            return self.to_name(atom, into) if into else atom
        if kind is gast.Attribute:
            base = self.expr(e.value, scope)
            node = gast.Attribute(value=base, attr=e.attr, ctx=gast.Load())
            owner = self.attribute_owner(base, e.attr)
            if owner is not None:
                # helpers.h, cfg.scale, self.parser: read like a global of that module or
                # object's (current value)
                atom = self.global_atom(e.attr, owner, owner[e.attr], scope, e)
                return self.to_name(atom, into) if into else atom
            if self.is_ref(base):   # np.pi, np.float32: an atom
                return self.to_name(node, into) if into else node
            return self.to_name(node, into, force=True)
        if kind is gast.BinOp:
            left, right = self.expr(e.left, scope), self.expr(e.right, scope)
            # lst + [v], [x] * 3, W * [x, y]: see operands.py
            made = self.sequence_binop(e.op, (e.left, e.right), (left, right), into)
            if made is not None:
                return made
            return self.to_name(gast.BinOp(left=left, op=e.op, right=right), into)
        if kind is gast.UnaryOp:
            operand = self.expr(e.operand, scope)
            if isinstance(e.op, gast.USub) and isinstance(operand, gast.Constant) and \
                    isinstance(operand.value, (int, float)):   # -4 is a constant
                return self.to_name(ir.const(-operand.value), into) if into else \
                    ir.const(-operand.value)
            return self.to_name(gast.UnaryOp(op=e.op, operand=operand), into)
        if kind is gast.Compare:
            if len(e.ops) == 1:
                return self.to_name(gast.Compare(left=self.expr(e.left, scope), ops=e.ops,
                                                 comparators=[self.expr(e.comparators[0], scope)]),
                                    into)
            pairs = [gast.Compare(left=l, ops=[op], comparators=[r]) for l, op, r in zip(
                [e.left] + e.comparators[:-1], e.ops, e.comparators)]
            return self.expr(gast.BoolOp(op=gast.And(), values=pairs), scope, into)
        if kind is gast.BoolOp:
            target = into or self.namer.temp()
            self.expr(e.values[0], scope, into=target)
            rest = e.values[1:]
            if rest:
                sub = rest[0] if len(rest) == 1 else gast.BoolOp(op=e.op, values=rest)
                body = self.block_expr(sub, scope, target)
                test = ir.name(target)
                if isinstance(e.op, gast.Or):
                    test = gast.UnaryOp(op=gast.Not(), operand=test)
                    test = self.to_name(test)
                self.emit(gast.If(test=test, body=body, orelse=[]))
            return ir.name(target)
        if kind is gast.IfExp:
            target = into or self.namer.temp()
            test = self.expr(e.test, scope)
            body = self.block_expr(e.body, scope, target)
            orelse = self.block_expr(e.orelse, scope, target)
            self.emit(gast.If(test=test, body=body, orelse=orelse))
            return ir.name(target)
        if kind in (gast.Tuple, gast.List):
            # a display's items are atoms: a nested display gets a name (the derivative
            # passes read one level of display)
            elts = [self.expr(x, scope) for x in e.elts]
            elts = [self.to_name(x) if isinstance(x, (gast.Tuple, gast.List)) else x
                    for x in elts]
            node = kind(elts=elts, ctx=gast.Load())
            return self.to_name(node, into) if into else node
        if kind is gast.Dict:
            if any(k is None for k in e.keys):
                raise self.error("** in a dict display is not supported", e, scope)
            return self.to_name(gast.Dict(keys=[self.expr(k, scope) for k in e.keys],
                                          values=[self.expr(v, scope) for v in e.values]), into)
        if kind is gast.Subscript:
            if is_at(e.value):
                raise self.error("x.at[...] must be followed by .set/.add/.multiply/.min/.max/"
                                 ".get(...)", e, scope)
            base = self.expr(e.value, scope)
            trick = self.ref_object(base) if self.is_ref(base) else None
            if any(trick is t for t in INDEX_TRICKS):
                return self.index_trick(trick, e, scope, into)
            base = self.to_name(base)   # f(x)[1], f inlined: a display
            index = self.index(e.slice, scope)
            item = self.known_item(base, index) or self.function_item(base, index)
            # c[0] with c = (a, b): a; FUNS[0] with FUNS a tuple of functions: that one
            if item is not None:
                return self.to_name(item, into) if into else item
            made = self.table_item(base, index)
            if made is not None:   # self.shapes[layer] of a static table: its display
                return self.expr(made, scope, into)
            return self.to_name(gast.Subscript(value=base, slice=index, ctx=gast.Load()), into)
        if kind is gast.Call:
            return self.call(e, scope, into)
        if kind in (gast.ListComp, gast.GeneratorExp, gast.DictComp):
            return self.comprehension(e, scope, into)
        if kind is gast.JoinedStr:
            values = [gast.FormattedValue(value=self.expr(v.value, scope), conversion=v.conversion,
                                          format_spec=v.format_spec)
                      if isinstance(v, gast.FormattedValue) else v for v in e.values]
            return self.to_name(gast.JoinedStr(values=values), into)
        if kind is gast.Lambda:
            gen = self.namer.temp("_lambda")
            self.functions[gen] = (e, scope)
            return ir.name(gen)
        raise self.error(f"{kind.__name__} expressions are not supported", e, scope)

    def block_expr(self, e, scope, target):
        saved, self.out = self.out, []
        self.outer.append(saved)
        known = dict(self.displays)
        try:
            self.expr(e, scope, into=target)
            return self.out
        finally:
            self.outer.pop()
            self.out, self.displays = saved, known

    def index(self, s, scope):
        if isinstance(s, gast.Slice):
            parts = [self.expr(p, scope) if p is not None else None
                     for p in (s.lower, s.upper, s.step)]
            return gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(s, gast.Tuple):
            return gast.Tuple(elts=[self.index(x, scope) for x in s.elts], ctx=gast.Load())
        return self.expr(s, scope)

    def index_trick(self, trick, e, scope, into):
        """``np.r_[a, 0:3, b]`` / ``np.c_[a, b]`` as the NumPy calls they stand for, which have
        derivative and batching rules: items as ``np.atleast_1d`` (slices as ``np.arange`` or,
        with an imaginary step, ``np.linspace``) joined by ``np.concatenate``, columns by
        ``np.column_stack``.  A leading string directive may only name the axis (``'-1'``)."""
        items = list(e.slice.elts) if isinstance(e.slice, gast.Tuple) else [e.slice]
        name = "np.r_" if trick is np.r_ else "np.c_"
        axis = 0
        if items and isinstance(items[0], gast.Constant) and isinstance(items[0].value, str):
            directive = items.pop(0).value
            try:
                axis = int(directive)
            except ValueError:
                axis = None
            if axis is None or trick is np.c_:
                raise self.error(f"the directive {directive!r} of {name}[...] is not supported "
                                 "in a transformed function", e, scope,
                                 fix="write the np.concatenate / np.stack / np.reshape it "
                                     "stands for")
        npy = self.bind_ref("np", np)
        parts = []
        for item in items:
            if isinstance(item, gast.Slice):
                parts.append(self.to_name(self.trick_range(item, npy, e, scope)))
            elif isinstance(item, gast.Constant) and isinstance(item.value, str):
                raise self.error(f"a string inside {name}[...] is not supported", e, scope,
                                 fix="put the directive first, or use np.concatenate")
            elif trick is np.r_:
                parts.append(self.to_name(ir.call(ir.attr(npy, "atleast_1d"),
                                                  [self.expr(item, scope)])))
            else:
                parts.append(self.expr(item, scope))
        seq = gast.Tuple(elts=parts, ctx=gast.Load())   # Numba joins tuples
        if trick is np.c_:
            return self.to_name(ir.call(ir.attr(npy, "column_stack"), [seq]), into)
        return self.to_name(ir.call(ir.attr(npy, "concatenate"), [seq],
                                    [("axis", ir.const(axis))]), into)

    def trick_range(self, s, npy, e, scope):
        """A slice item of np.r_/np.c_: ``a:b:k`` is ``np.arange(a, b, k)``; ``a:b:nj`` (an
        imaginary constant step) is ``np.linspace(a, b, n)``."""
        start = self.expr(s.lower, scope) if s.lower is not None else ir.const(0)
        if s.upper is None:
            raise self.error("a slice without a stop inside np.r_/np.c_", e, scope)
        stop = self.expr(s.upper, scope)
        step = s.step
        if isinstance(step, gast.Constant) and isinstance(step.value, complex):
            count = ir.const(int(abs(step.value)))
            return ir.call(ir.attr(npy, "linspace"), [start, stop, count])
        step = self.expr(step, scope) if step is not None else ir.const(1)
        return ir.call(ir.attr(npy, "arange"), [start, stop, step])

    def index_value(self, s, scope):
        """An index written with slice syntax, as a value: ``1:, 0`` → ``(slice(1, None), 0)``."""
        return _index_value(self.index(s, scope))

    def attribute_owner(self, base, attr):
        """The namespace whose ``attr`` the attribute read ``base.attr`` reads, where ``base``
        is a reference to a user's module or object (its ``__dict__``, or for a value of the
        object's class that no descriptor computes, the class's), else None."""
        obj = self.ref_object(base) if self.is_ref(base) else None
        if _is_user_module(obj) or ir.is_user_object(obj):
            if attr in vars(obj):
                return vars(obj)
            if inspect.ismodule(obj):
                return None
            for cls in type(obj).__mro__:
                found = vars(cls).get(attr, _MISSING)
                if found is not _MISSING:
                    return vars(cls) if not hasattr(type(found), "__get__") or isinstance(
                        found, type) else None
        return None

    def is_ref(self, atom):
        while isinstance(atom, gast.Attribute):
            atom = atom.value
        return isinstance(atom, gast.Name) and atom.id in self.refs

    def ref_object(self, atom):
        if isinstance(atom, gast.Name):
            return self.refs.get(atom.id, getattr(builtins, atom.id, None))
        base = self.ref_object(atom.value)
        return getattr(base, atom.attr, None)

    def comprehension(self, e, scope, into):
        """``[elt for x in xs if c]`` as a loop appending to a local list (a temporary: in
        ``xs = [f(v) for v in xs]`` the loop reads the old ``xs``); over a display whose items
        are known (``[np.log(m) for m in moments]``, moments a gradient), without ``if``, the
        display of ``elt`` at each item: its structure is then known to what follows (a
        lax.fori_loop's carry, tree_map), as a display written out is."""
        inner = Scope(scope.parsed, scope.node, {}, parent=scope)
        for gen in e.generators:
            for n in gast.walk(gen.target):
                if isinstance(n, gast.Name):
                    inner.names[n.id] = self.namer.fresh(n.id)
        walked = e.generators[0].iter   # (range, zip, ...: the loop reads them by index)
        if not any(g.ifs for g in e.generators) and not isinstance(e, gast.DictComp) and not (
                isinstance(walked, gast.Call) and isinstance(walked.func, gast.Name) and
                walked.func.id in _INDEXED and self.scoped_name(walked.func.id, scope) is None):
            gen = e.generators[0]
            seq = self.expr(gen.iter, scope)
            seq = seq if isinstance(seq, gast.Name) else self.to_name(seq, force=True)
            made = self.unrolled(e, seq, 0, inner)
            if made is not None:
                return self.to_name(gast.List(elts=made, ctx=gast.Load()), into)
            alias = self.namer.fresh("_items")   # (evaluated once: read again by name)
            inner.names[alias] = seq.id
            e = ir.clone(e)
            e.generators[0].iter = gast.copy_location(ir.name(alias), gen.iter)
        target = self.namer.temp("_list")
        is_dict = isinstance(e, gast.DictComp)
        self.emit(ir.assign(target, gast.Dict(keys=[], values=[]) if is_dict else
                            gast.List(elts=[], ctx=gast.Load())))
        if is_dict:
            body = gast.Assign(targets=[gast.Subscript(value=ir.name(target, True), slice=e.key,
                                                       ctx=gast.Store())],
                               value=e.value, type_comment=None)
        else:
            body = gast.Expr(value=ir.call(ir.attr(target, "append"), [e.elt]))
        for gen in reversed(e.generators):
            for cond in reversed(gen.ifs):
                body = gast.If(test=cond, body=[body], orelse=[])
            body = gast.For(target=gen.target, iter=gen.iter, body=[body], orelse=[],
                            type_comment=None)
        for n in gast.walk(body):
            if getattr(n, "lineno", None) is None and isinstance(n, (gast.stmt, gast.expr)):
                gast.copy_location(n, e)
        inner.names[target] = target
        wrapper = gast.FunctionDef(name="_comp", args=gast.arguments(
            args=[], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
            defaults=[]), body=[body], decorator_list=[], returns=None, type_comment=None,
            type_params=[])
        canon = canonicalize(wrapper, self.namer, scope.parsed.location)
        loc = self.loc
        for s in canon.body:
            self.loc = loc
            self.stmt(s, inner)
        self.loc = loc
        return self.to_name(ir.name(target), into) if into else ir.name(target)

    def unrolled(self, e, seq, k, inner):
        """The atoms of the comprehension ``e``'s values from its ``k``-th generator on, over
        ``seq`` (that generator's iterable, normalized), or None where an iterable's items are
        not known (what was emitted for the items before is dead, and removed)."""
        items = self.display_items(seq)
        shape = self.static_shape(seq)
        if items is None and self.of_pytree(seq) and shape[0] in ("list", "tuple"):
            items = [self.item(seq, i) for i in range(len(shape[1]))]   # a pytree argument's
        if items is None:
            return None
        made = []
        for item in items:
            for n in gast.walk(e.generators[k].target):   # a name per item: each its rank
                if isinstance(n, gast.Name):
                    inner.names[n.id] = self.namer.fresh(n.id)
            self.assign(e.generators[k].target, item, inner)
            if k + 1 == len(e.generators):   # (a value of its own: the target is rebound)
                value = self.expr(e.elt, inner)
                made.append(value if isinstance(value, gast.Constant) else
                            self.to_name(value, force=True))
                continue
            deeper = self.unrolled(e, self.to_name(self.expr(e.generators[k + 1].iter, inner),
                                                   force=True), k + 1, inner)
            if deeper is None:
                return None
            made.extend(deeper)
        return made


# iterables the canonical loop walks by index (controlflow.py), left to it
_INDEXED = ("range", "zip", "enumerate", "reversed")


def _index_value(index):
    if isinstance(index, gast.Slice):
        parts = [p if p is not None else ir.const(None)
                 for p in (index.lower, index.upper, index.step)]
        if isinstance(parts[2], gast.Constant) and parts[2].value is None:
            parts.pop()
        return ir.call("slice", parts)
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[_index_value(x) for x in index.elts], ctx=gast.Load())
    return index


def is_at(node):
    return (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute)
            and node.value.attr == "at")
