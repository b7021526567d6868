"""The transform-time KeyReuseWarning: a PRNG key consumed twice without a split gives the
same random numbers twice, silently (JAX's sharp bit)."""
import sys
import warnings

import gast

from ..errors import KeyReuseWarning


def _consumers():
    if "strop.rng" not in sys.modules:   # then no code can refer to its functions
        return set()
    from .. import rng
    from ..rng import keys, samplers
    makers = ("PRNGKey", "key", "key_data", "wrap_key_data", "fold_in", "KERNELS")
    names = [n for n in rng.__all__ if n not in makers]   # (they make keys, consume none)
    return {id(getattr(mod, n)) for n in names for mod in (rng, keys, samplers)
            if hasattr(mod, n)}


def check_key_reuse(fn):
    """Warn (once per place) where ``fn`` may consume the same key twice."""
    consumers = _consumers()
    seen = set()

    def consumed_key(s):
        call = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
        if not isinstance(call, gast.Call) or id(fn.callee(call.func)) not in consumers:
            return None
        key = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg == "key"), None)
        return key.id if isinstance(key, gast.Name) else None

    def warn(name, first, again):
        if (first, again) in seen:
            return
        seen.add((first, again))
        name = fn.user_names.get(name, name)   # key, not the inliner's key_1
        where = f"line {first.lineno}" if first and again and first.filename == again.filename \
            else str(first)
        warnings.warn(KeyReuseWarning(
            f"the PRNG key `{name}` was already used at {where}; using it again here gives the "
            f"same random numbers", again,
            fix=f"split it first: `{name}, sub = strop.random.split({name})`, and use `sub`"),
            stacklevel=6)

    def block(stmts, used):
        for s in stmts:
            key = consumed_key(s)
            if key is not None:
                if key in used:
                    warn(key, used[key], s.loc)
                used[key] = s.loc
            if isinstance(s, gast.Assign):
                for t in s.targets:
                    if isinstance(t, gast.Name):
                        used.pop(t.id, None)
            elif isinstance(s, gast.If):
                a, b = block(s.body, dict(used)), block(s.orelse, dict(used))
                used = {**a, **b}
            elif isinstance(s, (gast.For, gast.While)):
                once = block(s.body, dict(used))
                block(s.body, dict(once))   # a second iteration sees what the first used
                used = {**used, **once}
        return used

    block(fn.node.body, {})
