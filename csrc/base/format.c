/* Formatting for messages. */
#include <stdio.h>

#include "pygpu.h"

void
pg_format_bytes(char *buf, size_t len, size_t n)
{
    static const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) {
        snprintf(buf, len, "%zu bytes", n);
    }
    else {
        snprintf(buf, len, "%.2f %s", v, units[u]);
    }
}
