"""DeviceArray's methods written in Python (pygpu/_ops/methods.py) and NumPy's
functions that reach pygpu through __array_function__ (NEP 18)."""

import numpy as np
import pytest

import pygpu
from pygpu._ops import methods


def test_every_python_method_is_a_device_array_method():
    for name in methods.METHODS:
        assert callable(getattr(pygpu.DeviceArray, name)), name
        assert f"numpy.ndarray.{name} on the device" in getattr(pygpu.DeviceArray, name).__doc__


def test_numpy_functions_call_the_methods(rng):
    x = rng.standard_normal((5, 7))
    d = pygpu.asarray(x)
    for f in (np.sum, np.prod, np.max, np.min, np.mean, np.var, np.std, np.argmax,
              np.argmin, np.any, np.all, np.cumsum, np.cumprod, np.ptp):
        got = f(d, axis=1)
        assert isinstance(got, pygpu.DeviceArray), f
        np.testing.assert_allclose(got.copy_to_host(), f(x, axis=1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.round(d, 2).copy_to_host(), np.round(x, 2))
    np.testing.assert_allclose(np.clip(d, -0.5, 0.5).copy_to_host(), np.clip(x, -0.5, 0.5))
    assert d.sum().shape == () and abs(float(d.sum()) - x.sum()) < 1e-12


def test_fill_tolist_squeeze(rng):
    x = rng.standard_normal((2, 1, 3)).astype(np.float32)
    d = pygpu.asarray(x)
    assert d.tolist() == x.tolist()
    assert d.squeeze().shape == (2, 3) and d.squeeze(1).shape == (2, 3)
    assert np.squeeze(d).shape == (2, 3)
    with pytest.raises(ValueError, match="size not equal to one"):
        d.squeeze(0)
    d.fill(2.5)
    np.testing.assert_array_equal(d.copy_to_host(), np.full_like(x, 2.5))
    i = pygpu.zeros(3, np.int8)
    i.fill(300 - 256)  # NumPy's fill casts
    assert i.tolist() == [44, 44, 44]


def test_like_functions_through_numpy(rng):
    d = pygpu.asarray(rng.standard_normal((2, 3)).astype(np.float32))
    for f, want in [(np.zeros_like, 0), (np.ones_like, 1), (lambda a, **k: np.full_like(a, 7, **k),
                                                             7)]:
        got = f(d)
        assert isinstance(got, pygpu.DeviceArray) and got.dtype == np.float32
        assert got.shape == (2, 3) and (got.copy_to_host() == want).all()
        got = f(d, shape=(4,), dtype=np.int16)
        assert got.shape == (4,) and got.dtype == np.int16
    assert np.empty_like(d).shape == (2, 3)


def test_boolean_mask_assignment_as_numpy(rng):
    x = rng.standard_normal((4, 5))
    for value in (np.nan, 0, -1.5):
        h = x.copy()
        d = pygpu.asarray(x)
        d[d > 0.2] = value
        h[h > 0.2] = value
        np.testing.assert_array_equal(d.copy_to_host(), h)
    d = pygpu.asarray(x)
    rows = np.array([True, False, True, False])
    d[pygpu.asarray(rows)] = pygpu.asarray(np.arange(5.0))  # broadcast over the rows
    h = x.copy()
    h[rows] = np.arange(5.0)
    np.testing.assert_array_equal(d.copy_to_host(), h)
    with pytest.raises(ValueError, match="cannot assign 3 input values"):
        d[d > -np.inf] = np.ones(3)
    with pytest.raises(ValueError, match="cannot assign 3 input values"):
        d[d > -np.inf] = pygpu.ones(3)


def test_allclose_array_equal_concatenate_stack(rng):
    x = rng.standard_normal((3, 4))
    d = pygpu.asarray(x)
    assert np.allclose(d, d + 1e-12) is True and np.allclose(d, d + 1) is False
    assert pygpu.allclose(d, d) is True
    assert np.array_equal(d, pygpu.asarray(x)) is True
    assert np.array_equal(d, d[:2]) is False
    n = pygpu.asarray(np.array([np.nan, 1.0]))
    assert np.array_equal(n, n) is False and np.array_equal(n, n, equal_nan=True) is True
    for axis in (0, 1, -1):
        np.testing.assert_array_equal(np.concatenate([d, d], axis=axis).copy_to_host(),
                                      np.concatenate([x, x], axis=axis))
    for axis in (0, 1, 2):
        np.testing.assert_array_equal(np.stack([d, d, d], axis=axis).copy_to_host(),
                                      np.stack([x, x, x], axis=axis))
    with pytest.raises(ValueError, match="same shape"):
        np.stack([d, d[:2]])


def test_unsupported_numpy_functions_still_say_so():
    d = pygpu.asarray(np.arange(4.0))
    with pytest.raises(TypeError, match="numpy.convolve is a NumPy function that pygpu"):
        np.convolve(d, d)
