"""Device implementations of what generated kernels call: the checked index every array read
goes through, and the runtime helpers of lane code for numba-cuda: ``weak`` and strop.lax's
type checks (a loop's carry keeps its type, a cond's branches agree).  Those checks are made
when the kernel is compiled, as on the CPU: a mismatch fails the compile, and the call falls
back to the CPU's code, which raises JAX's error at the user's line.

In Numba's simulator a kernel runs as Python, calling the helpers' Python versions; on a GPU
(or compiling to PTX) the overloads below are what runs.  ``DEVICE`` lists the plain functions
the CUDA codegen turns into device functions in the module it loads.
"""
import contextlib

import numpy as np

from . import cuda, simulated, ufuncs
from .. import arithmetic, base
from .. import lax as runtime_lax


def index_in(i, n, err):
    """``i`` as an index into an axis of length ``n`` (a negative one counts from the end).
    Out of range, a kernel cannot raise: it sets ``err[0]`` (the launcher raises IndexError at
    the user's line) and reads element 0 instead of memory outside the array."""
    if i < 0:
        i += n
    if i < 0 or i >= n:
        err[0] = 1
        return 0
    return i


DEVICE = (index_in,)
# what else lane code may call in a kernel: the helpers overloaded below, for numbers
NUMBERS = (arithmetic.weak, base.narrow, base.seed_grad, base.zeros_like, base.ones_like,
           runtime_lax.carry_check, runtime_lax.branch_type, runtime_lax.branch_types_agree,
           np.where)
_registered = []


def register():
    """The numba-cuda overloads of the runtime helpers lane code calls (once, where kernels
    are compiled rather than simulated)."""
    if _registered or simulated():
        return
    _registered.append(True)
    ufuncs.register()
    from numba import types
    from numba.cuda.extending import overload

    @overload(arithmetic.weak, inline="always")
    def _weak(number, like):   # a Python number takes the type of what it meets (NumPy's)
        same = (isinstance(like, types.Float) and isinstance(number, (types.Integer, types.Float))
                or isinstance(like, types.Integer) and isinstance(number, types.Integer))
        if same:
            cast = np.dtype(str(like)).type
            return lambda number, like: cast(number)
        return lambda number, like: number

    @overload(np.where, inline="always")
    def _where(condition, x, y):   # of numbers (what a lane or an element has): one of them
        if all(isinstance(t, (types.Number, types.Boolean)) for t in (condition, x, y)):
            kind = np.result_type(np.dtype(str(x)), np.dtype(str(y))).type
            return lambda condition, x, y: kind(x) if condition else kind(y)

    def number_like(value):   # seed_grad, zeros_like, ones_like of a lane's number
        def typer(x):
            if isinstance(x, types.Float):
                kind = np.dtype(str(x)).type
                return lambda x: kind(value)
            if isinstance(x, types.Integer) and value == 0:   # an integer's cotangent
                return lambda x: 0.0
        return typer

    overload(base.seed_grad, inline="always")(number_like(1))
    overload(base.zeros_like, inline="always")(number_like(0))
    overload(base.ones_like, inline="always")(number_like(1))

    @overload(base.narrow, inline="always")
    def _narrow(x):   # a number (a kernel's values are NumPy's): 64-bit ones to 32-bit
        to = {"float64": np.float32, "int64": np.int32, "uint64": np.uint32}.get(str(x))
        if to is not None:
            return lambda x: to(x)
        return lambda x: x

    from ..numba.lax import _carry_static, _witness_type   # (the CPU's typing rules)

    @overload(runtime_lax.carry_check, inline="always")
    def _carry_check(init, new, what, where):
        if _carry_static(init, new) is not True:
            raise TypeError("a loop's carry changes type (the CPU's code says how)")
        return lambda init, new, what, where: None

    @overload(runtime_lax.branch_type, inline="always")
    def _branch_type(x, prev, what, index, path, x64):
        # the witness of a branch output's type: a tuple whose length stands for the type,
        # so that two branches of different types do not unify and the compile fails
        witness = _witness_type(x, getattr(x64, "literal_value", None))
        n = _WITNESSES.setdefault(str(witness), len(_WITNESSES) + 1)
        if not isinstance(prev, (types.NoneType, types.Omitted)) and \
                not (isinstance(prev, types.UniTuple) and prev.count == n):
            raise TypeError("branches must have equal output types (the CPU's code says how)")
        zeros = (0,) * n
        return lambda x, prev, what, index, path, x64: zeros

    @overload(runtime_lax.branch_types_agree, inline="always")
    def _branch_types_agree(witness):
        return lambda witness: None


_WITNESSES = {}


@contextlib.contextmanager
def compiling_for(cc):
    """Compiling to PTX without a GPU: numba-cuda asks the current device for its compute
    capability when it compiles a device function a kernel calls (not only the kernel's
    ``cc``), which fails without a driver; while this holds, it is told ``cc``."""
    from numba.cuda import dispatcher
    asked = getattr(dispatcher, "get_current_device", None)
    if asked is None or _have_device():
        yield
        return
    dispatcher.get_current_device = lambda: _Capability(cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = asked


class _Capability:
    def __init__(self, cc):
        self.compute_capability = tuple(cc)


def _have_device():
    try:
        return cuda().is_available()
    except Exception:
        return False


__all__ = ["cuda", "index_in", "register", "compiling_for", "DEVICE"]
