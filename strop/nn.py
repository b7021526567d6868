"""strop.nn: JAX's activation functions and friends (``jax.nn``), with JAX's names, signatures
and conventions, written as the plain NumPy a user would write.

Called on values they run as NumPy.  Called inside a transformed function they are inlined
like the user's own functions (transformer/normalize_calls.py), so ``grad``, ``jvp``,
``vmap`` and ``jit`` treat them as the user's code: compiled, no fallback.  Where the
derivative NumPy's formula would give is not JAX's, or not finite, the function is a
``custom_jvp`` with JAX's rule:

| function | JAX's convention kept |
|---|---|
| relu | ``relu'(0) = 0`` (a ``where``, not ``maximum``, whose tie splits the derivative) |
| sigmoid | ``exp(-|x|)``: no overflow at either end; derivative ``s * (1 - s)`` |
| softplus | ``logaddexp(x, 0)``: ``softplus(1000) = 1000``; derivative ``sigmoid(x)`` |
| logsumexp | the maximum is shifted out (a constant: no derivative flows through it); a maximum of ``-inf`` is replaced by 0, so all ``-inf`` gives ``-inf``, not NaN; a negative sum (``b``) gives NaN without ``return_sign`` |
| softmax, log_softmax | the same shift: large logits do not overflow |
| gelu | ``approximate=True`` by default (the tanh form), as JAX |
| elu | the ``expm1`` branch sees only ``x <= 0``, so its derivative is finite everywhere |
| one_hot | JAX's default float by default (float32, float64 with ``enable_x64``), JAX's ``axis`` |

``gelu(x, approximate=False)`` needs ``erfc``, which NumPy lacks: here ``erfc`` is Cephes'
rational functions (as XLA's float64 erfc; beyond ``|x| = 1`` times ``exp(-x**2)``), a few
ulps relative in either precision however small the value.  (``erf`` is XLA's float32
rational interpolant, Eigen's, about 1e-7 accurate in float64 too.)
"""
import numpy as np

from .custom import custom_jvp
from .dtypes import default_float
from .lax import stop_gradient

__all__ = ["relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "soft_sign", "silu",
           "swish", "gelu", "elu", "celu", "selu", "leaky_relu", "hard_tanh", "softmax",
           "log_softmax", "logsumexp", "one_hot", "standardize"]


@custom_jvp
def relu(x):
    """``max(x, 0)``; its derivative at 0 is 0, as JAX's."""
    return np.where(x > 0, x, np.zeros_like(x))


@relu.defjvp
def _relu_jvp(primals, tangents):
    x, = primals
    dx, = tangents
    return relu(x), np.where(x > 0, dx, np.zeros_like(dx))


def relu6(x):
    """``min(max(x, 0), 6)``; derivative 0 at both kinks, as JAX's."""
    return np.where(x < 6, relu(x), np.full_like(x, 6))


@custom_jvp
def sigmoid(x):
    """``1 / (1 + exp(-x))``, from ``exp(-|x|)``: no overflow for large ``|x|``."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, np.ones_like(e), e) / (1 + e)


@sigmoid.defjvp
def _sigmoid_jvp(primals, tangents):
    x, = primals
    dx, = tangents
    s = sigmoid(x)
    return s, dx * s * (1 - s)


def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``."""
    return -softplus(-x)


@custom_jvp
def softplus(x):
    """``log(1 + exp(x))``, as ``logaddexp(x, 0)``: ``softplus(1000) = 1000``."""
    return np.logaddexp(x, 0)


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    x, = primals
    dx, = tangents
    return softplus(x), dx * sigmoid(x)


def soft_sign(x):
    """``x / (|x| + 1)``."""
    return x / (np.abs(x) + 1)


def silu(x):
    """``x * sigmoid(x)`` (also called swish)."""
    return x * sigmoid(x)


swish = silu


def gelu(x, approximate=True):
    """The Gaussian error linear unit: the tanh approximation by default, as JAX; exact
    (``x * Phi(x)``, as ``x * erfc(-x / sqrt(2)) / 2``, JAX's form) with
    ``approximate=False``: through ``erfc``, the left tail keeps its relative precision
    (``gelu(-6.)`` is about -5.9e-9, where ``1 + erf`` would give -0.0)."""
    if approximate:
        cdf = 0.5 * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * (x ** 3))))
        return x * cdf
    return 0.5 * x * erfc(x * -0.7071067811865476)   # JAX's form: the left tail stays exact


def elu(x, alpha=1.0):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    safe = np.where(x > 0, np.zeros_like(x), x)
    return np.where(x > 0, x, alpha * np.expm1(safe))


def celu(x, alpha=1.0):
    """``max(x, 0) + alpha * min(exp(x / alpha) - 1, 0)``."""
    return np.where(x > 0, x, alpha * np.expm1(np.where(x > 0, np.zeros_like(x), x) / alpha))


def selu(x):
    """``lambda * elu(x, alpha)`` with the self-normalizing constants."""
    safe = np.where(x > 0, np.zeros_like(x), x)
    return 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(safe))


def leaky_relu(x, negative_slope=0.01):
    """``x`` where ``x >= 0``, else ``negative_slope * x``."""
    return np.where(x >= 0, x, negative_slope * x)


def hard_tanh(x):
    """``x`` clipped to [-1, 1]."""
    return np.where(x > 1, np.ones_like(x), np.where(x < -1, -np.ones_like(x), x))


def _stable_max(x, axis):
    """The maximum along ``axis`` (kept), 0 where it is not finite, with no derivative:
    the shift that keeps ``exp`` from overflowing (JAX's ``stop_gradient`` of it)."""
    m = np.max(x, axis=axis, keepdims=True)
    return np.where(np.isfinite(m), m, np.zeros_like(m))


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x))`` along ``axis``; with ``where``, masked entries are 0."""
    if where is None:
        e = np.exp(x - stop_gradient(_stable_max(x, axis)))
        return e / np.sum(e, axis=axis, keepdims=True)
    m = stop_gradient(_stable_max(np.where(where, x, np.full_like(x, -np.inf)), axis))
    e = np.exp(x - m)
    e = np.where(where, e, np.zeros_like(e))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x)`` along ``axis``; with ``where``, masked entries are ``-inf``."""
    if where is None:
        shifted = x - stop_gradient(_stable_max(x, axis))
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    masked = np.full_like(x, -np.inf)
    shifted = x - stop_gradient(_stable_max(np.where(where, x, masked), axis))
    e = np.exp(shifted)
    total = np.sum(np.where(where, e, np.zeros_like(e)), axis=axis, keepdims=True)
    return np.where(where, shifted - np.log(total), masked)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` along ``axis`` (all axes by default), computed stably; with
    ``return_sign``, ``(log|sum|, sign)`` where ``b`` makes the sum negative."""
    if where is not None:
        a = np.where(where, a, np.full_like(a, -np.inf))
    if axis is None:   # all axes: those of the flattened array
        flat = np.ravel(a)
        e = np.exp(flat - stop_gradient(_stable_max(flat, 0)))
        if b is not None:
            e = e * np.ravel(np.broadcast_to(b, np.shape(a)))
        if keepdims:   # (a sum over every axis, each kept)
            total = np.sum(e) + np.zeros_like(_stable_max(a, None))
            shift = np.max(a, axis=None, keepdims=True)
        else:
            total = np.sum(e)
            shift = np.max(flat)
    else:
        e = np.exp(a - stop_gradient(_stable_max(a, axis)))
        if b is not None:
            e = e * b
        total = np.sum(e, axis=axis, keepdims=keepdims)
        shift = np.max(a, axis=axis, keepdims=keepdims)
    shift = stop_gradient(np.where(np.isfinite(shift), shift, np.zeros_like(shift)))
    if return_sign:
        return np.log(np.abs(total)) + shift, np.sign(total)
    return np.log(total) + shift   # (a negative sum: NaN, as SciPy and JAX)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """``x[..., None] == arange(num_classes)`` as ``dtype`` (by default JAX's default float:
    float32, float64 with ``enable_x64``), the new axis at ``axis``."""
    hot = np.expand_dims(x, -1) == np.arange(num_classes)
    if axis != -1:
        hot = np.moveaxis(hot, -1, axis)
    if dtype is None:
        return hot.astype(default_float())
    return hot.astype(dtype)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    """``(x - mean) / sqrt(variance + epsilon)``, the statistics along ``axis`` by default."""
    if mean is None:
        mean = np.mean(x, axis=axis, keepdims=True)
    if variance is None:
        variance = np.mean(np.square(x), axis=axis, keepdims=True) - np.square(mean)
    return (x - mean) / np.sqrt(variance + epsilon)


@custom_jvp
def erf(x):
    """The error function: XLA's float32 rational interpolant (Eigen's), saturating at
    +-1 beyond |x| = 3.8325; about 1e-7 accurate."""
    c = np.where(np.abs(x) < 3.832506856900711, x, np.sign(x) * 3.832506856900711)
    x2 = c * c
    p = c * (((((0.00022905065861350646 * x2 + 0.0034082910107109506) * x2
                + 0.050955695062380861) * x2 + 0.18520832239976145) * x2
              + 1.128379143519084))
    q = (((((((-1.1791602954361697e-7 * x2 + 0.000023547966471313185) * x2
              + 0.0010179625278914885) * x2 + 0.014070470171167667) * x2
            + 0.11098505178285362) * x2 + 0.49746925110067538) * x2) + 1.0)
    return np.where(np.abs(x) < 3.832506856900711, p / q, np.sign(x))


@erf.defjvp
def _erf_jvp(primals, tangents):
    x, = primals
    dx, = tangents
    return erf(x), dx * 1.1283791670955126 * np.exp(-x * x)



@custom_jvp
def erfc(x):
    """The complementary error function ``1 - erf(x)``, accurate relative to its value in the
    right tail (where ``1 - erf`` would cancel to 0): ``1 - x T(x**2) / U(x**2)`` for
    ``|x| < 1``, else ``exp(-x**2) P(|x|) / Q(|x|)`` (``|x| < 8``) or ``R(|x|) / S(|x|)``,
    reflected as ``2 - erfc(-x)`` for x < 0, with Cephes' coefficients (ndtr.c, as XLA's
    float64 erfc): a few ulps in float64 and in float32.
    The derivative is the exact ``-2/sqrt(pi) exp(-x**2)``."""
    a = np.minimum(np.abs(x), 28.0)   # exp(-28**2) is 0 in float64: the value has underflowed
    z = np.exp(-a * a)
    near = ((((((((2.46196981473530512524e-10 * a + 5.64189564831068821977e-1) * a
                  + 7.46321056442269912687e0) * a + 4.86371970985681366614e1) * a
                + 1.96520832956077098242e2) * a + 5.26445194995477358631e2) * a
              + 9.34528527171957607540e2) * a + 1.02755188689515710272e3) * a
            + 5.57535335369399327526e2) / ((((((((a + 1.32281951154744992508e1) * a
                                                 + 8.67072140885989742329e1) * a
                                                + 3.54937778887819891062e2) * a
                                               + 9.75708501743205489753e2) * a
                                              + 1.82390916687909736289e3) * a
                                             + 2.24633760818710981792e3) * a
                                            + 1.65666309194161350182e3) * a
                                           + 5.57535340817727675546e2)
    far = (((((5.64189583547755073984e-1 * a + 1.27536670759978104416e0) * a
              + 5.01905042251180477414e0) * a + 6.16021097993053585195e0) * a
            + 7.40974269950448939160e0) * a + 2.97886665372100240670e0) / (
        (((((a + 2.26052863220117276590e0) * a + 9.39603524938001434673e0) * a
           + 1.20489539808096656605e1) * a + 1.70814450747565897222e1) * a
         + 9.60896809063285878198e0) * a + 3.36907645100081516050e0)
    tail = z * np.where(a < 8.0, near, far)
    c = np.minimum(a, 1.0) * np.sign(x)   # |x| < 1: 1 - erf(x), erf as Cephes' T / U
    c2 = c * c
    inner = 1.0 - c * ((((9.60497373987051638749e0 * c2 + 9.00260197203842689217e1) * c2
                         + 2.23200534594684319226e3) * c2 + 7.00332514112805075473e3) * c2
                       + 5.55923013010394962768e4) / (((((c2 + 3.35617141647503099647e1) * c2
                                                         + 5.21357949780152679795e2) * c2
                                                        + 4.59432382970980127987e3) * c2
                                                       + 2.26290000613890934246e4) * c2
                                                      + 4.92673942608635921086e4)
    return np.where(a < 1.0, inner, np.where(x < 0, 2.0 - tail, tail))


@erfc.defjvp
def _erfc_jvp(primals, tangents):
    x, = primals
    dx, = tangents
    return erfc(x), dx * -1.1283791670955126 * np.exp(-x * x)
