"""Deterministic, readable Python source from a normalized function.

Each block of statements from one user line is preceded by ``# line N: <the user's line>``;
the returned line map sends every generated line back to the user's file and line.
"""
import dataclasses
import importlib
import io
import tokenize
import types

import gast

from ..errors import Location
from .. import runtime
from ..transformer.ir import clone
from ..transformer.unparse import unparse

INDENT = "    "
WIDTH = 99    # a statement longer than this is broken after commas inside its brackets


class Emitter:
    def __init__(self, home_file):
        self.lines, self.linemap = [], {}
        self.home_file = home_file
        self.last = None

    def line(self, text, depth, loc=None):
        self.lines.append(INDENT * depth + text)
        if loc is not None:
            self.linemap[len(self.lines)] = (loc.filename, loc.lineno)

    def comment(self, loc, depth):
        if loc is None or (self.last is not None and loc[:2] == self.last[:2]):
            return
        self.last = loc
        where = f"line {loc.lineno}" if loc.filename == self.home_file else \
            f"{_short(loc.filename)}:{loc.lineno}"
        text = loc.line().strip()
        self.line(f"# {where}: {text}" if text else f"# {where}", depth)

    def body(self, stmts, depth):
        for s in stmts:
            self.stmt(s, depth)

    def stmt(self, s, depth):
        loc = getattr(s, "loc", None)
        self.comment(loc, depth)
        if getattr(s, "note", None):   # why a transform generated this statement
            self.line(f"# {s.note}", depth)
        if isinstance(s, gast.If):
            self.line(f"if {unparse(s.test)}:", depth, loc)
            self.block(s.body, depth + 1)
            if s.orelse:
                self.line("else:", depth, loc)
                self.block(s.orelse, depth + 1)
        elif isinstance(s, gast.While):
            self.line(f"while {unparse(s.test)}:", depth, loc)
            self.block(s.body, depth + 1)
        elif isinstance(s, gast.For):
            self.line(f"for {unparse(s.target)} in {unparse(s.iter)}:", depth, loc)
            self.block(s.body, depth + 1)
        elif isinstance(s, gast.Return):   # one line: fpchecks.hidden finds its check there
            for text in unparse(s).splitlines():
                self.line(text, depth, loc)
        else:
            for text in unparse(s).splitlines():
                for part in wrapped(text, WIDTH - len(INDENT) * depth):
                    self.line(part, depth, loc)

    def block(self, stmts, depth):
        self.body(stmts, depth) if stmts else self.line("pass", depth)


def wrapped(text, width):
    """``text`` (one line of code) as lines of at most ``width`` where it can be broken: after
    the commas of its outermost brackets that hold any, continued one indent deeper (and so
    on inside a piece still too long)."""
    if len(text) <= width:
        return [text]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return [text]
    depth, commas = 0, []
    for t in tokens:
        if t.type == tokenize.OP and t.string in "([{":
            depth += 1
        elif t.type == tokenize.OP and t.string in ")]}":
            depth -= 1
        elif t.type == tokenize.OP and t.string == "," and depth:
            commas.append((depth, t.end[1]))
    if not commas:
        return [text]
    outer = min(d for d, _ in commas)
    cuts = [0] + [end for d, end in commas if d == outer] + [len(text)]
    pieces = [text[a:b].strip() for a, b in zip(cuts, cuts[1:])]
    lines, current = [], pieces[0]
    for piece in pieces[1:]:
        if len(current) + 1 + len(piece) > width - (len(INDENT) if lines else 0):
            lines.append(current)
            current = piece
        else:
            current += " " + piece
    lines.append(current)
    out = []
    for k, line in enumerate(lines):   # a piece still too long broken inside its own brackets
        lead = INDENT if k else ""
        if len(lead) + len(line) > width and line != text:
            out += [lead + b for b in wrapped(line, width - len(lead))]
        else:
            out.append(lead + line)
    return out


def _short(filename):
    parts = filename.replace("\\", "/").split("/")
    return "/".join(parts[-2:])


def unshadowed(fn):
    """``fn`` with every name it binds by import or injection that one of its own functions
    also defines (a user function called ``stack`` or ``at_add``, a helper's name) renamed:
    the ``def`` would otherwise replace what the body calls."""
    defined = {fn.node.name, *(c.name for c in fn.companions)}
    clash = sorted(defined & set(fn.refs))
    if not clash:
        return fn
    refs = dict(fn.refs)
    renamed = {}
    for n in clash:
        new = n + "_"
        while new in refs or new in defined:
            new += "_"
        renamed[n] = new
        refs[new] = refs.pop(n)

    def rename(node):
        node = clone(node)
        for sub in gast.walk(node):
            if isinstance(sub, gast.Name) and sub.id in renamed and \
                    isinstance(sub.ctx, gast.Load):
                sub.id = renamed[sub.id]
        return node
    return dataclasses.replace(fn, node=rename(fn.node), refs=refs,
                               companions=tuple(rename(c) for c in fn.companions))


def imports(refs):
    """Header lines binding ``refs`` by import where the object is importable; the rest are
    bound into the module after it loads (returned as a dict)."""
    lines, injected = [], {}
    helpers = sorted(n for n, o in refs.items()
                     if n in runtime.__all__ and getattr(runtime, n) is o)
    for n, obj in sorted(refs.items()):
        if n in helpers:
            continue
        if isinstance(obj, types.ModuleType):
            mod = obj.__name__
            lines.append(f"import {mod}" if mod == n else f"import {mod} as {n}")
            continue
        module, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", "")
        try:
            found = importlib.import_module(module)
            for part in qual.split("."):
                found = getattr(found, part)
        except Exception:
            found = None
        if found is obj and "<" not in qual and module != "__main__":
            head, _, tail = qual.rpartition(".")
            if head:
                injected[n] = obj
            else:
                lines.append(f"from {module} import {qual}" + ("" if qual == n else f" as {n}"))
        else:
            injected[n] = obj
    if helpers:
        lines += helper_imports(helpers)
    return lines, injected


def helper_imports(names):
    """The lines importing runtime helpers ``names``, in parentheses where they are long."""
    line = f"from strop.runtime import {', '.join(names)}"
    return [line] if len(line) <= WIDTH else wrapped(
        f"from strop.runtime import ({', '.join(names)})", WIDTH)


def emit(fn, origin):
    """(source, linemap, injected refs) of ``fn``; ``origin`` says where the user function is."""
    home = fn.node.loc.filename if getattr(fn.node, "loc", None) else None
    fn = unshadowed(fn)
    e = Emitter(home)
    read = {n.id for node in (*fn.companions, fn.node) for n in gast.walk(node)
            if isinstance(n, gast.Name)}
    head, injected = imports({n: o for n, o in fn.refs.items() if n in read})   # (no dead ones)
    e.line(f"# Generated by strop from {origin}. Do not edit: edit the user function.", 0)
    for text in head:
        e.line(text, 0)
    if injected:
        e.line("# bound when the module loads: " + ", ".join(sorted(injected)), 0)
    e.line("", 0)
    e.line("", 0)
    for node in (*fn.companions, fn.node):
        if node is not fn.node:
            e.last = None   # each function names its first user line again
        params = ", ".join(a.id for a in node.args.args)
        e.line(f"def {node.name}({params}):", 0, getattr(node, "loc", None))
        if getattr(node, "doc", None):
            e.line(f'"""{node.doc}"""', 1)
        e.block(node.body, 1)
        if node is not fn.node:
            e.line("", 0)
            e.line("", 0)
    return "\n".join(e.lines) + "\n", e.linemap, injected


def user_location(linemap, lineno):
    hit = linemap.get(lineno)
    return Location(*hit) if hit else None
