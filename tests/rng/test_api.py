"""strop.random's contract outside the reference vectors: the Sharp Bits values, the 64-bit
policy, and clear errors for bad input."""
import warnings

import numpy as np
import pytest

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
