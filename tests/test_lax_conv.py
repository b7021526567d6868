"""strop.lax's convolutions: against JAX's outputs and gradients (tests/data/conv_reference.*,
made by tests/data/make_conv_reference.py), against a naive loop written here, against central
differences in float64 (first and second order), vmap against a Python loop over the batch,
jit (compiled, no fallback) against the python backend, and the errors of bad arguments."""
import importlib.util
import json
import os
import sys
import warnings

import numpy as np
import pytest

import strop
from helpers import check_grad
from strop import grad, jit, jvp, lax, vmap
from strop.errors import JitFallbackWarning, LaxTypeError, LaxValueError

DATA = os.path.join(os.path.dirname(__file__), "data")
REFERENCE = np.load(os.path.join(DATA, "conv_reference.npz"))
with open(os.path.join(DATA, "conv_reference.json")) as _f:
    META = json.load(_f)["cases"]
NAMES = sorted(META)


def _text(v):
    return repr(_tupled(v))


def _tupled(v):
    return tuple(_tupled(x) for x in v) if isinstance(v, list) else v


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """A module with one function per reference case, its static arguments written in the
    call (as JAX needs them static, strop reads them when transforming)."""
    lines = ["from strop import lax\n"]
    for name in NAMES:
        c = META[name]
        args = ", ".join(f"{k}={_text(v)}" for k, v in c["kwargs"].items())
        lines.append(f"def {name}(x, w):\n    return lax.{c['fn']}(x, w, {args})\n")
    path = tmp_path_factory.mktemp("conv") / "conv_cases.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("conv_cases", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["conv_cases"] = module
    spec.loader.exec_module(module)
    return module


def ref(name, what):
    return REFERENCE[f"{name}/{what}"]


def assert_close(got, want, what):
    got = np.asarray(got)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale, err_msg=what)


def compiled(f):
    """jit(f), failing on a JitFallbackWarning: the code compiles whole."""
    fn = jit(f)

    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("error", JitFallbackWarning)
            return fn(*args)
    return run


# --- against JAX ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_plain_call_matches_jax(name):
    c = META[name]
    kwargs = {k: _tupled(v) for k, v in c["kwargs"].items()}
    out = getattr(lax, c["fn"])(ref(name, "lhs"), ref(name, "rhs"), **kwargs)
    assert out.dtype == np.float32
    assert_close(out, ref(name, "out"), name)


@pytest.mark.parametrize("name", NAMES)
def test_grad_matches_jax(cases, name):
    """Both operands' gradients of <ct, f(x, w)> (the python backend), and the value through
    the transformed code."""
    f = getattr(cases, name)

    def loss(x, w, ct):
        return np.sum(ct * f(x, w))
    x, w, ct = ref(name, "lhs"), ref(name, "rhs"), ref(name, "ct")
    gx, gw = grad(loss, argnums=(0, 1))(x, w, ct)
    assert gx.dtype == gw.dtype == np.float32
    assert_close(gx, ref(name, "glhs"), name + " d/dlhs")
    assert_close(gw, ref(name, "grhs"), name + " d/drhs")
    assert_close(jit(f, backend="python")(x, w), ref(name, "out"), name)


# --- against a naive loop --------------------------------------------------------------------

def naive(x, w, strides, pads, ld, rd, fg):
    """conv_general_dilated of NCHW x and OIHW w, written out."""
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    xd = np.zeros((n, c, (h - 1) * ld[0] + 1, (wd - 1) * ld[1] + 1))
    xd[:, :, ::ld[0], ::ld[1]] = x
    big = np.zeros((n, c, xd.shape[2] + max(pads[0][0], 0) + max(pads[0][1], 0),
                    xd.shape[3] + max(pads[1][0], 0) + max(pads[1][1], 0)))
    big[:, :, max(pads[0][0], 0):max(pads[0][0], 0) + xd.shape[2],
        max(pads[1][0], 0):max(pads[1][0], 0) + xd.shape[3]] = xd
    big = big[:, :, max(-pads[0][0], 0):big.shape[2] - max(-pads[0][1], 0),
              max(-pads[1][0], 0):big.shape[3] - max(-pads[1][1], 0)]
    oh = (big.shape[2] - (kh - 1) * rd[0] - 1) // strides[0] + 1
    ow = (big.shape[3] - (kw - 1) * rd[1] - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // fg
    for b in range(n):
        for f in range(o):
            grp = f // og
            for p in range(oh):
                for q in range(ow):
                    acc = 0.0
                    for ch in range(i):
                        for u in range(kh):
                            for v in range(kw):
                                acc += big[b, grp * i + ch, p * strides[0] + u * rd[0],
                                           q * strides[1] + v * rd[1]] * w[f, ch, u, v]
                    out[b, f, p, q] = acc
    return out


@pytest.mark.parametrize("seed", range(6))
def test_matches_naive_loop(seed):
    rng = np.random.default_rng(seed)
    fg = [1, 2][seed % 2]
    x = rng.standard_normal((2, 2 * fg, 6, 5)).astype(np.float32)
    w = rng.standard_normal((2 * fg, 2, 3, 2)).astype(np.float32)
    strides = tuple(int(s) for s in rng.integers(1, 3, 2))
    pads = tuple((int(a), int(b)) for a, b in rng.integers(-1, 3, (2, 2)))
    ld, rd = (tuple(int(s) for s in rng.integers(1, 3, 2)) for _ in range(2))
    got = lax.conv_general_dilated(x, w, strides, pads, ld, rd, feature_group_count=fg)
    np.testing.assert_allclose(got, naive(x.astype(float), w.astype(float), strides, pads,
                                          ld, rd, fg), rtol=1e-4, atol=1e-4)


# --- derivatives in float64: first and second order, jvp --------------------------------------

def layer(x, w):
    return lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (2, 1)), (1, 2), (2, 1),
                                    ("NHWC", "HWIO", "NHWC"), feature_group_count=2)


def layer_loss(x, w):
    return np.sum(np.sin(layer(x, w)))


def _layer_args(dtype=np.float64):
    rng = np.random.default_rng(1)
    return (rng.standard_normal((2, 5, 4, 4)).astype(dtype),
            rng.standard_normal((2, 3, 2, 4)).astype(dtype))


def test_grad_matches_central_differences():
    with strop.config.override(enable_x64=True):
            check_grad(layer_loss, *_layer_args(), argnums=(0, 1), rtol=1e-5, atol=1e-6)


def test_second_order_matches_central_differences():
    """The gradient of a function of the gradient: the transposes' own rules."""
    def outer(x, w):
        gx, gw = grad(layer_loss, argnums=(0, 1))(x, w)
        return np.sum(gx ** 2) + np.sum(np.cos(gw))
    with strop.config.override(enable_x64=True):    # the oracle runs strop.grad too
        check_grad(outer, *_layer_args(), argnums=(0, 1), rtol=1e-4, atol=1e-6)


def test_jvp_is_bilinear():
    x, w = _layer_args(np.float32)
    rng = np.random.default_rng(2)
    dx, dw = rng.standard_normal(x.shape).astype(np.float32), \
        rng.standard_normal(w.shape).astype(np.float32)
    out, tangent = jvp(layer, (x, w), (dx, dw))
    np.testing.assert_allclose(out, layer(x, w), rtol=1e-6)
    np.testing.assert_allclose(tangent, layer(dx, w) + layer(x, dw), rtol=1e-4, atol=1e-4)


# --- vmap against a loop ---------------------------------------------------------------------

def _grouped(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=(
        "NCHW", "OIHW", "NCHW"), batch_group_count=2)


@pytest.mark.parametrize("f, in_axes", [
    (layer, (0, None)), (layer, (None, 0)), (layer, (0, 0)), (_grouped, (0, None)),
    (_grouped, (None, 0))])
def test_vmap_matches_loop(f, in_axes):
    rng = np.random.default_rng(3)
    x, w = _layer_args(np.float32) if f is layer else (
        rng.standard_normal((4, 2, 5, 4)).astype(np.float32),
        rng.standard_normal((4, 2, 3, 3)).astype(np.float32))
    xs = np.stack([x, 2 * x, -x]) if in_axes[0] == 0 else x
    ws = np.stack([w, w[::-1], 3 * w]) if in_axes[1] == 0 else w
    got = vmap(f, in_axes=in_axes)(xs, ws)
    want = np.stack([f(xs[k] if in_axes[0] == 0 else x, ws[k] if in_axes[1] == 0 else w)
                     for k in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_per_example_gradients():
    x, w = _layer_args(np.float32)
    per = vmap(grad(lambda xi, w: layer_loss(xi[None], w), argnums=1), in_axes=(0, None))(x, w)
    want = np.stack([grad(layer_loss, argnums=1)(x[k:k + 1], w) for k in range(len(x))])
    np.testing.assert_allclose(per, want, rtol=1e-4, atol=1e-4)


# --- jit: compiled whole, the same values as the python backend -------------------------------

# few: each compiles a gradient (2-D NHWC, and 3-D with layouts, dilations and batch groups)
JIT_CASES = ["tutorial_nhwc_same", "random_3"]


@pytest.mark.parametrize("name", JIT_CASES)
def test_jit_compiles_value_and_grad(cases, name):
    f = getattr(cases, name)

    def loss(x, w, ct):
        return np.sum(ct * f(x, w))
    x, w, ct = ref(name, "lhs"), ref(name, "rhs"), ref(name, "ct")
    assert_close(compiled(f)(x, w), ref(name, "out"), name)
    gx, gw = compiled(grad(loss, argnums=(0, 1)))(x, w, ct)
    assert_close(gx, ref(name, "glhs"), name + " d/dlhs")
    assert_close(gw, ref(name, "grhs"), name + " d/drhs")


def test_jit_compiles_vmap():
    x, w = _layer_args(np.float32)
    xs = np.stack([x, -x])
    np.testing.assert_allclose(compiled(vmap(layer, in_axes=(0, None)))(xs, w),
                               vmap(layer, in_axes=(0, None))(xs, w), rtol=1e-5, atol=1e-5)
    ws = np.stack([w, 2 * w])
    np.testing.assert_allclose(compiled(vmap(layer, in_axes=(None, 0)))(x, ws),
                               vmap(layer, in_axes=(None, 0))(x, ws), rtol=1e-5, atol=1e-5)


# --- bad arguments: JAX's exception types and words, at the user's line ----------------------

X, W = np.zeros((1, 3, 6, 6), np.float32), np.zeros((4, 3, 3, 3), np.float32)
BAD = [
    (dict(window_strides=(1,), padding="VALID"), LaxValueError, "same number of dimensions"),
    (dict(window_strides=(0, 1), padding="VALID"), LaxValueError, "must be positive"),
    (dict(window_strides=(1, 1), padding="VALID", rhs_dilation=(0, 1)), LaxTypeError,
     "All dilations must be positive"),
    (dict(window_strides=(1, 1), padding="VALID", rhs_dilation=(1, 1, 1)), LaxValueError,
     "one entry per spatial dimension"),
    (dict(window_strides=(1, 1), padding=((0, 0),)), LaxTypeError,
     "Wrong number of explicit pads"),
    (dict(window_strides=(1, 1), padding="FOO"), LaxValueError, "Unrecognized padding type"),
    (dict(window_strides=(1, 1), padding=(1, 1)), LaxValueError, "(low, high) pairs"),
    (dict(window_strides=(1, 1), padding="SAME", lhs_dilation=(2, 1)), LaxValueError,
     "String padding is not implemented for transposed convolution"),
    (dict(window_strides=(1, 1), padding="VALID",
          dimension_numbers=("NCHW", "OIHW", "NCHX")), LaxTypeError,
     "same set of spatial characters"),
    (dict(window_strides=(1, 1), padding="VALID",
          dimension_numbers=("NNHW", "OIHW", "NCHW")), LaxTypeError,
     "must contain the characters 'N' and 'C' exactly once"),
    (dict(window_strides=(1, 1), padding="VALID",
          dimension_numbers=("NCHW", "OIH", "NCHW")), LaxTypeError, "must have len equal"),
    (dict(window_strides=(1, 1), padding="VALID", feature_group_count=0), LaxValueError,
     "must be a positive integer"),
    (dict(window_strides=(1, 1), padding="VALID", feature_group_count=2), LaxValueError,
     "feature_group_count must divide lhs feature dimension size"),
]


@pytest.mark.parametrize("kwargs, kind, words", BAD)
def test_bad_arguments_on_values(kwargs, kind, words):
    with pytest.raises(kind, match=words.replace("(", r"\(").replace(")", r"\)")) as info:
        lax.conv_general_dilated(X, W, **kwargs)
    assert isinstance(info.value, (TypeError, ValueError))
    assert os.path.basename(__file__) in str(info.value)   # the user's line


def test_bad_channels_and_dtypes():
    with pytest.raises(LaxValueError, match="3 // 1 != 2"):
        lax.conv_general_dilated(X, W[:, :2], (1, 1), "VALID")
    with pytest.raises(LaxTypeError, match="same dtypes"):
        lax.conv(X, W.astype(np.float16), (1, 1), "VALID")
    with pytest.raises(LaxTypeError, match="ndim to be equal"):
        lax.conv(X, W[0], (1, 1), "VALID")


def bad_layout(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                    dimension_numbers=("NCHW", "OIHW", "NCHQ"))


def bad_stride(x, w):
    return lax.conv_general_dilated(x, w, (1, 0), "VALID")


def bad_same(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 2))


@pytest.mark.parametrize("f, kind, words", [
    (bad_layout, LaxTypeError, "same set of spatial characters"),
    (bad_stride, LaxValueError, "must be positive"),
    (bad_same, LaxValueError, "String padding is not implemented")])
def test_bad_arguments_when_transforming(f, kind, words):
    for transform in (lambda f: jit(f, backend="python"), grad):
        with pytest.raises(kind, match=words) as info:
            transform(lambda x, w: np.sum(f(x, w)))(X, W)
        assert "test_lax_conv.py" in str(info.value)


def test_bad_channels_when_running():
    with pytest.raises(ValueError, match="feature dimension size"):
        jit(lambda x, w: lax.conv(x, w, (1, 1), "VALID"), backend="python")(X, W[:, :2])


def test_dimension_numbers():
    dn = lax.conv_dimension_numbers(X.shape, W.shape, ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    x = np.random.default_rng(0).standard_normal((1, 6, 6, 3)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((3, 3, 3, 4)).astype(np.float32)
    want = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=(
        "NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                        dimension_numbers=dn), want)

    def f(x, w):
        d = lax.conv_dimension_numbers(x.shape, w.shape, ("NHWC", "HWIO", "NHWC"))
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=d)
    np.testing.assert_allclose(jit(f, backend="python")(x, w), want)

    def g(x, w):    # a global ConvDimensionNumbers
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)
    np.testing.assert_allclose(jit(g, backend="python")(x, w), want)


DN = lax.conv_dimension_numbers((1, 6, 6, 3), (3, 3, 3, 4), ("NHWC", "HWIO", "NHWC"))


def test_preferred_element_type_and_consistent_padding():
    x = np.random.default_rng(4).standard_normal((1, 5, 5, 2)).astype(np.float32)
    w = np.random.default_rng(5).standard_normal((3, 2, 2, 3)).astype(np.float32)
    nhwc = ("NHWC", "HWIO", "NHWC")

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=nhwc,
                                        preferred_element_type=np.float16)
    assert f(x, w).dtype == jit(f, backend="python")(x, w).dtype == np.float16
    # the forward conv's padding (1, 1), (0, 2) of a window 3 (dilated: 3) is (1, 1), (2, 0)
    got = lax.conv_transpose(x, w, (2, 2), ((1, 1), (0, 2)), rhs_dilation=(1, 2),
                             dimension_numbers=nhwc, use_consistent_padding=True)
    want = lax.conv_transpose(x, w, (2, 2), ((1, 1), (2, 0)), rhs_dilation=(1, 2),
                              dimension_numbers=nhwc)
    np.testing.assert_allclose(got, want)
