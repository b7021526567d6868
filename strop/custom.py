"""``custom_jvp`` and ``custom_vjp``: a function's derivative given by the user, as in JAX.

A decorated function is a row of the rule table like ``np.sin``: transforms keep its calls
as calls, and the row's templates call the user's rules.

- custom_jvp: forward mode calls the jvp (``defjvp``) or sums the per-argument jvps
  (``defjvps``).  Reverse mode transposes the jvp, which must be linear in the tangents (as
  JAX requires): the vjp is the gradient, with respect to the tangents, of
  ``<g, jvp(primals, tangents)[1]>`` — a ``grad`` strop builds once per function.
- custom_vjp: reverse mode calls ``bwd(*nondiff, residuals, g)`` with the residuals of
  ``fwd(*args)``, and its forward sweep computes the value by ``fwd`` too (as JAX does).
  Forward mode of the function itself is an error, as in JAX; a transform of code reverse
  mode made (``hessian``, ``jvp(grad(f))``, ``grad(grad(f))``) differentiates ``fwd`` and
  ``bwd`` as ordinary code.

Called outside transforms, or under ``jit``, the function runs as written.

Under ``vmap`` the rule is batched with the function, as in JAX: vmap's code computes the
primal, and where an outer transform differentiates that code (``grad(vmap(f))``,
``jvp(vmap(f))``) the call is of ``f.batched(...)``, a custom function of the same kind
whose primal and rule are f's vmapped (the rule sees one example's primals and tangents, its
own code vectorized like any other).  A ``vmap`` of a derivative (``vmap(grad(f))``) batches
the rule's code already inlined.
"""
import functools
import inspect

import numpy as np

from .codegen import load as loader
from .runtime import custom_cotangents, tree_vdot
from .transformer.rules import RULES, TEMPLATE_NAMESPACE, Rule

__all__ = ["custom_jvp", "custom_vjp"]


class _Custom:
    __strop_custom__ = True

    def __init__(self, fun, nondiff_argnums=()):
        if not callable(fun):
            raise TypeError(f"{type(self).__name__} expects a function, got {fun!r}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else \
            tuple(nondiff_argnums)
        params = list(inspect.signature(fun).parameters.values())
        if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
            raise TypeError(f"{type(self).__name__}: {fun.__qualname__} may only have "
                            f"positional parameters (no *args, **kwargs or keyword-only ones)")
        self.params = [p.name for p in params]
        self.defaults = {p.name: p.default for p in params if p.default is not p.empty}
        bad = [i for i in self.nondiff_argnums if not 0 <= i < len(self.params)]
        if bad:
            raise ValueError(f"nondiff_argnums {bad} out of range for {fun.__qualname__}, "
                             f"which has {len(self.params)} parameters")
        self.diff = [p for i, p in enumerate(self.params) if i not in self.nondiff_argnums]
        self.nondiff = [p for i, p in enumerate(self.params) if i in self.nondiff_argnums]

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def trampoline(self):
        """A plain function calling this one (``def f(x): return f_custom(x)``): what a
        transform of the custom function itself parses, so that its rule is used."""
        if getattr(self, "_trampoline", None) is None:
            args = ", ".join(self.params)
            name = f"{self.__name__}_custom"
            source = f"def {self.__name__}({args}):\n    return {name}({args})\n"
            self._trampoline = loader.load(self.__name__, source, _at(self.fun, 2),
                                           {name: self}).function
        return self._trampoline

    def __repr__(self):
        return f"<{type(self).__name__} {self.__qualname__}>"

    def batched(self, lanes):
        """This function under ``vmap``: a custom function of the same kind whose primal and
        rule are this one's vmapped.  ``lanes``: (batched, rank of a lane or None) of each
        parameter's argument."""
        cache = self.__dict__.setdefault("_batched", {})
        if lanes not in cache:
            b = _Batch(self, lanes)
            primal = b.fresh("primal")
            fun = b.function("", self.params, [f"return {primal}({', '.join(self.params)})"],
                             {primal: b.lanes(self.fun, self.params)}, self.fun)
            cache[lanes] = type(self)(fun, self.nondiff_argnums)
            self._batch(b, cache[lanes])
        return cache[lanes]

    def _name(self, obj, suffix):
        """A name for ``obj`` in the templates' namespace (and so in generated code)."""
        base = getattr(obj, "__name__", "")
        base = base if base.isidentifier() else f"{self.__name__}_{suffix}"
        name, k = base, 1
        while name in TEMPLATE_NAMESPACE and TEMPLATE_NAMESPACE[name] is not obj:
            k += 1
            name = f"{base}_{k}"
        TEMPLATE_NAMESPACE[name] = obj
        return name

    def _register(self, vjps, jvps, joint=None):
        params = tuple((p, self.defaults.get(p, _no_default())) for p in self.params)
        RULES[self] = Rule(self, params, vjps, None, True, len(params), jvps, joint)


class _Batch:
    """What the batched version of a custom function is built from: generated adapters (flat
    parameters, so that vmap knows each argument's axis) and vmaps of the user's functions."""

    def __init__(self, owner, lanes):
        from .api import ARRAY
        self.owner, self.name = owner, f"{owner.__name__}_batched"
        self.axes = {p: 0 if b else None for p, (b, _) in zip(owner.params, lanes)}
        self.kinds = {p: ARRAY if r is None else f"{ARRAY}{r + b}"
                      for p, (b, r) in zip(owner.params, lanes)}
        self.taken = set(owner.params) | {"d" + p for p in owner.params}

    def fresh(self, base):
        """A name for the adapters that no parameter (or tangent) of theirs shadows."""
        name = base
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        return name

    def lanes(self, fn, like):
        """``vmap(fn)`` for arguments like the owner's parameters named in ``like`` (a tangent
        is like its primal; None: batched, like the output)."""
        from .api import ARRAY
        from .vmap import vmap
        axes = tuple(0 if p is None else self.axes[p] for p in like)
        kinds = tuple(ARRAY if p is None else self.kinds[p] for p in like)
        return _Lanes(vmap(fn, in_axes=axes), kinds, f"{getattr(fn, '__name__', 'f')}_lanes")

    def function(self, suffix, params, body, injected, user):
        """A generated function ``def <name>_<suffix>(params): body``, whose lines errors show
        as the definition of ``user``, the user's function it calls."""
        name = f"{self.name}_{suffix}".rstrip("_")
        source = f"def {name}({', '.join(params)}):\n" + "".join(
            f"    {line}\n" for line in body)
        return loader.load(name, source, _at(user, len(body) + 1), injected).function


class _Lanes:
    """``vmap(fn)`` called by generated code: inlined, when that code is transformed, as its
    code for arguments of known kinds (flat ones: vmap knows each one's axis)."""
    plain = None

    def __init__(self, vec, kinds, name):
        self.vec, self.kinds, self.__name__ = vec, kinds, name

    def __call__(self, *args):
        return self.vec(*args)

    def staged(self, key=None):
        from .api import _settings
        return (self.vec.plain or self.vec).staged(key or (self.kinds, (), _settings()))

    @property
    def call_positional(self):
        return self.vec.call_positional


def _at(user, n):
    """A line map showing lines 1..n of a generated function as the definition of ``user``."""
    code = getattr(user, "__code__", None)
    return {i: (code.co_filename, code.co_firstlineno) for i in range(1, n + 1)} if code \
        else {}


def _no_default():
    from .transformer.rules.table import _NO_DEFAULT
    return _NO_DEFAULT


def _tuple(names):
    return "(" + "".join(n + ", " for n in names) + ")"


class custom_jvp(_Custom):   # noqa: N801  (JAX's name)
    """``@custom_jvp`` then ``@f.defjvp`` on ``jvp(primals, tangents) -> (out, tangent_out)``
    (with ``nondiff_argnums``: ``jvp(*nondiff, primals, tangents)``), or
    ``f.defjvps(*fns)`` with one ``fn(tangent, ans, *args)`` per differentiable argument."""

    def defjvp(self, jvp):
        self.jvp = jvp
        j = self._name(jvp, "jvp")

        def call(tangents):
            return f"{j}({''.join(n + ', ' for n in self.nondiff)}{_tuple(self.diff)}, " \
                   f"{_tuple(tangents)})[1]"
        jvps = {p: call([("d" + q if q == p else f"zeros_like({q})") for q in self.diff])
                for p in self.diff}
        self._finish(jvps, call(["d" + q for q in self.diff]))
        return jvp

    def defjvps(self, *fns):
        if len(fns) != len(self.diff):
            raise TypeError(f"defjvps of {self.__name__}: {len(fns)} function(s) given for "
                            f"{len(self.diff)} differentiable argument(s)")
        self.jvps = fns
        args = ", ".join(self.params)
        jvps = {}
        for p, fn in zip(self.diff, fns):
            if fn is not None:
                jvps[p] = f"{self._name(fn, 'jvp_' + p)}(d{p}, ans, {args})"
        self._finish(jvps, None)
        return fns

    def _finish(self, jvps, joint):
        self._transposed = None
        self._register({p: self._vjp_template(p) for p in jvps}, jvps, joint)

    def _batch(self, b, new):
        """``new``'s rule: the jvp vmapped (each of defjvps' functions, ``ans`` batched)."""
        diff, nd = self.diff, "".join(n + ", " for n in self.nondiff)
        if getattr(self, "jvps", None) is not None:
            new.defjvps(*[None if fn is None else b.lanes(fn, [p, None] + self.params)
                          for p, fn in zip(diff, self.jvps)])
            return
        tangents = ["d" + p for p in diff]
        jvp, lanes, primals, dots = map(b.fresh, ("jvp", "lanes", "primals", "tangents"))
        flat = b.function("jvp_flat", self.nondiff + diff + tangents,
                          [f"return {jvp}({nd}{_tuple(diff)}, {_tuple(tangents)})"],
                          {jvp: self.jvp}, self.jvp)
        new.defjvp(b.function("jvp", self.nondiff + [primals, dots], [
            f"{_tuple(diff)} = {primals}", f"{_tuple(tangents)} = {dots}",
            f"return {lanes}({', '.join(self.nondiff + diff + tangents)})"],
            {lanes: b.lanes(flat, self.nondiff + diff + diff)}, self.jvp))

    # reverse mode: the jvp transposed
    def _vjp_template(self, p):
        if getattr(self, "_transpose", None) is None:
            self._transpose = _Transpose(self)
        t = self._name(self._transpose, "vjp")
        zeros = ", ".join(f"zeros_like({q})" for q in self.diff)
        return f"{t}({', '.join(self.params)}, {zeros}, g)[{self.diff.index(p)}]"

    def transposed(self):
        """``grad`` of ``<g, jvp(primals, tangents)[1]>`` with respect to the tangents: a
        function of (*args, *tangents, g) giving the cotangents of the differentiable args."""
        if self._transposed is None:
            from .api import grad
            tangents = ["d" + p for p in self.diff]
            name = f"{self.__name__}_jvp_dot"
            lines = [f"def {name}({', '.join(self.params + tangents)}, g):"]
            if getattr(self, "jvps", None) is None:
                j = self._name(self.jvp, "jvp")
                nd = "".join(n + ", " for n in self.nondiff)
                lines.append(f"    out = {j}({nd}{_tuple(self.diff)}, {_tuple(tangents)})[1]")
            else:
                f = self._name(self, "primal")
                lines.append(f"    ans = {f}({', '.join(self.params)})")
                terms = [f"{self._name(fn, 'jvp_' + p)}(d{p}, ans, {', '.join(self.params)})"
                         for p, fn in zip(self.diff, self.jvps) if fn is not None]
                lines.append(f"    out = {' + '.join(terms) if terms else '0.0'}")
            lines.append("    return tree_vdot(g, out)")   # (out may be a pytree)
            source = "\n".join(lines) + "\n"
            injected = {n: TEMPLATE_NAMESPACE[n] for n in TEMPLATE_NAMESPACE
                        if n in source and n != "np"}
            injected["np"] = np
            injected["tree_vdot"] = tree_vdot
            fn = loader.load(name, source, {}, injected).function
            first = len(self.params)
            self._transposed = grad(fn, argnums=tuple(range(first, first + len(tangents))))
        return self._transposed


class _Transpose:
    """Calls the transposed jvp of a custom_jvp function (built at its first use)."""
    plain = None   # inlined as itself (api.Transformed.plain)

    def __init__(self, owner):
        self.owner = owner
        self.__name__ = f"{owner.__name__}_vjp"

    def __call__(self, *args):
        return self.owner.transposed()(*args)

    @property
    def staged(self):   # inlined as the grad it is when the calling code is transformed
        return self.owner.transposed().staged

    @property
    def call_positional(self):
        return self.owner.transposed().call_positional

    def __eq__(self, other):
        return isinstance(other, _Transpose) and other.owner is self.owner

    def __hash__(self):
        return hash(("transpose", id(self.owner)))


class custom_vjp(_Custom):   # noqa: N801  (JAX's name)
    """``@custom_vjp`` then ``f.defvjp(fwd, bwd)``: ``fwd(*args) -> (out, residuals)`` and
    ``bwd(*nondiff, residuals, g) -> tuple of cotangents`` (one per differentiable argument)."""
    __strop_custom_vjp__ = True

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        f, b = self._name(fwd, "fwd"), self._name(bwd, "bwd")
        args = ", ".join(self.params)
        nd = "".join(n + ", " for n in self.nondiff)
        call = f"custom_cotangents({b}({nd}{f}({args})[1], g), {_tuple(self.diff)}, " \
               f"{self.__name__!r})"
        self._register({p: f"{call}[{i}]" for i, p in enumerate(self.diff)}, {})
        return fwd, bwd

    def _batch(self, b, new):
        """``new``'s fwd and bwd: its residuals are the arguments, and ``bwd`` runs ``fwd``
        again (as the reverse sweep does) then ``bwd``, vmapped; the cotangent of an
        unbatched argument is summed over the lanes."""
        diff, nd, args = self.diff, "".join(n + ", " for n in self.nondiff), ", ".join(
            self.params)
        fwd, bwd, check, lanes, np_, g, res, cts = map(b.fresh, (
            "fwd", "bwd", "custom_cotangents", "lanes", "np", "g", "res", "cts"))
        flat = b.function("vjp_flat", self.params + [g], [
            f"return {check}({bwd}({nd}{fwd}({args})[1], {g}), {_tuple(diff)}, "
            f"{self.__name__!r})"], {bwd: self.bwd, fwd: self.fwd, check: custom_cotangents},
            self.bwd)
        summed = [f"{cts}[{i}]" if b.axes[p] is not None else f"{np_}.sum({cts}[{i}], axis=0)"
                  for i, p in enumerate(diff)]
        new.defvjp(
            b.function("fwd", self.params, [f"return {fwd}({args})[0], {_tuple(diff)}"],
                       {fwd: b.lanes(self.fwd, self.params)}, self.fwd),
            b.function("bwd", self.nondiff + [res, g], [
                f"{_tuple(diff)} = {res}", f"{cts} = {lanes}({args}, {g})",
                f"return {_tuple(summed)}"], {lanes: b.lanes(flat, self.params + [None]),
                                             np_: np}, self.bwd))
