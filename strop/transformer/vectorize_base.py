"""What vectorize, lanes and wide share: vmap's errors, and the companion functions that run
one lane (or a group of lanes) of the batch."""
import gast


class NotBatchable(Exception):
    def __init__(self, reason, loc=None):
        super().__init__(reason)
        self.reason, self.loc = reason, loc


class OutAxesError(Exception):
    def __init__(self, loc):
        super().__init__("out_axes is None for an output that differs between lanes")
        self.loc = loc


def companion(name, params, body, loc):
    """The function one lane runs: ``body`` with ``params``."""
    node = gast.FunctionDef(name=name, args=gast.arguments(
        args=[gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
              for n in params], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
        kwarg=None, defaults=[]), body=body, decorator_list=[], returns=None,
        type_comment=None, type_params=[])
    node.loc = loc
    node.doc = "One lane of the batch: the user's code for one example."
    return node


def ordered(names, stmts):
    """``names`` in the order they first appear in ``stmts`` (generated code is stable)."""
    seen = []
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and n.id in names and n.id not in seen:
                seen.append(n.id)
    return seen
