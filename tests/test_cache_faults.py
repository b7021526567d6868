"""The on-disk caches under faults and concurrency: every kind of cache file truncated, filled
with garbage, replaced by a directory (unreadable: tests run as root, where chmod does not
block reads) or exchanged with another function's, between processes; an unusable cache
directory; threads and processes compiling at once.  Each time: the right answer (oracle: the
un-transformed function and central differences, in tests/fixtures/cache_faults.py), at most a
warning, never a crash, a hang or another function's result."""
import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(__file__)
SCRIPT = os.path.join(HERE, "fixtures", "cache_faults.py")


def start(cache, mode="serial", **env):
    env = {**os.environ, "STROP_CACHE_DIR": str(cache), **env,
           "PYTHONPATH": os.pathsep.join([os.path.dirname(HERE),
                                          os.environ.get("PYTHONPATH", "")])}
    env.pop("NUMBA_CACHE_DIR")    # Numba's files beside the modules: the cache moves as one
    return subprocess.Popen([sys.executable, SCRIPT, mode], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(proc):
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["ok"], "\n".join(result["errors"])
    return result


def run(cache, mode="serial", **env):
    return finish(start(cache, mode, **env))


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A cache directory filled by one process; the next links saved machine code."""
    cache = tmp_path_factory.mktemp("warm")
    assert run(cache)["native"] == 0
    assert run(cache)["native"] == 8
    return cache


KINDS = {   # kind -> the files of that kind in a cache directory
    "module": lambda c: glob.glob(os.path.join(c, "*.py")),
    "pyc": lambda c: [importlib.util.cache_from_source(p)
                      for p in glob.glob(os.path.join(c, "*.py"))],
    "native": lambda c: glob.glob(os.path.join(c, "*.native")),
    "numba_index": lambda c: glob.glob(os.path.join(c, "__pycache__", "*.nbi")),
    "numba_data": lambda c: glob.glob(os.path.join(c, "__pycache__", "*.nbc")),
}


def truncate(path):
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)


def garbage(path):
    size = max(os.path.getsize(path), 64)
    with open(path, "wb") as f:     # invalid UTF-8, and invalid as pickle or marshal data
        f.write(bytes((i * 37 + 0x80) % 256 for i in range(size)))


def directory(path):
    os.unlink(path)
    os.mkdir(path)


def role(path):
    """What a file is for, less the function it belongs to (f0 or f1): files of the same role
    of two functions are exchanged."""
    name = re.sub(r"_[0-9a-f]{20}", "", os.path.basename(path))
    return re.sub(r"(^|\.)f[01]", r"\1f", name)


def exchange(paths):
    pairs = {}
    for p in paths:
        if re.match(r"f[01]_", os.path.basename(p)):
            pairs.setdefault(role(p), []).append(p)
    swapped = [ps for ps in pairs.values() if len(ps) == 2]
    assert swapped
    for a, b in swapped:
        tmp = a + ".swap"
        os.replace(a, tmp)
        os.replace(b, a)
        os.replace(tmp, b)


def pyc(path):
    """A .pyc of a generated module that matches its source's stamp but holds garbage (its
    marshal data once made a process hang using 7 GB): it must never be read."""
    import py_compile
    source = path.replace(os.sep + "__pycache__", "").rsplit(".cpython", 1)[0] + ".py"
    py_compile.compile(source, cfile=path)
    with open(path, "r+b") as f:
        f.seek(16)
        f.write(bytes([0xdb]) + b"\xff\xff\xff\x7f" * 64)


FAULTS = {"truncated": truncate, "garbage": garbage, "directory": directory}


@pytest.mark.slow
@pytest.mark.parametrize("fault", [*FAULTS, "exchanged"])
@pytest.mark.parametrize("kind", [k for k in KINDS if k != "pyc"])
def test_faulty_cache_file(warm, tmp_path, kind, fault):
    cache = tmp_path / "cache"
    shutil.copytree(warm, cache, symlinks=True)
    if kind.startswith("numba"):     # Numba's own cache is read only without saved code
        for p in KINDS["native"](cache):
            os.unlink(p)
    files = KINDS[kind](cache)
    assert files
    if fault == "exchanged":
        exchange(files)
    else:
        for p in files:
            FAULTS[fault](p)
    result = run(cache)
    assert all("cache" in w for w in result["warnings"]), result["warnings"]
    again = run(cache)      # the damage repaired
    assert not again["warnings"], again["warnings"]


def test_garbage_pyc_is_never_read(warm, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(warm, cache, symlinks=True)
    for p in KINDS["pyc"](cache):
        pyc(p)
    assert not run(cache)["warnings"]


def test_garbage_module_and_machine_code_at_once(warm, tmp_path):
    """The fast subset of test_faulty_cache_file: generated modules with invalid UTF-8 (every
    call raised UnicodeDecodeError, in every later process) and exchanged machine code (two
    functions returned each other's results)."""
    cache = tmp_path / "cache"
    shutil.copytree(warm, cache, symlinks=True)
    exchange(KINDS["native"](cache))
    for p in KINDS["module"](cache):
        garbage(p)
    run(cache)


def test_unusable_cache_directory(tmp_path):
    """A cache directory that cannot be made (a file is in the way): a private temporary one
    is used, with one warning naming STROP_CACHE_DIR."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run(blocker / "cache")
    assert len(result["warnings"]) == 1 and "STROP_CACHE_DIR" in result["warnings"][0]


def test_threads_and_processes_on_one_fresh_cache(tmp_path):
    """3 processes of 16 threads each (8 with transforms of their own, 8 calling the same
    two), compiling jit and jit(grad) of the same fresh functions into one empty cache
    directory at once; then a process that links what they saved."""
    procs = [start(tmp_path, "threads") for _ in range(3)]
    for p in procs:
        assert not finish(p)["warnings"]
    assert run(tmp_path)["native"] == 8
