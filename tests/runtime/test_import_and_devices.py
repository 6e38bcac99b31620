"""Import anywhere, device discovery, device selection."""

import os
import subprocess
import sys
import textwrap

import pytest
from conftest import GPU_PRESENT, ON_SIMULATOR

import pygpu
from pygpu import cuda


def run_python(code, **env_changes):
    env = dict(os.environ)
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120)


def test_import_without_simulator_flag_reports_the_real_device_state():
    r = run_python("import pygpu; print(pygpu.cuda.is_available(), pygpu.cuda.is_simulator())",
                   PYGPU_SIMULATOR=None)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(GPU_PRESENT), "False"]


@pytest.mark.skipif(GPU_PRESENT, reason="a GPU is present, so there is no NoDeviceError")
def test_first_device_operation_without_gpu_raises_no_device_error():
    r = run_python("""
        import pygpu
        try:
            pygpu.zeros(3)
        except pygpu.NoDeviceError as e:
            assert isinstance(e, pygpu.CudaError)
            print("NoDeviceError", e.name)
            print(e)
    """, PYGPU_SIMULATOR=None)
    assert r.returncode == 0, r.stderr
    first, message = r.stdout.split("\n", 1)
    assert first.startswith("NoDeviceError cudaError")
    assert "PYGPU_SIMULATOR=1" in message
    assert "cudaGetDeviceCount failed" in message or "without the CUDA toolkit" in message


@pytest.mark.skipif(GPU_PRESENT, reason="a GPU is present")
def test_detect_without_gpu_explains_and_returns_false():
    r = run_python("import pygpu; print(pygpu.cuda.detect())", PYGPU_SIMULATOR=None)
    assert r.returncode == 0, r.stderr
    assert "Found no CUDA device" in r.stdout
    assert "PYGPU_SIMULATOR=1" in r.stdout
    assert r.stdout.strip().endswith("False")


@pytest.mark.gpu
def test_import_creates_no_cuda_context():
    r = run_python("""
        import ctypes
        import pygpu
        assert pygpu.cuda.is_available()
        cuda = ctypes.CDLL("libcuda.so.1")
        assert cuda.cuInit(0) == 0
        dev = ctypes.c_int()
        assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
        flags, active = ctypes.c_uint(), ctypes.c_int()
        assert cuda.cuDevicePrimaryCtxGetState(dev, ctypes.byref(flags), ctypes.byref(active)) == 0
        print("active before", active.value)
        pygpu.zeros(4)
        assert cuda.cuDevicePrimaryCtxGetState(dev, ctypes.byref(flags), ctypes.byref(active)) == 0
        print("active after", active.value)
    """, PYGPU_SIMULATOR=None)
    assert r.returncode == 0, r.stderr
    assert "active before 0" in r.stdout
    assert "active after 1" in r.stdout


def test_is_available_and_simulator_flags():
    assert cuda.is_available()
    assert cuda.is_simulator() == ON_SIMULATOR


def test_detect_prints_one_line_per_device(capsys):
    assert cuda.detect() is True
    out = capsys.readouterr().out.strip().splitlines()
    n = len(cuda.gpus)
    assert n >= 1
    # with two or more devices, the peer-access matrix follows (test_peer_access.py);
    # then what @ runs in (test_matmul.py) and the NVIDIA libraries loaded
    # (test_library_search.py)
    assert len(out) == n + 1 + (n + 2 if n > 1 else 0) + 2
    assert out[-2].startswith("matmul: ")
    assert out[-1].startswith("libraries: ")
    for i, line in enumerate(out[1:n + 1]):
        dev = cuda.gpus[i]
        assert line.startswith(f"id {i}: {dev.name}")
        major, minor = dev.compute_capability
        assert f"compute capability {major}.{minor}" in line
        assert "GiB total" in line and "GiB free" in line
        assert f"{dev.multiprocessor_count} multiprocessors" in line


def test_device_properties_are_sane():
    dev = cuda.gpus[0]
    assert isinstance(dev, pygpu.Device)
    assert dev.id == 0
    assert isinstance(dev.name, str) and dev.name
    major, minor = dev.compute_capability
    assert major >= 7 and minor >= 0
    assert dev.total_memory > 2**28
    free, total = dev.mem_info()
    assert total == dev.total_memory
    assert 0 < free <= total
    assert dev.multiprocessor_count >= 1
    assert dev.warp_size == 32
    assert dev.max_threads_per_block >= 512
    assert len(dev.max_block_dim) == 3 and dev.max_block_dim[0] >= 512
    assert len(dev.max_grid_dim) == 3 and dev.max_grid_dim[0] >= 65535
    assert dev.shared_memory_per_block >= 16 * 1024
    assert dev.pci_bus_id.count(":") == 2
    assert dev.is_simulator == ON_SIMULATOR
    attrs = dev.attributes
    for key in ("l2_cache_size", "max_threads_per_multiprocessor", "registers_per_block",
                "unified_addressing", "shared_memory_per_block_optin"):
        assert key in attrs
    assert attrs["unified_addressing"] is True
    assert ("simulated" in repr(dev)) == ON_SIMULATOR
    if ON_SIMULATOR:
        assert "simulator" in dev.name


def test_gpus_sequence_and_bad_indices():
    n = len(cuda.gpus)
    assert [d.id for d in cuda.gpus] == list(range(n))
    assert cuda.gpus[-1].id == n - 1
    assert cuda.gpus[0] == pygpu.Device(0)
    with pytest.raises(IndexError, match="out of range"):
        cuda.gpus[n]
    with pytest.raises(TypeError):
        cuda.gpus["0"]
    with pytest.raises(ValueError, match="does not exist"):
        cuda.select_device(n)
    with pytest.raises(ValueError, match="does not exist"):
        pygpu.Device(-1)
    with pytest.raises(TypeError, match="must be an int"):
        pygpu.Device(1.0)


@pytest.mark.parametrize("call", [
    pygpu.Device, cuda.select_device, pygpu._core.memory_allocated,
    pygpu._core._pool_stats, pygpu._core._pool_free_all,
    lambda d: pygpu._core._pool_set_limit(d, 0),
], ids=["Device", "select_device", "memory_allocated", "_pool_stats", "_pool_free_all",
        "_pool_set_limit"])
def test_every_device_argument_names_the_device_that_does_not_exist(call):
    # one check for every device id: the id as given (never clamped, never
    # truncated to 32 bits) and the ids there are
    n = len(cuda.gpus)
    before = pygpu._core.get_device()
    for bad in (n, 99, -1, 2**32, 2**32 + n, 2**70):
        with pytest.raises(ValueError, match=rf"device {bad} does not exist: .*0 to {n - 1}"):
            call(bad)
    for bad in (True, 1.0, "0"):
        with pytest.raises(TypeError, match="must be an int"):
            call(bad)
    assert pygpu._core.get_device() == before
    call(n - 1)  # the last device is taken
    cuda.select_device(before)


def test_memory_allocated_and_pool_stats_count_the_device_asked_for():
    d = pygpu.zeros(1000, dtype="f8")
    last = len(cuda.gpus) - 1
    assert pygpu._core.memory_allocated(0) >= d.nbytes
    assert pygpu._core._pool_stats(0)[0] == pygpu._core.memory_allocated(0)
    assert pygpu._core.memory_allocated(None) == pygpu._core.memory_allocated(0)
    if last > 0:
        with cuda.gpus[last]:
            e = pygpu.zeros(5000, dtype="f8")
        assert pygpu._core.memory_allocated(last) >= e.nbytes
    with pytest.raises(TypeError, match="_pool_stats"):
        pygpu._core._pool_stats(0, 1)


@pytest.mark.simulator
def test_simulated_devices_reach_the_one_device_limit():
    # PYGPU_SIM_DEVICES goes up to pygpu's device limit (64; more is refused, see
    # test_settings.py), and the last device is as usable as the first: its
    # memory pool, staging and properties all fit.
    r = run_python("""
        import numpy as np, pygpu
        from pygpu import cuda
        n = pygpu._core.device_count()
        last = pygpu.Device(n - 1)
        with last:
            a = cuda.to_device(np.arange(1 << 18, dtype=np.float64))
            pygpu.add_one(a)
            ok = (a.copy_to_host() == np.arange(1 << 18) + 1).all()
            used = cuda.memory_allocated()
        print(n, a.device.id, ok, used > 0, repr(last).endswith(", simulated>"))
    """, PYGPU_SIMULATOR="1", PYGPU_SIM_DEVICES="64")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["64", "63", "True", "True", "True"]


def test_select_device_and_with_block_restore_the_current_device():
    n = len(cuda.gpus)
    last = n - 1
    assert cuda.get_current_device().id == 0
    with cuda.gpus[last]:
        assert cuda.get_current_device().id == last
        a = pygpu.zeros(3)
        assert a.device.id == last
        with cuda.gpus[0]:
            assert cuda.get_current_device().id == 0
        assert cuda.get_current_device().id == last
    assert cuda.get_current_device().id == 0
    assert cuda.select_device(last).id == last
    assert cuda.get_current_device().id == last
    cuda.select_device(0)
    assert cuda.get_current_device().id == 0


def test_device_is_thread_local():
    import threading
    n = len(cuda.gpus)
    seen = []

    def worker():
        cuda.select_device(n - 1)
        seen.append(cuda.get_current_device().id)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == [n - 1]
    assert cuda.get_current_device().id == 0


def test_python_dash_m_pygpu_runs_the_demo():
    r = run_python("import runpy; runpy.run_module('pygpu', run_name='__main__')")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all results match NumPy" in r.stdout
    assert "vector add" in r.stdout and "matmul shared" in r.stdout
    if ON_SIMULATOR:
        assert "simulated device" in r.stdout
