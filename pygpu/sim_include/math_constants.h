/* pygpu's simulator: CUDA's math_constants.h, the constants kernels use most */
#ifndef PYGPU_SIM_MATH_CONSTANTS_H
#define PYGPU_SIM_MATH_CONSTANTS_H
#define CUDART_INF_F __builtin_huge_valf()
#define CUDART_NAN_F __builtin_nanf("")
#define CUDART_PI_F 3.141592654f
#define CUDART_PIO2_F 1.570796327f
#define CUDART_SQRT_HALF_F 0.707106781f
#define CUDART_INF __builtin_huge_val()
#define CUDART_NAN __builtin_nan("")
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_PIO2 1.5707963267948966e+0
#define CUDART_SQRT_HALF 7.0710678118654757e-1
#endif
