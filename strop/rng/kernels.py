"""Numba kernels: one per public function, over flat arrays and raw uint32 keys.

Each kernel is a ``numba.njit`` dispatcher, callable from Python and from other compiled
code, and a pure function of its arguments. Arguments are already checked and resolved by
the public wrappers in ``strop.rng.samplers``: sizes are ints, ``F`` is np.float32 or
np.float64, parameter arrays are 1-d, of the output's float type, and of length n or 1
(broadcast), and ``partitionable`` selects JAX's counter layout. Outputs are flat; the
caller reshapes. ``KERNELS`` in ``strop.rng`` maps public names to these functions.

Algorithms are JAX's (jax/_src/random), re-expressed element by element so that each
output depends only on its position, which lets the elementwise ones run in parallel.

How the work is split, and why (compile time is most of the time of a cold test run):

- a *fill* ``name_fill(..., out, start, stop)`` computes the outputs of a range of units
  (strop.rng.streams) on one thread, releasing the GIL. The public functions run fills only:
  on one thread for small outputs, split between threads by ``spread`` for large ones. So
  they compile no parallel code, which takes Numba several times longer to compile.
- ``name_parallel(..., out)`` runs the fill over chunks of CHUNK units in a prange, and
  ``name_kernel(...)``, the entry of KERNELS for compiled code, allocates the output and
  calls it with its flags as plain bools (a literal True or False from the caller would
  otherwise compile the parallel code once more).
"""
import math
import os
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from strop.rng.floats import in_range, map_word_pairs, map_words, random_words, to_unit, units
from strop.rng.streams import CHUNK, TILE, bits32_fill, bits64_fill, fill_bits32, fill_bits64, \
    fill_bits_narrow, split2, split_keys, units32
from strop.rng.xla_math import erf, erf_inv, fma, log, log1p

_SQRT2 = math.sqrt(2.0)
# constants passed to other compiled functions: np.int64, not literals (Numba would compile
# the callee once more for each literal value)
_0, _1, _MINUS1 = np.int64(0), np.int64(1), np.int64(-1)
#: units per parallel task of the rejection samplers (their values take ~0.1-1 us each)
SMALL_CHUNK = 256


@numba.njit(forceinline=True, cache=True)
def _at(a, i):
    """a[i], or a[0] for a length-1 (broadcast) parameter."""
    return a[0] if a.shape[0] == 1 else a[i]


def unit_count(n, word_bits, partitionable):
    """Units of an n-value request of words of word_bits (see strop.rng.streams)."""
    return (n + 1) // 2 if word_bits == 32 and not partitionable else n


_POOL = {}


def _pool():
    """The worker threads (made on first use; made again in a forked child, which has none)."""
    pid = os.getpid()
    if pid not in _POOL:
        _POOL.clear()
        _POOL[pid] = ThreadPoolExecutor(max(1, numba.config.NUMBA_NUM_THREADS - 1),
                                        thread_name_prefix="strop-rng")
    return _POOL[pid]


def spread(fill, args, out, units, chunk=CHUNK):
    """From Python: ``fill(*args, out, start, stop)`` over units 0 .. units-1, split between
    NUMBA_NUM_THREADS threads (the fills release the GIL) when there are at least two chunks
    of work; on this thread otherwise. No parallel code to compile: the public functions
    run the same compiled fill for any size."""
    threads = min(numba.config.NUMBA_NUM_THREADS, units // chunk)
    if threads <= 1:
        fill(*args, out, 0, units)
        return
    step = -(-units // threads)
    step = -(-step // TILE) * TILE          # whole tiles per thread
    jobs = [_pool().submit(fill, *args, out, start, start + step)
            for start in range(step, units, step)]
    fill(*args, out, 0, step)
    for job in jobs:
        job.result()


def run(fill, n, dtype, units, *args, chunk=CHUNK):
    """An output of n values of dtype (allocated by NumPy, which backs large arrays with huge
    pages: far fewer page faults than Numba's allocator) filled by ``spread``."""
    out = np.empty(n, dtype)
    spread(fill, args, out, units, chunk)
    return out


# -- bits and keys -----------------------------------------------------------------------

_PARALLEL = {"parallel": True, "cache": True, "error_model": "numpy"}
_FILL = {"cache": True, "error_model": "numpy", "nogil": True}
_VALUE = {"inline": "always", "error_model": "numpy"}   # inlined into the maps' loops


@numba.njit(inline="always")
def _chunks(units):
    return (units + CHUNK - 1) // CHUNK


@numba.njit(inline="always")
def _chunks_small(units):
    return (units + SMALL_CHUNK - 1) // SMALL_CHUNK


@numba.njit(**_PARALLEL)
def bits32_parallel(key, n, partitionable, out):
    for c in numba.prange(_chunks(units32(n, partitionable))):
        bits32_fill(key, n, partitionable, out, c * CHUNK, (c + 1) * CHUNK)


@numba.njit(**_FILL)
def bits_kernel(key, n, width, partitionable):
    """bits() of width 8, 16 or 32: n values in a uint32 array (the wrapper narrows the
    dtype). Width 64 is bits64_kernel."""
    partitionable = np.bool_(partitionable)
    if width != 32 and not partitionable:
        return fill_bits_narrow(key, n, width, partitionable)
    out = np.empty(n, np.uint32)
    bits32_parallel(key, n, partitionable, out)
    if width != 32:
        out &= np.uint32((1 << width) - 1)
    return out


@numba.njit(**_PARALLEL)
def bits64_parallel(key, n, partitionable, out):
    for c in numba.prange(_chunks(n)):
        bits64_fill(key, n, partitionable, out, c * CHUNK, (c + 1) * CHUNK)


@numba.njit(**_FILL)
def bits64_kernel(key, n, partitionable):
    out = np.empty(n, np.uint64)
    bits64_parallel(key, n, np.bool_(partitionable), out)
    return out


split_kernel = split_keys


# -- continuous samplers built on uniform -------------------------------------------------
#
# Each has a value function (word, i, p, q) -> value of float type F, inlined into the loops
# of map_words (see strop.rng.floats); p, q are parameters: scalars, or arrays of length n
# or 1 read by _at. (uniform has a loop for scalar bounds of its own: reading a[0] or a[i]
# per element keeps LLVM from vectorizing, 2x slower.)

@numba.njit(**_VALUE)
def _uniform_value(w, i, lo, hi):
    return in_range(w, _at(lo, i), _at(hi, i))


@numba.njit(**_VALUE)
def _uniform_scalar_value(w, i, lo, hi):
    return in_range(w, lo, hi)


@numba.njit(**_FILL)
def uniform_fill(key, n, lo, hi, partitionable, out, start, stop):
    F = type(lo[0])
    if lo.shape[0] == 1 and hi.shape[0] == 1:
        map_words(_uniform_scalar_value, key, n, F, partitionable, out, start, stop, lo[0],
                  hi[0])
    else:
        map_words(_uniform_value, key, n, F, partitionable, out, start, stop, lo, hi)


@numba.njit(**_PARALLEL)
def uniform_parallel(key, n, lo, hi, partitionable, out):
    for c in numba.prange(_chunks(units(n, type(lo[0]), partitionable))):
        uniform_fill(key, n, lo, hi, partitionable, out, c * CHUNK, (c + 1) * CHUNK)


@numba.njit(**_FILL)
def uniform_kernel(key, n, lo, hi, partitionable):
    out = np.empty(n, lo.dtype)
    uniform_parallel(key, n, lo, hi, np.bool_(partitionable), out)
    return out


@numba.njit(**_VALUE)
def _normal_value(w, i, lo, hi):
    return type(lo)(_SQRT2) * erf_inv(in_range(w, lo, hi))


@numba.njit(**_FILL)
def normal_fill(key, n, F, partitionable, out, start, stop):
    map_words(_normal_value, key, n, F, partitionable, out, start, stop,
              np.nextafter(F(-1), F(0)), F(1))


@numba.njit(**_PARALLEL)
def normal_parallel(key, n, F, partitionable, out):
    for c in numba.prange(_chunks(units(n, F, partitionable))):
        normal_fill(key, n, F, partitionable, out, c * CHUNK, (c + 1) * CHUNK)


@numba.njit(**_FILL)
def normal_kernel(key, n, F, partitionable):
    out = np.empty(n, F)
    normal_parallel(key, n, F, np.bool_(partitionable), out)
    return out


@numba.njit(**_VALUE)
def _exponential_value(w, i, p, q):
    return -log1p(-to_unit(w))


@numba.njit(**_FILL)
def exponential_fill(key, n, F, partitionable, out, start, stop):
    map_words(_exponential_value, key, n, F, partitionable, out, start, stop, F(0), F(0))


@numba.njit(**_PARALLEL)
def exponential_parallel(key, n, F, partitionable, out):
    for c in numba.prange(_chunks(units(n, F, partitionable))):
        exponential_fill(key, n, F, partitionable, out, c * CHUNK, (c + 1) * CHUNK)


@numba.njit(**_FILL)
def exponential_kernel(key, n, F, partitionable):
    out = np.empty(n, F)
    exponential_parallel(key, n, F, np.bool_(partitionable), out)
    return out


@numba.njit(**_VALUE)
def _gumbel_value(w, i, tiny, one):
    return -log(-log(in_range(w, tiny, one)))


@numba.njit(**_VALUE)
def _gumbel_high_value(w, w2, i, tiny, eps):
    """mode='high': a second word (n + i of a 2n request) of low bits below the first."""
    F = type(tiny)
    hi_u, lo_u = to_unit(w), to_unit(w2)
    x = hi_u if hi_u >= F(0.5) else fma(eps, lo_u, hi_u) + tiny
    return -log(-log1p(-x))


@numba.njit(**_FILL)
def gumbel_fill(key, n, F, high, partitionable, out, start, stop):
    """mode='low': -log(-log(u)), u in [tiny, 1). Units: n for mode='high'."""
    tiny = F(np.finfo(F).tiny)
    if high:
        map_word_pairs(_gumbel_high_value, key, n, F, partitionable, out, start, stop, tiny,
                       F(np.finfo(F).eps))
    else:
        map_words(_gumbel_value, key, n, F, partitionable, out, start, stop, tiny, F(1))


@numba.njit(**_PARALLEL)
def gumbel_parallel(key, n, F, high, partitionable, out):
    for c in numba.prange(_chunks(n if high else units(n, F, partitionable))):
        gumbel_fill(key, n, F, high, partitionable, out, c * CHUNK, (c + 1) * CHUNK)


@numba.njit(**_FILL)
def gumbel_kernel(key, n, F, high, partitionable):
    out = np.empty(n, F)
    gumbel_parallel(key, n, F, np.bool_(high), np.bool_(partitionable), out)
    return out


@numba.njit(**_VALUE)
def _laplace_value(w, i, lo, hi):
    u = in_range(w, lo, hi)
    return type(lo)(np.sign(u)) * log1p(-abs(u))


@numba.njit(**_FILL)
def laplace_fill(key, n, F, partitionable, out, start, stop):
    map_words(_laplace_value, key, n, F, partitionable, out, start, stop,
              F(-1) + F(np.finfo(F).epsneg), F(1))


@numba.njit(**_PARALLEL)
def laplace_parallel(key, n, F, partitionable, out):
    for c in numba.prange(_chunks(units(n, F, partitionable))):
        laplace_fill(key, n, F, partitionable, out, c * CHUNK, (c + 1) * CHUNK)


@numba.njit(**_FILL)
def laplace_kernel(key, n, F, partitionable):
    out = np.empty(n, F)
    laplace_parallel(key, n, F, np.bool_(partitionable), out)
    return out


@numba.njit(**_VALUE)
def _logistic_value(w, i, tiny, one):
    x = in_range(w, tiny, one)
    return log(x) - log1p(-x)


@numba.njit(**_FILL)
def logistic_fill(key, n, F, partitionable, out, start, stop):
    map_words(_logistic_value, key, n, F, partitionable, out, start, stop,
              F(np.finfo(F).tiny), F(1))


@numba.njit(**_PARALLEL)
def logistic_parallel(key, n, F, partitionable, out):
    for c in numba.prange(_chunks(units(n, F, partitionable))):
        logistic_fill(key, n, F, partitionable, out, c * CHUNK, (c + 1) * CHUNK)


@numba.njit(**_FILL)
def logistic_kernel(key, n, F, partitionable):
    out = np.empty(n, F)
    logistic_parallel(key, n, F, np.bool_(partitionable), out)
    return out


@numba.njit(**_VALUE)
def _truncated_normal_value(w, i, lower, upper):
    F = type(lower[0])
    sqrt2, inf = F(_SQRT2), F(np.inf)
    inv_sqrt2 = F(1) / sqrt2
    lo, hi = _at(lower, i), _at(upper, i)
    # XLA rewrites x / sqrt2 as x * (1 / sqrt2), the reciprocal rounded to F
    x = sqrt2 * erf_inv(in_range(w, erf(lo * inv_sqrt2), erf(hi * inv_sqrt2)))
    return min(max(x, np.nextafter(lo, inf)), np.nextafter(hi, -inf))


@numba.njit(**_FILL)
def truncated_normal_fill(key, n, lower, upper, partitionable, out, start, stop):
    map_words(_truncated_normal_value, key, n, type(lower[0]), partitionable, out, start, stop,
              lower, upper)


@numba.njit(**_PARALLEL)
def truncated_normal_parallel(key, n, lower, upper, partitionable, out):
    for c in numba.prange(_chunks(units(n, type(lower[0]), partitionable))):
        truncated_normal_fill(key, n, lower, upper, partitionable, out, c * CHUNK, (c + 1) * CHUNK)


@numba.njit(**_FILL)
def truncated_normal_kernel(key, n, lower, upper, partitionable):
    out = np.empty(n, lower.dtype)
    truncated_normal_parallel(key, n, lower, upper, np.bool_(partitionable), out)
    return out


@numba.njit(**_VALUE)
def _bernoulli_value(w, i, p, q):
    return to_unit(w) < _at(p, i)


@numba.njit(**_VALUE)
def _bernoulli_high_value(w, w2, i, p, eps):
    return to_unit(w2) * eps < _at(p, i) - to_unit(w)


@numba.njit(**_FILL)
def bernoulli_fill(key, n, p, high, partitionable, out, start, stop):
    """Units: n for mode='high' (two words per value)."""
    F = type(p[0])
    if high:
        map_word_pairs(_bernoulli_high_value, key, n, F, partitionable, out, start, stop, p,
                       F(np.finfo(F).eps))
    else:
        map_words(_bernoulli_value, key, n, F, partitionable, out, start, stop, p, p)


@numba.njit(**_PARALLEL)
def bernoulli_parallel(key, n, p, high, partitionable, out):
    for c in numba.prange(_chunks(n if high else units(n, type(p[0]), partitionable))):
        bernoulli_fill(key, n, p, high, partitionable, out, c * CHUNK, (c + 1) * CHUNK)


@numba.njit(**_FILL)
def bernoulli_kernel(key, n, p, high, partitionable):
    out = np.empty(n, np.bool_)
    bernoulli_parallel(key, n, p, np.bool_(high), np.bool_(partitionable), out)
    return out


# -- integers -----------------------------------------------------------------------------

@numba.njit(forceinline=True, cache=True)
def _urem(a, b):
    return a if b == 0 else a % b   # XLA: x % 0 == x for unsigned integers


@numba.njit(cache=True)
def randint_kernel(key, n, lo, hi, hi_out_of_range, nbits, partitionable):
    """JAX's randint: (hi_bits % span * (2**nbits % span) + lo_bits % span) % span, computed
    in wrapping nbits-bit unsigned arithmetic. lo/hi are int64 already clipped to the dtype;
    the result is the nbits-bit pattern of lo + offset, as uint64."""
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) if nbits == 64 else np.uint64((1 << nbits) - 1)
    keys = split_keys(key, np.int64(2), partitionable)
    if nbits == 64:
        higher, lower = fill_bits64(keys[0], n, partitionable), fill_bits64(keys[1], n, partitionable)
    else:
        higher = fill_bits32(keys[0], n, partitionable).astype(np.uint64)
        lower = fill_bits32(keys[1], n, partitionable).astype(np.uint64)
    half = np.uint64(1) << np.uint64(nbits // 2)
    out = np.empty(n, np.uint64)
    for i in range(n):
        a, b = _at(lo, i), _at(hi, i)
        ua, ub = np.uint64(a), np.uint64(b)
        span = (ub - ua) & mask
        if b <= a:
            span = np.uint64(1)
        elif _at(hi_out_of_range, i):
            span = (span + np.uint64(1)) & mask
        mult = _urem(half, span)
        mult = _urem((mult * mult) & mask, span)
        offset = ((_urem(higher[i], span) * mult) & mask) + _urem(lower[i], span)
        out[i] = (ua + _urem(offset & mask, span)) & mask
    return out


# -- shuffles and choices -----------------------------------------------------------------

@numba.njit(forceinline=True, cache=True)
def _before(a, b):
    """a sorts before b: a < b, NaN after everything (np.sort's order)."""
    return a < b or (b != b and a == a)


@numba.njit(cache=True)
def stable_argsort(keys):
    """np.argsort(keys, kind="mergesort"): indices that sort keys, equal keys in index order,
    NaN last. A bottom-up merge sort of (key, index) pairs: a few lines to compile, where
    NumPy's mergesort in Numba takes seconds per key type."""
    n = keys.shape[0]
    k, idx = keys.copy(), np.arange(n)
    k2, idx2 = np.empty_like(k), np.empty_like(idx)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for t in range(lo, hi):
                if j >= hi or (i < mid and not _before(k[j], k[i])):
                    k2[t], idx2[t] = k[i], idx[i]
                    i += 1
                else:
                    k2[t], idx2[t] = k[j], idx[j]
                    j += 1
        k, k2 = k2, k
        idx, idx2 = idx2, idx
        width *= 2
    return idx


@numba.njit(cache=True)
def permutation_kernel(key, n, partitionable):
    """The permutation JAX's _shuffle applies to n items: rounds of stable sorts keyed by
    fresh 32-bit words, ceil(3 ln n / ln(2**32 - 1)) rounds (at least enough to make key
    collisions unlikely)."""
    rounds = int(math.ceil(3 * math.log(max(1, n)) / math.log(4294967295.0)))
    perm = np.arange(n)
    for _ in range(rounds):
        key, sub = split2(key, partitionable)
        sort_keys = fill_bits32(sub, n, partitionable)
        perm = perm[stable_argsort(sort_keys)]
    return perm


@numba.njit(cache=True)
def shuffle_lanes_kernel(key, outer, n, inner, partitionable):
    """permutation(..., independent=True) of an (outer, n, inner) array along its middle axis:
    one permutation per lane, (outer, inner, n); each round's sort keys are drawn for the
    whole array at once, as JAX does."""
    rounds = int(math.ceil(3 * math.log(max(1, outer * n * inner)) / math.log(4294967295.0)))
    perm = np.empty((outer, inner, n), np.int64)
    for o in range(outer):
        for q in range(inner):
            for j in range(n):
                perm[o, q, j] = j
    for _ in range(rounds):
        key, sub = split2(key, partitionable)
        sort_keys = fill_bits32(sub, outer * n * inner, partitionable).reshape((outer, n, inner))
        for o in range(outer):
            for q in range(inner):
                order = stable_argsort(sort_keys[o, :, q].copy())
                lane = perm[o, q].copy()
                for j in range(n):
                    perm[o, q, j] = lane[order[j]]
    return perm


@numba.njit(cache=True)
def choice_p_kernel(key, n_draws, p, partitionable):
    """choice with probabilities, with replacement: the first cumulative weight >= r, where
    r = total * (1 - u)."""
    cum = np.cumsum(p)
    words = random_words(key, n_draws, type(p[0]), partitionable)
    out = np.empty(n_draws, np.int64)
    one = type(p[0])(1)
    for i in range(n_draws):
        out[i] = np.searchsorted(cum, cum[-1] * (one - to_unit(words[i])))
    return out


@numba.njit(inline="always")
def _gumbel(key, n, F, high, partitionable):
    """gumbel noise on one thread (for kernels that use it, themselves serial)."""
    out = np.empty(n, F)
    gumbel_fill(key, n, F, high, partitionable, out, _0, n)
    return out


@numba.njit(cache=True)
def top_k_desc(values, k):
    """Indices of the k largest values, ties in index order (XLA's top_k)."""
    return stable_argsort(-values)[:k]


@numba.njit(cache=True)
def choice_p_noreplace_kernel(key, n_draws, p, high, partitionable):
    """Gumbel top-k: the k largest of gumbel + log p."""
    g = _gumbel(key, p.shape[0], type(p[0]), high, partitionable)
    for i in range(p.shape[0]):
        g[i] = g[i] + log(p[i])
    return top_k_desc(g, n_draws)


@numba.njit(cache=True)
def categorical_kernel(key, logits, prefix, high, partitionable):
    """Gumbel max: logits (outer, k, inner) with the categories in the middle; the noise has
    JAX's layout (prefix, outer, k, inner); returns argmax over k, (prefix, outer, inner)."""
    outer, k, inner = logits.shape
    g = _gumbel(key, prefix * outer * k * inner, type(logits[0, 0, 0]), high,
                partitionable).reshape((prefix, outer, k, inner))
    out = np.empty((prefix, outer, inner), np.int64)
    for p in range(prefix):
        for o in range(outer):
            for q in range(inner):
                best, arg = g[p, o, 0, q] + logits[o, 0, q], 0
                for j in range(1, k):
                    v = g[p, o, j, q] + logits[o, j, q]
                    if v > best or (v != v and best == best):   # argmax: first max, NaN wins
                        best, arg = v, j
                out[p, o, q] = arg
    return out


@numba.njit(cache=True)
def categorical_noreplace_kernel(key, logits, n_draws, high, partitionable):
    """Gumbel top-k over the middle axis of (outer, k, inner) logits; (n_draws, outer, inner)."""
    outer, k, inner = logits.shape
    g = _gumbel(key, outer * k * inner, type(logits[0, 0, 0]), high,
                partitionable).reshape((outer, k, inner))
    out = np.empty((n_draws, outer, inner), np.int64)
    for o in range(outer):
        for q in range(inner):
            top = top_k_desc(g[o, :, q] + logits[o, :, q], n_draws)
            for j in range(n_draws):
                out[j, o, q] = top[j]
    return out
