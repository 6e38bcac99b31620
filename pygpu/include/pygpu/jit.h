/* Device helpers for kernels written in Python (pygpu.cuda.jit): the array
 * view a kernel's array argument becomes, Python's arithmetic where it
 * differs from C's (floor division and modulo, integer powers, min and max),
 * Numba's atomics for every type it allows, and Numba's xoroshiro128+
 * generator. The code that pygpu/_jit/codegen.py emits includes this header;
 * NVRTC (on a GPU) and the host compiler with sim_prelude.h (on the
 * simulator) both read it, so nothing here may need more than the CUDA
 * dialect both give. */
#ifndef PYGPU_JIT_H
#define PYGPU_JIT_H

#ifdef __CUDACC__
#define PG_JIT_FN __device__ __forceinline__
#else
#define PG_JIT_FN inline
/* Python's (and Numba's) integers wrap at 64 bits; C's signed overflow is
 * undefined, which g++ may assume away in loops */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("wrapv")
#endif
#endif

namespace pg_jit {

typedef long long i64;
typedef unsigned long long u64;

/* An array argument (or a shared, local or constant array): the address of
 * element 0, then the extent and the byte stride of each axis. */
template <class T, int N> struct array {
    T *data;
    i64 shape[N];
    i64 strides[N];
};

/* Python's negative indices count from the end, as Numba's do; no bounds
 * check (Numba checks none either: the simulator's checking mode does) */
PG_JIT_FN i64
wrap(i64 i, i64 n)
{
    return i < 0 ? i + n : i;
}

/* a[i0, i1, ...]: one index per axis */
template <class T, int N, class... I>
PG_JIT_FN T &
at(const array<T, N> &a, I... i)
{
    static_assert(sizeof...(I) == N, "one index per axis");
    const i64 idx[] = {(i64)i...};
    char *p = (char *)a.data;
    for (int k = 0; k < N; k++) {
        p += wrap(idx[k], a.shape[k]) * a.strides[k];
    }
    return *(T *)p;
}

/* The element a kernel's statement reads or writes: PG_JIT_AT("a", a, i,
 * ...), the first the array's Python expression. In the simulator's checking
 * mode an index past its axis stops the launch with NumPy's IndexError text,
 * the array and the statement's line (__FILE__ and __LINE__ follow the
 * kernel's #line directives): local arrays' too, whose memory the other
 * checks do not watch. */
#if defined(PG_SIM_CHECK) && !defined(__CUDACC__)
__attribute__((noinline)) inline void
index_error(const char *file, int line, const char *name, int axis, i64 index, i64 size)
{
    static char where[512], what[300];
    snprintf(where, sizeof(where), "%s:%d", file, line);
    pg_sim::access_pc = nullptr;
    pg_sim::access_site = where;
    snprintf(what, sizeof(what),
             "index %lld is out of bounds for axis %d with size %lld (array '%s')",
             (long long)index, axis, (long long)size, name);
    pg_sim::stop(PG_ERR_ILLEGAL_ADDRESS, what);
}
template <class T, int N, class... I>
inline T &
at_checked(const char *file, int line, const char *name, const array<T, N> &a, I... i)
{
    const i64 idx[] = {(i64)i...};
    for (int k = 0; k < N; k++) {
        const i64 j = wrap(idx[k], a.shape[k]);
        if (j < 0 || j >= a.shape[k]) {
            index_error(file, line, name, k, idx[k], a.shape[k]);
        }
    }
    return at(a, i...);
}
#define PG_JIT_AT(...) pg_jit::at_checked(__FILE__, __LINE__, __VA_ARGS__)
#else
#define PG_JIT_AT(name, ...) pg_jit::at(__VA_ARGS__)
#endif

/* a[sel0, sel1, ...] with slices among the selections: a view. Each axis
 * is picked by an index (kind 0: start is the index) or sliced (kind 1), as
 * Python's slice.indices() clamps a slice to the axis. */
struct axis_sel {
    int kind;
    i64 start, stop, step;
    int has_start, has_stop;
};
template <int M, class T, int N>
PG_JIT_FN array<T, M>
view(const array<T, N> &a, const axis_sel (&sel)[N])
{
    array<T, M> r;
    char *p = (char *)a.data;
    int m = 0;
    for (int k = 0; k < N; k++) {
        const axis_sel &s = sel[k];
        i64 n = a.shape[k];
        if (s.kind == 0) {
            p += wrap(s.start, n) * a.strides[k];
            continue;
        }
        i64 step = s.step, start, stop, len;
        if (step > 0) {
            start = !s.has_start ? 0 : s.start < 0 ? (s.start + n > 0 ? s.start + n : 0)
                                                   : (s.start < n ? s.start : n);
            stop = !s.has_stop ? n : s.stop < 0 ? (s.stop + n > 0 ? s.stop + n : 0)
                                                : (s.stop < n ? s.stop : n);
            len = stop > start ? (stop - start + step - 1) / step : 0;
        }
        else {
            start = !s.has_start ? n - 1
                    : s.start < 0 ? (s.start + n > -1 ? s.start + n : -1)
                                  : (s.start < n - 1 ? s.start : n - 1);
            stop = !s.has_stop ? -1
                   : s.stop < 0 ? (s.stop + n > -1 ? s.stop + n : -1)
                                : (s.stop < n - 1 ? s.stop : n - 1);
            len = start > stop ? (start - stop - step - 1) / (-step) : 0;
        }
        if (len > 0) {
            p += start * a.strides[k];
        }
        r.shape[m] = len;
        r.strides[m] = a.strides[k] * step;
        m++;
    }
    r.data = (T *)p;
    return r;
}

/* The number of elements, and element k in C order: what an assignment to a
 * slice (a[1:] = 0, a[i] = row) and a NumPy ufunc of arrays in a kernel
 * (np.sin(x, out)) walk. */
template <class T, int N>
PG_JIT_FN i64
size(const array<T, N> &a)
{
    i64 n = 1;
    for (int k = 0; k < N; k++) {
        n *= a.shape[k];
    }
    return n;
}
template <class T, int N>
PG_JIT_FN T &
flat(const array<T, N> &a, i64 k)
{
    char *p = (char *)a.data;
    for (int d = N - 1; d >= 0; d--) {
        const i64 n = a.shape[d] > 0 ? a.shape[d] : 1;
        p += (k % n) * a.strides[d];
        k /= n;
    }
    return *(T *)p;
}

/* inf and nan, for Python's math.inf and math.nan */
PG_JIT_FN double
inf64()
{
    return __longlong_as_double(0x7ff0000000000000LL);
}
PG_JIT_FN double
nan64()
{
    return __longlong_as_double(0x7ff8000000000000LL);
}

/* assert in a kernel, as Numba's debug mode does it: no trap (on a GPU a
 * trap ends the context). The first thread whose assert fails writes into
 * the module's record (pg_jit_assert_record, 8 unsigned ints: which assert,
 * the thread, the block) and returns; the dispatcher reads the record after
 * the launch and raises KernelAssertionError naming the Python file and line.
 * A statement that called a device function with asserts returns when the
 * record is set (the callee returned a zero value). */
PG_JIT_FN void
assert_failed(unsigned int *record, unsigned int id)
{
    if (atomicCAS(record, 0u, id) == 0u) {
        record[1] = threadIdx.x;
        record[2] = threadIdx.y;
        record[3] = threadIdx.z;
        record[4] = blockIdx.x;
        record[5] = blockIdx.y;
        record[6] = blockIdx.z;
        __threadfence();
    }
}

PG_JIT_FN bool
failed(unsigned int *record)
{
    return *(volatile unsigned int *)record != 0u;
}

/* On the simulator, the Python line of the barrier each thread of the block
 * waits at (pg_jit_barrier_at, by the thread's rank), so that a divergent
 * barrier is reported with its line; nothing on a GPU. */
#ifdef __CUDACC__
#define PG_JIT_BARRIER_AT(id) ((void)0)
#else
#define PG_JIT_BARRIER_AT(id)                                                          \
    (pg_jit_barrier_at[threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)] = \
         (id))
#endif

/* Python's // and %: the quotient rounded down, the remainder with the
 * divisor's sign; by zero, NumPy's answers (0 for integers, inf or nan for
 * floats), as Numba's kernels give under its default error model */
#define PG_JIT_SIGNED(T)                                                               \
    PG_JIT_FN T floordiv(T a, T b)                                                     \
    {                                                                                  \
        if (b == 0) {                                                                  \
            return 0;                                                                  \
        }                                                                              \
        if (b == -1) { /* the most negative value / -1 would trap */                 \
            return (T)(0 - (unsigned long long)a);                                     \
        }                                                                              \
        T q = a / b;                                                                   \
        return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;                       \
    }                                                                                  \
    PG_JIT_FN T mod(T a, T b)                                                          \
    {                                                                                  \
        if (b == 0 || b == -1) {                                                       \
            return 0;                                                                  \
        }                                                                              \
        T r = a % b;                                                                   \
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                           \
    }
#define PG_JIT_UNSIGNED(T)                                                             \
    PG_JIT_FN T floordiv(T a, T b)                                                     \
    {                                                                                  \
        return b == 0 ? 0 : a / b;                                                     \
    }                                                                                  \
    PG_JIT_FN T mod(T a, T b)                                                          \
    {                                                                                  \
        return b == 0 ? 0 : a % b;                                                     \
    }
PG_JIT_SIGNED(int)
PG_JIT_SIGNED(long long)
PG_JIT_UNSIGNED(unsigned int)
PG_JIT_UNSIGNED(unsigned long long)
#undef PG_JIT_SIGNED
#undef PG_JIT_UNSIGNED

/* << and >> as a GPU shifts (PTX's shl and shr clamp the count to the
 * width): by the width or more, or by a negative count, << gives 0 and >>
 * the sign (0 or -1), on the simulator too, whose CPU masks the count */
template <class T> PG_JIT_FN T shl(T a, T b)
{
    return (unsigned long long)b >= sizeof(T) * 8 ? (T)0 : (T)(a << b);
}
template <class T> PG_JIT_FN T shr(T a, T b)
{
    return (unsigned long long)b >= sizeof(T) * 8 ? (T)(a < (T)0 ? -1 : 0) : (T)(a >> b);
}

PG_JIT_FN float
floordiv(float a, float b)
{
    if (b == 0.0f) {
        return a / b;
    }
    float m = fmodf(a, b);
    float d = (a - m) / b;
    if (m != 0.0f && ((b < 0.0f) != (m < 0.0f))) {
        d -= 1.0f;
    }
    if (d == 0.0f) {
        return copysignf(0.0f, a / b);
    }
    float f = floorf(d);
    return d - f > 0.5f ? f + 1.0f : f;
}
PG_JIT_FN double
floordiv(double a, double b)
{
    if (b == 0.0) {
        return a / b;
    }
    double m = fmod(a, b);
    double d = (a - m) / b;
    if (m != 0.0 && ((b < 0.0) != (m < 0.0))) {
        d -= 1.0;
    }
    if (d == 0.0) {
        return copysign(0.0, a / b);
    }
    double f = floor(d);
    return d - f > 0.5 ? f + 1.0 : f;
}
PG_JIT_FN float
mod(float a, float b)
{
    if (b == 0.0f) {
        return fmodf(a, b); /* nan */
    }
    float m = fmodf(a, b);
    if (m != 0.0f) {
        return (b < 0.0f) != (m < 0.0f) ? m + b : m;
    }
    return copysignf(0.0f, b);
}
PG_JIT_FN double
mod(double a, double b)
{
    if (b == 0.0) {
        return fmod(a, b);
    }
    double m = fmod(a, b);
    if (m != 0.0) {
        return (b < 0.0) != (m < 0.0) ? m + b : m;
    }
    return copysign(0.0, b);
}

/* integer ** integer: exact, by squaring; a negative exponent gives 1 / a**-e
 * truncated (0 but for a base of 1 or -1) */
PG_JIT_FN i64
ipow(i64 a, i64 e)
{
    if (e < 0) {
        return a == 1 ? 1 : a == -1 ? ((-e) & 1 ? -1 : 1) : 0;
    }
    i64 r = 1;
    while (e) {
        if (e & 1) {
            r *= a;
        }
        a *= a;
        e >>= 1;
    }
    return r;
}
PG_JIT_FN u64
ipow(u64 a, u64 e)
{
    u64 r = 1;
    while (e) {
        if (e & 1) {
            r *= a;
        }
        a *= a;
        e >>= 1;
    }
    return r;
}

/* Python's min and max of two: the first unless the second is smaller
 * (larger) */
template <class T>
PG_JIT_FN T
min2(T a, T b)
{
    return b < a ? b : a;
}
template <class T>
PG_JIT_FN T
max2(T a, T b)
{
    return b > a ? b : a;
}
template <class T>
PG_JIT_FN bool
isnan_(T x)
{
    return x != x;
}
template <class T>
PG_JIT_FN bool
isinf_(T x)
{
    return x == x && (x - x) != (x - x);
}
template <class T>
PG_JIT_FN bool
isfinite_(T x)
{
    return (x - x) == (x - x);
}

/* the lane of this thread in its warp: threads are ranked x first */
PG_JIT_FN int
laneid()
{
    return (int)(((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x) &
                 31u);
}

/* ---- atomics: every operation and type that Numba's cuda.atomic allows ---- */

PG_JIT_FN unsigned int
cas_bits(unsigned int *p, unsigned int expected, unsigned int v)
{
    return atomicCAS(p, expected, v);
}
PG_JIT_FN u64
cas_bits(u64 *p, u64 expected, u64 v)
{
    return atomicCAS(p, expected, v);
}
PG_JIT_FN unsigned int
to_bits(float x)
{
    return __float_as_uint(x);
}
PG_JIT_FN u64
to_bits(double x)
{
    return (u64)__double_as_longlong(x);
}
PG_JIT_FN unsigned int
to_bits(int x)
{
    return (unsigned int)x;
}
PG_JIT_FN unsigned int
to_bits(unsigned int x)
{
    return x;
}
PG_JIT_FN u64
to_bits(long long x)
{
    return (u64)x;
}
PG_JIT_FN u64
to_bits(u64 x)
{
    return x;
}
template <class T> struct bits_of;
template <> struct bits_of<float> {
    typedef unsigned int type;
    static PG_JIT_FN float back(unsigned int b) { return __uint_as_float(b); }
};
template <> struct bits_of<double> {
    typedef u64 type;
    static PG_JIT_FN double back(u64 b) { return __longlong_as_double((long long)b); }
};
template <> struct bits_of<int> {
    typedef unsigned int type;
    static PG_JIT_FN int back(unsigned int b) { return (int)b; }
};
template <> struct bits_of<unsigned int> {
    typedef unsigned int type;
    static PG_JIT_FN unsigned int back(unsigned int b) { return b; }
};
template <> struct bits_of<long long> {
    typedef u64 type;
    static PG_JIT_FN long long back(u64 b) { return (long long)b; }
};
template <> struct bits_of<u64> {
    typedef u64 type;
    static PG_JIT_FN u64 back(u64 b) { return b; }
};

/* op on *p by compare-and-swap of its bits: new = f(old, v); returns old */
template <class T, class F>
PG_JIT_FN T
cas_loop(T *p, T v, F f)
{
    typedef typename bits_of<T>::type B;
    B *q = (B *)p;
    B old = *(volatile B *)q, seen;
    do {
        seen = old;
        old = cas_bits(q, seen, to_bits(f(bits_of<T>::back(seen), v)));
    } while (old != seen);
    return bits_of<T>::back(old);
}

struct add_op {
    template <class T> PG_JIT_FN T operator()(T a, T b) const { return a + b; }
};
struct sub_op {
    template <class T> PG_JIT_FN T operator()(T a, T b) const { return a - b; }
};
struct exch_op {
    template <class T> PG_JIT_FN T operator()(T, T b) const { return b; }
};
struct and_op {
    template <class T> PG_JIT_FN T operator()(T a, T b) const { return a & b; }
};
struct or_op {
    template <class T> PG_JIT_FN T operator()(T a, T b) const { return a | b; }
};
struct xor_op {
    template <class T> PG_JIT_FN T operator()(T a, T b) const { return a ^ b; }
};
/* max and min: a NaN wins (as numpy.maximum); nanmax and nanmin: a NaN is
 * missing (as numpy.fmax) */
struct max_op {
    template <class T> PG_JIT_FN T operator()(T a, T b) const
    {
        return (a != a || b != b) ? (a != a ? a : b) : (b > a ? b : a);
    }
};
struct min_op {
    template <class T> PG_JIT_FN T operator()(T a, T b) const
    {
        return (a != a || b != b) ? (a != a ? a : b) : (b < a ? b : a);
    }
};
struct nanmax_op {
    template <class T> PG_JIT_FN T operator()(T a, T b) const
    {
        return a != a ? b : (b > a ? b : a);
    }
};
struct nanmin_op {
    template <class T> PG_JIT_FN T operator()(T a, T b) const
    {
        return a != a ? b : (b < a ? b : a);
    }
};
struct inc_op {
    template <class T> PG_JIT_FN T operator()(T a, T b) const { return a >= b ? 0 : a + 1; }
};
struct dec_op {
    template <class T> PG_JIT_FN T operator()(T a, T b) const
    {
        return (a == 0 || a > b) ? b : a - 1;
    }
};

/* the hardware's own where both backends have it */
PG_JIT_FN int
atomic_add(int *p, int v)
{
    return atomicAdd(p, v);
}
PG_JIT_FN unsigned int
atomic_add(unsigned int *p, unsigned int v)
{
    return atomicAdd(p, v);
}
PG_JIT_FN u64
atomic_add(u64 *p, u64 v)
{
    return atomicAdd(p, v);
}
PG_JIT_FN long long
atomic_add(long long *p, long long v)
{
    return (long long)atomicAdd((u64 *)p, (u64)v);
}
PG_JIT_FN float
atomic_add(float *p, float v)
{
    return atomicAdd(p, v);
}
PG_JIT_FN double
atomic_add(double *p, double v)
{
    return atomicAdd(p, v);
}
template <class T>
PG_JIT_FN T
atomic_sub(T *p, T v)
{
    return atomic_add(p, (T)(0 - v));
}
PG_JIT_FN float
atomic_sub(float *p, float v)
{
    return atomicAdd(p, -v);
}
PG_JIT_FN double
atomic_sub(double *p, double v)
{
    return atomicAdd(p, -v);
}
template <class T>
PG_JIT_FN T
atomic_cas(T *p, T expected, T v)
{
    typedef typename bits_of<T>::type B;
    return bits_of<T>::back(cas_bits((B *)p, to_bits(expected), to_bits(v)));
}
#define PG_JIT_BY_CAS(name, op)                                                        \
    template <class T> PG_JIT_FN T atomic_##name(T *p, T v)                            \
    {                                                                                  \
        return cas_loop(p, v, op());                                                   \
    }
PG_JIT_BY_CAS(exch, exch_op)
PG_JIT_BY_CAS(and, and_op)
PG_JIT_BY_CAS(or, or_op)
PG_JIT_BY_CAS(xor, xor_op)
PG_JIT_BY_CAS(max, max_op)
PG_JIT_BY_CAS(min, min_op)
PG_JIT_BY_CAS(nanmax, nanmax_op)
PG_JIT_BY_CAS(nanmin, nanmin_op)
PG_JIT_BY_CAS(inc, inc_op)
PG_JIT_BY_CAS(dec, dec_op)
#undef PG_JIT_BY_CAS

/* ---- Numba's xoroshiro128+ (numba.cuda.random): a state is two uint64 ---- */

PG_JIT_FN u64
rotl(u64 x, int k)
{
    return (x << k) | (x >> (64 - k));
}
PG_JIT_FN u64
xoroshiro128p_next(u64 *s)
{
    u64 s0 = s[0], s1 = s[1];
    u64 result = s0 + s1;
    s1 ^= s0;
    s[0] = rotl(s0, 55) ^ s1 ^ (s1 << 14);
    s[1] = rotl(s1, 36);
    return result;
}
PG_JIT_FN double
xoroshiro128p_uniform_float64(u64 *s)
{
    return (double)(xoroshiro128p_next(s) >> 11) * (1.0 / 9007199254740992.0);
}
PG_JIT_FN float
xoroshiro128p_uniform_float32(u64 *s)
{
    return (float)xoroshiro128p_uniform_float64(s);
}
/* Box-Muller, as Numba's: both draw two float32 uniforms; float64 takes
 * float32's log of the first, then its own arithmetic */
PG_JIT_FN double
xoroshiro128p_normal_float64(u64 *s)
{
    float u1 = xoroshiro128p_uniform_float32(s);
    float u2 = xoroshiro128p_uniform_float32(s);
    return sqrt(-2.0 * (double)logf(u1)) * cos(6.283185307179586 * (double)u2);
}
PG_JIT_FN float
xoroshiro128p_normal_float32(u64 *s)
{
    float u1 = xoroshiro128p_uniform_float32(s);
    float u2 = xoroshiro128p_uniform_float32(s);
    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831855f * u2);
}

} /* namespace pg_jit */

#endif /* PYGPU_JIT_H */
