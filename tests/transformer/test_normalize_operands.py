"""Normalization of the operands Python reads as sequences: comprehensions rebinding the name
they walk, lists and tuples given to NumPy functions and operators.  Oracles: the function run
as Python, central differences, a loop over the batch."""
import numpy as np
import pytest

import strop
from helpers import check_grad, numeric_vjp, x64_fixture

x64 = pytest.fixture(autouse=True)(x64_fixture)


def test_comprehension_reads_the_name_it_rebinds():
    def f(x):
        idx = [0, 2]
        idx = [x[i] * 2 for i in idx]
        scale = [1.0, 3.0]
        scale = [s * x[1] for s in scale]
        return idx[0] * scale[1] + idx[1] * scale[0]
    x = np.array([0.5, 1.5, 2.5])
    assert strop.jit(f, backend="python")(x) == pytest.approx(f(x))
    check_grad(f, x)
