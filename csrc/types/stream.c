/* pygpu.Stream: a CUDA stream. `with stream:` makes it this thread's current
 * stream (context.c keeps that). */
#include "pygpu.h"

static PyObject *
Stream_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {NULL};
    pg_state *st = pg_state_of_type(type);
    const pg_backend *rt = NULL;
    pg_stream handle = NULL;
    PyObject *self = NULL;
    int device = 0;
    if (st == NULL || !PyArg_ParseTupleAndKeywords(args, kwargs, ":Stream", kwlist)) {
        return NULL;
    }
    if ((rt = pg_get_rt(st)) == NULL || pg_current_device(st, rt, &device) < 0) {
        return NULL;
    }
    if (PG_TRY(st, rt, stream_create, (&handle)) < 0) {
        return NULL;
    }
    self = pg_stream_obj_new(st, handle, pg_stream_new_serial(), device, 1);
    if (self == NULL) {
        (void)rt->stream_destroy(handle);
    }
    return self;
}

static void
Stream_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    pg_stream_obj *s = PG_STREAM(self);
    if (s->owned && s->handle != NULL && !pg_is_finalizing() &&
        !pg_context_unusable()) {
        /* work already queued finishes; cudaStreamDestroy does not wait */
        const pg_backend *rt = pg_rt();
        pg_report_failed_free(tp, PG_CALL(rt, stream_destroy, (s->handle)));
    }
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* None, or NULL with the exception for s. */
static PyObject *
stream_result(PyObject *self, pg_status s)
{
    pg_state *st = NULL;
    if (s.err == PG_SUCCESS) {
        Py_RETURN_NONE;
    }
    if ((st = pg_state_of_type(Py_TYPE(self))) != NULL) {
        (void)pg_check(st, s);
    }
    return NULL;
}

static PyObject *
Stream_synchronize(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    const pg_backend *rt = pg_rt();
    pg_stream h = PG_STREAM(self)->handle;
    pg_status s;
    Py_BEGIN_ALLOW_THREADS
        s = PG_CALL(rt, stream_synchronize, (h));
    Py_END_ALLOW_THREADS
    return stream_result(self, s);
}

static PyObject *
Stream_query(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    const pg_backend *rt = pg_rt();
    pg_status s = PG_CALL(rt, stream_query, (PG_STREAM(self)->handle));
    if (s.err == PG_ERR_NOT_READY) {
        Py_RETURN_FALSE;
    }
    if (s.err != PG_SUCCESS) {
        return stream_result(self, s);
    }
    Py_RETURN_TRUE;
}

static PyObject *
Stream_wait_event(PyObject *self, PyObject *event)
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    const pg_backend *rt = pg_rt();
    if (st == NULL) {
        return NULL;
    }
    if (!PyObject_TypeCheck(event, st->EventType)) {
        return PyErr_Format(PyExc_TypeError,
                            "wait_event() takes a pygpu.Event, not %.100s",
                            Py_TYPE(event)->tp_name);
    }
    if (PG_TRY(st, rt, stream_wait_event,
               (PG_STREAM(self)->handle, PG_EVENT(event)->handle)) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
Stream_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames)
{
    static const pg_signature sig = {
        "record", 0, 1, {{"event", pg_conv_object_or_none}}};
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    const pg_backend *rt = pg_rt();
    PyObject *argv[1] = {NULL}, *event = NULL;
    if (st == NULL || pg_parse(st, &sig, args, nargs, kwnames, &argv[0]) < 0) {
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
    if (PG_TRY(st, rt, event_record,
               (PG_EVENT(event)->handle, PG_STREAM(self)->handle)) < 0) {
        Py_DECREF(event);
        return NULL;
    }
    PG_EVENT(event)->recorded = 1;
    return event;
}

static PyObject *
Stream_enter(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    if (pg_stream_push(self) < 0) {
        return NULL;
    }
    return Py_NewRef(self);
}

static PyObject *
Stream_exit(PyObject *self, PyObject *Py_UNUSED(args))
{
    if (pg_stream_pop(self) < 0) {
        return NULL;
    }
    Py_RETURN_FALSE;
}

static PyObject *
Stream_cuda_stream(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return Py_BuildValue("(iN)", 0, PyLong_FromVoidPtr(PG_STREAM(self)->handle));
}

static PyObject *
Stream_get(PyObject *self, void *closure)
{
    switch ((int)(intptr_t)closure) {
    case 0: return PyLong_FromVoidPtr(PG_STREAM(self)->handle);
    default: return PyLong_FromLong(PG_STREAM(self)->device);
    }
}

static PyObject *
Stream_repr(PyObject *self)
{
    if (PG_STREAM(self)->handle == NULL) {
        return PyUnicode_FromString("<pygpu.Stream default>");
    }
    return PyUnicode_FromFormat("<pygpu.Stream %p on device %d>",
                                PG_STREAM(self)->handle, PG_STREAM(self)->device);
}

static PyObject *
Stream_richcompare(PyObject *a, PyObject *b, int op)
{
    if (!PyObject_TypeCheck(b, Py_TYPE(a)) || (op != Py_EQ && op != Py_NE)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    int same = PG_STREAM(a)->serial == PG_STREAM(b)->serial;
    return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static Py_hash_t
Stream_hash(PyObject *self)
{
    return (Py_hash_t)(PG_STREAM(self)->serial & 0x7fffffffffffffffULL);
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
