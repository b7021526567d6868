"""The rule table: for each NumPy function, its signature and one derivative template per argument.

A vjp template is a Python expression over the argument names, ``g`` (the cotangent of the
output) and ``ans`` (the output).  A jvp template (``defjvp``) is one over the argument names,
``d<name>`` (the tangent of that argument) and ``ans``: the output's tangent is the sum of the
templates of the arguments that carry a tangent.  It is parsed once and inlined into generated code with the names
replaced by the generated code's own names, so what a user reads in ``strop.source(grad(f))``
is the template's text.  Names other than those resolve in ``TEMPLATE_NAMESPACE`` (numpy as
``np`` and the runtime helpers).

Keys of the table: the function object (``np.sin``), ``("method", name)`` for array methods
that stay methods (``x.copy()``), ``("attr", name)`` for attributes (``x.T``).
"""
import ast
import builtins
import sys
from dataclasses import dataclass, field

import numpy as np

from ... import runtime
from ...syntax import gast_parse, parse as parse_source

TEMPLATE_NAMESPACE = {"np": np, **{n: getattr(runtime, n) for n in runtime.__all__}}
_NO_DEFAULT = object()


@dataclass(frozen=True)
class Rule:
    key: object
    params: tuple                 # ((name, default or _NO_DEFAULT), ...)
    vjps: dict = field(default_factory=dict)   # param name -> template source
    varargs: str = None           # name of a *args parameter, if any
    differentiable: bool = True   # False: the output carries no derivative
    npositional: int = None       # parameters that can be given by position
    jvps: dict = field(default_factory=dict)   # param name -> jvp template (over d<param>)
    jvp_joint: str = None         # used instead when two or more arguments carry tangents

    def bind(self, args, kwargs):
        """Map call arguments (any objects) to parameter names; fill defaults; None on mismatch."""
        names = [n for n, _ in self.params]
        positional = names[:self.npositional]
        if len(args) > len(positional) and not self.varargs:
            return None
        bound = dict(zip(positional, args))
        if self.varargs:
            bound[self.varargs] = tuple(args[len(positional):])
        for k, v in kwargs.items():
            if k not in names or k in bound:
                return None
            bound[k] = v
        for n, default in self.params:
            if n not in bound:
                if default is _NO_DEFAULT:
                    return None
                bound[n] = default
        return bound


RULES = {}


def _parse_signature(signature):
    args = parse_source(f"def f({signature}): pass").body[0].args
    positional = args.posonlyargs + args.args
    defaults = [_NO_DEFAULT] * (len(positional) - len(args.defaults)) + [
        ast.literal_eval(d) for d in args.defaults]
    params = tuple((a.arg, d) for a, d in zip(positional, defaults))
    npositional = len(params)
    params += tuple((a.arg, ast.literal_eval(d) if d is not None else _NO_DEFAULT)
                    for a, d in zip(args.kwonlyargs, args.kw_defaults))
    return params, (args.vararg.arg if args.vararg else None), npositional


def defvjp(key, signature, *templates):
    """Register ``key`` with a signature and one vjp template per positional parameter
    (``None``: not differentiable in that argument).  Later parameters may be left out."""
    params, varargs, npositional = _parse_signature(signature)
    names = [n for n, _ in params] + ([varargs] if varargs else [])
    for t in templates:
        if t is not None:
            compile(t, f"<rule for {_name(key)}>", "eval")  # a typo fails at import, not at use
    RULES[key] = Rule(key, params, {n: t for n, t in zip(names, templates) if t is not None},
                      varargs, npositional=npositional)


def defjvp(key, *templates, joint=None):
    """Give ``key``'s rule one jvp template per positional parameter (``None``: no tangent
    flows from it), in the order of its signature (a ``*args`` parameter last).  A template
    reads the argument names, ``d<name>`` (that argument's tangent) and ``ans``.  ``joint``: a
    template over all the tangents at once (missing ones are zeros), used when two or more
    arguments carry one (``setitem(dx, idx, dv)`` rather than the sum of two updates)."""
    rule = RULES[key]
    names = [n for n, _ in rule.params] + ([rule.varargs] if rule.varargs else [])
    for t in templates + (joint,):
        if t is not None:
            compile(t, f"<jvp rule for {_name(key)}>", "eval")
    jvps = {n: t for n, t in zip(names, templates) if t is not None}
    missing = set(rule.vjps) - set(jvps)
    if missing:
        raise ValueError(f"the jvp rule of {_name(key)} leaves out {sorted(missing)}, which "
                         f"its vjp rule differentiates")
    RULES[key] = Rule(rule.key, rule.params, rule.vjps, rule.varargs, rule.differentiable,
                      rule.npositional, jvps, joint)


def defnondiff(signature_by_key):
    """Functions whose outputs carry no derivative (comparisons, floor, argmax, shape, ...)."""
    for key in signature_by_key:
        RULES[key] = Rule(key, (), {}, None, differentiable=False)


def lookup(key):
    try:
        return RULES.get(key)
    except TypeError:  # unhashable callee
        return None


def _name(key):
    if isinstance(key, tuple):
        return ".".join(key)
    mod = getattr(key, "__module__", None) or ""
    name = getattr(key, "__name__", repr(key))
    if mod.startswith("numpy.linalg"):
        return "np.linalg." + name
    if mod.startswith("numpy.fft"):
        return "np.fft." + name
    if isinstance(key, np.ufunc) and getattr(np, name, None) is not key:
        special = sys.modules.get("scipy.special")   # a ufunc of SciPy's (erf, gammaln)
        return ("scipy.special." if getattr(special, name, None) is key else "") + name
    return ("np." if mod.startswith("numpy") or isinstance(key, np.ufunc) else "") + name


def rule_name(key):
    return _name(key)


_PARSED = {}


def template_ast(source):
    """The gast expression of a template, parsed once (callers must deep-copy before editing)."""
    if source not in _PARSED:
        _PARSED[source] = gast_parse(source, mode="eval").body
    return _PARSED[source]


def evaluate_vjp(key, argname, g, ans, *args, **kwargs):
    """Evaluate a rule's template directly on values: lets rule tests check every rule against
    finite differences independently of the transform pipeline."""
    rule = RULES[key]
    bound = rule.bind(args, kwargs)
    if bound is None:
        raise TypeError(f"arguments do not match the signature of {_name(key)}")
    env = {**TEMPLATE_NAMESPACE, **bound, "g": g, "ans": ans}
    return eval(rule.vjps[argname], {"__builtins__": builtins}, env)


def evaluate_jvp(key, tangents, ans, *args, **kwargs):
    """Evaluate a rule's jvp templates directly on values: ``tangents`` maps parameter names to
    their tangents (the others carry none); the output's tangent (the joint template when two
    or more are given and the rule has one)."""
    rule = RULES[key]
    bound = rule.bind(args, kwargs)
    if bound is None:
        raise TypeError(f"arguments do not match the signature of {_name(key)}")
    env = {**TEMPLATE_NAMESPACE, **bound, "ans": ans}
    env.update({"d" + n: t for n, t in tangents.items()})
    if len(tangents) > 1 and rule.jvp_joint:
        for n in rule.jvps:
            env.setdefault("d" + n, runtime.zeros_like(bound[n]))
        return eval(rule.jvp_joint, {"__builtins__": builtins}, env)
    out = None
    for n in tangents:
        part = eval(rule.jvps[n], {"__builtins__": builtins}, env)
        out = part if out is None else runtime.add(out, part)
    return out
