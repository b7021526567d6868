"""Statements Numba cannot compile, run as Python in an object-mode block of the compiled
function (``with objmode():``), the rest of the function staying compiled.

When Numba refuses a statement of generated code, the runner (strop/runner.py) asks here for
an island around it: the statement and the ones after it in its block that read what it binds
(``print(type(x))`` is ``_t1 = type(x)`` then ``print(_t1)``), up to the first point where
nothing the island binds is read anywhere else in the function.  A value leaving an object-mode
block needs a Numba type declared for it, which a Python object (a class, a string made by
``repr``) has not: so an island binds nothing the compiled code reads, and where the refused
statement's result reaches compiled code there is no island (jit falls back to Python as
before).  Run as Python (the python backend, a re-run that finds the user line), ``objmode()``
does nothing and the block is its statements.

An island is found in the source Numba was given (a generated line) and kept as the path of
its first statement from the function (``(("body", 3), ("body", 0))``) and its length: the
generated code is made again the same way, so the path finds the same statements, and the
islands are put in one after another, each path read in the code with the ones before it.
"""
import ast

import gast

from ..transformer.ir import names_in
from .cpu import _bind
from ..syntax import parse as parse_source

SIMPLE = (gast.Assign, gast.Expr, gast.AugAssign)


def refused_statement(source, function, lineno):
    """The path of the statement at generated line ``lineno`` of ``function`` in ``source``,
    or None (another function's line, or a line of no statement)."""
    try:
        tree = parse_source(source)
    except SyntaxError:
        return None
    fdef = next((n for n in tree.body if isinstance(n, ast.FunctionDef)
                 and n.name == function), None)
    if fdef is None:
        return None
    body = fdef.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]    # the docstring the emitter writes (no statement of the code)

    def search_in(body, path, field):
        for i, s in enumerate(body):
            if s.lineno <= lineno <= s.end_lineno:
                for inner_field in ("body", "orelse"):
                    inner = getattr(s, inner_field, None)
                    if isinstance(inner, list) and inner and not isinstance(s, ast.With):
                        found = search_in(inner, path + ((field, i),), inner_field)
                        if found is not None:
                            return found
                return path + ((field, i),)
        return None
    return search_in(body, (), "body")


def _at(node, path):
    """(the statement list holding the statement at ``path``, its index)."""
    body = node
    for field, i in path[:-1]:
        body = getattr(body, field)[i]
    field, i = path[-1]
    stmts = getattr(body, field)
    return (stmts, i) if i < len(stmts) else (None, None)


def island_at(node, path):
    """The number of statements from ``path`` on that make an island (see the module note), or
    None where there is none."""
    stmts, start = _at(node, path)
    if stmts is None or not isinstance(stmts[start], SIMPLE):
        return None
    bound, end = set(), start
    while end < len(stmts):
        s = stmts[end]
        if not isinstance(s, SIMPLE) or _mutates(s):
            return None
        bound |= _bound(s)
        end += 1
        inside = {id(n) for t in stmts[start:end] for n in gast.walk(t)}
        if not any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                   and n.id in bound and id(n) not in inside for n in gast.walk(node)):
            return end - start
    return None


def _bound(s):
    return {n.id for n in gast.walk(s) if isinstance(n, gast.Name)
            and isinstance(n.ctx, (gast.Store, gast.Del))}


def _mutates(s):
    """A method called on a local (``_tape.append(v)``): the list object mode would see is a
    copy of the compiled one."""
    return any(isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
               and isinstance(n.func.value, gast.Name) for n in gast.walk(s))


def with_islands(node, refs, islands):
    """``node`` with each island (path, length) of ``islands`` made one ``with objmode():``
    block, in order (in place); ``refs`` gains numba.objmode."""
    from numba import objmode as context
    objmode = _bind(refs, context, "objmode", names_in(node))
    for path, length in islands:
        stmts, start = _at(node, path)
        block = gast.With(
            items=[gast.withitem(context_expr=gast.Call(
                func=gast.Name(id=objmode, ctx=gast.Load(), annotation=None, type_comment=None),
                args=[], keywords=[]), optional_vars=None)],
            body=stmts[start:start + length], type_comment=None)
        block.loc = getattr(stmts[start], "loc", None)
        block.note = "Numba cannot compile this: it runs as Python (an object-mode island)"
        stmts[start:start + length] = [block]
    return node

