"""``jit(vmap(f))`` on all cores: the batch cut into chunks of lanes, one per thread.

Lanes are independent (that is what vmap means), so the compiled batched function run on a
slice of the batch gives that slice of the result.  Its code runs without the GIL, so the
chunks run at once on threads.  Whether it pays is measured, not guessed: the second call
runs a few lanes alone, then the whole batch, to learn the cost of a lane and of joining the
chunks' outputs; a batch that costs less than ``MIN_SECONDS``, or whose chunks would save
less time than joining them costs, runs in one piece.
"""
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

MIN_SECONDS = 2e-3     # below this a call runs on one thread (a thread hand-off costs ~50 µs)
SAMPLE_LANES = 16
# 3 calls in a row the way (chunks or one piece) not chosen, after 256 calls, then after twice
# as many each time it stays behind (up to 64 times): a way 10x slower costs ~1% of the calls
EXPLORE, TRIES, BACKOFF = 256, 3, 64

_pool, _lock = None, threading.Lock()


def threads():
    try:
        import numba
        return numba.get_num_threads()
    except Exception:
        return os.cpu_count() or 1


def pool():
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max(threads(), 1), thread_name_prefix="strop-lanes")
        return _pool


class Split:
    """How one compiled vmap is cut: the batch axis of each parameter (None: unbatched) and
    ``out_axes`` (where each output's lanes go)."""

    def __init__(self, axes, out_axes):
        self.axes, self.out_axes = list(axes), out_axes
        self.lane_seconds = None      # measured on the second call
        self.join_seconds = 0.0
        self.warm = False
        self.best = {}                # pieces -> the fastest time per lane seen so cut
        self.tried = {}               # pieces -> calls run so cut
        self.calls, self.explore_at, self.interval, self.leader = 0, EXPLORE, EXPLORE, None

    def __call__(self, runner, args, free):
        batched = [(i, ax) for i, ax in enumerate(self.axes[:len(args)]) if ax is not None]
        parts = threads()
        if not batched or parts < 2:
            return runner(*args, *free)
        i, ax = batched[0]
        n = np.shape(args[i])[ax]
        if self.lane_seconds is None:
            if not self.warm:      # the first call compiles, and touches memory the first time
                self.warm = True
                return runner(*args, *free)
            return self.measure(runner, args, free, n)
        worth = n * self.lane_seconds / MIN_SECONDS if MIN_SECONDS else n
        parts = min(parts, n, int(worth))
        if parts < 2 or MIN_SECONDS and self.lane_seconds * (1 - 1 / parts) <= self.join_seconds:
            return runner(*args, *free)
        if MIN_SECONDS:
            parts = self.choose(parts)
        start = time.perf_counter()
        out = runner(*args, *free) if parts == 1 else self.chunks(runner, args, free, n, parts)
        took = (time.perf_counter() - start) / n
        self.best[parts] = min(self.best.get(parts, took), took)
        return out

    def choose(self, parts):
        """``parts`` pieces, or one, whichever has run faster (a measurement taken while
        another process held the cores must not decide for good): each is tried a few calls
        first, then now and then, and its best time per lane kept."""
        self.calls += 1
        for way in (1, parts):
            if self.tried.get(way, 0) < TRIES:
                self.tried[way] = self.tried.get(way, 0) + 1
                return way
        ahead = parts if self.best[parts] < self.best[1] else 1
        if self.calls == self.explore_at + TRIES:       # explored: wait longer if no change
            self.interval = min(2 * self.interval, BACKOFF * EXPLORE) if \
                ahead == self.leader else EXPLORE
            self.explore_at += self.interval
        if self.calls == self.explore_at:
            self.leader = ahead
        # a few calls in a row: the first of a way runs on memory the other way left behind
        return (parts + 1 - ahead) if 0 <= self.calls - self.explore_at < TRIES else ahead

    def chunks(self, runner, args, free, n, parts):
        bounds = [n * k // parts for k in range(parts + 1)]
        rest = [pool().submit(runner, *self.cut(args, lo, hi), *free)
                for lo, hi in zip(bounds[1:-1], bounds[2:])]
        outs = [runner(*self.cut(args, bounds[0], bounds[1]), *free)]
        outs += [f.result() for f in rest]
        return join(outs, self.out_axes)

    def measure(self, runner, args, free, n):
        """The second call (the first compiles): timed on a few lanes, then on the whole batch
        in one piece (the result it returns).  What a lane costs is the difference (a call's own
        cost, such as a BLAS call through NumPy, is not a lane's), and what joining chunks
        costs is a copy of the outputs, timed: chunks pay only when they save more than
        that (per-example gradients are large outputs of little work per byte)."""
        m = min(n, SAMPLE_LANES)
        start = time.perf_counter()
        runner(*self.cut(args, 0, m), *free)
        few = time.perf_counter() - start
        start = time.perf_counter()
        out = runner(*args, *free)
        whole = time.perf_counter() - start
        # not a sample of one piece's time: the first call after compiling often runs slow
        self.lane_seconds = max(whole - few, 0.0) / (n - m) if n > m else whole / max(n, 1)
        start = time.perf_counter()
        join([out, out], self.out_axes)
        self.join_seconds = (time.perf_counter() - start) / max(2 * n, 1)
        return out

    def cut(self, args, lo, hi):
        out = []
        for a, ax in zip(args, self.axes):
            if ax is None:
                out.append(a)
            else:
                index = [slice(None)] * np.ndim(a)
                index[ax] = slice(lo, hi)
                out.append(a[tuple(index)])
        return out


def join(outs, spec):
    """The chunks' outputs put together along their ``out_axes`` (None: the same in every
    chunk)."""
    first = outs[0]
    if isinstance(first, (tuple, list)):
        specs = spec if isinstance(spec, (tuple, list)) else [spec] * len(first)
        return type(first)(join([o[k] for o in outs], s) for k, s in enumerate(specs))
    if isinstance(first, dict):
        specs = spec if isinstance(spec, dict) else {k: spec for k in first}
        return {k: join([o[k] for o in outs], specs[k]) for k in first}
    if spec is None:
        return first
    return np.concatenate(outs, axis=spec)
