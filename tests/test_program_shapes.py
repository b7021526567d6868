"""Program shapes real code has, beyond parameter layouts: methods of user objects, factories
returning nested functions, map/filter over data with partial-bound functions. Each gradient
against central differences of the plain function."""
import functools
import warnings

import numpy as np
import pytest

import strop
from helpers import assert_tree_allclose, check_grad, numeric_grad_tree, x64_fixture
from strop import grad

x64 = pytest.fixture(autouse=True)(x64_fixture)

rng = np.random.RandomState(3)
X0 = rng.randn(3)
DATA = [rng.randn(3) for _ in range(3)]


class Dense:
    def __init__(self, w):
        self.w = w

    def forward_pass(self, x):
        return np.tanh(x @ self.w)


LAYER = Dense(rng.randn(3, 3))


def through_a_method(x):
    return np.sum(LAYER.forward_pass(x) ** 2)


def make_scaled(scale):
    def scaled(x):
        return np.sum(np.sin(x) * scale)
    return scaled


def factory_called_inline(x):
    return make_scaled(2.0)(x) + make_scaled(3.0)(x ** 2)


def factory_bound_then_called(x):
    objective = make_scaled(1.5)
    return objective(x) * objective(x + 1.0)


def _example_loss(p, d):
    return np.sum((p * d - 1.0) ** 2)


def summed_map_of_partial(p):
    return sum(map(functools.partial(_example_loss, p), DATA))


def map_of_two_sequences(p):
    return sum(map(lambda a, b: np.sum(a * b * p), DATA, DATA[::-1]))


def filtered_data(p):
    kept = list(filter(lambda d: np.sum(d) > -10.0, DATA))
    return sum(np.sum(p * d) ** 2 for d in kept)


def partial_called_at_once(p):
    return functools.partial(_example_loss, d=DATA[0])(p)


@pytest.mark.parametrize("f", [through_a_method, factory_called_inline,
                               factory_bound_then_called, summed_map_of_partial,
                               map_of_two_sequences, filtered_data, partial_called_at_once],
                         ids=lambda f: f.__name__)
def test_grad(f):
    check_grad(f, X0)


def test_a_method_reads_the_objects_current_attributes():
    g = grad(through_a_method)
    before = g(X0)
    saved = LAYER.w
    try:
        LAYER.w = saved * 2.0
        check_grad(through_a_method, X0)
        assert not np.allclose(g(X0), before)
    finally:
        LAYER.w = saved


def _cubes(x):
    return np.sum(np.sin(x) ** 3)


V = rng.randn(3)


def hessian_vector_product(x):
    return strop.jvp(grad(_cubes), (x,), (V,))[1]


def hvp_inside_a_loss(x):
    return np.sum(hessian_vector_product(x) ** 2)


def test_a_hessian_vector_product_inside_transformed_code():
    import warnings
    eps = 1e-5
    g = grad(_cubes)
    want = (g(X0 + eps * V) - g(X0 - eps * V)) / (2 * eps)
    np.testing.assert_allclose(hessian_vector_product(X0), want, rtol=1e-6)
    check_grad(hvp_inside_a_loss, X0, rtol=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(strop.jit(grad(hvp_inside_a_loss))(X0),
                                   grad(hvp_inside_a_loss)(X0), rtol=1e-10)


@strop.custom_jvp
def sin_cos(x):
    return {"s": np.sin(x), "c": (np.cos(x), x ** 2)}


@sin_cos.defjvp
def _sin_cos_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return sin_cos(x), {"s": np.cos(x) * t, "c": (-np.sin(x) * t, 2 * x * t)}


def custom_jvp_with_a_tree_out(x):
    out = sin_cos(x)
    return np.sum(out["s"] * out["c"][0] + out["c"][1])


def test_grad_through_a_custom_jvp_returning_a_tree():
    check_grad(custom_jvp_with_a_tree_out, X0)


def _predict(params, x):
    w, b = params
    return np.tanh(x @ w + b)


PARAMS = (rng.randn(3, 2), rng.randn(2))
INPUTS = rng.randn(4, 3)


def batched_through_partial(params):
    preds = strop.vmap(functools.partial(_predict, params))(INPUTS)
    return np.sum(preds ** 2)


def _cubes_scaled(c, x):
    return c * np.sum(x ** 3)


def test_vmap_of_a_partial_binding_a_computed_value():
    from helpers import assert_tree_allclose, numeric_grad_tree
    assert_tree_allclose(grad(batched_through_partial)(PARAMS), numeric_grad_tree(
        batched_through_partial, (PARAMS,), 0), rtol=1e-6, atol=1e-7)
    plain = np.sum(np.stack([_predict(PARAMS, x) for x in INPUTS]) ** 2)
    np.testing.assert_allclose(batched_through_partial(PARAMS), plain, rtol=1e-12)


def test_grad_of_a_partial_inside():
    check_grad(lambda x: np.sum(grad(functools.partial(_cubes_scaled, 2.0))(x) * x), X0)


@strop.custom_vjp
def affine_tanh(wb, x):
    w, b = wb
    return np.tanh(x @ w + b)


def _affine_fwd(wb, x):
    out = affine_tanh(wb, x)
    return out, (wb, x, out)


def _affine_bwd(res, g):
    (w, b), x, out = res
    dz = g * (1 - out ** 2)
    return (np.outer(x, dz), dz), w @ dz


affine_tanh.defvjp(_affine_fwd, _affine_bwd)


def custom_vjp_of_a_pair(wb):
    return np.sum(affine_tanh(wb, X0) ** 2)


def test_grad_through_a_custom_vjp_taking_a_pair():
    # its cotangent (a pair of arrays of other shapes) was read as one array: NumPy's
    # 'inhomogeneous shape' (the tree fuzzer's C2)
    from helpers import assert_tree_allclose, numeric_grad_tree
    wb = (rng.randn(3, 2), rng.randn(2))
    assert_tree_allclose(grad(custom_vjp_of_a_pair)(wb), numeric_grad_tree(
        custom_vjp_of_a_pair, (wb,), 0), rtol=1e-6, atol=1e-7)


def _lane_loss(w, x):
    return np.sum(np.tanh(x * w))


BATCH = rng.randn(4, 3)


def per_example_gradients_in_a_loss(w):
    per = strop.vmap(grad(_lane_loss), in_axes=(None, 0))(w, BATCH)
    return np.sum(per ** 2)


def test_grad_of_per_example_gradients():
    # vmap(grad(f))'s seed per lane was inlined as code to differentiate ('this call's
    # result is not used, so it may change _t15 in place', pointing into strop)
    check_grad(per_example_gradients_in_a_loss, X0, rtol=1e-5)


def switch_over_a_list_of_lambdas(x):
    branches = [lambda v: np.sum(np.sin(v)), lambda v: np.sum(np.exp(v)),
                lambda v: np.sum(v ** 3)]
    return strop.lax.switch(np.argmax(x), branches, x)


def test_lax_switch_over_a_named_list_of_lambdas():
    # the list was emitted as a value of the code: NameError '_lambda1' under grad
    check_grad(switch_over_a_list_of_lambdas, np.array([0.1, 0.5, 0.2]))


def _apply_matrix(mat, v):
    return np.dot(mat, v)


def vmap_of_a_dot_inside_a_loss(mat):
    return np.sum(strop.vmap(_apply_matrix, in_axes=(None, 0))(mat, BATCH) ** 2)


def test_grad_of_a_loss_batching_np_dot_with_vmap():
    # the inner vmap's code, made without the ranks, ran np.dot lane by lane (each()),
    # which has no derivative: JAX's quickstart refused
    check_grad(vmap_of_a_dot_inside_a_loss, rng.randn(2, 3), rtol=1e-5)


def make_act(a):
    def act(z):
        return np.tanh(a * z) + 0.1 * z
    return act


def reduce_layers(params, x, act):
    return functools.reduce(lambda h, wb: act(h @ wb[0] + wb[1]), params, x)


def reduce_loss(params, x):
    return np.sum(reduce_layers(params, x, make_act(0.8)) ** 2) + functools.reduce(
        lambda a, b: a * b, [p[1][0] for p in params])


REDUCED = ((rng.randn(3, 2), rng.randn(2)), (rng.randn(2, 2), rng.randn(2)))


def test_functools_reduce_over_layers_with_a_function_a_factory_made():
    """functools.reduce(f, xs[, init]) is the loop it means, f inlined at each item: the lambda
    calling a local function a factory returned ran as a lambda reading an undefined name
    (NameError '_retval'; the fuzzer's seed 52)."""
    assert_tree_allclose(grad(reduce_loss)(REDUCED, X0),
                         numeric_grad_tree(reduce_loss, (REDUCED, X0), 0), rtol=1e-5, atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        got = strop.jit(reduce_loss)(REDUCED, X0)
    np.testing.assert_allclose(got, reduce_loss(REDUCED, X0), rtol=1e-12)
    code = [ln for ln in strop.source(strop.grad(reduce_loss)).splitlines()
            if not ln.lstrip().startswith("#")]
    assert not any("reduce(" in ln for ln in code)


LAYER_SIZES = [(3, 2), (2, 1)]


def unpack_layers(weights):
    """A generator walking a flat parameter vector layer by layer (autograd's examples)."""
    for m, n in LAYER_SIZES:
        yield weights[:m * n].reshape((m, n)), weights[m * n:m * n + n]
        weights = weights[(m + 1) * n:]


def through_a_generator(weights):
    h = X0
    for w, b in unpack_layers(weights):
        h = np.tanh(h @ w + b)
    return np.sum(h ** 2)


def _pairs(xs):
    yield from zip(xs[:-1], xs[1:])
    return "ignored"


def _while_generator(x, count):
    k = 0
    while k < count:
        yield np.sin(x * (k + 1))
        k += 1


def generators_consumed_every_way(x):
    parts = list(_pairs([x, x ** 2, np.cos(x)]))
    total = sum(np.sum(a * b) for a, b in parts)
    for k, s in enumerate(_while_generator(x, 3)):
        total = total + k * np.sum(s)
    return total + sum(np.sum(v) for v in _while_generator(x, 2))


N_WEIGHTS = sum((m + 1) * n for m, n in LAYER_SIZES)


def test_generator_functions_are_the_lists_they_yield():
    # unpack_layers was refused: 'yield is not supported inside a transformed function'
    w = rng.randn(N_WEIGHTS)
    check_grad(through_a_generator, w)
    check_grad(generators_consumed_every_way, X0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(strop.jit(grad(through_a_generator))(w),
                                   grad(through_a_generator)(w), rtol=1e-10)


def _sent(x):
    got = yield x
    yield got


def _forever(x):
    while True:
        yield x


def sends_into_a_generator(x):
    return np.sum(next(_sent(x)))


def takes_from_an_endless_generator(x):
    for k, v in enumerate(_forever(x)):
        if k > 2:
            break
    return np.sum(v)


@pytest.mark.parametrize("f, message", [(sends_into_a_generator, "a yield whose value is used"),
                                        (takes_from_an_endless_generator, "loops forever")])
def test_a_generator_that_must_be_lazy_is_refused_at_its_line(f, message):
    with pytest.raises(strop.errors.TransformError, match=message) as info:
        grad(f)(X0)
    assert info.value.location.filename == __file__


def test_a_global_list_of_sizes_is_static_and_read_again_when_it_changes():
    """A small container of numbers a function reads is written into its code (loops over it
    unroll); a change to it makes the code again."""
    w = rng.randn(N_WEIGHTS)
    g = strop.jit(grad(through_a_generator))
    before = g(w)
    LAYER_SIZES[1] = (2, 2)
    try:
        w2 = rng.randn(sum((m + 1) * n for m, n in LAYER_SIZES))
        np.testing.assert_allclose(g(w2), numeric_grad_tree(through_a_generator, (w2,), 0),
                                   rtol=1e-5, atol=1e-8)
    finally:
        LAYER_SIZES[1] = (2, 1)
    np.testing.assert_allclose(g(w), before, rtol=1e-12)


def _project(vx, vy):
    """Changes its arguments in place, as autograd's fluid simulation's project() does."""
    div = np.roll(vx, -1) - np.roll(vy, 1)
    vx -= 0.5 * div
    vy -= 0.25 * div ** 2
    return vx, vy


def _apply_boundary(u):
    u[0] = 0.0
    u[-1] = u[-2] * 0.5


def _smooth_then_fix(u):
    u *= 0.9
    _apply_boundary(u)


def helpers_change_what_the_caller_made(x):
    vx, vy = np.sin(x), np.cos(x)
    vx, vy = _project(vx, vy)
    u = x ** 2
    _apply_boundary(u)          # no result: the change of u is what it does
    w = np.exp(x)
    _smooth_then_fix(w)         # through a helper of the helper
    return np.sum(vx * vy) + np.sum(u ** 2) + np.sum(w * x)


def test_a_helper_may_change_the_arrays_its_caller_made():
    # `vx -= ...` in a helper was refused as a change of an argument (autograd's fluidsim)
    x = rng.randn(5)
    check_grad(helpers_change_what_the_caller_made, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(strop.jit(helpers_change_what_the_caller_made)(x),
                                   helpers_change_what_the_caller_made(x), rtol=1e-12)


def changes_its_own_argument_through_a_helper(x):
    _apply_boundary(x)
    return np.sum(x)


def changes_an_aliased_array_through_a_helper(x):
    u = x * 2.0
    v = u
    _apply_boundary(u)
    return np.sum(v)


def changes_a_row_through_a_helper(x):
    u = np.outer(x, x)
    _apply_boundary(u[0])
    return np.sum(u)


@pytest.mark.parametrize("f, error, message", [
    (changes_its_own_argument_through_a_helper, strop.errors.ImmutableUpdateError,
     "changes argument `x` in place"),
    (changes_an_aliased_array_through_a_helper, strop.errors.TransformError, "both refer to"),
    (changes_a_row_through_a_helper, strop.errors.TransformError, "a part of `u`"),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_helper_changing_what_the_caller_may_not_change_is_refused_at_the_call(f, error,
                                                                                message):
    with pytest.raises(error, match=message) as info:
        grad(f)(rng.randn(4))
    assert info.value.location.filename == __file__
    assert "_apply_boundary(" in info.value.location.line()


def _normalized_rows(moments):
    return [m / np.sum(m, -1, keepdims=True) for m in moments]


def em_like_steps(params):
    """A comprehension over a list whose items are known (a gradient of a list of arrays of
    other ranks) is the list of its items' values: ranks per item, no loop over a list."""
    def step(i, carry):
        a, b = carry
        moments = grad(lambda p: sum(np.sum(np.exp(x)) for x in p))([a, b])
        return [np.log(x) for x in _normalized_rows([moments[0], moments[1]])]
    return strop.lax.fori_loop(0, 2, step, params)


def em_like_loss(params):
    return sum(np.sum(np.sin(x)) for x in em_like_steps(params))


def test_a_comprehension_over_known_items_is_a_display_and_a_carry_not_known_stays_whole():
    # the carry (a parameter, not known as a display) and the step's display of two arrays:
    # the step's list is carried whole, as before comprehensions made displays
    params = [np.abs(rng.randn(3)) + 0.5, np.abs(rng.randn(3, 4)) + 0.5]
    want = em_like_steps(params)      # strop.lax runs as Python outside a transform
    got = strop.jit(em_like_steps, backend="python")(params)
    assert_tree_allclose(got, want, rtol=1e-12)
    assert_tree_allclose(grad(em_like_loss)(params), numeric_grad_tree(em_like_loss,
                                                                        (params,), 0),
                         rtol=1e-5, atol=1e-8)


def gradient_of_a_list_of_carried_arrays(x, y):
    def step(i, carry):
        a, b = carry
        m = grad(lambda p: np.sum(np.exp(p[0])) + np.sum(p[1] ** 2))([a, b])
        return (0.5 * m[0], 0.5 * m[1])
    out = strop.lax.fori_loop(0, 2, step, (x, y))
    return np.sum(out[0]) + np.sum(out[1])


def test_a_transform_called_inside_a_loop_body_with_a_list_of_the_bodys_names():
    # the list [a, b] reached the inlined gradient's code as the body's own names, read as
    # the user's: "name 'a_1' is not defined"
    x, y = rng.randn(3), rng.randn(2, 2)
    want = gradient_of_a_list_of_carried_arrays(x, y)
    np.testing.assert_allclose(strop.jit(gradient_of_a_list_of_carried_arrays,
                                         backend="python")(x, y), want, rtol=1e-12)
    check_grad(gradient_of_a_list_of_carried_arrays, x, y)


def _flatten(tree):
    if isinstance(tree, (list, tuple)):
        return [leaf for t in tree for leaf in _flatten(t)]
    return [tree]


def _tree_sum(p, data):
    if isinstance(data, list):
        return sum(_tree_sum(p, d) for d in data)
    return np.sum(np.tanh(p * data))


def recursion_over_a_pytree(p, a, b):
    leaves = _flatten([a, (b, [a * 2.0, b])])
    firsts = [x for x in (a, b)]     # each item its own value, not the last one's
    return sum(np.sum(np.sin(p * leaf)) for leaf in leaves) + _tree_sum(p, [a, [b, a]]) + \
        np.sum(firsts[0] * p)


def _factorial(n, x):
    return x if n <= 1 else n * _factorial(n - 1, x)


def recursion_on_a_value(x, n):
    return np.sum(_factorial(n, x))


def test_a_recursion_over_a_pytree_unrolls_where_its_structure_ends_it():
    # "recursive call to flatten" was refused; then, unrolled, [x for x in (a, b)] and
    # flatten's [leaf for t in tree for leaf in ...] gave every item the last item's value
    p, a, b = rng.randn(2), rng.randn(2), rng.randn(2)
    check_grad(recursion_over_a_pytree, p, a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(strop.jit(grad(recursion_over_a_pytree))(p, a, b),
                                   grad(recursion_over_a_pytree)(p, a, b), rtol=1e-12)
    with pytest.raises(strop.errors.TransformError, match="deeper than strop unrolls") as info:
        grad(recursion_on_a_value)(np.ones(2), 3)
    assert info.value.location.filename == __file__


def comprehensions_of_every_kind(x):
    a = [x * len(c) for c in "abc"]            # over a constant: its items are not names
    b = [x[i] * 2 for i in range(2)]
    d = {k: x * 2 for k in ("u", "v")}
    e = [x * i for i in (1, 2, 3) if i > 1]    # with a condition: a loop
    nested = sum(np.sum(t) for t in [x, x * 2] for _ in range(2))
    return np.sum(a[0]) + np.sum(b[1]) + np.sum(d["u"]) + np.sum(e[0]) + nested


def test_comprehensions_over_constants_ranges_and_with_conditions():
    check_grad(comprehensions_of_every_kind, rng.randn(3))


def _score(params, data):
    if isinstance(data, list):   # a list of sequences: one score each (autograd's HMM EM)
        return sum(map(functools.partial(_score, params), data))
    a, b = params
    return np.sum(np.tanh(a * data)) + np.sum(b) * np.sum(data ** 2)


def recursion_over_a_list_argument_of_a_nested_gradient(params, seq_a, seq_b):
    data = [seq_a * 1.0, seq_b * 2.0]
    value, g = strop.value_and_grad(_score)(params, data)
    return value + np.sum(g[0] ** 2)


def test_isinstance_on_a_pytree_argument_and_its_items_ends_the_recursion():
    params = (rng.randn(3), rng.randn(2))
    seq_a, seq_b = rng.randn(3), rng.randn(3)
    f = recursion_over_a_list_argument_of_a_nested_gradient
    check_grad(f, params, seq_a, seq_b, argnums=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(strop.jit(f)(params, seq_a, seq_b), f(params, seq_a, seq_b),
                                   rtol=1e-12)


# autograd's convnet example: layer objects in a closure list, each owning a parser whose
# dict maps names (or, in the top-level parser, the layer objects themselves) to a slice and
# a shape of one flat weight vector
class _Parser:
    def __init__(self):
        self.idxs_and_shapes = {}
        self.N = 0

    def add_weights(self, name, shape):
        start = self.N
        self.N += int(np.prod(shape))
        self.idxs_and_shapes[name] = (slice(start, self.N), shape)

    def get(self, vect, name):
        idxs, shape = self.idxs_and_shapes[name]
        return np.reshape(vect[idxs], shape)


class _Full:
    def __init__(self, size):
        self.size = size

    def build(self, n_in):
        self.parser = _Parser()
        self.parser.add_weights("params", (n_in, self.size))
        self.parser.add_weights("biases", (self.size,))
        return self.parser.N

    def forward_pass(self, inputs, param_vector):
        w = self.parser.get(param_vector, "params")
        b = self.parser.get(param_vector, "biases")
        return self.nonlinearity(inputs @ w + b)


class _Tanh(_Full):
    def nonlinearity(self, x):
        return np.tanh(x)


class _Scaled(_Full):
    scale = 0.5   # a class attribute, read by the method

    @staticmethod
    def squash(x):
        return x / (1.0 + x ** 2)

    def nonlinearity(self, x):
        return self.squash(x) * self.scale


def _make_predictions(layer_specs, n_in):
    parser = _Parser()
    for layer in layer_specs:
        parser.add_weights(layer, (layer.build(n_in),))
        n_in = layer.size

    def predictions(w_vect, inputs):
        cur = inputs
        for layer in layer_specs:
            cur = layer.forward_pass(cur, parser.get(w_vect, layer))
        return cur
    return parser, predictions


_PARSER, _PREDICT = _make_predictions([_Tanh(4), _Scaled(2)], 3)
_INPUTS = rng.randn(5, 3)


def layers_of_a_closure_list(w_vect):
    return np.sum(_PREDICT(w_vect, _INPUTS) ** 2)


def test_layer_objects_of_a_closure_list_keyed_in_a_parser_by_themselves():
    w = rng.randn(_PARSER.N)
    check_grad(layers_of_a_closure_list, w)
    with warnings.catch_warnings():
        warnings.simplefilter("error", strop.errors.JitFallbackWarning)
        np.testing.assert_allclose(strop.jit(grad(layers_of_a_closure_list))(w),
                                   grad(layers_of_a_closure_list)(w), rtol=1e-12)


def test_a_changed_parser_entry_or_class_attribute_makes_the_code_again():
    w = rng.randn(_PARSER.N)
    g = strop.jit(grad(layers_of_a_closure_list))
    before = g(w)
    layer = _PREDICT.__closure__[0].cell_contents[1]   # the _Scaled layer
    table = layer.parser.idxs_and_shapes
    saved = table["biases"]
    try:
        table["biases"] = (slice(saved[0].start - 2, saved[0].stop - 2), saved[1])
        check_grad(layers_of_a_closure_list, w)
        assert not np.allclose(g(w), before)
    finally:
        table["biases"] = saved
    try:
        _Scaled.scale = 2.0
        check_grad(layers_of_a_closure_list, w)
        np.testing.assert_allclose(g(w), grad(layers_of_a_closure_list)(w), rtol=1e-12)
        assert not np.allclose(g(w), before)
    finally:
        _Scaled.scale = 0.5
    np.testing.assert_allclose(g(w), before, rtol=1e-12)
