"""strop: grad, vmap, jit and a splittable PRNG for plain NumPy functions, by source transformation."""
__version__ = "0.1.0"   # before the imports: codegen/load.py reads it as it is imported

from . import debug, errors, lax, nn, scipy, tree_util
from .api import grad, jit, source, show, value_and_grad, vjp
from .config import config
from .custom import custom_jvp, custom_vjp
from .jacobians import hessian, jacfwd, jacobian, jacrev, jvp
from .ops import at
from .placement import block_until_ready, default_backend, device_put, devices
from .vmap import vmap

__all__ = ["grad", "value_and_grad", "vjp", "jit", "vmap", "source", "show", "config", "errors",
           "tree_util", "at", "ops", "random", "jvp", "jacfwd", "jacrev", "jacobian", "hessian",
           "custom_jvp", "custom_vjp", "lax", "nn", "scipy", "debug", "devices", "default_backend",
           "device_put", "block_until_ready"]


def __getattr__(name):   # strop.random, strop.ops and strop.dask load on first use
    if name in ("random", "ops", "dask"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'strop' has no attribute {name!r}")
