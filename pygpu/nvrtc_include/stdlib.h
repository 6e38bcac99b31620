/* pygpu: <stdlib.h> for NVRTC. Device code's malloc and free are NVRTC's own. */
#ifndef PYGPU_NVRTC_STDLIB_H
#define PYGPU_NVRTC_STDLIB_H
#include <stddef.h>
#ifndef EXIT_SUCCESS
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#endif
#endif
