"""ir.guards_check: whether the functions and modules generated code bound as constants are
still what the user's globals and closures hold, checked before every call."""
import numpy as np

from strop.transformer.ir import FreeVar, guards_check


def _cell(value):
    return (lambda: value).__closure__[0]


def test_guards_hold_until_a_global_is_rebound_or_deleted():
    space = {"np": np, "f": len, "g": abs}
    cell = _cell(max)
    guards = [FreeVar(n, space, False).guard(space[n]) for n in ("np", "f", "g")] + [
        FreeVar("h", cell, True).guard(max)]
    hold = guards_check(guards)
    assert hold()
    space["f"] = len      # rebound to the same object: still holds
    assert hold()
    space["g"] = min
    assert not hold()
    space["g"] = abs
    assert hold()
    del space["np"]
    assert not hold()


def test_a_closure_guard_is_checked_too():
    cell = _cell(max)
    hold = guards_check([FreeVar("only", {"only": len}, False).guard(len),
                         FreeVar("h", cell, True).guard(min)])
    assert not hold()     # the cell holds max, the code was made with min
    assert guards_check([])()
