/* pygpu: <time.h> for NVRTC. Device code's clock() and clock64() are NVRTC's
 * own. */
#ifndef PYGPU_NVRTC_TIME_H
#define PYGPU_NVRTC_TIME_H
#include <stddef.h>
#endif
