"""Kernels as the seeds' notebooks and Numba's documentation write them, with
only the import line changed (`from pygpu import cuda`; Numba's float32 is
NumPy's). The tests import them from here, and the NVRTC test compiles
them in a process of its own."""

import math

import numpy as np
from pygpu.cuda.random import xoroshiro128p_normal_float64, xoroshiro128p_uniform_float32

from pygpu import cuda

float32 = np.float32
TPB = 16
WARP_MASK = 0xFFFFFFFF
BLOCK = 64


@cuda.jit
def add_one_kernel(A):
    row, col = cuda.grid(2)
    if row < A.shape[0] and col < A.shape[1]:
        A[row, col] += 1


@cuda.jit
def matmul(A, B, C):
    """Square matrix multiplication C = A * B (Numba's documentation)."""
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


@cuda.jit
def fast_matmul(A, B, C):
    """Matrix multiplication through shared memory (Numba's documentation)."""
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)

    x, y = cuda.grid(2)

    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x    # blocks per grid

    tmp = float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]

        cuda.syncthreads()

        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]

        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


@cuda.jit
def histogram(x, xmin, xmax, histogram_out):
    """Numba's documentation: a histogram by atomic adds, grid-stride loop."""
    nbins = histogram_out.shape[0]
    bin_width = (xmax - xmin) / nbins

    start = cuda.grid(1)
    stride = cuda.gridsize(1)

    for i in range(start, x.shape[0], stride):
        bin_number = np.int32((x[i] - xmin) / bin_width)
        if bin_number >= 0 and bin_number < histogram_out.shape[0]:
            cuda.atomic.add(histogram_out, bin_number, 1)


@cuda.jit(device=True)
def warp_reduce(v):
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(WARP_MASK, v, offset)
        offset //= 2
    return v


@cuda.jit
def block_sum(x, out):
    """A block reduction: a tree in shared memory, then a device function
    that sums a warp with shuffles, then one atomic add per block."""
    shr = cuda.shared.array(BLOCK, dtype=np.float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    shr[tid] = x[i] if i < x.shape[0] else 0.0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s >= 32:
        if tid < s:
            shr[tid] += shr[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid < 32:
        total = warp_reduce(shr[tid])
        if cuda.laneid == 0:
            cuda.atomic.add(out, 0, total)


@cuda.jit
def compute_pi(rng_states, iterations, out):
    """Numba's documentation: pi by Monte Carlo, a generator per thread."""
    thread_id = cuda.grid(1)
    inside = 0
    for i in range(iterations):  # noqa: B007 (as Numba's documentation writes it)
        x = xoroshiro128p_uniform_float32(rng_states, thread_id)
        y = xoroshiro128p_uniform_float32(rng_states, thread_id)
        if x ** 2 + y ** 2 <= 1.0:
            inside += 1
    out[thread_id] = 4.0 * inside / iterations


@cuda.jit
def normals(rng_states, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = xoroshiro128p_normal_float64(rng_states, i)


@cuda.jit(device=True)
def polar(x, y):
    return math.sqrt(x * x + y * y), math.atan2(y, x)


@cuda.jit
def to_polar(x, y, r, theta):
    i = cuda.grid(1)
    if i < x.size:
        r[i], theta[i] = polar(x[i], y[i])


@cuda.jit(device=True)
def mandel(x, y, max_iters):
    """The Mandelbrot set's escape time (Numba's classic example): complex
    numbers in a device function."""
    c = complex(x, y)
    z = 0.0j
    for i in range(max_iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return max_iters


@cuda.jit
def mandel_kernel(min_x, max_x, min_y, max_y, image, iters):
    height = image.shape[0]
    width = image.shape[1]
    pixel_size_x = (max_x - min_x) / width
    pixel_size_y = (max_y - min_y) / height
    startX, startY = cuda.grid(2)
    gridX = cuda.gridDim.x * cuda.blockDim.x
    gridY = cuda.gridDim.y * cuda.blockDim.y
    for x in range(startX, width, gridX):
        real = min_x + x * pixel_size_x
        for y in range(startY, height, gridY):
            imag = min_y + y * pixel_size_y
            image[y, x] = mandel(real, imag, iters)


@cuda.reduce
def sum_reduce(a, b):
    """Numba's documentation: a reduction by a Python function."""
    return a + b


@cuda.reduce
def max_reduce(a, b):
    return max(a, b)
