"""pygpu as an array API namespace (2024.12): the dtypes, the inspection
namespace, the data type functions, asarray/from_dlpack/astype/to_device with
the standard's copy= and device=, the standard's names for NumPy's functions,
and bad input (devices that do not exist, DLPack streams, CAI pointers)."""

import numpy as np
import pytest
from conftest import random_array

import pygpu

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128"]
NUMERIC = DTYPES[1:]
TWO_DEVICES = len(pygpu.__array_namespace_info__().devices()) >= 2
two_devices = pytest.mark.skipif(not TWO_DEVICES, reason="needs two (simulated) devices")


# ---- the namespace and its dtypes ---------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
def test_dtypes_are_numpys_and_compare_equal_to_array_dtypes(name, rng):
    t = getattr(pygpu, name)
    assert t is getattr(np, name)
    d = pygpu.asarray(random_array(rng, (3,), name))
    assert d.dtype == t and pygpu.zeros(2, t).dtype == t
    assert name in pygpu.__all__


def test_version_and_array_namespace():
    d = pygpu.zeros(3)
    assert pygpu.__array_api_version__ == "2024.12"
    assert d.__array_namespace__() is pygpu
    assert d.__array_namespace__(api_version="2023.12") is pygpu
    with pytest.raises(ValueError, match="2099.12"):
        d.__array_namespace__(api_version="2099.12")
    assert (pygpu.e, pygpu.pi, pygpu.inf) == (np.e, np.pi, np.inf)
    assert np.isnan(pygpu.nan) and pygpu.newaxis is None


def test_namespace_info():
    info = pygpu.__array_namespace_info__()
    caps = info.capabilities()
    assert set(caps) >= {"boolean indexing", "data-dependent shapes", "max dimensions"}
    assert caps["max dimensions"] == pygpu._core.MAXDIMS
    devices = info.devices()
    assert isinstance(devices, list) and devices == [pygpu.Device(i)
                                                      for i in range(len(devices))]
    assert info.default_device() in devices
    assert info.default_dtypes() == {"real floating": np.float64,
                                     "complex floating": np.complex128,
                                     "integral": np.int64, "indexing": np.int64}
    assert list(info.dtypes()) == DTYPES
    assert list(info.dtypes(kind="integral")) == DTYPES[1:9]
    assert list(info.dtypes(kind=("bool", "complex floating"))) == ["bool", "complex64",
                                                                    "complex128"]
    assert list(info.dtypes(kind="numeric", device=devices[-1])) == NUMERIC
    with pytest.raises(ValueError, match="kind"):
        info.dtypes(kind="floating")
    with pytest.raises(ValueError, match=rf"device {len(devices)} does not exist: there "
                       rf"(is|are) {len(devices)} devices? \(ids 0 to {len(devices) - 1}\)"):
        info.dtypes(device=len(devices))


# ---- data type functions -----------------------------------------------------------------

def test_isdtype_result_type_can_cast():
    assert pygpu.isdtype(pygpu.int8, "signed integer")
    assert pygpu.isdtype(np.dtype("uint16"), ("bool", "integral"))
    assert not pygpu.isdtype(pygpu.float32, "complex floating")
    d8, f32 = pygpu.zeros(2, "int8"), pygpu.zeros(2, "float32")
    assert pygpu.result_type(d8, pygpu.int16) == np.int16
    assert pygpu.result_type(f32, 1.5) == np.float32  # a Python scalar takes the array's
    assert pygpu.result_type(d8, pygpu.uint8) == np.int16
    assert pygpu.result_type(pygpu.complex64, pygpu.float64) == np.complex128
    with pytest.raises(ValueError):
        pygpu.result_type()
    with pytest.raises(TypeError, match="scalar"):
        pygpu.result_type(1, 2.0)
    assert pygpu.can_cast(d8, pygpu.int16) and not pygpu.can_cast(f32, pygpu.int64)
    assert not pygpu.can_cast(pygpu.int64, pygpu.uint64)
    with pytest.raises(TypeError, match="list"):
        pygpu.can_cast([1], pygpu.int8)


@pytest.mark.parametrize("name", ["float32", "float64", "complex64", "complex128"])
def test_finfo(name):
    fi, ref = pygpu.finfo(getattr(pygpu, name)), np.finfo(name)
    for attr in ("eps", "max", "min", "smallest_normal"):
        assert type(getattr(fi, attr)) is float and getattr(fi, attr) == getattr(ref, attr)
    assert fi.bits == ref.bits and fi.dtype == ref.dtype
    assert pygpu.finfo(pygpu.zeros(1, name)).eps == fi.eps


@pytest.mark.parametrize("name", DTYPES[1:9])
def test_iinfo(name):
    ii, ref = pygpu.iinfo(getattr(pygpu, name)), np.iinfo(name)
    assert (type(ii.max), ii.max, ii.min, ii.bits) == (int, ref.max, ref.min, ref.bits)
    assert ii.dtype == np.dtype(name)


def test_finfo_iinfo_refuse_other_kinds():
    with pytest.raises(ValueError, match="int32"):
        pygpu.finfo(pygpu.int32)
    with pytest.raises(ValueError, match="float32"):
        pygpu.iinfo(pygpu.float32)
    with pytest.raises(TypeError):
        pygpu.finfo("not a dtype")


@pytest.mark.parametrize("src", DTYPES)
def test_astype_copy_keyword(src, rng):
    h = random_array(rng, (5, 3), src)[::-1, ::2]
    d = pygpu.asarray(h)
    same = pygpu.astype(d, d.dtype, copy=False)
    assert same is d
    fresh = pygpu.astype(d, d.dtype)
    assert fresh is not d and fresh.ptr != d.ptr
    np.testing.assert_array_equal(fresh.copy_to_host(), h)
    for dst in ("float64", "int32", "bool", "complex64"):
        if np.dtype(src).kind == "c" and np.dtype(dst).kind != "c":
            continue  # NumPy warns and drops the imaginary part
        got = pygpu.astype(d, getattr(pygpu, dst), copy=False)
        assert got.dtype == np.dtype(dst)
        np.testing.assert_array_equal(got.copy_to_host(), h.astype(dst))
    with pytest.raises(ValueError, match="copy"):
        pygpu.astype(d, pygpu.int8, copy=None)


def test_astype_refuses_host_arrays_and_bad_devices():
    with pytest.raises(TypeError, match="host"):
        pygpu.astype(np.zeros(3), pygpu.int8)
    with pytest.raises(ValueError, match="device 99 does not exist"):
        pygpu.astype(pygpu.zeros(3), pygpu.int8, device=99)


# ---- asarray, from_dlpack, to_device -------------------------------------------------------

def test_asarray_copy_keyword(rng):
    h = random_array(rng, (4, 3), "float32")
    d = pygpu.asarray(h)
    assert pygpu.asarray(d) is d and pygpu.asarray(d, copy=False) is d
    assert pygpu.asarray(d, dtype=pygpu.float32, copy=False) is d
    c = pygpu.asarray(d[:, ::-1], copy=True)
    c += 1
    np.testing.assert_array_equal(d.copy_to_host(), h)  # the copy is its own memory
    np.testing.assert_array_equal(c.copy_to_host(), h[:, ::-1] + 1)
    with pytest.raises(ValueError, match="copy=False"):
        pygpu.asarray(h, copy=False)  # host data cannot reach the device without one
    with pytest.raises(ValueError, match="dtype float64 needs a copy"):
        pygpu.asarray(d, dtype=pygpu.float64, copy=False)
    got = pygpu.asarray(d, dtype=pygpu.float64, copy=None)
    np.testing.assert_array_equal(got.copy_to_host(), h.astype(np.float64))
    with pytest.raises(ValueError, match="copy"):
        pygpu.asarray(d, copy="yes")


@pytest.mark.parametrize("obj, dtype", [
    (True, np.bool_), (3, np.int64), (2.5, np.float64), (1 - 2j, np.complex128),
    ([[1, 2], [3, 4]], np.int64), ([1.5, 2], np.float64), ([], np.float64),
    ([True, False], np.bool_)])
def test_asarray_python_scalars_and_sequences(obj, dtype):
    d = pygpu.asarray(obj, copy=True)
    assert d.dtype == dtype
    np.testing.assert_array_equal(d.copy_to_host(), np.asarray(obj))


def test_asarray_sequences_of_0d_arrays():
    parts = [pygpu.asarray(np.float32(v)) for v in (1.5, -2.0, 3.25)]
    d = pygpu.asarray(parts, copy=True)
    assert d.dtype == np.float32 and d.copy_to_host().tolist() == [1.5, -2.0, 3.25]
    d = pygpu.asarray([[pygpu.asarray(1), 2], [3, 4]], dtype=pygpu.uint8, copy=None)
    assert d.dtype == np.uint8 and d.copy_to_host().tolist() == [[1, 2], [3, 4]]


@pytest.mark.parametrize("device", [99, -1, "cuda:0", 1.0, True, object()])
def test_device_arguments_are_checked(device):
    d = pygpu.zeros(3)
    error = ValueError if isinstance(device, int) and not isinstance(device, bool) \
        else TypeError
    with pytest.raises(error, match="device"):
        pygpu.asarray([1, 2], device=device)
    with pytest.raises(error, match="device"):
        pygpu.asarray(d, device=device)
    with pytest.raises(error, match="device"):
        d.to_device(device)
    with pytest.raises(error, match="device"):
        pygpu.from_dlpack(d, device=device)
    with pytest.raises(error, match="device"):
        pygpu.get_memory_pool(device)
    for make in (lambda: pygpu.empty(2, device=device), lambda: pygpu.zeros(2, device=device),
                 lambda: pygpu.ones(2, device=device), lambda: pygpu.full(2, 1, device=device),
                 lambda: pygpu.zeros_like(d, device=device),
                 lambda: pygpu.full_like(d, 3, device=device)):
        with pytest.raises(error, match="device"):
            make()


@pytest.mark.parametrize("dtype", [None, "int8", "complex64"])
def test_creation_functions_take_device(dtype):
    dev = pygpu.__array_namespace_info__().devices()[-1]
    want = np.dtype("float64" if dtype is None else dtype)
    for d, value in ((pygpu.empty((2, 3), dtype, device=dev), None),
                     (pygpu.zeros((2, 3), dtype, device=dev), 0),
                     (pygpu.ones((2, 3), dtype=dtype, device=dev.id), 1),
                     (pygpu.full((2, 3), 7, dtype=want, device=dev), 7)):
        assert d.device == dev and d.dtype == want and d.shape == (2, 3)
        if value is not None:
            assert (d.copy_to_host() == value).all()
    x = pygpu.full((3,), 2.5, device=dev)
    for got, value in ((pygpu.empty_like(x, dtype=dtype), None), (pygpu.zeros_like(x), 0),
                       (pygpu.ones_like(x, dtype=dtype), 1), (pygpu.full_like(x, 4), 4)):
        assert got.device == dev and got.shape == (3,)  # x's device, as the standard says
        if value is not None:
            assert (got.copy_to_host() == value).all()


def test_asarray_and_to_device_on_the_device_asked_for(rng):
    h = random_array(rng, (3, 2), "int16")
    dev = pygpu.__array_namespace_info__().devices()[-1]
    d = pygpu.asarray(h, device=dev)
    assert d.device == dev
    assert d.to_device(dev) is d and d.to_device(dev.id) is d
    assert pygpu.asarray(d, device=dev, copy=False) is d
    with pytest.raises(TypeError, match="stream"):
        d.to_device(dev, stream=5)
    with pytest.raises(TypeError, match="None"):
        d.to_device(None)


@two_devices
def test_to_device_copies_across_devices(rng):
    h = random_array(rng, (5, 4), "complex64")
    d = pygpu.asarray(h)[::-1, 1:]
    e = d.to_device(pygpu.Device(1))
    assert e.device == pygpu.Device(1) and e.dtype == d.dtype
    np.testing.assert_array_equal(e.copy_to_host(), h[::-1, 1:])
    with pytest.raises(ValueError, match="device 1 needs a copy"):
        pygpu.asarray(d, device=1, copy=False)
    f = pygpu.asarray(d, device=1, dtype=pygpu.complex128)
    assert f.device.id == 1 and f.dtype == np.complex128
    np.testing.assert_array_equal(f.copy_to_host(), h[::-1, 1:])
    g = pygpu.astype(d, pygpu.complex64, device=pygpu.Device(1))
    assert g.device.id == 1
    np.testing.assert_array_equal(g.copy_to_host(), h[::-1, 1:])
    like = pygpu.zeros_like(e)
    assert like.device.id == 1 and pygpu.ones_like(e, device=0).device.id == 0
    s = pygpu.from_dlpack(d, device=pygpu.Device(1))
    assert s.device.id == 1
    np.testing.assert_array_equal(s.copy_to_host(), h[::-1, 1:])


class _Producer:
    """DLPack alone (no __cuda_array_interface__), as another library's array."""

    def __init__(self, arr):
        self.__dlpack__ = arr.__dlpack__
        self.__dlpack_device__ = arr.__dlpack_device__


def test_from_dlpack_copy_keyword(rng):
    h = random_array(rng, (6,), "int32")
    d = pygpu.asarray(h)
    shared = pygpu.from_dlpack(_Producer(d))
    assert shared.ptr == d.ptr
    assert pygpu.from_dlpack(_Producer(d), copy=False).ptr == d.ptr
    copied = pygpu.from_dlpack(_Producer(d), copy=True)
    assert copied.ptr != d.ptr
    np.testing.assert_array_equal(copied.copy_to_host(), h)
    # a host array: no pygpu array is on the host, so only with device= (a copy)
    with pytest.raises(BufferError, match="CUDA"):
        pygpu.from_dlpack(h)
    dev = pygpu.__array_namespace_info__().default_device()
    got = pygpu.from_dlpack(h, device=dev)
    assert got.device == dev
    np.testing.assert_array_equal(got.copy_to_host(), h)
    with pytest.raises(ValueError, match="copy=False"):
        pygpu.from_dlpack(h, device=dev, copy=False)
    with pytest.raises(TypeError, match="__dlpack__"):
        pygpu.from_dlpack([1, 2])


# ---- the standard's names for NumPy's functions --------------------------------------------

@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "float32", "complex128"])
def test_permute_dims_and_matrix_transpose(dtype, rng):
    h = random_array(rng, (2, 3, 4), dtype)
    d = pygpu.asarray(h)
    np.testing.assert_array_equal(pygpu.permute_dims(d, (2, 0, 1)).copy_to_host(),
                                  np.permute_dims(h, (2, 0, 1)))
    np.testing.assert_array_equal(pygpu.matrix_transpose(d[:, ::-1]).copy_to_host(),
                                  np.matrix_transpose(h[:, ::-1]))
    np.testing.assert_array_equal(d.mT.copy_to_host(), h.mT)
    for transpose in (lambda x: x.mT, pygpu.matrix_transpose, np.matrix_transpose,
                      pygpu.linalg.matrix_transpose):  # one implementation, NumPy's words
        with pytest.raises(ValueError, match="Input array must be at least 2-dimensional, "
                                             "but it is 1"):
            transpose(pygpu.asarray(h[0, 0]))
    with pytest.raises(ValueError, match="repeated"):
        pygpu.permute_dims(d, (0, 0, 1))
    with pytest.raises(ValueError, match="3 dimensions"):
        pygpu.permute_dims(d, (0, 1))
    with pytest.raises(np.exceptions.AxisError):
        pygpu.permute_dims(d, (0, 1, 3))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concat(axis, rng):
    a, b = random_array(rng, (2, 3), "int16"), random_array(rng, (2, 3), "float32")
    got = pygpu.concat((pygpu.asarray(a), pygpu.asarray(b)[::-1]), axis=axis)
    ref = np.concat((a, b[::-1]), axis=axis)
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got.copy_to_host(), ref)
    with pytest.raises(TypeError, match="host"):
        pygpu.concat([a, b])


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "float64",
                                   "complex64", "complex128"])
def test_vecdot(dtype, rng):
    x1, x2 = random_array(rng, (4, 1, 5), dtype), random_array(rng, (3, 5), dtype)
    x3 = random_array(rng, (4, 3, 5), dtype)
    for a, b, axis in ((x1, x2, -1), (x3, x2, -2), (x1, x3, 2), (x3, x1, 0)):
        got = pygpu.vecdot(pygpu.asarray(a), pygpu.asarray(b), axis=axis)
        ref = np.vecdot(a, b, axis=axis)
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_allclose(got.copy_to_host(), ref, rtol=1e-5)
    with pytest.raises(np.exceptions.AxisError):
        pygpu.vecdot(pygpu.asarray(x1), pygpu.asarray(x2), axis=-3)
    with pytest.raises(np.exceptions.AxisError):
        pygpu.vecdot(pygpu.asarray(x1), pygpu.asarray(x2), axis=2)  # not the same axis
    got = pygpu.vecdot(pygpu.asarray(x1[..., ::-2]), pygpu.asarray(x2[:, ::-2]))
    np.testing.assert_allclose(got.copy_to_host(), np.vecdot(x1[..., ::-2], x2[:, ::-2]),
                               rtol=1e-5)
    with pytest.raises(ValueError, match="differ"):
        pygpu.vecdot(pygpu.asarray(x1), pygpu.asarray(x2[:, :4]))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32",
                                   "complex64", "complex128"])
def test_tensordot(dtype, rng):
    a, b = random_array(rng, (3, 4, 5), dtype), random_array(rng, (4, 5, 2), dtype)
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    for axes in (2, 0, ((1, 2), (0, 1)), ([1], [0]), ((-1,), (1,))):
        got, ref = pygpu.tensordot(da, db, axes=axes), np.tensordot(a, b, axes=axes)
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_allclose(got.copy_to_host(), ref, rtol=1e-5)
    got = pygpu.tensordot(da[::-1], db[:, ::-1], axes=((1, 2), (0, 1)))
    np.testing.assert_allclose(got.copy_to_host(),
                               np.tensordot(a[::-1], b[:, ::-1], axes=((1, 2), (0, 1))),
                               rtol=1e-5)
    with pytest.raises(ValueError, match="differ"):
        pygpu.tensordot(da, db, axes=1)
    with pytest.raises(ValueError, match="between 0"):
        pygpu.tensordot(da, db, axes=4)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "float32", "complex128"])
def test_diff(dtype, rng):
    h = random_array(rng, (3, 6), dtype)
    d = pygpu.asarray(h)
    for kw in ({}, {"n": 2}, {"axis": 0}, {"axis": -2, "n": 3}, {"n": 7}):
        got, ref = pygpu.diff(d, **kw), np.diff(h, **kw)
        assert got.dtype == ref.dtype
        np.testing.assert_array_equal(got.copy_to_host(), ref)
    assert pygpu.diff(d, n=0) is d
    pre, post = random_array(rng, (3, 2), dtype), random_array(rng, (3, 1), dtype)
    got = pygpu.diff(d[:, ::-1], prepend=pygpu.asarray(pre), append=pygpu.asarray(post), n=2)
    np.testing.assert_array_equal(got.copy_to_host(),
                                  np.diff(h[:, ::-1], prepend=pre, append=post, n=2))
    got, ref = pygpu.diff(d, append=2, axis=0), np.diff(h, append=2, axis=0)
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got.copy_to_host(), ref)
    with pytest.raises(ValueError, match="order must be non-negative but got -1"):
        pygpu.diff(d, n=-1)  # numpy.diff's implementation and words
    with pytest.raises(TypeError, match="n must be an int, not float"):
        pygpu.diff(d, n=1.0)
    with pytest.raises(TypeError, match="axis must be an int, not tuple"):
        pygpu.diff(d, axis=(0,))
    with pytest.raises(ValueError, match="at least one dimensional"):
        pygpu.diff(pygpu.asarray(h[0, 0]))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "float32", "float64"])
def test_clip_is_the_standards(dtype, rng):
    h = random_array(rng, (7,), dtype)
    d = pygpu.asarray(h)
    got = pygpu.clip(d, min=-5 if dtype != "uint8" else 5, max=100)
    ref = np.clip(h, -5 if dtype != "uint8" else 5, 100)
    assert got.dtype == h.dtype
    np.testing.assert_array_equal(got.copy_to_host(), ref)
    whole = pygpu.clip(d)  # no bounds: a copy, as the standard says
    assert whole.ptr != d.ptr
    np.testing.assert_array_equal(whole.copy_to_host(), h)
    # NumPy's own clip on a DeviceArray stays NumPy's
    np.testing.assert_array_equal(np.clip(d, 0, 3).copy_to_host(), np.clip(h, 0, 3))
    # bounds of a wider dtype: still x's dtype, as the standard says
    wide = {"int8": np.int16, "uint8": np.uint16}.get(dtype, np.float64)
    got = pygpu.clip(d, min=pygpu.asarray(np.array(5, wide)))
    assert got.dtype == h.dtype
    np.testing.assert_array_equal(got.copy_to_host(), np.maximum(h, 5).astype(h.dtype))


# ---- bad input: DLPack streams, __cuda_array_interface__, memory pools -----------------------

@pytest.mark.parametrize("stream, error", [(-5, ValueError), (0, ValueError),
                                           (-2, ValueError), (2**64, ValueError),
                                           ("1", TypeError), (1.0, TypeError),
                                           (True, TypeError)])
def test_dlpack_stream_values_follow_dlpack(stream, error):
    d = pygpu.zeros(3)
    with pytest.raises(error, match="stream"):
        d.__dlpack__(stream=stream)
    assert d.copy_to_host().tolist() == [0.0] * 3  # the interpreter lives


@pytest.mark.parametrize("stream", [None, -1, 1, 2])
def test_dlpack_stream_values_accepted(stream):
    d = pygpu.full(3, 2.5)
    w = pygpu.from_dlpack(_Producer(d))
    cap = d.__dlpack__(stream=stream, max_version=(1, 0))
    assert '"dltensor_versioned"' in repr(cap) and w.copy_to_host().tolist() == [2.5] * 3


def test_dlpack_export_to_the_host(rng):
    h = random_array(rng, (3, 4), "float32")
    d = pygpu.asarray(h)[:, ::-1]

    class HostView:
        def __dlpack__(self, **kw):
            return d.__dlpack__(dl_device=(1, 0), **kw)

        def __dlpack_device__(self):
            return (1, 0)

    np.testing.assert_array_equal(np.from_dlpack(HostView()), h[:, ::-1])
    np.testing.assert_array_equal(np.from_dlpack(d, device="cpu"), h[:, ::-1])
    with pytest.raises(BufferError, match="copy=False"):
        d.__dlpack__(dl_device=(1, 0), copy=False)
    with pytest.raises(ValueError, match="None"):
        d.__dlpack__(dl_device=(1, 0), stream=1)
    with pytest.raises(TypeError, match="copy"):
        d.__dlpack__(copy="no")


class _CAI:
    def __init__(self, ptr, stream=None):
        self.__cuda_array_interface__ = {"shape": (2,), "typestr": "<f4", "version": 3,
                                         "data": (ptr, False), "stream": stream}


@pytest.mark.parametrize("ptr", [2**64, 2**100, -1])
def test_cai_pointer_out_of_range_names_data(ptr):
    with pytest.raises(ValueError, match="'data'"):
        pygpu.asarray(_CAI(ptr))


def test_cai_bad_pointer_type_and_stream():
    d = pygpu.zeros(2, "float32")
    ptr = d.__cuda_array_interface__["data"][0]
    with pytest.raises(TypeError, match="'data'"):
        pygpu.asarray(_CAI(float(ptr)))
    for stream in (0, -1, 2**64):
        with pytest.raises(ValueError, match="'stream'"):
            pygpu.asarray(_CAI(ptr, stream))
    assert pygpu.asarray(_CAI(ptr, 1)).ptr == ptr


def test_memory_pool_devices_checked():
    count = len(pygpu.__array_namespace_info__().devices())
    with pytest.raises(ValueError, match=f"there (is|are) {count} device"):
        pygpu.get_memory_pool(99)
    with pytest.raises(TypeError, match="str"):
        pygpu.get_memory_pool("a")
    with pytest.raises(TypeError, match="device"):
        pygpu.MemoryPool(1.5)
    pool = pygpu.get_memory_pool(pygpu.Device(count - 1))
    assert f"device={count - 1}" in repr(pool)
    assert "device=0" in repr(pygpu.get_memory_pool(0))
