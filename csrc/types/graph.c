/* pygpu.Graph: a CUDA graph made by stream capture, and replayed.
 *
 *     with cuda.graph() as g:      # this thread's current stream is captured
 *         for _ in range(256):
 *             kernels.add_one[1, 32](d)
 *     g.replay()                   # the 256 launches, as one cudaGraphLaunch
 *
 * __enter__ waits for the device (so that the memory the pool hands the
 * capture has no work pending), makes a stream of its own (it does not wait
 * for the legacy default stream, which cannot be captured), begins the
 * capture and makes that stream current; launches, device-to-device copies
 * and memsets queued on it are recorded, not run. __exit__ ends the capture
 * and instantiates the graph, or, when an exception leaves the block,
 * discards it. What a capture cannot record is refused by the backend
 * (PG_BACKEND_CALLS), with the capture still valid.
 *
 * The memory baked into the graph stays with it: every Buffer that recorded
 * work touches is held (context.c's capture list), and goes back to the pool
 * when the Graph goes, ordered after its last replay. */
#include "pygpu.h"

enum { GRAPH_NEW, GRAPH_CAPTURING, GRAPH_READY, GRAPH_DISCARDED };

typedef struct {
    PyObject_HEAD
    pg_state *st; /* the module's, alive while the type (and so this) is */
    int state;    /* GRAPH_* */
    int device;
    PyObject *stream; /* the captured Stream, while capturing */
    uint64_t serial;  /* its serial: the capture's */
    PyObject *held;   /* list of the Buffers the graph's work touches */
    pg_graph_exec exec;
    size_t nodes;
    uint64_t replays;
    pg_stream_ref last; /* the stream of the last replay; last.obj is owned */
} pg_graph_obj;

#define GRAPH(o) ((pg_graph_obj *)(o))

static PyObject *
Graph_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {NULL};
    pg_state *st = pg_state_of_type(type);
    pg_graph_obj *g;
    if (st == NULL || !PyArg_ParseTupleAndKeywords(args, kwargs, ":Graph", kwlist)) {
        return NULL;
    }
    g = PyObject_GC_New(pg_graph_obj, type);
    if (g == NULL) {
        return NULL;
    }
    g->st = st;
    g->state = GRAPH_NEW;
    g->device = -1;
    g->stream = NULL;
    g->serial = 0;
    g->held = NULL;
    g->exec = NULL;
    g->nodes = 0;
    g->replays = 0;
    g->last = (pg_stream_ref){NULL, 0, NULL, -1};
    PyObject_GC_Track(g);
    return (PyObject *)g;
}

/* The memory the graph holds goes back after its last replay: each buffer
 * whose last use is the capture is noted on the replay's stream, and a
 * stream that used one since is made to wait for that replay, so that the
 * pool hands the memory out again only once the replay is done. Launches of
 * one graph run one after another, so the last replay's stream orders them
 * all. With g's device current. */
static pg_err
wait_for(const pg_backend *rt, pg_stream stream)
{
    pg_err err;
    Py_BEGIN_ALLOW_THREADS
        err = rt->stream_synchronize(stream);
    Py_END_ALLOW_THREADS
    return err;
}

static void
order_release_after_replays(const pg_backend *rt, pg_graph_obj *g)
{
    pg_event done = NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(g->held); i++) {
        pg_buffer *b = (pg_buffer *)PyList_GET_ITEM(g->held, i);
        if (b->serial == g->serial) {
            pg_buffer_note_stream(b, &g->last);
        }
        else if (b->serial != g->last.serial) {
            if (done == NULL &&
                (rt->event_create(&done, 0) != PG_SUCCESS ||
                 rt->event_record(done, g->last.handle) != PG_SUCCESS)) {
                /* no event: wait for the replay instead */
                if (done != NULL) {
                    (void)rt->event_destroy(done);
                }
                (void)wait_for(rt, g->last.handle);
                return;
            }
            (void)rt->stream_wait_event(b->stream, done);
        }
    }
    if (done != NULL) {
        (void)rt->event_destroy(done); /* released once the waits are done */
    }
}

/* Lets go of the graph, its instance and its memory (never raises). A Graph
 * never entered has touched no backend, and asks none. */
static void
release(pg_graph_obj *g)
{
    const pg_backend *rt = g->device >= 0 ? pg_rt() : NULL;
    int live = rt != NULL && !pg_is_finalizing() && !pg_context_unusable();
    int prev = -1;
    if (live && rt->get_device(&prev) == PG_SUCCESS && prev != g->device &&
        rt->set_device(g->device) != PG_SUCCESS) {
        live = 0;
    }
    if (live && g->exec != NULL) {
        if (g->replays > 0 && g->held != NULL) {
            order_release_after_replays(rt, g);
        }
        pg_report_failed_free(Py_TYPE(g), PG_CALL(rt, graph_exec_destroy, (g->exec)));
    }
    g->exec = NULL;
    if (g->state == GRAPH_READY) {
        g->state = GRAPH_DISCARDED;
    }
    if (live && prev >= 0 && prev != g->device) {
        (void)rt->set_device(prev);
    }
    Py_CLEAR(g->held); /* the buffers go back to the pool, in the order above */
    Py_CLEAR(g->last.obj);
    Py_CLEAR(g->stream);
}

/* ---- the capture ------------------------------------------------------------- */

static PyObject *
Graph_enter(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pg_graph_obj *g = GRAPH(self);
    pg_state *st = g->st;
    const pg_backend *rt = NULL;
    pg_stream handle = NULL;
    pg_status s;
    if (g->state != GRAPH_NEW) {
        PyErr_SetString(PyExc_RuntimeError,
                        "a Graph is captured once; make a new one with cuda.graph()");
        return NULL;
    }
    if (pg_capture_on_this_thread()) {
        PyErr_SetString(
            PyExc_RuntimeError,
            "cuda.graph() inside `with cuda.graph()`: this thread is already "
            "capturing a CUDA graph, and captures do not nest; end the outer "
            "capture first (a Graph can be replayed inside another's "
            "capture neither)");
        return NULL;
    }
    if ((rt = pg_get_rt(st)) == NULL || pg_current_device(st, rt, &g->device) < 0) {
        return NULL;
    }
    /* work queued before is done: the pool may hand the capture memory that
     * it touched (unless another thread captures on this device, which a
     * wait would disturb) */
    if (!pg_capture_device(g->device)) {
        Py_BEGIN_ALLOW_THREADS
            s = PG_CALL(rt, synchronize, ());
        Py_END_ALLOW_THREADS
        if (pg_check(st, s) < 0) {
            return NULL;
        }
    }
    if (PG_TRY(st, rt, stream_create_nonblocking, (&handle)) < 0) {
        return NULL;
    }
    g->serial = pg_stream_new_serial();
    g->stream = pg_stream_obj_new(st, handle, g->serial, g->device, 1);
    if (g->stream == NULL) {
        (void)rt->stream_destroy(handle);
        return NULL;
    }
    if ((g->held = PyList_New(0)) == NULL ||
        pg_capture_register(g->serial, g->held) < 0) {
        Py_CLEAR(g->held);
        Py_CLEAR(g->stream);
        return NULL;
    }
    if (PG_TRY(st, rt, stream_begin_capture, (handle)) < 0) {
        (void)pg_capture_unregister(g->serial);
        Py_CLEAR(g->held);
        Py_CLEAR(g->stream);
        return NULL;
    }
    if (pg_stream_push(g->stream) < 0) {
        pg_graph graph = NULL;
        (void)rt->stream_end_capture(handle, &graph);
        if (graph != NULL) {
            (void)rt->graph_destroy(graph);
        }
        (void)pg_capture_unregister(g->serial);
        Py_CLEAR(g->held);
        Py_CLEAR(g->stream);
        return NULL;
    }
    g->state = GRAPH_CAPTURING;
    return Py_NewRef(self);
}

/* Ends the capture, with the graph's device current (a graph is made for its
 * device, whichever device the block left current). With an exception on its
 * way out of the block, the graph is discarded and the exception goes on;
 * otherwise the graph is instantiated, or the reason it cannot be is raised. */
static PyObject *
Graph_exit(PyObject *self, PyObject *args)
{
    pg_graph_obj *g = GRAPH(self);
    pg_state *st = g->st;
    const pg_backend *rt = pg_rt();
    PyObject *exc_type = Py_None, *result = NULL;
    pg_graph graph = NULL;
    pg_status end, made = {PG_SUCCESS, NULL};
    int popped, failed, prev = -1;
    if (PyTuple_GET_SIZE(args) > 0) {
        exc_type = PyTuple_GET_ITEM(args, 0);
    }
    if (g->state != GRAPH_CAPTURING) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Graph.__exit__ without a capture under way (use the Graph as "
                        "`with cuda.graph() as g:`)");
        return NULL;
    }
    /* the stream stops being current even when the stack was disturbed */
    popped = pg_stream_pop(g->stream) == 0;
    if (rt->get_device(&prev) == PG_SUCCESS && prev != g->device) {
        (void)rt->set_device(g->device);
    }
    end = PG_CALL(rt, stream_end_capture, (PG_STREAM(g->stream)->handle, &graph));
    failed = pg_capture_unregister(g->serial);
    g->state = GRAPH_DISCARDED;
    Py_CLEAR(g->stream); /* the buffers it ordered keep it while they need it */
    if (exc_type != Py_None || !popped) {
        /* an exception leaves the block (or the stream stack's): no graph */
        if (exc_type != Py_None) {
            PyErr_Clear();
            result = Py_NewRef(Py_False);
        }
        goto done; /* else pg_stream_pop's RuntimeError */
    }
    if (failed) {
        (void)PyErr_NoMemory();
        goto done;
    }
    if (pg_check(st, end) < 0) {
        goto done;
    }
    made = PG_CALL(rt, graph_node_count, (graph, &g->nodes));
    if (made.err == PG_SUCCESS) {
        made = PG_CALL(rt, graph_instantiate, (&g->exec, graph));
    }
    if (pg_check(st, made) < 0) {
        g->exec = NULL;
        goto done;
    }
    g->state = GRAPH_READY;
    result = Py_NewRef(Py_False);
done:
    if (graph != NULL) {
        (void)rt->graph_destroy(graph); /* the instance, if any, is all that runs */
    }
    if (g->state != GRAPH_READY) {
        Py_CLEAR(g->held); /* memory of a discarded graph goes back */
    }
    if (prev >= 0 && prev != g->device) {
        (void)rt->set_device(prev);
    }
    return result;
}

/* ---- replay -------------------------------------------------------------------- */

static int
not_ready(pg_graph_obj *g)
{
    static const char *const why[] = {
        [GRAPH_NEW] = "it has not been captured: use it as `with cuda.graph() as g:`",
        [GRAPH_CAPTURING] = "it is being captured: replay it after the `with` block",
        [GRAPH_DISCARDED] = "its capture did not complete (an exception left the "
                            "`with` block), so it was discarded",
    };
    PyErr_Format(PyExc_RuntimeError, "this Graph cannot be replayed: %s",
                 why[g->state]);
    return -1;
}

/* The hot path: on this thread's current stream (or the one given), the way
 * a kernel launch is; asynchronous. */
static PyObject *
Graph_replay(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {"replay", 0, 1, {{"stream", pg_conv_stream}}};
    pg_graph_obj *g = GRAPH(self);
    pg_state *st = g->st;
    const pg_backend *rt = NULL;
    pg_stream_arg s;
    pg_err err;
    int prev = -1;
    if (g->state != GRAPH_READY) {
        (void)not_ready(g);
        return NULL;
    }
    rt = pg_rt();
    if (nargs == 0 && kwnames == NULL) {
        s.given = 0;
        (void)pg_resolve_stream(st, NULL, &s.ref);
    }
    else if (pg_parse(st, &sig, args, nargs, kwnames, &s) < 0) {
        return NULL;
    }
    /* a graph runs on the device it was captured on */
    if (pg_stream_for_device(&s.ref, g->device, s.given) < 0 ||
        pg_device_enter(st, rt, g->device, &prev) < 0) {
        return NULL;
    }
    err = rt->graph_launch(g->exec, s.ref.handle);
    pg_device_leave(rt, prev);
    if (err != PG_SUCCESS) {
        pg_raise(st, err, pg_call_names.graph_launch);
        return NULL;
    }
    g->replays++;
    if (s.ref.serial != g->last.serial || g->last.obj != s.ref.obj) {
        PyObject *old = g->last.obj;
        g->last = s.ref;
        Py_XINCREF(g->last.obj);
        Py_XDECREF(old);
    }
    Py_RETURN_NONE;
}

/* ---- the type ------------------------------------------------------------------ */

static int
Graph_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(GRAPH(self)->held);
    Py_VISIT(GRAPH(self)->stream);
    Py_VISIT(GRAPH(self)->last.obj);
    return 0;
}

static int
Graph_clear(PyObject *self)
{
    pg_graph_obj *g = GRAPH(self);
    if (g->state != GRAPH_CAPTURING) {
        release(g);
    }
    return 0;
}

static void
Graph_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    pg_graph_obj *g = GRAPH(self);
    PyObject_GC_UnTrack(self);
    if (g->state == GRAPH_CAPTURING) {
        /* __enter__ without __exit__: the capture ends here (its stream
         * stays current on the thread that began it) */
        const pg_backend *rt = pg_rt();
        pg_graph graph = NULL;
        if (!pg_is_finalizing() && !pg_context_unusable() &&
            rt->stream_end_capture(PG_STREAM(g->stream)->handle, &graph) ==
                PG_SUCCESS &&
            graph != NULL) {
            (void)rt->graph_destroy(graph);
        }
        (void)pg_capture_unregister(g->serial);
        g->state = GRAPH_DISCARDED;
    }
    release(g);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *
Graph_repr(PyObject *self)
{
    pg_graph_obj *g = GRAPH(self);
    switch (g->state) {
    case GRAPH_NEW: return PyUnicode_FromString("<pygpu.Graph, not captured yet>");
    case GRAPH_CAPTURING:
        return PyUnicode_FromFormat("<pygpu.Graph capturing on device %d>", g->device);
    case GRAPH_READY:
        return PyUnicode_FromFormat(
            "<pygpu.Graph of %zu node%s on device %d, holding %zd buffer%s, replayed "
            "%llu time%s>",
            g->nodes, g->nodes == 1 ? "" : "s", g->device,
            g->held != NULL ? PyList_GET_SIZE(g->held) : (Py_ssize_t)0,
            g->held != NULL && PyList_GET_SIZE(g->held) == 1 ? "" : "s",
            (unsigned long long)g->replays, g->replays == 1 ? "" : "s");
    default:
        return PyUnicode_FromString(
            "<pygpu.Graph, discarded: its capture did not complete>");
    }
}

static PyObject *
Graph_get(PyObject *self, void *closure)
{
    static const char *const states[] = {"new", "capturing", "ready", "discarded"};
    pg_graph_obj *g = GRAPH(self);
    switch ((int)(intptr_t)closure) {
    case 0: return PyLong_FromSize_t(g->nodes);
    case 1:
        if (g->device < 0) {
            Py_RETURN_NONE;
        }
        return PyLong_FromLong(g->device);
    case 2: return PyLong_FromUnsignedLongLong(g->replays);
    case 3: return PyUnicode_FromString(states[g->state]);
    default:
        if (g->stream != NULL) {
            return Py_NewRef(g->stream);
        }
        Py_RETURN_NONE;
    }
}

static PyMethodDef Graph_methods[] = {
    {"replay", (PyCFunction)(void (*)(void))Graph_replay, METH_FASTCALL | METH_KEYWORDS,
     "replay($self, /, stream=None)\n--\n\nLaunch the captured work once more, as one "
     "CUDA graph launch, on `stream` (this thread's current stream if None), "
     "asynchronously like a kernel launch. Replays of one graph run one after "
     "another, whatever their streams."},
    {"__enter__", Graph_enter, METH_NOARGS, NULL},
    {"__exit__", Graph_exit, METH_VARARGS, NULL},
    {NULL},
};

static PyGetSetDef Graph_getset[] = {
    {"nodes", Graph_get, NULL,
     "The graph's nodes (kernel launches, copies, memsets); 0 until it is captured.",
     (void *)0},
    {"device", Graph_get, NULL, "The device it runs on; None until it is captured.",
     (void *)1},
    {"replays", Graph_get, NULL, "How many times it was replayed.", (void *)2},
    {"state", Graph_get, NULL, "'new', 'capturing', 'ready' or 'discarded'.",
     (void *)3},
    {"stream", Graph_get, NULL,
     "The Stream being captured (the current stream inside the `with` block); None "
     "outside it.",
     (void *)4},
    {NULL},
};

static PyType_Slot Graph_slots[] = {
    {Py_tp_new, Graph_new},
    {Py_tp_dealloc, Graph_dealloc},
    {Py_tp_traverse, Graph_traverse},
    {Py_tp_clear, Graph_clear},
    {Py_tp_repr, Graph_repr},
    {Py_tp_methods, Graph_methods},
    {Py_tp_getset, Graph_getset},
    {Py_tp_doc,
     "Graph()\n--\n\nA CUDA graph made by stream capture: `with cuda.graph() as g:` "
     "records the kernel launches, device-to-device copies and memsets queued on "
     "this thread's current stream in the block, without running them; "
     "g.replay() then runs them all as one launch, as many times as asked. Memory "
     "the recorded work touches stays with the graph while it lives."},
    {0, NULL},
};

PyType_Spec pg_graph_spec = {
    .name = "pygpu.Graph",
    .basicsize = sizeof(pg_graph_obj),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = Graph_slots,
};
