"""Streams, events, pinned memory, the memory pool, transfers and threads."""

import threading
import time

import numpy as np
import pytest
from conftest import ON_SIMULATOR, needs_pool, random_array, rel_error

import pygpu
from pygpu import cuda

# ---- streams ---------------------------------------------------------------------

def test_stream_basics():
    s = cuda.stream()
    assert isinstance(s, pygpu.Stream)
    assert s.ptr != 0
    version, handle = s.__cuda_stream__()
    assert version == 0 and handle == s.ptr
    assert s.query() is True
    s.synchronize()
    assert s == s and s != cuda.stream()
    assert "pygpu.Stream" in repr(s)
    d = cuda.default_stream()
    assert d.ptr == 0 and d.query()
    assert cuda.current_stream().ptr == 0


def test_with_stream_sets_the_current_stream_per_thread():
    s1, s2 = cuda.stream(), cuda.stream()
    with s1:
        assert cuda.current_stream() == s1
        with s2:
            assert cuda.current_stream() == s2
            seen = []
            t = threading.Thread(target=lambda: seen.append(cuda.current_stream().ptr))
            t.start()
            t.join()
            assert seen == [0]  # another thread keeps its own
        assert cuda.current_stream() == s1
    assert cuda.current_stream().ptr == 0
    with pytest.raises(RuntimeError, match="matching __enter__"):
        s1.__exit__(None, None, None)


def test_work_on_streams_gives_the_right_results(rng):
    x = random_array(rng, (300, 200), np.float32)
    s = cuda.stream()
    d = cuda.to_device(x, stream=s)
    out = pygpu.empty_like(d)
    grid, block = cuda.launch_config(d.shape, (16, 16))
    pygpu.kernels.add[grid, block, s](d, d, out)
    pygpu.kernels.add_one[grid, block, s](out)
    with s:
        y = out + 1.0
        z = y.copy()
    host = cuda.pinned_array(z.shape, z.dtype)
    z.copy_to_host(out=host, stream=s)
    s.synchronize()
    np.testing.assert_allclose(host, 2 * x.astype(np.float64) + 2, rtol=1e-6)


def test_high_level_calls_take_a_stream(rng):
    x = random_array(rng, (40, 30), np.float32)
    s = cuda.stream()
    d = cuda.to_device(x, stream=s)
    y = pygpu.add(d, d, stream=s)
    pygpu.add_one(y, stream=s)
    z = pygpu.matmul(y, y.T.copy(stream=s), stream=s)
    c = z.copy(stream=s)
    s.synchronize()
    ref = (2 * x.astype(np.float64) + 1) @ (2 * x.astype(np.float64) + 1).T
    assert rel_error(c.copy_to_host(), ref) < 1e-5
    with pytest.raises(TypeError, match="stream must be"):
        pygpu.add_one(d, stream="s")


def test_bad_stream_arguments():
    d = pygpu.zeros(4)
    with pytest.raises(TypeError, match="stream must be"):
        d.copy_to_host(stream="s")
    with pytest.raises(TypeError, match="stream must be"):
        cuda.to_device(np.zeros(3), stream=1.5)
    with pytest.raises(TypeError, match="stream must be"):
        pygpu.kernels.add_one[1, 32, "s"](d)
    with pytest.raises(TypeError):
        cuda.stream().wait_event(3)


def test_foreign_stream_objects_are_accepted():
    s = cuda.stream()

    class Foreign:
        def __cuda_stream__(self):
            return (0, s.ptr)

    d = cuda.to_device(np.arange(5.0), stream=Foreign())
    pygpu.kernels.add_one[1, 32, Foreign()](d)
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(5.0) + 1)


# ---- events ----------------------------------------------------------------------

def test_event_timing_is_sane(rng):
    s = cuda.stream()
    a = cuda.to_device(random_array(rng, (256, 256), np.float32))
    start, end = cuda.event(), cuda.event()
    t0 = time.perf_counter()
    start.record(s)
    with s:
        for _ in range(3):
            c = a @ a
    end.record(s)
    end.synchronize()
    wall_ms = (time.perf_counter() - t0) * 1e3
    ms = start.elapsed_time(end)
    assert isinstance(ms, float)
    assert 0 < ms <= wall_ms * 1.05 + 0.5
    assert end.query() is True
    assert c.shape == (256, 256)


def test_event_errors_and_stream_record():
    e = cuda.event()
    with pytest.raises(ValueError, match="recorded"):
        e.elapsed_time(cuda.event())
    nt = cuda.event(timing=False)
    nt.record()
    nt.synchronize()
    with pytest.raises(ValueError, match="timing=True"):
        nt.elapsed_time(nt)
    with pytest.raises(TypeError):
        e.elapsed_time(3)
    s1, s2 = cuda.stream(), cuda.stream()
    ev = s1.record()
    assert isinstance(ev, pygpu.Event)
    s2.wait_event(ev)
    s2.synchronize()
    assert ev.query()


@pytest.mark.gpu
def test_a_copy_overlaps_a_long_kernel_on_another_stream(rng):
    n = 1 << 22
    big = pygpu.zeros(n, dtype=np.float32)
    host = cuda.pinned_array(1 << 20, np.float32)
    host[:] = random_array(rng, 1 << 20, np.float32)
    dev = pygpu.empty(1 << 20, dtype=np.float32)
    s_kernel, s_copy = cuda.stream(), cuda.stream()
    k_done, c_done = cuda.event(), cuda.event()
    # one thread walking 4M elements: a kernel that runs for many milliseconds
    pygpu.kernels.add_one[1, 1, s_kernel](big)
    k_done.record(s_kernel)
    dev.copy_to_device(host, stream=s_copy)
    c_done.record(s_copy)
    c_done.synchronize()
    assert k_done.query() is False, "the copy waited for the kernel"
    k_done.synchronize()
    np.testing.assert_array_equal(dev.copy_to_host(), host)
    assert big[-1].item() == 1.0


# ---- pinned memory --------------------------------------------------------------

def test_pinned_arrays(rng):
    p = cuda.pinned_array((64, 33), np.int16)
    assert isinstance(p, np.ndarray) and p.shape == (64, 33) and p.dtype == np.int16
    assert p.flags.c_contiguous and p.flags.writeable
    assert cuda.is_pinned(p)
    assert not cuda.is_pinned(np.zeros(10))
    assert cuda.pinned_array((4, 5), order="F").flags.f_contiguous
    # the same orders as pygpu.empty, lower case included
    assert cuda.pinned_array((4, 5), order="f").flags.f_contiguous
    assert cuda.pinned_array((4, 5), order="c").flags.c_contiguous
    assert pygpu.empty((4, 5), order="f").is_f_contiguous()
    with pytest.raises(ValueError, match="order must be 'C' or 'F'"):
        cuda.pinned_array((4, 5), order="K")
    like = cuda.pinned_array_like(np.zeros((3, 2), np.complex64))
    assert like.shape == (3, 2) and like.dtype == np.complex64
    p[:] = random_array(rng, p.shape, np.int16)
    s = cuda.stream()
    d = cuda.to_device(p, stream=s)
    back = cuda.pinned_array_like(p)
    d.copy_to_host(out=back, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(back, p)
    with pytest.raises(TypeError, match="does not support dtype"):
        cuda.pinned_array(3, object)
    with pytest.raises(ValueError):
        cuda.pinned_array(-1)


def test_pinned_memory_is_freed_with_its_array():
    import gc
    import weakref
    p = cuda.pinned_array(1000)
    ref = weakref.ref(p.base)
    del p
    gc.collect()
    assert ref() is None


# ---- transfers -------------------------------------------------------------------

@pytest.mark.parametrize("nbytes", [1, 4095, 1 << 20, (1 << 20) + 8, (33 << 20) + 12344,
                                    (70 << 20) + 8])
def test_large_pageable_transfers_round_trip(rng, nbytes):
    n = nbytes // 8 or 1
    x = rng.standard_normal(n)
    d = cuda.to_device(x)
    np.testing.assert_array_equal(d.copy_to_host(), x)
    out = np.empty_like(x)
    d.copy_to_host(out=out)
    np.testing.assert_array_equal(out, x)
    y = rng.standard_normal(n)
    d.copy_to_device(y)
    np.testing.assert_array_equal(pygpu.asnumpy(d), y)


@pytest.mark.parametrize("nbytes", [(2 << 20) + 1, (6 << 20) + 5, (8 << 20) + 7, (25 << 20) + 3])
def test_odd_sized_byte_transfers_round_trip(rng, nbytes):
    x = rng.integers(0, 256, nbytes, dtype=np.uint8)
    d = cuda.to_device(x)
    back = d.copy_to_host()
    assert back[-1] == x[-1]
    np.testing.assert_array_equal(back, x)


def test_transfers_on_a_busy_stream_wait_for_its_work(rng):
    s = cuda.stream()
    x = random_array(rng, (4096, 1024), np.int32)
    with s:
        d = cuda.to_device(x)
        for _ in range(5):
            pygpu.add_one(d)
        got = d.copy_to_host()
    np.testing.assert_array_equal(got, x + 5)


# ---- the memory pool --------------------------------------------------------------

@needs_pool
def test_pool_reuses_blocks_and_reports_stats():
    pool = pygpu.get_memory_pool()
    pool.free_all_blocks()
    used0, total0 = pool.used_bytes(), pool.total_bytes()
    assert total0 == used0
    a = pygpu.empty(1 << 20, dtype=np.uint8)
    ptr = a.ptr
    assert pool.used_bytes() == used0 + (1 << 20)
    del a
    assert pool.used_bytes() == used0
    assert pool.total_bytes() == total0 + (1 << 20)
    assert pool.free_bytes() == (1 << 20)
    b = pygpu.empty(1 << 20, dtype=np.uint8)
    assert b.ptr == ptr  # the cached block came back
    assert pool.total_bytes() == total0 + (1 << 20)
    c = pygpu.empty(1000, dtype=np.uint8)
    assert pool.used_bytes() == used0 + (1 << 20) + 1024  # rounded to 512 bytes
    del b, c
    pool.free_all_blocks()
    assert pool.total_bytes() == used0
    assert "MemoryPool" in repr(pool)


@needs_pool
def test_pool_limit():
    pool = pygpu.get_memory_pool()
    pool.free_all_blocks()
    base = pool.total_bytes()
    pool.set_limit(base + (4 << 20))
    try:
        assert pool.get_limit() == base + (4 << 20)
        a = pygpu.empty(3 << 20, dtype=np.uint8)
        with pytest.raises(pygpu.OutOfMemoryError):
            pygpu.empty(2 << 20, dtype=np.uint8)
        del a
        b = pygpu.empty(4 << 20, dtype=np.uint8)  # the cached 3 MiB are given back first
        del b
    finally:
        pool.set_limit(None)
    assert pool.get_limit() == 0
    with pytest.raises(ValueError):
        pool.set_limit(fraction=1.5)
    with pytest.raises(ValueError):
        pool.set_limit(size=-1)


@needs_pool
def test_out_of_memory_frees_cached_blocks_and_retries():
    pool = pygpu.get_memory_pool()
    pool.free_all_blocks()
    total = cuda.gpus[0].total_memory
    n = int(total * 0.6) // 512 * 512
    a = pygpu.empty(n, dtype=np.uint8)
    del a  # cached in the pool, still held from the device
    assert pool.free_bytes() >= n
    b = pygpu.empty(n + 512, dtype=np.uint8)  # does not fit beside it: release, retry
    assert b.nbytes == n + 512
    assert pool.free_bytes() < n
    del b
    with pytest.raises(pygpu.OutOfMemoryError):
        pygpu.empty(2 * total, dtype=np.uint8)
    pool.free_all_blocks()


def test_stream_ordered_reuse_never_corrupts(rng):
    s1, s2 = cuda.stream(), cuda.stream()
    sizes = [1024, 4096, 16384]
    trials = 10_000
    host = [cuda.pinned_array(n, np.float32) for n in sizes]
    for i in range(trials):
        k = int(rng.integers(len(sizes)))
        n = sizes[k]
        with s1:
            a = pygpu.full(n, float(i % 1000), dtype=np.float32)
            pygpu.add_one(a)
            a.copy_to_host(out=host[k], stream=s1)  # still running when a is freed
            del a
        with s2:
            b = pygpu.full(n, -7.0, dtype=np.float32)  # may reuse a's block
            del b
        if i % 97 == 0 or i == trials - 1:
            s1.synchronize()
            assert host[k][0] == i % 1000 + 1 and host[k][-1] == i % 1000 + 1, i
    s1.synchronize()
    s2.synchronize()


# ---- threads ----------------------------------------------------------------------

def test_eight_threads_each_doing_a_thousand_mixed_operations():
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        s = cuda.stream()
        try:
            for i in range(1000):
                op = i % 5
                x = rng.standard_normal((17, 23)).astype(np.float32)
                if op == 0:
                    d = cuda.to_device(x)
                    assert np.array_equal(d.copy_to_host(), x)
                elif op == 1:
                    with s:
                        d = cuda.to_device(x)
                        pygpu.add_one(d)
                        got = d.copy_to_host()
                    assert np.allclose(got, x + 1)
                elif op == 2:
                    d = cuda.to_device(x)
                    assert np.allclose((d + d).copy_to_host(), 2 * x)
                elif op == 3:
                    a = cuda.to_device(x)
                    b = cuda.to_device(x.T.copy())
                    ref = x.astype(np.float64) @ x.T
                    assert rel_error((a @ b).copy_to_host(), ref) < 1e-5
                else:
                    d = cuda.to_device(x)
                    assert np.array_equal(d[3:, ::2].T.copy_to_host(), x[3:, ::2].T)
        except Exception as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


def test_simulator_streams_run_in_order():
    if not ON_SIMULATOR:
        pytest.skip("simulator behaviour")
    s = cuda.stream()
    d = cuda.to_device(np.zeros(3))
    pygpu.kernels.add_one[1, 32, s](d)
    assert s.query()
    np.testing.assert_array_equal(d.copy_to_host(), np.ones(3))
