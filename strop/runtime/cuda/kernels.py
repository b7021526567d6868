"""Kernels over whole arrays on the device, made from source text once per kind and cached:
what ``jit(f)`` of array code (not a vmap) launches on a GPU, one operation at a time
(ops.py).

- ``elementwise``: an expression over operands, one thread per output element.  A fused
  chain of operators (codegen/fuse.py) is one such kernel.  Each operand is a number, an
  array of the output's shape read at the same flat index, or a strided view (an offset and
  a stride per output axis, 0 where it broadcasts): broadcasting, transposes, slices and
  copies need no other kernel.
- ``reduction``: sum, prod, max or min over some axes.  One block per output element and
  part of its reduced axes; its threads combine through shared memory, and a second launch
  combines the parts where there were several.
- ``matmul``: ``a @ b`` through 16x16 tiles in shared memory, each operand read through its
  strides (``g @ w.T`` needs no transposed copy), leading axes a batch.
- ``scan``: a running sum or product along one axis, one thread per line.

Shapes and strides are passed as tuples; the rank is part of the kernel's kind, so the index
arithmetic is unrolled in the source.
"""
import functools
import math
import re

import numpy as np

from . import cuda, helpers, simulated, ufuncs
from .. import arithmetic

# (Numba's simulator runs each thread as a Python thread: there, the same kernels with fewer)
THREADS = 32 if simulated() else 256   # per block, elementwise
REDUCE = 8 if simulated() else 128     # per block, reductions (a power of two)
TILE = 4 if simulated() else 16        # matmul tiles
BLOCKS = 4096      # at most, elementwise: each thread then takes several elements
PART = REDUCE * 64     # elements of a reduction one block takes before it splits into parts

# the names an expression may call in a kernel: weak (arithmetic.py) and the ufunc stubs
NAMES = {"weak": arithmetic.weak, **{s.__name__: s for s in ufuncs.STUBS.values()}}


def _module(source, name, **names):
    """The kernel ``name`` defined by ``source``, compiled with numba.cuda."""
    numba_cuda = cuda()
    helpers.register()
    scope = {"cuda": numba_cuda, "math": math, **NAMES, **names}
    exec(compile(source, f"<strop cuda kernel {name}>", "exec"), scope)
    kernel = numba_cuda.jit(scope[name])
    kernel.__strop_source__ = source
    kernel.__strop_python__ = scope[name]
    return kernel


def _unravel(rank, index, shape, strided):
    """Lines of source computing, for each (offset, strides) name pair in ``strided``, the
    flat position of element ``index`` of an array of ``shape`` (a tuple of ``rank``)."""
    lines = [f"{o}_k = {o}" for o, _ in strided] + [f"r = {index}"]
    for d in reversed(range(rank)):
        lines.append(f"q = r % {shape}[{d}]" if d else "q = r")
        if d:
            lines.append(f"r = r // {shape}[{d}]")
        lines += [f"{o}_k += q * {s}[{d}]" for o, s in strided]
    return lines


@functools.lru_cache(maxsize=None)
def elementwise(expression, kinds, rank, into=False):
    """The kernel ``k(out, shape, *operands)`` writing ``expression`` (naming operand i
    ``_i``) into the flat ``out``; ``kinds[i]``: "n" a number, "c" an array of the output's
    shape (flat), "s" a strided view, passed as three arguments: the flat array, its offset,
    its strides (a tuple of ``rank``).  ``into``: ``k(out, oo, so, n, shape, *operands)``
    writes the ``n`` elements into a strided view of ``out`` instead (offset ``oo``, strides
    ``so``): a part of an array being made (concatenate, an item set)."""
    params, reads, strided = [], {}, [("oo", "so")] if into else []
    for i, kind in enumerate(kinds):
        if kind == "s":
            params += [f"a{i}", f"o{i}", f"s{i}"]
            strided.append((f"o{i}", f"s{i}"))
            reads[i] = f"a{i}[o{i}_k]"
        else:
            params.append(f"a{i}")
            reads[i] = f"a{i}[i]" if kind == "c" else f"a{i}"
    body = _unravel(rank, "i", "shape", strided) if strided else []
    value = re.sub(r"\b_(\d+)\b", lambda m: reads[int(m.group(1))], expression)
    head, bound, target = ("out, oo, so, n, shape", "n", "out[oo_k]") if into else \
        ("out, shape", "out.shape[0]", "out[i]")
    source = "\n".join([
        f"def elementwise_kernel({head}, {', '.join(params)}):",
        "    i = cuda.grid(1)",
        "    step = cuda.gridsize(1)",
        f"    while i < {bound}:",
        *("        " + line for line in body),
        f"        {target} = {value}",
        "        i += step", ""])
    return _module(source, "elementwise_kernel")


def launch_elementwise(kernel, n, arguments):
    """``kernel`` (of ``elementwise``) over ``n`` elements."""
    threads = min(THREADS, 32 * -(-n // 32))
    kernel[min(BLOCKS, -(-n // threads)), threads](*arguments)


_COMBINE = {"sum": "a + b", "prod": "a * b",
            "max": "a if a >= b or a != a else b", "min": "a if a <= b or a != a else b"}


@functools.lru_cache(maxsize=None)
def reduction(op, kept, reduced, dtype):
    """The kernel ``k(out, x, offset, kshape, kstrides, rshape, rstrides, n, parts)``: block
    (o, p) combines with ``op`` the elements p, p + parts, ... (in blocks of REDUCE) of output
    element o's ``n`` reduced elements of the flat ``x``, into ``out[o * parts + p]``."""
    combine = _COMBINE[op].replace("a", "{a}").replace("b", "{b}")
    unravel_k = _unravel(kept, "o", "kshape", [("base", "kstrides")]) if kept else ["base_k = base"]
    unravel_r = _unravel(reduced, "j", "rshape", [("base_k", "rstrides")])
    source = "\n".join([
        "def reduction_kernel(out, x, base, kshape, kstrides, rshape, rstrides, n, parts):",
        "    o = cuda.blockIdx.x",
        "    p = cuda.blockIdx.y",
        "    t = cuda.threadIdx.x",
        "    shared = cuda.shared.array(REDUCE, acc_t)",
        *("    " + line for line in unravel_k),
        "    first = True",
        "    acc = acc_t(0)",
        "    j = p * REDUCE + t",
        "    while j < n:",
        *("        " + line for line in unravel_r),
        "        v = acc_t(x[base_k_k])",
        "        if first:",
        "            acc = v",
        "            first = False",
        "        else:",
        f"            acc = {combine.format(a='acc', b='v')}",
        "        j += REDUCE * parts",
        "    shared[t] = acc",
        "    count = min(REDUCE, n - p * REDUCE)",   # the threads that read an element
        "    cuda.syncthreads()",
        "    width = REDUCE // 2",
        "    while width > 0:",
        "        if t < width and t + width < count:",
        f"            shared[t] = {combine.format(a='shared[t]', b='shared[t + width]')}",
        "        cuda.syncthreads()",
        "        width //= 2",
        "    if t == 0:",
        "        out[o * parts + p] = shared[0]", ""])
    from numba import from_dtype
    return _module(source, "reduction_kernel", REDUCE=REDUCE, acc_t=from_dtype(np.dtype(dtype)))


@functools.lru_cache(maxsize=None)
def scan(op, kept, dtype):
    """The kernel ``k(out, x, base, kshape, kstrides, n, step)``: thread o runs along line o
    of ``x`` (its ``n`` elements ``step`` apart), writing the running ``op`` ("sum", "prod")
    into the C-contiguous ``out`` of x's shape with the scanned axis moved last."""
    unravel = _unravel(kept, "o", "kshape", [("base", "kstrides")]) if kept else ["base_k = base"]
    source = "\n".join([
        "def scan_kernel(out, x, base, kshape, kstrides, n, step, lines):",
        "    o = cuda.grid(1)",
        "    if o < lines:",
        *("        " + line for line in unravel),
        f"        acc = acc_t({0 if op == 'sum' else 1})",
        "        for j in range(n):",
        f"            acc = acc {'+' if op == 'sum' else '*'} acc_t(x[base_k + j * step])",
        "            out[o * n + j] = acc", ""])
    from numba import from_dtype
    return _module(source, "scan_kernel", acc_t=from_dtype(np.dtype(dtype)))


def parts_for(n):
    """How many blocks share one output element's ``n`` reduced elements."""
    return max(1, min(1024, n // PART))


@functools.lru_cache(maxsize=None)
def matmul(batch, dtype):
    """The kernel ``k(out, a, oa, sa, b, ob, sb, m, n, k, bshape)`` of the flat
    ``out[..., m, n] = a[..., m, k] @ b[..., k, n]``; ``sa``, ``sb``: each operand's strides
    (its ``batch`` leading axes, then its two), ``bshape`` the batch's shape."""
    unravel = _unravel(batch, "cuda.blockIdx.z", "bshape", [("oa", "sa"), ("ob", "sb")]) \
        if batch else ["oa_k = oa", "ob_k = ob"]
    source = "\n".join([
        "def matmul_kernel(out, a, oa, sa, b, ob, sb, m, n, k, bshape):",
        "    ta = cuda.shared.array((TILE, TILE), acc_t)",
        "    tb = cuda.shared.array((TILE, TILE), acc_t)",
        "    tx = cuda.threadIdx.x",
        "    ty = cuda.threadIdx.y",
        "    col = cuda.blockIdx.x * TILE + tx",
        "    row = cuda.blockIdx.y * TILE + ty",
        *("    " + line for line in unravel),
        f"    ra = sa[{batch}]",
        f"    ca = sa[{batch + 1}]",
        f"    rb = sb[{batch}]",
        f"    cb = sb[{batch + 1}]",
        "    acc = acc_t(0)",
        "    for start in range(0, k, TILE):",
        "        i = start + tx",
        "        ta[ty, tx] = a[oa_k + row * ra + i * ca] if row < m and i < k else acc_t(0)",
        "        i = start + ty",
        "        tb[ty, tx] = b[ob_k + i * rb + col * cb] if i < k and col < n else acc_t(0)",
        "        cuda.syncthreads()",
        "        for j in range(TILE):",
        "            acc += ta[ty, j] * tb[j, tx]",
        "        cuda.syncthreads()",
        "    if row < m and col < n:",
        "        out[cuda.blockIdx.z * m * n + row * n + col] = acc", ""])
    from numba import from_dtype
    return _module(source, "matmul_kernel", TILE=TILE, acc_t=from_dtype(np.dtype(dtype)))


def launch_matmul(kernel, out, operands, m, n, k, bshape, nbatch):
    kernel[(-(-n // TILE), -(-m // TILE), max(1, nbatch)), (TILE, TILE)](
        out, *operands, m, n, k, bshape)
