"""The on-disk cache across processes: nothing compiled twice, safe under concurrency and
corruption."""
import glob
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(__file__)
SCRIPT = os.path.join(HERE, "fixtures", "jit_module.py")


def run(cache, *, wait=True):
    env = {**os.environ, "STROP_CACHE_DIR": str(cache),
           "NUMBA_CACHE_DIR": str(cache / "numba"),
           "PYTHONPATH": os.pathsep.join([os.path.dirname(HERE), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, SCRIPT], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if not wait:
        return proc
    return finish(proc)


def finish(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    values, *stats = out.split()[:2], out.split()[2:]
    fields = dict(s.split("=") for s in out.split()[2:])
    return out.split()[:2], fields


@pytest.mark.slow
def test_second_process_compiles_nothing(tmp_path):
    first_values, first = run(tmp_path)
    second_values, second = run(tmp_path)
    assert first["backend"] == second["backend"] == "cpu"
    assert int(first["misses"]) >= 1
    assert int(second["misses"]) == 0 and int(second["hits"]) >= 1
    assert first_values == second_values


@pytest.mark.slow
def test_two_processes_compiling_at_once(tmp_path):
    procs = [run(tmp_path, wait=False) for _ in range(2)]
    results = [finish(p) for p in procs]
    assert results[0][0] == results[1][0]
    assert all(r[1]["backend"] == "cpu" for r in results)


@pytest.mark.slow
def test_corrupted_cache_files_do_not_give_wrong_results(tmp_path):
    good_values, _ = run(tmp_path)
    for path in glob.glob(str(tmp_path / "**" / "*.nb*"), recursive=True) + glob.glob(
            str(tmp_path / "*.py")):
        with open(path, "r+b") as f:       # truncate every cached file to half its size
            data = f.read()
            f.seek(0)
            f.write(data[:len(data) // 2])
            f.truncate()
    values, fields = run(tmp_path)
    assert values == good_values and fields["backend"] == "cpu"
