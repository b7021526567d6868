"""A seeded generator of small, valid NumPy programs for differential fuzzing.

A program is a module: ``import numpy as np``, up to two helper functions and a main function
``f`` of one to three float arguments (scalars and small arrays) that returns a scalar (mostly)
or a small array.  Expressions come from a typed grammar (EXPRESSIONS: each production makes a
value of a known shape from holes of known shapes), statements from a weighted table
(STATEMENTS, one small method each).  Values stay bounded (squashing functions, safe
denominators, logs and roots of positive values only), so that finite differences mean
something; a condition may still fall near the evaluation point, which the oracles detect
there (oracles.margin) rather than the generator avoiding it.

Arrays created in the program (``y = np.zeros(3)``) may be mutated; every read of one is
``y.copy()``, so that no other name aliases an array that later changes (aliasing is a
question of its own, not the one this generator asks).

The same (seed, index) always gives the same program: one ``random.Random`` per program.
"""
import random
from dataclasses import dataclass, field, replace

S, V2, V3, M = (), (2,), (3,), (2, 3)
ARG_SHAPES = ((S, 5), (V3, 3), (V2, 1), (M, 2))
RET_SHAPES = ((S, 8), (V3, 1), (V2, 1))
SAME = "same"      # a hole of the target's shape
ARRAY = "array"    # a hole of some array shape, chosen when filled
POSITIVE = ("0.5", "0.3", "1.5", "2.0", "0.25", "0.7")
NEGATIVE = ("(-0.5)", "(-1.5)", "(-0.3)", "(-2.0)", "(-0.24)")
THRESHOLDS = ("0.0", "0.5", "-0.5", "1.0", "0.2")

# (result shape or SAME, weight, template, hole shapes).  {0}, {1}, ... are the holes; {c} is a
# positive constant, {n} a parenthesized negative one, {i} an int loop index in scope and {L}
# a list of scalars in scope (the production is skipped when there is none).
EXPRESSIONS = [
    (SAME, 6, "({0} + {1})", (SAME, SAME)),
    (SAME, 4, "({0} - {1})", (SAME, SAME)),
    (SAME, 5, "({0} * {1})", (SAME, SAME)),
    (SAME, 3, "({0} * {1})", (SAME, S)),
    (SAME, 2, "({0} / (1.5 + {1} ** 2))", (SAME, SAME)),
    (SAME, 2, "(-{0})", (SAME,)),
    (SAME, 2, "({0} ** 2)", (SAME,)),
    (SAME, 1, "({0} ** 3)", (SAME,)),
    (SAME, 1, "np.power({0}, 2)", (SAME,)),
    (SAME, 3, "np.sin({0})", (SAME,)),
    (SAME, 2, "np.cos({0})", (SAME,)),
    (SAME, 2, "np.tanh({0})", (SAME,)),
    (SAME, 1, "np.arctan({0})", (SAME,)),
    (SAME, 2, "np.exp(np.sin({0}))", (SAME,)),
    (SAME, 1, "np.log(1.0 + {0} ** 2)", (SAME,)),
    (SAME, 1, "np.sqrt(2.0 + np.cos({0}))", (SAME,)),
    (SAME, 2, "np.maximum({0}, {1})", (SAME, SAME)),
    (SAME, 1, "np.minimum({0}, {1})", (SAME, SAME)),
    (SAME, 2, "np.where({0} > {c}, {1}, {2})", (SAME, SAME, SAME)),
    (SAME, 2, "({0} * {n} ** 2)", (SAME,)),
    (SAME, 3, "({0} * (-1) ** {i})", (SAME,)),
    (S, 2, "({c} * {i})", ()),
    (S, 4, "np.sum({0})", (ARRAY,)),
    (S, 2, "np.mean({0})", (ARRAY,)),
    (S, 2, "np.dot({0}, {1})", (V3, V3)),
    (S, 1, "({0} @ {1})", (V2, V2)),
    (S, 2, "{0}[1]", (V3,)),
    (S, 2, "{0}[-1]", (V2,)),
    (S, 1, "{0}[1, 2]", (M,)),
    (S, 2, "{0}[{i} % 3]", (V3,)),
    (S, 1, "np.trace({0} @ {1}.T)", (M, M)),
    (S, 2, "sum({L}, 0.0)", ()),   # a float even when the list is empty
    (V3, 2, "np.sum({0}, axis=0)", (M,)),
    (V3, 1, "np.mean({0}, axis=-2)", (M,)),
    (V3, 2, "{0}[0]", (M,)),
    (V3, 1, "{0}[-1, :]", (M,)),
    (V3, 1, "{0}[::-1]", (V3,)),
    (V3, 1, "np.dot({0}, {1})", (V2, M)),
    (V3, 1, "({0}.T @ {1})", (M, V2)),
    (V3, 1, "np.concatenate([{0}, {1}[:1]])", (V2, V3)),
    (V3, 1, "np.stack([{0}, {1}, {2}])", (S, S, S)),
    (V3, 1, "np.array([{0}, {1}, {c}])", (S, S)),
    (V3, 1, "np.cumsum({0})", (V3,)),
    (V3, 1, "np.roll({0}, 1)", (V3,)),
    (V2, 2, "({0} @ {1})", (M, V3)),
    (V2, 1, "np.matmul({0}, {1})", (M, V3)),
    (V2, 1, "np.sum({0}, axis=1)", (M,)),
    (V2, 1, "np.mean({0}, axis=-1)", (M,)),
    (V2, 1, "{0}[:, 1]", (M,)),
    (V2, 1, "{0}[1:]", (V3,)),
    (V2, 1, "{0}[:2]", (V3,)),
    (V2, 1, "np.stack([{0}, {1}])", (S, S)),
    (M, 2, "np.stack([{0}, {1}])", (V3, V3)),
    (M, 1, "np.outer({0}, {1})", (V2, V3)),
    (M, 1, "np.transpose(np.reshape({0}, (3, 2)))", (M,)),
    (M, 1, "np.reshape(np.concatenate([{0}, {1}]), (2, 3))", (V3, V3)),
    (M, 2, "({0} * {1})", (M, V3)),
    (M, 1, "({0} * {1}[:, None])", (M, V2)),
    (M, 1, "np.concatenate([{0}[:, :1], {1}[:, 1:]], axis=1)", (M, M)),
    (M, 1, "(np.outer({0}, {1}) @ {2})", (V2, V2, M)),
]

# A terminal of a shape no variable has, made from a variable of another shape.
CONVERSIONS = {
    S: ((V3, "{0}[1]"), (V2, "np.sum({0})"), (M, "np.mean({0})")),
    V3: ((M, "{0}[0]"), (M, "np.sum({0}, axis=0)"), (S, "({0} * np.ones(3))"),
         (V2, "np.concatenate([{0}, {0}[:1]])")),
    V2: ((V3, "{0}[1:]"), (M, "{0}[:, 0]"), (S, "np.stack([{0}, {0} ** 2])")),
    M: ((V3, "np.stack([{0}, {0} ** 2])"), (V2, "np.outer({0}, np.ones(3))"),
        (S, "({0} * np.ones((2, 3)))")),
}

DISTINCT = {"np.maximum({0}, {1})", "np.minimum({0}, {1})"}

# Item assignments to a local array, by its shape: (index template, value shape).
ITEMS = {
    V3: (("[1]", S), ("[-1]", S), ("[{i} % 3]", S)),
    V2: (("[0]", S), ("[-1]", S), ("[{i} % 2]", S)),
    M: (("[1, 2]", S), ("[0]", V3), ("[:, 1]", V2), ("[-1, {i} % 3]", S)),
}

STATEMENTS = (("assign", 8), ("rebind", 6), ("augassign", 2), ("if", 4), ("for_range", 3),
              ("for_array", 2), ("while", 2), ("fill", 2), ("item", 3), ("list", 1),
              ("append", 3), ("dict", 1), ("guard_return", 2), ("guard_jump", 2))
COMPOUND = {"if", "for_range", "for_array", "while", "fill", "guard_return", "guard_jump"}
MAX_NESTING = 2


@dataclass
class Program:
    seed: int
    index: int
    source: str
    arg_shapes: tuple
    ret_shape: tuple
    name: str = "f"


@dataclass
class Scope:
    """What a block may read and write."""
    vars: dict            # name (or 'st["a"]') -> shape
    ints: dict            # int loop index or counter -> its bound
    ret: tuple            # the shape this function returns
    lists: list = field(default_factory=list)
    loops: int = 0        # enclosing loops
    depth: int = 0        # enclosing blocks
    calls: tuple = ()     # helpers this function may call: (name, param shapes, ret shape)

    def child(self, **changes):
        return replace(self, vars=dict(self.vars), ints=dict(self.ints), lists=list(self.lists),
                       depth=self.depth + 1, **changes)


def shape_text(shape):
    return str(shape[0]) if len(shape) == 1 else str(shape)


def indent(lines):
    return ["    " + line for line in lines]


class Generator:
    def __init__(self, seed, index):
        self.rng = random.Random(f"strop-fuzz:{seed}:{index}")
        self.counts = {}
        self.owned = set()    # local arrays that may be item-assigned
        self.made = set()     # names bound by an assignment (not parameters, not loop items)

    # -- helpers ------------------------------------------------------------------------
    def fresh(self, prefix):
        n = self.counts.get(prefix, 0)
        self.counts[prefix] = n + 1
        return f"{prefix}{n}"

    def weighted(self, options):
        """One of ``options``, a list of (weight, value)."""
        total = sum(w for w, _ in options)
        x = self.rng.uniform(0, total)
        for w, v in options:
            x -= w
            if x <= 0:
                return v
        return options[-1][1]

    def shape(self, table=ARG_SHAPES):
        return self.weighted([(w, s) for s, w in table])

    # -- expressions --------------------------------------------------------------------
    def expr(self, shape, sc, depth=2, leaf=True):
        """An expression of ``shape``; ``leaf=False``: not a bare variable or constant."""
        options = [(4, None)] if leaf or depth <= 0 else []
        if depth > 0:
            for result, w, template, holes in EXPRESSIONS:
                if (result in (shape, SAME) and ("{i}" not in template or sc.ints)
                        and ("{L}" not in template or sc.lists)):
                    options.append((w, (template, holes)))
            for name, params, ret in sc.calls:
                if ret == shape:
                    args = ", ".join("{%d}" % k for k in range(len(params)))
                    options.append((3, (f"{name}({args})", params)))
        choice = self.weighted(options)
        if choice is None:
            return self.terminal(shape, sc)
        template, holes = choice
        filled = [self.expr(self.hole(h, shape), sc, depth - 1) for h in holes]
        if template in DISTINCT and filled[0] == filled[1]:   # a tie everywhere: a kink
            filled[1] = f"({filled[1]} + 0.5)"
        return template.format(*filled, c=self.rng.choice(POSITIVE),
                               n=self.rng.choice(NEGATIVE),
                               i=self.rng.choice(sorted(sc.ints)) if sc.ints else "",
                               L=self.rng.choice(sc.lists) if sc.lists else "")

    def hole(self, h, target):
        if h == SAME:
            return target
        if h == ARRAY:
            return self.rng.choice((V2, V3, M))
        return h

    def terminal(self, shape, sc):
        names = sorted(n for n, s in sc.vars.items() if s == shape)
        if names and (shape != S or self.rng.random() < 0.8):
            return self.read(self.rng.choice(names))
        sources = [(t, n) for src, t in CONVERSIONS[shape]
                   for n, s in sorted(sc.vars.items()) if s == src]
        if sources and self.rng.random() < 0.85:
            template, name = self.rng.choice(sources)
            return template.format(self.read(name))
        if shape == S:
            return self.rng.choice(POSITIVE + NEGATIVE)
        return f"np.full({shape_text(shape)}, {self.rng.choice(POSITIVE)})"

    def read(self, name):
        return f"{name}.copy()" if name in self.owned else name

    def cond(self, sc):
        if sc.ints and self.rng.random() < 0.3:
            i = self.rng.choice(sorted(sc.ints))
            return f"{i} {self.rng.choice(('>', '<', '=='))} {self.rng.randrange(3)}"
        op = self.rng.choice((">", "<", ">="))
        return f"{self.expr(S, sc, self.rng.randrange(1, 3))} {op} {self.rng.choice(THRESHOLDS)}"

    # -- statements ---------------------------------------------------------------------
    def block(self, sc, count):
        """``count`` statements, perhaps ended by a return, break or continue."""
        lines = []
        for _ in range(count):
            options = [(w, n) for n, w in STATEMENTS
                       if sc.depth < MAX_NESTING or n not in COMPOUND]
            for _ in range(10):
                made = getattr(self, "s_" + self.weighted(options))(sc)
                if made:
                    lines += made
                    break
        if sc.depth > 0 and self.rng.random() < 0.15:
            lines.append(f"return {self.expr(sc.ret, sc)}")
        elif sc.loops and self.rng.random() < 0.15:
            lines.append(self.rng.choice(("break", "continue")))
        return lines or ["pass"]

    def body(self, sc):
        return indent(self.block(sc, self.rng.randint(1, 2)))

    def s_assign(self, sc):
        name, shape = self.fresh("t"), self.shape()
        line = f"{name} = {self.expr(shape, sc, leaf=False)}"
        sc.vars[name] = shape
        self.made.add(name)
        return [line]

    def s_rebind(self, sc):
        if not sc.vars:
            return None
        name = self.rng.choice(sorted(sc.vars))
        self.owned.discard(name)
        return [f"{name} = {self.expr(sc.vars[name], sc, leaf=False)}"]

    def s_augassign(self, sc):
        # only scalars and local arrays: `a += v` on an array argument would mutate it
        names = sorted(n for n, s in sc.vars.items()
                       if (s == S and n in self.made) or n in self.owned)
        if not names:
            return None
        name = self.rng.choice(names)
        return [f"{name} {self.rng.choice('+-*')}= {self.expr(sc.vars[name], sc, 1)}"]

    def s_if(self, sc):
        lines = [f"if {self.cond(sc)}:"] + self.body(sc.child())
        if self.rng.random() < 0.25:
            lines += [f"elif {self.cond(sc)}:"] + self.body(sc.child())
        if self.rng.random() < 0.5:
            lines += ["else:"] + self.body(sc.child())
        return lines

    def s_for_range(self, sc):
        if sc.loops >= 2:
            return None
        i, n = self.fresh("i"), self.rng.randint(2, 4)
        inner = sc.child(loops=sc.loops + 1)
        inner.ints[i] = n
        return [f"for {i} in range({n}):"] + self.body(inner)

    def s_for_array(self, sc):
        arrays = sorted(n for n, s in sc.vars.items() if s != S)
        if sc.loops >= 2 or not arrays:
            return None
        name = self.rng.choice(arrays)
        shape = sc.vars[name]
        inner = sc.child(loops=sc.loops + 1)
        r = self.fresh("r")
        inner.vars[r] = shape[1:]
        source = self.read(name)
        if self.rng.random() < 0.3:
            i = self.fresh("i")
            inner.ints[i] = shape[0]
            return [f"for {i}, {r} in enumerate({source}):"] + self.body(inner)
        return [f"for {r} in {source}:"] + self.body(inner)

    def s_while(self, sc):
        if sc.loops >= 2:
            return None
        k, n = self.fresh("k"), self.rng.randint(2, 4)
        inner = sc.child(loops=sc.loops + 1)
        test = f"{k} < {n}"
        if self.rng.random() < 0.4:
            test += f" and {self.cond(sc)}"
        inner.ints[k] = n + 1
        return [f"{k} = 0", f"while {test}:", f"    {k} = {k} + 1"] + self.body(inner)

    def s_fill(self, sc):
        y, shape = self.fresh("y"), self.rng.choice((V2, V3, M))
        i = self.fresh("i")
        inner = sc.child(loops=sc.loops + 1)
        inner.ints[i] = shape[0]
        value = self.expr(shape[1:], inner)
        sc.vars[y] = shape
        self.owned.add(y)
        return [f"{y} = np.zeros({shape_text(shape)})", f"for {i} in range({shape[0]}):",
                f"    {y}[{i}] = {value}"]

    def s_item(self, sc):
        names = sorted(n for n in sc.vars if n in self.owned)
        if not names:
            return None
        y = self.rng.choice(names)
        forms = [f for f in ITEMS[sc.vars[y]] if "{i}" not in f[0] or sc.ints]
        index, shape = self.rng.choice(forms)
        i = self.rng.choice(sorted(sc.ints)) if sc.ints else ""
        return [f"{y}{index.format(i=i)} = {self.expr(shape, sc)}"]

    def s_list(self, sc):
        acc = self.fresh("acc")
        sc.lists.append(acc)
        return [f"{acc} = []"]

    def s_append(self, sc):
        if not sc.lists:
            return None
        return [f"{self.rng.choice(sc.lists)}.append({self.expr(S, sc)})"]

    def s_dict(self, sc):
        st = self.fresh("st")
        entries = {key: self.shape() for key in ("a", "w")}
        text = ", ".join(f'"{key}": {self.expr(s, sc, 1)}' for key, s in entries.items())
        for key, s in entries.items():
            sc.vars[f'{st}["{key}"]'] = s
            self.made.add(f'{st}["{key}"]')
        return [f"{st} = {{{text}}}"]

    def s_guard_return(self, sc):
        return [f"if {self.cond(sc)}:", f"    return {self.expr(sc.ret, sc)}"]

    def s_guard_jump(self, sc):
        if not sc.loops:
            return None
        return [f"if {self.cond(sc)}:", f"    {self.rng.choice(('break', 'continue'))}"]

    # -- functions and programs ---------------------------------------------------------
    def function(self, name, params, shapes, ret, calls, count):
        sc = Scope(vars=dict(zip(params, shapes)), ints={}, ret=ret, calls=calls)
        lines = self.block(sc, count)
        # the locals left join the result, so that most statements matter
        pool = [self.read(n) if s == S else f"np.sum({self.read(n)})"
                for n, s in sorted(sc.vars.items()) if n not in params]
        pool += [f"sum({acc}, 0.0)" for acc in sc.lists]
        extra = self.rng.sample(pool, min(len(pool), self.rng.randint(1, 3)))
        value = " + ".join([self.expr(ret, sc, leaf=False)] + extra)
        head = f"def {name}({', '.join(params)}):"
        return [head] + indent(lines + [f"return {value}"])

    def program(self, seed, index):
        calls = []
        lines = ["import numpy as np", ""]
        for _ in range(self.weighted([(3, 0), (3, 1), (1, 2)])):
            name = self.fresh("h")
            shapes = tuple(self.shape() for _ in range(self.rng.randint(1, 2)))
            params = [f"p{k}" for k in range(len(shapes))]
            ret = self.shape(RET_SHAPES + ((M, 1),))
            lines += self.function(name, params, shapes, ret, tuple(calls),
                                   self.rng.randint(1, 2)) + ["", ""]
            calls.append((name, shapes, ret))
        shapes = tuple(self.shape() for _ in range(self.weighted([(3, 1), (4, 2), (2, 3)])))
        ret = self.shape(RET_SHAPES)
        lines += self.function("f", ["a", "b", "c"][:len(shapes)], shapes, ret, tuple(calls),
                               self.rng.randint(2, 5))
        return Program(seed, index, "\n".join(lines) + "\n", shapes, ret)


def generate(seed, index):
    """Program number ``index`` of the stream ``seed``: always the same program."""
    return Generator(seed, index).program(seed, index)
