"""The CUDA backend's runtime: arrays in GPU memory (arrays.py) and the device implementations
of the runtime helpers generated kernels call (helpers.py).

Everything goes through ``numba.cuda`` (the ``numba-cuda`` package, the ``cuda`` extra),
imported only when the backend is used.  Without a GPU, Numba's simulator
(``NUMBA_ENABLE_CUDASIM=1``, set before Numba is imported) runs kernels as Python threads:
the tests run so, and compile the same kernels to PTX where ``cuda.compile_ptx`` works.
"""
import os


def cuda():
    """``numba.cuda``, or an ImportError saying what to install."""
    try:
        from numba import cuda as numba_cuda
    except Exception as e:   # numba-cuda absent or broken: no CUDA backend
        raise ImportError(f"strop's CUDA backend needs numba-cuda ({e})\nFix: pip install "
                          f"'strop[cuda]' (numba-cuda; a GPU with NVIDIA's driver, or "
                          f"NUMBA_ENABLE_CUDASIM=1 for the simulator)") from None
    return numba_cuda


def simulated():
    """Whether kernels run in Numba's CUDA simulator (no GPU needed)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def available():
    """(whether CUDA devices can be used, why not)."""
    try:
        numba_cuda = cuda()
    except ImportError as e:
        return False, str(e).splitlines()[0]
    try:
        found = numba_cuda.is_available()
    except Exception as e:   # a driver that fails to initialize
        return False, f"CUDA failed to initialize ({e})"
    if found:
        return True, ""
    return False, ("no CUDA GPU or driver was found (set NUMBA_ENABLE_CUDASIM=1 before "
                   "importing strop to run the CUDA backend in Numba's simulator)")
