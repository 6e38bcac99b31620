"""Zero-copy interop (CUDA array interface, DLPack), pickling, RawKernel."""

import gc
import os
import pickle
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import random_array

import pygpu
from pygpu import cuda


class Producer:
    """A foreign library's array, seen only through its protocols."""

    def __init__(self, arr, cai=True, dlpack=True):
        self._arr = arr
        if cai:
            self.__cuda_array_interface__ = arr.__cuda_array_interface__
        if dlpack:
            self.__dlpack__ = arr.__dlpack__
            self.__dlpack_device__ = arr.__dlpack_device__


# ---- pickling ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128", "bool"])
def test_pickle_round_trip(rng, dtype):
    x = random_array(rng, (5, 7), dtype)
    for d in (cuda.to_device(x), cuda.to_device(np.asfortranarray(x)), cuda.to_device(x)[::2, 1:]):
        back = pickle.loads(pickle.dumps(d))
        assert isinstance(back, pygpu.DeviceArray)
        assert back.ptr != d.ptr
        np.testing.assert_array_equal(back.copy_to_host(), d.copy_to_host())


# ---- CUDA array interface ------------------------------------------------------------

def test_cuda_array_interface_export():
    d = pygpu.zeros((3, 4), dtype=np.float32)
    cai = d.__cuda_array_interface__
    assert cai["shape"] == (3, 4)
    assert cai["typestr"] == np.dtype(np.float32).str
    assert cai["strides"] is None
    assert cai["data"] == (d.ptr, False)
    assert cai["version"] == 3
    assert cai["stream"] == 1  # the legacy default stream
    v = d[:, ::2].__cuda_array_interface__
    assert v["strides"] == (16, 8) and v["data"][0] == d.ptr
    s = cuda.stream()
    with s:
        e = pygpu.zeros(4)
    assert e.__cuda_array_interface__["stream"] == s.ptr
    assert pygpu.empty(0).__cuda_array_interface__["data"][0] == 0


def test_cuda_array_interface_import_shares_memory(rng):
    x = random_array(rng, (6, 5), np.float64)
    d = cuda.to_device(x)
    p = Producer(d[1:, ::2], dlpack=False)
    w = pygpu.asarray(p)
    assert isinstance(w, pygpu.DeviceArray)
    assert w.ptr == d[1:, ::2].ptr and w.shape == (5, 3)
    np.testing.assert_array_equal(w.copy_to_host(), x[1:, ::2])
    w[0, 0] = -1.0  # writes land in d
    assert d[1, 0].item() == -1.0
    del p, d
    gc.collect()
    assert w.copy_to_host()[0, 0] == -1.0  # the producer is kept alive
    with pytest.raises(ValueError, match="mask"):
        pygpu.asarray(type("M", (), {"__cuda_array_interface__": {
            "shape": (1,), "typestr": "<f4", "data": (0, False), "version": 3,
            "mask": object()}})())


# ---- DLPack ---------------------------------------------------------------------------

def test_dlpack_export_import_round_trip(rng):
    x = random_array(rng, (4, 6), np.int32)
    d = cuda.to_device(x)
    assert d.__dlpack_device__() == (2, 0)
    refs = sys.getrefcount(d)
    for producer in (Producer(d, cai=False), Producer(d.T, cai=False)):
        w = pygpu.from_dlpack(producer)
        assert w.ptr == d.ptr
        np.testing.assert_array_equal(w.copy_to_host(),
                                      x if producer._arr.shape == x.shape else x.T)
        w2 = pygpu.asarray(producer)  # asarray takes DLPack producers too
        assert w2.ptr == d.ptr
        del w, w2, producer
    gc.collect()
    assert sys.getrefcount(d) == refs  # every capsule's deleter ran


@pytest.mark.parametrize("max_version", [None, (1, 0), (1, 2)])
def test_dlpack_capsules(max_version):
    d = pygpu.zeros(3)
    cap = d.__dlpack__() if max_version is None else d.__dlpack__(max_version=max_version)
    name = "dltensor" if max_version is None else "dltensor_versioned"
    assert f'"{name}"' in repr(cap)
    del cap  # an unconsumed capsule frees itself
    with pytest.raises(BufferError):  # a host copy, as the standard allows, but not copy=False
        d.__dlpack__(dl_device=(1, 0), copy=False)
    c = pygpu.from_dlpack(Producer(pygpu.full(3, 2.0), cai=False))
    assert c.copy_to_host().tolist() == [2.0, 2.0, 2.0]


def test_dlpack_copy_and_host_refusal():
    d = pygpu.full(4, 5.0)

    class CopyProducer:
        def __dlpack__(self, **kw):
            return d.__dlpack__(copy=True, **kw)

        def __dlpack_device__(self):
            return d.__dlpack_device__()

    c = pygpu.from_dlpack(CopyProducer())
    assert c.ptr != d.ptr and c.copy_to_host().tolist() == [5.0] * 4
    with pytest.raises(BufferError, match="CUDA"):
        pygpu.from_dlpack(np.zeros(3))
    with pytest.raises(TypeError):
        pygpu.from_dlpack(3)
    assert d.__dlpack_device__() == (2, 0)  # device memory, never host memory
    with pytest.raises((BufferError, RuntimeError), match="(?i)device"):
        np.from_dlpack(d)  # NumPy's own refusal reaches the caller intact


# ---- RawKernel ------------------------------------------------------------------------

SAXPY = r'''
extern "C" __global__ void saxpy(float a, const float *x, float *y, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += (long long)gridDim.x * blockDim.x) {
        y[i] = a * x[i] + y[i];
    }
}
extern "C" __global__ void scale_int(int *v, int k, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= k;
}
'''


def have_nvrtc():
    try:
        pygpu.rawkernel.nvrtc_version()
        return True
    except RuntimeError:
        return False


def test_compile_errors_carry_the_nvrtc_log(tmp_path, monkeypatch):
    if not have_nvrtc():
        pytest.skip("NVRTC is not installed here")
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(tmp_path))
    with pytest.raises(pygpu.CompileError) as info:
        pygpu.rawkernel.compile_cuda('extern "C" __global__ void k() { undefined_thing; }')
    assert "undefined_thing" in info.value.log
    assert "error" in info.value.log
    image, _, _ = pygpu.rawkernel.compile_cuda(SAXPY, ("-DUNUSED=1",))
    assert len(image) > 100
    assert len(list(tmp_path.glob("*.cubin"))) == 1
    image2, log2, _ = pygpu.rawkernel.compile_cuda(SAXPY, ("-DUNUSED=1",))
    assert image2 == image and log2 == ""  # from the disk cache
    with pytest.raises(TypeError):
        pygpu.rawkernel.compile_cuda(b"bytes")
    with pytest.raises(TypeError):
        pygpu.rawkernel.compile_cuda(SAXPY, (3,))


@pytest.mark.simulator
def test_the_simulator_compiles_with_the_host_compiler_not_nvrtc(monkeypatch):
    with pytest.raises(NotImplementedError, match="host C\\+\\+ compiler"):
        pygpu._core._nvrtc_compile(SAXPY, "k.cu", (), ())
    with pytest.raises(ValueError, match="path of a shared object"):
        pygpu._core.Module(b"not an image")
    with pytest.raises(pygpu.CudaError, match="cudaErrorInvalidKernelImage"):
        pygpu._core.Module(b"/no/such/module.so\0")
    monkeypatch.setenv("CXX", "/no/such/g++")
    with pytest.raises(RuntimeError, match="install g\\+\\+"):
        pygpu.RawKernel(SAXPY + "// not cached", "saxpy")


def test_nvrtc_is_not_loaded_by_import_or_prebuilt_kernels():
    code = textwrap.dedent("""
        import pygpu
        d = pygpu.zeros(8)
        pygpu.add_one(d)
        print("libnvrtc" in open("/proc/self/maps").read())
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ), timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_raw_kernel_launches_and_checks_its_arguments(rng, tmp_path, monkeypatch):
    if cuda.is_simulator() and shutil.which("g++") is None and shutil.which("clang++") is None:
        pytest.skip("the simulator compiles kernels with g++ or clang++; neither is here")
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(tmp_path))
    k = pygpu.RawKernel(SAXPY, "saxpy")
    assert k.param_sizes == (4, 8, 8, 8)
    n = 1000
    x, y = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    k[4, 128](np.float32(2.5), dx, dy, n)
    np.testing.assert_allclose(dy.copy_to_host(), 2.5 * x + y, rtol=1e-5, atol=1e-5)
    s = cuda.stream()
    k[4, 128, s](np.float32(1.0), dx, dy, np.int64(n))
    s.synchronize()
    np.testing.assert_allclose(dy.copy_to_host(), 3.5 * x + y, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="takes 4 arguments, got 3"):
        k[1, 32](np.float32(1), dx, dy)
    with pytest.raises(TypeError, match="Python float.*8 bytes.*takes 4 bytes"):
        k[1, 32](2.5, dx, dy, n)
    with pytest.raises(TypeError, match="numpy"):
        k[1, 32](np.float32(1), x, dy, n)
    with pytest.raises(ValueError, match="block has 2048 threads"):
        k[1, 2048]
    m = pygpu.RawModule(SAXPY)
    scale = m.get_function("scale_int")
    v = np.arange(10, dtype=np.int32)
    out = v.copy()
    scale[1, 32](pygpu.InOut(out), np.int32(3), np.int32(10))
    np.testing.assert_array_equal(out, v * 3)
    res = np.zeros(10, np.int32)
    with pytest.raises(TypeError, match="int64"):
        scale[1, 32](pygpu.Out(res), 3, np.int32(10))
    with pytest.raises(AttributeError, match="extern"):
        m.get_function("no_such_kernel")
    with pytest.raises(pygpu.CompileError):
        pygpu.RawKernel("this is not C", "k")


# ---- the real consumers, on a GPU -------------------------------------------------------

@pytest.mark.gpu
def test_cupy_reads_and_writes_pygpu_arrays_and_back(rng):
    cp = pytest.importorskip("cupy")
    x = random_array(rng, (64, 32), np.float32)
    d = cuda.to_device(x)
    c = cp.asarray(d)  # through __cuda_array_interface__
    assert c.data.ptr == d.ptr
    c *= 2
    np.testing.assert_allclose(d.copy_to_host(), 2 * x)
    c2 = cp.from_dlpack(d)
    assert c2.data.ptr == d.ptr
    back = pygpu.asarray(c)
    assert back.ptr == d.ptr
    cc = cp.arange(10, dtype=cp.float64)
    p = pygpu.asarray(cc)
    pygpu.add_one(p)
    np.testing.assert_array_equal(cp.asnumpy(cc), np.arange(10) + 1)
    p2 = pygpu.from_dlpack(cc)
    assert p2.ptr == cc.data.ptr


@pytest.mark.gpu
def test_torch_reads_and_writes_pygpu_arrays_and_back(rng):
    torch = pytest.importorskip("torch")
    x = random_array(rng, (16, 8), np.float32)
    d = cuda.to_device(x)
    t = torch.from_dlpack(d)
    assert t.data_ptr() == d.ptr and t.is_cuda
    t.add_(1)
    np.testing.assert_allclose(d.copy_to_host(), x + 1)
    t2 = torch.as_tensor(d, device="cuda")  # through __cuda_array_interface__
    assert t2.data_ptr() == d.ptr
    tt = torch.arange(12, dtype=torch.float64, device="cuda").reshape(3, 4)
    p = pygpu.from_dlpack(tt)
    assert p.ptr == tt.data_ptr() and p.shape == (3, 4)
    pygpu.add_one(p)
    torch.cuda.synchronize()
    assert tt.cpu().numpy().tolist() == (np.arange(12).reshape(3, 4) + 1).tolist()
    q = pygpu.asarray(tt.T)
    np.testing.assert_array_equal(q.copy_to_host(), tt.T.cpu().numpy())


@pytest.mark.gpu
def test_numba_kernels_read_and_write_pygpu_arrays(rng):
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack  # numba-cuda 0.30 with NumPy 2.5
    numba_cuda = pytest.importorskip("numba.cuda")

    @numba_cuda.jit
    def double(a):
        i = numba_cuda.grid(1)
        if i < a.size:
            a[i] *= 2

    x = random_array(rng, 100, np.float32)
    d = cuda.to_device(x)
    double[1, 128](d)  # numba takes the pygpu array through the CUDA array interface
    numba_cuda.synchronize()
    np.testing.assert_allclose(d.copy_to_host(), 2 * x)
    nd = numba_cuda.to_device(x)
    p = pygpu.asarray(nd)
    assert p.ptr == nd.device_ctypes_pointer.value
    pygpu.add_one(p)
    np.testing.assert_allclose(nd.copy_to_host(), x + 1)


@pytest.mark.simulator
def test_a_stream_handle_that_is_no_stream_is_refused():
    """The simulator's stream handles are pointers: one from outside that is
    no live stream of its is refused before it is read."""
    d = pygpu.asarray(np.zeros(8))
    ptr = d.__cuda_array_interface__["data"][0]

    class Foreign:
        __cuda_array_interface__ = dict(shape=(8,), typestr="<f8", data=(ptr, False),
                                        version=3, stream=0xDEAD)

    class BadStream:
        def __cuda_stream__(self):
            return (0, 0xDEAD)

    with pytest.raises(ValueError, match="no live stream"):
        pygpu.asarray(Foreign())
    with pytest.raises(ValueError, match="no live stream"):
        d.__dlpack__(stream=0xDEAD)
    with pytest.raises(ValueError, match="no live stream"):
        pygpu.kernels.add_one[1, 8, BadStream()](d)
    s = cuda.stream()

    class Ours:
        def __cuda_stream__(self):
            return s.__cuda_stream__()

    pygpu.kernels.add_one[1, 8, Ours()](d)
    s.synchronize()
    assert d.copy_to_host().tolist() == [1.0] * 8
