"""Parse a user function: its gast tree (line numbers as in the user's file) and its namespace."""
import builtins
import inspect
import linecache
import textwrap
import types
from dataclasses import dataclass, field

import gast

from ..errors import LINEMAPS, Location, TransformError
from ..syntax import gast_parse

LOCAL, CLOSURE, GLOBAL, BUILTIN, UNDEFINED = "local", "closure", "global", "builtin", "undefined"


@dataclass
class Parsed:
    fn: object                 # the Python function
    node: gast.FunctionDef     # decorators removed, lambdas turned into a def
    filename: str
    indent: int                # columns removed by dedent, added back for carets
    globals: dict
    cells: dict                # free variable name -> cell
    local_names: frozenset = field(default=frozenset())

    def resolve(self, name):
        """(kind, value) of a name read in the function body."""
        if name in self.local_names:
            return LOCAL, None
        if name in self.cells:
            try:
                return CLOSURE, self.cells[name].cell_contents
            except ValueError:  # empty cell: assigned later in the enclosing function
                return UNDEFINED, None
        if name in self.globals:
            return GLOBAL, self.globals[name]
        if hasattr(builtins, name):
            return BUILTIN, getattr(builtins, name)
        return UNDEFINED, None

    def location(self, node):
        lineno = getattr(node, "lineno", None) or self.node.lineno
        linemap = LINEMAPS.get(self.filename)
        if linemap is not None:   # generated code: point at the user line it came from
            hit = linemap.get(lineno)
            return Location(*hit) if hit else Location(self.filename, lineno)
        col = getattr(node, "col_offset", 0) or 0
        end = getattr(node, "end_col_offset", None)
        same_line = getattr(node, "end_lineno", lineno) == lineno
        return Location(self.filename, lineno, col + self.indent,
                        end + self.indent if end is not None and same_line else None)


def local_names(node):
    """Names bound anywhere in the function body (parameters included), as Python scopes them."""
    names = {a.id for a in _params(node.args)}
    for sub in gast.walk(node):
        if isinstance(sub, gast.Name) and isinstance(sub.ctx, (gast.Store, gast.Param)):
            names.add(sub.id)
        elif isinstance(sub, (gast.FunctionDef, gast.ClassDef)) and sub is not node:
            names.add(sub.name)
        elif isinstance(sub, gast.alias):
            names.add((sub.asname or sub.name).split(".")[0])
    return names


def own_nodes(stmts):
    """The nodes of ``stmts`` in this function's own scope: a nested function or class is
    given (its name is bound here) but not looked into, nor is a lambda."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (gast.FunctionDef, gast.ClassDef)):
            stack.extend(c for c in gast.iter_child_nodes(n) if not isinstance(c, gast.Lambda))


def _params(args):
    out = list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)
    return out + [a for a in (args.vararg, args.kwarg) if a is not None]


def parse(fn):
    """The Parsed form of ``fn``; TransformError where its source cannot be read."""
    fn = inspect.unwrap(fn)
    if not inspect.isfunction(fn):
        raise TransformError(f"strop transforms Python functions; got {type(fn).__name__} {fn!r}",
                             fix="pass a function defined with `def` or `lambda` in a file")
    code = fn.__code__
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise TransformError(
            f"the source of {fn.__qualname__} is unavailable (defined in the interactive "
            f"interpreter or with exec?): strop transforms source code",
            Location(code.co_filename, code.co_firstlineno),
            fix="define the function in a .py file or a notebook cell and import or run it from "
                "there") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if dedented != text else 0
    if not _runs(code):
        raise TransformError(
            f"the source of {fn.__qualname__} in {code.co_filename} is not the code it runs: "
            f"the file was edited after the function was defined, and strop transforms "
            f"source code", Location(code.co_filename, code.co_firstlineno),
            fix="run the edited file again (importlib.reload(module), or restart), or undo "
                "the edit")
    if fn.__name__ == "<lambda>":
        node, indent = _lambda_node(code), 0
    else:
        tree = gast_parse(dedented)
        node = tree.body[0]
        gast.increment_lineno(tree, first - 1)
        if not isinstance(node, gast.FunctionDef):
            raise TransformError(f"cannot find the definition of {fn.__qualname__}",
                                 Location(code.co_filename, first))
    node.decorator_list = []
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    parsed = Parsed(fn, node, code.co_filename, indent, fn.__globals__, cells)
    parsed.local_names = frozenset(local_names(node))
    return parsed


def _runs(code):
    """Whether the file as linecache reads it now compiles to ``code``: the file may have been
    edited since the function was made.  Compiled whole (the compiler reads names imported at
    module level differently), once per text; a file that does not compile as Python (a
    notebook cell with magics) is taken as it is."""
    text = "".join(linecache.getlines(code.co_filename))
    if _COMPILED.get(code.co_filename, (None,))[0] != text:
        try:
            compiled = compile(text, code.co_filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            compiled = None
        _COMPILED[code.co_filename] = text, compiled
    compiled = _COMPILED[code.co_filename][1]
    return compiled is None or any(_same(code, c) for c in _codes(compiled)
                                   if c.co_firstlineno == code.co_firstlineno)


_COMPILED = {}   # file name -> (its text, its code): the last compiled, to check functions


def _codes(code):
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield c
            yield from _codes(c)


def _same(a, b):
    """The same code: instructions, names, constants and positions."""
    return (a.co_name == b.co_name and a.co_code == b.co_code and a.co_names == b.co_names
            and a.co_varnames == b.co_varnames and a.co_freevars == b.co_freevars
            and list(a.co_positions()) == list(b.co_positions())
            and len(a.co_consts) == len(b.co_consts) and all(
                _same(x, y) if isinstance(x, types.CodeType) else
                type(x) is type(y) and repr(x) == repr(y) for x, y in zip(a.co_consts, b.co_consts)))


def _lambda_node(code):
    """The lambda that compiled to ``code``, found in its whole file (a lambda is often in the
    middle of a statement spanning lines), as ``def lambda_<line>(...): return ...``."""
    tree = gast_parse("".join(linecache.getlines(code.co_filename)))
    # where its instructions came from (RESUME and RETURN have an empty span at column 0)
    positions = [(ln, col) for ln, end, col, end_col in code.co_positions()
                 if ln is not None and col is not None and (end, end_col) != (ln, col)]
    lambdas = [n for n in gast.walk(tree) if isinstance(n, gast.Lambda)
               and n.lineno == code.co_firstlineno]
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    same = [lam for lam in lambdas if tuple(a.id for a in lam.args.posonlyargs + lam.args.args
                                            + lam.args.kwonlyargs) == params]
    lambdas = same or lambdas   # two lambdas on one line: the one with these parameters
    inside = [lam for lam in lambdas if positions and all(
        (lam.body.lineno, lam.body.col_offset) <= p <= (lam.body.end_lineno,
                                                         lam.body.end_col_offset)
        for p in positions)]
    candidates = inside or lambdas
    if len(candidates) > 1:   # nested lambdas: the innermost that holds the code
        candidates = [min(candidates, key=lambda n: (n.end_lineno - n.lineno,
                                                    n.end_col_offset - n.col_offset))]
    if len(candidates) != 1:
        raise TransformError("cannot find the source of this lambda",
                             Location(code.co_filename, code.co_firstlineno),
                             fix="define the function with `def`")
    lam = candidates[0]
    ret = gast.copy_location(gast.Return(value=lam.body), lam.body)
    node = gast.FunctionDef(name=f"lambda_{lam.lineno}", args=lam.args, body=[ret],
                            decorator_list=[], returns=None, type_comment=None, type_params=[])
    return gast.copy_location(node, lam)
