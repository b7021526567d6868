"""strop.random's contract outside the reference vectors: the Sharp Bits values, the 64-bit
policy, and clear errors for bad input."""
import warnings

import numpy as np
import pytest

import strop
import strop.random as random
from strop.config import config


def test_sharp_bits_values():
    with config.override(threefry_partitionable=False, enable_x64=False):
        key = random.PRNGKey(0)
        np.testing.assert_array_equal(key, [0, 0])
        key, subkey = random.split(key)
        np.testing.assert_array_equal(key, [4146024105, 967050713])
        np.testing.assert_array_equal(subkey, [2718843009, 1272950319])
        assert random.normal(subkey, (1,)).tolist() == [np.float32(-1.2515389)]
        key, subkey = random.split(key)
        np.testing.assert_array_equal(key, [2384771982, 3928867769])
        np.testing.assert_array_equal(subkey, [1278412471, 2182328957])


def test_float64_without_x64_warns_and_gives_float32():
    key = random.PRNGKey(1)
    with config.override(enable_x64=False):
        with pytest.warns(UserWarning, match='strop.config.update\\("enable_x64", True\\)'):
            x = random.uniform(key, (3,), dtype=np.float64)
        assert x.dtype == np.float32
        np.testing.assert_array_equal(x, random.uniform(key, (3,)))
        with pytest.warns(UserWarning):
            assert random.randint(key, (2,), 0, 5, dtype=np.int64).dtype == np.int32
    with config.override(enable_x64=True):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert random.uniform(key, (3,), dtype=np.float64).dtype == np.float64
            assert random.normal(key).dtype == np.float64
            assert random.bits(key).dtype == np.uint64


def test_key_data_and_batches():
    keys = random.split(random.PRNGKey(0), (2, 3))
    assert keys.shape == (2, 3, 2) and keys.dtype == np.uint32
    np.testing.assert_array_equal(random.key_data(keys), keys)
    with pytest.raises(ValueError, match="single key of shape \\(2,\\).*batch"):
        random.normal(keys, (2,))


def test_key_is_jaxs_newer_spelling_of_prngkey():
    # jax.random.key(s) is a typed key whose key_data is PRNGKey(s)'s words; strop's keys are
    # the words themselves, and wrap_key_data/key_data convert
    for seed in (0, 42, -3, np.int32(7), np.uint32(2 ** 32 - 1)):
        np.testing.assert_array_equal(random.key_data(random.key(seed)), random.PRNGKey(seed))
    with config.override(enable_x64=True):
        np.testing.assert_array_equal(random.key(2 ** 40 + 5), [256, 5])
    keys = random.split(random.key(1), (2, 3))
    data = random.key_data(keys)
    wrapped = random.wrap_key_data(data)
    np.testing.assert_array_equal(wrapped, keys)
    data[0, 0, 0] += 1                      # the words are copied: the key does not change
    np.testing.assert_array_equal(random.wrap_key_data(random.key_data(keys)), keys)
    assert wrapped[0, 0, 0] != data[0, 0, 0]
    np.testing.assert_array_equal(random.normal(random.wrap_key_data(data[1, 2]), (3,)),
                                  random.normal(keys[1, 2], (3,)))
    assert random.key(3, impl="threefry2x32").tolist() == [0, 3]


KEY = random.PRNGKey(0)
BAD = [
    (lambda: random.normal([0, 0], (2,)), TypeError, "Lists and tuples are not keys"),
    (lambda: random.split(np.zeros(2, np.int32)), TypeError, "dtype uint32, got dtype int32"),
    (lambda: random.uniform(np.zeros(3, np.uint32)), ValueError, "shape \\(2,\\), got shape"),
    (lambda: random.normal(KEY, (3, -1)), ValueError, "non-negative"),
    (lambda: random.normal(KEY, 3), TypeError, "write \\(3,\\)"),
    (lambda: random.normal(KEY, (2.0,)), TypeError, "entries must be ints"),
    (lambda: random.split(KEY, 2.5), TypeError, "num must be an int"),
    (lambda: random.split(KEY, -1), ValueError, "non-negative"),
    (lambda: random.uniform(KEY, (2,), minval=2.0, maxval=1.0), ValueError,
     "minval must not exceed maxval"),
    (lambda: random.randint(KEY, (2,), 5, 1), ValueError, "minval must not exceed maxval"),
    (lambda: random.bernoulli(KEY, 1.5), ValueError, "probability p must be"),
    (lambda: random.bernoulli(KEY, np.array([0.2, np.nan])), ValueError, "probability p"),
    (lambda: random.choice(KEY, 5, (2,), p=np.array([0.5, 0.5, -0.1, 0.05, 0.05])), ValueError,
     "probabilities p"),
    (lambda: random.choice(KEY, 3, (5,), replace=False), ValueError, "larger sample"),
    (lambda: random.uniform(KEY, (2,), dtype=np.int32), ValueError, "must be a float dtype"),
    (lambda: random.bits(KEY, (2,), dtype=np.float32), ValueError, "unsigned int dtype"),
    (lambda: random.gamma(KEY, -1.0), ValueError, "a must be"),
    (lambda: random.poisson(KEY, -2.0), ValueError, "rate lam"),
    (lambda: random.uniform(KEY, (2,), minval=np.zeros(3)), ValueError, "must broadcast"),
    (lambda: random.PRNGKey(1.5), TypeError, "must be an integer"),
    (lambda: random.PRNGKey(2 ** 64), OverflowError, "int64"),
    (lambda: random.fold_in(KEY, 1.5), TypeError, "must be an integer"),
    (lambda: random.permutation(KEY, [1, 2, 3]), TypeError, "np.asarray"),
    (lambda: random.key(1.5), TypeError, "must be an integer"),
    (lambda: random.key(1, impl="rbg"), ValueError, "Threefry"),
    (lambda: random.wrap_key_data(np.zeros(2, np.int32)), TypeError, "dtype uint32"),
    (lambda: random.wrap_key_data(np.zeros(3, np.uint32)), ValueError, "keys of shape"),
    (lambda: random.key_data([0, 1]), TypeError, "Lists and tuples are not keys"),
]


@pytest.mark.parametrize("call,error,message", BAD, ids=[b[2][:30] for b in BAD])
def test_bad_input_is_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_randint_equal_bounds_give_minval_as_jax():
    assert random.randint(KEY, (3,), 4, 4).tolist() == [4, 4, 4]


def test_distribution_moments():
    """A sanity check independent of JAX: sample moments within 5 standard errors."""
    key = random.PRNGKey(123)
    n = 20000
    for sample, mean, var in [
        (random.normal(key, (n,)), 0.0, 1.0),
        (random.uniform(key, (n,)), 0.5, 1 / 12),
        (random.exponential(key, (n,)), 1.0, 1.0),
        (random.gamma(key, 3.0, (n,)), 3.0, 3.0),
        (random.gamma(key, 0.5, (n,)), 0.5, 0.5),
        (random.beta(key, 2.0, 3.0, (n,)), 0.4, 0.04),
        (random.poisson(key, 4.0, (n,)).astype(float), 4.0, 4.0),
        (random.poisson(key, 40.0, (n,)).astype(float), 40.0, 40.0),
        (random.laplace(key, (n,)), 0.0, 2.0),
        (random.logistic(key, (n,)), 0.0, np.pi ** 2 / 3),
        (random.gumbel(key, (n,)), np.euler_gamma, np.pi ** 2 / 6),
    ]:
        assert abs(sample.mean() - mean) < 5 * np.sqrt(var / n), (mean, sample.mean())
        assert abs(sample.var() - var) < 0.1 * var, (var, sample.var())


# the same bad calls inside jit: the compiled functions check what the eager ones check (the
# same checks, strop.rng.checks), so every backend raises the eager error at the user's line
def normal_of(key):
    return random.normal(key, (3,)) * 2.0


def normal_int_shape(key):
    return random.normal(key, 3)


def normal_n(key, n):
    return random.exponential(key, (n, 2))


def uniform_from(key, lo):
    return random.uniform(key, (2,), minval=lo, maxval=1.0)


def uniform_int(key):
    return random.uniform(key, (2,), dtype=np.int32)


def split_n(key, n):
    return random.split(key, n)


def split_float(key):
    return random.split(key, 2.5)


def fold_in_of(key, data):
    return random.fold_in(key, data)


def key_of(seed):
    return random.key(seed)


def wrap_of(data):
    return random.wrap_key_data(data)


JIT_BAD = [
    (normal_of, (np.array([0.5, 1.5]),), TypeError, "dtype uint32, got dtype float"),
    (normal_of, (np.array([0, 1], np.int64),), TypeError, "dtype uint32, got dtype int"),
    (normal_of, (np.array([0, 1, 2], np.uint32),), ValueError, "shape \\(2,\\), got shape \\(3,\\)"),
    (normal_of, (np.zeros((2, 2), np.uint32),), ValueError, "a batch of keys"),
    (normal_of, ([0, 1],), TypeError, "Lists and tuples are not keys"),
    (normal_int_shape, (KEY,), TypeError, "write \\(3,\\)"),
    (normal_n, (KEY, -1), ValueError, "non-negative"),
    (uniform_from, (KEY, 2.0), ValueError, "minval must not exceed maxval"),
    (uniform_int, (KEY,), ValueError, "must be a float dtype"),
    (split_n, (KEY, -1), ValueError, "non-negative"),
    (split_n, (np.zeros(3, np.uint32), 2), ValueError, "shape \\(2,\\), got shape"),
    (split_float, (KEY,), TypeError, "num must be an int"),
    (fold_in_of, (KEY, 1.5), TypeError, "must be an integer"),
    (fold_in_of, (np.zeros(2), 1), TypeError, "dtype uint32"),
    (key_of, (1.5,), TypeError, "must be an integer"),
    (wrap_of, (np.zeros((3, 2)),), TypeError, "dtype uint32"),
    (wrap_of, (np.zeros(3, np.uint32),), ValueError, "keys of shape"),
]


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("fn,args,error,message", JIT_BAD,
                         ids=[f"{b[0].__name__}-{b[3][:20]}" for b in JIT_BAD])
def test_bad_input_is_the_same_error_under_jit(fn, args, error, message, backend):
    with pytest.raises(error, match=message) as info:
        fn(*args)                                     # the eager call: the oracle
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        with pytest.raises(error, match=message) as jitted:
            strop.jit(fn, backend=backend)(*args)
    assert type(jitted.value) is type(info.value)
    assert f"line {fn.__code__.co_firstlineno + 1}" in str(jitted.value)


def test_checked_samplers_still_compile_and_match_python():
    def draws(key, n):
        key, sub = random.split(key, 2)
        return (random.normal(sub, (n,)) + random.uniform(random.fold_in(key, 3), (n,))
                + random.laplace(key, (n,)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        f = strop.jit(draws)
        np.testing.assert_allclose(f(KEY, 4), draws(KEY, 4), rtol=1e-6)
        assert f.last_backend == "cpu"
