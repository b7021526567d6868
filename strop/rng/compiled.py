"""strop.random inside jit-compiled code: Numba implementations of the public functions that
route to the kernels.

Compiled code bakes in the dtype policy and the stream (``enable_x64``,
``threefry_partitionable``), so the CPU backend calls one variant of each function per
setting (``variant``): Numba's caches, in memory and on disk, then never serve code compiled
under other settings.

Every check the eager functions make holds here too, made by the same functions
(strop.rng.checks): what the arguments' types decide is checked while Numba types the call,
on a sample value of each type (``_eager_error``); what their values decide (a key's length,
a shape's signs, minval <= maxval, split's num) is checked when the compiled code runs. A
failing call raises the eager function's exception type; the runner then runs the code as
Python, where the eager check words the message at the user's line.
"""
import functools
import warnings

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from . import checks
from . import kernels as K
from . import keys, samplers, streams

_ALWAYS = np.ones(1, np.bool_)   # a condition Numba's typing cannot see is always true


def _sample(ty):
    """A Python value of Numba type ``ty`` for the eager checks: its type, dtype and rank are
    the argument's (an array's length 2 on each axis, an int its literal value, else 1)."""
    if isinstance(ty, types.Omitted):
        return ty.value
    if ty is None or isinstance(ty, types.NoneType):
        return None
    if isinstance(ty, types.Literal):
        return ty.literal_value
    if isinstance(ty, types.Array):
        return np.zeros((2,) * ty.ndim, np.dtype(str(ty.dtype)))
    if isinstance(ty, types.Boolean):
        return True
    if isinstance(ty, (types.Integer, types.Float)):
        return np.dtype(str(ty)).type(1)
    if isinstance(ty, types.BaseTuple):
        return tuple(_sample(t) for t in ty.types)
    if isinstance(ty, types.List):
        return [_sample(ty.dtype)]
    if isinstance(ty, types.NumberClass):
        return np.dtype(str(ty.instance_type)).type
    if isinstance(ty, types.DType):
        return np.dtype(str(ty.dtype))
    if isinstance(ty, types.UnicodeType):
        return "?"
    return _UNKNOWN


_UNKNOWN = object()


def _eager_error(**checked):
    """The exception the eager checks raise for arguments of these Numba types, or None:
    ``checked`` maps each check (a function of one value) to the argument's type."""
    for check, ty in checked.values():
        value = _sample(ty)
        if value is _UNKNOWN:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # the dtype warning: given by the Python run
                check(value)
        except (TypeError, ValueError) as e:
            return type(e), str(e)
    return None


def _raising(error, result):
    """A compiled function of no arguments that raises ``error`` (type, message); typed as
    returning ``result`` (dtype, shape) so that the code after the call still types."""
    cls, message = error
    dt, dims = result

    @register_jitable
    def fail():
        if _ALWAYS[0]:
            raise cls(message)
        return np.empty(dims, dt)
    return fail


def _key_checks(name):
    return lambda key: checks.key_array(key, name)


@register_jitable
def _check_key(key):
    if key.shape[0] != 2:
        raise ValueError("a PRNG key must have shape (2,)")


@register_jitable
def _check_shape(shape):
    for s in shape:
        if s < 0:
            raise ValueError("shape entries must be non-negative")


def _sampler_error(name, key, shape, dtype):
    """(the eager error, the shape of the result) of a float sampler's call of these types."""
    error = _eager_error(key=(_key_checks(name), key),
                         shape=(lambda s: checks.shape_tuple(s, name), shape),
                         dtype=(lambda d: checks.float_dtype(d, name), dtype))
    rank = len(shape) if isinstance(shape, types.BaseTuple) else 1
    return error, (np.float32, (0,) * rank)


@register_jitable
def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _float(dtype, x64):
    if dtype is None or isinstance(dtype, (types.NoneType, types.Omitted)):
        return np.float64 if x64 else np.float32
    if isinstance(dtype, types.NumberClass):
        F = np.dtype(str(dtype.instance_type)).type
        return F if x64 or F is not np.float64 else np.float32
    return None


def _unary(kernel, x64, part, name):
    def impl(key, shape=(), dtype=None):
        error, result = _sampler_error(name, key, shape, dtype)
        if error is not None:
            fail = _raising(error, result)
            return lambda key, shape=(), dtype=None: fail()
        F = _float(dtype, x64)
        if F is None:
            return None

        def shaped(key, shape=(), dtype=None):
            _check_key(key)
            _check_shape(shape)
            return kernel(key, _size(shape), F, part).reshape(shape)
        return shaped
    return impl


def _uniform(x64, part):
    def impl(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
        error, result = _sampler_error("uniform", key, shape, dtype)
        if error is not None:
            fail = _raising(error, result)
            return lambda key, shape=(), dtype=None, minval=0.0, maxval=1.0: fail()
        F = _float(dtype, x64)
        if F is None:
            return None

        def shaped(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
            _check_key(key)
            _check_shape(shape)
            lo, hi = np.full(1, minval, F), np.full(1, maxval, F)
            if lo[0] > hi[0]:
                raise ValueError("uniform: minval must not exceed maxval")
            return K.uniform_kernel(key, _size(shape), lo, hi, part).reshape(shape)
        return shaped
    return impl


def _bernoulli(x64, part):
    """bernoulli with a number p and a shape (dropout's masks), mode 'low'; other calls are
    not compiled (jit falls back to Python, with a JitFallbackWarning)."""
    def impl(key, p=0.5, shape=None, mode="low"):
        if not isinstance(p, (types.Float, types.Integer)) or not isinstance(
                shape, types.BaseTuple) or not (mode == "low" or isinstance(mode, types.Omitted)):
            return None
        error, result = _sampler_error("bernoulli", key, shape, None)
        if error is not None:
            fail = _raising(error, (np.bool_, result[1]))
            return lambda key, p=0.5, shape=None, mode="low": fail()
        F = np.float64 if x64 else np.float32
        pairs = F is np.float32 and not part   # two 32-bit values per 64-bit unit

        def shaped(key, p=0.5, shape=None, mode="low"):
            _check_key(key)
            _check_shape(shape)
            if not 0 <= p <= 1:
                raise ValueError("bernoulli: probability p must be in [0, 1]")
            n = _size(shape)
            units = (n + 1) // 2 if pairs else n
            out = np.empty(n, np.bool_)   # (filled in one piece: a mask is small)
            K.bernoulli_fill(key, n, np.full(1, p, F), False, part, out, 0, units)
            return out.reshape(shape)
        return shaped
    return impl


def _split(x64, part):
    def impl(key, num=2):
        error = _eager_error(key=(_key_checks("split"), key), num=(keys._num_shape, num))
        if error is not None:
            fail = _raising(error, (np.uint32, (0, 2)))
            return lambda key, num=2: fail()
        if isinstance(num, (types.Integer, types.Omitted, int)):
            def split(key, num=2):
                _check_key(key)
                if num < 0:
                    raise ValueError("split: num must be non-negative")
                return streams.split_keys(key, num, part)
            return split
    return impl


def _fold_in(x64, part):
    def impl(key, data):
        error = _eager_error(key=(_key_checks("fold_in"), key),
                             data=(keys.fold_in_data, data))
        if error is not None:
            fail = _raising(error, (np.uint32, (0,)))
            return lambda key, data: fail()

        def fold_in(key, data):
            _check_key(key)
            return streams.fold_in_key(key, np.uint32(data & 0xFFFFFFFF))
        return fold_in
    return impl


def _seed_key(x64):
    """``make(seed)``: for a seed of Numba type ``seed``, a compiled function from the seed to
    its key, as keys.PRNGKey computes it (or one raising PRNGKey's error)."""
    def make(seed):
        error = _eager_error(seed=(keys.PRNGKey, seed))
        if error is not None:
            fail = _raising(error, (np.uint32, (0,)))

            @register_jitable
            def failing(seed):
                return fail()
            return failing
        if isinstance(seed, types.Integer) and seed.bitwidth == 64 and x64:
            @register_jitable
            def from_seed(seed):   # the 64 bits, high word first
                bits = np.uint64(seed)
                out = np.empty(2, np.uint32)
                out[0] = np.uint32(bits >> np.uint64(32))
                out[1] = np.uint32(bits & np.uint64(0xFFFFFFFF))
                return out
        else:
            @register_jitable
            def from_seed(seed):   # 32 bits or fewer (x64 off: JAX narrows to 32)
                out = np.zeros(2, np.uint32)
                out[1] = np.uint32(np.int64(seed) & 0xFFFFFFFF)
                return out
        return from_seed
    return make


def _prng_key(x64, part):
    def impl(seed):
        run = _seed_key(x64)(seed)
        return lambda seed: run(seed)
    return impl


def _key(x64, part):
    def impl(seed, impl=None):
        if not isinstance(impl, (types.NoneType, types.Omitted)) and impl is not None:
            return None   # another impl: Numba fails, and the Python run words the error
        run = _seed_key(x64)(seed)
        return lambda seed, impl=None: run(seed)
    return impl


def _words_error(name, keys):
    error = _eager_error(keys=(lambda k: checks.key_array(k, name, batched=True), keys))
    return error, (np.uint32, (0,) * max(getattr(keys, "ndim", 1), 1))


@register_jitable
def _words(keys):
    if keys.shape[-1] != 2:
        raise ValueError("a batch of PRNG keys must have shape (..., 2)")
    return keys.copy()


def _key_data(x64, part):
    def impl(keys):
        error, result = _words_error("key_data", keys)
        if error is not None:
            fail = _raising(error, result)
            return lambda keys: fail()
        return lambda keys: _words(keys)
    return impl


def _wrap_key_data(x64, part):
    def impl(key_bits_array, impl=None):
        if not isinstance(impl, (types.NoneType, types.Omitted)) and impl is not None:
            return None
        error, result = _words_error("wrap_key_data", key_bits_array)
        if error is not None:
            fail = _raising(error, result)
            return lambda key_bits_array, impl=None: fail()
        return lambda key_bits_array, impl=None: _words(key_bits_array)
    return impl


IMPLEMENTATIONS = {
    keys.PRNGKey: _prng_key,
    keys.key: _key,
    keys.key_data: _key_data,
    keys.wrap_key_data: _wrap_key_data,
    samplers.normal: lambda x64, part: _unary(K.normal_kernel, x64, part, "normal"),
    samplers.exponential: lambda x64, part: _unary(K.exponential_kernel, x64, part,
                                                   "exponential"),
    samplers.laplace: lambda x64, part: _unary(K.laplace_kernel, x64, part, "laplace"),
    samplers.logistic: lambda x64, part: _unary(K.logistic_kernel, x64, part, "logistic"),
    samplers.uniform: _uniform,
    samplers.bernoulli: _bernoulli,
    keys.split: _split,
    keys.fold_in: _fold_in,
}


@functools.lru_cache(maxsize=None)
def variant(fn, x64, part):
    """The function ``fn`` of strop.random as compiled code calls it under these settings."""
    make = IMPLEMENTATIONS.get(fn)
    if make is None:
        return fn   # no compiled version: Numba fails, and jit falls back to Python

    @functools.wraps(fn)
    def stub(*args, **kwargs):
        return fn(*args, **kwargs)
    # the settings show in the name, so in the generated source and its content hash: Numba's
    # disk cache, keyed by that file, never serves code compiled under other settings
    stub.__name__ = fn.__name__ + ("_x64" if x64 else "") + ("_partitionable" if part else "")
    overload(stub)(make(x64, part))
    return stub
