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
"""
import functools
import inspect

import numpy as np

from .codegen import load as loader
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
            self._trampoline = loader.load(self.__name__, source, {}, {name: self}).function
        return self._trampoline

    def __repr__(self):
        return f"<{type(self).__name__} {self.__qualname__}>"

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
            lines.append("    return np.sum(g * out)")
            source = "\n".join(lines) + "\n"
            injected = {n: TEMPLATE_NAMESPACE[n] for n in TEMPLATE_NAMESPACE
                        if n in source and n != "np"}
            injected["np"] = np
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
