"""Raw Threefry keys: making them from seeds, splitting them, folding data into them."""
import numbers

import numpy as np

from strop.rng import checks
from strop.rng.streams import fold_in_key, split_keys

_U32 = 0xFFFFFFFF


def PRNGKey(seed):
    """A raw key (uint32 array of shape (2,)) from an integer seed, as jax.random.PRNGKey.

    A 64-bit seed is bit-cast into (high word, low word). As in JAX, a Python int is first
    taken as int64 (so it must fit in int64) and, without enable_x64, then narrowed to int32:
    the key is (0, seed mod 2**32) and a negative seed gives (0, seed + 2**32). With
    enable_x64 a negative seed is its 64-bit two's complement.
    """
    if isinstance(seed, (bool, np.bool_)) or hasattr(seed, "shape") and np.ndim(seed) != 0:
        raise TypeError(f"PRNGKey accepts a scalar integer seed, got {seed!r}")
    if isinstance(seed, numbers.Integral) and not isinstance(seed, np.integer):
        if not -2 ** 63 <= seed < 2 ** 63:
            raise OverflowError(f"PRNGKey: seed {seed} does not fit in int64")
        seed = np.int64(seed)
    arr = np.asarray(seed)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"PRNGKey: the seed must be an integer, got {seed!r} of dtype {arr.dtype}")
    if arr.dtype.itemsize == 8 and not checks.x64():
        arr = arr.astype(np.int32 if arr.dtype.kind == "i" else np.uint32)   # JAX narrows
    value = int(arr)
    if arr.dtype.itemsize == 8:
        bits = value & 0xFFFFFFFFFFFFFFFF
        return np.array([bits >> 32, bits & _U32], np.uint32)
    # 8-, 16- and 32-bit seeds: the logical shift by 32 leaves nothing in the high word
    return np.array([0, value & _U32], np.uint32)


def key(seed, *, impl=None):
    """A key from an integer seed: JAX's newer spelling of PRNGKey.

    JAX's ``key`` returns a typed key array; strop's keys are the raw uint32 words
    (``PRNGKey``'s), so ``key(seed)`` equals ``PRNGKey(seed)`` and ``key_data`` /
    ``wrap_key_data`` convert as in JAX. ``impl`` may only name Threefry, strop's one PRNG.
    """
    _threefry(impl, "key")
    return PRNGKey(seed)


def key_data(keys):
    """The uint32 words of a key or batch of keys, shape (..., 2) (raw keys are their own
    data)."""
    return checks.key_array(keys, "key_data", batched=True).copy()


def wrap_key_data(key_bits_array, *, impl=None):
    """A key (or batch of keys) from its uint32 words, shape (..., 2): the inverse of
    ``key_data``. The words are copied, as JAX's keys do not share memory with the data."""
    _threefry(impl, "wrap_key_data")
    return checks.key_array(key_bits_array, "wrap_key_data", batched=True).copy()


def _threefry(impl, name):
    if impl is not None and impl not in ("threefry2x32", "threefry"):
        raise ValueError(f"{name}: strop has one PRNG, Threefry-2x32 (impl='threefry2x32'); "
                         f"got impl={impl!r}")


def _num_shape(num):
    if checks._is_int(num):
        if num < 0:
            raise ValueError(f"split: num must be non-negative, got {num}")
        return (int(num),)
    if isinstance(num, (tuple, list)):
        return checks.shape_tuple(num, "split", "num")
    raise TypeError(f"split: num must be an int or a tuple of ints, got {num!r}")


def split(key, num=2):
    """Split a key into ``num`` new keys (an int or a shape), as a (*num, 2) uint32 array."""
    key = checks.key_array(key, "split")
    shape = _num_shape(num)
    return split_keys(key, checks.size(shape), checks.partitionable()).reshape(shape + (2,))


def fold_in(key, data):
    """A new key from a key and 32-bit integer data (taken modulo 2**32, as a uint32)."""
    key = checks.key_array(key, "fold_in")
    return fold_in_key(key, fold_in_data(data))


def fold_in_data(data):
    """fold_in's data checked: a scalar integer, as a uint32."""
    if np.ndim(data) != 0:
        raise TypeError(f"fold_in accepts scalar data, got an array of shape {np.shape(data)}")
    if not checks._is_int(data) and not (isinstance(data, np.ndarray) and data.dtype.kind in "iu"):
        raise TypeError(f"fold_in: data must be an integer, got {data!r}")
    return np.uint32(int(data) & _U32)
