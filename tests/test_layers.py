"""The floors of DESIGN's layout: a module never imports from a higher floor, lazily or not.
errors/config/tree_util -> runtime (and rng) -> transformer -> codegen -> the rest."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "strop"
FLOORS = {"runtime": 1, "rng": 1, "transformer": 2, "codegen": 3}   # rng: kernels, like runtime
BOTTOM = {"errors", "config", "tree_util", "dtypes", "numba_ids", "syntax"}


def floor(module):
    """The floor of a dotted module name under strop (None: not strop's)."""
    parts = module.split(".")
    if parts[0] != "strop":
        return None
    if len(parts) == 1:
        return 4
    return 0 if parts[1] in BOTTOM else FLOORS.get(parts[1], 4)


def is_module(dotted):
    path = ROOT.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports(path):
    """The strop modules ``path`` imports (``from . import runtime``: strop.runtime; ``from
    .x import name``: strop...x), with the line of each import."""
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
    if path.name == "__init__.py":
        package += ".__init__"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:-node.level] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{mod}.{a.name}"
                if mod == "strop" and not is_module(sub):   # __version__: set before its imports
                    continue
                yield (sub if is_module(sub) else mod), node.lineno


@pytest.mark.parametrize("layer", sorted(FLOORS))
def test_no_module_imports_from_a_higher_floor(layer):
    bad = [f"{path.relative_to(ROOT)}:{line} imports {mod}"
           for path in sorted((ROOT / layer).rglob("*.py"))
           for mod, line in imports(path)
           if (floor(mod) or 0) > FLOORS[layer]]
    assert not bad, "\n".join(bad)
