/* pygpu's prebuilt kernels and their launchers.
 *
 * This file is compiled twice: by nvcc for the GPU (table pg_cuda_kernels),
 * and by the host C++ compiler with sim_exec.h (and its CUDA dialect,
 * pygpu/include/pygpu/sim_dialect.h) for the simulator (table
 * pg_sim_kernels). It never includes Python.h or NumPy. Each entry <name> of
 * kernels.def has a launcher pg_launch_<name> here, of the type the entry
 * names; it launches and returns the launch error. The C side has checked
 * every argument before it gets here.
 *
 * Every kernel covers its whole problem for any launch configuration: work is
 * spread with grid-stride loops over the threads there are, and threadIdx.x
 * walks the contiguous axis. Index arithmetic is 64-bit. */
#include <stdint.h>
#include <string.h>

#include "runtime.h"

#ifdef __CUDACC__
#include <cuda_runtime.h>
#define PG_KERNEL_TABLE pg_cuda_kernels
/* The parameter types of kernel, for launch_with's arguments (a context
 * where they are not deduced: they convert to the kernel's types). */
template <class T> struct param_of {
    typedef T type;
};

/* A launch goes through the driver's cuLaunchKernel (reached through the
 * runtime's entry point: no link to libcuda), with the kernel's function on
 * the current device, which cudaGetFuncBySymbol gives once per device: the
 * runtime's cudaLaunchKernel looks the function up again at every launch. On
 * an H100 host, in interleaved rounds against raw C's <<<>>> in the same
 * process: k(d) 1.03x to 1.04x, against 1.08x through cudaLaunchKernel. Its
 * result is the launch's error (CUresult and cudaError_t agree on the codes
 * of the failures a checked launch meets: a fault, a capture, no memory);
 * where the driver cannot take it (see below), the runtime launches
 * instead, and a failure is taken off the runtime's "last error", so that it
 * is not reported again later. The function is cached per device, so it
 * belongs to the device's primary context, pygpu's; with another context
 * current (one made through the driver by another library), the driver is
 * trusted to refuse it (not verified on a GPU). */
typedef int (*cu_launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, void *, void **, void **);

static cu_launch_t
resolve_cu_launch(void)
{
    enum cudaDriverEntryPointQueryResult status;
    void *f = NULL;
    if (cudaGetDriverEntryPointByVersion("cuLaunchKernel", &f, 12000, cudaEnableDefault,
                                         &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    return (cu_launch_t)f;
}

/* The driver's results on which the runtime launches instead: an invalid
 * value (the runtime names a bad configuration precisely), no context on this
 * thread yet, and a function whose context is gone (the cached one is
 * dropped). */
enum {
    CU_INVALID_VALUE = 1,
    CU_NO_CONTEXT = 201,
    CU_INVALID_HANDLE = 400,
    CU_CONTEXT_DESTROYED = 709
};

/* Each kernel's function, per device (a kernel, not a signature: kernels of
 * one signature share launch_with's instantiation). */
template <auto Kernel> struct functions_of {
    static void *per_device[PG_MAX_DEVICES];
};
template <auto Kernel> void *functions_of<Kernel>::per_device[PG_MAX_DEVICES] = {};

template <class... P>
static pg_err
launch_with(void **functions, void (*kernel)(P...), dim3 grid, dim3 block,
            cudaStream_t stream, typename param_of<P>::type... params)
{
    static const cu_launch_t launch = resolve_cu_launch();
    void *args[] = {(void *)&params..., nullptr};
    int device = -1;
    cudaError_t err;
    if (launch != nullptr && cudaGetDevice(&device) == cudaSuccess && device >= 0 &&
        device < PG_MAX_DEVICES) {
        void *f = __atomic_load_n(&functions[device], __ATOMIC_ACQUIRE);
        cudaFunction_t cf;
        if (f == nullptr) {
            if (cudaGetFuncBySymbol(&cf, (const void *)kernel) == cudaSuccess) {
                f = (void *)cf;
                __atomic_store_n(&functions[device], f, __ATOMIC_RELEASE);
            }
            else {
                (void)cudaGetLastError();
            }
        }
        if (f != nullptr) {
            int r = launch(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, 0,
                           (void *)stream, args, nullptr);
            if (r != CU_INVALID_VALUE && r != CU_NO_CONTEXT && r != CU_INVALID_HANDLE &&
                r != CU_CONTEXT_DESTROYED) {
                return (pg_err)r;
            }
            if (r == CU_INVALID_HANDLE || r == CU_CONTEXT_DESTROYED) {
                __atomic_store_n(&functions[device], nullptr, __ATOMIC_RELEASE);
            }
        }
    }
    err = cudaLaunchKernel((const void *)kernel, grid, block, args, 0, stream);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
    }
    return (pg_err)err;
}
#define PG_LAUNCH(barriers, kernel, grid, block, stream, ...)                          \
    return launch_with(functions_of<kernel>::per_device, kernel, (grid), (block),      \
                       (cudaStream_t)(stream), __VA_ARGS__)
#else
#include "sim_exec.h"
#define PG_KERNEL_TABLE pg_sim_kernels
/* the simulator refuses a kernel given memory its device may not touch; on a
 * stream under capture (a CUDA graph's), the launch is recorded, its
 * arguments copied, and runs at each launch of the graph */
#define PG_LAUNCH(barriers, kernel, grid, block, stream, ...)                          \
    do {                                                                               \
        pg_err access_ = pg_sim::check_access(__VA_ARGS__);                            \
        if (access_ != PG_SUCCESS) {                                                   \
            return access_;                                                            \
        }                                                                              \
        if (pg_sim_graph *capture_ = pg_sim_capture_of(stream)) {                      \
            return pg_sim::record(                                                     \
                capture_, (grid), (block), (barriers),                                 \
                [](const auto &...args_) { kernel(args_...); }, __VA_ARGS__);          \
        }                                                                              \
        return pg_sim::launch((grid), (block), (barriers),                             \
                              [&] { kernel(__VA_ARGS__); });                           \
    } while (0)
#endif

/* pg::half, pg::complex and pg::conv: the device header of the generated
 * kernels (pygpu/include/pygpu), on the include path of both builds */
#include "pygpu/ufunc.h"

namespace {

/* ---- thread geometry ---------------------------------------------------- */

/* This block's rank in the grid, and the grid's block count, x fastest. */
__device__ __forceinline__ int64_t
block_rank()
{
    return ((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
}

__device__ __forceinline__ int64_t
block_count()
{
    return (int64_t)gridDim.x * gridDim.y * gridDim.z;
}

/* This thread's rank in its block, and the threads of a block, x fastest. */
__device__ __forceinline__ int64_t
rank_in_block()
{
    return ((int64_t)threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ int64_t
block_threads()
{
    return (int64_t)blockDim.x * blockDim.y * blockDim.z;
}

/* This thread's rank among all threads of the launch, x fastest. */
__device__ __forceinline__ int64_t
thread_rank()
{
    return block_rank() * block_threads() + rank_in_block();
}

__device__ __forceinline__ int64_t
thread_count()
{
    return block_count() * block_threads();
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

/* add and add_one: 16-byte loads and stores where every pointer is 16-byte
 * aligned (the usual case: allocations are 512-byte aligned), each thread
 * with four of them in flight before it stores, which the memory's bandwidth
 * needs; then the tail element by element. A grid-stride loop covers any
 * launch. The launchers give each thread at least PG_FLAT_ELEMS_PER_THREAD
 * elements: launch.c launches no more of a user's grid than that leaves work
 * for (a block of a thread an element has too few bytes in flight, and the
 * GPU starts blocks only so fast: 2^21 empty blocks of 128 threads take
 * 1.27 ms on an H200, more than the copy of 2^28 float32 additions takes).
 * Measured there (2^28 float32, fraction of the device copy's bandwidth): a
 * thread an element 0.69x for add at blocks of 256 and 0.57x at 1024; 16 a
 * thread 1.02x at blocks of 128, 256 and 1024. */
template <class T> struct alignas(16) pack {
    T v[16 / sizeof(T)];
};

__device__ __forceinline__ bool
aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

/* *p = v, marked as streaming (evict first: the result is not read again
 * here). On an H200, add at 8 float32 a thread ran 4372 GB/s this way and
 * 4315 GB/s with plain stores; at 16 a thread, as launched, 4315 and 4313 in
 * a program of its own, and kernels.add[launch_config] 4336 GB/s in
 * `python -m benchmarks` (4304 to 4320 with plain stores in earlier runs). */
template <class T>
__device__ __forceinline__ void
store_streaming(pack<T> *p, const pack<T> &v)
{
#ifdef __CUDACC__
    int4 w;
    memcpy(&w, &v, sizeof(w));
    __stcs((int4 *)p, w);
#else
    *p = v;
#endif
}

/* out = a + b, or out = a + s when b is NULL. Each thread keeps U loads of
 * 16 bytes in flight before it stores. */
template <class T>
__global__ void
add_kernel(const T *a, const T *b, T s, T *out, int64_t n)
{
    constexpr int V = 16 / sizeof(T), U = 4;
    const int64_t rank = thread_rank(), count = thread_count();
    int64_t done = 0;
    if (aligned16(a) && (b == nullptr || aligned16(b)) && aligned16(out)) {
        const pack<T> *pa = (const pack<T> *)a, *pb = (const pack<T> *)b;
        pack<T> *po = (pack<T> *)out;
        const int64_t nv = n / V;
        int64_t i = rank;
        for (; i + (U - 1) * count < nv; i += U * count) {
            pack<T> x[U], y[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                x[u] = pa[i + u * count];
                if (pb != nullptr) {
                    y[u] = pb[i + u * count];
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
#pragma unroll
                for (int j = 0; j < V; j++) {
                    x[u].v[j] += pb != nullptr ? y[u].v[j] : s;
                }
                store_streaming(po + i + u * count, x[u]);
            }
        }
        for (; i < nv; i += count) {
            pack<T> x = pa[i];
#pragma unroll
            for (int j = 0; j < V; j++) {
                x.v[j] += pb != nullptr ? pb[i].v[j] : s;
            }
            store_streaming(po + i, x);
        }
        done = nv * V;
    }
    /* the rest (all of it where a pointer is not 16-byte aligned, as d[1:]
     * is): element by element, four of a thread's in flight at once */
    int64_t i = done + rank;
    for (; i + 3 * count < n; i += 4 * count) {
        T x[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            x[u] = a[i + u * count] + (b != nullptr ? b[i + u * count] : s);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            out[i + u * count] = x[u];
        }
    }
    for (; i < n; i += count) {
        out[i] = a[i] + (b != nullptr ? b[i] : s);
    }
}

template <class T>
pg_err
launch_add_kernel(const T *a, const T *b, T s, T *out, int64_t n, pg_dim3 grid,
                  pg_dim3 block, pg_stream stream)
{
    PG_LAUNCH(false, add_kernel<T>, to_dim3(grid), to_dim3(block), stream, a, b, s, out,
              n);
}

template <class T>
pg_err
launch_add(const void *a, const void *b, const void *s, void *out, int64_t n,
           pg_dim3 grid, pg_dim3 block, pg_stream stream)
{
    return launch_add_kernel<T>((const T *)a, (const T *)b,
                                b != nullptr ? (T)0 : *(const T *)s, (T *)out, n, grid,
                                block, stream);
}

pg_err
pg_launch_add(int dtype, const void *a, const void *b, const void *scalar, void *out,
              int64_t n, pg_dim3 grid, pg_dim3 block, pg_stream stream)
{
    PG_DISPATCH_DTYPE(dtype, launch_add, a, b, scalar, out, n, grid, block, stream);
}

template <class T>
pg_err
launch_add_one(void *a, int64_t n, pg_dim3 grid, pg_dim3 block, pg_stream stream)
{
    /* A += 1 is A = A + 1: the same kernels, in place */
    return launch_add_kernel<T>((const T *)a, (const T *)nullptr, (T)1, (T *)a, n, grid,
                                block, stream);
}

pg_err
pg_launch_add_one(int dtype, void *a, int64_t n, pg_dim3 grid, pg_dim3 block,
                  pg_stream stream)
{
    PG_DISPATCH_DTYPE(dtype, launch_add_one, a, n, grid, block, stream);
}

/* ---- elementwise: every dtype, broadcasting, NumPy's arithmetic ---------- */

/* float16 as NumPy computes it: converted to float, operated on, rounded
 * back to nearest-even; complex numbers; the conversions between element
 * types, as NumPy casts. They are the generated kernels' (pygpu/ufunc.h:
 * written out, not CUDA's __half), so that the prebuilt and the generated
 * kernels, on the GPU and on the simulator, give the same bits. */
typedef pg::half f16;
template <class R> using cplx = pg::complex<R>;
using pg::conv;
using pg::double_to_half;
using pg::half_to_float;

/* Element types by PG_T_* code, in the order of the enum, as the op table
 * names them (pygpu/_ops/table.py's DEVICE_TYPES: long long, not int64_t,
 * which is long on Linux): the types pg_binary<T> is specialized for. */
#define PG_ELEMENT_TYPES(X)                                                            \
    X(PG_T_BOOL, bool)                                                                 \
    X(PG_T_I8, signed char)                                                            \
    X(PG_T_I16, short)                                                                 \
    X(PG_T_I32, int)                                                                   \
    X(PG_T_I64, long long)                                                             \
    X(PG_T_U8, unsigned char)                                                          \
    X(PG_T_U16, unsigned short)                                                        \
    X(PG_T_U32, unsigned int)                                                          \
    X(PG_T_U64, unsigned long long)                                                    \
    X(PG_T_F16, pg::half)                                                              \
    X(PG_T_F32, float)                                                                 \
    X(PG_T_F64, double)                                                                \
    X(PG_T_C64, pg::complex<float>)                                                    \
    X(PG_T_C128, pg::complex<double>)

template <class T>
__device__ __forceinline__ T
load_as(const char *p, int type)
{
    switch (type) {
#define PG_LOAD_CASE(code, S)                                                          \
    case code: return conv<T>::from(*(const S *)p);
        PG_ELEMENT_TYPES(PG_LOAD_CASE)
#undef PG_LOAD_CASE
    default: return T();
    }
}

template <class T>
__device__ __forceinline__ void
store_as(char *p, int type, T v)
{
    switch (type) {
#define PG_STORE_CASE(code, S)                                                         \
    case code: *(S *)p = conv<S>::from(v); return;
        PG_ELEMENT_TYPES(PG_STORE_CASE)
#undef PG_STORE_CASE
    default: return;
    }
}

/* The ops themselves are the op table's (pygpu/_ops/table.py): setup.py
 * renders them into binary_ops.h in the build tree (pygpu/_ops/prebuilt.py),
 * pg_binary<T> for each element type T above. */
#include "binary_ops.h"

/* where pg_binary<T>::apply puts a result: as the output's dtype */
struct store_to {
    char *p;
    int type;
    template <class V> __device__ __forceinline__ void operator()(V v) const
    {
        store_as<V>(p, type, v);
    }
};

struct binary_geometry {
    int nd;
    int64_t shape[PG_MAXDIMS];
    int64_t a[PG_MAXDIMS], b[PG_MAXDIMS], out[PG_MAXDIMS]; /* strides in bytes */
};

template <class T>
__global__ void
binary_kernel(int op, int64_t n, binary_geometry g, const char *a, int ta, T va,
              const char *b, int tb, T vb, char *out, int to)
{
    for (int64_t i = thread_rank(); i < n; i += thread_count()) {
        int64_t oa = 0, ob = 0, oo = 0;
        if (g.nd == 1) {
            oa = i * g.a[0];
            ob = i * g.b[0];
            oo = i * g.out[0];
        }
        else {
            int64_t rest = i;
            for (int d = g.nd - 1; d >= 0; d--) {
                int64_t idx = rest % g.shape[d];
                rest /= g.shape[d];
                oa += idx * g.a[d];
                ob += idx * g.b[d];
                oo += idx * g.out[d];
            }
        }
        T x = a != nullptr ? load_as<T>(a + oa, ta) : va;
        T y = b != nullptr ? load_as<T>(b + ob, tb) : vb;
        if (op == PG_OP_CAST) {
            store_as<T>(out + oo, to, x);
        }
        else {
            pg_binary<T>::apply(op, x, y, store_to{out + oo, to});
        }
    }
}

template <class T>
pg_err
launch_binary(int op, int64_t n, const binary_geometry &g, const pg_operand *a,
              const pg_operand *b, void *out, int out_type, pg_stream stream)
{
    dim3 grid, block;
    T va = T(), vb = T();
    memcpy(&va, a->value, sizeof(T));
    memcpy(&vb, b->value, sizeof(T));
    flat_config(n, &grid, &block);
    PG_LAUNCH(false, binary_kernel<T>, grid, block, stream, op, n, g,
              (const char *)a->data, a->type, va, (const char *)b->data, b->type, vb,
              (char *)out, out_type);
}

pg_err
pg_launch_binary(int op, int compute, int nd, const int64_t *shape, const pg_operand *a,
                 const pg_operand *b, void *out, int out_type,
                 const int64_t *out_strides, pg_stream stream)
{
    binary_geometry g;
    int64_t n = 1;
    if (nd < 1 || nd > PG_MAXDIMS || op < 0 || op >= PG_OP_COUNT) {
        return PG_ERR_INVALID_VALUE;
    }
    g.nd = nd;
    for (int d = 0; d < nd; d++) {
        g.shape[d] = shape[d];
        g.a[d] = a->strides[d];
        g.b[d] = b->strides[d];
        g.out[d] = out_strides[d];
        n *= shape[d];
    }
    if (n == 0) {
        return PG_SUCCESS;
    }
    switch (compute) {
#define PG_BINARY_CASE(code, T)                                                        \
    case code: return launch_binary<T>(op, n, g, a, b, out, out_type, stream);
        PG_ELEMENT_TYPES(PG_BINARY_CASE)
#undef PG_BINARY_CASE
    default: return PG_ERR_INVALID_VALUE;
    }
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

/* Any layout, any batch, every float and complex dtype: what @ runs where
 * there is no BLAS library (the simulator, a GPU without cuBLAS) and the
 * shape or dtype suits none of the kernels above. One thread per element of
 * C, consecutive threads on consecutive columns; strides are in elements
 * (rows, columns, batch). Each element is the sum over k in order, in the
 * accumulator type, as matmul_naive adds: for float32 and float64 the two
 * give the same bits. float16 is added in float32 and rounded once at the
 * end, as NumPy does. */
template <class T> struct matmul_acc {
    typedef T acc;
    __device__ static acc fma(acc s, T a, T b)
    {
        return s + a * b;
    }
    __device__ static T out(acc s)
    {
        return s;
    }
};
template <> struct matmul_acc<f16> {
    typedef float acc;
    __device__ static acc fma(acc s, f16 a, f16 b)
    {
        return s + half_to_float(a.bits) * half_to_float(b.bits);
    }
    __device__ static f16 out(acc s)
    {
        return f16{double_to_half((double)s)};
    }
};
template <class R> struct matmul_acc<cplx<R>> {
    typedef cplx<R> acc;
    __device__ static acc fma(acc s, cplx<R> a, cplx<R> b)
    {
        return acc{s.re + (a.re * b.re - a.im * b.im),
                   s.im + (a.re * b.im + a.im * b.re)};
    }
    __device__ static cplx<R> out(acc s)
    {
        return s;
    }
};

struct matmul_strides {
    int64_t a[3], b[3], c[3]; /* rows, columns, batch; in elements */
};

template <class T>
__global__ void
matmul_strided_kernel(const T *a, const T *b, T *c, int64_t m, int64_t n, int64_t k,
                      int64_t batch, matmul_strides s)
{
    typedef matmul_acc<T> M;
    const int64_t per = m * n, total = per * batch;
    for (int64_t i = thread_rank(); i < total; i += thread_count()) {
        const int64_t bi = i / per, rc = i - bi * per, row = rc / n, col = rc - row * n;
        const T *pa = a + bi * s.a[2] + row * s.a[0];
        const T *pb = b + bi * s.b[2] + col * s.b[1];
        typename M::acc sum = typename M::acc();
        for (int64_t p = 0; p < k; p++) {
            sum = M::fma(sum, pa[p * s.a[1]], pb[p * s.b[0]]);
        }
        c[bi * s.c[2] + row * s.c[0] + col * s.c[1]] = M::out(sum);
    }
}

template <class T>
pg_err
launch_matmul_strided(const void *a, const void *b, void *c, int64_t m, int64_t n,
                      int64_t k, int64_t batch, const matmul_strides &s,
                      pg_stream stream)
{
    dim3 grid, block;
    flat_config(m * n * batch, &grid, &block);
    PG_LAUNCH(false, matmul_strided_kernel<T>, grid, block, stream, (const T *)a,
              (const T *)b, (T *)c, m, n, k, batch, s);
}

pg_err
pg_launch_matmul_strided(int type, const void *a, const void *b, void *c, int64_t m,
                         int64_t n, int64_t k, int64_t batch, const int64_t *strides,
                         pg_stream stream)
{
    matmul_strides s;
    for (int i = 0; i < 3; i++) {
        s.a[i] = strides[i];
        s.b[i] = strides[3 + i];
        s.c[i] = strides[6 + i];
    }
    if (m * n * batch == 0) {
        return PG_SUCCESS;
    }
    switch (type) {
    case PG_T_F16:
        return launch_matmul_strided<f16>(a, b, c, m, n, k, batch, s, stream);
    case PG_T_F32:
        return launch_matmul_strided<float>(a, b, c, m, n, k, batch, s, stream);
    case PG_T_F64:
        return launch_matmul_strided<double>(a, b, c, m, n, k, batch, s, stream);
    case PG_T_C64:
        return launch_matmul_strided<cplx<float>>(a, b, c, m, n, k, batch, s, stream);
    case PG_T_C128:
        return launch_matmul_strided<cplx<double>>(a, b, c, m, n, k, batch, s, stream);
    default: return PG_ERR_INVALID_VALUE;
    }
}

/* Integer and bool products, as NumPy's matmul gives them: an integer sum
 * wraps (NumPy adds in the type itself; here in an unsigned accumulator of
 * 32 or 64 bits, whose low bits are the same, without C's undefined signed
 * overflow), and bool is the logical or of ands. Any layout and batch:
 * strides in elements, as matmul_strided's. A block of 16 x 16 threads
 * computes a 32 x 32 tile of C, each thread 2 x 2 elements (as
 * matmul_shared), with slices of A (32 x 16) and B (16 x 32) through shared
 * memory, converted to the accumulator on the way in. Blocks walk the tiles
 * (x: columns, y: rows) and the matrices of the batch (z) with grid strides;
 * the loop bounds are the block's, so every thread meets every barrier. */
namespace int_mm {
constexpr int TILE = 16, W = 2 * TILE;
constexpr int64_t MAX_GRID = 65535;
} // namespace int_mm

template <int N> struct int_acc_of {
    typedef uint32_t type;
};
template <> struct int_acc_of<8> {
    typedef uint64_t type;
};

/* S: the element type in memory; sum of products, modulo 2^bits */
template <class S> struct matmul_int_op {
    typedef S elem;
    typedef typename int_acc_of<sizeof(S)>::type acc;
    __device__ static acc load(S v)
    {
        return (acc)v;
    }
    __device__ static acc fma(acc s, acc a, acc b)
    {
        return s + a * b;
    }
    __device__ static S out(acc s)
    {
        return (S)s;
    }
};

/* bool (one byte): any of (a and b) */
struct matmul_bool_op {
    typedef uint8_t elem;
    typedef uint32_t acc;
    __device__ static acc load(uint8_t v)
    {
        return v != 0;
    }
    __device__ static acc fma(acc s, acc a, acc b)
    {
        return s | (a & b);
    }
    __device__ static uint8_t out(acc s)
    {
        return (uint8_t)(s != 0);
    }
};

template <class S, class Op>
__global__ void
matmul_int_kernel(const S *a, const S *b, S *c, int64_t m, int64_t n, int64_t k,
                  int64_t batch, matmul_strides s)
{
    using namespace int_mm;
    typedef typename Op::acc A;
    __shared__ A as[W][TILE];
    __shared__ A bs[TILE][W];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int64_t tiles_m = (m + W - 1) / W, tiles_n = (n + W - 1) / W;
    for (int64_t bi = blockIdx.z; bi < batch; bi += gridDim.z) {
        const S *pa = a + bi * s.a[2], *pb = b + bi * s.b[2];
        S *pc = c + bi * s.c[2];
        for (int64_t tr = blockIdx.y; tr < tiles_m; tr += gridDim.y) {
            for (int64_t tc = blockIdx.x; tc < tiles_n; tc += gridDim.x) {
                const int64_t r0 = tr * W + ty, r1 = r0 + TILE;
                const int64_t c0 = tc * W + tx, c1 = c0 + TILE;
                A acc00 = 0, acc01 = 0, acc10 = 0, acc11 = 0;
                for (int64_t t0 = 0; t0 < k; t0 += TILE) {
                    const int64_t ka = t0 + tx, kb = t0 + ty;
                    as[ty][tx] =
                        r0 < m && ka < k ? Op::load(pa[r0 * s.a[0] + ka * s.a[1]]) : 0;
                    as[ty + TILE][tx] =
                        r1 < m && ka < k ? Op::load(pa[r1 * s.a[0] + ka * s.a[1]]) : 0;
                    bs[ty][tx] =
                        kb < k && c0 < n ? Op::load(pb[kb * s.b[0] + c0 * s.b[1]]) : 0;
                    bs[ty][tx + TILE] =
                        kb < k && c1 < n ? Op::load(pb[kb * s.b[0] + c1 * s.b[1]]) : 0;
                    __syncthreads();
#pragma unroll 8
                    for (int i = 0; i < TILE; i++) {
                        const A a0 = as[ty][i], a1 = as[ty + TILE][i];
                        const A b0 = bs[i][tx], b1 = bs[i][tx + TILE];
                        acc00 = Op::fma(acc00, a0, b0);
                        acc01 = Op::fma(acc01, a0, b1);
                        acc10 = Op::fma(acc10, a1, b0);
                        acc11 = Op::fma(acc11, a1, b1);
                    }
                    __syncthreads();
                }
                if (r0 < m && c0 < n) {
                    pc[r0 * s.c[0] + c0 * s.c[1]] = Op::out(acc00);
                }
                if (r0 < m && c1 < n) {
                    pc[r0 * s.c[0] + c1 * s.c[1]] = Op::out(acc01);
                }
                if (r1 < m && c0 < n) {
                    pc[r1 * s.c[0] + c0 * s.c[1]] = Op::out(acc10);
                }
                if (r1 < m && c1 < n) {
                    pc[r1 * s.c[0] + c1 * s.c[1]] = Op::out(acc11);
                }
            }
        }
    }
}

template <class Op>
pg_err
launch_matmul_int(const void *a, const void *b, void *c, int64_t m, int64_t n,
                  int64_t k, int64_t batch, const matmul_strides &s, pg_stream stream)
{
    using namespace int_mm;
    const int64_t gx = (n + W - 1) / W, gy = (m + W - 1) / W;
    const dim3 grid((unsigned int)(gx < MAX_GRID ? gx : MAX_GRID),
                    (unsigned int)(gy < MAX_GRID ? gy : MAX_GRID),
                    (unsigned int)(batch < MAX_GRID ? batch : MAX_GRID));
    const dim3 block(TILE, TILE);
    typedef typename Op::elem S;
    PG_LAUNCH(true, (matmul_int_kernel<S, Op>), grid, block, stream, (const S *)a,
              (const S *)b, (S *)c, m, n, k, batch, s);
}

pg_err
pg_launch_matmul_int(int type, const void *a, const void *b, void *c, int64_t m,
                     int64_t n, int64_t k, int64_t batch, const int64_t *strides,
                     pg_stream stream)
{
    matmul_strides s;
    for (int i = 0; i < 3; i++) {
        s.a[i] = strides[i];
        s.b[i] = strides[3 + i];
        s.c[i] = strides[6 + i];
    }
    if (m * n * batch == 0) {
        return PG_SUCCESS;
    }
    pg_err (*launch)(const void *, const void *, void *, int64_t, int64_t, int64_t,
                     int64_t, const matmul_strides &, pg_stream);
    switch (type) {
    case PG_T_BOOL: launch = launch_matmul_int<matmul_bool_op>; break;
    case PG_T_I8: launch = launch_matmul_int<matmul_int_op<int8_t>>; break;
    case PG_T_I16: launch = launch_matmul_int<matmul_int_op<int16_t>>; break;
    case PG_T_I32: launch = launch_matmul_int<matmul_int_op<int32_t>>; break;
    case PG_T_I64: launch = launch_matmul_int<matmul_int_op<int64_t>>; break;
    case PG_T_U8: launch = launch_matmul_int<matmul_int_op<uint8_t>>; break;
    case PG_T_U16: launch = launch_matmul_int<matmul_int_op<uint16_t>>; break;
    case PG_T_U32: launch = launch_matmul_int<matmul_int_op<uint32_t>>; break;
    case PG_T_U64: launch = launch_matmul_int<matmul_int_op<uint64_t>>; break;
    default: return PG_ERR_INVALID_VALUE;
    }
    return launch(a, b, c, m, n, k, batch, s, stream);
}

/* Shared-memory tiles: a block of TILE x TILE threads computes a 2 TILE x
 * 2 TILE tile of C, each thread the 2 x 2 elements (ty, tx), (ty, tx + TILE),
 * (ty + TILE, tx), (ty + TILE, tx + TILE), so that each value read from shared
 * memory feeds two multiply-adds. Slices of A (2 TILE x TILE) and B (TILE x
 * 2 TILE) pass through shared memory. Blocks walk tiles with a grid stride;
 * the loop bounds are the same for every thread of a block, so every thread
 * meets every barrier. The block must be (TILE, TILE, 1). */
template <class T, int TILE>
__global__ void
matmul_shared_kernel(const T *a, const T *b, T *c, int64_t m, int64_t n, int64_t k)
{
    constexpr int W = 2 * TILE;
    __shared__ T as[W][TILE];
    __shared__ T bs[TILE][W];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int64_t tiles_m = (m + W - 1) / W, tiles_n = (n + W - 1) / W;
    for (int64_t tr = (int64_t)blockIdx.z * gridDim.y + blockIdx.y; tr < tiles_m;
         tr += (int64_t)gridDim.y * gridDim.z) {
        for (int64_t tc = blockIdx.x; tc < tiles_n; tc += gridDim.x) {
            const int64_t r0 = tr * W + ty, r1 = r0 + TILE;
            const int64_t c0 = tc * W + tx, c1 = c0 + TILE;
            T acc00 = 0, acc01 = 0, acc10 = 0, acc11 = 0;
            for (int64_t t0 = 0; t0 < k; t0 += TILE) {
                const int64_t ka = t0 + tx, kb = t0 + ty;
                as[ty][tx] = (r0 < m && ka < k) ? a[r0 * k + ka] : (T)0;
                as[ty + TILE][tx] = (r1 < m && ka < k) ? a[r1 * k + ka] : (T)0;
                bs[ty][tx] = (kb < k && c0 < n) ? b[kb * n + c0] : (T)0;
                bs[ty][tx + TILE] = (kb < k && c1 < n) ? b[kb * n + c1] : (T)0;
                __syncthreads();
#pragma unroll 8
                for (int i = 0; i < TILE; i++) {
                    const T a0 = as[ty][i], a1 = as[ty + TILE][i];
                    const T b0 = bs[i][tx], b1 = bs[i][tx + TILE];
                    acc00 += a0 * b0;
                    acc01 += a0 * b1;
                    acc10 += a1 * b0;
                    acc11 += a1 * b1;
                }
                __syncthreads();
            }
            if (r0 < m && c0 < n) {
                c[r0 * n + c0] = acc00;
            }
            if (r0 < m && c1 < n) {
                c[r0 * n + c1] = acc01;
            }
            if (r1 < m && c0 < n) {
                c[r1 * n + c0] = acc10;
            }
            if (r1 < m && c1 < n) {
                c[r1 * n + c1] = acc11;
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

/* Register-tiled: a block of 256 threads computes a 128 x 128 tile of C, each
 * thread an 8 x 8 piece of it (two 4 x 4 quarters, 64 rows and columns apart,
 * so that its shared-memory reads are 16 bytes wide and spread over the
 * banks). A and B move through shared memory 8 columns (rows) at a time, the
 * next slice loaded into registers while the current one is multiplied. A's
 * slice is stored transposed, padded against bank conflicts. Loads are
 * guarded, so any m, n, k works; the block must be 256 threads, the grid any. */
namespace tiled {
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, THREADS = 256;
constexpr int PAD = 4;
} // namespace tiled

template <class T, bool VEC>
__global__ void __launch_bounds__(256, sizeof(T) == 4 ? 2 : 1)
    matmul_tiled_kernel(const T *__restrict__ a, const T *__restrict__ b,
                        T *__restrict__ c, int64_t m, int64_t n, int64_t k)
{
    using namespace tiled;
    /* VEC: k and n are multiples of V and the pointers 16-byte aligned, so
     * slices move in 16-byte pieces that lie wholly inside or outside. */
    constexpr int V = VEC ? 16 / (int)sizeof(T) : 1;
    constexpr int NV = 4 / V; /* pieces per thread per slice of A (and of B) */
    alignas(16) __shared__ T as[2][BK][BM + PAD];
    alignas(16) __shared__ T bs[2][BK][BN];
    const int tid = (int)threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int64_t tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
    for (int64_t tr = (int64_t)blockIdx.z * gridDim.y + blockIdx.y; tr < tiles_m;
         tr += (int64_t)gridDim.y * gridDim.z) {
        for (int64_t tc = blockIdx.x; tc < tiles_n; tc += gridDim.x) {
            const int64_t m0 = tr * BM, n0 = tc * BN;
            T acc[TM][TN];
#pragma unroll
            for (int i = 0; i < TM; i++) {
#pragma unroll
                for (int j = 0; j < TN; j++) {
                    acc[i][j] = 0;
                }
            }
            T ra[NV][V], rb[NV][V];
            /* piece e = tid + 256 r of a slice: A's row e / (BK / V), column
             * V (e % (BK / V)); B's row e / (BN / V), column V (e % (BN / V)) */
            auto load = [&](int64_t k0) {
#pragma unroll
                for (int r = 0; r < NV; r++) {
                    const int e = tid + THREADS * r;
                    const int64_t ar = m0 + e / (BK / V), ac = k0 + V * (e % (BK / V));
                    const int64_t br = k0 + e / (BN / V), bc = n0 + V * (e % (BN / V));
                    if (VEC) {
                        pack<T> pa = {}, pb = {};
                        if (ar < m && ac < k) {
                            pa = *(const pack<T> *)(a + ar * k + ac);
                        }
                        if (br < k && bc < n) {
                            pb = *(const pack<T> *)(b + br * n + bc);
                        }
#pragma unroll
                        for (int j = 0; j < V; j++) {
                            ra[r][j] = pa.v[j];
                            rb[r][j] = pb.v[j];
                        }
                    }
                    else {
                        ra[r][0] = (ar < m && ac < k) ? a[ar * k + ac] : (T)0;
                        rb[r][0] = (br < k && bc < n) ? b[br * n + bc] : (T)0;
                    }
                }
            };
            auto store = [&](int buf) {
#pragma unroll
                for (int r = 0; r < NV; r++) {
                    const int e = tid + THREADS * r;
                    const int arow = e / (BK / V), acol = V * (e % (BK / V));
                    const int brow = e / (BN / V), bcol = V * (e % (BN / V));
#pragma unroll
                    for (int j = 0; j < V; j++) {
                        as[buf][acol + j][arow] = ra[r][j];
                        bs[buf][brow][bcol + j] = rb[r][j];
                    }
                }
            };
            load(0);
            store(0);
            __syncthreads();
            int buf = 0;
            for (int64_t k0 = 0; k0 < k; k0 += BK) {
                const bool more = k0 + BK < k;
                if (more) {
                    load(k0 + BK);
                }
#pragma unroll
                for (int kk = 0; kk < BK; kk++) {
                    T fa[TM], fb[TN];
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        fa[i] = as[buf][kk][ty * 4 + i];
                        fa[4 + i] = as[buf][kk][64 + ty * 4 + i];
                        fb[i] = bs[buf][kk][tx * 4 + i];
                        fb[4 + i] = bs[buf][kk][64 + tx * 4 + i];
                    }
#pragma unroll
                    for (int i = 0; i < TM; i++) {
#pragma unroll
                        for (int j = 0; j < TN; j++) {
                            acc[i][j] += fa[i] * fb[j];
                        }
                    }
                }
                if (more) {
                    store(buf ^ 1);
                }
                __syncthreads();
                buf ^= 1;
            }
#pragma unroll
            for (int i = 0; i < TM; i++) {
                const int64_t row = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
                if (row >= m) {
                    continue;
                }
#pragma unroll
                for (int h = 0; h < 2; h++) { /* the two 4-wide halves of the row */
                    const int64_t col = n0 + h * 64 + tx * 4;
                    if (VEC) {
#pragma unroll
                        for (int q = 0; q < 4; q += V) {
                            if (col + q < n) {
                                pack<T> out;
#pragma unroll
                                for (int j = 0; j < V; j++) {
                                    out.v[j] = acc[i][h * 4 + q + j];
                                }
                                *(pack<T> *)(c + row * n + col + q) = out;
                            }
                        }
                    }
                    else {
#pragma unroll
                        for (int j = 0; j < 4; j++) {
                            if (col + j < n) {
                                c[row * n + col + j] = acc[i][h * 4 + j];
                            }
                        }
                    }
                }
            }
        }
    }
}

template <class T>
pg_err
launch_matmul_tiled(const void *a, const void *b, void *c, int64_t m, int64_t n,
                    int64_t k, pg_dim3 grid, pg_dim3 block, pg_stream stream)
{
    constexpr int V = 16 / (int)sizeof(T);
    if (block.x != tiled::THREADS || block.y != 1 || block.z != 1) {
        return PG_ERR_INVALID_CONFIGURATION;
    }
    const bool vec = k % V == 0 && n % V == 0 && ((uintptr_t)a & 15) == 0 &&
                     ((uintptr_t)b & 15) == 0 && ((uintptr_t)c & 15) == 0;
    if (vec) {
        PG_LAUNCH(true, (matmul_tiled_kernel<T, true>), to_dim3(grid), to_dim3(block),
                  stream, (const T *)a, (const T *)b, (T *)c, m, n, k);
    }
    PG_LAUNCH(true, (matmul_tiled_kernel<T, false>), to_dim3(grid), to_dim3(block),
              stream, (const T *)a, (const T *)b, (T *)c, m, n, k);
}

pg_err
pg_launch_matmul_tiled(int dtype, const void *a, const void *b, void *c, int64_t m,
                       int64_t n, int64_t k, pg_dim3 grid, pg_dim3 block,
                       pg_stream stream)
{
    PG_DISPATCH_FLOAT(dtype, launch_matmul_tiled, a, b, c, m, n, k, grid, block,
                      stream);
}

} /* namespace */

/* Field <name> of the table is pg_launch_<name>, for every entry of the one
 * list: the order of kernels.def is the order of the fields, so it cannot
 * pair a field with another kernel's launcher. */
extern "C" const pg_kernel_table PG_KERNEL_TABLE = {
#define PG_LAUNCHER(name, type) pg_launch_##name,
#define PG_KERNEL(name, type, nargs, signature, doc) pg_launch_##name,
#include "kernels.def"
};

#ifndef __CUDACC__
/* The block runner, for kernels that the host C++ compiler compiled at run
 * time (rt_sim.c loads them; pygpu/sim_prelude.h is their side). */
static pg_err
hosted_run(const pg_sim_launch *l)
{
    return pg_sim::run(l->grid, l->block, true, l->body, l->arg, l->index, l->kernel,
                       l->cooperative ? l->shared_state : nullptr);
}

extern "C" const pg_sim_host pg_sim_hosted = {
    PG_SIM_ABI,         hosted_run,          pg_sim::barrier, pg_sim::warp,
    pg_sim::activemask, pg_sim::fail,        pg_sim::print,   pg_sim_find_range,
    pg_sim_arg_span,    pg_sim_check_access, &pg_sim::live,
};

/* The prebuilt kernels' dialect (sim_dialect.h: __syncthreads(), the
 * argument checks) reaches the runner through the same table as a module's:
 * set when pygpu._core is loaded, before any launch. */
[[maybe_unused]] static const pg_sim_host *const hosted_attached = pg_sim::host =
    &pg_sim_hosted;

void
pg_sim_set_schedule(int shuffle, uint64_t seed)
{
    pthread_mutex_lock(&pg_sim::launch_lock);
    pg_sim::shuffle = shuffle != 0;
    pg_sim::shuffle_seed = seed;
    pthread_mutex_unlock(&pg_sim::launch_lock);
}

void
pg_sim_get_schedule(int *shuffle, uint64_t *seed)
{
    pthread_mutex_lock(&pg_sim::launch_lock);
    *shuffle = pg_sim::shuffle;
    *seed = pg_sim::shuffle_seed;
    pthread_mutex_unlock(&pg_sim::launch_lock);
}
#endif
