"""The CUDA C dialect of users' kernels: warp intrinsics, barrier forms,
atomics, vector types, bit and math intrinsics, templates, printf. The same
sources run on a GPU (NVRTC) and on the simulator (the host C++ compiler), and
must give the same results: NumPy's, within float tolerance."""

import shutil

import numpy as np
import pytest
from conftest import ON_SIMULATOR, random_array

import pygpu
from pygpu import cuda


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    if ON_SIMULATOR and shutil.which("g++") is None and shutil.which("clang++") is None:
        pytest.skip("the simulator compiles kernels with g++ or clang++; neither is here")
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kcache"))


WARP = r'''
extern "C" __global__ void warp_sums(const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffff, v, offset);
    }
    if (threadIdx.x % 32 == 0) {
        out[i / 32] = v;
    }
}

extern "C" __global__ void butterfly_max(const int *x, int *out)
{
    int v = x[threadIdx.x];
    for (int mask = 16; mask > 0; mask /= 2) {
        v = max(v, __shfl_xor_sync(0xffffffff, v, mask));
    }
    out[threadIdx.x] = v;
}

extern "C" __global__ void warp_scan(const double *x, double *out)
{
    double v = x[threadIdx.x];
    unsigned int lane = threadIdx.x % 32;
    for (unsigned int d = 1; d < 32; d *= 2) {
        double up = __shfl_up_sync(0xffffffff, v, d);
        if (lane >= d) {
            v += up;
        }
    }
    out[threadIdx.x] = v;
}

extern "C" __global__ void broadcast(const long long *x, long long *out, int width)
{
    out[threadIdx.x] = __shfl_sync(0xffffffff, x[threadIdx.x], 3, width);
}

extern "C" __global__ void votes(const int *x, unsigned int *out)
{
    int p = x[threadIdx.x] > 0;
    unsigned int b = __ballot_sync(0xffffffff, p);
    int any = __any_sync(0xffffffff, p), all = __all_sync(0xffffffff, p);
    unsigned int same = __match_any_sync(0xffffffff, x[threadIdx.x]);
    if (threadIdx.x % 32 == 0) {
        out[4 * (threadIdx.x / 32)] = b;
        out[4 * (threadIdx.x / 32) + 1] = any;
        out[4 * (threadIdx.x / 32) + 2] = all;
        out[4 * (threadIdx.x / 32) + 3] = __popc(b);
    }
    out[128 + threadIdx.x] = same;
}

extern "C" __global__ void half_warps(const int *x, int *out)
{
    /* two groups of 16 lanes, each with its own mask */
    unsigned int lane = threadIdx.x % 32;
    unsigned int mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
    int v = x[threadIdx.x];
    for (int offset = 8; offset > 0; offset /= 2) {
        v += __shfl_down_sync(mask, v, offset, 16);
    }
    out[threadIdx.x] = v;
}

extern "C" __global__ void warp_reduce_builtin(const unsigned int *x, unsigned int *out)
{
    unsigned int s = __reduce_add_sync(0xffffffff, x[threadIdx.x]);
    unsigned int m = __reduce_max_sync(0xffffffff, x[threadIdx.x]);
    if (threadIdx.x % 32 == 0) {
        out[2 * (threadIdx.x / 32)] = s;
        out[2 * (threadIdx.x / 32) + 1] = m;
    }
}

extern "C" __global__ void shared_warp_sum(const float *x, float *out)
{
    __shared__ float s[64];
    unsigned int t = threadIdx.x;
    s[t] = x[t];
    __syncwarp();
    for (unsigned int d = 16; d > 0; d /= 2) {
        float v = t % 32 < d ? s[t + d] : 0.0f;
        __syncwarp();
        s[t] += v;
        __syncwarp();
    }
    if (t % 32 == 0) {
        out[t / 32] = s[t];
    }
}
'''


@pytest.fixture(scope="module")
def warp():
    return pygpu.RawModule(WARP)


def test_shfl_down_reduces_each_warp(warp, rng):
    n = 1000
    x = random_array(rng, n, np.float32)
    out = pygpu.zeros(32, np.float32)
    warp.get_function("warp_sums")[4, 256](cuda.to_device(x), out, np.int32(n))
    padded = np.zeros(1024)
    padded[:n] = x
    np.testing.assert_allclose(out.copy_to_host(), padded.reshape(32, 32).sum(1),
                               rtol=1e-5, atol=1e-5)


def test_shfl_xor_butterfly_gives_every_lane_the_warp_max(warp, rng):
    x = random_array(rng, 64, np.int32)
    out = pygpu.zeros(64, np.int32)
    warp.get_function("butterfly_max")[1, 64](cuda.to_device(x), out)
    want = np.repeat(x.reshape(2, 32).max(1), 32)
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_shfl_up_scans_each_warp(warp, rng):
    x = random_array(rng, 96, np.float64)
    out = pygpu.zeros(96, np.float64)
    warp.get_function("warp_scan")[1, 96](cuda.to_device(x), out)
    np.testing.assert_allclose(out.copy_to_host(), np.cumsum(x.reshape(3, 32), 1).ravel(),
                               rtol=1e-12)


@pytest.mark.parametrize("width", [32, 16, 8, 4])
def test_shfl_broadcasts_within_each_width(warp, rng, width):
    x = random_array(rng, 64, np.int64)
    out = pygpu.zeros(64, np.int64)
    warp.get_function("broadcast")[1, 64](cuda.to_device(x), out, np.int32(width))
    lanes = np.arange(64)
    np.testing.assert_array_equal(out.copy_to_host(), x[lanes // width * width + 3 % width])


def test_votes_ballot_any_all_match(warp, rng):
    x = rng.integers(-1, 2, 128).astype(np.int32)
    x[32:64] = 1   # a warp that is all true
    x[64:96] = -1  # a warp that is all false
    out = pygpu.zeros(256, np.uint32)
    warp.get_function("votes")[1, 128](cuda.to_device(x), out)
    got = out.copy_to_host()
    for w in range(4):
        p = x[32 * w:32 * w + 32] > 0
        ballot = sum(1 << i for i in range(32) if p[i])
        assert got[4 * w:4 * w + 4].tolist() == [ballot, p.any(), p.all(), p.sum()]
    for t in range(128):
        w = x[t // 32 * 32:t // 32 * 32 + 32]
        assert got[128 + t] == sum(1 << i for i in range(32) if w[i] == x[t])


def test_masks_split_a_warp_in_two_groups(warp, rng):
    x = random_array(rng, 64, np.int32)
    out = pygpu.zeros(64, np.int32)
    warp.get_function("half_warps")[1, 64](cuda.to_device(x), out)
    got = out.copy_to_host()
    np.testing.assert_array_equal(got[::16], x.reshape(4, 16).sum(1))


def test_reduce_sync_builtins(warp, rng):
    x = rng.integers(0, 1000, 64).astype(np.uint32)
    out = pygpu.zeros(4, np.uint32)
    warp.get_function("warp_reduce_builtin")[1, 64](cuda.to_device(x), out)
    w = x.reshape(2, 32)
    np.testing.assert_array_equal(out.copy_to_host(),
                                  np.stack([w.sum(1), w.max(1)], 1).ravel())


def test_syncwarp_orders_shared_memory_within_a_warp(warp, rng):
    x = random_array(rng, 64, np.float32)
    out = pygpu.zeros(2, np.float32)
    warp.get_function("shared_warp_sum")[1, 64](cuda.to_device(x), out)
    np.testing.assert_allclose(out.copy_to_host(), x.reshape(2, 32).astype(float).sum(1),
                               rtol=1e-5)


BLOCK = r'''
extern "C" __global__ void barrier_votes(const int *x, int *out)
{
    int p = x[blockIdx.x * blockDim.x + threadIdx.x] > 0;
    int count = __syncthreads_count(p);
    int all = __syncthreads_and(p);
    int any = __syncthreads_or(p);
    if (threadIdx.x == 0) {
        out[3 * blockIdx.x] = count;
        out[3 * blockIdx.x + 1] = all;
        out[3 * blockIdx.x + 2] = any;
    }
}

extern "C" __global__ void geometry(int *out)
{
    int bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;
    int block = (bz * gridDim.y + by) * gridDim.x + bx;
    int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    int n = blockDim.x * blockDim.y * blockDim.z;
    out[block * n + t] = block * 1000 + t * 10 + (warpSize == 32);
}

__constant__ float weights[4] = {0.5f, 0.25f, 0.125f, 0.125f};

__device__ __forceinline__ float weigh(const float *__restrict__ x, int i)
{
    return weights[i % 4] * x[i];
}

extern "C" __global__ void __launch_bounds__(128) weighted(const float *__restrict__ x,
                                                            float *__restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = weigh(x, i);
    }
}

template <typename T> __global__ void axpy(T a, const T *x, T *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

extern "C" __global__ void vectors(const float4 *x, float2 *y, int4 *z)
{
    int i = threadIdx.x;
    float4 v = x[i];
    y[i] = make_float2(v.x + v.y, v.z * v.w);
    z[i] = make_int4(i, -i, 2 * i, (int)v.x);
}

extern "C" __global__ void say_hello(int tag)
{
    printf("hello %d from block %d thread %d\n", tag, blockIdx.x, threadIdx.x);
}

extern "C" __global__ void clocks(long long *out)
{
    long long t0 = clock64();
    long long t1 = clock64();
    out[threadIdx.x] = t1 >= t0;
}
'''


@pytest.fixture(scope="module")
def block():
    return pygpu.RawModule(BLOCK, name_expressions=["axpy<float>", "axpy<double>"])


def test_syncthreads_count_and_or(block, rng):
    x = rng.integers(-2, 3, 3 * 96).astype(np.int32)
    x[96:192] = 5
    out = pygpu.zeros(9, np.int32)
    block.get_function("barrier_votes")[3, 96](cuda.to_device(x), out)
    p = x.reshape(3, 96) > 0
    np.testing.assert_array_equal(out.copy_to_host().reshape(3, 3),
                                  np.stack([p.sum(1), p.all(1), p.any(1)], 1))


def test_three_dimensional_geometry(block):
    grid, threads = (3, 2, 2), (4, 2, 3)
    nblocks, n = 12, 24
    out = pygpu.zeros(nblocks * n, np.int32)
    block.get_function("geometry")[grid, threads](out)
    want = np.array([b * 1000 + t * 10 + 1 for b in range(nblocks) for t in range(n)])
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_qualifiers_constant_memory_and_device_functions(block, rng):
    n = 1000
    x = random_array(rng, n, np.float32)
    y = pygpu.zeros(n, np.float32)
    block.get_function("weighted")[(n + 127) // 128, 128](cuda.to_device(x), y, np.int32(n))
    w = np.array([0.5, 0.25, 0.125, 0.125])[np.arange(n) % 4]
    np.testing.assert_allclose(y.copy_to_host(), w * x, rtol=1e-6)


@pytest.mark.parametrize(("ctype", "dtype"), [("float", np.float32), ("double", np.float64)])
def test_templates_by_name_expression(block, rng, ctype, dtype):
    f = block.get_function(f"axpy<{ctype}>")
    n = 777
    x, y = random_array(rng, n, dtype), random_array(rng, n, dtype)
    dy = cuda.to_device(y)
    f[3, 64](dtype(1.5), cuda.to_device(x), dy, np.int32(n))
    np.testing.assert_allclose(dy.copy_to_host(), 1.5 * x.astype(float) + y, rtol=1e-6,
                               atol=1e-6)


def test_raw_kernel_takes_a_name_expression(rng):
    k = pygpu.RawKernel(BLOCK, "axpy<double>")
    x, y = random_array(rng, 10, np.float64), random_array(rng, 10, np.float64)
    dy = cuda.to_device(y)
    k[1, 32](2.0, cuda.to_device(x), dy, np.int32(10))
    np.testing.assert_allclose(dy.copy_to_host(), 2 * x + y)


def test_vector_types(block, rng):
    x = random_array(rng, (64, 4), np.float32)
    y = pygpu.zeros((64, 2), np.float32)
    z = pygpu.zeros((64, 4), np.int32)
    block.get_function("vectors")[1, 64](cuda.to_device(x), y, z)
    xx = x.astype(np.float64)
    np.testing.assert_allclose(y.copy_to_host(),
                               np.stack([xx[:, 0] + xx[:, 1], xx[:, 2] * xx[:, 3]], 1),
                               rtol=1e-6)
    i = np.arange(64)
    np.testing.assert_array_equal(z.copy_to_host(),
                                  np.stack([i, -i, 2 * i, x[:, 0].astype(np.int32)], 1))


def test_printf_reaches_stdout_in_thread_order(block, capfd):
    block.get_function("say_hello")[2, 3](np.int32(7))
    cuda.synchronize()
    lines = [s for s in capfd.readouterr().out.splitlines() if s.startswith("hello")]
    want = [f"hello 7 from block {b} thread {t}" for b in range(2) for t in range(3)]
    assert sorted(lines) == sorted(want)
    if ON_SIMULATOR:  # the simulator promises thread order; a GPU its own
        assert lines == want


def test_clock64_runs_forward(block):
    out = pygpu.zeros(32, np.int64)
    block.get_function("clocks")[1, 32](out)
    assert out.copy_to_host().all()


ATOMICS = r'''
extern "C" __global__ void histogram(const int *x, int n, unsigned int *bins,
                                     unsigned long long *total, float *fsum, double *dsum)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&bins[x[i] & 15], 1u);
        atomicAdd(total, (unsigned long long)x[i]);
        atomicAdd(fsum, 0.5f);
        atomicAdd(dsum, (double)x[i]);
    }
}

extern "C" __global__ void extremes(const int *x, int n, int *lo, int *hi, unsigned int *bits)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicMin(lo, x[i]);
        atomicMax(hi, x[i]);
        atomicOr(&bits[0], 1u << (x[i] & 31));
        atomicAnd(&bits[1], ~(1u << (x[i] & 31)));
        atomicXor(&bits[2], (unsigned int)x[i]);
    }
}

extern "C" __global__ void counters(unsigned int *wrap, int *slots, int *exch)
{
    unsigned int ticket = atomicInc(&wrap[0], 9u);   /* 0..9, then 0 */
    atomicDec(&wrap[1], 1000u);
    int old;
    do {  /* claim the first free slot with compare-and-swap */
        old = atomicCAS(&slots[ticket], 0, (int)threadIdx.x + 1);
        ticket = (ticket + 1) % 64;
    } while (old != 0);
    atomicExch(exch, 42);
}

extern "C" __global__ void shared_counts(const int *x, int n, int *out)
{
    __shared__ int bins[8];
    if (threadIdx.x < 8) {
        bins[threadIdx.x] = 0;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        atomicAdd(&bins[x[i] & 7], 1);
    }
    __syncthreads();
    if (threadIdx.x < 8) {
        out[threadIdx.x] = bins[threadIdx.x];
    }
}
'''


@pytest.fixture(scope="module")
def atomics():
    return pygpu.RawModule(ATOMICS)


def test_atomic_add_in_every_type(atomics, rng):
    n = 5000
    x = rng.integers(0, 1000, n).astype(np.int32)
    bins = pygpu.zeros(16, np.uint32)
    total = pygpu.zeros(1, np.uint64)
    fsum, dsum = pygpu.zeros(1, np.float32), pygpu.zeros(1, np.float64)
    atomics.get_function("histogram")[8, 128](cuda.to_device(x), np.int32(n), bins, total,
                                              fsum, dsum)
    np.testing.assert_array_equal(bins.copy_to_host(), np.bincount(x & 15, minlength=16))
    assert total.copy_to_host()[0] == x.sum()
    assert fsum.copy_to_host()[0] == 0.5 * n
    assert dsum.copy_to_host()[0] == x.sum()


def test_atomic_min_max_and_bitwise(atomics, rng):
    n = 700
    x = rng.integers(-10**6, 10**6, n).astype(np.int32)
    lo = cuda.to_device(np.array([2**31 - 1], np.int32))
    hi = cuda.to_device(np.array([-2**31], np.int32))
    bits = cuda.to_device(np.array([0, 0xFFFFFFFF, 0], np.uint32))
    atomics.get_function("extremes")[(n + 127) // 128, 128](cuda.to_device(x), np.int32(n),
                                                           lo, hi, bits)
    assert lo.copy_to_host()[0] == x.min() and hi.copy_to_host()[0] == x.max()
    seen = np.bitwise_or.reduce(np.uint32(1) << (x & 31).astype(np.uint32))
    want = [seen, np.uint32(0xFFFFFFFF) & ~seen, np.bitwise_xor.reduce(x.view(np.uint32))]
    np.testing.assert_array_equal(bits.copy_to_host(), np.array(want, np.uint32))


def test_atomic_inc_dec_cas_exch(atomics):
    wrap = cuda.to_device(np.array([0, 0], np.uint32))
    slots, exch = pygpu.zeros(64, np.int32), pygpu.zeros(1, np.int32)
    atomics.get_function("counters")[1, 64](wrap, slots, exch)
    w = wrap.copy_to_host()
    assert w[0] == 64 % 10
    assert w[1] == 1000 - 63  # 0 wraps to the limit, then 63 steps down
    assert sorted(slots.copy_to_host()) == list(range(1, 65))
    assert exch.copy_to_host()[0] == 42


def test_atomics_on_shared_memory(atomics, rng):
    n = 3000
    x = rng.integers(0, 100, n).astype(np.int32)
    out = pygpu.zeros(8, np.int32)
    atomics.get_function("shared_counts")[1, 256](cuda.to_device(x), np.int32(n), out)
    np.testing.assert_array_equal(out.copy_to_host(), np.bincount(x & 7, minlength=8))


INTRINSICS = r'''
extern "C" __global__ void bits(const unsigned int *x, const unsigned long long *y, int *out)
{
    int i = threadIdx.x;
    out[8 * i] = __popc(x[i]);
    out[8 * i + 1] = __clz((int)x[i]);
    out[8 * i + 2] = __ffs((int)x[i]);
    out[8 * i + 3] = (int)__brev(x[i]);
    out[8 * i + 4] = __popcll(y[i]);
    out[8 * i + 5] = __clzll((long long)y[i]);
    out[8 * i + 6] = __ffsll((long long)y[i]);
    out[8 * i + 7] = (int)__umulhi(x[i], 0x9e3779b9u);
}

extern "C" __global__ void maths(const float *x, const double *d, float *f, double *g)
{
    int i = threadIdx.x;
    float v = x[i];
    float s, c;
    sincosf(v, &s, &c);
    f[10 * i] = sinf(v);
    f[10 * i + 1] = __expf(v);
    f[10 * i + 2] = rsqrtf(fabsf(v) + 1.0f);
    f[10 * i + 3] = fmaf(v, 2.0f, 1.0f);
    f[10 * i + 4] = __fdividef(v, 3.0f);
    f[10 * i + 5] = s * s + c * c;
    f[10 * i + 6] = min(v, 0.25f) + max(v, -0.25f);
    f[10 * i + 7] = tanhf(v) + erff(v);
    f[10 * i + 8] = __saturatef(v);
    f[10 * i + 9] = __int_as_float(__float_as_int(v));
    g[4 * i] = exp(d[i]) - log1p(fabs(d[i]));
    g[4 * i + 1] = rsqrt(fabs(d[i]) + 1.0);
    g[4 * i + 2] = fmin(d[i], 0.5) + fmax(d[i], -0.5);
    g[4 * i + 3] = __longlong_as_double(__double_as_longlong(d[i]));
}
'''


def test_bit_intrinsics(rng):
    k = pygpu.RawKernel(INTRINSICS, "bits")
    x = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    x[:2] = [0, 1]
    y = rng.integers(0, 2**63, 64, dtype=np.uint64) >> rng.integers(0, 60, 64).astype(np.uint64)
    y[0] = 0
    out = pygpu.zeros((64, 8), np.int32)
    k[1, 64](cuda.to_device(x), cuda.to_device(y), out)
    got = out.copy_to_host()
    for i in range(64):
        a, b = int(x[i]), int(y[i])
        want = [bin(a).count("1"), 32 - a.bit_length(), (a & -a).bit_length(),
                int(f"{a:032b}"[::-1], 2), bin(b).count("1"), 64 - b.bit_length(),
                (b & -b).bit_length(), (a * 0x9e3779b9) >> 32]
        assert got[i].astype(np.int64).tolist() == [np.int32(np.uint32(v)) for v in want], i


def test_math_functions_and_intrinsics(rng):
    k = pygpu.RawKernel(INTRINSICS, "maths")
    x = (rng.standard_normal(64) * 2).astype(np.float32)
    d = rng.standard_normal(64) * 2
    f, g = pygpu.zeros((64, 10), np.float32), pygpu.zeros((64, 4), np.float64)
    k[1, 64](cuda.to_device(x), cuda.to_device(d), f, g)
    v = x.astype(np.float64)
    from math import erf
    want_f = np.stack([np.sin(v), np.exp(v), 1 / np.sqrt(np.abs(v) + 1), v * 2 + 1, v / 3,
                       np.ones_like(v), np.minimum(v, 0.25) + np.maximum(v, -0.25),
                       np.tanh(v) + np.array([erf(t) for t in v]), np.clip(v, 0, 1), v], 1)
    np.testing.assert_allclose(f.copy_to_host(), want_f, rtol=2e-5, atol=2e-5)
    want_g = np.stack([np.exp(d) - np.log1p(np.abs(d)), 1 / np.sqrt(np.abs(d) + 1),
                       np.minimum(d, 0.5) + np.maximum(d, -0.5), d], 1)
    np.testing.assert_allclose(g.copy_to_host(), want_g, rtol=1e-12)
