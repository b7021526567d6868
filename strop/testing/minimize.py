"""Greedy delta reduction of a failing program: statements deleted or replaced by their
bodies, expressions replaced by one of their operands, for as long as the failure persists
(``still_fails(source)``) and time remains.

Edits are numbered on a fresh parse in a fixed order, so a run is deterministic; the big edits
(whole statements) come before the small ones (subexpressions).
"""
import ast
import time
from ..syntax import parse as parse_source

COMPOUND = (ast.If, ast.For, ast.While)


def _protected(tree):
    """Nodes no edit may touch: a ``while`` loop's test and the assignments to the names it
    reads (its counter), so that a reduction never makes a loop endless; custom derivative
    rules (a function decorated ``custom_jvp``/``custom_vjp``/``.defjvp``, or named
    ``*_fwd``, ``*_bwd``, ``*_jvp``, ``*_vjp``), whose reductions would be wrong rules."""
    keep = set()
    for fn in ast.walk(tree):   # a custom rule cut down is a wrong rule: a false mismatch
        if isinstance(fn, ast.FunctionDef) and (
                fn.name.endswith(("_fwd", "_bwd", "_jvp", "_vjp"))
                or any("custom" in ast.unparse(d) or "def" in ast.unparse(d)
                       for d in fn.decorator_list)):
            keep.update(id(n) for n in ast.walk(fn))
    for loop in ast.walk(tree):
        if isinstance(loop, ast.While):
            names = {n.id for n in ast.walk(loop.test) if isinstance(n, ast.Name)}
            keep.update(id(n) for n in ast.walk(loop.test))
            for st in ast.walk(loop):
                if isinstance(st, (ast.Assign, ast.AugAssign)) and any(
                        isinstance(t, ast.Name) and t.id in names
                        for t in (st.targets if isinstance(st, ast.Assign) else [st.target])):
                    keep.update(id(n) for n in ast.walk(st))
    return keep


def _statement_edits(tree, keep):
    edits = []
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if not (isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt)):
                continue
            for k, st in enumerate(stmts):
                if isinstance(st, (ast.Import, ast.ImportFrom)) or id(st) in keep:
                    continue
                edits.append(lambda s=stmts, k=k: s.__setitem__(slice(k, k + 1), []))
                if isinstance(st, COMPOUND):
                    for inner in (st.body, st.orelse):
                        if inner:
                            edits.append(lambda s=stmts, k=k, i=inner:
                                         s.__setitem__(slice(k, k + 1), i))
    return edits


def _operands(e):
    if isinstance(e, ast.BinOp):
        return [e.left, e.right]
    if isinstance(e, ast.UnaryOp):
        return [e.operand]
    if isinstance(e, ast.BoolOp):
        return list(e.values)
    if isinstance(e, ast.Call):
        return [a for a in e.args if not isinstance(a, ast.Starred)]
    if isinstance(e, ast.Subscript):
        return [e.value]
    return []


def _expression_edits(tree, keep):
    edits = []
    for node in ast.walk(tree):
        if id(node) in keep:
            continue
        for field, value in ast.iter_fields(node):
            if field == "targets" or field == "target":
                continue
            if isinstance(value, ast.expr) and id(value) not in keep:
                for child in _operands(value):
                    edits.append(lambda n=node, f=field, c=child: setattr(n, f, c))
            elif isinstance(value, list):
                for k, item in enumerate(value):
                    if isinstance(item, ast.expr) and id(item) not in keep:
                        for child in _operands(item):
                            edits.append(lambda v=value, k=k, c=child: v.__setitem__(k, c))
    return edits


def _edits(tree):
    keep = _protected(tree)
    return _statement_edits(tree, keep) + _expression_edits(tree, keep)


def _fill_empty(tree):
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and not stmts and field == "body" and \
                    not isinstance(node, ast.Module):
                stmts.append(ast.Pass())
    return tree


def _apply(source, k):
    tree = parse_source(source)
    edits = _edits(tree)
    if k >= len(edits):
        return None
    edits[k]()
    return ast.unparse(ast.fix_missing_locations(_fill_empty(tree))) + "\n"


def minimize(source, still_fails, seconds=30.0):
    """The smallest variant of ``source`` found for which ``still_fails`` holds (``source``
    itself must fail), searching for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    source = ast.unparse(parse_source(source)) + "\n"
    progress = True
    while progress and time.monotonic() < deadline:
        progress, k = False, 0
        while time.monotonic() < deadline:
            candidate = _apply(source, k)
            if candidate is None:
                break
            if candidate != source and still_fails(candidate):
                source, progress = candidate, True
            else:
                k += 1
    return source
