"""Generated modules are real files in a content-hashed cache directory, imported by path.

A file's name carries the hash of its source and of strop's version, so two processes that
generate the same function share one file (written atomically: temp file + rename), and
``inspect``, ``pdb`` and tracebacks can read the source.  What runs is the source strop holds,
compiled in memory: neither a truncated, corrupted or exchanged file nor a ``.pyc`` is ever
executed (a corrupted ``.pyc`` failed in ``marshal``, or hung allocating gigabytes).  A cache
directory that cannot be written is replaced by a private temporary one, with one warning.
"""
import atexit
import glob
import hashlib
import importlib.util
import inspect
import os
import shutil
import sys
import tempfile
import warnings
from dataclasses import dataclass

from .. import __version__
from ..config import config
from ..errors import LINEMAPS, StropWarning, user_stacklevel




@dataclass
class Generated:
    name: str
    source: str
    linemap: dict       # generated line -> (user file, user line)
    module: object
    function: object
    path: str


def cache_dir():
    path = _configured()
    used = _USED.get(path)
    if used is None or not os.path.isdir(used):
        used = _USED[path] = _usable(path)
    return used


_USED = {}   # configured cache directory -> the one used (itself, or a temporary fallback)


def _configured():
    return config.read("cache_dir") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "strop")


def _usable(path):
    """``path`` if a file can be created in it, else a private temporary directory."""
    try:
        os.makedirs(path, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
        return path
    except OSError as e:
        return _fallback(path, e)


def _fallback(path, error):
    """A private temporary directory used instead of ``path``, removed at exit; one warning."""
    fallback = tempfile.mkdtemp(prefix="strop-cache-")
    atexit.register(shutil.rmtree, fallback, ignore_errors=True)
    warnings.warn(StropWarning(
        f"strop's cache directory {path} is not usable ({error}); generated code goes to "
        f"the temporary directory {fallback} instead, and compiled code is not kept for "
        f"later processes", fix="set STROP_CACHE_DIR (or strop.config.update('cache_dir', "
                                "...)) to a writable directory"), stacklevel=user_stacklevel())
    return fallback


# raised when code cached by an older strop must not be reused: 2, Numba's function ids drawn
# apart in each process (numba_ids.py), where older entries of two processes shared symbols
FORMAT = 2


def digest(source):
    """The name of a generated module's file: its source, strop's version and strop's own files
    (Numba caches the module's machine code by its file, and that code holds strop's helpers,
    their Numba implementations inlined: an edited helper must not be served stale)."""
    return hashlib.sha256(f"strop {__version__} {FORMAT} {sources_stamp()}\n{source}".encode()
                          ).hexdigest()[:20]


_STAMP = []


def sources_stamp():
    """A digest of where, how long and when last written each of strop's .py files is (a stat
    each, once per process)."""
    if not _STAMP:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        stamps = sorted((os.path.relpath(e.path, root), e.stat().st_mtime_ns, e.stat().st_size)
                        for d in glob.glob(os.path.join(root, "**", ""), recursive=True)
                        for e in os.scandir(d) if e.name.endswith(".py"))
        _STAMP.append(hashlib.sha256(repr(stamps).encode()).hexdigest()[:16])
    return _STAMP[0]


def write_atomically(path, data):
    """Write ``data`` (text or bytes) to ``path`` so that no reader sees a partial file."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        try:
            os.replace(tmp, path)
        except IsADirectoryError:   # an empty directory in the file's place: it goes
            os.rmdir(path)
            os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _identity(obj):
    """What distinguishes an object bound into a generated module: a function, class or module
    by its qualified name (stable across processes); another value (a static argument) by type
    and hash, else by id."""
    if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismodule(obj) or \
            inspect.isbuiltin(obj):
        return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', obj.__name__)}"
    try:
        return f"{type(obj).__module__}.{type(obj).__qualname__}#{hash(obj)}"
    except TypeError:
        return f"{type(obj).__qualname__}@{id(obj)}"


def load(name, source, linemap, injected):
    """Write ``source`` (if needed) and import it; ``injected`` objects are bound in the module.
    Modules with the same source but other bound values (static arguments) are kept apart: the
    values count in the module's name and file, so neither an imported module nor Numba's disk
    cache serves code made for another value."""
    bindings = "".join(f"\n{k}={_identity(v)}" for k, v in sorted(injected.items()))
    key = digest(source + bindings)
    modname = f"strop_generated.{name}_{key}"
    if modname in sys.modules:
        module = sys.modules[modname]
        LINEMAPS[module.__file__] = linemap
        return Generated(name, source, linemap, module, getattr(module, name), module.__file__)
    path = _written(f"{name}_{key}.py", source.encode())
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(injected)
    module.__strop_linemap__ = linemap
    LINEMAPS[path] = linemap
    exec(compile(source, path, "exec"), module.__dict__)   # the source held, never a .pyc
    sys.modules[modname] = module
    return Generated(name, source, linemap, module, getattr(module, name), path)


def _written(filename, data):
    """The path of ``filename`` in the cache directory, holding ``data``: written again where
    it is missing, truncated, corrupted or unreadable."""
    path = os.path.join(cache_dir(), filename)
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return path
    except OSError:
        pass
    try:
        write_atomically(path, data)
    except OSError as e:   # unwritable since it was checked, or a directory in the file's place
        _USED[_configured()] = _fallback(os.path.dirname(path), e)
        path = os.path.join(cache_dir(), filename)
        write_atomically(path, data)
    return path
