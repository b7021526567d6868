"""Compiled code reloaded without Numba's dispatcher: a warm process's first call in milliseconds.

Numba's disk cache is correct but slow to open: before it loads a cached function, Numba builds
its typing and lowering tables (~120 ms once per process, more with strop's overloads).  The
machine code needs none of that.  So once Numba has compiled (or loaded) the code for some
argument types, its object code, function descriptor and environment are saved beside the
generated module, keyed by Numba's argument fingerprints; a later process links that object
code with llvmlite and calls its Python entry point directly.  Numba stays the compiler and the
fallback: argument types with no saved code go through the dispatcher.

A saved file names the Numba, llvmlite and Python versions and the host CPU, and carries a
hash of its contents and of its own name (the generated module's hash, the function, the
argument types): a file made elsewhere is never loaded, a truncated or corrupted one, or one
holding another function's code (files exchanged), is removed and compiled again.
"""
import contextlib
import hashlib
import io
import os
import pickle
import sys
import warnings

import numpy as np

from .load import sources_stamp, write_atomically

INT64 = range(-2 ** 63, 2 ** 63)


@contextlib.contextmanager
def quiet():
    """Numba's deprecation notices about the code strop generated (a reflected list argument)
    are strop's business, not the user's: not shown."""
    from numba.core.errors import NumbaDeprecationWarning, NumbaPendingDeprecationWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)
        warnings.simplefilter("ignore", NumbaDeprecationWarning)
        yield


class Native:
    """A function compiled by Numba, called through saved machine code where there is some.
    ``compile`` makes its Numba dispatcher, the first time one is needed."""

    def __init__(self, compile, path, save=True):
        from numba._dispatcher import compute_fingerprint
        self._compile_dispatcher, self._dispatcher = compile, None
        self.save = save    # False: code that calls back into this process's Python objects
        self.stem = os.path.splitext(path)[0]    # the generated module's file, less ".py"
        self.entries = {}                        # fingerprints -> entry point
        self.signatures = []                     # the entries' argument types
        self.loaded = 0                          # signatures loaded from saved code
        self.compiled = 0                        # ... compiled by Numba (or from its cache)
        self.literal = ()    # positions of arguments compiled for by value (see _compile)
        self._fingerprint = compute_fingerprint

    @property
    def dispatcher(self):
        if self._dispatcher is None:
            self._dispatcher = self._compile_dispatcher()
        return self._dispatcher

    def __call__(self, *args):
        try:
            key = tuple(map(self._fingerprint, args))
        except (NotImplementedError, TypeError, ValueError):   # a type with no fingerprint
            with quiet():
                return self.dispatcher(*args)
        if b"i" in key and any(type(a) is int and a not in INT64 for a in args):
            with quiet():
                return self.dispatcher(*args)    # Numba types a big int as uint64
        if self.literal:
            key = self._valued(key, args)
        entry = self.entries.get(key)
        if entry is None:
            entry = self._entry(key, args)
        return entry(*args)

    def _valued(self, key, args):
        return key + tuple((i, args[i]) for i in self.literal)

    def _entry(self, key, args):
        """The entry point for ``args`` (of fingerprints ``key``): saved code, else compiled."""
        literal = self.literal
        entry = self.save and self._load(key)
        if not entry and self.literal != literal:   # a marker: code is made by value
            key = self._valued(key, args)
            entry = self.entries.get(key) or self.save and self._load(key)
        if not entry:
            key, entry = self._compile(key, args)
        self.entries[key] = entry
        return entry

    def _file(self, key):
        tag = repr((key, _platform()))
        return f"{self.stem}-{hashlib.sha256(tag.encode()).hexdigest()[:16]}.native"

    def _load(self, key):
        path = self._file(key)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        digest, payload = data[:32], data[32:]
        if _seal(path, payload) != digest:   # truncated, corrupted or another's: remove it
            _remove(path)
            return None
        try:
            state = _Unpickler(io.BytesIO(payload)).load()
            if state[0] == _LITERAL:     # code is compiled for these arguments' values
                self.literal = tuple(state[1])
                return None
            entry = _link(state)
        except Exception:    # saved by an incompatible build: Numba compiles again
            _remove(path)
            return None
        self.loaded += 1
        self.signatures.append(tuple(state[3].args))
        return _boxed(entry, state[3].return_type)

    def _compile(self, key, args):
        """Numba's entry point for ``args`` (compiling them, or loading Numba's own cache), and
        its machine code saved for the next process."""
        from numba.core import types
        from numba.core.errors import ForceLiteralArg
        d, known = self.dispatcher, self.literal
        with quiet():
            sig = tuple(d.typeof_pyval(a) for a in args)
            while True:
                try:
                    d.compile(sig)   # not a call: it runs once, on its caller's arguments
                    break
                except ForceLiteralArg as e:
                    # a value the types depend on (keepdims=k, k a bool argument): compiled
                    # for each value, as Numba's dispatcher does; the value joins the key
                    if any(isinstance(sig[i], types.Literal) for i in e.requested_args):
                        raise
                    self.literal = tuple(sorted(set(self.literal) | set(e.requested_args)))
                    sig = tuple(types.literal(a.item() if isinstance(a, np.generic) else a)
                                if i in self.literal else t
                                for i, (a, t) in enumerate(zip(args, sig)))
        if self.literal != known:
            plain = key[:len(args)]
            if self.save:     # what the next process needs to know before it loads
                self._save(plain, lambda: (_LITERAL, self.literal))
            key = self._valued(plain, args)
        cres = d.overloads[sig]
        self.compiled += 1
        self.signatures.append(sig)
        if self.save and _savable(cres):
            self._save(key, cres._reduce)
        return key, _boxed(cres.entry_point, cres.signature.return_type)

    def _save(self, key, state):
        """``state()`` saved for ``key``, if it can be (code Numba loaded from its own cache
        has no object code to save)."""
        try:
            from numba.core.serialize import dumps
            payload = dumps(state())
            path = self._file(key)
            write_atomically(path, _seal(path, payload) + payload)
        except Exception:      # what Numba cannot pickle it does not cache either
            pass


# a saved file's state that says the function is compiled for the values of some arguments
_LITERAL = "compiled by value"


def _seal(path, payload):
    """The hash a saved file starts with: of its payload and of the name that says whose code
    it is, so that a file moved to another function's name is never linked."""
    return hashlib.sha256(os.path.basename(path).encode() + b"\0" + payload).digest()


def _boxed(entry, restype):
    """``entry``, its results returned as the uncompiled code returns them: floats and complex
    numbers, and integers of other than 64 bits, as NumPy scalars of their type (Numba makes a
    Python float of a float32 or a float64, which has no ``block_until_ready``), dicts as dicts
    (Numba boxes them as its typed Dict)."""
    box = _box(restype)
    return entry if box is None else lambda *args: box(entry(*args))


def _box(t):
    from numba.core import types
    if isinstance(t, types.Number) and str(t) != "int64":   # (a Python int stays one, as the
        return np.dtype(str(t)).type                         # python backend leaves it)
    if isinstance(t, types.DictType):
        value = _box(t.value_type) or (lambda v: v)
        return lambda d: {k: value(v) for k, v in d.items()}
    if isinstance(t, types.BaseTuple) and not isinstance(t, types.BaseNamedTuple):
        parts = [_box(e) for e in t]
        if any(parts):
            return lambda v: tuple(x if p is None else p(x) for p, x in zip(parts, v))
    return None


def _savable(cres):
    """What Numba's own cache saves (no lifted loops, no dynamic globals), whose environments a
    later process finds again by module name (not code made by ``exec``), returning what boxes
    without Python classes of Numba's (a typed Dict returned by linked code crashed)."""
    if cres.lifted or cres.library.has_dynamic_globals or not _plain(
            cres.signature.return_type):
        return False
    return all(env.can_cache() for env in (cres.environment,
                                             *cres._find_referenced_environments()))


def _plain(t):
    """Numbers, arrays, None, and tuples of them."""
    from numba.core import types
    if isinstance(t, types.BaseTuple):
        return not isinstance(t, types.BaseNamedTuple) and all(_plain(e) for e in t)
    return isinstance(t, (types.Number, types.Boolean, types.Array, types.NoneType))


def _link(state):
    """The entry point of saved object code, linked into Numba's JIT (see CompileResult._rebuild;
    only the target context is needed, not the typing tables)."""
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.registry import cpu_target
    libdata, fndesc, env, _sig, _objmode, _lifted, _ann, reload_init, envs = state
    with global_compiler_lock:
        _runtime_symbols()
        for fn in reload_init:
            fn()
        ctx = cpu_target.target_context
        library = ctx.codegen().unserialize_library(libdata)
        entry = ctx.get_executable(library, fndesc, env)
        for other in envs:
            library.codegen.set_env(other.env_name, other)
    _KEPT.extend(envs)   # the machine code points at them: they live as long as the process
    return entry


_KEPT = []


class _Unpickler(pickle.Unpickler):
    """Numba's unpickler, but an environment of a Numba module not imported yet (the
    ``np.empty`` that compiled code calls has one in ``numba.np.arrayobj``) is made without
    importing it (~40 ms): its globals serve object mode only, its constants are kept."""

    def find_class(self, module, name):
        if (module, name) == ("numba.core.environment", "_rebuild_env"):
            return _environment
        return super().find_class(module, name)


def _environment(modname, consts, env_name):
    from numba.core.environment import Environment, _rebuild_env, lookup_environment
    if modname in sys.modules or lookup_environment(env_name) is not None:
        return _rebuild_env(modname, consts, env_name)
    env = Environment({"__name__": modname})
    env.consts[:] = consts
    env.env_name = env_name
    return env


_registered = []


def _runtime_symbols():
    """The C functions of Numba's runtime (NRT), as its initialization registers them (its other
    step, compiling the runtime's LLVM functions, is not needed: they are in the object code),
    strop's own, and what the code may compile when it runs."""
    if _registered:
        return
    import llvmlite.binding as ll
    from numba.core.runtime import _nrt_python
    for name, address in _nrt_python.c_helpers.items():
        ll.add_symbol(name if name.startswith("_") else "NRT_" + name, address)
    from ..runtime.fpstatus import available
    available()     # the floating-point flags' functions (runtime/fpstatus.py)
    # what loaded code may still compile in this process (an object-mode block of a helper is
    # a dispatcher that compiles itself when first called, with the flags of the code that
    # holds it): strop's error model, and Numba's function ids drawn apart (numba_ids.py)
    from ..runtime import error_model  # noqa: F401
    from ..numba_ids import install
    install()
    _registered.append(True)


_PLATFORM = []


def _platform():
    """What machine code depends on: the compilers' versions, the CPU it was made for, and
    strop's own files, in every folder (the Numba implementations of its helpers, under
    runtime/numba/, are compiled into it)."""
    if not _PLATFORM:
        import llvmlite
        import llvmlite.binding as ll
        import numba
        _PLATFORM.append((numba.__version__, llvmlite.__version__, sys.version,
                          ll.get_host_cpu_name(), ll.get_host_cpu_features().flatten(),
                          sources_stamp()))
    return _PLATFORM[0]


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass
