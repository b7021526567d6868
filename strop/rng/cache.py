"""Numba's disk cache for strop.rng, checked against the source of the whole package.

Numba checks a cached function only against its own file. But a kernel's machine code also
holds what it inlined from the other modules (kernels.py from streams.py, floats.py,
threefry.py, ...): after an edit in streams.py, Numba served kernels.py's stale code, built
for other argument layouts, and Python crashed. Here every function defined in strop/rng is
cached under a stamp of all of the package's source files (``PACKAGE_STAMP``, their
contents' hash) besides its own file's: an edit anywhere in the package recompiles it all.

``install()``, run when this module is imported (strop.rng imports it first, before
anything compiles), puts the locator first in Numba's list. It wraps the locator Numba would
otherwise choose for the file, so the cache stays where Numba keeps it (NUMBA_CACHE_DIR,
__pycache__, ...).
"""
import hashlib
import os

from numba.core import caching

from strop import numba_ids

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _package_stamp():
    digest = hashlib.sha256()
    for name in sorted(os.listdir(PACKAGE_DIR)):
        if name.endswith(".py"):
            with open(os.path.join(PACKAGE_DIR, name), "rb") as fh:
                digest.update(name.encode() + b"\0" + fh.read() + b"\0")
    return digest.hexdigest()


PACKAGE_STAMP = _package_stamp()


class PackageStampLocator:
    """A Numba cache locator for files of strop/rng: Numba's own, with the package's stamp
    added to the source stamp that the cache index is checked against."""

    def __init__(self, inner):
        self._inner = inner
        self._py_file = getattr(inner, "_py_file", None)   # Numba's warnings name it

    def ensure_cache_path(self):
        return self._inner.ensure_cache_path()

    def get_cache_path(self):
        return self._inner.get_cache_path()

    def get_source_stamp(self):
        return PACKAGE_STAMP, self._inner.get_source_stamp()

    def get_disambiguator(self):
        return self._inner.get_disambiguator()

    @classmethod
    def from_function(cls, py_func, py_file):
        if os.path.dirname(os.path.abspath(py_file)) != PACKAGE_DIR:
            return None
        for other in caching.CacheImpl._locator_classes:
            if other is not cls:
                inner = other.from_function(py_func, py_file)
                if inner is not None:
                    return cls(inner)
        return None


def install():
    numba_ids.install()   # what the cache holds links beside other processes' code
    classes = caching.CacheImpl._locator_classes
    if PackageStampLocator not in classes:
        classes.insert(0, PackageStampLocator)


install()
