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


def live_in(stmts, live_out, jump=None):
    """Names live before ``stmts`` given those live after (backward, loops to a fixpoint).
    ``jump``: the names live where a break or continue goes (both taken as going to either
    end of the innermost loop); None: they fall through, as in the passes written before."""
    live = set(live_out)
    for s in reversed(stmts):
        live = _live_stmt(s, live, jump)
    return live


def _live_stmt(s, live, jump=None):
    if isinstance(s, gast.Return):
        return reads(s)
    if isinstance(s, (gast.Break, gast.Continue)) and jump is not None:
        return set(jump)
    if isinstance(s, gast.Assign):
        return (live - {t.id for t in s.targets if isinstance(t, gast.Name)}) | reads(s)
    if isinstance(s, gast.If):
        return live_in(s.body, live, jump) | live_in(s.orelse, live, jump) | reads(s)
    if isinstance(s, (gast.While, gast.For)):
        return _loop_head(s, live, jump) | reads(s)
    return live | reads(s)


def _loop_head(s, live, jump):
    """Names live at a loop's head: after it (its else too), or into another iteration; a
    while test is read at every head, a for's range once before the loop."""
    head = set(live) | live_in(s.orelse, live, jump) | (
        reads(s) if isinstance(s, gast.While) else set())
    while True:
        body_in = live_in(s.body, head, head if jump is not None else None)
        if isinstance(s, gast.For):
            body_in.discard(s.target.id)
        new = head | body_in
        if new == head:
            return head
        head = new


def live_after(stmts, live_out=(), out=None, jump=frozenset()):
    """{id(statement): names live after it} for ``stmts`` and every nested body (a loop
    body's end: what is live at the loop's head, its iterable's reads too), a break or
    continue going to the end or the head of its loop."""
    out = {} if out is None else out
    _marked_live_in(stmts, set(live_out), out, jump)
    return out


def _marked_live_in(stmts, live, out, jump):
    """live_in of ``stmts``, each statement's live names after it recorded in ``out``."""
    for s in reversed(stmts):
        out[id(s)] = live
        if isinstance(s, gast.If):
            live = _marked_live_in(s.body, live, out, jump) | _marked_live_in(
                s.orelse, live, out, jump) | reads(s)
        elif isinstance(s, (gast.While, gast.For)):
            head = _loop_head(s, live, jump) | reads(s)
            _marked_live_in(s.body, head, out, head)
            _marked_live_in(s.orelse, live, out, jump)
            live = head
        else:
            live = _live_stmt(s, live, jump)
    return live


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
