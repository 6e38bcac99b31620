"""Overlapping source and destination: NumPy copies as if through a buffer,
and so must pygpu (on a GPU an in-place overlapping copy is also a race)."""

import numpy as np
import pytest

from pygpu import cuda

SETITEMS = [
    "x[:] = x[::-1]",
    "x[...] = x[::-1, ::-1]",
    "x[:, 1:] = x[:, :-1]",
    "x[:, :-1] = x[:, 1:]",
    "x[1:] = x[:-1]",
    "x[:-1] = x[1:]",
    "x[:6:2] = x[1::2]",
    "x[1:3, 2:5] = x[0:2, 0:3]",
    "x[:] = x",
]


@pytest.mark.parametrize("stmt", SETITEMS)
def test_setitem_from_an_overlapping_view_of_the_same_array(rng, stmt):
    h = rng.standard_normal((7, 9))
    x = cuda.to_device(h)
    exec(stmt, {"x": x})
    expected = h.copy()
    exec(stmt, {"x": expected})
    np.testing.assert_array_equal(x.copy_to_host(), expected)


def test_setitem_from_the_transpose_of_a_square_array(rng):
    h = rng.standard_normal((33, 33))
    x = cuda.to_device(h)
    x[...] = x.T
    np.testing.assert_array_equal(x.copy_to_host(), h.T)


def test_copy_to_device_from_a_view_of_the_same_buffer(rng):
    h = rng.standard_normal((5, 6))
    x = cuda.to_device(h)
    x.copy_to_device(x[::-1])
    np.testing.assert_array_equal(x.copy_to_host(), h[::-1])
    y = cuda.to_device(h)
    cuda.to_device(y[:, ::-1], to=y)
    np.testing.assert_array_equal(y.copy_to_host(), h[:, ::-1])


def test_large_shifted_copy_in_place(rng):
    h = rng.standard_normal(1 << 20)
    x = cuda.to_device(h)
    x[1:] = x[:-1]
    expected = h.copy()
    expected[1:] = h[:-1]
    np.testing.assert_array_equal(x.copy_to_host(), expected)
