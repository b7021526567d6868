"""Products of a C-contiguous float matrix and a vector of its dtype, and the outer product
added into a matrix, with explicit vectors (simd.py): what an RNN's step and its backward pass
do at every step on matrices of a few thousand elements.

BLAS called from compiled code costs 0.25 to 0.45 µs for a 64x64 product (the call, its
checks, an array for the result) and plain loops do worse: a row's dot product is a reduction
LLVM vectorizes only if allowed to reorder the sum, an outer product added row by row makes a
view per row, and one vector accumulator per loop waits on its own multiply-adds.  These keep
four accumulators in flight.  A row's dot product sums in vector lanes, then across them: an
order of the sum, as BLAS's own is one.  Columns past the last whole vector run as scalars.
"""
import numpy as np
from numba.extending import register_jitable

from .simd import lanes, vfma, vload, vsplat, vstore, vsum4, vzero


@register_jitable
def mat_vec(m, v):
    """``m @ v`` (m of shape (rows, n), v of n): four rows at once, v's vectors loaded once."""
    rows, n = m.shape
    out = np.empty(rows, m.dtype)
    step = lanes(m)
    whole = n - n % step
    i = 0
    while i < rows:
        # (rows past the last: the last again, its sum stored twice)
        i1, i2, i3 = min(i + 1, rows - 1), min(i + 2, rows - 1), min(i + 3, rows - 1)
        a0, a1, a2, a3 = vzero(m), vzero(m), vzero(m), vzero(m)
        for j in range(0, whole, step):
            x = vload(v, j)
            a0 = vfma(vload(m, i * n + j), x, a0)
            a1 = vfma(vload(m, i1 * n + j), x, a1)
            a2 = vfma(vload(m, i2 * n + j), x, a2)
            a3 = vfma(vload(m, i3 * n + j), x, a3)
        s0, s1, s2, s3 = vsum4(a0, a1, a2, a3)
        out[i3], out[i2], out[i1], out[i] = s3, s2, s1, s0
        i += 4
    for i in range(rows):
        acc = out[i]
        for j in range(whole, n):
            acc += m[i, j] * v[j]
        out[i] = acc
    return out


@register_jitable
def vec_mat(v, m):
    """``v @ m`` (v of rows, m of shape (rows, n)): four vectors of columns at once, the rows'
    terms added in order."""
    rows, n = m.shape
    out = np.zeros(n, m.dtype)
    step = lanes(m)
    whole = n - n % step
    last = whole - step          # (past the last vector: the last again, stored twice)
    j = 0
    while j < whole:
        j1, j2, j3 = min(j + step, last), min(j + 2 * step, last), min(j + 3 * step, last)
        a0, a1, a2, a3 = vzero(m), vzero(m), vzero(m), vzero(m)
        for i in range(rows):
            s, row = vsplat(v[i]), i * n
            a0 = vfma(s, vload(m, row + j), a0)
            a1 = vfma(s, vload(m, row + j1), a1)
            a2 = vfma(s, vload(m, row + j2), a2)
            a3 = vfma(s, vload(m, row + j3), a3)
        vstore(out, j3, a3)
        vstore(out, j2, a2)
        vstore(out, j1, a1)
        vstore(out, j, a0)
        j += 4 * step
    for i in range(rows):
        for j in range(whole, n):
            out[j] += v[i] * m[i, j]
    return out


@register_jitable
def add_outer(acc, a, b):
    """``acc += outer(a, b)`` in place (acc of shape (a.size, b.size)): four rows at once, b's
    vectors loaded once."""
    rows, n = acc.shape
    step = lanes(acc)
    whole = n - n % step
    i = 0
    while i + 4 <= rows:
        s0, s1, s2, s3 = vsplat(a[i]), vsplat(a[i + 1]), vsplat(a[i + 2]), vsplat(a[i + 3])
        for j in range(0, whole, step):
            x, k = vload(b, j), i * n + j
            vstore(acc, k, vfma(s0, x, vload(acc, k)))
            vstore(acc, k + n, vfma(s1, x, vload(acc, k + n)))
            vstore(acc, k + 2 * n, vfma(s2, x, vload(acc, k + 2 * n)))
            vstore(acc, k + 3 * n, vfma(s3, x, vload(acc, k + 3 * n)))
        i += 4
    for i in range(i, rows):
        s0 = vsplat(a[i])
        for j in range(0, whole, step):
            vstore(acc, i * n + j, vfma(s0, vload(b, j), vload(acc, i * n + j)))
    for i in range(rows):
        for j in range(whole, n):
            acc[i, j] += a[i] * b[j]
    return acc
