"""strop.lax's convolutions in transformed code (part of the normalizer, beside lax_arrays.py):
the static arguments are read now and checked by the same ``plan`` strop.lax uses on values
(its errors name the user's line), and the call becomes the canonical convolution between the
transposes that bring its operands to channels-last and its result back:

    conv_general_dilated(x, w, (1, 1), 'SAME', dimension_numbers=('NCHW', 'OIHW', 'NCHW'))
        _t1 = conv_permute(x, (0, 2, 3, 1), (0, 3, 1, 2))
        _t2 = conv_permute(w, (2, 3, 1, 0), (3, 2, 0, 1))
        _t3 = conv_forward(_t1, _t2, (1, 1), 'SAME', (1, 1), (1, 1), 1, 1)
        ... = conv_permute(_t3, (0, 3, 1, 2), (0, 2, 3, 1))

(conv_permute: np.transpose with the inverse permutation beside it, for its rule; none where
a layout is already the canonical one: NHWC / HWIO / NHWC).  conv_forward and its transposes
have their own rules (rules/conv.py).
"""
import gast
import numpy as np

from ..runtime import conv_layout as lc
from ..runtime import conv as rc
from ..runtime import lax as rl
from . import analysis, ir

_DN = "conv-dn"   # displays[(_DN, name)]: the ConvDimensionNumbers a local name holds


class LaxConv:
    """Mixed into the Normalizer through LaxLowering; ``a`` holds a call's bound arguments."""

    def note(self, node):
        """A name set to conv_dimension_numbers(...) holds a value known now."""
        super().note(node)
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            key, value = (_DN, node.targets[0].id), node.value
            if self.is_ref(value) and isinstance(self.ref_object(value),
                                                 lc.ConvDimensionNumbers):
                self.displays[key] = self.ref_object(value)
            else:
                self.displays.pop(key, None)
        elif isinstance(node, (gast.If, gast.While, gast.For)):
            for n in analysis.writes(node):
                self.displays.pop((_DN, n), None)

    def lower_conv_general_dilated(self, a, e, scope):
        s = self.conv_static(a, "window_strides", "padding", "lhs_dilation", "rhs_dilation",
                             "dimension_numbers", "feature_group_count", "batch_group_count")
        ndim = _rank(s.get("dimension_numbers"), s["window_strides"])
        p = lc.plan(ndim, s["window_strides"], s["padding"], s.get("lhs_dilation"),
                    s.get("rhs_dilation"), s.get("dimension_numbers"),
                    s.get("feature_group_count", 1), s.get("batch_group_count", 1),
                    fail=self.lax_error)
        return self.conv_call(p, a, scope)

    def lower_conv(self, a, e, scope):
        s = self.conv_static(a, "window_strides", "padding")
        p = lc.plan(_rank(None, s["window_strides"]), s["window_strides"], s["padding"],
                    fail=self.lax_error)
        return self.conv_call(p, a, scope)

    def lower_conv_with_general_padding(self, a, e, scope):
        s = self.conv_static(a, "window_strides", "padding", "lhs_dilation", "rhs_dilation")
        p = lc.plan(_rank(None, s["window_strides"]), s["window_strides"], s["padding"],
                    s.get("lhs_dilation"), s.get("rhs_dilation"), fail=self.lax_error)
        return self.conv_call(p, a, scope)

    def lower_conv_transpose(self, a, e, scope):
        s = self.conv_static(a, "strides", "padding", "rhs_dilation", "dimension_numbers",
                             "transpose_kernel", "use_consistent_padding")
        ndim = _rank(s.get("dimension_numbers"), s["strides"])
        p = lc.transpose_plan(ndim, s["strides"], s["padding"], s.get("rhs_dilation"),
                              s.get("dimension_numbers"), s.get("transpose_kernel", False),
                              s.get("use_consistent_padding", False), fail=self.lax_error)
        return self.conv_call(p, a, scope)

    def lower_conv_dimension_numbers(self, a, e, scope):
        """A ConvDimensionNumbers known now (it depends on the ranks only), so that a
        convolution given it reads it as static."""
        dn = self.conv_value(a["dimension_numbers"], "conv_dimension_numbers's "
                                                       "dimension_numbers")
        if not isinstance(dn, (tuple, list)) or not dn or not isinstance(dn[0], str):
            raise self.lax_error(TypeError, "conv_dimension_numbers in transformed code needs "
                                            "the layout strings written in the call")
        n = len(dn[0])
        value = lc.conv_dimension_numbers((0,) * n, (0,) * n, dn, fail=self.lax_error)
        return ir.name(self.bind_ref("dimension_numbers", value))

    # --- the pieces ------------------------------------------------------------------------
    def conv_static(self, a, *names):
        return {n: self.conv_value(a[n], f"the convolution's {n}") for n in names if n in a}

    def conv_value(self, node, what):
        """The value of an argument that must be known when transforming: constants, tuples
        and lists of them written in the call, a local set to conv_dimension_numbers(...),
        global and closure values (read now: a later change is not seen, as in JAX)."""
        if isinstance(node, (gast.Tuple, gast.List)):
            return tuple(self.conv_value(x, what) for x in node.elts)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            return -self.conv_value(node.operand, what)
        if isinstance(node, gast.Constant):
            return node.value
        atom = self.expr(node, self.lax_site[1])
        if isinstance(atom, gast.Name) and (_DN, atom.id) in self.displays:
            return self.displays[(_DN, atom.id)]
        known = self.display_constant(atom)
        if known is not None:   # a display of constants, passed in: strides = (2, 2)
            return known
        var = self.free.get(atom.id) if isinstance(atom, gast.Name) else None
        if var is not None and isinstance(var.read(), (tuple, list, str, int)):
            return var.read()   # a global or closure value, read once (JAX: at tracing)
        return self.static(node, f"{what} (JAX needs it static too)", None)

    def conv_call(self, p, a, scope):
        x, w = self.expr(a["lhs"], scope), self.expr(a["rhs"], scope)
        x = self.conv_transpose_axes(x, p.lhs_perm)
        w = self.conv_transpose_axes(w, p.rhs_perm)
        if p.flip:
            back = gast.Slice(lower=None, upper=None, step=ir.const(-1))
            w = self.to_name(ir.subscript(w, gast.Tuple(
                elts=[ir.clone(back) for _ in range(p.flip)], ctx=gast.Load())))
        helper = ir.name(self.bind_ref("conv_forward", rc.conv_forward))
        out = self.to_name(ir.call(helper, [x, w] + [_static_atom(v) for v in p.params]))
        out = self.conv_transpose_axes(out, p.out_perm)
        dtype = self.conv_value(a["preferred_element_type"], "preferred_element_type") \
            if "preferred_element_type" in a else None
        if dtype is not None:
            out = self.np_call("asarray", [out, ir.name(self.bind_ref(
                "dtype", rl.canonical_dtype(np.dtype(dtype)).type))])   # 32-bit unless x64
        return out

    def conv_transpose_axes(self, x, perm):
        if tuple(perm) == tuple(range(len(perm))):
            return x
        inverse = tuple(int(i) for i in np.argsort(perm))
        helper = ir.name(self.bind_ref("conv_permute", rc.conv_permute))
        return self.to_name(ir.call(helper, [x, _static_atom(tuple(perm)),
                                             _static_atom(inverse)]))


def _rank(dimension_numbers, strides):
    if isinstance(dimension_numbers, lc.ConvDimensionNumbers):
        return len(dimension_numbers.lhs_spec)
    if isinstance(dimension_numbers, (tuple, list)) and dimension_numbers and \
            isinstance(dimension_numbers[0], str):
        return len(dimension_numbers[0])
    return len(strides) + 2 if isinstance(strides, (tuple, list)) else 2


def _static_atom(value):
    if isinstance(value, tuple):
        return gast.Tuple(elts=[_static_atom(v) for v in value], ctx=gast.Load())
    return ir.const(value)
