"""A seeded generator of small programs with the shapes real code has, for differential fuzzing.

generate.py makes scalars and arrays; real programs hold their parameters in pytrees and pass
functions around.  A program here is a module with a main function ``f`` whose arguments are
pytrees of float arrays (a list of ``(w, b)`` tuples, a dict of lists, a list of dicts, a
dict of layers, a list of namedtuples, nested ones) and data arrays.  It is assembled from
weighted tables, each choice independent of the others:

- LAYOUTS: how the parameters are held, and IDIOMS: the ways real code reads that layout
  (``for w, b in params``, ``params[i][0]`` in a ``range(len(params))`` loop, ``w, b =
  params[-1]``, ``zip(*params)``, ``enumerate``, ``functools.reduce``, ``sorted(d)``,
  ``d.items()``, ``d.values()``, ``partial(dense, w=w, b=b)``, a helper taking one layer);
- ACTIVATIONS: functions as values (a NumPy function, a table of functions, a lambda, a
  closure, a factory returning a nested def, ``functools.partial`` positional and by keyword,
  a function passed to a helper);
- REGULARIZERS: ``sum(... for w, _ in pairs)``, ``tree_leaves``/``tree_map``, ``map``,
  ``filter``, ``np.array``/``np.stack`` of lists, a recursive flatten, a helper;
- SHAPES (the program kinds): a loss; a batched loss through ``vmap(partial(predict,
  params))``; a pytree result; an SGD step ``tree_map(lambda p, g: p - lr * g, params,
  grads)``; per-example gradients ``vmap(grad(loss), in_axes=(None, 0, 0))``; a
  Hessian-vector product ``jvp(grad(loss), (params,), (v,))``; ``custom_jvp`` and
  ``custom_vjp`` rules with pytree inputs and outputs; a training loop threading PRNG keys
  through ``random.split``; containers passed to helpers and returned from them.

Each program is small (two layers of width 2 or 3), so that the python backend transforms it
in well under a second.  ``TreeProgram.args`` describes each argument as a pytree of Leaf
shapes (NT for the program's namedtuple); ``make_case`` makes the values.  The same (seed,
index) always gives the same program and values.
"""
import random
from dataclasses import dataclass

import numpy as np

from .oracles import BATCH, POINTS, Case, cotangent_like, tmap


@dataclass(frozen=True)
class Leaf:
    shape: tuple


@dataclass(frozen=True)
class NT:
    """A namedtuple of the program (its class is defined in the program's module)."""
    name: str
    fields: tuple      # (field name, spec)


@dataclass
class TreeProgram:
    seed: int
    index: int
    source: str
    args: tuple            # one spec per argument of f: Leaf / list / tuple / dict / NT
    ret_shape: object      # () for a scalar result, "tree" otherwise
    kind: str              # the SHAPES row it came from, and its choices
    argnums: tuple         # the choices of argnums for derivative oracles
    in_axes: tuple         # the choices of in_axes for vmap oracles
    name: str = "f"

    @property
    def nested(self):
        """Whether f calls transforms itself (checked by the "nested" oracle)."""
        return self.kind.split("/")[0] in NESTED

    @property
    def arg_shapes(self):
        return self.args


HEADER = ["import functools", "from collections import namedtuple", "from functools import partial",
          "", "import numpy as np", "", "from strop import grad, jvp, vjp, vmap, value_and_grad, random",
          "from strop import custom_jvp, custom_vjp", "from strop.tree_util import tree_map, tree_leaves",
          ""]

# -- parameter layouts: (name, weight); each knows its spec, its idioms and its pairs ------
LAYOUTS = (("list_of_tuples", 6), ("tuple_of_tuples", 2), ("dict_of_lists", 3),
           ("list_of_dicts", 3), ("dict_of_tuples", 3), ("dict_of_dicts", 2),
           ("list_of_namedtuples", 3), ("nested", 2))
SQUARE = {"dict_of_tuples", "dict_of_dicts"}    # read in key order: every layer square
KEYS = (("enc", "dec"), ("l0", "l1"), ("hidden", "out"), ("b_layer", "a_layer"))

# how each layout is iterated as (w, b) pairs, in its own order
PAIRS = {
    "list_of_tuples": "params", "tuple_of_tuples": "params",
    "dict_of_lists": 'zip(params["ws"], params["bs"])',
    "list_of_dicts": '[(layer["w"], layer["b"]) for layer in params]',
    "dict_of_tuples": "params.values()",
    "dict_of_dicts": '[(layer["w"], layer["b"]) for layer in params.values()]',
    "list_of_namedtuples": "params", "nested": 'params["net"]',
}

# (weight, lines) per layout; {A} is the activation applied to its argument: A(expr)
IDIOMS = {
    "list_of_tuples": (
        (4, ["for w, b in params:", "    h = {A(h @ w + b)}"]),
        (3, ["for i in range(len(params)):", "    h = {A(h @ params[i][0] + params[i][1])}"]),
        (3, ["for w, b in params[:-1]:", "    h = {A(h @ w + b)}", "w, b = params[-1]",
             "h = h @ w + b"]),
        (2, ["ws, bs = zip(*params)", "for w, b in zip(ws, bs):", "    h = {A(h @ w + b)}"]),
        (2, ["for i, (w, b) in enumerate(params):", "    z = h @ w + b",
             "    h = {A(z)} if i < len(params) - 1 else z"]),
        (2, ["for layer in params:", "    h = dense(layer, h)"]),
        (2, ["for w, b in params:", "    h = partial(dense_kw, w=w, b=b)(h)"]),
        (1, ["for w, b in params:", "    layer = partial(dense_pos, w, b)", "    h = layer(h)"]),
        (2, ["h = functools.reduce(lambda h, wb: {A(h @ wb[0] + wb[1])}, params, h)"]),
        (1, ["(w0, b0), (w1, b1) = params[:2]", "h = {A(h @ w0 + b0)}", "h = {A(h @ w1 + b1)}"]),
        (1, ["layers = [partial(dense_kw, w=w, b=b) for w, b in params]",
             "for layer in layers:", "    h = layer(h)"]),
    ),
    "dict_of_lists": (
        (4, ['for w, b in zip(params["ws"], params["bs"]):', "    h = {A(h @ w + b)}"]),
        (3, ['for i in range(len(params["ws"])):',
             '    h = {A(h @ params["ws"][i] + params["bs"][i])}']),
        (2, ['ws, bs = params["ws"], params["bs"]', "for i, w in enumerate(ws):",
             "    h = {A(h @ w + bs[i])}"]),
        (1, ['w, b = params["ws"][-1], params["bs"][-1]',
             'for w0, b0 in zip(params["ws"][:-1], params["bs"][:-1]):',
             "    h = {A(h @ w0 + b0)}", "h = h @ w + b"]),
    ),
    "list_of_dicts": (
        (4, ["for layer in params:", '    h = {A(h @ layer["w"] + layer["b"])}']),
        (2, ["for i in range(len(params)):", '    h = {A(h @ params[i]["w"] + params[i]["b"])}']),
        (2, ["for layer in params[:-1]:", '    h = {A(h @ layer["w"] + layer["b"])}',
             "last = params[-1]", 'h = h @ last["w"] + last["b"]']),
        (1, ['for w, b in [(d["w"], d["b"]) for d in params]:', "    h = {A(h @ w + b)}"]),
    ),
    "dict_of_tuples": (
        (3, ["for name in sorted(params):", "    w, b = params[name]", "    h = {A(h @ w + b)}"]),
        (3, ["for name, (w, b) in params.items():", "    h = {A(h @ w + b)}"]),
        (3, ["for w, b in params.values():", "    h = {A(h @ w + b)}"]),
        (2, ["for name in params:", "    h = {A(h @ params[name][0] + params[name][1])}"]),
        (1, ["for k, (name, wb) in enumerate(params.items()):", "    w, b = wb",
             "    h = {A(h @ w + b)} * (1.0 + 0.1 * k)"]),
    ),
    "dict_of_dicts": (
        (3, ["for name, layer in params.items():", '    h = {A(h @ layer["w"] + layer["b"])}']),
        (2, ["for layer in params.values():", '    h = {A(h @ layer["w"] + layer["b"])}']),
        (2, ["for name in sorted(params):",
             '    h = {A(h @ params[name]["w"] + params[name]["b"])}']),
    ),
    "list_of_namedtuples": (
        (3, ["for layer in params:", "    h = {A(h @ layer.w + layer.b)}"]),
        (2, ["for w, b in params:", "    h = {A(h @ w + b)}"]),
        (2, ["for layer in params[:-1]:", "    h = {A(h @ layer.w + layer.b)}",
             "last = params[-1]", "h = h @ last.w + last.b"]),
        (2, ["for i in range(len(params)):", "    h = {A(h @ params[i].w + params[i].b)}"]),
        (1, ["for layer in params:", "    h = {A(h @ layer[0] + layer[1])}"]),
    ),
    "nested": (
        (3, ['for w, b in params["net"]:', "    h = {A(h @ w + b)}",
             'h = h * params["scale"]']),
        (2, ['net = params["net"]', "for i in range(len(net)):",
             "    h = {A(h @ net[i][0] + net[i][1])}", 'h = h + params["scale"]']),
    ),
}
IDIOMS["tuple_of_tuples"] = IDIOMS["list_of_tuples"]

# -- activations: functions as values. (weight, module lines, f lines, call template) ---
ACTIVATIONS = (
    (4, [], [], "np.tanh({z})"),
    (2, [], [], "np.sin({z})"),
    (1, [], [], "np.maximum({z}, 0.1 * ({z}))"),
    (2, ['ACTS = {"tanh": np.tanh, "soft": lambda z: z / (1.0 + z ** 2)}'],
     ['act = ACTS["{key}"]'], "act({z})"),
    (1, ["ACT_LIST = [np.tanh, np.sin]"], [], "ACT_LIST[{k}]({z})"),
    (2, [], ["act = lambda z: z / (1.0 + z ** 2)"], "act({z})"),
    (2, [], ["scale = 0.7", "def act(z):", "    return np.tanh(scale * z)"], "act({z})"),
    (2, ["def make_act(a):", "    def act(z):", "        return np.tanh(a * z) + 0.1 * z",
         "    return act"], ["act = make_act(0.8)"], "act({z})"),
    (2, ["def scaled(a, z):", "    return np.tanh(a * z)"], ["act = partial(scaled, 0.6)"],
     "act({z})"),
    (1, ["def scaled_kw(z, a):", "    return a * np.sin(z)"], ["act = partial(scaled_kw, a=1.3)"],
     "act({z})"),
)

HELPERS = {   # module-level helpers an idiom may call
    "dense": ["def dense(layer, h):", "    w, b = layer", "    return np.tanh(h @ w + b)"],
    "dense_kw": ["def dense_kw(h, w, b):", "    return np.tanh(h @ w + b)"],
    "dense_pos": ["def dense_pos(w, b, h):", "    return np.tanh(h @ w + b)"],
}

# -- regularizers: (weight, template over {P} the pairs, or None: any layout, module lines)
REGULARIZERS = (
    (3, "sum(np.sum(w ** 2) for w, _ in {P})", []),
    (2, "sum([np.sum(w * w) + np.sum(b * b) for w, b in {P}])", []),
    (2, "sum(np.sum(p ** 2) for p in tree_leaves(params))", []),
    (2, "sum(tree_leaves(tree_map(lambda p: np.sum(p ** 2), params)))", []),
    (1, "np.sum(np.array([np.sum(p ** 2) for p in tree_leaves(params)]))", []),
    (2, "np.sum(np.stack([b for _, b in {P}]) ** 2)", []),
    (2, "sum(map(lambda wb: np.sum(wb[0] ** 2), {P}))", []),
    (1, "sum(np.sum(p ** 2) for p in filter(lambda p: p.ndim == 2, tree_leaves(params)))", []),
    (1, "sum(np.sum(l ** 2) for l in flatten(params))",
     ["def flatten(t):", "    if isinstance(t, dict):",
      "        return [l for k in t for l in flatten(t[k])]",
      "    if isinstance(t, (list, tuple)):", "        return [l for s in t for l in flatten(s)]",
      "    return [t]"]),
    (1, "l2(params)", ["def l2(tree):", "    total = 0.0", "    for leaf in tree_leaves(tree):",
                       "        total = total + np.sum(leaf ** 2)", "    return total"]),
)

LOSSES = (
    (3, "np.mean((out - y) ** 2)"),
    (2, "np.sum((out - y) ** 2)"),
    (1, "-np.sum(y * (out - np.log(np.sum(np.exp(out)))))"),
    (1, "np.sum(np.tanh(out) * y)"),
)

NESTED = {"vmap_partial", "sgd_step", "per_example", "hvp", "train_loop"}
SHAPES = (("loss", 10), ("batched", 3), ("vmap_partial", 3), ("tree_out", 3), ("sgd_step", 4),
          ("per_example", 3), ("hvp", 3), ("custom_jvp", 3), ("custom_vjp", 3),
          ("train_loop", 3), ("helpers", 3))


def indent(lines, n=1):
    return ["    " * n + line for line in lines]


class TreeGenerator:
    def __init__(self, seed, index, attempt=0):
        self.rng = random.Random(f"strop-fuzz-trees:{seed}:{index}"
                                 + (f":{attempt}" if attempt else ""))
        self.module = []      # module-level definitions, in order, each a list of lines
        self.names = set()

    def weighted(self, options):
        total = sum(w for w, *_ in options)
        x = self.rng.uniform(0, total)
        for option in options:
            x -= option[0]
            if x <= 0:
                return option
        return options[-1]

    def pick(self, table):
        """A name from a (name, weight) table."""
        return self.weighted([(w, n) for n, w in table])[1]

    def define(self, key, lines):
        if lines and key not in self.names:
            self.names.add(key)
            self.module.append(lines)

    # -- parameters ------------------------------------------------------------------
    def layout(self, name, din):
        """The spec of a two-layer network's parameters held as ``name``; input width
        ``din``, output width 2 (dict layouts: every layer 2 x 2, so key order matters)."""
        dims = [(din, 2), (2, 2)] if name not in SQUARE else [(2, 2), (2, 2)]
        if name != "nested" and name not in SQUARE and self.rng.random() < 0.25:
            dims.append((2, 2))
        pairs = [(Leaf(d), Leaf(d[1:])) for d in dims]
        if name == "list_of_tuples":
            return [tuple(p) for p in pairs]
        if name == "tuple_of_tuples":
            return tuple(tuple(p) for p in pairs)
        if name == "dict_of_lists":
            return {"ws": [w for w, _ in pairs], "bs": [b for _, b in pairs]}
        if name == "list_of_dicts":
            return [{"w": w, "b": b} for w, b in pairs]
        if name == "list_of_namedtuples":
            self.define("Layer", ['Layer = namedtuple("Layer", ["w", "b"])'])
            return [NT("Layer", (("w", w), ("b", b))) for w, b in pairs]
        if name == "nested":
            return {"net": [tuple(p) for p in pairs], "scale": Leaf(())}
        keys = self.rng.choice(KEYS)
        if name == "dict_of_tuples":
            return {k: tuple(p) for k, p in zip(keys, pairs)}
        return {k: {"w": w, "b": b} for k, (w, b) in zip(keys, pairs)}

    def activation(self, fn_lines):
        _, module, local, call = self.weighted(ACTIVATIONS)
        self.define(module[0] if module else None, module)
        key = self.rng.choice(("tanh", "soft"))
        k = self.rng.randrange(2)
        fn_lines += [line.replace("{key}", key) for line in local]
        return lambda z: call.replace("{z}", z).replace("{k}", str(k))

    def net(self, layout, act):
        """Lines computing ``h`` from ``h`` through the layers held in ``params``."""
        _, lines = self.weighted(IDIOMS[layout])
        out = []
        for line in lines:
            for helper, body in HELPERS.items():
                if f"{helper}(" in line or f"{helper}," in line:
                    self.define(helper, body)
            while "{A(" in line:        # {A(expr)}: the activation applied to expr
                start = line.index("{A(")
                depth, k = 0, start + 2
                while True:
                    depth += {"(": 1, ")": -1}.get(line[k], 0)
                    if depth == 0:
                        break
                    k += 1
                line = line[:start] + act(line[start + 3:k]) + line[k + 2:]
            out.append(line)
        return out

    def regularizer(self, layout):
        _, template, module = self.weighted(REGULARIZERS)
        self.define(module[0] if module else None, module)
        return template.replace("{P}", PAIRS[layout])

    def predict_def(self, layout, name="predict"):
        """A module-level ``predict(params, x)``: the network."""
        lines = []
        act = self.activation(lines)
        body = lines + ["h = x"] + self.net(layout, act) + ["return h"]
        return [f"def {name}(params, x):"] + indent(body)

    def loss_def(self, layout, reg, name="loss"):
        loss = self.weighted(LOSSES)[1]
        body = ["out = predict(params, x)", f"value = {loss}"]
        if reg:
            body.append(f"value = value + 0.01 * {self.regularizer(layout)}")
        return [f"def {name}(params, x, y):"] + indent(body + ["return value"])

    # -- program shapes --------------------------------------------------------------
    def program(self, seed, index):
        shape = self.pick(SHAPES)
        layout = self.pick(LAYOUTS)
        din = 3 if layout not in SQUARE else 2
        params = self.layout(layout, din)
        made = getattr(self, "p_" + shape)(layout, params, din)
        f_lines, args, ret, argnums, in_axes = made
        lines = list(HEADER)
        for block in self.module:
            lines += block + ["", ""]
        lines += f_lines
        return TreeProgram(seed, index, "\n".join(lines) + "\n", tuple(args), ret,
                           f"{shape}/{layout}", argnums, in_axes)

    def p_loss(self, layout, params, din):
        """f(params, x, y): a loss, perhaps regularized, read through one idiom."""
        body = []
        if self.rng.random() < 0.25:     # a function passed as an argument to a helper
            fn = self.rng.choice(("np.tanh", "lambda z: z / (1.0 + z ** 2)",
                                  "partial(scaled, 0.6)", "make_act(0.8)"))
            if "scaled" in fn:
                self.define("def scaled(a, z):", ACTIVATIONS[8][1])
            if "make_act" in fn:
                self.define("def make_act(a):", ACTIVATIONS[7][1])
            net = self.net(layout, lambda z: f"act({z})")
            self.define("mlp", ["def mlp(params, x, act):"] + indent(["h = x"] + net
                                                                     + ["return h"]))
            body += [f"out = mlp(params, x, {fn})"]
        else:
            act = self.activation(body)
            body += ["h = x"] + self.net(layout, act) + ["out = h"]
        value = self.weighted(LOSSES)[1]
        if self.rng.random() < 0.5:
            value += f" + 0.01 * {self.regularizer(layout)}"
        f = ["def f(params, x, y):"] + indent(body + [f"return {value}"])
        return (f, (params, Leaf((din,)), Leaf((2,))), (), (0, (0, 1), (0, 2), (0, 1, 2)),
                ((None, 0, 0), (0, None, None), (0, 0, 0), (0, None, 0)))

    def p_batched(self, layout, params, din):
        """f(params, xs, ys): a batch through broadcasting matmuls, the mean loss."""
        self.define("predict", self.predict_def(layout))
        self.define("loss", self.loss_def(layout, self.rng.random() < 0.5))
        f = ["def f(params, xs, ys):",
             "    return np.mean(np.stack([loss(params, x, y) for x, y in zip(xs, ys)]))"]
        if self.rng.random() < 0.5:
            f = ["def f(params, xs, ys):", "    total = 0.0",
                 "    for i in range(xs.shape[0]):",
                 "        total = total + loss(params, xs[i], ys[i])",
                 "    return total / xs.shape[0]"]
        return (f, (params, Leaf((3, din)), Leaf((3, 2))), (), (0, (0, 1)),
                ((None, 0, 0), (0, None, None)))

    def p_vmap_partial(self, layout, params, din):
        """vmap inside f: ``vmap(partial(predict, params))(xs)`` and its spellings."""
        self.define("predict", self.predict_def(layout))
        call = self.rng.choice(("vmap(partial(predict, params))(xs)",
                                "vmap(predict, in_axes=(None, 0))(params, xs)",
                                "vmap(lambda x: predict(params, x))(xs)"))
        f = ["def f(params, xs, ys):", f"    preds = {call}",
             "    return np.mean((preds - ys) ** 2)"]
        return (f, (params, Leaf((3, din)), Leaf((3, 2))), (), (0, (0, 1)),
                ((None, 0, 0), (0, None, None)))

    def p_tree_out(self, layout, params, din):
        """A pytree result: the params scaled by the input, or (out, hidden) / a dict."""
        self.define("predict", self.predict_def(layout))
        forms = (["s = np.tanh(np.sum(x))", "return tree_map(lambda p: p * s, params)"],
                 ["out = predict(params, x)", 'return {"out": out, "norm": np.sum(out ** 2)}'],
                 ["out = predict(params, x)", "return out, np.sin(out)"],
                 ["return [predict(params, x), predict(params, 0.5 * x)]"])
        f = ["def f(params, x):"] + indent(self.rng.choice(forms))
        return f, (params, Leaf((din,))), "tree", (0, (0, 1)), ((None, 0), (0, None), (0, 0))

    def p_sgd_step(self, layout, params, din):
        """One SGD step through ``tree_map(lambda p, g: p - lr * g, ...)``: the loss after
        it (second order), or the new parameters."""
        self.define("predict", self.predict_def(layout))
        self.define("loss", self.loss_def(layout, self.rng.random() < 0.4))
        grads = self.rng.choice(("grads = grad(loss)(params, x, y)",
                                 "value, grads = value_and_grad(loss)(params, x, y)"))
        body = [grads, "new = tree_map(lambda p, g: p - 0.1 * g, params, grads)"]
        ret = self.rng.random() < 0.6
        body.append("return loss(new, x, y)" if ret else "return new")
        f = ["def f(params, x, y):"] + indent(body)
        return (f, (params, Leaf((din,)), Leaf((2,))), () if ret else "tree", (0, (0, 1)),
                ((None, 0, 0), (0, None, None)))

    def p_per_example(self, layout, params, din):
        """Per-example gradients ``vmap(grad(loss), in_axes=(None, 0, 0))``, averaged, one
        update; the loss after it or the new parameters."""
        self.define("predict", self.predict_def(layout))
        self.define("loss", self.loss_def(layout, False))
        body = ["per = vmap(grad(loss), in_axes=(None, 0, 0))(params, xs, ys)",
                "g = tree_map(lambda a: np.mean(a, axis=0), per)",
                "new = tree_map(lambda p, d: p - 0.1 * d, params, g)"]
        ret = self.rng.random() < 0.5
        body.append("return np.mean(vmap(loss, in_axes=(None, 0, 0))(new, xs, ys))"
                    if ret else "return new")
        f = ["def f(params, xs, ys):"] + indent(body)
        return (f, (params, Leaf((3, din)), Leaf((3, 2))), () if ret else "tree", (0,),
                ((None, 0, 0), (0, None, None)))

    def p_hvp(self, layout, params, din):
        """A Hessian-vector product ``jvp(grad(loss), (params,), (v,))`` in f, on the
        parameters (v a pytree like them) or on an array."""
        if self.rng.random() < 0.5:
            self.define("g", ["def g(x):", "    return np.sum(np.sin(x) * x ** 2) + "
                              "np.sum(x) ** 2 / 3.0"])
            f = ["def f(x, v):", "    hv = jvp(grad(g), (x,), (v,))[1]",
                 "    return np.sum(hv * v) + np.sum(np.cos(hv))"]
            return f, (Leaf((3,)), Leaf((3,))), (), (0, (0, 1)), ((0, 0), (None, 0), (0, None))
        self.define("predict", self.predict_def(layout))
        self.define("loss", self.loss_def(layout, False))
        f = ["def f(params, v, x, y):",
             "    hv = jvp(grad(lambda p: loss(p, x, y)), (params,), (v,))[1]",
             "    return sum(np.sum(a * b) for a, b in zip(tree_leaves(hv), tree_leaves(v)))"]
        return (f, (params, params, Leaf((din,)), Leaf((2,))), (), (0, 1, (0, 2)),
                ((None, None, 0, 0), (0, None, None, None), (None, 0, None, None)))

    def p_custom_jvp(self, layout, params, din):
        """A custom_jvp rule whose input and output are pytrees."""
        out = self.rng.choice(("tuple", "dict", "scalar"))
        prim = {"tuple": "return np.sin(p['a']) * p['b'], np.sum(p['a'] * p['b'])",
                "dict": "return {'u': np.sin(p['a']) * p['b'], 's': np.sum(p['a'] * p['b'])}",
                "scalar": "return np.sum(np.sin(p['a']) * p['b'])"}[out]
        tan = {"tuple": ["u = np.cos(a) * ta * b + np.sin(a) * tb",
                         "s = np.sum(ta * b + a * tb)", "return primal(p), (u, s)"],
               "dict": ["u = np.cos(a) * ta * b + np.sin(a) * tb",
                        "s = np.sum(ta * b + a * tb)", "return primal(p), {'u': u, 's': s}"],
               "scalar": ["return primal(p), np.sum(np.cos(a) * ta * b + np.sin(a) * tb)"]}[out]
        use = {"tuple": "u, s = primal(p)\n    return np.sum(u ** 2) + s",
               "dict": "r = primal(p)\n    return np.sum(r['u'] ** 2) + r['s']",
               "scalar": "return primal(p) ** 2"}[out]
        self.define("primal", ["@custom_jvp", "def primal(p):", "    " + prim, "", "",
                               "@primal.defjvp", "def primal_jvp(primals, tangents):",
                               "    (p,), (t,) = primals, tangents",
                               "    a, b, ta, tb = p['a'], p['b'], t['a'], t['b']"]
                    + indent(tan))
        f = ["def f(x, y):", "    p = {'a': x, 'b': np.tanh(y)}"] + indent(use.split("\n    "))
        if self.rng.random() < 0.5:   # the dict given by the caller
            f = ["def f(p, y):", "    p = {'a': p['a'] * y, 'b': p['b']}"] + \
                indent(use.split("\n    "))
            return (f, ({"a": Leaf((3,)), "b": Leaf((3,))}, Leaf(())), (), (0, (0, 1)),
                    ((0, None), (None, 0), (0, 0)))
        return f, (Leaf((3,)), Leaf((3,))), (), (0, (0, 1)), ((0, None), (None, 0), (0, 0))

    def p_custom_vjp(self, layout, params, din):
        """A custom_vjp rule taking a pytree (w, b) and returning a tuple."""
        self.define("affine", [
            "@custom_vjp", "def affine(wb, x):", "    w, b = wb",
            "    z = x @ w + b", "    return np.tanh(z), np.sum(z)", "", "",
            "def affine_fwd(wb, x):", "    out = affine(wb, x)", "    return out, (wb, x, out[0])",
            "", "", "def affine_bwd(res, cts):", "    (w, b), x, t = res", "    ct, cs = cts",
            "    dz = ct * (1.0 - t ** 2) + cs", "    return (np.outer(x, dz), dz), w @ dz", "", "",
            "affine.defvjp(affine_fwd, affine_bwd)"])
        f = ["def f(params, x):", "    h = x", "    total = 0.0"]
        f += indent([f"for w, b in {PAIRS[layout]}:", "    h, s = affine((w, b), h)",
                     "    total = total + 0.1 * s", "return np.sum(h ** 2) + total"])
        return f, (params, Leaf((din,))), (), (0, (0, 1)), ((None, 0), (0, None))

    def p_train_loop(self, layout, params, din):
        """A training loop threading a PRNG key through ``random.split``: noisy inputs,
        ``value_and_grad``, ``tree_map`` updates; the final loss or parameters."""
        self.define("predict", self.predict_def(layout))
        self.define("loss", self.loss_def(layout, self.rng.random() < 0.3))
        body = [f"key = random.PRNGKey({self.rng.randrange(100)})", "for step in range(2):",
                "    key, sub = random.split(key)",
                "    noise = 0.05 * random.normal(sub, x.shape)",
                "    value, grads = value_and_grad(loss)(params, x + noise, y)",
                "    params = tree_map(lambda p, g: p - 0.1 * g, params, grads)"]
        ret = self.rng.random() < 0.6
        body.append("return loss(params, x, y)" if ret else "return params")
        f = ["def f(params, x, y):"] + indent(body)
        return (f, (params, Leaf((din,)), Leaf((2,))), () if ret else "tree", (0, (0, 1)),
                ((None, 0, 0), (0, None, None)))

    def p_helpers(self, layout, params, din):
        """Containers passed to helpers and returned from them."""
        form = self.rng.choice(("scale", "split", "unzip"))
        self.define("predict", self.predict_def(layout))
        if form == "scale":
            self.define("scale_tree", ["def scale_tree(tree, s):",
                                       "    return tree_map(lambda p: p * s, tree)"])
            body = ["small = scale_tree(params, 0.9)", "out = predict(small, x)",
                    "return np.sum(out ** 2)"]
        elif form == "split" and layout in ("list_of_tuples", "list_of_namedtuples",
                                            "list_of_dicts"):
            self.define("split_last", ["def split_last(layers):",
                                       "    return layers[:-1], layers[-1]"])
            body = ["body, head = split_last(params)", "out = predict(body + [head], x)",
                    "return np.sum(np.sin(out)) + np.sum(leaves_sq(head))"]
            self.define("leaves_sq", ["def leaves_sq(t):",
                                      "    return np.array([np.sum(l ** 2) for l in tree_leaves(t)])"])
        else:
            self.define("unzip", ["def unzip(pairs):",
                                  "    return [w for w, _ in pairs], [b for _, b in pairs]"])
            body = [f"ws, bs = unzip(list({PAIRS[layout]}))", "h = x",
                    "for w, b in zip(ws, bs):", "    h = np.tanh(h @ w + b)",
                    "return np.sum(h ** 2) + 0.1 * sum(np.sum(w) for w in ws)"]
        f = ["def f(params, x):"] + indent(body)
        return f, (params, Leaf((din,))), (), (0, (0, 1)), ((None, 0), (0, None))


def generate(seed, index, attempt=0):
    """Tree program number ``index`` of the stream ``seed``: always the same program
    (``attempt``: another one in its place, where the first does not run as plain Python)."""
    program = TreeGenerator(seed, index, attempt).program(seed, index)
    if attempt:
        program.kind += f" (attempt {attempt})"
    return program


# -- values ------------------------------------------------------------------------------
def materialize(spec, value, namespace):
    """A value of ``spec``: ``value(shape)`` at each leaf, NT through the program's class."""
    if isinstance(spec, Leaf):
        return value(spec.shape)
    if isinstance(spec, NT):
        return namespace[spec.name](*(materialize(s, value, namespace) for _, s in spec.fields))
    if isinstance(spec, dict):
        return {k: materialize(s, value, namespace) for k, s in spec.items()}
    items = [materialize(s, value, namespace) for s in spec]
    return items if isinstance(spec, list) else tuple(items)


def make_case(program, namespace, f, seed, index):
    """The values tree program ``index`` of stream ``seed`` is checked on (always the
    same): points, tangents like the arguments, argnums and in_axes from the program's
    choices, lanes and their stack on axis 0, a cotangent like f's result."""
    rng = np.random.default_rng([seed, index, 0x7ee5])

    def value(shape):
        return np.float64(rng.uniform(-1.2, 1.2)) if shape == () else rng.uniform(-1.2, 1.2, shape)

    def tree(spec):
        return materialize(spec, value, namespace)
    points = [tuple(tree(s) for s in program.args) for _ in range(POINTS)]
    tangents = tuple(tree(s) for s in program.args)
    argnums = program.argnums[rng.integers(len(program.argnums))]
    in_axes = program.in_axes[rng.integers(len(program.in_axes))]
    lanes = [tuple(points[0][k] if ax is None else tree(s)
                   for k, (s, ax) in enumerate(zip(program.args, in_axes))) for _ in range(BATCH)]
    batched = tuple(points[0][k] if ax is None else
                    tmap(lambda *xs: np.stack(xs, ax), *[lane[k] for lane in lanes])
                    for k, ax in enumerate(in_axes))
    try:
        cotangent = cotangent_like(f(*points[0]), seed, index)
    except Exception:    # the plain function fails: fuzz skips the program
        cotangent = None
    return Case(points, tangents, argnums, in_axes, lanes, batched, cotangent)
