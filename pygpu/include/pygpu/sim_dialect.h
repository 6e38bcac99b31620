/* The CUDA C dialect on the host compiler, written once for both kinds of
 * simulated kernels: pygpu's prebuilt kernels (csrc/kernels/kernels.cu with
 * csrc/simulator/sim_exec.h, the block runner, built into pygpu._core) and
 * the modules made of users' and generated kernels (pygpu/sim_prelude.h,
 * which includes this header). It gives dim3 and the index variables
 * (pg_sim::idx, which the runner sets thread by thread: each module has its
 * own, and so has pygpu._core), the qualifiers, vector types, the math and
 * bit intrinsics, and the barriers and warp intrinsics, which call the one
 * block runner through the table pg_sim::host (sim_abi.h's pg_sim_host: a
 * module gets it at load, pygpu._core points it at its own runner).
 *
 * What only a module needs stays in the prelude: printf, assert, __trap,
 * the atomics and the checking mode (whose hooks see the atomics' accesses),
 * and the exporters of kernels. The prelude's checking mode excludes this
 * header's functions from its instrumentation as its own (it is included
 * inside the prelude's `#pragma clang attribute`). Standard headers are
 * included first: the qualifier macros below (__noinline__) would break
 * theirs. */
#ifndef PYGPU_SIM_DIALECT_H
#define PYGPU_SIM_DIALECT_H

#ifdef __CUDACC__
#error "sim_dialect.h is for the host compiler only"
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <type_traits>

#include "pygpu/sim_abi.h"

/* dim3 is pg_dim3 (sim_abi.h), and uint3 is dim3, as in the runner's index
 * variables */
typedef pg_dim3 dim3;
typedef pg_dim3 uint3;

namespace pg_sim {
inline const pg_sim_host *host; /* the block runner's operations */
inline pg_sim_index idx;        /* threadIdx, blockIdx, ...: the runner sets them */
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
/* a GNU attribute, allowed among the declaration's specifiers in any order
 * (`__shared__ __align__(16) float s[...]`), as nvcc allows __align__ */
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__
#define __managed__
#define __shared__ static
#define __constant__ static

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
/* grid_group::sync() (cooperative_groups.h): the grid's barrier, in a
 * cooperative launch; in another, it stops the launch saying so */
inline void
grid_sync()
{
    (void)host->barrier(PG_BARRIER_GRID, 1);
}
inline bool
grid_cooperative()
{
    return host->live->cooperative != 0;
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
/* PG_SIM_SITE: an address of its own for each place in the source that
 * names it (a static of a statement expression), which the runner's
 * __activemask() tells converged lanes by */
#define PG_SIM_SITE                                                                    \
    (__extension__({                                                                   \
        static char pg_sim_site_;                                                      \
        (const void *)&pg_sim_site_;                                                   \
    }))
inline unsigned int
pg_sim_activemask_at(const void *site)
{
    return pg_sim::host->activemask(site);
}
#define __activemask() pg_sim_activemask_at(PG_SIM_SITE)

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

/* ---- inline PTX's special registers ------------------------------------------- */

/* rawkernel.py writes `asm("mov.u32 %0, %%laneid;" : "=r"(x))` as
 * `x = pg_sim::ptx_laneid()`, and the plain arithmetic forms as C++ */
namespace pg_sim {
inline unsigned int
ptx_rank()
{
    return idx.thread.x +
           idx.block_dim.x * (idx.thread.y + idx.block_dim.y * idx.thread.z);
}
inline unsigned int
ptx_laneid()
{
    return ptx_rank() % 32;
}
inline unsigned int
ptx_warpid()
{
    return ptx_rank() / 32;
}
inline unsigned int
ptx_nwarpid()
{
    return (idx.block_dim.x * idx.block_dim.y * idx.block_dim.z + 31) / 32;
}
inline unsigned int
ptx_lanemask_eq()
{
    return 1u << ptx_laneid();
}
inline unsigned int
ptx_lanemask_lt()
{
    return ptx_lanemask_eq() - 1;
}
inline unsigned int
ptx_lanemask_le()
{
    return ptx_lanemask_lt() | ptx_lanemask_eq();
}
inline unsigned int
ptx_lanemask_gt()
{
    return ~ptx_lanemask_le();
}
inline unsigned int
ptx_lanemask_ge()
{
    return ~ptx_lanemask_lt();
}
inline unsigned long long
ptx_globaltimer()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull +
           (unsigned long long)ts.tv_nsec;
}
inline unsigned long long
ptx_clock64()
{
    return ptx_globaltimer();
}
inline unsigned int
ptx_clock()
{
    return (unsigned int)ptx_globaltimer();
}
inline unsigned int
ptx_smid()
{
    return 0;
}
inline unsigned int
ptx_nsmid()
{
    return 1;
}
inline unsigned long long
ptx_gridid()
{
    return 0;
}
} /* namespace pg_sim */

/* ---- launches ------------------------------------------------------------------ */

namespace pg_sim {
/* Separate device memories: before a kernel runs, each pointer it is given
 * must be memory its device may touch (pg_sim_host's check_access, rt_sim.c's
 * pg_sim_check_access); other arguments (sizes, geometry passed by value)
 * are not looked at. A launch passes each argument here. */
template <class T>
inline pg_err
check_arg(const T &)
{
    return PG_SUCCESS;
}

template <class T>
inline pg_err
check_arg(T *ptr)
{
    return host->check_access((const void *)ptr);
}
} /* namespace pg_sim */

#endif /* PYGPU_SIM_DIALECT_H */
