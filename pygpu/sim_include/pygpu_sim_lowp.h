/* pygpu's simulator: what cuda_fp16.h's __half and cuda_bf16.h's
 * __nv_bfloat16 have in common. Each is 2 bytes of IEEE-style bits; its
 * arithmetic is done in float and rounded to nearest even, as a GPU's
 * half-precision units give it (float holds the exact sum, difference and
 * product, and rounds the quotient so that the second rounding is exact).
 * Written for pygpu, after CUDA's documented interface. */
#ifndef PYGPU_SIM_LOWP_H
#define PYGPU_SIM_LOWP_H
#include <math.h>
#include <stdint.h>
#include <string.h>

namespace pg_sim {
/* float to binary16, rounded to nearest even */
inline unsigned short
half_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) { /* inf or nan */
        return (unsigned short)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0));
    }
    if (a >= 0x477ff000u) { /* rounds past 65504 */
        return (unsigned short)(sign | 0x7c00u);
    }
    if (a < 0x38800000u) { /* below the smallest normal: a subnormal or zero */
        float m;
        memcpy(&m, &a, 4);
        /* m / 2**-24, rounded to nearest even by the FPU */
        float q = nearbyintf(m * 16777216.0f);
        return (unsigned short)(sign | (uint32_t)q);
    }
    uint32_t e = (a >> 23) - 112, mant = a & 0x7fffffu;
    uint32_t bits = (e << 10) | (mant >> 13), rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (bits & 1))) {
        bits++;
    }
    return (unsigned short)(sign | bits);
}
inline float
half_float(unsigned short h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu,
             m = h & 0x3ffu;
    float f;
    if (e == 0) {
        f = ldexpf((float)m, -24);
        return sign ? -f : f;
    }
    uint32_t u =
        sign | (e == 31 ? 0x7f800000u | (m << 13) : ((e + 112) << 23) | (m << 13));
    memcpy(&f, &u, 4);
    return f;
}
/* float to bfloat16, rounded to nearest even */
inline unsigned short
bf16_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (unsigned short)((u >> 16) | 0x40u);
    }
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float
bf16_float(unsigned short b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
} /* namespace pg_sim */

/* T: the type, RAW: its raw struct, NAME: its name in the intrinsics'
 * names (__low2half), TO/FROM: float to bits and back */
#define PG_SIM_LOWP(T, RAW, NAME, TO, FROM)                                            \
    struct RAW {                                                                       \
        unsigned short x;                                                              \
    };                                                                                 \
    struct T {                                                                         \
        unsigned short __x;                                                            \
        T() = default;                                                                 \
        T(const RAW &r) : __x(r.x)                                                     \
        {                                                                              \
        }                                                                              \
        T(float f) : __x(TO(f))                                                        \
        {                                                                              \
        }                                                                              \
        T(double d) : __x(TO((float)d))                                                \
        {                                                                              \
        }                                                                              \
        T(int i) : __x(TO((float)i))                                                   \
        {                                                                              \
        }                                                                              \
        T(unsigned int i) : __x(TO((float)i))                                          \
        {                                                                              \
        }                                                                              \
        T(long long i) : __x(TO((float)i))                                             \
        {                                                                              \
        }                                                                              \
        T(unsigned long long i) : __x(TO((float)i))                                    \
        {                                                                              \
        }                                                                              \
        T(short i) : __x(TO((float)i))                                                 \
        {                                                                              \
        }                                                                              \
        T(unsigned short i) : __x(TO((float)i))                                        \
        {                                                                              \
        }                                                                              \
        operator float() const                                                         \
        {                                                                              \
            return FROM(__x);                                                          \
        }                                                                              \
        operator RAW() const                                                           \
        {                                                                              \
            return RAW{__x};                                                           \
        }                                                                              \
        T &operator=(const RAW &r)                                                     \
        {                                                                              \
            __x = r.x;                                                                 \
            return *this;                                                              \
        }                                                                              \
        T &operator+=(T o)                                                             \
        {                                                                              \
            return *this = T((float)*this + (float)o);                                 \
        }                                                                              \
        T &operator-=(T o)                                                             \
        {                                                                              \
            return *this = T((float)*this - (float)o);                                 \
        }                                                                              \
        T &operator*=(T o)                                                             \
        {                                                                              \
            return *this = T((float)*this * (float)o);                                 \
        }                                                                              \
        T &operator/=(T o)                                                             \
        {                                                                              \
            return *this = T((float)*this / (float)o);                                 \
        }                                                                              \
    };                                                                                 \
    inline T operator+(T a, T b)                                                       \
    {                                                                                  \
        return T((float)a + (float)b);                                                 \
    }                                                                                  \
    inline T operator-(T a, T b)                                                       \
    {                                                                                  \
        return T((float)a - (float)b);                                                 \
    }                                                                                  \
    inline T operator*(T a, T b)                                                       \
    {                                                                                  \
        return T((float)a * (float)b);                                                 \
    }                                                                                  \
    inline T operator/(T a, T b)                                                       \
    {                                                                                  \
        return T((float)a / (float)b);                                                 \
    }                                                                                  \
    inline T operator-(T a)                                                            \
    {                                                                                  \
        T r = a;                                                                       \
        r.__x ^= 0x8000u;                                                              \
        return r;                                                                      \
    }                                                                                  \
    inline T operator+(T a)                                                            \
    {                                                                                  \
        return a;                                                                      \
    }                                                                                  \
    inline bool operator==(T a, T b)                                                   \
    {                                                                                  \
        return (float)a == (float)b;                                                   \
    }                                                                                  \
    inline bool operator!=(T a, T b)                                                   \
    {                                                                                  \
        return (float)a != (float)b;                                                   \
    }                                                                                  \
    inline bool operator<(T a, T b)                                                    \
    {                                                                                  \
        return (float)a < (float)b;                                                    \
    }                                                                                  \
    inline bool operator<=(T a, T b)                                                   \
    {                                                                                  \
        return (float)a <= (float)b;                                                   \
    }                                                                                  \
    inline bool operator>(T a, T b)                                                    \
    {                                                                                  \
        return (float)a > (float)b;                                                    \
    }                                                                                  \
    inline bool operator>=(T a, T b)                                                   \
    {                                                                                  \
        return (float)a >= (float)b;                                                   \
    }                                                                                  \
    inline T __hadd(T a, T b)                                                          \
    {                                                                                  \
        return a + b;                                                                  \
    }                                                                                  \
    inline T __hsub(T a, T b)                                                          \
    {                                                                                  \
        return a - b;                                                                  \
    }                                                                                  \
    inline T __hmul(T a, T b)                                                          \
    {                                                                                  \
        return a * b;                                                                  \
    }                                                                                  \
    inline T __hdiv(T a, T b)                                                          \
    {                                                                                  \
        return a / b;                                                                  \
    }                                                                                  \
    inline T __hfma(T a, T b, T c)                                                     \
    {                                                                                  \
        return T((float)fma((double)(float)a * (float)b, 1.0, (double)(float)c));      \
    }                                                                                  \
    inline T __hneg(T a)                                                               \
    {                                                                                  \
        return -a;                                                                     \
    }                                                                                  \
    inline T __habs(T a)                                                               \
    {                                                                                  \
        T r = a;                                                                       \
        r.__x &= 0x7fffu;                                                              \
        return r;                                                                      \
    }                                                                                  \
    inline T __hmax(T a, T b)                                                          \
    {                                                                                  \
        return T(fmaxf((float)a, (float)b));                                           \
    }                                                                                  \
    inline T __hmin(T a, T b)                                                          \
    {                                                                                  \
        return T(fminf((float)a, (float)b));                                           \
    }                                                                                  \
    inline bool __heq(T a, T b)                                                        \
    {                                                                                  \
        return a == b;                                                                 \
    }                                                                                  \
    inline bool __hne(T a, T b)                                                        \
    {                                                                                  \
        return a != b;                                                                 \
    }                                                                                  \
    inline bool __hlt(T a, T b)                                                        \
    {                                                                                  \
        return a < b;                                                                  \
    }                                                                                  \
    inline bool __hle(T a, T b)                                                        \
    {                                                                                  \
        return a <= b;                                                                 \
    }                                                                                  \
    inline bool __hgt(T a, T b)                                                        \
    {                                                                                  \
        return a > b;                                                                  \
    }                                                                                  \
    inline bool __hge(T a, T b)                                                        \
    {                                                                                  \
        return a >= b;                                                                 \
    }                                                                                  \
    inline bool __hisnan(T a)                                                          \
    {                                                                                  \
        return isnan((float)a);                                                        \
    }                                                                                  \
    inline int __hisinf(T a)                                                           \
    {                                                                                  \
        return isinf((float)a) ? ((float)a < 0 ? -1 : 1) : 0;                          \
    }                                                                                  \
    inline T hsqrt(T a)                                                                \
    {                                                                                  \
        return T(sqrtf((float)a));                                                     \
    }                                                                                  \
    inline T hrsqrt(T a)                                                               \
    {                                                                                  \
        return T(1.0f / sqrtf((float)a));                                              \
    }                                                                                  \
    inline T hrcp(T a)                                                                 \
    {                                                                                  \
        return T(1.0f / (float)a);                                                     \
    }                                                                                  \
    inline T hexp(T a)                                                                 \
    {                                                                                  \
        return T(expf((float)a));                                                      \
    }                                                                                  \
    inline T hlog(T a)                                                                 \
    {                                                                                  \
        return T(logf((float)a));                                                      \
    }                                                                                  \
    inline T hsin(T a)                                                                 \
    {                                                                                  \
        return T(sinf((float)a));                                                      \
    }                                                                                  \
    inline T hcos(T a)                                                                 \
    {                                                                                  \
        return T(cosf((float)a));                                                      \
    }                                                                                  \
    inline T htanh(T a)                                                                \
    {                                                                                  \
        return T(tanhf((float)a));                                                     \
    }                                                                                  \
    inline T hfloor(T a)                                                               \
    {                                                                                  \
        return T(floorf((float)a));                                                    \
    }                                                                                  \
    inline T hceil(T a)                                                                \
    {                                                                                  \
        return T(ceilf((float)a));                                                     \
    }                                                                                  \
    inline T htrunc(T a)                                                               \
    {                                                                                  \
        return T(truncf((float)a));                                                    \
    }                                                                                  \
    inline T hrint(T a)                                                                \
    {                                                                                  \
        return T(nearbyintf((float)a));                                                \
    }                                                                                  \
    struct alignas(4) T##2                                                             \
    {                                                                                  \
        T x, y;                                                                        \
        T##2() = default;                                                              \
        T##2(T a, T b) : x(a), y(b)                                                    \
        {                                                                              \
        }                                                                              \
    };                                                                                 \
    inline T##2 operator+(T##2 a, T##2 b)                                              \
    {                                                                                  \
        return T##2(a.x + b.x, a.y + b.y);                                             \
    }                                                                                  \
    inline T##2 operator-(T##2 a, T##2 b)                                              \
    {                                                                                  \
        return T##2(a.x - b.x, a.y - b.y);                                             \
    }                                                                                  \
    inline T##2 operator*(T##2 a, T##2 b)                                              \
    {                                                                                  \
        return T##2(a.x * b.x, a.y * b.y);                                             \
    }                                                                                  \
    inline T##2 operator/(T##2 a, T##2 b)                                              \
    {                                                                                  \
        return T##2(a.x / b.x, a.y / b.y);                                             \
    }                                                                                  \
    inline T##2 &operator+=(T##2 & a, T##2 b)                                          \
    {                                                                                  \
        return a = a + b;                                                              \
    }                                                                                  \
    inline T##2 &operator*=(T##2 & a, T##2 b)                                          \
    {                                                                                  \
        return a = a * b;                                                              \
    }                                                                                  \
    inline T##2 __hadd2(T##2 a, T##2 b)                                                \
    {                                                                                  \
        return a + b;                                                                  \
    }                                                                                  \
    inline T##2 __hsub2(T##2 a, T##2 b)                                                \
    {                                                                                  \
        return a - b;                                                                  \
    }                                                                                  \
    inline T##2 __hmul2(T##2 a, T##2 b)                                                \
    {                                                                                  \
        return a * b;                                                                  \
    }                                                                                  \
    inline T##2 __h2div(T##2 a, T##2 b)                                                \
    {                                                                                  \
        return a / b;                                                                  \
    }                                                                                  \
    inline T##2 __hfma2(T##2 a, T##2 b, T##2 c)                                        \
    {                                                                                  \
        return T##2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));                     \
    }                                                                                  \
    inline T##2 __hneg2(T##2 a)                                                        \
    {                                                                                  \
        return T##2(-a.x, -a.y);                                                       \
    }                                                                                  \
    inline T##2 __habs2(T##2 a)                                                        \
    {                                                                                  \
        return T##2(__habs(a.x), __habs(a.y));                                         \
    }                                                                                  \
    inline T##2 __lows2##NAME##2(T##2 a, T##2 b)                                       \
    {                                                                                  \
        return T##2(a.x, b.x);                                                         \
    }                                                                                  \
    inline T __low2##NAME(T##2 a)                                                      \
    {                                                                                  \
        return a.x;                                                                    \
    }                                                                                  \
    inline T __high2##NAME(T##2 a)                                                     \
    {                                                                                  \
        return a.y;                                                                    \
    }                                                                                  \
    inline T##2 __halves2##NAME##2(T a, T b)                                           \
    {                                                                                  \
        return T##2(a, b);                                                             \
    }

#endif /* PYGPU_SIM_LOWP_H */
