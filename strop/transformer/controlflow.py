"""Control-flow canonicalization, on the user's AST before A-normal form.

After it a function has: ``for`` only over ``range(...)``, no ``break``/``continue`` (flags and
guards instead), and at most one ``return``, last.  Reverse mode, forward mode and vmap then
only ever see structured ``if``/``while``/``for range``.
"""

import gast

from ..errors import TransformError
from .ir import call, clone, const, name

RETURN, BREAK, CONTINUE = "return", "break", "continue"
ITERABLE = "__strop_iterable__"   # stands for runtime.iterable until names are resolved


def _set(flag, value, like):
    node = gast.Assign(targets=[name(flag, store=True)], value=const(value), type_comment=None)
    return gast.copy_location(node, like)


def _not(flag):
    return gast.UnaryOp(op=gast.Not(), operand=name(flag))


def _and(*tests):
    tests = [t for t in tests if t is not None]
    return tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.And(), values=tests)


class _Loop:
    def __init__(self):
        self.brk = self.cont = None


class Canonicalizer:
    def __init__(self, namer, location):
        self.namer, self.location = namer, location
        self.done = self.retval = None

    def function(self, node):
        node.body = _else_after_return(node.body)
        returns = [n for n in gast.walk(node) if isinstance(n, gast.Return)]
        simple = (len(returns) == 0 or len(returns) == 1 and node.body[-1] is returns[0])
        if not simple and len(returns) == _count_tail_returns(node.body):
            # every return ends a path: assign the result there, return it once at the end
            # (loops still lose their break and continue, below)
            self.retval = self.namer.fresh("_retval")
            body, _ = self.block(_tail_assign(node.body, self.retval), None)
            node.body = body + [
                gast.copy_location(gast.Return(value=name(self.retval)), returns[-1])]
            return node
        if not simple:
            self.done, self.retval = self.namer.fresh("_done"), self.namer.fresh("_retval")
        body, _ = self.block(node.body, None)
        if not simple:
            first = node.body[0]
            body = [_set(self.done, False, first)] + body
            body.append(gast.copy_location(gast.Return(value=name(self.retval)), node.body[-1]))
        node.body = body
        return node

    def block(self, stmts, loop):
        out, exits = [], set()
        for i, s in enumerate(stmts):
            new, ex = self.stmt(s, loop)
            out.extend(new)
            exits |= ex
            if ex and i + 1 < len(stmts):
                rest, rest_ex = self.block(stmts[i + 1:], loop)
                if rest:
                    out.append(gast.copy_location(
                        gast.If(test=self.guard(ex, loop), body=rest, orelse=[]), stmts[i + 1]))
                return out, exits | rest_ex
        return out, exits

    def guard(self, exits, loop):
        flags = [self.done if RETURN in exits else None,
                 loop.brk if loop and BREAK in exits else None,
                 loop.cont if loop and CONTINUE in exits else None]
        return _and(*[_not(f) for f in flags if f])

    def stmt(self, s, loop):
        if isinstance(s, gast.Return):
            if self.done is None:
                return [s], set()
            value = s.value if s.value is not None else const(None)
            assign = gast.copy_location(gast.Assign(targets=[name(self.retval, store=True)],
                                                    value=value, type_comment=None), s)
            return [assign, _set(self.done, True, s)], {RETURN}
        if isinstance(s, (gast.Break, gast.Continue)):
            if loop is None:
                raise TransformError(f"'{type(s).__name__.lower()}' outside a loop", self.location(s))
            kind = BREAK if isinstance(s, gast.Break) else CONTINUE
            if kind == BREAK:
                loop.brk = loop.brk or self.namer.fresh("_break")
            else:
                loop.cont = loop.cont or self.namer.fresh("_continue")
            return [_set(loop.brk if kind == BREAK else loop.cont, True, s)], {kind}
        if isinstance(s, gast.If):
            body, ex1 = self.block(s.body, loop)
            orelse, ex2 = self.block(s.orelse, loop)
            s.body, s.orelse = body or [gast.copy_location(gast.Pass(), s)], orelse
            return [s], ex1 | ex2
        if isinstance(s, gast.While):
            return self.while_(s, loop)
        if isinstance(s, gast.For):
            return self.for_(s, loop)
        return [s], set()

    def loop_body(self, body, like):
        inner = _Loop()
        new, exits = self.block(body, inner)
        if inner.cont:
            new = [_set(inner.cont, False, like)] + new
        return new, exits, inner

    def while_(self, s, outer):
        body, exits, inner = self.loop_body(s.body, s)
        stop = [_not(f) for f in (inner.brk, self.done if RETURN in exits else None) if f]
        s.test = _and(*stop, s.test)
        s.body = body
        pre = [_set(inner.brk, False, s)] if inner.brk else []
        return self.with_else(pre + [s], s, inner, outer, exits & {RETURN})

    def with_else(self, stmts, s, inner, outer, exits):
        """The loop's ``else:`` block runs when no ``break`` (nor return) ended the loop."""
        orelse, s.orelse = s.orelse, []
        if not orelse:
            return stmts, exits
        body, ex = self.block(orelse, outer)
        test = self.guard(exits | ({BREAK} if inner.brk else set()), inner) if (
            inner.brk or exits) else None
        if test is not None:
            body = [gast.copy_location(gast.If(test=test, body=body, orelse=[]), s)]
        return stmts + body, exits | ex

    def for_(self, s, outer):
        pre, s = self.over_range(s)
        body, exits, inner = self.loop_body(s.body, s)
        if not (inner.brk or RETURN in exits):
            s.body = body
            return self.with_else(pre + [s], s, inner, outer, exits & {RETURN})
        # A loop that can stop early becomes a while loop over a counter.
        k, n = self.namer.fresh("_k"), self.namer.fresh("_n")
        start, stop, step = _range_args(s.iter)
        simple = _is_const(start, 0) and _is_const(step, 1)
        index = name(k) if simple else gast.BinOp(
            left=start, op=gast.Add(), right=gast.BinOp(left=name(k), op=gast.Mult(), right=step))
        loc = lambda node: gast.copy_location(node, s)  # noqa: E731
        target = loc(gast.Assign(targets=[s.target], value=index, type_comment=None))
        bump = loc(gast.Assign(targets=[name(k, store=True)], type_comment=None,
                               value=gast.BinOp(left=name(k), op=gast.Add(), right=const(1))))
        stop_flags = [_not(f) for f in (inner.brk, self.done if RETURN in exits else None) if f]
        test = _and(*stop_flags, gast.Compare(left=name(k), ops=[gast.Lt()], comparators=[name(n)]))
        loop = loc(gast.While(test=test, body=[target] + body + [bump], orelse=[]))
        init = [loc(gast.Assign(targets=[name(n, store=True)], type_comment=None,
                                value=stop if simple else
                                call("len", [call("range", [start, stop, step])]))),
                _set(k, 0, s)] + ([_set(inner.brk, False, s)] if inner.brk else [])
        return self.with_else(pre + init + [loop], s, inner, outer, exits & {RETURN})

    def over_range(self, s):
        """Rewrite ``for target in <iterable>`` as ``for i in range(...)`` plus an element read."""
        it = s.iter
        fname = it.func.id if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) else None
        if fname == "range" and isinstance(s.target, gast.Name):
            return [], s
        inner = it.args[0] if fname == "reversed" and len(it.args) == 1 else None
        if (isinstance(inner, gast.Call) and isinstance(inner.func, gast.Name)
                and inner.func.id == "range" and isinstance(s.target, gast.Name)):
            # reversed(range(a, b, k)) is range(a + (n - 1) * k, a - k, -k), n its length
            start, _, step = _range_args(inner)
            n = call("len", [inner])
            last = gast.BinOp(left=start, op=gast.Add(), right=gast.BinOp(
                left=gast.BinOp(left=n, op=gast.Sub(), right=const(1)), op=gast.Mult(),
                right=step))
            before = gast.BinOp(left=clone(start), op=gast.Sub(),
                                right=clone(step))
            s.iter = call("range", [last, before, gast.UnaryOp(op=gast.USub(),
                                                              operand=clone(step))])
            return [], s
        loc = lambda node: gast.copy_location(node, s)  # noqa: E731
        k = self.namer.fresh("_i")
        pre, reads = [], []

        def sequence(expr, base="_seq"):
            if isinstance(expr, gast.Name):
                return expr.id
            seq = self.namer.fresh(base)
            pre.append(loc(gast.Assign(targets=[name(seq, store=True)], value=expr,
                                       type_comment=None)))
            return seq

        length, item = self.walk(it, sequence)
        value = item(name(k))
        reads.append(loc(gast.Assign(targets=[s.target], value=value, type_comment=None)))
        new = loc(gast.For(target=name(k, store=True), iter=call("range", [length]),
                           body=reads + s.body, orelse=s.orelse, type_comment=None))
        return pre, new


    def walk(self, it, sequence):
        """(length, item) of what ``for`` walks: ``item(i)`` reads its i-th element.  zip,
        enumerate and reversed, nested in any way, read their sequences by index; any other
        iterable is bound once to a sequence (a dict walks its keys)."""
        fname = it.func.id if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
            not it.keywords else None
        if fname == "enumerate" and len(it.args) in (1, 2):
            length, inner = self.walk(it.args[0], sequence)
            start = it.args[1] if len(it.args) == 2 else None
            return length, lambda i: gast.Tuple(elts=[clone(i) if start is None else gast.BinOp(
                left=i, op=gast.Add(), right=clone(start)), inner(i)], ctx=gast.Load())
        if fname == "zip" and it.args and not any(isinstance(a, gast.Starred)
                                                  for a in it.args):   # (zip(*xs): as a list)
            parts = [self.walk(a, sequence) for a in it.args]
            length = parts[0][0] if len(parts) == 1 else call("min", [n for n, _ in parts])
            return length, lambda i: gast.Tuple(elts=[item(clone(i)) for _, item in parts],
                                                ctx=gast.Load())
        if fname == "reversed" and len(it.args) == 1:
            length, inner = self.walk(it.args[0], sequence)
            return length, lambda i: inner(gast.BinOp(left=gast.BinOp(
                left=clone(length), op=gast.Sub(), right=const(1)), op=gast.Sub(), right=i))
        if fname != "range" and not isinstance(it, (gast.List, gast.Tuple)):
            if (isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute)
                    and it.func.attr in ("items", "keys", "values") and not it.args):
                it = call("list", [it])
            else:   # a dict walks its keys
                it = call(ITERABLE, [it])
        seq = sequence(it)
        return call("len", [name(seq)]), lambda i: gast.Subscript(value=name(seq), slice=i,
                                                                  ctx=gast.Load())


def _always_returns(stmts):
    last = stmts[-1] if stmts else None
    return isinstance(last, gast.Return) or (
        isinstance(last, gast.If) and _always_returns(last.body) and _always_returns(last.orelse))


def _else_after_return(stmts):
    """``if c: return a`` followed by more code: the code goes into the ``else`` branch."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, gast.If):
            rest = stmts[i + 1:]
            if rest and _always_returns(s.body):
                s.orelse = s.orelse + rest
                rest = []
            elif rest and _always_returns(s.orelse) and s.orelse:
                s.body = s.body + rest
                rest = []
            s.body, s.orelse = _else_after_return(s.body), _else_after_return(s.orelse)
            out.append(s)
            if not rest:
                return out
            continue
        out.append(s)
        if isinstance(s, gast.Return):
            return out
    return out


def _count_tail_returns(stmts):
    last = stmts[-1] if stmts else None
    if isinstance(last, gast.Return):
        return 1
    if isinstance(last, gast.If) and _always_returns(last.body) and _always_returns(last.orelse):
        return _count_tail_returns(last.body) + _count_tail_returns(last.orelse)
    return 0


def _tail_assign(stmts, retval):
    last = stmts[-1]
    if isinstance(last, gast.Return):
        value = last.value if last.value is not None else const(None)
        return stmts[:-1] + [gast.copy_location(gast.Assign(
            targets=[name(retval, store=True)], value=value, type_comment=None), last)]
    last.body, last.orelse = _tail_assign(last.body, retval), _tail_assign(last.orelse, retval)
    return stmts


def _is_const(node, value):
    return isinstance(node, gast.Constant) and node.value == value


def _range_args(it):
    args = list(it.args)
    if len(args) == 1:
        return const(0), args[0], const(1)
    if len(args) == 2:
        return args[0], args[1], const(1)
    return args[0], args[1], args[2]


def canonicalize(node, namer, location):
    """A canonical copy of the FunctionDef ``node``."""
    return Canonicalizer(namer, location).function(clone(node))
