"""strop.scipy.special: SciPy's special functions that strop transforms (``jax.scipy.special``),
with SciPy's signatures, written as the plain NumPy strop.nn is written in.

Called on values they run as NumPy.  Inside a transformed function they are inlined like the
user's own code; a call of SciPy's own function there (``from scipy.special import
logsumexp``) runs the one here instead (``LIBRARY_TWINS``): strop never reads an installed library's
source, and these give SciPy's values.

| function | as SciPy |
|---|---|
| logsumexp | ``axis=None`` (all axes), ``b``, ``keepdims``, ``return_sign``; a negative sum: NaN |
| softmax, log_softmax | ``axis=None``: over all the elements |
| expit | ``1 / (1 + exp(-x))``, no overflow at either end |
| logit | ``log(p / (1 - p))`` |
| erfc, ndtr | Cephes' rational functions (strop.nn.erfc), a few ulps |
"""
import numpy as np

from .. import nn
from ..transformer.inline import LIBRARY_TWINS

__all__ = ["logsumexp", "softmax", "log_softmax", "expit", "logit", "erfc", "ndtr"]


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b * exp(a)))`` along ``axis``, computed stably."""
    return nn.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


def softmax(x, axis=None):
    """``exp(x) / sum(exp(x))`` along ``axis`` (all the elements by default, as SciPy)."""
    return nn.softmax(x, axis=axis)


def log_softmax(x, axis=None):
    return nn.log_softmax(x, axis=axis)


def expit(x):
    return nn.sigmoid(x)


def logit(p):
    return np.log(p) - np.log1p(-p)


def erfc(x):
    return nn.erfc(x)


def ndtr(x):
    """The standard normal distribution function, ``erfc(-x / sqrt(2)) / 2``."""
    return 0.5 * nn.erfc(x * -0.7071067811865476)


# transformed code calling SciPy's function runs the one here in its place
LIBRARY_TWINS["scipy.special"] = {name: globals()[name] for name in __all__}
