"""Rules of the helpers strop.lax is lowered to (runtime/lax.py).  The control-flow
primitives need none: transformer/lax_lower.py rewrites them into the ``if``, ``while`` and
``for`` they mean, which every transform already handles.

- a slice along one axis moves ``g`` back into zeros; an update takes ``g`` apart (the part
  it overwrote goes to the update, the rest to the operand);
- ``stop_gradient``, the carry check and the witnesses of branch types carry no derivative;
- vmap: the slices run once over the batch when every lane starts at the same index, else
  lane by lane (their ``*_lanes`` versions); the carry check and the branch types ask one
  lane (they read types and shapes only).
"""
from ...runtime import lax as rl
from . import batching
from .table import TEMPLATE_NAMESPACE, defjvp, defnondiff, defvjp

TEMPLATE_NAMESPACE.update({n: getattr(rl, n) for n in rl.__all__})

defvjp(rl.slice_in_dim, "operand, start, size, axis, negative",
       "update_slice_in_dim(zeros_like(operand), g, start, axis, negative)")
defjvp(rl.slice_in_dim, "slice_in_dim(doperand, start, size, axis, negative)")

defvjp(rl.update_slice_in_dim, "operand, update, start, axis, negative",
       "update_slice_in_dim(g, zeros_like(update), start, axis, negative)",
       "slice_in_dim(g, start, np.shape(update)[axis], axis, negative)")
defjvp(rl.update_slice_in_dim,
       "update_slice_in_dim(doperand, zeros_like(update), start, axis, negative)",
       "update_slice_in_dim(zeros_like(operand), dupdate, start, axis, negative)",
       joint="update_slice_in_dim(doperand, dupdate, start, axis, negative)")

defnondiff({rl.stop_gradient: None, rl.carry_matches: None, rl.start_in_dim: None,
            rl.branch_type: None, rl.branch_types_agree: None, rl.carry_check: None})

batching.ELEMENTWISE.add(rl.stop_gradient)
batching.SHAPE_ONLY.update({rl.carry_matches, rl.carry_check, rl.branch_type})
batching.LANES.update({rl.slice_in_dim: rl.slice_in_dim_lanes,
                       rl.update_slice_in_dim: rl.update_slice_in_dim_lanes})
