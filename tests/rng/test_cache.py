"""The disk cache of strop.rng's compiled functions is checked against the source of the
whole package (strop/rng/cache.py): an edit in one module recompiles the functions of the
others that inlined its code, where Numba alone would serve their stale machine code."""
import os
import shutil
import subprocess
import sys
import textwrap

import strop.rng
from strop.rng import cache, streams

REPO_STROP = os.path.dirname(os.path.dirname(os.path.abspath(strop.rng.__file__)))

# fold_in_key (streams.py) inlines the block function (threefry.py)
PROBE = textwrap.dedent("""
    import numpy as np
    from strop.rng import streams
    streams.fold_in_key(np.zeros(2, np.uint32), np.uint32(1))
    stats = streams.fold_in_key.stats
    print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
""")


def _probe(root, cache_dir):
    env = dict(os.environ, PYTHONPATH=root, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=root,
                         capture_output=True, text=True, check=True).stdout.split()
    return tuple(int(v) for v in out)


def test_the_locator_covers_the_package_only():
    loc = cache.PackageStampLocator.from_function(streams.fold_in_key.py_func, streams.__file__)
    assert loc.get_source_stamp()[0] == cache.PACKAGE_STAMP
    assert cache.PackageStampLocator.from_function(_probe, __file__) is None


def test_an_edit_in_one_module_recompiles_the_functions_that_inlined_it(tmp_path):
    # a copy of strop.rng and what it imports (strop.config, strop.numba_ids), in a fresh cache
    root = tmp_path / "src"
    shutil.copytree(os.path.join(REPO_STROP, "rng"), root / "strop" / "rng",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("config.py", "numba_ids.py"):
        shutil.copy(os.path.join(REPO_STROP, name), root / "strop" / name)
    (root / "strop" / "__init__.py").write_text("")
    cache_dir = str(tmp_path / "cache")
    assert _probe(str(root), cache_dir) == (0, 1)     # compiled, saved
    assert _probe(str(root), cache_dir) == (1, 0)     # loaded
    with open(root / "strop" / "rng" / "threefry.py", "a") as fh:
        fh.write("\n# edited\n")
    assert _probe(str(root), cache_dir) == (0, 1)     # compiled again
