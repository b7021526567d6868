"""Reference values for strop.lax, computed once with JAX (never imported by strop or its tests).

    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax jaxlib numpy
    /tmp/jaxenv/bin/python tests/data/make_lax_reference.py

writes tests/data/lax_reference.npz (the arrays, keyed ``<case>/<what>/<leaf>``) and
lax_reference.json (JAX's version, and each case's leaves and their dtypes).  The cases are
tests/lax_cases.py, run with jax.lax and jax.numpy, 64-bit types enabled.  A gradient JAX
cannot take in reverse mode (through while_loop) is taken in forward mode (jax.jacfwd).
"""
import json
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_enable_x64", True)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from lax_cases import cases  # noqa: E402


def grad(f, args):
    try:
        return jax.grad(f)(*args)
    except Exception:   # while_loop: not reverse-differentiable in JAX
        return jax.jacfwd(f)(*args)


def main():
    arrays, meta = {}, {"jax": jax.__version__, "cases": {}}
    for name, (f, args, whats) in cases(lax, jnp).items():
        meta["cases"][name] = {}
        for what in whats:
            if what == "value":
                out = f(*args)
            elif what == "grad":
                out = grad(f, args)
            else:
                out = jax.vmap(f)(*args)
            leaves = [np.asarray(x) for x in jax.tree_util.tree_leaves(out)]
            for k, leaf in enumerate(leaves):
                arrays[f"{name}/{what}/{k}"] = leaf
            meta["cases"][name][what] = [str(leaf.dtype) for leaf in leaves]
    np.savez(os.path.join(HERE, "lax_reference.npz"), **arrays)
    with open(os.path.join(HERE, "lax_reference.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
