"""strop.lax's cases checked against JAX: each written once, for a ``lax`` and an ``np`` given
(jax.lax and jax.numpy when tests/data/make_lax_reference.py computes the reference values,
strop.lax and numpy in tests/test_lax.py).

``cases(lax, np)`` maps a name to (function, arguments, what to compare): "value" (the
output), "grad" (of a scalar output, in argument 0), "vmap" (over the leading axis of every
argument).  Arguments are float64 (both sides run with 64-bit types enabled).
"""
import numpy


def cases(lax, np):
    A = numpy.arange(12.).reshape(4, 3) / 10
    rng = numpy.random.default_rng(0)
    W = rng.standard_normal((4, 4)) * 0.5
    XS = rng.standard_normal((6, 4))

    def cond_true(x):
        return lax.cond(True, lambda x: x, lambda x: -x, x)

    def cond_false(x):
        return lax.cond(False, lambda x: x, lambda x: -x, x)

    def cond_no_operands(x):
        return lax.cond(x > 0, lambda: 1., lambda: -1.) * x

    def cond_tree(x):
        out = lax.cond(x[0] > 0, lambda t: {"a": t[0] * 2., "b": t[1]},
                       lambda t: {"a": -t[0], "b": t[1] * 3.}, (x, x[1:]))
        return np.sum(out["a"]) + np.sum(out["b"] ** 2)

    def while_count(n):
        return lax.while_loop(lambda i: i < 10, lambda i: i + 1, n)

    def fori_sum(n):
        return lax.fori_loop(0, 10, lambda i, acc: acc + i, n)

    def fori_array(x):
        array = np.arange(10)
        return lax.fori_loop(0, 10, lambda i, acc: acc + array[i], x)

    def newton(a):
        def body(c):
            x, k = c
            return 0.5 * (x + a / x), k + 1
        return lax.while_loop(lambda c: np.abs(c[0] * c[0] - a) > 1e-9 * a, body, (a, 0))[0]

    def fori_bounds(x, n):
        return lax.fori_loop(n // 2, n, lambda i, acc: acc * x + np.sin(acc * i), 1.)

    def switch_clamped(i, x):
        return lax.switch(i, [lambda y: y * 2., lambda y: np.sin(y), lambda y: -y], x)

    def scan_cumsum(x):
        c, ys = lax.scan(lambda c, v: (c + v, c * v), 0., x)
        return c + np.sum(ys ** 2)

    def scan_reverse_tree(x):
        def step(c, v):
            a, b = v
            c = {"s": c["s"] + a * b, "p": c["p"] * np.cos(a)}
            return c, (c["s"], c["p"])
        c, (s, p) = lax.scan(step, {"s": 0., "p": 1.}, (x, x[::-1] + 1.), reverse=True)
        return c["s"] + c["p"] + np.sum(s * p)

    def scan_length(x):
        return lax.scan(lambda c, _: (c * x + 1., c), 1., None, length=5)[1]

    def rnn(w, xs):
        def cell(h, v):
            h = np.tanh(w @ h + v)
            return h, np.sum(h ** 2)
        h, ys = lax.scan(cell, np.zeros(4), xs)
        return np.sum(ys) + np.sum(h)

    def map_sin(x):
        return lax.map(lambda r: np.sin(r) * np.sum(r), x)

    def slices(x, i):
        return (lax.dynamic_slice(x, (i, i - 1), (2, 2)),
                lax.dynamic_slice_in_dim(x, i, 3, 0),
                lax.dynamic_index_in_dim(x, i, 1, keepdims=False),
                lax.dynamic_update_slice(x, np.ones((2, 2)), (i, -i)),
                lax.dynamic_update_slice_in_dim(x, np.zeros((4, 2)), i, 1),
                lax.dynamic_update_index_in_dim(x, np.full(3, 7.), i, 0))

    def slice_grad(x, i):
        return np.sum(lax.dynamic_slice(x, (i, 1), (2, 2)) ** 2) + np.sum(
            lax.dynamic_update_slice(x, x[:1, :2] * 3., (i, -1)) ** 3)

    def arrays(x):
        return (lax.select(x > 0.5, x, -x), lax.clamp(0.2, x, 0.7),
                lax.sort(x[::-1], 0), lax.sort((x[:, 0][::-1], x[:, 1]), num_keys=1),
                lax.broadcast(x[0], (2,)), lax.expand_dims(x[0], (0, 2)))

    def stop(x):
        return np.sum(x * lax.stop_gradient(x) + lax.stop_gradient(x ** 2))

    value = ("value",)
    out = {
        "cond_true": (cond_true, (numpy.array([1.]),), value),
        "cond_false": (cond_false, (numpy.array([1.]),), value),
        "cond_no_operands": (cond_no_operands, (-2.5,), ("value", "grad")),
        "cond_tree": (cond_tree, (numpy.array([0.5, 2., 3.]),), ("value", "grad")),
        "while_count": (while_count, (0,), value),
        "fori_sum": (fori_sum, (0,), value),
        "fori_array": (fori_array, (0,), value),
        "newton": (newton, (2.,), ("value", "grad")),
        "fori_bounds": (fori_bounds, (0.7, 7), ("value", "grad")),
        "scan_cumsum": (scan_cumsum, (numpy.arange(1., 5.) / 4,), ("value", "grad")),
        "scan_reverse_tree": (scan_reverse_tree, (numpy.linspace(0.1, 0.9, 5),),
                              ("value", "grad")),
        "scan_length": (scan_length, (0.5,), value),
        "rnn": (rnn, (W, XS), ("value", "grad")),
        "map_sin": (map_sin, (A,), value),
        "stop": (stop, (A,), ("value", "grad")),
        "arrays": (arrays, (A,), value),
        "slice_grad": (slice_grad, (A, 2), ("value", "grad")),
    }
    for i in (-5, -1, 0, 1, 2, 3, 9):
        out[f"slices_{i}"] = (slices, (A, i), value)
    for i in (-2, 0, 1, 2, 7):
        out[f"switch_{i}"] = (switch_clamped, (i, 1.5), value)
    # batched predicate, index, trip count and start indices
    out["vmap_cond"] = (cond_no_operands, (numpy.array([-2., 3.]),), ("vmap",))
    out["vmap_switch"] = (switch_clamped, (numpy.array([-1, 0, 1, 2, 5]), numpy.arange(5.)),
                          ("vmap",))
    out["vmap_fori"] = (fori_bounds, (numpy.array([0.7, 0.2, 0.9]), numpy.array([3, 6, 0])),
                        ("vmap",))
    out["vmap_newton"] = (newton, (numpy.array([2., 9., 0.5]),), ("vmap",))
    out["vmap_slice_grad"] = (slice_grad, (numpy.stack([A, A * 2, -A]),
                                           numpy.array([-1, 1, 5])), ("vmap",))
    return out
