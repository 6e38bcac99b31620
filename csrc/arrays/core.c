/* The array core: building DeviceArrays over buffers, their geometry
 * (contiguity, dense strides, sizes), and views. NumPy computes every view's
 * geometry on a stand-in ndarray that never dereferences its data, so that
 * indexing, reshape and transpose follow NumPy's rules exactly. */
#include <string.h>

#include "pygpu.h"

#define ARR(o) ((pg_array *)(o))

/* ---- geometry ---------------------------------------------------------------- */

/* Bytes for `shape` of `itemsize`; -1 with ValueError on overflow. */
static npy_intp
checked_nbytes(int nd, const npy_intp *shape, npy_intp itemsize)
{
    npy_intp n = itemsize;
    int empty = 0;
    for (int i = 0; i < nd; i++) {
        if (shape[i] == 0) {
            empty = 1;
        }
    }
    if (empty) {
        return 0;
    }
    for (int i = 0; i < nd; i++) {
        if (shape[i] != 0 && n > NPY_MAX_INTP / shape[i]) {
            PyObject *t = PyArray_IntTupleFromIntp(nd, shape);
            if (t != NULL) {
                PyErr_Format(PyExc_ValueError,
                             "array is too big: shape %R with itemsize %zd needs "
                             "more than 2**63 bytes",
                             t, (Py_ssize_t)itemsize);
                Py_DECREF(t);
            }
            return -1;
        }
        n *= shape[i];
    }
    return n;
}

static int
contiguity(int nd, const npy_intp *shape, const npy_intp *strides, npy_intp itemsize)
{
    int c = 1, f = 1;
    npy_intp sd = itemsize;
    for (int i = 0; i < nd; i++) {
        if (shape[i] == 0) {
            return PG_CONTIG;
        }
    }
    for (int i = nd - 1; i >= 0; i--) {
        if (shape[i] != 1) {
            if (strides[i] != sd) {
                c = 0;
            }
            sd *= shape[i];
        }
    }
    sd = itemsize;
    for (int i = 0; i < nd; i++) {
        if (shape[i] != 1) {
            if (strides[i] != sd) {
                f = 0;
            }
            sd *= shape[i];
        }
    }
    return (c ? NPY_ARRAY_C_CONTIGUOUS : 0) | (f ? NPY_ARRAY_F_CONTIGUOUS : 0);
}

static void
dense_strides(int nd, const npy_intp *shape, npy_intp itemsize, int fortran,
              npy_intp *strides)
{
    npy_intp sd = itemsize;
    for (int k = 0; k < nd; k++) {
        int i = fortran ? k : nd - 1 - k;
        strides[i] = sd;
        sd *= shape[i] > 0 ? shape[i] : 1;
    }
}

/* Two dense layouts that put every element at the same offset: one memcpy
 * copies either into the other. */
int
pg_same_dense_layout(int nd, const npy_intp *shape, const npy_intp *sa, int flags_a,
                     const npy_intp *sb, int flags_b)
{
    if (!(flags_a & PG_CONTIG) || !(flags_b & PG_CONTIG)) {
        return 0;
    }
    for (int i = 0; i < nd; i++) {
        if (shape[i] > 1 && sa[i] != sb[i]) {
            return 0;
        }
    }
    return 1;
}

/* The byte offsets of an array's lowest and highest element from its first
 * (one past the highest needs the itemsize added): *lo <= 0 <= *hi. */
static void
extent(int nd, const npy_intp *shape, const npy_intp *strides, npy_intp *lo,
       npy_intp *hi)
{
    *lo = *hi = 0;
    for (int i = 0; i < nd; i++) {
        npy_intp span = (shape[i] - 1) * strides[i];
        if (span < 0) {
            *lo += span;
        }
        else {
            *hi += span;
        }
    }
}

void
pg_array_span(const pg_array *a, char **lo, char **hi)
{
    npy_intp l, h;
    if (pg_array_size(a) == 0) {
        *lo = *hi = a->data;
        return;
    }
    extent(a->nd, a->shape, a->strides, &l, &h);
    *lo = a->data + l;
    *hi = a->data + h + PyDataType_ELSIZE(a->descr);
}

/* ---- construction ------------------------------------------------------------ */

void
pg_array_untrack_if_acyclic(pg_array *a)
{
    PyObject *o = (PyObject *)a;
    if (Py_TYPE(o)->tp_dictoffset == 0 && !PyObject_GC_IsTracked((PyObject *)a->buf) &&
        (a->base == NULL || !PyObject_GC_IsTracked(a->base))) {
        PyObject_GC_UnTrack(o);
    }
}

/* The strides of an array of nd axes: `strides`, or C order's in dense[]
 * when NULL; NULL with ValueError for too many axes. */
static const npy_intp *
checked_strides(int nd, const npy_intp *shape, const npy_intp *strides,
                PyArray_Descr *descr, npy_intp *dense)
{
    if (nd < 0 || nd > PG_MAXDIMS) {
        PyErr_Format(PyExc_ValueError,
                     "the array has %d dimensions; pygpu arrays have at most %d", nd,
                     PG_MAXDIMS);
        return NULL;
    }
    if (strides == NULL) {
        dense_strides(nd, shape, PyDataType_ELSIZE(descr), 0, dense);
        return dense;
    }
    return strides;
}

pg_array *
pg_array_over(pg_state *st, pg_buffer *buf, char *data, int nd, const npy_intp *shape,
              const npy_intp *strides, PyArray_Descr *descr, PyObject *base)
{
    npy_intp dense[PG_MAXDIMS];
    pg_array *a;
    if ((strides = checked_strides(nd, shape, strides, descr, dense)) == NULL) {
        return NULL;
    }
    a = (pg_array *)st->DeviceArrayType->tp_alloc(st->DeviceArrayType, 0);
    if (a == NULL) {
        return NULL;
    }
    a->nd = nd;
    if (nd > 0) { /* a 0-d array may come with NULL shape and strides */
        memcpy(a->shape, shape, (size_t)nd * sizeof(npy_intp));
        memcpy(a->strides, strides, (size_t)nd * sizeof(npy_intp));
    }
    a->descr = (PyArray_Descr *)Py_NewRef(descr);
    a->flags = contiguity(nd, shape, strides, PyDataType_ELSIZE(descr));
    a->buf = (pg_buffer *)Py_NewRef(buf);
    a->data = data;
    a->base = Py_XNewRef(base);
    pg_array_untrack_if_acyclic(a);
    return a;
}

int
pg_array_check_writeable(const pg_array *a, const char *what)
{
    if (!a->buf->readonly) {
        return 0;
    }
    PyErr_Format(PyExc_ValueError,
                 "%s: the array is read-only (its memory was exported to pygpu "
                 "read-only); copy it with .copy() to get a writeable array",
                 what);
    return -1;
}

/* Foreign memory is used only where the backend knows it as device memory:
 * the bytes [start, start + n) an array spans must lie in one live
 * allocation (where the backend can tell its extent), lest a bad pointer
 * crash the process at the first copy. */
static int
check_foreign_extent(pg_state *st, char *start, npy_intp n, int device)
{
    const pg_backend *rt = pg_get_rt(st);
    void *base = NULL;
    size_t size = 0;
    int found;
    if (rt == NULL) {
        return -1;
    }
    if (pg_pool_holds_free(device, start)) {
        PyErr_Format(PyExc_ValueError,
                     "the foreign array's data at %p lies in memory that pygpu's pool "
                     "holds free: the array it belonged to was freed (its producer "
                     "must keep it alive while it is used)",
                     (void *)start);
        return -1;
    }
    found = rt->pointer_range(start, &base, &size);
    if (found < 0) {
        PyErr_Format(PyExc_ValueError,
                     "the foreign array's data at %p (%zd bytes, to %p) is not "
                     "inside any device allocation this process can use",
                     (void *)start, (Py_ssize_t)n, (void *)(start + n));
        return -1;
    }
    if (found == 0 && (size_t)(start - (char *)base) + (size_t)n > size) {
        PyErr_Format(PyExc_ValueError,
                     "the foreign array spans %zd bytes from %p to %p, past the end "
                     "of the device allocation it lies in (%zu bytes from %p to %p)",
                     (Py_ssize_t)n, (void *)start, (void *)(start + n), size, base,
                     (void *)((char *)base + size));
        return -1;
    }
    return 0;
}

pg_array *
pg_array_wrap(pg_state *st, char *data, int nd, const npy_intp *shape,
              const npy_intp *strides, PyArray_Descr *descr, int device,
              PyObject *owner, int readonly)
{
    npy_intp dense[PG_MAXDIMS], lo = 0, hi = 0;
    pg_buffer *buf;
    pg_array *a;
    if ((strides = checked_strides(nd, shape, strides, descr, dense)) == NULL ||
        pg_check_dtype(descr) < 0 ||
        checked_nbytes(nd, shape, PyDataType_ELSIZE(descr)) < 0) {
        return NULL;
    }
    if (checked_nbytes(nd, shape, 1) > 0) {
        /* a GPU loads an element only from an address its size divides */
        const npy_intp size = PyDataType_ELSIZE(descr);
        int odd = (uintptr_t)data % (uintptr_t)size != 0;
        if (data == NULL) {
            PyErr_SetString(PyExc_ValueError,
                            "the foreign array has a NULL data pointer but elements to "
                            "read: only an empty array may have no memory");
            return NULL;
        }
        for (int i = 0; i < nd; i++) {
            odd |= shape[i] > 1 && strides[i] % size != 0;
        }
        if (odd) {
            PyErr_Format(
                PyExc_ValueError,
                "the foreign array's data (%p) or strides are not multiples of "
                "its %zd-byte elements, which a device loads only at aligned "
                "addresses",
                (void *)data, (Py_ssize_t)size);
            return NULL;
        }
        /* the buffer is the extent the array spans: [lowest byte, highest byte] */
        extent(nd, shape, strides, &lo, &hi);
        hi += size;
    }
    if (data != NULL && hi > lo &&
        check_foreign_extent(st, data + lo, hi - lo, device) < 0) {
        return NULL;
    }
    buf = pg_buffer_foreign(st, data == NULL ? NULL : data + lo, (size_t)(hi - lo),
                            device, owner);
    if (buf == NULL) {
        return NULL;
    }
    buf->readonly = readonly;
    a = pg_array_over(st, buf, data, nd, shape, strides, descr, NULL);
    Py_DECREF(buf);
    return a;
}

pg_array *
pg_array_empty_typed(pg_state *st, PyTypeObject *type, int device, int nd,
                     const npy_intp *shape, PyArray_Descr *descr, int fortran,
                     const pg_stream_ref *s)
{
    pg_stream_ref current;
    npy_intp strides[PG_MAXDIMS];
    const pg_backend *rt = pg_get_rt(st);
    npy_intp nbytes;
    pg_array *a = NULL;
    pg_buffer *buf = NULL;
    int is_current = device < 0;

    if (rt == NULL) {
        return NULL;
    }
    nbytes = checked_nbytes(nd, shape, PyDataType_ELSIZE(descr));
    if (nbytes < 0 || (device < 0 && pg_current_device(st, rt, &device) < 0)) {
        return NULL;
    }
    if (s == NULL) {
        (void)pg_resolve_stream(st, NULL, &current);
        s = &current;
    }
    if (s->device >= 0 && s->device != device) { /* another device's stream */
        current = *s;
        (void)pg_stream_for_device(&current, device, 0);
        s = &current;
    }
    buf = pg_buffer_alloc(st, (size_t)nbytes, device, is_current, s);
    if (buf == NULL) {
        return NULL;
    }
    dense_strides(nd, shape, PyDataType_ELSIZE(descr), fortran, strides);
    a = (pg_array *)type->tp_alloc(type, 0);
    if (a != NULL) {
        a->nd = nd;
        if (nd > 0) {
            memcpy(a->shape, shape, (size_t)nd * sizeof(npy_intp));
            memcpy(a->strides, strides, (size_t)nd * sizeof(npy_intp));
        }
        a->descr = (PyArray_Descr *)Py_NewRef(descr);
        a->flags = contiguity(nd, shape, strides, PyDataType_ELSIZE(descr));
        a->buf = (pg_buffer *)Py_NewRef(buf);
        a->data = buf->ptr;
        pg_array_untrack_if_acyclic(a);
    }
    Py_DECREF(buf);
    return a;
}

pg_array *
pg_array_empty(pg_state *st, int nd, const npy_intp *shape, PyArray_Descr *descr,
               int fortran, const pg_stream_ref *s)
{
    return pg_array_empty_typed(st, st->DeviceArrayType, -1, nd, shape, descr, fortran,
                                s);
}

pg_array *
pg_array_empty_on(pg_state *st, int device, int nd, const npy_intp *shape,
                  PyArray_Descr *descr, int fortran, const pg_stream_ref *s)
{
    return pg_array_empty_typed(st, st->DeviceArrayType, device, nd, shape, descr,
                                fortran, s);
}

int
pg_arrays_same_elements(const pg_array *a, const pg_array *b)
{
    if (a->data != b->data || a->nd != b->nd ||
        PyDataType_ELSIZE(a->descr) != PyDataType_ELSIZE(b->descr)) {
        return 0;
    }
    for (int i = 0; i < a->nd; i++) {
        if (a->shape[i] != b->shape[i] ||
            (a->shape[i] > 1 && a->strides[i] != b->strides[i])) {
            return 0;
        }
    }
    return 1;
}

int
pg_array_overlap_unsafe(const pg_array *dst, const pg_array *src)
{
    return pg_arrays_overlap(dst, src) && !pg_arrays_same_elements(dst, src);
}

int
pg_arrays_overlap(const pg_array *a, const pg_array *b)
{
    npy_intp lo_a, hi_a, lo_b, hi_b;
    if (a->buf != b->buf &&
        (a->buf->kind != PG_BUFFER_FOREIGN || b->buf->kind != PG_BUFFER_FOREIGN)) {
        return 0; /* pygpu's own buffers never share bytes with another buffer */
    }
    if (pg_array_size(a) == 0 || pg_array_size(b) == 0) {
        return 0;
    }
    extent(a->nd, a->shape, a->strides, &lo_a, &hi_a);
    extent(b->nd, b->shape, b->strides, &lo_b, &hi_b);
    hi_a += PyDataType_ELSIZE(a->descr);
    hi_b += PyDataType_ELSIZE(b->descr);
    return a->data + lo_a < b->data + hi_b && b->data + lo_b < a->data + hi_a;
}

/* ---- views: NumPy computes their geometry on a stand-in that it never reads -- */

static char standin_memory[64];

static char *
standin_base(pg_array *a)
{
    return a->data != NULL ? a->data : standin_memory;
}

enum { OWN_LAYOUT = 0, DENSE_C = 1, DENSE_F = 2 };

/* An ndarray with a's shape over a's address, never dereferenced: with a's
 * own strides, or those of a dense C or F layout. */
static PyObject *
standin(pg_array *a, int layout)
{
    npy_intp strides[PG_MAXDIMS];
    if (layout != OWN_LAYOUT) {
        dense_strides(a->nd, a->shape, PyDataType_ELSIZE(a->descr), layout == DENSE_F,
                      strides);
    }
    Py_INCREF(a->descr);
    return PyArray_NewFromDescr(&PyArray_Type, a->descr, a->nd, a->shape,
                                layout == OWN_LAYOUT ? a->strides : strides,
                                standin_base(a), 0, NULL);
}

/* getattr(standin(a, layout), method)(*args, **kwargs) */
static PyObject *
standin_call(pg_array *a, int layout, const char *method, PyObject *args,
             PyObject *kwargs)
{
    PyObject *sa = standin(a, layout), *meth = NULL, *res = NULL;
    if (sa == NULL) {
        return NULL;
    }
    meth = PyObject_GetAttrString(sa, method);
    if (meth != NULL) {
        res = PyObject_Call(meth, args, kwargs);
        Py_DECREF(meth);
    }
    Py_DECREF(sa);
    return res;
}

/* The view of a that NumPy's result `res` (computed on standin(a)) describes. */
static PyObject *
view_from_standin(pg_state *st, pg_array *a, PyObject *res)
{
    PyArrayObject *r = (PyArrayObject *)res;
    char *data;
    if (!PyArray_Check(res)) {
        PyErr_SetString(PyExc_SystemError, "pygpu: indexing did not give a view");
        return NULL;
    }
    if (PyArray_NDIM(r) > PG_MAXDIMS) {
        return PyErr_Format(PyExc_ValueError,
                            "the result would have %d dimensions; pygpu arrays "
                            "have at most %d",
                            PyArray_NDIM(r), PG_MAXDIMS);
    }
    data = a->data == NULL ? NULL : a->data + (PyArray_BYTES(r) - standin_base(a));
    return (PyObject *)pg_array_over(st, a->buf, data, PyArray_NDIM(r), PyArray_DIMS(r),
                                     PyArray_STRIDES(r), a->descr,
                                     a->base != NULL ? a->base : (PyObject *)a);
}

/* A view of a with a new shape. Where only a dense copy of a could have the
 * shape, returns NULL with *needs_copy set and no error. */
PyObject *
pg_array_reshape(pg_state *st, pg_array *a, PyObject *shape, int fortran,
                 int *needs_copy)
{
    PyObject *args = NULL, *kwargs = NULL, *res = NULL, *out = NULL;
    *needs_copy = 0;
    args = PyTuple_Pack(1, shape);
    kwargs = Py_BuildValue("{sssO}", "order", fortran ? "F" : "C", "copy", Py_False);
    if (args == NULL || kwargs == NULL) {
        goto done;
    }
    res = standin_call(a, OWN_LAYOUT, "reshape", args, kwargs);
    if (res != NULL) {
        out = view_from_standin(st, a, res);
        goto done;
    }
    if (!PyErr_ExceptionMatches(PyExc_ValueError)) {
        goto done;
    }
    /* Impossible shape, or one that needs a copy? Ask NumPy about a dense
     * array of the same order: if that fails too, its error stands. */
    PyErr_Clear();
    res = standin_call(a, fortran ? DENSE_F : DENSE_C, "reshape", args, kwargs);
    *needs_copy = res != NULL;
done:
    Py_XDECREF(res);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    return out;
}

PyObject *
pg_array_transpose(pg_state *st, pg_array *a, PyObject *axes)
{
    PyObject *args = axes == NULL ? PyTuple_New(0) : PyTuple_Pack(1, axes);
    PyObject *res = NULL, *out = NULL;
    if (args == NULL) {
        return NULL;
    }
    res = standin_call(a, OWN_LAYOUT, "transpose", args, NULL);
    if (res != NULL) {
        out = view_from_standin(st, a, res);
        Py_DECREF(res);
    }
    Py_DECREF(args);
    return out;
}

static int
basic_index_item(PyObject *o)
{
    return (PyLong_Check(o) && !PyBool_Check(o)) || PyArray_IsScalar(o, Integer) ||
           PySlice_Check(o) || o == Py_Ellipsis || o == Py_None;
}

/* a[key]: a view for basic indexing (no copies, as in NumPy); other keys go
 * to Python (advanced:). */
PyObject *
pg_array_getitem(pg_state *st, pg_array *a, PyObject *key)
{
    PyObject *full_key = NULL, *res = NULL, *out = NULL;
    PyObject *args = NULL;
    int has_ellipsis = 0;
    if (PyTuple_Check(key)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++) {
            PyObject *item = PyTuple_GET_ITEM(key, i);
            if (!basic_index_item(item)) {
                goto advanced;
            }
            has_ellipsis |= item == Py_Ellipsis;
        }
        if (has_ellipsis) {
            full_key = Py_NewRef(key);
        }
        else {
            PyObject *tail = PyTuple_Pack(1, Py_Ellipsis);
            full_key = tail == NULL ? NULL : PySequence_Concat(key, tail);
            Py_XDECREF(tail);
        }
    }
    else {
        if (!basic_index_item(key)) {
            goto advanced;
        }
        full_key =
            key == Py_Ellipsis ? Py_NewRef(key) : PyTuple_Pack(2, key, Py_Ellipsis);
    }
    if (full_key == NULL) {
        return NULL;
    }
    /* Ending in Ellipsis, an all-integer key gives a 0-d view, not a scalar. */
    args = PyTuple_Pack(1, full_key);
    if (args != NULL) {
        res = standin_call(a, OWN_LAYOUT, "__getitem__", args, NULL);
    }
    if (res != NULL) {
        out = view_from_standin(st, a, res);
    }
    Py_XDECREF(res);
    Py_XDECREF(args);
    Py_DECREF(full_key);
    return out;
advanced:
    /* integer arrays, masks, bool scalars (and what is no index at all):
     * pygpu/_ops/indexing.py, which copies, as NumPy's advanced indexing */
    {
        PyObject *mod = PyImport_ImportModule("pygpu._ops.indexing");
        out = mod == NULL
                  ? NULL
                  : PyObject_CallMethod(mod, "getitem", "OO", (PyObject *)a, key);
        Py_XDECREF(mod);
    }
    return out;
}

/* ---- checks shared by copies and operations -------------------------------- */

int
pg_same_shape(int nd_a, const npy_intp *a, int nd_b, const npy_intp *b)
{
    int same = nd_a == nd_b;
    for (int i = 0; same && i < nd_a; i++) {
        same = a[i] == b[i];
    }
    return same;
}

int
pg_check_same_shape(const char *what, const char *name_a, int nd_a, const npy_intp *a,
                    const char *name_b, int nd_b, const npy_intp *b)
{
    PyObject *sa = NULL, *sb = NULL;
    if (pg_same_shape(nd_a, a, nd_b, b)) {
        return 0;
    }
    sa = PyArray_IntTupleFromIntp(nd_a, a);
    sb = PyArray_IntTupleFromIntp(nd_b, b);
    if (sa != NULL && sb != NULL && name_a != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "%s: shape mismatch: '%s' has shape %R but '%s' has shape %R",
                     what, name_a, sa, name_b, sb);
    }
    else if (sa != NULL && sb != NULL) {
        PyErr_Format(PyExc_ValueError, "%s: shape mismatch: %R and %R", what, sa, sb);
    }
    Py_XDECREF(sa);
    Py_XDECREF(sb);
    return -1;
}

int
pg_check_same_dtype(const char *what, PyArray_Descr *a, PyArray_Descr *b)
{
    if (PyArray_EquivTypes(a, b)) {
        return 0;
    }
    PyErr_Format(PyExc_TypeError,
                 "%s: dtype mismatch: %R and %R (convert one with .astype())", what,
                 (PyObject *)a, (PyObject *)b);
    return -1;
}
