"""The Numba implementation of runtime.elementwise: a chain of elementwise operators over
arrays of one shape as one explicit loop nest.

Numba compiles an array expression into a loop that checks, for every operand and element,
whether that operand is broadcast along the axis; with three or more operands LLVM no longer
unswitches those checks out of the loop, so it does not vectorize (``a - 2.0 * b + d`` on 2,000
floats: 1.26 µs against 0.32 µs written as a loop).  Where the arrays share one shape the loop
needs no such checks.  The loop runs each element through the same operators on numbers, so it
is used only where that is the array expression's arithmetic: float arrays, and the chain's
type on their elements the same as its array's dtype (found by Numba's typing, operator by
operator).  Elsewhere, and for arrays of other shapes (broadcasting), the array expression.
"""
import ast
import re

import numpy as np
from numba import types
from numba.np.numpy_support import as_dtype
from numba.core.registry import cpu_target

from ... import runtime as rt
from ...runtime.arithmetic import CHAIN_OPERATORS, CHAIN_UFUNCS
from ._common import overload
from .fpstatus import ERROR_MODEL
from ...syntax import parse as parse_source

# arrays below this size run the array expression: the loop's shape checks cost more there
LOOP_SIZE = 64
_CALLS = {"weak": rt.weak, "power_int": rt.power_int}
_OPERATORS = set(CHAIN_OPERATORS.values())


def _type_of(node, args, ctx, consts=None):
    """The Numba type of expression ``node`` with operand ``_k`` of type ``args[k]`` (and
    names in ``consts`` those constants), or None where it has a form this does not type."""
    def resolve(fn, *operands):
        ts = [_type_of(o, args, ctx, consts) for o in operands]
        if any(t is None for t in ts):
            return None
        fnty = fn if fn in _OPERATORS else ctx.resolve_value_type(fn)
        sig = ctx.resolve_function_type(fnty, tuple(ts), {})
        return None if sig is None else sig.return_type

    if isinstance(node, ast.Name) and node.id.startswith("_") and node.id[1:].isdigit():
        return args[int(node.id[1:])]
    if isinstance(node, ast.Name) and consts and node.id in consts:
        return ctx.resolve_value_type(consts[node.id])
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)):
        return ctx.resolve_value_type(node.value)
    op = CHAIN_OPERATORS.get(type(getattr(node, "op", None)).__name__)
    if isinstance(node, ast.BinOp) and op:
        return resolve(op, node.left, node.right)
    if isinstance(node, ast.UnaryOp) and op:
        return resolve(op, node.operand)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and \
            type(node.ops[0]).__name__ in CHAIN_OPERATORS:
        return resolve(CHAIN_OPERATORS[type(node.ops[0]).__name__], node.left,
                       node.comparators[0])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in _CALLS and not node.keywords:
        return resolve(_CALLS[node.func.id], *node.args)
    roll = _roll(node)
    if roll is not None:   # the array's type (its dtype on an element)
        t = _type_of(node.args[0], args, ctx, consts)
        return t if isinstance(t, (types.Number, types.Boolean)) or isinstance(
            t, types.Array) and (t.ndim == 1 if roll[2] is None else
                                 -t.ndim <= roll[2] < t.ndim) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            isinstance(node.func.value, ast.Name) and node.func.value.id == "np" and \
            getattr(np, node.func.attr, None) in CHAIN_UFUNCS and not node.keywords:
        return resolve(getattr(np, node.func.attr), *node.args)
    return None


def _roll(node):
    """(operand's name, shift, axis) of ``np.roll(_k, shift, axis)`` in a chain's text
    (codegen/loops.is_roll), or None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
            node.func.attr == "roll" and isinstance(node.func.value, ast.Name) and
            node.func.value.id == "np"):
        return None
    given = dict(zip(("a", "shift", "axis"), node.args))
    given.update((k.arg, k.value) for k in node.keywords)
    a, shift, axis = (given.get(k) for k in ("a", "shift", "axis"))
    flat = axis is None or isinstance(axis, ast.Constant) and axis.value is None
    shift, axis = _integer(shift), None if flat else _integer(axis)
    if not isinstance(a, ast.Name) or shift is None or axis is None and not flat:
        return None
    return a.id, shift, axis   # (axis None: the flattened array's, a vector's own axis)


def _integer(node):
    """The int that ``node`` writes (``3``, ``-1``), or None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        k = _integer(node.operand)
        return None if k is None else -k
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _rolls(tree):
    return [r for r in map(_roll, ast.walk(tree)) if r is not None]


def _rolled(text):
    """The names chain ``text`` reads rolled."""
    return {r[0] for r in _rolls(parse_source(text, mode="eval"))}


def _loops(chain, args, consts=None, least=3):
    """Whether ``chain`` on operands of types ``args`` runs as a loop (the module's rule; the
    helpers that sum or add a chain as they compute it loop over one array or more)."""
    arrays = [t for t in args if isinstance(t, types.Array)]
    tree = parse_source(chain, mode="eval").body
    if _rolls(tree):
        least = 1   # NumPy's rolls would each be a copy
    if len(arrays) < max(least, 1) or arrays[0].ndim == 0 or not all(
            isinstance(t.dtype, types.Float) for t in arrays) or \
            len({t.ndim for t in arrays}) != 1:
        return False
    if not all(isinstance(t, (types.Array, types.Number, types.Boolean)) for t in args):
        return False
    ctx = cpu_target.typing_context
    ctx.refresh()       # (the registries of every loaded implementation)
    try:
        whole = _type_of(tree, args, ctx, consts)
        each = _type_of(tree, [t.dtype if isinstance(t, types.Array) else t for t in args],
                        ctx, consts)
    except Exception:     # a typing error: the array expression reports it as Numba does
        return False
    return isinstance(whole, types.Array) and whole.ndim == arrays[0].ndim and \
        whole.dtype == each


def _source(chain, args, into=False):
    """impl(chain, *args): the loop nest where the arrays share one shape, else ``chain``;
    ``into``: the loop writes into ``_0`` (of the result's dtype) where it has that shape too,
    through the one name, so that LLVM sees the loop read each element before it writes it
    (two names of one array read as overlapping arrays: a loop that does not vectorize)."""
    arrays = [k for k, t in enumerate(args) if isinstance(t, types.Array)]
    first, ndim = f"_{arrays[0]}", args[arrays[0]].ndim
    tree = parse_source(chain, mode="eval")
    rolls = _Shifts(tree, ndim, first)
    index = [f"i{d}" for d in range(ndim)]
    segmented = rolls.segmented(ndim - 1)
    elements = _Elements(arrays, index, rolls, segmented, into)
    element = ast.unparse(elements.visit(tree))
    same = " and ".join(f"_{k}.shape == {first}.shape" for k in arrays[1:]) or "True"
    lines = ["def impl(chain, *args):"]
    lines += [f"    _{k} = args[{k}]" for k in range(len(args))]
    lines += [f"    if {same} and {first}.size >= {LOOP_SIZE}:"]
    lines += ["        out = _0"] if into else [f"        out = np.empty({first}.shape, DTYPE)"]
    if into:
        element = re.sub(r"\b_0\[", "out[", element)
    lines += ["        " + line for line in rolls.before()]
    indent = "        "
    for d in range(ndim - 1 if segmented else ndim):
        lines.append(f"{indent}for i{d} in range({first}.shape[{d}]):")
        indent += "    "
        lines += [indent + line for line in rolls.rows(d)]
    target = f"out[{', '.join(index)}]"
    if segmented:   # one row's piece: 1-D views of it read with one index from 0
        lines += [indent + line for line in rolls.pieces()]
        indent += "    "
        lines += [indent + line for line in elements.views()]
        lines.append(f"{indent}for t in range(hi - lo):")
        indent += "    "
        target = "piece[t]"
    lines += [f"{indent}{target} = {element}", "        return out", f"    return {chain}"]
    return "\n".join(lines) + "\n"


class _Shifts:
    """The indices at which a chain's loop reads its rolled operands: ``np.roll(_k, s, a)``
    at index ``i`` along axis ``a`` reads ``_k`` at ``(i - s) mod n``.  Along an outer axis,
    that index once per row (``k0``); along the last axis, each row split into pieces where
    some roll wraps (at ``s mod n``), so that in a piece every array is read at ``i + o`` for
    an ``o`` fixed there (``o0``): a 1-D view from ``lo + o`` read from 0, a loop LLVM
    vectorizes (an index wrapped per element, or one it cannot prove nonnegative, would
    not)."""

    def __init__(self, tree, ndim, first):
        self.ndim, self.first, self.names = ndim, first, {}
        for _, shift, axis in _rolls(tree):   # (axis None: a vector's, typing made sure)
            self.names.setdefault((shift, (axis or 0) % ndim), len(self.names))

    def index(self, shift, axis):
        """The index along ``axis`` at which the loop reads an array rolled by ``shift``."""
        axis = axis or 0
        j = self.names[shift, axis % self.ndim]
        return f"i{self.ndim - 1} + o{j}" if axis % self.ndim == self.ndim - 1 else f"k{j}"

    def _along(self, d):
        return [(shift, j) for (shift, axis), j in self.names.items() if axis == d]

    def segmented(self, d):
        return d == self.ndim - 1 and bool(self._along(d))

    def before(self):
        lines = [f"r{j} = {shift} % {self.first}.shape[{axis}]"
                 for (shift, axis), j in self.names.items()]
        last = self._along(self.ndim - 1)
        if last:
            wraps = ", ".join(f"r{j}" for _, j in last)
            lines.append(f"bounds = np.sort(np.array([0, {self.first}.shape[{self.ndim - 1}], "
                         f"{wraps}]))")
        return lines

    def pieces(self):
        """The loop over a row's pieces and each roll's offset in it."""
        n = f"{self.first}.shape[{self.ndim - 1}]"
        return ["for q in range(len(bounds) - 1):", "    lo, hi = bounds[q], bounds[q + 1]",
                *[f"    o{j} = {n} - r{j} if lo < r{j} else -r{j}"
                  for _, j in self._along(self.ndim - 1)]]

    def rows(self, d):
        n = f"{self.first}.shape[{d}]"
        return [f"k{j} = i{d} + {n} - r{j} if i{d} < r{j} else i{d} - r{j}"
                for _, j in self._along(d)]


class _Elements(ast.NodeTransformer):
    """Array operands indexed by the loop's indices (``i0``, ``i1``, ...), rolled ones at
    their shifted indices (``rolls``: _Shifts); with ``pieces``, each read along the last
    axis through a view of the piece (``w0[t]``)."""

    def __init__(self, arrays, index, rolls=None, pieces=False, into=False):
        self.arrays, self.index, self.rolls = {f"_{k}" for k in arrays}, index, rolls
        self.pieces = {} if pieces else None     # (name, outer index, offset) -> view
        if pieces and into:   # _0's unshifted piece is the result's: read through its name
            self.pieces["_0", tuple(index[:-1]), ""] = "piece"

    def visit_Name(self, node):
        if node.id in self.arrays:
            return self.indexed(node.id, self.index)
        return node

    def visit_Call(self, node):
        roll = _roll(node)
        if roll is None:
            return self.generic_visit(node)
        name, shift, axis = roll
        index = list(self.index)
        index[(axis or 0) % len(index)] = self.rolls.index(shift, axis)
        return self.indexed(name, index)

    def indexed(self, name, index):
        if self.pieces is None:
            return parse_source(f"{name}[{', '.join(index)}]", mode="eval").body
        offset = index[-1].partition(" + ")[2]
        view = self.pieces.setdefault((name, tuple(index[:-1]), offset),
                                      f"w{len(self.pieces)}")
        return parse_source(f"{view}[t]", mode="eval").body

    def views(self):
        """The lines making the views, ``piece`` the result's (``into``: also ``_0``'s
        unshifted one, so that the loop reads and writes it through one name)."""
        outer = "".join(f"{i}, " for i in self.index[:-1])
        lines = [f"piece = out[{outer}lo:hi]"]
        for (name, rest, offset), view in self.pieces.items():
            if view == "piece":
                continue
            part = f"lo + {offset}:hi + {offset}" if offset else "lo:hi"
            lines.append(f"{view} = {name}[{''.join(f'{i}, ' for i in rest)}{part}]")
        return lines


class _WeakConstants(ast.NodeTransformer):
    """``weak(2, <expression>)``: the number in the expression's type (fuse.py writes a
    temporary read for its dtype as its expression), a constant named ``_wK`` in ``space``,
    so that the expression is never computed."""

    def __init__(self, args, ctx, space):
        self.args, self.ctx, self.space = args, ctx, space

    def visit_Call(self, node):
        self.generic_visit(node)
        if not (isinstance(node.func, ast.Name) and node.func.id == "weak" and
                len(node.args) == 2 and not isinstance(node.args[1], ast.Name) and
                isinstance(node.args[0], ast.Constant)):
            return node      # (a number in a variable: the expression is computed)
        like = _type_of(node.args[1], self.args, self.ctx, self.space)
        if like is None:
            return node
        number = node.args[0].value
        name = f"_w{len(self.space)}"
        kind = like.dtype if isinstance(like, types.Array) else like
        self.space[name] = as_dtype(kind).type(number) if isinstance(
            kind, (types.Float, types.Complex)) or isinstance(kind, types.Integer) and \
            type(number) is int else number
        return ast.Name(id=name, ctx=ast.Load())


def _chain_of(chain, args):
    """(a chain's text with its ``weak`` numbers typed, its operands' types, the numbers)."""
    if len(args) == 1 and isinstance(args[0], types.StarArgTuple):
        args = tuple(args[0])
    text, constants = _typed_weaks(chain.literal_value, args)
    return text, args, constants


def _typed_weaks(text, args):
    """(``text`` with each ``weak(number, <expression>)`` a constant, the constants)."""
    constants = {}
    ctx = cpu_target.typing_context
    ctx.refresh()
    if "weak(" in text:
        text = ast.unparse(_WeakConstants(args, ctx, constants).visit(
            parse_source(text, mode="eval")))
    return text, constants


def _space(constants):
    """The names a chain's implementation reads: NumPy, the helpers a chain calls, ``rt``
    and the chain's typed numbers."""
    return {"np": np, "rt": rt, **_CALLS, **constants}


@overload(rt.elementwise, prefer_literal=True, jit_options={"error_model": ERROR_MODEL})
def _elementwise(chain, *args):
    if not isinstance(chain, types.StringLiteral):
        return None
    text, args, constants = _chain_of(chain, args)
    if _loops(text, args, constants):
        space = _space(constants)
        whole = _type_of(parse_source(text, mode="eval").body, args, cpu_target.typing_context,
                         constants)
        space["DTYPE"] = np.dtype(str(whole.dtype))
        exec(_source(text, args), space)
        return space["impl"]
    space = _space(constants)
    exec("def impl(chain, *args):\n" + "".join(f"    _{k} = args[{k}]\n" for k in range(len(args)))
         + f"    return {text}\n", space)
    return space["impl"]


@overload(rt.elementwise_into, prefer_literal=True, jit_options={"error_model": ERROR_MODEL})
def _elementwise_into(chain, *args):
    """elementwise's loop written into ``_0`` where that is a C array of the loop's dtype and
    rank (and of its shape when run); anything else: elementwise's new array."""
    if not isinstance(chain, types.StringLiteral):
        return None
    text, types_, constants = _chain_of(chain, args)
    if types_ and isinstance(types_[0], types.Array) and types_[0].layout == "C" and \
            _loops(text, types_, constants, least=1) and \
            "_0" not in _rolled(text):   # (_0 read shifted: not written over)
        whole = _type_of(parse_source(text, mode="eval").body, types_,
                         cpu_target.typing_context, constants)
        if types_[0].ndim == whole.ndim and types_[0].dtype == whole.dtype:
            space = _space(constants)
            exec(_source(text, types_, into=True), space)
            return space["impl"]
    # elementwise's implementation for these types (a call of it from here would lose the
    # chain's literal: Numba would not type it, and the call would run in object mode)
    return _elementwise(chain, *args)


@overload(rt.chain_like, prefer_literal=True)
def _chain_like(chain, *args):
    if not isinstance(chain, types.StringLiteral):
        return None
    if not any(isinstance(t, types.Array) for t in (
            tuple(args[0]) if len(args) == 1 and isinstance(args[0], types.StarArgTuple)
            else args)):
        return _elementwise(chain, *args)   # numbers: the value itself (its type is all)
    if len(args) == 1 and isinstance(args[0], types.StarArgTuple):
        args = tuple(args[0])
    arrays = [k for k, t in enumerate(args) if isinstance(t, types.Array)]
    ctx = cpu_target.typing_context
    ctx.refresh()
    try:
        whole = _type_of(parse_source(chain.literal_value, mode="eval").body, args, ctx)
    except Exception:
        whole = None
    if not isinstance(whole, types.Array):
        return None
    first = f"args[{arrays[0]}].shape"
    same = " and ".join(f"args[{k}].shape == {first}" for k in arrays[1:]) if all(
        args[k].ndim == whole.ndim for k in arrays) else ""
    shape = f"np.broadcast_shapes({', '.join(f'args[{k}].shape' for k in arrays)})"
    # a view of a constant zero, which Numba freezes into the code: no allocation per call
    # (a tape keeps each: an array made each trip and kept is a heap block per trip); the
    # operands' common shape where they have one (np.broadcast_shapes is slow compiled)
    body = f"    return np.broadcast_to(ZERO, {first})\n" if len(arrays) == 1 else (
        f"    if {same or 'False'}:\n        return np.broadcast_to(ZERO, {first})\n"
        f"    return np.broadcast_to(ZERO, {shape})\n")
    space = {"np": np, "ZERO": np.zeros((), np.dtype(str(whole.dtype)))}
    exec("def impl(chain, *args):\n" + body, space)
    return space["impl"]


def _sum_source(chain, args):
    """impl(chain, x, *args): the chain's elements summed as they are computed, with eight
    accumulators along the last axis (one would make every addition wait for the last), where
    the arrays share one shape; else ``unbroadcast(chain, x)``."""
    arrays = [k for k, t in enumerate(args) if isinstance(t, types.Array)]
    first, ndim = f"_{arrays[0]}", args[arrays[0]].ndim
    outer = [f"i{d}" for d in range(ndim - 1)]
    same = " and ".join([f"_{k}.shape == {first}.shape" for k in arrays[1:]] or ["True"])
    lines = ["def impl(chain, x, *args):"]
    lines += [f"    _{k} = args[{k}]" for k in range(len(args))]
    lines += [f"    if {same}:", "        total = DTYPE(0)", f"        m = {first}.shape[-1]",
              "        top = m - m % 8"]
    indent = "        "
    for d, i in enumerate(outer):
        lines.append(f"{indent}for {i} in range({first}.shape[{d}]):")
        indent += "    "

    def element(j):
        return ast.unparse(_Elements(arrays, outer + [j]).visit(parse_source(chain, mode="eval")))
    lines.append(indent + " = ".join(f"a{k}" for k in range(8)) + " = DTYPE(0)")
    lines.append(f"{indent}for j in range(0, top, 8):")
    lines += [f"{indent}    a{k} += {element(f'j + {k}')}" for k in range(8)]
    lines.append(f"{indent}for j in range(top, m):")
    lines.append(f"{indent}    a0 += {element('j')}")
    lines.append(f"{indent}total += ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))")
    lines += ["        return rt.unbroadcast(total, x)", f"    return rt.unbroadcast({chain}, x)"]
    return "\n".join(lines) + "\n"


@overload(rt.unbroadcast_chain, prefer_literal=True, jit_options={"error_model": ERROR_MODEL})
def _unbroadcast_chain(chain, x, *args):
    if not isinstance(chain, types.StringLiteral):
        return None
    text, args, constants = _chain_of(chain, args)
    space = _space(constants)
    if isinstance(x, (types.Number, types.Boolean)) and _loops(text, args, constants, least=1) \
            and not _rolled(text):   # (a roll: NumPy's, then summed)
        whole = _type_of(parse_source(text, mode="eval").body, args, cpu_target.typing_context,
                         constants)
        space["DTYPE"] = as_dtype(whole.dtype).type
        exec(_sum_source(text, args), space)
        return space["impl"]
    exec("def impl(chain, x, *args):\n" + "".join(f"    _{k} = args[{k}]\n"
                                                 for k in range(len(args)))
         + f"    return rt.unbroadcast({text}, x)\n", space)
    return space["impl"]


@overload(rt.add_at_index_chain, prefer_literal=True, jit_options={"error_model": ERROR_MODEL,
                                                                  "boundscheck": True})
def _add_at_index_chain(acc, chain, x, idx, *args):
    if not isinstance(chain, types.StringLiteral):
        return None
    text, args, constants = _chain_of(chain, args)
    space = _space(constants)
    fallback = f"    return rt.add_at_index_inplace(acc, {text}, x, idx)\n"
    arrays = [k for k, t in enumerate(args) if isinstance(t, types.Array)]
    if arrays and _into_view(acc, x, idx, args[arrays[0]].ndim) and \
            _loops(text, args, constants, least=1) and not _rolled(text):
        whole = _type_of(parse_source(text, mode="eval").body, args, cpu_target.typing_context,
                         constants)
        if as_dtype(acc.dtype) == np.result_type(as_dtype(acc.dtype), as_dtype(whole.dtype)):
            exec(_into_source(text, args) + fallback, space)
            return space["impl"]
    exec("def impl(acc, chain, x, idx, *args):\n" + "".join(
        f"    _{k} = args[{k}]\n" for k in range(len(args))) + fallback, space)
    return space["impl"]


def _into_view(acc, x, idx, ndim):
    """Whether ``acc[idx]`` is a view of ``ndim`` axes of an array ``acc`` of x's rank (slices,
    and integers for the leading axes it drops)."""
    parts = list(idx) if isinstance(idx, types.BaseTuple) else [idx]
    return isinstance(acc, types.Array) and isinstance(x, types.Array) and \
        acc.ndim == x.ndim and all(
            isinstance(p, (types.Integer, types.SliceType)) for p in parts) and \
        len(parts) <= acc.ndim and acc.ndim - sum(
            isinstance(p, types.Integer) for p in parts) == ndim


def _into_source(chain, args):
    """impl(acc, chain, x, idx, *args): the chain's elements added into the view ``acc[idx]``
    where it has the arrays' shape (the fallback, the array expression, follows)."""
    arrays = [k for k, t in enumerate(args) if isinstance(t, types.Array)]
    ndim = args[arrays[0]].ndim
    index = [f"i{d}" for d in range(ndim)]
    element = ast.unparse(_Elements(arrays, index).visit(parse_source(chain, mode="eval")))
    index = ", ".join(index)
    same = " and ".join(f"_{k}.shape == part.shape" for k in arrays)
    lines = ["def impl(acc, chain, x, idx, *args):"]
    lines += [f"    _{k} = args[{k}]" for k in range(len(args))]
    lines += ["    if acc.shape == x.shape:", "        part = acc[idx]", f"        if {same}:"]
    indent = "            "
    for d in range(ndim):
        lines.append(f"{indent}for i{d} in range(part.shape[{d}]):")
        indent += "    "
    lines += [f"{indent}part[{index}] += {element}", "            return acc"]
    return "\n".join(lines) + "\n"


IMPLEMENTED = {rt.elementwise, rt.chain_like, rt.unbroadcast_chain, rt.add_at_index_chain}
