"""Your own CUDA C kernels: the dialect (geometry, shared memory, barriers),
compile errors and argument checks; the same source on a GPU and on the
simulator (compiled there by the host C++ compiler)."""

import gc
import re
import shutil

import numpy as np
import pytest
from conftest import random_array, run_with_nvrtc

import pygpu
from pygpu import cuda

pytestmark = pytest.mark.usefixtures("own_kernel_cache")


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


# ---- arguments, names, headers -------------------------------------------------------

def test_bad_names_and_options_say_which_argument_is_wrong():
    with pytest.raises(TypeError, match="name must be a str naming a kernel.*NoneType"):
        pygpu.RawKernel(SOURCE, None)
    with pytest.raises(TypeError, match="options must be a str or a sequence of str.*int"):
        pygpu.RawKernel(SOURCE, "saxpy", options=5)
    with pytest.raises(TypeError, match="options must be strings.*int"):
        pygpu.RawModule(SOURCE, options=("-DX=1", 3))
    with pytest.raises(TypeError, match="name_expressions must be a str or a sequence.*int"):
        pygpu.RawModule(SOURCE, name_expressions=5)
    module = pygpu.RawModule(SOURCE, name_expressions=None)  # None: none, as CuPy's
    with pytest.raises(TypeError, match="name must be a str naming a kernel.*NoneType"):
        module.get_function(None)
    assert module.get_function("saxpy").param_sizes == (4, 8, 8, 4)


def test_a_python_int_too_big_for_int64_names_its_argument():
    k = pygpu.RawKernel('extern "C" __global__ void k(long long a, long long *out) '
                        '{ *out = a; }', "k")
    out = pygpu.zeros(1, np.int64)
    with pytest.raises(OverflowError, match=r"argument 0 is the Python int 1180591620717"
                                            r"411303424.*int64"):
        k[1, 1](2**70, out)
    k[1, 1](-2**63, out)
    assert out.copy_to_host()[0] == -2**63


CPP_SOURCE = r'''
#include <stdio.h>
#include <assert.h>
#include <stdint.h>
#include <math.h>
#include <float.h>
#include <limits.h>
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
float twice(float x) { return 2.0f * x; }   // no __device__: NVRTC's -default-device
__global__ void vectorAdd(const float *a, const float *b, float *c, int32_t n)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    assert(n <= INT_MAX);
    if (i < n) c[i] = twice(a[i]) + b[i] + (float)(M_PI - M_PI) + FLT_EPSILON * 0.0f;
}
'''
CPP_CHECK = """
from pygpu.rawkernel import _mangled, kernel_names
image = rawkernel.compile_cuda(sys.argv[1], arch="sm_90")[0]
print(_mangled("vectorAdd", kernel_names(image)))
"""


def test_a_cpp_kernel_with_host_style_includes_is_found_by_its_name(rng):
    n = 1000
    a, b = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    c = pygpu.zeros(n, np.float32)
    pygpu.RawKernel(CPP_SOURCE, "vectorAdd")[4, 256](cuda.to_device(a), cuda.to_device(b), c,
                                                     np.int32(n))
    np.testing.assert_allclose(c.copy_to_host(), 2 * a.astype(np.float64) + b, rtol=1e-6)
    # through NVRTC: the toolkit's headers, pygpu's C-library stand-ins, the
    # helper compiled as a device function, the kernel by its mangled name
    assert run_with_nvrtc(CPP_CHECK, CPP_SOURCE).strip() == "_Z9vectorAddPKfS0_Pfi"


def test_a_template_kernel_without_a_name_expression_is_explained():
    src = "template <class T> __global__ void tk(T *x) { x[0] = 1; }\n" \
          "template __global__ void tk<float>(float *);\n"
    names = ("_Z2tkIfEvPT_", "other")
    with pytest.raises(ValueError, match="template kernel.*name_expressions=\\['tk<float>'\\]"):
        pygpu.rawkernel._mangled("tk", names)
    f = pygpu.RawModule(src, name_expressions=["tk<float>"]).get_function("tk<float>")
    x = pygpu.zeros(1, np.float32)
    f[1, 1](x)
    assert x.copy_to_host()[0] == 1


@pytest.mark.parametrize("declaration", [
    "extern __shared__ float smem[];", "extern float __shared__ smem[];",
    "__shared__ extern float smem[];", "extern __shared__ __align__(16) float smem[];",
    "extern __align__(16) __shared__ float smem[];"])
def test_dynamic_shared_memory_in_every_qualifier_order(rng, declaration):
    src = 'extern "C" __global__ void k(const float *x, float *out) {\n' + declaration + '''
        smem[threadIdx.x] = x[threadIdx.x];
        __syncthreads();
        out[threadIdx.x] = smem[blockDim.x - 1 - threadIdx.x];
    }'''
    x = random_array(rng, 64, np.float32)
    out = pygpu.zeros(64, np.float32)
    pygpu.RawKernel(src, "k")[1, 64, 0, 256](cuda.to_device(x), out)
    np.testing.assert_array_equal(out.copy_to_host(), x[::-1])


def test_inline_ptx_special_registers_and_arithmetic():
    src = r'''
    extern "C" __global__ void k(int *out) {
        unsigned int lane, warp, lt;
        int sum;
        asm("mov.u32 %0, %%laneid;" : "=r"(lane));
        asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp));
        asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
        asm("add.s32 %0, %1, %2;" : "=r"(sum) : "r"((int)threadIdx.x), "r"(-7));
        out[4 * threadIdx.x] = lane;
        out[4 * threadIdx.x + 1] = warp;
        out[4 * threadIdx.x + 2] = __popc(lt);
        out[4 * threadIdx.x + 3] = sum;
    }'''
    out = pygpu.zeros(4 * 80, np.int32)
    pygpu.RawKernel(src, "k")[1, 80](out)
    got = out.copy_to_host().reshape(80, 4)
    t = np.arange(80)
    np.testing.assert_array_equal(got[:, [0, 2, 3]], np.stack([t % 32, t % 32, t - 7], 1))
    # %warpid: one number a warp, unique in the block (PTX gives no more: on a
    # GPU it is the warp's slot in the SM, on the simulator threadIdx.x / 32)
    warps = [set(got[t // 32 == w, 1]) for w in range(3)]
    assert all(len(w) == 1 for w in warps) and len(set.union(*warps)) == 3


@pytest.mark.simulator
def test_inline_ptx_the_simulator_does_not_run_is_named():
    src = 'extern "C" __global__ void k(int *x) { asm volatile("bar.sync 0;"); }'
    with pytest.raises(pygpu.CompileError, match="inline PTX instruction 'bar.sync 0'.*line 1"):
        pygpu.RawKernel(src, "k")


CG_SOURCE = r'''
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void groups(const int *x, int *out)
{
    cg::thread_block cta = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(cta);
    cg::thread_group t4 = cg::tiled_partition(cta, 4);
    cg::coalesced_group all = cg::coalesced_threads();
    int v = x[grid.thread_rank()];
    int *o = out + 12 * grid.thread_rank();
    o[0] = cg::reduce(t8, v, cg::plus<int>());
    o[1] = cg::reduce(t8, v, cg::greater<int>());
    o[2] = cg::reduce(t8, v, cg::less<int>());
    o[3] = t8.shfl_down(v, 1);
    o[4] = t8.shfl_xor(v, 3);
    o[5] = t8.ballot(v > 0);
    o[6] = t8.any(v > 90) + 2 * t8.all(v > -90);
    o[7] = t8.meta_group_rank() * 100 + t8.thread_rank();
    o[8] = (int)t4.thread_rank() + 10 * (int)t4.size();
    cg::coalesced_group same = cg::labeled_partition(all, v & 3);
    o[9] = cg::reduce(same, v, cg::plus<int>());
    o[10] = (int)same.size();
    t4.sync();
    cta.sync();
    o[11] = (int)grid.size() + (int)all.thread_rank() * 1000;
}
'''


def test_cooperative_groups_tiles_reductions_votes_and_partitions(rng):
    blocks, threads = 2, 64
    n = blocks * threads
    x = rng.integers(-100, 100, n).astype(np.int32)
    out = pygpu.zeros(12 * n, np.int32)
    pygpu.RawKernel(CG_SOURCE, "groups")[blocks, threads](cuda.to_device(x), out)
    got = out.copy_to_host().reshape(n, 12)
    tiles = x.reshape(-1, 8)
    rank = np.arange(n) % 8
    np.testing.assert_array_equal(got[:, 0], np.repeat(tiles.sum(1), 8))
    np.testing.assert_array_equal(got[:, 1], np.repeat(tiles.max(1), 8))
    np.testing.assert_array_equal(got[:, 2], np.repeat(tiles.min(1), 8))
    down = np.where(rank < 7, np.roll(x, -1), x)
    np.testing.assert_array_equal(got[:, 3], down)
    np.testing.assert_array_equal(got[:, 4], x[(np.arange(n) // 8) * 8 + (rank ^ 3)])
    ballot = ((tiles > 0) << np.arange(8)).sum(1)
    np.testing.assert_array_equal(got[:, 5], np.repeat(ballot, 8))
    votes = (tiles > 90).any(1) + 2 * (tiles > -90).all(1)
    np.testing.assert_array_equal(got[:, 6], np.repeat(votes, 8))
    np.testing.assert_array_equal(got[:, 7], (np.arange(n) % threads) // 8 * 100 + rank)
    np.testing.assert_array_equal(got[:, 8], np.arange(n) % 4 + 40)
    warps = x.reshape(-1, 32)
    label = warps & 3
    want = [(warps[w][label[w] == label[w][j]].sum(), (label[w] == label[w][j]).sum())
            for w in range(n // 32) for j in range(32)]
    np.testing.assert_array_equal(got[:, 9:11], want)
    np.testing.assert_array_equal(got[:, 11], n + (np.arange(n) % 32) * 1000)


DIVERGENT_SOURCE = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;
extern "C" __global__ void half_then_whole(const int *x, int *out)
{
    int lane = threadIdx.x % 32, v = x[threadIdx.x];
    if (lane < 16) { /* the low half meets alone, then the whole warp */
        v += __shfl_sync(0x0000ffffu, v, 15);
    }
    out[threadIdx.x] = __shfl_sync(0xffffffffu, v, 0) + v;
}
extern "C" __global__ void branches(const int *x, unsigned int *mask, int *sum,
                                    int *scan)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, v = x[i];
    if (v > 0) {
        cg::coalesced_group g = cg::coalesced_threads();
        mask[i] = __activemask();
        sum[i] = cg::reduce(g, v, cg::plus<int>());
        scan[i] = cg::exclusive_scan(g, v);
    }
    else {
        cg::coalesced_group g = cg::coalesced_threads();
        mask[i] = __activemask();
        cg::coalesced_group part = cg::labeled_partition(g, v & 3);
        sum[i] = -cg::reduce(part, v, cg::plus<int>()); /* groups of 1 to 32 lanes */
        scan[i] = cg::inclusive_scan(part, 1);
    }
    __syncwarp();
}
"""


def test_lanes_meet_at_a_full_mask_after_a_half_warp_met_alone(rng):
    x = rng.integers(-100, 100, 64).astype(np.int32)
    out = pygpu.zeros(64, np.int32)
    pygpu.RawKernel(DIVERGENT_SOURCE, "half_then_whole")[1, 64](cuda.to_device(x), out)
    w = x.reshape(2, 32).astype(np.int64)
    v = w + np.where(np.arange(32) < 16, w[:, 15:16], 0)
    np.testing.assert_array_equal(out.copy_to_host(), (v + v[:, :1]).ravel())


def test_activemask_and_coalesced_groups_follow_a_branch(rng):
    n = 128
    x = rng.integers(-9, 9, n).astype(np.int32)
    mask, sums, scans = (pygpu.zeros(n, t) for t in (np.uint32, np.int32, np.int32))
    pygpu.RawKernel(DIVERGENT_SOURCE, "branches")[2, 64](cuda.to_device(x), mask, sums,
                                                          scans)
    mask, sums, scans = mask.copy_to_host(), sums.copy_to_host(), scans.copy_to_host()
    for i in range(n):
        first, lane = i // 32 * 32, i % 32
        lanes = [first + k for k in range(32) if mask[i] >> k & 1]
        assert i in lanes and all((x[j] > 0) == (x[i] > 0) for j in lanes)
        if cuda.is_simulator():  # the lanes that took the branch, as a converged warp
            assert lanes == [j for j in range(first, first + 32) if (x[j] > 0) == (x[i] > 0)]
        if x[i] > 0:
            assert sums[i] == x[lanes].sum()
            assert scans[i] == x[[j for j in lanes if j < i]].sum()
        else:
            part = [j for j in lanes if x[j] & 3 == x[i] & 3]
            assert sums[i] == -x[part].sum()
            assert scans[i] == sum(j <= i for j in part), lane


def test_half_and_bfloat16_round_to_nearest_even(rng):
    src = r'''
    #include <cuda_fp16.h>
    #include <cuda_bf16.h>
    extern "C" __global__ void k(const float *x, unsigned short *h, unsigned short *b,
                                 float *sum, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            __half v = __float2half(x[i]);
            h[i] = __half_as_ushort(v);
            b[i] = __bfloat16_as_ushort(__float2bfloat16(x[i]));
            __half2 p = __floats2half2_rn(x[i], 1.0f);
            sum[i] = __half2float(__hadd(v, __float2half(0.5f))) + __high2float(p);
        }
    }'''
    x = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-9, 6, 2000),
                        [65504, 65520, 1e-8, -0.0, np.inf, -np.inf, 6e-8, 3e-8]])
    x = x.astype(np.float32)
    n = x.size
    h, b = pygpu.zeros(n, np.uint16), pygpu.zeros(n, np.uint16)
    s = pygpu.zeros(n, np.float32)
    pygpu.RawKernel(src, "k")[(n + 255) // 256, 256](cuda.to_device(x), h, b, s, np.int32(n))
    with np.errstate(over="ignore"):
        half = x.astype(np.float16)
        want_sum = (half + np.float16(0.5)).astype(np.float32) + 1
    np.testing.assert_array_equal(h.copy_to_host(), half.view(np.uint16))
    u = x.view(np.uint32).astype(np.uint64)
    bf16 = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    np.testing.assert_array_equal(b.copy_to_host(), bf16)
    np.testing.assert_array_equal(s.copy_to_host(), want_sum)


SYMBOL_SOURCE = r'''
__constant__ float table[8];
__device__ int counter = 5;
__device__ __align__(16) double pair[2] = {1.5, -2.5};
extern "C" __global__ void k(float *out) {
    out[threadIdx.x] = table[threadIdx.x % 8] * 2 + (float)pair[1];
    atomicAdd(&counter, 1);
}
'''


def test_module_variables_are_set_and_read_as_cuda_memcpy_to_symbol(rng):
    m = pygpu.RawModule(SYMBOL_SOURCE)
    table = random_array(rng, 8, np.float32)
    m.memcpy_to_symbol("table", table)
    out = pygpu.zeros(16, np.float32)
    m.get_function("k")[1, 16](out)
    np.testing.assert_array_equal(out.copy_to_host(), np.tile(table * 2 - 2.5, 2))
    assert m.memcpy_from_symbol("counter", np.int32).tolist() == [21]
    np.testing.assert_array_equal(m.memcpy_from_symbol("pair", np.float64), [1.5, -2.5])
    m.memcpy_to_symbol("table", np.float32([7, 8]), offset=8)
    assert m.memcpy_from_symbol("table", np.float32)[2:4].tolist() == [7, 8]
    with pytest.raises(AttributeError, match="no __device__ or __constant__ variable.*'nope'"):
        m.memcpy_to_symbol("nope", table)
    with pytest.raises(ValueError, match="'table' holds 32 bytes; 36 bytes"):
        m.memcpy_to_symbol("table", np.zeros(9, np.float32))
    with pytest.raises(TypeError, match="name must be a str"):
        m.memcpy_from_symbol(None)


def test_get_global_is_a_view_of_a_module_variable(rng):
    m = pygpu.RawModule(SYMBOL_SOURCE)
    view = m.get_global("table", np.float32)
    assert view.shape == (8,)
    table = random_array(rng, 8, np.float32)
    view.copy_to_device(table)
    out = pygpu.zeros(8, np.float32)
    m.get_function("k")[1, 8](out)
    np.testing.assert_array_equal(out.copy_to_host(), table * 2 - 2.5)
    assert m.get_global("counter", np.int32).copy_to_host().tolist() == [13]
    np.testing.assert_array_equal(m.get_global("pair", np.float64, (2,)).copy_to_host(),
                                  [1.5, -2.5])
    with pytest.raises(AttributeError, match="no __device__ or __constant__ variable.*'nope'"):
        m.get_global("nope")


def test_a_module_variables_view_is_a_kernel_argument(rng):
    src = SYMBOL_SOURCE + r'''
    extern "C" __global__ void twice(float *t, int n) {
        if (threadIdx.x < n) t[threadIdx.x] *= 2;
    }'''
    m = pygpu.RawModule(src, check=cuda.is_simulator() and shutil.which("clang++") is not None)
    table = random_array(rng, 8, np.float32)
    m.memcpy_to_symbol("table", table)
    view = m.get_global("table", np.float32)
    m.get_function("twice")[1, 8](view, np.int32(8))
    np.testing.assert_array_equal(m.memcpy_from_symbol("table", np.float32), table * 2)
    np.testing.assert_array_equal(view[2:5].copy_to_host(), table[2:5] * 2)


class _Interface:
    def __init__(self, address, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "version": 3,
                                         "data": (address, False)}


@pytest.mark.simulator
def test_a_module_variable_is_device_memory_while_its_module_lives():
    m = pygpu.RawModule(SYMBOL_SOURCE)
    address = m.get_global("table", np.float32).__cuda_array_interface__["data"][0]
    assert pygpu.asarray(_Interface(address, 8)).shape == (8,)
    with pytest.raises(ValueError, match="past the end of the device allocation"):
        pygpu.asarray(_Interface(address, 9))
    del m
    gc.collect()
    with pytest.raises(ValueError, match="not device memory"):
        pygpu.asarray(_Interface(address, 8))


@pytest.mark.parametrize("declaration", [
    "__shared__ float s[64];", "static __shared__ float s[64];",
    "__shared__ static float s[64];", "float __shared__ s[64];",
    "__shared__ __align__(16) float s[64];", "volatile __shared__ float s[64];",
    "__shared__ volatile float s[64];"])
def test_static_shared_memory_in_every_qualifier_order(rng, declaration):
    src = 'extern "C" __global__ void k(const float *x, float *out) {\n' + declaration + '''
        s[threadIdx.x] = x[threadIdx.x];
        __syncthreads();
        out[threadIdx.x] = s[63 - threadIdx.x];
    }'''
    x = random_array(rng, 64, np.float32)
    out = pygpu.zeros(64, np.float32)
    pygpu.RawKernel(src, "k")[1, 64](cuda.to_device(x), out)
    np.testing.assert_array_equal(out.copy_to_host(), x[::-1])


@pytest.mark.parametrize("declaration", [
    "__constant__ int c[2] = {3, 4};", "static __constant__ int c[2] = {3, 4};",
    "__constant__ static int c[2] = {3, 4};", "const __constant__ int c[2] = {3, 4};",
    "__device__ static int c[2] = {3, 4};", "static __device__ int c[2] = {3, 4};",
    "__device__ __align__(8) int c[2] = {3, 4};"])
def test_module_variables_in_every_qualifier_order(declaration):
    src = declaration + '\nextern "C" __global__ void k(int *out) { out[0] = c[0] * c[1]; }'
    out = pygpu.zeros(1, np.int32)
    pygpu.RawKernel(src, "k")[1, 1](out)
    assert out.copy_to_host()[0] == 12
