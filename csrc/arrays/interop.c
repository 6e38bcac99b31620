/* Zero-copy exchange with other libraries: the CUDA array interface
 * (version 3) and DLPack (0.8 and 1.x capsules), both ways. */
#include <string.h>

#include "pygpu.h"

/* ---- DLPack's structures, as its specification lays them out ---------------- */

enum { DL_CPU = 1, DL_CUDA = 2 };
/* DLManagedTensorVersioned.flags */
enum { DL_FLAG_READ_ONLY = 1 << 0, DL_FLAG_IS_COPIED = 1 << 1 };

typedef struct {
    int32_t device_type;
    int32_t device_id;
} dl_device;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} dl_dtype;

typedef struct {
    void *data;
    dl_device device;
    int32_t ndim;
    dl_dtype dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL for C order */
    uint64_t byte_offset;
} dl_tensor;

typedef struct dl_managed {
    dl_tensor tensor;
    void *manager_ctx;
    void (*deleter)(struct dl_managed *self);
} dl_managed;

typedef struct dl_managed_v {
    struct {
        uint32_t major, minor;
    } version;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_v *self);
    uint64_t flags;
    dl_tensor tensor;
} dl_managed_v;

/* ---- helpers ----------------------------------------------------------------- */

/* The stream a consumer uses, as the interop protocols number it: 1 for the
 * legacy default stream, else the handle. */
static PyObject *
protocol_stream(pg_array *a)
{
    if (a->buf->serial == 0) {
        return PyLong_FromLong(1);
    }
    return PyLong_FromVoidPtr(a->buf->stream);
}

/* Make work on `consumer` (a handle; 0, 1, 2 for default streams) wait for
 * the work queued so far on `producer`. */
static int
order_streams(pg_state *st, pg_stream producer, uint64_t producer_serial,
              uintptr_t consumer)
{
    const pg_backend *rt = pg_rt();
    pg_event e = NULL;
    pg_stream to = consumer <= 2 ? NULL : (pg_stream)consumer;
    if (producer_serial == 0 && to == NULL) {
        return 0; /* both the legacy default stream */
    }
    if (to == producer && to != NULL) {
        return 0;
    }
    pg_status s = PG_CALL(rt, event_create, (&e, 0));
    if (s.err == PG_SUCCESS) {
        s = PG_CALL(rt, event_record, (e, producer));
    }
    if (s.err == PG_SUCCESS) {
        s = PG_CALL(rt, stream_wait_event, (to, e));
    }
    if (e != NULL) {
        (void)rt->event_destroy(e);
    }
    return pg_check(st, s);
}

/* A stream number of the interop protocols (__dlpack__(stream=),
 * __cuda_array_interface__'s "stream"), by their rules for CUDA: an int, 1
 * the legacy default stream, 2 the per-thread one, larger a cudaStream_t; 0 is
 * ambiguous and refused by both; -1 (DLPack only, minus_one set) asks for no
 * synchronization and gives *out = 0. Anything else raises, naming `what`. */
static int
stream_number(PyObject *obj, const char *what, int minus_one, uintptr_t *out)
{
    int overflow = 0;
    long long v;
    if (PyBool_Check(obj) || !PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int or None, not %.100s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(obj);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
        }
        else if (u <= UINTPTR_MAX) {
            *out = (uintptr_t)u;
            return 0;
        }
    }
    if (overflow != 0 || v == 0 || v < -1 || (v == -1 && !minus_one)) {
        PyErr_Format(
            PyExc_ValueError,
            "%s=%R is not a CUDA stream: expected None, 1 (the legacy default "
            "stream), 2 (the per-thread default stream)%s or a cudaStream_t "
            "handle (an int above 2, below 2**64); 0 is ambiguous and not allowed",
            what, obj, minus_one ? ", -1 (no synchronization)" : "");
        return -1;
    }
    *out = v == -1 ? 0 : (uintptr_t)v;
    return 0;
}

/* ---- __cuda_array_interface__ -------------------------------------------------- */

PyObject *
pg_array_cai(PyObject *self, void *Py_UNUSED(closure))
{
    pg_array *a = (pg_array *)self;
    PyObject *shape = NULL, *strides = NULL, *typestr = NULL, *stream = NULL;
    PyObject *res = NULL;
    shape = PyArray_IntTupleFromIntp(a->nd, a->shape);
    if (a->flags & NPY_ARRAY_C_CONTIGUOUS) {
        strides = Py_NewRef(Py_None);
    }
    else {
        strides = PyArray_IntTupleFromIntp(a->nd, a->strides);
    }
    typestr = PyObject_GetAttrString((PyObject *)a->descr, "str");
    stream = protocol_stream(a);
    if (shape != NULL && strides != NULL && typestr != NULL && stream != NULL) {
        res = Py_BuildValue(
            "{sOsOsOs(NO)sisO}", "shape", shape, "typestr", typestr, "strides", strides,
            "data", PyLong_FromVoidPtr(pg_array_size(a) ? a->data : NULL),
            a->buf->readonly ? Py_True : Py_False, "version", 3, "stream", stream);
    }
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(typestr);
    Py_XDECREF(stream);
    return res;
}

static int
intp_tuple(PyObject *t, const char *what, int nd, npy_intp *out)
{
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != nd) {
        PyErr_Format(PyExc_ValueError,
                     "__cuda_array_interface__: %s must be a tuple of %d ints", what,
                     nd);
        return -1;
    }
    for (int i = 0; i < nd; i++) {
        out[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, i));
        if (out[i] == -1 && PyErr_Occurred()) {
            return -1;
        }
    }
    return 0;
}

static PyObject *
from_cai(pg_state *st, PyObject *obj, PyObject *cai)
{
    PyObject *item;
    PyArray_Descr *descr = NULL;
    npy_intp shape[PG_MAXDIMS], strides[PG_MAXDIMS];
    void *ptr;
    int nd, has_strides = 0, device = 0, readonly = 0;
    pg_array *a = NULL;
    const pg_backend *rt = pg_get_rt(st);
    if (rt == NULL) {
        return NULL;
    }
    if (!PyDict_Check(cai)) {
        return PyErr_Format(PyExc_TypeError,
                            "__cuda_array_interface__ must be a dict, not %.100s",
                            Py_TYPE(cai)->tp_name);
    }
    item = PyDict_GetItemString(cai, "mask");
    if (item != NULL && item != Py_None) {
        PyErr_SetString(PyExc_ValueError,
                        "__cuda_array_interface__ with a mask is not supported");
        return NULL;
    }
    item = PyDict_GetItemString(cai, "shape");
    if (item == NULL || !PyTuple_Check(item)) {
        PyErr_SetString(PyExc_ValueError,
                        "__cuda_array_interface__ needs 'shape', a tuple");
        return NULL;
    }
    nd = (int)PyTuple_GET_SIZE(item);
    if (nd > PG_MAXDIMS) {
        return PyErr_Format(PyExc_ValueError,
                            "the array has %d dimensions; pygpu arrays have at most %d",
                            nd, PG_MAXDIMS);
    }
    if (intp_tuple(item, "shape", nd, shape) < 0) {
        return NULL;
    }
    item = PyDict_GetItemString(cai, "strides");
    if (item != NULL && item != Py_None) {
        if (intp_tuple(item, "strides", nd, strides) < 0) {
            return NULL;
        }
        has_strides = 1;
    }
    item = PyDict_GetItemString(cai, "data");
    if (item == NULL || !PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
        PyErr_SetString(PyExc_ValueError,
                        "__cuda_array_interface__ needs 'data', (pointer, read_only)");
        return NULL;
    }
    {
        PyObject *p = PyTuple_GET_ITEM(item, 0);
        unsigned long long u = 0;
        if (PyBool_Check(p) || !PyLong_Check(p)) {
            return PyErr_Format(PyExc_TypeError,
                                "__cuda_array_interface__: 'data' must be (pointer, "
                                "read_only) with an int pointer, not %.100s",
                                Py_TYPE(p)->tp_name);
        }
        u = PyLong_AsUnsignedLongLong(p);
        if ((u == (unsigned long long)-1 && PyErr_Occurred()) || u > UINTPTR_MAX) {
            PyErr_Clear();
            return PyErr_Format(
                PyExc_ValueError,
                "__cuda_array_interface__: 'data' has the pointer %R; a "
                "device pointer is an int from 0 to 2**64-1",
                p);
        }
        ptr = (void *)(uintptr_t)u;
    }
    readonly = PyObject_IsTrue(PyTuple_GET_ITEM(item, 1));
    if (readonly < 0) {
        return NULL;
    }
    item = PyDict_GetItemString(cai, "typestr");
    if (item == NULL || !PyArray_DescrConverter(item, &descr)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError,
                            "__cuda_array_interface__ needs 'typestr'");
        }
        return NULL;
    }
    item = PyDict_GetItemString(cai, "stream");
    if (item != NULL && item != Py_None) {
        pg_stream_ref cur;
        uintptr_t producer = 0;
        if (stream_number(item, "__cuda_array_interface__: 'stream'", 0, &producer) <
            0) {
            goto done;
        }
        (void)pg_resolve_stream(st, NULL, &cur);
        /* our current stream waits for the producer's */
        if (pg_check_foreign_stream(producer, "__cuda_array_interface__: 'stream'") <
            0) {
            goto done;
        }
        if (producer > 2 &&
            order_streams(st, (pg_stream)producer, 1,
                          cur.serial == 0 ? 1 : (uintptr_t)cur.handle) < 0) {
            goto done;
        }
    }
    if (ptr == NULL) { /* an empty array's (pg_array_wrap refuses any other) */
        if (rt->get_device(&device) != PG_SUCCESS) {
            device = 0;
        }
    }
    else {
        device = rt->pointer_device(ptr);
        if (device < 0) {
            PyErr_Format(PyExc_ValueError,
                         "__cuda_array_interface__ points at %p, which is not device "
                         "memory this process can use",
                         ptr);
            goto done;
        }
    }
    a = pg_array_wrap(st, ptr, nd, shape, has_strides ? strides : NULL, descr, device,
                      obj, readonly);
done:
    Py_XDECREF(descr);
    return (PyObject *)a;
}

/* ---- DLPack: export ----------------------------------------------------------- */

static int
dl_dtype_of(PyArray_Descr *d, dl_dtype *out)
{
    const pg_dtype_info *info = pg_dtype_info_of(d->type_num);
    if (info == NULL) {
        PyErr_Format(PyExc_BufferError, "dtype %R has no DLPack equivalent",
                     (PyObject *)d);
        return -1;
    }
    out->lanes = 1;
    out->bits = (uint8_t)(8 * PyDataType_ELSIZE(d));
    out->code = (uint8_t)info->dl_code;
    return 0;
}

/* shape and strides live in the same allocation, after the struct */
static void
export_deleter_v(dl_managed_v *m)
{
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF((PyObject *)m->manager_ctx);
    PyMem_RawFree(m);
    PyGILState_Release(g);
}

static void
export_deleter(dl_managed *m)
{
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF((PyObject *)m->manager_ctx);
    PyMem_RawFree(m);
    PyGILState_Release(g);
}

static void
capsule_destructor(PyObject *capsule)
{
    /* Runs when the consumer drops the capsule, perhaps while an exception
     * of its own is being raised (NumPy refusing a CUDA tensor): keep it. */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    /* still unconsumed: nobody took ownership, so we delete it */
    if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        dl_managed_v *m = PyCapsule_GetPointer(capsule, "dltensor_versioned");
        if (m != NULL && m->deleter != NULL) {
            m->deleter(m);
        }
    }
    else if (PyCapsule_IsValid(capsule, "dltensor")) {
        dl_managed *m = PyCapsule_GetPointer(capsule, "dltensor");
        if (m != NULL && m->deleter != NULL) {
            m->deleter(m);
        }
    }
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
}

/* __dlpack__(dl_device=(kDLCPU, 0)): a host copy, exported by NumPy's own
 * __dlpack__ (copy_to_host has waited for the array's work), marked as a copy
 * where the capsule has flags (DLPack 1.x). */
static PyObject *
export_to_host(PyObject *self, PyObject *max_version)
{
    PyObject *host = NULL, *meth = NULL, *kw = NULL, *capsule = NULL;
    host = PyObject_CallMethod(self, "copy_to_host", NULL);
    if (host == NULL) {
        return NULL;
    }
    meth = PyObject_GetAttrString(host, "__dlpack__");
    if (max_version != NULL && max_version != Py_None) {
        kw = Py_BuildValue("{sO}", "max_version", max_version);
    }
    else {
        kw = PyDict_New();
    }
    if (meth != NULL && kw != NULL) {
        capsule = PyObject_VectorcallDict(meth, NULL, 0, kw);
    }
    if (capsule != NULL && PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        dl_managed_v *m = PyCapsule_GetPointer(capsule, "dltensor_versioned");
        m->flags |= DL_FLAG_IS_COPIED;
    }
    Py_XDECREF(kw);
    Py_XDECREF(meth);
    Py_DECREF(host);
    return capsule;
}

PyObject *
pg_array_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    static const pg_signature sig = {"__dlpack__",
                                     0,
                                     4,
                                     {{"stream", pg_conv_object},
                                      {"max_version", pg_conv_object},
                                      {"dl_device", pg_conv_object},
                                      {"copy", pg_conv_object}}};
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    pg_array *a = (pg_array *)self;
    PyObject *argv[4], *exported = NULL, *capsule = NULL;
    int versioned = 0;
    uintptr_t stream = 0;
    dl_dtype dt;
    if (st == NULL) {
        return NULL;
    }
    if (nargs > 0) {
        PyErr_SetString(PyExc_TypeError, "__dlpack__() takes keyword arguments only");
        return NULL;
    }
    if (pg_parse(st, &sig, args, 0, kwnames, &argv[0], &argv[1], &argv[2], &argv[3]) <
            0 ||
        dl_dtype_of(a->descr, &dt) < 0) {
        return NULL;
    }
    if (argv[1] != NULL && argv[1] != Py_None) {
        long major;
        if (!PyTuple_Check(argv[1]) || PyTuple_GET_SIZE(argv[1]) < 1) {
            PyErr_SetString(PyExc_TypeError,
                            "max_version must be a (major, minor) tuple");
            return NULL;
        }
        major = PyLong_AsLong(PyTuple_GET_ITEM(argv[1], 0));
        if (major == -1 && PyErr_Occurred()) {
            return NULL;
        }
        versioned = major >= 1;
    }
    if (argv[3] != NULL && argv[3] != Py_None && !PyBool_Check(argv[3])) {
        PyErr_Format(PyExc_TypeError,
                     "__dlpack__: copy must be True, False or None, not "
                     "%.100s",
                     Py_TYPE(argv[3])->tp_name);
        return NULL;
    }
    if (argv[0] != NULL && argv[0] != Py_None &&
        stream_number(argv[0], "__dlpack__: stream", 1, &stream) < 0) {
        return NULL;
    }
    if (argv[2] != NULL && argv[2] != Py_None) {
        long type, id;
        if (!PyTuple_Check(argv[2]) || PyTuple_GET_SIZE(argv[2]) != 2) {
            PyErr_SetString(PyExc_TypeError, "dl_device must be a (type, id) tuple");
            return NULL;
        }
        type = PyLong_AsLong(PyTuple_GET_ITEM(argv[2], 0));
        id = PyLong_AsLong(PyTuple_GET_ITEM(argv[2], 1));
        if (PyErr_Occurred()) {
            return NULL;
        }
        if (type == DL_CPU && id == 0 && argv[3] != Py_False) {
            if (argv[0] != NULL && argv[0] != Py_None) {
                PyErr_SetString(PyExc_ValueError,
                                "__dlpack__: stream must be None when dl_device is the "
                                "host (kDLCPU), as DLPack says");
                return NULL;
            }
            return export_to_host(self, argv[1]);
        }
        if (type != DL_CUDA || id != pg_array_device(a)) {
            PyErr_Format(PyExc_BufferError,
                         "this array is on CUDA device %d and cannot be exported to "
                         "DLPack device (%ld, %ld) without a copy%s",
                         pg_array_device(a), type, id,
                         type == DL_CPU && id == 0 ? ", and copy=False was given" : "");
            return NULL;
        }
    }
    if (argv[3] == Py_True) {
        exported = pg_array_copy(st, a, 0, NULL);
        if (exported == NULL) {
            return NULL;
        }
        a = (pg_array *)exported;
    }
    else {
        exported = Py_NewRef(self);
    }
    /* the consumer's stream waits for our last work on the array (-1: it asked
     * for no synchronization) */
    if (stream != 0 &&
        (pg_check_foreign_stream(stream, "__dlpack__(stream=)") < 0 ||
         order_streams(st, a->buf->stream, a->buf->serial, stream) < 0)) {
        Py_DECREF(exported);
        return NULL;
    }
    if (!versioned && a->buf->readonly) {
        Py_DECREF(exported);
        PyErr_SetString(PyExc_BufferError,
                        "cannot export a read-only array through DLPack before 1.0, "
                        "which cannot say it is read-only; ask for max_version=(1, 0)");
        return NULL;
    }
    size_t head = versioned ? sizeof(dl_managed_v) : sizeof(dl_managed);
    char *mem = PyMem_RawCalloc(1, head + 2 * sizeof(int64_t) * (size_t)(a->nd + 1));
    if (mem == NULL) {
        Py_DECREF(exported);
        return PyErr_NoMemory();
    }
    int64_t *shape = (int64_t *)(mem + head), *strides = shape + a->nd + 1;
    dl_tensor *t =
        versioned ? &((dl_managed_v *)mem)->tensor : &((dl_managed *)mem)->tensor;
    npy_intp itemsize = PyDataType_ELSIZE(a->descr);
    for (int i = 0; i < a->nd; i++) {
        shape[i] = a->shape[i];
        strides[i] = a->strides[i] / itemsize;
    }
    t->data = pg_array_size(a) ? a->data : NULL;
    t->device.device_type = DL_CUDA;
    t->device.device_id = pg_array_device(a);
    t->ndim = a->nd;
    t->dtype = dt;
    t->shape = shape;
    t->strides = strides;
    t->byte_offset = 0;
    if (versioned) {
        dl_managed_v *m = (dl_managed_v *)mem;
        m->version.major = 1;
        m->version.minor = 0;
        m->flags = (argv[3] == Py_True ? DL_FLAG_IS_COPIED : 0) |
                   (a->buf->readonly ? DL_FLAG_READ_ONLY : 0);
        m->manager_ctx = exported;
        m->deleter = export_deleter_v;
        capsule = PyCapsule_New(m, "dltensor_versioned", capsule_destructor);
    }
    else {
        dl_managed *m = (dl_managed *)mem;
        m->manager_ctx = exported;
        m->deleter = export_deleter;
        capsule = PyCapsule_New(m, "dltensor", capsule_destructor);
    }
    if (capsule == NULL) {
        Py_DECREF(exported);
        PyMem_RawFree(mem);
    }
    return capsule;
}

PyObject *
pg_array_dlpack_device(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return Py_BuildValue("(ii)", DL_CUDA, pg_array_device((pg_array *)self));
}

/* ---- DLPack: import ------------------------------------------------------------ */

/* Owns a consumed DLPack tensor: calls its deleter when the last array goes. */
static void
owner_destructor(PyObject *capsule)
{
    PyObject *type, *value, *tb;
    const char *name;
    void *p;
    PyErr_Fetch(&type, &value, &tb);
    name = PyCapsule_GetName(capsule);
    p = name == NULL ? NULL : PyCapsule_GetPointer(capsule, name);
    if (p != NULL && strcmp(name, "pygpu.dlpack_v") == 0) {
        dl_managed_v *m = p;
        if (m->deleter != NULL) {
            m->deleter(m);
        }
    }
    else if (p != NULL) {
        dl_managed *m = p;
        if (m->deleter != NULL) {
            m->deleter(m);
        }
    }
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
}

static PyArray_Descr *
descr_of(dl_dtype dt)
{
    int type = dt.lanes == 1 ? pg_dtype_from_dlpack(dt.code, dt.bits) : -1;
    if (type >= 0) {
        return PyArray_DescrFromType(type);
    }
    PyErr_Format(PyExc_TypeError,
                 "DLPack dtype (code %d, %d bits, %d lanes) has no pygpu equivalent",
                 dt.code, dt.bits, dt.lanes);
    return NULL;
}

static PyObject *
from_dlpack(pg_state *st, PyObject *obj)
{
    PyObject *dev = NULL, *capsule = NULL, *owner = NULL, *res = NULL, *kw = NULL;
    PyObject *meth = NULL, *stream_arg = NULL;
    PyArray_Descr *descr = NULL;
    npy_intp shape[PG_MAXDIMS], strides[PG_MAXDIMS];
    pg_array *exported = NULL; /* set when the tensor is one of our exports */
    int readonly = 0;
    dl_tensor *t;
    long type = 0, id = 0;
    int versioned;
    pg_stream_ref cur;
    if (pg_get_rt(st) == NULL) {
        return NULL;
    }
    dev = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
    if (dev == NULL) {
        return NULL;
    }
    if (!PyTuple_Check(dev) || PyTuple_GET_SIZE(dev) != 2) {
        PyErr_SetString(PyExc_TypeError, "__dlpack_device__() must return (type, id)");
        goto done;
    }
    type = PyLong_AsLong(PyTuple_GET_ITEM(dev, 0));
    id = PyLong_AsLong(PyTuple_GET_ITEM(dev, 1));
    if (PyErr_Occurred()) {
        goto done;
    }
    if (type != DL_CUDA) {
        PyErr_Format(PyExc_BufferError,
                     "from_dlpack takes CUDA arrays (DLPack device type 2); this one "
                     "is on device type %ld. Use pygpu.asarray to copy host data.",
                     type);
        goto done;
    }
    (void)pg_resolve_stream(st, NULL, &cur);
    stream_arg = cur.serial == 0 ? PyLong_FromLong(1) : PyLong_FromVoidPtr(cur.handle);
    meth = PyObject_GetAttrString(obj, "__dlpack__");
    if (stream_arg == NULL || meth == NULL) {
        goto done;
    }
    kw = Py_BuildValue("{sOs(ii)}", "stream", stream_arg, "max_version", 1, 0);
    if (kw == NULL) {
        goto done;
    }
    capsule = PyObject_VectorcallDict(meth, NULL, 0, kw);
    if (capsule == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        /* a producer older than DLPack 1.0 takes no max_version */
        PyErr_Clear();
        Py_SETREF(kw, Py_BuildValue("{sO}", "stream", stream_arg));
        if (kw == NULL) {
            goto done;
        }
        capsule = PyObject_VectorcallDict(meth, NULL, 0, kw);
    }
    if (capsule == NULL) {
        goto done;
    }
    versioned = PyCapsule_IsValid(capsule, "dltensor_versioned");
    if (!versioned && !PyCapsule_IsValid(capsule, "dltensor")) {
        PyErr_SetString(PyExc_TypeError,
                        "__dlpack__() did not return an unconsumed DLPack capsule");
        goto done;
    }
    if (versioned) {
        dl_managed_v *m = PyCapsule_GetPointer(capsule, "dltensor_versioned");
        if (m == NULL) {
            goto done;
        }
        if (m->version.major > 1) {
            PyErr_Format(PyExc_BufferError,
                         "DLPack version %u is newer than pygpu knows",
                         m->version.major);
            goto done;
        }
        t = &m->tensor;
        readonly = (m->flags & DL_FLAG_READ_ONLY) != 0;
        if (m->deleter == export_deleter_v) {
            exported = (pg_array *)m->manager_ctx;
        }
        owner = PyCapsule_New(m, "pygpu.dlpack_v", owner_destructor);
        if (owner == NULL ||
            PyCapsule_SetName(capsule, "used_dltensor_versioned") < 0) {
            goto done;
        }
    }
    else {
        dl_managed *m = PyCapsule_GetPointer(capsule, "dltensor");
        if (m == NULL) {
            goto done;
        }
        t = &m->tensor;
        if (m->deleter == export_deleter) {
            exported = (pg_array *)m->manager_ctx;
        }
        owner = PyCapsule_New(m, "pygpu.dlpack", owner_destructor);
        if (owner == NULL || PyCapsule_SetName(capsule, "used_dltensor") < 0) {
            goto done;
        }
    }
    if (t->device.device_type != DL_CUDA || t->device.device_id != id) {
        PyErr_Format(PyExc_BufferError,
                     "__dlpack__() gave a tensor on device (%d, %d), not the (2, %ld) "
                     "that __dlpack_device__() announced",
                     t->device.device_type, t->device.device_id, id);
        goto done;
    }
    if (t->ndim < 0 || t->ndim > PG_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "DLPack tensor has %d dimensions; at most %d",
                     t->ndim, PG_MAXDIMS);
        goto done;
    }
    if (t->ndim > 0 && t->shape == NULL) {
        PyErr_Format(PyExc_ValueError, "DLPack tensor of %d dimensions has no shape",
                     t->ndim);
        goto done;
    }
    descr = descr_of(t->dtype);
    if (descr == NULL) {
        goto done;
    }
    for (int i = 0; i < t->ndim; i++) {
        shape[i] = (npy_intp)t->shape[i];
        if (t->strides != NULL) {
            strides[i] = (npy_intp)t->strides[i] * PyDataType_ELSIZE(descr);
        }
    }
    if (exported != NULL) {
        /* Our own export: share the exported array's buffer, so that the
         * collector sees the whole chain (a capsule hides what it holds). */
        res = (PyObject *)pg_array_over(
            st, exported->buf, (char *)t->data + t->byte_offset, t->ndim, shape,
            t->strides != NULL ? strides : NULL, descr, (PyObject *)exported);
        goto done;
    }
    res = (PyObject *)pg_array_wrap(st, (char *)t->data + t->byte_offset, t->ndim,
                                    shape, t->strides != NULL ? strides : NULL, descr,
                                    (int)t->device.device_id, owner, readonly);
done:
    Py_XDECREF(dev);
    Py_XDECREF(meth);
    Py_XDECREF(stream_arg);
    Py_XDECREF(kw);
    Py_XDECREF(capsule);
    Py_XDECREF(owner);
    Py_XDECREF(descr);
    return res;
}

PyObject *
pg_array_from_foreign(pg_state *st, PyObject *obj)
{
    PyObject *cai = NULL, *res = NULL;
    cai = PyObject_GetAttrString(obj, "__cuda_array_interface__");
    if (cai == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return NULL;
        }
        PyErr_Clear();
    }
    if (cai != NULL) {
        res = from_cai(st, obj, cai);
        Py_DECREF(cai);
        return res;
    }
    if (!PyArray_Check(obj) && PyObject_HasAttrString(obj, "__dlpack__") &&
        PyObject_HasAttrString(obj, "__dlpack_device__")) {
        PyObject *dev = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
        long type = -1;
        if (dev == NULL) {
            return NULL;
        }
        if (PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) == 2) {
            type = PyLong_AsLong(PyTuple_GET_ITEM(dev, 0));
        }
        Py_DECREF(dev);
        if (PyErr_Occurred()) {
            return NULL;
        }
        if (type == DL_CUDA) {
            return from_dlpack(st, obj);
        }
    }
    return NULL;
}

static PyObject *
mod_from_dlpack(PyObject *m, PyObject *obj)
{
    pg_state *st = pg_state_of_module(m);
    if (pg_array_check(st, obj)) {
        return Py_NewRef(obj);
    }
    if (!PyObject_HasAttrString(obj, "__dlpack__")) {
        return PyErr_Format(PyExc_TypeError,
                            "from_dlpack() takes an object with __dlpack__, not %.100s",
                            Py_TYPE(obj)->tp_name);
    }
    return from_dlpack(st, obj);
}

PyMethodDef pg_interop_functions[] = {
    {"from_dlpack", mod_from_dlpack, METH_O,
     "from_dlpack(x)\n--\n\nA DeviceArray sharing the memory of a CUDA array that "
     "offers DLPack (__dlpack__ and __dlpack_device__): zero-copy."},
    {NULL},
};
