"""Outer products a loop adds into one matrix, summed after the loop as one matrix product.

Reverse mode through ``h = np.tanh(w @ h + ...)`` in a loop adds ``outer(g, h)`` into ``w``'s
cotangent at every trip: a pass over the whole matrix for one multiply-add per element, so the
loop runs at the speed of the cache, and the matrix pushes the loop's other operands out of
it.  Where codegen/inplace.py proved the accumulator owned (its update is ``_inplace``) and no
other statement of a loop reads or binds it, the update becomes a ``_deferred`` one: compiled,
the trip's two vectors become rows of two buffers, which are added as one product (BLAS) when
full and after the loop.  The loop chosen is the outermost that qualifies, so a nest's trips
share the buffers.  As Python the helpers add each product at once.
"""
import gast

from .. import runtime
from ..transformer import ir
from ..transformer.ir import Namer, names_in
from .cpu import _bind, callee_of

DEFERRED = {runtime.add_matmul_vjp_x_inplace: runtime.add_matmul_vjp_x_deferred,
            runtime.add_matmul_vjp_y_inplace: runtime.add_matmul_vjp_y_deferred}


def defer_outer_products(node, refs):
    """Rewrite the accumulations of ``node`` (a lowered FunctionDef) described above."""
    names = names_in(node)
    local, namer = names - set(refs), Namer(names | set(refs))
    after = {}    # id(loop) -> the statements to put after it
    before = {}   # id(loop) -> the statements to put before it
    params = {a.id for a in node.args.args}
    for s, loops in _updates(node.body, (), refs, params):
        acc = s.targets[0].id
        loop = next((lp for lp, bound in loops if acc in bound and _only_update(lp, s, acc)),
                    None)
        if loop is None:
            continue
        terms, n = namer.fresh(f"_{acc}_terms"), namer.fresh(f"_{acc}_n")
        fn = DEFERRED[callee_of(s.value, refs)]
        held, make, add = (_bind(refs, f, f.__name__, local)
                           for f in (fn, runtime.outer_terms, runtime.add_terms))
        s.targets = [gast.Tuple(elts=[ir.name(acc, store=True), ir.name(n, store=True)],
                                ctx=gast.Store())]
        s.value = ir.call(held, [s.value.args[0], ir.name(terms), ir.name(n),
                                 *s.value.args[1:]])
        loc = getattr(loop, "loc", None)
        before.setdefault(id(loop), []).extend([
            ir.assign(terms, ir.call(make, [ir.name(acc)]), loc), ir.assign(n, ir.const(0), loc)])
        after.setdefault(id(loop), []).append(ir.assign(
            acc, ir.call(add, [ir.name(acc), ir.name(terms), ir.name(n)]), loc))
    if after:
        _insert(node, before, after)


def _updates(block, loops, refs, bound):
    """``(statement, enclosing loops outermost first)`` of each ``acc = <_inplace outer
    product update>(acc, ...)`` in a loop; each loop comes with the names bound before it
    (the parameters, and those the statements before it in its enclosing blocks bind)."""
    bound = set(bound)
    for s in block:
        if loops and isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and \
                isinstance(s.value, gast.Call) and callee_of(s.value, refs) in DEFERRED and \
                isinstance(s.value.args[0], gast.Name) and \
                s.value.args[0].id == s.targets[0].id:
            yield s, loops
        inner = loops + ((s, frozenset(bound)),) if isinstance(s, (gast.For, gast.While)) \
            else loops
        for field in ("body", "orelse", "finalbody"):
            yield from _updates(getattr(s, field, None) or [], inner, refs, bound)
        for h in getattr(s, "handlers", None) or []:
            yield from _updates(h.body, inner, refs, bound)
        bound |= names_in(s, gast.Store)


def _only_update(loop, s, acc):
    """Whether ``s`` is the only statement of ``loop`` that reads or binds ``acc``, and the
    loop ends only by finishing or ``break`` (its rows are added after it)."""
    if any(not isinstance(e, gast.Pass) for e in loop.orelse) or any(isinstance(n, (gast.Return, gast.Yield)) for n in gast.walk(loop)):
        return False
    mentions = sum(isinstance(n, gast.Name) and n.id == acc for n in gast.walk(loop))
    return mentions == 2   # (s's target and its first argument)


def _insert(node, before, after):
    """Put ``before[id(loop)]`` before each loop and ``after[id(loop)]`` after it."""
    for n in gast.walk(node):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if not isinstance(block, list) or not any(id(s) in after for s in block):
                continue
            out = []
            for s in block:
                out.extend(before.get(id(s), ()))
                out.append(s)
                out.extend(after.get(id(s), ()))
            block[:] = out
