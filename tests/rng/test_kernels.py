"""The kernels behind strop.random, called from compiled code as generated code will call
them: the same numbers as the public functions, and no hidden state."""
import numba
import numpy as np
import pytest

import strop.rng as rng
from strop.config import config
from strop.rng import KERNELS


@numba.njit
def _user_step(key, n):
    """What a jit-compiled user function does: split, then draw with the subkeys."""
    keys = KERNELS_SPLIT(key, 3, False)
    z = KERNELS_NORMAL(keys[1], n, np.float32, False)
    u = KERNELS_UNIFORM(keys[2], n, np.zeros(1, np.float32), np.ones(1, np.float32), False)
    return keys[0], z, u


KERNELS_SPLIT = KERNELS["split"]
KERNELS_NORMAL = KERNELS["normal"]
KERNELS_UNIFORM = KERNELS["uniform"]


def test_kernels_compile_inside_user_code_and_match_public_api():
    key = rng.PRNGKey(7)
    new_key, z, u = _user_step(key, 11)
    with config.override(threefry_partitionable=False, enable_x64=False):
        keys = rng.split(key, 3)
        np.testing.assert_array_equal(new_key, keys[0])
        np.testing.assert_array_equal(z, rng.normal(keys[1], (11,)))
        np.testing.assert_array_equal(u, rng.uniform(keys[2], (11,)))


def test_every_public_name_routes_to_compiled_kernels():
    expected = set(rng.__all__) - {"PRNGKey", "key", "key_data", "wrap_key_data", "KERNELS"}
    assert set(KERNELS) == expected
    for name, kernel in KERNELS.items():
        for k in kernel if isinstance(kernel, tuple) else (kernel,):
            assert isinstance(k, numba.core.registry.CPUDispatcher), name


def test_pure_in_the_key():
    key = rng.PRNGKey(3)
    for f in (lambda: rng.normal(key, (5,)), lambda: rng.gamma(key, 2.0, (4,)),
              lambda: rng.poisson(key, 20.0, (4,)), lambda: rng.permutation(key, 9)):
        np.testing.assert_array_equal(f(), f())
    np.testing.assert_array_equal(key, rng.PRNGKey(3))


# -- one thread, several threads, parallel kernels: the same numbers ----------------------
#
# The reference vectors are small, so the public functions run them on one thread. These
# check the other paths on outputs of several chunks (the last one partial, n odd): the
# public functions split between threads, and the prange kernels of KERNELS.

N_LARGE = 2 * rng.kernels.CHUNK + 2 * rng.streams.TILE + 3


def _threads(monkeypatch, count):
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", count)


@pytest.mark.parametrize("partitionable", [False, True])
def test_threads_and_parallel_kernels_match_one_thread(monkeypatch, partitionable):
    key = rng.PRNGKey(11)
    with config.override(threefry_partitionable=partitionable, enable_x64=False):
        _threads(monkeypatch, 1)
        one = {"normal": rng.normal(key, (N_LARGE,)), "uniform": rng.uniform(key, (N_LARGE,)),
               "gamma": rng.gamma(key, np.linspace(0.2, 5.0, 777, dtype=np.float32)),
               "poisson": rng.poisson(key, np.array([0.0, 3.0, 25.0, 1000.0] * 200))}
        _threads(monkeypatch, 3)
        np.testing.assert_array_equal(rng.normal(key, (N_LARGE,)), one["normal"])
        np.testing.assert_array_equal(rng.uniform(key, (N_LARGE,)), one["uniform"])
        np.testing.assert_array_equal(
            rng.gamma(key, np.linspace(0.2, 5.0, 777, dtype=np.float32)), one["gamma"])
        np.testing.assert_array_equal(
            rng.poisson(key, np.array([0.0, 3.0, 25.0, 1000.0] * 200)), one["poisson"])
    with config.override(threefry_partitionable=partitionable, enable_x64=True):
        _threads(monkeypatch, 1)
        one64 = rng.normal(key, (N_LARGE,)), rng.gumbel(key, (N_LARGE,), mode="high")
        _threads(monkeypatch, 3)
        np.testing.assert_array_equal(rng.normal(key, (N_LARGE,)), one64[0])
        np.testing.assert_array_equal(rng.gumbel(key, (N_LARGE,), mode="high"), one64[1])
    np.testing.assert_array_equal(
        KERNELS_NORMAL(key, N_LARGE, np.float32, partitionable), one["normal"])
    np.testing.assert_array_equal(
        KERNELS_UNIFORM(key, N_LARGE, np.zeros(1, np.float32), np.ones(1, np.float32),
                        partitionable), one["uniform"])


@pytest.mark.parametrize("partitionable", [False, True])
def test_large_outputs_match_values_computed_one_by_one(partitionable):
    """Tiles, the original stream's two halves and the thread split against the definition:
    value i alone, from its own block (floats.uniform_at), at the edges of tiles and halves."""
    key = rng.PRNGKey(5)
    n, tile = N_LARGE, rng.streams.TILE
    h = (n + 1) // 2
    picks = sorted({0, 1, tile - 1, tile, 3 * tile + 7, h - 1, h, h + 1, h + tile, n - 2, n - 1}
                   | set(np.random.default_rng(0).integers(0, n, 40).tolist()))
    for x64, F in ((False, np.float32), (True, np.float64)):
        with config.override(threefry_partitionable=partitionable, enable_x64=x64):
            got = rng.uniform(key, (n,), dtype=F, minval=-2.0, maxval=3.0)
        want = [rng.floats.uniform_at(key, i, n, F(-2.0), F(3.0), partitionable) for i in picks]
        np.testing.assert_array_equal(got[picks], np.array(want, F))
