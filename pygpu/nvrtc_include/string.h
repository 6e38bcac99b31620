/* pygpu: <string.h> for NVRTC. Device code's memcpy and memset are NVRTC's own. */
#ifndef PYGPU_NVRTC_STRING_H
#define PYGPU_NVRTC_STRING_H
#include <stddef.h>
#endif
