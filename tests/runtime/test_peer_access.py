"""Several devices at the runtime layer: peer access as the backend reports and
enables it, and the simulator's separate device memories, which refuse a kernel
that touches another device's memory without peer access (as a GPU faults).
Peer access, once enabled, stays so for the process, so the cases that need
it not yet enabled each run in a fresh interpreter."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pygpu
from pygpu import cuda

two_devices = pytest.mark.skipif(len(cuda.gpus) < 2, reason="needs two devices")


def run_python(code, **env_changes):
    env = dict(os.environ, PYGPU_SIMULATOR="1", PYGPU_SIM_DEVICES="2",
               PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("PYGPU_SIM_PEER", None)
    env.update(env_changes)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120)


class Foreign:
    """Device memory exported by another library: pygpu asks the backend
    which device owns it (pointer_device)."""

    def __init__(self, d):
        self.__cuda_array_interface__ = d.__cuda_array_interface__
        self.keep = d


@two_devices
def test_each_devices_memory_is_owned_by_that_device(rng):
    for i in range(2):
        with cuda.gpus[i]:
            host = rng.standard_normal(100)
            d = cuda.to_device(host)
        with cuda.gpus[1 - i]:
            wrapped = pygpu.asarray(Foreign(d))
        assert wrapped.device.id == i
        assert wrapped.__cuda_array_interface__["data"][0] == \
            d.__cuda_array_interface__["data"][0]
        np.testing.assert_array_equal(wrapped.copy_to_host(), host)


def test_peer_access_is_reported_for_every_pair():
    n = len(cuda.gpus)
    for a in range(n):
        assert pygpu._core.peer_access(a, a) is True
        for b in range(n):
            assert isinstance(pygpu._core.peer_access(a, b), bool)


def test_peer_access_refuses_devices_that_do_not_exist():
    n = len(cuda.gpus)
    with pytest.raises(ValueError, match=f"device {n} does not exist: there"):
        pygpu._core.peer_access(0, n)
    with pytest.raises(ValueError, match="device -1 does not exist"):
        pygpu._core.peer_access(-1, 0)
    with pytest.raises(TypeError, match="a device id must be an int, not bool"):
        pygpu._core.peer_access(True, 0)
    with pytest.raises(TypeError, match="missing required argument 'peer'"):
        pygpu._core.peer_access(0)


@pytest.mark.simulator
def test_simulated_devices_can_all_have_peer_access():
    if len(cuda.gpus) < 2:
        pytest.skip("one device only")
    assert pygpu._core.peer_access(0, 1) and pygpu._core.peer_access(1, 0)


# A kernel on device 0 given device-1 memory: refused, and the memory untouched;
# the same kernel on device 1 runs; once peer access 0 -> 1 is enabled, it runs
# on device 0 too, but not 1 -> 0 (pairs are ordered).
ACROSS_DEVICES = """
    import numpy as np, pygpu
    from pygpu import cuda
    with cuda.gpus[1]:
        d1 = cuda.to_device(np.arange(64, dtype=np.uint8))
    with cuda.gpus[0]:
        d0 = cuda.to_device(np.arange(64, dtype=np.uint8))
        try:
            pygpu._core._fill_bytes_here(d1, 7)
        except pygpu.CudaError as e:
            assert e.name == "cudaErrorPeerAccessNotEnabled" and e.code == 705, e
            assert str(e) == ("launch of kernel fill failed: "
                              "cudaErrorPeerAccessNotEnabled: a kernel on device 0 "
                              "touched memory of device 1, and peer access between "
                              "them is not enabled"), str(e)
        else:
            raise AssertionError("device 0 wrote device 1's memory")
        assert (d1.copy_to_host() == np.arange(64)).all()
    with cuda.gpus[1]:
        pygpu._core._fill_bytes_here(d1, 7)
        assert (d1.copy_to_host() == 7).all()
    enabled = pygpu._core.peer_access(0, 1, enable=True)
    print("enabled", enabled)
    with cuda.gpus[0]:
        try:
            pygpu._core._fill_bytes_here(d1, 9)
            print("0->1 ran", (d1.copy_to_host() == 9).all())
        except pygpu.CudaError as e:
            print("0->1 refused", e.name)
    with cuda.gpus[1]:
        try:
            pygpu._core._fill_bytes_here(d0, 9)
            print("1->0 ran")
        except pygpu.CudaError as e:
            assert "a kernel on device 1 touched memory of device 0" in str(e), e
            print("1->0 refused", e.name)
"""


@pytest.mark.simulator
def test_a_kernel_refuses_another_devices_memory_until_peer_access_is_enabled():
    r = run_python(ACROSS_DEVICES)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines() == [
        "enabled True", "0->1 ran True", "1->0 refused cudaErrorPeerAccessNotEnabled"]


@pytest.mark.simulator
def test_without_peer_access_kernels_stay_on_their_device_and_copies_still_work():
    r = run_python(ACROSS_DEVICES + """
    assert not pygpu._core.peer_access(0, 1) and not pygpu._core.peer_access(1, 0)
    assert pygpu._core.peer_access(1, 1)
    with cuda.gpus[0]:
        src = cuda.to_device(np.arange(64, dtype=np.uint8) * 3)
    with cuda.gpus[1]:
        d1[...] = 0
        d1.copy_to_device(src)
    assert (d1.copy_to_host() == np.arange(64, dtype=np.uint8) * 3).all()
    print("copied")
    """, PYGPU_SIM_PEER="0")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines() == [
        "enabled False", "0->1 refused cudaErrorPeerAccessNotEnabled",
        "1->0 refused cudaErrorPeerAccessNotEnabled", "copied"]


# Operations on device-1 arrays while device 0 is current, one per prebuilt
# kernel: each either runs where its data is and gives NumPy's answer, or is
# refused (before launching, or by the simulator if it launched on device 0). Never a silent read of
# another device's memory (on a GPU: an illegal-address fault).
EVERY_KERNEL = """
    import numpy as np, pygpu
    from pygpu import cuda
    rng = np.random.default_rng(5)
    a = rng.standard_normal((130, 130)).astype(np.float32)
    b = rng.standard_normal((130, 130)).astype(np.float32)
    with cuda.gpus[1]:
        d1, e1 = cuda.to_device(a), cuda.to_device(b)
        out1 = pygpu.empty_like(d1)

    def set_scalar():
        d = d1.copy()
        d[::3] = 2.5
        return d

    def add_one():
        d = d1.copy()
        pygpu.kernels.add_one[4, 256](d)
        return d

    ops = [
        ("copy_strided", lambda: d1[::2, ::3].copy(), a[::2, ::3]),
        ("fill", set_scalar, np.where(np.arange(130)[:, None] % 3 == 0, 2.5, a)),
        ("add", lambda: d1 + e1, a + b),
        ("add_one", add_one, a + 1),
        ("binary", lambda: d1 * e1, a * b),
        ("binary cast", lambda: d1.astype(np.float64), a.astype(np.float64)),
        ("matmul_naive", lambda: pygpu.matmul(d1, e1, method="naive"), a @ b),
        ("matmul_shared", lambda: pygpu.matmul(d1, e1, method="shared"), a @ b),
        ("matmul_tiled", lambda: d1 @ e1, a @ b),
    ]
    with cuda.gpus[0]:
        for name, op, ref in ops:
            try:
                got = op().copy_to_host()
            except pygpu.CudaError as e:
                assert e.name == "cudaErrorPeerAccessNotEnabled", (name, e)
                assert "device 0 touched memory of device 1" in str(e), (name, e)
                print(name, "refused")
            except ValueError as e:  # refused before any launch
                assert "is on device 1" in str(e), (name, e)
                print(name, "refused")
            else:
                err = np.abs(got - ref).max() / np.abs(ref).max()
                assert err < 1e-5, (name, err)
                print(name, "ran")
"""


@pytest.mark.simulator
def test_no_prebuilt_kernel_on_one_device_reads_another_devices_memory():
    r = run_python(EVERY_KERNEL)
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(r.stdout.splitlines()) == 9, r.stdout


@pytest.mark.parametrize("value, can", [("0", False), ("1", True), (" 1 ", True),
                                        ("", True)])
@pytest.mark.simulator
def test_sim_peer_setting_is_0_or_1(value, can):
    r = run_python("""
        import pygpu
        print(pygpu._core.peer_access(0, 1), pygpu._core.peer_access(1, 0))
    """, PYGPU_SIM_PEER=value)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == [str(can), str(can)]


@pytest.mark.simulator
def test_bad_sim_peer_settings_are_refused():
    r = run_python("""
        import os, pygpu
        from pygpu import cuda
        for v in ["2", "yes", "true", "01", "0 1", "-1", "on"]:
            os.environ["PYGPU_SIM_PEER"] = v
            for op in (lambda: pygpu.zeros(1), cuda.is_available, lambda: cuda.gpus[0]):
                try:
                    op()
                except ValueError as e:
                    assert f"PYGPU_SIM_PEER is {v!r}; give 1" in str(e), str(e)
                else:
                    raise AssertionError(f"PYGPU_SIM_PEER={v!r} was accepted")
        print("ok")
    """)
    assert r.returncode == 0 and r.stdout.split() == ["ok"], r.stderr[-3000:]


@pytest.mark.simulator
@pytest.mark.parametrize("devices, peer", [("1", "1"), ("3", "1"), ("2", "0")])
def test_detect_shows_peer_access_between_each_pair(devices, peer):
    r = run_python("""
        from pygpu import cuda
        assert cuda.detect()
    """, PYGPU_SIM_DEVICES=devices, PYGPU_SIM_PEER=peer)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    n = int(devices)
    assert sum(line.startswith("id ") for line in lines) == n
    if n == 1:
        assert "peer access" not in r.stdout
        return
    at = next(i for i, line in enumerate(lines) if line.startswith("peer access"))
    assert lines[at + 1].split() == [str(j) for j in range(n)]
    for i in range(n):
        cells = lines[at + 2 + i].split()
        assert cells[0] == str(i)
        assert cells[1:] == ["-" if i == j else "yes" if peer == "1" else "no"
                             for j in range(n)]
