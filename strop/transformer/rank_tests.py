"""Branches on a value's rank decided where the code is made (``if x.ndim > 2:``).

Code written for arrays of several ranks tests the rank (autograd's convnet flattens its input
with ``if inputs.ndim > 2: inputs = inputs.reshape(...)``).  The code is made for the ranks
of the call's arguments (ranks.py), so such a test has one answer; compiled code that kept
both branches would give ``inputs`` a 4-d array on one path and a matrix on the other, a type
Numba cannot unify.  So the test is decided here and the branch it takes replaces the ``if``.

Only the function's own statements and the branches put in their place are looked at; a test
is decided where every name it reads is bound once in the function, to a number, ``x.ndim``,
``np.ndim(x)``, ``len(x.shape)`` or a comparison or ``not`` of those, ``x``'s rank known from
the statements before it (so a later rebinding of ``x`` cannot change it).
"""
import dataclasses
import operator

import gast
import numpy as np

from . import ir
from .ranks import ranks

_COMPARE = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
            gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge}


def decide_rank_tests(fn, given, callee):
    """``fn`` with each ``if`` whose test its ranks decide replaced by the branch taken (a
    new Function; ``fn`` itself where there is none); ``given``: parameter -> rank."""
    stored = {}
    for n in gast.walk(fn.node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            stored[n.id] = stored.get(n.id, 0) + 1
    decider = _Decider(given, callee, {n for n, k in stored.items() if k == 1})
    body = decider.statements(fn.node.body, [])
    if not decider.decided:
        return fn
    node = ir.clone(fn.node)
    node.body = ir.clone(body)   # (fn's own statements stay as they are: it may be shared)
    return dataclasses.replace(fn, node=node)


class _Decider:
    def __init__(self, given, callee, once):
        self.given, self.callee, self.once = given, callee, once
        self.known, self.decided = {}, False
        # the statements so far, each assignment a new version of its name, read by the
        # statements after it (ranks are joined over a name's bindings: ``x = a`` then
        # ``x = x.reshape(...)`` has one rank at each point); a loop or branch binds one
        # version for what it rebinds, from the one before it (joined, as before)
        self.prefix, self.latest = [], {}

    def statements(self, stmts, out):
        for s in stmts:
            if isinstance(s, gast.If) and isinstance(s.test, gast.Name) and \
                    s.test.id in self.known:
                self.decided = True
                self.statements(s.body if self.known[s.test.id] else s.orelse, out)
                continue
            if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                    s.targets[0], gast.Name) and s.targets[0].id in self.once:
                value = self.value(s.value)
                if value is not None:
                    self.known[s.targets[0].id] = value
            out.append(s)
            self.versioned(s)
        return out

    def versioned(self, s):
        s = ir.clone(s)
        target = s.targets[0] if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
            isinstance(s.targets[0], gast.Name) else None
        renames = dict(self.latest)   # what each name it reads is now
        if target is None:   # a loop, a branch: one version for all it rebinds
            for name in sorted({n.id for n in gast.walk(s) if isinstance(n, gast.Name)
                                and not isinstance(n.ctx, gast.Load)}):
                version = self.version(name)
                self.prefix.append(ir.assign(version, ir.name(self.latest.get(name, name))))
                renames[name] = self.latest[name] = version
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and n.id in renames and n is not target:
                n.id = renames[n.id]
        if target is not None:
            self.latest[target.id] = target.id = self.version(target.id)
        self.prefix.append(s)

    def version(self, name):
        return f"{name}__v{len(self.prefix)}"

    def value(self, e):
        """The int or bool ``e`` is where it runs (after the statements so far), else None."""
        if isinstance(e, gast.Constant) and type(e.value) in (int, bool):
            return e.value
        if isinstance(e, gast.Name):
            return self.known.get(e.id)
        if isinstance(e, gast.Attribute) and e.attr == "ndim":
            return self.rank(e.value)
        if isinstance(e, gast.Call) and len(e.args) == 1 and not e.keywords:
            fn = self.callee(e.func)
            if fn is np.ndim:
                return self.rank(e.args[0])
            if fn is len and isinstance(e.args[0], gast.Name):
                r = self.ranked(e.args[0])
                return r[1] if r[0] == "shape" and isinstance(r[1], int) else None
        if isinstance(e, gast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in _COMPARE:
            left, right = self.value(e.left), self.value(e.comparators[0])
            if left is not None and right is not None:
                return _COMPARE[type(e.ops[0])](left, right)
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.Not):
            v = self.value(e.operand)
            return None if v is None else not v
        return None

    def rank(self, atom):
        r = self.ranked(atom)[0] if isinstance(atom, gast.Name) else None
        return r if isinstance(r, int) else None

    def ranked(self, name):
        """(rank, kind) of the name ``name`` after the statements so far."""
        table = ranks(self.prefix, self.given, self.callee)
        return table.get(self.latest.get(name.id, name.id), (None, None))
