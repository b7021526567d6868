"""Reference values for tests/test_lax_conv.py, computed once with JAX and committed:
conv_reference.npz (inputs, outputs, and the gradients of <ct, out> in both operands) and
conv_reference.json (each case's function and arguments).

    python tests/data/make_conv_reference.py      (with JAX installed; run from the repository)

Made with JAX 0.10.2 on the CPU, in float64 (jax_enable_x64) from float32-exact inputs, so
that the references are more accurate than the float32 results compared with them.  The cases:
the examples of JAX's "Generalized convolutions" tutorial (smaller images), and 60 random
configurations (seed 0): 1 to 3 spatial dimensions, layouts in any order, strides, each
padding kind, both dilations, feature or batch groups, conv_transpose.
"""
import json
import os

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
from jax import lax  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SPATIAL = "HWD"


def values(rng, shape):
    """float32-exact values (multiples of 1/64 in [-2, 2])."""
    return (rng.integers(-128, 129, shape) / 64.0).astype(np.float32)


def tutorial(rng):
    """The tutorial's examples, smaller."""
    img = values(rng, (1, 14, 13, 3))
    kernel = values(rng, (3, 3, 3, 3))          # HWIO
    nchw, oihw = np.transpose(img, (0, 3, 1, 2)), np.transpose(kernel, (3, 2, 0, 1))
    nhwc = ("NHWC", "HWIO", "NHWC")
    yield "tutorial_conv_same", "conv", nchw, oihw, dict(window_strides=(1, 1), padding="SAME")
    yield ("tutorial_general_padding", "conv_with_general_padding", nchw, oihw,
           dict(window_strides=(1, 1), padding=((2, 2), (2, 2)), lhs_dilation=(1, 1),
                rhs_dilation=(1, 1)))
    yield ("tutorial_nhwc_same", "conv_general_dilated", img, kernel,
           dict(window_strides=(1, 1), padding="SAME", dimension_numbers=nhwc))
    yield ("tutorial_nhwc_valid", "conv_general_dilated", img, kernel,
           dict(window_strides=(1, 1), padding="VALID", dimension_numbers=nhwc))
    yield ("tutorial_nhwc_strided", "conv_general_dilated", img, kernel,
           dict(window_strides=(2, 2), padding="SAME", dimension_numbers=nhwc))
    yield ("tutorial_rhs_dilation", "conv_general_dilated", img, kernel,
           dict(window_strides=(1, 1), padding="VALID", rhs_dilation=(3, 3),
                dimension_numbers=nhwc))
    yield ("tutorial_lhs_dilation", "conv_general_dilated", img, kernel,
           dict(window_strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(2, 2),
                dimension_numbers=nhwc))
    yield ("tutorial_conv_transpose", "conv_transpose", img, kernel,
           dict(strides=(2, 2), padding="SAME", dimension_numbers=nhwc))
    yield ("tutorial_1d", "conv_general_dilated", values(rng, (1, 40, 1)),
           np.array([1, 0, -1], np.float32).reshape(3, 1, 1),
           dict(window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")))
    yield ("tutorial_3d", "conv_general_dilated", values(rng, (1, 8, 7, 6, 1)),
           values(rng, (3, 3, 3, 1, 1)),
           dict(window_strides=(1, 1, 1), padding="SAME",
                dimension_numbers=("NHWDC", "HWDIO", "NHWDC")))
    yield ("depthwise", "conv_general_dilated", img, values(rng, (3, 3, 1, 6)),
           dict(window_strides=(1, 1), padding="SAME", feature_group_count=3,
                dimension_numbers=nhwc))
    yield ("batch_groups", "conv_general_dilated", values(rng, (4, 6, 5, 2)),
           values(rng, (2, 2, 2, 4)),
           dict(window_strides=(1, 1), padding="VALID", batch_group_count=2,
                dimension_numbers=nhwc))
    yield ("transpose_kernel_valid", "conv_transpose", img, values(rng, (3, 2, 4, 3)),
           dict(strides=(2, 3), padding="VALID", dimension_numbers=nhwc,
                transpose_kernel=True))
    yield ("transpose_explicit", "conv_transpose", img, values(rng, (2, 3, 3, 2)),
           dict(strides=(2, 1), padding=((1, 0), (2, 1)), rhs_dilation=(1, 2),
                dimension_numbers=nhwc))


def layout(rng, letters, pair):
    chars = list(pair + letters)
    rng.shuffle(chars)
    return "".join(chars)


def random_case(rng):
    nsp = int(rng.integers(1, 4))
    letters = "".join(rng.permutation(list(SPATIAL))[:nsp])
    specs = (layout(rng, letters, "NC"), layout(rng, letters, "OI"), layout(rng, letters, "NC"))
    fg = bg = 1
    kind = rng.integers(0, 4)
    if kind == 1:
        fg = int(rng.integers(2, 4))
    elif kind == 2:
        bg = 2
    size = (3, 8) if nsp < 3 else (2, 5)
    in_sp = [int(rng.integers(*size)) for _ in range(nsp)]
    window = [int(rng.integers(1, 4)) for _ in range(nsp)]
    strides = [int(rng.integers(1, 4)) for _ in range(nsp)]
    ld = [int(rng.integers(1, 3)) for _ in range(nsp)]
    rd = [int(rng.integers(1, 3)) for _ in range(nsp)]
    if rng.random() < 0.4:
        ld = [1] * nsp
        padding = ["SAME", "SAME_LOWER", "VALID"][rng.integers(0, 3)]
    else:
        padding = [[int(rng.integers(-1, 3)), int(rng.integers(-1, 3))] for _ in range(nsp)]
    for i in range(nsp):   # at least one output element along each axis
        lo, hi = padding[i] if not isinstance(padding, str) else (0, 0)
        while (in_sp[i] - 1) * ld[i] + 1 + lo + hi < (window[i] - 1) * rd[i] + 1:
            in_sp[i] += 1
    n = int(rng.integers(1, 3)) * bg
    c = int(rng.integers(1, 4)) * fg
    o = int(rng.integers(1, 4)) * fg * bg
    canon_lhs = dict(zip("NC" + letters, [n, c] + in_sp))
    canon_rhs = dict(zip("OI" + letters, [o, c // fg] + window))
    lhs = values(rng, tuple(canon_lhs[ch] for ch in specs[0]))
    rhs = values(rng, tuple(canon_rhs[ch] for ch in specs[1]))
    # strides, padding and dilations go in the order of the rhs's spatial letters
    order = [letters.index(ch) for ch in specs[1] if ch not in "OI"]
    pick = (lambda v: [v[i] for i in order])
    kwargs = dict(window_strides=pick(strides),
                  padding=padding if isinstance(padding, str) else pick(padding),
                  lhs_dilation=pick(ld), rhs_dilation=pick(rd), dimension_numbers=specs,
                  feature_group_count=fg, batch_group_count=bg)
    return "conv_general_dilated", lhs, rhs, kwargs


def random_transpose(rng):
    nsp = int(rng.integers(1, 3))
    letters = SPATIAL[:nsp]
    specs = ("N" + letters + "C", letters + "IO", "N" + letters + "C")
    lhs = values(rng, (2,) + tuple(int(rng.integers(2, 6)) for _ in range(nsp)) + (2,))
    flip = bool(rng.integers(0, 2))     # transpose_kernel swaps I and O
    rhs = values(rng, tuple(int(rng.integers(1, 4)) for _ in range(nsp)) +
                 ((3, 2) if flip else (2, 3)))
    padding = ["SAME", "VALID"][rng.integers(0, 2)]
    return "conv_transpose", lhs, rhs, dict(
        strides=[int(rng.integers(1, 4)) for _ in range(nsp)], padding=padding,
        rhs_dilation=[int(rng.integers(1, 3)) for _ in range(nsp)], dimension_numbers=specs,
        transpose_kernel=flip)


def tupled(v):
    return tuple(tupled(x) for x in v) if isinstance(v, list) else v


def main():
    rng = np.random.default_rng(0)
    cases = list(tutorial(rng))
    for k in range(60):
        cases.append((f"random_{k}",) + (random_case(rng) if k < 50 else random_transpose(rng)))
    arrays, meta = {}, {}
    for name, fn, lhs, rhs, kwargs in cases:
        f = getattr(lax, fn)
        call = {k: tupled(v) for k, v in kwargs.items()}
        out, vjp = jax.vjp(lambda a, b: f(a, b, **call), lhs.astype(np.float64),
                           rhs.astype(np.float64))
        ct = values(rng, out.shape)
        glhs, grhs = vjp(ct.astype(np.float64))
        for k, v in dict(lhs=lhs, rhs=rhs, out=out, ct=ct, glhs=glhs, grhs=grhs).items():
            arrays[f"{name}/{k}"] = np.asarray(v)
        meta[name] = {"fn": fn, "kwargs": kwargs}
    np.savez_compressed(os.path.join(HERE, "conv_reference.npz"), **arrays)
    with open(os.path.join(HERE, "conv_reference.json"), "w") as f:
        json.dump({"made_with": f"jax {jax.__version__}, float64 on the CPU",
                   "cases": meta}, f, indent=1, sort_keys=True)
    print(len(meta), "cases")


if __name__ == "__main__":
    main()
