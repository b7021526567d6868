"""jit against the uncompiled function (the oracle), and its promises from DESIGN."""
import functools
import sys
import re
import warnings

import numpy as np
import pytest

import strop
from strop import config, grad, jit, runtime
from strop.errors import JitFallbackWarning
from helpers import numeric_vjp
from test_slow_paths import lorenz_by_rk4


@pytest.fixture(autouse=True)
def x64():
    with config.override(enable_x64=True):
        yield


def seed_f(x):
    if x < 3:
        return 3. * x ** 2
    return -4 * x


def newton(a, tol):
    x = a
    while abs(x * x - a) > tol:
        x = 0.5 * (x + a / x)
    return x


def ones_times(n, v):
    return np.ones((n,)) * v


def pendulum(theta0, omega0, damping, steps):
    theta, omega = theta0, omega0
    dt = 0.01
    for _ in range(steps):
        omega = omega - dt * (np.sin(theta) + damping * omega)
        theta = theta + dt * omega
    return 0.5 * omega ** 2 + (1 - np.cos(theta))


def array_ops(x, y):
    z = np.sin(x) * y + np.exp(-x ** 2)
    w = z[1:] - z[:-1]
    acc = 0.0
    for i in range(w.shape[0]):
        if w[i] > 0:
            acc += w[i] ** 2
        else:
            acc -= w[i]
    return acc + np.sum(z) / z.size


def local_array(x):
    y = np.zeros(4)
    for i in range(4):
        y[i] = x * i
    y[1:] += x
    return np.sum(y * y)


def at_update(x):
    y = x.at[0].set(2.0)
    y = y.at[1].add(x[2])
    return np.sum(y ** 2)


CASES = [
    (seed_f, (2.0,)), (seed_f, (4.0,)),
    (newton, (2.0, 1e-12)), (newton, (10.0, 1e-9)),
    (ones_times, (5, 2.5)),
    (pendulum, (0.3, 0.0, 0.1, 200)),
    (array_ops, (np.linspace(-1, 1, 7), np.linspace(0, 2, 7))),
    (local_array, (0.7,)),
    (at_update, (np.array([1.0, 2.0, 3.0]),)),
]


@pytest.mark.parametrize("f,args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_jit_matches_python(f, args):
    jf = jit(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        got = jf(*args)
    want = f(*args) if f is not at_update else strop.at(args[0])[0].set(2.0)
    if f is at_update:
        y = strop.at(args[0])[0].set(2.0)
        want = np.sum(strop.at(y)[1].add(args[0][2]) ** 2)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert jf.last_backend == "cpu"


@pytest.mark.parametrize("f,args,argnums", [
    (seed_f, (2.0,), 0), (seed_f, (4.0,), 0),
    (pendulum, (0.3, 0.2, 0.1, 300), (0, 2)),
    (array_ops, (np.linspace(-1, 1, 7), np.linspace(0, 2, 7)), (0, 1)),
    (local_array, (0.7,), 0),
], ids=lambda v: getattr(v, "__name__", ""))
def test_jit_of_grad_matches_grad(f, args, argnums):
    g = grad(f, argnums=argnums)
    jg = jit(g)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        got = jg(*args)
    want = g(*args)
    for a, b in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    assert jg.last_backend == "cpu"


def test_grad_of_jit_is_transformed_not_a_black_box():
    np.testing.assert_allclose(grad(jit(seed_f))(2.0), 12.0)
    np.testing.assert_allclose(grad(jit(seed_f))(4.0), -4.0)


def rollout(w, x):
    for _ in range(3):            # a loop (tapes), a product, a ufunc Numba code calls via NumPy
        x = np.sin(w @ x)
    return np.sum(x * x)


def test_transforms_of_jit_see_the_code_before_it_was_lowered_for_numba():
    with config.override(enable_x64=True):
        w, x = np.random.default_rng(0).normal(size=(2, 3, 3))
        jitted = jit(rollout)
        assert jitted(w, x[0]) == pytest.approx(rollout(w, x[0]), rel=1e-12)
        np.testing.assert_allclose(grad(jitted)(w, x[0]), grad(rollout)(w, x[0]), rtol=1e-12)
        np.testing.assert_allclose(grad(jitted)(w, x[0]),
                                   numeric_vjp(rollout, (w, x[0]), 0, 1.0), rtol=1e-6)
        np.testing.assert_allclose(strop.vmap(jitted, in_axes=(None, 0))(w, x),
                                   [rollout(w, xi) for xi in x], rtol=1e-12)


def test_globals_are_read_every_call():
    global OFFSET
    jf = jit(uses_global)
    OFFSET = 1.0
    assert jf(1.0) == 2.0
    OFFSET = 5.0
    assert jf(1.0) == 6.0


OFFSET = 1.0


def uses_global(x):
    return x + OFFSET


def sum_of_squares(x):
    return np.sum(x * x)


def test_a_call_like_an_earlier_one_skips_the_checks_but_not_what_they_decide():
    jg = jit(grad(sum_of_squares))
    x = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(jg(x), 2 * x)
    np.testing.assert_allclose(jg(x + 1), 2 * (x + 1))
    assert len(jg._fast) == 1, "the repeat call should have taken the remembered path"
    with pytest.raises(TypeError, match="real-valued"):   # a new dtype: checked again
        jg(np.arange(5))
    np.testing.assert_allclose(jg(np.linspace(0.0, 1.0, 7)), 2 * np.linspace(0.0, 1.0, 7))
    with config.override(enable_x64=False):   # a new setting: a new key, float32 code
        assert jg(x).dtype == np.float32
    assert jg(x).dtype == np.float64
    assert jg(x.reshape(5, 1)).shape == (5, 1)   # a new rank: its own code
    np.testing.assert_allclose(jg(x[::2]), 2 * x[::2])   # a strided view: another layout


def scaled_dot(a, b, s, i):
    return np.sum(a * b) * s + a[i]


def _python_calls(f, *args):
    """The Python functions one call of ``f`` runs (their names)."""
    names = []
    sys.setprofile(lambda frame, event, arg: names.append(frame.f_code.co_name)
                   if event == "call" else None)
    try:
        f(*args)
    finally:
        sys.setprofile(None)
    return names


def test_a_call_like_an_earlier_one_runs_the_machine_code_with_little_around_it():
    # strop's wrapper took ~5 us a call where njit's dispatcher takes 0.2 us: most of a
    # small function's time (the performance oracle's "wrapper" outliers); a call like an
    # earlier one now calls the machine code it ran, with none of run()'s layers
    a, b = np.linspace(0.0, 1.0, 5), np.linspace(1.0, 2.0, 5)
    for x64 in (True, False):
        with config.override(enable_x64=x64):
            jf = jit(scaled_dot)
            want = jit(scaled_dot, backend="python")(a, b, 0.1, 2)
            assert jf(a, b, 0.1, 2) == want
            ran = _python_calls(jf, a, b, 0.1, 2)
            assert len(ran) <= 12 and "run" not in ran and "_run" not in ran, ran   # (10, 12)
            again = jf(a, b, 0.1, 2)   # numbers narrowed as NumPy narrows them (x64 off)
            assert again == want and type(again) is type(want) and again.dtype == want.dtype
            assert jf(a, b, 0.1, 2 ** 62 // 2 ** 61 + 1) == jit(scaled_dot, backend="python")(
                a, b, 0.1, 3)
            with pytest.raises(IndexError) as e:   # the code's error, at the user's line
                jf(a, b, 0.1, 7)
            assert "return np.sum(a * b) * s + a[i]" in str(e.value)
            with pytest.raises(OverflowError):      # an int too big for it, as before
                jf(a, b, 0.1, 2 ** 70)
            np.testing.assert_array_equal(a, np.linspace(0.0, 1.0, 5))   # not narrowed in place


def test_print_runs_every_call(capfd):
    jf = jit(prints)
    jf(1.0)
    jf(2.0)
    assert capfd.readouterr().out.count("value") == 2


def prints(x):
    print("value", x)
    return x * 2


def scale_by(x, how):
    if how == "double":
        return x * 2
    return x * 3


def test_static_argnums_and_names():
    f1 = jit(scale_by, static_argnums=1)
    assert f1(2.0, "double") == 4.0 and f1(2.0, "triple") == 6.0
    f2 = jit(scale_by, static_argnames="how")
    assert f2(2.0, how="triple") == 6.0
    f3 = functools.partial(jit, static_argnums=(1,))(scale_by)
    assert f3(1.0, "double") == 2.0


def test_unhashable_static_argument_is_a_value_error():
    with pytest.raises(ValueError, match="Non-hashable static"):
        jit(scale_by, static_argnums=1)(1.0, ["double"])


def uses_a_dict(x):
    d = {"a{}".format(i): x for i in range(2)}   # Numba has no str.format
    return d["a0"] + d["a1"]


def test_fallback_warns_names_the_line_and_gives_the_same_result():
    jf = jit(uses_a_dict)
    with pytest.warns(JitFallbackWarning) as record:
        got = jf(1.5)
    assert got == 3.0 and jf.last_backend == "python"
    assert record[0].message.location is None or record[0].message.location.filename == __file__


def test_source_of_jit_is_what_was_compiled():
    jf = jit(seed_f)
    jf(2.0)
    text = strop.source(jf)
    assert "def seed_f(x):" in text and "# line" in text


def reads_index(x, i):
    return x[i] * 2.0


def test_out_of_bounds_index_names_the_user_line():
    jf = jit(reads_index)
    assert jf(np.arange(3.0), 2) == 4.0
    with pytest.raises(IndexError) as e:
        jf(np.arange(3.0), 11)
    assert "reads_index" not in str(e.value) or True
    assert e.value.location.filename == __file__
    assert "return x[i] * 2.0" in str(e.value)


def makes_nan(x):
    y = np.log(x)
    return y * 2.0


def test_debug_nans_names_the_user_line():
    jf = jit(makes_nan)
    assert np.isnan(jf(-1.0))            # off by default: NumPy's NaN, no error
    with config.override(debug_nans=True):
        with pytest.raises(FloatingPointError) as e:
            jf(-1.0)
        assert "y = np.log(x)" in str(e.value)
        assert jf(2.0) == 2.0 * np.log(2.0)


def test_debug_nans_of_a_gradient_names_the_line_whose_adjoint_made_it():
    g = jit(grad(sqrt_sum))
    with config.override(debug_nans=True):
        with pytest.raises(FloatingPointError) as e:
            g(np.array([1.0, 0.0]))
    assert "return np.sum(np.sqrt(x) * 0.0)" in str(e.value) or "np.sqrt" in str(e.value)


def sqrt_sum(x):
    return np.sum(np.sqrt(x) * 0.0)


def test_log_compiles_says_why(caplog):
    jf = jit(scale_by, static_argnums=1)
    with config.override(log_compiles=True), caplog.at_level("WARNING", logger="strop"):
        jf(1.0, "double")
        jf(1.0, "triple")
        jf(np.ones(2), "triple")
    text = caplog.text
    assert "first call" in text and "new static value" in text and "new signature" in text


def test_llvm_ir_and_assembly_for_a_signature():
    jf = jit(seed_f)
    jf(2.0)
    ir_text = jf.inspect_llvm()
    assert "define" in ir_text
    assert jf.inspect_asm()


def fills(n, v):
    y = np.zeros(n)
    for i in range(n):
        y = y.at[i].set(v * i)
    return y


def sets_first(x, v):
    return x.at[0].set(v)


def test_update_of_a_dead_array_runs_in_place():
    jf = jit(fills)
    np.testing.assert_allclose(jf(4, 2.0), [0.0, 2.0, 4.0, 6.0])
    assert "at_set_inplace(y, i" in strop.source(jf)          # no copy per iteration
    assert jf.staged().inplace == {"y"}


def test_an_argument_is_copied_unless_donated():
    x = np.arange(3.0)
    out = jit(sets_first)(x, 9.0)
    assert out[0] == 9.0 and x[0] == 0.0 and not np.shares_memory(out, x)
    donated = jit(sets_first, donate_argnums=0)
    y = np.arange(3.0)
    out = donated(y, 9.0)
    assert out[0] == 9.0 and np.shares_memory(out, y)        # the output reuses the buffer


def keeps_old(x):
    y = np.zeros(3)
    z = y                     # a second name for y's value: no in-place update
    y = y.at[0].set(x)
    return z, y


def test_no_in_place_update_when_another_name_sees_the_array():
    z, y = jit(keeps_old)(5.0)
    np.testing.assert_allclose(z, [0.0, 0.0, 0.0])
    np.testing.assert_allclose(y, [5.0, 0.0, 0.0])
    assert "inplace" not in strop.source(jit(keeps_old))


def stencil(u0, alpha):
    u = u0.copy()
    for _ in range(5):
        lap = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u[1:-1] = u[1:-1] + alpha * lap
    return u


def slices_multiplied(u0):
    u = u0.copy()
    for _ in range(3):
        u[1:-1] = u[1:-1] * u[2:]
    return np.sum(u ** 2)


def test_slices_dead_before_the_update_allow_it_in_place():
    u0 = np.sin(np.linspace(0.0, 3.0, 20))
    jf = jit(stencil)
    np.testing.assert_allclose(jf(u0, 0.2), stencil(u0, 0.2), rtol=1e-12)
    assert jf.staged().inplace == {"u"}
    np.testing.assert_allclose(u0, np.sin(np.linspace(0.0, 3.0, 20)))   # the argument kept
    # the adjoint reads the slices' values after the update (a tape keeps them): no in-place
    # update of u there, in the derivative (only its cotangent bu is accumulated in place);
    # the function itself updates in place
    g = grad(slices_multiplied)
    jg = jit(g)
    np.testing.assert_allclose(jg(u0), g(u0), rtol=1e-12)
    np.testing.assert_allclose(jg(u0), numeric_vjp(slices_multiplied, [u0], 0, 1.0),
                               rtol=1e-6, atol=1e-8)
    assert jg.staged().inplace == {"bu"}
    jm = jit(slices_multiplied)
    np.testing.assert_allclose(jm(u0), slices_multiplied(u0), rtol=1e-12)
    assert jm.staged().inplace == {"u"}


def stencil_loss(u0, alpha):
    return np.sum(stencil(u0, alpha) ** 2)


def test_the_adjoint_of_a_stencil_updates_in_place():
    # the forward loop updates u in place (the backward loop's u, restored from a tape of
    # shapes, is another name), and the cotangents of u's four slices are added into bu in
    # place, with no array of zeros per slice
    u0 = np.sin(np.linspace(0.0, 3.0, 20))
    g = grad(stencil_loss, argnums=(0, 1))
    jg = jit(g)
    got, want = jg(u0, 0.2), g(u0, 0.2)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(got[0], numeric_vjp(stencil_loss, [u0, 0.2], 0, 1.0), rtol=1e-6)
    np.testing.assert_allclose(got[1], numeric_vjp(stencil_loss, [u0, 0.2], 1, 1.0), rtol=1e-6)
    assert {"u", "bu"} <= jg.staged().inplace
    text = strop.source(jg)
    # (one of them a chain added as it is computed, add_at_index_chain; one, the update's own
    # slice, kept in place by setitem_split_kept)
    assert text.count("add_at_index_inplace(bu, ") + text.count("add_at_index_chain(bu, ") \
        == 3 and "setitem_split_kept(bu, " in text and "getitem_vjp(" not in text


def owned(src, names=("setitem_vjp", "getitem_vjp", "add")):
    """make_inplace of ``src`` (generated code calling runtime helpers), as its source."""
    import textwrap
    import gast
    from strop import runtime
    from strop.codegen.inplace import make_inplace
    from strop.transformer.unparse import unparse
    node = gast.parse(textwrap.dedent(src)).body[0]
    make_inplace(node, {n: getattr(runtime, n) for n in names})
    return unparse(node)


def test_a_cotangent_is_accumulated_in_place_only_where_no_other_name_sees_it():
    fresh = """
        def f(g, x, s):
            acc = setitem_vjp(g, s)
            _t1 = getitem_vjp(g, x, s)
            acc = add(acc, _t1)
            _t2 = getitem_vjp(g, x, s)
            acc = add(_t2, acc)
            return acc
        """
    assert owned(fresh).count("acc = add_at_index_inplace(acc, g, x, s)") == 2
    for seen in ("b = acc", "b = acc[1:]", "b = np.asarray(acc)"):
        # b sees the first value: the first addition makes a new array, the second adds
        # into that one
        src = fresh.replace("            _t1 = ", f"            {seen}\n            _t1 = ")
        adds = [line.strip() for line in owned(src).split("\n") if "add_at_index" in line]
        assert adds == ["acc = add_at_index(acc, g, x, s)",
                        "acc = add_at_index_inplace(acc, g, x, s)"], seen
    # an accumulator bound from elsewhere (an argument): added into, not in place
    text = owned("""
        def f(acc, g, x, s):
            _t1 = getitem_vjp(g, x, s)
            acc = add(acc, _t1)
            return acc
        """)
    assert "acc = add_at_index(acc, g, x, s)" in text and "inplace" not in text
    # g rebound between the cotangent and its addition: left as it is
    text = owned("""
        def f(g, x, s):
            acc = setitem_vjp(g, s)
            _t1 = getitem_vjp(g, x, s)
            g = g * 2.0
            acc = add(acc, _t1)
            return acc, g
        """)
    assert "getitem_vjp(g, x, s)" in text and "add_at_index" not in text


def test_a_container_cotangent_is_zeroed_in_place_only_where_no_other_name_sees_it():
    names = ("setitem_vjp", "item_vjp", "unbroadcast")
    loop = """
        def f(g, x, n):
            _t1 = g * 2.0
            acc = unbroadcast(_t1, x)
            for t in range(n):
                _g1 = acc
                acc = setitem_vjp(_g1, t)
                _t2 = item_vjp(_g1, t, x)
                _t3 = _t2 * 2.0
            return acc
        """
    # the value made before the loop, and the one each trip leaves, are new arrays
    text = owned(loop, names)
    assert "acc, _t2 = setitem_split_inplace(acc, t, x)" in text and "_g1" not in text
    # the accumulator is the argument, or another name sees its value on the next trip
    for src in (loop.replace("_t1 = g * 2.0", "_t1 = g"),
                loop.replace("_t3 = _t2 * 2.0", "_t3 = acc[0:2]")):
        text = owned(src, names)
        assert "acc, _t2 = setitem_split(acc, t, x)" in text and "inplace" not in text, src


def test_a_container_cotangent_is_split_where_the_items_name_is_rebound_later():
    # lax.scan's adjoint: the item's cotangent gets a name that is bound again after it
    # (bh = item_vjp(...); bh = bh + carry); made where the container is zeroed, it is split
    names = ("setitem_vjp", "item_vjp")
    loop = """
        def f(g, x, n):
            acc = g * 2.0
            bh = g[0] * 0.0
            for t in range(n):
                _g1 = acc
                acc = setitem_vjp(_g1, t)
                _t9 = x * 3.0
                bh = item_vjp(_g1, t, x)
                bh = bh + _t9
            return acc, bh
        """
    assert "acc, bh = setitem_split_inplace(acc, t, x)" in owned(loop, names)
    # the item's name read between the two (its older value): left as it is
    text = owned(loop.replace("_t9 = x * 3.0", "_t9 = bh * 3.0"), names)
    assert "setitem_split" not in text and "item_vjp(_g1, t, x)" in text


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adding_at_an_index_in_place_writes_into_the_sum(dtype):
    from numba import njit
    from strop import runtime
    from strop.runtime import numba as _implementations  # noqa: F401
    add = njit(lambda acc, g, x, i: runtime.add_at_index_inplace(acc, g, x, i))
    x = np.zeros((4, 3), dtype)
    for i, g in [(1, np.ones(3, dtype)), (slice(0, 2), np.ones((2, 3), dtype)),
                 (np.array([0, 0, 3]), np.ones((3, 3), dtype))]:
        acc = np.arange(12.0, dtype=dtype).reshape(4, 3)
        want = runtime.add_at_index(acc.copy(), g, x, i)
        got = add(acc, g, x, i)
        assert np.shares_memory(got, acc) and got.dtype == dtype
        np.testing.assert_array_equal(got, want)
    # a sum of another dtype than the cotangent's: a new array
    acc = np.zeros((4, 3), np.float32)
    got = add(acc, np.ones(3), np.zeros((4, 3)), 1)
    assert not np.shares_memory(got, acc) and got.dtype == np.float64


def test_splitting_in_place_copies_the_values_part_first():
    from numba import njit
    from strop import runtime
    from strop.runtime import numba as _implementations  # noqa: F401
    split = njit(lambda g, i, v: runtime.setitem_split_inplace(g, i, v))
    for i, v in [(1, np.zeros(3)), (slice(0, 2), np.zeros((2, 3))), (1, np.zeros(1))]:
        g = np.arange(12.0).reshape(4, 3)
        want = runtime.setitem_split(g, i, v)
        got = split(g.copy(), i, v)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_a_part_split_and_added_back_is_kept():
    """setitem_split_kept (the derivative of ``u[i] = u[i] + ...``, codegen/inplace.py) is
    setitem_split then add_at_index of the value's part, compiled: the part left as it is
    where the value fills it, zeroed and its sum broadcast back where the value broadcasts."""
    from numba import njit
    from strop import runtime
    from strop.runtime import numba as _implementations  # noqa: F401
    kept = njit(lambda g, i, v, x: runtime.setitem_split_kept(g, i, v, x))
    x = np.zeros((4, 3))
    for i, v in [(1, np.zeros(3)), (slice(0, 2), np.zeros((2, 3))), (1, np.zeros(1)),
                 (slice(1, 3), np.zeros(3)), ((2, 1), 0.0), (slice(1, 3), 0.0)]:
        g = np.arange(12.0).reshape(4, 3)
        want = runtime.setitem_split_kept(g.copy(), i, v, x)
        got = kept(g.copy(), i, v, x)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def rows_written(w, xs):
    h = np.zeros(w.shape[0])
    hs = np.zeros((xs.shape[0], w.shape[0]))
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + xs[t])
        hs[t] = h
    return np.sum(hs ** 2)


def test_the_adjoint_of_rows_written_in_a_loop_zeroes_each_row_in_place():
    # hs[t] = h: going back, the cotangent of hs loses row t in place (a copy of hs per step
    # made the adjoint quadratic in the steps)
    rng = np.random.default_rng(1)
    w, xs = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(6, 3))
    g = grad(rows_written)
    jg = jit(g)
    np.testing.assert_allclose(jg(w, xs), g(w, xs), rtol=1e-12)
    np.testing.assert_allclose(jg(w, xs), numeric_vjp(rows_written, [w, xs], 0, 1.0),
                               rtol=1e-6, atol=1e-9)
    # (the row's cotangent added to h's in the same loop: setitem_split_add, codegen/reuse.py)
    text = strop.source(jg)
    assert "setitem_split_inplace(bhs, t, h)" in text or "setitem_split_add(bhs, t, h," in text


def test_accumulating_in_place_keeps_numpys_results():
    # repeated indices accumulate; a float32 accumulator cannot hold float64 cotangents, a
    # broadcast one is not x's shape: both get a new array
    from numba import njit
    from strop import runtime
    from strop.runtime import numba as _implementations  # noqa: F401
    add = njit(lambda acc, g, x, i: runtime.add_at_index_inplace(acc, g, x, i))
    x = np.zeros(5)
    for acc, g, i in [(np.ones(5), np.array([1.0, 2.0, 3.0]), np.array([0, 2, 0])),
                      (np.ones(5), np.array([1.0, 2.0]), slice(1, 3)),
                      (np.ones(5, np.float32), np.array([1.0, 2.0]), slice(1, 3)),
                      (np.ones(1), np.array([1.0, 2.0]), slice(1, 3))]:
        want = runtime.add(acc, runtime.getitem_vjp(g, x, i))
        got = add(acc.copy(), g, x, i)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def mlp_loss(params, x, y):
    hidden = np.tanh(x @ params["w1"] + params["b1"])
    pred = hidden @ params["w2"]
    return np.mean((pred - y) ** 2)


def test_pytrees_are_flattened_at_the_boundary():
    rng = np.random.default_rng(0)
    params = {"w1": rng.normal(size=(3, 5)), "b1": np.zeros(5), "w2": rng.normal(size=(5, 2))}
    x, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    g = grad(mlp_loss)
    jg = jit(g)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        got = jg(params, x, y)
    want = g(params, x, y)
    assert jg.last_backend == "cpu" and set(got) == {"w1", "b1", "w2"}
    for k in params:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-10)
    assert "def mlp_loss_grad(params_b1, params_w1, params_w2, x, y):" in strop.source(g)


def picks(d):
    return d["a"] * 2.0 + d["b"][1]


def test_jit_of_a_dict_argument_and_a_nested_list():
    jf = jit(picks)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        assert jf({"a": 1.5, "b": [0.0, 4.0]}) == 7.0
    np.testing.assert_allclose(grad(picks)({"a": 1.5, "b": [0.0, 4.0]})["b"], [0.0, 1.0])


class Scaler:
    """The FAQ's first way: a hashable object passed as a static self."""

    def __init__(self, k):
        self.k = k

    def __hash__(self):
        return hash(self.k)

    def __eq__(self, other):
        return isinstance(other, Scaler) and other.k == self.k

    def apply(self, x):
        return x * self.k


@strop.tree_util.register_pytree_node_class
class Affine:
    """The FAQ's second way: a registered pytree class."""

    def __init__(self, w, b):
        self.w, self.b = w, b

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def apply(self, x):
        return self.w * x + self.b


@pytest.mark.filterwarnings("error::strop.errors.JitFallbackWarning")
def test_the_faq_two_ways_of_jitting_a_method():
    # both compile: a static object's attributes are constants of the code, a registered
    # pytree's are its leaves (tests/test_methods.py has the FAQ's own classes)
    f = jit(Scaler.apply, static_argnums=0)
    assert f(Scaler(3.0), 2.0) == 6.0
    assert f(Scaler(4.0), 2.0) == 8.0          # another static value: its own code
    assert f.last_backend == "cpu"
    g = jit(Affine.apply)
    assert g(Affine(2.0, 1.0), 3.0) == 7.0
    assert g.last_backend == "cpu"


def test_tapes_of_numbers_in_a_range_loop_are_arrays():
    g = grad(pendulum, argnums=(0, 2))
    jg = jit(g)
    got = jg(0.3, 0.2, 0.1, 50)
    np.testing.assert_allclose(got, g(0.3, 0.2, 0.1, 50), rtol=1e-12)
    assert jg.staged().array_tapes == {"_tape_omega", "_tape_theta"}
    assert "tape_put(_tape_theta, _, theta)" in strop.source(jg)   # indexed by the loop variable


def garch_nll(p, r):
    w = p[0]
    a = p[1]
    b = p[2]
    h = np.var(r)
    ll = 0.0
    for t in range(1, r.shape[0]):
        h = w + a * r[t - 1] ** 2 + b * h
        ll = ll + np.log(h) + r[t] ** 2 / h
    return 0.5 * ll


def heat_loss(u0, alpha):
    u = u0.copy()
    for _ in range(30):
        lap = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u[1:-1] = u[1:-1] + alpha * lap
    return np.sum(u ** 2)


def test_a_recurrence_reading_parameters_from_an_array_keeps_one_tape():
    # w = p[0], r[t - 1] ** 2, h carried: numbers (transformer/ranks.py), so no unbroadcast
    # and no tape for their shapes; r[t] ** 2 is made again going back (recompute.py); h,
    # over range(1, n), is an array indexed by a count of the trips (codegen/tapes.py)
    r = np.random.default_rng(0).standard_normal(300) * 0.1
    p = np.array([0.01, 0.1, 0.8])
    g = grad(garch_nll)
    jg = jit(g)
    got = jg(p, r)
    np.testing.assert_allclose(got, g(p, r), rtol=1e-12)
    np.testing.assert_allclose(got, numeric_vjp(garch_nll, [p, r], 0, 1.0), rtol=1e-6)
    assert jg.last_backend == "cpu" and jg.staged().array_tapes == {"_tape_h"}
    src = strop.source(jg)
    assert "unbroadcast" not in src and ".append(" not in src and "tape_put(_tape_h, _trip, h)" \
        in src


def test_arrays_taped_for_their_shape_keep_no_memory():
    u0 = np.sin(np.linspace(0.0, 3.0, 50))
    g = grad(heat_loss, argnums=(0, 1))
    jg = jit(g)
    got, want = jg(u0, 0.2), g(u0, 0.2)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(got[1], numeric_vjp(heat_loss, [u0, 0.2], 1, 1.0),
                               rtol=1e-6)
    assert jg.last_backend == "cpu"
    src = strop.source(jg)
    # the update's value is taped for its shape only (a stand-in); the slices, of lap's
    # shape (transformer/shapes.py), are not taped at all
    # (one record of the trip's values: codegen/tapes.records_for_tapes)
    assert re.search(r"_tape_trip\.append\(\(shape_like\(_t\d+\), lap\)\)", src), src
    assert "_tape_t1" not in src


def branchy_trips(x, n):
    total = 0.0
    for i in range(n):
        a = x[i % 3] * 2.0
        if a > 0.5:
            b = np.sin(a) * x
            c = a * a
        else:
            b = np.cos(a) * x
            c = a + 1.0
        for j in range(2):
            d = b[j] * c
            total = total + d * d
        total = total + np.sum(b * c)
    return total


@pytest.mark.parametrize("fn, args", [
    (lorenz_by_rk4, (np.array([1.0, 1.0, 1.0]), 0.01)),
    (branchy_trips, (np.array([0.1, 0.7, -0.4]), 7))])
def test_the_values_a_trip_tapes_are_one_record(fn, args):
    """Tapes pushed together and popped together are one tape of tuples (one push and one pop
    a trip; RK4 taped 73 values a trip, each a list's push and pop), their values paired up
    again going back: in branches and nested loops too."""
    g = grad(fn)
    jg = jit(g)
    got = jg(*args)
    np.testing.assert_allclose(got, g(*args), rtol=1e-12)
    np.testing.assert_allclose(got, numeric_vjp(fn, list(args), 0, 1.0), rtol=1e-6)
    assert jg.last_backend == "cpu"
    src = strop.source(jg)
    assert "_tape_trip" in src
    if fn is lorenz_by_rk4:   # the trip's values, and s's shape pushed before s is overwritten
        assert src.count(".append(") == 2 and src.count(".pop()") == 2, src
        # stand-ins read only for their shape are taped as shapes, made again where read
        # (codegen/tapes.kept_shapes: a view's six words copied in and out of the tape)
        assert "kept_shape(chain_like(" in src and re.search(
            r"unbroadcast\(\w+, shaped\(_t\d+_1\)\)", src), src
    code = [line for line in src.splitlines() if not line.lstrip().startswith("#")]
    assert max(map(len, code)) <= 99   # a record's long line is broken


def test_a_kept_shape_makes_its_stand_in_again_as_python():
    """As Python (compiled code that fell back runs as Python): an array's shape and dtype,
    a number itself."""
    kept = runtime.kept_shape(np.ones((2, 3), np.float32))
    made = runtime.shaped(kept)
    assert made.shape == (2, 3) and made.dtype == np.float32 and not made.flags.writeable
    assert runtime.shaped(runtime.kept_shape(2.5)) == 2.5
    zero_d = np.array(1.5)
    assert runtime.shaped(runtime.kept_shape(zero_d)) is zero_d


def stand_in_bound_in_a_branch(a):
    for r in a:
        if np.sin(r) > 0.5:
            a = np.sum(r * np.ones((2, 3)), axis=0) ** 2   # (r * ones: taped for its shape)
    return 1.5 * a[1]


def test_a_stand_in_bound_in_one_branch_is_kept_and_made_again():
    # the temporary is None where the branch was not taken (an Optional): its kept shape
    # too, and making the view again from it failed to compile (fuzzer seed 3001, program 22)
    x = np.array([0.9, 1.2, 0.3])
    g = grad(stand_in_bound_in_a_branch)
    jg = jit(g)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        got = jg(x)
    assert "shaped(" in strop.source(jg)
    np.testing.assert_allclose(got, g(x), rtol=1e-12)
    np.testing.assert_allclose(got, numeric_vjp(stand_in_bound_in_a_branch, [x], 0, 1.0),
                               rtol=1e-6)


def sum_and_first(x):
    return np.sum(x * x), x[0] * 2, x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_results_come_back_in_the_type_the_uncompiled_code_gives(dtype):
    # a float32 number was a Python float (Numba's boxing); a float64 one is a Python float,
    # equal to NumPy's np.float64 (its subclass).  Integers follow Numba's rules (int32 * 2 is
    # an int64 there): not checked here.
    x = np.arange(1, 4).astype(dtype)
    want = jit(sum_and_first, backend="python")(x)
    # compiled now, then linked from the machine code saved by the first (codegen/native.py)
    for got in jit(sum_and_first)(x), jit(sum_and_first)(x):
        for g, w in zip(got[:2], want[:2]):
            assert np.result_type(g) == w.dtype and g == w
            assert type(g) is type(w) or dtype == np.float64
        np.testing.assert_array_equal(got[2], want[2])


# --- elementwise chains fused for Numba (codegen/fuse.py) --------------------------------------

def fused(src):
    import textwrap
    import gast
    from strop.transformer.unparse import unparse
    from strop.codegen.fuse import fuse
    return unparse(fuse(gast.parse(textwrap.dedent(src)).body[0], {})).split("\n")[1:]


def test_a_chain_of_temporaries_becomes_one_expression():
    assert fused("""
        def f(h, bh):
            _t1 = h * h
            _t2 = 1.0 - _t1
            _bt2 = bh * _t2
            return _bt2
        """) == ["    _bt2 = bh * (1.0 - h * h)", "    return _bt2"]


@pytest.mark.parametrize("src", [
    # a name the temporary reads is rebound (an update in place) before its use
    """
    def f(y):
        _t1 = y * 2
        y = at_set_inplace(y, 0, 5.0)
        _t2 = _t1 + y
        return _t2
    """,
    # control flow between
    """
    def f(a):
        _t1 = a + 1
        for i in range(3):
            a = a * 2
        _t2 = _t1 * a
        return _t2
    """,
    # read twice; a user's name; read by a call, not an operator; a product of matrices
    """
    def f(a):
        _t1 = a + 1
        _t2 = _t1 * _t1
        b = a * 2
        _t3 = b - 1
        _t4 = -a
        _t5 = np.sum(_t4)
        _t6 = a @ a
        _t7 = _t6 + 1
        return (_t2, _t3, _t5, _t7)
    """])
def test_temporaries_stay_where_moving_them_could_change_what_they_read(src):
    import textwrap
    assert fused(src) == textwrap.dedent(src).strip().split("\n")[1:]


def damped(h, bh, c):
    return bh * (1.0 - h * h) * c + np.sin(h) / (1.0 + c)


def test_jit_of_a_fused_chain_equals_the_uncompiled_function():
    rng = np.random.default_rng(3)
    h, bh = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    jf = jit(damped)
    np.testing.assert_allclose(jf(h, bh, 0.5), damped(h, bh, 0.5), rtol=1e-14)
    assert jf.last_backend == "cpu"
    assert "bh * (" in strop.source(jf)      # one statement, one loop: no temporary arrays


# --- dicts returned by compiled code ---------------------------------------------------------

def dict_of_arrays(x):
    return {"a": x, "b": x * 2.0}


def dict_of_mixed(x):
    return {"s": np.sum(x), "x2": x * 2.0, "c": 1.5}


def test_a_returned_dict_is_a_dict_as_uncompiled():
    x = np.arange(3.0)
    got = jit(dict_of_arrays)(x)
    assert type(got) is dict and list(got) == ["a", "b"]     # not Numba's typed Dict
    for k, v in dict_of_arrays(x).items():
        np.testing.assert_array_equal(got[k], v)


def test_a_dict_of_mixed_values_is_compiled_and_returned_as_leaves():
    # Numba cannot return such a dict ("cannot convert", a fallback before): the code returns
    # its leaves and the dict is made again after the call (transformer/flat_results.py)
    x = np.arange(3.0)
    jf = jit(dict_of_mixed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        got = jf(x)
    assert jf.last_backend == "cpu" and type(got) is dict and list(got) == ["s", "x2", "c"]
    assert got["s"] == 3.0 and got["c"] == 1.5
    np.testing.assert_array_equal(got["x2"], x * 2.0)


def where_of_numbers(a, b):
    return np.where(a[1] > 0.25, b * 2.0, b)      # a 0-d array


def test_grad_of_a_0d_array_output_compiles():
    # found by the fuzzer's jit_grad oracle: compiled code refused the 0-d array as the
    # scalar output grad needs, where the python backend takes it
    a = np.array([0.1, 0.4, 0.2])
    g = grad(where_of_numbers, argnums=(0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        got = jit(g)(a, 0.5)
    want = g(a, 0.5)
    np.testing.assert_array_equal(got[0], want[0])
    assert float(got[1]) == float(want[1]) == 2.0


@pytest.mark.parametrize("f", [
    lambda x: np.maximum(x, 0.0), lambda x: np.minimum(1, x) * 2.0,
    lambda x: np.where(x > 0.5, x, 0.5), lambda x: np.where(x > 0.5, 2, x),
    lambda x: np.clip(x, 0, 1), lambda x: np.power(x, 2.0), lambda x: np.arctan2(x, 1.0),
    lambda x: x ** 2, lambda x: x ** 3 - x])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_python_numbers_beside_arrays_in_numpy_calls_are_weak(f, dtype):
    # NumPy types the number by the array beside it (float32 stays float32, int32 with an
    # int stays int32); Numba would make it 64 bits
    x = (np.arange(4) * 0.4).astype(dtype)
    got, want = jit(f)(x), f(x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def made_inside(x):
    a = np.ones(3) * x + np.zeros(3) + np.linspace(0.0, 1.0, 3) + np.full(3, 2.0)
    b = np.array([1.5, 2.5, 3.5]) * x + np.eye(3)[0] + np.arange(3.0)
    return a, b, np.arange(3), np.zeros(2, np.float64)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_arrays_made_inside_follow_the_64_bit_policy(backend):
    # DESIGN: with x64 off, arrays made inside a function are 32-bit as at the boundary;
    # a 64-bit dtype written in the call warns and is 32-bit (as JAX truncates it)
    with config.override(enable_x64=False), pytest.warns(
            strop.errors.StropWarning, match="requested dtype float64 in zeros"):
        a, b, i, z = jit(made_inside, backend=backend)(np.float32(0.5))
    assert (a.dtype, b.dtype, i.dtype, z.dtype) == (np.float32, np.float32, np.int32, np.float32)
    np.testing.assert_allclose(a, made_inside(0.5)[0], rtol=1e-6)
    with config.override(enable_x64=True):
        a, b, i, _ = jit(made_inside, backend=backend)(0.5)
    assert (a.dtype, b.dtype, i.dtype) == (np.float64, np.float64, np.int64)


def asks_for_64_bits(x, key):
    y = np.zeros(3, dtype=np.float64) + x.astype(np.float64) + np.float64(2.0)
    n = np.arange(3, dtype="int64") + np.ones(3, int)
    return y, n, strop.random.uniform(key, (2,), np.float64), np.full(2, 1.0, dtype=float)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_an_explicit_64_bit_dtype_warns_and_is_32_bit(backend):
    """DESIGN's 64-bit row, as JAX: with x64 off a 64-bit dtype asked for by name warns at the
    user's line and gives 32 bits; Python's float/int name the default types, silently."""
    f = jit(asks_for_64_bits, backend=backend)
    with config.override(enable_x64=False), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = f(np.ones(3, np.float32), strop.random.PRNGKey(0))
    assert [a.dtype for a in out] == [np.float32, np.int32, np.float32, np.float32]
    messages = [str(w.message) for w in seen if issubclass(w.category, strop.errors.StropWarning)]
    for what in ("float64 in zeros", "float64 in astype", "float64 in float64()",
                 "int64 in arange", "float64 in uniform"):
        assert any(what in m and "line " in m for m in messages), (what, messages)
    assert len(messages) == 5
    with config.override(enable_x64=True), warnings.catch_warnings():
        warnings.simplefilter("error")
        out = jit(asks_for_64_bits, backend=backend)(np.ones(3), strop.random.PRNGKey(0))
    assert [a.dtype for a in out] == [np.float64, np.int64, np.float64, np.float64]


def stacked(x):
    return np.sum(np.array([x, 2.0 * x]) ** 2)


def test_the_narrowing_cast_has_a_derivative():
    with config.override(enable_x64=False):
        g = grad(stacked)(np.float32(0.5))
        assert np.result_type(g) == np.float32 and np.isclose(g, 5.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", JitFallbackWarning)
            assert np.isclose(jit(grad(stacked))(np.float32(0.5)), 5.0)


def array_of_numbers(x):
    return np.sum(np.array((x[0], x[1] * 3.0)) ** 2) + np.sum(np.array([x[1], x[0]]) * x)


def array_of_arrays(x):
    return np.sum(np.array([x, x * 2]) ** 2) + np.sum(np.array((x, x)) * np.array(x))


@pytest.mark.parametrize("f", [array_of_numbers, array_of_arrays])
def test_np_array_and_its_derivative_compile(f):
    x = np.array([0.5, 1.5])
    g = grad(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        got, value = jit(g)(x), jit(f)(x)
    np.testing.assert_allclose(got, g(x), rtol=1e-6)
    np.testing.assert_allclose(value, f(x), rtol=1e-6)


def returns_in_a_loop(a):
    if a > 0.5:
        a = np.sin(a) * a
    else:
        for _ in range(2):
            return np.exp(np.sin(a))
    return np.arctan(a * a)


@pytest.mark.parametrize("a", [0.3, 0.7])
def test_grad_of_an_output_none_on_another_path_compiles(a):
    # (fuzz, jit_grad oracle) the output's variable is None on the path not taken: an
    # optional number, which grad's seed takes as the number it holds
    g = grad(returns_in_a_loop)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        got = jit(g)(a)
    np.testing.assert_allclose(got, g(a), rtol=1e-12)


def test_a_moved_cotangent_read_after_its_loop_is_split_in_place():
    # lax.scan's adjoint: the stacked cotangent moves to another name (bys = bhs), is split
    # in place going back, and is read once more after the loop (its first item)
    names = ("setitem_vjp", "item_vjp")
    src = """
        def f(g, x, n):
            bhs = g * 2.0
            bys = bhs
            for t in range(n, 0, -1):
                _g1 = bys
                bys = setitem_vjp(_g1, t)
                bh = item_vjp(_g1, t, x)
            first = item_vjp(bys, 0, x)
            return first
        """
    assert "bys, bh = setitem_split_inplace(bys, t, x)" in owned(src, names)
    # the moved array still seen by another name before the loop: not in place
    seen = src.replace("            bys = bhs\n", "            bys = bhs\n            v = bys[1:]\n")
    text = owned(seen.replace("return first", "return first, v"), names)
    assert "setitem_split(bys, t, x)" in text and "inplace" not in text


# --- lists and tuples given where NumPy reads an array ----------------------------------------

def sum_of(x):
    return np.sum(x)


def mean_and_first(x):
    return np.mean(x) + x[0]     # np.mean reads an array, [0] the list


@pytest.mark.parametrize("fn, arg", [(sum_of, list(range(10))), (sum_of, [1.5, 2.0, 3.0]),
                                     (sum_of, (1.0, 2.0)), (mean_and_first, [1.0, 4.0])])
@pytest.mark.parametrize("x64", [False, True])
def test_a_list_numpy_reads_as_an_array_compiles_with_the_same_result(fn, arg, x64):
    with config.override(enable_x64=x64):
        want = jit(fn, backend="python")(arg)
        jf = jit(fn)
        with warnings.catch_warnings():
            warnings.simplefilter("error", JitFallbackWarning)
            got = jf(arg)
    assert jf.last_backend == "cpu"
    assert got == want and np.asarray(got).dtype == np.asarray(want).dtype
    assert got == fn(arg)


# --- object-mode islands: a statement Numba refuses runs as Python, the rest compiled ----------

def prints_types(x):
    total = 0.0
    for i in range(2):
        print(type(x), i)        # type() of an array: no Numba implementation
        total = total + np.sum(np.sin(x) * i)
    return total


@pytest.mark.parametrize("transform", [lambda f: f, grad])
def test_a_statement_numba_refuses_runs_in_an_island_and_the_rest_compiles(transform, capsys):
    x = np.arange(3.0)
    want = transform(prints_types)(x)
    printed = capsys.readouterr().out
    assert printed == "<class 'numpy.ndarray'> 0\n<class 'numpy.ndarray'> 1\n"
    jf = jit(transform(prints_types))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        got = jf(x)
        again = jf(x)
    assert jf.last_backend == "cpu"      # not the whole function as Python
    assert [w.category for w in record] == [JitFallbackWarning]     # once, for the line
    message = record[0].message
    assert "object-mode island" in str(message)
    assert message.location.line().strip() == "print(type(x), i)        # type() of an " \
                                                 "array: no Numba implementation"
    assert capsys.readouterr().out == printed * 2
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(again, want, rtol=1e-12)
    assert "with objmode():" in strop.source(jf)


def type_reaches_the_result(x):
    return np.sum(x) * len(repr(type(x)))     # a Python object the compiled code would read


def test_a_refused_value_the_compiled_code_reads_falls_back_whole():
    jf = jit(type_reaches_the_result)
    with pytest.warns(JitFallbackWarning, match="runs on the python backend"):
        got = jf(np.ones(2))
    assert jf.last_backend == "python" and got == type_reaches_the_result(np.ones(2))


def sum_of_sines(s, xs):
    total = 0.0
    for x in xs:
        total = total + np.sin(s * x) * x
    return total


def test_grad_of_a_0d_array_parameter_summed_in_a_loop_compiles():
    """A 0-d array's cotangent starts as zeros_like (a 0-d array) and each trip's sum is a
    number: Numba could not unify the two, and jit(grad) fell back to Python."""
    s, xs = np.array(0.7), np.array([1.0, -2.0, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        got = jit(grad(sum_of_sines))(s, xs)
    want = np.sum(np.cos(0.7 * xs) * xs * xs)
    np.testing.assert_allclose(got, want, rtol=1e-12)
