import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))  # tests/helpers.py
# Generated modules and Numba's cache go to a fresh directory per test run.
os.environ.setdefault("STROP_CACHE_DIR", tempfile.mkdtemp(prefix="strop-test-cache-"))
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.environ["STROP_CACHE_DIR"], "numba"))
# The CUDA backend runs in Numba's simulator unless told otherwise (NUMBA_ENABLE_CUDASIM=0 on a
# machine with a GPU runs tests/test_cuda.py for real); set before Numba is imported.
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
