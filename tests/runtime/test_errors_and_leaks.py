"""CUDA errors as Python exceptions; memory and references freed."""

import gc
import sys

import numpy as np
import pytest
from conftest import ON_SIMULATOR

import pygpu
from pygpu import cuda


def test_exception_hierarchy():
    assert issubclass(pygpu.CudaError, RuntimeError)
    assert issubclass(pygpu.OutOfMemoryError, pygpu.CudaError)
    assert issubclass(pygpu.OutOfMemoryError, MemoryError)
    assert issubclass(pygpu.NoDeviceError, pygpu.CudaError)
    e = pygpu.CudaError("plain")
    assert e.code is None and e.name is None


def test_out_of_memory_names_the_size_and_leaves_nothing_behind(no_stray_frees):
    before = cuda.memory_allocated()
    total = cuda.gpus[0].total_memory
    n = (total * 2) // 8
    with pytest.raises(pygpu.OutOfMemoryError) as info:
        pygpu.empty(n, dtype=np.float64)
    e = info.value
    assert isinstance(e, MemoryError) and isinstance(e, pygpu.CudaError)
    assert e.code == 2 and e.name == "cudaErrorMemoryAllocation"
    assert f"({n * 8} bytes)" in str(e)
    assert "GiB" in str(e) and "cudaMalloc failed" in str(e)
    assert cuda.memory_allocated() == before
    a = pygpu.zeros(1000)  # the device still works, and the error is not
    pygpu.add_one(a)       # reported again by the next launch
    assert a.copy_to_host().sum() == 1000


def test_a_failed_page_locked_allocation_names_its_call():
    with pytest.raises(pygpu.OutOfMemoryError) as info:
        cuda.pinned_array(1 << 60, np.uint8)
    e = info.value
    assert e.name == "cudaErrorMemoryAllocation"
    assert "cudaHostAlloc failed: cudaErrorMemoryAllocation" in str(e)
    assert cuda.is_pinned(cuda.pinned_array(10))  # and pinned memory still works


def test_types_that_hold_no_python_objects_are_not_gc_tracked():
    # Device, Stream and Event hold only C values: the collector need not visit them.
    s = cuda.stream()
    for obj in (cuda.get_current_device(), cuda.gpus[0], s, cuda.event(), cuda.default_stream()):
        assert not gc.is_tracked(obj), type(obj)
    assert cuda.get_current_device() == cuda.gpus[0]


def test_memory_is_freed_when_the_last_reference_goes(no_stray_frees):
    before = cuda.memory_allocated()
    a = pygpu.empty((1024, 1024), dtype=np.float32)
    assert cuda.memory_allocated() == before + 4 * 2**20
    v = a[::2]
    del a
    assert cuda.memory_allocated() == before + 4 * 2**20  # the view keeps it
    del v
    assert cuda.memory_allocated() == before


def test_device_mem_info_sees_allocations():
    # the free memory is the device's: other processes (pytest -n on one
    # GPU) allocate and free between the two readings, so a few tries
    drops = []
    for _ in range(5):
        free0, total = cuda.gpus[0].mem_info()
        a = pygpu.empty(64 * 2**20 + len(drops), dtype=np.uint8)
        free1, _ = cuda.gpus[0].mem_info()
        del a
        drops.append(free0 - free1)
        if drops[-1] >= 60 * 2**20:
            break
    assert max(drops) >= 60 * 2**20, drops
    assert 0 < free1 <= total


def test_creating_and_dropping_many_arrays_leaks_nothing(rng):
    host = rng.standard_normal(16).astype(np.float32)
    dt = np.dtype(np.float32)
    gc.collect()
    mem0 = cuda.memory_allocated()
    refs0 = (sys.getrefcount(host), sys.getrefcount(dt))
    for i in range(100_000):
        if i % 4 == 0:
            d = pygpu.empty(16, dtype=dt)
        elif i % 4 == 1:
            d = cuda.to_device(host)
        elif i % 4 == 2:
            d = cuda.to_device(host)[::2]
        else:
            d = pygpu.zeros((4, 4), dtype=dt).T.reshape(16)
        del d
    gc.collect()
    assert cuda.memory_allocated() == mem0
    assert (sys.getrefcount(host), sys.getrefcount(dt)) == refs0


def test_copy_to_host_leaks_no_references(rng):
    d = cuda.to_device(rng.standard_normal((8, 8)))
    out = np.empty((8, 8))
    r0 = (sys.getrefcount(d), sys.getrefcount(out))
    for _ in range(1000):
        d.copy_to_host(out=out)
        d[::2].copy_to_host()
    assert (sys.getrefcount(d), sys.getrefcount(out)) == r0


@pytest.mark.simulator
def test_simulated_memory_limit_is_a_real_limit():
    total = cuda.gpus[0].total_memory
    a = pygpu.empty(total // 2, dtype=np.uint8)
    with pytest.raises(pygpu.OutOfMemoryError):
        pygpu.empty(total // 2 + 4096, dtype=np.uint8)
    del a
    b = pygpu.empty(total // 2 + 4096, dtype=np.uint8)
    assert b.nbytes == total // 2 + 4096


def test_errors_are_raised_before_any_device_work():
    before = cuda.memory_allocated()
    for bad in [lambda: pygpu.empty(-1), lambda: pygpu.empty((3, "x")),
                lambda: cuda.to_device(np.array(["x"])), lambda: pygpu.zeros(3, "U4")]:
        with pytest.raises((TypeError, ValueError)):
            bad()
    assert cuda.memory_allocated() == before
    assert not ON_SIMULATOR or cuda.is_simulator()
