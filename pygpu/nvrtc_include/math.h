/* pygpu: <math.h> for NVRTC. The functions are NVRTC's own; this adds the
 * constants and macros that code gets from the C library's header, which
 * nvcc includes before every file (with cuda_runtime.h): rawkernel.py gives it
 * to NVRTC as --pre-include. Constant expressions, as the C library's. */
#ifndef PYGPU_NVRTC_MATH_H
#define PYGPU_NVRTC_MATH_H
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
#ifndef INFINITY
#define INFINITY __builtin_bit_cast(float, 0x7f800000U)
#endif
#ifndef NAN
#define NAN __builtin_bit_cast(float, 0x7fc00000U)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF __builtin_bit_cast(float, 0x7f800000U)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __builtin_bit_cast(double, 0x7ff0000000000000ULL)
#endif
#endif
