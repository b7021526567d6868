"""Views of arrays in GPU memory: a transpose, a broadcast, a basic slice or a diagonal is an
offset and a stride per axis into a DeviceArray's elements (``Strided``), made without a
kernel; the kernels of ops.py read a view where it lies.
"""
import dataclasses

import numpy as np

from .arrays import DeviceArray


@dataclasses.dataclass(frozen=True)
class Strided:
    """A view of a DeviceArray's elements: element ``i`` (a multi-index) of ``shape`` at
    ``offset + sum(i * strides)`` of its flat data (strides in elements, 0 to broadcast)."""
    base: DeviceArray
    offset: int
    shape: tuple
    strides: tuple

    dtype = property(lambda self: self.base.dtype)
    device = property(lambda self: self.base.device)


def strided(x):
    """``x`` (a DeviceArray or Strided) as a Strided view."""
    if isinstance(x, Strided):
        return x
    return Strided(x, 0, x.shape, c_strides(x.shape))


def c_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def broadcast_to(x, shape):
    view = strided(x)
    shape = tuple(shape)
    pad = len(shape) - len(view.shape)
    if pad < 0 or any(n != m and n != 1 for n, m in zip(view.shape, shape[pad:])):
        raise ValueError(f"cannot broadcast an array of shape {view.shape} to {shape}")
    return Strided(view.base, view.offset, shape, (0,) * pad + tuple(
        0 if n != m else s for n, m, s in zip(view.shape, shape[pad:], view.strides)))


def transpose(x, axes=None):
    view = strided(x)
    axes = tuple(reversed(range(len(view.shape)))) if axes is None else \
        tuple(a % len(view.shape) for a in axes)
    return Strided(view.base, view.offset, tuple(view.shape[a] for a in axes),
                   tuple(view.strides[a] for a in axes))


def basic(index):
    """Whether ``index`` is NumPy's basic indexing: numbers, slices, None and Ellipsis."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(i, (int, np.integer, slice, type(None), type(Ellipsis))) and
               not isinstance(i, bool) for i in parts)


def getitem(x, index):
    """``x[index]`` for a basic index (numbers, slices, None, ...) as a Strided view, or None
    for another kind of index (arrays: the caller gathers on the host)."""
    if not basic(index):
        return None
    index = index if isinstance(index, tuple) else (index,)
    view = strided(x)
    if sum(i is Ellipsis for i in index) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(i is not None and i is not Ellipsis for i in index)
    if used > len(view.shape):
        raise IndexError(f"too many indices for array: array is {len(view.shape)}-dimensional, "
                         f"but {used} were indexed")
    if Ellipsis in index:
        at = index.index(Ellipsis)
        index = index[:at] + (slice(None),) * (len(view.shape) - used) + index[at + 1:]
    else:
        index = index + (slice(None),) * (len(view.shape) - used)
    offset, shape, strides, axis = view.offset, [], [], 0
    for i in index:
        if i is None:
            shape.append(1)
            strides.append(0)
            continue
        n, s = view.shape[axis], view.strides[axis]
        axis += 1
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            shape.append(len(range(start, stop, step)))
            strides.append(s * step)
            offset += start * s
        else:
            if not -n <= i < n:
                raise IndexError(f"index {int(i)} is out of bounds for axis {axis - 1} with "
                                 f"size {n}")
            offset += (int(i) % n) * s
    return Strided(view.base, offset, tuple(shape), tuple(strides))


def diagonal(x, offset=0, axis1=0, axis2=1):
    """NumPy's ``np.diagonal`` of ``x`` as a Strided view: the two axes gone, the diagonal
    last."""
    view = strided(x)
    ndim = len(view.shape)
    a1, a2 = axis1 % ndim, axis2 % ndim
    rest = [d for d in range(ndim) if d not in (a1, a2)]
    row, col = max(-offset, 0), max(offset, 0)
    n = max(0, min(view.shape[a1] - row, view.shape[a2] - col))
    return Strided(view.base, view.offset + row * view.strides[a1] + col * view.strides[a2],
                   tuple(view.shape[d] for d in rest) + (n,),
                   tuple(view.strides[d] for d in rest) + (view.strides[a1] + view.strides[a2],))


def reshape_view(view, shape):
    """A view of the same elements in another shape where only axes of length 1 differ."""
    view = strided(view)
    if tuple(shape) == view.shape:
        return view
    real = [(n, s) for n, s in zip(view.shape, view.strides) if n != 1]
    it = iter(real)
    strides = tuple(0 if n == 1 else next(it)[1] for n in shape)
    return Strided(view.base, view.offset, tuple(shape), strides)
