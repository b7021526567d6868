"""strop.random inside transformed functions: pure in the key, differentiable through the
reparameterization, and the transform-time KeyReuseWarning."""
import inspect
import warnings

import numpy as np
import pytest

import strop
from strop import config, grad, random
from strop.errors import KeyReuseWarning


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


def reparameterized(mu, sigma, key):
    z = random.normal(key, (1000,))
    return np.mean(z * sigma + mu) + np.mean((z * sigma) ** 2)


def test_grad_flows_through_the_reparameterization():
    with config.override(enable_x64=True):
        key = random.PRNGKey(0)
        z = random.normal(key, (1000,))
        g_mu, g_sigma = grad(reparameterized, argnums=(0, 1))(0.5, 2.0, key)
        np.testing.assert_allclose(g_mu, 1.0, rtol=1e-12)
        np.testing.assert_allclose(g_sigma, np.mean(z) + 2 * 2.0 * np.mean(z ** 2), rtol=1e-10)


def draws_twice(key):
    a = random.normal(key, (3,))
    b = random.uniform(key, (3,))   # same key again
    return np.sum(a * b)


def draws_after_split(key):
    key, sub = random.split(key)
    a = random.normal(sub, (3,))
    key, sub = random.split(key)
    b = random.uniform(sub, (3,))
    return np.sum(a * b)


def draws_in_a_loop(key, x):
    total = 0.0
    for i in range(3):
        total = total + random.normal(key, ()) * x
    return total


def test_key_reuse_warns_naming_both_lines():
    with pytest.warns(KeyReuseWarning) as record:
        grad(lambda x, key: draws_twice(key) * x)(1.0, random.PRNGKey(0))
    message = str(record[0].message)
    assert f"line {line_of(draws_twice, 'random.normal(key')}" in message
    assert record[0].message.location.lineno == line_of(draws_twice, "random.uniform(key")


def outer_of_draws_twice(x, key):
    return np.sum(draws_twice(key) * x)


def test_key_reuse_in_an_inlined_function_names_the_users_variable():
    # draws_twice's `key` is renamed when it is inlined into outer_of_draws_twice (whose own
    # parameter is `key` too): the suggested fix names the variable the user wrote
    with pytest.warns(KeyReuseWarning) as record:
        grad(outer_of_draws_twice)(np.ones(3, np.float32), random.PRNGKey(0))
    message = str(record[0].message)
    assert "the PRNG key `key` was already used" in message
    assert "`key, sub = strop.random.split(key)`" in message
    assert "key_1" not in message


def test_split_keys_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", KeyReuseWarning)
        strop.grad(lambda x, key: draws_after_split(key) * x)(1.0, random.PRNGKey(0))


def test_key_consumed_in_every_iteration_warns():
    with pytest.warns(KeyReuseWarning):
        grad(draws_in_a_loop, argnums=1)(random.PRNGKey(0), 2.0)


def test_samplers_are_pure_functions_of_the_key_inside_a_transform():
    key = random.PRNGKey(3)
    g1 = grad(lambda x, k: np.sum(random.normal(k, (4,)) * x))(1.0, key)
    g2 = grad(lambda x, k: np.sum(random.normal(k, (4,)) * x))(1.0, key)
    assert g1 == g2 == np.sum(random.normal(key, (4,)))


def noisy_step(x, key):
    key, sub = random.split(key)
    noise = random.normal(sub, (3,))
    key, sub = random.split(key)
    u = random.uniform(sub, (3,), minval=-1.0, maxval=1.0)
    return np.sum((x + noise) * u), key


@pytest.mark.parametrize("partitionable", [False, True])
def test_jit_compiles_samplers_and_matches_python(partitionable):
    with config.override(threefry_partitionable=partitionable):
        f = strop.jit(noisy_step)
        with warnings.catch_warnings():
            warnings.simplefilter("error", strop.errors.JitFallbackWarning)
            got, key_out = f(np.ones(3, np.float32), random.PRNGKey(7))
        want, want_key = noisy_step(np.ones(3, np.float32), random.PRNGKey(7))
        assert f.last_backend == "cpu"
        np.testing.assert_array_equal(key_out, want_key)
        np.testing.assert_allclose(got, want, rtol=1e-6)


def key_round_trip(x, seed):
    key = random.wrap_key_data(random.key_data(random.key(seed)))
    key, sub = random.split(key)
    return np.sum(random.normal(sub, (3,)) * x) + np.sum(random.key_data(key) > 0) * 0.0


def test_key_and_key_data_work_in_transformed_code():
    x = np.array([1.0, -2.0, 0.5], np.float32)
    want = key_round_trip(x, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        f = strop.jit(key_round_trip)
        np.testing.assert_allclose(f(x, 5), want, rtol=1e-6)
        assert f.last_backend == "cpu"
    sub = random.split(random.PRNGKey(5))[1]
    np.testing.assert_allclose(grad(key_round_trip)(x, 5), random.normal(sub, (3,)), rtol=1e-6)
    seeds = np.array([1, 2, 3])
    np.testing.assert_array_equal(strop.vmap(lambda s: random.key_data(random.key(s)))(seeds),
                                  [random.PRNGKey(s) for s in seeds])


def normal_default_shape(key, shape=(), dtype=None):
    return random.normal(key, shape, dtype)




def test_vmap_of_a_sampler_over_a_batch_of_keys():
    # JAX's vmap(random.normal)(keys): the oracle is a loop over the keys
    keys = random.split(random.key(0), 3)
    for f, args, in_axes, want in [
            (random.normal, (keys,), 0, [random.normal(k) for k in keys]),
            (random.normal, (keys, (2,)), (0, None), [random.normal(k, (2,)) for k in keys]),
            (random.uniform, (keys, (2,)), (0, None), [random.uniform(k, (2,)) for k in keys]),
            (random.bernoulli, (keys, 0.3, (4,)), (0, None, None),
             [random.bernoulli(k, 0.3, (4,)) for k in keys]),
            (random.split, (keys,), 0, [random.split(k) for k in keys]),
            (normal_default_shape, (keys,), 0, [random.normal(k) for k in keys])]:
        np.testing.assert_array_equal(strop.vmap(f, in_axes)(*args), np.stack(want))
