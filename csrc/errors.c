/* pygpu's exceptions, and the one place a pg_err becomes a Python exception. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pygpu.h"

static PyObject *
new_exception(PyObject *module, const char *name, const char *doc, PyObject *bases)
{
    PyObject *dict = NULL, *exc = NULL;
    dict = Py_BuildValue("{sOsO}", "code", Py_None, "name", Py_None);
    if (dict == NULL) {
        goto error;
    }
    exc = PyErr_NewExceptionWithDoc(name, doc, bases, dict);
    if (exc == NULL) {
        goto error;
    }
    if (PyModule_AddObjectRef(module, strrchr(name, '.') + 1, exc) < 0) {
        goto error;
    }
    Py_DECREF(dict);
    return exc;
error:
    Py_XDECREF(dict);
    Py_XDECREF(exc);
    return NULL;
}

int
pg_errors_init(PyObject *module, pg_state *st)
{
    PyObject *bases = NULL;
    st->CudaError = new_exception(
        module, "pygpu.CudaError",
        "A CUDA runtime call failed. `.code` is the cudaError_t value and "
        "`.name` its name, e.g. 'cudaErrorInvalidValue'.",
        PyExc_RuntimeError);
    if (st->CudaError == NULL) {
        return -1;
    }
    bases = PyTuple_Pack(2, st->CudaError, PyExc_MemoryError);
    if (bases == NULL) {
        return -1;
    }
    st->OutOfMemoryError = new_exception(
        module, "pygpu.OutOfMemoryError",
        "The device is out of memory. Both a CudaError and a MemoryError.", bases);
    Py_DECREF(bases);
    if (st->OutOfMemoryError == NULL) {
        return -1;
    }
    st->NoDeviceError = new_exception(
        module, "pygpu.NoDeviceError",
        "No usable CUDA device: no GPU, no driver, or a build without CUDA. "
        "Set PYGPU_SIMULATOR=1 to run on the CPU simulator.",
        st->CudaError);
    if (st->NoDeviceError == NULL) {
        return -1;
    }
    return 0;
}

static PyObject *
raise_with(PyObject *cls, pg_err err, const char *name, const char *message)
{
    PyObject *exc = NULL, *value = NULL;
    exc = PyObject_CallFunction(cls, "s", message);
    if (exc == NULL) {
        goto error;
    }
    value = PyLong_FromLong(err);
    if (value == NULL || PyObject_SetAttrString(exc, "code", value) < 0) {
        goto error;
    }
    Py_CLEAR(value);
    value = PyUnicode_FromString(name);
    if (value == NULL || PyObject_SetAttrString(exc, "name", value) < 0) {
        goto error;
    }
    PyErr_SetObject(cls, exc);
error:
    Py_XDECREF(value);
    Py_XDECREF(exc);
    return NULL;
}

static const char *
err_name(pg_err err)
{
    const pg_backend *rt = pg_rt_peek();
    return rt != NULL ? rt->error_name(err) : "cudaErrorUnknown";
}

static const char *
err_string(pg_err err)
{
    const pg_backend *rt = pg_rt_peek();
    return rt != NULL ? rt->error_string(err) : "unknown error";
}

/* After a fault in a kernel (an illegal address, say) the CUDA context is
 * unusable: every later call fails. Remember the first such error, so that
 * every later operation says what happened instead of a fresh riddle. */
static pg_err dead_err;
/* Set in a child made by fork() after the parent initialized CUDA. */
static volatile int forked_after_cuda;

static int
is_sticky(pg_err err)
{
    switch (err) {
    case 214: /* cudaErrorECCUncorrectable */
    case 700: /* cudaErrorIllegalAddress */
    case 710: /* cudaErrorAssert */
    case 714: /* cudaErrorHardwareStackError */
    case 715: /* cudaErrorIllegalInstruction */
    case 716: /* cudaErrorMisalignedAddress */
    case 717: /* cudaErrorInvalidAddressSpace */
    case 718: /* cudaErrorInvalidPc */
    case 719: /* cudaErrorLaunchFailure */ return 1;
    default: return 0;
    }
}

int
pg_context_unusable(void)
{
    return dead_err != PG_SUCCESS || forked_after_cuda;
}

static PyObject *
raise_dead(pg_state *st, const char *call)
{
    char msg[512];
    if (forked_after_cuda) {
        snprintf(msg, sizeof(msg),
                 "this process was made by fork() after its parent had initialized "
                 "CUDA, and CUDA cannot be used in it%s%s. Start worker processes "
                 "with multiprocessing's 'spawn' or 'forkserver' method, or use "
                 "pygpu only after the fork.",
                 call != NULL ? "; refused: " : "", call != NULL ? call : "");
        return raise_with(st->CudaError, PG_ERR_INITIALIZATION,
                          "cudaErrorInitializationError", msg);
    }
    snprintf(msg, sizeof(msg),
             "the CUDA context is unusable after %s (%s); restart the process%s%s",
             err_name(dead_err), err_string(dead_err),
             call != NULL ? ". Refused: " : "", call != NULL ? call : "");
    return raise_with(st->CudaError, dead_err, err_name(dead_err), msg);
}

PyObject *
pg_raise(pg_state *st, pg_err err, const char *call)
{
    char msg[512];
    const pg_backend *rt = pg_rt_peek();
    if (pg_context_unusable()) {
        return raise_dead(st, call);
    }
    if (err == PG_ERR_MEMORY_ALLOCATION) {
        return pg_raise_oom(st, err, call, 0, -1);
    }
    if (is_sticky(err) && rt != NULL && !rt->is_simulator) {
        dead_err = err;
        snprintf(msg, sizeof(msg),
                 "%s failed: %s: %s. A kernel faulted; the CUDA context is unusable "
                 "now: restart the process",
                 call, err_name(err), err_string(err));
    }
    else {
        snprintf(msg, sizeof(msg), "%s failed: %s: %s", call, err_name(err),
                 err_string(err));
    }
    return raise_with(st->CudaError, err, err_name(err), msg);
}

static void
after_fork_in_child(void)
{
    forked_after_cuda = 1;
}

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

PyObject *
pg_raise_oom(pg_state *st, pg_err err, const char *call, size_t size, int device)
{
    char msg[512], amount[64];
    if (device >= 0) {
        pg_format_bytes(amount, sizeof(amount), size);
        snprintf(msg, sizeof(msg),
                 "out of memory allocating %s (%zu bytes) on device %d: "
                 "%s failed: %s: %s",
                 amount, size, device, call, err_name(err), err_string(err));
    }
    else {
        snprintf(msg, sizeof(msg), "out of memory: %s failed: %s: %s", call,
                 err_name(err), err_string(err));
    }
    return raise_with(st->OutOfMemoryError, err, err_name(err), msg);
}

static const char simulator_hint[] =
    "To run on pygpu's CPU simulator instead, set the environment variable "
    "PYGPU_SIMULATOR=1 before the first pygpu operation (for example "
    "`PYGPU_SIMULATOR=1 python script.py`).";

/* 0 until a device of the chosen backend has been seen; then 1. */
static int devices_seen;

const pg_backend *
pg_get_rt(pg_state *st)
{
    char msg[1024];
    const pg_backend *rt = NULL;
    int count = 0;
    pg_err err;

    if (devices_seen) {
        if (pg_context_unusable()) {
            return (const pg_backend *)raise_dead(st, NULL);
        }
        return pg_rt();
    }
    rt = pg_rt_peek();
    if (rt == NULL) {
        snprintf(msg, sizeof(msg),
                 "no CUDA device is available: this pygpu was built without "
                 "the CUDA toolkit, so it can only simulate a GPU. %s",
                 simulator_hint);
        return (const pg_backend *)raise_with(st->NoDeviceError, PG_ERR_NO_DEVICE,
                                              "cudaErrorNoDevice", msg);
    }
    err = rt->device_count(&count);
    if (err != PG_SUCCESS || count == 0) {
        if (err == PG_SUCCESS) {
            err = PG_ERR_NO_DEVICE;
        }
        snprintf(msg, sizeof(msg),
                 "no CUDA device is available: cudaGetDeviceCount failed: "
                 "%s: %s. Is there an NVIDIA GPU, and is its driver installed "
                 "(nvidia-smi should list it)? %s",
                 rt->error_name(err), rt->error_string(err), simulator_hint);
        return (const pg_backend *)raise_with(st->NoDeviceError, err,
                                              rt->error_name(err), msg);
    }
    (void)pg_rt(); /* commit to this backend for the life of the process */
    if (!rt->is_simulator) {
        pthread_atfork(NULL, NULL, after_fork_in_child);
    }
    devices_seen = 1;
    return rt;
}

PyObject *
pg_thread_stack(const char *key)
{
    PyObject *dict = PyThreadState_GetDict(), *stack = NULL;
    if (dict == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "pygpu: no thread state");
        return NULL;
    }
    stack = PyDict_GetItemString(dict, key);
    if (stack != NULL) {
        return stack;
    }
    stack = PyList_New(0);
    if (stack == NULL) {
        return NULL;
    }
    if (PyDict_SetItemString(dict, key, stack) < 0) {
        Py_DECREF(stack);
        return NULL;
    }
    Py_DECREF(stack); /* the dict holds it */
    return stack;
}
