"""Purity and immutable-update rules. Each rejected function marks its offending line `# <-`."""
import inspect
import random
from random import gauss

import numpy as np
import pytest

from strop.errors import ImmutableUpdateError, PurityError
from strop.transformer.check import check
from strop.transformer.parse import parse

COUNTER = 0
TABLE = np.zeros(3)
RNG = np.random.default_rng(0)
ITEMS = iter([1, 2, 3])
SCALE = 2.0


def rejected(fn, error, fix):
    """Check ``fn``: it must raise ``error`` at its line marked `# <-`, suggesting ``fix``."""
    with pytest.raises(error) as info:
        check(parse(fn))
    lines, first = inspect.getsourcelines(fn)
    marked = [first + k for k, line in enumerate(lines) if "# <-" in line]
    assert info.value.location.lineno == marked[0], str(info.value)
    assert fix in str(info.value), str(info.value)
    return str(info.value)


# -- purity: global and nonlocal writes ----------------------------------------------------------

def writes_global(x):
    global COUNTER
    COUNTER = COUNTER + 1  # <-
    return x


def aug_writes_global(x):
    global COUNTER
    COUNTER += 1  # <-
    return x


def make_nonlocal_writer():
    total = 0

    def f(x):
        nonlocal total
        total += x  # <-
        return total
    return f


def reads_declared_global(x):
    global SCALE
    return x * SCALE


def test_global_write():
    message = rejected(writes_global, PurityError, "return the new value of `COUNTER`")
    assert "global variable `COUNTER`" in message
    rejected(aug_writes_global, PurityError, "return the new value of `COUNTER`")


def test_nonlocal_write():
    message = rejected(make_nonlocal_writer(), PurityError, "return the new value of `total`")
    assert "closure variable `total`" in message


def test_declared_global_only_read_is_pure():
    check(parse(reads_declared_global))


# -- purity: stateful random numbers -------------------------------------------------------------

def numpy_global_rng(x):
    return x + np.random.normal(size=3)  # <-


def numpy_default_rng(x):
    y = x * 2
    rng = np.random.default_rng()  # <-
    return y + rng.normal()


def generator_from_outside(x):
    return x + RNG.normal()  # <-


def python_random(x):
    return x * random.random()  # <-


def python_random_imported_function(x):
    return x + gauss(0.0, 1.0)  # <-


def random_imported_inside(x):
    import numpy as onp
    return x + onp.random.rand()  # <-


@pytest.mark.parametrize("fn", [numpy_global_rng, numpy_default_rng, generator_from_outside,
                                python_random, python_random_imported_function,
                                random_imported_inside])
def test_stateful_rng(fn):
    rejected(fn, PurityError, "key, sub = strop.random.split(key)")


# -- purity: iterators from outside --------------------------------------------------------------

def next_on_argument(x, it):
    return x + next(it)  # <-


def next_on_global(x):
    return x + next(ITEMS)  # <-


def dunder_next_on_argument(x, it):
    return x + it.__next__()  # <-


def iterator_made_inside(xs):
    it = iter(xs)
    first = next(it)
    squares = (v * v for v in xs)
    return first + next(squares)


@pytest.mark.parametrize("fn", [next_on_argument, next_on_global, dunder_next_on_argument])
def test_iterator_from_outside(fn):
    rejected(fn, PurityError, "create the iterator inside the function")


def test_iterator_made_inside_is_pure():
    check(parse(iterator_made_inside))


# -- mutation of arguments, globals, closures ----------------------------------------------------

def item_assign(x, v):
    x[0] = v  # <-
    return x


def slice_assign(x):
    x[1:] = 0.0  # <-
    return x


def nested_item_assign(x, i, j):
    x[i][j] = 1.0  # <-
    return x


def attribute_assign(obj, v):
    obj.weight = v  # <-
    return obj


def aug_assign_name(x, v):
    x += v  # <-
    return x


def aug_assign_item(x, i, v):
    x[i] += v  # <-
    return x


def global_item_assign(x):
    TABLE[0] = x  # <-
    return TABLE


def make_closure_append():
    seen = []

    def f(x):
        seen.append(x)  # <-
        return x
    return f


def delete_item(x):
    del x[0]  # <-
    return x


def test_item_assignment():
    message = rejected(item_assign, ImmutableUpdateError, "`x = x.at[0].set(v)`")
    assert "argument `x`" in message
    rejected(slice_assign, ImmutableUpdateError, "`x = x.at[1:].set(0.0)`")
    rejected(nested_item_assign, ImmutableUpdateError, "`x = x.at[i, j].set(1.0)`")


def test_attribute_assignment():
    rejected(attribute_assign, ImmutableUpdateError, "obj = copy.copy(obj)")


def test_augmented_assignment():
    rejected(aug_assign_name, ImmutableUpdateError, "`x = x + v`")
    rejected(aug_assign_item, ImmutableUpdateError, "`x = x.at[i].add(v)`")


def test_global_and_closure_objects():
    assert "global `TABLE`" in rejected(global_item_assign, ImmutableUpdateError,
                                        "TABLE = TABLE.at[0].set(x)")
    assert "closure variable `seen`" in rejected(make_closure_append(), ImmutableUpdateError,
                                                 "make a copy first: `seen = list(seen)`")


def test_del_item():
    rejected(delete_item, ImmutableUpdateError, "`x = np.delete(x, 0)`")


def list_append(xs, v):
    xs.append(v)  # <-
    return xs


def dict_update(d, v):
    d.update(w=v)  # <-
    return d


def array_fill(x):
    x.fill(0.0)  # <-
    return x


def array_sort(x):
    x.sort()  # <-
    return x


def dunder_setitem(x):
    x.__setitem__(0, 1.0)  # <-
    return x


@pytest.mark.parametrize("fn, fix", [
    (list_append, "make a copy first: `xs = list(xs)`"),
    (dict_update, "make a copy first: `d = dict(d)`"),
    (array_fill, "make a copy first: `x = x.copy()`"),
    (array_sort, "make a copy first: `x = x.copy()`"),
    (dunder_setitem, "make a copy first: `x = x.copy()`"),
])
def test_mutating_methods(fn, fix):
    rejected(fn, ImmutableUpdateError, fix)


def out_on_argument(a, b, x):
    np.add(a, b, out=x)  # <-
    return x


def out_on_local(a, b):
    y = np.zeros(3)
    np.multiply(a, b, out=y)  # <-
    return y


def test_out_keyword():
    rejected(out_on_argument, ImmutableUpdateError, "`x = np.add(a, b)`")
    message = rejected(out_on_local, ImmutableUpdateError, "`y = np.multiply(a, b)`")
    assert "cannot differentiate through `out=`" in message


def copyto(x, y):
    np.copyto(x, y)  # <-
    return x


def put(x, v):
    np.put(x, [0, 2], v)  # <-
    return x


def place(x, v):
    np.place(x, x > 0, v)  # <-
    return x


def fill_diagonal(x):
    np.fill_diagonal(x, 1.0)  # <-
    return x


def ufunc_add_at(x, idx, v):
    np.add.at(x, idx, v)  # <-
    return x


def ufunc_power_at(x, idx):
    np.power.at(x, idx, 2)  # <-
    return x


@pytest.mark.parametrize("fn, fix", [
    (copyto, "`x = np.broadcast_to(y, x.shape).astype(x.dtype)`"),
    (put, "`x = x.ravel().at[[0, 2]].set(v).reshape(x.shape)`"),
    (place, "`x = x.at[x > 0].set(v)`"),
    (fill_diagonal, "`x = x.at[np.diag_indices_from(x)].set(1.0)`"),
    (ufunc_add_at, "`x = x.at[idx].add(v)`"),
    (ufunc_power_at, "`x = x.at[idx].set(np.power(x[idx], 2))`"),
])
def test_in_place_numpy_functions(fn, fix):
    rejected(fn, ImmutableUpdateError, fix)


# -- aliasing: local names bound to arguments or views of them -----------------------------------

def alias_name(x):
    y = x
    y[0] = 1.0  # <-
    return y


def alias_row(x):
    y = x[0]
    y[0] = 1.0  # <-
    return y


def alias_transpose(x):
    y = x.T
    y[0, 1] = 1.0  # <-
    return y


def alias_reshape(x):
    y = x.reshape(-1)
    y[0] = 1.0  # <-
    return y


def alias_asarray(x):
    y = np.asarray(x)
    y[0] = 1.0  # <-
    return y


def alias_ravel(x):
    y = x.ravel()
    y.fill(2.0)  # <-
    return y


def alias_no_copy(x):
    y = np.array(x, copy=False)
    y[0] = 1.0  # <-
    return y


def alias_loop_row(x):
    for row in x:
        row[0] = 1.0  # <-
    return x


def alias_enumerate_row(x):
    for i, row in enumerate(x):
        row[0] = i  # <-
    return x


def alias_zip(x, z):
    for a, b in zip(x, z):
        b[0] = a[0]  # <-
    return z


def alias_branch(x, c):
    if c:
        y = np.zeros(3)
    else:
        y = x
    y[0] = 1.0  # <-
    return y


def alias_loop_carried(x):
    y = np.zeros(3)
    for _ in range(3):
        y[0] = 1.0  # <-
        y = x
    return y


def alias_in_container(x):
    d = {"w": x}
    d["w"][0] = 1.0  # <-
    return d


def alias_shallow_copy(x):
    rows = list(x)
    rows[0][0] = 1.0  # <-
    return rows


def alias_accumulator(x):
    acc = x[0]
    for i in range(1, 3):
        acc += x[i]  # <-
    return acc


def alias_attribute_chain(model, v):
    w = model.layers[0].weight
    w[0] = v  # <-
    return model


def alias_walrus(x):
    if (y := x.T) is not None:
        y[0] = 1.0  # <-
    return x


@pytest.mark.parametrize("fn", [alias_name, alias_row, alias_transpose, alias_reshape,
                                alias_asarray, alias_ravel, alias_no_copy, alias_loop_row,
                                alias_enumerate_row, alias_branch, alias_loop_carried,
                                alias_in_container, alias_shallow_copy, alias_walrus])
def test_alias_of_argument(fn):
    message = rejected(fn, ImmutableUpdateError, "")
    assert "argument `x`" in message


def test_alias_names_the_argument_and_the_view():
    message = rejected(alias_row, ImmutableUpdateError, "`y = y.at[0].set(1.0)`")
    assert "(`y` is `x` or part of it)" in message
    assert "argument `z`" in rejected(alias_zip, ImmutableUpdateError, "b = b.at[0].set(a[0])")
    rejected(alias_accumulator, ImmutableUpdateError, "`acc = acc + x[i]`")
    assert "argument `model`" in rejected(alias_attribute_chain, ImmutableUpdateError,
                                          "w = w.at[0].set(v)")


# -- nested functions and lambdas ----------------------------------------------------------------

def nested_mutates_argument(x):
    def inner(v):
        x[0] = v  # <-
        return v
    return inner(1.0)


def nested_mutates_own_parameter(x):
    def body(i, carry):
        carry[i] = 0.0  # <-
        return carry
    return body(0, x.copy())


def lambda_mutates_argument(xs):
    push = lambda v: xs.append(v)  # <-  # noqa: E731
    push(1)
    return xs


append_lambda = lambda xs: xs.append(1)  # <-  # noqa: E731


def nested_mutates_fresh_local(x):
    y = np.zeros(3)

    def inner(v):
        y[0] = v
        return y
    return inner(x)


@pytest.mark.parametrize("fn", [nested_mutates_argument, nested_mutates_own_parameter,
                                lambda_mutates_argument, append_lambda])
def test_nested_functions(fn):
    rejected(fn, ImmutableUpdateError, "")


# -- accepted: objects created inside, copies, shadowed names ------------------------------------

def pure_uses_internal_state(x):  # JAX's Sharp Bits example
    state = dict(even=0, odd=0)
    for i in range(10):
        state['even' if i % 2 == 0 else 'odd'] += x
    return state['even'] + state['odd']


def local_list(x):
    out = []
    for i in range(3):
        out.append(x * i)
    out.sort()
    return out


def local_array(x):
    y = np.zeros(3)
    y[0] = x
    y[1:] += x
    np.add.at(y, [0, 0], 1.0)
    np.copyto(y, 2.0)
    return y


def copies(x, xs, d, i, v):
    y = x.copy()
    y[i] = v
    z = np.array(x)
    z[0] += v
    ys = list(xs)
    ys.append(v)
    e = dict(d)
    e["w"] = v
    w = x + 1
    w[0] = v
    return y, z, ys, e, w


def rebinds_argument_to_copy(x, v):
    x = x.copy()
    x[0] = v
    x += v
    return x


def fresh_in_both_branches(x, c):
    y = np.ones(3) if c else x * 2
    if c:
        z = np.zeros(3)
    else:
        z = x.copy()
    y[0] = z[0] = 1.0
    return y, z


def shadowed_names(x, random, it):
    def next(v):
        return v + 1
    rows = [r * 2 for r in x]
    rows[0][0] = 1.0
    return next(x) + random.uniform() + it[0]


def functional_updates(x, i, v):
    print(x)
    y = x.at[i].add(v)
    s = np.sort(x) + sorted(x)[0]
    return y + s * SCALE


@pytest.mark.parametrize("fn", [pure_uses_internal_state, local_list, local_array, copies,
                                rebinds_argument_to_copy, fresh_in_both_branches,
                                shadowed_names, functional_updates, nested_mutates_fresh_local])
def test_accepted(fn):
    check(parse(fn))


# -- order ---------------------------------------------------------------------------------------

def two_problems(x):
    y = x * 2
    x[0] = 1.0  # <-
    return y + np.random.rand()


def test_first_problem_in_source_order():
    rejected(two_problems, ImmutableUpdateError, "x = x.at[0].set(1.0)")


# -- control flow and scopes ---------------------------------------------------------------------

def alias_while_carried(x, n):
    y = np.zeros(3)
    i = 0
    while i < n:
        i += 1
        if i > 2:
            continue
        y[0] = 1.0  # <-
        y = x[i]
    return y


def alias_comprehension_target(x):
    return [row.fill(0.0) for row in x]  # <-


def alias_match_capture(x):
    match x:
        case [first, *_]:
            first[0] = 1.0  # <-
    return x


def alias_in_except_handler(x):
    try:
        y = x
        y = np.zeros(3)
    except ValueError:
        y[0] = 1.0  # <-
    return y


def nested_sees_outer_alias(x):
    y = x.T

    def inner():
        y[0] = 1.0  # <-
    inner()
    return y


@pytest.mark.parametrize("fn", [alias_while_carried, alias_comprehension_target,
                                alias_match_capture, alias_in_except_handler,
                                nested_sees_outer_alias])
def test_alias_through_control_flow_and_scopes(fn):
    assert "argument `x`" in rejected(fn, ImmutableUpdateError, "")


def declared_global_mutated(x):
    global TABLE
    TABLE.fill(x)  # <-
    return x


def deletes_attribute(obj):
    del obj.cache  # <-
    return obj


def setattr_on_argument(obj, v):
    setattr(obj, "w", v)  # <-
    return obj


def test_more_mutations():
    assert "global `TABLE`" in rejected(declared_global_mutated, ImmutableUpdateError,
                                        "`TABLE = TABLE.copy()`")
    rejected(deletes_attribute, ImmutableUpdateError, "then delete `.cache` of the copy")
    rejected(setattr_on_argument, ImmutableUpdateError, "`obj = copy.copy(obj)`")


def shapes_and_gathers(x, i):
    n = x.shape[0]
    n += 1
    g = x.at[i].get()
    g[0] = 1.0
    s = SCALE
    s += 1.0
    try:
        y = np.zeros(3)
    except ValueError:
        y = np.ones(3)
    y[0] = 2.0
    return n, g, s, y


def test_new_values_accepted():
    check(parse(shapes_and_gathers))


def star_parameters(x, *args, **kwargs):
    kwargs["scale"] = 2.0
    y = np.floor(x, out=...)
    return y + len(args) + kwargs["scale"]


def star_parameter_element(*args, **kwargs):
    kwargs["w"][0] = 1.0  # <-
    return args


def test_star_parameters_are_new_containers():
    check(parse(star_parameters))
    assert "argument `kwargs`" in rejected(star_parameter_element, ImmutableUpdateError,
                                           "kwargs['w']")
