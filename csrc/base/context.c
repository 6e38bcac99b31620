/* The bottom of the Python side: the process's backend (the first-use gate),
 * fork handling, and this thread's current device and current stream.
 *
 * Each thread has a current stream: the default stream, or the innermost
 * `with stream:` (or `with cuda.graph():`, whose stream is captured).
 * Operations given no stream use it. Argument converters resolve stream
 * arguments here, without the Stream type's file. The captures under way
 * keep here the buffers that their recorded work touches. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "pygpu.h"

/* ---- the backend ----------------------------------------------------------- */

static const char simulator_hint[] =
    "To run on pygpu's CPU simulator instead, set the environment variable "
    "PYGPU_SIMULATOR=1 before the first pygpu operation (for example "
    "`PYGPU_SIMULATOR=1 python script.py`).";

/* Ctrl-C during long host-side work (the simulator's launches). pending()
 * is polled with the backend's lock held, on the launching thread, which
 * holds the GIL: it only takes note of a SIGINT (PyOS_InterruptOccurred
 * answers on the main thread, and consumes it), and runs no Python code, so
 * that no handler can start another launch under that lock. handle() then
 * gives the SIGINT back to Python and runs its handler: KeyboardInterrupt
 * (or whatever it raises) stops the work; a handler that returns lets it go
 * on. */
static int
interrupt_pending(void)
{
    return PyGILState_Check() && PyOS_InterruptOccurred();
}

static int
interrupt_handle(void)
{
    PyErr_SetInterrupt();
    return PyErr_CheckSignals() < 0;
}

/* A simulated kernel's printf text, to sys.stdout (so that a notebook cell
 * and pytest's capture show it); called on the launching thread, which holds
 * the GIL. A stdout that fails to write is reported as unraisable. */
static void
output(const char *text, size_t size)
{
    PyObject *out = PySys_GetObject("stdout"), *str, *res = NULL, *type, *value, *tb;
    if (out == NULL || out == Py_None) {
        return;
    }
    Py_INCREF(out);
    PyErr_Fetch(&type, &value, &tb); /* an exception on its way stays */
    str = PyUnicode_DecodeUTF8(text, (Py_ssize_t)size, "replace");
    if (str != NULL) {
        res = PyObject_CallMethod(out, "write", "O", str);
        Py_DECREF(str);
    }
    if (res == NULL) {
        PyErr_WriteUnraisable(out);
    }
    Py_XDECREF(res);
    Py_DECREF(out);
    PyErr_Restore(type, value, tb);
}

static const pg_python_hooks python_hooks = {interrupt_pending, interrupt_handle,
                                             output};

/* 0 until a device of the chosen backend has been seen; then 1. */
static volatile int devices_seen;

int
pg_backend_started(void)
{
    return devices_seen;
}

const pg_backend *
pg_get_rt(pg_state *st)
{
    char msg[1024];
    const pg_backend *rt = NULL;
    int count = 0;
    pg_err err;

    if (devices_seen) {
        if (pg_context_unusable()) {
            return (const pg_backend *)pg_raise_unusable(st, NULL);
        }
        return pg_rt();
    }
    rt = pg_rt_peek();
    if (rt == NULL) {
        snprintf(msg, sizeof(msg),
                 "no CUDA device is available: this pygpu was built without "
                 "the CUDA toolkit, so it can only simulate a GPU. %s",
                 simulator_hint);
        return (const pg_backend *)pg_raise_no_device(st, PG_ERR_NO_DEVICE, msg);
    }
    err = rt->device_count(&count);
    if (err == PG_ERR_CONFIGURATION) {
        /* a setting is not understood: a ValueError that says which */
        return (const pg_backend *)pg_raise(st, err, pg_call_names.device_count);
    }
    if (err != PG_SUCCESS || count == 0) {
        if (err == PG_SUCCESS) {
            err = PG_ERR_NO_DEVICE;
        }
        snprintf(msg, sizeof(msg),
                 "no CUDA device is available: %s failed: %s: %s. Is there an NVIDIA "
                 "GPU, and is its driver installed (nvidia-smi should list it)? %s",
                 pg_call_names.device_count, rt->error_name(err), rt->error_string(err),
                 simulator_hint);
        return (const pg_backend *)pg_raise_no_device(st, err, msg);
    }
    (void)pg_rt(); /* commit to this backend for the life of the process */
    if (rt->set_python_hooks != NULL) {
        rt->set_python_hooks(&python_hooks);
    }
    devices_seen = 1;
    return rt;
}

/* ---- fork -------------------------------------------------------------------- */

/* The one fork handler. In the child: a backend that cannot survive fork()
 * (PG_CAP_FORK_UNSAFE) and was initialized marks the process unusable, so
 * that every operation says why; the host-copy workers, which were not
 * forked, start afresh at the next large copy, and the staging rings' locks,
 * which a copy on another thread may have held, are unlocked. */
static void
after_fork_in_child(void)
{
    const pg_backend *rt = pg_rt_peek();
    if (devices_seen && rt != NULL && (rt->caps & PG_CAP_FORK_UNSAFE)) {
        pg_mark_forked();
    }
    pg_host_memcpy_after_fork();
    pg_transfer_after_fork();
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static int fork_register_error;

static void
register_fork_handler(void)
{
    fork_register_error = pthread_atfork(NULL, NULL, after_fork_in_child);
}

int
pg_context_init(void)
{
    pthread_once(&fork_once, register_fork_handler);
    if (fork_register_error != 0) {
        PyErr_SetString(PyExc_RuntimeError, "pygpu: pthread_atfork failed");
        return -1;
    }
    return 0;
}

/* ---- this thread's stacks ------------------------------------------------------ */

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

/* ---- this thread's current device ----------------------------------------------- */

int
pg_current_device(pg_state *st, const pg_backend *rt, int *device)
{
    return PG_TRY(st, rt, get_device, (device));
}

int
pg_device_push(pg_state *st, const pg_backend *rt, int device, int *prev)
{
    if (PG_TRY(st, rt, get_device, (prev)) < 0) {
        return -1;
    }
    if (*prev != device && PG_TRY(st, rt, set_device, (device)) < 0) {
        return -1;
    }
    return 0;
}

int
pg_device_enter(pg_state *st, const pg_backend *rt, int device, int *restore)
{
    int now = 0;
    *restore = -1;
    if (PG_TRY(st, rt, get_device, (&now)) < 0) {
        return -1;
    }
    if (now != device) {
        if (PG_TRY(st, rt, set_device, (device)) < 0) {
            return -1;
        }
        *restore = now;
    }
    return 0;
}

void
pg_device_leave(const pg_backend *rt, int restore)
{
    if (restore >= 0) {
        (void)rt->set_device(restore);
    }
}

void
pg_device_pop(const pg_backend *rt, int prev)
{
    int now = prev;
    if (rt->get_device(&now) == PG_SUCCESS && now != prev) {
        (void)rt->set_device(prev);
    }
}

/* ---- this thread's current stream ----------------------------------------------- */

/* The objects are kept alive by the thread's stack list ("pygpu.stream_stack"). */
static _Thread_local pg_stream tls_handle;
static _Thread_local uint64_t tls_serial;
static _Thread_local PyObject *tls_obj;
static _Thread_local int tls_device = -1;

int
pg_resolve_stream(pg_state *st, PyObject *obj, pg_stream_ref *out)
{
    out->device = -1;
    if (obj == NULL || obj == Py_None) {
        out->handle = tls_handle;
        out->serial = tls_serial;
        out->obj = tls_obj;
        out->device = tls_device;
        return 0;
    }
    if (PyObject_TypeCheck(obj, st->StreamType)) {
        out->handle = PG_STREAM(obj)->handle;
        out->serial = PG_STREAM(obj)->serial;
        out->obj = PG_STREAM(obj)->handle == NULL ? NULL : obj;
        out->device = PG_STREAM(obj)->handle == NULL ? -1 : PG_STREAM(obj)->device;
        return 0;
    }
    if (PyLong_CheckExact(obj)) {
        int overflow = 0;
        long v = PyLong_AsLongAndOverflow(obj, &overflow);
        if (v == 0 && !overflow) {
            out->handle = NULL;
            out->serial = 0;
            out->obj = NULL;
            return 0;
        }
        PyErr_Clear();
    }
    else if (PyObject_HasAttrString(obj, "__cuda_stream__")) {
        PyObject *r = PyObject_CallMethod(obj, "__cuda_stream__", NULL);
        void *h = NULL;
        if (r == NULL) {
            return -1;
        }
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
            Py_DECREF(r);
            PyErr_SetString(PyExc_TypeError,
                            "__cuda_stream__() must return (version, handle)");
            return -1;
        }
        h = PyLong_AsVoidPtr(PyTuple_GET_ITEM(r, 1));
        Py_DECREF(r);
        if ((h == NULL && PyErr_Occurred()) ||
            pg_check_foreign_stream((uintptr_t)h, "__cuda_stream__()") < 0) {
            return -1;
        }
        out->handle = h;
        out->serial = h == NULL ? 0 : ((uint64_t)(uintptr_t)h | ((uint64_t)1 << 63));
        out->obj = h == NULL ? NULL : obj;
        return 0;
    }
    PyErr_Format(PyExc_TypeError,
                 "stream must be a pygpu.Stream, 0 or None (the current stream), "
                 "or an object with __cuda_stream__; got %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
}

int
pg_check_stream_device(const pg_stream_ref *s, int device, int explicit)
{
    pg_stream_ref r = *s;
    return pg_stream_for_device(&r, device, explicit);
}

int
pg_stream_for_device(pg_stream_ref *s, int device, int explicit)
{
    if (s->device < 0 || s->device == device) {
        return 0;
    }
    if (explicit) {
        PyErr_Format(PyExc_ValueError,
                     "the stream belongs to device %d, but the work runs on device %d "
                     "(where its arrays are); use a stream of device %d",
                     s->device, device, device);
        return -1;
    }
    s->handle = NULL; /* device's default stream */
    s->serial = 0;
    s->obj = NULL;
    s->device = -1;
    return 0;
}

static _Atomic uint64_t next_serial = 1;

uint64_t
pg_stream_new_serial(void)
{
    return atomic_fetch_add(&next_serial, 1);
}

PyObject *
pg_stream_obj_new(pg_state *st, pg_stream handle, uint64_t serial, int device,
                  int owned)
{
    pg_stream_obj *s = PyObject_New(pg_stream_obj, st->StreamType);
    if (s == NULL) {
        return NULL;
    }
    s->handle = handle;
    s->serial = serial;
    s->device = device;
    s->owned = owned;
    return (PyObject *)s;
}

static void
set_current(PyObject *s)
{
    if (s == NULL || PG_STREAM(s)->handle == NULL) {
        tls_handle = NULL;
        tls_serial = 0;
        tls_obj = NULL;
        tls_device = -1;
    }
    else {
        tls_handle = PG_STREAM(s)->handle;
        tls_serial = PG_STREAM(s)->serial;
        tls_obj = s;
        tls_device = PG_STREAM(s)->device;
    }
}

int
pg_stream_push(PyObject *stream)
{
    PyObject *stack = pg_thread_stack("pygpu.stream_stack");
    if (stack == NULL || PyList_Append(stack, stream) < 0) {
        return -1;
    }
    set_current(stream);
    return 0;
}

int
pg_stream_pop(PyObject *stream)
{
    PyObject *stack = pg_thread_stack("pygpu.stream_stack");
    Py_ssize_t n;
    if (stack == NULL) {
        return -1;
    }
    n = PyList_GET_SIZE(stack);
    if (n == 0 || PyList_GET_ITEM(stack, n - 1) != stream) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Stream.__exit__ without a matching __enter__ on this thread");
        return -1;
    }
    set_current(n >= 2 ? PyList_GET_ITEM(stack, n - 2) : NULL);
    return PyList_SetSlice(stack, n - 1, n, NULL);
}

/* ---- the captures under way (CUDA graphs) ---------------------------------------- */

/* Each capture (graph.c registers it) by the serial of its stream, with the
 * list of Buffers that its recorded work touches (borrowed: the Graph owns
 * it) and the thread that captures. The list is short, and asked only while
 * a capture is under way: pg_captures_under_way is 0 otherwise, one load on
 * the allocation path. All of it under the GIL. */
#define MAX_CAPTURES 256

static struct {
    uint64_t serial;
    PyObject *held;
    unsigned long thread;
    int failed; /* a buffer could not be held (no memory) */
} captures[MAX_CAPTURES];
int pg_captures_under_way;

int
pg_capture_register(uint64_t serial, PyObject *held)
{
    if (pg_captures_under_way == MAX_CAPTURES) {
        PyErr_Format(PyExc_RuntimeError, "more than %d CUDA graph captures at once",
                     MAX_CAPTURES);
        return -1;
    }
    captures[pg_captures_under_way].serial = serial;
    captures[pg_captures_under_way].held = held;
    captures[pg_captures_under_way].thread = PyThread_get_thread_ident();
    captures[pg_captures_under_way].failed = 0;
    pg_captures_under_way++;
    return 0;
}

int
pg_capture_unregister(uint64_t serial)
{
    for (int i = 0; i < pg_captures_under_way; i++) {
        if (captures[i].serial == serial) {
            int failed = captures[i].failed;
            captures[i] = captures[--pg_captures_under_way];
            return failed;
        }
    }
    return 0;
}

int
pg_capture_on_this_thread(void)
{
    unsigned long me = PyThread_get_thread_ident();
    for (int i = 0; i < pg_captures_under_way; i++) {
        if (captures[i].thread == me) {
            return 1;
        }
    }
    return 0;
}

void
pg_capture_hold_slow(PyObject *buffer, uint64_t serial)
{
    for (int i = 0; serial != 0 && i < pg_captures_under_way; i++) {
        if (captures[i].serial == serial) {
            if (PyList_Append(captures[i].held, buffer) < 0) {
                PyErr_Clear(); /* the capture's end raises MemoryError */
                captures[i].failed = 1;
            }
            return;
        }
    }
}

static PyObject *
default_stream(pg_state *st)
{
    const pg_backend *rt = pg_get_rt(st);
    int device = 0;
    if (rt == NULL) {
        return NULL;
    }
    (void)rt->get_device(&device);
    return pg_stream_obj_new(st, NULL, 0, device, 0);
}

static PyObject *
mod_current_stream(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    if (tls_obj != NULL) {
        return Py_NewRef(tls_obj);
    }
    return default_stream(pg_state_of_module(m));
}

static PyObject *
mod_default_stream(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    return default_stream(pg_state_of_module(m));
}

PyMethodDef pg_context_functions[] = {
    {"current_stream", mod_current_stream, METH_NOARGS,
     "current_stream()\n--\n\nThis thread's current Stream."},
    {"default_stream", mod_default_stream, METH_NOARGS,
     "default_stream()\n--\n\nThe default stream of the current device."},
    {NULL},
};

int
pg_check_foreign_stream(uintptr_t handle, const char *what)
{
    const pg_backend *rt = pg_rt();
    if (handle <= 2 || rt == NULL || rt->stream_known == NULL ||
        rt->stream_known((pg_stream)handle)) {
        return 0;
    }
    PyErr_Format(PyExc_ValueError,
                 "%s: the stream handle %p is no live stream of pygpu's %s backend",
                 what, (void *)handle, rt->name);
    return -1;
}
