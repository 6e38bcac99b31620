"""Who owns memory: buffers shared by arrays and views, and cycles through
foreign owners that the garbage collector must be able to collect."""

import gc

import numpy as np
import pytest
from conftest import needs_pool

import pygpu
from pygpu import cuda


def collect():
    for _ in range(3):
        gc.collect()


def test_views_share_one_buffer_and_keep_it_alive(rng):
    d = cuda.to_device(rng.standard_normal((6, 5)))
    v = d[1:, ::2]
    t = d.T
    # views read the memory of the array they came from
    assert v.ptr == d.ptr + 5 * 8 and t.ptr == d.ptr
    host = d.copy_to_host()
    del d
    collect()
    np.testing.assert_array_equal(v.copy_to_host(), host[1:, ::2])
    np.testing.assert_array_equal(t.copy_to_host(), host.T)


@needs_pool
def test_memory_comes_back_when_the_last_view_goes():
    collect()
    before = cuda.memory_allocated()
    d = pygpu.zeros((1024, 256))
    views = [d[i:] for i in range(10)] + [d.T, d.reshape(-1)]
    assert cuda.memory_allocated() >= before + d.nbytes
    del d
    collect()
    assert cuda.memory_allocated() >= before + 1024 * 256 * 8  # views keep it
    del views
    collect()
    assert cuda.memory_allocated() == before


HAVE_GC = 1 << 14  # Py_TPFLAGS_HAVE_GC


def test_arrays_are_tracked_by_the_collector_while_they_can_be_in_a_cycle():
    assert pygpu.DeviceArray.__flags__ & HAVE_GC
    assert pygpu._core.Buffer.__flags__ & HAVE_GC
    d = pygpu.zeros(3)
    # pooled memory holds nothing that could lead back: no need to track
    assert not gc.is_tracked(d) and not gc.is_tracked(d[1:])
    # memory owned through a Python object can be in a cycle: tracked, views too
    e = CudaArrayExporter(3)
    assert gc.is_tracked(e.back) and gc.is_tracked(e.back[1:])
    # a subclass has a __dict__
    assert gc.is_tracked(Tagged((2,)))


class CudaArrayExporter:
    """Exports device memory through __cuda_array_interface__ and keeps
    pygpu.asarray() of itself: a reference cycle through a foreign owner."""

    def __init__(self, n):
        self.arr = pygpu.zeros(n)
        self.__cuda_array_interface__ = self.arr.__cuda_array_interface__
        self.back = pygpu.asarray(self)


@needs_pool
def test_cycles_through_a_cuda_array_interface_owner_are_collected():
    collect()
    before = cuda.memory_allocated()
    n = 64 * 1024  # 512 KiB each
    for _ in range(50):
        e = CudaArrayExporter(n)
        assert e.back.ptr == e.arr.ptr
        e.back[:3] = 7.0
        assert e.arr[:3].copy_to_host().tolist() == [7.0, 7.0, 7.0]
        del e
    assert cuda.memory_allocated() >= before + n * 8  # cycles wait for the collector
    collect()
    assert cuda.memory_allocated() == before


class Tagged(pygpu.DeviceArray):
    """A DeviceArray subclass: its instances have a __dict__."""


class DLPackProducer:
    """Produces DLPack capsules of a pygpu array that points back to it."""

    def __init__(self, n):
        self.t = Tagged((n,), dtype=np.float64)
        self.t.producer = self

    def __dlpack__(self, **kwargs):
        return self.t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


@needs_pool
def test_cycles_through_a_dlpack_producer_are_collected():
    collect()
    before = cuda.memory_allocated()
    n = 64 * 1024
    for _ in range(50):
        p = DLPackProducer(n)
        p.back = pygpu.from_dlpack(p)
        assert p.back.ptr == p.t.ptr and p.back.base is p.t
        p.back[:] = 1.5
        assert float(p.t[0]) == 1.5
        del p
    collect()
    assert cuda.memory_allocated() == before


def test_dlpack_round_trip_of_our_own_export_shares_memory(rng):
    d = cuda.to_device(rng.standard_normal((4, 3)))
    e = pygpu.from_dlpack(d[:, 1:].T)
    assert e.ptr == d.ptr + 8
    np.testing.assert_array_equal(e.copy_to_host(), d.copy_to_host()[:, 1:].T)


class Capsules:
    def __init__(self, arr, version):
        self.arr, self.version = arr, version

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        return self.arr.__dlpack__(stream=stream, max_version=self.version,
                                   copy=kwargs.get("copy"))

    def __dlpack_device__(self):
        return self.arr.__dlpack_device__()


@pytest.mark.parametrize("version", [None, (1, 0)])
def test_foreign_dlpack_capsules_of_both_versions_import(rng, version):
    h = rng.standard_normal(10)
    d = cuda.to_device(h)
    e = pygpu.from_dlpack(Capsules(d, version))
    np.testing.assert_array_equal(e.copy_to_host(), h)


def dlpack_versioned_flags(capsule):
    import ctypes

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    addr = get(capsule, b"dltensor_versioned")
    # DLManagedTensorVersioned: version (2 x uint32), manager_ctx, deleter, flags
    return ctypes.c_uint64.from_address(addr + 8 + 2 * ctypes.sizeof(ctypes.c_void_p)).value


@pytest.mark.parametrize("copy, flags", [(None, 0), (False, 0), (True, 2)])
def test_versioned_dlpack_export_sets_its_flags(copy, flags):
    d = pygpu.zeros(5)
    assert dlpack_versioned_flags(d.__dlpack__(max_version=(1, 0), copy=copy)) == flags
