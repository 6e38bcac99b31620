/* pygpu.DeviceArray: an n-dimensional array in device memory, its views, and
 * the copies between host and device. */
#include <string.h>

#include "pygpu.h"

#define ARR(o) ((pg_array *)(o))
#define PG_CONTIG (NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS)

/* ---- dtypes and shapes ------------------------------------------------------ */

static const char supported_dtypes[] =
    "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
    "float16, float32, float64, complex64 and complex128";

int
pg_check_dtype(PyArray_Descr *descr)
{
    switch (descr->type_num) {
    case NPY_BOOL:
    case NPY_BYTE:
    case NPY_UBYTE:
    case NPY_SHORT:
    case NPY_USHORT:
    case NPY_INT:
    case NPY_UINT:
    case NPY_LONG:
    case NPY_ULONG:
    case NPY_LONGLONG:
    case NPY_ULONGLONG:
    case NPY_HALF:
    case NPY_FLOAT:
    case NPY_DOUBLE:
    case NPY_CFLOAT:
    case NPY_CDOUBLE:
        if (!PyArray_ISNBO(descr->byteorder)) {
            PyErr_Format(PyExc_TypeError,
                         "pygpu arrays use the native byte order; got dtype %R "
                         "(convert it with .astype(%R.newbyteorder('=')))",
                         (PyObject *)descr, (PyObject *)descr);
            return -1;
        }
        return 0;
    default:
        PyErr_Format(PyExc_TypeError,
                     "pygpu does not support dtype %R; supported dtypes are %s",
                     (PyObject *)descr, supported_dtypes);
        return -1;
    }
}

/* dtype=None gives float64, as in NumPy. Returns a new reference. */
static PyArray_Descr *
parse_dtype(PyObject *obj)
{
    PyArray_Descr *descr = NULL;
    if (obj == NULL || obj == Py_None) {
        return PyArray_DescrFromType(NPY_DOUBLE);
    }
    if (!PyArray_DescrConverter(obj, &descr)) {
        return NULL;
    }
    if (pg_check_dtype(descr) < 0) {
        Py_DECREF(descr);
        return NULL;
    }
    return descr;
}

int
pg_parse_shape(PyObject *obj, npy_intp *shape)
{
    PyObject *seq = NULL;
    Py_ssize_t nd;
    if (PyIndex_Check(obj) && !PyBool_Check(obj)) {
        seq = PyTuple_Pack(1, obj);
    }
    else if (PyTuple_Check(obj) || PyList_Check(obj)) {
        seq = PySequence_Tuple(obj);
    }
    else {
        PyErr_Format(PyExc_TypeError,
                     "shape must be an int or a tuple of ints, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (seq == NULL) {
        return -1;
    }
    nd = PyTuple_GET_SIZE(seq);
    if (nd > PG_MAXDIMS) {
        PyErr_Format(PyExc_ValueError,
                     "shape has %zd dimensions; pygpu arrays have at most %d", nd,
                     PG_MAXDIMS);
        goto error;
    }
    for (Py_ssize_t i = 0; i < nd; i++) {
        PyObject *item = PyTuple_GET_ITEM(seq, i);
        if (PyBool_Check(item) || !PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError,
                         "shape must be a tuple of ints; item %zd is %.100s", i,
                         Py_TYPE(item)->tp_name);
            goto error;
        }
        shape[i] = PyNumber_AsSsize_t(item, PyExc_OverflowError);
        if (shape[i] == -1 && PyErr_Occurred()) {
            if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_ValueError,
                             "shape %R is too large: dimension %zd does not "
                             "fit in 64 bits",
                             obj, i);
            }
            goto error;
        }
        if (shape[i] < 0) {
            PyErr_Format(PyExc_ValueError,
                         "negative dimensions are not allowed: shape %R", obj);
            goto error;
        }
    }
    Py_DECREF(seq);
    return (int)nd;
error:
    Py_DECREF(seq);
    return -1;
}

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

/* ---- construction -------------------------------------------------------- */

static pg_array *
array_alloc_struct(PyTypeObject *type, int nd, const npy_intp *shape,
                   const npy_intp *strides, PyArray_Descr *descr)
{
    pg_array *a = (pg_array *)type->tp_alloc(type, 0);
    if (a == NULL) {
        return NULL;
    }
    a->nd = nd;
    if (nd > 0) { /* a 0-d array may come with NULL shape and strides */
        memcpy(a->shape, shape, (size_t)nd * sizeof(npy_intp));
        memcpy(a->strides, strides, (size_t)nd * sizeof(npy_intp));
    }
    Py_INCREF(descr);
    a->descr = descr;
    a->flags = contiguity(nd, shape, strides, PyDataType_ELSIZE(descr));
    return a;
}

static pg_array *
array_empty_typed(pg_state *st, PyTypeObject *type, int nd, const npy_intp *shape,
                  PyArray_Descr *descr, int fortran, const pg_stream_ref *s)
{
    pg_stream_ref current;
    npy_intp strides[PG_MAXDIMS];
    const pg_backend *rt = pg_get_rt(st);
    npy_intp nbytes;
    pg_array *a = NULL;
    pg_err err = PG_SUCCESS;
    void *ptr = NULL;
    int device = 0;

    if (rt == NULL) {
        return NULL;
    }
    if (s == NULL) {
        (void)pg_resolve_stream(st, NULL, &current);
        s = &current;
    }
    nbytes = checked_nbytes(nd, shape, PyDataType_ELSIZE(descr));
    if (nbytes < 0) {
        return NULL;
    }
    dense_strides(nd, shape, PyDataType_ELSIZE(descr), fortran, strides);
    a = array_alloc_struct(type, nd, shape, strides, descr);
    if (a == NULL) {
        return NULL;
    }
    err = rt->get_device(&device);
    if (err != PG_SUCCESS) {
        pg_raise(st, err, "cudaGetDevice");
        goto error;
    }
    if (nbytes > 0) {
        Py_BEGIN_ALLOW_THREADS
            err = pg_pool_alloc(&ptr, (size_t)nbytes, device, s->handle, s->serial);
        Py_END_ALLOW_THREADS
        if (err == PG_ERR_MEMORY_ALLOCATION) {
            pg_raise_oom(st, err, "cudaMalloc", (size_t)nbytes, device);
            goto error;
        }
        if (err != PG_SUCCESS) {
            pg_raise(st, err, "cudaMalloc");
            goto error;
        }
    }
    a->alloc = ptr;
    a->stream = s->handle;
    a->serial = s->serial;
    a->stream_obj = Py_XNewRef(s->obj);
    a->alloc_size = (size_t)nbytes;
    a->data = ptr;
    a->device = device;
    return a;
error:
    Py_DECREF(a);
    return NULL;
}

pg_array *
pg_array_empty(pg_state *st, int nd, const npy_intp *shape, PyArray_Descr *descr,
               int fortran, const pg_stream_ref *s)
{
    return array_empty_typed(st, st->DeviceArrayType, nd, shape, descr, fortran, s);
}

pg_array *
pg_array_wrap(pg_state *st, char *data, int nd, const npy_intp *shape,
              const npy_intp *strides, PyArray_Descr *descr, int device,
              PyObject *owner)
{
    npy_intp dense[PG_MAXDIMS];
    pg_array *a;
    if (nd < 0 || nd > PG_MAXDIMS) {
        PyErr_Format(PyExc_ValueError,
                     "the array has %d dimensions; pygpu arrays have at most %d", nd,
                     PG_MAXDIMS);
        return NULL;
    }
    if (pg_check_dtype(descr) < 0 ||
        checked_nbytes(nd, shape, PyDataType_ELSIZE(descr)) < 0) {
        return NULL;
    }
    if (strides == NULL) {
        dense_strides(nd, shape, PyDataType_ELSIZE(descr), 0, dense);
        strides = dense;
    }
    a = array_alloc_struct(st->DeviceArrayType, nd, shape, strides, descr);
    if (a == NULL) {
        return NULL;
    }
    a->data = data;
    a->device = device;
    a->foreign = Py_NewRef(owner);
    return a;
}

void
pg_array_note_stream(pg_array *a, const pg_stream_ref *s)
{
    pg_array *owner = a->base != NULL ? (pg_array *)a->base : a;
    if (owner->serial == s->serial) {
        return;
    }
    owner->stream = s->handle;
    owner->serial = s->serial;
    Py_XSETREF(owner->stream_obj, Py_XNewRef(s->obj));
}

/* A view of src's memory with the given geometry. */
static pg_array *
array_view(pg_state *st, pg_array *src, char *data, int nd, const npy_intp *shape,
           const npy_intp *strides)
{
    pg_array *v =
        array_alloc_struct(st->DeviceArrayType, nd, shape, strides, src->descr);
    if (v == NULL) {
        return NULL;
    }
    v->data = data;
    v->device = src->device;
    v->base = Py_NewRef(src->base != NULL ? src->base : (PyObject *)src);
    return v;
}

static void
Array_dealloc(PyObject *self)
{
    pg_array *a = ARR(self);
    PyTypeObject *tp = Py_TYPE(self);
    if (a->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    if (a->alloc != NULL && !pg_is_finalizing() && !pg_context_unusable()) {
        pg_err err;
        pg_stream stream = a->stream;
        uint64_t serial = a->serial;
        Py_BEGIN_ALLOW_THREADS
            err = pg_pool_free(a->alloc, a->alloc_size, a->device, stream, serial);
        Py_END_ALLOW_THREADS
        if (err != PG_SUCCESS) {
            PyObject *exc_type, *exc_value, *exc_tb;
            PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
            if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                                 "pygpu: freeing %zu bytes of device memory "
                                 "failed: %s",
                                 a->alloc_size, pg_rt()->error_name(err)) < 0) {
                PyErr_WriteUnraisable(self);
            }
            PyErr_Restore(exc_type, exc_value, exc_tb);
        }
    }
    Py_CLEAR(a->base);
    Py_CLEAR(a->descr);
    Py_CLEAR(a->stream_obj);
    Py_CLEAR(a->foreign);
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* ---- NumPy stand-ins: NumPy computes view geometry; it never reads data -- */

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
    return (PyObject *)array_view(st, a, data, PyArray_NDIM(r), PyArray_DIMS(r),
                                  PyArray_STRIDES(r));
}

/* ---- copies ----------------------------------------------------------------- */

/* Raises for a failed copy or launch; returns -1. */
static int
failed(pg_state *st, pg_err err, const char *call)
{
    pg_raise(st, err, call);
    return -1;
}

int
pg_array_copy_into(pg_state *st, pg_array *dst, pg_array *src, const pg_stream_ref *s)
{
    const pg_backend *rt = pg_rt();
    int64_t shape[PG_MAXDIMS], ss[PG_MAXDIMS], ds[PG_MAXDIMS];
    int prev = 0;
    pg_err err;
    if (pg_array_size(dst) == 0) {
        return 0;
    }
    pg_array_note_stream(dst, s);
    pg_array_note_stream(src, s);
    if (pg_same_dense_layout(dst->nd, dst->shape, dst->strides, dst->flags,
                             src->strides, src->flags)) {
        size_t n = (size_t)pg_array_size(dst) * PyDataType_ELSIZE(dst->descr);
        err = rt->memcpy_async(dst->data, src->data, n, PG_MEMCPY_D2D, s->handle);
        return err == PG_SUCCESS ? 0 : failed(st, err, "cudaMemcpyAsync");
    }
    for (int i = 0; i < dst->nd; i++) {
        shape[i] = dst->shape[i];
        ss[i] = src->strides[i];
        ds[i] = dst->strides[i];
    }
    if (pg_device_push(st, rt, dst->device, &prev) < 0) {
        return -1;
    }
    err = rt->kernels->copy_strided((int)PyDataType_ELSIZE(dst->descr), dst->nd, shape,
                                    src->data, ss, dst->data, ds, s->handle);
    pg_device_pop(rt, prev);
    return err == PG_SUCCESS ? 0 : failed(st, err, "copy_strided kernel launch");
}

static int
h2d(pg_state *st, void *dst, const void *src, size_t n, const pg_stream_ref *s,
    int sync)
{
    pg_err err;
    Py_BEGIN_ALLOW_THREADS
        err = pg_copy_h2d(dst, src, n, s->handle, sync);
    Py_END_ALLOW_THREADS
    return err == PG_SUCCESS ? 0 : failed(st, err, "cudaMemcpy (host to device)");
}

static int
d2h(pg_state *st, void *dst, const void *src, size_t n, const pg_stream_ref *s,
    int sync)
{
    pg_err err;
    Py_BEGIN_ALLOW_THREADS
        err = pg_copy_d2h(dst, src, n, s->handle, sync);
    Py_END_ALLOW_THREADS
    return err == PG_SUCCESS ? 0 : failed(st, err, "cudaMemcpy (device to host)");
}

/* Host array (same shape and dtype as dst) into dst, on stream s. Without
 * sync, a copy from page-locked memory may still run when this returns. */
static int
copy_from_host(pg_state *st, pg_array *dst, PyArrayObject *src, const pg_stream_ref *s,
               int sync)
{
    PyArrayObject *tmp = NULL;
    pg_array *staging = NULL;
    int rc = -1;
    size_t nbytes = (size_t)pg_array_size(dst) * PyDataType_ELSIZE(dst->descr);
    if (nbytes == 0) {
        return 0;
    }
    pg_array_note_stream(dst, s);
    if (dst->flags & PG_CONTIG) {
        int src_flags = PyArray_FLAGS(src) & PG_CONTIG;
        if (pg_same_dense_layout(dst->nd, dst->shape, dst->strides, dst->flags,
                                 PyArray_STRIDES(src), src_flags)) {
            return h2d(st, dst->data, PyArray_DATA(src), nbytes, s, sync);
        }
        tmp = (PyArrayObject *)PyArray_NewCopy(
            src, (dst->flags & NPY_ARRAY_C_CONTIGUOUS) ? NPY_CORDER : NPY_FORTRANORDER);
        if (tmp == NULL) {
            return -1;
        }
        rc = h2d(st, dst->data, PyArray_DATA(tmp), nbytes, s, 1);
        Py_DECREF(tmp);
        return rc;
    }
    /* A strided destination: stage through a dense device buffer. */
    tmp = (PyArrayObject *)PyArray_FromArray(src, NULL, NPY_ARRAY_C_CONTIGUOUS);
    if (tmp == NULL) {
        return -1;
    }
    staging = pg_array_empty(st, dst->nd, dst->shape, dst->descr, 0, s);
    if (staging != NULL &&
        h2d(st, staging->data, PyArray_DATA(tmp), nbytes, s, 1) == 0) {
        rc = pg_array_copy_into(st, dst, staging, s);
    }
    Py_XDECREF(staging);
    Py_DECREF(tmp);
    return rc;
}

/* src into the host array out (same shape and dtype, writeable), on stream
 * s. Without sync, a copy into page-locked memory may still run on return. */
static int
copy_to_host(pg_state *st, pg_array *src, PyArrayObject *out, const pg_stream_ref *s,
             int sync)
{
    pg_array *dense = NULL;
    PyArrayObject *tmp = NULL;
    int rc = -1;
    size_t nbytes = (size_t)pg_array_size(src) * PyDataType_ELSIZE(src->descr);
    if (nbytes == 0) {
        return 0;
    }
    pg_array_note_stream(src, s);
    if (!(src->flags & PG_CONTIG)) {
        dense = pg_array_empty(st, src->nd, src->shape, src->descr, 0, s);
        if (dense == NULL || pg_array_copy_into(st, dense, src, s) < 0) {
            Py_XDECREF(dense);
            return -1;
        }
        src = dense;
    }
    if (pg_same_dense_layout(src->nd, src->shape, src->strides, src->flags,
                             PyArray_STRIDES(out), PyArray_FLAGS(out) & PG_CONTIG)) {
        rc = d2h(st, PyArray_DATA(out), src->data, nbytes, s, sync);
        goto done;
    }
    Py_INCREF(src->descr);
    tmp = (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, src->descr, src->nd, src->shape, src->strides, NULL, 0, NULL);
    if (tmp == NULL) {
        goto done;
    }
    if (d2h(st, PyArray_DATA(tmp), src->data, nbytes, s, 1) < 0) {
        goto done;
    }
    rc = PyArray_CopyInto(out, tmp);
done:
    Py_XDECREF(tmp);
    Py_XDECREF(dense);
    return rc;
}

int
pg_array_to_host(pg_state *st, pg_array *src, PyArrayObject *out,
                 const pg_stream_ref *s, int sync)
{
    return copy_to_host(st, src, out, s, sync);
}

static int
check_same_shape(const char *what, int nd_a, const npy_intp *a, int nd_b,
                 const npy_intp *b)
{
    PyObject *sa = NULL, *sb = NULL;
    int same = nd_a == nd_b;
    for (int i = 0; same && i < nd_a; i++) {
        same = a[i] == b[i];
    }
    if (same) {
        return 0;
    }
    sa = PyArray_IntTupleFromIntp(nd_a, a);
    sb = PyArray_IntTupleFromIntp(nd_b, b);
    if (sa != NULL && sb != NULL) {
        PyErr_Format(PyExc_ValueError, "%s: shape mismatch: %R and %R", what, sa, sb);
    }
    Py_XDECREF(sa);
    Py_XDECREF(sb);
    return -1;
}

static int
check_same_dtype(const char *what, PyArray_Descr *a, PyArray_Descr *b)
{
    if (PyArray_EquivTypes(a, b)) {
        return 0;
    }
    PyErr_Format(PyExc_TypeError,
                 "%s: dtype mismatch: %R and %R (convert one with .astype())", what,
                 (PyObject *)a, (PyObject *)b);
    return -1;
}

/* A host ndarray from obj in the native byte order, checked for dtype. */
static PyArrayObject *
host_array(PyObject *obj, PyArray_Descr *dtype)
{
    PyArrayObject *arr = NULL;
    if (dtype != NULL) {
        Py_INCREF(dtype);
    }
    arr = (PyArrayObject *)PyArray_FromAny(obj, dtype, 0, 0, 0, NULL);
    if (arr == NULL) {
        return NULL;
    }
    if (!PyArray_ISNBO(PyArray_DESCR(arr)->byteorder)) {
        PyArray_Descr *native =
            PyArray_DescrNewByteorder(PyArray_DESCR(arr), NPY_NATIVE);
        PyArrayObject *conv = NULL;
        if (native != NULL) {
            conv = (PyArrayObject *)PyArray_FromArray(arr, native, 0);
        }
        Py_DECREF(arr);
        arr = conv;
        if (arr == NULL) {
            return NULL;
        }
    }
    if (PyArray_NDIM(arr) > PG_MAXDIMS) {
        PyErr_Format(PyExc_ValueError,
                     "array has %d dimensions; pygpu arrays have at most %d",
                     PyArray_NDIM(arr), PG_MAXDIMS);
        Py_DECREF(arr);
        return NULL;
    }
    if (pg_check_dtype(PyArray_DESCR(arr)) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

pg_array *
pg_array_from_host(pg_state *st, PyObject *obj, PyArray_Descr *dtype,
                   const pg_stream_ref *s, int sync)
{
    PyArrayObject *arr = host_array(obj, dtype);
    pg_array *a = NULL;
    int fortran;
    if (arr == NULL) {
        return NULL;
    }
    fortran = PyArray_IS_F_CONTIGUOUS(arr) && !PyArray_IS_C_CONTIGUOUS(arr);
    a = pg_array_empty(st, PyArray_NDIM(arr), PyArray_DIMS(arr), PyArray_DESCR(arr),
                       fortran, s);
    /* a temporary made by the conversion must be copied before it goes */
    if (a != NULL &&
        copy_from_host(st, a, arr, s, sync || (PyObject *)arr != obj) < 0) {
        Py_CLEAR(a);
    }
    Py_DECREF(arr);
    return a;
}

/* Copies obj (a DeviceArray, or anything NumPy accepts) into dst on stream s. */
static int
assign(pg_state *st, pg_array *dst, PyObject *obj, const char *what,
       const pg_stream_ref *s, int sync)
{
    PyArrayObject *arr = NULL;
    int rc;
    if (pg_array_check(st, obj)) {
        pg_array *src = ARR(obj);
        if (check_same_shape(what, dst->nd, dst->shape, src->nd, src->shape) < 0 ||
            check_same_dtype(what, dst->descr, src->descr) < 0) {
            return -1;
        }
        return pg_array_copy_into(st, dst, src, s);
    }
    if (PyArray_Check(obj)) {
        if (check_same_dtype(what, dst->descr, PyArray_DESCR((PyArrayObject *)obj)) <
            0) {
            return -1;
        }
        arr = host_array(obj, NULL);
    }
    else {
        arr = host_array(obj, dst->descr); /* lists, scalars: NumPy converts */
    }
    if (arr == NULL) {
        return -1;
    }
    if (PyArray_NDIM(arr) == 0 && dst->nd > 0) { /* a scalar fills dst */
        PyArrayObject *full = NULL;
        Py_INCREF(dst->descr);
        full = (PyArrayObject *)PyArray_Empty(dst->nd, dst->shape, dst->descr, 0);
        if (full == NULL || PyArray_CopyInto(full, arr) < 0) {
            Py_XDECREF(full);
            Py_DECREF(arr);
            return -1;
        }
        Py_SETREF(arr, full);
    }
    rc = check_same_shape(what, dst->nd, dst->shape, PyArray_NDIM(arr),
                          PyArray_DIMS(arr));
    if (rc == 0) {
        rc = copy_from_host(st, dst, arr, s, sync || (PyObject *)arr != obj);
    }
    Py_DECREF(arr);
    return rc;
}

/* ---- argument parsing ------------------------------------------------------- */

int
pg_parse_args(const char *fname, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames, const char *const *names, int n, int required,
              PyObject **out)
{
    for (int i = 0; i < n; i++) {
        out[i] = NULL;
    }
    if (nargs > n) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)",
                     fname, n, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        out[i] = args[i];
    }
    if (kwnames != NULL) {
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
            const char *key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
            int i;
            if (key == NULL) {
                return -1;
            }
            for (i = 0; i < n; i++) {
                if (strcmp(key, names[i]) == 0) {
                    break;
                }
            }
            if (i == n) {
                PyErr_Format(PyExc_TypeError,
                             "%s() got an unexpected keyword argument '%s'", fname,
                             key);
                return -1;
            }
            if (out[i] != NULL) {
                PyErr_Format(PyExc_TypeError,
                             "%s() got multiple values for argument '%s'", fname, key);
                return -1;
            }
            out[i] = args[nargs + k];
        }
    }
    for (int i = 0; i < required; i++) {
        if (out[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname,
                         names[i]);
            return -1;
        }
    }
    return 0;
}

static int
parse_order(PyObject *obj, int *fortran)
{
    const char *s;
    if (obj == NULL || obj == Py_None) {
        *fortran = 0;
        return 0;
    }
    s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (s != NULL && (strcmp(s, "C") == 0 || strcmp(s, "c") == 0)) {
        *fortran = 0;
        return 0;
    }
    if (s != NULL && (strcmp(s, "F") == 0 || strcmp(s, "f") == 0)) {
        *fortran = 1;
        return 0;
    }
    PyErr_Format(PyExc_ValueError, "order must be 'C' or 'F', not %R", obj);
    return -1;
}

static PyObject *
pg_tuple_from_array(PyObject *const *items, Py_ssize_t n)
{
    PyObject *t = PyTuple_New(n);
    if (t == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTuple_SET_ITEM(t, i, Py_NewRef(items[i]));
    }
    return t;
}

#define STATE_OR_NULL(self) pg_state_of_type(Py_TYPE(self))

/* ---- methods -------------------------------------------------------------- */

static PyObject *
Array_copy_to_host(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames)
{
    static const char *const names[] = {"out", "stream"};
    pg_state *st = STATE_OR_NULL(self);
    pg_array *a = ARR(self);
    PyObject *argv[2];
    PyArrayObject *out = NULL;
    pg_stream_ref s;
    int sync;
    if (st == NULL ||
        pg_parse_args("copy_to_host", args, nargs, kwnames, names, 2, 0, argv) < 0 ||
        pg_resolve_stream(st, argv[1], &s) < 0) {
        return NULL;
    }
    sync = !pg_stream_given(argv[1]);
    if (argv[0] != NULL && argv[0] != Py_None) {
        if (!PyArray_Check(argv[0])) {
            return PyErr_Format(PyExc_TypeError,
                                "out must be a numpy.ndarray, not %.100s",
                                Py_TYPE(argv[0])->tp_name);
        }
        out = (PyArrayObject *)argv[0];
        if (check_same_shape("copy_to_host", PyArray_NDIM(out), PyArray_DIMS(out),
                             a->nd, a->shape) < 0 ||
            check_same_dtype("copy_to_host", PyArray_DESCR(out), a->descr) < 0 ||
            PyArray_FailUnlessWriteable(out, "out") < 0) {
            return NULL;
        }
        if (copy_to_host(st, a, out, &s, sync) < 0) {
            return NULL;
        }
        return Py_NewRef(argv[0]);
    }
    Py_INCREF(a->descr);
    out = (PyArrayObject *)PyArray_Empty(a->nd, a->shape, a->descr,
                                         (a->flags & NPY_ARRAY_F_CONTIGUOUS) &&
                                             !(a->flags & NPY_ARRAY_C_CONTIGUOUS));
    if (out == NULL) {
        return NULL;
    }
    if (copy_to_host(st, a, out, &s, 1) < 0) { /* a new, pageable array */
        Py_DECREF(out);
        return NULL;
    }
    return (PyObject *)out;
}

static PyObject *
Array_copy_to_device(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames)
{
    static const char *const names[] = {"ary", "stream"};
    pg_state *st = STATE_OR_NULL(self);
    PyObject *argv[2];
    pg_stream_ref s;
    if (st == NULL ||
        pg_parse_args("copy_to_device", args, nargs, kwnames, names, 2, 1, argv) < 0 ||
        pg_resolve_stream(st, argv[1], &s) < 0) {
        return NULL;
    }
    if (assign(st, ARR(self), argv[0], "copy_to_device", &s,
               !pg_stream_given(argv[1])) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyObject *
pg_array_copy(pg_state *st, pg_array *a, int fortran, const pg_stream_ref *s)
{
    pg_stream_ref current;
    pg_array *c;
    if (s == NULL) {
        (void)pg_resolve_stream(st, NULL, &current);
        s = &current;
    }
    c = pg_array_empty(st, a->nd, a->shape, a->descr, fortran, s);
    if (c != NULL && pg_array_copy_into(st, c, a, s) < 0) {
        Py_CLEAR(c);
    }
    return (PyObject *)c;
}

static PyObject *
Array_copy(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"order", "stream"};
    pg_state *st = STATE_OR_NULL(self);
    PyObject *argv[2];
    pg_stream_ref s;
    int fortran = 0;
    if (st == NULL ||
        pg_parse_args("copy", args, nargs, kwnames, names, 2, 0, argv) < 0 ||
        parse_order(argv[0], &fortran) < 0 || pg_resolve_stream(st, argv[1], &s) < 0) {
        return NULL;
    }
    return pg_array_copy(st, ARR(self), fortran, &s);
}

/* A view of a with a new shape; a dense copy first when no view can have it. */
static PyObject *
reshape_impl(pg_state *st, pg_array *a, PyObject *shape, int fortran)
{
    PyObject *args = NULL, *kwargs = NULL, *res = NULL, *out = NULL;
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
    if (res != NULL) {
        PyObject *dense = pg_array_copy(st, a, fortran, NULL);
        if (dense != NULL) {
            out = reshape_impl(st, ARR(dense), shape, fortran);
            Py_DECREF(dense);
        }
    }
done:
    Py_XDECREF(res);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    return out;
}

static PyObject *
Array_reshape(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames)
{
    pg_state *st = STATE_OR_NULL(self);
    PyObject *shape = NULL, *order = NULL, *res = NULL;
    int fortran = 0;
    if (st == NULL) {
        return NULL;
    }
    if (kwnames != NULL) {
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, k);
            if (PyUnicode_CompareWithASCIIString(key, "order") == 0) {
                order = args[nargs + k];
            }
            else if (PyUnicode_CompareWithASCIIString(key, "shape") == 0 &&
                     nargs == 0) {
                shape = Py_NewRef(args[nargs + k]);
            }
            else {
                return PyErr_Format(PyExc_TypeError,
                                    "reshape() got an unexpected keyword "
                                    "argument %R",
                                    key);
            }
        }
    }
    if (parse_order(order, &fortran) < 0) {
        Py_XDECREF(shape);
        return NULL;
    }
    if (shape == NULL) {
        if (nargs == 0) {
            PyErr_SetString(PyExc_TypeError, "reshape() needs a shape");
            return NULL;
        }
        shape = nargs == 1 ? Py_NewRef(args[0]) : pg_tuple_from_array(args, nargs);
        if (shape == NULL) {
            return NULL;
        }
    }
    if (!PyTuple_Check(shape) && !PyList_Check(shape) &&
        (PyBool_Check(shape) || !PyIndex_Check(shape))) {
        PyErr_Format(PyExc_TypeError,
                     "reshape() takes a shape: an int or a tuple of ints, "
                     "not %.100s",
                     Py_TYPE(shape)->tp_name);
    }
    else {
        res = reshape_impl(st, ARR(self), shape, fortran);
    }
    Py_DECREF(shape);
    return res;
}

static PyObject *
Array_ravel(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"order"};
    pg_state *st = STATE_OR_NULL(self);
    PyObject *argv[1], *shape = NULL, *res = NULL;
    int fortran = 0;
    if (st == NULL ||
        pg_parse_args("ravel", args, nargs, kwnames, names, 1, 0, argv) < 0 ||
        parse_order(argv[0], &fortran) < 0) {
        return NULL;
    }
    shape = PyLong_FromLong(-1);
    if (shape != NULL) {
        res = reshape_impl(st, ARR(self), shape, fortran);
        Py_DECREF(shape);
    }
    return res;
}

static PyObject *
transpose_impl(pg_state *st, pg_array *a, PyObject *axes)
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

static PyObject *
Array_transpose(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    pg_state *st = STATE_OR_NULL(self);
    PyObject *axes = NULL, *res = NULL;
    if (st == NULL) {
        return NULL;
    }
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_SetString(PyExc_TypeError, "transpose() takes no keyword arguments");
        return NULL;
    }
    if (nargs == 1 && args[0] != Py_None) {
        axes = Py_NewRef(args[0]);
    }
    else if (nargs > 1) {
        axes = pg_tuple_from_array(args, nargs);
        if (axes == NULL) {
            return NULL;
        }
    }
    res = transpose_impl(st, ARR(self), axes);
    Py_XDECREF(axes);
    return res;
}

/* The one element of a size-1 array, as a Python scalar. */
static PyObject *
Array_item(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pg_state *st = STATE_OR_NULL(self);
    pg_array *a = ARR(self);
    PyArrayObject *host = NULL;
    PyObject *res = NULL;
    if (st == NULL) {
        return NULL;
    }
    if (pg_array_size(a) != 1) {
        PyErr_Format(PyExc_ValueError,
                     "can only convert an array of size 1 to a Python scalar; "
                     "this one has size %zd",
                     (Py_ssize_t)pg_array_size(a));
        return NULL;
    }
    Py_INCREF(a->descr);
    host = (PyArrayObject *)PyArray_Empty(a->nd, a->shape, a->descr, 0);
    if (host == NULL) {
        return NULL;
    }
    pg_stream_ref cur;
    (void)pg_resolve_stream(st, NULL, &cur);
    if (copy_to_host(st, a, host, &cur, 1) == 0) {
        res = PyArray_GETITEM(host, PyArray_DATA(host));
    }
    Py_DECREF(host);
    return res;
}

static PyObject *
Array_array(PyObject *self, PyObject *args, PyObject *kwargs)
{
    PyErr_SetString(PyExc_TypeError,
                    "pygpu.DeviceArray does not convert to a NumPy array "
                    "implicitly, since that copies from the device. Copy it "
                    "explicitly with a.copy_to_host() or pygpu.asnumpy(a).");
    return NULL;
}

/* Pickling copies to the host; unpickling copies back (to the current device). */
static PyObject *
Array_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *module = PyType_GetModuleByDef(Py_TYPE(self), &pg_module_def);
    PyObject *host = NULL, *fn = NULL, *res = NULL;
    if (module == NULL) {
        return NULL;
    }
    fn = PyObject_GetAttrString(module, "to_device");
    host = fn == NULL ? NULL : Array_copy_to_host(self, NULL, 0, NULL);
    if (host != NULL) {
        res = Py_BuildValue("(O(O))", fn, host);
    }
    Py_XDECREF(fn);
    Py_XDECREF(host);
    return res;
}

/* ---- indexing --------------------------------------------------------------- */

static int
basic_index_item(PyObject *o)
{
    return (PyLong_Check(o) && !PyBool_Check(o)) || PyArray_IsScalar(o, Integer) ||
           PySlice_Check(o) || o == Py_Ellipsis || o == Py_None;
}

/* The view a[key]; for basic indexing only (no copies, as in NumPy). */
static PyObject *
Array_getitem(PyObject *self, PyObject *key)
{
    pg_state *st = STATE_OR_NULL(self);
    pg_array *a = ARR(self);
    PyObject *full_key = NULL, *res = NULL, *out = NULL;
    PyObject *args = NULL;
    int has_ellipsis = 0;
    if (st == NULL) {
        return NULL;
    }
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
    PyErr_Format(PyExc_IndexError,
                 "pygpu arrays support basic indexing only (ints, slices, "
                 "..., None), which gives views; got %.100s. For other "
                 "indexing, copy to the host with copy_to_host() first.",
                 Py_TYPE(key)->tp_name);
    return NULL;
}

static int
Array_setitem(PyObject *self, PyObject *key, PyObject *value)
{
    pg_state *st = STATE_OR_NULL(self);
    PyObject *view = NULL;
    int rc;
    if (st == NULL) {
        return -1;
    }
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "cannot delete elements of a DeviceArray");
        return -1;
    }
    view = Array_getitem(self, key);
    if (view == NULL) {
        return -1;
    }
    pg_stream_ref cur;
    (void)pg_resolve_stream(st, NULL, &cur);
    rc = assign(st, ARR(view), value, "setitem", &cur, 1);
    Py_DECREF(view);
    return rc;
}

static PyObject *
Array_sq_item(PyObject *self, Py_ssize_t i)
{
    PyObject *key = PyLong_FromSsize_t(i), *res;
    if (key == NULL) {
        return NULL;
    }
    res = Array_getitem(self, key);
    Py_DECREF(key);
    return res;
}

static PyObject *
Array_iter(PyObject *self)
{
    if (ARR(self)->nd == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d array");
        return NULL;
    }
    return PySeqIter_New(self);
}

static Py_ssize_t
Array_length(PyObject *self)
{
    if (ARR(self)->nd == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of unsized object");
        return -1;
    }
    return ARR(self)->shape[0];
}

/* ---- numbers: conversions of size-1 arrays ---------------------------------- */

static int
Array_bool(PyObject *self)
{
    PyObject *item = Array_item(self, NULL);
    int r;
    if (item == NULL) {
        return -1;
    }
    r = PyObject_IsTrue(item);
    Py_DECREF(item);
    return r;
}

static PyObject *
Array_int(PyObject *self)
{
    PyObject *item = Array_item(self, NULL), *r;
    if (item == NULL) {
        return NULL;
    }
    r = PyNumber_Long(item);
    Py_DECREF(item);
    return r;
}

static PyObject *
Array_float(PyObject *self)
{
    PyObject *item = Array_item(self, NULL), *r;
    if (item == NULL) {
        return NULL;
    }
    r = PyNumber_Float(item);
    Py_DECREF(item);
    return r;
}

/* ---- attributes ----------------------------------------------------------- */

static PyObject *
Array_repr(PyObject *self)
{
    pg_array *a = ARR(self);
    PyObject *shape = PyArray_IntTupleFromIntp(a->nd, a->shape), *r;
    const pg_backend *rt = pg_rt();
    if (shape == NULL) {
        return NULL;
    }
    r = PyUnicode_FromFormat("<pygpu.DeviceArray shape=%R dtype=%S device=%d%s>", shape,
                             (PyObject *)a->descr, a->device,
                             rt != NULL && (rt->caps & PG_CAP_SIMULATED) ? " (simulated)" : "");
    Py_DECREF(shape);
    return r;
}

static PyObject *
Array_get(PyObject *self, void *closure)
{
    pg_array *a = ARR(self);
    switch ((int)(intptr_t)closure) {
    case 0: return PyArray_IntTupleFromIntp(a->nd, a->shape);
    case 1: return PyArray_IntTupleFromIntp(a->nd, a->strides);
    case 2: return Py_NewRef((PyObject *)a->descr);
    case 3: return PyLong_FromSsize_t(pg_array_size(a));
    case 4: return PyLong_FromSsize_t(pg_array_size(a) * PyDataType_ELSIZE(a->descr));
    case 5: return PyLong_FromLong(a->nd);
    case 6: return PyLong_FromSsize_t(PyDataType_ELSIZE(a->descr));
    case 7: return PyLong_FromVoidPtr(a->data);
    case 8: return Py_NewRef(a->base != NULL ? a->base : Py_None);
    case 9:
        return Py_BuildValue("{sOsOsO}", "C_CONTIGUOUS",
                             (a->flags & NPY_ARRAY_C_CONTIGUOUS) ? Py_True : Py_False,
                             "F_CONTIGUOUS",
                             (a->flags & NPY_ARRAY_F_CONTIGUOUS) ? Py_True : Py_False,
                             "OWNDATA", a->base == NULL ? Py_True : Py_False);
    case 10: {
        pg_state *st = STATE_OR_NULL(self);
        return st == NULL ? NULL : pg_device_new(st, a->device);
    }
    case 11: {
        pg_state *st = STATE_OR_NULL(self);
        return st == NULL ? NULL : transpose_impl(st, a, NULL);
    }
    default: return NULL;
    }
}

static PyObject *
Array_is_c_contiguous(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(ARR(self)->flags & NPY_ARRAY_C_CONTIGUOUS);
}

static PyObject *
Array_is_f_contiguous(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(ARR(self)->flags & NPY_ARRAY_F_CONTIGUOUS);
}

static PyObject *
Array_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"shape", "dtype", "order", NULL};
    pg_state *st = pg_state_of_type(type);
    PyObject *shape_obj = NULL, *dtype_obj = NULL, *order = NULL;
    PyArray_Descr *descr = NULL;
    npy_intp shape[PG_MAXDIMS];
    pg_array *a = NULL;
    int nd, fortran = 0;
    if (st == NULL ||
        !PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:DeviceArray", kwlist,
                                     &shape_obj, &dtype_obj, &order)) {
        return NULL;
    }
    if ((nd = pg_parse_shape(shape_obj, shape)) < 0 ||
        parse_order(order, &fortran) < 0 || (descr = parse_dtype(dtype_obj)) == NULL) {
        return NULL;
    }
    a = array_empty_typed(st, type, nd, shape, descr, fortran, NULL);
    Py_DECREF(descr);
    return (PyObject *)a;
}

static PyGetSetDef Array_getset[] = {
    {"__cuda_array_interface__", pg_array_cai, NULL,
     "The CUDA array interface (version 3): zero-copy export to CuPy, Numba, "
     "PyTorch.",
     NULL},
    {"shape", Array_get, NULL, "Tuple of dimensions.", (void *)0},
    {"strides", Array_get, NULL, "Tuple of byte steps per dimension.", (void *)1},
    {"dtype", Array_get, NULL, "Element type, a numpy.dtype.", (void *)2},
    {"size", Array_get, NULL, "Number of elements.", (void *)3},
    {"nbytes", Array_get, NULL, "Bytes the elements take.", (void *)4},
    {"ndim", Array_get, NULL, "Number of dimensions.", (void *)5},
    {"itemsize", Array_get, NULL, "Bytes per element.", (void *)6},
    {"ptr", Array_get, NULL, "Device address of the first element, an int.", (void *)7},
    {"base", Array_get, NULL, "The array that owns the memory of a view, else None.",
     (void *)8},
    {"flags", Array_get, NULL, "Dict with C_CONTIGUOUS, F_CONTIGUOUS and OWNDATA.",
     (void *)9},
    {"device", Array_get, NULL, "The Device holding the array.", (void *)10},
    {"T", Array_get, NULL, "Transposed view.", (void *)11},
    {NULL},
};

static PyMethodDef Array_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))pg_array_dlpack,
     METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, "
     "copy=None)\n--\n\nExport as a DLPack capsule (zero-copy)."},
    {"__dlpack_device__", pg_array_dlpack_device, METH_NOARGS,
     "__dlpack_device__($self, /)\n--\n\n(2, device id): CUDA memory."},
    {"copy_to_host", (PyCFunction)(void (*)(void))Array_copy_to_host,
     METH_FASTCALL | METH_KEYWORDS,
     "copy_to_host($self, /, out=None, stream=None)\n--\n\n"
     "Copy to the host: a new numpy.ndarray, or into `out` (same shape and dtype)."},
    {"get", (PyCFunction)(void (*)(void))Array_copy_to_host,
     METH_FASTCALL | METH_KEYWORDS,
     "get($self, /, out=None, stream=None)\n--\n\nSame as copy_to_host (CuPy's "
     "name)."},
    {"copy_to_device", (PyCFunction)(void (*)(void))Array_copy_to_device,
     METH_FASTCALL | METH_KEYWORDS,
     "copy_to_device($self, /, ary, stream=None)\n--\n\n"
     "Copy `ary` (a DeviceArray or host array of the same shape and dtype) into "
     "this array."},
    {"set", (PyCFunction)(void (*)(void))Array_copy_to_device,
     METH_FASTCALL | METH_KEYWORDS,
     "set($self, /, ary, stream=None)\n--\n\nSame as copy_to_device (CuPy's name)."},
    {"copy", (PyCFunction)(void (*)(void))Array_copy, METH_FASTCALL | METH_KEYWORDS,
     "copy($self, /, order='C', stream=None)\n--\n\nA new device array with the "
     "same contents."},
    {"reshape", (PyCFunction)(void (*)(void))Array_reshape,
     METH_FASTCALL | METH_KEYWORDS,
     "reshape($self, /, *shape, order='C')\n--\n\n"
     "A view with a new shape, or a copy where no view can have it (as NumPy)."},
    {"ravel", (PyCFunction)(void (*)(void))Array_ravel, METH_FASTCALL | METH_KEYWORDS,
     "ravel($self, /, order='C')\n--\n\nA 1-D view, or copy where needed."},
    {"transpose", (PyCFunction)(void (*)(void))Array_transpose,
     METH_FASTCALL | METH_KEYWORDS,
     "transpose($self, /, *axes)\n--\n\nA view with axes permuted."},
    {"item", Array_item, METH_NOARGS,
     "item($self, /)\n--\n\nThe element of a size-1 array as a Python scalar."},
    {"is_c_contiguous", Array_is_c_contiguous, METH_NOARGS,
     "is_c_contiguous($self, /)\n--\n\nTrue if laid out in C order."},
    {"is_f_contiguous", Array_is_f_contiguous, METH_NOARGS,
     "is_f_contiguous($self, /)\n--\n\nTrue if laid out in Fortran order."},
    {"__array__", (PyCFunction)(void (*)(void))Array_array,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {"__reduce__", Array_reduce, METH_NOARGS, NULL},
    {NULL},
};

static PyMemberDef Array_members[] = {
    {"__weaklistoffset__", Py_T_PYSSIZET, offsetof(pg_array, weakreflist), Py_READONLY},
    {NULL},
};

static PyType_Slot Array_slots[] = {
    {Py_tp_new, Array_new},
    {Py_tp_dealloc, Array_dealloc},
    {Py_tp_repr, Array_repr},
    {Py_tp_methods, Array_methods},
    {Py_tp_getset, Array_getset},
    {Py_tp_members, Array_members},
    {Py_mp_subscript, Array_getitem},
    {Py_mp_ass_subscript, Array_setitem},
    {Py_mp_length, Array_length},
    {Py_sq_length, Array_length},
    {Py_sq_item, Array_sq_item},
    {Py_tp_iter, Array_iter},
    {Py_nb_bool, Array_bool},
    {Py_nb_int, Array_int},
    {Py_nb_float, Array_float},
    {Py_nb_add, pg_array_add},
    {Py_nb_inplace_add, pg_array_iadd},
    {Py_nb_matrix_multiply, pg_array_matmul},
    {Py_tp_doc, "DeviceArray(shape, dtype=float64, order='C')\n--\n\n"
                "An n-dimensional array in device memory (uninitialized when "
                "made this way). Made by pygpu.cuda.to_device, pygpu.asarray, "
                "pygpu.empty, zeros, ones, full."},
    {0, NULL},
};

PyType_Spec pg_array_spec = {
    .name = "pygpu.DeviceArray",
    .basicsize = sizeof(pg_array),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_BASETYPE,
    .slots = Array_slots,
};

/* ---- module functions ------------------------------------------------------ */

#define MODULE_STATE(m) pg_state_of_module(m)

static PyObject *
fill_new(pg_state *st, PyObject *shape_obj, PyObject *dtype_obj, PyObject *order,
         PyObject *value)
{
    npy_intp shape[PG_MAXDIMS];
    PyArray_Descr *descr = NULL;
    PyArrayObject *v = NULL;
    pg_array *a = NULL;
    pg_stream_ref s;
    int nd, fortran = 0;
    pg_err err = PG_SUCCESS;
    if ((nd = pg_parse_shape(shape_obj, shape)) < 0 ||
        parse_order(order, &fortran) < 0) {
        return NULL;
    }
    if (value != NULL && (dtype_obj == NULL || dtype_obj == Py_None)) {
        /* dtype from the fill value, as numpy.full does */
        v = host_array(value, NULL);
        if (v == NULL) {
            return NULL;
        }
        descr = PyArray_DESCR(v);
        Py_INCREF(descr);
    }
    else if ((descr = parse_dtype(dtype_obj)) == NULL) {
        return NULL;
    }
    if (value != NULL && v == NULL) {
        v = host_array(value, descr);
        if (v == NULL) {
            goto done;
        }
    }
    if (v != NULL && PyArray_NDIM(v) != 0) {
        PyErr_Format(PyExc_ValueError,
                     "fill_value must be a scalar, got an array with %d dimension(s)",
                     PyArray_NDIM(v));
        goto done;
    }
    (void)pg_resolve_stream(st, NULL, &s);
    a = pg_array_empty(st, nd, shape, descr, fortran, &s);
    if (a == NULL || a->alloc == NULL) {
        goto done;
    }
    if (v == NULL) {
        err = pg_rt()->memset_async(a->data, 0, a->alloc_size, s.handle);
        if (err != PG_SUCCESS) {
            pg_raise(st, err, "cudaMemset");
            Py_CLEAR(a);
        }
    }
    else {
        err = pg_rt()->kernels->fill((int)PyDataType_ELSIZE(descr), a->data,
                                     pg_array_size(a), PyArray_DATA(v), s.handle);
        if (err != PG_SUCCESS) {
            pg_raise(st, err, "fill kernel launch");
            Py_CLEAR(a);
        }
    }
done:
    Py_XDECREF(v);
    Py_XDECREF(descr);
    return (PyObject *)a;
}

static PyObject *
mod_empty(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"shape", "dtype", "order"};
    pg_state *st = MODULE_STATE(m);
    PyObject *argv[3];
    npy_intp shape[PG_MAXDIMS];
    PyArray_Descr *descr = NULL;
    pg_array *a = NULL;
    int nd, fortran = 0;
    if (pg_parse_args("empty", args, nargs, kwnames, names, 3, 1, argv) < 0 ||
        (nd = pg_parse_shape(argv[0], shape)) < 0 ||
        parse_order(argv[2], &fortran) < 0 || (descr = parse_dtype(argv[1])) == NULL) {
        return NULL;
    }
    a = pg_array_empty(st, nd, shape, descr, fortran, NULL);
    Py_DECREF(descr);
    return (PyObject *)a;
}

static PyObject *
mod_zeros(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"shape", "dtype", "order"};
    PyObject *argv[3];
    if (pg_parse_args("zeros", args, nargs, kwnames, names, 3, 1, argv) < 0) {
        return NULL;
    }
    return fill_new(MODULE_STATE(m), argv[0], argv[1], argv[2], NULL);
}

static PyObject *
mod_full(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"shape", "fill_value", "dtype", "order"};
    PyObject *argv[4];
    if (pg_parse_args("full", args, nargs, kwnames, names, 4, 2, argv) < 0) {
        return NULL;
    }
    return fill_new(MODULE_STATE(m), argv[0], argv[2], argv[3], argv[1]);
}

static PyObject *
mod_to_device(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"obj", "stream", "copy", "to"};
    pg_state *st = MODULE_STATE(m);
    PyObject *argv[4];
    pg_stream_ref s;
    int sync;
    if (pg_parse_args("to_device", args, nargs, kwnames, names, 4, 1, argv) < 0 ||
        pg_resolve_stream(st, argv[1], &s) < 0) {
        return NULL;
    }
    sync = !pg_stream_given(argv[1]);
    if (argv[3] != NULL && argv[3] != Py_None) {
        if (!pg_array_check(st, argv[3])) {
            return PyErr_Format(PyExc_TypeError,
                                "to= must be a pygpu.DeviceArray, not %.100s",
                                Py_TYPE(argv[3])->tp_name);
        }
        if (assign(st, ARR(argv[3]), argv[0], "to_device", &s, sync) < 0) {
            return NULL;
        }
        return Py_NewRef(argv[3]);
    }
    if (pg_array_check(st, argv[0])) {
        return pg_array_copy(st, ARR(argv[0]), 0, &s);
    }
    return (PyObject *)pg_array_from_host(st, argv[0], NULL, &s, sync);
}

static PyObject *
mod_asarray(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"obj", "dtype"};
    pg_state *st = MODULE_STATE(m);
    PyObject *argv[2], *res = NULL;
    PyArray_Descr *descr = NULL;
    pg_stream_ref s;
    if (pg_parse_args("asarray", args, nargs, kwnames, names, 2, 1, argv) < 0) {
        return NULL;
    }
    (void)pg_resolve_stream(st, NULL, &s);
    if (argv[1] != NULL && argv[1] != Py_None &&
        (descr = parse_dtype(argv[1])) == NULL) {
        return NULL;
    }
    if (pg_array_check(st, argv[0])) {
        pg_array *a = ARR(argv[0]);
        if (descr == NULL || PyArray_EquivTypes(descr, a->descr)) {
            Py_XDECREF(descr);
            return Py_NewRef(argv[0]);
        }
        /* A dtype change: through the host until a cast kernel exists. */
        PyObject *host = Array_copy_to_host(argv[0], NULL, 0, NULL);
        if (host != NULL) {
            res = (PyObject *)pg_array_from_host(st, host, descr, &s, 1);
            Py_DECREF(host);
        }
        Py_DECREF(descr);
        return res;
    }
    res = pg_array_from_foreign(st, argv[0]); /* CUDA array interface, DLPack */
    if (res != NULL && descr != NULL && !PyArray_EquivTypes(descr, ARR(res)->descr)) {
        PyObject *host = Array_copy_to_host(res, NULL, 0, NULL);
        Py_SETREF(res, host == NULL
                           ? NULL
                           : (PyObject *)pg_array_from_host(st, host, descr, &s, 1));
        Py_XDECREF(host);
    }
    if (res == NULL && !PyErr_Occurred()) {
        res = (PyObject *)pg_array_from_host(st, argv[0], descr, &s, 1);
    }
    Py_XDECREF(descr);
    return res;
}

static PyObject *
mod_asnumpy(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"a", "out", "stream"};
    pg_state *st = MODULE_STATE(m);
    PyObject *argv[3];
    if (pg_parse_args("asnumpy", args, nargs, kwnames, names, 3, 1, argv) < 0) {
        return NULL;
    }
    if (!pg_array_check(st, argv[0])) {
        return PyArray_FromAny(argv[0], NULL, 0, 0, 0, NULL);
    }
    return Array_copy_to_host(argv[0], args + 1, nargs > 0 ? nargs - 1 : 0, kwnames);
}

static PyObject *
mod_device_array_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames)
{
    static const char *const names[] = {"ary", "stream"};
    pg_state *st = MODULE_STATE(m);
    PyObject *argv[2];
    pg_stream_ref s;
    if (pg_parse_args("device_array_like", args, nargs, kwnames, names, 2, 1, argv) <
            0 ||
        pg_resolve_stream(st, argv[1], &s) < 0) {
        return NULL;
    }
    if (pg_array_check(st, argv[0])) {
        pg_array *a = ARR(argv[0]);
        int fortran =
            (a->flags & NPY_ARRAY_F_CONTIGUOUS) && !(a->flags & NPY_ARRAY_C_CONTIGUOUS);
        return (PyObject *)pg_array_empty(st, a->nd, a->shape, a->descr, fortran, &s);
    }
    if (PyArray_Check(argv[0])) {
        PyArrayObject *h = (PyArrayObject *)argv[0];
        int fortran = PyArray_IS_F_CONTIGUOUS(h) && !PyArray_IS_C_CONTIGUOUS(h);
        if (pg_check_dtype(PyArray_DESCR(h)) < 0) {
            return NULL;
        }
        return (PyObject *)pg_array_empty(st, PyArray_NDIM(h), PyArray_DIMS(h),
                                          PyArray_DESCR(h), fortran, &s);
    }
    return PyErr_Format(PyExc_TypeError,
                        "device_array_like() takes a DeviceArray or numpy.ndarray, "
                        "not %.100s",
                        Py_TYPE(argv[0])->tp_name);
}

static PyObject *
mod_memory_allocated(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames)
{
    static const char *const names[] = {"device"};
    PyObject *argv[1];
    int device = 0;
    if (pg_parse_args("memory_allocated", args, nargs, kwnames, names, 1, 0, argv) <
        0) {
        return NULL;
    }
    if (argv[0] != NULL && argv[0] != Py_None) {
        device = (int)PyLong_AsLong(argv[0]);
        if (device == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    else {
        const pg_backend *rt = pg_rt();
        if (rt != NULL && rt->get_device(&device) != PG_SUCCESS) {
            device = 0;
        }
    }
    return PyLong_FromSize_t(pg_pool_used(device));
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

PyMethodDef pg_array_functions[] = {
    {"empty", FASTKW(mod_empty),
     "empty(shape, dtype=float64, order='C')\n--\n\nAn uninitialized device array."},
    {"zeros", FASTKW(mod_zeros),
     "zeros(shape, dtype=float64, order='C')\n--\n\nA device array of zeros."},
    {"full", FASTKW(mod_full),
     "full(shape, fill_value, dtype=None, order='C')\n--\n\n"
     "A device array filled with fill_value (dtype from it when None)."},
    {"to_device", FASTKW(mod_to_device),
     "to_device(obj, stream=None, copy=True, to=None)\n--\n\n"
     "Copy a host array (or anything numpy.asarray takes) to a new device array, "
     "or into `to`."},
    {"asarray", FASTKW(mod_asarray),
     "asarray(obj, dtype=None)\n--\n\n"
     "A device array from obj; a DeviceArray of that dtype is returned as is."},
    {"asnumpy", FASTKW(mod_asnumpy),
     "asnumpy(a, out=None, stream=None)\n--\n\nCopy a device array to the host."},
    {"device_array_like", FASTKW(mod_device_array_like),
     "device_array_like(ary, stream=None)\n--\n\n"
     "An uninitialized device array with ary's shape, dtype and order."},
    {"memory_allocated", FASTKW(mod_memory_allocated),
     "memory_allocated(device=None)\n--\n\n"
     "Bytes of device memory that live pygpu arrays hold on the device (default: "
     "current), as the memory pool counts them (rounded up to 512 bytes each)."},
    {NULL},
};
