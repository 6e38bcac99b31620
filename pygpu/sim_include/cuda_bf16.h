/* pygpu's simulator: bfloat16 (cuda_bf16.h): __nv_bfloat16, __nv_bfloat162,
 * their operators and the common intrinsics and conversions, with a GPU's
 * rounding (pygpu_sim_lowp.h). */
#ifndef PYGPU_SIM_CUDA_BF16_H
#define PYGPU_SIM_CUDA_BF16_H
#include "cuda_fp16.h"

PG_SIM_LOWP(__nv_bfloat16, __nv_bfloat16_raw, bfloat16, pg_sim::bf16_bits,
            pg_sim::bf16_float)
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

inline __nv_bfloat16
__float2bfloat16(float f)
{
    return __nv_bfloat16(f);
}
inline __nv_bfloat16
__float2bfloat16_rn(float f)
{
    return __nv_bfloat16(f);
}
inline __nv_bfloat16
__double2bfloat16(double d)
{
    return __nv_bfloat16(d);
}
inline float
__bfloat162float(__nv_bfloat16 b)
{
    return (float)b;
}
inline __nv_bfloat16
__int2bfloat16_rn(int i)
{
    return __nv_bfloat16(i);
}
inline unsigned short
__bfloat16_as_ushort(__nv_bfloat16 b)
{
    return b.__x;
}
inline short
__bfloat16_as_short(__nv_bfloat16 b)
{
    return (short)b.__x;
}
inline __nv_bfloat16
__ushort_as_bfloat16(unsigned short x)
{
    return __nv_bfloat16_raw{x};
}
inline __nv_bfloat16
__short_as_bfloat16(short x)
{
    return __nv_bfloat16_raw{(unsigned short)x};
}
inline __nv_bfloat162
__float2bfloat162_rn(float f)
{
    return __nv_bfloat162(__nv_bfloat16(f), __nv_bfloat16(f));
}
inline __nv_bfloat162
__floats2bfloat162_rn(float a, float b)
{
    return __nv_bfloat162(__nv_bfloat16(a), __nv_bfloat16(b));
}
inline __nv_bfloat162
__float22bfloat162_rn(float2 f)
{
    return __nv_bfloat162(__nv_bfloat16(f.x), __nv_bfloat16(f.y));
}
inline float2
__bfloat1622float2(__nv_bfloat162 b)
{
    return make_float2((float)b.x, (float)b.y);
}
inline float
__low2float(__nv_bfloat162 b)
{
    return (float)b.x;
}
inline float
__high2float(__nv_bfloat162 b)
{
    return (float)b.y;
}
inline __nv_bfloat162
make_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __nv_bfloat162(a, b);
}
#endif /* PYGPU_SIM_CUDA_BF16_H */
