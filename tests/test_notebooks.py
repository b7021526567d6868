"""The notebooks (notebooks/*.ipynb: the Sharp Bits, the FAQ and a tour, told for strop) run
from top to bottom in a Jupyter kernel of this interpreter, as a user runs them; every cell
that shows a result asserts it, so a notebook that no longer tells the truth fails here.  The
committed notebooks are exactly what notebooks/make.py writes from notebooks/src/ (so they
carry no outputs).  Needs the `notebooks` extra (pip install -e ".[notebooks]"), else skips."""
import importlib.util
import os

import pytest

pytestmark = pytest.mark.notebooks
for _module in ("nbclient", "nbformat", "ipykernel", "matplotlib"):
    pytest.importorskip(_module, reason=f"{_module} is not installed: the notebooks need the "
                                        f"'notebooks' extra (pip install -e \".[notebooks]\")")
import nbclient  # noqa: E402
import nbformat  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, "notebooks")
NAMES = ("sharp_bits", "faq", "tour")
CELL_TIMEOUT = 600   # seconds for one cell: its compiles, on a slow shared machine


def make():
    spec = importlib.util.spec_from_file_location("make_notebooks",
                                                  os.path.join(NOTEBOOKS, "make.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_notebooks_are_their_sources_without_outputs():
    written = make()
    assert set(written.NAMES) == set(NAMES)
    for name in NAMES:
        with open(os.path.join(NOTEBOOKS, name + ".ipynb")) as f:
            assert f.read() == written.text(name), (
                f"notebooks/{name}.ipynb is not what notebooks/make.py writes from "
                f"notebooks/src/{name}.py: edit the source and run python notebooks/make.py")


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(name, tmp_path, monkeypatch):
    for var in list(os.environ):      # strop's defaults, as a user starting Jupyter has them
        if var.startswith("STROP_"):
            monkeypatch.delenv(var)
    cache = tmp_path / "strop-cache"  # a clean cache: every compile happens, as the first time
    monkeypatch.setenv("STROP_CACHE_DIR", str(cache))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache / "numba"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # the kernel imports this checkout's strop
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    nb = nbformat.read(os.path.join(NOTEBOOKS, name + ".ipynb"), as_version=4)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": NOTEBOOKS}})
    client.execute()     # a failing cell raises CellExecutionError with its traceback
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
