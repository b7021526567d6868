"""Oracles shared by the tests: central finite differences in float64."""
import numpy as np

from strop.transformer.rules import RULES, evaluate_jvp, evaluate_vjp


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
    check_jvp(key, args, kwargs, {names[i]: args[i] for i in argnums}, g, ans, seed)


def check_grad(f, *args, argnums=0, rtol=1e-5, atol=1e-6, eps=1e-6, oracle=None):
    """``strop.grad(f, argnums)(*args)`` against central finite differences of ``f`` (float64,
    under ``enable_x64``).  ``argnums`` is an int or a tuple, as for ``grad``; the arguments
    differentiated must be floats or float arrays.  ``oracle``: a plain NumPy function equal to
    ``f``, differenced instead of ``f`` (for code only a transform runs, e.g. ``x.at[i]``).
    Returns strop's gradient."""
    import strop
    with strop.config.override(enable_x64=True):
        got = strop.grad(f, argnums=argnums)(*args)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    grads = (got,) if isinstance(argnums, int) else got
    assert isinstance(grads, tuple) and len(grads) == len(nums), (type(got), argnums)
    for i, gi in zip(nums, grads):
        want = numeric_vjp(oracle or f, args, i, 1.0, eps=eps)
        assert np.shape(gi) == np.shape(args[i]), (i, np.shape(gi), np.shape(args[i]))
        np.testing.assert_allclose(np.asarray(gi, np.float64), want, rtol=rtol, atol=atol,
                                   err_msg=f"d/d(argument {i}) of {f.__name__}")
    return got


def numeric_grad_tree(f, args, argnum, eps=1e-6):
    """Central differences of a scalar ``f`` in every float leaf of the pytree ``args[argnum]``
    (dicts, lists, tuples, namedtuples, None; objects with ``tree_flatten``/``tree_unflatten``
    methods), by a walk of its own: the result has the argument's structure."""
    def perturbed(tree, path, delta):
        if not path:
            a = np.array(tree, np.float64)
            a[path_index[0]] += delta
            return a if np.ndim(tree) else a[()]
        key, rest = path[0], path[1:]
        if isinstance(tree, dict):
            return {**tree, key: perturbed(tree[key], rest, delta)}
        if hasattr(tree, "tree_flatten"):
            children, aux = tree.tree_flatten()
            children = list(children)
            children[key] = perturbed(children[key], rest, delta)
            return type(tree).tree_unflatten(aux, children)
        items = list(tree)
        items[key] = perturbed(items[key], rest, delta)
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)

    def grad_at(tree, path):
        if tree is None:
            return None
        if isinstance(tree, dict):
            return {k: grad_at(v, path + (k,)) for k, v in tree.items()}
        if hasattr(tree, "tree_flatten"):
            children, aux = tree.tree_flatten()
            return type(tree).tree_unflatten(
                aux, [grad_at(c, path + (i,)) for i, c in enumerate(children)])
        if isinstance(tree, (list, tuple)):
            items = [grad_at(v, path + (i,)) for i, v in enumerate(tree)]
            return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
        out = np.zeros(np.shape(tree))
        for i in np.ndindex(np.shape(tree)):
            path_index[0] = i
            for sign in (1, -1):
                a = list(args)
                a[argnum] = perturbed(args[argnum], path, sign * eps)
                out[i] += sign * float(f(*a))
        out /= 2 * eps
        return out if np.ndim(tree) else out[()]

    path_index = [()]
    return grad_at(args[argnum], ())


def assert_tree_allclose(got, want, rtol=1e-5, atol=1e-6, path="arg"):
    """Same structure (types, dict keys, lengths, None) and close leaves."""
    if want is None:
        assert got is None, f"{path}: expected None, got {got!r}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{path}: {got!r} vs {want!r}"
        for k in want:
            assert_tree_allclose(got[k], want[k], rtol, atol, f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)) or hasattr(want, "tree_flatten"):
        assert type(got) is type(want), f"{path}: type {type(got)} vs {type(want)}"
        g = list(got.tree_flatten()[0]) if hasattr(want, "tree_flatten") else list(got)
        w = list(want.tree_flatten()[0]) if hasattr(want, "tree_flatten") else list(want)
        assert len(g) == len(w), f"{path}: length {len(g)} vs {len(w)}"
        for i, (a, b) in enumerate(zip(g, w)):
            assert_tree_allclose(a, b, rtol, atol, f"{path}[{i}]")
    else:
        assert np.shape(got) == np.shape(want), f"{path}: shape {np.shape(got)} vs {np.shape(want)}"
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol,
                                   err_msg=path)


def x64_fixture():
    """An autouse fixture for test modules that differentiate in float64:
    ``x64 = pytest.fixture(autouse=True)(x64_fixture)``."""
    import strop
    with strop.config.override(enable_x64=True):
        yield


# --- vjp checks of rules whose arguments or outputs are lists and tuples ---

def _leaves(tree):
    return list(tree) if isinstance(tree, (list, tuple)) else [tree]


def _random_cotangent(rng, ans):
    """A random cotangent shaped like ``ans`` (None for its integer parts)."""
    if isinstance(ans, (list, tuple)):
        parts = [_random_cotangent(rng, a) for a in ans]
        return parts if isinstance(ans, list) else tuple(parts)
    if np.issubdtype(np.result_type(ans), np.floating):
        return rng.standard_normal(np.shape(ans))
    return None


def _inner(g, out):
    if isinstance(g, (list, tuple)):
        return sum(_inner(gi, oi) for gi, oi in zip(g, out))
    return 0.0 if g is None else np.sum(g * np.asarray(out, np.float64))


def check_vjp(fn, args, where, key=None, rtol=1e-5, atol=1e-6, seed=0, **kwargs):
    """Check the vjp template of ``fn`` for the argument ``args[where]`` (an array, or a list or
    tuple of arrays) or, with a slice ``where``, for the ``*args`` parameter holding
    ``args[where]``, against central differences of <g, fn(*args)> for a random g shaped like
    the output (which may be a list or tuple)."""
    key = fn if key is None else key
    rule = RULES[key]
    name = rule.varargs if isinstance(where, slice) else [n for n, _ in rule.params][where]
    ans = fn(*args, **kwargs)
    g = _random_cotangent(np.random.default_rng(seed), ans)
    got = evaluate_vjp(key, name, g, ans, *args, **kwargs)
    whole = args[where]
    leaves = _leaves(whole)
    got = list(got) if isinstance(whole, (list, tuple)) else [got]
    assert len(got) == len(leaves), (fn, len(got), len(leaves))

    def perturbed(i, x):
        new = list(leaves)
        new[i] = x
        a = list(args)
        if isinstance(where, slice):
            a[where] = new
        else:
            a[where] = type(whole)(new) if isinstance(whole, (list, tuple)) else x
        return _inner(g, fn(*a, **kwargs))

    check_jvp(key, args, kwargs, {name: whole}, g, ans, seed)
    for i, leaf in enumerate(leaves):
        want = numeric_vjp(lambda x: perturbed(i, x), [leaf], 0, 1.0)
        assert np.shape(got[i]) == np.shape(leaf), (fn, i, np.shape(got[i]), np.shape(leaf))
        np.testing.assert_allclose(got[i], want, rtol=rtol, atol=atol,
                                   err_msg=f"vjp of {fn} in part {i} of argument {where}")


# --- jvp checks: each jvp template against its rule's vjp (checked above against finite
# differences) through <g, J t> = <J^T g, t>, and its output shaped like the output ---

def _random_tangent(rng, x):
    if isinstance(x, (list, tuple)):
        return type(x)(_random_tangent(rng, e) for e in x)
    return rng.standard_normal(np.shape(x)) if np.ndim(x) else float(rng.standard_normal())


def _assert_shaped_like(t, ans, what):
    if isinstance(ans, (list, tuple)):
        assert len(t) == len(ans), (what, len(t), len(ans))
        for ti, ai in zip(t, ans):
            _assert_shaped_like(ti, ai, what)
    elif np.issubdtype(np.result_type(ans), np.floating):
        assert np.shape(t) == np.shape(ans), (what, np.shape(t), np.shape(ans))


def check_jvp(key, args, kwargs, params, g, ans, seed=0, rtol=1e-6, atol=1e-8):
    """For each differentiated parameter (name -> its argument) alone, and for all of them at
    once: the jvp template's tangent has the output's shapes, and <g, jvp(t)> equals
    <vjp(g), t> (the rule's own vjp)."""
    rng = np.random.default_rng(seed + 1)
    tangents = {n: _random_tangent(rng, x) for n, x in params.items()}
    total_lhs = total_rhs = 0.0
    for n, t in tangents.items():
        jv = evaluate_jvp(key, {n: t}, ans, *args, **kwargs)
        _assert_shaped_like(jv, ans, f"jvp of {key} in {n}")
        lhs = _inner(g, jv)
        rhs = _inner(evaluate_vjp(key, n, g, ans, *args, **kwargs), t)
        np.testing.assert_allclose(lhs, rhs, rtol=rtol, atol=atol,
                                   err_msg=f"<g, jvp> != <vjp, t> for {key} in {n}")
        total_lhs, total_rhs = total_lhs + lhs, total_rhs + rhs
    if len(tangents) > 1:
        jv = evaluate_jvp(key, tangents, ans, *args, **kwargs)
        _assert_shaped_like(jv, ans, f"jvp of {key} in {sorted(tangents)}")
        np.testing.assert_allclose(_inner(g, jv), total_rhs, rtol=rtol, atol=atol,
                                   err_msg=f"joint jvp of {key}")


def instrumented(fn, names, checker):
    """The text of normalized ``fn`` (an ir.Function) with ``checker(name, value)`` called
    after each binding of a name in ``names``: what the analyses of transformer/ (ranks,
    shapes) claim, checked on the values the code computes."""
    import gast
    from strop.transformer.unparse import unparse

    def check(name):
        return gast.parse(f"{checker}({name!r}, {name})").body[0]

    def block(stmts):
        out = []
        for s in stmts:
            for field in ("body", "orelse"):
                if getattr(s, field, None):
                    setattr(s, field, block(getattr(s, field)))
            if isinstance(s, gast.For) and isinstance(s.target, gast.Name) and \
                    s.target.id in names:
                s.body.insert(0, check(s.target.id))
            out.append(s)
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and \
                    s.targets[0].id in names:
                out.append(check(s.targets[0].id))
        return out
    node = fn.node
    node.body = block(node.body)
    return unparse(node)


def ptx_of(script):
    """{name: PTX} that ``script`` prints as JSON on its last line, run in a process without
    Numba's CUDA simulator (``tests/`` importable): what NVVM makes for a GPU, with no device.
    Skips where ``cuda.compile_ptx`` does not work (the script prints {"unavailable": why})."""
    import json
    import os
    import subprocess
    import sys

    import pytest
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0",
               PYTHONPATH=os.pathsep.join([os.path.dirname(__file__)] + sys.path))
    run = subprocess.run([sys.executable, "-c", script], env=env, text=True,
                         capture_output=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    if "unavailable" in out:
        pytest.skip(f"cuda.compile_ptx does not work here: {out['unavailable']}")
    return out
