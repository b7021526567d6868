"""Forward mode and Jacobians: ``jvp``, ``jacfwd``, ``jacrev``, ``hessian``.

Each is a source transformation like ``grad``: ``jacfwd(f)`` is generated code that runs the
jvp of ``f`` once per basis tangent, ``jacrev(f)`` code that runs its vjp once per basis
cotangent, both functions of the same arguments as ``f``, so that they compose:
``hessian(f) = jacfwd(jacrev(f))``.  ``strop.source`` shows them.
"""
import weakref

import numpy as np

from . import dtypes
from .api import (Differentiating, Transformed, _argnums, _check_real, _settings,
                  _arity, _user_function, arg_names, pair_checked, transformable,
                  with_defaults)
from .runtime import check_tangent
from .errors import Location
from .transformer import forward
from .transformer.jacobian import jacrev as _jacrev_ir
from .tree_util import tree_leaves, tree_structure

__all__ = ["jvp", "jacfwd", "jacrev", "jacobian", "hessian"]


class ForwardTransformed(Transformed):
    """jvp: its output and tangent come as the function's own.  A transformed function
    (``jvp(grad(f))``) returns trees as flat leaves that it rebuilds itself: the output and
    the tangent are each rebuilt by it (``aux`` goes with them, as it came)."""
    has_aux = False
    rebuilds_trees = True

    def finish(self, out, kinds):
        if not isinstance(self.fun, Transformed):
            return out
        if self.has_aux:
            value, aux = self.fun.finish((out[0], out[2]), kinds), out[2]
            tangent = self.fun.finish((out[1], aux), kinds)
            return value[0], tangent[0], aux
        return self.fun.finish(out[0], kinds), self.fun.finish(out[1], kinds)


def _name(fun):
    return getattr(_user_function(fun), "__name__", "f")


class _Spec:
    """How ``jac_fwd``/``jac_rev`` group the blocks of one output leaf (one block per leaf of
    the differentiated arguments): as the arguments, trees rebuilt, a tuple when ``argnums``
    is.  A constant of the generated code (called, so bound like a function)."""

    def __init__(self, multi, kinds):
        self.multi = multi
        self.groups = tuple((k[1], k[1].num_leaves) if type(k) is tuple else (None, 1)
                            for k in kinds)

    def __call__(self, blocks):
        out, at = [], 0
        for treedef, n in self.groups:
            part = list(blocks[at:at + n])
            at += n
            out.append(treedef.unflatten(part) if treedef is not None else part[0])
        return tuple(out) if self.multi else out[0]

    def blocks(self, jac):
        """The inverse of a call: the blocks of one output leaf's part of a Jacobian."""
        parts = jac if self.multi else (jac,)
        return [b for (treedef, _), p in zip(self.groups, parts)
                for b in (tree_leaves(p) if treedef is not None else [p])]

    def __repr__(self):
        return f"<jacobian layout: multi={self.multi}, leaves={[n for _, n in self.groups]}>"


class JacobianTransformed(Differentiating):
    """jacfwd and jacrev: the code depends on the trees of the differentiated arguments.
    Their blocks are grouped as the arguments in the generated code (``jac_fwd``/``jac_rev``);
    the output's structure is the function's, so a transformed function that returns trees
    as flat leaves (``jacfwd(grad(f))``) rebuilds it, with blocks for leaves (the inherited
    ``finish``)."""

    def staged(self, key=None, reason=None):
        key = key or self._last_key or (self.default_kinds(), (), _settings())
        self._kinds_now = key[0]
        return super().staged(key, reason)


def _jacobian(fun, argnums, has_aux, name, build):
    if not callable(fun):
        raise TypeError(f"{name} expects a function, got {type(fun).__name__}: {fun!r}")
    fun = transformable(fun)
    nums, multi = _argnums(argnums, fun)

    def make(ir_fn, kinds):
        wrt = t.wrt_of(t._kinds_now)
        spec = _Spec(multi, [t._kinds_now[i] for i in wrt])
        if all(treedef is None for treedef, _ in spec.groups):
            spec = multi   # no trees: a constant of the code (which then compiles)
        return build(pair_checked(ir_fn) if has_aux else ir_fn, wrt, spec, has_aux, kinds)
    t = JacobianTransformed(fun, make, f"{name}({_name(fun)})")
    nkw = t._arity[2]
    t.check_args = _check_real(name, fun, lambda n: t.wrt(n - nkw))
    t.argnums, t.argnums_given, t.has_aux, t.multi = nums, argnums, has_aux, multi
    return t


def jacfwd(fun, argnums=0, has_aux=False):
    """The Jacobian of ``fun`` by forward mode: blocks shaped ``out.shape + in.shape``, one per
    output leaf and differentiated argument (trees as JAX lays them out)."""
    return _jacobian(fun, argnums, has_aux, "jacfwd", forward.jacfwd)


def jacrev(fun, argnums=0, has_aux=False):
    """The Jacobian of ``fun`` by reverse mode (one vjp per output element)."""
    return _jacobian(fun, argnums, has_aux, "jacrev", _jacrev_ir)


jacobian = jacrev   # as in JAX: jax.jacobian is jacrev


def hessian(fun, argnums=0, has_aux=False):
    """The Hessian of a scalar function: ``jacfwd(jacrev(fun))``, forward over reverse."""
    return jacfwd(jacrev(fun, argnums, has_aux), argnums, has_aux)


jacfwd.__strop_transform__ = True
jacrev.__strop_transform__ = True
hessian.__strop_transform__ = True

_JVPS = weakref.WeakKeyDictionary()


def _jvp_transform(fun, n, has_aux, nargs=None):
    try:
        cache = _JVPS.setdefault(fun, {})
    except TypeError:   # not weakly referenceable (a builtin): not cached
        cache = {}
    nargs = n if nargs is None else nargs   # defaults of the parameters after the primals
    key = (n, has_aux, nargs)
    if key not in cache:
        t = ForwardTransformed(
            fun, lambda ir_fn, kinds: forward.jvp(pair_checked(ir_fn) if has_aux else ir_fn,
                                                  tuple(range(n)), has_aux, kinds),
            f"jvp({_name(fun)})")
        t.has_aux, t.nargs = has_aux, nargs
        t.check_args = _check_real("jvp", fun, tuple(range(n)))
        cache[key] = t
    return cache[key]


def jvp(fun, primals, tangents, has_aux=False):
    """``(fun(*primals), J tangents)``, and ``aux`` last with ``has_aux`` (as JAX's jvp):
    ``primals`` and ``tangents`` are tuples (or lists) of the same structure."""
    if not callable(fun):
        raise TypeError(f"jvp expects a function, got {type(fun).__name__}: {fun!r}")
    fun = transformable(fun)
    for what, v in (("primals", primals), ("tangents", tangents)):
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"jvp: {what} must be a tuple or list of the function's arguments, "
                            f"got {type(v).__name__}; write jvp(f, (x,), (t,)) for one argument")
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primal(s) but {len(tangents)} tangent(s): give "
                        f"one tangent per primal")
    primals = [dtypes.canonicalize_tree(p) for p in primals]
    _check_float_primals(fun, primals)
    leaves = []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        if tree_structure(p) != tree_structure(t):
            raise TypeError(f"jvp: the tangent of primal {i} has the structure "
                            f"{tree_structure(t)}, but the primal has {tree_structure(p)}: "
                            f"they must match")
        for x, d in zip(tree_leaves(p), tree_leaves(t)):
            d = _as_tangent(d, x)
            leaves.append(check_tangent(d, x, f"argument {i} of {_name(fun)}", i))
    args = with_defaults(fun, primals)   # f(*xs): spread; defaults added
    t = _jvp_transform(fun, len(primals), has_aux, len(args))
    return tuple(t.call_positional(list(args) + leaves))


def _check_float_primals(fun, primals):
    """An integer or boolean primal has no tangent to carry: JAX takes a float0 tangent for
    it, strop asks for the value to be closed over (or made a float)."""
    for i, p in enumerate(primals):
        for leaf in tree_leaves(p):
            if dtypes.is_float_leaf(leaf) and not np.iscomplexobj(leaf):
                continue
            user = _user_function(fun)
            names = arg_names(fun, len(primals) + _arity(fun)[2])
            name = names[i] if i < len(names) else f"#{i}"
            dtype = np.result_type(leaf) if isinstance(leaf, (int, np.ndarray, np.generic)) \
                else type(leaf).__name__
            code = getattr(user, "__code__", None)
            where = f"\n{Location(code.co_filename, code.co_firstlineno).show()}" if code else ""
            raise TypeError(
                f"jvp: primal {i} (parameter {name!r} of {getattr(user, '__qualname__', user)}) "
                f"has dtype {dtype}; jvp differentiates every primal, so each must be real "
                f"floating point (strop has no float0 tangents for integer inputs, as JAX "
                f"has){where}\nFix: bind it outside the primals, e.g. jvp(functools.partial("
                f"f, {name}={name}), <the other primals>, <their tangents>); or pass it as a "
                f"float (np.asarray({name}, float)) with a float tangent")


def _as_tangent(d, x):
    """A tangent as the transformed code takes it: a Python number for a Python number's."""
    d = dtypes.canonicalize_tree(d)
    if isinstance(x, (float, int)) and not isinstance(x, bool) and np.ndim(d) == 0 and \
            np.issubdtype(np.result_type(d), np.floating):
        return type(x)(d) if isinstance(x, float) else d
    return d


jvp.__strop_transform__ = False   # jvp returns values, not a function: called, not built
# inside transformed code jvp(f, primals, tangents) calls the transform of f that jvp uses
jvp.__strop_jvp__ = True
jvp.transform = lambda fun, n: _jvp_transform(transformable(fun), n, False)
