"""Several devices: every operation runs where its data is, whatever device is
current; arrays of two devices in one operation are refused; copies between
devices work for every layout. On CI these run on two simulated devices with
separate memories (a kernel touching another device's memory fails the
launch, as on a GPU without peer access); on a machine with two GPUs, on
both."""

import gc
import subprocess
import sys
import threading

import numpy as np
import pytest
from conftest import random_array

import pygpu
from pygpu import cuda, kernels

pytestmark = pytest.mark.skipif(len(cuda.gpus) < 2, reason="needs two devices")


def on(device, h):
    with cuda.gpus[device]:
        return cuda.to_device(h)


@pytest.fixture(params=[(1, 0), (0, 1)], ids=["data-on-1-current-0", "data-on-0-current-1"])
def devices(request):
    return request.param  # (where the data is, which device is current)


def test_operations_run_where_their_data_is(rng, devices):
    data, current = devices
    h = random_array(rng, (6, 5), np.float32)
    g = random_array(rng, (6, 5), np.float32)
    d, e = on(data, h), on(data, g)
    with cuda.gpus[current]:
        results = {
            "copy": (d.copy(), h),
            "view copy": (d[::2, ::3].copy(), h[::2, ::3]),
            "T copy": (d.T.copy(), h.T),
            "+": (d + e, h + g),
            "- scalar": (d - 1.5, h - 1.5),
            "*": (d * e[0], h * g[0]),
            "<": (d < e, h < g),
            "astype": (d.astype(np.float64), h.astype(np.float64)),
            "@": (d @ e.T, h @ g.T),
        }
        for name, (r, expected) in results.items():
            assert r.device.id == data, name
            np.testing.assert_allclose(r.copy_to_host(), expected, rtol=1e-5, err_msg=name)
        pygpu.add_one(d)
        kernels.add_one[4, 32](e)
        kernels.add[4, 32](d, e, d)
        np.testing.assert_allclose(d.copy_to_host(), h + 1 + g + 1, rtol=1e-6)
        d[1:3] = 7.0
        d[0] = e[5]
        d[:, 0] = d[:, 1]
        expected = h + 1 + g + 1
        expected[1:3] = 7.0
        expected[0] = g[5] + 1
        expected[:, 0] = expected[:, 1]
        np.testing.assert_allclose(d.copy_to_host(), expected, rtol=1e-6)
        assert d.device.id == data


def test_copies_between_devices_in_every_layout(rng, devices):
    data, current = devices
    h = random_array(rng, (7, 9), np.float64)
    d = on(data, h)
    with cuda.gpus[current]:
        for name, src, expected in [("C", d, h), ("F", d.T, h.T), ("strided", d[1::2, ::-3],
                                    h[1::2, ::-3]), ("row", d[3], h[3]),
                                    ("F copy", d.copy(order="F"), h)]:
            c = cuda.to_device(src)  # to the current device
            assert c.device.id == current, name
            np.testing.assert_array_equal(c.copy_to_host(), expected, err_msg=name)
        # into arrays of the current device, of every layout
        dst = pygpu.zeros((9, 7))
        dst.copy_to_device(d.T)
        np.testing.assert_array_equal(dst.copy_to_host(), h.T)
        dst[::2, 1:] = d.T[::2, 1:]
        dst[...] = d[0, :7]  # a broadcast row from the other device
        np.testing.assert_array_equal(dst.copy_to_host(), np.broadcast_to(h[0, :7], (9, 7)))
        f = pygpu.zeros((7, 9), np.float32)
        f[...] = d  # another dtype from the other device
        np.testing.assert_array_equal(f.copy_to_host(), h.astype(np.float32))


def test_arrays_of_two_devices_in_one_operation_are_refused(rng):
    a, b = on(0, np.ones(4)), on(1, np.ones(4))
    with pytest.raises(ValueError, match=r"different devices \(0 and 1\)"):
        a + b
    with pytest.raises(ValueError, match=r"different devices \(1 and 0\)"):
        pygpu.add(b, b, out=a)
    with pytest.raises(ValueError, match="is on device 1, but the launch runs on device 0"):
        kernels.add[1, 32](a, b, a)
    with pytest.raises(ValueError, match="device"):
        a.reshape(1, 4) @ b.reshape(4, 1)


def test_streams_belong_to_a_device():
    with cuda.gpus[0]:
        s0 = cuda.stream()
        ev0 = cuda.event()
    with cuda.gpus[1]:
        d1 = pygpu.zeros(8)
        ev1 = cuda.event()
    with pytest.raises(ValueError, match="stream belongs to device 0"):
        pygpu.add(d1, d1, stream=s0)
    with pytest.raises(ValueError, match="stream belongs to device 0"):
        d1.copy_to_host(stream=s0)
    with pytest.raises(ValueError, match="stream belongs to device 0"):
        kernels.add_one[1, 32, s0](d1)
    with pytest.raises(ValueError, match="stream belongs to device 0"):
        ev1.record(s0)
    # the current stream of another device gives way to the data's device's default
    with s0:
        r = d1 + 1
        kernels.add_one[1, 32](d1)
    np.testing.assert_array_equal(r.copy_to_host(), np.ones(8))
    ev0.record()
    ev1.record()
    ev0.synchronize()
    ev1.synchronize()
    with pytest.raises(ValueError, match="two devices"):
        ev0.elapsed_time(ev1)


def test_each_device_has_its_pool_and_frees_where_it_allocated():
    gc.collect()
    before = [cuda.memory_allocated(device=i) for i in (0, 1)]
    with cuda.gpus[1]:
        d1 = pygpu.zeros(1 << 16)
    assert cuda.memory_allocated(device=1) >= before[1] + (1 << 19)
    assert cuda.memory_allocated(device=0) == before[0]
    with cuda.gpus[0]:
        del d1  # freed on device 1 while device 0 is current
        gc.collect()
    assert cuda.memory_allocated(device=1) == before[1]


def test_threads_each_drive_their_own_device(rng):
    errors, results = [], {}

    def work(device):
        try:
            with cuda.gpus[device]:
                x = random_array(np.random.default_rng(device), (64, 64), np.float32)
                d = cuda.to_device(x)
                for _ in range(20):
                    d = d @ cuda.to_device(np.eye(64, dtype=np.float32)) + 0
                    with cuda.gpus[1 - device]:  # nesting across devices, per thread
                        assert cuda.get_current_device().id == 1 - device
                    assert cuda.get_current_device().id == device
                results[device] = (d.device.id, np.allclose(d.copy_to_host(), x))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == {0: (0, True), 1: (1, True)}


def test_process_exit_with_live_arrays_on_both_devices():
    code = ("import pygpu\nfrom pygpu import cuda\n"
            "keep = []\n"
            "for i in (0, 1):\n"
            "    with cuda.gpus[i]:\n"
            "        keep.append(pygpu.zeros((100, 100)) + 1)\n"
            "        keep.append(cuda.stream())\n"
            "keep.append(keep[0][::2])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_detect_shows_every_device_and_peer_access(capsys):
    cuda.detect()
    out = capsys.readouterr().out
    assert "peer access" in out.lower() or "peer" in out.lower()
    for i in range(len(cuda.gpus)):
        assert f"[{i}]" in out or f"{i}:" in out or f"device {i}" in out.lower()
