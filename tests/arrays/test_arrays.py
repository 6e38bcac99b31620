"""DeviceArray: creation, attributes, dtypes, views, reshape, errors."""

import numpy as np
import pytest
from conftest import ON_SIMULATOR, random_array

import pygpu
from pygpu import cuda

ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (2, 3, 4), (0,), (4, 0, 2)])
def test_round_trip_every_dtype_and_shape(rng, dtype, shape):
    a = random_array(rng, shape, dtype)
    d = cuda.to_device(a)
    assert d.shape == a.shape
    assert d.dtype == a.dtype
    assert d.size == a.size
    assert d.nbytes == a.nbytes
    assert d.ndim == a.ndim
    assert d.itemsize == a.itemsize
    if a.size:
        assert d.strides == a.strides
    back = d.copy_to_host()
    assert back.dtype == a.dtype and back.shape == a.shape
    np.testing.assert_array_equal(back, a)


def test_attributes_of_a_new_array():
    d = pygpu.empty((3, 4), dtype=np.float32)
    assert d.shape == (3, 4)
    assert d.strides == (16, 4)
    assert d.dtype == np.float32
    assert d.flags["C_CONTIGUOUS"] and not d.flags["F_CONTIGUOUS"] and d.flags["OWNDATA"]
    assert d.is_c_contiguous() and not d.is_f_contiguous()
    assert d.base is None
    assert isinstance(d.ptr, int) and d.ptr != 0
    assert d.device == cuda.gpus[0]
    f = pygpu.empty((3, 4), dtype=np.float32, order="F")
    assert f.strides == (4, 12) and f.is_f_contiguous() and not f.is_c_contiguous()
    assert len(d) == 3
    with pytest.raises(TypeError, match="unsized"):
        len(pygpu.empty(()))


def test_repr_shows_shape_dtype_device_without_data():
    d = pygpu.zeros((1000, 1000), dtype=np.float32)
    r = repr(d)
    assert "shape=(1000, 1000)" in r and "dtype=float32" in r and "device=0" in r
    assert len(r) < 120
    assert ("simulated" in r) == ON_SIMULATOR


def test_constructors(rng):
    np.testing.assert_array_equal(pygpu.zeros((2, 3)).copy_to_host(), np.zeros((2, 3)))
    np.testing.assert_array_equal(pygpu.ones(5, dtype=np.int32).copy_to_host(),
                                  np.ones(5, np.int32))
    assert pygpu.ones(2).dtype == np.float64
    assert pygpu.empty(3).dtype == np.float64
    f = pygpu.full((2, 2), 2.5, dtype=np.float32)
    np.testing.assert_array_equal(f.copy_to_host(), np.full((2, 2), 2.5, np.float32))
    assert pygpu.full(3, 7).dtype == np.full(3, 7).dtype
    assert pygpu.full(3, 1.5).dtype == np.float64
    c = pygpu.full(4, 1 + 2j, dtype=np.complex128)
    np.testing.assert_array_equal(c.copy_to_host(), np.full(4, 1 + 2j))
    x = random_array(rng, (3, 4), np.float32)
    d = pygpu.asarray(x)
    assert pygpu.asarray(d) is d
    d64 = pygpu.asarray(d, dtype=np.float64)
    assert d64.dtype == np.float64
    np.testing.assert_array_equal(d64.copy_to_host(), x.astype(np.float64))
    np.testing.assert_array_equal(pygpu.asarray([[1, 2], [3, 4]]).copy_to_host(),
                                  np.array([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(pygpu.asnumpy(d), x)
    like = cuda.device_array_like(d)
    assert like.shape == d.shape and like.dtype == d.dtype
    like_h = cuda.device_array_like(np.asfortranarray(x))
    assert like_h.is_f_contiguous()
    da = cuda.device_array((2, 5), dtype=np.int16)
    assert da.shape == (2, 5) and da.dtype == np.int16
    z = pygpu.zeros_like(d)
    np.testing.assert_array_equal(z.copy_to_host(), np.zeros_like(x))
    o = pygpu.ones_like(d)
    np.testing.assert_array_equal(o.copy_to_host(), np.ones_like(x))
    e = pygpu.DeviceArray((2, 2), np.int8)
    assert e.shape == (2, 2) and e.dtype == np.int8


def test_non_native_byte_order_is_converted(rng):
    x = random_array(rng, 6, ">f4")
    d = cuda.to_device(x)
    assert d.dtype == np.dtype("=f4")
    np.testing.assert_array_equal(d.copy_to_host(), x.astype("=f4"))


@pytest.mark.parametrize("bad", [np.array(["a", "b"]), np.array([object(), 1], dtype=object),
                                 np.zeros(3, dtype="datetime64[s]"),
                                 np.zeros(3, dtype=[("a", "i4")]), np.zeros(2, np.longdouble)])
def test_unsupported_dtypes_raise_type_error(bad):
    with pytest.raises(TypeError, match="does not support dtype"):
        cuda.to_device(bad)


def test_bad_shapes_and_arguments():
    with pytest.raises(ValueError, match="negative dimensions"):
        pygpu.empty((2, -1))
    with pytest.raises(ValueError, match="too big"):
        pygpu.empty((2**40, 2**40))
    with pytest.raises(ValueError, match="too large"):
        pygpu.empty(2**70)
    with pytest.raises(TypeError, match="shape must be"):
        pygpu.empty("3")
    with pytest.raises(TypeError, match="shape must be"):
        pygpu.empty((2, 1.5))
    with pytest.raises(TypeError, match="shape must be"):
        pygpu.zeros(None)
    with pytest.raises(TypeError):
        pygpu.empty((2, True))
    with pytest.raises(TypeError, match="does not support dtype"):
        pygpu.zeros(3, dtype=object)
    with pytest.raises(TypeError):
        pygpu.zeros(3, dtype="not a dtype")
    with pytest.raises(ValueError, match="order must be"):
        pygpu.empty(3, order="K")
    with pytest.raises(ValueError, match="at most"):
        pygpu.empty((1,) * 33)
    with pytest.raises(TypeError, match="unexpected keyword"):
        pygpu.empty(3, colour="red")
    with pytest.raises(TypeError, match="missing required"):
        pygpu.full(3)
    with pytest.raises(ValueError, match="scalar"):
        pygpu.full(3, [1, 2, 3])


def test_array_protocol_refuses_silent_copies():
    d = pygpu.zeros(3)
    with pytest.raises(TypeError, match="copy_to_host"):
        np.asarray(d)
    with pytest.raises(TypeError, match="asnumpy"):
        np.array(d)


def test_scalar_conversions_as_numpy_2():
    # float(), int(), complex() take 0-d arrays only (NumPy 2); bool() and
    # item() take any size-1 array (tests/ops/test_operator_input.py has the rest)
    d = cuda.to_device(np.array([[2.5]]))
    assert float(d[0, 0]) == 2.5
    assert int(d[0, 0]) == 2
    assert bool(d) is True
    assert d.item() == 2.5
    assert d[0, 0].item() == 2.5
    for convert in (float, int, complex):
        with pytest.raises(TypeError, match="only 0-dimensional arrays"):
            convert(d)
        with pytest.raises(TypeError, match="only 0-dimensional arrays"):
            convert(pygpu.zeros(3))
    with pytest.raises(ValueError, match="truth value of an array with more than one"):
        bool(pygpu.zeros(2))
    with pytest.raises(ValueError, match="truth value of an empty array"):
        bool(pygpu.zeros(0))


BASIC_KEYS = [
    0, -1, 2, slice(None), slice(1, 4), slice(None, None, 2), slice(None, None, -1),
    slice(5, 1, -2), (1, 2), (slice(None), 1), (Ellipsis, 0), (0, Ellipsis), (None, 1),
    (slice(None), None, slice(1, 3)), (-1, -1, -1), (slice(1, 1),), Ellipsis,
    (slice(None, None, 3), slice(None, None, -2), 1), np.int64(3), (np.int32(1), slice(2)),
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test_basic_indexing_matches_numpy_and_shares_memory(rng, key):
    x = random_array(rng, (6, 5, 4), np.float64)
    d = cuda.to_device(x)
    v = d[key]
    expected = x[key]
    assert isinstance(v, pygpu.DeviceArray)
    assert v.shape == np.shape(expected)
    assert v.strides == np.asarray(expected).strides or v.size <= 1
    np.testing.assert_array_equal(v.copy_to_host(), expected)
    assert v.base is d
    if v.size:
        v.copy_to_device(np.full(v.shape, 123.0))
        x2 = x.copy()
        x2[key] = 123.0
        np.testing.assert_array_equal(d.copy_to_host(), x2)


def test_views_of_views_keep_the_owner_alive(rng):
    x = random_array(rng, (8, 8), np.int32)
    d = cuda.to_device(x)
    v = d[1:][:, ::2][2]
    assert v.base is d
    del d
    np.testing.assert_array_equal(v.copy_to_host(), x[1:][:, ::2][2])


@pytest.mark.parametrize("key", [1.5, "a"], ids=repr)
def test_keys_that_are_not_indices_are_refused_as_numpy_refuses_them(key):
    # (integer arrays and masks: tests/arrays/test_advanced_indexing.py)
    d = pygpu.zeros(6)
    with pytest.raises(IndexError, match="only integers, slices"):
        d[key]


def test_out_of_bounds_index_raises_index_error():
    d = pygpu.zeros((3, 4))
    with pytest.raises(IndexError):
        d[3]
    with pytest.raises(IndexError):
        d[0, 0, 0]
    with pytest.raises(IndexError):
        d[:, -5]


def test_setitem_with_scalars_arrays_and_device_arrays(rng):
    x = random_array(rng, (5, 6), np.float32)
    d = cuda.to_device(x)
    d[1] = 7
    x[1] = 7
    d[:, 2] = np.arange(5, dtype=np.float32)
    x[:, 2] = np.arange(5)
    src = random_array(rng, (2, 3), np.float32)
    d[3:, ::2] = cuda.to_device(src)
    x[3:, ::2] = src
    d[0, 0] = 1.25
    x[0, 0] = 1.25
    np.testing.assert_array_equal(d.copy_to_host(), x)
    # NumPy's rules: broadcasting, casting, and NumPy's own refusal
    with pytest.raises(ValueError, match="could not broadcast"):
        d[0] = np.zeros(5, np.float32)
    d[0] = np.arange(6, dtype=np.float64) / 3
    x[0] = np.arange(6, dtype=np.float64) / 3
    d[1:3] = cuda.to_device(np.arange(6.0))
    x[1:3] = np.arange(6.0)
    np.testing.assert_array_equal(d.copy_to_host(), x)
    with pytest.raises(TypeError, match="delete"):
        del d[0]


@pytest.mark.parametrize("shape,new", [((12,), (3, 4)), ((3, 4), (4, 3)), ((3, 4), (-1,)),
                                       ((2, 3, 4), (6, -1)), ((3, 4), (2, 2, 3)),
                                       ((0, 4), (4, 0)), ((1,), ()), ((), (1, 1))])
@pytest.mark.parametrize("order", ["C", "F"])
def test_reshape_matches_numpy(rng, shape, new, order):
    x = random_array(rng, shape, np.float32)
    d = cuda.to_device(x)
    r = d.reshape(new, order=order)
    np.testing.assert_array_equal(r.copy_to_host(), x.reshape(new, order=order))


def test_reshape_of_a_strided_view_copies_only_when_needed(rng):
    x = random_array(rng, (4, 6), np.float64)
    d = cuda.to_device(x)
    t = d.T
    assert t.shape == (6, 4) and t.base is d
    r = t.reshape(24)
    np.testing.assert_array_equal(r.copy_to_host(), x.T.reshape(24))
    assert r.base is not d  # needed a copy
    rows = d[1:3]
    r2 = rows.reshape(2, 2, 3)
    assert r2.base is d  # a view
    np.testing.assert_array_equal(r2.copy_to_host(), x[1:3].reshape(2, 2, 3))
    np.testing.assert_array_equal(d.reshape(3, 8).copy_to_host(), x.reshape(3, 8))
    np.testing.assert_array_equal(d.reshape((2, 12)).copy_to_host(), x.reshape((2, 12)))
    np.testing.assert_array_equal(d.ravel().copy_to_host(), x.ravel())
    np.testing.assert_array_equal(d.T.ravel().copy_to_host(), x.T.ravel())
    np.testing.assert_array_equal(d.ravel("F").copy_to_host(), x.ravel("F"))
    with pytest.raises(ValueError):
        d.reshape(5, 5)
    with pytest.raises(ValueError):
        t.reshape(7, 3)
    with pytest.raises(TypeError):
        d.reshape("a")


def test_transpose_and_copy(rng):
    x = random_array(rng, (2, 3, 4), np.int64)
    d = cuda.to_device(x)
    np.testing.assert_array_equal(d.transpose(1, 0, 2).copy_to_host(), x.transpose(1, 0, 2))
    np.testing.assert_array_equal(d.transpose((2, 0, 1)).copy_to_host(), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(d.T.copy_to_host(), x.T)
    c = d.T.copy()
    assert c.is_c_contiguous() and c.base is None
    np.testing.assert_array_equal(c.copy_to_host(), x.T)
    cf = d.copy(order="F")
    assert cf.is_f_contiguous()
    np.testing.assert_array_equal(cf.copy_to_host(), x)
    c2 = d.copy()
    c2[0] = 0
    np.testing.assert_array_equal(d.copy_to_host(), x)  # a real copy
    with pytest.raises(ValueError):
        d.transpose(0, 0, 1)


def test_iteration_gives_rows(rng):
    x = random_array(rng, (3, 2), np.float32)
    rows = [r.copy_to_host() for r in cuda.to_device(x)]
    assert len(rows) == 3
    for r, e in zip(rows, x, strict=True):
        np.testing.assert_array_equal(r, e)


def test_numpy_functions_run_where_they_only_use_methods_and_name_themselves_where_not():
    d = pygpu.asarray(np.arange(6.0).reshape(2, 3))
    assert np.transpose(d).shape == (3, 2) and np.shape(d) == (2, 3) and np.ndim(d) == 2
    # np.sum calls d.sum (tests/ops/test_reductions.py), on the device
    assert isinstance(np.sum(d), pygpu.DeviceArray) and float(np.sum(d)) == 15.0
    with pytest.raises(TypeError, match="numpy.interp is a NumPy function that "
                       "pygpu.DeviceArray does not support.*pygpu.asnumpy"):
        np.interp(d, d, d)
    with pytest.raises(TypeError, match="numpy.convolve is a NumPy function"):
        np.convolve(d.reshape(-1), d.reshape(-1))
