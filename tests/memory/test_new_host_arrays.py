"""Large device-to-host copies into new arrays: memory pygpu maps for the array
(huge-page aligned; on a GPU, worker threads fault it in and fill it a huge
page each from the staged pieces), owned by a Buffer that is the array's base
and unmaps it. With `_host_arrays(stage_always=True)` the simulator stages
too, so that the staged copies run here as on a GPU."""

import copy
import gc
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from conftest import random_array

import pygpu
from pygpu import _core, cuda

MIN = _core._host_arrays()["min_bytes"]
HUGE = _core._host_arrays()["huge_page"]


def mapped():
    gc.collect()
    return _core._host_arrays()["mapped"]


@pytest.fixture
def staged():
    """Every large pageable copy staged (the simulator too); the settings
    restored after the test."""
    before = _core._host_arrays(stage_always=True)
    yield
    _core._host_arrays(copy_threads=-1, stage_bytes=before["stage_bytes"], spin_ns=-1,
                       stage_always=False, fail_piece=-1)


def is_ours(h):
    return isinstance(h.base, _core.Buffer) and "host" in repr(h.base)


def elements(nbytes, dtype):
    return nbytes // np.dtype(dtype).itemsize


# ---- which arrays take the mapped memory ---------------------------------------------

def test_the_threshold_is_a_few_mib():
    assert 1 << 20 <= MIN <= 64 << 20
    assert HUGE >= 4096 and HUGE & (HUGE - 1) == 0


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_arrays_from_the_threshold_up_are_mapped_smaller_ones_are_numpys(rng, delta):
    n = MIN // 4 + delta  # float32
    x = random_array(rng, n, np.float32)
    h = cuda.to_device(x).copy_to_host()
    np.testing.assert_array_equal(h, x)
    assert is_ours(h) == (delta >= 0)
    if delta < 0:
        assert h.base is None and h.flags.owndata


@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128", "bool", "uint8",
                                   "float16", "int64"])
def test_contents_equal_the_source_for_every_dtype(rng, dtype):
    # sizes that are not whole pages, blocks of the prefault or huge pages
    n = elements(MIN + 3 * HUGE + 4096 * 5, dtype) + 7
    x = random_array(rng, n, dtype)
    d = cuda.to_device(x)
    h = d.copy_to_host()
    assert is_ours(h) and h.dtype == x.dtype and h.shape == x.shape
    np.testing.assert_array_equal(h, x)


@pytest.mark.parametrize("order", ["C", "F"])
def test_c_and_fortran_sources_keep_their_order(rng, order):
    x = np.asarray(random_array(rng, (1031, MIN // 8 // 1031 + 3), np.float64), order=order)
    d = cuda.to_device(x)
    h = d.copy_to_host()
    assert is_ours(h)
    assert h.flags.c_contiguous == (order == "C") and h.flags.f_contiguous == (order == "F")
    np.testing.assert_array_equal(h, x)


VIEWS = {
    "every other row": lambda a: a[::2],
    "reversed columns": lambda a: a[:, ::-1],
    "transposed": lambda a: a.T,
    "inner block": lambda a: a[3:-5, 1:-2],
    "strided both ways": lambda a: a[1::3, ::2],
}


@pytest.mark.parametrize("view", VIEWS)
def test_strided_sources(rng, view):
    x = random_array(rng, (2053, 1537), np.float32)  # 12 MiB: views still above MIN
    expected = VIEWS[view](x)
    h = VIEWS[view](cuda.to_device(x)).copy_to_host()
    np.testing.assert_array_equal(h, expected)
    assert is_ours(h) == (expected.nbytes >= MIN)
    assert h.flags.c_contiguous or h.flags.f_contiguous


def test_every_way_to_a_new_host_array(rng):
    x = random_array(rng, (MIN // 8 + 11,), np.float64)
    d = cuda.to_device(x)
    for h in (d.copy_to_host(), d.get(), pygpu.asnumpy(d), pickle.loads(pickle.dumps(d))
              .copy_to_host()):
        assert is_ours(h)
        np.testing.assert_array_equal(h, x)


def test_the_new_array_is_aligned_and_writeable(rng):
    x = random_array(rng, (MIN // 4 + 999,), np.int32)
    h = cuda.to_device(x).copy_to_host()
    assert h.flags.writeable and h.flags.aligned and not h.flags.owndata
    assert h.base.ptr == h.ctypes.data
    assert h.base.size == h.nbytes and h.base.device == -1
    if h.nbytes >= HUGE:
        assert h.ctypes.data % HUGE == 0  # every whole huge page can be one
    h[::7] = -5
    h += 1
    expected = x + 1
    expected[::7] = -4
    np.testing.assert_array_equal(h, expected)


MIB = 1 << 20


@pytest.mark.parametrize("stage", [MIB, 3 * MIB + 4096, 2 * HUGE, 8 * MIB])
@pytest.mark.parametrize("threads", [1, 2, 5, 17])
def test_staged_copies_at_any_piece_and_thread_count(rng, staged, threads, stage):
    """A new array is filled unit by unit (a huge page each where the piece is
    whole huge pages, else a piece) by the threads there are; the ring of 16
    pieces wraps; into existing memory and to the device, the same pieces."""
    s = _core._host_arrays(copy_threads=threads, stage_bytes=stage)
    assert s["copy_threads"] == threads and s["stage_bytes"] == stage and s["stage_always"]
    for n in (MIN + 4093, 16 * stage + 3 * 4096 + 5, 3 * MIB):
        x = random_array(rng, n, np.uint8)
        d = cuda.to_device(x)
        h = d.copy_to_host()
        assert is_ours(h) == (n >= MIN)
        np.testing.assert_array_equal(h, x)
        out = np.zeros_like(x)
        d.copy_to_host(out=out)
        np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("spin", [0, 1000, -1])
def test_staged_copies_whether_the_threads_spin_or_sleep(rng, staged, spin):
    s = _core._host_arrays(copy_threads=3, spin_ns=spin)
    assert s["spin_ns"] == (spin if spin >= 0 else 300000)
    x = random_array(rng, (3, MIN // 8 + 5 + (5 << 20) // 24), np.float64)
    d = cuda.to_device(x)
    for _ in range(3):
        np.testing.assert_array_equal(d.copy_to_host(), x)
        time.sleep(0.002)  # longer than the spin: the workers sleep between copies


def test_bad_settings_are_refused():
    before = _core._host_arrays()
    with pytest.raises(ValueError, match="min_bytes must be >= 1"):
        _core._host_arrays(min_bytes=0)
    with pytest.raises(ValueError, match="spin_ns must be >= -1"):
        _core._host_arrays(spin_ns=-2)
    with pytest.raises(ValueError, match="spin_ns must be <= 100000000"):
        _core._host_arrays(copy_threads=3, spin_ns=10**9)
    with pytest.raises(TypeError):
        _core._host_arrays(min_bytes="big")
    after = _core._host_arrays()
    for key in ("min_bytes", "copy_threads", "spin_ns", "stage_bytes"):
        assert after[key] == before[key]  # a refused call set nothing


def test_a_lower_threshold_maps_small_arrays_too(rng):
    old = _core._host_arrays()["min_bytes"]
    try:
        _core._host_arrays(min_bytes=1)
        for n in (1, 3, 4096, 4097, 70000):
            x = random_array(rng, n, np.uint8)
            h = cuda.to_device(x).copy_to_host()
            assert is_ours(h)
            np.testing.assert_array_equal(h, x)
        assert pygpu.empty(0).copy_to_host().base is None  # nothing to map
    finally:
        _core._host_arrays(min_bytes=old)


# ---- lifetime ------------------------------------------------------------------------

def test_the_memory_is_unmapped_with_the_last_array(rng):
    before = mapped()
    x = random_array(rng, (MIN // 8 + 1,), np.float64)
    h = cuda.to_device(x).copy_to_host()
    assert mapped() == before + 1
    assert _core._host_arrays()["mapped_bytes"] >= h.nbytes
    del h
    assert mapped() == before


def test_views_keep_the_memory_after_the_array_and_the_device_array_go(rng):
    before = mapped()
    x = random_array(rng, (64, MIN // 8 // 64 + 3), np.float64)
    d = cuda.to_device(x)
    h = d.copy_to_host()
    v = h[5:, ::3]
    del h, d
    gc.collect()
    assert mapped() == before + 1
    np.testing.assert_array_equal(v, x[5:, ::3])
    del v
    assert mapped() == before


def test_copies_and_pickles_outlive_the_original(rng):
    x = random_array(rng, (MIN // 2 + 3,), np.int16)
    h = cuda.to_device(x).copy_to_host()
    shallow, deep, pickled = copy.copy(h), copy.deepcopy(h), pickle.loads(pickle.dumps(h))
    del h
    gc.collect()
    for c in (shallow, deep, pickled):
        np.testing.assert_array_equal(c, x)
        assert c.flags.writeable


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_the_address_range_leaves_the_process_map(rng):
    def ranges():
        with open("/proc/self/maps") as f:
            return [tuple(int(v, 16) for v in line.split()[0].split("-")) for line in f]

    x = random_array(rng, (MIN + 12345,), np.uint8)
    h = cuda.to_device(x).copy_to_host()
    start, end = h.ctypes.data, h.ctypes.data + h.nbytes
    assert any(lo <= start and end <= hi for lo, hi in ranges())
    del h
    gc.collect()
    assert not any(lo < end and start < hi for lo, hi in ranges())


def test_many_arrays_leak_nothing(rng):
    before = mapped()
    x = random_array(rng, (MIN // 4 + 1,), np.float32)
    d = cuda.to_device(x)
    for _ in range(30):
        h = d.copy_to_host()
        assert h[-1] == x[-1]
    del h
    assert mapped() == before
    assert _core._host_arrays()["mapped_bytes"] == 0 or before > 0


def failures_in_threads(check, n=4):
    """check(i) on n threads at once: the i that found a wrong copy, and the
    exceptions raised."""
    errors = []

    def work(i):
        try:
            if not check(i):
                errors.append(i)
        except Exception as e:  # noqa: BLE001 - reported by the caller
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_copies_from_several_threads_at_once(rng):
    xs = [random_array(rng, (MIN // 8 + 17 * i,), np.float64) for i in range(4)]
    ds = [cuda.to_device(x) for x in xs]
    assert failures_in_threads(
        lambda i: all(np.array_equal(ds[i].copy_to_host(), xs[i]) for _ in range(5))) == []


def test_staged_copies_both_ways_from_several_threads_at_once(rng, staged):
    """One thread's staged copy runs as a job on the pool; a thread that finds
    the pool busy stages its copy alone: every copy exact either way."""
    _core._host_arrays(copy_threads=3)
    xs = [random_array(rng, (MIN // 8 + 4099 * i,), np.float64) for i in range(4)]

    def check(i):
        d = cuda.to_device(xs[i])
        for _ in range(4):
            d.copy_to_device(xs[i][::-1].copy())
            out = np.zeros_like(xs[i])
            d.copy_to_host(out=out)
            if not (np.array_equal(out, xs[i][::-1])
                    and np.array_equal(cuda.to_device(xs[i]).copy_to_host(), xs[i])):
                return False
        return True
    assert failures_in_threads(check) == []


@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("piece", [0, 3, 20])
def test_a_staged_copy_that_fails_midway_stops_its_workers(rng, staged, threads, piece):
    """A staged copy that fails at its first, a middle or its ring-wrapping
    piece (fail_piece), while the pool's workers copy the pieces ahead:
    the copy raises, its workers leave, and the next copies are exact."""
    _core._host_arrays(copy_threads=threads, stage_bytes=MIB)
    x = random_array(rng, 24 * MIB // 8, np.float64)
    d = cuda.to_device(x)
    for copy_in in (True, False):
        _core._host_arrays(fail_piece=piece)
        with pytest.raises(pygpu.CudaError, match="invalid argument"):
            if copy_in:
                d.copy_to_device(x[::-1].copy())
            else:
                d.copy_to_host()
    np.testing.assert_array_equal(d.copy_to_host()[piece * MIB // 8:],
                                  x[piece * MIB // 8:])  # no piece from there on went
    d.copy_to_device(x[::-1].copy())
    np.testing.assert_array_equal(d.copy_to_host(), x[::-1])


def test_a_capturing_thread_copies_nothing_between_host_and_device(rng, staged):
    """cuda.graph records no copy between host and device, on any stream: a
    staged copy would wait for its pieces, which a capturing thread must not;
    small and large copies are refused alike."""
    x = random_array(rng, 3 * MIB // 8, np.float64)
    d = cuda.to_device(x)
    s = cuda.stream()
    for n in (1024, x.size):
        for transfer in (lambda n=n: cuda.to_device(x[:n], stream=s),
                         lambda n=n: d[:n].copy_to_host(stream=s)):
            with pytest.raises(pygpu.CudaError, match="captured"):
                with cuda.graph():
                    transfer()
    np.testing.assert_array_equal(d.copy_to_host(stream=s), x)

# ---- failures, signals, fork ---------------------------------------------------------

def run_python(code, timeout=120):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS")
def test_no_memory_for_the_array_is_a_memory_error_and_leaks_nothing():
    r = run_python("""
        import resource, numpy as np, pygpu
        from pygpu import _core, cuda
        d = pygpu.zeros(64 << 17)                       # 64 MiB on the device
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (size + (16 << 20), hard))
        try:
            d.copy_to_host()
            print("no error")
        except MemoryError as e:
            print("MemoryError:", e)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        print("mapped", _core._host_arrays()["mapped"])
        print("still works", bool((d.copy_to_host() == 0).all()))
    """)
    assert r.returncode == 0, r.stderr
    assert "MemoryError: Unable to allocate 64.00 MiB for a host array" in r.stdout
    assert "mapped 0" in r.stdout and "still works True" in r.stdout


def test_ctrl_c_during_copies_into_new_arrays_raises_and_leaks_nothing():
    child = textwrap.dedent("""
        import gc, sys, numpy as np, pygpu
        from pygpu import _core, cuda
        d = cuda.to_device(np.arange(4 << 20, dtype=np.float64))   # 32 MiB
        print("ready", flush=True)
        try:
            while True:
                h = d.copy_to_host()
        except KeyboardInterrupt:
            h = None
            gc.collect()
            print("interrupted", _core._host_arrays()["mapped"], flush=True)
    """)
    p = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 0, err[-3000:]
    assert out.split() == ["interrupted", "0"], err[-3000:]


@pytest.mark.simulator
@pytest.mark.parametrize("always", [False, True])
def test_a_forked_child_copies_into_new_arrays_and_frees_the_parents(always):
    r = run_python(f"""
        import gc, os, numpy as np, pygpu
        from pygpu import _core, cuda
        _core._host_arrays(stage_always={always}, copy_threads=4)
        big = np.arange(3 << 20, dtype=np.float64) + 0.5
        d = cuda.to_device(big)
        kept = d.copy_to_host()                    # the parent's, inherited
        pid = os.fork()
        if pid == 0:
            ok = all((d.copy_to_host() == big).all() for _ in range(3))
            ok = ok and (kept == big).all()
            del kept
            gc.collect()
            os._exit(0 if ok and _core._host_arrays()["mapped"] == 0 else 5)
        _, status = os.waitpid(pid, 0)
        print("child exit", os.waitstatus_to_exitcode(status))
        print("parent", bool((kept == big).all()), _core._host_arrays()["mapped"])
    """)
    assert r.returncode == 0, r.stderr
    assert "child exit 0" in r.stdout and "parent True 1" in r.stdout


@pytest.mark.simulator
def test_a_child_forked_during_another_threads_staged_copies_copies_too():
    """A thread of the parent holds a staging ring's lock while it copies; the
    child, where that thread does not exist, finds the lock free."""
    r = run_python("""
        import os, threading, time, numpy as np
        from pygpu import _core, cuda
        _core._host_arrays(stage_always=True, copy_threads=3)
        x = np.arange(12 << 20, dtype=np.float32)
        d = cuda.to_device(x)
        stop = False

        def copies():
            while not stop:
                d.copy_to_host()

        t = threading.Thread(target=copies, daemon=True)
        t.start()
        time.sleep(0.2)
        codes = []
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                import faulthandler
                faulthandler.dump_traceback_later(20, exit=True)
                ok = (cuda.to_device(x).copy_to_host() == x).all()
                os._exit(0 if ok else 5)
            codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        stop = True
        t.join()
        print("children", codes)
    """)
    assert r.returncode == 0, r.stderr
    assert "children [0, 0, 0, 0]" in r.stdout, r.stdout + r.stderr[-2000:]


def test_the_new_array_is_pageable_memory(rng):
    h = cuda.to_device(random_array(rng, (MIN,), np.uint8)).copy_to_host()
    assert not cuda.is_pinned(h)


@pytest.mark.parametrize("always", [False, True])
def test_copy_settings_change_between_copies_and_copies_stay_exact(rng, always):
    """The host memcpy's threads and the staged piece (tuning settings) can change
    between copies, in both directions, also from several threads at once; a
    piece larger than the most allowed is refused."""
    import threading

    before = _core._host_arrays()
    mib = 1 << 20
    sizes = [MIN + 4093, 3 * mib + 1, 9 * mib + 7]
    errors = []

    def copies(seed):
        r = np.random.default_rng(seed)
        for n in sizes:
            a = r.integers(0, 255, n, dtype=np.uint8)
            d = cuda.to_device(a[1:])              # an unaligned pageable source
            out = np.empty(n - 1, np.uint8)
            d.copy_to_host(out=out)
            if not (np.array_equal(d.copy_to_host(), a[1:]) and np.array_equal(out, a[1:])):
                errors.append((seed, n))

    _core._host_arrays(stage_always=always)
    try:
        for threads, stage in ((1, mib), (3, 2 * mib), (5, 16 * mib), (-1, before["stage_bytes"])):
            s = _core._host_arrays(copy_threads=threads, stage_bytes=stage)
            assert s["stage_bytes"] == stage
            assert s["copy_threads"] >= 1
            workers = [threading.Thread(target=copies, args=(k,)) for k in range(3)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
        assert errors == []
        with pytest.raises(ValueError, match="stage_bytes must be <="):
            _core._host_arrays(copy_threads=2, stage_bytes=1 << 40)
        assert _core._host_arrays()["copy_threads"] == before["copy_threads"]
        with pytest.raises(ValueError, match="copy_threads must be >= -1"):
            _core._host_arrays(copy_threads=-2)
    finally:
        _core._host_arrays(copy_threads=-1, stage_bytes=before["stage_bytes"],
                           stage_always=False)
