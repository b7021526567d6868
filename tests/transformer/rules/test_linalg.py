"""numpy.linalg rules against central finite differences (tests/helpers.py's oracle).

Where a function reads one triangle of a symmetric input (cholesky, eigh, hermitian svd/pinv),
the oracle differentiates x -> loss(fn((x + xᵀ) / 2)), whose gradient is the symmetric gradient
the rules return.  Eigen- and singular vectors are defined up to sign, so their losses are
sign-invariant (squares of the entries, v diag(c) vᵀ, u diag(c) vh).
"""
import numpy as np
import pytest

from helpers import check_rule, numeric_vjp
from strop.transformer.rules import RULES, evaluate_vjp
from helpers import check_vjp

rng = np.random.default_rng(4)
LA = np.linalg


def randn(*shape):
    return rng.standard_normal(shape)


def well_conditioned(*shape):
    return randn(*shape) + 3 * np.eye(shape[-1])


def spd(*shape):
    x = randn(*shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def symmetric(*shape):
    x = randn(*shape)
    return (x + np.swapaxes(x, -1, -2)) / 2


def sym(x):
    return (x + np.swapaxes(x, -1, -2)) / 2


def check_loss(fn, a, loss, symmetric_input=False, key=None, rtol=1e-5, atol=1e-6, **kwargs):
    """The rule's cotangent of ``a`` for the cotangent ``loss(ans)[1]`` of the output, against
    central differences of ``loss(fn(a))[0]`` (of ``fn(sym(a))`` for symmetric inputs)."""
    key = fn if key is None else key
    ans = fn(a, **kwargs)
    got = evaluate_vjp(key, [n for n, _ in RULES[key].params][0], loss(ans)[1], ans, a, **kwargs)
    prep = sym if symmetric_input else (lambda x: x)
    want = numeric_vjp(lambda x: loss(fn(prep(x), **kwargs))[0], [a], 0, 1.0)
    assert np.shape(got) == np.shape(a)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"vjp of {fn}")


# --- inverse, solve, determinants ---

@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 3, 3)])
def test_inv(shape):
    check_rule(LA.inv, well_conditioned(*shape))


@pytest.mark.parametrize("sa,sb", [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)),
                                   ((2, 3, 3), (2, 3, 4)), ((3, 3), (2, 3, 4)),
                                   ((2, 1, 3, 3), (4, 3, 2))])
def test_solve(sa, sb):
    check_rule(LA.solve, well_conditioned(*sa), randn(*sb))


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 3, 3)])
def test_det_and_slogdet(shape):
    a = randn(*shape)  # both signs of the determinant
    check_rule(LA.det, a)
    check_vjp(LA.slogdet, [a], 0)


# --- symmetric inputs ---

@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4)])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(shape, upper):
    G = randn(*shape)
    check_loss(LA.cholesky, spd(*shape), lambda L: (np.sum(G * L), G), True, upper=upper)


def eigh_loss(gw, G1, G2, c):
    """A sign-invariant loss of eigh's (w, v) and its cotangent (parts set to None: unused)."""
    def loss(ans):
        w, v = ans
        value = 0.0 if gw is None else np.sum(gw * w)
        gv = None
        if G1 is not None:
            vc = v * c[..., None, :]
            value = value + np.sum(G1 * v ** 2) + np.sum(G2 * (vc @ np.swapaxes(v, -1, -2)))
            gv = 2 * G1 * v + (G2 + np.swapaxes(G2, -1, -2)) @ vc
        return value, (gw, gv)
    return loss


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4)])
@pytest.mark.parametrize("parts", ["both", "values", "vectors"])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(shape, parts, uplo):
    n = shape[-1]
    gw = None if parts == "vectors" else randn(*shape[:-1])
    G1, G2, c = (None, None, None) if parts == "values" else (randn(*shape), randn(*shape),
                                                              randn(*shape[:-1]))
    check_loss(LA.eigh, symmetric(*shape) + 0.5 * np.diag(np.arange(n)), eigh_loss(gw, G1, G2, c),
               True, UPLO=uplo)


def random_rotation(n):
    return np.linalg.qr(randn(n, n))[0]


def test_repeated_eigenvalues_with_unused_vectors():
    q = random_rotation(4)
    a = q @ np.diag([1.0, 1.0, 2.0, -1.0]) @ q.T
    check_loss(LA.eigh, a, lambda ans: (np.sum(ans[0] ** 2), (2 * ans[0], np.zeros((4, 4)))),
               True)  # the loss is ‖a‖², its gradient 2a
    check_loss(LA.eigh, np.eye(3), lambda ans: (np.sum(ans[0] ** 2), (2 * ans[0], None)), True)


def test_repeated_singular_values_with_unused_vectors():
    a = 2 * random_rotation(3)  # singular values 2, 2, 2; the nuclear norm's gradient is u vh
    check_loss(LA.svd, a,
               lambda ans: (np.sum(ans[1]), (np.zeros((3, 3)), np.ones(3), np.zeros((3, 3)))))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_eigvalsh(shape):
    gw = randn(*shape[:-1])
    check_loss(LA.eigvalsh, symmetric(*shape), lambda w: (np.sum(gw * w), gw), True)
    check_loss(LA.eigvalsh, symmetric(*shape), lambda w: (np.sum(gw * w), gw), True, UPLO="U")


def svd_loss(shape, full_matrices, parts="all"):
    """A sign-invariant loss of svd's (u, s, vh) and its cotangent; with full_matrices it reads
    only the first min(m, n) singular vectors."""
    m, n = shape[-2:]
    k = min(m, n)
    batch = shape[:-2]
    gs, c = randn(*batch, k), randn(*batch, k)
    G1, G2, G3 = randn(*batch, m, k), randn(*batch, k, n), randn(*batch, m, n)

    def loss(ans):
        u, s, vh = ans
        u, vh = u[..., :, :k], vh[..., :k, :]
        value, gu, gvh = np.sum(gs * s), 2 * G1 * u, 2 * G2 * vh
        value = value + np.sum(G1 * u ** 2) + np.sum(G2 * vh ** 2)
        if parts == "all":
            value = value + np.sum(G3 * ((u * c[..., None, :]) @ vh))
            gu = gu + G3 @ np.swapaxes(vh, -1, -2) * c[..., None, :]
            gvh = gvh + c[..., :, None] * np.swapaxes(u, -1, -2) @ G3
        if full_matrices:  # zero cotangent for the extra vectors
            gu = np.concatenate([gu, np.zeros(batch + (m, m - k))], -1)
            gvh = np.concatenate([gvh, np.zeros(batch + (n - k, n))], -2)
        return value, (gu, gs, gvh)
    return loss


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 4, 3), (1, 1), (3, 1)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd(shape, full_matrices):
    check_loss(LA.svd, randn(*shape), svd_loss(shape, full_matrices),
               full_matrices=full_matrices)
    check_loss(LA.svd, randn(*shape), svd_loss(shape, full_matrices, "squares"),
               full_matrices=full_matrices)


def test_svd_hermitian():
    check_loss(LA.svd, symmetric(4, 4), svd_loss((4, 4), False), True, hermitian=True)


def test_svd_full_matrices_refuses_a_loss_of_the_extra_vectors():
    a = randn(4, 2)
    u, s, vh = ans = LA.svd(a)
    with pytest.raises(ValueError, match="full_matrices=False"):
        evaluate_vjp(LA.svd, "a", (np.ones_like(u), None, None), ans, a)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 4, 3)])
def test_singular_values(shape):
    check_rule(LA.svd, randn(*shape), compute_uv=False)
    check_rule(LA.svdvals, randn(*shape))


# --- norms ---

VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 3, 0.5, 0, -1]


@pytest.mark.parametrize("shape,axis,ord", [
    (shape, axis, ord) for shape, axis in [((5,), None), ((5,), 0), ((3, 4), 1), ((3, 4), -2),
                                           ((2, 3, 4), (1,))] for ord in VECTOR_ORDS]
    + [((), None, None)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norms(shape, axis, ord, keepdims):
    check_rule(LA.norm, randn(*shape), ord=ord, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("shape,axis", [((3, 4), None), ((3, 4), (1, 0)), ((2, 3, 4), (0, 2)),
                                        ((2, 3, 4), (-1, -2))])
@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, np.inf, -np.inf, 2, -2])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norms(shape, axis, ord, keepdims):
    check_rule(LA.norm, randn(*shape), ord=ord, axis=axis, keepdims=keepdims)


def test_norm_of_any_array():
    check_rule(LA.norm, randn(2, 3, 4))
    check_rule(LA.norm, randn(2, 3, 4), keepdims=True)


@pytest.mark.parametrize("shape,axis", [((2, 3), None), ((2, 3, 4), (0, 1)), ((2, 3, 4), -1)])
@pytest.mark.parametrize("ord", [2, 1, np.inf, 3])
def test_vector_norm(shape, axis, ord):
    check_rule(LA.vector_norm, randn(*shape), axis=axis, ord=ord)
    check_rule(LA.vector_norm, randn(*shape), axis=axis, ord=ord, keepdims=True)


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, 1, np.inf])
def test_matrix_norm(ord):
    check_rule(LA.matrix_norm, randn(2, 3, 4), ord=ord)
    check_rule(LA.matrix_norm, randn(3, 4), ord=ord, keepdims=True)


# --- pseudo-inverse, powers, least squares, chains ---

@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 4, 3)])
def test_pinv(shape):
    check_rule(LA.pinv, randn(*shape))


def test_pinv_hermitian():
    G = randn(4, 4)
    check_loss(LA.pinv, spd(4, 4), lambda p: (np.sum(G * p), G), True, hermitian=True)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_matrix_power(n, shape):
    # its own stream: the module's depends on which tests ran before in the worker, and one
    # draw made a matrix whose inverse squared was ~1e11, past finite differences' accuracy
    a = np.random.default_rng(40).standard_normal(shape) / 3 + np.eye(shape[-1])
    check_rule(LA.matrix_power, a, n, argnums=[0])


@pytest.mark.parametrize("sa,sb", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3,)),
                                   ((3, 3), (3, 2))])
def test_lstsq(sa, sb):
    a, b = randn(*sa), randn(*sb)
    check_vjp(LA.lstsq, [a, b], 0)
    check_vjp(LA.lstsq, [a, b], 1)


@pytest.mark.parametrize("shapes", [[(3,), (3, 4), (4, 2)], [(2, 3), (3, 4), (4, 5), (5,)],
                                    [(2, 3), (3, 2)], [(3,), (3, 2), (2,)]])
def test_multi_dot(shapes):
    check_vjp(LA.multi_dot, [[randn(*s) for s in shapes]], 0)


def test_array_api_functions():
    check_rule(LA.matmul, randn(2, 3, 4), randn(4, 5))
    check_rule(LA.tensordot, randn(2, 3, 4), randn(3, 4, 2))
    check_rule(LA.tensordot, randn(2, 3, 4), randn(4, 3), axes=([1, 2], [1, 0]))
    check_rule(LA.outer, randn(3), randn(4))
    check_rule(LA.vecdot, randn(2, 3), randn(3))
    check_rule(LA.vecdot, randn(3, 2), randn(3, 2), axis=0)
    check_rule(LA.cross, randn(2, 3), randn(3))
    check_rule(LA.cross, randn(3, 2), randn(3, 2), axis=0)
    check_rule(LA.trace, randn(2, 3, 4), offset=1)
    check_rule(LA.diagonal, randn(2, 4, 3), offset=-1)
    check_rule(LA.matrix_transpose, randn(2, 3, 4))


def test_matrix_rank_and_sign_are_not_differentiable():
    assert not RULES[LA.matrix_rank].differentiable
    assert not RULES[("attr", "sign")].differentiable


@pytest.mark.parametrize("fn,field", [(LA.slogdet, "logabsdet"), (LA.eigh, "eigenvalues"),
                                      (LA.svd, "S"), (LA.svd, "U"), (LA.svd, "Vh")])
def test_result_fields(fn, field):
    """The field's rule chained with the function's against differences of ``fn(a).field``
    (sign-invariant losses for the singular vectors)."""
    a = spd(3, 3)
    ans = fn(a)
    value = getattr(ans, field)
    G = randn(*value.shape)
    loss = (lambda v: np.sum(G * v)) if field not in ("U", "Vh") else (lambda v: np.sum(G * v ** 2))
    gv = G if field not in ("U", "Vh") else 2 * G * value
    g = evaluate_vjp(("attr", field), "self", gv, value, ans)
    assert isinstance(g, tuple) and len(g) == len(ans)
    got = evaluate_vjp(fn, "a", g, ans, a)
    prep = sym if fn is LA.eigh else (lambda x: x)  # eigh reads one triangle
    want = numeric_vjp(lambda x: loss(getattr(fn(prep(x)), field)), [a], 0, 1.0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
