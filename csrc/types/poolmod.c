/* The memory pool's Python functions (cuda.memory_allocated() and friends
 * call them); the pool itself is pool.c. */
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

PyMethodDef pg_pool_functions[] = {
    {"_pool_stats", (PyCFunction)(void (*)(void))mod_pool_stats, METH_FASTCALL,
     "_pool_stats(device=None)\n--\n\n(used, total, limit) bytes of the memory pool."},
    {"_pool_free_all", (PyCFunction)(void (*)(void))mod_pool_free_all, METH_FASTCALL,
     "_pool_free_all(device=None)\n--\n\nGive the pool's cached blocks back to the "
     "device."},
    {"_pool_set_limit", (PyCFunction)(void (*)(void))mod_pool_set_limit, METH_FASTCALL,
     "_pool_set_limit(device, limit)\n--\n\nCap the pool's bytes (0: no cap)."},
    {NULL},
};
