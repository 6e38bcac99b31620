/* The high-level calls, which choose the launch configuration themselves:
 * pygpu.add, add_one and matmul, and the operators + and @ of DeviceArray.
 * They make dense operands where needed and go through launch.c's checks and
 * launchers (pg_kernel_run), as kernels.<name>[grid, block](...) does. */
#include <string.h>

#include "pygpu.h"

static pg_dim3
flat_config(npy_intp n)
{
    /* 256 threads a block, 16 elements a thread: each thread's loads are all
     * in flight at once, and there are blocks enough to fill any device. */
    long long blocks = ((long long)n + 4095) / 4096;
    pg_dim3 grid = {1, 1, 1};
    if (blocks > 0x7fffffffLL) {
        blocks = 0x7fffffffLL; /* the kernels' grid-stride loops do the rest */
    }
    grid.x = (unsigned int)(blocks < 1 ? 1 : blocks);
    return grid;
}

static const pg_dim3 flat_block = {256, 1, 1};

static pg_dim3
tile_grid(npy_intp rows, npy_intp cols, unsigned int tile)
{
    long long gx = ((long long)cols + tile - 1) / tile;
    long long gy = ((long long)rows + tile - 1) / tile;
    pg_dim3 g;
    g.x = (unsigned int)(gx < 1 ? 1 : gx > 65535 ? 65535 : gx);
    g.y = (unsigned int)(gy < 1 ? 1 : gy > 65535 ? 65535 : gy);
    g.z = 1;
    return g;
}

/* A C-contiguous version of a DeviceArray (a new reference), copying if needed. */
static PyObject *
c_contiguous(pg_state *st, PyObject *o, const pg_stream_ref *s)
{
    if (!pg_array_check(st, o) || (((pg_array *)o)->flags & NPY_ARRAY_C_CONTIGUOUS)) {
        return Py_NewRef(o);
    }
    return pg_array_copy(st, (pg_array *)o, 0, s);
}

static PyObject *
new_like(pg_state *st, pg_array *a, const pg_stream_ref *s)
{
    return (PyObject *)pg_array_empty(st, a->nd, a->shape, a->descr, 0, s);
}

static PyObject *
add_impl(pg_state *st, PyObject *a, PyObject *b, PyObject *out, PyObject *stream)
{
    PyObject *ca = NULL, *cb = NULL, *res = NULL;
    pg_stream_ref cur;
    int device = 0;
    if (pg_resolve_stream(st, stream, &cur) < 0) {
        return NULL;
    }
    if (pg_get_rt(st) == NULL || pg_current_device(st, pg_rt(), &device) < 0) {
        return NULL;
    }
    if (!pg_array_check(st, a)) {
        return PyErr_Format(PyExc_TypeError,
                            "add: 'a' must be a pygpu.DeviceArray, not %.100s",
                            Py_TYPE(a)->tp_name);
    }
    if ((ca = c_contiguous(st, a, &cur)) == NULL ||
        (cb = c_contiguous(st, b, &cur)) == NULL) {
        goto done;
    }
    if (out == NULL || out == Py_None) {
        res = new_like(st, (pg_array *)ca, &cur);
    }
    else {
        res = Py_NewRef(out);
    }
    if (res == NULL) {
        goto done;
    }
    PyObject *args[3] = {ca, cb, res};
    if (pg_kernel_run(st, PG_K_add, "add", args,
                      flat_config(pg_array_size((pg_array *)ca)), flat_block, device,
                      &cur) < 0) {
        Py_CLEAR(res);
    }
done:
    Py_XDECREF(ca);
    Py_XDECREF(cb);
    return res;
}

/* The kernel method="auto" picks for C (m x n) = A (m x k) @ B (k x n). The
 * tiled kernel is the fastest where C has whole 128 x 128 tiles to give its
 * blocks (the benchmarks' 4096^3); where m or n is under 128, most of each
 * tile is padding and a block serializes the whole k loop for a few
 * elements (1 x 2^28 @ 2^28 x 1 would be one block of 256 threads walking
 * 2^25 slices), so one thread per element of C (naive) fits the shape
 * better. The choice goes by shape alone, the same on every backend. */
static pg_kernel_id
auto_method(npy_intp m, npy_intp n, npy_intp k)
{
    (void)k;
    return m < 128 || n < 128 ? PG_K_matmul_naive : PG_K_matmul_tiled;
}

static PyObject *
matmul_impl(pg_state *st, PyObject *a, PyObject *b, const char *method, PyObject *out,
            PyObject *stream)
{
    PyObject *ca = NULL, *cb = NULL, *res = NULL;
    pg_stream_ref cur;
    pg_array *A, *B;
    int device = 0;
    pg_kernel_id id;
    npy_intp shape[2];
    if (pg_resolve_stream(st, stream, &cur) < 0) {
        return NULL;
    }
    if (pg_get_rt(st) == NULL || pg_current_device(st, pg_rt(), &device) < 0) {
        return NULL;
    }
    if (strcmp(method, "naive") == 0) {
        id = PG_K_matmul_naive;
    }
    else if (strcmp(method, "shared") == 0) {
        id = PG_K_matmul_shared;
    }
    else if (strcmp(method, "tiled") == 0) {
        id = PG_K_matmul_tiled;
    }
    else if (strcmp(method, "auto") == 0) {
        id = PG_K_COUNT; /* chosen by shape below */
    }
    else {
        return PyErr_Format(PyExc_ValueError,
                            "matmul: method must be 'naive', 'shared', 'tiled' or "
                            "'auto', not '%s'",
                            method);
    }
    if (!pg_array_check(st, a) || !pg_array_check(st, b)) {
        return PyErr_Format(
            PyExc_TypeError,
            "matmul takes two pygpu.DeviceArrays, not %.100s and %.100s",
            Py_TYPE(a)->tp_name, Py_TYPE(b)->tp_name);
    }
    A = (pg_array *)a;
    B = (pg_array *)b;
    if (A->nd != 2 || B->nd != 2) {
        return PyErr_Format(PyExc_ValueError,
                            "matmul needs 2-D arrays; got %d-D and %d-D", A->nd, B->nd);
    }
    if (id == PG_K_COUNT) {
        id = auto_method(A->shape[0], B->shape[1], A->shape[1]);
    }
    if ((ca = c_contiguous(st, a, &cur)) == NULL ||
        (cb = c_contiguous(st, b, &cur)) == NULL) {
        goto done;
    }
    shape[0] = A->shape[0];
    shape[1] = B->shape[1];
    if (out == NULL || out == Py_None) {
        int dtype = -1;
        if (pg_kernel_dtype_arg("matmul", "a", A, 1, &dtype) < 0) {
            goto done;
        }
        res = (PyObject *)pg_array_empty(st, 2, shape, A->descr, 0, &cur);
    }
    else {
        res = Py_NewRef(out);
    }
    if (res == NULL) {
        goto done;
    }
    {
        unsigned int tile = id == PG_K_matmul_tiled    ? 128
                            : id == PG_K_matmul_shared ? 32
                                                       : 16;
        pg_dim3 block = {16, 16, 1}, tiled_block = {256, 1, 1};
        PyObject *args[3] = {ca, cb, res};
        if (pg_kernel_run(st, id, "matmul", args, tile_grid(shape[0], shape[1], tile),
                          id == PG_K_matmul_tiled ? tiled_block : block, device,
                          &cur) < 0) {
            Py_CLEAR(res);
        }
    }
done:
    Py_XDECREF(ca);
    Py_XDECREF(cb);
    return res;
}

PyObject *
pg_array_add(PyObject *a, PyObject *b)
{
    pg_state *st;
    if (!Py_IS_TYPE(a, Py_TYPE(b)) && pg_is_scalar(a)) { /* 2 + x */
        PyObject *t = a;
        a = b;
        b = t;
    }
    st = pg_state_of_type(Py_TYPE(a));
    if (st == NULL) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (!pg_array_check(st, b) && !pg_is_scalar(b)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return add_impl(st, a, b, NULL, NULL);
}

/* The one way to write a result into an array the kernels cannot write
 * directly (a strided view): compute into a dense temporary, then copy it
 * in. Returns a new reference to target, or NULL. */
static PyObject *
write_back(pg_state *st, PyObject *target, PyObject *result, const pg_stream_ref *s)
{
    int rc;
    if (result == NULL) {
        return NULL;
    }
    rc = pg_array_copy_into(st, (pg_array *)target, (pg_array *)result, s);
    Py_DECREF(result);
    return rc < 0 ? NULL : Py_NewRef(target);
}

PyObject *
pg_array_iadd(PyObject *a, PyObject *b)
{
    pg_state *st = pg_state_of_type(Py_TYPE(a));
    pg_stream_ref cur;
    if (st == NULL) {
        return NULL;
    }
    if (!pg_array_check(st, b) && !pg_is_scalar(b)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (((pg_array *)a)->flags & NPY_ARRAY_C_CONTIGUOUS) {
        return add_impl(st, a, b, a, NULL);
    }
    (void)pg_resolve_stream(st, NULL, &cur);
    return write_back(st, a, add_impl(st, a, b, NULL, NULL), &cur);
}

PyObject *
pg_array_matmul(PyObject *a, PyObject *b)
{
    pg_state *st = pg_state_of_type(Py_TYPE(a));
    if (st == NULL) {
        PyErr_Clear();
        st = pg_state_of_type(Py_TYPE(b));
        if (st == NULL) {
            PyErr_Clear();
            Py_RETURN_NOTIMPLEMENTED;
        }
    }
    if (!pg_array_check(st, a) || !pg_array_check(st, b)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return matmul_impl(st, a, b, "auto", NULL, NULL);
}

static PyObject *
mod_add(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {"add",
                                     2,
                                     4,
                                     {{"a", pg_conv_object},
                                      {"b", pg_conv_object},
                                      {"out", pg_conv_object_or_none},
                                      {"stream", pg_conv_object_or_none}}};
    pg_state *st = pg_state_of_module(m);
    PyObject *a = NULL, *b = NULL, *out = NULL, *stream = NULL;
    if (pg_parse(st, &sig, args, nargs, kwnames, &a, &b, &out, &stream) < 0) {
        return NULL;
    }
    return add_impl(st, a, b, out, stream);
}

static PyObject *
mod_add_one(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {
        "add_one", 1, 2, {{"A", pg_conv_object}, {"stream", pg_conv_stream}}};
    pg_state *st = pg_state_of_module(m);
    PyObject *A = NULL, *dense = NULL;
    pg_stream_arg s;
    int device = 0;
    if (pg_parse(st, &sig, args, nargs, kwnames, &A, &s) < 0 || pg_get_rt(st) == NULL ||
        pg_current_device(st, pg_rt(), &device) < 0) {
        return NULL;
    }
    if (!pg_array_check(st, A)) {
        return PyErr_Format(PyExc_TypeError,
                            "add_one: 'A' must be a pygpu.DeviceArray, not %.100s",
                            Py_TYPE(A)->tp_name);
    }
    if (pg_array_check_writeable((pg_array *)A, "add_one") < 0) {
        return NULL;
    }
    /* a strided view: work on a dense copy, then write it back */
    dense = (((pg_array *)A)->flags & PG_CONTIG)
                ? Py_NewRef(A)
                : pg_array_copy(st, (pg_array *)A, 0, &s.ref);
    if (dense == NULL || pg_kernel_run(st, PG_K_add_one, "add_one", &dense,
                                       flat_config(pg_array_size((pg_array *)dense)),
                                       flat_block, device, &s.ref) < 0) {
        Py_XDECREF(dense);
        return NULL;
    }
    return write_back(st, A, dense, &s.ref);
}

static PyObject *
mod_matmul(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {"matmul",
                                     2,
                                     5,
                                     {{"a", pg_conv_object},
                                      {"b", pg_conv_object},
                                      {"method", pg_conv_object_or_none},
                                      {"out", pg_conv_object_or_none},
                                      {"stream", pg_conv_object_or_none}}};
    pg_state *st = pg_state_of_module(m);
    PyObject *a = NULL, *b = NULL, *method_obj = NULL, *out = NULL, *stream = NULL;
    const char *method = "auto";
    if (pg_parse(st, &sig, args, nargs, kwnames, &a, &b, &method_obj, &out, &stream) <
        0) {
        return NULL;
    }
    if (method_obj != NULL) {
        if (!PyUnicode_Check(method_obj)) {
            return PyErr_Format(PyExc_TypeError,
                                "matmul: method must be a str, not %.100s",
                                Py_TYPE(method_obj)->tp_name);
        }
        method = PyUnicode_AsUTF8(method_obj);
        if (method == NULL) {
            return NULL;
        }
    }
    return matmul_impl(st, a, b, method, out, stream);
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

PyMethodDef pg_ops_functions[] = {
    {"add", FASTKW(mod_add),
     "add(a, b, out=None, stream=None)\n--\n\n"
     "a + b elementwise on the device (b a DeviceArray or a scalar); into out "
     "if given. Returns the result."},
    {"add_one", FASTKW(mod_add_one),
     "add_one(A, stream=None)\n--\n\nA += 1 in place on the device. Returns A."},
    {"matmul", FASTKW(mod_matmul),
     "matmul(a, b, method='auto', out=None, stream=None)\n--\n\n"
     "a @ b for 2-D float32 or float64 device arrays; method is 'naive', "
     "'shared', 'tiled' or 'auto' (by shape: 'tiled', the fastest, where C has "
     "whole 128 x 128 tiles; 'naive' where m or n is under 128)."},
    {NULL},
};
