"""Helpers of the rules of products (rules/products.py): ``@`` (what compiled code calls for
the operator) with its derivatives to second order, np.dot's axes, tensordot, kron, cross and
einsum.  A ``*_vjp`` helper returns the cotangent of one argument, shaped like it."""
import string

import numpy as np

from .base import add, unbroadcast

__all__ = ["matmul", "matmul_vjp_x", "matmul_vjp_y", "add_matmul_vjp_x", "add_matmul_vjp_y",
           "add_matmul_vjp_x_inplace", "add_matmul_vjp_y_inplace", "outer_terms",
           "add_matmul_vjp_x_deferred", "add_matmul_vjp_y_deferred", "add_terms",
           "matmul_as_x", "matmul_as_y",
           "matmul_x_vjp_y", "matmul_y_vjp_x", "dot_axes", "tensordot_vjp_a", "tensordot_vjp_b",
           "kron_vjp_a", "kron_vjp_b", "cross_vjp", "einsum_vjp", "einsum_cross"]


def matmul(a, b):
    """``a @ b``: what compiled code calls for the operator (Numba's own needs SciPy)."""
    return np.matmul(a, b)


def matmul_vjp_x(g, x, y):
    """Cotangent of ``x`` in ``x @ y`` before unbroadcasting (1-D operands as NumPy treats them)."""
    if np.ndim(x) == 1 and np.ndim(y) == 1:
        return g * y
    if np.ndim(y) == 1:
        return np.expand_dims(g, -1) * y
    if np.ndim(x) == 1:
        return np.matmul(y, np.expand_dims(g, -1))[..., 0]
    return np.matmul(g, np.swapaxes(y, -1, -2))


def matmul_vjp_y(g, x, y):
    if np.ndim(x) == 1 and np.ndim(y) == 1:
        return g * x
    if np.ndim(x) == 1:
        return np.expand_dims(x, -1) * np.expand_dims(g, -2)
    if np.ndim(y) == 1:
        return np.matmul(np.swapaxes(x, -1, -2), np.expand_dims(g, -1))[..., 0]
    return np.matmul(np.swapaxes(x, -1, -2), g)


# A cotangent of an operand of ``@`` added to an accumulator: what compiled adjoints make of
# ``t = matmul_vjp_x(g, x, y); t = unbroadcast(t, x); acc = acc + t`` (codegen/inplace.py), so
# that an outer product (a recurrence's matrix parameter) goes into ``acc`` with no array of
# its own.  The _inplace forms write into ``acc`` when compiled code owns it; as Python they
# are the plain ones.

def add_matmul_vjp_x(acc, g, x, y):
    return add(acc, unbroadcast(matmul_vjp_x(g, x, y), x))


def add_matmul_vjp_y(acc, g, x, y):
    return add(acc, unbroadcast(matmul_vjp_y(g, x, y), y))


def add_matmul_vjp_x_inplace(acc, g, x, y):
    return add_matmul_vjp_x(acc, g, x, y)


def add_matmul_vjp_y_inplace(acc, g, x, y):
    return add_matmul_vjp_y(acc, g, x, y)


# The outer products a loop adds into an owned accumulator that nothing else in the loop reads
# (codegen/outer.py): compiled, each trip's two vectors are rows of ``terms`` and every few
# trips, and after the loop, ``add_terms`` adds them as one matrix product.  ``n`` counts the
# rows held.  As Python nothing is held: each trip adds its product.

def outer_terms(acc):
    return None


def add_matmul_vjp_x_deferred(acc, terms, n, g, x, y):
    return add_matmul_vjp_x(acc, g, x, y), n


def add_matmul_vjp_y_deferred(acc, terms, n, g, x, y):
    return add_matmul_vjp_y(acc, g, x, y), n


def add_terms(acc, terms, n):
    return acc


# The derivatives of matmul_vjp_x/y (second order).  matmul_vjp_x(g, x, y) is linear in g and
# in y; its result is x's cotangent before unbroadcasting: x's vector axis with the batch axes
# of the product in front.  Where x is 1-D and y is not, that is a stack of vectors, which
# np.matmul would read as a matrix: these helpers add the unit axis back (and likewise for y).

def matmul_as_x(z, x, y):
    """``z @ y`` with ``z`` a cotangent of ``x`` from matmul_vjp_x (the vjp of that in g)."""
    if np.ndim(x) == 1 and np.ndim(y) > 1:
        return matmul(np.expand_dims(z, -2), y)[..., 0, :]
    return matmul(z, y)


def matmul_as_y(x, z, y):
    """``x @ z`` with ``z`` a cotangent of ``y`` from matmul_vjp_y (the vjp of that in g)."""
    if np.ndim(y) == 1 and np.ndim(x) > 1:
        return matmul(x, np.expand_dims(z, -1))[..., 0]
    return matmul(x, z)


def matmul_x_vjp_y(g, z, x, y):
    """The cotangent of ``y`` in ``matmul_vjp_x(g, x, y)`` for the cotangent ``z`` of its result."""
    if np.ndim(x) == 1 and np.ndim(y) > 1:
        return matmul_vjp_y(np.expand_dims(g, -2), np.expand_dims(z, -2), y)
    return matmul_vjp_y(g, z, y)


def matmul_y_vjp_x(g, z, x, y):
    """The cotangent of ``x`` in ``matmul_vjp_y(g, x, y)`` for the cotangent ``z`` of its result."""
    if np.ndim(y) == 1 and np.ndim(x) > 1:
        return matmul_vjp_x(np.expand_dims(g, -1), x, np.expand_dims(z, -1))
    return matmul_vjp_x(g, x, z)


def dot_axes(a, b):
    """The axes ``np.dot(a, b)`` contracts, as ``np.tensordot`` takes them: a's last with b's
    second-to-last (b's only one when b is 1-D); none when either is a scalar."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return 0
    return [np.ndim(a) - 1], [max(np.ndim(b) - 2, 0)]


def _tensordot_axes(a, b, axes):
    """The contracted axes of ``np.tensordot(a, b, axes)``: two lists of non-negative axes,
    paired in order, and the free axes of a and of b."""
    na, nb = np.ndim(a), np.ndim(b)
    if np.ndim(axes) == 0:
        n = int(axes)
        ax_a, ax_b = list(range(na - n, na)), list(range(n))
    else:
        ax_a, ax_b = ([x] if np.ndim(x) == 0 else list(x) for x in axes)
        ax_a, ax_b = [x % na for x in ax_a], [x % nb for x in ax_b]
    return (ax_a, ax_b, [i for i in range(na) if i not in ax_a],
            [i for i in range(nb) if i not in ax_b])


def tensordot_vjp_a(g, a, b, axes=2):
    """Cotangent of ``a`` in ``np.tensordot(a, b, axes)``: g contracted with b over b's free
    axes, then a's axes put back in their order."""
    ax_a, ax_b, free_a, free_b = _tensordot_axes(a, b, axes)
    ga = np.tensordot(g, b, (list(range(len(free_a), np.ndim(g))), free_b))
    # ga's axes: a's free axes, then b's contracted axes in b's order, i.e. their partners in a
    partners = [ax_a[j] for j in np.argsort(ax_b)]
    return np.transpose(ga, np.argsort(free_a + partners))


def tensordot_vjp_b(g, a, b, axes=2):
    """Cotangent of ``b`` in ``np.tensordot(a, b, axes)``."""
    ax_a, ax_b, free_a, free_b = _tensordot_axes(a, b, axes)
    gb = np.tensordot(a, g, (free_a, list(range(len(free_a)))))
    partners = [ax_b[j] for j in np.argsort(ax_a)]
    return np.transpose(gb, np.argsort(partners + free_b))


def _kron_blocks(g, a, b):
    """g of ``np.kron(a, b)`` with axes (a's axes..., b's axes...), and a and b with leading
    ones up to the same number of axes."""
    d = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (d - np.ndim(a)) + np.shape(a)
    sb = (1,) * (d - np.ndim(b)) + np.shape(b)
    g = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])
    g = np.transpose(g, list(range(0, 2 * d, 2)) + list(range(1, 2 * d, 2)))
    return g, np.reshape(a, sa), np.reshape(b, sb), d


def kron_vjp_a(g, a, b):
    """Cotangent of ``a`` in ``np.kron(a, b)``: each block of g contracted with b."""
    g, _, b, d = _kron_blocks(g, a, b)
    return np.reshape(np.tensordot(g, b, (list(range(d, 2 * d)), list(range(d)))), np.shape(a))


def kron_vjp_b(g, a, b):
    """Cotangent of ``b`` in ``np.kron(a, b)``: the blocks of g weighted by a, summed."""
    g, a, _, d = _kron_blocks(g, a, b)
    return np.reshape(np.tensordot(a, g, (list(range(d)), list(range(d)))), np.shape(b))


def cross_vjp(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cotangent of ``a`` in ``np.cross(a, b, ...)`` (3-vectors): ``b x g``, with its vector axis
    where a has it.  (For b: ``cross_vjp(-g, b, a, ...)``, as a x b = -(b x a).)"""
    if axis is not None:
        axisa = axisb = axisc = axis
    ndim = np.ndim(a)
    return unbroadcast(np.cross(b, g, axisa=axisb, axisb=axisc, axisc=axisa % ndim - ndim), a)


def _einsum_specs(subscripts, operands):
    """The input subscripts of an einsum and its explicit output subscript, with ``...`` spelled
    out in unused letters (right-aligned, as NumPy broadcasts them)."""
    subscripts = subscripts.replace(" ", "")
    ins, arrow, out = subscripts.partition("->")
    ins = ins.split(",")
    unused = [c for c in string.ascii_letters if c not in subscripts]
    ranks = [np.ndim(x) - len(s.replace("...", "")) if "..." in s else 0
             for s, x in zip(ins, operands)]
    ell = "".join(unused[:max(ranks, default=0)])
    if not arrow:  # implicit output: broadcast axes, then the letters used once, sorted
        joined = "".join(ins).replace(".", "")
        once = sorted(c for c in joined if joined.count(c) == 1)
        out = "..." + "".join(once) if any("..." in s for s in ins) else "".join(once)
    ins = [s.replace("...", ell[len(ell) - r:]) for s, r in zip(ins, ranks)]
    return ins, out.replace("...", ell), unused[len(ell):]


def _einsum_call(subscripts, operands):
    """``(spec, arrays, slots)`` of a call ``np.einsum(subscripts, *operands)``: its subscripts as
    a string, its arrays, and each array's position in ``(subscripts, *operands)``.  The
    interleaved form ``np.einsum(x, [0, 1], y, [1, 2], [0, 2])`` is spelled as a string (axis
    number i as the i-th ASCII letter, as NumPy reads them)."""
    if isinstance(subscripts, str):
        return subscripts, [np.asarray(x) for x in operands], list(range(1, len(operands) + 1))
    args = (subscripts,) + tuple(operands)
    n = len(args) // 2

    def spell(sub):
        return "".join("..." if c is Ellipsis else string.ascii_letters[c] for c in sub)
    spec = ",".join(spell(args[2 * i + 1]) for i in range(n))
    if len(args) % 2:
        spec += "->" + spell(args[-1])
    return spec, [np.asarray(args[2 * i]) for i in range(n)], [2 * i for i in range(n)]


def _einsum_grads(g, spec, operands):
    """Cotangents of the arrays ``operands`` in ``np.einsum(spec, *operands)``: for operand k,
    the einsum of g with the other operands into k's subscripts.  A letter repeated in k's
    subscripts ("ii", a diagonal) gets a fresh letter tied to it by an identity matrix; a letter
    found only in k (summed away) gets a vector of ones; axes k broadcast are summed back."""
    ins, out, unused = _einsum_specs(spec, operands)
    grads = []
    for k, (sub, x) in enumerate(zip(ins, operands)):
        specs = [out] + ins[:k] + ins[k + 1:]
        arrays = [g] + operands[:k] + operands[k + 1:]
        fresh, target = iter(unused), ""
        for c, n in zip(sub, x.shape):
            if c in target:
                f = next(fresh)
                specs.append(c + f)
                arrays.append(np.eye(n))
                c = f
            target += c
        for c, n in zip(target, x.shape):
            if not any(c in s for s in specs):
                specs.append(c)
                arrays.append(np.ones(n))
        gk = np.einsum(",".join(specs) + "->" + target, *arrays, optimize=len(arrays) > 2)
        grads.append(unbroadcast(gk, x))
    return grads


def _aligned(parts, slots, n, first):
    """Per-array values placed at their positions in ``(subscripts, *operands)``: the part of
    ``subscripts`` (``first``) or the tuple for ``operands`` (None where no array is)."""
    out = [None] * (n + 1)
    for s, p in zip(slots, parts):
        out[s] = p
    return out[0] if first else tuple(out[1:])


def einsum_vjp(g, subscripts, operands, first=False):
    """Cotangents of ``operands`` in ``np.einsum(subscripts, *operands)`` (a tuple, None for a
    sublist of the interleaved form); ``first``: that of ``subscripts`` instead, the first array
    of the interleaved form."""
    spec, arrays, slots = _einsum_call(subscripts, operands)
    return _aligned(_einsum_grads(g, spec, arrays), slots, len(operands), first)


def _einsum_tangents(slots, dsubscripts, doperands, arrays):
    """The tangent of each array (None: none), from those of ``subscripts`` and ``operands``."""
    ts = [dsubscripts] + list(doperands if doperands is not None else [None] * (max(slots)))
    out = []
    for s, x in zip(slots, arrays):
        t = ts[s] if s < len(ts) else None
        out.append(None if t is None or (np.ndim(t) == 0 and np.ndim(x) > 0) else t)
    return out


def einsum_cross(v, subscripts, operands, dsubscripts, doperands, first=False):
    """The derivative of ``einsum_vjp(v, subscripts, operands, first)`` along the tangents of
    the arrays (a vjp of einsum_vjp, and its jvp in the arrays): for each array j, the sum over
    the arrays k != j with a tangent of the cotangent of j with k replaced by its tangent."""
    spec, arrays, slots = _einsum_call(subscripts, operands)
    ts = _einsum_tangents(slots, dsubscripts, doperands, arrays)
    parts = [None] * len(arrays)
    for k, t in enumerate(ts):
        if t is None:
            continue
        swapped = arrays[:k] + [np.asarray(t)] + arrays[k + 1:]
        for j, gj in enumerate(_einsum_grads(v, spec, swapped)):
            if j != k:
                parts[j] = gj if parts[j] is None else parts[j] + gj
    parts = [np.zeros(x.shape, np.result_type(x, 1.0)) if p is None else p
             for p, x in zip(parts, arrays)]
    return _aligned(parts, slots, len(operands), first)
