"""Shape-op rules against central finite differences (tests/helpers.py's oracle).

``check_vjp`` extends ``check_rule`` to sequence and ``*args`` arguments and to outputs that
are lists or tuples; test_products.py and test_linalg.py use it too.
"""
import numpy as np
import pytest

from helpers import check_rule, check_vjp, numeric_vjp
from strop.transformer.rules import RULES, evaluate_vjp

rng = np.random.default_rng(2)


def randn(*shape):
    return rng.standard_normal(shape)


# --- same elements, new shape or axis order ---

@pytest.mark.parametrize("shape,new,order", [((2, 3, 4), (6, 4), "C"), ((2, 3, 4), (-1,), "C"),
                                             ((2, 3, 4), (4, 6), "F"), ((), (1, 1), "C"),
                                             ((6,), (2, 3), "F")])
def test_reshape(shape, new, order):
    check_rule(np.reshape, randn(*shape), new, order, argnums=[0])
    check_rule(np.reshape, randn(*shape), shape=new, order=order)


@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (2, 1, 3)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel(shape, order):
    check_rule(np.ravel, randn(*shape), order=order)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
def test_squeeze(axis):
    check_rule(np.squeeze, randn(1, 3, 1), axis=axis)


@pytest.mark.parametrize("shape,axis", [((3,), 0), ((3,), -1), ((2, 3), (0, 3)), ((), 0),
                                        ((2, 3), (-1, 1))])
def test_expand_dims(shape, axis):
    check_rule(np.expand_dims, randn(*shape), axis=axis)


@pytest.mark.parametrize("shape,axes", [((2, 3, 4), None), ((2, 3, 4), (2, 0, 1)),
                                        ((2, 3, 4), (-1, 0, 1)), ((2, 3, 4), [1, 2, 0]),
                                        ((), None), ((3,), None), ((2, 3), (1, 0))])
def test_transpose(shape, axes):
    check_rule(np.transpose, randn(*shape), axes=axes)


@pytest.mark.parametrize("a1,a2", [(0, 2), (-1, 0), (1, 1)])
def test_swapaxes(a1, a2):
    check_rule(np.swapaxes, randn(2, 3, 4), a1, a2, argnums=[0])


@pytest.mark.parametrize("src,dst", [(0, -1), ((0, 1), (2, 0)), (-1, 1), ([2, 0], [0, 1])])
def test_moveaxis(src, dst):
    check_rule(np.moveaxis, randn(2, 3, 4), src, dst, argnums=[0])


@pytest.mark.parametrize("axis,start", [(3, 1), (1, 3), (-1, 0), (0, 4), (2, -1), (1, 1),
                                        (1, 2), (2, 1)])
def test_rollaxis(axis, start):
    check_rule(np.rollaxis, randn(2, 3, 4, 5), axis, start, argnums=[0])


def test_matrix_transpose():
    check_rule(np.matrix_transpose, randn(2, 3, 4))
    check_rule(np.matrix_transpose, randn(3, 4))


@pytest.mark.parametrize("fn", [np.atleast_1d, np.atleast_2d, np.atleast_3d])
def test_atleast(fn):
    for shape in [(), (3,), (2, 3), (2, 3, 4)]:
        check_vjp(fn, [randn(*shape)], slice(0, None))
    check_vjp(fn, [randn(), randn(3), randn(2, 3), randn(1, 2, 3, 4)], slice(0, None))


@pytest.mark.parametrize("shape,new", [((3,), (2, 3)), ((), (2,)), ((2, 1), (4, 2, 3)),
                                       ((2, 3), (2, 3))])
def test_broadcast_to(shape, new):
    check_rule(np.broadcast_to, randn(*shape), new, argnums=[0])


def test_broadcast_arrays():
    check_vjp(np.broadcast_arrays, [randn(2, 1), randn(3), randn()], slice(0, None))
    check_vjp(np.broadcast_arrays, [randn(2, 3)], slice(0, None))


# --- joining and splitting ---

@pytest.mark.parametrize("shapes,axis", [([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1), (2, 2)], 1),
                                         ([(2, 3), (2, 1)], -1), ([(2, 3), (4,)], None),
                                         ([(5,)], 0)])
def test_concatenate(shapes, axis):
    arrays = [randn(*s) for s in shapes]
    check_vjp(np.concatenate, [arrays], 0, axis=axis)
    check_vjp(np.concatenate, [tuple(arrays), axis], 0)


@pytest.mark.parametrize("shape,axis", [((2, 3), 0), ((2, 3), 1), ((2, 3), -1), ((), 0),
                                        ((3,), -2)])
def test_stack(shape, axis):
    check_vjp(np.stack, [[randn(*shape) for _ in range(3)]], 0, axis=axis)


@pytest.mark.parametrize("fn,shapes", [
    (np.hstack, [(3,), (2,)]), (np.hstack, [(2, 3), (2, 1)]), (np.hstack, [(), (2,)]),
    (np.vstack, [(3,), (2, 3)]), (np.vstack, [(), ()]), (np.vstack, [(1, 2, 3), (2, 2, 3)]),
    (np.dstack, [(3,), (3,)]), (np.dstack, [(2, 3), (2, 3, 2)]), (np.dstack, [(), ()]),
    (np.column_stack, [(3,), (3, 2)]), (np.column_stack, [(3,), (3,)]),
    (np.column_stack, [(), ()])])
def test_stacks(fn, shapes):
    check_vjp(fn, [[randn(*s) for s in shapes]], 0)


@pytest.mark.parametrize("fn,kw", [(np.concatenate, {}), (np.concatenate, {"axis": None}),
                                   (np.stack, {"axis": 1}), (np.vstack, {}), (np.hstack, {}),
                                   (np.column_stack, {})])
def test_joining_the_rows_of_an_array(fn, kw):
    check_vjp(fn, [randn(3, 4)], 0, **kw)


@pytest.mark.parametrize("s1,s2,axis", [((2, 3), (4,), None), ((2, 3), (1, 3), 0),
                                        ((2, 3), (2, 2), -1), ((), (), None)])
def test_append(s1, s2, axis):
    check_rule(np.append, randn(*s1), randn(*s2), axis=axis)


@pytest.mark.parametrize("fn,shape,sections,axis", [
    (np.split, (6, 4), 3, 0), (np.split, (6, 4), [1, 4], 0), (np.split, (6, 4), 2, 1),
    (np.split, (6, 4), 2, -1), (np.array_split, (7,), 3, 0), (np.array_split, (3, 5), [2], 1)])
def test_split(fn, shape, sections, axis):
    check_vjp(fn, [randn(*shape), sections], 0, axis=axis)


@pytest.mark.parametrize("fn,shape", [(np.hsplit, (4, 6)), (np.hsplit, (6,)),
                                      (np.vsplit, (4, 3)), (np.dsplit, (2, 2, 4))])
def test_hvdsplit(fn, shape):
    check_vjp(fn, [randn(*shape), 2], 0)


def test_split_with_an_unused_part():
    x = randn(6)
    got = evaluate_vjp(np.split, "ary", [None, np.ones(3)], np.split(x, 2), x, 2)
    np.testing.assert_array_equal(got, [0, 0, 0, 1, 1, 1])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unstack(axis):
    check_vjp(np.unstack, [randn(3, 4)], 0, axis=axis)


# --- copies: tiling, repeating, padding ---

@pytest.mark.parametrize("shape,reps", [((3,), 2), ((3,), (2, 1)), ((2, 3), (2,)),
                                        ((2, 3), (1, 2, 2)), ((), 3), ((2, 1, 3), (2, 3))])
def test_tile(shape, reps):
    check_rule(np.tile, randn(*shape), reps, argnums=[0])


@pytest.mark.parametrize("shape,repeats,axis", [((2, 3), 2, None), ((2, 3), [1, 0, 2], 1),
                                                ((2, 3), 3, -2), ((2, 3), [1, 2, 0, 1, 1, 3], None),
                                                ((), 3, None), ((2, 3), [2], 0)])
def test_repeat(shape, repeats, axis):
    check_rule(np.repeat, randn(*shape), repeats, axis, argnums=[0])


@pytest.mark.parametrize("shape,width,mode", [
    ((2, 3), 1, "constant"), ((2, 3), ((1, 0), (2, 1)), "constant"), ((2, 3), (0, 2), "edge"),
    ((3, 4), 2, "reflect"), ((3, 4), ((1, 2), (3, 0)), "symmetric"), ((2, 3), 4, "wrap"),
    ((5,), (2, 3), "reflect"), ((5,), 7, "symmetric"), ((4,), ((1, 1),), "edge")])
def test_pad(shape, width, mode):
    check_rule(np.pad, randn(*shape), width, mode, argnums=[0])


def test_pad_constant_values_and_empty():
    check_rule(np.pad, randn(2, 3), 2, argnums=[0], constant_values=3.0)
    x = randn(2, 3)
    got = evaluate_vjp(np.pad, "array", np.arange(20.).reshape(4, 5), None, x, 1, "empty")
    np.testing.assert_array_equal(got, np.arange(20.).reshape(4, 5)[1:3, 1:4])


@pytest.mark.parametrize("mode,kw", [("mean", {}), ("linear_ramp", {}),
                                     ("reflect", {"reflect_type": "odd"})])
def test_pad_modes_without_a_rule_raise(mode, kw):
    x = randn(3)
    with pytest.raises(NotImplementedError, match=mode):
        evaluate_vjp(np.pad, "array", np.ones(5), np.pad(x, 1, mode, **kw), x, 1, mode, **kw)


# --- reordering ---

@pytest.mark.parametrize("shape,shift,axis", [((5,), 2, None), ((2, 3), 1, 1), ((2, 3), -4, None),
                                              ((2, 3), (1, -1), (0, 1)), ((2, 3, 2), 1, -2)])
def test_roll(shape, shift, axis):
    check_rule(np.roll, randn(*shape), shift, axis, argnums=[0])


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_flip(axis):
    check_rule(np.flip, randn(2, 3), axis=axis)


def test_fliplr_flipud():
    check_rule(np.fliplr, randn(2, 3))
    check_rule(np.flipud, randn(2, 3))
    check_rule(np.flipud, randn(3))


@pytest.mark.parametrize("k", [0, 1, 2, 3, -1, 5])
@pytest.mark.parametrize("axes", [(0, 1), (1, 2), (2, 0)])
def test_rot90(k, axes):
    check_rule(np.rot90, randn(2, 3, 4), k, axes, argnums=[0])


@pytest.mark.parametrize("shape,axis", [((5,), -1), ((3, 4), 0), ((3, 4), -1), ((3, 4), None),
                                        ((2, 3, 4), 1)])
def test_sort(shape, axis):
    check_rule(np.sort, randn(*shape), axis=axis)


@pytest.mark.parametrize("shape,kth,axis", [((6,), 2, -1), ((3, 5), (1, 3), 1), ((4, 3), 1, 0),
                                            ((3, 4), 5, None)])
def test_partition(shape, kth, axis):
    check_rule(np.partition, randn(*shape), kth, axis, argnums=[0])


# --- gathering ---

@pytest.mark.parametrize("shape,offset,a1,a2", [((3, 4), 0, 0, 1), ((3, 4), 1, 0, 1),
                                                ((3, 4), -2, 0, 1), ((2, 3, 4), 0, 1, 2),
                                                ((2, 3, 4), 1, -1, 0), ((3, 4), 5, 0, 1),
                                                ((3, 4), 0, 1, 0)])
def test_diagonal(shape, offset, a1, a2):
    check_rule(np.diagonal, randn(*shape), offset, a1, a2, argnums=[0])


@pytest.mark.parametrize("shape,indices,axis,mode", [
    ((5,), [0, 2, 2, -1], None, "raise"), ((3, 4), [[0, 1], [3, 3]], 1, "raise"),
    ((3, 4), [5, -7], None, "wrap"), ((3, 4), [10, -1, 1], 0, "clip"), ((3, 4), 2, 0, "raise"),
    ((3, 4), [1, 1], -1, "wrap"), ((2, 3, 4), [[0], [2]], 1, "raise")])
def test_take(shape, indices, axis, mode):
    check_rule(np.take, randn(*shape), indices, axis, None, mode, argnums=[0])


@pytest.mark.parametrize("shape,indices,axis", [
    ((3, 4), "argsort", 1), ((3, 4), [[0, 0], [3, 1], [2, 2]], 1), ((3, 4), [[2, 0, 0, 1]], 0),
    ((1, 4), [[0, 3], [1, 1], [2, 2]], 1), ((3, 4), [[1], [0], [3]], -1),
    ((3, 4), [0, 5, 5, 11], None)])
def test_take_along_axis(shape, indices, axis):
    x = randn(*shape)
    idx = np.argsort(x, axis) if isinstance(indices, str) else np.array(indices)
    check_rule(np.take_along_axis, x, idx, axis, argnums=[0])


# --- copies of the input as they are ---

@pytest.mark.parametrize("fn", [np.array, np.asarray, np.asanyarray, np.ascontiguousarray,
                                np.asfortranarray, np.copy])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_array_of_an_array(fn, shape):
    check_rule(fn, randn(*shape))


def test_array_of_lists():
    check_vjp(np.array, [[randn(3), randn(3)]], 0)
    check_vjp(np.array, [(randn(), randn(), randn())], 0)
    check_vjp(np.array, [[[randn(2), randn(2)], [randn(2), randn(2)]]], 0)
    check_vjp(np.array, [[randn(), randn()]], 0, ndmin=3)
    check_vjp(np.asarray, [[randn(2, 2), randn(2, 2)]], 0)
    check_rule(np.array, randn(2, 3), ndmin=4)
    got = evaluate_vjp(np.array, "object", np.array([1.0, 2.0]), None, [3.0, 4.0])
    assert isinstance(got, list) and got == [1.0, 2.0]


def test_real_if_close():
    check_rule(np.real_if_close, randn(2, 3))


@pytest.mark.parametrize("shape,fill", [((2, 3), "scalar"), ((2, 3), (3,)), ((4,), ())])
def test_full(shape, fill):
    value = 1.5 if fill == "scalar" else randn(*fill)
    check_rule(np.full, shape, value, argnums=[1])
    check_rule(np.full_like, randn(*shape), value, argnums=[1])


def test_nondiff():
    for fn in [np.zeros_like, np.ones_like, np.empty_like, np.shape, np.ndim, np.size,
               np.argpartition]:
        assert not RULES[fn].differentiable


def test_signatures_bind_numpy_calls():
    x = randn(2, 3)
    assert RULES[np.reshape].bind((x, (3, 2)), {})["shape"] == (3, 2)
    assert RULES[np.reshape].bind((x,), {"newshape": (3, 2)})["newshape"] == (3, 2)
    assert RULES[np.concatenate].bind(([x, x],), {"axis": 1})["axis"] == 1
    bound = RULES[np.pad].bind((x, 1), {"mode": "edge", "constant_values": 2})
    assert bound["mode"] == "edge" and bound["constant_values"] == 2
    assert RULES[np.atleast_2d].bind((x, x), {})["arys"] == (x, x)
