/* The memory pool's Python functions (cuda.memory_allocated() and friends
 * call them), and _release_cached, which gives back all that the C side
 * keeps for reuse (pygpu._release_all calls it); the pool itself is pool.c. */
#include "pygpu.h"

/* The device of a pool function: args[0] (an id that exists, as every
 * device argument is checked), or the current device for None or nothing. */
static int
pool_device(pg_state *st, PyObject *const *args, Py_ssize_t nargs, int *device)
{
    if (nargs >= 1 && args[0] != Py_None) {
        return pg_conv_device(st, args[0], device);
    }
    const pg_backend *rt = pg_rt();
    if (rt == NULL || rt->get_device(device) != PG_SUCCESS) {
        *device = 0;
    }
    return 0;
}

static PyObject *
mod_pool_stats(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    int device = 0;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "_pool_stats(device=None)");
        return NULL;
    }
    if (pool_device(pg_state_of_module(m), args, nargs, &device) < 0) {
        return NULL;
    }
    return Py_BuildValue("(nnn)", (Py_ssize_t)pg_pool_used(device),
                         (Py_ssize_t)pg_pool_total(device),
                         (Py_ssize_t)pg_pool_limit(device));
}

static PyObject *
mod_pool_free_all(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pg_state *st = pg_state_of_module(m);
    const pg_backend *rt = pg_get_rt(st);
    int device = 0, prev = 0;
    pg_err err;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "_pool_free_all(device=None)");
        return NULL;
    }
    if (rt == NULL || pool_device(st, args, nargs, &device) < 0 ||
        pg_device_push(st, rt, device, &prev) < 0) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
        err = pg_pool_release_cached(device);
    Py_END_ALLOW_THREADS
    pg_device_pop(rt, prev);
    if (err != PG_SUCCESS) {
        /* the pool gives cached blocks back with rt->free */
        return pg_raise(st, err, pg_call_names.free);
    }
    Py_RETURN_NONE;
}

static PyObject *
mod_pool_set_limit(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    int device = 0;
    Py_ssize_t limit;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_pool_set_limit(device, limit)");
        return NULL;
    }
    limit = PyNumber_AsSsize_t(args[1], PyExc_OverflowError);
    if ((limit == -1 && PyErr_Occurred()) ||
        pool_device(pg_state_of_module(m), args, 1, &device) < 0) {
        return NULL;
    }
    if (limit < 0) {
        PyErr_SetString(PyExc_ValueError, "the limit must be >= 0 bytes (0: no limit)");
        return NULL;
    }
    pg_pool_set_limit(device, (size_t)limit);
    Py_RETURN_NONE;
}

/* For each device the pool has used (no other: making one current would
 * make its context), with it current: waits for it, destroys the cuBLAS
 * handle, gives back the pool's cached blocks and spare events and the
 * staging ring's page-locked buffers. Each is made again at its next need. */
static PyObject *
mod_release_cached(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    pg_state *st = pg_state_of_module(m);
    const pg_backend *rt = NULL;
    pg_status first = {PG_SUCCESS, NULL};
    char why[256] = ""; /* a cuBLAS call that failed, and its status */
    int prev = 0;
    if (!pg_backend_started() || pg_context_unusable()) {
        Py_RETURN_NONE; /* nothing was made, or nothing can be given back */
    }
    if ((rt = pg_get_rt(st)) == NULL || pg_current_device(st, rt, &prev) < 0) {
        return NULL;
    }
    for (int d = 0; d < PG_MAX_DEVICES; d++) {
        pg_status s[4] = {{PG_SUCCESS, NULL}};
        if (!pg_pool_touched(d)) {
            continue;
        }
        Py_BEGIN_ALLOW_THREADS
            s[0] = PG_CALL(rt, set_device, (d));
            if (s[0].err == PG_SUCCESS) {
                s[1] = PG_CALL(rt, synchronize, ());
                if (rt->blas_release != NULL) {
                    s[2] = (pg_status){rt->blas_release(d, why, sizeof(why)), why};
                }
                s[3] = (pg_status){pg_pool_release_all(d), pg_call_names.free};
                pg_transfer_release(d);
            }
        Py_END_ALLOW_THREADS
        for (int i = 0; i < 4 && first.err == PG_SUCCESS; i++) {
            first = s[i];
        }
    }
    (void)rt->set_device(prev);
    if (pg_check(st, first) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyMethodDef pg_pool_functions[] = {
    {"_pool_stats", (PyCFunction)(void (*)(void))mod_pool_stats, METH_FASTCALL,
     "_pool_stats(device=None)\n--\n\n(used, total, limit) bytes of the memory pool."},
    {"_pool_free_all", (PyCFunction)(void (*)(void))mod_pool_free_all, METH_FASTCALL,
     "_pool_free_all(device=None)\n--\n\nGive the pool's cached blocks back to the "
     "device."},
    {"_pool_set_limit", (PyCFunction)(void (*)(void))mod_pool_set_limit, METH_FASTCALL,
     "_pool_set_limit(device, limit)\n--\n\nCap the pool's bytes (0: no cap)."},
    {"_release_cached", mod_release_cached, METH_NOARGS,
     "_release_cached()\n--\n\nGive back what the C side keeps for reuse, on every "
     "device pygpu has used: the pool's cached blocks and spare events, the staging "
     "buffers, the cuBLAS handles (pygpu._release_all calls it)."},
    {NULL},
};
