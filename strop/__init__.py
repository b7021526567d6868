"""strop: grad, vmap, jit and a splittable PRNG for plain NumPy functions, by source transformation."""
__version__ = "0.1.0"

from . import errors, tree_util  # noqa: E402
from .api import grad, jit, source, show, value_and_grad, vjp  # noqa: E402
from .vmap import vmap  # noqa: E402
from .config import config  # noqa: E402
from .ops import at  # noqa: E402
from . import lax  # noqa: E402

__all__ = ["grad", "value_and_grad", "vjp", "jit", "vmap", "source", "show", "config", "errors", "tree_util",
           "at", "ops", "random", "lax"]


def __getattr__(name):   # strop.random and strop.ops load on first use
    if name in ("random", "ops"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'strop' has no attribute {name!r}")
from .jacobians import hessian, jacfwd, jacrev, jvp  # noqa: E402
from .custom import custom_jvp, custom_vjp  # noqa: E402
__all__ += ["jvp", "jacfwd", "jacrev", "hessian", "custom_jvp", "custom_vjp"]
