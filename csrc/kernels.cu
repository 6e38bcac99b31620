/* pygpu's prebuilt kernels and their launchers.
 *
 * This file is compiled twice: by nvcc for the GPU (table pg_cuda_kernels),
 * and by the host C++ compiler with sim_exec.h for the simulator (table
 * pg_sim_kernels). It never includes Python.h or NumPy. Each launcher
 * pg_launch_<name> launches and returns the launch error; the C side has
 * checked every argument before it gets here.
 *
 * Every kernel covers its whole problem for any launch configuration: work is
 * spread with grid-stride loops over the threads there are, and threadIdx.x
 * walks the contiguous axis. Index arithmetic is 64-bit. */
#include <stdint.h>

#include "runtime.h"

#ifdef __CUDACC__
#include <cuda_runtime.h>
#define PG_KERNEL_TABLE pg_cuda_kernels
#define PG_LAUNCH(barriers, kernel, grid, block, stream, ...)                          \
    do {                                                                               \
        kernel<<<(grid), (block), 0, (cudaStream_t)(stream)>>>(__VA_ARGS__);           \
        return (pg_err)cudaGetLastError();                                             \
    } while (0)
#else
#include "sim_exec.h"
#define PG_KERNEL_TABLE pg_sim_kernels
#define PG_LAUNCH(barriers, kernel, grid, block, stream, ...)                          \
    do {                                                                               \
        (void)(stream);                                                                \
        return pg_sim::launch((grid), (block), (barriers),                             \
                              [&] { kernel(__VA_ARGS__); });                           \
    } while (0)
#endif

namespace {

/* ---- thread geometry ---------------------------------------------------- */

/* This thread's rank among all threads of the launch, x fastest. */
__device__ __forceinline__ int64_t
thread_rank()
{
    int64_t block =
        ((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    int64_t per_block = (int64_t)blockDim.x * blockDim.y * blockDim.z;
    int64_t in_block =
        ((int64_t)threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    return block * per_block + in_block;
}

__device__ __forceinline__ int64_t
thread_count()
{
    return (int64_t)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y *
           blockDim.z;
}

/* Row (y and z folded together) and column (x) coordinates of a 2-D walk. */
__device__ __forceinline__ int64_t
row_rank()
{
    return ((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * blockDim.y * blockDim.z +
           (int64_t)threadIdx.z * blockDim.y + threadIdx.y;
}

__device__ __forceinline__ int64_t
row_count()
{
    return (int64_t)gridDim.y * gridDim.z * blockDim.y * blockDim.z;
}

__device__ __forceinline__ int64_t
col_rank()
{
    return (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ int64_t
col_count()
{
    return (int64_t)gridDim.x * blockDim.x;
}

dim3
to_dim3(pg_dim3 d)
{
    return dim3(d.x, d.y, d.z);
}

/* A launch for internal work (copies, fills) over n elements. */
void
flat_config(int64_t n, dim3 *grid, dim3 *block)
{
    const int64_t threads = 256, max_blocks = 65535;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > max_blocks) {
        blocks = max_blocks;
    }
    if (blocks < 1) {
        blocks = 1;
    }
    *grid = dim3((unsigned int)blocks);
    *block = dim3((unsigned int)threads);
}

/* ---- element types -------------------------------------------------------- */

struct bytes16 {
    uint64_t lo, hi;
};

template <int N> struct item_of;
template <> struct item_of<1> {
    typedef uint8_t type;
};
template <> struct item_of<2> {
    typedef uint16_t type;
};
template <> struct item_of<4> {
    typedef uint32_t type;
};
template <> struct item_of<8> {
    typedef uint64_t type;
};
template <> struct item_of<16> {
    typedef bytes16 type;
};

/* Calls fn.template operator()<T>() for the T of the given kernel dtype. */
#define PG_DISPATCH_DTYPE(dtype, launcher, ...)                                        \
    switch (dtype) {                                                                   \
    case PG_F32: return launcher<float>(__VA_ARGS__);                                  \
    case PG_F64: return launcher<double>(__VA_ARGS__);                                 \
    case PG_I32: return launcher<int32_t>(__VA_ARGS__);                                \
    case PG_I64: return launcher<int64_t>(__VA_ARGS__);                                \
    default: return PG_ERR_INVALID_VALUE;                                              \
    }

#define PG_DISPATCH_FLOAT(dtype, launcher, ...)                                        \
    switch (dtype) {                                                                   \
    case PG_F32: return launcher<float>(__VA_ARGS__);                                  \
    case PG_F64: return launcher<double>(__VA_ARGS__);                                 \
    default: return PG_ERR_INVALID_VALUE;                                              \
    }

#define PG_DISPATCH_ITEMSIZE(itemsize, launcher, ...)                                  \
    switch (itemsize) {                                                                \
    case 1: return launcher<item_of<1>::type>(__VA_ARGS__);                            \
    case 2: return launcher<item_of<2>::type>(__VA_ARGS__);                            \
    case 4: return launcher<item_of<4>::type>(__VA_ARGS__);                            \
    case 8: return launcher<item_of<8>::type>(__VA_ARGS__);                            \
    case 16: return launcher<item_of<16>::type>(__VA_ARGS__);                          \
    default: return PG_ERR_INVALID_VALUE;                                              \
    }

/* ---- strided copy and fill ---------------------------------------------- */

struct strided_geometry {
    int nd;
    int64_t shape[PG_MAXDIMS];
    int64_t src_strides[PG_MAXDIMS];
    int64_t dst_strides[PG_MAXDIMS];
};

template <class T>
__global__ void
copy_strided_kernel(const char *src, char *dst, int64_t n, strided_geometry g)
{
    for (int64_t i = thread_rank(); i < n; i += thread_count()) {
        int64_t rest = i, src_off = 0, dst_off = 0;
        for (int d = g.nd - 1; d >= 0; d--) {
            int64_t idx = rest % g.shape[d];
            rest /= g.shape[d];
            src_off += idx * g.src_strides[d];
            dst_off += idx * g.dst_strides[d];
        }
        *(T *)(dst + dst_off) = *(const T *)(src + src_off);
    }
}

template <class T>
pg_err
launch_copy_strided(const void *src, void *dst, int64_t n, const strided_geometry &g,
                    pg_stream stream)
{
    dim3 grid, block;
    flat_config(n, &grid, &block);
    PG_LAUNCH(false, copy_strided_kernel<T>, grid, block, stream, (const char *)src,
              (char *)dst, n, g);
}

pg_err
pg_launch_copy_strided(int itemsize, int nd, const int64_t *shape, const void *src,
                       const int64_t *src_strides, void *dst,
                       const int64_t *dst_strides, pg_stream stream)
{
    strided_geometry g;
    int64_t n = 1;
    if (nd < 0 || nd > PG_MAXDIMS) {
        return PG_ERR_INVALID_VALUE;
    }
    g.nd = nd;
    for (int d = 0; d < nd; d++) {
        g.shape[d] = shape[d];
        g.src_strides[d] = src_strides[d];
        g.dst_strides[d] = dst_strides[d];
        n *= shape[d];
    }
    if (n == 0) {
        return PG_SUCCESS;
    }
    PG_DISPATCH_ITEMSIZE(itemsize, launch_copy_strided, src, dst, n, g, stream);
}

template <class T>
__global__ void
fill_kernel(T *dst, int64_t n, T value)
{
    for (int64_t i = thread_rank(); i < n; i += thread_count()) {
        dst[i] = value;
    }
}

template <class T>
pg_err
launch_fill(void *dst, int64_t n, const void *value, pg_stream stream)
{
    dim3 grid, block;
    flat_config(n, &grid, &block);
    PG_LAUNCH(false, fill_kernel<T>, grid, block, stream, (T *)dst, n,
              *(const T *)value);
}

pg_err
pg_launch_fill(int itemsize, void *dst, int64_t n, const void *value, pg_stream stream)
{
    if (n == 0) {
        return PG_SUCCESS;
    }
    PG_DISPATCH_ITEMSIZE(itemsize, launch_fill, dst, n, value, stream);
}

/* ---- vector add, add one -------------------------------------------------- */

template <class T>
__global__ void
add_kernel(const T *a, const T *b, T *out, int64_t n)
{
    for (int64_t i = thread_rank(); i < n; i += thread_count()) {
        out[i] = a[i] + b[i];
    }
}

template <class T>
pg_err
launch_add(const void *a, const void *b, void *out, int64_t n, pg_dim3 grid,
           pg_dim3 block, pg_stream stream)
{
    PG_LAUNCH(false, add_kernel<T>, to_dim3(grid), to_dim3(block), stream, (const T *)a,
              (const T *)b, (T *)out, n);
}

pg_err
pg_launch_add(int dtype, const void *a, const void *b, void *out, int64_t n,
              pg_dim3 grid, pg_dim3 block, pg_stream stream)
{
    PG_DISPATCH_DTYPE(dtype, launch_add, a, b, out, n, grid, block, stream);
}

template <class T>
__global__ void
add_scalar_kernel(const T *a, T s, T *out, int64_t n)
{
    for (int64_t i = thread_rank(); i < n; i += thread_count()) {
        out[i] = a[i] + s;
    }
}

template <class T>
pg_err
launch_add_scalar(const void *a, const void *s, void *out, int64_t n, pg_dim3 grid,
                  pg_dim3 block, pg_stream stream)
{
    PG_LAUNCH(false, add_scalar_kernel<T>, to_dim3(grid), to_dim3(block), stream,
              (const T *)a, *(const T *)s, (T *)out, n);
}

pg_err
pg_launch_add_scalar(int dtype, const void *a, const void *s, void *out, int64_t n,
                     pg_dim3 grid, pg_dim3 block, pg_stream stream)
{
    PG_DISPATCH_DTYPE(dtype, launch_add_scalar, a, s, out, n, grid, block, stream);
}

template <class T>
__global__ void
add_one_kernel(T *a, int64_t n)
{
    for (int64_t i = thread_rank(); i < n; i += thread_count()) {
        a[i] += (T)1;
    }
}

template <class T>
pg_err
launch_add_one(void *a, int64_t n, pg_dim3 grid, pg_dim3 block, pg_stream stream)
{
    PG_LAUNCH(false, add_one_kernel<T>, to_dim3(grid), to_dim3(block), stream, (T *)a,
              n);
}

pg_err
pg_launch_add_one(int dtype, void *a, int64_t n, pg_dim3 grid, pg_dim3 block,
                  pg_stream stream)
{
    PG_DISPATCH_DTYPE(dtype, launch_add_one, a, n, grid, block, stream);
}

/* ---- matrix multiply: C (m x n) = A (m x k) @ B (k x n), row-major -------- */

/* One thread per output element; rows on y (and z), columns on x. */
template <class T>
__global__ void
matmul_naive_kernel(const T *a, const T *b, T *c, int64_t m, int64_t n, int64_t k)
{
    for (int64_t row = row_rank(); row < m; row += row_count()) {
        for (int64_t col = col_rank(); col < n; col += col_count()) {
            T acc = 0;
            for (int64_t i = 0; i < k; i++) {
                acc += a[row * k + i] * b[i * n + col];
            }
            c[row * n + col] = acc;
        }
    }
}

template <class T>
pg_err
launch_matmul_naive(const void *a, const void *b, void *c, int64_t m, int64_t n,
                    int64_t k, pg_dim3 grid, pg_dim3 block, pg_stream stream)
{
    PG_LAUNCH(false, matmul_naive_kernel<T>, to_dim3(grid), to_dim3(block), stream,
              (const T *)a, (const T *)b, (T *)c, m, n, k);
}

pg_err
pg_launch_matmul_naive(int dtype, const void *a, const void *b, void *c, int64_t m,
                       int64_t n, int64_t k, pg_dim3 grid, pg_dim3 block,
                       pg_stream stream)
{
    PG_DISPATCH_FLOAT(dtype, launch_matmul_naive, a, b, c, m, n, k, grid, block,
                      stream);
}

/* Shared-memory tiles of TILE x TILE; the block must be (TILE, TILE, 1). Each
 * block walks output tiles with a grid stride; the loop bounds are the same
 * for every thread of a block, so every thread meets every barrier. */
template <class T, int TILE>
__global__ void
matmul_shared_kernel(const T *a, const T *b, T *c, int64_t m, int64_t n, int64_t k)
{
    __shared__ T as[TILE][TILE];
    __shared__ T bs[TILE][TILE];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int64_t tiles_m = (m + TILE - 1) / TILE, tiles_n = (n + TILE - 1) / TILE;
    for (int64_t tr = (int64_t)blockIdx.z * gridDim.y + blockIdx.y; tr < tiles_m;
         tr += (int64_t)gridDim.y * gridDim.z) {
        for (int64_t tc = blockIdx.x; tc < tiles_n; tc += gridDim.x) {
            const int64_t row = tr * TILE + ty, col = tc * TILE + tx;
            T acc = 0;
            for (int64_t t0 = 0; t0 < k; t0 += TILE) {
                as[ty][tx] = (row < m && t0 + tx < k) ? a[row * k + t0 + tx] : (T)0;
                bs[ty][tx] = (t0 + ty < k && col < n) ? b[(t0 + ty) * n + col] : (T)0;
                __syncthreads();
                for (int i = 0; i < TILE; i++) {
                    acc += as[ty][i] * bs[i][tx];
                }
                __syncthreads();
            }
            if (row < m && col < n) {
                c[row * n + col] = acc;
            }
        }
    }
}

template <class T>
pg_err
launch_matmul_shared(const void *a, const void *b, void *c, int64_t m, int64_t n,
                     int64_t k, pg_dim3 grid, pg_dim3 block, pg_stream stream)
{
    if (block.x == 16 && block.y == 16 && block.z == 1) {
        PG_LAUNCH(true, (matmul_shared_kernel<T, 16>), to_dim3(grid), to_dim3(block),
                  stream, (const T *)a, (const T *)b, (T *)c, m, n, k);
    }
    if (block.x == 32 && block.y == 32 && block.z == 1) {
        PG_LAUNCH(true, (matmul_shared_kernel<T, 32>), to_dim3(grid), to_dim3(block),
                  stream, (const T *)a, (const T *)b, (T *)c, m, n, k);
    }
    return PG_ERR_INVALID_CONFIGURATION;
}

pg_err
pg_launch_matmul_shared(int dtype, const void *a, const void *b, void *c, int64_t m,
                        int64_t n, int64_t k, pg_dim3 grid, pg_dim3 block,
                        pg_stream stream)
{
    PG_DISPATCH_FLOAT(dtype, launch_matmul_shared, a, b, c, m, n, k, grid, block,
                      stream);
}

} /* namespace */

extern "C" const pg_kernel_table PG_KERNEL_TABLE = {
    pg_launch_copy_strided,  pg_launch_fill,    pg_launch_add,
    pg_launch_add_scalar,    pg_launch_add_one, pg_launch_matmul_naive,
    pg_launch_matmul_shared,
};
