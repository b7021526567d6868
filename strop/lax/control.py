"""strop.lax's control flow called on values, outside transformed code: it runs the Python
control flow each primitive means, with JAX's checks.  Inside a transformed function these
calls never run: transformer/lax_lower.py rewrites them into the same ``if``/``while``/``for``
(``lowered`` marks them for it)."""
import dis
import functools
import threading
import types
import warnings

import numpy as np

from ..errors import LaxTypeError
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
    The outputs of both must have the same structure and types, as JAX checks when it traces
    both: the branch not taken is run too, for its outputs' types (``_check_branches``)."""
    _callable("cond", true_fun=true_fun, false_fun=false_fun)
    if np.shape(pred) != ():
        raise lax_error(TypeError, f"Pred must be a scalar, got {pred} of shape "
                                   f"{np.shape(pred)}.")
    taken = 0 if pred else 1
    fns = [true_fun, false_fun]
    out = fns[taken](*operands)
    _check_branches("cond", fns, taken, out, operands)
    return out


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
    out = branches[i](*operands)
    _check_branches("switch", branches, i, out, operands)
    return out


@lowered
def while_loop(cond_fun, body_fun, init_val):
    """``val = init_val; while cond_fun(val): val = body_fun(val)``; the carry keeps its
    structure, shapes and dtypes (a Python number may become an array of a kind holding it)."""
    _callable("while_loop", cond_fun=cond_fun, body_fun=body_fun)
    init_leaves, tree = tree_flatten(init_val)
    val = init_val
    trips = 0
    while _predicate(cond_fun(val)):
        val = body_fun(val)
        trips += 1
        if trips > _PROBE_TRIPS and getattr(_probing, "active", False):
            raise _ProbeAbandoned()   # a branch not taken may loop on operands not its own
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


# --- the types of the branches not taken ----------------------------------------------------
#
# JAX traces every branch of a cond or switch and compares the types of their outputs; a plain
# call runs one.  The others are run too, on the same operands, for the types of their
# outputs only, where that cannot be seen: NumPy's warnings and errors silenced, any exception
# taken to mean "not known" (a branch not taken may fail on operands meant for the other: a
# check of the taken branch's result is all that is lost), never a branch with effects
# (print, strop.debug, callbacks: they would run where the program did not ask for them), and
# without probing again inside (a cond nested in a branch not taken runs its own branch
# only).  A while_loop run inside a probe gives up after _PROBE_TRIPS trips.

_probing = threading.local()
_probing.active = False
_PROBE_TRIPS = 100_000
_EFFECT_NAMES = frozenset({"print", "debug", "callback", "io_callback", "pure_callback",
                           "input", "open", "breakpoint", "write", "writelines", "flush",
                           "savetxt", "save", "savez", "tofile", "system", "sleep"})
_PURE_MODULES = ("numpy", "math", "cmath", "strop.lax", "strop.nn", "strop.runtime",
                 "strop.tree_util", "strop.ops", "operator", "builtins")


class _ProbeAbandoned(Exception):
    pass


def check_branch_types(fn, args):
    """``fn(*args)`` run for the checks of its conds' and switches' branch types only: their
    error raised, anything else it raises or warns ignored (see Transformed.check_branches);
    nothing run where ``fn`` may have effects."""
    args = _read_only(args, objects=True)
    if args is None or _has_effects(fn):
        return
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args)
    except LaxTypeError as e:
        if getattr(e, "branches", False):
            raise e.with_traceback(None) from None
    except Exception:    # noqa: BLE001  (the transformed code meets it, if it is real)
        pass


def _mismatch(message):
    e = lax_error(TypeError, message)
    e.branches = True
    return e


def _check_branches(what, fns, taken, out, operands):
    if getattr(_probing, "active", False) or len(fns) < 2:
        return
    key = _check_key(fns, operands)
    if key is not None and key in _CHECKED:
        return    # these functions, on operands of these types, were compared already
    outs = {taken: out}
    operands = _read_only(operands)
    for k, fn in enumerate(fns):
        if k != taken and operands is not None and not _has_effects(fn):
            got = _probe(fn, operands)
            if got is not _UNKNOWN:
                outs[k] = got
    if len(outs) < 2:
        return
    first = min(outs)
    leaves, tree = tree_flatten(outs[first])
    for k in sorted(outs):
        if k == first:
            continue
        other, other_tree = tree_flatten(outs[k])
        if other_tree != tree:
            message = rl.branch_structure_message(what, _tree_text(tree), _tree_text(other_tree),
                                                  k, _where(what, fns, first, k))
            raise _mismatch(message if first == 0 else _renamed(what, first, message))
        paths = _paths(outs[first], len(leaves)) if len(leaves) > 1 else [""]
        diffs = [d for d in (rl.branch_diff(p, a, b) for p, a, b in zip(paths, leaves, other))
                 if d]
        if diffs:
            message = rl.branch_type_message(what, k, diffs, _where(what, fns, first, k))
            raise _mismatch(message if first == 0 else _renamed(what, first, message))
    if key is not None and len(outs) == len(fns):
        if len(_CHECKED) >= _CHECKED_SIZE:
            _CHECKED.clear()
        _CHECKED.add(key)


# (the branches' code and closures' types, the operands' types) compared already: a cond in a
# loop is compared on its first trip, not on every one
_CHECKED = set()
_CHECKED_SIZE = 4096


def _check_key(fns, operands):
    """What decides the types of the branches' outputs, as far as it can be known cheaply:
    each function's code and the types of what its closure holds, and the operands' types;
    None where a function or a value is not one of those."""
    parts = []
    for fn in fns:
        code = getattr(fn, "__code__", None)
        if code is None:
            if not isinstance(fn, np.ufunc):
                return None
            parts.append(fn)
            continue
        cells = []
        for cell in fn.__closure__ or ():
            try:
                cells.append(_value_key(cell.cell_contents))
            except (TypeError, ValueError):
                return None
        parts.append((code, tuple(cells)))
    try:
        return tuple(parts), tuple(_value_key(v) for v in operands)
    except (TypeError, ValueError):
        return None


def _value_key(v):
    if isinstance(v, np.ndarray):
        return v.dtype, v.shape
    if isinstance(v, (bool, int, float, complex, np.generic)):
        return type(v)
    if isinstance(v, (tuple, list)):
        return type(v), tuple(_value_key(x) for x in v)
    if isinstance(v, dict):
        return dict, tuple((k, _value_key(x)) for k, x in sorted(v.items()))
    if isinstance(v, types.FunctionType):
        return v.__code__
    raise TypeError("not a value whose type decides")


_UNKNOWN = object()


def _probe(fn, operands):
    _probing.active = True
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*operands)
    except Exception:     # noqa: BLE001  (a branch not taken may fail: its type is unknown)
        return _UNKNOWN
    finally:
        _probing.active = False


def _renamed(what, first, message):
    """A message about branch ``first`` (not 0: branch 0's probe failed) and another."""
    if what == "cond":     # first is 0 whenever both of a cond's outputs are known
        return message
    return message.replace("branch 0", f"branch {first}")


def _where(what, fns, first, k):
    lines = []
    for i in (first, k):
        name = rl.branch_names(what, k)[0 if i == first else 1]
        if what == "switch" and i == first:
            name = f"branch {first}"
        fn = fns[i]
        code = getattr(fn, "__code__", None)
        at = f" at {code.co_filename}:{code.co_firstlineno}" if code is not None else ""
        lines.append(f"{name} is {getattr(fn, '__name__', type(fn).__name__)}{at}")
    return "\n".join(lines) + "\n"


def _paths(tree, n):
    """JAX's text of each leaf's path ([1], ['b']); "" for an output that is one leaf."""
    out = []

    def walk(x, path):
        if isinstance(x, (tuple, list)):
            for i, v in enumerate(x):
                walk(v, f"{path}[{i}]")
        elif isinstance(x, dict):
            for key in sorted(x):
                walk(x[key], f"{path}[{key!r}]")
        elif x is not None:
            out.append(path)
    walk(tree, "")
    return out if len(out) == n else [f"[{k}]" for k in range(n)]


def _read_only(values, objects=False):
    """``values`` with each array a read-only view (a branch not taken must not change what
    the program sees), or None where a leaf is neither an array nor a number (an iterator
    it would advance, an object it might change); ``objects``: other objects are taken as
    they are, but for iterators (a transformed function changes none: strop checks it)."""
    leaves, tree = tree_flatten(list(values))
    out = []
    for leaf in leaves:
        if isinstance(leaf, np.ndarray):
            leaf = leaf.view()
            leaf.flags.writeable = False
        elif not isinstance(leaf, (bool, int, float, complex, np.generic)) and (
                not objects or hasattr(leaf, "__next__")):
            return None
        out.append(leaf)
    return tree.unflatten(out)


# what changes state in place: bytecode that stores into an object, a global or an enclosing
# function's variable, and the methods that change an array, a list, a dict or a set
_STORES = frozenset({"STORE_SUBSCR", "STORE_SLICE", "STORE_ATTR", "STORE_GLOBAL",
                     "DELETE_SUBSCR", "DELETE_SLICE", "DELETE_ATTR", "DELETE_GLOBAL"})
_IN_PLACE = frozenset({"fill", "sort", "put", "itemset", "resize", "partition", "setfield",
                       "append", "extend", "insert", "pop", "remove", "clear", "update",
                       "setdefault", "popitem", "add", "discard", "reverse", "next", "send",
                       "seed", "shuffle", "__setitem__", "__delitem__", "setattr", "delattr",
                       "exec", "eval", "globals", "vars"})


def _stores(code):
    for ins in dis.get_instructions(code):
        if ins.opname in _STORES or ins.opname == "STORE_DEREF" and \
                ins.argval in code.co_freevars:
            return True
    return "out" in [k for c in code.co_consts if isinstance(c, tuple) for k in c]


def _has_effects(fn, depth=4, seen=None):
    """Whether running ``fn`` may do what a program can see (print, strop.debug, callbacks,
    I/O, a change to an object it did not make), as far as its code and the functions it
    names show; what cannot be seen into counts as an effect, except NumPy's and strop.lax's
    own functions."""
    seen = set() if seen is None else seen
    if id(fn) in seen:
        return False
    seen.add(id(fn))
    module = getattr(fn, "__module__", None) or ""
    if module.startswith("strop.debug"):
        return True
    if isinstance(fn, np.ufunc) or module.split(".")[0] == "numpy" or \
            module.startswith(_PURE_MODULES):
        return False
    if isinstance(fn, types.MethodType):
        return _has_effects(fn.__func__, depth, seen)
    code = getattr(fn, "__code__", None)
    if code is None or depth == 0:
        return True
    names, stores = _code_facts(code)
    if stores:
        return True
    space = getattr(fn, "__globals__", {})
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    for name in names:
        cell = cells.get(name)
        try:
            obj = cell.cell_contents if cell is not None else space.get(name)
        except ValueError:    # a cell not yet set
            continue
        if isinstance(obj, types.ModuleType):
            if obj.__name__.startswith("numpy.random") or name == "random" and \
                    obj is not _strop_random():
                return True   # NumPy's global generator: its state is the program's
        elif callable(obj) and not isinstance(obj, type) and \
                _has_effects(obj, depth - 1, seen):
            return True
    return False


@functools.lru_cache(maxsize=1024)
def _code_facts(code):
    """(the names ``code`` and the functions it defines read, whether they surely have an
    effect: a name of one, a store into an object, a global or an enclosing variable)."""
    names, stores = set(), False
    stack = [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        names.update(c.co_freevars)
        stores = stores or _stores(c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return frozenset(names), stores or bool(names & (_EFFECT_NAMES | _IN_PLACE))


def _strop_random():
    from .. import random
    return random
