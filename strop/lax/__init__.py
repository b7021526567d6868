"""strop.lax: JAX's structured control flow and the lax functions ported code uses with it,
with JAX's signatures and semantics.  Called on values they run as the Python they mean;
inside a transformed function they are rewritten into that Python (an ``if``, a ``while``, a
``for`` that stacks its outputs) before grad, jvp, vmap or jit see the code
(transformer/lax_lower.py), so every transform handles them as it handles the user's own
control flow.  The convolutions (conv.py) become one channels-last convolution helper with
rules of its own (runtime/conv.py).  ``Precision`` (precision.py) is accepted where JAX's lax
takes ``precision=``, and ignored: the CPU computes in the operands' own precision."""
from .arrays import broadcast, clamp, expand_dims, select, sort, stop_gradient
from .conv import (ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated,
                   conv_transpose, conv_with_general_padding)
from .control import cond, fori_loop, map, scan, switch, while_loop  # noqa: A004
from .precision import Precision
from .slicing import (dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim,
                      dynamic_update_index_in_dim, dynamic_update_slice,
                      dynamic_update_slice_in_dim)

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "stop_gradient",
           "select", "clamp", "sort", "broadcast", "expand_dims", "dynamic_slice",
           "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_index_in_dim", "dynamic_update_index_in_dim", "conv_general_dilated", "conv",
           "conv_with_general_padding", "conv_dimension_numbers", "conv_transpose",
           "ConvDimensionNumbers", "Precision"]
