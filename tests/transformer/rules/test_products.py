"""Product rules against central finite differences (tests/helpers.py's oracle)."""
import numpy as np
import pytest

from helpers import check_rule
from helpers import check_vjp

rng = np.random.default_rng(3)


def randn(*shape):
    return rng.standard_normal(shape)


@pytest.mark.parametrize("sa,sb", [((), ()), ((), (3,)), ((2, 3), ()), ((3,), (3,)),
                                   ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                   ((2, 5, 3), (3,)), ((2, 5, 3), (4, 3, 2)), ((3,), (2, 3, 4))])
def test_dot(sa, sb):
    check_rule(np.dot, randn(*sa), randn(*sb))


@pytest.mark.parametrize("sa,sb", [((), ()), ((), (3,)), ((3,), (3,)), ((2, 3), (3,)),
                                   ((2, 3), (4, 3)), ((2, 5, 3), (4, 3))])
def test_inner(sa, sb):
    check_rule(np.inner, randn(*sa), randn(*sb))


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3, 2)), ((), ()), ((4,), (2, 2))])
def test_vdot(sa, sb):
    check_rule(np.vdot, randn(*sa), randn(*sb))


@pytest.mark.parametrize("sa,sb", [((3,), (4,)), ((2, 2), (3,)), ((), (2,)), ((3,), ())])
def test_outer(sa, sb):
    check_rule(np.outer, randn(*sa), randn(*sb))


@pytest.mark.parametrize("sa,sb,axes", [
    ((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 4), 1), ((2, 3), (4, 5), 0), ((), (2,), 0),
    ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])), ((2, 3, 4), (4, 2), (0, 1)),
    ((2, 3, 4), (5, 3), (-2, -1)), ((3, 4, 2), (2, 4, 3), ([0, 1, 2], [2, 1, 0])),
    ((2, 3, 4), (4, 3), ((2, 1), (0, 1)))])
def test_tensordot(sa, sb, axes):
    check_rule(np.tensordot, randn(*sa), randn(*sb), axes=axes)


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij->ji", [(2, 3)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->i", [(2, 3)]),
    ("i,i", [(3,), (3,)]), ("i,j->ij", [(2,), (3,)]), ("ba,c", [(2, 3), (4,)]),
    ("Ab,a", [(2, 3), (4,)]), ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...j,j", [(2, 3, 4), (4,)]), ("i...->...", [(2, 3, 4)]), ("b...a", [(2, 3, 4)]),
    ("ij,ij->ij", [(2, 1), (1, 3)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("iij->j", [(3, 3, 2)]), ("iji->j", [(2, 3, 2)]), ("ij,ij", [(2, 3), (1, 3)]),
    ("i,i,i", [(4,), (4,), (4,)]), ("ii,i->i", [(3, 3), (3,)]), (",ij->ij", [(), (2, 3)]),
    (" i j , j ", [(2, 3), (3,)]), ("...,...", [(2, 1), (3,)]),
    ("ij,ij,ij->", [(2, 1), (1, 3), (2, 3)]), ("i...,...j,ij->...", [(2, 1), (3,), (2, 3)])]


@pytest.mark.parametrize("subscripts,shapes", EINSUM)
def test_einsum(subscripts, shapes):
    check_vjp(np.einsum, [subscripts] + [randn(*s) for s in shapes], slice(1, None))


@pytest.mark.parametrize("args", [
    lambda: [randn(2, 3), [0, 1], [0]], lambda: [randn(2, 3), (0, 1), (1, 0)],
    lambda: [randn(3, 3), [0, 0]], lambda: [randn(2, 3), [0, 1], randn(3, 4), [1, 2], [0, 2]],
    lambda: [randn(2, 3), [Ellipsis, 1], randn(3), [1]]], ids=range(5))
def test_einsum_interleaved_form(args):
    """np.einsum(x, [0, 1], y, [1, 2], [0, 2]): x sits in ``subscripts`` (was: zero gradient)."""
    check_vjp(np.einsum, args(), 0)


@pytest.mark.parametrize("sa,sb", [((2,), (3,)), ((2, 3), (4, 2)), ((2, 3), (3,)), ((3,), (2, 2)),
                                   ((), (2, 3)), ((2, 1, 3), (2, 2)), ((), ())])
def test_kron(sa, sb):
    check_rule(np.kron, randn(*sa), randn(*sb))


@pytest.mark.parametrize("sa,sb,kw", [
    ((3,), (3,), {}), ((4, 3), (4, 3), {}), ((4, 3), (3,), {}), ((3,), (2, 4, 3), {}),
    ((3, 4), (3, 4), {"axis": 0}), ((3, 4), (4, 3), {"axisa": 0, "axisb": 1, "axisc": 0}),
    ((2, 3, 4), (3, 4), {"axisa": 1, "axisb": 0, "axisc": -1}),
    ((3, 2), (2, 3), {"axisa": 0, "axisb": -1, "axisc": 1})])
def test_cross(sa, sb, kw):
    check_rule(np.cross, randn(*sa), randn(*sb), **kw)


@pytest.mark.parametrize("sa,sb,axis", [((3,), (3,), -1), ((2, 3), (3,), -1),
                                        ((2, 3), (2, 3), 0), ((4, 2, 3), (2, 1), -2)])
def test_vecdot(sa, sb, axis):
    check_rule(np.vecdot, randn(*sa), randn(*sb), axis=axis)


@pytest.mark.parametrize("sa,sb", [((2, 3), (3,)), ((4, 2, 3), (3,)), ((2, 3), (5, 3)),
                                   ((1, 2, 3), (4, 1, 3))])
def test_matvec(sa, sb):
    check_rule(np.matvec, randn(*sa), randn(*sb))
    check_rule(np.vecmat, randn(*sb[:-1], sa[-2]), randn(*sa))


@pytest.mark.parametrize("shape,offset,a1,a2", [((3, 3), 0, 0, 1), ((3, 4), 1, 0, 1),
                                                ((4, 3), -1, 0, 1), ((2, 3, 4), 0, 1, 2),
                                                ((2, 3, 4), -1, -1, 0), ((3, 4), 7, 0, 1)])
def test_trace(shape, offset, a1, a2):
    check_rule(np.trace, randn(*shape), offset, a1, a2, argnums=[0])


@pytest.mark.parametrize("shape,k", [((3,), 0), ((3,), 2), ((3,), -1), ((3, 3), 0), ((3, 4), 1),
                                     ((4, 3), -2), ((2, 5), 3), ((3, 3), 4)])
def test_diag(shape, k):
    check_rule(np.diag, randn(*shape), k, argnums=[0])


@pytest.mark.parametrize("shape,k", [((3,), 0), ((2, 2), 1), ((), -1), ((3,), -2)])
def test_diagflat(shape, k):
    check_rule(np.diagflat, randn(*shape), k, argnums=[0])


@pytest.mark.parametrize("fn", [np.triu, np.tril])
@pytest.mark.parametrize("shape,k", [((3, 3), 0), ((3, 4), 1), ((4, 3), -1), ((2, 3, 3), 0),
                                     ((3,), 0), ((4,), -1)])
def test_triangles(fn, shape, k):
    check_rule(fn, randn(*shape), k, argnums=[0])
