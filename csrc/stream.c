/* pygpu.Stream, pygpu.Event and page-locked host memory (cuda.pinned_array).
 *
 * Each thread has a current stream: the default stream, or the innermost
 * `with stream:`. Operations given no stream use it. */
#include <stdatomic.h>
#include <string.h>

#include "pygpu.h"

typedef struct {
    PyObject_HEAD
    pg_stream handle;
    uint64_t serial;
    int device;
    int owned;
} pg_stream_obj;

typedef struct {
    PyObject_HEAD
    pg_event handle;
    int device;
    int timing;
    int recorded;
} pg_event_obj;

typedef struct {
    PyObject_HEAD
    void *ptr;
    size_t size;
    PyObject *weakreflist;
} pg_pinned;

#define STREAM(o) ((pg_stream_obj *)(o))
#define EVENT(o) ((pg_event_obj *)(o))

static _Atomic uint64_t next_serial = 1;

/* This thread's current stream; the objects are kept alive by the thread's
 * stack list (see stream_stack). */
static _Thread_local pg_stream tls_handle;
static _Thread_local uint64_t tls_serial;
static _Thread_local PyObject *tls_obj;

/* ---- resolving stream arguments --------------------------------------------- */

int
pg_resolve_stream(pg_state *st, PyObject *obj, pg_stream_ref *out)
{
    if (obj == NULL || obj == Py_None) {
        out->handle = tls_handle;
        out->serial = tls_serial;
        out->obj = tls_obj;
        return 0;
    }
    if (PyObject_TypeCheck(obj, st->StreamType)) {
        out->handle = STREAM(obj)->handle;
        out->serial = STREAM(obj)->serial;
        out->obj = STREAM(obj)->handle == NULL ? NULL : obj;
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
        if (h == NULL && PyErr_Occurred()) {
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

/* ---- Stream ----------------------------------------------------------------- */

static PyObject *
stream_new_raw(pg_state *st, pg_stream handle, uint64_t serial, int device, int owned)
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

static PyObject *
Stream_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {NULL};
    pg_state *st = pg_state_of_type(type);
    const pg_backend *rt = NULL;
    pg_stream handle = NULL;
    int device = 0;
    pg_err err;
    if (st == NULL || !PyArg_ParseTupleAndKeywords(args, kwargs, ":Stream", kwlist)) {
        return NULL;
    }
    if ((rt = pg_get_rt(st)) == NULL) {
        return NULL;
    }
    err = rt->get_device(&device);
    if (err == PG_SUCCESS) {
        err = rt->stream_create(&handle);
    }
    if (err != PG_SUCCESS) {
        return pg_raise(st, err, "cudaStreamCreate");
    }
    return stream_new_raw(st, handle, atomic_fetch_add(&next_serial, 1), device, 1);
}

static void
Stream_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    pg_stream_obj *s = STREAM(self);
    if (s->owned && s->handle != NULL && !pg_is_finalizing() &&
        !pg_context_unusable()) {
        /* work already queued finishes; cudaStreamDestroy does not wait */
        (void)pg_rt()->stream_destroy(s->handle);
    }
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *
stream_result(PyObject *self, pg_err err, const char *call)
{
    if (err != PG_SUCCESS) {
        pg_state *st = pg_state_of_type(Py_TYPE(self));
        return st == NULL ? NULL : pg_raise(st, err, call);
    }
    Py_RETURN_NONE;
}

static PyObject *
Stream_synchronize(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pg_err err;
    pg_stream h = STREAM(self)->handle;
    Py_BEGIN_ALLOW_THREADS
        err = pg_rt()->stream_synchronize(h);
    Py_END_ALLOW_THREADS
    return stream_result(self, err, "cudaStreamSynchronize");
}

static PyObject *
Stream_query(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pg_err err = pg_rt()->stream_query(STREAM(self)->handle);
    if (err == PG_ERR_NOT_READY) {
        Py_RETURN_FALSE;
    }
    if (err != PG_SUCCESS) {
        return stream_result(self, err, "cudaStreamQuery");
    }
    Py_RETURN_TRUE;
}

static PyObject *
Stream_wait_event(PyObject *self, PyObject *event)
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    if (st == NULL) {
        return NULL;
    }
    if (!PyObject_TypeCheck(event, st->EventType)) {
        return PyErr_Format(PyExc_TypeError,
                            "wait_event() takes a pygpu.Event, not %.100s",
                            Py_TYPE(event)->tp_name);
    }
    return stream_result(
        self, pg_rt()->stream_wait_event(STREAM(self)->handle, EVENT(event)->handle),
        "cudaStreamWaitEvent");
}

static PyObject *
Stream_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames)
{
    static const char *const names[] = {"event"};
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    PyObject *argv[1], *event = NULL;
    pg_err err;
    if (st == NULL ||
        pg_parse_args("record", args, nargs, kwnames, names, 1, 0, argv) < 0) {
        return NULL;
    }
    if (argv[0] == NULL || argv[0] == Py_None) {
        event = PyObject_CallNoArgs((PyObject *)st->EventType);
        if (event == NULL) {
            return NULL;
        }
    }
    else if (!PyObject_TypeCheck(argv[0], st->EventType)) {
        return PyErr_Format(PyExc_TypeError, "record() takes a pygpu.Event, not %.100s",
                            Py_TYPE(argv[0])->tp_name);
    }
    else {
        event = Py_NewRef(argv[0]);
    }
    err = pg_rt()->event_record(EVENT(event)->handle, STREAM(self)->handle);
    if (err != PG_SUCCESS) {
        Py_DECREF(event);
        return pg_raise(st, err, "cudaEventRecord");
    }
    EVENT(event)->recorded = 1;
    return event;
}

static void
set_current(PyObject *s)
{
    if (s == NULL || STREAM(s)->handle == NULL) {
        tls_handle = NULL;
        tls_serial = 0;
        tls_obj = NULL;
    }
    else {
        tls_handle = STREAM(s)->handle;
        tls_serial = STREAM(s)->serial;
        tls_obj = s;
    }
}

static PyObject *
Stream_enter(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *stack = pg_thread_stack("pygpu.stream_stack");
    if (stack == NULL || PyList_Append(stack, self) < 0) {
        return NULL;
    }
    set_current(self);
    return Py_NewRef(self);
}

static PyObject *
Stream_exit(PyObject *self, PyObject *Py_UNUSED(args))
{
    PyObject *stack = pg_thread_stack("pygpu.stream_stack");
    Py_ssize_t n;
    if (stack == NULL) {
        return NULL;
    }
    n = PyList_GET_SIZE(stack);
    if (n == 0 || PyList_GET_ITEM(stack, n - 1) != self) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Stream.__exit__ without a matching __enter__ on this thread");
        return NULL;
    }
    set_current(n >= 2 ? PyList_GET_ITEM(stack, n - 2) : NULL);
    if (PyList_SetSlice(stack, n - 1, n, NULL) < 0) {
        return NULL;
    }
    Py_RETURN_FALSE;
}

static PyObject *
Stream_cuda_stream(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return Py_BuildValue("(iN)", 0, PyLong_FromVoidPtr(STREAM(self)->handle));
}

static PyObject *
Stream_get(PyObject *self, void *closure)
{
    switch ((int)(intptr_t)closure) {
    case 0: return PyLong_FromVoidPtr(STREAM(self)->handle);
    default: return PyLong_FromLong(STREAM(self)->device);
    }
}

static PyObject *
Stream_repr(PyObject *self)
{
    if (STREAM(self)->handle == NULL) {
        return PyUnicode_FromString("<pygpu.Stream default>");
    }
    return PyUnicode_FromFormat("<pygpu.Stream %p on device %d>", STREAM(self)->handle,
                                STREAM(self)->device);
}

static PyObject *
Stream_richcompare(PyObject *a, PyObject *b, int op)
{
    if (!PyObject_TypeCheck(b, Py_TYPE(a)) || (op != Py_EQ && op != Py_NE)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    int same = STREAM(a)->serial == STREAM(b)->serial;
    return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static Py_hash_t
Stream_hash(PyObject *self)
{
    return (Py_hash_t)(STREAM(self)->serial & 0x7fffffffffffffffULL);
}

static PyMethodDef Stream_methods[] = {
    {"synchronize", Stream_synchronize, METH_NOARGS,
     "synchronize($self, /)\n--\n\nWait until all work queued on the stream is done."},
    {"query", Stream_query, METH_NOARGS,
     "query($self, /)\n--\n\nTrue if all work queued on the stream is done."},
    {"wait_event", Stream_wait_event, METH_O,
     "wait_event($self, event, /)\n--\n\nMake later work on this stream wait for "
     "event."},
    {"record", (PyCFunction)(void (*)(void))Stream_record,
     METH_FASTCALL | METH_KEYWORDS,
     "record($self, /, event=None)\n--\n\nRecord an event (a new one if None) on the "
     "stream and return it."},
    {"__enter__", Stream_enter, METH_NOARGS, NULL},
    {"__exit__", Stream_exit, METH_VARARGS, NULL},
    {"__cuda_stream__", Stream_cuda_stream, METH_NOARGS,
     "__cuda_stream__($self, /)\n--\n\n(0, handle): the CUDA stream protocol."},
    {NULL},
};

static PyGetSetDef Stream_getset[] = {
    {"ptr", Stream_get, NULL, "The cudaStream_t handle, an int (0: default).",
     (void *)0},
    {"device", Stream_get, NULL, "The device id of the stream.", (void *)1},
    {NULL},
};

static PyType_Slot Stream_slots[] = {
    {Py_tp_new, Stream_new},
    {Py_tp_dealloc, Stream_dealloc},
    {Py_tp_repr, Stream_repr},
    {Py_tp_richcompare, Stream_richcompare},
    {Py_tp_hash, Stream_hash},
    {Py_tp_methods, Stream_methods},
    {Py_tp_getset, Stream_getset},
    {Py_tp_doc, "Stream()\n--\n\nA CUDA stream on the current device: work queued on "
                "one stream runs in order, and may overlap work on others. "
                "`with stream:` makes it this thread's current stream."},
    {0, NULL},
};

PyType_Spec pg_stream_spec = {
    .name = "pygpu.Stream",
    .basicsize = sizeof(pg_stream_obj),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Stream_slots,
};

/* ---- Event ------------------------------------------------------------------- */

static PyObject *
Event_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"timing", NULL};
    pg_state *st = pg_state_of_type(type);
    const pg_backend *rt;
    pg_event_obj *e;
    int timing = 1, device = 0;
    pg_err err;
    if (st == NULL ||
        !PyArg_ParseTupleAndKeywords(args, kwargs, "|p:Event", kwlist, &timing) ||
        (rt = pg_get_rt(st)) == NULL) {
        return NULL;
    }
    e = PyObject_New(pg_event_obj, type);
    if (e == NULL) {
        return NULL;
    }
    e->handle = NULL;
    err = rt->get_device(&device);
    if (err == PG_SUCCESS) {
        err = rt->event_create(&e->handle, timing);
    }
    e->device = device;
    e->timing = timing;
    e->recorded = 0;
    if (err != PG_SUCCESS) {
        Py_DECREF(e);
        return pg_raise(st, err, "cudaEventCreate");
    }
    return (PyObject *)e;
}

static void
Event_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    if (EVENT(self)->handle != NULL && !pg_is_finalizing() && !pg_context_unusable()) {
        (void)pg_rt()->event_destroy(EVENT(self)->handle);
    }
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *
Event_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"stream"};
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    PyObject *argv[1];
    pg_stream_ref s;
    pg_err err;
    if (st == NULL ||
        pg_parse_args("record", args, nargs, kwnames, names, 1, 0, argv) < 0 ||
        pg_resolve_stream(st, argv[0], &s) < 0) {
        return NULL;
    }
    err = pg_rt()->event_record(EVENT(self)->handle, s.handle);
    if (err != PG_SUCCESS) {
        return pg_raise(st, err, "cudaEventRecord");
    }
    EVENT(self)->recorded = 1;
    Py_RETURN_NONE;
}

static PyObject *
Event_synchronize(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pg_err err;
    pg_event h = EVENT(self)->handle;
    Py_BEGIN_ALLOW_THREADS
        err = pg_rt()->event_synchronize(h);
    Py_END_ALLOW_THREADS
    return stream_result(self, err, "cudaEventSynchronize");
}

static PyObject *
Event_query(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pg_err err = pg_rt()->event_query(EVENT(self)->handle);
    if (err == PG_ERR_NOT_READY) {
        Py_RETURN_FALSE;
    }
    if (err != PG_SUCCESS) {
        return stream_result(self, err, "cudaEventQuery");
    }
    Py_RETURN_TRUE;
}

static PyObject *
Event_elapsed_time(PyObject *self, PyObject *end)
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    float ms = 0;
    pg_err err;
    if (st == NULL) {
        return NULL;
    }
    if (!PyObject_TypeCheck(end, st->EventType)) {
        return PyErr_Format(PyExc_TypeError,
                            "elapsed_time() takes a pygpu.Event, not %.100s",
                            Py_TYPE(end)->tp_name);
    }
    if (!EVENT(self)->timing || !EVENT(end)->timing) {
        PyErr_SetString(PyExc_ValueError,
                        "elapsed_time() needs events made with timing=True");
        return NULL;
    }
    if (!EVENT(self)->recorded || !EVENT(end)->recorded) {
        PyErr_SetString(PyExc_ValueError,
                        "elapsed_time() needs both events recorded; call "
                        "event.record(stream) on each first");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
        err = pg_rt()->event_synchronize(EVENT(end)->handle);
        if (err == PG_SUCCESS) {
            err =
                pg_rt()->event_elapsed_ms(&ms, EVENT(self)->handle, EVENT(end)->handle);
        }
    Py_END_ALLOW_THREADS
    if (err != PG_SUCCESS) {
        return pg_raise(st, err, "cudaEventElapsedTime");
    }
    return PyFloat_FromDouble(ms);
}

static PyMethodDef Event_methods[] = {
    {"record", (PyCFunction)(void (*)(void))Event_record, METH_FASTCALL | METH_KEYWORDS,
     "record($self, /, stream=None)\n--\n\nRecord the event on stream (default: the "
     "current stream)."},
    {"synchronize", Event_synchronize, METH_NOARGS,
     "synchronize($self, /)\n--\n\nWait until the work before the event is done."},
    {"query", Event_query, METH_NOARGS,
     "query($self, /)\n--\n\nTrue if the work before the event is done."},
    {"elapsed_time", Event_elapsed_time, METH_O,
     "elapsed_time($self, end, /)\n--\n\nMilliseconds from this event to `end` "
     "(waits for `end`)."},
    {NULL},
};

static PyType_Slot Event_slots[] = {
    {Py_tp_new, Event_new},
    {Py_tp_dealloc, Event_dealloc},
    {Py_tp_methods, Event_methods},
    {Py_tp_doc, "Event(timing=True)\n--\n\nA CUDA event: a mark in a stream's work, to "
                "wait for or to time between."},
    {0, NULL},
};

PyType_Spec pg_event_spec = {
    .name = "pygpu.Event",
    .basicsize = sizeof(pg_event_obj),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Event_slots,
};

/* ---- pinned host memory ---------------------------------------------------- */

static void
Pinned_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    pg_pinned *p = (pg_pinned *)self;
    if (p->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    if (p->ptr != NULL && !pg_is_finalizing() && !pg_context_unusable()) {
        pg_err err;
        Py_BEGIN_ALLOW_THREADS
            err = pg_rt()->host_free(p->ptr);
        Py_END_ALLOW_THREADS(void)
        err; /* nothing useful to do about a failed free here */
    }
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMemberDef Pinned_members[] = {
    {"__weaklistoffset__", Py_T_PYSSIZET, offsetof(pg_pinned, weakreflist),
     Py_READONLY},
    {NULL},
};

static PyType_Slot Pinned_slots[] = {
    {Py_tp_dealloc, Pinned_dealloc},
    {Py_tp_members, Pinned_members},
    {Py_tp_doc, "Page-locked host memory behind an array from cuda.pinned_array()."},
    {0, NULL},
};

PyType_Spec pg_pinned_spec = {
    .name = "pygpu.PinnedMemory",
    .basicsize = sizeof(pg_pinned),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = Pinned_slots,
};

/* ---- module functions ---------------------------------------------------- */

static PyObject *
mod_pinned_array(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                 PyObject *kwnames)
{
    static const char *const names[] = {"shape", "dtype", "order"};
    pg_state *st = pg_state_of_module(m);
    const pg_backend *rt;
    PyObject *argv[3], *res = NULL;
    PyArray_Descr *descr = NULL;
    npy_intp shape[PG_MAXDIMS], n;
    pg_pinned *mem = NULL;
    int nd, fortran = 0;
    pg_err err;
    if (pg_parse_args("pinned_array", args, nargs, kwnames, names, 3, 1, argv) < 0 ||
        (nd = pg_parse_shape(argv[0], shape)) < 0) {
        return NULL;
    }
    if (argv[2] != NULL && argv[2] != Py_None) {
        const char *o = PyUnicode_Check(argv[2]) ? PyUnicode_AsUTF8(argv[2]) : NULL;
        if (o == NULL || (strcmp(o, "C") != 0 && strcmp(o, "F") != 0)) {
            PyErr_Clear();
            return PyErr_Format(PyExc_ValueError, "order must be 'C' or 'F', not %R",
                                argv[2]);
        }
        fortran = o[0] == 'F';
    }
    if (argv[1] == NULL || argv[1] == Py_None) {
        descr = PyArray_DescrFromType(NPY_DOUBLE);
    }
    else if (!PyArray_DescrConverter(argv[1], &descr)) {
        return NULL;
    }
    if (pg_check_dtype(descr) < 0 || (rt = pg_get_rt(st)) == NULL) {
        goto done;
    }
    n = PyDataType_ELSIZE(descr);
    for (int i = 0; i < nd; i++) {
        if (shape[i] != 0 && n > NPY_MAX_INTP / shape[i]) {
            PyErr_SetString(PyExc_ValueError, "pinned_array: shape is too big");
            goto done;
        }
        n *= shape[i];
    }
    mem = PyObject_New(pg_pinned, st->PinnedMemoryType);
    if (mem == NULL) {
        goto done;
    }
    mem->ptr = NULL;
    mem->size = (size_t)n;
    mem->weakreflist = NULL;
    Py_BEGIN_ALLOW_THREADS
        err = rt->host_alloc(&mem->ptr, n > 0 ? (size_t)n : 1);
    Py_END_ALLOW_THREADS
    if (err != PG_SUCCESS) {
        mem->ptr = NULL;
        pg_raise_oom(st, err, "cudaHostAlloc", (size_t)n, -1);
        goto done;
    }
    Py_INCREF(descr);
    res = PyArray_NewFromDescr(&PyArray_Type, descr, nd, shape, NULL, mem->ptr,
                               NPY_ARRAY_WRITEABLE | (fortran ? NPY_ARRAY_F_CONTIGUOUS
                                                              : NPY_ARRAY_C_CONTIGUOUS),
                               NULL);
    if (res != NULL &&
        PyArray_SetBaseObject((PyArrayObject *)res, (PyObject *)mem) < 0) {
        Py_CLEAR(res);
    }
    mem = NULL; /* the array owns it now, or it was released */
done:
    Py_XDECREF(mem);
    Py_XDECREF(descr);
    return res;
}

static PyObject *
mod_is_pinned(PyObject *m, PyObject *arr)
{
    if (!PyArray_Check(arr)) {
        return PyErr_Format(PyExc_TypeError,
                            "is_pinned() takes a numpy.ndarray, not %.100s",
                            Py_TYPE(arr)->tp_name);
    }
    const pg_backend *rt = pg_rt_peek();
    return PyBool_FromLong(rt != NULL && pg_rt() != NULL &&
                           rt->is_pinned(PyArray_DATA((PyArrayObject *)arr)));
}

static PyObject *
mod_current_stream(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    pg_state *st = pg_state_of_module(m);
    int device = 0;
    if (tls_obj != NULL) {
        return Py_NewRef(tls_obj);
    }
    if (pg_get_rt(st) == NULL) {
        return NULL;
    }
    (void)pg_rt()->get_device(&device);
    return stream_new_raw(st, NULL, 0, device, 0);
}

static PyObject *
mod_default_stream(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    pg_state *st = pg_state_of_module(m);
    int device = 0;
    if (pg_get_rt(st) == NULL) {
        return NULL;
    }
    (void)pg_rt()->get_device(&device);
    return stream_new_raw(st, NULL, 0, device, 0);
}

static int
pool_device(PyObject *const *args, Py_ssize_t nargs, int *device)
{
    if (nargs >= 1 && args[0] != Py_None) {
        long d = PyLong_AsLong(args[0]);
        if (d == -1 && PyErr_Occurred()) {
            return -1;
        }
        *device = (int)d;
        return 0;
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
    if (pool_device(args, nargs, &device) < 0) {
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
    if (rt == NULL || pool_device(args, nargs, &device) < 0 ||
        pg_device_push(st, rt, device, &prev) < 0) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
        err = pg_pool_release_cached(device);
    Py_END_ALLOW_THREADS
    pg_device_pop(rt, prev);
    if (err != PG_SUCCESS) {
        return pg_raise(st, err, "cudaFree");
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
    if ((limit == -1 && PyErr_Occurred()) || pool_device(args, 1, &device) < 0) {
        return NULL;
    }
    if (limit < 0) {
        PyErr_SetString(PyExc_ValueError, "the limit must be >= 0 bytes (0: no limit)");
        return NULL;
    }
    pg_pool_set_limit(device, (size_t)limit);
    Py_RETURN_NONE;
}

PyMethodDef pg_stream_functions[] = {
    {"pinned_array", (PyCFunction)(void (*)(void))mod_pinned_array,
     METH_FASTCALL | METH_KEYWORDS,
     "pinned_array(shape, dtype=float64, order='C')\n--\n\n"
     "An uninitialized numpy.ndarray in page-locked host memory, freed with the array. "
     "Copies to and from it can run asynchronously on a stream."},
    {"is_pinned", mod_is_pinned, METH_O,
     "is_pinned(arr)\n--\n\nTrue if the array's memory is page-locked."},
    {"current_stream", mod_current_stream, METH_NOARGS,
     "current_stream()\n--\n\nThis thread's current Stream."},
    {"default_stream", mod_default_stream, METH_NOARGS,
     "default_stream()\n--\n\nThe default stream of the current device."},
    {"_pool_stats", (PyCFunction)(void (*)(void))mod_pool_stats, METH_FASTCALL,
     "_pool_stats(device=None)\n--\n\n(used, total, limit) bytes of the memory pool."},
    {"_pool_free_all", (PyCFunction)(void (*)(void))mod_pool_free_all, METH_FASTCALL,
     "_pool_free_all(device=None)\n--\n\nGive the pool's cached blocks back to the "
     "device."},
    {"_pool_set_limit", (PyCFunction)(void (*)(void))mod_pool_set_limit, METH_FASTCALL,
     "_pool_set_limit(device, limit)\n--\n\nCap the pool's bytes (0: no cap)."},
    {NULL},
};
