"""Helpers of the Jacobians built from jvps and vjps (transformer/jacobian.py, jacfwd, jacrev,
hessian), and the cotangents of those helpers (so that a Jacobian differentiates again)."""
import numpy as np

from .base import _CONTAINERS, _float_dtype

__all__ = ["jac_size", "basis", "out_size", "out_basis", "jac_fwd", "jac_rev", "jac_rev_vjp",
           "jac_fwd_vjp"]


# --- Jacobians ---------------------------------------------------------------------------------
# jacfwd runs the jvp once per basis vector of the inputs (a flat index over all their
# elements), jacrev the vjp once per basis vector of the output; the results are assembled
# into blocks shaped out.shape + in.shape, as JAX lays them out.

def _leaves(x):
    if isinstance(x, dict):
        return [leaf for k in x for leaf in _leaves(x[k])]
    if isinstance(x, _CONTAINERS):
        return [leaf for v in x for leaf in _leaves(v)]
    return [x]


def jac_size(xs):
    """The number of elements of the differentiated inputs ``xs`` (a tuple of leaves)."""
    return sum(int(np.size(x)) for x in xs)


def basis(x, i, start):
    """The ``i``-th basis tangent restricted to ``x``, whose elements are numbers
    ``start ... start + x.size - 1`` of the whole basis: one-hot, or zeros."""
    dtype = _float_dtype(x)
    k = i - start
    if not isinstance(x, np.ndarray):
        return dtype.type(1.0 if k == 0 else 0.0)
    out = np.zeros(x.shape, dtype)
    if 0 <= k < x.size:
        out.reshape(-1)[k] = 1.0
    return out


def out_size(out):
    return sum(int(np.size(leaf)) for leaf in _leaves(out))


def out_basis(out, i):
    """The ``i``-th basis cotangent of the output ``out`` (a pytree of arrays and numbers)."""
    if isinstance(out, dict):
        res, start = {}, 0
        for k in out:
            res[k] = out_basis(out[k], i - start)
            start += out_size(out[k])
        return res
    if isinstance(out, _CONTAINERS):
        parts, start = [], 0
        for v in out:
            parts.append(out_basis(v, i - start))
            start += out_size(v)
        return type(out)(*parts) if hasattr(out, "_fields") else type(out)(parts)
    if not isinstance(out, (np.ndarray, np.generic, float, int)):
        raise TypeError(f"a Jacobian needs array outputs, but the function returned a "
                        f"{type(out).__name__} ({repr(out)}) among its outputs")
    dtype = np.result_type(out)
    if not np.issubdtype(dtype, np.floating):
        raise TypeError(f"jacrev requires real floating point outputs, got a value of dtype "
                        f"{dtype}; for an integer or boolean output there is nothing to "
                        f"differentiate")
    return basis(out, i, 0)


def _structure(out, blocks_of):
    """``out``'s containers with each leaf replaced by ``blocks_of(leaf, its number)``."""
    count = [0]

    def walk(x):
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items()}
        if isinstance(x, _CONTAINERS):
            parts = [walk(v) for v in x]
            return type(x)(*parts) if hasattr(x, "_fields") else type(x)(parts)
        if x is None or isinstance(x, (str, bool)):
            raise TypeError(f"a Jacobian needs array outputs, but the function returned a "
                            f"{type(x).__name__} ({repr(x)}) among its outputs")
        j = count[0]
        count[0] += 1
        return blocks_of(x, j)
    return walk(out)


def _layout(spec, blocks):
    """One output leaf's blocks as the Jacobian holds them: ``spec`` rebuilds the trees of
    tree arguments; without trees it is a bool, True for a tuple (``argnums`` a tuple)."""
    if isinstance(spec, (bool, np.bool_)):
        return tuple(blocks) if spec else blocks[0]
    return spec(blocks)


def _blocks(spec, part):
    """The inverse of ``_layout``."""
    if isinstance(spec, (bool, np.bool_)):
        return list(part) if spec else [part]
    return spec.blocks(part)


def jac_fwd(cols, out, xs, spec):
    """The Jacobian from jvp columns: ``cols[i]`` is the tangent of ``out`` for the i-th basis
    tangent of the inputs ``xs``."""
    outs = _leaves(out)
    col_leaves = [_leaves(c) for c in cols]
    sizes = [int(np.size(x)) for x in xs]

    def blocks_of(leaf, j):
        blocks, start = [], 0
        shape = np.shape(leaf)
        for x, n in zip(xs, sizes):
            rows = [np.asarray(c[j]).reshape(-1) for c in col_leaves[start:start + n]]
            start += n
            dtype = np.result_type(_float_dtype(leaf), _float_dtype(x))
            m = np.stack(rows, axis=-1) if rows else np.zeros((int(np.size(leaf)), 0))
            blocks.append(np.asarray(m, dtype).reshape(shape + np.shape(x)))
        return _layout(spec, blocks)
    if len(outs) == 1 and outs[0] is out:
        return blocks_of(out, 0)
    return _structure(out, blocks_of)


def jac_rev(rows, out, xs, spec):
    """The Jacobian from vjp rows: ``rows[i]`` holds the cotangents of the inputs ``xs`` for
    the i-th basis cotangent of ``out``."""
    offsets, start = [], 0
    for leaf in _leaves(out):
        offsets.append(start)
        start += int(np.size(leaf))

    def blocks_of(leaf, j):
        shape, n = np.shape(leaf), int(np.size(leaf))
        blocks = []
        for k, x in enumerate(xs):
            part = [np.asarray(r[k]).reshape(-1) for r in rows[offsets[j]:offsets[j] + n]]
            dtype = np.result_type(_float_dtype(leaf), _float_dtype(x))
            m = np.stack(part) if part else np.zeros((0, int(np.size(x))))
            blocks.append(np.asarray(m, dtype).reshape(shape + np.shape(x)))
        return _layout(spec, blocks)
    if len(_leaves(out)) == 1 and not isinstance(out, (dict,) + _CONTAINERS):
        return blocks_of(out, 0)
    return _structure(out, blocks_of)


def jac_rev_vjp(g, rows, out, xs, spec):
    """The cotangents of ``jac_rev``'s rows (a list, as the rows went on it) from the
    Jacobian's cotangent ``g``: ``jacrev(jacrev(f))`` differentiates jacrev's code."""
    single = len(_leaves(out)) == 1 and not isinstance(out, (dict,) + _CONTAINERS)
    cts = []
    for leaf, part in zip(_leaves(out), [g] if single else _parts(g, out)):
        n = int(np.size(leaf))
        blocks = [np.reshape(b, (n, -1)) for b in _blocks(spec, part)]
        cts.extend(tuple(np.reshape(b[r], np.shape(x)) for b, x in zip(blocks, xs))
                   for r in range(n))
    return cts


def jac_fwd_vjp(g, cols, out, xs, spec):
    """The cotangents of ``jac_fwd``'s columns (tangents of ``out``, one per element of the
    inputs ``xs``) from the Jacobian's cotangent ``g``: ``jacrev(jacfwd(f))``."""
    single = len(_leaves(out)) == 1 and not isinstance(out, (dict,) + _CONTAINERS)
    parts = [g] if single else _parts(g, out)
    blocks = [[np.reshape(b, (int(np.size(leaf)), -1)) for b in _blocks(spec, part)]
              for leaf, part in zip(_leaves(out), parts)]
    cts = []
    for k, x in enumerate(xs):
        for c in range(int(np.size(x))):
            def column(leaf, j):
                return np.reshape(blocks[j][k][:, c], np.shape(leaf))
            cts.append(column(out, 0) if single else _structure(out, column))
    return cts


def _parts(g, out):
    """The parts of ``g`` (``out``'s containers holding one Jacobian part per leaf) in the
    order of ``out``'s leaves."""
    if isinstance(out, dict):
        return [p for k in out for p in _parts(g[k], out[k])]
    if isinstance(out, _CONTAINERS):
        return [p for gk, ok in zip(g, out) for p in _parts(gk, ok)]
    return [g]
