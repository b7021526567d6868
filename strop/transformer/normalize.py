"""A-normal form: one operation per assignment, named temporaries, calls to user functions
inlined, local mutation rewritten into functional updates, array methods resolved.

Input: a parsed user function.  Output: an ``ir.Function`` whose statements are

    x = <atom> | <literal> | a op b | op a | a cmp b | f(atoms) | a[index] | a.attr | {k: v}
    if <atom>: ...      while <name>: ... (test recomputed at the end of the body)
    for i in range(<atoms>): ...      f(atoms)  (print and other calls for effect)
    return <atom or literal>          (once, last)

where an atom is a name, a constant or a reference to a bound object (``np.pi``).
"""
import gast
import numpy as np

from .. import runtime, tree_util
from ..errors import StropError, TransformError
from . import ir
from .call_kinds import CallKinds, RanksChanged
from .carried import (CarriedChanged, after_loop, begin_trip, carried_names, display_parameters,
                      end_trip, peel_first_trip)
from .controlflow import ITERABLE, canonicalize
from .inline import Inliner, Scope
from .lax_lower import LaxLowering
from .lax_trees import _KEY, ARRAY, NONE, PYTREE, forget
from .parse import BUILTIN, CLOSURE, UNDEFINED
from .normalize_calls import Calls, is_local
from .normalize_exprs import UNSUPPORTED, Expressions, _index_value
from .nested import Nested
from .normalize_trees import Trees
from .operands import Operands
from .spread import Spreader

# NumPy functions that write into their first argument -> the functional runtime helper
INPLACE_NUMPY = {np.add.at: "at_add", np.multiply.at: "at_multiply", np.maximum.at: "at_max",
                 np.minimum.at: "at_min", np.put_along_axis: "put_along_axis",
                 np.copyto: "copyto"}


_UNKNOWN = object()
_COMPARE = {gast.Is: lambda a, b: a is b, gast.IsNot: lambda a, b: a is not b,
            gast.Eq: lambda a, b: a == b, gast.NotEq: lambda a, b: a != b}


class Normalizer(LaxLowering, Expressions, Calls, Nested, Inliner, Spreader, Operands,
                 Trees, CallKinds):
    """One function normalized: the entry, names and statements are here; expressions
    (normalize_exprs), calls (normalize_calls), inlining (inline), spread arguments (spread)
    and sequence operands (operands) are mixins."""

    def __init__(self, parsed, check=None):
        self.root = parsed
        self.check = check
        self.namer = ir.Namer()
        self.refs, self.free = {}, {}
        self.ref_ids = {}        # id(obj) -> bound name
        self.inlining = []       # functions being inlined (recursion check)
        self.leaf_params = set()  # parameters the call gave an array or a number
        self.functions = {}      # generated name -> (FunctionDef or Lambda node, its Scope)
        self.partials = {}       # generated name -> (function, args, keywords) it binds
        self.deferred = {}       # generated name -> the transform of a partial it names
        self.guards = []         # (owner, name, object) of the functions and modules bound
        self.inline_helpers = True
        self.keep_custom = True  # custom_jvp/custom_vjp calls stay calls (for their rules)
        self.out = None          # the statement list being filled
        self.outer = []          # the lists of the blocks around it, innermost last
        self.loc = None          # the user location of the statement being normalized
        self.displays = {}       # name -> length or keys of the display it holds (spread.py)
        self.lifted = {}         # id(cell) -> a local a lifted local function reads (inline.py)
        self.constants = {}      # generated name -> the constant an inlined parameter holds
        self.classes = {}        # parameter -> the registered pytree class its argument is
        self.user_names = {}     # an inlined function's renamed local -> its name there
        self.sequences = set()   # parameters given a list or tuple, never rebound
        self.trees = {}          # parameter -> the structure of its argument, never rebound
        self.tree_orders = {}    # such a parameter -> flatten.dict_orders of its argument
        self.statics = {}        # parameter -> the function or constant a partial binds
        self.param_kinds = None  # parameter -> its kind, for nested transforms (call_kinds)
        self.assumed = {}        # name -> the rank a nested transform was staged for
        self.rebound = set()     # the names the function assigns
        self.unsteady = set()    # (loop, name) that do not keep their structure (carried.py)
        self.rebound_trees = {}  # parameter rebound -> (its argument's structure, leaf kinds)
        self.leaf_kinds = {}     # name bound to a pytree's leaf of a known kind -> the kind
        self.carried = []        # what the loop body made last carries leaf by leaf

    # --- entry -----------------------------------------------------------------------------
    def function(self):
        parsed = self.root
        for n in parsed.local_names:
            self.namer.reserve(n)
        scope = Scope(parsed, parsed.node, {n: n for n in parsed.local_names})
        for name, value in self.statics.items():   # bound by a partial: known
            if isinstance(value, (bool, int, float, str, type(None))):
                self.constants[name] = value       # (a branch on it is taken or dropped)
            else:
                scope.names[name] = self.bind_ref(name, value)
        node = canonicalize(parsed.node, self.namer, parsed.location)
        args = node.args
        if args.kwarg:
            raise TransformError("** parameters are not supported yet", parsed.location(node),
                                 fix="make them positional or keyword-only parameters")
        # the api passes arguments in this order: positional, *args (spread at the boundary,
        # transformer/flatten.py), keyword-only
        params = [a.id for a in args.posonlyargs + args.args] + (
            [args.vararg.id] if args.vararg else []) + [a.id for a in args.kwonlyargs]
        for p in self.leaf_params:   # an array or a number: never a container
            self.displays[(ARRAY, p)] = True
        for p, treedef in self.trees.items():
            if _plain(treedef):   # (a namedtuple or a class: a node its structure keeps whole)
                self.displays[(PYTREE, p)] = True
        self.out, self.loc = [], parsed.location(parsed.node)
        display_parameters(self, self.rebound_trees)
        body = self.out + self.block(node.body, scope)
        self.check_assumed(body)
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
                           guards=tuple(self.guards), user_names=dict(self.user_names))

    def block(self, stmts, scope, loop=False):
        """The statements of a nested block; ``loop``: a loop body, entered with nothing
        known of the displays of the names it assigns (a later iteration may have rebound
        them): what a name bound before the loop holds, and the loop never rebinds, stays
        known (``**kwargs`` spread in a loop over layers)."""
        carried = []
        if loop and stmts:
            stored = _changed_names(stmts)
            mine = {self.scoped_name(n, scope) for n in stored} - {None}
            carried = carried_names(self, mine, str(scope.parsed.location(stmts[0])))
        saved, self.out = self.out, []
        self.outer.append(saved)
        known = self.displays
        if loop and stmts:
            self.displays = forget(self.displays, stored | mine)
            begin_trip(self, carried)
        else:
            self.displays = dict(self.displays)
        try:
            try:
                for s in stmts:
                    self.loc = scope.parsed.location(s)
                    self.stmt(s, scope)
            except StropError:   # (an error a structure assumed for a later trip may cause:
                if carried:      # ``f(*t)`` with t longer after the first) again, without it
                    raise CarriedChanged(carried[0].key) from None
                raise
            end_trip(self, carried)
            self.carried = carried   # (the loop's statement is emitted next: after_loop)
            return self.out
        finally:
            self.outer.pop()
            self.out, self.displays = saved, known

    def static_test(self, e, scope):
        """The truth of ``e`` if it reads only constants and inlined parameters bound to
        constants (and is not, on ``is``, ``==``, ``not``, ``and``, ``or``), else None."""
        value = self._static(e, scope)
        return None if value is _UNKNOWN else bool(value)

    def _static(self, e, scope):
        if isinstance(e, gast.Constant):
            return e.value
        if isinstance(e, gast.Name) and isinstance(e.ctx, gast.Load):
            s = scope
            while s is not None and e.id not in s.names:
                s = s.parent
            return self.constants.get(s.names[e.id], _UNKNOWN) if s is not None else _UNKNOWN
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.Not):
            v = self._static(e.operand, scope)
            return _UNKNOWN if v is _UNKNOWN else not v
        if isinstance(e, gast.BoolOp):
            values = [self._static(v, scope) for v in e.values]
            if any(v is _UNKNOWN for v in values):
                return _UNKNOWN
            return all(values) if isinstance(e.op, gast.And) else any(values)
        if isinstance(e, gast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in _COMPARE:
            a, b = self._static(e.left, scope), self._static(e.comparators[0], scope)
            if a is _UNKNOWN or b is _UNKNOWN:
                return _UNKNOWN
            return _COMPARE[type(e.ops[0])](a, b)
        if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and len(e.args) == 2 \
                and not e.keywords and self.scoped_name(e.func.id, scope) is None and \
                scope.parsed.resolve(e.func.id) == (BUILTIN, isinstance):
            return self.static_isinstance(e.args[0], e.args[1], scope)
        return _UNKNOWN

    def static_isinstance(self, x, classinfo, scope):
        """``isinstance(x, classinfo)`` where the structure of ``x`` decides it when
        transforming: a display's or a pytree argument's (list, tuple, dict), or a container
        class asked of a value never a container (an array or number parameter, a pytree
        argument's leaf, what NumPy makes): what a recursion over a pytree tests to end."""
        classes = self.static_classes(classinfo, scope)
        gen = self.scoped_name(x.id, scope) if isinstance(x, gast.Name) else None
        if classes is None or gen is None:
            return _UNKNOWN
        shape = self.displays.get((_KEY, gen))
        if not shape and (PYTREE, gen) in self.displays:   # a pytree parameter
            shape = self.static_shape(ir.name(gen))
        if shape == NONE:
            return issubclass(type(None), classes)
        if shape:
            return issubclass(shape[2] if len(shape) == 3 and shape[0] == "tuple" else
                              {"list": list, "tuple": tuple, "dict": dict}[shape[0]], classes)
        if (ARRAY, gen) in self.displays and all(c in (list, tuple, dict) for c in classes):
            return False
        return _UNKNOWN

    def static_classes(self, node, scope):
        """The tuple of classes ``node`` (isinstance's second argument) names, or None."""
        if isinstance(node, gast.Tuple):
            parts = [self.static_classes(e, scope) for e in node.elts]
            return None if any(p is None for p in parts) else sum(parts, ())
        if isinstance(node, gast.Name) and self.scoped_name(node.id, scope) is None:
            obj = scope.parsed.resolve(node.id)[1]
        elif isinstance(node, gast.Attribute) and self._names_ref(node, scope):
            obj = self.ref_object(self.expr(node, scope))
        else:
            return None
        return (obj,) if isinstance(obj, type) else None

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
                if s.names[user_name] in self.constants:   # an inlined parameter's constant
                    return ir.const(self.constants[s.names[user_name]])
                if s.names[user_name] in self.partials:   # a partial used as a value
                    self.made_partial(s.names[user_name])
                return ir.name(s.names[user_name])
            s = s.parent
        kind, value = scope.parsed.resolve(user_name)
        if kind == BUILTIN:
            return ir.name(user_name)
        if kind == UNDEFINED:
            raise self.error(f"name {user_name!r} is not defined", node, scope)
        owner = scope.parsed.cells[user_name] if kind == CLOSURE else scope.parsed.globals
        return self.global_atom(user_name, owner, value, scope, node, kind == CLOSURE)

    def global_atom(self, user_name, owner, value, scope, node, is_cell=False):
        """A global, closure variable or attribute of a user's module, as generated code reads
        it: a function, module, treedef, user object or static table bound once (a guard
        notices when it is rebound, to transform again), a small container of numbers written
        as a display (its structure is static: loops over it unroll), other data passed in on
        every call."""
        var = ir.FreeVar(user_name, owner, is_cell)
        if ir.is_number_structure(value):
            self.guards.append(ir.ContentsGuard(var, value, ir.frozen(value)))
            made = ir.display(value)
            for n in gast.walk(made):   # (at the line that reads it)
                gast.copy_location(n, node)
            return self.expr(made, scope, into=self.namer.fresh(user_name))
        if ir.is_function_table(value):   # its items are known while transforming
            self.guards.append(ir.ItemsGuard(var, value, tuple(value)))
            return ir.name(self.bind_ref(user_name, value))
        if ir.is_static_table(value):   # read with constant keys while transforming
            self.guards.append(ir.ContentsGuard(var, value, ir.frozen(value)))
            return ir.name(self.bind_ref(user_name, value))
        if ir.is_user_object(value):   # its attributes are read while transforming
            self.guards.append(var.guard(value))
            return ir.name(self.bind_ref(user_name, value))
        if isinstance(value, tree_util.PyTreeDef):   # a structure: known while transforming
            self.guards.append(ir.EqualGuard(var, value))
            return ir.name(self.bind_ref(user_name, value))
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
            if len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) and (
                    self.bind_partial(s.targets[0].id, s.value, scope) or
                    self.bind_transform_of_partial(s.targets[0].id, s.value, scope)):
                return
            into = s.targets[0].id if len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name) and not self.makes_transform(s.value, scope) else None
            value = self.expr(s.value, scope, into=self.store_name(into, scope) if into else None)
            for t in s.targets if into is None else ():
                self.assign(t, value, scope)
            if into and self.out and isinstance(self.out[-1], gast.Assign) and \
                    self.out[-1].targets[0].id == scope.names.get(into) and \
                    self.names_function(self.out[-1].value, into, scope):
                # d = FUNCTIONS[k]: d names that function (called, it is inlined)
                scope.names[into] = self.ref_name(self.out.pop().value)
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
        elif kind is gast.If and self.static_test(s.test, scope) is not None:
            # a test of constants passed to an inlined function (``if where is None``): the
            # branch taken, alone (the other may not type-check for these arguments)
            for t in s.body if self.static_test(s.test, scope) else s.orelse:
                self.loc = scope.parsed.location(t)
                self.stmt(t, scope)
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
            carried = self.carried
            if cond:
                saved, self.out, self.loc = self.out, body, loc
                self.outer.append(saved)
                known, self.displays = self.displays, {}
                self.expr(s.test, scope, into=cond)
                self.outer.pop()
                self.out, self.displays = saved, known
            self.loc = loc
            self.emit(gast.While(test=test, body=body or [gast.Pass()], orelse=[]))
            after_loop(self, carried)
        elif kind is gast.For and (trips := self.trips_over_functions(s, scope)) is not None:
            # for f, p in zip(FUNCTIONS, params): each trip calls another function, inlined:
            # one copy of the body per trip, the counter a constant in each
            target = self.store_name(s.target.id, scope)
            for i in range(trips):
                self.emit(ir.assign(target, ir.const(i)))
                self.constants[target] = i
                for b in s.body:
                    self.loc = scope.parsed.location(b)
                    self.stmt(b, scope)
            self.constants.pop(target, None)
        elif kind is gast.For:
            it = s.iter
            args = [self.expr(a, scope) for a in it.args]
            target = self.store_name(s.target.id, scope)
            loc = self.loc
            args = peel_first_trip(self, s, scope, target, args)
            self.loc = loc
            body = self.block(s.body, scope, loop=True)
            carried = self.carried
            self.loc = loc
            self.emit(gast.For(target=ir.name(target, store=True), iter=ir.call("range", args),
                               body=body or [gast.Pass()], orelse=[], type_comment=None))
            after_loop(self, carried)
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

    def names_function(self, value, user_name, scope):
        """Whether ``user_name = value`` binds, once in its function, a function known while
        transforming (``value`` a reference to it, or to a module's attribute:
        ``tree_map = tree_util.tree_map``), a tree's structure (tree_flatten's), a user object
        or a static table (``layer = LAYERS[0]``)."""
        if not (isinstance(value, gast.Name) and value.id in self.refs or
                isinstance(value, gast.Attribute) and self.is_ref(value)):
            return False
        obj = self.ref_object(value)
        return (callable(obj) or isinstance(obj, tree_util.PyTreeDef) or ir.is_user_object(obj)
                or ir.is_static_table(obj)) and self.bound_once(user_name, scope)

    def ref_name(self, value):
        """The name of the reference ``value`` (a name, or a module's attribute bound now)."""
        if isinstance(value, gast.Name):
            return value.id
        obj = self.ref_object(value)
        return self.bind_ref(getattr(obj, "__name__", value.attr), obj)

    def makes_transform(self, value, scope):
        """Whether ``value`` is a call of a strop transform (``f = vmap(g)``: f names what it
        makes, assign())."""
        return isinstance(value, gast.Call) and isinstance(
            value.func, (gast.Name, gast.Attribute)) and self._names_ref(value.func, scope) \
            and getattr(self.ref_object(self.expr(value.func, scope)), "__strop_transform__",
                        False)

    def assign(self, target, value, scope):
        if isinstance(target, gast.Name) and isinstance(value, gast.Name) and \
                value.id in self.functions:   # f, g = make() of nested defs: names for them
            self.functions[self.store_name(target.id, scope)] = self.functions[value.id]
        elif isinstance(target, gast.Name) and self.names_function(value, target.id, scope):
            # f = vmap(g) (a function made while transforming), bound once: f names it
            scope.names[target.id] = self.ref_name(value)
        elif isinstance(target, gast.Name):
            self.emit(ir.assign(self.store_name(target.id, scope), value))
        elif isinstance(target, (gast.Tuple, gast.List)) and any(
                isinstance(e, gast.Starred) for e in target.elts):
            self.starred_assign(target, value, scope)
        elif isinstance(target, (gast.Tuple, gast.List)):
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

    def starred_assign(self, target, value, scope):
        """``a, *rest, z = seq`` as ``a = seq[0]``, ``rest = list(seq[1:-1])``, ``z = seq[-1]``
        (a list or tuple, as parameters' layers are: ``*hidden, last = params``)."""
        star = [i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
        if len(star) != 1:
            raise self.error("two starred expressions in one assignment", target, scope)
        k, m = star[0], len(target.elts) - star[0] - 1
        seq = value if isinstance(value, gast.Name) else self.to_name(value)
        for i, elt in enumerate(target.elts):
            if i == k:
                part = self.to_name(gast.Subscript(value=ir.clone(seq), slice=gast.Slice(
                    lower=ir.const(k) if k else None, upper=ir.const(-m) if m else None,
                    step=None), ctx=gast.Load()))
                self.assign(elt.value, self.to_name(ir.call("list", [part])), scope)
                continue
            item = ir.subscript(ir.clone(seq), ir.const(i if i < k else i - len(target.elts)))
            self.assign(elt, item if isinstance(elt, gast.Name) else self.to_name(item), scope)

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
        if into is not None and isinstance(value, gast.Name) and value.id in self.functions:
            self.functions[into] = self.functions[value.id]   # g = f, f a local function
            return ir.name(into)
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
        if not (isinstance(root, gast.Name) and is_local(root.id, scope)):
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
        if method not in self.MUTATORS or not isinstance(root, gast.Name) or not is_local(
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


def _is_atom(node):
    return isinstance(node, (gast.Name, gast.Constant))


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


def normalize(parsed, check=None, inline_helpers=True, keep_custom=True, classes=None,
              sequences=(), trees=None, statics=None, kinds=None):
    """``inline_helpers``: inline runtime helpers that have no derivative rule (for a
    transform that differentiates the code; compiled code calls them instead).
    ``keep_custom``: keep calls of custom_jvp/custom_vjp functions (whose rules a derivative
    uses) rather than inline their primal function.  ``sequences``: the parameters whose
    arguments are lists or tuples (NumPy reads them as arrays: operands.py); ``trees``:
    parameter -> the structure of its pytree argument (normalize_trees.py); ``statics``:
    parameter -> the function, module or other constant object a partial binds to it (read
    as that object while transforming: a transform of a lambda calling it sees it);
    ``kinds``: parameter -> the kind its call gave (a transform called inside is staged for
    what its arguments are known to be: call_kinds.py)."""
    stored = {s.id for s in gast.walk(parsed.node) if isinstance(s, gast.Name)
              and isinstance(s.ctx, (gast.Store, gast.Del))}

    def attempt(assume):
        n = Normalizer(parsed, check)
        n.inline_helpers = inline_helpers
        n.keep_custom = keep_custom
        n.classes = classes or {}
        n.sequences = set(sequences) - stored
        n.trees = {p: t for p, t in (trees or {}).items() if p not in stored}
        n.statics = {p: v for p, v in (statics or {}).items() if p not in stored}
        n.leaf_params = {p for p, k in (kinds or {}).items() if p not in stored and isinstance(
            k, str) and (k.startswith("array") or k in ("scalar", "int"))}
        if assume:
            n.param_kinds, n.rebound = dict(kinds or {}), stored
        n.unsteady = unsteady
        n.tree_orders = {p: kinds[p][3] for p in n.trees if type((kinds or {}).get(p)) is tuple}
        n.rebound_trees = {p: kinds[p][1:] for p in (trees or {})
                           if p in stored and type((kinds or {}).get(p)) is tuple}
        return n.function()
    unsteady = set()
    while True:
        try:
            try:
                return attempt(True)
            except RanksChanged:   # a name rebound after a nested transform was staged for it
                return attempt(False)
        except CarriedChanged as e:   # a loop changes what a name it carries holds: again,
            if e.key in unsteady:     # that name carried as it is
                raise AssertionError(f"internal: {e.key} changed twice") from None
            unsteady.add(e.key)


def _plain(treedef):
    """Whether every node of ``treedef`` is a list, tuple, dict or None."""
    return treedef.node_type in (None, list, tuple, dict, type(None)) and all(
        _plain(c) for c in treedef.children())


def _changed_names(stmts):
    """The names user statements may rebind or change: assigned or deleted, the root of an
    item or attribute assigned (``d["b"] = v``), the object of a method call
    (``out.append(v)``) and the first argument of a call through an attribute
    (``np.copyto(buf, v)``, ``np.add.at(x, i, v)``)."""
    out = set()
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
                out.add(n.id)
            elif isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(
                    n.ctx, (gast.Store, gast.Del)):
                out.add(_root(n))
            elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute):
                out.add(_root(n.func))
                if n.args:
                    out.add(_root(n.args[0]))
    return out - {None}


def _root(node):
    while isinstance(node, (gast.Subscript, gast.Attribute, gast.Starred)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None
