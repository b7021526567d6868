"""Every rule with a vjp has a jvp for the same arguments (the templates themselves are checked
in each family's tests: check_rule and check_vjp also check the jvps, helpers.check_jvp), and a
few jvps against finite differences directly."""
import numpy as np
import pytest

from strop.transformer.rules import RULES, evaluate_jvp, rule_name

rng = np.random.default_rng(3)


def test_every_differentiable_rule_has_jvps():
    missing = [rule_name(k) for k, r in RULES.items()
               if r.differentiable and not getattr(k, "__strop_custom_vjp__", False)
               and set(r.vjps) - set(r.jvps)]
    assert not missing, missing


CASES = [
    (np.multiply, (rng.standard_normal((2, 3)), rng.standard_normal(3)), {}),
    (np.power, (rng.uniform(0.5, 2, 3), rng.uniform(-1, 2, (2, 3))), {}),
    (np.sum, (rng.standard_normal((2, 3)),), {"axis": 1, "keepdims": True}),
    (np.var, (rng.standard_normal((2, 3)),), {"axis": 0, "ddof": 1}),
    (np.cumprod, (np.array([0.5, 0.0, 2.0, -1.5]),), {}),
    (np.linalg.inv, (rng.standard_normal((3, 3)) + 3 * np.eye(3),), {}),
    (np.linalg.det, (rng.standard_normal((2, 3, 3)),), {}),
    (np.einsum, ("ij,jk->ik", rng.standard_normal((2, 3)), rng.standard_normal((3, 2))), {}),
]


@pytest.mark.parametrize("fn,args,kwargs", CASES, ids=[c[0].__name__ for c in CASES])
def test_jvp_against_finite_differences(fn, args, kwargs, eps=1e-6):
    rule = RULES[fn]
    names = [n for n, _ in rule.params]
    float_args = [i for i, a in enumerate(args) if not isinstance(a, str)]
    tangents = {i: rng.standard_normal(np.shape(args[i])) for i in float_args}
    if rule.varargs:   # einsum: the operands' tangents as one tuple
        ans = fn(*args, **kwargs)
        got = evaluate_jvp(fn, {rule.varargs: tuple(tangents[i] for i in float_args)}, ans,
                           *args, **kwargs)
    else:
        ans = fn(*args, **kwargs)
        got = evaluate_jvp(fn, {names[i]: tangents[i] for i in float_args}, ans, *args,
                           **kwargs)
    shifted = lambda s: [a + s * tangents[i] if i in tangents else a   # noqa: E731
                         for i, a in enumerate(args)]
    want = (fn(*shifted(eps), **kwargs) - fn(*shifted(-eps), **kwargs)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
