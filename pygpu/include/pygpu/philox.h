/* pygpu's counter-based random numbers (pygpu.random): Philox4x32-10 (Salmon,
 * Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC11)
 * and the distributions made from it.
 *
 * A generator's state is a 64-bit key and a 64-bit counter offset. Element i
 * of a result that takes K values from each Philox call (K = 4 for 32-bit
 * values, 2 for 64-bit ones) is made from the words of the call whose counter
 * is (offset + i / K, attempt, 0), attempt 0 except for integers' rare
 * redraws; the generator then advances its offset by ceil(n / K). So a value
 * depends only on (key, offset, i): not on the launch configuration, the
 * order of threads, the GPU or the simulator.
 *
 * Bit-identical everywhere: the distributions use only integer arithmetic and
 * IEEE-754 operations that are correctly rounded on both a GPU and the host
 * (+ - * / sqrt and fma, no library log or sin, whose last bits differ
 * between CUDA's libdevice and the host's libm): log and sincos below are
 * written out. Every multiply-add is an explicit fma, and no product feeds an
 * addition otherwise (but for exact ones), so that no compiler can contract
 * one differently; the unit is also compiled with --fmad=false.
 *
 * Grid-stride loops over groups of K elements, 64-bit indices, and stores of
 * the whole group at once where the output is aligned for it (coalesced). */
#ifndef PYGPU_PHILOX_H
#define PYGPU_PHILOX_H

#include <pygpu/ufunc.h>

namespace pg {
namespace rng {

/* ---- Philox4x32-10 ----------------------------------------------------------- */
struct words {
    unsigned int w[4];
};

PG_FN words
philox(unsigned long long ctr, unsigned int attempt, unsigned int k0, unsigned int k1)
{
    unsigned int c0 = (unsigned int)ctr, c1 = (unsigned int)(ctr >> 32), c2 = attempt,
                 c3 = 0;
#pragma unroll
    for (int r = 0; r < 10; r++) {
        const unsigned long long p0 = (unsigned long long)0xD2511F53u * c0;
        const unsigned long long p1 = (unsigned long long)0xCD9E8D57u * c2;
        const unsigned int n0 = (unsigned int)(p1 >> 32) ^ c1 ^ k0;
        const unsigned int n2 = (unsigned int)(p0 >> 32) ^ c3 ^ k1;
        c1 = (unsigned int)p1;
        c3 = (unsigned int)p0;
        c0 = n0;
        c2 = n2;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    words out = {{c0, c1, c2, c3}};
    return out;
}

/* the words of two calls (counters a and b, attempt 0), their rounds side by
 * side: the same words as two philox() calls (normal's PG_RNG_PAIR 1) */
#ifndef PG_RNG_PAIR
#define PG_RNG_PAIR 0
#endif
PG_FN void
philox2(unsigned long long a, unsigned long long b, unsigned int k0, unsigned int k1,
        words (&out)[2])
{
    unsigned int c[2][4] = {{(unsigned int)a, (unsigned int)(a >> 32), 0u, 0u},
                            {(unsigned int)b, (unsigned int)(b >> 32), 0u, 0u}};
#pragma unroll
    for (int r = 0; r < 10; r++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const unsigned long long p0 = (unsigned long long)0xD2511F53u * c[h][0];
            const unsigned long long p1 = (unsigned long long)0xCD9E8D57u * c[h][2];
            const unsigned int n0 = (unsigned int)(p1 >> 32) ^ c[h][1] ^ k0;
            const unsigned int n2 = (unsigned int)(p0 >> 32) ^ c[h][3] ^ k1;
            c[h][1] = (unsigned int)p1;
            c[h][3] = (unsigned int)p0;
            c[h][0] = n0;
            c[h][2] = n2;
        }
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            out[h].w[j] = c[h][j];
        }
    }
}

/* ---- uniform floats: NumPy's [0, 1) from 24 or 53 bits, and (0, 1] ------------ */
PG_FN float
unit_f32(unsigned int w)
{
    return (float)(w >> 8) * 5.9604644775390625e-08f; /* 2^-24 */
}
PG_FN double
unit_f64(unsigned int hi, unsigned int lo)
{
    const unsigned long long x = ((unsigned long long)hi << 32 | lo) >> 11;
    return (double)x * 1.1102230246251565404e-16; /* 2^-53 */
}
PG_FN float
open_f32(unsigned int w)
{
    return (float)((w >> 8) + 1u) * 5.9604644775390625e-08f;
}
PG_FN double
open_f64(unsigned int hi, unsigned int lo)
{
    const unsigned long long x = (((unsigned long long)hi << 32 | lo) >> 11) + 1ull;
    return (double)x * 1.1102230246251565404e-16;
}

/* ---- log of a positive normal number, written out ------------------------------ *
 * x = m 2^e with m in [sqrt(1/2), sqrt(2)), f = m - 1, s = f / (2 + f):
 * log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), R(z) = sum_k 2 z^k / (2k + 1)
 * (the series of 2 atanh(s), |s| < 0.172), as fdlibm arranges it; e ln 2 in
 * two parts (the high one exact for any e). Within 2 ulp. */
PG_FN float
log_f32(float x)
{
    unsigned int b = __float_as_uint(x);
    int e = (int)(b >> 23) - 127;
    b = (b & 0x7fffffu) | 0x3f800000u;
    if (b > 0x3fb504f3u) { /* m > sqrt(2): halve it */
        b -= 0x00800000u;
        e += 1;
    }
    const float f = __uint_as_float(b) - 1.0f;
    const float s = f / (2.0f + f), z = s * s;
    float r = 0.22222222222222222f;
    r = fmaf(r, z, 0.28571428571428571f);
    r = fmaf(r, z, 0.4f);
    r = fmaf(r, z, 0.66666666666666667f);
    const float hfsq = (0.5f * f) * f, fe = (float)e;
    const float t = fmaf(s, fmaf(r, z, hfsq), fe * 9.0580006145e-06f);
    return fe * 6.9313812256e-01f - ((hfsq - t) - f);
}

PG_FN double
log_f64(double x)
{
    unsigned long long b = (unsigned long long)__double_as_longlong(x);
    int e = (int)(b >> 52) - 1023;
    b = (b & 0xfffffffffffffull) | 0x3ff0000000000000ull;
    if (b > 0x3ff6a09e667f3bcdull) {
        b -= 0x0010000000000000ull;
        e += 1;
    }
    const double f = __longlong_as_double((long long)b) - 1.0;
    const double s = f / (2.0 + f), z = s * s;
    double r = 0.095238095238095238; /* 2/21 */
    r = fma(r, z, 0.10526315789473684);
    r = fma(r, z, 0.11764705882352941);
    r = fma(r, z, 0.13333333333333333);
    r = fma(r, z, 0.15384615384615385);
    r = fma(r, z, 0.18181818181818182);
    r = fma(r, z, 0.22222222222222222);
    r = fma(r, z, 0.28571428571428571);
    r = fma(r, z, 0.4);
    r = fma(r, z, 0.66666666666666667);
    const double hfsq = (0.5 * f) * f, fe = (double)e;
    const double t = fma(s, fma(r, z, hfsq), fe * 1.90821492927058770002e-10);
    return fe * 6.93147180369123816490e-01 - ((hfsq - t) - f);
}

/* ---- sin and cos of 2 pi k / 2^bits, written out ------------------------------- *
 * The turn is a fixed-point integer, so the reduction to the nearest quadrant
 * is exact: x = 2 pi d / 2^bits with |x| <= pi/4, then Taylor polynomials
 * (to x^9 and x^10 in float, x^17 and x^18 in double). Within 2 ulp. */
/* sin and cos of x + q pi/2 from sn = sin x and cs = cos x. PG_RNG_SELECT 0:
 * a switch (which a GPU runs as branches, a warp's lanes apart where their
 * quadrants differ); 1: the same values chosen without branches (a
 * negation is exact either way: the same bits) */
#ifndef PG_RNG_SELECT
#define PG_RNG_SELECT 1
#endif
template <class T>
PG_FN void
sincos_quadrant(unsigned int q, T sn, T cs, T *s, T *c)
{
#if PG_RNG_SELECT
    const T a = (q & 1u) ? cs : sn, b = (q & 1u) ? sn : cs;
    *s = (q & 2u) ? -a : a;
    *c = ((q + 1u) & 2u) ? -b : b;
#else
    switch (q) {
    case 0: *s = sn, *c = cs; break;
    case 1: *s = cs, *c = -sn; break;
    case 2: *s = -sn, *c = -cs; break;
    default: *s = -cs, *c = sn; break;
    }
#endif
}

PG_FN void
sincos_turn_f32(unsigned int w, float *s, float *c)
{
    const unsigned int k = w >> 8; /* 24 bits of the turn */
    const unsigned int qq = (k + (1u << 21)) >> 22, q = qq & 3u; /* nearest quadrant */
    const int d = (int)k - (int)(qq << 22);                      /* |d| <= 2^21 */
    const float x = (float)d * 3.7450702829239286e-07f, z = x * x; /* 2 pi / 2^24 */
    float ps = 2.7557319223985893e-06f;
    ps = fmaf(ps, z, -0.0001984126984126984f);
    ps = fmaf(ps, z, 0.008333333333333333f);
    ps = fmaf(ps, z, -0.16666666666666666f);
    const float sn = fmaf(ps * z, x, x);
    float pc = -2.755731922398589e-07f;
    pc = fmaf(pc, z, 2.48015873015873e-05f);
    pc = fmaf(pc, z, -0.001388888888888889f);
    pc = fmaf(pc, z, 0.041666666666666664f);
    pc = fmaf(pc, z, -0.5f);
    const float cs = fmaf(pc, z, 1.0f);
    sincos_quadrant(q, sn, cs, s, c);
}

PG_FN void
sincos_turn_f64(unsigned long long w, double *s, double *c)
{
    const unsigned long long k = w >> 11; /* 53 bits of the turn */
    const unsigned long long qq = (k + (1ull << 50)) >> 51, q = qq & 3ull;
    const long long d = (long long)k - (long long)(qq << 51);
    const double x = (double)d * 6.975736996017264e-16, z = x * x; /* 2 pi / 2^53 */
    double ps = 2.8114572543455206e-15;                            /* 1/17! */
    ps = fma(ps, z, -7.647163731819816e-13);
    ps = fma(ps, z, 1.6059043836821613e-10);
    ps = fma(ps, z, -2.505210838544172e-08);
    ps = fma(ps, z, 2.7557319223985893e-06);
    ps = fma(ps, z, -0.0001984126984126984);
    ps = fma(ps, z, 0.008333333333333333);
    ps = fma(ps, z, -0.16666666666666666);
    const double sn = fma(ps * z, x, x);
    double pc = 1.5619206968586225e-16; /* 1/18! */
    pc = fma(pc, z, -4.779477332387385e-14);
    pc = fma(pc, z, 1.1470745597729725e-11);
    pc = fma(pc, z, -2.08767569878681e-09);
    pc = fma(pc, z, 2.755731922398589e-07);
    pc = fma(pc, z, -2.48015873015873e-05);
    pc = fma(pc, z, 0.001388888888888889);
    pc = fma(pc, z, -0.041666666666666664);
    pc = fma(pc, z, 0.5);
    const double cs = fma(-pc, z, 1.0);
    sincos_quadrant((unsigned int)q, sn, cs, s, c);
}

/* ---- storing a group of K values --------------------------------------------- */
template <class T, int K> struct alignas(K * sizeof(T)) group {
    T v[K];
};

/* Values g.v[0..K) of elements i0, i0 + 1, ... of out (n elements): at once
 * where the whole group is inside and aligned, else one by one. */
template <class T, int K>
PG_FN void
store(T *out, long long i0, long long n, const group<T, K> &g)
{
    T *p = out + i0;
    if (i0 + K <= n && ((unsigned long long)p % sizeof(group<T, K>)) == 0) {
        *(group<T, K> *)p = g;
        return;
    }
#pragma unroll
    for (int j = 0; j < K; j++) {
        if (i0 + j < n) {
            p[j] = g.v[j];
        }
    }
}

#define PG_RNG_LOOP(K)                                                                 \
    const long long groups = (n + (K)-1) / (K);                                        \
    const long long step = (long long)gridDim.x * blockDim.x;                          \
    for (long long gi = (long long)blockIdx.x * blockDim.x + threadIdx.x; gi < groups; \
         gi += step)

/* ---- distributions ---------------------------------------------------------- */
/* low + range u, u uniform in [0, 1) (random: low 0, range 1, exactly u) */
template <class T>
PG_FN void uniform(T *out, long long n, unsigned int k0, unsigned int k1,
                   unsigned long long offset, T low, T range);

template <>
PG_FN void
uniform<float>(float *out, long long n, unsigned int k0, unsigned int k1,
               unsigned long long offset, float low, float range)
{
    PG_RNG_LOOP(4)
    {
        const words w = philox(offset + (unsigned long long)gi, 0, k0, k1);
        group<float, 4> g;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            g.v[j] = fmaf(range, unit_f32(w.w[j]), low);
        }
        store(out, gi * 4, n, g);
    }
}

template <>
PG_FN void
uniform<double>(double *out, long long n, unsigned int k0, unsigned int k1,
                unsigned long long offset, double low, double range)
{
    PG_RNG_LOOP(2)
    {
        const words w = philox(offset + (unsigned long long)gi, 0, k0, k1);
        group<double, 2> g;
        g.v[0] = fma(range, unit_f64(w.w[0], w.w[1]), low);
        g.v[1] = fma(range, unit_f64(w.w[2], w.w[3]), low);
        store(out, gi * 2, n, g);
    }
}

/* loc + scale z, z standard normal by Box-Muller: sqrt(-2 log u1) times the
 * cos and sin of 2 pi u2, u1 in (0, 1]: four float32 values from a call's words */
PG_FN group<float, 4>
normal_f32x4(const words &w, float loc, float scale)
{
    group<float, 4> g;
#pragma unroll
    for (int j = 0; j < 4; j += 2) {
        const float r = sqrtf(-2.0f * log_f32(open_f32(w.w[j])));
        float s, c;
        sincos_turn_f32(w.w[j + 1], &s, &c);
        g.v[j] = fmaf(r * c, scale, loc);
        g.v[j + 1] = fmaf(r * s, scale, loc);
    }
    return g;
}

template <class T>
PG_FN void normal(T *out, long long n, unsigned int k0, unsigned int k1,
                  unsigned long long offset, T loc, T scale);

template <>
PG_FN void
normal<float>(float *out, long long n, unsigned int k0, unsigned int k1,
              unsigned long long offset, float loc, float scale)
{
#if PG_RNG_PAIR
    /* two groups a thread a step, their Philox rounds side by side (the round
     * keys computed once for both); each group's values as below */
    const long long groups = (n + 3) / 4, pairs = (groups + 1) / 2;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long pi = (long long)blockIdx.x * blockDim.x + threadIdx.x; pi < pairs;
         pi += step) {
        const long long g0 = 2 * pi;
        words w[2];
        philox2(offset + (unsigned long long)g0, offset + (unsigned long long)g0 + 1ull,
                k0, k1, w);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            if (g0 + h < groups) {
                store(out, (g0 + h) * 4, n, normal_f32x4(w[h], loc, scale));
            }
        }
    }
#else
    PG_RNG_LOOP(4)
    {
        const words w = philox(offset + (unsigned long long)gi, 0, k0, k1);
        store(out, gi * 4, n, normal_f32x4(w, loc, scale));
    }
#endif
}

template <>
PG_FN void
normal<double>(double *out, long long n, unsigned int k0, unsigned int k1,
               unsigned long long offset, double loc, double scale)
{
    PG_RNG_LOOP(2)
    {
        const words w = philox(offset + (unsigned long long)gi, 0, k0, k1);
        group<double, 2> g;
        const double r = sqrt(-2.0 * log_f64(open_f64(w.w[0], w.w[1])));
        double s, c;
        sincos_turn_f64((unsigned long long)w.w[2] << 32 | w.w[3], &s, &c);
        g.v[0] = fma(r * c, scale, loc);
        g.v[1] = fma(r * s, scale, loc);
        store(out, gi * 2, n, g);
    }
}

/* scale times -log u, u in (0, 1] */
template <class T>
PG_FN void exponential(T *out, long long n, unsigned int k0, unsigned int k1,
                       unsigned long long offset, T scale);

template <>
PG_FN void
exponential<float>(float *out, long long n, unsigned int k0, unsigned int k1,
                   unsigned long long offset, float scale)
{
    PG_RNG_LOOP(4)
    {
        const words w = philox(offset + (unsigned long long)gi, 0, k0, k1);
        group<float, 4> g;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            g.v[j] = -log_f32(open_f32(w.w[j])) * scale;
        }
        store(out, gi * 4, n, g);
    }
}

template <>
PG_FN void
exponential<double>(double *out, long long n, unsigned int k0, unsigned int k1,
                    unsigned long long offset, double scale)
{
    PG_RNG_LOOP(2)
    {
        const words w = philox(offset + (unsigned long long)gi, 0, k0, k1);
        group<double, 2> g;
        g.v[0] = -log_f64(open_f64(w.w[0], w.w[1])) * scale;
        g.v[1] = -log_f64(open_f64(w.w[2], w.w[3])) * scale;
        store(out, gi * 2, n, g);
    }
}

/* ---- integers in [low, low + m]: Lemire's method, unbiased ---------------------- *
 * v = (x (m + 1)) >> bits, rejecting x where the low half falls below
 * 2^bits mod (m + 1); a rejected element takes the same word of the call with
 * the next attempt (counter word 2), so that redraws keep every value a
 * function of (key, offset, i). m < 2^32: a 32-bit word an element (K = 4);
 * else 64 bits (K = 2); m = 2^64 - 1: the bits themselves. */
template <class T>
PG_FN void
integers32(T *out, long long n, unsigned int k0, unsigned int k1,
           unsigned long long offset, unsigned long long low, unsigned int m)
{
    const unsigned int s = m + 1u, t = s ? (0u - s) % s : 0u; /* once a thread */
    PG_RNG_LOOP(4)
    {
        const unsigned long long ctr = offset + (unsigned long long)gi;
        words w = philox(ctr, 0, k0, k1);
        unsigned int v[4];
        if (m == 0xffffffffu) {
#pragma unroll
            for (int j = 0; j < 4; j++) {
                v[j] = w.w[j];
            }
        }
        else {
            unsigned int pending = 0;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const unsigned long long p = (unsigned long long)w.w[j] * s;
                v[j] = (unsigned int)(p >> 32);
                pending |= ((unsigned int)p < t) << j;
            }
            for (unsigned int a = 1; pending; a++) {
                w = philox(ctr, a, k0, k1);
                for (int j = 0; j < 4; j++) {
                    if (pending >> j & 1u) {
                        const unsigned long long p = (unsigned long long)w.w[j] * s;
                        v[j] = (unsigned int)(p >> 32);
                        if ((unsigned int)p >= t) {
                            pending &= ~(1u << j);
                        }
                    }
                }
            }
        }
        group<T, 4> g;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            g.v[j] = cast<T>(low + v[j]);
        }
        store(out, gi * 4, n, g);
    }
}

template <class T>
PG_FN void
integers64(T *out, long long n, unsigned int k0, unsigned int k1,
           unsigned long long offset, unsigned long long low, unsigned long long m)
{
    const unsigned long long s = m + 1ull, t = s ? (0ull - s) % s : 0ull;
    PG_RNG_LOOP(2)
    {
        const unsigned long long ctr = offset + (unsigned long long)gi;
        words w = philox(ctr, 0, k0, k1);
        unsigned long long v[2];
        if (m == ~0ull) {
            v[0] = (unsigned long long)w.w[0] << 32 | w.w[1];
            v[1] = (unsigned long long)w.w[2] << 32 | w.w[3];
        }
        else {
            unsigned int pending = 0;
#pragma unroll
            for (int j = 0; j < 2; j++) {
                const unsigned long long x =
                    (unsigned long long)w.w[2 * j] << 32 | w.w[2 * j + 1];
                v[j] = __umul64hi(x, s);
                pending |= ((x * s) < t) << j;
            }
            for (unsigned int a = 1; pending; a++) {
                w = philox(ctr, a, k0, k1);
                for (int j = 0; j < 2; j++) {
                    if (pending >> j & 1u) {
                        const unsigned long long x =
                            (unsigned long long)w.w[2 * j] << 32 | w.w[2 * j + 1];
                        v[j] = __umul64hi(x, s);
                        if (x * s >= t) {
                            pending &= ~(1u << j);
                        }
                    }
                }
            }
        }
        group<T, 2> g;
        g.v[0] = cast<T>(low + v[0]);
        g.v[1] = cast<T>(low + v[1]);
        store(out, gi * 2, n, g);
    }
}

/* bounds for each element: element i in [low[i], low[i] + m[i]], by 64-bit
 * Lemire (K = 2) whatever the range, so that the counters an element takes do
 * not depend on the other elements' ranges */
template <class T>
PG_FN void
integers_each(T *out, long long n, unsigned int k0, unsigned int k1,
              unsigned long long offset, const unsigned long long *low,
              const unsigned long long *m)
{
    PG_RNG_LOOP(2)
    {
        const unsigned long long ctr = offset + (unsigned long long)gi;
        const words w = philox(ctr, 0, k0, k1);
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const long long i = gi * 2 + j;
            if (i >= n) {
                break;
            }
            const unsigned long long mi = m[i];
            unsigned long long x =
                (unsigned long long)w.w[2 * j] << 32 | w.w[2 * j + 1];
            unsigned long long v = x;
            if (mi != ~0ull) {
                const unsigned long long s = mi + 1ull;
                v = __umul64hi(x, s);
                if (x * s < s) { /* only then can it be rejected */
                    const unsigned long long t = (0ull - s) % s;
                    for (unsigned int a = 1; x * s < t; a++) {
                        const words r = philox(ctr, a, k0, k1);
                        x = (unsigned long long)r.w[2 * j] << 32 | r.w[2 * j + 1];
                        v = __umul64hi(x, s);
                    }
                }
            }
            out[i] = cast<T>(low[i] + v);
        }
    }
}

/* ---- a keyed permutation of [0, n) ----------------------------------------------- *
 * A balanced Feistel network of 8 rounds on 2h bits (4^h >= n), whose round
 * function is a multiply-xorshift hash of the half and a round key (the words
 * of the calls at counters offset and offset + 1), with cycle-walking: apply
 * it again while the value is >= n (fewer than 4 times on average, as
 * 4^h < 4n). A bijection, computed for each index on its own: O(n), no sort. */
struct feistel {
    unsigned int key[8];
    unsigned int h;
    unsigned long long mask;
};

PG_FN feistel
make_feistel(unsigned long long n, unsigned int k0, unsigned int k1,
             unsigned long long offset)
{
    feistel f;
    const words a = philox(offset, 0, k0, k1), b = philox(offset + 1ull, 0, k0, k1);
    for (int j = 0; j < 4; j++) {
        f.key[j] = a.w[j];
        f.key[4 + j] = b.w[j];
    }
    f.h = 1;
    while (f.h < 32 && (1ull << (2 * f.h)) < n) {
        f.h++;
    }
    f.mask = (1ull << f.h) - 1ull;
    return f;
}

PG_FN unsigned long long
feistel_once(const feistel &f, unsigned long long x)
{
    unsigned long long l = x >> f.h, r = x & f.mask;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        unsigned int y = (unsigned int)r ^ f.key[k];
        y *= 0x7feb352du;
        y ^= y >> 15;
        y *= 0x846ca68bu;
        y ^= y >> 16;
        const unsigned long long nr = (l ^ y) & f.mask;
        l = r;
        r = nr;
    }
    return l << f.h | r;
}

PG_FN unsigned long long
permute(const feistel &f, unsigned long long n, unsigned long long i)
{
    unsigned long long x = feistel_once(f, i);
    while (x >= n) {
        x = feistel_once(f, x);
    }
    return x;
}

/* out[i] = the permutation of [0, n) at i, for i < count */
PG_FN void
permutation_index(long long *out, long long count, long long n, unsigned int k0,
                  unsigned int k1, unsigned long long offset)
{
    const feistel f = make_feistel((unsigned long long)n, k0, k1, offset);
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += step) {
        out[i] = (long long)permute(f, (unsigned long long)n, (unsigned long long)i);
    }
}

/* Rows of `width` words: out row r = in row idx[r], or, with idx null, in
 * row (the permutation of [0, n) at r); rows r < count. */
template <class W>
PG_FN void
rows(W *out, const W *in, const long long *idx, long long count, long long n,
     long long width, unsigned int k0, unsigned int k1, unsigned long long offset)
{
    const feistel f = make_feistel((unsigned long long)n, k0, k1, offset);
    const long long total = count * width;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += step) {
        const long long r = t / width, c = t - r * width;
        const long long src =
            idx ? idx[r]
                : (long long)permute(f, (unsigned long long)n, (unsigned long long)r);
        out[t] = in[src * width + c];
    }
}

/* out[i]: the first k with cdf[k] / cdf[n - 1] > u (NumPy's
 * cdf.searchsorted(u, side='right') on the normalized cdf), u uniform in
 * [0, 1) from 53 bits */
PG_FN void
choice_cdf(long long *out, long long count, const double *cdf, long long n,
           unsigned int k0, unsigned int k1, unsigned long long offset)
{
    const double total = cdf[n - 1];
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += step) {
        const words w = philox(offset + (unsigned long long)(i >> 1), 0, k0, k1);
        const int j = (int)(i & 1) * 2;
        const double u = unit_f64(w.w[j], w.w[j + 1]);
        long long lo = 0, hi = n - 1; /* cdf[n - 1] / total = 1 > u */
        while (lo < hi) {
            const long long mid = lo + (hi - lo) / 2;
            if (cdf[mid] / total > u) {
                hi = mid;
            }
            else {
                lo = mid + 1;
            }
        }
        out[i] = lo;
    }
}

#undef PG_RNG_LOOP

} /* namespace rng */
} /* namespace pg */

#endif /* PYGPU_PHILOX_H */
