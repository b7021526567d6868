"""Transforms called inside transformed code (part of the normalizer, which mixes it in).

``grad(g)``, ``vmap(g)``, ``jit(g)`` met in a function being transformed are made while it
is normalized, from the functions they are given (known now: module-level functions, local
ones lifted with their locals passed in, partials of them) and their options, then their
generated code is inlined at the call: staged for what the arguments are known to be there
(call_kinds.py), a pytree argument as its leaves and grad's gradients rebuilt as displays.
``partial(g, values)`` given to a transform passes the values the code computes as leading
arguments the transform neither maps nor differentiates; ``jvp(f, primals, tangents)`` in
code being differentiated is the jvp transform of ``f`` inlined (a Hessian-vector product).
"""
import functools

import gast

from ..errors import TransformError
from . import ir
from .call_kinds import TREE
from .flat_results import rebuilt_display
from .flatten import Attr, leaf_paths
from .unparse import unparse


class Nested:
    """The nested transforms of Normalizer (a mixin: the names it reads are set there)."""

    def jvp_call(self, obj, e, pairs, scope, into):
        """jvp(f, (x,), (v,)) inside code being differentiated: the jvp transform of f,
        called with the primals and the tangents (a Hessian-vector product is
        jvp(grad(f), ...)); elsewhere it stays a call of jvp, which checks its lax branches'
        types when it runs."""
        primals, tangents = pairs
        made = obj.transform(self.static_value(e.args[0], scope), len(primals))
        atom = ir.name(self.bind_ref(f"jvp_{getattr(made.fun, '__name__', 'f')}", made))
        atom.normalized = True
        return self.call(gast.Call(func=atom, args=primals + tangents, keywords=[]),
                         scope, into)

    def made_transform(self, obj, e, scope, into):
        """grad(g) inside the function: the transform built now (its arguments are functions
        and options known here), called like any other function."""
        args = [self.static_value(a, scope) for a in e.args]
        kws = {k.arg: self.static_value(k.value, scope) for k in e.keywords}
        made = obj(*args, **kws)
        base = f"{obj.__name__}_{getattr(args[0] if args else None, '__name__', 'f')}"
        atom = ir.name(self.bind_ref(base, made))    # e.g. grad_g: called like g
        return self.to_name(atom, into) if into else atom

    def inline_transform(self, obj, e, scope, into):
        """A strop transform called inside: its generated code inlined, taking the free
        variables it reads as trailing arguments (jit(vmap(f)): vmap(f)'s code)."""
        obj, e = self.with_defaults(obj, e, scope)
        inner = obj.plain or obj     # a transform inlined for arguments of any kind
        if not hasattr(inner, "inlined"):   # (custom rules know theirs)
            st = inner.staged()
            self.guards.extend(st.fn.guards)
            extra = [self.free_or_local(v) for v in st.fn.free.values()]
            return self.inline_object(st.generated.function, e, scope, into, extra)
        npassed = None if any(isinstance(a, gast.Starred) for a in e.args) else len(e.args)
        e, kinds = self.with_kinds(inner, e, scope)
        st = inner.inlined(npassed, kinds)   # f(*xs): staged for the arguments passed here
        self.guards.extend(st.fn.guards)   # a function its code was made for rebound
        extra = [self.free_or_local(v) for v in st.fn.free.values()]
        if not kinds and st.fn.result_tree is None:
            return self.arrays_at_leaves(inner, self.inline_object(
                st.generated.function, e, scope, into, extra))
        out = self.inline_object(st.generated.function, e, scope, None, extra)
        if not isinstance(out, gast.Name):
            out = self.to_name(out, force=True)
        out.normalized = True

        def read(x, k):
            item = ir.subscript(x, ir.const(k))
            item.normalized = True
            return item
        if st.fn.result_tree is not None:   # jit's code returns leaves: the display again
            leaves = out
            out = self.once(rebuilt_display(st.fn.result_tree, lambda k: read(leaves, k)),
                            scope)
        rebuilt = inner.rebuilt_inline(out, kinds, read, self.gradient_display) if kinds \
            else None
        if rebuilt is None:
            return self.arrays_at_leaves(inner, self.to_name(out, into) if into else out)
        made = self.expr(rebuilt, scope, into)
        if all(_of_displays(k[1]) for k in kinds if type(k) is tuple):
            self.mark_array_leaves(made)   # (tree_map over them: normalize_trees.py)
        return self.arrays_at_leaves(inner, made)

    def gradient_display(self, kind, leaves):
        """The display of a gradient of the pytree argument of ``kind``, from the reads of its
        ``leaves``: each leaf bound to a name, known to have the rank its argument's leaf has
        (a loop carrying the parameters it updates keeps their ranks: call_kinds.py)."""
        seen = {}
        named = [self.to_name(self.one_read(leaf, seen), force=True) for leaf in leaves]
        for atom, leaf_kind in zip(named, kind[2]):
            atom.normalized = True
            if isinstance(leaf_kind, str):
                self.leaf_kinds[atom.id] = leaf_kind
        return self.tree_display(kind[1].unflatten(range(len(named))), named)

    def one_read(self, read, seen):
        """``x[i][j]`` as ``_t = x[i]``, then ``_t[j]`` (one operation per assignment), each
        inner read made once (``seen``: its source -> its name)."""
        if isinstance(read, gast.Subscript) and isinstance(read.value, gast.Subscript):
            key = unparse(read.value)
            if key not in seen:
                seen[key] = self.to_name(self.one_read(read.value, seen), force=True)
            base = ir.clone(seen[key])
            base.normalized = True
            read = gast.Subscript(value=base, slice=read.slice, ctx=gast.Load())
            read.normalized = True
        return read

    def arrays_at_leaves(self, inner, made):
        """``made``, the result of the transform ``inner`` inlined, with the leaves of its
        displays marked as arrays where the transform makes them so (vmap's: tree_map over
        per-example values then unrolls, normalize_trees.py)."""
        if not inner.returns_arrays:
            return made
        if isinstance(made, (gast.Tuple, gast.List, gast.Dict)):
            made = self.to_name(made, force=True)
        if isinstance(made, gast.Name):
            self.mark_array_leaves(made)
        return made

    def static_value(self, node, scope):
        """The value of an argument known when transforming: a constant, a bound object, or a
        local function (which cannot be passed to a transform: say so)."""
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, (gast.Tuple, gast.List)):
            return tuple(self.static_value(x, scope) for x in node.elts)
        if self.is_partial(node, scope):   # partial(f, g, k=1) of values known here
            return functools.partial(*[self.static_value(a, scope) for a in node.args], **{
                k.arg: self.static_value(k.value, scope) for k in node.keywords})
        atom = self.expr(node, scope)
        if self.is_ref(atom):
            return self.ref_object(atom)
        if isinstance(atom, gast.Name) and atom.id in self.functions:
            return self.lift(atom.id, node, scope)
        raise self.error("a strop transform inside a transformed function must be given a "
                         "function defined at module level (or a constant)", node, scope,
                         fix="define the function outside, or compose the transforms outside: "
                             "grad(grad(f))")

    def transform_of_partial(self, func, e, scope):
        """``T(partial(g, *a))(*xs)`` as a call of ``T`` of ``g`` itself with the bound values
        passed first, which ``T`` does not map or differentiate: ``vmap`` gets ``None`` for
        them in ``in_axes``, ``grad`` its ``argnums`` moved past them, ``jit`` is the call.
        The bound values may be values the code computes (JAX's per-example idiom
        ``vmap(partial(predict, params))(inputs)``).  None where it cannot be said so."""
        obj = self.ref_object(self.expr(func.func, scope)) if self._names_ref(
            func.func, scope) else None
        kind = getattr(obj, "__name__", None) if getattr(
            obj, "__strop_transform__", False) else None
        part = func.args[0]
        if kind not in ("vmap", "jit", "grad", "value_and_grad") or part.keywords or any(
                isinstance(a, gast.Starred) for a in e.args) or e.keywords:
            return None
        target, bound = self.static_prefix(part, scope)
        if target is None:
            return None
        options = {k.arg: k.value for k in func.keywords}
        names = {"vmap": ("in_axes", "out_axes", "axis_size"),
                 "grad": ("argnums", "has_aux"), "value_and_grad": ("argnums", "has_aux"),
                 "jit": ()}[kind]
        for name, value in zip(names, func.args[1:]):
            options[name] = value
        if kind == "jit":
            return gast.Call(func=target, args=bound + e.args, keywords=[]) if \
                len(func.args) == 1 and not options else None
        try:
            values = {k: self.static_value(v, scope) for k, v in options.items()}
        except TransformError:
            return None
        if kind == "vmap":
            axes = values.get("in_axes", 0)
            axes = (axes,) * len(e.args) if isinstance(axes, int) or axes is None else axes
            if not isinstance(axes, tuple) or not all(a is None or type(a) is int
                                                      for a in axes):
                return None
            values["in_axes"] = (None,) * len(bound) + axes
        else:
            nums = values.get("argnums", 0)
            values["argnums"] = nums + len(bound) if type(nums) is int else tuple(
                n + len(bound) for n in nums)
        keywords = [gast.keyword(arg=k, value=_option(v)) for k, v in values.items()]
        made = gast.Call(func=func.func, args=[target], keywords=keywords)
        return gast.Call(func=made, args=bound + e.args, keywords=[])

    def static_prefix(self, part, scope):
        """(the function ``partial(g, *args)`` binds with the leading arguments known while
        transforming (functions, constants), the rest: values the code computes), or
        (None, None) when all are known (the transform takes the partial itself) or a known
        one follows a computed one."""
        known = []
        for a in part.args:
            try:
                known.append(self.static_value(a, scope))
            except TransformError:
                break
        rest = part.args[len(known):]
        if not rest or not known:
            return None, None
        for a in rest:
            try:
                self.static_value(a, scope)
            except TransformError:
                continue
            return None, None   # partial(g, x, f): a function after a computed value
        fn = functools.partial(*known) if len(known) > 1 else known[0]
        atom = ir.name(self.bind_ref(getattr(known[0], "__name__", "f"), fn))
        atom.normalized = True
        return atom, rest

    def bind_transform_of_partial(self, user_name, value, scope):
        """``f = vmap(partial(g, params))`` (values the code computes bound), ``f`` bound
        nowhere else: a call ``f(x)`` is ``vmap(partial(g, params))(x)`` with the values as
        bound here, made by transform_of_partial.  False for other values."""
        if not (isinstance(value, gast.Call) and value.args and self.is_partial(
                value.args[0], scope) and self.makes_transform(value, scope)):
            return False
        if not self.bound_once(user_name, scope):
            return False
        part = value.args[0]
        kept = functools.partial(self.kept, scope=scope)
        made = gast.Call(func=part.func, args=[part.args[0]] + [kept(a) for a in part.args[1:]],
                         keywords=[gast.keyword(arg=k.arg, value=kept(k.value))
                                   for k in part.keywords])
        self.deferred[self.store_name(user_name, scope)] = gast.Call(
            func=value.func, args=[made] + value.args[1:], keywords=value.keywords)
        return True

    def with_kinds(self, made, e, scope):
        """(the call with its arguments normalized, the kind of each of ``made``'s
        parameters in order) for a transform called inside (call_kinds.py); kinds None
        where the call does not pass each parameter once, plainly."""
        names = list(made.signature.parameters)
        if self.param_kinds is None or any(isinstance(a, gast.Starred) for a in e.args) or \
                any(k.arg is None for k in e.keywords) or len(e.args) + len(e.keywords) != \
                len(names) or [k.arg for k in e.keywords] != names[len(e.args):]:
            return e, None

        def atom(node):
            a = self.to_name(self.expr(node, scope))   # ([a, b]: its items are names of
            a.normalized = True                         # this code, not the user's)
            return a
        args = [atom(a) for a in e.args]
        keywords = [gast.keyword(arg=k.arg, value=atom(k.value)) for k in e.keywords]
        kinds = list(self.kinds_at(args + [k.value for k in keywords]))
        passed = []   # a pytree whose structure is known: its leaves, as the code takes them
        for i, a in enumerate(args):
            paths = leaf_paths(kinds[i][1]) if type(kinds[i]) is tuple and \
                made.takes_leaves() else None
            if paths is not None and any(isinstance(s, Attr) for p in paths for s in p):
                paths = None   # (a registered class's: the code rebuilds it whole)
            if paths is None:
                kinds[i] = TREE if type(kinds[i]) is tuple else kinds[i]
                passed.append(a)
                continue
            for path in paths:
                leaf = ir.clone(a)
                for step in path:
                    leaf = ir.attr(leaf, str(step)) if isinstance(step, Attr) else \
                        ir.subscript(leaf, ir.const(step))
                leaf.normalized = True
                passed.append(leaf)
        for k in range(len(args), len(kinds)):   # (a keyword's tree: taken whole)
            kinds[k] = TREE if type(kinds[k]) is tuple else kinds[k]
        return gast.Call(func=e.func, args=passed, keywords=keywords), tuple(kinds)

    def jvp_pairs(self, obj, e, scope):
        """(primals, tangents) of ``jvp(f, primals, tangents)`` in code being
        differentiated, or anywhere ``f`` is made of a local function (a lambda reading the
        function's locals, which only the inlined code is given), each a tuple or list
        display or a name holding one, else None."""
        if not (getattr(obj, "__strop_jvp__", False) and len(e.args) == 3 and
                not e.keywords):
            return None
        if not self.inline_helpers and not any(
                isinstance(n, gast.Lambda) or isinstance(n, gast.Name) and
                self.local_function(n.id, scope) is not None for n in gast.walk(e.args[0])):
            return None
        parts = []
        for a in e.args[1:]:
            if isinstance(a, (gast.Tuple, gast.List)) and not any(
                    isinstance(x, gast.Starred) for x in a.elts):
                parts.append(list(a.elts))
                continue
            atom = self.expr(a, scope) if isinstance(a, gast.Name) else None
            items = self.display_items(atom) if atom is not None else None
            if items is None:
                return None
            parts.append(items)
        return tuple(parts) if len(parts[0]) == len(parts[1]) else None

    def runs_underived(self, fn, scope):
        """Whether the function ``fn`` names carries no derivative (a PRNG sampler, a
        function with no derivative rule such as np.floor): vmap's lane by lane each() of it
        is then called as it is in differentiated code (nothing flows through it)."""
        if not self._names_ref(fn, scope) and not self.is_ref(fn):
            return False
        obj = self.ref_object(self.expr(fn, scope)) if not self.is_ref(fn) else \
            self.ref_object(fn)
        from .rules import lookup
        rule = lookup(obj)
        return (getattr(obj, "__module__", "") or "").startswith("strop.rng") or (
            rule is not None and not rule.differentiable)


def _of_displays(treedef):
    """Whether a pytree structure is made of lists, tuples and dicts only (each of which the
    normalizer knows as a display; a named tuple's is a call)."""
    return treedef.node_type in (None, list, tuple, dict) and all(
        _of_displays(c) for c in treedef.children())


def _option(value):
    """The display of a constant option (an int, None, True, a tuple of them)."""
    if isinstance(value, tuple):
        return gast.Tuple(elts=[_option(v) for v in value], ctx=gast.Load())
    return ir.const(value)
