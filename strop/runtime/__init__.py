"""What generated code and rule templates call: plain NumPy helpers, one module per family of
rules (transformer/rules/).  This namespace is the one templates name helpers in and generated
code imports them from (``from strop.runtime import ...``).

numba/ holds the Numba implementations of the same helpers, by family; codegen/cpu.py imports
it when it first compiles (``import strop`` does not import Numba).
"""
from . import (arithmetic, base, batching, containers, conv, forward, fpstatus, indexing, iteration,
               jacobians, lax, linalg, numeric, products, reductions, shape, trips, wide)
from .arithmetic import *  # noqa: F401,F403
from .base import *  # noqa: F401,F403
from .batching import *  # noqa: F401,F403
from .containers import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .forward import *  # noqa: F401,F403
from .fpstatus import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .iteration import *  # noqa: F401,F403
from .jacobians import *  # noqa: F401,F403
from .lax import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .numeric import *  # noqa: F401,F403
from .products import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .trips import *  # noqa: F401,F403
from .wide import *  # noqa: F401,F403

FAMILIES = (base, arithmetic, containers, indexing, reductions, shape, products, linalg, numeric,
            batching, iteration, forward, jacobians, wide, lax, conv, fpstatus, trips)

__all__ = [n for family in FAMILIES for n in family.__all__]
