/* pygpu: <stdio.h> for NVRTC. Device code's printf is NVRTC's own. */
#ifndef PYGPU_NVRTC_STDIO_H
#define PYGPU_NVRTC_STDIO_H
#include <stddef.h>
#ifndef EOF
#define EOF (-1)
#endif
#endif
