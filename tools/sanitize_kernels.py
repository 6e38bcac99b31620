"""Runs every prebuilt kernel at awkward sizes, and the paths a user takes
through generated kernels (ufuncs in each layout, reductions over each
shape class, scans including the single-pass one), a RawKernel, a RawModule
(a C++ template through name expressions, its __constant__ and __device__
variables), the kernels written in Python (@cuda.jit with shared memory,
atomics and warp shuffles, device functions, in-kernel random numbers),
ElementwiseKernel, ReductionKernel and fuse, and the array API's kernels
(indexing by masks and integer arrays, sort, unique, searchsorted, random
numbers, linalg and FFT through NVIDIA's libraries), for compute-sanitizer.

tools/sanitize.sh runs this under memcheck, racecheck, initcheck and
synccheck. Every output is checked against NumPy too, so a kernel that
the sanitizer passes but computes wrongly still fails.
"""

import sys

import numpy as np

import pygpu
from pygpu import cuda, kernels

SIZES = [1, 31, 33, 1025]
MATMUL = [(1, 1, 1), (31, 33, 1), (33, 31, 17), (17, 33, 65), (129, 1, 130), (65, 129, 33),
          (130, 257, 129)]


def check(ok, what):
    if not ok:
        print("WRONG:", what)
        sys.exit(1)


def main():
    rng = np.random.default_rng(0)
    launches = 0
    for dtype in (np.float32, np.float64, np.int32, np.int64):
        for n in SIZES:
            x = (rng.standard_normal(n) * 100).astype(dtype)
            y = (rng.standard_normal(n) * 100).astype(dtype)
            dx, dy = cuda.to_device(x), cuda.to_device(y)
            out = pygpu.zeros(n, dtype=dtype)
            for grid, block in [cuda.launch_config(n, 128), (1, 32), (3, (8, 4))]:
                kernels.add[grid, block](dx, dy, out)
                check(np.array_equal(out.copy_to_host(), x + y), f"add {dtype} {n}")
                kernels.add[grid, block](dx, dtype(3), out)
                check(np.array_equal(out.copy_to_host(), x + dtype(3)), f"add scalar {n}")
                d = cuda.to_device(x)
                kernels.add_one[grid, block](d)
                check(np.array_equal(d.copy_to_host(), x + 1), f"add_one {dtype} {n}")
                launches += 3
            # offset views: unaligned starts take the element-by-element path
            v = cuda.to_device(x)[1:]
            pygpu.add_one(v)
            check(np.array_equal(v.copy_to_host(), x[1:] + 1), f"add_one offset {n}")
            # strided copies and fills (copy_strided, fill)
            m = cuda.to_device(np.resize(x, (n, 3)))
            check(np.array_equal(m.T.copy().copy_to_host(), np.resize(x, (n, 3)).T),
                  f"copy_strided {n}")
            check((pygpu.full(n, 5, dtype=dtype).copy_to_host() == 5).all(), "fill")
            launches += 3
    for dtype, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        for m, k, n in MATMUL:
            A = rng.standard_normal((m, k)).astype(dtype)
            B = rng.standard_normal((k, n)).astype(dtype)
            ref = A.astype(np.float64) @ B
            dA, dB = cuda.to_device(A), cuda.to_device(B)
            for name, block in (("matmul_naive", (16, 16)), ("matmul_shared", (16, 16)),
                                ("matmul_shared", (32, 32)), ("matmul_tiled", 256)):
                C = pygpu.zeros((m, n), dtype=dtype)
                grid = (2, 3) if block != 256 else (1, 2)
                getattr(kernels, name)[grid, block](dA, dB, C)
                err = np.abs(C.copy_to_host() - ref).max() / (np.abs(ref).max() or 1)
                check(err <= tol * k, f"{name}{block} {dtype} {m}x{k}x{n}")
                launches += 1
    launches += generated(rng)
    launches += users(rng)
    cuda.synchronize()
    print(f"all kernels correct: {launches} launches")


def generated(rng):
    """The generated kernels a user reaches: np.sin(d), d / 2, d ** e and
    comparisons on contiguous, strided, broadcast and 0-d operands; sums,
    argmax, mean and var over every shape class (one thread per short row,
    threads along a row, split rows with partials, the contiguous axis kept);
    cumsum on many short rows, a few long ones, and one long row (the
    single-pass look-back scan); a user's RawKernel."""
    launches = 0
    for dtype in (np.float32, np.float64, np.int32):
        for n in (1, 33, 1025, 5000):
            x = (rng.standard_normal(n) * 10).astype(dtype)
            d = pygpu.asarray(x)
            for got, want in ((np.sin(d), np.sin(x)), (d / 2, x / 2), (d ** 2, x ** 2),
                              (d[::-3] < d[::-3][0], x[::-3] < x[::-3][0]),
                              (np.maximum(d[::2], d[0]), np.maximum(x[::2], x[0])),
                              (d.sum(), x.sum()), (d.max(), x.max()),
                              (d.argmax(), x.argmax()), (d.cumsum(), np.cumsum(x))):
                check(np.allclose(got.copy_to_host(), want, rtol=1e-5, atol=1e-3 * n),
                      f"generated {dtype} {n}")
                launches += 1
    for shape, axis in (((5001, 2), 1), ((3, 70001), 1), ((70001, 3), 0), ((129, 257), 0),
                        ((129, 257), None), ((4, 5, 6), (0, 2))):
        x = rng.standard_normal(shape).astype(np.float32)
        d = pygpu.asarray(x)
        for name in ("sum", "mean", "var", "max"):
            check(np.allclose(getattr(d, name)(axis=axis).copy_to_host(),
                              getattr(x, name)(axis=axis), rtol=1e-4, atol=1e-3),
                  f"{name} {shape} {axis}")
            launches += 1
        if not isinstance(axis, tuple):
            check(np.array_equal(d.argmin(axis=axis).copy_to_host(), x.argmin(axis=axis)),
                  f"argmin {shape} {axis}")
            ax = axis if axis is not None else 0
            check(np.allclose(d.cumsum(axis=ax).copy_to_host(), np.cumsum(x, axis=ax),
                              rtol=1e-3, atol=1e-2 * np.sqrt(shape[ax])), f"cumsum {shape}")
            launches += 2
    x = rng.standard_normal(1 << 20).astype(np.float32)
    for _ in range(2):  # the second replays the first one's plan (its state zeroed again)
        check(np.allclose(pygpu.asarray(x).cumsum().copy_to_host(),
                          np.cumsum(x.astype(np.float64)), rtol=1e-3, atol=0.5),
              "cumsum of one long row")
    # out= replayed from a plan in C (ops.c replay_plan), into the input's
    # elements too; the 16-byte path and its tail (5001 is no multiple of 4)
    x = rng.standard_normal(5001).astype(np.float32)
    d, e = pygpu.asarray(x), pygpu.empty(5001, np.float32)
    for _ in range(2):
        check(np.allclose(np.sin(d, out=e).copy_to_host(), np.sin(x), rtol=1e-6), "sin out=")
        check(np.allclose(np.divide(d[1:], 2, out=e[1:]).copy_to_host(), x[1:] / 2),
              "divide out=")
    np.negative(d, out=d)
    check(np.array_equal(d.copy_to_host(), -x), "negative in place")
    k = pygpu.RawKernel(r"""
    extern "C" __global__ void scale(const float *x, float *y, float a, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i];
    }""", "scale")
    x = rng.standard_normal(1000).astype(np.float32)
    dx, dy = pygpu.asarray(x), pygpu.empty(1000, np.float32)
    k[(4,), (256,)](dx, dy, np.float32(3), np.int32(1000))
    check(np.allclose(dy.copy_to_host(), 3 * x), "RawKernel")
    return launches + 9


def users(rng):
    """The other kernels a user writes or reaches (see the docstring above)."""
    launches = 0
    mod = pygpu.RawModule(r"""
    #include <cuda_runtime.h>
    __constant__ float coef[4];
    __device__ int counter;
    template <typename T>
    __global__ void poly(const T *x, T *y, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            y[i] = coef[0] + x[i] * (coef[1] + x[i] * coef[2]);
            atomicAdd(&counter, 1);
        }
    }""", name_expressions=["poly<float>"])
    c = np.array([1, 2, 3, 0], np.float32)
    mod.memcpy_to_symbol("coef", c)
    mod.get_global("counter", np.int32)[...] = 0
    x = rng.standard_normal(1000).astype(np.float32)
    dx, dy = pygpu.asarray(x), pygpu.empty(1000, np.float32)
    mod.get_function("poly<float>")[(4,), (256,)](dx, dy, np.int32(1000))
    check(np.allclose(dy.copy_to_host(), 1 + x * (2 + 3 * x), rtol=1e-5, atol=1e-5),
          "RawModule template")
    check(int(mod.get_global("counter", np.int32).copy_to_host()[0]) == 1000,
          "RawModule __device__ variable")
    launches += 1

    @cuda.jit(device=True)
    def clamp(v, lo, hi):
        return min(max(v, lo), hi)

    @cuda.jit
    def hist(a, bins):
        tile = cuda.shared.array(64, np.int32)
        t = cuda.threadIdx.x
        if t < 64:
            tile[t] = 0
        cuda.syncthreads()
        i = cuda.grid(1)
        if i < a.shape[0]:
            cuda.atomic.add(tile, clamp(int(a[i]), 0, 63), 1)
        cuda.syncthreads()
        if t < 64:
            cuda.atomic.add(bins, t, tile[t])

    @cuda.jit
    def warp_sum(a, out):
        i = cuda.grid(1)
        v = a[i] if i < a.shape[0] else 0.0
        off = 16
        while off > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
            off //= 2
        if cuda.laneid == 0:
            cuda.atomic.add(out, 0, v)

    a = rng.integers(-5, 70, 5000).astype(np.float32)
    bins = pygpu.zeros(64, np.int32)
    hist[(5000 + 127) // 128, 128](pygpu.asarray(a), bins)
    check(np.array_equal(bins.copy_to_host(), np.bincount(np.clip(a.astype(int), 0, 63),
                                                          minlength=64)), "jit histogram")
    # the same launch and types again, on arrays of other lengths: the second
    # finds its kernel in the launch's table (module.c mod_jit_call), the
    # third repeats the last call (jit_launch_again)
    for length in (3001, 4999):
        b = rng.integers(-5, 70, length).astype(np.float32)
        bins = pygpu.zeros(64, np.int32)
        hist[(5000 + 127) // 128, 128](pygpu.asarray(b), bins)
        check(np.array_equal(bins.copy_to_host(), np.bincount(np.clip(b.astype(int), 0, 63),
                                                              minlength=64)),
              f"jit histogram again ({length})")
    out = pygpu.zeros(1, np.float32)
    warp_sum[(5000 + 127) // 128, 128](pygpu.asarray(a), out)
    check(np.isclose(out.copy_to_host()[0], a.sum(), rtol=1e-5), "jit warp shuffles")
    from pygpu.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    @cuda.jit
    def draw(states, out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = xoroshiro128p_uniform_float32(states, i)

    states = create_xoroshiro128p_states(1000, seed=1)
    u = pygpu.empty(1000, np.float32)
    draw[8, 128](states, u)
    uh = u.copy_to_host()
    check(((uh >= 0) & (uh < 1)).all() and 0.4 < uh.mean() < 0.6, "jit xoroshiro128p")
    launches += 6

    ew = pygpu.ElementwiseKernel("T x, T y", "T z", "z = x * x + y", "sq_add")
    red = pygpu.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "sum_sq")
    dx = pygpu.asarray(x)
    check(np.allclose(ew(dx, dx).copy_to_host(), x * x + x, rtol=1e-5), "ElementwiseKernel")
    check(np.isclose(red(dx).copy_to_host(), (x.astype(np.float64) ** 2).sum(), rtol=1e-4),
          "ReductionKernel")
    fused = pygpu.fuse(lambda p, q: np.sin(p) * 2 + np.sqrt(np.abs(q)))
    check(np.allclose(fused(dx, dx).copy_to_host(), np.sin(x) * 2 + np.sqrt(np.abs(x)),
                      rtol=1e-5, atol=1e-6), "fuse")
    launches += 3

    # the array API's kernels: masks, integer arrays, sorting, sets, random
    d = pygpu.asarray(x)
    check(np.array_equal(d[d > 0.5].copy_to_host(), x[x > 0.5]), "mask")
    idx = rng.integers(-1000, 1000, 777)
    check(np.array_equal(d[pygpu.asarray(idx)].copy_to_host(), x[idx]), "take")
    e = d.copy()
    e[d < 0] = 0
    check(np.array_equal(e.copy_to_host(), np.where(x < 0, 0, x)), "mask set")
    for n in (1, 33, 5000, 1 << 17):
        v = rng.standard_normal(n).astype(np.float32)
        dv = pygpu.asarray(v)
        check(np.array_equal(pygpu.sort(dv).copy_to_host(), np.sort(v)), f"sort {n}")
        check(np.array_equal(pygpu.argsort(dv, stable=True).copy_to_host(),
                             np.argsort(v, kind="stable")), f"argsort {n}")
        launches += 2
    k = rng.integers(0, 50, 3000)
    check(np.array_equal(pygpu.unique_values(pygpu.asarray(k)).copy_to_host(), np.unique(k)),
          "unique")
    s = np.sort(x)
    check(np.array_equal(pygpu.searchsorted(pygpu.asarray(s), d).copy_to_host(),
                         np.searchsorted(s, x)), "searchsorted")
    g = pygpu.random.default_rng(7)
    for draw_ in (g.random(1001), g.standard_normal(1001), g.integers(0, 10, 1001)):
        h = draw_.copy_to_host()
        check(np.isfinite(h).all() and h.size == 1001, "random")
    launches += 8

    # NVIDIA's libraries: cuBLAS, cuSOLVER, cuFFT
    A = rng.standard_normal((33, 33)) + 33 * np.eye(33)
    b = rng.standard_normal(33)
    dA = pygpu.asarray(A)
    check(np.allclose(pygpu.linalg.solve(dA, pygpu.asarray(b)).copy_to_host(),
                      np.linalg.solve(A, b)), "solve")
    check(np.allclose(pygpu.linalg.eigvalsh(dA + dA.T).copy_to_host(),
                      np.linalg.eigvalsh(A + A.T)), "eigvalsh")
    check(np.allclose((dA @ dA).copy_to_host(), A @ A), "matmul")
    z = rng.standard_normal(1000)
    check(np.allclose(pygpu.fft.rfft(pygpu.asarray(z)).copy_to_host(), np.fft.rfft(z)), "rfft")
    return launches + 4


if __name__ == "__main__":
    main()
