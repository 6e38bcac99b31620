"""Your own CUDA C kernels: the dialect (geometry, shared memory, barriers),
compile errors and argument checks; the same source on a GPU and on the
simulator (compiled there by the host C++ compiler)."""

import re
import shutil

import numpy as np
import pytest
from conftest import random_array, run_with_nvrtc

import pygpu
from pygpu import cuda


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    if cuda.is_simulator() and shutil.which("g++") is None and shutil.which("clang++") is None:
        pytest.skip("the simulator compiles kernels with g++ or clang++; neither is here")
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(tmp_path))


SOURCE = r'''
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

extern "C" __global__ void add_one_2d(double *a, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        a[r * cols + c] += 1.0;
    }
}

#define TILE 16
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
        int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = row < n && ac < n ? A[row * n + ac] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = br < n && col < n ? B[br * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) {
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < n && col < n) {
        C[row * n + col] = acc;
    }
}

extern "C" __global__ void block_sum(const float *x, float *out, int n)
{
    extern __shared__ float partial[];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            partial[t] += partial[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        out[blockIdx.x] = partial[0];
    }
}
'''


def test_saxpy_runs_and_reports_its_parameters(rng):
    k = pygpu.RawKernel(SOURCE, "saxpy")
    assert k.param_sizes == (4, 8, 8, 4)
    n = 1000
    x, y = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    k[(n + 255) // 256, 256](np.float32(2.5), dx, dy, np.int32(n))
    np.testing.assert_allclose(dy.copy_to_host(), 2.5 * x.astype(np.float64) + y,
                               rtol=1e-5, atol=1e-5)


def test_two_dimensional_geometry_reaches_every_element(rng):
    f = pygpu.RawModule(SOURCE).get_function("add_one_2d")
    a = random_array(rng, (37, 53), np.float64)
    d = cuda.to_device(a)
    f[(4, 3), (16, 16)](d, np.int32(37), np.int32(53))
    np.testing.assert_array_equal(d.copy_to_host(), a + 1.0)


def test_tiled_matmul_with_static_shared_memory_and_barriers(rng):
    f = pygpu.RawModule(SOURCE).get_function("matmul")
    n = 70
    a, b = random_array(rng, (n, n), np.float32), random_array(rng, (n, n), np.float32)
    dc = pygpu.zeros((n, n), dtype=np.float32)
    blocks = (n + 15) // 16
    f[(blocks, blocks), (16, 16)](cuda.to_device(a), cuda.to_device(b), dc, np.int32(n))
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(dc.copy_to_host(), want, rtol=1e-4, atol=1e-4)


def test_dynamic_shared_memory_is_sized_by_the_launch(rng):
    f = pygpu.RawModule(SOURCE).get_function("block_sum")
    n, threads = 1000, 128
    blocks = (n + threads - 1) // threads
    x = random_array(rng, n, np.float32)
    out = pygpu.zeros(blocks, dtype=np.float32)
    f[blocks, threads, None, threads * 4](cuda.to_device(x), out, np.int32(n))
    padded = np.zeros(blocks * threads)
    padded[:n] = x
    np.testing.assert_allclose(out.copy_to_host(), padded.reshape(blocks, threads).sum(1),
                               rtol=1e-5)


def test_compile_errors_name_the_line_of_the_source():
    source = 'extern "C" __global__ void k(float *x)\n{\n    x[0] = undefined_thing;\n}\n'
    with pytest.raises(pygpu.CompileError) as info:
        pygpu.RawKernel(source, "k")
    log = info.value.log
    assert "undefined_thing" in log
    assert re.search(r"[:(]3[:)]", log), log


def test_wrong_arguments_raise_type_error_as_on_a_gpu(rng):
    k = pygpu.RawKernel(SOURCE, "saxpy")
    dx = cuda.to_device(random_array(rng, 8, np.float32))
    dy = cuda.to_device(random_array(rng, 8, np.float32))
    with pytest.raises(TypeError, match="takes 4 arguments, got 3"):
        k[1, 32](np.float32(1), dx, dy)
    with pytest.raises(TypeError, match="Python float.*8 bytes.*takes 4 bytes"):
        k[1, 32](2.5, dx, dy, np.int32(8))
    with pytest.raises(TypeError, match="Python int.*8 bytes.*takes 4 bytes"):
        k[1, 32](np.float32(1), dx, dy, 8)
    with pytest.raises(AttributeError, match="extern"):
        pygpu.RawModule(SOURCE).get_function("no_such_kernel")


PARAMS_SOURCE = r"""
struct S12 { int a, b, c; };
struct alignas(16) V { float x[4]; };
extern "C" __global__ void many(char c, short s, int i, double d, float *p, S12 st,
                                long long q) {}
extern "C" __global__ void none() {}
extern "C" __global__ void wide(V v, char c, V w) {}
"""
PARAMS_CHECK = """
image = rawkernel.compile_cuda(sys.argv[1], arch="sm_90")[0]
print(sorted(rawkernel.param_sizes(image).items()))
"""


def test_parameter_sizes_come_from_the_cubin_not_from_probing_the_driver():
    # asking cuFuncGetParamInfo one index past the last parameter is an API
    # error under compute-sanitizer: a cubin's .nv.info says the parameters
    out = run_with_nvrtc(PARAMS_CHECK, PARAMS_SOURCE)
    assert out.strip() == str([("many", (1, 2, 4, 8, 8, 12, 8)), ("none", ()),
                                    ("wide", (16, 1, 16))])
    assert pygpu.rawkernel.param_sizes(b"not an ELF image") == {}
    if not pygpu._core._host_modules():  # on a GPU: the same as the driver says
        m = pygpu.RawModule(PARAMS_SOURCE)
        for name in ("many", "wide"):
            assert m.get_function(name).param_sizes == \
                m._module.get_function(name).param_sizes
