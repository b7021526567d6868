"""A failure written as a standalone script: the program, the values, and the one comparison
that failed, as the oracle ran it (oracles.ORACLES' expressions, verbatim)."""
import re

import numpy as np

from .oracles import ORACLES


def literal(x):
    """Python source that rebuilds ``x`` exactly (floats print round-trip)."""
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):   # a namedtuple of the program
        inner = ", ".join(f"{k}={literal(v)}" for k, v in zip(x._fields, x))
        return f"{type(x).__name__}({inner})"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {literal(v)}" for k, v in x.items()) + "}"
    if isinstance(x, float) and not isinstance(x, np.floating):
        return repr(x)
    if isinstance(x, tuple):
        inner = ", ".join(literal(v) for v in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    if isinstance(x, list):
        return "[" + ", ".join(literal(v) for v in x) + "]"
    if x is None or isinstance(x, (int, str)):
        return repr(x)
    if isinstance(x, np.ndarray) and x.ndim:
        return f"np.array({x.tolist()!r})"
    return f"np.float64({float(x)!r})"


def _namedtuples(x, found):
    """The namedtuple types in the pytree ``x``, by name."""
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        found[type(x).__name__] = type(x)._fields
    if isinstance(x, dict):
        x = list(x.values())
    if isinstance(x, (list, tuple)):
        for v in x:
            _namedtuples(v, found)
    return found


def script(source, outcome, case, program, note=""):
    oracle = ORACLES[outcome.oracle]
    body = "\n".join(line for line in source.splitlines() if line != "import numpy as np")
    kind = f", {program.kind}" if getattr(program, "kind", None) else ""
    point = outcome.point if outcome.point is not None else case.points[0]
    values = {"args": point, "tangents": case.tangents, "argnums": case.argnums,
              "in_axes": case.in_axes, "lanes": case.lanes, "batched": case.batched,
              "cotangent": case.cotangent}
    used = [n for n in values if n in oracle.subject or n in oracle.reference]
    # a namedtuple the values are made of, whose definition minimizing took away
    classes = _namedtuples([values[n] for n in used], {})
    missing = [f"{name} = namedtuple({name!r}, {list(fields)!r})"
               for name, fields in classes.items() if not re.search(rf"^{name}\s*=", body, re.M)]
    if missing:
        body = "\n".join(["from collections import namedtuple"] + missing + [body])
    head = (f"strop fuzz failure: {outcome.oracle} -> {outcome.kind}"
            f"{' (' + outcome.error + ')' if outcome.error else ''}, "
            f"seed {program.seed}, program {program.index}{kind}{note}\n{outcome.detail}")
    return "\n".join([
        f'"""{head}',
        "",
        "Run: python <this file>; it fails while the bug is there.",
        '"""',
        "import numpy as np",
        "",
        "import strop",
        "from strop.testing.oracles import (assert_close, fd_grad, fd_hessian, fd_jvp, fd_vjp,",
        "                                   loop, reference_version)",
        "",
        body.strip(),
        "",
        "",
        *[f"{n} = {literal(values[n])}" for n in used],
        "",
        'if __name__ == "__main__":',
        '    strop.config.update("enable_x64", True)',
        f"    want = {oracle.reference}",
        f"    got = {oracle.subject}",
        f"    assert_close(got, want, rtol={oracle.rtol!r}, atol={oracle.atol!r})",
        "",
    ])
