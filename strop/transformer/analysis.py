"""Dataflow facts over normalized (structured) code: reads, writes, liveness, definedness."""
import gast

from strop.transformer import ir


def reads(node):
    """Names read by ``node`` (a statement's own expressions, not nested statement bodies)."""
    if isinstance(node, (gast.If, gast.While)):
        parts = [node.test]
    elif isinstance(node, gast.For):
        parts = [node.iter]
    elif isinstance(node, gast.Assign):
        parts = [node.value] + [t for t in node.targets if not isinstance(t, gast.Name)]
    else:
        parts = [node]
    return set().union(*(ir.names_in(p, gast.Load) for p in parts))


def writes(node):
    """Names a statement assigns, its nested bodies included (statements only: normalized
    code assigns nowhere else)."""
    out, todo = set(), [node]
    while todo:
        n = todo.pop()
        if isinstance(n, gast.Assign):
            out |= {t.id for t in n.targets if isinstance(t, gast.Name)}
        elif isinstance(n, gast.For):
            out.add(n.target.id)
        todo.extend(getattr(n, "body", ()))
        todo.extend(getattr(n, "orelse", ()))
    return out


def block_writes(stmts):
    return set().union(*(writes(s) for s in stmts)) if stmts else set()


def live_in(stmts, live_out):
    """Names live before ``stmts`` given those live after (backward, loops to a fixpoint)."""
    live = set(live_out)
    for s in reversed(stmts):
        live = _live_stmt(s, live)
    return live


def _live_stmt(s, live):
    if isinstance(s, gast.Return):
        return reads(s)
    if isinstance(s, gast.Assign):
        return (live - {t.id for t in s.targets if isinstance(t, gast.Name)}) | reads(s)
    if isinstance(s, gast.If):
        return live_in(s.body, live) | live_in(s.orelse, live) | reads(s)
    if isinstance(s, (gast.While, gast.For)):
        # live at the loop head: after it (its else too), or into another iteration; a while
        # test is read at every head, a for's range once before the loop
        head = set(live) | live_in(s.orelse, live) | (
            reads(s) if isinstance(s, gast.While) else set())
        while True:
            body_in = live_in(s.body, head)
            if isinstance(s, gast.For):
                body_in.discard(s.target.id)
            new = head | body_in
            if new == head:
                return head | reads(s)
            head = new
    return live | reads(s)


def live_after(stmts, live_out=(), out=None):
    """{id(statement): names live after it} for ``stmts`` and every nested body (a loop
    body's end: what is live at the loop's head, its iterable's reads too)."""
    out = {} if out is None else out
    live = set(live_out)
    for s in reversed(stmts):
        out[id(s)] = live
        if isinstance(s, gast.If):
            live_after(s.body, live, out)
            live_after(s.orelse, live, out)
        elif isinstance(s, (gast.While, gast.For)):
            live_after(s.body, _live_stmt(s, live), out)
            live_after(s.orelse, live, out)
        live = _live_stmt(s, live)
    return out


def carried(loop):
    """Names a loop body reads before (re)defining them: values flowing between iterations."""
    body_in = live_in(loop.body, set())
    if isinstance(loop, gast.For):
        body_in.discard(loop.target.id)
    return body_in & block_writes(loop.body)


def definitely_assigned(stmts, defined):
    """Names surely defined after ``stmts`` given those surely defined before."""
    d = set(defined)
    for s in stmts:
        if isinstance(s, gast.Assign):
            d |= {t.id for t in s.targets if isinstance(t, gast.Name)}
        elif isinstance(s, gast.If):
            d |= definitely_assigned(s.body, d) & definitely_assigned(s.orelse, d)
    return d


SCALAR_CALLS = (float, abs, int, len, pow, round, min, max)
