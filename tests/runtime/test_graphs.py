"""CUDA graphs by stream capture: `with cuda.graph() as g:` records the work
queued in the block, `g.replay()` runs it again as one launch. The same tests
run on the simulator (which records the work as closures) and on a GPU."""

import gc
import threading

import numpy as np
import pytest
from conftest import matmul_error, random_array, rel_error

import pygpu
from pygpu import cuda, kernels

ADD_SOURCE = r'''
extern "C" __global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] += a * x[i];
    }
}
'''


def allocated():
    """Device memory in live arrays, once the garbage of earlier tests is gone."""
    gc.collect()
    return cuda.memory_allocated()


def plus_ones(h, count):
    """h + 1 + 1 + ... (count times), rounded after each add as a kernel does."""
    out = h.copy()
    for _ in range(count):
        out += h.dtype.type(1)
    return out


def capture_error(info):
    e = info.value
    assert isinstance(e, pygpu.CudaError)
    assert e.code == 900 and e.name == "cudaErrorStreamCaptureUnsupported"
    assert "cannot run while a CUDA graph is being captured" in str(e)
    return str(e)


def still_usable():
    """After a refusal: the thread is back on the default stream, waits work,
    and a new capture records and replays."""
    assert cuda.current_stream().ptr == 0
    cuda.synchronize()
    d = pygpu.zeros(8, dtype=np.float32)
    with cuda.graph() as g:
        kernels.add_one[1, 32](d)
    g.replay()
    g.replay()
    np.testing.assert_array_equal(d.copy_to_host(), np.full(8, 2, np.float32))


# ---- capture and replay -----------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_replays_of_n_launches_add_n_times_k(rng, dtype):
    n, k = 37, 5
    h = random_array(rng, (3, 129), dtype)
    d = cuda.to_device(h)
    launch = kernels.add_one[2, 64]  # made before the capture: current stream
    with cuda.graph() as g:
        assert g.state == "capturing" and "capturing" in repr(g)
        assert cuda.current_stream() == g.stream != cuda.default_stream()
        for _ in range(n):
            launch(d)
    assert g.state == "ready" and g.nodes == n and g.replays == 0
    assert g.stream is None and cuda.current_stream().ptr == 0
    np.testing.assert_array_equal(d.copy_to_host(), h)  # recorded, not run
    for _ in range(k):
        g.replay()
    cuda.synchronize()
    assert g.replays == k
    assert repr(g) == (f"<pygpu.Graph of {n} nodes on device 0, holding 1 buffer, "
                       f"replayed {k} times>")
    np.testing.assert_array_equal(d.copy_to_host(), plus_ones(h, n * k))


def test_the_benchmark_form_256_launches_then_one_replay():
    d = pygpu.zeros(32, dtype=np.float32)
    k = pygpu.kernels.add_one[1, 32]
    with cuda.graph() as g:
        for _ in range(256):
            k(d)
    cuda.synchronize()
    before = d.copy_to_host()
    g.replay()
    cuda.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), before + 256)


def test_every_launch_form_is_recorded(rng):
    a, b = random_array(rng, 1000, np.float32), random_array(rng, 1000, np.float32)
    da, db = cuda.to_device(a), cuda.to_device(b)
    out = pygpu.empty(1000, dtype=np.float32)
    with cuda.graph() as g:
        kernels.add[4, 256](da, db, out)       # a prebuilt kernel
        pygpu.add_one(out)                     # a function
        out += db                              # an operator, in place
    g.replay()
    expected = a.astype(np.float64) + 2 * b + 1
    assert rel_error(out.copy_to_host(), expected) < 1e-6


def test_results_allocated_in_the_block_are_recomputed_by_each_replay(rng):
    a, b = random_array(rng, (50, 40), np.float64), random_array(rng, (50, 40), np.float64)
    da, db = cuda.to_device(a), cuda.to_device(b)
    before = allocated()
    with cuda.graph() as g:
        s = da + db            # allocated during the capture: baked into the graph
        t = s * 2.0 - da       # a temporary (s * 2.0) goes too: the graph keeps it
        c = t > 0
    held = allocated() - before
    assert held >= 3 * a.nbytes + a.size  # s, t, c and the temporary, all kept
    g.replay()
    np.testing.assert_allclose(t.copy_to_host(), 2 * (a + b) - a, rtol=1e-12)
    np.testing.assert_array_equal(c.copy_to_host(), 2 * (a + b) - a > 0)
    a2 = random_array(rng, (50, 40), np.float64)
    da[...] = a2            # new input, the same memory
    g.replay()
    np.testing.assert_allclose(t.copy_to_host(), 2 * (a2 + b) - a2, rtol=1e-12)
    del s, t, c              # the graph still holds their memory
    assert allocated() - before == held
    g.replay()
    del g
    assert allocated() == before


def test_arrays_given_to_the_graph_stay_allocated_while_it_lives(rng):
    h = random_array(rng, 4096, np.float32)
    before = allocated()
    d = cuda.to_device(h)
    with cuda.graph() as g:
        pygpu.add_one(d)
    view = d[::2]
    del d
    assert allocated() == before + h.nbytes  # the graph holds it
    g.replay()
    g.replay()
    np.testing.assert_array_equal(view.copy_to_host(), plus_ones(h, 2)[::2])
    del view, g
    assert allocated() == before


def test_device_to_device_copies_and_memsets_are_recorded(rng):
    a = random_array(rng, (16, 33), np.float32)
    da = cuda.to_device(a)
    with cuda.graph() as g:
        b = pygpu.empty_like(da)
        b[...] = da            # a device-to-device copy
        pygpu.add_one(b)
        z = pygpu.zeros((16, 33), dtype=np.float32)  # a memset
        pygpu.add_one(z)
        c = da.T.copy()        # a strided copy (a kernel)
    g.replay()
    g.replay()
    np.testing.assert_array_equal(b.copy_to_host(), a + 1)  # copied anew each time
    np.testing.assert_array_equal(z.copy_to_host(), np.ones_like(a))
    np.testing.assert_array_equal(c.copy_to_host(), a.T)


def test_a_matrix_product_is_recorded(rng):
    a, b = random_array(rng, (64, 48), np.float64), random_array(rng, (48, 80), np.float64)
    da, db = cuda.to_device(a), cuda.to_device(b)
    da @ db  # a first product outside the block (on a GPU: cuBLAS's handle is made)
    with cuda.graph() as g:
        c = da @ db
        c2 = pygpu.matmul(da, db, method="shared")
    a2 = random_array(rng, (64, 48), np.float64)
    da[...] = a2
    g.replay()
    assert matmul_error(c.copy_to_host(), a2, b) < 1e-12
    assert matmul_error(c2.copy_to_host(), a2, b) < 1e-12


def test_a_raw_kernel_is_recorded_with_its_arguments_as_they_were(rng):
    k = pygpu.RawKernel(ADD_SOURCE, "axpy")
    n = 1000
    x, y = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    scale = np.float32(2.5)
    with cuda.graph() as g:
        k[(n + 127) // 128, 128](scale, dx, dy, np.int32(n))
        k[(n + 127) // 128, 128](np.float32(-1.0), dx, dy, np.int32(n))
    np.testing.assert_array_equal(dy.copy_to_host(), y)
    for _ in range(3):
        g.replay()
    assert g.nodes == 2
    expected = y.astype(np.float64) + 3 * 1.5 * x.astype(np.float64)
    np.testing.assert_allclose(dy.copy_to_host(), expected, rtol=1e-5, atol=1e-5)


def test_replay_on_another_stream_and_under_with_stream(rng):
    h = random_array(rng, 5000, np.float64)
    d = cuda.to_device(h)
    with cuda.graph() as g:
        for _ in range(3):
            pygpu.add_one(d)
    s = cuda.stream()
    g.replay(stream=s)
    g.replay(s)
    with s:
        g.replay()
    g.replay()               # on the default stream, at once: replays run in order
    cuda.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), plus_ones(h, 12))
    with pytest.raises(TypeError, match="stream must be"):
        g.replay(stream="s")


def test_work_of_another_thread_runs_while_this_one_captures(rng):
    h = random_array(rng, 300, np.float32)
    mine = cuda.to_device(h)
    seen = {}

    def other():
        try:
            d = cuda.to_device(h)
            pygpu.add_one(d)
            seen["result"] = d.copy_to_host()
        except Exception as exc:  # noqa: BLE001
            seen["error"] = exc

    with cuda.graph() as g:
        pygpu.add_one(mine)
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert "error" not in seen, seen.get("error")
    np.testing.assert_array_equal(seen["result"], h + 1)
    np.testing.assert_array_equal(mine.copy_to_host(), h)
    g.replay()
    np.testing.assert_array_equal(mine.copy_to_host(), h + 1)


@pytest.mark.simulator
def test_a_kernel_that_fails_in_a_replay_raises_there_and_the_graph_replays_again():
    k = pygpu.RawKernel(r'''
    #include <assert.h>
    extern "C" __global__ void nonnegative(const float *x, float *y, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            assert(x[i] >= 0.0f);
            y[i] += x[i];
        }
    }
    ''', "nonnegative")
    x, y = cuda.to_device(np.ones(64, np.float32)), pygpu.zeros(64, dtype=np.float32)
    with cuda.graph() as g:
        k[2, 32](x, y, np.int32(64))
    g.replay()
    x[40] = -1.0
    with pytest.raises(pygpu.KernelAssertionError, match="nonnegative"):
        g.replay()
    x[40] = 1.0
    before = y.copy_to_host()  # blocks of the failed replay may have run, or not
    g.replay()
    np.testing.assert_array_equal(y.copy_to_host(), before + 1)
    assert g.replays == 2  # a failed replay is not counted


# ---- what cannot be captured ------------------------------------------------------

REFUSED = {
    "copy_to_host": lambda d: d.copy_to_host(),
    "to_device": lambda d: cuda.to_device(np.ones(8)),
    "setitem from the host": lambda d: d.__setitem__(0, 5.0),
    "synchronize": lambda d: cuda.synchronize(),
    "device.synchronize": lambda d: cuda.get_current_device().synchronize(),
    "stream.synchronize": lambda d: cuda.current_stream().synchronize(),
    "event.synchronize": lambda d: cuda.event().synchronize(),
    "stream.query": lambda d: cuda.current_stream().query(),
    "stream.record": lambda d: cuda.current_stream().record(),
    "stream.wait_event": lambda d: cuda.current_stream().wait_event(cuda.event()),
    "event.record": lambda d: cuda.event().record(),
    "asnumpy": lambda d: pygpu.asnumpy(d),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_cannot_be_captured_raises_and_discards_the_graph(rng, name):
    d = cuda.to_device(random_array(rng, 64, np.float64))
    before = allocated()
    with pytest.raises(pygpu.CudaError) as info:
        with cuda.graph() as g:
            pygpu.add_one(d)
            tmp = d + 1.0  # noqa: F841  (memory the discarded graph gives back)
            REFUSED[name](d)
    capture_error(info)
    assert g.state == "discarded" and "discarded" in repr(g)
    with pytest.raises(RuntimeError, match="discarded"):
        g.replay()
    del tmp
    assert allocated() == before
    still_usable()


def test_a_refusal_caught_inside_the_block_leaves_the_capture_valid(rng):
    h = random_array(rng, 64, np.float64)
    d = cuda.to_device(h)
    with cuda.graph() as g:
        pygpu.add_one(d)
        with pytest.raises(pygpu.CudaError) as info:
            d.copy_to_host()
        pygpu.add_one(d)
    message = capture_error(info)
    assert message.startswith("cudaMemcpyAsync failed")
    assert g.nodes == 2
    g.replay()
    np.testing.assert_array_equal(d.copy_to_host(), plus_ones(h, 2))


def test_an_exception_in_the_block_ends_the_capture_and_goes_on(rng):
    d = cuda.to_device(random_array(rng, 64, np.float32))
    before = allocated()
    with pytest.raises(KeyError, match="mine"):
        with cuda.graph() as g:
            e = d + d  # noqa: F841
            raise KeyError("mine")
    assert g.state == "discarded" and g.stream is None
    del e
    assert allocated() == before
    still_usable()


def test_captures_do_not_nest_and_a_graph_is_captured_once():
    with pytest.raises(RuntimeError, match="captures do not nest"):
        with cuda.graph() as outer:
            with cuda.graph():
                pass
    assert outer.state == "discarded"
    d = pygpu.zeros(4)
    with cuda.graph() as g:
        pygpu.add_one(d)
    with pytest.raises(RuntimeError, match="captured once"):
        with g:
            pass
    g2 = cuda.graph()
    with pytest.raises(RuntimeError, match="not been captured"):
        g2.replay()
    assert g2.state == "new" and g2.device is None and g2.nodes == 0
    assert "not captured yet" in repr(g2)
    still_usable()


def test_a_graph_cannot_be_replayed_while_it_or_another_is_captured():
    d = pygpu.zeros(4)
    with cuda.graph() as first:
        pygpu.add_one(d)
    with pytest.raises(RuntimeError, match="being captured"):
        with cuda.graph() as g:
            g.replay()
    with pytest.raises(pygpu.CudaError) as info:
        with cuda.graph():
            first.replay()
    assert "cudaGraphLaunch failed" in capture_error(info)
    first.replay()
    np.testing.assert_array_equal(d.copy_to_host(), np.ones(4))


# ---- several devices --------------------------------------------------------------

needs_two = pytest.mark.skipif(len(cuda.gpus) < 2, reason="needs two devices")


@needs_two
def test_a_graph_captured_on_device_1_replays_there(rng):
    h = random_array(rng, 1000, np.float32)
    with cuda.gpus[1]:
        d = cuda.to_device(h)
        with cuda.graph() as g:
            assert cuda.current_stream().device == 1
            for _ in range(4):
                pygpu.add_one(d)
            r = d * 2.0
    assert g.device == 1 and "device 1" in repr(g)
    assert cuda.get_current_device().id == 0
    g.replay()                       # device 0 current: runs on device 1
    g.replay()
    with cuda.gpus[1]:
        cuda.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), plus_ones(h, 8))
    np.testing.assert_allclose(r.copy_to_host(), 2 * plus_ones(h, 8), rtol=1e-6)
    assert cuda.get_current_device().id == 0
    s0 = cuda.stream()               # a stream of device 0
    with pytest.raises(ValueError, match="belongs to device 0"):
        g.replay(stream=s0)
    with s0:                         # current, not explicit: device 1's default
        g.replay()
    np.testing.assert_array_equal(d.copy_to_host(), plus_ones(h, 12))


@needs_two
def test_a_copy_between_devices_cannot_be_captured(rng):
    with cuda.gpus[1]:
        d1 = cuda.to_device(random_array(rng, 100, np.float32))
    d0 = pygpu.zeros(100, dtype=np.float32)
    with pytest.raises(pygpu.CudaError) as info:
        with cuda.graph():
            d0[...] = d1
    capture_error(info)
    still_usable()
