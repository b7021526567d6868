"""Rules of the numerical routines (rules/numeric.py) against central finite differences: each
row calls check_rule (every differentiated argument's vjp, and the jvp through <g, J t>)."""
import numpy as np
import pytest

from helpers import check_rule, check_vjp

rng = np.random.default_rng(7)


def randn(*shape):
    return rng.standard_normal(shape)


def distinct(*shape):        # no ties: order statistics are smooth there
    n = int(np.prod(shape))
    return (rng.permutation(n) + rng.uniform(0.1, 0.9, n)).reshape(shape) / n


X = np.array([0.15, 0.9, 1.7, 2.45, 3.3])     # interp points strictly inside segments
ROWS = [
    (np.diff, (randn(5),), {}), (np.diff, (randn(3, 4),), {"axis": 0}),
    (np.diff, (randn(3, 5), 2), {}), (np.diff, (randn(2, 4),), {"prepend": randn(2, 1)}),
    (np.diff, (randn(4),), {"append": 0.5, "prepend": randn(2)}),
    (np.linspace, (0.3, 1.7), {"num": 5}), (np.linspace, (randn(3), randn(3)), {"num": 4}),
    (np.linspace, (randn(2), 2.0), {"num": 3, "axis": -1, "endpoint": False}),
    (np.fft.fftshift, (randn(5),), {}), (np.fft.ifftshift, (randn(4, 3),), {"axes": 0}),
    (np.fft.fftshift, (randn(3, 4),), {}),
    (np.interp, (X, np.array([0.0, 1.0, 2.0, 3.0, 4.0]), randn(5)), {}),
    (np.interp, (np.array([-1.0, 0.5, 5.0]), np.array([0.0, 1.2, 2.0]), randn(3)), {}),
    (np.interp, (np.array([-1.0, 0.5, 5.0]), np.array([0.0, 1.2, 2.0]), randn(3), 0.3, 0.7), {}),
    (np.interp, (0.7, np.array([0.0, 1.2, 2.0]), randn(3)), {}),
    (np.convolve, (randn(5), randn(3)), {}), (np.convolve, (randn(3), randn(5)), {"mode": "same"}),
    (np.convolve, (randn(6), randn(3)), {"mode": "same"}),
    (np.convolve, (randn(4), randn(4)), {"mode": "same"}),
    (np.convolve, (randn(5), randn(3)), {"mode": "valid"}),
    (np.convolve, (randn(2), randn(5)), {"mode": "valid"}),
    (np.polyval, (randn(4), randn(3)), {}), (np.polyval, (randn(3), 0.7), {}),
    (np.polyval, (randn(1), randn(2, 2)), {}),
    (np.cov, (randn(3, 5),), {}), (np.cov, (randn(5),), {}), (np.cov, (randn(5, 2),), {"rowvar": False}),
    (np.cov, (randn(2, 6), randn(6)), {"bias": True}), (np.cov, (randn(2, 5),), {"ddof": 2}),
    (np.cov, (randn(2, 4),), {"fweights": np.array([1, 2, 1, 3]), "aweights": np.array([0.5, 1.0, 2.0, 1.5])}),
    (np.cov, (randn(2, 4),), {"aweights": np.array([0.5, 1.0, 2.0, 1.5])}),
    (np.median, (distinct(5),), {}), (np.median, (distinct(4),), {}),
    (np.median, (distinct(3, 4),), {"axis": 1}), (np.median, (distinct(2, 3, 4),), {"axis": (0, 2), "keepdims": True}),
    (np.quantile, (distinct(7), 0.3), {}), (np.quantile, (distinct(3, 5), np.array([0.2, 0.7])), {"axis": -1}),
    (np.percentile, (distinct(6), 37.0), {}), (np.percentile, (distinct(4, 3), 65.0), {"axis": 0, "keepdims": True}),
    (np.quantile, (distinct(7), 0.3), {"method": "lower"}), (np.quantile, (distinct(7), 0.3), {"method": "higher"}),
    (np.quantile, (distinct(7), 0.3), {"method": "nearest"}), (np.quantile, (distinct(7), 0.3), {"method": "midpoint"}),
    (np.nanmedian, (np.array([0.3, np.nan, 1.2, 0.8, np.nan, 2.0]),), {}),
    (np.nanquantile, (np.array([[0.3, np.nan, 1.2], [0.8, 0.1, 2.0]]), 0.4), {"axis": 1}),
    (np.cumulative_sum, (randn(5),), {}), (np.cumulative_sum, (randn(3, 4),), {"axis": 1, "include_initial": True}),
    (np.cumulative_prod, (randn(5),), {}), (np.cumulative_prod, (randn(3, 4),), {"axis": 0, "include_initial": True}),
    (np.astype, (randn(3), np.float64), {}),
]


@pytest.mark.parametrize("fn,args,kwargs", ROWS, ids=lambda v: getattr(v, "__name__", ""))
def test_numeric_rule(fn, args, kwargs):
    check_rule(fn, *args, **kwargs)


def test_linspace_retstep():
    check_vjp(np.linspace, [0.3, 1.7, 5], 0, retstep=True)
    check_vjp(np.linspace, [0.3, randn(2), 5], 1, retstep=True)


def test_select():
    x = randn(2, 3)
    conds = [x > 0.5, x < -0.5]
    check_vjp(np.select, [conds, [x ** 2, randn(3)], randn(2, 3)], 1)
    check_vjp(np.select, [conds, [x ** 2, randn(3)], randn(2, 3)], 2)


def test_eig_real():
    p = randn(4, 4) + 3 * np.eye(4)
    a = p @ np.diag([1.0, 2.5, 4.0, 6.0]) @ np.linalg.inv(p)    # real, distinct eigenvalues
    assert not np.iscomplexobj(np.linalg.eigvals(a))
    check_rule(np.linalg.eigvals, a)
    # vectors: a loss invariant to each vector's sign
    from helpers import numeric_vjp
    from strop.transformer.rules import evaluate_vjp
    w, v = np.linalg.eig(a)
    gw, gv = randn(4), 2 * v * randn(4)                          # d/dv of sum(c v**2)
    got = evaluate_vjp(np.linalg.eig, "a", (gw, gv), (w, v), a)
    c = gv / (2 * v)

    def loss(a):
        w2, v2 = np.linalg.eig(a)
        order = np.argsort(w2)[np.argsort(np.argsort(w))]
        return np.sum(gw * w2[order]) + np.sum(c * v2[:, order] ** 2)
    np.testing.assert_allclose(got, numeric_vjp(loss, [a], 0, 1.0), rtol=1e-5, atol=1e-6)


def test_eig_complex_raises():
    from strop.transformer.rules import evaluate_vjp
    a = np.array([[0.0, -1.0], [1.0, 0.0]])
    with pytest.raises(NotImplementedError, match="complex eigenvalues"):
        evaluate_vjp(np.linalg.eig, "a", (np.ones(2), None), np.linalg.eig(a), a)


COORDS = np.array([0.0, 0.3, 0.7, 1.5, 1.6])
GRADIENT = [((randn(6),), {}), ((randn(6), 0.3), {"edge_order": 2}), ((randn(2),), {}),
            ((randn(3),), {"edge_order": 2}), ((randn(5), COORDS), {}),
            ((randn(5), COORDS), {"edge_order": 2}), ((randn(4, 5),), {"axis": 1}),
            ((randn(4, 5), 0.5, 2.0), {}), ((randn(4, 5), 0.5), {"edge_order": 2}),
            ((randn(3, 4, 5), COORDS[:3], 0.7), {"axis": (0, 2)}), ((randn(3, 4),), {"axis": -1})]


@pytest.mark.parametrize("args,kwargs", GRADIENT)
def test_gradient(args, kwargs):
    """np.gradient in f (every spacing form, edge order, axes; one output per axis), and in
    its spacing where that is numbers (1/h scales the outputs)."""
    check_vjp(np.gradient, list(args), 0, **kwargs)
    if len(args) > 1 and all(np.ndim(h) == 0 for h in args[1:]):
        check_vjp(np.gradient, list(args), slice(1, None), **kwargs)


def test_gradient_in_coordinates_raises():
    from strop.transformer.rules import evaluate_vjp
    args = (randn(5), COORDS)
    with pytest.raises(NotImplementedError, match="coordinates"):
        evaluate_vjp(np.gradient, "varargs", randn(5), np.gradient(*args), *args)
