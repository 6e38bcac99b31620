/* Every copy of array data: host to device, device to host, device to
 * device (dense by memcpy, strided by the copy kernel), and assignment
 * (setitem, copy_to_device, to_device(to=)). Pageable host memory goes
 * through transfer.c's staged, pipelined copies. */
#include <string.h>

#include "pygpu.h"

#define ARR(o) ((pg_array *)(o))

/* Raises for a failed copy or launch; returns -1. */
static int
failed(pg_state *st, pg_err err, const char *call)
{
    pg_raise(st, err, call);
    return -1;
}

/* The copy, once dst and src are known not to overlap. */
static int copy_disjoint(pg_state *st, pg_array *dst, pg_array *src,
                         const pg_stream_ref *s);

int
pg_array_copy_into(pg_state *st, pg_array *dst, pg_array *src, const pg_stream_ref *s)
{
    pg_array *tmp;
    int rc;
    if (pg_array_size(dst) == 0 || pg_arrays_same_elements(dst, src)) {
        return 0;
    }
    if (!pg_array_overlap_unsafe(dst, src)) {
        return copy_disjoint(st, dst, src, s);
    }
    /* d[:] = d[::-1], d[1:] = d[:-1]: NumPy copies as if through a buffer,
     * and so do we, since a copy in place would read what it already wrote
     * (and race with itself on a GPU). */
    tmp = pg_array_empty_on(st, pg_array_device(src), src->nd, src->shape, src->descr,
                            0, s);
    if (tmp == NULL) {
        return -1;
    }
    rc = copy_disjoint(st, tmp, src, s);
    if (rc == 0) {
        rc = copy_disjoint(st, dst, tmp, s);
    }
    Py_DECREF(tmp);
    return rc;
}

/* s, made fit for work on `device` (another device's stream gives way to
 * that device's default stream). */
static pg_stream_ref
stream_on(const pg_stream_ref *s, int device)
{
    pg_stream_ref r = *s;
    (void)pg_stream_for_device(&r, device, 0);
    return r;
}

/* Makes work queued after now on `waiter` (a stream of device wd) wait for the
 * work queued so far on `signal` (of device sd): streams of two devices are
 * ordered by an event of the signalling device. */
static int
order_streams(pg_state *st, int wd, pg_stream waiter, int sd, pg_stream signal)
{
    const pg_backend *rt = pg_rt();
    pg_event e = NULL;
    pg_status s;
    int prev = 0;
    if (pg_device_push(st, rt, sd, &prev) < 0) {
        return -1;
    }
    s = PG_CALL(rt, event_create, (&e, 0));
    if (s.err == PG_SUCCESS) {
        s = PG_CALL(rt, event_record, (e, signal));
    }
    if (s.err == PG_SUCCESS && wd != sd) {
        (void)rt->set_device(wd);
    }
    if (s.err == PG_SUCCESS) {
        s = PG_CALL(rt, stream_wait_event, (waiter, e));
    }
    if (e != NULL) {
        (void)rt->set_device(sd);
        (void)rt->event_destroy(e); /* released once the wait is done */
    }
    pg_device_pop(rt, prev);
    return pg_check(st, s);
}

/* dst <- src between two devices, dense and in one layout: the source's
 * stream is waited for, the copy runs on dst's stream, and later work on the
 * source's stream waits for the copy (it may overwrite what is read). */
static int
copy_between_devices(pg_state *st, pg_array *dst, pg_array *src, const pg_stream_ref *s)
{
    const pg_backend *rt = pg_rt();
    int dd = pg_array_device(dst), sd = pg_array_device(src), prev = 0, rc;
    pg_stream_ref ds = stream_on(s, dd),
                  ss = stream_on(
                      &(pg_stream_ref){src->buf->stream, src->buf->serial, NULL, -1},
                      sd);
    size_t n = pg_array_nbytes(dst);
    pg_status st_ = {PG_SUCCESS, NULL};
    int enabled = 0;
    /* the direct path between the two, where the hardware has one (enabled
     * once per pair and process); without it the driver stages the copy */
    if (!pg_peer_enabled(dd, sd) || !pg_peer_enabled(sd, dd)) {
        Py_BEGIN_ALLOW_THREADS
            st_.err = pg_peer_ensure(dd, sd, &enabled, &st_.call);
            if (st_.err == PG_SUCCESS) {
                st_.err = pg_peer_ensure(sd, dd, &enabled, &st_.call);
            }
        Py_END_ALLOW_THREADS
        if (pg_check(st, st_) < 0) {
            return -1;
        }
    }
    if (order_streams(st, dd, ds.handle, sd, ss.handle) < 0 ||
        pg_device_push(st, rt, dd, &prev) < 0) {
        return -1;
    }
    pg_array_note_stream(dst, &ds);
    st_ = PG_CALL(rt, memcpy_peer_async, (dst->data, dd, src->data, sd, n, ds.handle));
    pg_device_pop(rt, prev);
    if ((rc = pg_check(st, st_)) < 0) {
        return rc;
    }
    return order_streams(st, sd, ss.handle, dd, ds.handle);
}

/* src of another device: gathered into one dense layout on its own device,
 * copied across, scattered on dst's device where dst is strided. */
static int
copy_across(pg_state *st, pg_array *dst, pg_array *src, const pg_stream_ref *s)
{
    int fortran =
        (dst->flags & NPY_ARRAY_F_CONTIGUOUS) && !(dst->flags & NPY_ARRAY_C_CONTIGUOUS);
    pg_array *from = NULL, *to = NULL;
    int rc = -1;
    if (pg_same_dense_layout(dst->nd, dst->shape, dst->strides, dst->flags,
                             src->strides, src->flags)) {
        return copy_between_devices(st, dst, src, s);
    }
    from = pg_array_empty_on(st, pg_array_device(src), src->nd, src->shape, src->descr,
                             (dst->flags & PG_CONTIG) ? fortran : 0, s);
    if (from == NULL || copy_disjoint(st, from, src, s) < 0) {
        goto done;
    }
    if (pg_same_dense_layout(dst->nd, dst->shape, dst->strides, dst->flags,
                             from->strides, from->flags)) {
        rc = copy_between_devices(st, dst, from, s);
        goto done;
    }
    to = pg_array_empty_on(st, pg_array_device(dst), dst->nd, dst->shape, dst->descr, 0,
                           s);
    if (to != NULL && copy_between_devices(st, to, from, s) == 0) {
        rc = copy_disjoint(st, dst, to, s);
    }
done:
    Py_XDECREF(from);
    Py_XDECREF(to);
    return rc;
}

static int
copy_disjoint(pg_state *st, pg_array *dst, pg_array *src, const pg_stream_ref *s)
{
    const pg_backend *rt = pg_rt();
    int64_t shape[PG_MAXDIMS], ss[PG_MAXDIMS], ds[PG_MAXDIMS];
    int device = pg_array_device(dst), prev = 0;
    pg_stream_ref on;
    pg_status r;
    if (pg_array_device(src) != device) {
        return copy_across(st, dst, src, s);
    }
    on = stream_on(s, device);
    pg_array_note_stream(dst, &on);
    pg_array_note_stream(src, &on);
    if (pg_device_push(st, rt, device, &prev) < 0) {
        return -1;
    }
    if (pg_same_dense_layout(dst->nd, dst->shape, dst->strides, dst->flags,
                             src->strides, src->flags)) {
        r = PG_CALL(
            rt, memcpy_async,
            (dst->data, src->data, pg_array_nbytes(dst), PG_MEMCPY_D2D, on.handle));
    }
    else {
        for (int i = 0; i < dst->nd; i++) {
            shape[i] = dst->shape[i];
            ss[i] = src->strides[i];
            ds[i] = dst->strides[i];
        }
        r.err =
            rt->kernels->copy_strided((int)PyDataType_ELSIZE(dst->descr), dst->nd,
                                      shape, src->data, ss, dst->data, ds, on.handle);
        r.call = pg_kernel_names.copy_strided;
    }
    pg_device_pop(rt, prev);
    return pg_check(st, r);
}

/* Host <-> device copies (transfer.c's pg_copy_h2d or pg_copy_d2h) run with
 * the array's device current: its staging buffers, and its stream. */
typedef pg_err (*host_copy_fn)(void *dst, const void *src, size_t n, pg_stream stream,
                               int sync);

static int
host_copy(pg_state *st, host_copy_fn fn, int device, void *dst, const void *src,
          size_t n, const pg_stream_ref *s, int sync)
{
    const pg_backend *rt = pg_rt();
    pg_stream_ref on = stream_on(s, device);
    int prev = -1;
    pg_err err;
    if (pg_device_enter(st, rt, device, &prev) < 0) {
        return -1;
    }
    Py_BEGIN_ALLOW_THREADS
        err = fn(dst, src, n, on.handle, sync);
    Py_END_ALLOW_THREADS
    pg_device_leave(rt, prev);
    /* staged copies are memcpy_async calls and the syncs between them */
    return err == PG_SUCCESS ? 0 : failed(st, err, pg_call_names.memcpy_async);
}

#define h2d(st, device, dst, src, n, s, sync)                                          \
    host_copy((st), pg_copy_h2d, (device), (dst), (src), (n), (s), (sync))
#define d2h(st, device, dst, src, n, s, sync)                                          \
    host_copy((st), pg_copy_d2h, (device), (dst), (src), (n), (s), (sync))

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
            return h2d(st, pg_array_device(dst), dst->data, PyArray_DATA(src), nbytes,
                       s, sync);
        }
        tmp = (PyArrayObject *)PyArray_NewCopy(
            src, (dst->flags & NPY_ARRAY_C_CONTIGUOUS) ? NPY_CORDER : NPY_FORTRANORDER);
        if (tmp == NULL) {
            return -1;
        }
        rc = h2d(st, pg_array_device(dst), dst->data, PyArray_DATA(tmp), nbytes, s, 1);
        Py_DECREF(tmp);
        return rc;
    }
    /* A strided destination: stage through a dense device buffer. */
    tmp = (PyArrayObject *)PyArray_FromArray(src, NULL, NPY_ARRAY_C_CONTIGUOUS);
    if (tmp == NULL) {
        return -1;
    }
    staging = pg_array_empty_on(st, pg_array_device(dst), dst->nd, dst->shape,
                                dst->descr, 0, s);
    if (staging != NULL && h2d(st, pg_array_device(dst), staging->data,
                               PyArray_DATA(tmp), nbytes, s, 1) == 0) {
        rc = pg_array_copy_into(st, dst, staging, s);
    }
    Py_XDECREF(staging);
    Py_DECREF(tmp);
    return rc;
}

/* src into the host array out (same shape and dtype, writeable), on stream
 * s. Without sync, a copy into page-locked memory may still run on return.
 * fresh: out's memory is new from pg_host_map, to be faulted in ahead of the
 * copy (pg_copy_d2h_new). */
static int
copy_to_host(pg_state *st, pg_array *src, PyArrayObject *out, const pg_stream_ref *s,
             int sync, int fresh)
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
        dense = pg_array_empty_on(st, pg_array_device(src), src->nd, src->shape,
                                  src->descr, 0, s);
        if (dense == NULL || pg_array_copy_into(st, dense, src, s) < 0) {
            Py_XDECREF(dense);
            return -1;
        }
        src = dense;
    }
    if (pg_same_dense_layout(src->nd, src->shape, src->strides, src->flags,
                             PyArray_STRIDES(out), PyArray_FLAGS(out) & PG_CONTIG)) {
        rc = host_copy(st, fresh ? pg_copy_d2h_new : pg_copy_d2h, pg_array_device(src),
                       PyArray_DATA(out), src->data, nbytes, s, sync);
        goto done;
    }
    Py_INCREF(src->descr);
    tmp = (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, src->descr, src->nd, src->shape, src->strides, NULL, 0, NULL);
    if (tmp == NULL) {
        goto done;
    }
    if (d2h(st, pg_array_device(src), PyArray_DATA(tmp), src->data, nbytes, s, 1) < 0) {
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
    return copy_to_host(st, src, out, s, sync, 0);
}

/* A host ndarray from obj in the native byte order, checked for dtype. */
PyArrayObject *
pg_host_array(PyObject *obj, PyArray_Descr *dtype)
{
    PyArrayObject *arr = NULL;
    if (dtype != NULL) {
        Py_INCREF(dtype);
    }
    /* a dtype asked for converts as numpy.asarray does (unsafe casting) */
    arr = (PyArrayObject *)PyArray_FromAny(
        obj, dtype, 0, 0, dtype != NULL ? NPY_ARRAY_FORCECAST : 0, NULL);
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
    PyArrayObject *arr = pg_host_array(obj, dtype);
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
int
pg_array_assign(pg_state *st, pg_array *dst, PyObject *obj, const char *what,
                const pg_stream_ref *s, int sync)
{
    PyArrayObject *arr = NULL;
    int rc;
    if (pg_array_check_writeable(dst, what) < 0) {
        return -1;
    }
    if (obj == Py_None) { /* (NumPy would make it NaN, or refuse) */
        PyErr_Format(PyExc_TypeError,
                     "%s takes a DeviceArray or host data (a numpy.ndarray, or "
                     "anything numpy.asarray takes), not None",
                     what);
        return -1;
    }
    if (pg_array_check(st, obj)) {
        pg_array *src = ARR(obj);
        if (pg_check_same_shape(what, NULL, dst->nd, dst->shape, NULL, src->nd,
                                src->shape) < 0 ||
            pg_check_same_dtype(what, dst->descr, src->descr) < 0) {
            return -1;
        }
        return pg_array_copy_into(st, dst, src, s);
    }
    if (PyArray_Check(obj)) {
        if (pg_check_same_dtype(what, dst->descr, PyArray_DESCR((PyArrayObject *)obj)) <
            0) {
            return -1;
        }
        arr = pg_host_array(obj, NULL);
    }
    else {
        arr = pg_host_array(obj, dst->descr); /* lists, scalars: NumPy converts */
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
    rc = pg_check_same_shape(what, NULL, dst->nd, dst->shape, NULL, PyArray_NDIM(arr),
                             PyArray_DIMS(arr));
    if (rc == 0) {
        rc = copy_from_host(st, dst, arr, s, sync || (PyObject *)arr != obj);
    }
    Py_DECREF(arr);
    return rc;
}

PyObject *
pg_array_copy(pg_state *st, pg_array *a, int fortran, const pg_stream_ref *s)
{
    return pg_array_copy_on(st, a, -1, fortran, s);
}

PyObject *
pg_array_copy_on(pg_state *st, pg_array *a, int device, int fortran,
                 const pg_stream_ref *s)
{
    pg_stream_ref current;
    pg_array *c;
    if (s == NULL) {
        (void)pg_resolve_stream(st, NULL, &current);
        s = &current;
    }
    c = pg_array_empty_on(st, device < 0 ? pg_array_device(a) : device, a->nd, a->shape,
                          a->descr, fortran, s);
    if (c != NULL && pg_array_copy_into(st, c, a, s) < 0) {
        Py_CLEAR(c);
    }
    return (PyObject *)c;
}

/* A new host array with a's contents, in a's order (C for a strided a). A
 * large one is in memory pygpu maps for it (hostcopy.c), owned by a Buffer
 * of kind PG_BUFFER_HOST, the array's base, and its pages are faulted in by
 * worker threads while the copy fills it; a small one is NumPy's. */
PyObject *
pg_array_to_new_host(pg_state *st, pg_array *a, const pg_stream_ref *s)
{
    PyArrayObject *out = NULL;
    pg_buffer *mem;
    int fortran =
        (a->flags & NPY_ARRAY_F_CONTIGUOUS) && !(a->flags & NPY_ARRAY_C_CONTIGUOUS);
    size_t nbytes = (size_t)pg_array_size(a) * PyDataType_ELSIZE(a->descr);
    int fresh = nbytes > 0 && nbytes >= pg_host_map_min();
    if (fresh) {
        mem = pg_buffer_host(st, nbytes);
        if (mem == NULL) {
            return NULL;
        }
        Py_INCREF(a->descr);
        out = (PyArrayObject *)PyArray_NewFromDescr(
            &PyArray_Type, a->descr, a->nd, a->shape, NULL, mem->ptr,
            NPY_ARRAY_WRITEABLE |
                (fortran ? NPY_ARRAY_F_CONTIGUOUS : NPY_ARRAY_C_CONTIGUOUS),
            NULL);
        if (out == NULL) {
            Py_DECREF(mem);
            return NULL;
        }
        /* the array owns the buffer now, or it was released */
        if (PyArray_SetBaseObject(out, (PyObject *)mem) < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    else {
        Py_INCREF(a->descr);
        out = (PyArrayObject *)PyArray_Empty(a->nd, a->shape, a->descr, fortran);
        if (out == NULL) {
            return NULL;
        }
    }
    if (copy_to_host(st, a, out, s, 1, fresh) < 0) { /* a new, pageable array */
        Py_DECREF(out);
        return NULL;
    }
    return (PyObject *)out;
}

/* ---- casts ------------------------------------------------------------------ */

int
pg_array_cast_into(pg_state *st, pg_array *dst, pg_array *src, const pg_stream_ref *s)
{
    pg_operand a, unused;
    pg_array *tmp = NULL;
    int rc;
    if (PyArray_EquivTypes(dst->descr, src->descr)) {
        return pg_array_copy_into(st, dst, src, s);
    }
    if (pg_array_overlap_unsafe(dst, src) ||
        pg_array_device(src) != pg_array_device(dst)) {
        /* read all of src first (onto dst's device: the cast runs there) */
        tmp = (pg_array *)pg_array_copy_on(st, src, pg_array_device(dst), 0, s);
        if (tmp == NULL) {
            return -1;
        }
        src = tmp;
    }
    memset(&unused, 0, sizeof(unused));
    unused.type = PG_T_BOOL;
    if (pg_operand_of_array(&a, src, dst->nd, dst->shape) < 0) {
        Py_XDECREF(tmp);
        return pg_check_same_shape("astype", NULL, dst->nd, dst->shape, NULL, src->nd,
                                   src->shape);
    }
    pg_array_note_stream(src, s);
    rc = pg_elementwise(st, PG_OP_CAST, a.type, dst, &a, &unused, s);
    Py_XDECREF(tmp);
    return rc;
}

/* ---- setitem: NumPy's assignment rules --------------------------------------- */

/* src seen with dst's shape, as NumPy broadcasts: a view with zero strides
 * on the broadcast axes; ValueError in NumPy's words if it cannot be. */
static pg_array *
broadcast_to(pg_state *st, pg_array *src, int nd, const npy_intp *shape)
{
    npy_intp strides[PG_MAXDIMS];
    /* NumPy drops src's leading axes of length 1 beyond dst's */
    const int skip = src->nd > nd ? src->nd - nd : 0, snd = src->nd - skip;
    const npy_intp *sshape = src->shape + skip, *sstrides = src->strides + skip;
    int ok = 1;
    for (int k = 0; k < skip; k++) {
        ok &= src->shape[k] == 1;
    }
    for (int i = 0; ok && i < nd; i++) {
        int j = i - (nd - snd); /* src's axis aligned from the right */
        if (j < 0) {
            strides[i] = 0;
        }
        else if (sshape[j] == shape[i]) {
            strides[i] = sstrides[j];
        }
        else if (sshape[j] == 1) {
            strides[i] = 0;
        }
        else {
            ok = 0;
        }
    }
    if (!ok) {
        PyObject *from = PyArray_IntTupleFromIntp(src->nd, src->shape);
        PyObject *to = PyArray_IntTupleFromIntp(nd, shape);
        if (from != NULL && to != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "could not broadcast input array from shape %R into shape %R",
                         from, to);
        }
        Py_XDECREF(from);
        Py_XDECREF(to);
        return NULL;
    }
    return pg_array_over(st, src->buf, src->data, nd, shape, strides, src->descr,
                         (PyObject *)src);
}

/* The scalar `value` into every element of dst, converted as NumPy converts
 * a scalar assigned to an array of dst's dtype (OverflowError included). */
static int
fill_scalar(pg_state *st, pg_array *dst, PyObject *value, const pg_stream_ref *s)
{
    PyArrayObject *v = NULL;
    pg_array *one = NULL, *wide = NULL;
    PyObject *empty = NULL;
    int rc = -1;
    Py_INCREF(dst->descr);
    v = (PyArrayObject *)PyArray_Empty(0, NULL, dst->descr, 0);
    empty = PyTuple_New(0);
    if (v == NULL || empty == NULL ||
        PyObject_SetItem((PyObject *)v, empty, value) < 0) {
        goto done;
    }
    /* one element on the device, seen with dst's shape */
    one = pg_array_empty_on(st, pg_array_device(dst), 0, NULL, dst->descr, 0, s);
    if (one == NULL || copy_from_host(st, one, v, s, 1) < 0) {
        goto done;
    }
    wide = broadcast_to(st, one, dst->nd, dst->shape);
    if (wide != NULL) {
        rc = copy_disjoint(st, dst, wide, s);
    }
done:
    Py_XDECREF(wide);
    Py_XDECREF(one);
    Py_XDECREF(empty);
    Py_XDECREF(v);
    return rc;
}

int
pg_array_setitem(pg_state *st, pg_array *dst, PyObject *value, const pg_stream_ref *s)
{
    PyArrayObject *host = NULL;
    PyObject *ellipsis_key = Py_Ellipsis;
    int rc = -1;
    if (pg_array_check_writeable(dst, "setitem") < 0) {
        return -1;
    }
    if (pg_array_check(st, value)) {
        pg_array *src = ARR(value);
        pg_array *wide = broadcast_to(st, src, dst->nd, dst->shape);
        if (wide == NULL) {
            return -1;
        }
        /* another dtype: NumPy casts (unsafe casting, as setitem does) */
        rc = pg_array_cast_into(st, dst, wide, s);
        Py_DECREF(wide);
        return rc;
    }
    if (PyArray_IsAnyScalar(value) ||
        (PyArray_Check(value) && PyArray_NDIM((PyArrayObject *)value) == 0)) {
        rc = fill_scalar(st, dst, value, s);
        goto done;
    }
    if (PyArray_Check(value) &&
        PyArray_EquivTypes(PyArray_DESCR((PyArrayObject *)value), dst->descr) &&
        PyArray_ISNBO(PyArray_DESCR((PyArrayObject *)value)->byteorder) &&
        pg_same_shape(dst->nd, dst->shape, PyArray_NDIM((PyArrayObject *)value),
                      PyArray_DIMS((PyArrayObject *)value))) {
        rc = copy_from_host(st, dst, (PyArrayObject *)value, s, 1);
        goto done;
    }
    /* Anything else (lists, other dtypes, broadcasting): NumPy assigns it
     * into a host array of dst's shape and dtype, and that goes over. */
    Py_INCREF(dst->descr);
    host = (PyArrayObject *)PyArray_Empty(dst->nd, dst->shape, dst->descr, 0);
    if (host != NULL && PyObject_SetItem((PyObject *)host, ellipsis_key, value) == 0) {
        rc = copy_from_host(st, dst, host, s, 1);
    }
done:
    Py_XDECREF(host);
    return rc;
}
