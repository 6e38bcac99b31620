/* Backend choice: the only place that decides between the CUDA runtime and
 * the simulator. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static const pg_backend *_Atomic chosen;

static int
simulator_requested(void)
{
    const char *v = getenv("PYGPU_SIMULATOR");
    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

const pg_backend *
pg_rt_peek(void)
{
    const pg_backend *b = atomic_load(&chosen);
    if (b != NULL) {
        return b;
    }
    if (simulator_requested()) {
        return &pg_sim_backend;
    }
    return pg_cuda_backend; /* NULL in a build without the CUDA toolkit */
}

const pg_backend *
pg_rt(void)
{
    const pg_backend *b = atomic_load(&chosen);
    if (b == NULL) {
        const pg_backend *expected = NULL;
        b = pg_rt_peek();
        if (b == NULL) {
            return NULL;
        }
        if (!atomic_compare_exchange_strong(&chosen, &expected, b)) {
            b = expected;
        }
    }
    return b;
}
