/* pygpu.Event: a mark in a stream's work, to wait for or to time between. */
#include "pygpu.h"

static PyObject *
Event_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"timing", NULL};
    pg_state *st = pg_state_of_type(type);
    const pg_backend *rt;
    pg_event_obj *e;
    int timing = 1, device = 0;
    if (st == NULL ||
        !PyArg_ParseTupleAndKeywords(args, kwargs, "|p:Event", kwlist, &timing) ||
        (rt = pg_get_rt(st)) == NULL || pg_current_device(st, rt, &device) < 0) {
        return NULL;
    }
    e = PyObject_New(pg_event_obj, type);
    if (e == NULL) {
        return NULL;
    }
    e->handle = NULL;
    e->device = device;
    e->timing = timing;
    e->recorded = 0;
    if (PG_TRY(st, rt, event_create, (&e->handle, timing)) < 0) {
        e->handle = NULL;
        Py_DECREF(e);
        return NULL;
    }
    return (PyObject *)e;
}

static void
Event_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    pg_event h = PG_EVENT(self)->handle;
    if (h != NULL && !pg_is_finalizing() && !pg_context_unusable()) {
        const pg_backend *rt = pg_rt();
        pg_report_failed_free(tp, PG_CALL(rt, event_destroy, (h)));
    }
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* None, or NULL with the exception for s. */
static PyObject *
event_result(PyObject *self, pg_status s)
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
Event_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {"record", 0, 1, {{"stream", pg_conv_stream}}};
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    const pg_backend *rt = pg_rt();
    pg_stream_arg s;
    int device = PG_EVENT(self)->device, prev = 0, rc;
    if (st == NULL || pg_parse(st, &sig, args, nargs, kwnames, &s) < 0) {
        return NULL;
    }
    /* an event belongs to its device: recorded on a stream of that device */
    if (pg_stream_for_device(&s.ref, device, s.given) < 0 ||
        pg_device_push(st, rt, device, &prev) < 0) {
        return NULL;
    }
    rc = PG_TRY(st, rt, event_record, (PG_EVENT(self)->handle, s.ref.handle));
    pg_device_pop(rt, prev);
    if (rc < 0) {
        return NULL;
    }
    PG_EVENT(self)->recorded = 1;
    Py_RETURN_NONE;
}

static PyObject *
Event_synchronize(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    const pg_backend *rt = pg_rt();
    pg_event h = PG_EVENT(self)->handle;
    pg_status s;
    Py_BEGIN_ALLOW_THREADS
        s = PG_CALL(rt, event_synchronize, (h));
    Py_END_ALLOW_THREADS
    return event_result(self, s);
}

static PyObject *
Event_query(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    const pg_backend *rt = pg_rt();
    pg_status s = PG_CALL(rt, event_query, (PG_EVENT(self)->handle));
    if (s.err == PG_ERR_NOT_READY) {
        Py_RETURN_FALSE;
    }
    if (s.err != PG_SUCCESS) {
        return event_result(self, s);
    }
    Py_RETURN_TRUE;
}

static PyObject *
Event_elapsed_time(PyObject *self, PyObject *end)
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    const pg_backend *rt = pg_rt();
    pg_event start_h, end_h;
    float ms = 0;
    pg_status s;
    if (st == NULL) {
        return NULL;
    }
    if (!PyObject_TypeCheck(end, st->EventType)) {
        return PyErr_Format(PyExc_TypeError,
                            "elapsed_time() takes a pygpu.Event, not %.100s",
                            Py_TYPE(end)->tp_name);
    }
    if (PG_EVENT(self)->device != PG_EVENT(end)->device) {
        return PyErr_Format(PyExc_ValueError,
                            "elapsed_time() between events of two devices (%d and %d): "
                            "their clocks cannot be compared; time each device with "
                            "events of its own",
                            PG_EVENT(self)->device, PG_EVENT(end)->device);
    }
    if (!PG_EVENT(self)->timing || !PG_EVENT(end)->timing) {
        PyErr_SetString(PyExc_ValueError,
                        "elapsed_time() needs events made with timing=True");
        return NULL;
    }
    if (!PG_EVENT(self)->recorded || !PG_EVENT(end)->recorded) {
        PyErr_SetString(PyExc_ValueError,
                        "elapsed_time() needs both events recorded; call "
                        "event.record(stream) on each first");
        return NULL;
    }
    start_h = PG_EVENT(self)->handle;
    end_h = PG_EVENT(end)->handle;
    Py_BEGIN_ALLOW_THREADS
        s = PG_CALL(rt, event_synchronize, (end_h));
        if (s.err == PG_SUCCESS) {
            s = PG_CALL(rt, event_elapsed_ms, (&ms, start_h, end_h));
        }
    Py_END_ALLOW_THREADS
    if (pg_check(st, s) < 0) {
        return NULL;
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
