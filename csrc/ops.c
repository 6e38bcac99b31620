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
    else if (strcmp(method, "tiled") == 0 || strcmp(method, "auto") == 0) {
        id = PG_K_matmul_tiled;
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

PyObject *
pg_array_iadd(PyObject *a, PyObject *b)
{
    pg_state *st = pg_state_of_type(Py_TYPE(a));
    pg_array *A = (pg_array *)a;
    PyObject *res;
    if (st == NULL) {
        return NULL;
    }
    if (!pg_array_check(st, b) && !pg_is_scalar(b)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (A->flags & NPY_ARRAY_C_CONTIGUOUS) {
        res = add_impl(st, a, b, a, NULL);
    }
    else { /* a strided view: add into a dense temporary, then copy back */
        res = add_impl(st, a, b, NULL, NULL);
        pg_stream_ref cur;
        (void)pg_resolve_stream(st, NULL, &cur);
        if (res != NULL && pg_array_copy_into(st, A, (pg_array *)res, &cur) < 0) {
            Py_CLEAR(res);
        }
        if (res != NULL) {
            Py_SETREF(res, Py_NewRef(a));
        }
    }
    return res;
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
    static const char *const names[] = {"a", "b", "out", "stream"};
    PyObject *argv[4];
    if (pg_parse_args("add", args, nargs, kwnames, names, 4, 2, argv) < 0) {
        return NULL;
    }
    return add_impl(pg_state_of_module(m), argv[0], argv[1], argv[2], argv[3]);
}

static PyObject *
mod_add_one(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "stream"};
    pg_state *st = pg_state_of_module(m);
    PyObject *argv[2];
    pg_stream_ref cur;
    int device = 0;
    if (pg_parse_args("add_one", args, nargs, kwnames, names, 2, 1, argv) < 0 ||
        pg_resolve_stream(st, argv[1], &cur) < 0 || pg_get_rt(st) == NULL ||
        pg_current_device(st, pg_rt(), &device) < 0) {
        return NULL;
    }
    if (!pg_array_check(st, argv[0])) {
        return PyErr_Format(PyExc_TypeError,
                            "add_one: 'A' must be a pygpu.DeviceArray, not %.100s",
                            Py_TYPE(argv[0])->tp_name);
    }
    if (!(((pg_array *)argv[0])->flags &
          (NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS))) {
        /* a strided view: work on a dense copy and write it back */
        PyObject *tmp = pg_array_copy(st, (pg_array *)argv[0], 0, &cur);
        int rc;
        if (tmp == NULL) {
            return NULL;
        }
        rc = pg_kernel_run(st, PG_K_add_one, "add_one", &tmp,
                           flat_config(pg_array_size((pg_array *)tmp)), flat_block,
                           device, &cur);
        if (rc == 0) {
            rc = pg_array_copy_into(st, (pg_array *)argv[0], (pg_array *)tmp, &cur);
        }
        Py_DECREF(tmp);
        if (rc < 0) {
            return NULL;
        }
        return Py_NewRef(argv[0]);
    }
    if (pg_kernel_run(st, PG_K_add_one, "add_one", &argv[0],
                      flat_config(pg_array_size((pg_array *)argv[0])), flat_block,
                      device, &cur) < 0) {
        return NULL;
    }
    return Py_NewRef(argv[0]);
}

static PyObject *
mod_matmul(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"a", "b", "method", "out", "stream"};
    PyObject *argv[5];
    const char *method = "auto";
    if (pg_parse_args("matmul", args, nargs, kwnames, names, 5, 2, argv) < 0) {
        return NULL;
    }
    if (argv[2] != NULL && argv[2] != Py_None) {
        if (!PyUnicode_Check(argv[2])) {
            return PyErr_Format(PyExc_TypeError,
                                "matmul: method must be a str, not %.100s",
                                Py_TYPE(argv[2])->tp_name);
        }
        method = PyUnicode_AsUTF8(argv[2]);
        if (method == NULL) {
            return NULL;
        }
    }
    return matmul_impl(pg_state_of_module(m), argv[0], argv[1], method, argv[3],
                       argv[4]);
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
     "'shared', 'tiled' or 'auto' (the same as 'tiled', the fastest)."},
    {NULL},
};
