"""The adjoint code as reverse mode builds it: a tree of chunks, one per forward statement,
so that tape pops can be added to a statement's chunk after the whole sweep is known; and
the two backward analyses over that tree (dead adjoints, names read later)."""
import copy

import gast

from . import analysis


class Chunk(list):
    """The adjoint statements of one forward statement; ``restore`` is where its tape pop goes;
    ``writes``: the names the statement overwrites, which a pop may put back there."""

    def __init__(self, items=(), restore=None):
        super().__init__(items)
        self.inline_restore = restore is not None    # the restore Chunk is among the items
        self.restore = restore if restore is not None else []
        self.writes = set()

    def may_restore(self):
        """Whether a tape pop may be added here (a name it overwrites is read after it)."""
        live = self.restore.live_end if self.inline_restore else self.live_end
        return bool(self.writes & live)


class Context:
    """A block whose statements run once per instance: the function body, or a loop body."""

    def __init__(self, stmts, loop=None):
        self.stmts, self.loop = stmts, loop
        self.chunks = {}        # id(forward statement) -> Chunk
        self.children = {}      # id(loop statement) -> its Context (the latest generated)
        self.reverse = []       # the adjoint code of this context (chunks, nested)
        self.start = []         # statements to run first in each backward iteration


def flatten(items, live_only=False):
    """The statements of nested chunks, in order; the leaf statements are the originals (so
    that marks set on them stick); ``live_only`` drops statements marked dead."""
    out = []
    for it in items:
        if isinstance(it, Chunk):
            out.extend(flatten(it, live_only))
            if not it.inline_restore:
                out.extend(flatten(it.restore, live_only))
        elif isinstance(it, (gast.If, gast.For)):
            new = copy.copy(it)
            new.body, new.orelse = flatten(it.body, live_only), flatten(it.orelse, live_only)
            if live_only and not new.body and not new.orelse:
                continue
            new.body = new.body or [gast.Pass()]
            out.append(new)
        elif not (live_only and getattr(it, "dead", False)):
            out.append(it)
    return out


def annotate_live(items, live):
    """Backward liveness over the adjoint code's chunk tree: each chunk learns the names read
    after it (``live_end``); returns the names live before ``items``."""
    for it in reversed(items):
        if isinstance(it, Chunk):
            if not it.inline_restore:
                live = annotate_live(it.restore, live)
            it.live_end = set(live)
            live = annotate_live(list(it), live)
        elif isinstance(it, gast.If):
            live = annotate_live(it.body, set(live)) | annotate_live(it.orelse, set(live))
            # an if left with no code is dropped, unless a pop may go in it later: then its
            # test is read, and must be taped as any other value the adjoint reads
            if flatten([it], live_only=True) or _may_restore(it.body + it.orelse):
                live |= analysis.reads(it)
        elif isinstance(it, gast.For):   # its range is evaluated once, before the loop
            head = set(live)
            while True:
                new = head | (annotate_live(it.body, set(head)) - {it.target.id})
                if new == head:
                    break
                head = new
            live = head | analysis.reads(it)
        elif isinstance(it, gast.Assign):
            if not getattr(it, "dead", False):
                live = (live - {it.targets[0].id}) | analysis.reads(it)
        else:
            live = live | analysis.reads(it)
    return live


def _may_restore(items):
    for it in items:
        if isinstance(it, Chunk) and (it.may_restore() or _may_restore(it) or
                                      not it.inline_restore and _may_restore(it.restore)):
            return True
        if isinstance(it, (gast.If, gast.For)) and _may_restore(it.body + it.orelse):
            return True
    return False


def mark_dead(stmts, live, pure):
    """Mark assignments to the ``pure`` names (adjoints, temporaries) whose value is never read
    again; returns the names live before ``stmts``."""
    for s in reversed(stmts):
        if isinstance(s, gast.Assign):
            t = s.targets[0].id
            s.dead = t in pure and t not in live and not getattr(s, "effect", False)
            if not s.dead:
                live = (live - {t}) | analysis.reads(s)
        elif isinstance(s, gast.If):
            live = (mark_dead(s.body, set(live), pure) | mark_dead(s.orelse, set(live), pure)
                    | analysis.reads(s))
        elif isinstance(s, gast.For):
            head = set(live)
            while True:
                new = head | (mark_dead(s.body, set(head), pure) - {s.target.id})
                if new == head:
                    break
                head = new
            live = head | analysis.reads(s)
        else:
            live = live | analysis.reads(s)
    return live
