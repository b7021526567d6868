"""strop.lax in transformed code: each call is rewritten, while normalizing, into the Python it
means (part of the normalizer), so that grad, jvp, vmap, jit and strop.source need nothing new:

    cond(p, f, g, *ops)       if p: r = f(*ops)  else: r = g(*ops)
    switch(i, fs, *ops)       i clamped, then if i == 0: ... elif i == 1: ... else: ...
    while_loop(c, b, v)       v = init; while c(v): v = b(v)
    fori_loop(lo, hi, b, v)   for i in range(lo, hi): v = b(i, v)
    scan(f, c, xs)            for i in range(n): c, y = f(c, xs[i]); ys[i] = y
    map(f, xs)                scan without a carry

The functions are inlined (lambdas, nested defs, module functions, transforms), their lines
kept, so errors and ``strop.source``'s comments name the user's lines.  A carry is one variable
per leaf of its pytree (lax_trees.py), checked after each step to keep its structure (when
transforming) and its types (``carry_check``, when running), as JAX checks them.  The ys of
a scan go into arrays made from the first step's outputs: that step is written out before the
loop (Numba and the derivative passes need an array of a known type before the loop).

The other functions become NumPy (``select`` is ``np.where``) or the helpers of
runtime/lax.py, which have their own rules (rules/lax.py); the convolutions, the helpers of
runtime/conv.py (lax_conv.py).
"""
import inspect

import gast
import numpy as np

from ..config import config
from ..runtime import lax as rl
from ..errors import LaxTypeError, LaxValueError
from . import ir
from .coalesce import coalesce, rename
from .lax_arrays import LaxArrays
from .lax_conv import LaxConv
from .lax_trees import (LEAF, NONE, LaxTrees, forget, leaf_name, leaf_paths, same_structure,
                        text)

_FNS = "lax-fns"   # displays[(_FNS, name)]: the function atoms of a display of functions


class LaxLowering(LaxArrays, LaxConv, LaxTrees):
    """Mixed into the Normalizer: ``lax_call`` is its hook for a call of a strop.lax function."""

    def lax_call(self, fn, e, scope, into):
        kind = fn.__strop_lax__
        if any(isinstance(a, gast.Starred) for a in e.args) or any(
                k.arg is None for k in e.keywords):
            raise self.error(f"lax.{kind}: the length of a * argument is not known when "
                             "transforming", e, scope,
                             fix="pass the operands one by one, or unpack the tuple first")
        try:
            bound = inspect.signature(fn).bind(*e.args, **{k.arg: k.value for k in e.keywords})
        except TypeError as err:
            raise self.error(f"lax.{kind}: {err}", e, scope) from None
        self.lax_site = e, scope
        result = getattr(self, "lower_" + kind)(bound.arguments, e, scope)
        if into is None:
            return result
        return self.to_name(result, into) if not (isinstance(result, gast.Name)
                                                  and result.id == into) else result

    # --- the pieces: functions, sub-blocks, errors ----------------------------------------
    def note(self, node):
        super().note(node)
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            key, value = (_FNS, node.targets[0].id), node.value
            fns = value.elts if isinstance(value, (gast.Tuple, gast.List)) else None
            if fns and all(self.is_function(f) for f in fns):
                self.displays[key] = list(fns)
                if any(isinstance(f, gast.Name) and f.id in self.functions for f in fns) \
                        and self.out and self.out[-1] is node:
                    # a display of local functions is known here, never a value of the
                    # code (its lambdas are inlined where called, and have no name there)
                    self.out.pop()
            else:
                self.displays.pop(key, None)

    def is_function(self, atom):
        if isinstance(atom, gast.Name) and atom.id in self.functions:
            return True
        return self.is_ref(atom) and callable(self.ref_object(atom))

    def lax_function(self, node, scope, what):
        atom = self.expr(node, scope)
        if not self.is_function(atom):
            raise self.error(f"{what} must be a function: a lambda, a def, or a function of a "
                             "module", node, scope,
                             fix="pass the function itself (strop inlines it here)")
        return atom

    def lax_functions(self, node, scope, what):
        """The function atoms of a sequence of functions known when transforming: written in
        the call, a local display of them, or a global list or tuple of them."""
        if isinstance(node, (gast.List, gast.Tuple)):
            return [self.lax_function(f, scope, what) for f in node.elts]
        atom = self.expr(node, scope)
        if isinstance(atom, gast.Name) and (_FNS, atom.id) in self.displays:
            return self.displays[(_FNS, atom.id)]
        value = self.ref_object(atom) if self.is_ref(atom) else _global(node, scope)
        if isinstance(value, (list, tuple)) and all(callable(f) for f in value):
            return [ir.name(self.bind_ref(getattr(f, "__name__", "branch"), f)) for f in value]
        raise self.error(f"{what} must be a list or tuple of functions known when "
                         "transforming", node, scope,
                         fix="write the list in the call, or build it from functions in the "
                             "function or at module level")

    def apply(self, fn, args):
        """The atom of ``fn(*args)``, ``fn`` inlined (its statements emitted here)."""
        e, scope = self.lax_site
        call = gast.copy_location(gast.Call(func=_marked(fn), args=[_marked(a) for a in args],
                                            keywords=[]), e)
        # a parameter the function never rebinds names the operand itself: a copy made in
        # one branch only would leave forward mode a tangent defined on one path
        call.alias = True
        if isinstance(fn, gast.Name) and fn.id in self.functions:
            node, closure = self.functions[fn.id]
            result = self.inline_ast(node, closure, call, scope, None)
        else:
            result = self.call(call, scope, None)
        self.lax_site = e, scope   # an inner lax call moved it
        return result

    def sub_block(self, build, carried=()):
        """(statements, result) of ``build()`` emitted into a block of its own.  A loop's body
        (``carried``: the names it rebinds, its carry's) forgets what is known of those names
        and of displays holding them: what the body reads at its top a later trip rebinds at
        its end.  Nothing else is rebound in it: the inlined functions cannot assign the
        enclosing function's names, their own locals are fresh (so a copy of the carry into
        one can be coalesced)."""
        saved, self.out = self.out, []
        self.outer.append(saved)
        known, self.displays = self.displays, forget(self.displays, set(carried))
        try:
            result = build()
            if not carried:
                return self.out, result
            # the result's atoms name the body's variables too
            stmts, renamed = coalesce(self.out, set(carried))
            rename(result, renamed)
            return stmts, result
        finally:
            self.outer.pop()
            self.out, self.displays = saved, known

    def lax_error(self, kind, message, fix=None):
        e, scope = self.lax_site
        cls = LaxTypeError if kind is TypeError else LaxValueError
        return cls(message, scope.parsed.location(e), fix)

    def raise_if(self, test, kind, message):
        """``if test: raise kind(message)`` (a constant message: compiled code raises it)."""
        fail = gast.Raise(exc=ir.call(kind.__name__, [ir.const(message)]), cause=None)
        fail.loc = self.loc
        self.emit(gast.If(test=test, body=[fail], orelse=[]))

    def lax_helper(self, name):
        return ir.name(self.bind_ref(name, getattr(rl, name)))

    def np_call(self, attr, args, keywords=()):
        return self.to_name(ir.call(ir.attr(self.bind_ref("np", np), attr), args, keywords))

    def param_names(self, fn):
        if isinstance(fn, gast.Name) and fn.id in self.functions:
            node = self.functions[fn.id][0]
            return [a.id for a in node.args.posonlyargs + node.args.args]
        code = getattr(self.ref_object(fn), "__code__", None)
        return list(code.co_varnames[:code.co_argcount]) if code is not None else []

    def carry(self, init, fn, position, default):
        """(structure, init leaves, names) of a loop's carry: one variable per leaf, named
        after ``fn``'s parameter at ``position``, set to the initial value."""
        shape = self.static_shape(init)
        leaves = self.tree_leaves(init, shape)
        self.check_leaves(leaves, "a carry")
        params = self.param_names(fn)
        base = params[position] if position < len(params) else default
        names = [self.namer.fresh(leaf_name(base, p)) for p in leaf_paths(shape)]
        for n, leaf in zip(names, leaves):
            self.emit(ir.assign(n, leaf))
        return shape, leaves, names

    def check_leaves(self, leaves, what):
        """A global or closure variable holding a tuple, list or dict is data whose structure
        the code is not transformed for: say so rather than take it as one array."""
        for leaf in leaves:
            var = self.free.get(leaf.id) if isinstance(leaf, gast.Name) else None
            if var is not None and isinstance(var.read(), (tuple, list, dict)):
                raise self.lax_error(TypeError, f"{what} is the {type(var.read()).__name__} "
                                                f"`{var.user_name}` read from outside the "
                                                "function: strop follows the pytrees the "
                                                "function builds or is given",
                                     fix=f"pass `{var.user_name}` as an argument")

    def carry_in(self, shape, names):
        return self.tree_build(shape, iter([ir.name(n) for n in names]))

    def carry_out(self, what, shape, init, names, result, rshape):
        """The carry's variables set to what one step returned, after checking that it kept
        its structure (now) and its types (when the code runs)."""
        if shape == LEAF and rshape != LEAF:
            rshape = LEAF   # a carry not known here: the value a step made, whole
            result = self.to_name(result)
        if not same_structure(shape, rshape):
            raise self.lax_error(TypeError, rl.carry_structure_message(
                what, text(shape), text(rshape)))
        new = self.tree_leaves(result, rshape)
        paths = leaf_paths(shape)
        for path, old, leaf, name in zip(paths, init, new, names):
            if isinstance(leaf, gast.Name) and leaf.id == name:
                continue
            where = "carry" + "".join(f"[{k!r}]" for k in path) if path else "carry"
            self.to_name(ir.call(self.lax_helper("carry_check"), [
                ir.clone(old), ir.clone(leaf), ir.const(what), ir.const(where)]))
        # all at once: a leaf may be another leaf's variable (a swap)
        new = [self.to_name(leaf, force=True) if isinstance(leaf, gast.Name) and leaf.id in
               names and leaf.id != name else leaf for leaf, name in zip(new, names)]
        for name, leaf in zip(names, new):
            if not (isinstance(leaf, gast.Name) and leaf.id == name):
                self.emit(ir.assign(name, leaf))

    # --- control flow ----------------------------------------------------------------------
    def lower_cond(self, a, e, scope):
        pred = self.expr(a["pred"], scope)
        fns = [self.lax_function(a[n], scope, f"cond's {n}") for n in ("true_fun", "false_fun")]
        operands = [self.expr(o, scope) for o in a.get("operands", ())]
        return self.branches("cond", fns, operands, lambda k: pred)

    def lower_switch(self, a, e, scope):
        index = self.expr(a["index"], scope)
        fns = self.lax_functions(a["branches"], scope, "switch's branches")
        if not fns:
            raise self.lax_error(ValueError, "Empty branch sequence")
        operands = [self.expr(o, scope) for o in a.get("operands", ())]
        if len(fns) == 1:
            return self.apply(fns[0], operands)
        # clamped into range, as in JAX (and as vmap can run it on a batch of indices)
        low = self.np_call("maximum", [index, ir.const(0)])
        i = self.np_call("minimum", [low, ir.const(len(fns) - 1)])
        return self.branches("switch", fns, operands, lambda k: self.to_name(gast.Compare(
            left=ir.clone(i), ops=[gast.Eq()], comparators=[ir.const(k)])))

    def branches(self, what, fns, operands, test):
        """``if test(0): fns[0](*operands) elif test(1): ... else: fns[-1](*operands)``, each
        branch's leaves set into the same variables."""
        built = []
        for fn in fns:
            def run(fn=fn):
                result = self.apply(fn, operands)
                shape = self.static_shape(result)
                return shape, self.tree_leaves(result, shape)
            built.append(self.sub_block(run))
        shape = built[0][1][0]
        for k, (_, (other, _)) in enumerate(built[1:], 1):
            if not same_structure(shape, other):
                raise self.lax_error(TypeError, rl.branch_structure_message(
                    what, text(shape), text(other), k))
        paths = leaf_paths(shape)
        outs = [self.namer.temp(f"_{what}") for _ in paths]
        # each output's type, witnessed in each branch (runtime/lax.py, branch_type): compiled
        # code whose branches' output types differ does not compile; vmap running both
        # branches of a batched predicate compares them
        types = [self.namer.temp(f"_{what}_type") for _ in paths]
        texts = ["".join(f"[{k!r}]" for k in p) if len(paths) > 1 else "" for p in paths]
        x64 = bool(config.read("enable_x64"))
        blocks = []
        for k, (stmts, (_, leaves)) in enumerate(built):
            # the witnesses first: vmap's selection of lanes fails on shapes that differ
            stmts.extend(ir.assign(t, ir.call(self.lax_helper("branch_type"), [
                ir.clone(leaf), ir.const(None), ir.const(what), ir.const(k), ir.const(p),
                ir.const(x64)]),
                self.loc) for t, leaf, p in zip(types, leaves, texts))
            stmts.extend(ir.assign(o, leaf, self.loc) for o, leaf in zip(outs, leaves))
            blocks.append(stmts or [gast.Pass()])

        def chain(k):
            if k == len(blocks) - 1:
                return blocks[k]
            stmts, t = self.sub_block(lambda: test(k))
            return stmts + [ir.if_(t, blocks[k], chain(k + 1), self.loc)]
        for s in chain(0):
            self.emit(s)
        for t in types:
            self.to_name(ir.call(self.lax_helper("branch_types_agree"), [ir.name(t)]))
        return self.tree_build(shape, iter([ir.name(o) for o in outs]))

    def lower_while_loop(self, a, e, scope):
        cond = self.lax_function(a["cond_fun"], scope, "while_loop's cond_fun")
        body = self.lax_function(a["body_fun"], scope, "while_loop's body_fun")
        init = self.expr(a["init_val"], scope)
        shape, init_leaves, names = self.carry(init, body, 0, "val")
        test = self.namer.temp("_c")

        def check():
            self.to_name(self.apply(cond, [self.carry_in(shape, names)]), into=test)

        def step():
            result = self.apply(body, [self.carry_in(shape, names)])
            self.carry_out("while_loop", shape, init_leaves, names, result,
                           self.static_shape(result))
            check()
        check()
        stmts, _ = self.sub_block(step, names)
        self.emit(gast.While(test=ir.name(test), body=stmts or [gast.Pass()], orelse=[]))
        return self.carry_in(shape, names)

    def lower_fori_loop(self, a, e, scope):
        lower, upper = self.expr(a["lower"], scope), self.expr(a["upper"], scope)
        body = self.lax_function(a["body_fun"], scope, "fori_loop's body_fun")
        init = self.expr(a["init_val"], scope)
        shape, init_leaves, names = self.carry(init, body, 1, "val")
        params = self.param_names(body)
        i = self.namer.fresh(params[0] if params else "i")

        def step():
            result = self.apply(body, [ir.name(i), self.carry_in(shape, names)])
            self.carry_out("fori_loop", shape, init_leaves, names, result,
                           self.static_shape(result))
        stmts, _ = self.sub_block(step, names + [i])
        self.emit(gast.For(target=ir.name(i, store=True), iter=ir.call("range", [lower, upper]),
                           body=stmts or [gast.Pass()], orelse=[], type_comment=None))
        return self.carry_in(shape, names)

    def lower_scan(self, a, e, scope):
        f = self.lax_function(a["f"], scope, "scan's f")
        init = self.expr(a["init"], scope)
        xs = self.expr(a["xs"], scope) if "xs" in a else ir.const(None)
        length = a.get("length")
        length = self.expr(length, scope) if length is not None and not (
            isinstance(length, gast.Constant) and length.value is None) else None
        reverse = bool(self.static(a.get("reverse"), "scan's reverse", False))
        shape, init_leaves, names = self.carry(init, f, 0, "carry")

        def step(carry, x):
            result = self.apply(f, [carry, x])
            rshape = self.static_shape(result)
            if rshape[0] not in ("tuple", "list") or len(rshape[1]) != 2:
                raise self.lax_error(TypeError, f"scan body output must be a pair, got "
                                                f"{_pair_text(rshape)}.")
            (c, cshape), (y, yshape) = self.tree_children(result, rshape)
            # the outputs read before the carry is set: one may be the carry's variable
            ys = [self.to_name(leaf, force=True) if isinstance(leaf, gast.Name) and
                  leaf.id in names else leaf for leaf in self.tree_leaves(y, yshape)]
            self.carry_out("scan", shape, init_leaves, names, c, cshape)
            return self.tree_build(yshape, iter(ys)), yshape
        ys = self.scan_loop(step, shape, names, xs, length, reverse)
        carry = self.carry_in(shape, names)
        return gast.Tuple(elts=[self.to_name(v) if isinstance(v, (gast.Tuple, gast.List, gast.Dict))
                                else v for v in (carry, ys)], ctx=gast.Load())

    def lower_map(self, a, e, scope):
        f = self.lax_function(a["f"], scope, "map's f")
        xs = self.expr(a["xs"], scope)

        def step(carry, x):
            result = self.apply(f, [x])
            return result, self.static_shape(result)
        return self.scan_loop(step, ("tuple", ()), [], xs, None, False)

    def scan_loop(self, step, shape, names, xs, length, reverse):
        """The loop of a scan: ``step(carry, x)`` emits one step and returns (y, its
        structure); returns the ys, stacked."""
        xshape = self.static_shape(xs)
        xleaves = self.tree_leaves(xs, xshape)
        self.check_leaves(xleaves, "scan's xs")
        n = self.scan_length(xleaves, length)
        i = self.namer.fresh("i")

        def one(index):
            x = self.tree_build(xshape, iter([self.to_name(ir.subscript(ir.clone(leaf), index))
                                             for leaf in xleaves]))
            y, yshape = step(self.carry_in(shape, names), x)
            return yshape, self.tree_leaves(y, yshape)
        stmts, (yshape, ys) = self.sub_block(lambda: one(ir.name(i)), names + [i])
        last = self.to_name(gast.BinOp(left=n, op=gast.Sub(), right=ir.const(1))) \
            if reverse else None
        if not ys:
            span = [last, ir.const(-1), ir.const(-1)] if reverse else [n]
        else:
            # the first step written out: its outputs give the type of the arrays of ys
            empty = self.to_name(gast.Compare(left=ir.clone(n), ops=[gast.Eq()],
                                              comparators=[ir.const(0)]))
            self.raise_if(empty, ValueError, "scan over no elements with outputs: strop runs "
                                             "f to learn their types, so it cannot make "
                                             "the empty ys")
            first = last if reverse else ir.const(0)
            _, firsts = one(first)
            stacks = [self.namer.fresh("ys") for _ in firsts]
            for stack, y in zip(stacks, firsts):
                size = gast.BinOp(left=gast.Tuple(elts=[ir.clone(n)], ctx=gast.Load()),
                                  op=gast.Add(), right=self.np_call("shape", [y]))
                dtype = ir.attr(self.np_call("asarray", [y]), "dtype")
                made = self.np_call("zeros", [self.to_name(size), self.to_name(dtype)])
                self.emit(ir.assign(stack, ir.call(self.helper("setitem"), [
                    made, ir.clone(first), y])))
            for stack, y in zip(stacks, ys):
                stmts.append(ir.assign(stack, ir.call(self.helper("setitem"), [
                    ir.name(stack), ir.name(i), y]), self.loc))
            if reverse:
                before = self.to_name(gast.BinOp(left=last, op=gast.Sub(), right=ir.const(1)))
                span = [before, ir.const(-1), ir.const(-1)]
            else:
                span = [ir.const(1), n]
            ys = [ir.name(s) for s in stacks]
        self.emit(gast.For(target=ir.name(i, store=True), iter=ir.call("range", span),
                           body=stmts or [gast.Pass()], orelse=[], type_comment=None))
        return self.tree_build(yshape, iter(ys))

    def scan_length(self, leaves, length):
        """The trip count: ``length``, or the leading axis of the leaves of ``xs``, which must
        agree (checked when the code runs)."""
        if length is None and not leaves:
            raise self.lax_error(ValueError, "scan got no values to scan over and `length` "
                                             "not provided.")
        n = length if length is not None else self.to_name(ir.call("len", [leaves[0]]))
        for leaf in leaves if length is not None else leaves[1:]:
            size = self.to_name(ir.call("len", [leaf]))
            bad = self.to_name(gast.Compare(left=size, ops=[gast.NotEq()],
                                            comparators=[ir.clone(n)]))
            self.raise_if(bad, ValueError, "scan got `length` argument which disagrees with "
                          "leading axis sizes" if length is not None else rl.SCAN_LENGTHS)
        return n

    def static(self, node, what, default):
        """The value of an argument that must be known when transforming (a constant)."""
        if node is None:
            return default
        atom = self.expr(node, self.lax_site[1])
        if isinstance(atom, gast.Constant):
            return atom.value
        if self.is_ref(atom):
            return self.ref_object(atom)
        known = self.display_constant(atom)
        if known is not None:   # a display of constants, passed in
            return known
        raise self.lax_error(TypeError, f"{what} must be known when transforming (a constant)")


def _marked(atom):
    """An atom of normalized code given back to the normalizer: its names are not the user's
    to look up again."""
    atom = ir.clone(atom)
    for n in gast.walk(atom):
        if isinstance(n, gast.Name):
            n.normalized = True
    return atom


def _global(node, scope):
    if isinstance(node, gast.Name):
        kind, value = scope.parsed.resolve(node.id)
        return value
    return None


def _pair_text(shape):
    if shape == LEAF:
        return "a value that is not a tuple written in the function"
    if shape == NONE:
        return "None"
    return text(shape)
