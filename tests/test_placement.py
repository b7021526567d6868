"""Placement (JAX's FAQ): devices, default_backend, device_put and block_until_ready on the
CPU, the CUDA names answered with a clear error."""
import numpy as np
import pytest

import strop


def test_devices_and_default_backend():
    (d,) = strop.devices()
    assert d.platform == "cpu" and d.id == 0 and repr(d) == "CpuDevice(id=0)"
    assert strop.devices("cpu") == [d]
    assert strop.default_backend() == "cpu"
    for name in ("cuda", "gpu"):
        with pytest.raises(RuntimeError, match="not available"):
            strop.devices(name)
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
    with pytest.raises(RuntimeError):
        strop.device_put(np.ones(2), "cuda")


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
