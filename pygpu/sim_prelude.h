/* pygpu's simulator: the CUDA C dialect for the host C++ compiler. pygpu
 * (rawkernel.py) compiles a RawKernel's or RawModule's source as
 *
 *     #include "sim_prelude.h"
 *     #line 1 "<kernel source>"
 *     ...the source...
 *     one pg_sim::exporter per kernel (and per name expression)
 *
 * into a shared object, and the simulator loads it (rt_sim.c): it calls
 * pg_sim_module_attach with pygpu's block runner, then finds each kernel
 * with pg_sim_module_kernel(name). The exporter deduces the kernel's
 * parameters from its type (void (*)(A...)): their count and sizes, for the
 * same argument checks as on a GPU, and how to call it with the parameters
 * that a launch gets (as cuLaunchKernel takes them).
 *
 * Threads are fibers of pygpu's one block runner (csrc/simulator/sim_exec.h):
 * barriers and warp intrinsics call into it (pg_sim_host), and it sets this
 * module's index variables thread by thread. __shared__ is `static`: one copy,
 * reused block after block. rawkernel.py writes `extern __shared__ T name[];`
 * as a reference to the launch's dynamic shared memory (PG_SIM_DYNAMIC_SHARED).
 * The layouts of pg_sim_host and the structures it names are
 * csrc/runtime/runtime.h's; PG_SIM_ABI is their version.
 *
 * The checking mode (PG_SIM_CHECK, compiled by clang++ with
 * -fsanitize-coverage=trace-loads,trace-stores) gets a call for every load and
 * store of the kernel's code (not of this prelude's, which is excluded) and
 * checks each against what the kernel may touch: see "checking" below. */
#ifndef PYGPU_SIM_PRELUDE_H
#define PYGPU_SIM_PRELUDE_H

#if defined(__clang__) && defined(PG_SIM_CHECK)
/* nothing of the prelude is instrumented: only the kernel's own accesses
 * (and not inlined, where the kernel's instrumentation would reach it) */
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))),                 \
                             apply_to = function)
#pragma clang attribute push(__attribute__((noinline)), apply_to = function)
#endif

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <type_traits>
#include <utility>

#define PG_SIM_ABI 2
#define PYGPU_SIMULATOR 1
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 800
#endif

struct dim3 {
    unsigned int x, y, z;
    dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1)
        : x(x_), y(y_), z(z_)
    {
    }
};
typedef dim3 uint3;

/* csrc/runtime/runtime.h's layouts, spelled with this file's types */
extern "C" {
typedef struct {
    dim3 thread, block, block_dim, grid_dim;
} pg_sim_index;

typedef struct {
    unsigned int thread;
    uint32_t epoch;
    const uint16_t *warp_syncs;
    const char *stacks, *stacks_end;
} pg_sim_live;

typedef struct {
    dim3 grid, block;
    void (*body)(void *);
    void *arg;
    pg_sim_index *index;
    const char *kernel;
} pg_sim_launch;

enum {
    PG_WARP_SYNC,
    PG_WARP_SHFL,
    PG_WARP_SHFL_UP,
    PG_WARP_SHFL_DOWN,
    PG_WARP_SHFL_XOR,
    PG_WARP_BALLOT,
    PG_WARP_ANY,
    PG_WARP_ALL,
    PG_WARP_MATCH_ANY,
    PG_WARP_MATCH_ALL
};
enum { PG_BARRIER_PLAIN, PG_BARRIER_COUNT, PG_BARRIER_AND, PG_BARRIER_OR };
enum {
    PG_ERR_OK = 0,
    PG_ERR_NO_MEMORY = 2,
    PG_ERR_ILLEGAL_ADDRESS_ = 700,
    PG_ERR_ASSERT_ = 710,
    PG_ERR_LAUNCH_FAILURE_ = 719
};

typedef struct {
    int abi;
    int (*run)(const pg_sim_launch *launch);
    int (*barrier)(int op, int predicate);
    uint64_t (*warp)(int op, unsigned int mask, uint64_t value, int arg, int width);
    unsigned int (*activemask)(void);
    void (*fail)(int err, const char *message);
    void (*print)(const char *text, size_t size);
    int (*find_range)(const void *ptr, void **base, size_t *size);
    int (*arg_span)(int i, const void **lo, const void **hi);
    int (*check_access)(const void *ptr);
    const pg_sim_live *live;
} pg_sim_host;

typedef struct pg_sim_kernel {
    const char *name;
    int nparams;
    const size_t *sizes;
    int (*launch)(const struct pg_sim_kernel *k, dim3 grid, dim3 block,
                  unsigned int shared_bytes, void **params);
    void (*fn)(void);
    const char *params; /* the parameters' names, comma-separated (maybe "") */
} pg_sim_kernel;
}

namespace pg_sim {
inline const pg_sim_host *host;
inline pg_sim_index idx;        /* this module's threadIdx, blockIdx, ... */
inline void *dynamic_shared;    /* this launch's extern __shared__ memory */
inline const char *kernel_name; /* the kernel running now */
} /* namespace pg_sim */

/* ---- geometry and qualifiers ------------------------------------------------ */

#define threadIdx (pg_sim::idx.thread)
#define blockIdx (pg_sim::idx.block)
#define blockDim (pg_sim::idx.block_dim)
#define gridDim (pg_sim::idx.grid_dim)
#define warpSize 32
#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __align__(n) alignas(n)
#define __grid_constant__
#define __managed__
#define __shared__ static
#define __constant__ static
#define PG_SIM_DYNAMIC_SHARED(T, name)                                                 \
    static T *&name = reinterpret_cast<T *&>(pg_sim::dynamic_shared)

/* ---- vector types ----------------------------------------------------------- */

#define PG_SIM_VEC(T, N, A2, A4)                                                       \
    struct N##1                                                                        \
    {                                                                                  \
        T x;                                                                           \
    };                                                                                 \
    struct alignas(A2) N##2                                                            \
    {                                                                                  \
        T x, y;                                                                        \
    };                                                                                 \
    struct N##3                                                                        \
    {                                                                                  \
        T x, y, z;                                                                     \
    };                                                                                 \
    struct alignas(A4) N##4                                                            \
    {                                                                                  \
        T x, y, z, w;                                                                  \
    };                                                                                 \
    inline N##1 make_##N##1(T x)                                                       \
    {                                                                                  \
        return {x};                                                                    \
    }                                                                                  \
    inline N##2 make_##N##2(T x, T y)                                                  \
    {                                                                                  \
        return {x, y};                                                                 \
    }                                                                                  \
    inline N##3 make_##N##3(T x, T y, T z)                                             \
    {                                                                                  \
        return {x, y, z};                                                              \
    }                                                                                  \
    inline N##4 make_##N##4(T x, T y, T z, T w)                                        \
    {                                                                                  \
        return {x, y, z, w};                                                           \
    }
PG_SIM_VEC(signed char, char, 2, 4)
PG_SIM_VEC(unsigned char, uchar, 2, 4)
PG_SIM_VEC(short, short, 4, 8)
PG_SIM_VEC(unsigned short, ushort, 4, 8)
PG_SIM_VEC(int, int, 8, 16)
PG_SIM_VEC(long, long, 16, 16)
PG_SIM_VEC(unsigned long, ulong, 16, 16)
PG_SIM_VEC(long long, longlong, 16, 16)
PG_SIM_VEC(unsigned long long, ulonglong, 16, 16)
PG_SIM_VEC(float, float, 8, 16)
PG_SIM_VEC(double, double, 16, 16)
#undef PG_SIM_VEC
/* uint3 is dim3, as in CUDA's built-in threadIdx */
struct uint1 {
    unsigned int x;
};
struct alignas(8) uint2 {
    unsigned int x, y;
};
struct alignas(16) uint4 {
    unsigned int x, y, z, w;
};
inline uint1
make_uint1(unsigned int x)
{
    return {x};
}
inline uint2
make_uint2(unsigned int x, unsigned int y)
{
    return {x, y};
}
inline uint3
make_uint3(unsigned int x, unsigned int y, unsigned int z)
{
    return dim3(x, y, z);
}
inline uint4
make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w)
{
    return {x, y, z, w};
}

/* ---- min, max and the math of CUDA that the C library lacks ----------------- */

#define PG_SIM_MINMAX(T)                                                               \
    inline T min(T a, T b)                                                             \
    {                                                                                  \
        return b < a ? b : a;                                                          \
    }                                                                                  \
    inline T max(T a, T b)                                                             \
    {                                                                                  \
        return a < b ? b : a;                                                          \
    }
PG_SIM_MINMAX(int)
PG_SIM_MINMAX(unsigned int)
PG_SIM_MINMAX(long)
PG_SIM_MINMAX(unsigned long)
PG_SIM_MINMAX(long long)
PG_SIM_MINMAX(unsigned long long)
PG_SIM_MINMAX(float)
PG_SIM_MINMAX(double)
#undef PG_SIM_MINMAX
/* mixed types: CUDA's headers give the usual arithmetic conversions */
template <class A, class B,
          class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B> &&
                                   !std::is_same_v<A, B>>>
inline std::common_type_t<A, B>
min(A a, B b)
{
    return min((std::common_type_t<A, B>)a, (std::common_type_t<A, B>)b);
}
template <class A, class B,
          class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B> &&
                                   !std::is_same_v<A, B>>>
inline std::common_type_t<A, B>
max(A a, B b)
{
    return max((std::common_type_t<A, B>)a, (std::common_type_t<A, B>)b);
}
inline unsigned int
umin(unsigned int a, unsigned int b)
{
    return min(a, b);
}
inline unsigned int
umax(unsigned int a, unsigned int b)
{
    return max(a, b);
}

inline float
rsqrtf(float x)
{
    return 1.0f / sqrtf(x);
}
inline double
rsqrt(double x)
{
    return 1.0 / sqrt(x);
}
inline float
rcbrtf(float x)
{
    return 1.0f / cbrtf(x);
}
inline double
rcbrt(double x)
{
    return 1.0 / cbrt(x);
}
inline float
sinpif(float x)
{
    return sinf((float)M_PI * x);
}
inline float
cospif(float x)
{
    return cosf((float)M_PI * x);
}
inline double
sinpi(double x)
{
    return sin(M_PI * x);
}
inline double
cospi(double x)
{
    return cos(M_PI * x);
}
inline void
sincospif(float x, float *s, float *c)
{
    *s = sinpif(x);
    *c = cospif(x);
}
inline float
fdividef(float x, float y)
{
    return x / y;
}
inline float
saturatef(float x)
{
    return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}
inline float
normcdff(float x)
{
    return 0.5f * erfcf(-x * (float)M_SQRT1_2);
}
inline double
normcdf(double x)
{
    return 0.5 * erfc(-x * M_SQRT1_2);
}
/* the fast intrinsics: here as exact as the library's functions */
inline float
__expf(float x)
{
    return expf(x);
}
inline float
__exp10f(float x)
{
    return powf(10.0f, x);
}
inline float
__logf(float x)
{
    return logf(x);
}
inline float
__log2f(float x)
{
    return log2f(x);
}
inline float
__log10f(float x)
{
    return log10f(x);
}
inline float
__sinf(float x)
{
    return sinf(x);
}
inline float
__cosf(float x)
{
    return cosf(x);
}
inline float
__tanf(float x)
{
    return tanf(x);
}
inline void
__sincosf(float x, float *s, float *c)
{
    *s = sinf(x);
    *c = cosf(x);
}
inline float
__powf(float x, float y)
{
    return powf(x, y);
}
inline float
__fdividef(float x, float y)
{
    return x / y;
}
inline float
__saturatef(float x)
{
    return saturatef(x);
}
inline float
__frcp_rn(float x)
{
    return 1.0f / x;
}
inline float
__fsqrt_rn(float x)
{
    return sqrtf(x);
}
inline float
__frsqrt_rn(float x)
{
    return 1.0f / sqrtf(x);
}
#define PG_SIM_ROUNDED(name, T, op)                                                    \
    inline T name##_rn(T a, T b)                                                       \
    {                                                                                  \
        return a op b;                                                                 \
    }                                                                                  \
    inline T name##_rz(T a, T b)                                                       \
    {                                                                                  \
        return a op b;                                                                 \
    }                                                                                  \
    inline T name##_ru(T a, T b)                                                       \
    {                                                                                  \
        return a op b;                                                                 \
    }                                                                                  \
    inline T name##_rd(T a, T b)                                                       \
    {                                                                                  \
        return a op b;                                                                 \
    }
PG_SIM_ROUNDED(__fadd, float, +)
PG_SIM_ROUNDED(__fsub, float, -)
PG_SIM_ROUNDED(__fmul, float, *)
PG_SIM_ROUNDED(__fdiv, float, /)
PG_SIM_ROUNDED(__dadd, double, +)
PG_SIM_ROUNDED(__dsub, double, -)
PG_SIM_ROUNDED(__dmul, double, *)
PG_SIM_ROUNDED(__ddiv, double, /)
#undef PG_SIM_ROUNDED
inline float
__fmaf_rn(float a, float b, float c)
{
    return fmaf(a, b, c);
}
inline double
__fma_rn(double a, double b, double c)
{
    return fma(a, b, c);
}

/* ---- conversions and bits --------------------------------------------------- */

template <class To, class From>
inline To
pg_sim_bits(From v)
{
    static_assert(sizeof(To) == sizeof(From), "same size");
    To t;
    memcpy(&t, &v, sizeof(t));
    return t;
}
inline int
__float_as_int(float x)
{
    return pg_sim_bits<int>(x);
}
inline unsigned int
__float_as_uint(float x)
{
    return pg_sim_bits<unsigned int>(x);
}
inline float
__int_as_float(int x)
{
    return pg_sim_bits<float>(x);
}
inline float
__uint_as_float(unsigned int x)
{
    return pg_sim_bits<float>(x);
}
inline long long
__double_as_longlong(double x)
{
    return pg_sim_bits<long long>(x);
}
inline double
__longlong_as_double(long long x)
{
    return pg_sim_bits<double>(x);
}
inline int
__float2int_rn(float x)
{
    return (int)nearbyintf(x);
}
inline int
__float2int_rz(float x)
{
    return (int)x;
}
inline int
__float2int_rd(float x)
{
    return (int)floorf(x);
}
inline int
__float2int_ru(float x)
{
    return (int)ceilf(x);
}
inline unsigned int
__float2uint_rn(float x)
{
    return (unsigned int)nearbyintf(x);
}
inline float
__int2float_rn(int x)
{
    return (float)x;
}
inline float
__uint2float_rn(unsigned int x)
{
    return (float)x;
}
inline int
__double2int_rn(double x)
{
    return (int)nearbyint(x);
}
inline int
__double2int_rz(double x)
{
    return (int)x;
}
inline float
__double2float_rn(double x)
{
    return (float)x;
}
inline double
__int2double_rn(int x)
{
    return (double)x;
}
inline long long
__float2ll_rn(float x)
{
    return (long long)nearbyintf(x);
}
inline long long
__double2ll_rn(double x)
{
    return (long long)nearbyint(x);
}

inline int
__popc(unsigned int x)
{
    return __builtin_popcount(x);
}
inline int
__popcll(unsigned long long x)
{
    return __builtin_popcountll(x);
}
inline int
__clz(int x)
{
    return x == 0 ? 32 : __builtin_clz((unsigned int)x);
}
inline int
__clzll(long long x)
{
    return x == 0 ? 64 : __builtin_clzll((unsigned long long)x);
}
inline int
__ffs(int x)
{
    return __builtin_ffs(x);
}
inline int
__ffsll(long long x)
{
    return __builtin_ffsll(x);
}
inline unsigned int
__brev(unsigned int x)
{
    unsigned int r = 0;
    for (int i = 0; i < 32; i++, x >>= 1) {
        r = r << 1 | (x & 1);
    }
    return r;
}
inline unsigned long long
__brevll(unsigned long long x)
{
    return (unsigned long long)__brev((unsigned int)x) << 32 |
           __brev((unsigned int)(x >> 32));
}
inline unsigned int
__byte_perm(unsigned int x, unsigned int y, unsigned int s)
{
    unsigned long long v = (unsigned long long)y << 32 | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; i++) {
        r |= (unsigned int)(v >> (8 * ((s >> (4 * i)) & 7)) & 0xff) << (8 * i);
    }
    return r;
}
inline unsigned int
__funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift)
{
    unsigned long long v = (unsigned long long)hi << 32 | lo;
    return (unsigned int)((v << (shift & 31)) >> 32);
}
inline unsigned int
__funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift)
{
    unsigned long long v = (unsigned long long)hi << 32 | lo;
    return (unsigned int)(v >> (shift & 31));
}
inline int
__mul24(int x, int y)
{
    return (int)((long long)(x << 8 >> 8) * (y << 8 >> 8));
}
inline unsigned int
__umul24(unsigned int x, unsigned int y)
{
    return (x & 0xffffff) * (y & 0xffffff);
}
inline int
__mulhi(int x, int y)
{
    return (int)(((long long)x * y) >> 32);
}
inline unsigned int
__umulhi(unsigned int x, unsigned int y)
{
    return (unsigned int)(((unsigned long long)x * y) >> 32);
}
inline long long
__mul64hi(long long x, long long y)
{
    return (long long)(((__int128)x * y) >> 64);
}
inline unsigned long long
__umul64hi(unsigned long long x, unsigned long long y)
{
    return (unsigned long long)(((unsigned __int128)x * y) >> 64);
}
inline int
__hadd(int x, int y)
{
    return (int)(((long long)x + y) >> 1);
}
inline int
__rhadd(int x, int y)
{
    return (int)(((long long)x + y + 1) >> 1);
}
inline unsigned int
__sad(int x, int y, unsigned int z)
{
    return z + (unsigned int)(x > y ? x - y : y - x);
}
inline unsigned int
__usad(unsigned int x, unsigned int y, unsigned int z)
{
    return z + (x > y ? x - y : y - x);
}

/* loads and stores with cache hints: plain ones here */
template <class T>
inline T
__ldg(const T *p)
{
    return *p;
}
template <class T>
inline T
__ldca(const T *p)
{
    return *p;
}
template <class T>
inline T
__ldcg(const T *p)
{
    return *p;
}
template <class T>
inline T
__ldcs(const T *p)
{
    return *p;
}
template <class T>
inline T
__ldlu(const T *p)
{
    return *p;
}
template <class T>
inline T
__ldcv(const T *p)
{
    return *p;
}
template <class T>
inline void
__stwb(T *p, T v)
{
    *p = v;
}
template <class T>
inline void
__stcg(T *p, T v)
{
    *p = v;
}
template <class T>
inline void
__stcs(T *p, T v)
{
    *p = v;
}
template <class T>
inline void
__stwt(T *p, T v)
{
    *p = v;
}

/* ---- barriers, fences, the warp ----------------------------------------------- */

namespace pg_sim {
inline void
syncthreads()
{
    (void)host->barrier(PG_BARRIER_PLAIN, 1);
}
} /* namespace pg_sim */
#define __syncthreads() pg_sim::syncthreads()
inline int
__syncthreads_count(int predicate)
{
    return pg_sim::host->barrier(PG_BARRIER_COUNT, predicate);
}
inline int
__syncthreads_and(int predicate)
{
    return pg_sim::host->barrier(PG_BARRIER_AND, predicate);
}
inline int
__syncthreads_or(int predicate)
{
    return pg_sim::host->barrier(PG_BARRIER_OR, predicate);
}
inline void
__syncwarp(unsigned int mask = 0xffffffffu)
{
    (void)pg_sim::host->warp(PG_WARP_SYNC, mask, 0, 0, 32);
}
inline void
__threadfence()
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void
__threadfence_block()
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void
__threadfence_system()
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline unsigned int
__activemask()
{
    return pg_sim::host->activemask();
}

namespace pg_sim {
template <class T>
inline uint64_t
to_lane(T v)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                  "warp shuffles take values of up to 8 bytes");
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(T));
    return bits;
}
template <class T>
inline T
from_lane(uint64_t bits)
{
    T v;
    memcpy(&v, &bits, sizeof(T));
    return v;
}
} /* namespace pg_sim */

template <class T>
inline T
__shfl_sync(unsigned int mask, T var, int src_lane, int width = 32)
{
    return pg_sim::from_lane<T>(
        pg_sim::host->warp(PG_WARP_SHFL, mask, pg_sim::to_lane(var), src_lane, width));
}
template <class T>
inline T
__shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32)
{
    return pg_sim::from_lane<T>(pg_sim::host->warp(
        PG_WARP_SHFL_UP, mask, pg_sim::to_lane(var), (int)delta, width));
}
template <class T>
inline T
__shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32)
{
    return pg_sim::from_lane<T>(pg_sim::host->warp(
        PG_WARP_SHFL_DOWN, mask, pg_sim::to_lane(var), (int)delta, width));
}
template <class T>
inline T
__shfl_xor_sync(unsigned int mask, T var, int lane_mask, int width = 32)
{
    return pg_sim::from_lane<T>(pg_sim::host->warp(
        PG_WARP_SHFL_XOR, mask, pg_sim::to_lane(var), lane_mask, width));
}
inline unsigned int
__ballot_sync(unsigned int mask, int predicate)
{
    return (unsigned int)pg_sim::host->warp(PG_WARP_BALLOT, mask, predicate != 0, 0,
                                            32);
}
inline int
__any_sync(unsigned int mask, int predicate)
{
    return (int)pg_sim::host->warp(PG_WARP_ANY, mask, predicate != 0, 0, 32);
}
inline int
__all_sync(unsigned int mask, int predicate)
{
    return (int)pg_sim::host->warp(PG_WARP_ALL, mask, predicate != 0, 0, 32);
}
template <class T>
inline unsigned int
__match_any_sync(unsigned int mask, T value)
{
    return (unsigned int)pg_sim::host->warp(PG_WARP_MATCH_ANY, mask,
                                            pg_sim::to_lane(value), 0, 32);
}
template <class T>
inline unsigned int
__match_all_sync(unsigned int mask, T value, int *pred)
{
    unsigned int r = (unsigned int)pg_sim::host->warp(PG_WARP_MATCH_ALL, mask,
                                                      pg_sim::to_lane(value), 0, 32);
    *pred = r != 0;
    return r;
}
#define PG_SIM_REDUCE(name, T, expr)                                                   \
    inline T name(unsigned int mask, T value)                                          \
    {                                                                                  \
        T r = value;                                                                   \
        bool first = true;                                                             \
        for (int lane = 0; lane < 32; lane++) {                                        \
            if (mask >> lane & 1) {                                                    \
                T v = __shfl_sync(mask, value, lane);                                  \
                r = first ? v : (expr);                                                \
                first = false;                                                         \
            }                                                                          \
        }                                                                              \
        return r;                                                                      \
    }
PG_SIM_REDUCE(__reduce_add_sync, unsigned int, r + v)
PG_SIM_REDUCE(__reduce_add_sync, int, r + v)
PG_SIM_REDUCE(__reduce_min_sync, unsigned int, v < r ? v : r)
PG_SIM_REDUCE(__reduce_min_sync, int, v < r ? v : r)
PG_SIM_REDUCE(__reduce_max_sync, unsigned int, v > r ? v : r)
PG_SIM_REDUCE(__reduce_max_sync, int, v > r ? v : r)
PG_SIM_REDUCE(__reduce_and_sync, unsigned int, r &v)
PG_SIM_REDUCE(__reduce_or_sync, unsigned int, r | v)
PG_SIM_REDUCE(__reduce_xor_sync, unsigned int, r ^ v)
#undef PG_SIM_REDUCE

/* ---- printf, assert, clocks, traps -------------------------------------------- */

namespace pg_sim {
[[noreturn]] inline void
stop(int err, const char *what)
{
    char message[1024];
    snprintf(message, sizeof(message),
             "kernel '%s', block (%u, %u, %u), thread (%u, %u, %u): %s", kernel_name,
             idx.block.x, idx.block.y, idx.block.z, idx.thread.x, idx.thread.y,
             idx.thread.z, what);
    host->fail(err, message);
    abort(); /* fail() never returns from a kernel's thread */
}

inline int
device_printf(const char *format, ...)
{
    char text[4096];
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(text, sizeof(text), format, ap);
    va_end(ap);
    if (n > 0) {
        host->print(text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
    }
    return n;
}

[[noreturn]] inline void
assert_failed(const char *expr, const char *file, int line, const char *function)
{
    char what[768];
    snprintf(what, sizeof(what), "assert(%s) failed at %s:%d, in %s", expr, file, line,
             function);
    stop(PG_ERR_ASSERT_, what);
}
} /* namespace pg_sim */

#define printf(...) pg_sim::device_printf(__VA_ARGS__)
/* assert.h (pygpu's stand-in, found first on the include path) spells the
 * same: a failed assert stops the launch and raises in Python */
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e)                                                                      \
    ((e) ? (void)0 : pg_sim::assert_failed(#e, __FILE__, __LINE__, __func__))
#endif
inline long long
clock64()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
inline void
__nanosleep(unsigned int)
{
}
[[noreturn]] inline void
__trap()
{
    pg_sim::stop(PG_ERR_LAUNCH_FAILURE_, "the kernel called __trap()");
}
[[noreturn]] inline void
__brkpt()
{
    pg_sim::stop(PG_ERR_LAUNCH_FAILURE_, "the kernel called __brkpt()");
}

/* ---- checking ------------------------------------------------------------------ */

#ifdef PG_SIM_CHECK
#include <dlfcn.h>
#include <link.h>

namespace pg_sim {
namespace check {

/* Static __shared__ variables live in one arena, each with a red zone after
 * it, so that an access past one lands in no variable (rawkernel.py writes
 * each `__shared__ T name[...];` as a reference into it). */
constexpr size_t ARENA = 128 * 1024, RED = 64;
alignas(64) inline char arena[ARENA + RED];
struct slot {
    size_t at, size;
    const char *name;
};
inline slot slots[512];
inline int nslots;
inline size_t arena_used = RED;

inline void *
static_shared(size_t size, size_t align, const char *name)
{
    size_t at = (arena_used + align - 1) / align * align;
    if (nslots == 512 || at + size + RED > ARENA) {
        fprintf(stderr,
                "pygpu: the checking mode holds %zu bytes of static shared memory\n",
                ARENA);
        abort();
    }
    slots[nslots++] = {at, size, name};
    arena_used = at + size + RED;
    return arena + at;
}

/* Who touched each byte of shared memory since the block's last barrier: the
 * last writer; the last reader, and the readers before it (the latest warp
 * __syncwarp() count among their reads, and their warp). */
struct shadow {
    uint32_t epoch;
    uint16_t writer, wsync; /* thread rank + 1 (0: none), its warp's syncs then */
    uint16_t reader, rsync; /* the last reader, likewise */
    uint16_t rest_sync;     /* the readers before it: the latest sync count */
    uint16_t rest_warp;     /* their warp + 1; 0 none; 0xffff several warps */
};
inline shadow *arena_shadow;
inline shadow *dynamic_shadow;
inline size_t dynamic_size;

/* the pointer arguments' allocations, and recent others */
struct range {
    const char *lo, *hi, *ptr;
    int param;
};
inline range ranges[64];
inline int nranges, nparams_ranged;
inline const char *image_lo, *image_hi;
inline const char *param_names;

inline const char *
param_name(int i, char *buf, size_t n)
{
    const char *p = param_names != nullptr ? param_names : "";
    for (int k = 0; k < i && p != nullptr; k++) {
        p = strchr(p, ',');
        p = p != nullptr ? p + 1 : nullptr;
    }
    size_t len = p == nullptr ? 0 : strcspn(p, ",");
    if (len == 0) {
        snprintf(buf, n, "parameter %d", i);
    }
    else {
        snprintf(buf, n, "argument '%.*s' (parameter %d)", (int)len, p, i);
    }
    return buf;
}

static const char *const kinds[] = {"read", "write", "atomic"};

[[noreturn]] inline void
out_of_bounds(const char *a, size_t size, int kind)
{
    char what[768], name[128];
    const range *best = nullptr;
    size_t best_distance = SIZE_MAX;
    for (int i = 0; i < nranges; i++) {
        const range &r = ranges[i];
        size_t d = a >= r.hi ? (size_t)(a - r.hi) : a < r.lo ? (size_t)(r.lo - a) : 0;
        if (r.param >= 0 && d < best_distance) {
            best = &r;
            best_distance = d;
        }
    }
    if ((uintptr_t)a < 65536) {
        snprintf(what, sizeof(what), "%zu-byte %s at address %p: a null pointer", size,
                 kinds[kind], (const void *)a);
    }
    else if (best != nullptr && best_distance < (64u << 20)) {
        snprintf(
            what, sizeof(what),
            "%zu-byte %s at byte offset %lld from %s, whose array spans bytes %lld "
            "to %lld from that pointer: out of bounds",
            size, kinds[kind], (long long)(a - best->ptr),
            param_name(best->param, name, sizeof(name)),
            (long long)(best->lo - best->ptr), (long long)(best->hi - best->ptr));
    }
    else {
        snprintf(what, sizeof(what),
                 "%zu-byte %s at address %p: outside every live allocation", size,
                 kinds[kind], (const void *)a);
    }
    stop(PG_ERR_ILLEGAL_ADDRESS_, what);
}

[[noreturn]] inline void
race(const char *name, size_t offset, int kind, size_t size, unsigned int other,
     bool other_wrote, bool several)
{
    char what[768], space[96];
    if (name != nullptr) {
        snprintf(space, sizeof(space), "__shared__ '%s'", name);
    }
    else {
        snprintf(space, sizeof(space), "the dynamic shared memory");
    }
    const dim3 &d = idx.block_dim;
    if (several) {
        snprintf(
            what, sizeof(what),
            "shared-memory race on %s at byte offset %zu: a %zu-byte %s where several "
            "threads read, with no __syncthreads() between them",
            space, offset, size, kinds[kind]);
    }
    else {
        snprintf(
            what, sizeof(what),
            "shared-memory race on %s at byte offset %zu: a %zu-byte %s where thread "
            "(%u, %u, %u) %s, with no __syncthreads() between them",
            space, offset, size, kinds[kind], other % d.x, (other / d.x) % d.y,
            other / (d.x * d.y), other_wrote ? "wrote" : "read");
    }
    stop(PG_ERR_LAUNCH_FAILURE_, what);
}

/* same warp, and that warp met at __syncwarp() since the access: ordered */
inline bool
ordered(unsigned int t, unsigned int other, uint16_t sync_then)
{
    return t / 32 == other / 32 && host->live->warp_syncs[t / 32] != sync_then;
}

inline void
shared_access(shadow *sh, const char *name, size_t offset, size_t size, int kind)
{
    const pg_sim_live *lv = host->live;
    unsigned int t = lv->thread, w = t / 32;
    uint16_t me = (uint16_t)(t + 1), sync = lv->warp_syncs[w];
    if (kind == 2) {
        return; /* atomics do not race */
    }
    for (size_t i = 0; i < size; i++) {
        shadow &s = sh[offset + i];
        if (s.epoch != lv->epoch) {
            s = {lv->epoch, 0, 0, 0, 0, 0, 0};
        }
        if (s.writer != 0 && s.writer != me && !ordered(t, s.writer - 1u, s.wsync)) {
            race(name, offset + i, kind, size, s.writer - 1u, true, false);
        }
        if (kind == 1) {
            if (s.reader != 0 && s.reader != me &&
                !ordered(t, s.reader - 1u, s.rsync)) {
                race(name, offset + i, kind, size, s.reader - 1u, false, false);
            }
            if (s.rest_warp != 0 && !(s.rest_warp == w + 1 && sync != s.rest_sync)) {
                race(name, offset + i, kind, size, 0, false, true);
            }
            s.writer = me;
            s.wsync = sync;
        }
        else if (s.reader != me) {
            if (s.reader != 0) { /* the last reader joins the ones before it */
                uint16_t rw = (uint16_t)((s.reader - 1u) / 32 + 1);
                s.rest_warp = s.rest_warp == 0 || s.rest_warp == rw ? rw : 0xffff;
                s.rest_sync = s.rsync;
            }
            s.reader = me;
            s.rsync = sync;
        }
        else {
            s.rsync = sync;
        }
    }
}

inline void
static_shared_access(const char *a, size_t size, int kind)
{
    size_t off = (size_t)(a - arena);
    char what[512];
    for (int i = 0; i < nslots; i++) {
        const slot &s = slots[i];
        if (off >= s.at && off + size <= s.at + s.size) {
            shared_access(arena_shadow + s.at, s.name, off - s.at, size, kind);
            return;
        }
    }
    const slot *before = nullptr;
    for (int i = 0; i < nslots; i++) {
        if (slots[i].at <= off && (before == nullptr || slots[i].at > before->at)) {
            before = &slots[i];
        }
    }
    if (before != nullptr) {
        snprintf(
            what, sizeof(what),
            "shared-memory %zu-byte %s at byte offset %zu of __shared__ '%s', which "
            "holds %zu bytes",
            size, kinds[kind], off - before->at, before->name, before->size);
    }
    else {
        snprintf(what, sizeof(what),
                 "shared-memory %zu-byte %s before the first __shared__ "
                 "variable",
                 size, kinds[kind]);
    }
    stop(PG_ERR_ILLEGAL_ADDRESS_, what);
}

inline bool launching; /* only a launch's accesses are checked */

inline void
access(const void *p, size_t size, int kind)
{
    const char *a = (const char *)p;
    if (!launching) {
        return; /* the module's static initializers, at load */
    }
    for (int i = 0; i < nranges; i++) {
        if (a >= ranges[i].lo && a + size <= ranges[i].hi) {
            return;
        }
    }
    if (a >= arena && a < arena + sizeof(arena)) {
        static_shared_access(a, size, kind);
        return;
    }
    const char *dyn = (const char *)dynamic_shared;
    if (dyn != nullptr && a >= dyn && a < dyn + dynamic_size + RED) {
        if (a + size > dyn + dynamic_size) {
            char what[512];
            snprintf(
                what, sizeof(what),
                "shared-memory %zu-byte %s at byte offset %zu of the dynamic shared "
                "memory (extern __shared__), which holds %zu bytes as launched",
                size, kinds[kind], (size_t)(a - dyn), dynamic_size);
            stop(PG_ERR_ILLEGAL_ADDRESS_, what);
        }
        shared_access(dynamic_shadow, nullptr, (size_t)(a - dyn), size, kind);
        return;
    }
    const pg_sim_live *lv = host->live;
    if ((a >= lv->stacks && a < lv->stacks_end) || (a >= image_lo && a < image_hi)) {
        return; /* local memory; the module's own variables */
    }
    void *base;
    size_t bytes;
    if (host->find_range(a, &base, &bytes) == 0 &&
        a + size <= (const char *)base + bytes) {
        const char *lo = (const char *)base, *hi = lo + bytes;
        for (int i = 0; i < nranges; i++) {
            if (ranges[i].param >= 0 && ranges[i].lo < hi && lo < ranges[i].hi) {
                out_of_bounds(a, size, kind); /* past an argument's array */
            }
        }
        if (nranges < 64) { /* memory reached otherwise: remembered, so that the
                             * next access goes fast */
            ranges[nranges++] = {(const char *)base, (const char *)base + bytes,
                                 (const char *)base, -1};
        }
        return;
    }
    out_of_bounds(a, size, kind);
}

template <class T>
inline void
note_param(const T &, int)
{
}

/* a pointer parameter may touch the array it came from (its allocation
 * where pygpu does not know the array) */
template <class T>
inline void
note_param(T *ptr, int i)
{
    const void *lo, *hi;
    void *base;
    size_t bytes;
    if (nranges == 64) {
        return;
    }
    if (host->arg_span(i, &lo, &hi) == 0) {
        ranges[nranges++] = {(const char *)lo, (const char *)hi, (const char *)ptr, i};
    }
    else if (host->find_range((const void *)ptr, &base, &bytes) == 0) {
        ranges[nranges++] = {(const char *)base, (const char *)base + bytes,
                             (const char *)ptr, i};
    }
}

inline int
module_image(struct dl_phdr_info *info, size_t, void *)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0, me = (uintptr_t)&arena_used;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD) {
            uintptr_t s = info->dlpi_addr + ph.p_vaddr;
            lo = s < lo ? s : lo;
            hi = s + ph.p_memsz > hi ? s + ph.p_memsz : hi;
        }
    }
    if (me >= lo && me < hi) {
        image_lo = (const char *)lo;
        image_hi = (const char *)hi;
        return 1;
    }
    return 0;
}

/* Before a launch: the arguments' allocations, shadows sized to the shared
 * memory. Returns 0, or PG_ERR_NO_MEMORY. */
inline int
begin(const char *params, unsigned int shared_bytes)
{
    if (image_lo == nullptr) {
        dl_iterate_phdr(module_image, nullptr);
    }
    param_names = params;
    nranges = 0;
    if (arena_shadow == nullptr) {
        arena_shadow = (shadow *)calloc(ARENA, sizeof(shadow));
    }
    free(dynamic_shadow);
    dynamic_size = shared_bytes;
    dynamic_shadow = (shadow *)calloc(shared_bytes + 1, sizeof(shadow));
    return arena_shadow == nullptr || dynamic_shadow == nullptr ? PG_ERR_NO_MEMORY : 0;
}

} /* namespace check */
} /* namespace pg_sim */

#define PG_SIM_ACCESS(p, kind)                                                         \
    pg_sim::check::access((const void *)(p), sizeof(*(p)), kind)
#define PG_SIM_HOOK(n, T)                                                              \
    extern "C"                                                                         \
        __attribute__((visibility("default"))) void __sanitizer_cov_load##n(T *p)      \
    {                                                                                  \
        pg_sim::check::access(p, n, 0);                                                \
    }                                                                                  \
    extern "C"                                                                         \
        __attribute__((visibility("default"))) void __sanitizer_cov_store##n(T *p)     \
    {                                                                                  \
        pg_sim::check::access(p, n, 1);                                                \
    }
PG_SIM_HOOK(1, uint8_t)
PG_SIM_HOOK(2, uint16_t)
PG_SIM_HOOK(4, uint32_t)
PG_SIM_HOOK(8, uint64_t)
PG_SIM_HOOK(16, __int128)
#undef PG_SIM_HOOK
#else
#define PG_SIM_ACCESS(p, kind) ((void)0)
#endif

/* ---- atomics ------------------------------------------------------------------ */

/* Real atomics (blocks may one day run on several CPU threads); float and
 * double through compare-and-swap on their bits. */
#define PG_SIM_ATOMIC_INT(T)                                                           \
    inline T atomicAdd(T *p, T v)                                                      \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);                             \
    }                                                                                  \
    inline T atomicSub(T *p, T v)                                                      \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);                             \
    }                                                                                  \
    inline T atomicExch(T *p, T v)                                                     \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                            \
    }                                                                                  \
    inline T atomicAnd(T *p, T v)                                                      \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);                             \
    }                                                                                  \
    inline T atomicOr(T *p, T v)                                                       \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);                              \
    }                                                                                  \
    inline T atomicXor(T *p, T v)                                                      \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);                             \
    }                                                                                  \
    inline T atomicCAS(T *p, T compare, T v)                                           \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_SEQ_CST,           \
                                    __ATOMIC_SEQ_CST);                                 \
        return compare;                                                                \
    }                                                                                  \
    inline T atomicMin(T *p, T v)                                                      \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                  \
        while (v < old &&                                                              \
               !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,       \
                                            __ATOMIC_SEQ_CST)) {                       \
        }                                                                              \
        return old;                                                                    \
    }                                                                                  \
    inline T atomicMax(T *p, T v)                                                      \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                  \
        while (v > old &&                                                              \
               !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,       \
                                            __ATOMIC_SEQ_CST)) {                       \
        }                                                                              \
        return old;                                                                    \
    }
PG_SIM_ATOMIC_INT(int)
PG_SIM_ATOMIC_INT(unsigned int)
PG_SIM_ATOMIC_INT(long long)
PG_SIM_ATOMIC_INT(unsigned long long)
#undef PG_SIM_ATOMIC_INT
inline unsigned short
atomicCAS(unsigned short *p, unsigned short compare, unsigned short v)
{
    PG_SIM_ACCESS(p, 2);
    __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    return compare;
}
inline unsigned int
atomicInc(unsigned int *p, unsigned int limit)
{
    PG_SIM_ACCESS(p, 2);
    unsigned int old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (!__atomic_compare_exchange_n(p, &old, old >= limit ? 0 : old + 1, false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
inline unsigned int
atomicDec(unsigned int *p, unsigned int limit)
{
    PG_SIM_ACCESS(p, 2);
    unsigned int old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (!__atomic_compare_exchange_n(p, &old,
                                        old == 0 || old > limit ? limit : old - 1,
                                        false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
#define PG_SIM_ATOMIC_FLOAT(T, B)                                                      \
    inline T pg_sim_atomic_update(T *p, T v, int op)                                   \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        B old = __atomic_load_n((B *)p, __ATOMIC_SEQ_CST), next;                       \
        do {                                                                           \
            T x = pg_sim_bits<T>(old);                                                 \
            T y = op == 0 ? x + v : op == 1 ? v : op == 2 ? fmin(x, v) : fmax(x, v);   \
            next = pg_sim_bits<B>(y);                                                  \
        } while (!__atomic_compare_exchange_n((B *)p, &old, next, false,               \
                                              __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));    \
        return pg_sim_bits<T>(old);                                                    \
    }                                                                                  \
    inline T atomicAdd(T *p, T v)                                                      \
    {                                                                                  \
        return pg_sim_atomic_update(p, v, 0);                                          \
    }                                                                                  \
    inline T atomicExch(T *p, T v)                                                     \
    {                                                                                  \
        return pg_sim_atomic_update(p, v, 1);                                          \
    }                                                                                  \
    inline T atomicMin(T *p, T v)                                                      \
    {                                                                                  \
        return pg_sim_atomic_update(p, v, 2);                                          \
    }                                                                                  \
    inline T atomicMax(T *p, T v)                                                      \
    {                                                                                  \
        return pg_sim_atomic_update(p, v, 3);                                          \
    }
PG_SIM_ATOMIC_FLOAT(float, uint32_t)
PG_SIM_ATOMIC_FLOAT(double, uint64_t)
#undef PG_SIM_ATOMIC_FLOAT
/* the scoped forms: one memory here */
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor

/* ---- kernels and their launch ------------------------------------------------- */

namespace pg_sim {

template <class T> struct value {
    typedef T type;
};
template <class T> struct value<T &> {
    typedef T type;
};
template <class T> struct value<const T> {
    typedef T type;
};

template <class T>
inline int
check_arg(const T &)
{
    return 0;
}

template <class T>
inline int
check_arg(T *ptr)
{
    return host->check_access((const void *)ptr);
}

template <class... A> struct kernel_of {
    typedef void (*fn_type)(A...);
    static constexpr size_t sizes[sizeof...(A) + 1] = {sizeof(A)..., 0};

    struct launch_args {
        fn_type fn;
        void **params;
    };

    template <size_t... I> static void call(launch_args *a, std::index_sequence<I...>)
    {
        a->fn(*(typename value<A>::type *)a->params[I]...);
    }

    static void body(void *arg)
    {
        launch_args *a = (launch_args *)arg;
        call(a, std::index_sequence_for<A...>{});
    }

    template <size_t... I> static int check(void **params, std::index_sequence<I...>)
    {
        int err = 0;
        ((err = err == 0 ? check_arg(*(typename value<A>::type *)params[I]) : err),
         ...);
        return err;
    }

#ifdef PG_SIM_CHECK
    template <size_t... I> static void note(void **params, std::index_sequence<I...>)
    {
        (check::note_param(*(typename value<A>::type *)params[I], (int)I), ...);
    }
#endif

    static int launch(const pg_sim_kernel *k, dim3 grid, dim3 block,
                      unsigned int shared_bytes, void **params)
    {
        int err = check(params, std::index_sequence_for<A...>{});
        if (err != 0) {
            return err;
        }
#ifdef PG_SIM_CHECK
        if (check::begin(k->params, shared_bytes) != 0) {
            return PG_ERR_NO_MEMORY;
        }
        note(params, std::index_sequence_for<A...>{});
        const size_t red = check::RED;
#else
        const size_t red = 16;
#endif
        /* zeroed, as a GPU's is not, but the same on every run */
        void *shared = calloc(1, shared_bytes + red);
        if (shared == NULL) {
            return PG_ERR_NO_MEMORY;
        }
        launch_args a = {(fn_type)k->fn, params};
        dynamic_shared = shared;
        kernel_name = k->name;
        pg_sim_launch l = {grid, block, body, &a, &idx, k->name};
#ifdef PG_SIM_CHECK
        check::launching = true;
        err = host->run(&l);
        check::launching = false;
#else
        err = host->run(&l);
#endif
        dynamic_shared = nullptr;
        free(shared);
        return err;
    }
};

/* The module's kernels, a list that the exporters fill when the shared
 * object is loaded. */
struct entry {
    pg_sim_kernel kernel;
    entry *next;
};
inline entry *kernels;

template <class... A>
inline pg_sim_kernel
describe(const char *name, const char *params, void (*fn)(A...))
{
    return {name,
            (int)sizeof...(A),
            kernel_of<A...>::sizes,
            kernel_of<A...>::launch,
            (void (*)(void))fn,
            params};
}

struct exporter {
    entry e;
    exporter(pg_sim_kernel k) : e{k, kernels}
    {
        kernels = &e;
    }
};

} /* namespace pg_sim */

extern "C" __attribute__((visibility("default"))) int
pg_sim_module_attach(const pg_sim_host *host)
{
    if (host->abi != PG_SIM_ABI) {
        return -1;
    }
    pg_sim::host = host;
    return 0;
}

extern "C" __attribute__((visibility("default"))) const pg_sim_kernel *
pg_sim_module_kernel(const char *name)
{
    for (pg_sim::entry *e = pg_sim::kernels; e != NULL; e = e->next) {
        if (strcmp(e->kernel.name, name) == 0) {
            return &e->kernel;
        }
    }
    return NULL;
}

#if defined(__clang__) && defined(PG_SIM_CHECK)
#pragma clang attribute pop
#pragma clang attribute pop
#endif

#endif /* PYGPU_SIM_PRELUDE_H */
