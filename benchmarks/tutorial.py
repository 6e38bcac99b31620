"""The tutorials' kernels, as their users write them: in CUDA C (for
pygpu.RawKernel, and what raw CUDA C would compile) and in Python for Numba.

Used by the GPU rows (Numba's kernels on the GPU) and by the simulator rows
(benchmarks/sim.py: the CUDA C kernels on pygpu's simulator against the Numba
kernels on Numba's).
"""

# The CUDA C tutorials' kernels: one thread per element, rows on y and columns
# on x, 16 x 16 tiles for the shared-memory matmul (the CUDA C Programming
# Guide's). Grids: ceil(n / 256) blocks of 256 for the vector, ceil(cols / 16)
# x ceil(rows / 16) blocks of (16, 16) for the matrices.
CUDA_SOURCE = r"""
extern "C" __global__ void vector_add(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = a[i] + b[i];
    }
}

extern "C" __global__ void add_one(float *A, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        A[row * cols + col] += 1.0f;
    }
}

extern "C" __global__ void matmul_naive(const float *A, const float *B, float *C, int n)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n) {
        float sum = 0.0f;
        for (int k = 0; k < n; k++) {
            sum += A[row * n + k] * B[k * n + col];
        }
        C[row * n + col] = sum;
    }
}

#define TILE 16
extern "C" __global__ void matmul_shared(const float *A, const float *B, float *C, int n)
{
    __shared__ float sA[TILE][TILE];
    __shared__ float sB[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int col = blockIdx.x * TILE + tx;
    int row = blockIdx.y * TILE + ty;
    float sum = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
        sA[ty][tx] = (row < n && t * TILE + tx < n) ? A[row * n + t * TILE + tx] : 0.0f;
        sB[ty][tx] = (col < n && t * TILE + ty < n) ? B[(t * TILE + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) {
            sum += sA[ty][k] * sB[k][tx];
        }
        __syncthreads();
    }
    if (row < n && col < n) {
        C[row * n + col] = sum;
    }
}
"""

# A small kernel for the compile and cache-load rows.
SMALL_SOURCE = r"""
extern "C" __global__ void scale(float *x, float a, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] *= a;
    }
}
"""

NUMBA_KERNELS = {}
cuda = None  # numba.cuda, set by numba_kernels()


def numba_kernels(ncuda):
    """The tutorial kernels as a Numba user writes them (Numba's own examples:
    add_one indexes A[x, y] with x = cuda.grid's first axis)."""
    global cuda
    if NUMBA_KERNELS:
        return NUMBA_KERNELS
    from numba import float32

    # The kernels name `cuda` as a global of this module, as Numba's examples
    # do: its simulator swaps in its own module for the globals that name
    # numba.cuda when a kernel runs, and would not see a closure's.
    cuda = ncuda

    TPB = 16

    @cuda.jit
    def add_one(A):
        x, y = cuda.grid(2)
        if x < A.shape[0] and y < A.shape[1]:
            A[x, y] += 1

    @cuda.jit
    def vadd(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + b[i]

    @cuda.jit
    def tiny(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    @cuda.jit
    def matmul(A, B, C):
        i, j = cuda.grid(2)
        if i < C.shape[0] and j < C.shape[1]:
            tmp = 0.0
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
        tmp = float32(0.0)
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

    NUMBA_KERNELS.update(add_one=add_one, vadd=vadd, tiny=tiny, matmul=matmul,
                         fast_matmul=fast_matmul)
    return NUMBA_KERNELS
