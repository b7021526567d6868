"""strop.lax's control flow called on values, outside transformed code: it runs the Python
control flow each primitive means, with JAX's checks.  Inside a transformed function these
calls never run: transformer/lax_lower.py rewrites them into the same ``if``/``while``/``for``
(``lowered`` marks them for it)."""
import numpy as np

from ..runtime import lax as rl
from ..tree_util import tree_flatten, tree_structure
from .errors import lax_error

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map"]


def lowered(fn):
    """Mark ``fn`` as one the normalizer rewrites (by its name) rather than calls."""
    fn.__strop_lax__ = fn.__name__
    return fn


@lowered
def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; ``pred`` a scalar.
    Only the branch taken runs (JAX traces both: their outputs' types are compared only in
    transformed code, where strop reads both)."""
    _callable("cond", true_fun=true_fun, false_fun=false_fun)
    if np.shape(pred) != ():
        raise lax_error(TypeError, f"Pred must be a scalar, got {pred} of shape "
                                   f"{np.shape(pred)}.")
    return true_fun(*operands) if pred else false_fun(*operands)


@lowered
def switch(index, branches, *operands):
    """``branches[index](*operands)``, ``index`` clamped into range as in JAX."""
    branches = list(branches)
    if not branches:
        raise lax_error(ValueError, "Empty branch sequence")
    _callable("switch", **{f"branches[{i}]": b for i, b in enumerate(branches)})
    if np.shape(index) != () or not np.issubdtype(np.result_type(index), np.integer) and \
            not isinstance(index, (bool, np.bool_)):
        raise lax_error(TypeError, f"Index type must be an integer, got {index} as "
                                   f"{np.result_type(index)}")
    i = min(max(int(index), 0), len(branches) - 1)
    return branches[i](*operands)


@lowered
def while_loop(cond_fun, body_fun, init_val):
    """``val = init_val; while cond_fun(val): val = body_fun(val)``; the carry keeps its
    structure, shapes and dtypes (a Python number may become an array of a kind holding it)."""
    _callable("while_loop", cond_fun=cond_fun, body_fun=body_fun)
    init_leaves, tree = tree_flatten(init_val)
    val = init_val
    while _predicate(cond_fun(val)):
        val = body_fun(val)
        _check_carry("while_loop", tree, init_leaves, val)
    return val


@lowered
def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``for i in range(lower, upper): val = body_fun(i, val)``."""
    _callable("fori_loop", body_fun=body_fun)
    init_leaves, tree = tree_flatten(init_val)
    val = init_val
    for i in range(lower, upper):
        val = body_fun(i, val)
        _check_carry("fori_loop", tree, init_leaves, val)
    return val


@lowered
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """``carry, y = f(carry, x)`` for each ``x`` along the leading axis of the leaves of
    ``xs`` (from the end if ``reverse``); returns ``(carry, ys)``, the ``y`` stacked."""
    _callable("scan", f=f)
    init_leaves, tree = tree_flatten(init)
    xs_leaves, xs_tree = tree_flatten(xs)
    n = scan_length(xs_leaves, length)
    carry, ys = init, []
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        out = f(carry, xs_tree.unflatten([leaf[i] for leaf in xs_leaves]))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise lax_error(TypeError, f"scan body output must be a pair, got {_describe(out)}.")
        carry, y = out
        _check_carry("scan", tree, init_leaves, carry)
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys:
        raise lax_error(ValueError, "scan over no elements: strop runs f to learn the type "
                                    "of its outputs, and so cannot make the empty ys")
    leaves = [tree_flatten(y)[0] for y in ys]
    stacked = [np.stack([np.asarray(ls[k]) for ls in leaves]) for k in range(len(leaves[0]))]
    return carry, tree_structure(ys[0]).unflatten(stacked)


def scan_length(xs_leaves, length):
    """The trip count of a scan: ``length`` and the leading axes of ``xs`` must agree."""
    for leaf in xs_leaves:
        if not hasattr(leaf, "__len__") and np.ndim(leaf) == 0:
            what = "an iterator" if hasattr(leaf, "__next__") else repr(leaf)
            raise lax_error(ValueError if what != "an iterator" else TypeError,
                            f"scan got value with no leading axis to scan over: {what}.")
    sizes = [len(leaf) for leaf in xs_leaves]
    if length is not None:
        if any(s != length for s in sizes):
            raise lax_error(ValueError, f"scan got `length` argument of {length} which "
                                        f"disagrees with leading axis sizes {sizes}.")
        return int(length)
    if not sizes:
        raise lax_error(ValueError, "scan got no values to scan over and `length` not "
                                    "provided.")
    if len(set(sizes)) > 1:
        raise lax_error(ValueError, f"{rl.SCAN_LENGTHS}: {', '.join(str(s) for s in sizes)}.")
    return sizes[0]


@lowered
def map(f, xs, *, batch_size=None):   # noqa: A001  (JAX's name)
    """``f`` applied to each element of ``xs`` along its leading axis, the results stacked."""
    return scan(lambda _, x: ((), f(x)), (), xs)[1]


def _callable(what, **fns):
    for name, fn in fns.items():
        if not callable(fn):
            raise lax_error(TypeError, f"{what}: {name} argument should be callable, got "
                                       f"{type(fn).__name__}.")


def _predicate(c):
    if np.shape(c) != () or np.result_type(c) != np.bool_:
        raise lax_error(TypeError, f"cond_fun must return a boolean scalar, but got output "
                                   f"type(s) [{rl.type_text(c)}].")
    return bool(c)


def _check_carry(what, tree, init_leaves, new):
    leaves, new_tree = tree_flatten(new)
    if new_tree != tree:
        raise lax_error(TypeError, rl.carry_structure_message(what, _tree_text(tree),
                                                              _tree_text(new_tree)))
    for k, (a, b) in enumerate(zip(init_leaves, leaves)):
        if not rl.carry_matches(a, b):
            where = f"carry component {k} (in flattening order)" if len(leaves) > 1 else \
                "carry"
            raise lax_error(TypeError, rl.carry_type_message(what, where, a, b))


def _tree_text(tree):
    return repr(tree)[len("PyTreeDef("):-1]


def _describe(value):
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of length {len(value)}"
    return rl.type_text(value) if hasattr(value, "shape") or np.isscalar(value) else \
        type(value).__name__
