"""A generator function a transformed function calls, rewritten to build the list it yields.

``for W, b in unpack_layers(weights)`` over ``def unpack_layers(w): for m, n in shapes: yield
...`` is how autograd's examples walk a network's layers.  A transformed function is pure, so
running the generator to its end before the loop takes its first value gives the same values:
the generator becomes a function that appends each yielded value to a list and returns it
(``yield from xs`` extends it), and everything that consumes an iterable (``for``, ``zip``,
``list``, ``sum``, comprehensions) reads that list as it reads any other.  What depends on the
generator being lazy is refused at its line: a value sent in (``x = yield v``), and a
``while True`` loop with no way out of it (the consumer would stop it; eagerly it never ends).
"""
import gast

from ..errors import TransformError
from .ir import clone, name
from .parse import own_nodes


def is_generator(node):
    """Whether the FunctionDef ``node`` yields (in its own body, not in a nested function)."""
    return any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in own_nodes(node.body))


def as_list_builder(node, location):
    """A copy of the generator FunctionDef ``node`` that returns the list of what it yields;
    ``location(node)``: where a user node is, for errors."""
    node = clone(node)
    taken = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    out = "_yielded"
    while out in taken:
        out += "_"
    _Rewrite(out, location).rewrite_body(node.body)
    start = gast.Assign(targets=[name(out, store=True)],
                        value=gast.List(elts=[], ctx=gast.Load()), type_comment=None)
    end = gast.Return(value=name(out))
    node.body = [gast.copy_location(start, node.body[0]), *node.body,
                 gast.copy_location(end, node.body[-1])]
    return node


class _Rewrite:
    def __init__(self, out, location):
        self.out, self.location = out, location

    def rewrite_body(self, stmts):
        for k, s in enumerate(stmts):
            stmts[k] = self.statement(s)
        return stmts

    def statement(self, s):
        if isinstance(s, gast.Expr) and isinstance(s.value, (gast.Yield, gast.YieldFrom)):
            y = s.value
            value = y.value if y.value is not None else gast.Constant(value=None, kind=None)
            method = "extend" if isinstance(y, gast.YieldFrom) else "append"
            call = gast.Call(func=gast.Attribute(value=name(self.out), attr=method,
                                                 ctx=gast.Load()), args=[value], keywords=[])
            return gast.copy_location(gast.Expr(value=call), s)
        if isinstance(s, gast.Return):   # (a generator's return value ends the iteration only)
            return gast.copy_location(gast.Return(value=name(self.out)), s)
        if isinstance(s, gast.While) and _always(s.test) and not _leaves(s.body):
            raise TransformError(
                "this generator loops forever (`while True` with no break or return): strop "
                "runs a generator a transformed function calls to its end before using its "
                "values, so only a consumer that stops could end it",
                self.location(s), fix="give the loop an end (the number of values wanted)")
        if isinstance(s, (gast.FunctionDef, gast.ClassDef)):
            return s
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list):
                self.rewrite_body(block)
        for handler in getattr(s, "handlers", []) or []:
            self.rewrite_body(handler.body)
        for n in own_nodes([s]):
            if isinstance(n, (gast.Yield, gast.YieldFrom)):   # left: one whose value is used
                raise TransformError(
                    "a yield whose value is used (`x = yield v`: a value sent into the "
                    "generator) is not supported: strop runs a generator a transformed function "
                    "calls to its end before using its values", self.location(n),
                    fix="pass the values in as an argument instead of sending them")
        return s


def _always(test):
    return isinstance(test, gast.Constant) and bool(test.value)


def _leaves(stmts):
    """Whether a loop body can end its loop: a return, or a break not inside an inner loop."""
    inner = {id(n) for s in own_nodes(stmts) if isinstance(s, (gast.For, gast.While))
             for n in own_nodes(s.body + s.orelse)}
    return any(isinstance(n, gast.Return) or isinstance(n, gast.Break) and id(n) not in inner
               for n in own_nodes(stmts))
