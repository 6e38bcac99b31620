/* Backend choice and counted allocation: the only place that decides between
 * the CUDA runtime and the simulator. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#define PG_MAX_COUNTED_DEVICES 64

static const pg_backend *_Atomic chosen;
static _Atomic size_t allocated[PG_MAX_COUNTED_DEVICES];

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

pg_err
pg_rt_alloc(void **ptr, size_t size, int *device)
{
    const pg_backend *rt = pg_rt();
    pg_err err = rt->get_device(device);
    if (err != PG_SUCCESS) {
        return err;
    }
    err = rt->malloc(ptr, size);
    if (err == PG_SUCCESS && *device >= 0 && *device < PG_MAX_COUNTED_DEVICES) {
        atomic_fetch_add(&allocated[*device], size);
    }
    return err;
}

pg_err
pg_rt_release(void *ptr, size_t size, int device)
{
    const pg_backend *rt = pg_rt();
    int current = device;
    pg_err err = rt->get_device(&current);
    if (err == PG_SUCCESS && current != device) {
        err = rt->set_device(device);
    }
    if (err == PG_SUCCESS) {
        err = rt->free(ptr);
    }
    if (current != device) {
        (void)rt->set_device(current);
    }
    if (err == PG_SUCCESS && device >= 0 && device < PG_MAX_COUNTED_DEVICES) {
        atomic_fetch_sub(&allocated[device], size);
    }
    return err;
}

size_t
pg_rt_allocated(int device)
{
    if (device < 0 || device >= PG_MAX_COUNTED_DEVICES) {
        return 0;
    }
    return atomic_load(&allocated[device]);
}
