"""Oracles shared by the tests: central finite differences in float64."""
import numpy as np

from strop.transformer.rules import RULES, evaluate_vjp


def numeric_vjp(f, args, argnum, g, eps=1e-6):
    """d/dx_argnum of <g, f(*args)> by central differences (float64)."""
    x = np.array(args[argnum], dtype=np.float64)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        for sign in (1, -1):
            xp = x.copy()
            xp[i] += sign * eps
            a = list(args)
            a[argnum] = xp if np.ndim(args[argnum]) else xp[()]
            out[i] += sign * np.sum(np.asarray(g) * np.asarray(f(*a), np.float64))
    out /= 2 * eps
    return out if np.ndim(args[argnum]) else out[()]


def random_like(rng, value):
    return rng.standard_normal(np.shape(value))


def check_rule(fn, *args, key=None, argnums=None, rtol=1e-5, atol=1e-6, seed=0, **kwargs):
    """Check every differentiable argument's vjp template of ``fn`` against finite differences.
    Positional ``args`` that are floats or float arrays are differentiated unless ``argnums``."""
    key = fn if key is None else key
    rule = RULES[key]
    ans = fn(*args, **kwargs)
    g = random_like(np.random.default_rng(seed), ans)
    names = [n for n, _ in rule.params]
    if argnums is None:
        argnums = [i for i, a in enumerate(args)
                   if i < len(names) and names[i] in rule.vjps
                   and np.issubdtype(np.result_type(a), np.floating)]
    assert argnums, f"nothing to check for {fn}"
    for i in argnums:
        got = evaluate_vjp(key, names[i], g, ans, *args, **kwargs)
        want = numeric_vjp(lambda *a: fn(*a, **kwargs), args, i, g)
        assert np.shape(got) == np.shape(args[i]), (fn, i, np.shape(got), np.shape(args[i]))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=f"vjp of {fn} in argument {i}")
