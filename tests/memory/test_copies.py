"""Host/device copies, contiguous or not, on both sides."""

import numpy as np
import pytest
from conftest import random_array

import pygpu
from pygpu import cuda

HOST_VIEWS = [
    lambda a: a,
    lambda a: a[::2],
    lambda a: a[:, ::-1],
    lambda a: a.T,
    lambda a: np.asfortranarray(a),
    lambda a: a[1:, 2:],
]


@pytest.mark.parametrize("view", range(len(HOST_VIEWS)))
@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128", "bool"])
def test_host_to_device_from_any_layout(rng, view, dtype):
    x = HOST_VIEWS[view](random_array(rng, (9, 7), dtype))
    d = cuda.to_device(x)
    np.testing.assert_array_equal(d.copy_to_host(), x)


@pytest.mark.parametrize("view", range(len(HOST_VIEWS)))
def test_device_to_host_from_any_layout(rng, view):
    x = random_array(rng, (9, 7), np.float64)
    d = HOST_VIEWS[view](cuda.to_device(x)) if view != 4 else cuda.to_device(np.asfortranarray(x))
    expected = HOST_VIEWS[view](x)
    np.testing.assert_array_equal(d.copy_to_host(), expected)
    np.testing.assert_array_equal(pygpu.asnumpy(d), expected)


@pytest.mark.parametrize("src_view", range(len(HOST_VIEWS)))
@pytest.mark.parametrize("dst_view", [0, 1, 3])
def test_copy_to_host_into_out_of_any_layout(rng, src_view, dst_view):
    x = random_array(rng, (9, 7), np.int32)
    d = HOST_VIEWS[src_view](cuda.to_device(x)) if src_view != 4 else cuda.to_device(
        np.asfortranarray(x))
    expected = HOST_VIEWS[src_view](x)
    backing = np.zeros((30, 30), np.int32)
    out = {0: backing[:expected.shape[0], :expected.shape[1]],
           1: backing[::2][:expected.shape[0], :expected.shape[1]],
           3: backing.T[:expected.shape[0], :expected.shape[1]]}[dst_view]
    out = np.ascontiguousarray(out) if dst_view == 0 else out
    res = d.copy_to_host(out=out)
    assert res is out
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dst_key", [np.s_[:], np.s_[::2], np.s_[:, ::-1], np.s_[1:, 2:5]])
@pytest.mark.parametrize("src_view", range(len(HOST_VIEWS)))
def test_copy_to_device_into_strided_destination(rng, dst_key, src_view):
    base = random_array(rng, (9, 7), np.float32)
    d = cuda.to_device(base)
    dst = d[dst_key]
    shape = dst.shape
    src = HOST_VIEWS[src_view](random_array(rng, (30, 30), np.float32))
    src = src[:shape[0], :shape[1]]
    dst.copy_to_device(src)
    base[dst_key] = src
    np.testing.assert_array_equal(d.copy_to_host(), base)


def test_device_to_device_copies(rng):
    x = random_array(rng, (6, 8), np.float64)
    a = cuda.to_device(x)
    b = pygpu.empty((8, 6))
    b.copy_to_device(a.T)
    np.testing.assert_array_equal(b.copy_to_host(), x.T)
    c = pygpu.zeros((6, 8))
    c[::2, 1::2].copy_to_device(a[1::2, ::2])
    e = np.zeros((6, 8))
    e[::2, 1::2] = x[1::2, ::2]
    np.testing.assert_array_equal(c.copy_to_host(), e)
    d2 = cuda.to_device(a)
    assert d2 is not a and d2.ptr != a.ptr
    np.testing.assert_array_equal(d2.copy_to_host(), x)
    s = a.copy()
    np.testing.assert_array_equal(s.copy_to_host(), x)
    f = pygpu.empty((6, 8))
    f.set(x)
    np.testing.assert_array_equal(f.get(), x)
    t = pygpu.empty((6, 8))
    assert cuda.to_device(x, to=t) is t
    np.testing.assert_array_equal(t.copy_to_host(), x)


def test_large_copy_round_trip(rng):
    x = random_array(rng, (3000, 1001), np.float32)
    d = cuda.to_device(x)
    np.testing.assert_array_equal(d.copy_to_host(), x)
    np.testing.assert_array_equal(d[::3, 7:].copy_to_host(), x[::3, 7:])


def test_copy_mismatches_raise():
    d = pygpu.zeros((3, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="shape mismatch"):
        d.copy_to_device(np.zeros((4, 3), np.float32))
    with pytest.raises(TypeError, match="dtype mismatch"):
        d.copy_to_device(np.zeros((3, 4), np.float64))
    with pytest.raises(ValueError, match="shape mismatch"):
        d.copy_to_device(pygpu.zeros((3, 5), dtype=np.float32))
    with pytest.raises(TypeError, match="dtype mismatch"):
        d.copy_to_device(pygpu.zeros((3, 4), dtype=np.int32))
    with pytest.raises(ValueError, match="shape mismatch"):
        d.copy_to_host(out=np.zeros((3, 5), np.float32))
    with pytest.raises(TypeError, match="dtype mismatch"):
        d.copy_to_host(out=np.zeros((3, 4), np.float64))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        d.copy_to_host(out=[0] * 12)
    ro = np.zeros((3, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        d.copy_to_host(out=ro)
    with pytest.raises(TypeError, match="stream"):
        d.copy_to_host(stream="fast")
    with pytest.raises(TypeError, match="DeviceArray"):
        cuda.to_device(np.zeros(3), to=np.zeros(3))
    with pytest.raises(TypeError):
        cuda.device_array_like([1, 2])


def test_copies_on_a_second_device_when_there_is_one(rng):
    if len(cuda.gpus) < 2:
        pytest.skip("one device only")
    x = random_array(rng, (5, 5), np.float32)
    with cuda.gpus[1]:
        d1 = cuda.to_device(x)
        assert d1.device.id == 1
    d0 = cuda.to_device(d1.T)
    assert d0.device.id == 0
    np.testing.assert_array_equal(d0.copy_to_host(), x.T)
    np.testing.assert_array_equal(d1[::2].copy_to_host(), x[::2])
