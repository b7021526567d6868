"""Bad input gets the error a JAX user would get (its type), in strop's words: what is wrong,
where (the user's function), and the fix; the same in every backend."""
import warnings

import numpy as np
import pytest

import strop
from strop import grad, jacfwd, jacrev, jit, jvp, value_and_grad, vmap
from strop.errors import JitFallbackWarning

BACKENDS = ["python", "cpu"]


def no_fallback():
    """A context where a JitFallbackWarning fails the test: errors come alone."""
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("error", JitFallbackWarning)
    return ctx


def loss_and_two(x):
    return np.sum(x * x), x, 2.0 * x


def loss_only(x):
    return np.sum(x * x)


def loss_pair_by_name(x):
    pair = (np.sum(x * x), x)
    return pair


X = np.array([1.0, 2.0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("transform", [grad, value_and_grad, jacrev, jacfwd])
@pytest.mark.parametrize("fn,what", [(loss_and_two, "a tuple of length 3"),
                                     (loss_only, "a value of type float")])
def test_has_aux_requires_a_pair(transform, fn, what, backend):
    with pytest.raises(TypeError, match=f"has_aux=True requires the function to return a pair"
                                        f".*{what}") as e:
        jit(transform(fn, has_aux=True), backend=backend)(X)
    assert f"line {fn.__code__.co_firstlineno + 1}" in str(e.value)   # the user's return
    with pytest.raises(TypeError, match="has_aux=True requires .* pair"):
        jvp(fn, (X,), (X,), has_aux=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_has_aux_pair_still_works_returned_by_name_and_batched(backend):
    g, aux = jit(grad(loss_pair_by_name, has_aux=True), backend=backend)(X)
    np.testing.assert_allclose(g, 2 * X)
    np.testing.assert_allclose(aux, X)
    xs = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])
    gs, auxs = jit(vmap(grad(loss_pair_by_name, has_aux=True)), backend=backend)(xs)
    np.testing.assert_allclose(gs, np.stack([2 * x for x in xs]))   # the loop of grads
    np.testing.assert_allclose(auxs, xs)
    with pytest.raises(TypeError, match="length 3"):
        vmap(grad(loss_and_two, has_aux=True))(xs)


@pytest.mark.parametrize("transform", [grad, jacfwd, jacrev, strop.hessian])
@pytest.mark.parametrize("argnums,error,message", [
    (0.5, TypeError, "argnums must be an int or a non-empty tuple of ints, got 0.5"),
    ((0, "a"), TypeError, "argnums must be an int"),
    ((), TypeError, "non-empty"),
    (2, ValueError, "argnums 2 out of range for a function of 1 arguments"),
    ((0, -3), ValueError, "out of range"),
])
def test_bad_argnums(transform, argnums, error, message):
    with pytest.raises(error, match=message) as e:
        transform(loss_only, argnums=argnums)
    assert "Fix: argnums" in str(e.value)
    assert f"line {loss_only.__code__.co_firstlineno}" in str(e.value)


def returns_text(x):
    return "abc"


def returns_none(x):
    return None


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,what", [(returns_text, "str"), (returns_none, "NoneType"),
                                     (lambda x: x * np.ones(3), "shape \\(3,\\)")])
def test_grad_of_a_non_scalar_output(fn, what, backend):
    with pytest.raises(TypeError, match=f"grad requires a real scalar output, got a value of "
                                        f"{what}"):
        jit(grad(fn), backend=backend)(1.0)


def square(x):
    return x * x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("arg,what", [
    ("abc", "'abc' of type str"),
    (np.array([1.0, "a"], dtype=object), "an array of dtype object"),
    (np.array(["a", "b"]), "an array of dtype <U1"),
    ([1.0, "abc"], "'abc' of type str \\(inside its list\\)"),
    ({"w": object}, "<class 'object'> of type type \\(inside its dict\\)"),
])
def test_jit_argument_that_is_not_an_array(arg, what, backend):
    ctx = no_fallback()
    try:
        with pytest.raises(TypeError, match=f"jit: argument 'x' of square is {what}, which is "
                                            f"not a valid array") as e:
            jit(square, backend=backend)(arg)
    finally:
        ctx.__exit__(None, None, None)
    assert "static_argnames='x'" in str(e.value)
    assert f"line {square.__code__.co_firstlineno}" in str(e.value)


def scale_by(x, how):
    return x * 2.0 if how == "double" else x


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_static_strings_and_trees_of_numbers_are_fine(backend):
    assert jit(scale_by, static_argnums=1, backend=backend)(1.5, "double") == 3.0
    out = jit(lambda t: t[0] * t[1]["a"], backend=backend)((2.0, {"a": np.ones(2)}))
    np.testing.assert_allclose(out, [2.0, 2.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_of_none_is_the_users_error_with_a_note_and_no_fallback_warning(backend):
    ctx = no_fallback()
    try:
        with pytest.raises(TypeError, match="(?s)unsupported operand.*argument 'x' is None.*"
                                            "Fix: pass an array") as e:
            jit(square, backend=backend)(None)
    finally:
        ctx.__exit__(None, None, None)
    assert f"line {square.__code__.co_firstlineno + 1}" in str(e.value)


def cube_sum(x):
    return np.sum(x ** 3)


@pytest.mark.parametrize("arg", [[1.0, 2.0], (1.0, 2.0), None])
def test_grad_of_a_list_tuple_or_none_says_to_pass_an_array(arg):
    kind = type(arg).__name__ if arg is not None else None
    note = f"argument 'x' is a {kind}: strop passes lists" if kind else "argument 'x' is None"
    with pytest.raises(TypeError, match=f"(?s)unsupported operand.*{note}.*"
                                        f"Fix: pass an array \\(np.asarray\\(x\\)\\)"):
        grad(cube_sum)(arg)


def test_grad_of_a_list_of_arrays_is_a_pytree_as_in_jax():
    # a list the function uses as a list is differentiated leaf by leaf (no error, no note)
    g = grad(lambda xs: xs[0] * xs[1])([2.0, 3.0])
    assert list(map(float, g)) == [3.0, 2.0]
    with pytest.raises(TypeError, match="real-valued .* dtype int"):
        grad(lambda xs: xs[0] * xs[1])([2, 3])     # integers, as JAX: a TypeError


def identity(x):
    return x * 1.0


@pytest.mark.parametrize("arg,note", [
    ([0.5, 1.0], "an item of argument 'x', a list, has rank 0.*pass np.array\\(x\\)"),
    ((0.5, np.ones(2)), "an item of argument 'x', a tuple, has rank 0.*pass np.array\\(x\\)"),
    (2.0, "argument 'x' has rank 0.*in_axes=None"),
])
def test_vmap_of_a_list_of_numbers_says_it_is_a_pytree(arg, note):
    with pytest.raises(ValueError, match=f"(?s)vmap was requested to map its argument along "
                                         f"axis 0.*{note}") as e:
        vmap(identity)(arg)
    assert f"line {identity.__code__.co_firstlineno}" in str(e.value)
    np.testing.assert_allclose(vmap(identity)(np.array([0.5, 1.0])), [0.5, 1.0])


def outer(x):
    return np.outer(x, x)


@pytest.mark.parametrize("backend", ["vmap", "jit"])
@pytest.mark.parametrize("fn,arg,out_axes,rank", [
    (identity, np.ones(3), 3, 0), (outer, np.ones((3, 2)), 3, 2),
    (outer, np.ones((3, 2)), -4, 2), (outer, np.ones((3, 2)), (0, 5), None)])
def test_vmap_out_axes_out_of_bounds(fn, arg, out_axes, rank, backend):
    if isinstance(out_axes, tuple):
        def fn(x):
            return x * 2.0, outer(x)
    v = vmap(fn, out_axes=out_axes)
    v = jit(v) if backend == "jit" else v
    with pytest.raises(ValueError, match="vmap out_axes=-?\\d is out of bounds for an output "
                                         "of rank" + (f" {rank}" if rank is not None else "")):
        v(arg)


@pytest.mark.parametrize("backend", ["vmap", "jit"])
def test_vmap_out_axes_in_bounds_match_the_loop(backend):
    xs = np.arange(6.0).reshape(3, 2)
    for axes in (1, 2, -1, -3):
        v = vmap(outer, out_axes=axes)
        v = jit(v) if backend == "jit" else v
        want = np.moveaxis(np.stack([np.outer(x, x) for x in xs]), 0, axes)
        np.testing.assert_allclose(v(xs), want)


def two(x, y):
    return x * y


@pytest.mark.parametrize("call,error,message", [
    (lambda: vmap(two, in_axes=(0,))(np.ones(3), np.ones(3)), ValueError,
     "len\\(in_axes\\)=1, len\\(args\\)=2"),
    (lambda: vmap(two, in_axes=0.5), TypeError, "in_axes must be an int, None"),
    (lambda: vmap(two, in_axes=({"a": 0}, 0))(np.ones(3), np.ones(3)), ValueError,
     "does not match its structure"),
    (lambda: vmap(two)(np.ones(3), np.ones(4)), ValueError,
     "(?s)inconsistent sizes for array axes to be mapped.*'x' has size 3.*'y' has size 4"),
    (lambda: vmap(two, in_axes=None)(np.ones(3), np.ones(3)), ValueError,
     "(?s)at least one non-None value in in_axes.*axis_size"),
    (lambda: vmap(two, out_axes="a"), TypeError, "out_axes must be an int"),
])
def test_vmap_bad_axes(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("call,error,message", [
    (lambda: jvp(square, (1.0,), ((1.0,),)), TypeError, "structure"),
    (lambda: jvp(square, (np.ones(3),), (np.ones(2),)), ValueError, "shape \\(2,\\)"),
    (lambda: jvp(square, (np.ones(3),), (np.ones(3, np.int32),)), TypeError, "dtype int32"),
    (lambda: jvp(square, (1.0,), (1.0, 2.0)), TypeError, "1 primal\\(s\\) but 2 tangent"),
    (lambda: jvp(square, 1.0, 1.0), TypeError, "must be a tuple or list"),
    (lambda: jvp(square, (3,), (1.0,)), TypeError, "primal 0 .* has dtype int"),
    (lambda: grad(square)(3), TypeError, "grad requires real-valued .* dtype int"),
    (lambda: jit(square, static_argnums=3), ValueError, "static_argnums \\[3\\] out of range"),
    (lambda: jit(two, static_argnums=1)(1.0, [1]), ValueError, "Non-hashable static"),
])
def test_other_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_of_grad_checks_integer_inputs_as_grad_does(backend):
    with pytest.raises(TypeError, match="grad requires real-valued .* dtype int"):
        jit(grad(square), backend=backend)(3)
    assert jit(grad(square), backend=backend)(3.0) == 6.0
