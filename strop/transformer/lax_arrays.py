"""strop.lax's array functions in transformed code (part of the normalizer, beside
lax_lower.py's control flow): each becomes the NumPy it means, or the dynamic-slice helpers
of runtime/lax.py, one call per axis (they have their own rules: rules/lax.py).

    select(p, a, b)                  np.where(p, a, b)
    clamp(lo, x, hi)                 np.minimum(np.maximum(x, lo), hi)
    sort(x, d) / sort((k, v), d)     np.sort(x, d) / np.take_along_axis(v, np.argsort(k, d), d)
    broadcast(x, sizes)              np.broadcast_to(x, sizes + np.shape(x))
    expand_dims(x, (0, 2))           np.expand_dims(np.expand_dims(x, 0), 2)
    stop_gradient(x)                 stop_gradient(leaf) for each leaf
    dynamic_slice(x, (i, j), (m, n)) slice_in_dim(slice_in_dim(x, i, m, 0, True), j, n, 1, True)
    dynamic_update_slice(x, u, (i,)) update_slice_in_dim(x, u, i, 0, True); several axes: the
                                     slab along the first axis updated along the others
"""
import gast

from . import ir


class LaxArrays:
    """Mixed into the Normalizer through LaxLowering; ``a`` holds a call's bound arguments."""

    def lower_stop_gradient(self, a, e, scope):
        x = self.expr(a["x"], scope)
        shape = self.static_shape(x)
        leaves = [self.to_name(ir.call(self.lax_helper("stop_gradient"), [leaf]))
                  for leaf in self.tree_leaves(x, shape)]
        return self.tree_build(shape, iter(leaves))

    def lower_select(self, a, e, scope):
        return self.np_call("where", [self.expr(a[k], scope)
                                      for k in ("pred", "on_true", "on_false")])

    def lower_clamp(self, a, e, scope):
        low, x, high = (self.expr(a[k], scope) for k in ("min", "x", "max"))
        return self.np_call("minimum", [self.np_call("maximum", [x, low]), high])

    def lower_sort(self, a, e, scope):
        dim = [self.expr(a["dimension"], scope)] if "dimension" in a else []
        operand = a["operand"]
        if not isinstance(operand, (gast.Tuple, gast.List)):
            return self.np_call("sort", [self.expr(operand, scope)] + dim)
        if self.static(a.get("num_keys"), "sort's num_keys", 1) != 1:
            raise self.error("lax.sort with num_keys > 1 is supported outside transformed "
                             "code only", e, scope,
                             fix="sort by one key, or combine the keys into one")
        ops = [self.expr(o, scope) for o in operand.elts]
        dim = dim or [ir.const(-1)]
        order = self.np_call("argsort", [ops[0]] + dim, [("kind", ir.const("stable"))])
        return gast.Tuple(elts=[self.np_call("take_along_axis", [x, order] + dim)
                                for x in ops], ctx=gast.Load())

    def lower_broadcast(self, a, e, scope):
        x = self.expr(a["operand"], scope)
        shape = self.np_call("shape", [x])
        full = self.to_name(gast.BinOp(left=self.as_tuple(a["sizes"], scope), op=gast.Add(),
                                       right=shape))
        return self.np_call("broadcast_to", [x, full])

    def lower_expand_dims(self, a, e, scope):
        """Dimensions written as non-negative constants: one axis at a time, in increasing
        order (Numba's np.expand_dims takes one int)."""
        x, dims = self.expr(a["array"], scope), a["dimensions"]
        if isinstance(dims, (gast.Tuple, gast.List)) and all(
                isinstance(d, gast.Constant) and type(d.value) is int and d.value >= 0
                for d in dims.elts):
            for d in sorted({d.value for d in dims.elts}):
                x = self.np_call("expand_dims", [x, ir.const(d)])
            return x
        return self.np_call("expand_dims", [x, self.as_tuple(dims, scope)])

    def as_tuple(self, node, scope):
        if isinstance(node, (gast.Tuple, gast.List)):
            return gast.Tuple(elts=[self.expr(x, scope) for x in node.elts], ctx=gast.Load())
        return self.to_name(ir.call("tuple", [self.expr(node, scope)]))

    # --- dynamic slices --------------------------------------------------------------------
    def indices(self, node, scope, count, what):
        """The atoms of a sequence of indices: written in the call, a display, or (``count``
        known) a value read item by item."""
        if isinstance(node, (gast.Tuple, gast.List)):
            items = [self.expr(x, scope) for x in node.elts]
        else:
            atom = self.expr(node, scope)
            shape = self.static_shape(atom)
            if shape[0] in ("tuple", "list"):
                items = [c for c, _ in self.tree_children(atom, shape)]
            elif count is not None:
                items = [self.to_name(ir.subscript(ir.clone(atom), ir.const(k)))
                         for k in range(count)]
            else:
                raise self.error(f"the {what} must be a tuple known when transforming (JAX "
                                 "needs them static too)", node, scope,
                                 fix="write the tuple in the call: (i, 0)")
        if count is not None and len(items) != count:
            raise self.lax_error(ValueError, f"Length of slice indices must match number of "
                                             f"operand dimensions ({len(items)} vs {count})")
        return items

    def negative(self, a, scope):
        flag = a.get("allow_negative_indices")
        return self.expr(flag, scope) if flag is not None else ir.const(True)

    def slice_call(self, x, start, size, axis, neg):
        return self.to_name(ir.call(self.lax_helper("slice_in_dim"),
                                    [x, start, size, axis, ir.clone(neg)]))

    def update_call(self, x, u, start, axis, neg):
        return self.to_name(ir.call(self.lax_helper("update_slice_in_dim"),
                                    [x, u, start, axis, ir.clone(neg)]))

    def lower_dynamic_slice(self, a, e, scope):
        x = self.expr(a["operand"], scope)
        sizes = self.indices(a["slice_sizes"], scope, None, "slice sizes")
        starts = self.indices(a["start_indices"], scope, len(sizes), "start indices")
        neg = self.negative(a, scope)
        for k, (start, size) in enumerate(zip(starts, sizes)):
            x = self.slice_call(x, start, size, ir.const(k), neg)
        return x

    def lower_dynamic_update_slice(self, a, e, scope):
        x, u = self.expr(a["operand"], scope), self.expr(a["update"], scope)
        starts = self.indices(a["start_indices"], scope, None, "start indices")
        neg = self.negative(a, scope)
        if not starts:
            return u
        shape = self.np_call("shape", [u]) if len(starts) > 1 else None

        def update(x, k):   # the slab at starts[k] along axis k, updated along the others
            if k == len(starts) - 1:
                return self.update_call(x, u, starts[k], ir.const(k), neg)
            size = self.to_name(ir.subscript(ir.clone(shape), ir.const(k)))
            slab = self.slice_call(x, starts[k], size, ir.const(k), neg)
            return self.update_call(x, update(slab, k + 1), starts[k], ir.const(k), neg)
        return update(x, 0)

    def lower_dynamic_slice_in_dim(self, a, e, scope):
        x, start = self.expr(a["operand"], scope), self.expr(a["start_index"], scope)
        size = self.expr(a["slice_size"], scope) if "slice_size" in a else ir.const(1)
        axis = self.expr(a["axis"], scope) if "axis" in a else ir.const(0)
        return self.slice_call(x, start, size, axis, self.negative(a, scope))

    def lower_dynamic_index_in_dim(self, a, e, scope):
        x, index = self.expr(a["operand"], scope), self.expr(a["index"], scope)
        axis = self.expr(a["axis"], scope) if "axis" in a else ir.const(0)
        out = self.slice_call(x, index, ir.const(1), axis, ir.const(True))
        keep = self.static(a.get("keepdims"), "dynamic_index_in_dim's keepdims", True)
        if keep:
            return out
        if not (isinstance(axis, gast.Constant) and isinstance(axis.value, int)):
            return self.np_call("squeeze", [out, ir.clone(axis)])
        # the axis indexed away, x[:, 0] or x[..., 0, :] (Numba has no np.squeeze(x, axis))
        k, whole = axis.value, gast.Slice(lower=None, upper=None, step=None)
        index = [ir.clone(whole) for _ in range(k)] + [ir.const(0)] if k >= 0 else \
            [ir.const(Ellipsis), ir.const(0)] + [ir.clone(whole) for _ in range(-k - 1)]
        return self.to_name(ir.subscript(out, gast.Tuple(elts=index, ctx=gast.Load())))

    def lower_dynamic_update_slice_in_dim(self, a, e, scope):
        x, u = self.expr(a["operand"], scope), self.expr(a["update"], scope)
        start, axis = self.expr(a["start_index"], scope), self.expr(a["axis"], scope)
        return self.update_call(x, u, start, axis, self.negative(a, scope))

    def lower_dynamic_update_index_in_dim(self, a, e, scope):
        """The update given the axis of size 1 if it lacks it (reshaped to the row it
        replaces), then written as a slice."""
        x, u = self.expr(a["operand"], scope), self.expr(a["update"], scope)
        index, axis = self.expr(a["index"], scope), self.expr(a["axis"], scope)
        neg = self.negative(a, scope)
        row = self.slice_call(x, index, ir.const(1), axis, neg)
        u = self.np_call("reshape", [u, self.np_call("shape", [row])])
        return self.update_call(x, u, index, ir.clone(axis), neg)
