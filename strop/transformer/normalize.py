"""A-normal form: one operation per assignment, named temporaries, calls to user functions
inlined, local mutation rewritten into functional updates, array methods resolved.

Input: a parsed user function.  Output: an ``ir.Function`` whose statements are

    x = <atom> | <literal> | a op b | op a | a cmp b | f(atoms) | a[index] | a.attr | {k: v}
    if <atom>: ...      while <name>: ... (test recomputed at the end of the body)
    for i in range(<atoms>): ...      f(atoms)  (print and other calls for effect)
    return <atom or literal>          (once, last)

where an atom is a name, a constant or a reference to a bound object (``np.pi``).
"""
import builtins
import inspect
import sys

import gast
import numpy as np

from ..codegen import runtime
from ..errors import TransformError
from . import ir
from .controlflow import ITERABLE, canonicalize
from .inline import Inliner, Scope
from .lax_lower import LaxLowering
from .parse import BUILTIN, CLOSURE, GLOBAL, UNDEFINED
from .operands import Operands
from .spread import Spreader

# Array methods that are NumPy functions of the array: ``x.sum(0)`` is ``np.sum(x, 0)``.
# ``copy``, ``astype``, ``item`` and ``tolist`` stay methods (lists and dicts have ``copy`` too).
ARRAY_METHODS = {m: getattr(np, m) for m in (
    "sum", "mean", "prod", "max", "min", "std", "var", "cumsum", "cumprod", "dot", "ravel",
    "squeeze", "swapaxes", "clip", "round", "any", "all", "argmax", "argmin", "argsort",
    "trace", "diagonal", "nonzero", "repeat", "take", "conj", "conjugate", "ptp")
    if hasattr(np, m)}
ARRAY_METHODS.update(flatten=np.ravel)
VARARG_METHODS = {"reshape": np.reshape, "transpose": np.transpose}   # x.reshape(2, 3)

# Mutating methods on local objects, as functional updates: name -> (helper, returns a value)
AT_OPS = {"set": "at_set", "add": "at_add", "multiply": "at_multiply", "mul": "at_multiply",
          "min": "at_min", "max": "at_max", "get": "at_get"}

# NumPy functions that write into their first argument -> the functional runtime helper
INPLACE_NUMPY = {np.add.at: "at_add", np.multiply.at: "at_multiply", np.maximum.at: "at_max",
                 np.minimum.at: "at_min", np.put_along_axis: "put_along_axis",
                 np.copyto: "copyto"}

# builtins that make an iterator: a value made by one in transformed code is made a list
ITERATORS = (zip, enumerate, reversed)

# NumPy's index-trick objects: np.r_[...] and np.c_[...] are rewritten to the joins they make
INDEX_TRICKS = (np.r_, np.c_)

UNSUPPORTED = {gast.Try: "try/except", gast.With: "with", gast.ClassDef: "a class definition",
               gast.Import: "import", gast.ImportFrom: "import", gast.Delete: "del",
               gast.AsyncFunctionDef: "async def", gast.AsyncFor: "async for",
               gast.AsyncWith: "async with", gast.Global: "global", gast.Nonlocal: "nonlocal",
               gast.Yield: "yield", gast.YieldFrom: "yield from", gast.Await: "await",
               gast.NamedExpr: "the walrus operator :=", gast.Set: "a set",
               gast.SetComp: "a set comprehension", gast.Starred: "* unpacking",
               gast.Match: "match"}


def _is_user_module(obj):
    """A module of the user's (not NumPy's, strop's or the standard library's)."""
    if not inspect.ismodule(obj):
        return False
    top = obj.__name__.partition(".")[0]
    return top not in sys.stdlib_module_names and top not in _LIBRARIES or \
        obj.__name__.startswith("strop.demo")


_LIBRARIES = {"numpy", "strop", "scipy", "numba", "builtins"}


def _is_user_function(obj):
    if not inspect.isfunction(obj):
        return False
    module = getattr(obj, "__module__", "") or ""
    return not (module.startswith("numpy") or module == "strop" or module.startswith("strop.")
                and not module.startswith("strop.demo"))


class Normalizer(LaxLowering, Inliner, Spreader, Operands):
    def __init__(self, parsed, check=None):
        self.root = parsed
        self.check = check
        self.namer = ir.Namer()
        self.refs, self.free = {}, {}
        self.ref_ids = {}        # id(obj) -> bound name
        self.inlining = []       # functions being inlined (recursion check)
        self.functions = {}      # generated name -> (FunctionDef or Lambda node, its Scope)
        self.guards = []         # (owner, name, object) of the functions and modules bound
        self.inline_helpers = True
        self.keep_custom = True  # custom_jvp/custom_vjp calls stay calls (for their rules)
        self.out = None          # the statement list being filled
        self.loc = None          # the user location of the statement being normalized
        self.displays = {}       # name -> length or keys of the display it holds (spread.py)
        self.lifted = {}         # id(cell) -> a local a lifted local function reads (inline.py)

    # --- entry -----------------------------------------------------------------------------
    def function(self):
        parsed = self.root
        for n in parsed.local_names:
            self.namer.reserve(n)
        scope = Scope(parsed, parsed.node, {n: n for n in parsed.local_names})
        node = canonicalize(parsed.node, self.namer, parsed.location)
        args = node.args
        if args.kwarg:
            raise TransformError("** parameters are not supported yet", parsed.location(node),
                                 fix="make them positional or keyword-only parameters")
        # the api passes arguments in this order: positional, *args (spread at the boundary,
        # transformer/flatten.py), keyword-only
        params = [a.id for a in args.posonlyargs + args.args] + (
            [args.vararg.id] if args.vararg else []) + [a.id for a in args.kwonlyargs]
        body = self.block(node.body, scope)
        free_params = [ir.name(n, store=False) for n in self.free]
        for p in free_params:
            p.ctx = gast.Param()
        fn_args = gast.arguments(
            args=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
                  for p in params] + free_params,
            posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
        fdef = gast.FunctionDef(name=node.name, args=fn_args, body=body or [gast.Pass()],
                                decorator_list=[], returns=None, type_comment=None,
                                type_params=[])
        fdef.loc = parsed.location(parsed.node)
        return ir.Function(fdef, dict(self.refs), dict(self.free), nparams=len(params),
                           guards=tuple(self.guards))

    def block(self, stmts, scope, loop=False):
        """The statements of a nested block; ``loop``: a loop body, entered with nothing
        known of the displays names hold (a later iteration may have rebound them)."""
        saved, self.out = self.out, []
        known, self.displays = self.displays, {} if loop else dict(self.displays)
        try:
            for s in stmts:
                self.loc = scope.parsed.location(s)
                self.stmt(s, scope)
            return self.out
        finally:
            self.out, self.displays = saved, known

    def emit(self, node):
        node.loc = self.loc
        self.out.append(node)
        self.note(node)

    def error(self, message, node=None, scope=None, fix=None):
        loc = scope.parsed.location(node) if node is not None and scope else self.loc
        return TransformError(message, loc, fix)

    # --- names -----------------------------------------------------------------------------
    def bind_ref(self, user_name, obj):
        if id(obj) in self.ref_ids and self.refs.get(self.ref_ids[id(obj)]) is obj:
            return self.ref_ids[id(obj)]
        gen = self.namer.fresh(user_name if user_name.isidentifier() else "_ref")
        self.refs[gen] = obj
        self.ref_ids[id(obj)] = gen
        return gen

    def helper(self, helper_name):
        return ir.name(self.bind_ref(helper_name, getattr(runtime, helper_name)))

    def load(self, user_name, scope, node):
        if user_name == ITERABLE:
            return self.helper("iterable")
        s = scope
        while s is not None:
            if user_name in s.names:
                return ir.name(s.names[user_name])
            s = s.parent
        kind, value = scope.parsed.resolve(user_name)
        if kind == BUILTIN:
            return ir.name(user_name)
        if kind == UNDEFINED:
            raise self.error(f"name {user_name!r} is not defined", node, scope)
        owner = scope.parsed.cells[user_name] if kind == CLOSURE else scope.parsed.globals
        return self.global_atom(user_name, owner, value, kind == CLOSURE)

    def global_atom(self, user_name, owner, value, is_cell=False):
        """A global, closure variable or attribute of a user's module, as generated code reads
        it: a function or module bound once (a guard notices when it is rebound, to transform
        again), data passed in on every call."""
        var = ir.FreeVar(user_name, owner, is_cell)
        if ir.is_constant_object(value):
            self.guards.append(var.guard(value))
            return ir.name(self.bind_ref(user_name, value))
        return self.free_atom(var)

    def free_atom(self, var):
        for gen, existing in self.free.items():
            if existing == var:
                return ir.name(gen)
        gen = self.namer.fresh(var.user_name)
        self.free[gen] = var
        return ir.name(gen)

    def store_name(self, target, scope):
        if target not in scope.names:  # names made by canonicalize are already fresh
            fresh = target in self.namer.taken and target.startswith("_")
            scope.names[target] = target if fresh else self.namer.fresh(target)
        return scope.names[target]

    # --- statements ------------------------------------------------------------------------
    def stmt(self, s, scope):
        kind = type(s)
        if kind in UNSUPPORTED:
            raise self.error(f"{UNSUPPORTED[kind]} is not supported inside a transformed function",
                             s, scope, fix="move it outside the function that is transformed")
        if kind is gast.Assign:
            if len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) and isinstance(
                    s.value, gast.Lambda):
                self.define(s.targets[0].id, s.value, scope)
                return
            into = s.targets[0].id if len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name) else None
            value = self.expr(s.value, scope, into=self.store_name(into, scope) if into else None)
            for t in s.targets if into is None else ():
                self.assign(t, value, scope)
        elif kind is gast.AnnAssign:
            if s.value is not None:
                self.stmt(gast.copy_location(gast.Assign(targets=[s.target], value=s.value,
                                                         type_comment=None), s), scope)
        elif kind is gast.AugAssign and isinstance(s.target, gast.Subscript):
            # x[i] += v: read x[i] once, write it back functionally
            base = self.expr(_as_load(s.target.value), scope)
            index = self.index(s.target.slice, scope)
            current = self.to_name(gast.Subscript(value=base, slice=index, ctx=gast.Load()))
            new = self.to_name(gast.BinOp(left=current, op=s.op, right=self.expr(s.value, scope)))
            self.store_item(s.target.value, base, index, new, scope)
        elif kind is gast.AugAssign:
            current = ir.clone(s.target)
            for n in gast.walk(current):
                if hasattr(n, "ctx"):
                    n.ctx = gast.Load()
            value = gast.copy_location(gast.BinOp(left=current, op=s.op, right=s.value), s)
            self.stmt(gast.copy_location(gast.Assign(targets=[s.target], value=value,
                                                     type_comment=None), s), scope)
        elif kind is gast.Expr:
            self.expr_stmt(s.value, scope)
        elif kind is gast.If:
            test = self.expr(s.test, scope)
            body, orelse = self.block(s.body, scope), self.block(s.orelse, scope)
            self.loc = scope.parsed.location(s)
            self.emit(gast.If(test=test, body=body or [gast.Pass()], orelse=orelse))
        elif kind is gast.While:
            cond = self.namer.temp("_c") if not isinstance(s.test, gast.Constant) else None
            test = self.expr(s.test, scope, into=cond) if cond else s.test
            loc = self.loc
            body = self.block(s.body, scope, loop=True)
            if cond:
                saved, self.out, self.loc = self.out, body, loc
                known, self.displays = self.displays, {}
                self.expr(s.test, scope, into=cond)
                self.out, self.displays = saved, known
            self.loc = loc
            self.emit(gast.While(test=test, body=body or [gast.Pass()], orelse=[]))
        elif kind is gast.For:
            it = s.iter
            args = [self.expr(a, scope) for a in it.args]
            target = self.store_name(s.target.id, scope)
            loc = self.loc
            body = self.block(s.body, scope, loop=True)
            self.loc = loc
            self.emit(gast.For(target=ir.name(target, store=True), iter=ir.call("range", args),
                               body=body or [gast.Pass()], orelse=[], type_comment=None))
        elif kind is gast.Return:
            value = self.expr(s.value, scope) if s.value is not None else ir.const(None)
            if self.inlining:
                self.inline_result = value
            else:
                self.emit(gast.Return(value=value))
        elif kind is gast.FunctionDef:
            self.define(s.name, s, scope)
        elif kind is gast.Raise:
            exc = self.expr(s.exc, scope) if s.exc is not None else None
            self.emit(gast.Raise(exc=exc, cause=None))
        elif kind is gast.Assert:
            test = self.expr(s.test, scope)
            msg = [self.expr(s.msg, scope)] if s.msg is not None else []
            fail = gast.Raise(exc=ir.call("AssertionError", msg), cause=None)
            fail.loc = self.loc
            self.emit(gast.If(test=gast.UnaryOp(op=gast.Not(), operand=test), body=[fail],
                              orelse=[]))
        elif kind is gast.Pass:
            pass
        elif kind in (gast.Break, gast.Continue):   # controlflow.py rewrites them all: never
            raise self.error(f"internal: '{kind.__name__.lower()}' left in a loop", s, scope)
        else:
            raise self.error(f"{kind.__name__} statements are not supported", s, scope)

    def define(self, user_name, node, scope):
        self.functions[self.store_name(user_name, scope)] = (node, scope)

    def assign(self, target, value, scope):
        if isinstance(target, gast.Name):
            self.emit(ir.assign(self.store_name(target.id, scope), value))
        elif isinstance(target, (gast.Tuple, gast.List)):
            if any(isinstance(e, gast.Starred) for e in target.elts):
                raise self.error("starred assignment is not supported", target, scope,
                                 fix="index the sequence explicitly")
            stored = {n.id for t in target.elts for n in gast.walk(t) if isinstance(n, gast.Name)}
            if (isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts)
                    and not stored & ir.names_in(value)):
                for elt, v in zip(target.elts, value.elts):   # a, b = x, y
                    self.assign(elt, v, scope)
                return
            seq = value if isinstance(value, gast.Name) else self.to_name(value)
            for i, elt in enumerate(target.elts):
                item = self.known_item(seq, ir.const(i)) or ir.subscript(ir.clone(seq),
                                                                         ir.const(i))
                self.assign(elt, item if isinstance(elt, gast.Name) else self.to_name(item), scope)
        elif isinstance(target, gast.Subscript):
            base = self.expr(_as_load(target.value), scope)
            self.store_item(target.value, base, self.index(target.slice, scope), value, scope)
        else:
            raise self.error("only names, tuples and items can be assigned to in a transformed "
                             "function", target, scope,
                             fix="build a new object instead of setting an attribute")

    def store_item(self, container, base, index, value, scope):
        """``container[index] = value`` as ``container = setitem(container, index, value)``."""
        new = ir.call(self.helper("setitem"), [base, _index_value(index), value])
        if isinstance(container, gast.Name):
            self.emit(ir.assign(self.store_name(container.id, scope), new))
        else:
            self.assign(_as_store(container), self.to_name(new), scope)

    def to_name(self, value, into=None, force=False):
        """``value`` as an atom: emitted into a temporary unless it already is one."""
        if into is None and not force and _is_atom(value):
            return value
        target = into or self.namer.temp()
        self.emit(ir.assign(target, value))
        return ir.name(target)

    def expr_stmt(self, value, scope):
        if isinstance(value, gast.Constant):   # docstring
            return
        if isinstance(value, gast.Call) and self.inplace_numpy(value, scope):
            return
        if (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
                and self.mutating_method(value, scope)):
            return
        result = self.expr(value, scope)
        if isinstance(result, gast.Name) and self.out and isinstance(self.out[-1], gast.Assign) \
                and self.out[-1].targets[0].id == result.id and isinstance(self.out[-1].value,
                                                                            gast.Call):
            call = self.out.pop().value        # a call made for its effect keeps no temporary
            self.emit(gast.Expr(value=call))

    def inplace_numpy(self, node, scope):
        """``np.add.at(out, idx, v)`` and other NumPy calls that write into their first
        argument, on a local array: rebind it to the updated copy."""
        if not node.args or self._names_ref(node.func, scope) is False:
            return False
        root = node.args[0]
        while isinstance(root, gast.Subscript):
            root = root.value
        if not (isinstance(root, gast.Name) and _is_local(root.id, scope)):
            return False
        callee = self.expr(node.func, scope)
        helper = INPLACE_NUMPY.get(self.ref_object(callee)) if self.is_ref(callee) else None
        if helper is None:
            return False
        args = [self.expr(a, scope) for a in node.args]
        kws = [(k.arg, self.expr(k.value, scope)) for k in node.keywords]
        new = self.to_name(ir.call(self.helper(helper), args, kws))
        self.assign(_as_store(node.args[0]), new, scope)
        return True

    MUTATORS = {"append", "extend", "insert", "update", "fill", "sort", "pop"}

    def mutating_method(self, node, scope):
        """``lst.append(v)`` and friends on a local object (or an item of one, ``d["l"]``):
        rebind it to the updated copy."""
        obj, method = node.func.value, node.func.attr
        root = obj
        while isinstance(root, gast.Subscript):
            root = root.value
        if method not in self.MUTATORS or not isinstance(root, gast.Name) or not _is_local(
                root.id, scope):
            return False
        cur = self.expr(_as_load(obj), scope)
        args = [self.expr(a, scope) for a in node.args]
        if method in ("append", "extend", "update", "insert"):
            new = ir.call(self.helper(method), [cur] + args)
        elif method == "fill":
            new = ir.call(ir.attr(self.bind_ref("np", np), "full_like"), [cur] + args)
        elif method == "sort":
            new = ir.call(self.helper("sort_like"), [cur] + args)
        elif method == "insert":
            new = ir.call(self.helper("insert"), [cur] + args)
        else:  # pop as a statement
            new = ir.call(self.helper("pop_item"), [cur] + args)
        if isinstance(obj, gast.Name):
            self.emit(ir.assign(self.store_name(obj.id, scope), new))
        else:
            self.assign(_as_store(obj), self.to_name(new), scope)
        return True

    # --- expressions -----------------------------------------------------------------------
    def expr(self, e, scope, into=None):
        """Normalize expression ``e``: emit its operations, return an atom (in ``into`` if set)."""
        kind = type(e)
        if kind in UNSUPPORTED:
            raise self.error(f"{UNSUPPORTED[kind]} is not supported inside a transformed function",
                             e, scope)
        if kind is gast.Constant:
            return self.to_name(e, into) if into else e
        if kind is gast.Name:
            atom = e if getattr(e, "normalized", False) else self.load(e.id, scope, e)
            return self.to_name(atom, into) if into else atom
        if kind is gast.Attribute:
            base = self.expr(e.value, scope)
            node = gast.Attribute(value=base, attr=e.attr, ctx=gast.Load())
            module = self.ref_object(base) if self.is_ref(base) else None
            if _is_user_module(module) and e.attr in vars(module):
                # helpers.h, cfg.scale: read like a global of that module (current value)
                atom = self.global_atom(e.attr, vars(module), getattr(module, e.attr))
                return self.to_name(atom, into) if into else atom
            if self.is_ref(base):   # np.pi, np.float32: an atom
                return self.to_name(node, into) if into else node
            return self.to_name(node, into, force=True)
        if kind is gast.BinOp:
            left, right = self.expr(e.left, scope), self.expr(e.right, scope)
            # lst + [v], [x] * 3, W * [x, y]: see operands.py
            made = self.sequence_binop(e.op, (e.left, e.right), (left, right), into)
            if made is not None:
                return made
            return self.to_name(gast.BinOp(left=left, op=e.op, right=right), into)
        if kind is gast.UnaryOp:
            operand = self.expr(e.operand, scope)
            if isinstance(e.op, gast.USub) and isinstance(operand, gast.Constant) and \
                    isinstance(operand.value, (int, float)):   # -4 is a constant
                return self.to_name(ir.const(-operand.value), into) if into else \
                    ir.const(-operand.value)
            return self.to_name(gast.UnaryOp(op=e.op, operand=operand), into)
        if kind is gast.Compare:
            if len(e.ops) == 1:
                return self.to_name(gast.Compare(left=self.expr(e.left, scope), ops=e.ops,
                                                 comparators=[self.expr(e.comparators[0], scope)]),
                                    into)
            pairs = [gast.Compare(left=l, ops=[op], comparators=[r]) for l, op, r in zip(
                [e.left] + e.comparators[:-1], e.ops, e.comparators)]
            return self.expr(gast.BoolOp(op=gast.And(), values=pairs), scope, into)
        if kind is gast.BoolOp:
            target = into or self.namer.temp()
            self.expr(e.values[0], scope, into=target)
            rest = e.values[1:]
            if rest:
                sub = rest[0] if len(rest) == 1 else gast.BoolOp(op=e.op, values=rest)
                body = self.block_expr(sub, scope, target)
                test = ir.name(target)
                if isinstance(e.op, gast.Or):
                    test = gast.UnaryOp(op=gast.Not(), operand=test)
                    test = self.to_name(test)
                self.emit(gast.If(test=test, body=body, orelse=[]))
            return ir.name(target)
        if kind is gast.IfExp:
            target = into or self.namer.temp()
            test = self.expr(e.test, scope)
            body = self.block_expr(e.body, scope, target)
            orelse = self.block_expr(e.orelse, scope, target)
            self.emit(gast.If(test=test, body=body, orelse=orelse))
            return ir.name(target)
        if kind in (gast.Tuple, gast.List):
            # a display's items are atoms: a nested display gets a name (the derivative
            # passes read one level of display)
            elts = [self.expr(x, scope) for x in e.elts]
            elts = [self.to_name(x) if isinstance(x, (gast.Tuple, gast.List)) else x
                    for x in elts]
            node = kind(elts=elts, ctx=gast.Load())
            return self.to_name(node, into) if into else node
        if kind is gast.Dict:
            if any(k is None for k in e.keys):
                raise self.error("** in a dict display is not supported", e, scope)
            return self.to_name(gast.Dict(keys=[self.expr(k, scope) for k in e.keys],
                                          values=[self.expr(v, scope) for v in e.values]), into)
        if kind is gast.Subscript:
            if _is_at(e.value):
                raise self.error("x.at[...] must be followed by .set/.add/.multiply/.min/.max/"
                                 ".get(...)", e, scope)
            base = self.expr(e.value, scope)
            trick = self.ref_object(base) if self.is_ref(base) else None
            if any(trick is t for t in INDEX_TRICKS):
                return self.index_trick(trick, e, scope, into)
            base = self.to_name(base)   # f(x)[1], f inlined: a display
            index = self.index(e.slice, scope)
            item = self.known_item(base, index)   # c[0] with c = (a, b): a (lax_trees.py)
            if item is not None:
                return self.to_name(item, into) if into else item
            return self.to_name(gast.Subscript(value=base, slice=index, ctx=gast.Load()), into)
        if kind is gast.Call:
            return self.call(e, scope, into)
        if kind in (gast.ListComp, gast.GeneratorExp, gast.DictComp):
            return self.comprehension(e, scope, into)
        if kind is gast.JoinedStr:
            values = [gast.FormattedValue(value=self.expr(v.value, scope), conversion=v.conversion,
                                          format_spec=v.format_spec)
                      if isinstance(v, gast.FormattedValue) else v for v in e.values]
            return self.to_name(gast.JoinedStr(values=values), into)
        if kind is gast.Lambda:
            gen = self.namer.temp("_lambda")
            self.functions[gen] = (e, scope)
            return ir.name(gen)
        raise self.error(f"{kind.__name__} expressions are not supported", e, scope)

    def block_expr(self, e, scope, target):
        saved, self.out = self.out, []
        known = dict(self.displays)
        try:
            self.expr(e, scope, into=target)
            return self.out
        finally:
            self.out, self.displays = saved, known

    def index(self, s, scope):
        if isinstance(s, gast.Slice):
            parts = [self.expr(p, scope) if p is not None else None
                     for p in (s.lower, s.upper, s.step)]
            return gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(s, gast.Tuple):
            return gast.Tuple(elts=[self.index(x, scope) for x in s.elts], ctx=gast.Load())
        return self.expr(s, scope)

    def index_trick(self, trick, e, scope, into):
        """``np.r_[a, 0:3, b]`` / ``np.c_[a, b]`` as the NumPy calls they stand for, which have
        derivative and batching rules: items as ``np.atleast_1d`` (slices as ``np.arange`` or,
        with an imaginary step, ``np.linspace``) joined by ``np.concatenate``, columns by
        ``np.column_stack``.  A leading string directive may only name the axis (``'-1'``)."""
        items = list(e.slice.elts) if isinstance(e.slice, gast.Tuple) else [e.slice]
        name = "np.r_" if trick is np.r_ else "np.c_"
        axis = 0
        if items and isinstance(items[0], gast.Constant) and isinstance(items[0].value, str):
            directive = items.pop(0).value
            try:
                axis = int(directive)
            except ValueError:
                axis = None
            if axis is None or trick is np.c_:
                raise self.error(f"the directive {directive!r} of {name}[...] is not supported "
                                 "in a transformed function", e, scope,
                                 fix="write the np.concatenate / np.stack / np.reshape it "
                                     "stands for")
        npy = self.bind_ref("np", np)
        parts = []
        for item in items:
            if isinstance(item, gast.Slice):
                parts.append(self.to_name(self.trick_range(item, npy, e, scope)))
            elif isinstance(item, gast.Constant) and isinstance(item.value, str):
                raise self.error(f"a string inside {name}[...] is not supported", e, scope,
                                 fix="put the directive first, or use np.concatenate")
            elif trick is np.r_:
                parts.append(self.to_name(ir.call(ir.attr(npy, "atleast_1d"),
                                                  [self.expr(item, scope)])))
            else:
                parts.append(self.expr(item, scope))
        seq = gast.Tuple(elts=parts, ctx=gast.Load())   # Numba joins tuples
        if trick is np.c_:
            return self.to_name(ir.call(ir.attr(npy, "column_stack"), [seq]), into)
        return self.to_name(ir.call(ir.attr(npy, "concatenate"), [seq],
                                    [("axis", ir.const(axis))]), into)

    def trick_range(self, s, npy, e, scope):
        """A slice item of np.r_/np.c_: ``a:b:k`` is ``np.arange(a, b, k)``; ``a:b:nj`` (an
        imaginary constant step) is ``np.linspace(a, b, n)``."""
        start = self.expr(s.lower, scope) if s.lower is not None else ir.const(0)
        if s.upper is None:
            raise self.error("a slice without a stop inside np.r_/np.c_", e, scope)
        stop = self.expr(s.upper, scope)
        step = s.step
        if isinstance(step, gast.Constant) and isinstance(step.value, complex):
            count = ir.const(int(abs(step.value)))
            return ir.call(ir.attr(npy, "linspace"), [start, stop, count])
        step = self.expr(step, scope) if step is not None else ir.const(1)
        return ir.call(ir.attr(npy, "arange"), [start, stop, step])

    def index_value(self, s, scope):
        """An index written with slice syntax, as a value: ``1:, 0`` → ``(slice(1, None), 0)``."""
        return _index_value(self.index(s, scope))

    def is_ref(self, atom):
        while isinstance(atom, gast.Attribute):
            atom = atom.value
        return isinstance(atom, gast.Name) and atom.id in self.refs

    def ref_object(self, atom):
        if isinstance(atom, gast.Name):
            return self.refs.get(atom.id, getattr(builtins, atom.id, None))
        base = self.ref_object(atom.value)
        return getattr(base, atom.attr, None)

    # --- calls -----------------------------------------------------------------------------
    def with_defaults(self, obj, e, scope):
        """A transform called inside with parameters left to their defaults: the call with
        those passed (its generated code has none), and for vmap the one that leaves them
        unmapped (JAX maps only the arguments passed)."""
        if any(isinstance(a, gast.Starred) for a in e.args) or obj._arity[1] or obj._bound:
            return obj, e
        given = {k.arg for k in e.keywords}
        params = [p for p in obj.signature.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        missing = [(i, p) for i, p in enumerate(params) if i >= len(e.args) and
                   p.name not in given and p.default is not p.empty]
        if not missing:
            return obj, e
        if hasattr(obj, "with_unmapped"):
            obj = obj.with_unmapped(tuple(i for i, _ in missing), len(e.args))
        keywords = list(e.keywords)
        for _, p in missing:
            atom = self.constant_atom(p.default, f"{p.name}_default")
            atom.normalized = True   # a generated name already: not the user's to look up
            keywords.append(gast.keyword(arg=p.name, value=atom))
        return obj, gast.Call(func=e.func, args=e.args, keywords=keywords)

    def call(self, e, scope, into):
        e = self.spread(e, scope)
        func = e.func
        # x.at[idx].set(v): a functional update
        if isinstance(func, gast.Attribute) and _is_at(func.value):
            if func.attr not in AT_OPS:
                raise self.error(f".at[...].{func.attr} is not supported; use one of "
                                 + ", ".join(AT_OPS), e, scope)
            base = self.expr(func.value.value.value, scope)
            index = self.index_value(func.value.slice, scope)
            args = [base, index] + [self.expr(a, scope) for a in e.args]
            kws = [(k.arg, self.expr(k.value, scope)) for k in e.keywords]
            return self.to_name(ir.call(self.helper(AT_OPS[func.attr]), args, kws), into)
        # a method of a local value
        if isinstance(func, gast.Attribute) and not self._names_ref(func.value, scope):
            obj = self.expr(func.value, scope)
            args = [self.expr(a, scope) for a in e.args]
            kws = [(k.arg, self.expr(k.value, scope)) for k in e.keywords]
            if func.attr in VARARG_METHODS and len(args) > 1:
                args = [gast.Tuple(elts=args, ctx=gast.Load())]
            np_fn = ARRAY_METHODS.get(func.attr) or VARARG_METHODS.get(func.attr)
            if np_fn is not None:
                target = ir.attr(self.bind_ref("np", np), np_fn.__name__)
                return self.to_name(ir.call(target, [obj] + args, kws), into)
            if func.attr == "pop" and isinstance(func.value, gast.Name) and _is_local(
                    func.value.id, scope):
                result = self.to_name(ir.call(self.helper("item_of"), [obj] + args), into)
                self.emit(ir.assign(self.store_name(func.value.id, scope),
                                    ir.call(self.helper("pop_item"), [obj] + args)))
                return result
            return self.to_name(ir.call(ir.attr(obj, func.attr), args, kws), into)
        # a local function (nested def or lambda, maybe passed in as an argument)
        if isinstance(func, gast.Lambda):
            return self.inline_ast(func, scope, e, scope, into)
        if isinstance(func, gast.Name):
            local = self.local_function(func.id, scope)
            if local is not None:
                node, closure = local
                return self.inline_ast(node, closure, e, scope, into)
        callee = self.expr(func, scope)
        obj = self.ref_object(callee) if self.is_ref(callee) or isinstance(callee, gast.Name) \
            else None
        if getattr(obj, "__strop_lax__", None):   # strop.lax: the Python it means
            return self.lax_call(obj, e, scope, into)
        if obj is dict and not e.args:
            return self.to_name(gast.Dict(keys=[ir.const(k.arg) for k in e.keywords],
                                          values=[self.expr(k.value, scope) for k in e.keywords]),
                                into)
        if getattr(obj, "__strop_transform__", False):
            # grad(g) inside the function: build the transform now (its arguments are
            # functions), and call what it made like any other function
            args = [self.static_value(a, scope) for a in e.args]
            kws = {k.arg: self.static_value(k.value, scope) for k in e.keywords}
            made = obj(*args, **kws)
            base = f"{obj.__name__}_{getattr(args[0] if args else None, '__name__', 'f')}"
            atom = ir.name(self.bind_ref(base, made))    # e.g. grad_g: called like g
            return self.to_name(atom, into) if into else atom
        if hasattr(obj, "staged") and hasattr(obj, "call_positional"):
            # a strop transform called inside: inline its generated code, which takes the
            # free variables it reads as trailing arguments (jit(vmap(f)): vmap(f)'s code)
            obj, e = self.with_defaults(obj, e, scope)
            inner = obj.plain or obj     # a transform inlined for arguments of any kind
            if hasattr(inner, "inlined"):   # f(*xs): staged for the arguments passed here
                st = inner.inlined(None if any(isinstance(a, gast.Starred) for a in e.args)
                                   else len(e.args))
            else:
                st = inner.staged()   # (custom rules know theirs)
            self.guards.extend(st.fn.guards)   # a function its code was made for rebound
            extra = [self.free_or_local(v) for v in st.fn.free.values()]
            return self.inline_object(st.generated.function, e, scope, into, extra)
        if getattr(obj, "__strop_custom__", False) and not self.keep_custom:
            # a custom_jvp/custom_vjp function where nothing differentiates: its primal
            return self.inline_object(obj.fun, e, scope, into)
        if _is_user_function(obj) or self.inline_helpers and _is_helper_without_rule(obj):
            return self.inline_object(obj, e, scope, into)
        if any(isinstance(a, gast.Starred) for a in e.args):
            raise self.unknown_star(e, scope)
        args = [self.expr(a, scope) for a in e.args]
        kws = [(k.arg, self.expr(k.value, scope)) for k in e.keywords]
        for atom in args + [v for _, v in kws]:   # a lambda given to a call left as it is
            if isinstance(atom, gast.Name) and atom.id in self.functions:
                self.materialize(atom.id, e, scope)
        args, kws = self.array_operands(obj, e.args, args, kws)
        if any(obj is it for it in ITERATORS):
            # an iterator as a value: a list, which its consumer and its adjoint can both read
            made = self.to_name(ir.call(callee, args, kws))
            return self.to_name(ir.call("list", [made]), into)
        return self.to_name(ir.call(callee, args, kws), into)

    def static_value(self, node, scope):
        """The value of an argument known when transforming: a constant, a bound object, or a
        local function (which cannot be passed to a transform: say so)."""
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, (gast.Tuple, gast.List)):
            return tuple(self.static_value(x, scope) for x in node.elts)
        atom = self.expr(node, scope)
        if self.is_ref(atom):
            return self.ref_object(atom)
        if isinstance(atom, gast.Name) and atom.id in self.functions:
            return self.lift(atom.id, node, scope)
        raise self.error("a strop transform inside a transformed function must be given a "
                         "function defined at module level (or a constant)", node, scope,
                         fix="define the function outside, or compose the transforms outside: "
                             "grad(grad(f))")

    def _names_ref(self, node, scope):
        """Whether ``node`` (a.b.c) names a module or other bound object rather than a value."""
        while isinstance(node, gast.Attribute):
            node = node.value
        if not isinstance(node, gast.Name):
            return False
        s = scope
        while s is not None:
            if node.id in s.names:
                return False
            s = s.parent
        kind, value = scope.parsed.resolve(node.id)
        return kind in (GLOBAL, CLOSURE, BUILTIN) and ir.is_constant_object(value)

    def comprehension(self, e, scope, into):
        """``[elt for x in xs if c]`` as a loop appending to a local list (a temporary: in
        ``xs = [f(v) for v in xs]`` the loop reads the old ``xs``)."""
        target = self.namer.temp("_list")
        inner = Scope(scope.parsed, scope.node, {}, parent=scope)
        for gen in e.generators:
            for n in gast.walk(gen.target):
                if isinstance(n, gast.Name):
                    inner.names[n.id] = self.namer.fresh(n.id)
        is_dict = isinstance(e, gast.DictComp)
        self.emit(ir.assign(target, gast.Dict(keys=[], values=[]) if is_dict else
                            gast.List(elts=[], ctx=gast.Load())))
        if is_dict:
            body = gast.Assign(targets=[gast.Subscript(value=ir.name(target, True), slice=e.key,
                                                       ctx=gast.Store())],
                               value=e.value, type_comment=None)
        else:
            body = gast.Expr(value=ir.call(ir.attr(target, "append"), [e.elt]))
        for gen in reversed(e.generators):
            for cond in reversed(gen.ifs):
                body = gast.If(test=cond, body=[body], orelse=[])
            body = gast.For(target=gen.target, iter=gen.iter, body=[body], orelse=[],
                            type_comment=None)
        for n in gast.walk(body):
            if getattr(n, "lineno", None) is None and isinstance(n, (gast.stmt, gast.expr)):
                gast.copy_location(n, e)
        inner.names[target] = target
        wrapper = gast.FunctionDef(name="_comp", args=gast.arguments(
            args=[], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
            defaults=[]), body=[body], decorator_list=[], returns=None, type_comment=None,
            type_params=[])
        canon = canonicalize(wrapper, self.namer, scope.parsed.location)
        loc = self.loc
        for s in canon.body:
            self.loc = loc
            self.stmt(s, inner)
        self.loc = loc
        return self.to_name(ir.name(target), into) if into else ir.name(target)


def _is_helper_without_rule(obj):
    """A runtime helper with no derivative rule of its own (e.g. one inside a derivative
    template, met again by grad(grad(f))): differentiate its source, inlined."""
    from .rules import lookup
    module = getattr(obj, "__module__", "") or ""
    return (inspect.isfunction(obj) and module.startswith("strop.codegen.runtime")
            and lookup(obj) is None)


def _index_value(index):
    if isinstance(index, gast.Slice):
        parts = [p if p is not None else ir.const(None)
                 for p in (index.lower, index.upper, index.step)]
        if isinstance(parts[2], gast.Constant) and parts[2].value is None:
            parts.pop()
        return ir.call("slice", parts)
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[_index_value(x) for x in index.elts], ctx=gast.Load())
    return index


def _is_at(node):
    return (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute)
            and node.value.attr == "at")


def _is_atom(node):
    return isinstance(node, (gast.Name, gast.Constant))


def _is_local(user_name, scope):
    s = scope
    while s is not None:
        if user_name in s.names:
            return True
        s = s.parent
    return False


def _as_load(node):
    node = ir.clone(node)
    for n in gast.walk(node):
        if hasattr(n, "ctx"):
            n.ctx = gast.Load()
    return node


def _as_store(node):
    node = ir.clone(node)
    node.ctx = gast.Store()
    return node


def normalize(parsed, check=None, inline_helpers=True, keep_custom=True):
    """``inline_helpers``: inline runtime helpers that have no derivative rule (for a
    transform that differentiates the code; compiled code calls them instead).
    ``keep_custom``: keep calls of custom_jvp/custom_vjp functions (whose rules a derivative
    uses) rather than inline their primal function."""
    n = Normalizer(parsed, check)
    n.inline_helpers = inline_helpers
    n.keep_custom = keep_custom
    return n.function()
