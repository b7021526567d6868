"""Generate tests/data/rng_reference.{json,npz} with JAX (run once, in a venv with jax):

    python tests/data/make_rng_reference.py

Each case names a strop.random function, its arguments (keys as seeds of PRNGKey, arrays as
lists) and the two config flags; the .npz holds JAX's output under the case id. The JSON
records the JAX version and platform. The first cases (``"default": true``) run under JAX's
defaults as installed, and ``default_partitionable`` records JAX's default stream: strop's
defaults must reproduce them. JAX is used only here, never by strop.
"""
import json
import os
import platform

import jax
import numpy as np
from jax import random

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(), (1,), (7,), (3, 5)]
FLOAT_SAMPLERS = ["uniform", "normal", "exponential", "laplace", "logistic", "gumbel"]


def cases(x64):
    f = "float64" if x64 else "float32"
    out = []
    add = lambda fn, **kw: out.append(dict(fn=fn, **kw))  # noqa: E731
    for seed in [0, 1, 42, -1, -7, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 5,
                 2 ** 62 + 3, -2 ** 40]:
        add("PRNGKey", seed=seed)
    for seed in [0, 42]:
        for num in [1, 2, 3, 5, [2, 3]]:
            add("split", key=seed, num=num)
        for data in [0, 1, 12345, 2 ** 32 - 1]:
            add("fold_in", key=seed, data=data)
    for shape in SHAPES + [(2, 3, 4), (1001,)]:
        for dt in ["uint8", "uint16", "uint32"] + (["uint64"] if x64 else []):
            add("bits", key=3, shape=shape, dtype=dt)
    for shape in SHAPES + [(1001,)]:
        for fn in FLOAT_SAMPLERS:
            add(fn, key=5, shape=shape, dtype=f)
    add("gumbel", key=6, shape=(513,), dtype=f, mode="high")
    add("uniform", key=7, shape=(257,), dtype=f, minval=-3.3, maxval=7.1)
    add("uniform", key=7, shape=(2, 3), dtype=f, minval=[[0.0], [10.0]], maxval=[20.0, 30.0, 1e4])
    add("normal", key=8, shape=(4000,), dtype=f)
    add("truncated_normal", key=9, lower=-1.5, upper=2.0, shape=(301,), dtype=f)
    add("truncated_normal", key=9, lower=[-1.0, 0.5, 3.0], upper=[1.0, 4.0, 3.5], shape=(2, 3),
        dtype=f)
    add("truncated_normal", key=9, lower=-0.5, upper=0.25, dtype=f)
    for kw in [dict(p=0.3, shape=(200,)), dict(p=[0.1, 0.5, 0.9]), dict(p=0.5, shape=()),
               dict(p=1e-3, shape=(300,), mode="high")]:
        add("bernoulli", key=10, **kw)
    for kw in [dict(shape=(101,), minval=0, maxval=10), dict(shape=(7,), minval=-5, maxval=5),
               dict(shape=(3, 5), minval=0, maxval=2 ** 31 - 1),
               dict(shape=(2, 3), minval=[0, 100, -3], maxval=[1, 1000, 3]),
               dict(shape=(), minval=3, maxval=3),
               dict(shape=(50,), minval=0, maxval=256, dtype="uint8"),
               dict(shape=(50,), minval=-100, maxval=100, dtype="int8"),
               dict(shape=(50,), minval=0, maxval=70000, dtype="int16"),
               dict(shape=(50,), minval=0, maxval=2 ** 31 - 1, dtype="uint32")] + (
               [dict(shape=(40,), minval=-2 ** 40, maxval=2 ** 50, dtype="int64"),
                dict(shape=(50,), minval=0, maxval=2 ** 32, dtype="uint32")] if x64 else []):
        add("randint", key=11, **kw)
    for kw in [dict(x=10), dict(x=1), dict(x=2000), dict(x=list(range(20)), array=True),
               dict(x=np.arange(12).reshape(3, 4).tolist(), array=True, axis=1),
               dict(x=np.arange(24).reshape(2, 3, 4).tolist(), array=True, axis=1,
                    independent=True)]:
        add("permutation", key=12, **kw)
    for kw in [dict(a=10, shape=[5]), dict(a=7, shape=[3], replace=False),
               dict(a=np.arange(12).reshape(4, 3).tolist(), array=True, shape=[2], axis=1),
               dict(a=5, shape=[20], p=[0.1, 0.2, 0.3, 0.25, 0.15]),
               dict(a=5, shape=[4], replace=False, p=[0.1, 0.2, 0.3, 0.25, 0.15]),
               dict(a=6, shape=[2, 3], replace=False)]:
        add("choice", key=13, **kw)
    for kw in [dict(logits=[0.1, 2.0, -1.0, 0.5]),
               dict(logits=np.log(np.full((3, 4), 0.25)).tolist(), shape=[5, 3]),
               dict(logits=np.linspace(-1, 1, 12).reshape(3, 4).tolist(), axis=0),
               dict(logits=[0.0, 1.0, 2.0, 3.0, 4.0], shape=[3], replace=False),
               dict(logits=[0.1, 2.0, -1.0, 0.5], shape=[50], mode="high")]:
        add("categorical", key=14, **kw)
    for kw in [dict(a=[0.1, 0.5, 1.0, 1.5, 4.0, 30.0]), dict(a=2.5, shape=(500,)),
               dict(a=0.3, shape=(3, 4))]:
        add("gamma", key=15, dtype=f, **kw)
        add("loggamma", key=15, dtype=f, **kw)
    add("beta", key=16, a=2.0, b=3.0, shape=(300,), dtype=f)
    add("beta", key=16, a=[0.5, 1.0, 5.0], b=[[0.5], [2.0]], dtype=f)
    for kw in [dict(lam=[0.0, 0.5, 3.0, 9.9, 10.0, 25.0, 1000.0]), dict(lam=4.0, shape=(400,)),
               dict(lam=50.0, shape=(400,)), dict(lam=2.0, shape=())]:
        add("poisson", key=17, **kw)
    cov = [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]]
    for method in ["cholesky", "eigh", "svd"]:
        add("multivariate_normal", key=18, mean=[1.0, -1.0, 0.5], cov=cov, shape=(5,),
            method=method, dtype=f)
    add("multivariate_normal", key=18, mean=[[0.0, 0.0], [5.0, 5.0]], cov=[[1.0, 0.5], [0.5, 2.0]],
        dtype=f)
    return out


# run first, under JAX's defaults as installed (no jax.config.update): what strop's defaults
# must reproduce (the stream: jax_threefry_partitionable, True since JAX 0.5)
DEFAULT_CASES = [dict(fn="key", seed=0), dict(fn="key", seed=-7), dict(fn="split", key=0, num=2),
                 dict(fn="split", key=42, num=[2, 3]), dict(fn="fold_in", key=0, data=12345),
                 dict(fn="normal", key=5, shape=(7,)), dict(fn="uniform", key=5, shape=(3, 5)),
                 dict(fn="bits", key=3, shape=(9,)), dict(fn="randint", key=11, shape=(101,),
                                                          minval=0, maxval=10)]


def run(case):
    kw = {k: v for k, v in case.items()
          if k not in ("fn", "key", "array", "x64", "partitionable", "id", "default")}
    fn = getattr(random, case["fn"])
    if case["fn"] == "PRNGKey":
        return random.PRNGKey(kw["seed"])
    if case["fn"] == "key":   # a typed key: its words
        return random.key_data(random.key(kw["seed"]))
    key = random.PRNGKey(case["key"])
    for name in ("minval", "maxval", "lower", "upper", "p", "a", "b", "lam", "logits", "mean",
                 "cov", "x"):
        if isinstance(kw.get(name), list):
            kw[name] = np.asarray(kw[name], None if case.get("array") or name == "x" or
                                  name == "a" and case["fn"] == "choice" else
                                  ("float64" if jax.config.jax_enable_x64 else "float32"))
    if "shape" in kw and isinstance(kw["shape"], list) and case["fn"] not in ("choice",):
        kw["shape"] = tuple(kw["shape"])
    if case["fn"] == "split" and isinstance(kw["num"], list):
        kw["num"] = tuple(kw["num"])
    return fn(key, **kw)


def main():
    table, arrays = [], {}
    default_part = bool(jax.config.jax_threefry_partitionable)
    for case in DEFAULT_CASES:
        case = dict(case, x64=bool(jax.config.jax_enable_x64), partitionable=default_part,
                    default=True, id=f"c{len(table)}")
        arrays[case["id"]] = np.asarray(run(case))
        table.append(case)
    for x64 in (False, True):
        for part in (False, True):
            jax.config.update("jax_enable_x64", x64)
            jax.config.update("jax_threefry_partitionable", part)
            for case in cases(x64):
                if case["fn"] == "PRNGKey" and part:
                    continue  # seeding does not depend on the stream
                case = dict(case, x64=x64, partitionable=part, id=f"c{len(table)}")
                try:
                    arrays[case["id"]] = np.asarray(run(case))
                except Exception as e:  # JAX's own rejection is part of the reference
                    case["error"] = type(e).__name__
                table.append(case)
    meta = dict(jax_version=jax.__version__, jaxlib_version=jax.lib.__version__,
                numpy_version=np.__version__, platform=platform.platform(),
                backend=jax.default_backend(), default_partitionable=default_part,
                cases=table)
    with open(os.path.join(HERE, "rng_reference.json"), "w") as fh:
        json.dump(meta, fh, indent=0)
    np.savez_compressed(os.path.join(HERE, "rng_reference.npz"), **arrays)


if __name__ == "__main__":
    main()
