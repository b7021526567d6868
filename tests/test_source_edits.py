"""A user's source file edited between processes, and within a running process: strop never
transforms text other than the code the function runs (linecache reads the file as it is now),
and never serves code compiled from the old text.  Oracle: the function as Python runs it, and
central differences of it."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import strop
from strop.errors import TransformError

HERE = os.path.dirname(__file__)
SOURCE = """import numpy as np


def f(x):
    return np.sin(x) * 2.0 + x


g = lambda x: x * 2.0   # noqa: E731
"""


def rewrite(path, text):
    """``path`` holding ``text``, its time stamp later (an edit made later than in the same
    clock tick, which linecache and Python's .pyc check could not tell from no edit)."""
    stamp = os.stat(path).st_mtime + 10
    path.write_text(text)
    os.utime(path, (stamp, stamp))


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def d(fun, x, eps=1e-6):
    return (fun(x + eps) - fun(x - eps)) / (2 * eps)


@pytest.mark.parametrize("edit", [
    lambda s: s.replace("2.0", "3.5"),              # a constant
    lambda s: s.replace("+ x", "- x").replace("x * 2", "x / 2"),   # an operator
    lambda s: "# a line added above\n" + s,         # the function moved down a line
])
def test_edited_within_a_process_is_refused(tmp_path, edit):
    path = tmp_path / "user_edit.py"
    path.write_text(SOURCE)
    module = load(path, "user_edit")
    with strop.config.override(enable_x64=True):
        jf = strop.jit(module.f, backend="python")
        assert np.isclose(jf(0.5), module.f(0.5))
        rewrite(path, edit(SOURCE))
        for fun in (module.f, module.g):
            for transform in (strop.grad, strop.jit, strop.vmap):
                with pytest.raises(TransformError, match="edited") as e:
                    transform(fun)(np.array([0.5]) if transform is strop.vmap else 0.5)
                assert str(path) in str(e.value)
        assert np.isclose(jf(0.5), module.f(0.5))    # what was made from the old text still runs
        module = load(path, "user_edit")            # run again: the new text is transformed
        assert np.isclose(strop.grad(module.f)(0.5), d(module.f, 0.5))
        assert np.isclose(strop.grad(module.g)(0.5), d(module.g, 0.5))


SCRIPT = """
import importlib.util, sys
import numpy as np
import strop
strop.config.update("enable_x64", True)
spec = importlib.util.spec_from_file_location("user_edit", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
got = [strop.jit(m.f)(0.5), strop.jit(strop.grad(m.f))(0.5), strop.jit(strop.grad(m.g))(0.5)]
want = [m.f(0.5), (m.f(0.5 + 1e-6) - m.f(0.5 - 1e-6)) / 2e-6,
        (m.g(0.5 + 1e-6) - m.g(0.5 - 1e-6)) / 2e-6]
assert np.allclose(got, want, rtol=1e-6), (got, want)
print(got)
"""


def test_edited_between_processes(tmp_path):
    path = tmp_path / "user_edit.py"
    env = {**os.environ, "STROP_CACHE_DIR": str(tmp_path / "cache"),
           "NUMBA_CACHE_DIR": str(tmp_path / "cache" / "numba"),
           "PYTHONPATH": os.pathsep.join([os.path.dirname(HERE),
                                          os.environ.get("PYTHONPATH", "")])}
    outputs = []
    path.write_text("")
    for text in (SOURCE, SOURCE.replace("2.0", "3.5").replace("+ x", "- x"), SOURCE):
        rewrite(path, text)
        proc = subprocess.run([sys.executable, "-c", SCRIPT, str(path)], env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] != outputs[1] and outputs[0] == outputs[2]
