import atexit
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))  # tests/helpers.py
# Generated modules and Numba's cache go to a fresh directory per test run, made by the
# process that starts the run (xdist's workers inherit it) and removed when that one exits.
if "STROP_CACHE_DIR" not in os.environ:
    os.environ["STROP_CACHE_DIR"] = tempfile.mkdtemp(prefix="strop-test-cache-")
    atexit.register(shutil.rmtree, os.environ["STROP_CACHE_DIR"], ignore_errors=True)
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.environ["STROP_CACHE_DIR"], "numba"))
# LLVM at optimization level 1, not Numba's 3: the same code, compiled in a third of the time
# (the suite is mostly compiling), its values the same but for where float32 loops let LLVM
# fuse multiply-adds. tests/testing/test_fuzz.py compiles its budget at 3, as users get it;
# NUMBA_OPT=3 python -m pytest runs everything so.
os.environ.setdefault("NUMBA_OPT", "1")
# The CUDA backend runs in Numba's simulator unless told otherwise (NUMBA_ENABLE_CUDASIM=0 on a
# machine with a GPU runs tests/test_cuda.py for real); set before Numba is imported.
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _config_restored():
    """Each test starts from the settings the one before it started from: a test (or a
    script it runs as __main__, as the fuzzer's failure scripts do) that calls
    strop.config.update leaks its settings to every later test in the process."""
    from strop.config import config
    saved = dict(config._values)
    yield
    config._values.clear()
    config._values.update(saved)
