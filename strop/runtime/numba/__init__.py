"""Numba implementations of the runtime helpers, one module per family, chosen by argument
types at compile time.

Each ``@overload`` gives the code that njit-compiled generated code runs when it calls the
helper; Python calls still run the NumPy version.  Importing this package registers them all
(codegen/cpu.py does, before it first compiles).  Helpers without an implementation are
compiled from their own source (``register_jitable``) when Numba can; when it cannot, the
compile fails and jit falls back to the python backend with a JitFallbackWarning.  The order
below is the order in which Numba tries a helper's implementations: numeric's overloads come
after their helpers' own source.
"""
from numba.np import arraymath, arrayobj  # noqa: F401
from numba.np import linalg as _numba_linalg  # noqa: F401
from numba.np.polynomial import polynomial_functions  # noqa: F401

from ... import runtime as rt

# (Numba's own implementations of NumPy, imported above, are registered first, so that
# Numba tries them before ours in axes.py: ours serve only the arguments its
# own do not take)
from . import (arithmetic, axes, base, batching, containers, fpstatus,  # noqa: F401
               indexing, linalg, products, reductions, shape, sums)
from ._common import compile_the_rest

compile_the_rest((rt.base, rt.arithmetic, rt.containers, rt.indexing, rt.reductions, rt.shape,
                  rt.products, rt.linalg, rt.numeric, rt.batching, rt.iteration, rt.trips),
                 base.IMPLEMENTED | arithmetic.IMPLEMENTED | containers.IMPLEMENTED
                 | indexing.IMPLEMENTED | reductions.IMPLEMENTED | products.IMPLEMENTED
                 | batching.IMPLEMENTED | shape.IMPLEMENTED | linalg.IMPLEMENTED
                 | {rt.polyval_vjp_p, rt.polyval_slope}    # numeric.py's (their source fails)
                 | {rt.elementwise, rt.elementwise_into, rt.chain_like, rt.unbroadcast_chain,   # loops.py's
                    rt.add_at_index_chain})

from . import twins, via_numpy  # noqa: E402,F401
from . import forward, jacobians  # noqa: E402

compile_the_rest((rt.forward, rt.jacobians), forward.IMPLEMENTED | jacobians.IMPLEMENTED)

from . import conv, lax, loops, numeric, wide  # noqa: E402,F401

# last: what none of the above compiles runs through NumPy in an object-mode island
from . import islands  # noqa: E402

islands.islands((rt.base, rt.arithmetic, rt.containers, rt.indexing, rt.reductions, rt.shape,
                 rt.products, rt.linalg, rt.numeric, rt.batching, rt.iteration, rt.forward,
                 rt.jacobians, rt.lax, rt.conv), containers.IMPLEMENTED)
for _fn in (*islands.NUMPY, *islands.SIGNATURES):
    islands.island(_fn, islands.SIGNATURES.get(_fn))
