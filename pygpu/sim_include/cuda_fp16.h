/* pygpu's simulator: half precision (cuda_fp16.h): __half (half), __half2
 * (half2), their operators and the common intrinsics and conversions, with a
 * GPU's rounding (pygpu_sim_lowp.h). */
#ifndef PYGPU_SIM_CUDA_FP16_H
#define PYGPU_SIM_CUDA_FP16_H
#include "pygpu_sim_lowp.h"

PG_SIM_LOWP(__half, __half_raw, half, pg_sim::half_bits, pg_sim::half_float)
typedef __half half;
typedef __half2 half2;

inline __half
__float2half(float f)
{
    return __half(f);
}
inline __half
__float2half_rn(float f)
{
    return __half(f);
}
inline __half
__double2half(double d)
{
    return __half(d);
}
inline float
__half2float(__half h)
{
    return (float)h;
}
inline __half
__int2half_rn(int i)
{
    return __half(i);
}
inline __half
__uint2half_rn(unsigned int i)
{
    return __half(i);
}
inline int
__half2int_rz(__half h)
{
    return (int)(float)h;
}
inline int
__half2int_rn(__half h)
{
    return (int)nearbyintf((float)h);
}
inline unsigned short
__half_as_ushort(__half h)
{
    return h.__x;
}
inline short
__half_as_short(__half h)
{
    return (short)h.__x;
}
inline __half
__ushort_as_half(unsigned short b)
{
    return __half_raw{b};
}
inline __half
__short_as_half(short b)
{
    return __half_raw{(unsigned short)b};
}
inline __half2
__float2half2_rn(float f)
{
    return __half2(__half(f), __half(f));
}
inline __half2
__floats2half2_rn(float a, float b)
{
    return __half2(__half(a), __half(b));
}
inline __half2
__float22half2_rn(float2 f)
{
    return __half2(__half(f.x), __half(f.y));
}
inline float2
__half22float2(__half2 h)
{
    return make_float2((float)h.x, (float)h.y);
}
inline float
__low2float(__half2 h)
{
    return (float)h.x;
}
inline float
__high2float(__half2 h)
{
    return (float)h.y;
}
inline __half2
make_half2(__half a, __half b)
{
    return __half2(a, b);
}
inline __half2
__half2half2(__half a)
{
    return __half2(a, a);
}
#endif /* PYGPU_SIM_CUDA_FP16_H */
