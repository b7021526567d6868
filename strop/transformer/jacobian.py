"""jacrev as a source transformation: the vjp's code run once per basis cotangent of the output.

The vjp made by reverse mode (``f_vjp(x, g)``) is put in a loop whose first iteration also
finds the output's size: ``g`` becomes ``out_basis(out, _i)``, the cotangents of the inputs are
pushed on a list, and ``jac_rev`` assembles them into blocks shaped ``out.shape + x.shape``.
The result is a function of the same parameters as ``f``, so other transforms take it as they
take ``f`` (``hessian = jacfwd(jacrev(f))``).
"""

import gast

from .. import runtime
from . import ir
from .reverse import reverse


def jacrev(fn, wrt, spec, has_aux=False, kinds=None):
    vjp = reverse(fn, wrt, "vjp", has_aux, True, kinds)
    node = ir.clone(vjp.node)
    refs = dict(vjp.refs)
    namer = ir.Namer(ir.names_in(node) | set(refs))

    def helper(n):
        obj = getattr(runtime, n)
        for k, v in refs.items():
            if v is obj:
                return ir.name(k)
        k = namer.fresh(n)
        refs[k] = obj
        return ir.name(k)

    # the cotangent parameter (before the free variables): now the basis cotangent
    g = node.args.args.pop(len(node.args.args) - len(vjp.free) - 1).id
    body = list(node.body)
    ret = body.pop()
    loc = ret.loc
    value, grads = ret.value.elts
    out, aux = (value.elts[0], value.elts[1]) if isinstance(value, gast.Tuple) else (value, None)
    leaves = [e for grp in grads.elts for e in (grp.elts if isinstance(grp, gast.Tuple)
                                                   else [grp])]
    i, n, go, rows = (namer.fresh(b) for b in ("_i", "_n", "_more", "_rows"))
    size = ir.assign(n, ir.call(helper("out_size"), [ir.clone(out)]), loc)
    seed = ir.assign(g, ir.call(helper("out_basis"), [ir.clone(out), ir.name(i)]), loc)
    at = next((k for k, s in enumerate(body) if isinstance(s, gast.Assign)
               and isinstance(s.value, gast.Name) and s.value.id == g), None)
    if at is None:   # the output does not depend on the inputs: zeros, its type checked
        body.extend([size, seed])
    else:
        body[at:at] = [size, seed]
    row = namer.fresh("_row")   # a name, so that reverse mode sees the tape as active
    body.append(ir.assign(row, gast.Tuple(elts=leaves, ctx=gast.Load()), loc))
    body.append(ir.stmt(gast.Expr(value=ir.call(helper("push"), [ir.name(rows), ir.name(row)])),
                        loc))
    body.append(ir.assign(i, gast.BinOp(left=ir.name(i), op=gast.Add(), right=ir.const(1)),
                          loc))
    body.append(ir.assign(go, gast.Compare(left=ir.name(i), ops=[gast.Lt()],
                                           comparators=[ir.name(n)]), loc))
    params = [a.id for a in node.args.args[:len(node.args.args) - len(fn.free)]]
    saves, body, arg = ir.fresh_each_trip(body, params, namer, loc)
    loop = ir.stmt(gast.While(test=ir.name(go), body=body, orelse=[]), loc)
    if isinstance(spec, bool):   # no trees: a constant
        layout = ir.const(spec)
    else:
        layout = ir.name(namer.fresh("spec"))
        refs[layout.id] = spec
    groups = fn.groups or tuple((False, (p,)) for p in params)
    xs = gast.Tuple(elts=[ir.name(arg[p]) for k in wrt for p in groups[k][1]], ctx=gast.Load())
    jac = namer.fresh("jac")
    head = [ir.assign(i, ir.const(0), loc), ir.assign(n, ir.const(1), loc),
            ir.assign(go, ir.const(True), loc),
            ir.assign(rows, ir.call(helper("stack")), loc)] + saves
    tail = [ir.assign(jac, ir.call(helper("jac_rev"), [ir.name(rows), ir.clone(out), xs,
                                                       layout]), loc)]
    result = gast.Tuple(elts=[ir.name(jac), ir.clone(aux)], ctx=gast.Load()) if aux \
        else ir.name(jac)
    node.body = head + [loop] + tail + [ir.stmt(gast.Return(value=result), loc)]
    node.name = namer.fresh(f"{fn.node.name}_jacrev")
    return ir.Function(node, refs, dict(vjp.free), vjp.nparams, vjp.guards, vjp.groups)
