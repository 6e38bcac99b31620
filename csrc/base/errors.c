/* pygpu's exceptions, the one place a pg_err becomes a Python exception, and
 * the record of a context that can no longer be used. */
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
    st->KernelError = new_exception(
        module, "pygpu.KernelError",
        "A kernel failed on the simulator, which says how: an out-of-bounds "
        "access or a race that the checking mode saw, a barrier or warp "
        "intrinsic that some threads cannot reach. The message names the "
        "kernel, block and thread. The process stays usable.",
        st->CudaError);
    if (st->KernelError == NULL) {
        return -1;
    }
    bases = PyTuple_Pack(2, st->KernelError, PyExc_AssertionError);
    if (bases == NULL) {
        return -1;
    }
    st->KernelAssertionError = new_exception(
        module, "pygpu.KernelAssertionError",
        "A device assert() failed in a kernel on the simulator. The message "
        "names the kernel, block, thread, file and line. Both a KernelError "
        "and an AssertionError.",
        bases);
    Py_DECREF(bases);
    if (st->KernelAssertionError == NULL) {
        return -1;
    }
    return 0;
}

static PyObject *
raise_with(PyObject *cls, pg_err err, const char *message)
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
    value = PyUnicode_FromString(pg_error_name(err));
    if (value == NULL || PyObject_SetAttrString(exc, "name", value) < 0) {
        goto error;
    }
    PyErr_SetObject(cls, exc);
error:
    Py_XDECREF(value);
    Py_XDECREF(exc);
    return NULL;
}

/* ---- a context that can no longer be used ----------------------------------- */

/* On a backend with PG_CAP_STICKY_FAULTS, a fault in a kernel (an illegal
 * address, say) leaves the context unusable: every later call fails. Remember
 * the first such error, so that every later operation says what happened
 * instead of a fresh riddle. */
static pg_err dead_err;
/* Set in a child made by fork() after the parent initialized a backend with
 * PG_CAP_FORK_UNSAFE (context.c's fork handler). */
static volatile int forked_after_init;

int
pg_context_unusable(void)
{
    return dead_err != PG_SUCCESS || forked_after_init;
}

void
pg_mark_forked(void)
{
    forked_after_init = 1;
}

PyObject *
pg_raise_unusable(pg_state *st, const char *call)
{
    char msg[512];
    if (forked_after_init) {
        snprintf(msg, sizeof(msg),
                 "this process was made by fork() after its parent had initialized "
                 "CUDA, and CUDA cannot be used in it%s%s. Start worker processes "
                 "with multiprocessing's 'spawn' or 'forkserver' method, or use "
                 "pygpu only after the fork.",
                 call != NULL ? "; refused: " : "", call != NULL ? call : "");
        return raise_with(st->CudaError, PG_ERR_INITIALIZATION, msg);
    }
    snprintf(msg, sizeof(msg),
             "the CUDA context is unusable after %s (%s); restart the process%s%s",
             pg_error_name(dead_err), pg_error_string(dead_err),
             call != NULL ? ". Refused: " : "", call != NULL ? call : "");
    return raise_with(st->CudaError, dead_err, msg);
}

/* ---- the error mapper ------------------------------------------------------- */

PyObject *
pg_raise(pg_state *st, pg_err err, const char *call)
{
    char msg[1024];
    const pg_backend *rt = pg_rt_peek();
    int device = -1, peer = -1;
    if (pg_context_unusable()) {
        return pg_raise_unusable(st, call);
    }
    if (err == PG_ERR_MEMORY_ALLOCATION) {
        return pg_raise_oom(st, err, call, 0, -1);
    }
    if (err == PG_ERR_INTERRUPTED) {
        /* the signal's handler raised (KeyboardInterrupt): let it through */
        if (!PyErr_Occurred()) {
            PyErr_SetNone(PyExc_KeyboardInterrupt);
        }
        return NULL;
    }
    if (err == PG_ERR_CONFIGURATION) {
        const char *why =
            rt != NULL && rt->config_error != NULL ? rt->config_error() : NULL;
        PyErr_Format(PyExc_ValueError, "%s", why != NULL ? why : pg_error_string(err));
        return NULL;
    }
    const char *fault = rt != NULL && rt->kernel_fault != NULL && pg_err_is_fault(err)
                            ? rt->kernel_fault()
                            : NULL;
    if (fault != NULL) {
        /* the simulator says what went wrong, and its context lives on */
        char detail[1536];
        snprintf(detail, sizeof(detail), "%s failed: %s: %s", call, pg_error_name(err),
                 fault);
        return raise_with(err == PG_ERR_ASSERT ? st->KernelAssertionError
                                               : st->KernelError,
                          err, detail);
    }
    if (err == PG_ERR_PEER_ACCESS_NOT_ENABLED && rt != NULL &&
        rt->access_fault != NULL && rt->access_fault(&device, &peer) == 0) {
        snprintf(msg, sizeof(msg),
                 "%s failed: %s: a kernel on device %d touched memory of device %d, "
                 "and peer access between them is not enabled",
                 call, pg_error_name(err), device, peer);
    }
    else if (err == PG_ERR_STREAM_CAPTURE_INVALIDATED) {
        snprintf(msg, sizeof(msg),
                 "%s failed: %s: %s. An earlier operation in the `with cuda.graph():` "
                 "block could not be captured and invalidated the capture; the graph "
                 "is discarded",
                 call, pg_error_name(err), pg_error_string(err));
    }
    else if (pg_err_is_capture(err)) {
        /* inside `with cuda.graph()`: say what cannot be captured, and why */
        snprintf(msg, sizeof(msg),
                 "%s failed: %s: %s. %s cannot run while a CUDA graph is being "
                 "captured (inside `with cuda.graph():`): copies between host and "
                 "device or between devices, and synchronizing or waiting, are not "
                 "recorded into a graph; do them before or after the `with` block",
                 call, pg_error_name(err), pg_error_string(err), call);
    }
    else if (rt != NULL && (rt->caps & PG_CAP_STICKY_FAULTS) && pg_err_is_fault(err)) {
        dead_err = err;
        snprintf(msg, sizeof(msg),
                 "%s failed: %s: %s. A kernel faulted; the CUDA context is unusable "
                 "now: restart the process",
                 call, pg_error_name(err), pg_error_string(err));
    }
    else {
        snprintf(msg, sizeof(msg), "%s failed: %s: %s", call, pg_error_name(err),
                 pg_error_string(err));
    }
    return raise_with(st->CudaError, err, msg);
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
                 amount, size, device, call, pg_error_name(err), pg_error_string(err));
    }
    else {
        snprintf(msg, sizeof(msg), "out of memory: %s failed: %s: %s", call,
                 pg_error_name(err), pg_error_string(err));
    }
    return raise_with(st->OutOfMemoryError, err, msg);
}

PyObject *
pg_raise_no_device(pg_state *st, pg_err err, const char *message)
{
    return raise_with(st->NoDeviceError, err, message);
}

void
pg_report_failed_free(PyTypeObject *tp, pg_status s)
{
    pg_state *st = NULL;
    if (s.err == PG_SUCCESS) {
        return;
    }
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *pending = PyErr_GetRaisedException();
#else
    PyObject *ptype, *pvalue, *ptb;
    PyErr_Fetch(&ptype, &pvalue, &ptb);
#endif
    st = pg_state_of_type(tp);
    if (st != NULL) {
        (void)pg_check(st, s);
        /* the object is being deallocated, not safe to show: its type stands in */
        PyErr_WriteUnraisable((PyObject *)tp);
    }
    PyErr_Clear();
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(pending);
#else
    PyErr_Restore(ptype, pvalue, ptb);
#endif
}
