"""The API boundary: the 64-bit policy, config, generated modules as files, the CLI, errors."""
import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import strop
from strop import config, grad, value_and_grad
from strop.errors import TransformError


def cube_sum(x):
    return np.sum(x ** 3)


def test_default_policy_is_32_bit():
    g = grad(cube_sum)(np.array([1.0, 2.0]))            # float64 in, float32 out (as JAX)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [3.0, 12.0])
    assert isinstance(grad(lambda x: x * x)(3.0), np.float32)


def test_x64_policy():
    with config.override(enable_x64=True):
        g = grad(cube_sum)(np.array([1.0, 2.0]))
        assert g.dtype == np.float64
        assert isinstance(grad(lambda x: x * x)(3.0), np.float64)
    assert config.read("enable_x64") is False


def test_x64_environment_variable():
    out = subprocess.run(
        [sys.executable, "-c", "import strop; print(strop.config.read('enable_x64'))"],
        env={**os.environ, "STROP_ENABLE_X64": "1"}, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_config_errors_and_jax_names():
    with pytest.raises(KeyError, match="enable_x64"):
        config.update("no_such_option", 1)
    with pytest.raises(ValueError, match="default_backend"):
        config.update("default_backend", "tpu")
    with config.override(jax_enable_x64=True):
        assert config.enable_x64 is True


def test_generated_module_is_a_real_file_with_the_source():
    g = grad(cube_sum)
    text = strop.source(g)
    gen = g.generated()
    with open(gen.path) as f:
        assert f.read() == text
    assert inspect.getsource(gen.function) in text
    assert "# line" in text and "def cube_sum_grad(x):" in text


def test_corrupted_cache_file_is_rewritten():
    def halve_sum(x):
        return np.sum(x) * 0.5
    g = grad(halve_sum)
    path = g.generated().path
    with open(path, "w") as f:
        f.write("def halve_sum_grad(x):\n    return 42\n")     # truncated / foreign content
    for mod in [m for m in sys.modules if m.startswith("strop_generated.halve_sum")]:
        del sys.modules[mod]
    fresh = grad(halve_sum)
    np.testing.assert_allclose(fresh(np.ones(3)), [0.5, 0.5, 0.5])


def test_show_from_the_shell(tmp_path):
    script = tmp_path / "model.py"
    script.write_text("import numpy as np\n\ndef f(x):\n    return np.sin(x) * x\n")
    out = subprocess.run([sys.executable, "-m", "strop", "show", f"{script}:f", "--grad"],
                         capture_output=True, text=True, check=True)
    assert "def f_grad(x):" in out.stdout and "# line 4: return np.sin(x) * x" in out.stdout


def test_demo_runs():
    out = subprocess.run([sys.executable, "-m", "strop", "demo"], capture_output=True,
                         text=True, check=True)
    assert "grad(f)(2.) = 12.0" in out.stdout and "grad(f)(4.) = -4.0" in out.stdout


def test_rules_doc_is_current():
    out = subprocess.run([sys.executable, "-m", "strop", "rules"], capture_output=True,
                         text=True, check=True).stdout
    path = os.path.join(os.path.dirname(__file__), "..", "docs", "rules.md")
    with open(path) as f:
        assert f.read().strip() == out.strip(), "regenerate: python -m strop rules > docs/rules.md"


def test_source_unavailable_names_the_function():
    namespace = {}
    exec("def made_by_exec(x):\n    return x * 2\n", namespace)
    with pytest.raises(TransformError, match="source of made_by_exec is unavailable"):
        grad(namespace["made_by_exec"])(1.0)


def test_global_read_is_current_every_call():
    global SCALE
    SCALE = 2.0
    g = grad(scaled)
    assert g(1.0) == 2.0
    SCALE = 5.0
    assert g(1.0) == 5.0


SCALE = 2.0


def scaled(x):
    return x * SCALE


def test_print_runs_every_call(capsys):
    g = grad(prints)
    g(1.0)
    g(2.0)
    assert capsys.readouterr().out.count("value") == 2


def prints(x):
    print("value", x)
    return x * x


def test_value_and_grad_has_aux_and_argnums():
    def f(x, y):
        return np.sum(x * y), {"norm": np.sum(x * x)}
    (v, aux), (gx, gy) = value_and_grad(f, argnums=(0, 1), has_aux=True)(
        np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    assert v == 11.0 and aux["norm"] == 5.0
    np.testing.assert_allclose(gx, [3.0, 4.0])
    np.testing.assert_allclose(gy, [1.0, 2.0])


def test_bad_argnums():
    with pytest.raises(ValueError, match="argnums"):
        grad(cube_sum, argnums=3)
    with pytest.raises(TypeError, match="expects a function"):
        grad(3.0)


def test_show_highlights_for_a_terminal_and_a_notebook():
    from strop.codegen import highlight
    text = "def f(x):\n    # line 2: x < 3\n    return x * 2.0\n"
    colored = highlight.ansi(text)
    assert "\033[90m# line 2: x < 3\033[0m" in colored and "\033[1;34mreturn\033[0m" in colored
    assert highlight.ansi(text).replace("\033[", "").count("m") >= 4
    page = highlight.html(text)
    assert "x &lt; 3" in page and page.startswith("<pre>") and "<span" in page


def test_show_prints_plain_source_to_a_file(tmp_path):
    path = tmp_path / "out.txt"
    with open(path, "w") as f:
        strop.show(grad(cube_sum), file=f)
    assert path.read_text() == strop.source(grad(cube_sum))


def uses_at(x):
    return x.at[0].multiply(3.0) * 2.0


WEIGHTS = np.array([1.0, 2.0, 3.0])


def reads_a_global(x, y):
    return np.sum(np.sin(x) * WEIGHTS) * y, x * WEIGHTS ** 2


def test_vjp_of_a_function_reading_a_global_array():
    # the cotangent goes after the arguments, the global (passed last) after it
    from helpers import numeric_vjp
    x, y = np.array([0.1, 0.2, 0.3]), 2.0
    ct = (1.5, np.array([1.0, -1.0, 0.5]))
    with config.override(enable_x64=True):
        out, vjp_fn = strop.vjp(reads_a_global, x, y)
        bx, by = vjp_fn(ct)
        jac = strop.jacrev(reads_a_global, (0, 1))(x, y)
    inner = lambda x, y: ct[0] * reads_a_global(x, y)[0] + np.sum(   # noqa: E731
        ct[1] * reads_a_global(x, y)[1])
    np.testing.assert_allclose(bx, numeric_vjp(inner, [x, y], 0, 1.0), rtol=1e-6)
    np.testing.assert_allclose(by, numeric_vjp(inner, [x, y], 1, 1.0), rtol=1e-6)
    np.testing.assert_allclose(jac[1][0], np.diag(WEIGHTS ** 2))
    np.testing.assert_allclose(jac[0][1], np.sum(np.sin(x) * WEIGHTS))


def test_vjp_of_code_that_only_runs_transformed():
    x = np.array([1.0, 2.0])
    out, vjp_fn = strop.vjp(uses_at, x)
    np.testing.assert_allclose(out, [6.0, 4.0])
    (ct,) = vjp_fn(np.array([1.0, 1.0]))
    np.testing.assert_allclose(ct, [6.0, 2.0])


def test_lambdas_with_the_same_parameters_on_one_line_are_told_apart():
    # each lambda's own code positions say which one it is (once, both took the first)
    square, cube = (lambda x: x ** 2), (lambda x: x ** 3)
    assert strop.jit(square)(3.0) == 9.0 and strop.jit(cube)(3.0) == 27.0
    d_square, cube_ = (strop.jit(strop.grad(lambda x: x ** 2)), strop.jit(lambda x: x ** 3))
    assert d_square(3.0) == 6.0 and cube_(3.0) == 27.0


# --- JAX names real code uses (issue 34): lax.Precision, results' block_until_ready -------

def conv_loss(x, w):
    y = strop.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                       precision=strop.lax.Precision.HIGHEST)
    return np.sum(np.tanh(y))


def conv_loss_default(x, w):
    return np.sum(np.tanh(strop.lax.conv_general_dilated(x, w, (1, 1), "SAME")))


def test_lax_precision_is_accepted_and_ignored():
    P = strop.lax.Precision
    assert [p.value for p in (P.DEFAULT, P.HIGH, P.HIGHEST)] == [0, 1, 2]   # JAX's values
    assert P("highest") is P.HIGHEST and P("float32") is P.HIGHEST and P("bfloat16") is P.DEFAULT
    with pytest.raises(ValueError):
        P("fast")
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    with config.override(enable_x64=True):
        want = conv_loss_default(x, w)
        assert conv_loss(x, w) == want
        np.testing.assert_allclose(strop.jit(conv_loss)(x, w), want, rtol=1e-12)
        gx, gw = grad(conv_loss, (0, 1))(x, w)
        hx, hw = grad(conv_loss_default, (0, 1))(x, w)
        np.testing.assert_array_equal(gx, hx)
        np.testing.assert_array_equal(gw, hw)
        e = np.zeros_like(w)
        e[1, 0, 2, 1] = 1e-6      # central differences for one weight
        numeric = (conv_loss(x, w + e) - conv_loss(x, w - e)) / 2e-6
        np.testing.assert_allclose(gw[1, 0, 2, 1], numeric, rtol=1e-6)


def test_results_answer_block_until_ready_and_stay_numpy():
    import copy
    import pickle

    from strop.results import ready
    plain = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    a, s = ready(plain), ready(np.float32(2.5))
    assert a.block_until_ready() is a and s.block_until_ready() is s
    assert np.shares_memory(a, plain)                         # a view: nothing copied
    assert isinstance(a, np.ndarray) and isinstance(s, np.float32)
    assert isinstance(ready(np.float64(1.0)), float)          # as np.float64 is
    assert repr(a) == repr(plain) and str(a) == str(plain) and repr(s) == repr(np.float32(2.5))
    for r, want in ((a, plain), (s, np.float32(2.5))):
        for protocol in (2, pickle.HIGHEST_PROTOCOL):        # loads without strop's classes
            back = pickle.loads(pickle.dumps(r, protocol))
            assert type(back) is type(want)
            np.testing.assert_array_equal(back, want)
    assert type(copy.deepcopy(a).block_until_ready()) is type(a)
    # what NumPy computes from one is what it computes from an ndarray, types included
    for got, want in ((np.sin(a), np.sin(plain)), (a + 1, plain + 1), (np.sum(a), np.sum(plain)),
                      (a.sum(), plain.sum()), (a.max(axis=0), plain.max(axis=0)),
                      (a @ a.T, plain @ plain.T), (np.mean(a), np.mean(plain)),
                      (s * 2, np.float32(2.5) * 2), (a[0, 1], plain[0, 1])):
        assert type(got) is type(want)
        np.testing.assert_array_equal(got, want)
    tree = ready({"w": [plain, (np.int32(3), 2.0, None)], "b": np.float64(1.0)})
    assert list(tree) == ["w", "b"] and tree["w"][1][1:] == (2.0, None)
    assert all(hasattr(x, "block_until_ready") for x in (tree["w"][0], tree["w"][1][0],
                                                         tree["b"]))


def scaled_sum(x, y):
    return np.sum(np.sin(x) * y)


def test_transforms_take_results_as_they_take_numpy():
    from strop.results import ready
    x = np.array([0.5, -1.0, 2.0], np.float32)
    rx, ry = ready(x), ready(np.float32(3.0))
    for f in (strop.jit(scaled_sum), grad(scaled_sum), strop.vmap(scaled_sum, (0, None))):
        np.testing.assert_array_equal(f(rx, ry), f(x, np.float32(3.0)))
    assert ready(grad(scaled_sum)(x, 3.0)).block_until_ready().dtype == np.float32


def test_results_of_transforms_answer_block_until_ready():
    # (a number compiled code returns is a Python float, as the Sharp Bits notebook shows:
    # strop.block_until_ready(out) is the form for any result)
    x = np.array([0.5, -1.0, 2.0], np.float32)
    for out in (strop.jit(np.sin)(x), strop.jit(scaled_sum, backend="python")(x, 3.0),
                grad(scaled_sum)(x, 3.0), grad(cube_sum)(x),
                strop.vmap(scaled_sum, (0, None))(x, 3.0), value_and_grad(cube_sum)(x)[0]):
        assert out.block_until_ready() is out
