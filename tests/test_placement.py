"""Placement (JAX's FAQ): devices, default_backend, device_put and block_until_ready on the
CPU; the CUDA names answered with a clear error where there is no GPU (tests/test_cuda.py
has them on Numba's simulator)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import strop


def test_devices_and_default_backend():
    (d,) = strop.devices()
    assert d.platform == "cpu" and d.id == 0 and repr(d) == "CpuDevice(id=0)"
    assert strop.devices("cpu") == [d]
    assert strop.default_backend() == "cpu"
    with pytest.raises(RuntimeError, match="unknown backend"):
        strop.devices("tpu")


def test_device_put_pytrees_and_the_dtype_policy():
    tree = {"w": np.ones(3), "n": [1.0, 2], "none": None}
    with strop.config.override(enable_x64=False):   # (the default, said here: the suite
        out = strop.device_put(tree, strop.devices()[0])   # once ran it with x64 left on)
    assert set(out) == {"w", "n", "none"} and out["none"] is None
    assert isinstance(out["n"][0], np.ndarray) and out["n"][0].dtype == np.float32
    assert out["w"].dtype == np.float32     # x64 off: as transformed code sees it
    with strop.config.override(enable_x64=True):
        assert strop.device_put(np.ones(2)).dtype == np.float64
    assert strop.device_put(np.ones(2), "cpu").shape == (2,)


_WITHOUT_SIMULATOR = """
import numpy as np, strop
from numba import cuda
gpu = cuda.is_available()
for name in ("cuda", "gpu"):
    try:
        found = strop.devices(name)
        print("devices", gpu, found)
    except RuntimeError as e:
        print("error", gpu, str(e).splitlines()[0])
try:
    strop.device_put(np.ones(2), "cuda")
    print("put", gpu)
except RuntimeError as e:
    print("put-error", gpu)
"""


def test_cuda_names_without_the_simulator():
    """Without a GPU (CI's machines) the CUDA names raise RuntimeError saying why; with one,
    they name its devices."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0")
    out = subprocess.run([sys.executable, "-c", _WITHOUT_SIMULATOR], env=env, text=True,
                         capture_output=True, timeout=300).stdout.splitlines()
    assert len(out) == 3, out
    if out[0].split()[1] == "True":
        assert out[0].startswith("devices True [CudaDevice(id=0)") and out[2] == "put True"
    else:
        assert out[:2] == ["error False backend 'cuda' is not available: no CUDA GPU or "
                           "driver was found (set NUMBA_ENABLE_CUDASIM=1 before importing "
                           "strop to run the CUDA backend in Numba's simulator)",
                           "error False backend 'gpu' is not available: no CUDA GPU or driver "
                           "was found (set NUMBA_ENABLE_CUDASIM=1 before importing strop to "
                           "run the CUDA backend in Numba's simulator)"]
        assert out[2] == "put-error False"


def test_block_until_ready_returns_its_argument():
    class Async:
        waited = False

        def block_until_ready(self):
            Async.waited = True
            return self
    x = {"a": np.ones(2), "b": Async()}
    assert strop.block_until_ready(x) is x and Async.waited
    y = strop.jit(lambda x: x * 2)(np.ones(2))
    assert strop.block_until_ready(y) is y
