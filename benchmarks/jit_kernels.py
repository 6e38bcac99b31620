"""The seeds' kernels written in Python (issue 24's rows: benchmarks/jit.py),
as tests/jit/kernels_numba_docs.py has them, and the same algorithms in
CUDA C for pygpu.RawKernel.

This file is written for pygpu.cuda; numba_module() loads the same text with
Numba's import line instead (`from numba import cuda`), so that Numba
compiles exactly these functions.
"""

import numpy as np

from pygpu import cuda

float32 = np.float32
TPB = 16  # fast_matmul's tiles
WARP_MASK = 0xFFFFFFFF
BLOCK = 64  # block_sum's threads per block


@cuda.jit
def add_one_kernel(A):
    row, col = cuda.grid(2)
    if row < A.shape[0] and col < A.shape[1]:
        A[row, col] += 1


@cuda.jit
def matmul(A, B, C):
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


@cuda.jit
def fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
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
def tiny(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


# The same algorithms in CUDA C, as a CUDA C programmer writes them: the same
# threads, the same memory accesses, the same arithmetic types (matmul sums
# in double as the Python's `tmp = 0.` does; histogram's bin width is double,
# as Python floats are).
CUDA_SOURCE = r"""
extern "C" __global__ void add_one_kernel(float *A, long long rows, long long cols)
{
    long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long col = (long long)blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        A[row * cols + col] += 1.0f;
    }
}

extern "C" __global__ void matmul(const float *A, const float *B, double *C, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long j = (long long)blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < n) {
        double tmp = 0.0;
        for (long long k = 0; k < n; k++) {
            tmp += A[i * n + k] * B[k * n + j];
        }
        C[i * n + j] = tmp;
    }
}

#define TPB 16
extern "C" __global__ void fast_matmul(const float *A, const float *B, float *C, long long n)
{
    __shared__ float sA[TPB][TPB];
    __shared__ float sB[TPB][TPB];
    long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    float tmp = 0.0f;
    for (int i = 0; i < gridDim.x; i++) {
        sA[ty][tx] = 0.0f;
        sB[ty][tx] = 0.0f;
        if (y < n && tx + i * TPB < n) {
            sA[ty][tx] = A[y * n + tx + i * TPB];
        }
        if (x < n && ty + i * TPB < n) {
            sB[ty][tx] = B[(ty + i * TPB) * n + x];
        }
        __syncthreads();
        for (int j = 0; j < TPB; j++) {
            tmp += sA[ty][j] * sB[j][tx];
        }
        __syncthreads();
    }
    if (y < n && x < n) {
        C[y * n + x] = tmp;
    }
}

extern "C" __global__ void histogram(const double *x, long long n, double xmin, double xmax,
                                     int *hist, long long nbins)
{
    double bin_width = (xmax - xmin) / nbins;
    long long start = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = start; i < n; i += stride) {
        int bin = (int)((x[i] - xmin) / bin_width);
        if (bin >= 0 && bin < nbins) {
            atomicAdd(&hist[bin], 1);
        }
    }
}

#define BLOCK 64
extern "C" __global__ void block_sum(const double *x, long long n, double *out)
{
    __shared__ double shr[BLOCK];
    int tid = threadIdx.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    shr[tid] = i < n ? x[i] : 0.0;
    __syncthreads();
    for (int s = blockDim.x / 2; s >= 32; s /= 2) {
        if (tid < s) {
            shr[tid] += shr[tid + s];
        }
        __syncthreads();
    }
    if (tid < 32) {
        double v = shr[tid];
        for (int offset = 16; offset > 0; offset /= 2) {
            v += __shfl_down_sync(0xffffffff, v, offset);
        }
        if ((threadIdx.x & 31) == 0) {
            atomicAdd(out, v);
        }
    }
}
"""

SEEDS = ("add_one_kernel", "matmul", "fast_matmul", "histogram", "block_sum")


def numba_module(ncuda):
    """This file's kernels compiled by Numba (ncuda: numba.cuda, on a GPU or
    its simulator): the same text with Numba's import line, as a module of
    its own; a dict of name -> kernel."""
    import pathlib

    path = pathlib.Path(__file__)
    text = path.read_text().replace("from pygpu import cuda", "from numba import cuda")
    namespace = {"__name__": "benchmarks.jit_kernels_numba", "__file__": str(path)}
    exec(compile(text, str(path), "exec"), namespace)  # noqa: S102 (this file's own text)
    assert namespace["cuda"] is ncuda, "numba.cuda changed under the benchmark"
    return {name: namespace[name] for name in (*SEEDS, "tiny")}
