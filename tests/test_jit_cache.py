"""The on-disk cache across processes: nothing compiled twice, safe under concurrency and
corruption."""
import glob
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(__file__)
SCRIPT = os.path.join(HERE, "fixtures", "jit_module.py")


def _env(cache):
    return {**os.environ, "STROP_CACHE_DIR": str(cache), "NUMBA_CACHE_DIR": str(cache / "numba"),
            "PYTHONPATH": os.pathsep.join([os.path.dirname(HERE),
                                           os.environ.get("PYTHONPATH", "")])}


def run(cache, *, wait=True):
    proc = subprocess.Popen([sys.executable, SCRIPT], env=_env(cache), stdout=subprocess.PIPE,
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
    assert int(first["misses"]) >= 1 and int(first["native"]) == 0
    # the second links the machine code the first saved: Numba neither compiles nor opens its
    # own cache (codegen/native.py)
    assert int(second["native"]) >= 1
    assert int(second["misses"]) == 0 and int(second["hits"]) == 0
    assert first_values == second_values
    # a second signature (an integer array) has its own saved code; errors still name the user
    # line; numbers come back as NumPy scalars, as the python backend gives them
    assert first["picked"] == second["picked"] == "np.float32(6.0),np.float64(2.0)"
    assert int(first["pick_native"]) == 0 and int(second["pick_native"]) == 2
    assert first["index_error"] == second["index_error"] == "user-line"
    # a dict comes back as a dict; not saved, so the second process compiles it (linking it
    # crashed the process)
    assert first["dict"] == second["dict"] == "dict:2.0"


@pytest.mark.slow
def test_without_saved_machine_code_numbas_cache_serves(tmp_path):
    first_values, _ = run(tmp_path)
    for path in glob.glob(str(tmp_path / "*.native")):
        os.unlink(path)
    second_values, second = run(tmp_path)
    assert int(second["native"]) == 0
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
            str(tmp_path / "*.py")) + glob.glob(str(tmp_path / "*.native")):
        with open(path, "r+b") as f:       # truncate every cached file to half its size
            data = f.read()
            f.seek(0)
            f.write(data[:len(data) // 2])
            f.truncate()
    values, fields = run(tmp_path)
    assert values == good_values and fields["backend"] == "cpu"


UFUNCS = os.path.join(HERE, "fixtures", "ufunc_module.py")


def run_ufuncs(cache, *names):
    """{name: (jit's value, the Python function's)} from a fresh process."""
    proc = subprocess.run([sys.executable, UFUNCS, *names], env=_env(cache),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {name: (float(got), float(want))
            for name, got, want in (line.split() for line in proc.stdout.splitlines())}


@pytest.mark.slow
@pytest.mark.parametrize("saved", ["machine code", "numba's cache"])
def test_code_cached_by_two_processes_runs_apart_in_a_third(tmp_path, saved):
    # each process compiled its ufunc's closure of one qualified name under the same Numba id,
    # so the same symbol: the third linked both, and its f_tanh ran sin (numba_ids.py)
    names = ("f_sin", "f_tanh", "f_exp")
    for name in names:
        run_ufuncs(tmp_path, name)
    if saved == "numba's cache":
        for path in glob.glob(str(tmp_path / "*.native")):
            os.unlink(path)
    results = run_ufuncs(tmp_path, *names)
    assert sorted(results) == sorted(names)
    for name, (got, want) in results.items():
        assert got == pytest.approx(want, rel=1e-12), name


WARM = os.path.join(HERE, "fixtures", "warm_cache.py")


def run_warm(cache):
    proc = subprocess.run([sys.executable, WARM], env=_env(cache), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_warm_cache_serves_without_falling_back(tmp_path):
    # training_loss: a helper's object-mode block in saved code compiles itself when first
    # called, with the flags of the code holding it: a process that only linked the code
    # lacked strop's error model (KeyError: 'strop') and ran the function as Python.
    # kept: compiled for each value of its bool argument k (keepdims=k), linked by value
    first, second = run_warm(tmp_path), run_warm(tmp_path)
    assert sorted(first) == sorted(second) == ["kept:jit", "kept:jit_grad",
                                               "training_loss:jit", "training_loss:jit_grad"]
    for name in first:
        for run_ in (first[name], second[name]):
            assert run_["fallbacks"] == [] and run_["backend"] == "cpu", (name, run_)
            assert run_["error"] <= 1e-5, (name, run_)        # oracle: the python backend
        assert first[name]["linked"] == 0 and first[name]["compiled"] >= 1, first[name]
        expected = 2 if name.startswith("kept") else 1     # (kept: one for True, one for False)
        assert first[name]["compiled"] == expected, (name, first[name])
        # the second process links the saved code and compiles nothing
        assert second[name]["linked"] == expected and second[name]["compiled"] == 0, \
            (name, second[name])
        assert first[name]["value"] == second[name]["value"]
