/* Backend choice: the only place that decides between the CUDA runtime and
 * the simulator; and the names of the backend's calls and error codes. */
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

const pg_call_name_table pg_call_names = {
#define PG_CALL_NAME(op, call, params) .op = call,
    PG_BACKEND_CALLS(PG_CALL_NAME)
#undef PG_CALL_NAME
};

/* With no backend (a build without CUDA, the simulator not asked for), the
 * simulator's table still names CUDA's error codes as CUDA does. */
const char *
pg_error_name(pg_err err)
{
    const pg_backend *b = pg_rt_peek();
    return (b != NULL ? b : &pg_sim_backend)->error_name(err);
}

const char *
pg_error_string(pg_err err)
{
    const pg_backend *b = pg_rt_peek();
    return (b != NULL ? b : &pg_sim_backend)->error_string(err);
}

const pg_kernel_name_table pg_kernel_names = {
#define PG_LAUNCHER(name, type) .name = "launch of kernel " #name,
#define PG_KERNEL(name, type, nargs, signature, doc) .name = "launch of kernel " #name,
#include "kernels.def"
};
