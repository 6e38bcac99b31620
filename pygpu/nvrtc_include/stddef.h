/* pygpu: <stddef.h> for NVRTC. */
#ifndef PYGPU_NVRTC_STDDEF_H
#define PYGPU_NVRTC_STDDEF_H
typedef decltype(sizeof(0)) size_t;
typedef decltype((char *)0 - (char *)0) ptrdiff_t;
#ifndef NULL
#define NULL 0
#endif
#ifndef offsetof
#define offsetof(type, member) __builtin_offsetof(type, member)
#endif
#endif
