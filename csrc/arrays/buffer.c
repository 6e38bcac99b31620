/* pygpu._core.Buffer: the one owner of a piece of memory, as CuPy's
 * Memory/UnownedMemory and cuda.core's Buffer. An array and each of its views
 * hold one reference to the buffer; the memory goes back (to the pool, to
 * its foreign owner, to the pinned allocator, or to the system: the memory
 * of a large new host array) when the last one goes.
 *
 * It is a Python object, not a bare C struct, so that the garbage collector
 * can follow array -> buffer -> foreign owner: an object that exports
 * __cuda_array_interface__ and keeps pygpu.asarray() of itself is a cycle
 * the collector must see whole. */
#include "pygpu.h"

#define BUF(o) ((pg_buffer *)(o))

static pg_buffer *
buffer_new(pg_state *st, char *ptr, size_t size, int device, pg_buffer_kind kind)
{
    pg_buffer *b = PyObject_GC_New(pg_buffer, st->BufferType);
    if (b == NULL) {
        return NULL;
    }
    b->ptr = ptr;
    b->size = size;
    b->device = device;
    b->kind = kind;
    b->readonly = 0;
    b->owner = NULL;
    b->stream = NULL;
    b->serial = 0;
    b->stream_obj = NULL;
    b->weakreflist = NULL;
    /* Tracked by the collector only when it holds a foreign owner of a GC
     * type, the one thing through which a cycle can lead back to it: a
     * pooled buffer can be in no cycle, and leaving it untracked keeps
     * allocation cheap. (stream_obj is a pygpu Stream, which holds nothing,
     * or a foreign stream object, which is not followed: see
     * docs/ARCHITECTURE.md.) */
    return b;
}

pg_buffer *
pg_buffer_alloc(pg_state *st, size_t size, int device, int device_is_current,
                const pg_stream_ref *s)
{
    void *ptr = NULL;
    pg_buffer *b;
    pg_err err = PG_SUCCESS;
    if (size > 0) {
        Py_BEGIN_ALLOW_THREADS
            err = device_is_current
                      ? pg_pool_alloc_current(&ptr, size, device, s->handle, s->serial)
                      : pg_pool_alloc(&ptr, size, device, s->handle, s->serial);
        Py_END_ALLOW_THREADS
        if (err == PG_ERR_MEMORY_ALLOCATION) {
            return (pg_buffer *)pg_raise_oom(st, err, pg_call_names.malloc, size,
                                             device);
        }
        if (err != PG_SUCCESS) {
            return (pg_buffer *)pg_raise(st, err, pg_call_names.malloc);
        }
    }
    b = buffer_new(st, ptr, size, device, PG_BUFFER_POOLED);
    if (b == NULL) {
        if (ptr != NULL) {
            (void)pg_pool_free(ptr, size, device, s->handle, s->serial);
        }
        return NULL;
    }
    b->stream = s->handle;
    b->serial = s->serial;
    b->stream_obj = Py_XNewRef(s->obj);
    pg_capture_hold((PyObject *)b, s->serial); /* a graph's memory */
    return b;
}

pg_buffer *
pg_buffer_pinned(pg_state *st, size_t size)
{
    const pg_backend *rt = pg_rt();
    void *ptr = NULL;
    pg_buffer *b;
    pg_status s;
    Py_BEGIN_ALLOW_THREADS
        s = PG_CALL(rt, host_alloc, (&ptr, size > 0 ? size : 1));
    Py_END_ALLOW_THREADS
    if (s.err != PG_SUCCESS) {
        return (pg_buffer *)pg_raise_oom(st, s.err, s.call, size, -1);
    }
    b = buffer_new(st, ptr, size, -1, PG_BUFFER_PINNED);
    if (b == NULL) {
        (void)rt->host_free(ptr);
    }
    return b;
}

pg_buffer *
pg_buffer_host(pg_state *st, size_t size)
{
    void *ptr;
    pg_buffer *b;
    Py_BEGIN_ALLOW_THREADS
        ptr = pg_host_map(size);
    Py_END_ALLOW_THREADS
    if (ptr == NULL) {
        char text[32];
        pg_format_bytes(text, sizeof(text), size);
        PyErr_Format(PyExc_MemoryError, "Unable to allocate %s for a host array", text);
        return NULL;
    }
    b = buffer_new(st, ptr, size, -1, PG_BUFFER_HOST);
    if (b == NULL) {
        pg_host_unmap(ptr, size);
    }
    return b;
}

pg_buffer *
pg_buffer_foreign(pg_state *st, void *ptr, size_t size, int device, PyObject *owner)
{
    pg_buffer *b = buffer_new(st, ptr, size, device, PG_BUFFER_FOREIGN);
    if (b != NULL) {
        b->owner = Py_NewRef(owner);
        if (PyObject_IS_GC(owner)) {
            PyObject_GC_Track(b);
        }
    }
    return b;
}

void
pg_buffer_note_stream_slow(pg_buffer *b, const pg_stream_ref *s)
{
    b->stream = s->handle;
    b->serial = s->serial;
    Py_XSETREF(b->stream_obj, Py_XNewRef(s->obj));
    pg_capture_hold((PyObject *)b, s->serial); /* used by a graph's work */
}

/* Gives the memory back. A failed free cannot raise from a dealloc: it is
 * reported as unraisable. */
static void
release(pg_buffer *b)
{
    const pg_backend *rt = pg_rt();
    pg_status s = {PG_SUCCESS, NULL};
    void *ptr = b->ptr;
    size_t size = b->size;
    int device = b->device;
    pg_stream stream = b->stream;
    uint64_t serial = b->serial;
    b->ptr = NULL;
    if (ptr != NULL && b->kind == PG_BUFFER_HOST) {
        /* plain host memory: freed whatever became of the device */
        if (pg_is_finalizing()) {
            pg_host_unmap(ptr, size);
            return;
        }
        Py_BEGIN_ALLOW_THREADS
            pg_host_unmap(ptr, size);
        Py_END_ALLOW_THREADS
        return;
    }
    if (ptr == NULL || pg_is_finalizing() || pg_context_unusable()) {
        return;
    }
    switch (b->kind) {
    case PG_BUFFER_POOLED:
        Py_BEGIN_ALLOW_THREADS
            s.err = pg_pool_free(ptr, size, device, stream, serial);
        Py_END_ALLOW_THREADS
        s.call = pg_call_names.free;
        break;
    case PG_BUFFER_PINNED:
        Py_BEGIN_ALLOW_THREADS
            s = PG_CALL(rt, host_free, (ptr));
        Py_END_ALLOW_THREADS
        break;
    case PG_BUFFER_FOREIGN: /* its owner frees it */
    case PG_BUFFER_HOST: break;
    }
    pg_report_failed_free(Py_TYPE(b), s);
}

static int
Buffer_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(BUF(self)->owner);
    /* not stream_obj: see buffer_new */
    return 0;
}

static int
Buffer_clear(PyObject *self)
{
    Py_CLEAR(BUF(self)->owner);
    Py_CLEAR(BUF(self)->stream_obj);
    return 0;
}

static void
Buffer_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (BUF(self)->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    /* the memory first, while the owner and stream still live */
    release(BUF(self));
    (void)Buffer_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *
Buffer_repr(PyObject *self)
{
    static const char *const kinds[] = {"pooled", "foreign", "pinned", "host"};
    pg_buffer *b = BUF(self);
    return PyUnicode_FromFormat("<pygpu buffer of %zu bytes at %p, %s, device %d>",
                                b->size, (void *)b->ptr, kinds[b->kind], b->device);
}

static PyObject *
Buffer_get(PyObject *self, void *closure)
{
    pg_buffer *b = BUF(self);
    switch ((int)(intptr_t)closure) {
    case 0: return PyLong_FromVoidPtr(b->ptr);
    case 1: return PyLong_FromSize_t(b->size);
    case 2: return PyLong_FromLong(b->device);
    default: return Py_NewRef(b->owner != NULL ? b->owner : Py_None);
    }
}

static PyGetSetDef Buffer_getset[] = {
    {"ptr", Buffer_get, NULL, "Address of the memory, an int.", (void *)0},
    {"size", Buffer_get, NULL, "Bytes.", (void *)1},
    {"device", Buffer_get, NULL, "The device id; -1 for host memory.", (void *)2},
    {"owner", Buffer_get, NULL, "The foreign object that keeps the memory alive.",
     (void *)3},
    {NULL},
};

static PyMemberDef Buffer_members[] = {
    {"__weaklistoffset__", Py_T_PYSSIZET, offsetof(pg_buffer, weakreflist), Py_READONLY,
     NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot Buffer_slots[] = {
    {Py_tp_dealloc, Buffer_dealloc},
    {Py_tp_traverse, Buffer_traverse},
    {Py_tp_clear, Buffer_clear},
    {Py_tp_repr, Buffer_repr},
    {Py_tp_getset, Buffer_getset},
    {Py_tp_members, Buffer_members},
    {Py_tp_doc, "Memory owned by pygpu (pooled device memory, pinned host "
                "memory, the memory of a large array copied to the host) or by "
                "another library; arrays and views share it."},
    {0, NULL},
};

PyType_Spec pg_buffer_spec = {
    .name = "pygpu._core.Buffer",
    .basicsize = sizeof(pg_buffer),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = Buffer_slots,
};
