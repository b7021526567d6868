"""End to end through the derivative rule tables: ``strop.grad`` of small functions that call a
NumPy function (with literal axes, keepdims, shapes, as a user writes them) and reduce the
result, against central finite differences of the same function (float64).

The rule templates themselves are checked one by one in tests/transformer/rules/; here the
whole pipeline (normalize, bind the call to the rule's signature, instantiate, run) is."""
import numpy as np
import pytest

from helpers import check_grad, x64_fixture

x64 = pytest.fixture(autouse=True)(x64_fixture)
rng = np.random.default_rng(11)


def randn(*shape):
    return rng.standard_normal(shape)


def unit(*shape):          # inside (-1, 1), away from the ends: arcsin, arctanh, ...
    return rng.uniform(-0.8, 0.8, shape)


def pos(*shape):           # positive, away from 0: log, sqrt, ...
    return rng.uniform(0.5, 2.0, shape)


def distinct(*shape):      # distinct values, no ties (max, sort, ...)
    n = int(np.prod(shape))
    return (rng.permutation(n) / n + rng.uniform(0, 0.01, n)).reshape(shape)


def name_or_shape(v):
    return getattr(v, "__name__", None) or "x".join(map(str, v))


W34 = np.linspace(-1.0, 2.0, 12).reshape(3, 4)   # a global read by the functions: weights


# --- unary ufuncs: one generic template, the function a closure constant -----------------------

def weighted_unary(fn):
    def unary(x):
        return np.sum(fn(x) * W34)
    unary.__name__ = unary.__qualname__ = f"unary_{fn.__name__}"
    return unary


UNARY = [(np.exp, randn), (np.exp2, randn), (np.expm1, randn), (np.log, pos), (np.log2, pos),
         (np.log10, pos), (np.log1p, pos), (np.sqrt, pos), (np.cbrt, pos), (np.square, randn),
         (np.reciprocal, pos), (np.sin, randn), (np.cos, randn), (np.tan, unit),
         (np.arcsin, unit), (np.arccos, unit), (np.arctan, randn), (np.sinh, randn),
         (np.cosh, randn), (np.tanh, randn), (np.arcsinh, randn), (np.arccosh, lambda *s: 1 + pos(*s)),
         (np.arctanh, unit), (np.deg2rad, randn), (np.rad2deg, randn), (np.sinc, randn),
         (np.absolute, randn), (np.fabs, randn), (np.negative, randn), (np.positive, randn),
         (np.real, randn), (np.conjugate, randn)]


@pytest.mark.parametrize("fn,sample", UNARY, ids=[f.__name__ for f, _ in UNARY])
def test_unary_ufunc(fn, sample):
    check_grad(weighted_unary(fn), sample(3, 4))


# --- binary ufuncs, broadcasting both ways -------------------------------------------------------

def weighted_binary(fn):
    def binary(x, y):
        return np.sum(fn(x, y) * W34)
    binary.__name__ = binary.__qualname__ = f"binary_{fn.__name__}"
    return binary


b_logaddexp, b_logaddexp2, b_hypot, b_arctan2, b_maximum, b_minimum, b_fmax, b_power, \
    b_float_power, b_true_divide, b_fmod, b_copysign = map(weighted_binary, [
        np.logaddexp, np.logaddexp2, np.hypot, np.arctan2, np.maximum, np.minimum, np.fmax,
        np.power, np.float_power, np.true_divide, np.fmod, np.copysign])


def b_subtract_multiply(x, y):
    return np.sum(np.multiply(np.subtract(x, y), np.add(x, W34)))


def b_where(x, y):
    return np.sum(np.where(x > y, x * 2.0, y ** 2) * W34)


def b_clip(x, y):
    return np.sum(np.clip(x, -0.5, y) * W34)


BINARY = [b_logaddexp, b_logaddexp2, b_hypot, b_arctan2, b_maximum, b_minimum, b_fmax,
          b_true_divide, b_subtract_multiply, b_where, b_clip]
SHAPES = [((3, 4), (3, 4)), ((3, 1), (4,)), ((4,), (3, 1)), ((), (3, 4)), ((3, 4), ())]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("f", BINARY, ids=lambda f: f.__name__)
def test_binary_ufunc_broadcasting(f, shapes):
    x = randn(*shapes[0]) + 0.05      # away from ties with y
    y = pos(*shapes[1])
    check_grad(f, x if x.ndim else float(x), y if y.ndim else float(y), argnums=(0, 1))


@pytest.mark.parametrize("shapes", SHAPES[:3], ids=str)
@pytest.mark.parametrize("f", [b_power, b_float_power, b_fmod, b_copysign],
                         ids=lambda f: f.__name__)
def test_binary_positive_base(f, shapes):
    x, y = pos(*shapes[0]), pos(*shapes[1]) * np.array(0.9)
    argnums = (0,) if f in (b_copysign, b_fmod) else (0, 1)
    check_grad(f, x, y, argnums=argnums)


# --- reductions: axis, keepdims, ddof ------------------------------------------------------------

def r_sum_axis1_keep(x):
    return np.sum(np.sum(x, axis=1, keepdims=True) * x)


def r_sum_tuple_axis(x):
    return np.sum(np.sum(x, axis=(0, 2)) ** 2)


def r_mean_neg_axis(x):
    return np.sum(np.mean(x, axis=-1) ** 2)


def r_mean_keep(x):
    return np.sum((x - np.mean(x, axis=0, keepdims=True)) ** 2)


def r_prod(x):
    return np.sum(np.prod(x, axis=1)) + np.prod(x)


def r_var_std(x):
    return np.sum(np.var(x, axis=0)) + np.std(x) + np.sum(np.var(x, axis=1, ddof=1))


def r_max_min(x):
    return np.sum(np.max(x, axis=1) * 2.0) + np.min(x) + np.sum(np.amax(x, axis=0, keepdims=True))


def r_ptp(x):
    return np.sum(np.ptp(x, axis=0) ** 2)


def r_cumsum_cumprod(x):
    return np.sum(np.cumsum(x, axis=1) ** 2) + np.sum(np.cumprod(x, axis=0))


def r_nan_reductions(x):
    return np.nansum(x ** 2) + np.sum(np.nanmean(x, axis=0)) + np.nanmax(x)


def r_average(x):
    return np.average(x, axis=1, weights=np.array([1.0, 2.0, 3.0, 4.0])).sum() + np.average(x)


def r_logsumexp_by_hand(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.sum(m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True)))


def r_norm(x):
    return np.linalg.norm(x) + np.sum(np.linalg.norm(x, axis=1)) + np.linalg.norm(x[0], ord=1)


REDUCTIONS = [(r_sum_axis1_keep, (3, 4)), (r_sum_tuple_axis, (2, 3, 4)), (r_mean_neg_axis, (3, 4)),
              (r_mean_keep, (3, 4)), (r_prod, (3, 4)), (r_var_std, (3, 4)), (r_max_min, (3, 4)),
              (r_ptp, (3, 4)), (r_cumsum_cumprod, (3, 4)), (r_nan_reductions, (3, 4)),
              (r_average, (3, 4)), (r_logsumexp_by_hand, (3, 4)), (r_norm, (3, 4))]


@pytest.mark.parametrize("f,shape", REDUCTIONS, ids=[f.__name__ for f, _ in REDUCTIONS])
def test_reduction(f, shape):
    check_grad(f, distinct(*shape) + 0.5)


# --- shape ops --------------------------------------------------------------------------------

def s_reshape_transpose(x):
    return np.sum(np.transpose(np.reshape(x, (4, 3))) * W34)


def s_transpose_axes(x):
    return np.sum(np.transpose(x, (2, 0, 1)) ** 2 * np.arange(24.0).reshape(4, 2, 3))


def s_moveaxis_swapaxes(x):
    return np.sum(np.moveaxis(x, 0, -1) * np.swapaxes(x, 0, 2).transpose(2, 1, 0).transpose(1, 2, 0))


def s_expand_squeeze(x):
    return np.sum(np.squeeze(np.expand_dims(x, 1), axis=1) * W34) + np.sum(np.ravel(x) ** 2)


def s_broadcast_to(x):
    return np.sum(np.broadcast_to(x, (3, 4)) * W34)


def s_concat_stack(x):
    a = np.concatenate([x, x ** 2], axis=0)
    b = np.stack([x, np.sin(x)], axis=1)
    c = np.hstack([x, 2.0 * x])
    d = np.vstack([x, x])
    return np.sum(a ** 2) + np.sum(b * 3.0) + np.sum(c ** 3) + np.sum(d[2:] * x)


def s_split(x):
    a, b = np.split(x, 2, axis=1)
    c, d, e = np.array_split(x, [1, 2], axis=0)
    return np.sum(a * b) + np.sum(c ** 2) + np.sum(d * 3.0) + np.sum(e)


def s_tile_repeat_pad(x):
    return (np.sum(np.tile(x, (2, 1)) * np.arange(24.0).reshape(6, 4))
            + np.sum(np.repeat(x, 2, axis=1) ** 2)
            + np.sum(np.pad(x, ((1, 0), (0, 2))) ** 2 * 1.5))


def s_roll_flip_rot(x):
    return (np.sum(np.roll(x, 1, axis=1) * W34) + np.sum(np.flip(x, 0) * W34)
            + np.sum(np.rot90(x) ** 3))


def s_sort(x):
    return np.sum(np.sort(x, axis=1) * W34)


def s_diag_triu(x):
    return (np.sum(np.diagonal(x) ** 2) + np.trace(x) * 2.0 + np.sum(np.triu(x) ** 2)
            + np.sum(np.tril(x, -1) * 3.0) + np.sum(np.diag(np.diag(x)) ** 2))


def s_take(x):
    idx = np.array([0, 2, 2])
    return (np.sum(np.take(x, idx, axis=1) ** 2)
            + np.sum(np.take_along_axis(x, np.array([[1], [0], [3]]), axis=1) * 5.0))


def s_asarray_copy(x):
    return np.sum(np.asarray(x) * np.copy(x) * np.array(x))


def s_array_of_scalars(x):
    return np.sum(np.array([x[0], x[1] * 2.0, np.sin(x[2])]) ** 2)


SHAPE_OPS = [(s_reshape_transpose, (3, 4)), (s_transpose_axes, (2, 3, 4)),
             (s_moveaxis_swapaxes, (2, 3, 4)), (s_expand_squeeze, (3, 4)), (s_broadcast_to, (4,)),
             (s_concat_stack, (2, 3)),
             (s_split, (3, 4)), (s_tile_repeat_pad, (3, 4)),
             (s_roll_flip_rot, (3, 4)), (s_sort, (3, 4)), (s_diag_triu, (3, 3)), (s_take, (3, 4)),
             (s_asarray_copy, (3,)), (s_array_of_scalars, (3,))]


@pytest.mark.parametrize("f,shape", SHAPE_OPS, ids=name_or_shape)
def test_shape_op(f, shape):
    check_grad(f, distinct(*shape) - 0.5)


# --- products and linear algebra ---------------------------------------------------------------

def p_dot(a, b):
    return np.sum(np.dot(a, b) ** 2)


def p_inner_outer(a, b):
    return np.sum(np.inner(a, b) * 2.0) + np.sum(np.outer(a, b) ** 2)


def p_tensordot(a, b):
    return np.sum(np.tensordot(a, b, axes=([1], [0])) ** 2)


def p_einsum(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b) ** 2) + np.einsum("ij,ij->", a, a)


def p_einsum_batch(a, b):
    return np.sum(np.sin(np.einsum("bij,bjk->bik", a, b)))


def p_kron_cross(a, b):
    return np.sum(np.kron(a, b) ** 2) + np.sum(np.cross(a, b) ** 2)


def p_vdot(a, b):
    return np.vdot(a, b) ** 2


def l_inv_det(a):
    return np.sum(np.linalg.inv(a) ** 2) + np.linalg.det(a)


def l_solve(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2)


def l_slogdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return logdet * 2.0


def l_cholesky(a):
    s = a @ a.T + 3.0 * np.eye(3)
    return np.sum(np.linalg.cholesky(s) * np.array([[1.0, 0, 0], [2.0, 3.0, 0], [4.0, 5.0, 6.0]]))


def l_eigh(a):
    s = a + a.T
    w, v = np.linalg.eigh(s)
    return np.sum(w * np.array([1.0, 2.0, 3.0])) + np.sum(np.abs(v[:, 0]) ** 2 * np.array([1.0, 2.0, 3.0]))


def l_svd(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s ** 2 * np.array([1.0, 3.0])) + np.sum(np.linalg.svd(a, compute_uv=False))


def l_svd_all_factors(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s * np.array([1.0, 3.0])) + np.sum((u[:, 0] * vt[0, 0]) ** 2)


def l_eigh_values(a):
    w, v = np.linalg.eigh(a + a.T)
    return np.sum(w * np.array([1.0, 2.0, 3.0]))


def l_pinv_power(a):
    return np.sum(np.linalg.pinv(a) ** 2) + np.sum(np.linalg.matrix_power(a, 3))


def l_multi_dot(a, b):
    return np.sum(np.linalg.multi_dot([a, b, b.T]) ** 2)


def l_lstsq(a, b):
    x, res, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(x ** 2)


PRODUCTS = [
    (p_dot, ((3, 4), (4, 2))), (p_dot, ((4,), (4,))), (p_dot, ((3, 4), (4,))),
    (p_inner_outer, ((3,), (3,))), (p_tensordot, ((3, 4), (4, 2))), (p_einsum, ((3, 4), (4, 3))),
    (p_einsum_batch, ((2, 3, 4), (2, 4, 2))), (p_kron_cross, ((3,), (3,))), (p_vdot, ((2, 3), (2, 3))),
    (l_solve, ((3, 3), (3, 2))), (l_solve, ((3, 3), (3,))), (l_multi_dot, ((2, 3), (3, 4))),
    (l_lstsq, ((5, 3), (5,))),
]


@pytest.mark.parametrize("f,shapes", PRODUCTS, ids=[f.__name__ for f, _ in PRODUCTS])
def test_product(f, shapes):
    a = randn(*shapes[0])
    b = randn(*shapes[1])
    if f in (l_solve,):
        a = a + 3.0 * np.eye(3)   # well conditioned
    check_grad(f, a, b, argnums=(0, 1), rtol=1e-5, atol=1e-6)


def test_solves_cotangents_are_made_of_one_solve():
    """Both of solve's cotangents are made of solve(aᵀ, g): the adjoint makes it once
    (adjoints.shared_calls), compiled as the python backend runs it."""
    import strop
    a, b = randn(3, 3) + 3.0 * np.eye(3), randn(3)
    g = strop.grad(l_solve, argnums=(0, 1))
    want = check_grad(l_solve, a, b, argnums=(0, 1), rtol=1e-5, atol=1e-6)
    got = strop.jit(g)(a, b)
    for x, y in zip(got, want):
        np.testing.assert_allclose(x, y, rtol=1e-12)
    src = strop.source(g)
    assert src.count("solve_adjoint(") == 1 and "solve_vjp_a(_solve_adjoint" in src, src


def squares(x, w):
    y = x * x
    return np.sum(y * w) + np.sum(w * w) * x[0]


def test_a_product_of_a_name_with_itself_makes_its_cotangent_once():
    """``x * x``: its two cotangents, ``g * x`` and ``x * g``, are one product doubled (one
    array made, not two and their sum), compiled as the python backend runs it."""
    import strop
    x, w = randn(4), randn(4)
    g = strop.grad(squares, argnums=(0, 1))
    want = check_grad(squares, x, w, argnums=(0, 1), rtol=1e-6, atol=1e-8)
    for got, ref in zip(strop.jit(g)(x, w), want):
        np.testing.assert_allclose(got, ref, rtol=1e-12)
    src = strop.source(g)
    assert src.count("unbroadcast(2 * (") == 2, src
    assert "bx = bx + unbroadcast(x * " not in src, src


LINALG = [(l_inv_det, (3, 3)), (l_slogdet, (3, 3)), (l_cholesky, (3, 3)), (l_eigh_values, (3, 3)),
          (l_eigh, (3, 3)), (l_svd, (3, 2)), (l_svd_all_factors, (3, 2)), (l_pinv_power, (3, 3))]


@pytest.mark.parametrize("f,shape", LINALG, ids=name_or_shape)
def test_linalg(f, shape):
    a = randn(*shape)
    if shape[0] == shape[1]:
        a = a + 2.0 * np.eye(shape[0])
    check_grad(f, a, rtol=1e-5, atol=1e-6)


# --- builtins and methods resolved to rules ------------------------------------------------------

def m_builtins(x):
    return float(x[0]) * abs(x[1]) + pow(x[2], 3) + max(x[0], x[1]) + sum(x) * min(x[1], x[2])


def m_methods(x):
    return (x.T.sum() + x.mean(axis=0).max() + x.var(ddof=1) + x.std(axis=1).sum()
            + x.cumprod(axis=1).sum() + x.reshape(-1)[::2].prod() + x.clip(0.2, 0.6).sum())


def m_nonsmooth_zero(x):
    # floor/round/sign/comparisons carry no derivative; the smooth factor does
    return np.sum(np.floor(x * 3.0) * x + np.round(x) + np.sign(x - 0.5) * x ** 2
                  + np.argmax(x) * x + (x > 0.5) * 1.0)


@pytest.mark.parametrize("f,shape", [(m_builtins, (3,)), (m_methods, (3, 4)),
                                     (m_nonsmooth_zero, (3, 4))], ids=name_or_shape)
def test_builtins_and_methods(f, shape):
    check_grad(f, distinct(*shape) + 0.05)


# --- more keyword forms through the pipeline ------------------------------------------------------

def k_sum_where_initial(x):
    return np.sum(x ** 2, where=x > 0.5) + np.sum(x, initial=3.0) + np.mean(x ** 2, where=x < 0.5)


def k_axis_none_and_negative(x):
    return (np.sum(np.sort(x, axis=None) * np.arange(12.0))
            + np.sum(np.concatenate([x, x], axis=None) * np.arange(24.0))
            + np.sum(np.stack([x, x ** 2], axis=-1) * 0.5) + np.sum(np.cumsum(x) ** 2))


def k_tuple_axes(x):
    return (np.sum(np.squeeze(np.expand_dims(x, (0, 3)), axis=(0, 3)) ** 2)
            + np.sum(np.max(x, axis=(0, 1), keepdims=True) * 2.0))


def k_norm_orders(x):
    return (np.linalg.norm(x[0], ord=3) + np.linalg.norm(x[1], ord=np.inf)
            + np.linalg.norm(x, ord="fro") + np.linalg.norm(x, axis=0, keepdims=True).sum())


def k_einsum_forms(x):
    return (np.einsum("ii", x[:, :3]) + np.einsum("i,i", x[0], x[1])
            + np.sum(np.einsum("...i,...i->...", x, x)) + np.einsum("ij->", x ** 2))


def k_ravel_reshape_order(x):
    return (np.sum(np.ravel(x, order="F")[:5] * np.arange(5.0))
            + np.sum(x.reshape((4, 3), order="F")[0] ** 2))


KEYWORDS = [k_sum_where_initial, k_axis_none_and_negative, k_tuple_axes, k_norm_orders,
            k_einsum_forms, k_ravel_reshape_order]


@pytest.mark.parametrize("f", KEYWORDS, ids=name_or_shape)
def test_keyword_forms(f):
    check_grad(f, distinct(3, 4) + 0.1)


# --- commonly used NumPy functions --------------------------------------------------------------

def c_diff(x):
    return np.sum(np.diff(x) ** 2)


def c_convolve(x):
    return np.sum(np.convolve(x, np.array([1.0, -2.0, 0.5])) ** 2)


def c_median(x):
    return np.median(x)


def c_quantile(x):
    return np.quantile(x, 0.3)


def c_interp(x):
    return np.sum(np.interp(np.array([0.5, 1.5]), np.arange(5.0), x))


def c_polyval(x):
    return np.polyval(x, 0.7)


def c_linspace(x):
    return np.sum(np.linspace(x[0], x[1], 4) ** 2)


def c_select(x):
    return np.sum(np.select([x > 1, x < 0], [x ** 2, -x], x * 3.0))


def c_cov(x):
    return np.sum(np.cov(np.stack([x, x ** 2])))


def c_interp_x(x):
    return np.sum(np.interp(x, np.array([-1.0, 0.0, 1.0, 2.5]), np.array([0.5, -0.2, 1.0, 3.0])))


def c_fftshift_cumsum(x):
    return np.sum(np.fft.fftshift(x) * np.arange(5.0)) + np.sum(np.cumsum(np.outer(x, x)) ** 2)


def c_eig(x):
    a = np.diag(np.array([1.0, 3.0, 6.0])) + 0.1 * np.outer(x[:3], x[2:])
    w, v = np.linalg.eig(a)
    return np.sum(w * np.arange(3.0)) + np.sum(v ** 2 * np.arange(3.0))


def c_numpy2_names(x):
    return (np.sum(np.concat([x, x]) ** 2) + np.sum(np.pow(np.abs(x) + 1, 1.5))
            + np.sum(np.acos(x / 3)) + np.sum(np.cumulative_sum(x) ** 2)
            + np.sum(np.astype(x, np.float64) * np.permute_dims(x)))


COMMON = [c_diff, c_convolve, c_median, c_quantile, c_interp, c_polyval, c_linspace, c_select,
          c_cov, c_interp_x, c_fftshift_cumsum, c_eig, c_numpy2_names]


@pytest.mark.parametrize("f", COMMON, ids=name_or_shape)
def test_common_numpy_functions(f):
    """grad and jvp against central differences, vmap(grad) against a loop of grads,
    jit(grad) against the python backend."""
    import warnings

    import strop
    x = np.array([0.3, 1.2, -0.7, 2.1, 0.9])
    got = check_grad(f, x)
    t = np.array([0.5, -1.0, 2.0, 0.3, -0.4])
    eps = 1e-6
    np.testing.assert_allclose(strop.jvp(f, (x,), (t,))[1],
                               (f(x + eps * t) - f(x - eps * t)) / (2 * eps), rtol=1e-6, atol=1e-8)
    xs = np.stack([x, x * 0.9 + 0.05])
    if f is not c_eig:   # vmap of np.linalg.eig's (w, v) result: TypeError in vectorize, not a rule's
        np.testing.assert_allclose(strop.vmap(strop.grad(f))(xs),
                                   [strop.grad(f)(xs[0]), strop.grad(f)(xs[1])], rtol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(strop.jit(strop.grad(f))(x), got, rtol=1e-10)


# --- second derivatives through the rules: the templates' own helpers need rules --------------

B33 = np.array([[0.3, 1.2, -0.7], [2.1, 0.9, 0.4], [0.5, -0.2, 1.3]])


def t_sum(t):
    return np.sum(np.sum(B33 * t, axis=1, keepdims=True) ** 3)


def t_mean(t):
    return np.mean((B33 * t) ** 3)


def t_prod(t):
    return np.prod(B33 * t)


def t_var(t):
    return np.var(B33 * t ** 2, axis=0).sum()


def t_max(t):
    return np.max(B33 * t ** 2)


def t_cumsum(t):
    return np.sum(np.cumsum(B33 * t, axis=1) ** 3)


def t_cumprod(t):
    return np.sum(np.cumprod(B33 * t, axis=1))


def t_reshape_transpose(t):
    return np.sum(np.reshape(B33 * t, (9,))[::2] ** 3) + np.sum((B33 * t).T @ (B33 * t ** 2))


def t_concatenate(t):
    return np.sum(np.concatenate([B33 * t, B33 ** 2 * t ** 2]) ** 2)


def t_stack_getitem(t):
    return np.sum(np.stack([B33 * t, B33 * t ** 2]) ** 2) + np.sum((B33 * t)[[0, 0, 2]] ** 3)


def t_where_maximum_clip(t):
    return np.sum(np.where(B33 > 0, B33 * t ** 3, B33 * t) + np.maximum(B33 * t, 0.5) ** 2
                  + np.clip(B33 * t, -0.5, 0.5) ** 2)


def t_inv_det(t):
    return np.sum(np.linalg.inv(B33 * t + np.eye(3) * 3.0)) + np.linalg.det(B33 * t + np.eye(3))


def t_solve(t):
    return np.sum(np.linalg.solve(B33 * t + np.eye(3) * 3.0, np.ones(3)))


def t_cholesky(t):
    a = B33 * t
    return np.sum(np.linalg.cholesky(a @ a.T + np.eye(3)))


def t_eigvalsh(t):
    a = B33 * t
    return np.sum(np.linalg.eigvalsh(a + a.T) * np.arange(3.0))


def t_svdvals(t):
    return np.sum(np.linalg.svd(B33 * t, compute_uv=False) * np.arange(3.0))


def t_norm(t):
    return np.linalg.norm(B33 * t ** 2)


def t_einsum(t):
    return np.einsum("ij,jk->", B33 * t, B33 * t ** 2)


def t_dot(t):
    return np.dot(B33[0] * t, B33[1] * t ** 2)


def t_tile(t):
    return np.sum(np.tile(B33 * t, (2, 1)) ** 3)


def t_sort(t):
    return np.sum(np.sort(B33 * t ** 2, axis=1) * np.arange(3.0))


def t_take(t):
    return np.sum(np.take(B33 * t, [0, 2], axis=1) ** 3)


def t_pad(t):
    return np.sum(np.pad(B33 * t, 1) ** 3)


def t_split(t):
    return np.sum(np.split(B33 * t, 3)[1] ** 3)


def t_elementwise(t):
    return np.sum(np.abs(B33) ** t + np.log(np.abs(B33) * t) + np.tanh(B33 * t) ** 2)


def t_svd_vectors(t):
    u, s, vt = np.linalg.svd(B33 * t + np.eye(3) * t ** 2)
    return np.sum(s * np.arange(3.0)) + np.sum(u[:, 0] * vt[0] * np.arange(3.0))


def t_eigh_vectors(t):
    a = B33 * t + np.eye(3) * t ** 2
    w, v = np.linalg.eigh(a + a.T)
    return np.sum(w ** 2) + np.sum(v[:, 2] ** 2 * np.arange(3.0))


def t_trace_diag(t):
    return np.trace(B33 * t) ** 3 + np.sum(np.diag(B33 * t ** 2) ** 2) + np.sum(
        np.diag(np.diag(B33) * t) ** 3) + np.sum(np.diagonal(B33 * t, 1) ** 3)


def t_partition(t):
    return np.sum(np.partition(B33 * t ** 2, 1, axis=1) * np.arange(3.0))


def t_repeat_take(t):
    return np.sum(np.repeat(B33 * t, [1, 2, 3], axis=0) ** 3) + np.sum(
        np.take_along_axis(B33 * t, np.array([[2, 0]] * 3), axis=1) ** 3)


def t_pad_modes(t):
    return sum(np.sum(np.pad(B33 * t, (1, 2), mode=m) ** 3) for m in ("edge", "wrap", "reflect"))


def t_einsum_forms(t):
    a, b = B33 * t, B33 ** 2 * t ** 2
    return (np.einsum("ii", a) ** 2 + np.sum(np.einsum("ij,jk", a, b) ** 2)
            + np.sum(np.einsum("...i,...i->...", a, b) ** 2) + np.einsum("ij,ij->", a, a) * t)


def t_einsum_interleaved(t):
    a, b = B33 * t, B33 ** 2 * t ** 2
    return (np.sum(np.einsum(a, (0, 1), (1, 0)) * B33) ** 2
            + np.sum(np.einsum(a, [0, 1], b, [1, 2], [0, 2]) ** 2) + np.einsum(a, [0, 0]) ** 3)


M3 = np.array([0.5, -1.2, 0.8])
M234 = np.linspace(-1.0, 1.5, 24).reshape(2, 3, 4)
M223 = np.linspace(-0.7, 1.1, 12).reshape(2, 2, 3)


def t_matmul_vec_stack(t):          # (3,) @ (2, 3, 4): was a wrong second derivative
    return np.sum(np.sin((M3 * t) @ (M234 * t ** 2)))


def t_matmul_stack_vec(t):          # (2, 2, 3) @ (3,): raised ValueError
    return np.sum(np.sin((M223 * t ** 2) @ (M3 * t)))


def t_matmul_shapes(t):
    a, m = M3 * t, B33 * t ** 2
    return (np.sum(np.cos(a @ m)) + np.sin(a @ a) + np.sum(np.cos(m @ a))
            + np.sum(np.sin((M223 * t) @ (B33 * t))) + np.sum(np.sin(m @ (M234[:, :, :3] * t))))


SECOND = [t_sum, t_mean, t_prod, t_var, t_max, t_cumsum, t_cumprod, t_reshape_transpose,
          t_concatenate, t_stack_getitem, t_where_maximum_clip, t_inv_det, t_solve, t_cholesky,
          t_eigvalsh, t_svdvals, t_norm, t_einsum, t_dot, t_tile, t_sort, t_take, t_pad, t_split,
          t_elementwise, t_svd_vectors, t_eigh_vectors, t_trace_diag, t_partition, t_repeat_take,
          t_pad_modes, t_einsum_forms, t_einsum_interleaved, t_matmul_vec_stack,
          t_matmul_stack_vec, t_matmul_shapes]


@pytest.mark.parametrize("f", SECOND, ids=name_or_shape)
def test_second_derivative_through_rules(f):
    """grad(grad(f)) and hessian (forward over reverse) against differences of grad(f)."""
    import strop
    eps = 1e-5
    g1 = strop.grad(f)
    t = 0.8
    np.testing.assert_allclose(g1(t), (f(t + eps) - f(t - eps)) / (2 * eps), rtol=1e-6, atol=1e-7)
    want = (g1(t + eps) - g1(t - eps)) / (2 * eps)
    np.testing.assert_allclose(strop.grad(g1)(t), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(strop.hessian(f)(t), want, rtol=1e-5, atol=1e-6)


def t_matmul_broadcast(t):        # the forms of t_matmul_shapes the plain ones do not cover
    m = B33 * t ** 2
    return np.sum(np.sin((M223 * t) @ m)) + np.sum(np.sin(m @ (M234[:, :, :3] * t)))


# (t_matmul_shapes compiled took 100 s: each product form compiles its helpers' twins)
@pytest.mark.parametrize("f", [t_matmul_vec_stack, t_matmul_stack_vec, t_matmul_broadcast],
                         ids=name_or_shape)
def test_second_derivative_of_matmul_compiled(f):
    """jit(grad(grad(f))) compiles (matmul's second-order helpers have Numba twins) and agrees
    with the python backend."""
    import warnings

    import strop
    g2 = strop.grad(strop.grad(f))
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got = strop.jit(g2)(0.8)
    np.testing.assert_allclose(got, strop.jit(g2, backend="python")(0.8), rtol=1e-12)


# --- a list or tuple of arrays where NumPy takes an array ----------------------------------------

def q_reductions_of_lists(x):    # crashed: "Field elements must be 2- or 3-tuples"
    return (np.mean([x, x + 2]) + np.std([x, x ** 2]) + np.var((x, x * 3))
            + np.sum(np.var([x, np.sin(x)], axis=0)) + np.max([x[0], x[1] * 2]))


def q_ufuncs_of_lists(x):
    return (np.sum(np.sin([x, x ** 2]) * np.array([1.0, 2.0])[:, None])
            + np.sum(np.maximum([x, 2 * x], 0.1) ** 2) + np.linalg.norm([x, x * 2]))


@pytest.mark.parametrize("f", [q_reductions_of_lists, q_ufuncs_of_lists], ids=name_or_shape)
def test_list_of_arrays_as_array(f):
    import strop
    x = np.array([0.3, 1.2, -0.7])
    check_grad(f, x)
    t = np.array([0.5, -1.0, 2.0])
    eps = 1e-6
    np.testing.assert_allclose(strop.jvp(f, (x,), (t,))[1],
                               (f(x + eps * t) - f(x - eps * t)) / (2 * eps), rtol=1e-6)
