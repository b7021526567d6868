"""strop.scipy: SciPy's functions that strop differentiates, vectorizes and compiles (as
``jax.scipy``), with SciPy's names and signatures.  ``special`` holds the first of them."""
from . import special

__all__ = ["special"]
