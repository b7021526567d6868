"""Reference outputs for the corpus (tests/corpus/), computed by each program's twin under the
library the program was ported from (JAX or autograd); never imported by strop or its tests.

    /tmp/refenv/bin/python tests/data/corpus/make_corpus_reference.py [name ...]   # default: all

A corpus program is written for strop as a port "by changing imports only".  Its twin is the
same SOURCE TEXT with the import lines rewritten back (``TWIN_IMPORTS`` below, one small
explicit table), executed as a fresh module with float64 enabled.  For each program this writes
tests/data/corpus/<name>.npz holding

    value            loss(params, *batch)
    grad/<i>         the leaves of grad(loss)(params, *batch)
    example_grad/<i> per-example gradients of example_loss (if the program has one):
                     JAX: vmap(grad(example_loss), in_axes=(None, 0, ...));
                     autograd: a Python loop over the examples, stacked leaf by leaf
    train/<i>        the leaves of train(params, *batch) (if the program has one)

Leaves are in JAX's tree_flatten order: dicts by sorted key, lists/tuples/namedtuples in order.
The autograd twin's results are flattened with the same rule (``flatten`` below), so one test
compares both kinds.  tests/data/corpus/README.md records the versions and the command.
"""
import importlib.util
import os
import re
import sys
import types

import numpy as onp

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "corpus")

# (pattern, replacement per origin).  A line that imports strop and matches none of these is an
# error: nothing of strop may survive in a twin.
TWIN_IMPORTS = [
    (r"import numpy as np", {"jax": "import jax.numpy as np",
                             "autograd": "import autograd.numpy as np"}),
    (r"import numpy\.random as npr", {"jax": None,  # JAX has no stateful generator
                                      "autograd": "import autograd.numpy.random as npr"}),
    (r"import strop", {"jax": "import jax as strop", "autograd": "import autograd as strop"}),
    (r"from strop import (?P<names>.+)", {"jax": "from jax import {names}",
                                         "autograd": "from autograd import {names}"}),
    (r"from strop\.(?P<mod>[\w.]+) import (?P<names>.+)",
     {"jax": "from jax.{mod} import {names}", "autograd": "from autograd.{mod} import {names}"}),
    # SciPy as the originals call it: each library has its own differentiable twin
    (r"from scipy\.special import (?P<names>.+)",
     {"jax": "from jax.scipy.special import {names}",
      "autograd": "from autograd.scipy.special import {names}"}),
]


def twin_source(text, origin):
    """The program's source with its import lines rewritten for ``origin``."""
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        indent = line[: len(line) - len(line.lstrip())]
        for pattern, repl in TWIN_IMPORTS:
            m = re.fullmatch(pattern, stripped)
            if m:
                target = repl[origin]
                if target is None:
                    raise ValueError(f"{stripped!r} has no {origin} twin")
                line = indent + target.format(**m.groupdict())
                break
        else:
            if re.match(r"(import|from)\s+strop\b", stripped):
                raise ValueError(f"no twin rewrite for the import line {stripped!r}")
        out.append(line)
    return "\n".join(out) + "\n"


def load_twin(path, origin):
    name = os.path.splitext(os.path.basename(path))[0]
    with open(path) as fh:
        text = fh.read()
    source = twin_source(text, origin)
    module = types.ModuleType(f"corpus_twin_{name}")
    module.__file__ = path
    sys.modules[module.__name__] = module  # dataclasses and namedtuples look their module up
    exec(compile(source, path + f" [{origin} twin]", "exec"), module.__dict__)
    return module


def origin_of(path):
    """The ORIGIN a program declares, read from its text (before choosing how to run it)."""
    with open(path) as fh:
        m = re.search(r'^ORIGIN\s*=\s*["\'](\w+)["\']', fh.read(), re.M)
    if not m:
        raise ValueError(f"{path} declares no ORIGIN")
    return m.group(1)


def flatten(tree):
    """Leaves in JAX's tree_flatten order (dict keys sorted; None is an empty subtree)."""
    if tree is None:
        return []
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in flatten(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in flatten(item)]
    return [tree]


def as_array(x):
    return onp.asarray(x, dtype=onp.result_type(onp.asarray(x)))


def jax_init(mod):
    """init()'s arrays as JAX arrays, as the original program holds them (a NumPy array
    indexed by a traced value, say, fails where the original's jax.Array does not)."""
    import jax
    import jax.numpy as jnp

    return jax.tree_util.tree_map(jnp.asarray, mod.init())


def reference_jax(mod):
    import jax

    params, batch = jax_init(mod)
    out = {"value": onp.asarray(mod.loss(params, *batch))}
    out.update(leaves("grad", jax.tree_util.tree_leaves(jax.grad(mod.loss)(params, *batch))))
    if hasattr(mod, "example_loss"):
        per = jax.vmap(jax.grad(mod.example_loss), in_axes=(None,) + (0,) * len(batch))
        out.update(leaves("example_grad", jax.tree_util.tree_leaves(per(params, *batch))))
    if hasattr(mod, "train"):
        params, batch = jax_init(mod)
        out.update(leaves("train", jax.tree_util.tree_leaves(mod.train(params, *batch))))
    return out


def reference_autograd(mod):
    import autograd

    params, batch = mod.init()
    out = {"value": onp.asarray(mod.loss(params, *batch))}
    out.update(leaves("grad", flatten(autograd.grad(mod.loss)(params, *batch))))
    if hasattr(mod, "example_loss"):
        g = autograd.grad(mod.example_loss)
        per = [flatten(g(params, *(b[i] for b in batch))) for i in range(len(batch[0]))]
        out.update(leaves("example_grad", [onp.stack(col) for col in zip(*per)]))
    if hasattr(mod, "train"):
        params, batch = mod.init()
        out.update(leaves("train", flatten(mod.train(params, *batch))))
    return out


def leaves(prefix, xs):
    return {f"{prefix}/{i}": onp.asarray(x) for i, x in enumerate(xs)}


def programs(names):
    found = sorted(f[:-3] for f in os.listdir(CORPUS)
                   if f.endswith(".py") and not f.startswith(("test_", "_")))
    if names:
        missing = set(names) - set(found)
        if missing:
            raise SystemExit(f"no such corpus programs: {sorted(missing)}")
        return [n for n in found if n in names]
    return found


def main(argv):
    import jax

    jax.config.update("jax_enable_x64", True)
    failed = []
    for name in programs(argv):
        path = os.path.join(CORPUS, name + ".py")
        origin = origin_of(path)
        try:
            mod = load_twin(path, origin)
            out = (reference_jax if origin == "jax" else reference_autograd)(mod)
        except Exception as e:  # report every program, then fail at the end
            failed.append(name)
            print(f"{name}: FAILED under {origin}: {type(e).__name__}: {e}")
            continue
        onp.savez_compressed(os.path.join(HERE, name + ".npz"), **out)
        print(f"{name}: {origin}, value {float(out['value']):.6g}, "
              f"{sum(k.startswith('grad/') for k in out)} grad leaves, "
              f"{'example_grad/0' in out and 'per-example, ' or ''}"
              f"{'train/0' in out and 'train' or ''}")
    write_readme()
    if failed:
        raise SystemExit(f"failed: {failed}")


def write_readme():
    import autograd
    import jax

    try:
        from importlib.metadata import version
        ag_version = version("autograd")
    except Exception:
        ag_version = getattr(autograd, "__version__", "unknown")
    text = f"""# Corpus reference data

Made by `tests/data/corpus/make_corpus_reference.py` (read its docstring), run as

    /tmp/refenv/bin/python tests/data/corpus/make_corpus_reference.py [name ...]

from the repository root, in an environment with jax {jax.__version__} (jaxlib
{importlib.util.find_spec('jaxlib') and __import__('jaxlib').__version__}), autograd {ag_version}
and NumPy {onp.__version__}, float64 enabled (`jax_enable_x64`) and JAX's default PRNG settings
(`jax_threefry_partitionable` = {jax.config.jax_threefry_partitionable}).

Each `<name>.npz` belongs to `tests/corpus/<name>.py`: its twin (the same source with the import
lines rewritten back to `jax` or `autograd`, per the program's `ORIGIN`) computed `value`,
`grad/<i>` (leaves of `grad(loss)`, JAX's tree_flatten order), `example_grad/<i>` (per-example
gradients of `example_loss`) and `train/<i>` (leaves of `train`'s final parameters).
The programs are listed in tests/corpus/README.md.
"""
    with open(os.path.join(HERE, "README.md"), "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
