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

from .simd import lanes, vadd, vfma, vload, vsplat, vstore, vsum4, vzero


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
    """``v @ m`` (v of rows, m of shape (rows, n)): four vectors of columns at once, the even
    rows' terms and the odd rows' in two sets of accumulators (each multiply-add waits on the
    last of its set: two sets halve the wait), added at the end."""
    rows, n = m.shape
    out = np.zeros(n, m.dtype)
    step = lanes(m)
    whole = n - n % step
    last = whole - step          # (past the last vector: the last again, stored twice)
    pairs = rows - rows % 2
    j = 0
    while j < whole:
        j1, j2, j3 = min(j + step, last), min(j + 2 * step, last), min(j + 3 * step, last)
        a0, a1, a2, a3 = vzero(m), vzero(m), vzero(m), vzero(m)
        b0, b1, b2, b3 = vzero(m), vzero(m), vzero(m), vzero(m)
        for i in range(0, pairs, 2):
            s, t, row = vsplat(v[i]), vsplat(v[i + 1]), i * n
            a0 = vfma(s, vload(m, row + j), a0)
            a1 = vfma(s, vload(m, row + j1), a1)
            a2 = vfma(s, vload(m, row + j2), a2)
            a3 = vfma(s, vload(m, row + j3), a3)
            b0 = vfma(t, vload(m, row + n + j), b0)
            b1 = vfma(t, vload(m, row + n + j1), b1)
            b2 = vfma(t, vload(m, row + n + j2), b2)
            b3 = vfma(t, vload(m, row + n + j3), b3)
        if pairs < rows:
            s, row = vsplat(v[pairs]), pairs * n
            a0 = vfma(s, vload(m, row + j), a0)
            a1 = vfma(s, vload(m, row + j1), a1)
            a2 = vfma(s, vload(m, row + j2), a2)
            a3 = vfma(s, vload(m, row + j3), a3)
        vstore(out, j3, vadd(a3, b3))
        vstore(out, j2, vadd(a2, b2))
        vstore(out, j1, vadd(a1, b1))
        vstore(out, j, vadd(a0, b0))
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


@register_jitable
def add_outer_rows(acc, left, right, count):
    """``acc += left[:count].T @ right[:count]`` in place (the sum of ``count`` outer products
    of rows): tiles of four rows of ``acc`` by four vectors held in registers across the
    rows of ``left`` and ``right``, so ``acc`` is read and written once.  (BLAS does the same,
    but SciPy's OpenBLAS hands a product this small to two threads, which cost more.)"""
    rows, n = acc.shape
    step = lanes(acc)
    whole = n - n % step
    four = rows - rows % 4
    for i in range(0, four, 4):
        j = 0
        while j + 4 * step <= whole:
            t = (i * n + j, (i + 1) * n + j, (i + 2) * n + j, (i + 3) * n + j)
            c00, c01, c02, c03 = (vload(acc, t[0]), vload(acc, t[0] + step),
                                  vload(acc, t[0] + 2 * step), vload(acc, t[0] + 3 * step))
            c10, c11, c12, c13 = (vload(acc, t[1]), vload(acc, t[1] + step),
                                  vload(acc, t[1] + 2 * step), vload(acc, t[1] + 3 * step))
            c20, c21, c22, c23 = (vload(acc, t[2]), vload(acc, t[2] + step),
                                  vload(acc, t[2] + 2 * step), vload(acc, t[2] + 3 * step))
            c30, c31, c32, c33 = (vload(acc, t[3]), vload(acc, t[3] + step),
                                  vload(acc, t[3] + 2 * step), vload(acc, t[3] + 3 * step))
            for k in range(count):
                r = k * n + j
                b0, b1, b2, b3 = (vload(right, r), vload(right, r + step),
                                  vload(right, r + 2 * step), vload(right, r + 3 * step))
                s = vsplat(left[k, i])
                c00, c01, c02, c03 = vfma(s, b0, c00), vfma(s, b1, c01), vfma(s, b2, c02), \
                    vfma(s, b3, c03)
                s = vsplat(left[k, i + 1])
                c10, c11, c12, c13 = vfma(s, b0, c10), vfma(s, b1, c11), vfma(s, b2, c12), \
                    vfma(s, b3, c13)
                s = vsplat(left[k, i + 2])
                c20, c21, c22, c23 = vfma(s, b0, c20), vfma(s, b1, c21), vfma(s, b2, c22), \
                    vfma(s, b3, c23)
                s = vsplat(left[k, i + 3])
                c30, c31, c32, c33 = vfma(s, b0, c30), vfma(s, b1, c31), vfma(s, b2, c32), \
                    vfma(s, b3, c33)
            for (o, v0, v1, v2, v3) in ((t[0], c00, c01, c02, c03), (t[1], c10, c11, c12, c13),
                                        (t[2], c20, c21, c22, c23), (t[3], c30, c31, c32, c33)):
                vstore(acc, o, v0)
                vstore(acc, o + step, v1)
                vstore(acc, o + 2 * step, v2)
                vstore(acc, o + 3 * step, v3)
            j += 4 * step
        for r in range(i, i + 4):          # the vectors past the last four, row by row
            _add_rows_vectors(acc, left, right, count, r, j, whole)
    for r in range(four, rows):
        _add_rows_vectors(acc, left, right, count, r, 0, whole)
    for r in range(rows):                   # the columns past the last vector
        for j in range(whole, n):
            total = acc[r, j]
            for k in range(count):
                total += left[k, r] * right[k, j]
            acc[r, j] = total
    return acc


@register_jitable
def _add_rows_vectors(acc, left, right, count, r, start, whole):
    """Row ``r`` of ``add_outer_rows``' sum, the vectors from column ``start`` to ``whole``."""
    n, step = acc.shape[1], lanes(acc)
    for j in range(start, whole, step):
        c = vload(acc, r * n + j)
        for k in range(count):
            c = vfma(vsplat(left[k, r]), vload(right, k * n + j), c)
        vstore(acc, r * n + j, c)
