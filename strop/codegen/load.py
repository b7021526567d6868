"""Generated modules are real files in a content-hashed cache directory, imported by path.

A file's name carries the hash of its source and of strop's version, so two processes that
generate the same function share one file (written atomically: temp file + rename), a stale
or truncated file is never imported (its content is checked against the hash), and
``inspect``, ``pdb`` and tracebacks can read the source.
"""
import hashlib
import importlib.util
import inspect
import os
import sys
import tempfile
from dataclasses import dataclass

from .. import __version__
from ..config import config


LINEMAPS = {}   # path of a generated module -> its line map (to see through generated code)


@dataclass
class Generated:
    name: str
    source: str
    linemap: dict       # generated line -> (user file, user line)
    module: object
    function: object
    path: str


def cache_dir():
    path = config.read("cache_dir") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "strop")
    os.makedirs(path, exist_ok=True)
    return path


def digest(source):
    return hashlib.sha256(f"strop {__version__}\n{source}".encode()).hexdigest()[:20]


def write_atomically(path, data):
    """Write ``data`` (text or bytes) to ``path`` so that no reader sees a partial file."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
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
    path = os.path.join(cache_dir(), f"{name}_{key}.py")
    try:
        with open(path, encoding="utf-8") as f:
            intact = f.read() == source
    except OSError:
        intact = False
    if not intact:        # missing, truncated or corrupted: write it again
        write_atomically(path, source)
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(injected)
    module.__strop_linemap__ = linemap
    LINEMAPS[path] = linemap
    spec.loader.exec_module(module)
    sys.modules[modname] = module
    return Generated(name, source, linemap, module, getattr(module, name), path)
