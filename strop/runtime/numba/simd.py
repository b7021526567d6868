"""A vector type for Numba kernels that need register blocking (the convolution kernels,
conv_kernels.py; products of a matrix and a vector, matvec.py): one 64-byte vector of a float
array's dtype (16 float32 or 8 float64; an AVX-512 register), loaded from and stored to a
C-contiguous array at a flat offset, a scalar broadcast to every lane, fused multiply-add, and
the sums of four vectors' lanes.

Why not plain loops: LLVM's loop vectorizer works on innermost loops only, so a loop nest of
products keeps its accumulators in memory (a load and a store per multiply-add: 30 GF/s on
the benchmark's convolution, one core), and without ``fastmath`` Numba emits no FMA at all;
the SLP vectorizer does not combine loop-carried scalar accumulators.  Locals of this type are
SSA values: LLVM keeps a block of them in registers across the reduction (98 GF/s, one core,
measured: benchmarks/README.md, conv).  ``vfma`` is the exact fused operation (one rounding):
results differ from separate multiply and add only by float rounding.

LLVM's x86 backend prefers 256-bit vectors on recent Intel cores and then splits 512-bit ones
unless a function asks for them; every intrinsic here marks the function it is inlined into
with ``"min-legal-vector-width"="512"`` (what clang does for AVX-512 intrinsics).  On a CPU
without AVX-512 the vectors are split into smaller registers: slower, same results.
"""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, models, register_model

__all__ = []   # used by conv_kernels.py and matvec.py only

BYTES = 64


class Vec(types.Type):
    def __init__(self, dtype):
        self.dtype, self.lanes = dtype, BYTES // (dtype.bitwidth // 8)
        super().__init__(name=f"vec({dtype} x {self.lanes})")


@register_model(Vec)
class _VecModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        scalar = ir.FloatType() if fe_type.dtype == types.float32 else ir.DoubleType()
        super().__init__(dmm, fe_type, ir.VectorType(scalar, fe_type.lanes))


def _floats(t):
    return t in (types.float32, types.float64)


def _wide(builder):
    # llvmlite checks function attributes against a list without this one: set's own add
    set.add(builder.function.attributes, '"min-legal-vector-width"="512"')


def _vector_ptr(context, builder, arrty, arr, i, vt):
    a = context.make_array(arrty)(context, builder, arr)
    return builder.bitcast(builder.gep(a.data, [i]), context.get_value_type(vt).as_pointer())


@intrinsic
def vzero(typingctx, arr):
    """A zero vector of ``arr``'s dtype."""
    if not (isinstance(arr, types.Array) and _floats(arr.dtype)):
        return None
    vt = Vec(arr.dtype)

    def codegen(context, builder, sig, args):
        _wide(builder)
        return ir.Constant(context.get_value_type(vt), None)
    return vt(arr), codegen


@intrinsic
def vload(typingctx, arr, i):
    """The vector at flat offset ``i`` of C-contiguous ``arr`` (no bounds check)."""
    if not (isinstance(arr, types.Array) and _floats(arr.dtype) and arr.layout == "C" and
            isinstance(i, types.Integer)):
        return None
    vt = Vec(arr.dtype)

    def codegen(context, builder, sig, args):
        _wide(builder)
        i = context.cast(builder, args[1], sig.args[1], types.intp)
        return builder.load(_vector_ptr(context, builder, sig.args[0], args[0], i, vt),
                            align=arr.dtype.bitwidth // 8)
    return vt(arr, i), codegen


@intrinsic
def vstore(typingctx, arr, i, v):
    """Store ``v`` at flat offset ``i`` of C-contiguous ``arr`` (no bounds check)."""
    if not (isinstance(arr, types.Array) and arr.layout == "C" and isinstance(v, Vec) and
            v.dtype == arr.dtype and isinstance(i, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        _wide(builder)
        i = context.cast(builder, args[1], sig.args[1], types.intp)
        builder.store(args[2], _vector_ptr(context, builder, sig.args[0], args[0], i, v),
                      align=arr.dtype.bitwidth // 8)
        return context.get_dummy_value()
    return types.none(arr, i, v), codegen


@intrinsic
def vsplat(typingctx, x):
    """``x`` in every lane."""
    if not _floats(x):
        return None
    vt = Vec(x)

    def codegen(context, builder, sig, args):
        ty = context.get_value_type(vt)
        v = builder.insert_element(ir.Constant(ty, None), args[0], ir.Constant(ir.IntType(32), 0))
        return builder.shuffle_vector(v, ir.Constant(ty, None), ir.Constant(
            ir.VectorType(ir.IntType(32), vt.lanes), [0] * vt.lanes))
    return vt(x), codegen


@intrinsic
def vfma(typingctx, a, b, c):
    """``a * b + c`` in each lane, rounded once."""
    if not (isinstance(a, Vec) and a == b == c):
        return None

    def codegen(context, builder, sig, args):
        ty = context.get_value_type(a)
        name = f"llvm.fma.v{a.lanes}f{a.dtype.bitwidth}"
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ty, [ty] * 3), name)
        return builder.call(fn, args)
    return a(a, b, c), codegen


@intrinsic
def vadd(typingctx, a, b):
    """``a + b`` in each lane."""
    if not (isinstance(a, Vec) and a == b):
        return None

    def codegen(context, builder, sig, args):
        return builder.fadd(*args)
    return a(a, b), codegen


@intrinsic
def lanes(typingctx, arr):
    """The number of lanes of ``arr``'s vectors (a constant)."""
    if not (isinstance(arr, types.Array) and _floats(arr.dtype)):
        return None
    n = Vec(arr.dtype).lanes

    def codegen(context, builder, sig, args):
        return ir.Constant(ir.IntType(64), n)
    return types.intp(arr), codegen


@intrinsic
def vsum4(typingctx, a0, a1, a2, a3):
    """The sums of four vectors' lanes, as a tuple: each shuffle and add serves two or four
    sums (the halves of a pair of vectors side by side, then of groups within one vector),
    where a reduction of each vector alone would take two to four times as many (a sum's
    order is its own, as a BLAS dot product's is)."""
    if not (isinstance(a0, Vec) and a0 == a1 == a2 == a3 and a0.lanes >= 8):
        return None
    n = a0.lanes

    def codegen(context, builder, sig, args):
        def combine(x, y, lo):     # lanes ``lo`` of x|y plus the lanes ``step`` after each
            idx = [ir.Constant(ir.VectorType(ir.IntType(32), len(lo)), [i + d for i in lo])
                   for d in (0, step)]
            return builder.fadd(*(builder.shuffle_vector(x, y, i) for i in idx))
        h = step = n // 2          # a pair: each vector's halves added, side by side
        s01 = combine(args[0], args[1], [*range(h), *range(n, n + h)])
        s23 = combine(args[2], args[3], [*range(h), *range(n, n + h)])
        width = step = h // 2      # four groups of h lanes across s01|s23: halved again
        t = combine(s01, s23, [g + i for g in (0, h, n, n + h) for i in range(width)])
        while width > 1:           # four groups of ``width`` lanes in t
            width = step = width // 2
            t = combine(t, ir.Constant(t.type, None),
                        [g * 2 * width + i for g in range(4) for i in range(width)])
        sums = [builder.extract_element(t, ir.Constant(ir.IntType(32), k)) for k in range(4)]
        return context.make_tuple(builder, sig.return_type, sums)
    return types.UniTuple(a0.dtype, 4)(a0, a1, a2, a3), codegen
