"""Sums of float arrays in compiled code, added as NumPy adds them: pairwise (the Numba
implementations of runtime/sums.py's ``sum_all`` and ``mean_all``).

Numba's ``np.sum(x)`` and ``x.sum()`` add the elements one after another into one accumulator;
LLVM may not reorder floating-point additions, so each addition waits for the one before
(2,000 float64: 1.1 µs, against 0.45 µs with 8 accumulators), and the rounding error grows with
the length.  NumPy sums a contiguous run pairwise (``pairwise_sum`` in NumPy's
``loops_utils.h.src``): a run of up to 128 elements with 8 accumulators, combined as
``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``; a longer run split in two halves, the
first a multiple of 8 long, each summed so and the two sums added.  ``pairwise`` does the same
additions in the same order, in the array's own dtype, so a compiled sum of a run is NumPy's
to the bit (float32 accumulates in float32, as NumPy's does).

How ``sum_all`` reads a float array (other dtypes keep Numba's sum):

| array | read as |
|---|---|
| 1-D, any stride | one run |
| C- or F-contiguous (by its type, or a run-time check) | one run, in memory order (NumPy's 'K') |
| any other | runs along the first or last axis (the smaller stride); their sums pairwise |

The last is NumPy's sum up to rounding: NumPy's order there depends on its buffering.

What compiled code sums with it:

| sum | where |
|---|---|
| ``np.sum(x)``, ``x.sum()``, ``np.mean(x)``: the array alone | ``sum_all``, ``mean_all`` (cpu.py) |
| ``unbroadcast`` of an array to a number (and each lane's, batched) | base.py, batching.py |
| each row of ``np.sum``, ``np.mean`` (8 long or more), ``np.var``, ``np.std`` over axes | axes.py |
"""
import numpy as np
from numba import carray, types
from numba.core import cgutils
from numba.extending import intrinsic, register_jitable
from numba.np.numpy_support import as_dtype

from ..sums import mean_all, sum_all
from ._common import overload

# NumPy's PW_BLOCKSIZE: a run up to this long is summed with 8 accumulators, a longer one split
RUN = 128


@intrinsic
def _stack(typingctx, like):
    """Room for 64 numbers of array ``like``'s dtype in the calling function's frame: the
    halves' pending sums without an allocation (see ``pairwise``)."""
    sig = types.CPointer(like.dtype)(like)

    def codegen(context, builder, signature, args):
        return cgutils.alloca_once(builder, context.get_data_type(like.dtype), size=64)
    return sig, codegen


@register_jitable
def _half(n):
    """Where NumPy splits a run of ``n`` > RUN elements: about half, a multiple of 8."""
    h = n // 2
    return h - h % 8


@register_jitable
def pairwise(x, start, n):
    """NumPy's sum of the run ``x[start:start + n]`` of 1-D ``x`` (any stride).  The halves'
    recursion is a loop over the path from the whole run to the current one (Numba compiles no
    recursive helper).  All of it is one function with no call, view or allocation in it, and
    a caller summing many runs passes one array and their offsets: around those Numba counts
    references to the array on each call (rows of 3 of a (100000, 3) array: 3.6 ns a row; 14
    with a view of each row; 46 through ``mean_all``).  Indices are unsigned: Numba checks a
    signed one for a negative value on every read."""
    firsts = carray(_stack(x), 64)     # at depth d: the sum of the first half, while its
    lo, size, depth, second = start, n, 0, 0   # second is summed; bit d of second: the path
    one, eight = np.uint64(1), np.uint64(8)
    while True:
        while size > RUN:              # down the first halves to a run
            size = _half(size)
            depth += 1
        b = np.uint64(lo)              # the run x[lo:lo + size]
        if size < 8:                   # (only a whole run can be this short)
            s = x.dtype.type(0)
            for i in range(b, b + np.uint64(size)):
                s += x[i]
        else:
            r0, r1, r2, r3 = x[b], x[b + one], x[b + np.uint64(2)], x[b + np.uint64(3)]
            r4, r5 = x[b + np.uint64(4)], x[b + np.uint64(5)]
            r6, r7 = x[b + np.uint64(6)], x[b + np.uint64(7)]
            m = np.uint64(size // 8)
            for k in range(one, m):
                i = b + eight * k
                r0 += x[i]
                r1 += x[i + one]
                r2 += x[i + np.uint64(2)]
                r3 += x[i + np.uint64(3)]
                r4 += x[i + np.uint64(4)]
                r5 += x[i + np.uint64(5)]
                r6 += x[i + np.uint64(6)]
                r7 += x[i + np.uint64(7)]
            s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
            for i in range(eight * m, np.uint64(size)):
                s += x[b + i]
        lo += size
        while depth > 0 and second >> (depth - 1) & 1:   # a second half: add it to its first
            depth -= 1
            second ^= 1 << depth
            s = firsts[depth] + s
        if depth == 0:
            return s
        firsts[depth - 1] = s                            # a first half: on to its second
        second |= 1 << (depth - 1)
        size = n
        for d in range(depth):                           # (its length, from the whole run's)
            h = _half(size)
            size = size - h if second >> d & 1 else h


@register_jitable
def _rows(a):
    """The sum of each run along ``a``'s last axis, then of the runs' sums, pairwise.  A run of
    at most RUN elements is summed in place, in order: a call per run cost more than its
    additions (Numba counts references to the run's view: 1,000 runs of 7, 15 µs against
    2 µs), and a sum of its own lets the runs' additions overlap."""
    runs = 1
    for d in a.shape[:-1]:
        runs *= d
    sums = np.empty(runs, a.dtype)
    k = 0
    for idx in np.ndindex(a.shape[:-1]):
        row = a[idx]
        if row.size > RUN:
            sums[k] = pairwise(row, 0, row.size)
        else:
            r = a.dtype.type(0)
            for j in range(row.size):
                r += row[j]
            sums[k] = r
        k += 1
    return pairwise(sums, 0, runs)


@register_jitable
def _any_layout(a):
    if a.flags.c_contiguous:
        return pairwise(np.ascontiguousarray(a).reshape(-1), 0, a.size)   # (a view: no copy)
    if a.flags.f_contiguous:
        return pairwise(np.ascontiguousarray(a.T).reshape(-1), 0, a.size)
    if abs(a.strides[-1]) <= abs(a.strides[0]):
        return _rows(a)
    return _rows(a.T)


def pairwise_type(a):
    """Whether ``a`` is an array summed here: float32 or float64 (NumPy sums float16 in
    float32), not 0-d."""
    return isinstance(a, types.Array) and a.dtype in (types.float32, types.float64) and \
        a.ndim > 0


@overload(sum_all)
def _sum_all(a):
    if not pairwise_type(a):
        return lambda a: np.sum(a)
    if a.ndim == 1:
        return lambda a: pairwise(a, 0, a.size)
    if a.layout == "C":
        return lambda a: pairwise(a.reshape(-1), 0, a.size)
    if a.layout == "F":
        return lambda a: pairwise(a.T.reshape(-1), 0, a.size)
    return lambda a: _any_layout(a)


@overload(mean_all)
def _mean_all(a):
    """NumPy's mean of a float array: its sum, in its dtype, over its size; NaN if empty
    (without NumPy's warning, as Numba's mean)."""
    if not pairwise_type(a):
        return lambda a: np.mean(a)
    dt = as_dtype(a.dtype).type
    nan = dt(np.nan)

    def impl(a):
        if a.size == 0:
            return nan
        return dt(sum_all(a) / a.size)
    return impl
