"""Write the notebooks (``notebooks/*.ipynb``, without outputs) from their sources
(``notebooks/src/*.py``).

A source is Python in the "percent" format Jupytext and VS Code read: a line ``# %%`` starts a
code cell, ``# %% [markdown]`` a markdown cell whose lines are comments (``# `` is taken off).
Edit the source, then run ``python notebooks/make.py``; ``tests/test_notebooks.py`` checks that
the notebooks are what this writes, and executes them.
"""
import os
import sys

import nbformat

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ("sharp_bits", "faq", "tour")
KERNEL = {"display_name": "Python 3", "language": "python", "name": "python3"}


def cells(text):
    """The (kind, source) of each cell of a percent-format source."""
    out, kind, lines = [], None, []

    def close():
        if kind is not None:
            body = "\n".join(lines).strip("\n")
            if kind == "markdown":
                body = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#")
                                 for line in body.splitlines())
            out.append((kind, body))
    for line in text.splitlines():
        if line.startswith("# %%"):
            close()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        elif kind is not None:
            lines.append(line)
    close()
    return out


def notebook(name):
    with open(os.path.join(HERE, "src", name + ".py")) as f:
        text = f.read()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNEL
    nb.metadata["language_info"] = {"name": "python"}
    for i, (kind, body) in enumerate(cells(text)):
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        cell = make(body)
        cell["id"] = f"{name}-{i}"   # stable ids: the files change only where a source does
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


def text(name):
    return nbformat.writes(notebook(name)) + "\n"


def main(names=NAMES):
    for name in names:
        with open(os.path.join(HERE, name + ".ipynb"), "w") as f:
            f.write(text(name))


if __name__ == "__main__":
    main(sys.argv[1:] or NAMES)
