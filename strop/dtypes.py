"""The 64-bit policy of DESIGN: 32-bit values unless ``config.enable_x64``."""
import numpy as np

from .config import config
from .tree_util import tree_map

_NARROW = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32,
           np.dtype(np.uint64): np.uint32, np.dtype(np.complex128): np.complex64}


def canonicalize(value):
    """A leaf as the transformed code sees it: Python floats become NumPy scalars of the
    default float width, and with x64 off 64-bit arrays become 32-bit ones."""
    x64 = config._values["enable_x64"]   # (read on every call: config.read's checks cost)
    if isinstance(value, bool):
        return value
    if type(value) is float:   # (a NumPy float64 is a float too: kept, or narrowed below)
        return np.float64(value) if x64 else np.float32(value)
    if isinstance(value, (np.ndarray, np.generic)) and not x64:
        narrow = _NARROW.get(value.dtype)
        if narrow is not None:
            return value.astype(narrow)
    return value


def canonicalize_tree(tree):
    if isinstance(tree, np.ndarray):   # the common case, kept cheap (a leaf, subclass or not)
        return tree if tree.dtype not in _NARROW or config._values["enable_x64"] else \
            canonicalize(tree)
    if type(tree) in PYTHON_NUMBERS or isinstance(tree, np.generic):
        return canonicalize(tree)   # a leaf: tree_map's flattening costs more than the work
    if type(tree) is dict:   # the user's order of keys kept (tree_map sorts them, as JAX's)
        return {k: canonicalize_tree(v) for k, v in tree.items()}
    if type(tree) in (list, tuple):
        return type(tree)(canonicalize_tree(v) for v in tree)
    return tree_map(canonicalize, tree)


def canonicalize_globals(values):
    """The values of the globals and closure variables a transformed function reads, as its
    code sees them: part of the transform boundary, so narrowed as arguments are (with x64 off,
    a module's float64 ``W`` is float32 inside, as JAX makes it a constant of the computation's
    type; compiled code typed it float64 and could not unify it with the float32 values beside
    it).  Read on every call: a copy where narrowed, so an update in place is seen."""
    if config._values["enable_x64"]:
        return values
    return [v if type(v) in _KEPT or type(v) is np.ndarray and v.dtype not in _NARROW
            else canonicalize_tree(v) for v in values]


_KEPT = (int, bool, str, type(None))
PYTHON_NUMBERS = (float, int, bool, complex)


def is_float_leaf(value):
    return isinstance(value, float) or (
        isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "fc")  # inexact


def default_float():
    """The default float type: float64 with enable_x64, else float32 (JAX's).  Called in a
    transformed function (``strop.nn``'s code), it is a constant of the code made, which is
    made again when the setting changes."""
    return np.float64 if config.read("enable_x64") else np.float32


default_float.__strop_setting__ = True
