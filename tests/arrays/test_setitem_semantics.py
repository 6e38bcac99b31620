"""setitem follows NumPy: the same statement on a NumPy array and on a
DeviceArray gives the same contents, or the same exception type."""

import numpy as np
import pytest

import pygpu
from pygpu import cuda

CASES = [
    ("int32", "x[0] = np.int64(2**40)"),
    ("int32", "x[0] = 2**40"),
    ("int32", "x[0] = -2**31"),
    ("int32", "x[...] = 7"),
    ("int32", "x[1:] = 2.75"),
    ("int32", "x[:, 0] = np.array([1.9, -1.9, 3.5])"),
    ("uint8", "x[0] = -1"),
    ("uint8", "x[0] = 255"),
    ("float32", "x[0] = np.float64(0.1)"),
    ("float32", "x[...] = np.arange(4)"),
    ("float32", "x[:] = [[1, 2, 3, 4]]"),
    ("float64", "x[:, 1:3] = np.array([[1.5], [2.5], [3.5]])"),
    ("float64", "x[0] = np.zeros(5)"),
    ("float64", "x[...] = x.T"),
    ("complex128", "x[1] = 1 + 2j"),
    ("float64", "x[0, 0] = 1 + 2j"),
    ("bool", "x[...] = np.array([0, 2, 0, 1])"),
    ("int64", "x[2] = np.uint64(2**63)"),
    ("float16", "x[...] = 70000.0"),
    ("float64", "x[...] = 'abc'"),
]


def run(stmt, x):
    try:
        exec(stmt, {"x": x, "np": np})
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return type(e)
    return None


@pytest.mark.parametrize("dtype, stmt", CASES)
def test_setitem_gives_numpys_answer_or_numpys_error(rng, dtype, stmt):
    h = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    d = cuda.to_device(h)
    with np.errstate(all="ignore"):
        expected_error = run(stmt, h)
    with np.errstate(all="ignore"):
        got_error = run(stmt, d)
    if expected_error is None:
        assert got_error is None
        np.testing.assert_array_equal(d.copy_to_host(), h)
    else:
        assert got_error is not None and issubclass(got_error, expected_error), \
            (got_error, expected_error)


def test_setitem_from_a_device_array_of_another_dtype_casts(rng):
    h = rng.standard_normal((4, 5)) * 5
    d = cuda.to_device(np.zeros((4, 5), np.int16))
    d[...] = cuda.to_device(h)
    np.testing.assert_array_equal(d.copy_to_host(), h.astype(np.int16))


def test_setitem_broadcasts_a_device_row(rng):
    row = rng.standard_normal(6)
    d = cuda.to_device(np.zeros((5, 6)))
    d[...] = cuda.to_device(row)
    np.testing.assert_array_equal(d.copy_to_host(), np.broadcast_to(row, (5, 6)))
    with pytest.raises(ValueError, match="could not broadcast"):
        d[...] = cuda.to_device(np.zeros(5))


def test_a_host_mask_follows_numpys_rules_for_a_mask():
    x = pygpu.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match="0 or 1-dimensional input"):
        x[np.zeros((2, 3), bool)] = np.full((1, 1), 9.0)
    m = np.array([[True, False, True], [False, False, True]])
    x[m] = np.array([7.0, 8.0, 9.0])
    h = np.arange(6.0).reshape(2, 3)
    h[m] = np.array([7.0, 8.0, 9.0])
    np.testing.assert_array_equal(x.copy_to_host(), h)


def test_a_device_value_with_leading_unit_axes_assigns_as_numpys():
    x = pygpu.zeros((2, 3))
    x[0] = pygpu.asarray(np.ones((1, 1, 3)))
    x[1:] = pygpu.asarray(np.full((1, 1, 1, 3), 2.0))
    assert x.copy_to_host().tolist() == [[1.0] * 3, [2.0] * 3]
    with pytest.raises(ValueError, match="could not broadcast"):
        x[0] = pygpu.asarray(np.ones((2, 1, 3)))
