import numpy as np
import pytest

from helpers import check_rule

rng = np.random.default_rng(1)
SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)), ((4, 3), ())]


@pytest.mark.parametrize("fn", [np.add, np.subtract, np.multiply, np.true_divide, np.divide])
@pytest.mark.parametrize("shapes", SHAPES)
def test_binary(fn, shapes):
    x, y = (rng.standard_normal(s) + 3.0 for s in shapes)
    check_rule(fn, x, y)


@pytest.mark.parametrize("shapes", SHAPES)
def test_power_and_mod(shapes):
    x, y = (rng.uniform(0.5, 2.0, s) for s in shapes)
    check_rule(np.power, x, y)
    check_rule(np.mod, x * 3, y)


@pytest.mark.parametrize("xs,ys", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                   ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4))])
def test_matmul(xs, ys):
    check_rule(np.matmul, rng.standard_normal(xs), rng.standard_normal(ys))


def test_unary():
    x = rng.standard_normal((2, 3))
    check_rule(np.negative, x)
    check_rule(np.positive, x)
    check_rule(abs, x)
