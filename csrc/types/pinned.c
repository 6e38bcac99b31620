/* Host memory: cuda.pinned_array() and cuda.is_pinned(), and the settings
 * and counts of the memory of large new host arrays (hostcopy.c), for tests
 * and tuning. A pinned array's memory is owned by a Buffer of kind
 * PG_BUFFER_PINNED, the numpy array's base. */
#include "pygpu.h"

static PyObject *
mod_pinned_array(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                 PyObject *kwnames)
{
    static const pg_signature sig = {
        "pinned_array",
        1,
        3,
        {{"shape", pg_conv_shape}, {"dtype", pg_conv_dtype}, {"order", pg_conv_order}}};
    pg_state *st = pg_state_of_module(m);
    PyArray_Descr *descr = NULL;
    PyObject *res = NULL;
    pg_buffer *mem = NULL;
    npy_intp n;
    pg_shape shape;
    int fortran = 0;
    if (pg_parse(st, &sig, args, nargs, kwnames, &shape, &descr, &fortran) < 0 ||
        pg_get_rt(st) == NULL) {
        goto done;
    }
    n = PyDataType_ELSIZE(descr);
    for (int i = 0; i < shape.nd; i++) {
        if (shape.dims[i] != 0 && n > NPY_MAX_INTP / shape.dims[i]) {
            PyErr_SetString(PyExc_ValueError, "pinned_array: shape is too big");
            goto done;
        }
        n *= shape.dims[i];
    }
    mem = pg_buffer_pinned(st, (size_t)n);
    if (mem == NULL) {
        goto done;
    }
    Py_INCREF(descr);
    res =
        PyArray_NewFromDescr(&PyArray_Type, descr, shape.nd, shape.dims, NULL, mem->ptr,
                             NPY_ARRAY_WRITEABLE | (fortran ? NPY_ARRAY_F_CONTIGUOUS
                                                            : NPY_ARRAY_C_CONTIGUOUS),
                             NULL);
    if (res == NULL) {
        goto done;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)res, (PyObject *)mem) < 0) {
        Py_CLEAR(res);
    }
    mem = NULL; /* the array owns it now, or it was released */
done:
    Py_XDECREF(mem);
    Py_XDECREF(descr);
    return res;
}

static PyObject *
mod_is_pinned(PyObject *Py_UNUSED(m), PyObject *arr)
{
    if (!PyArray_Check(arr)) {
        return PyErr_Format(PyExc_TypeError,
                            "is_pinned() takes a numpy.ndarray, not %.100s",
                            Py_TYPE(arr)->tp_name);
    }
    const pg_backend *rt = pg_rt_peek();
    return PyBool_FromLong(rt != NULL && pg_rt() != NULL &&
                           rt->is_pinned(PyArray_DATA((PyArrayObject *)arr)));
}

/* *out: a whole number >= lo from obj (unchanged when obj is NULL); 0 or -1. */
static int
setting(PyObject *obj, const char *name, Py_ssize_t lo, Py_ssize_t *out)
{
    Py_ssize_t v;
    if (obj == NULL) {
        return 0;
    }
    v = PyNumber_AsSsize_t(obj, PyExc_OverflowError);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (v < lo) {
        PyErr_Format(PyExc_ValueError, "%s must be >= %zd, not %zd", name, lo, v);
        return -1;
    }
    *out = v;
    return 0;
}

static PyObject *
mod_host_arrays(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {"_host_arrays",
                                     0,
                                     6,
                                     {{"min_bytes", pg_conv_object_or_none},
                                      {"copy_threads", pg_conv_object_or_none},
                                      {"stage_bytes", pg_conv_object_or_none},
                                      {"spin_ns", pg_conv_object_or_none},
                                      {"stage_always", pg_conv_object_or_none},
                                      {"fail_piece", pg_conv_object_or_none}}};
    pg_state *st = pg_state_of_module(m);
    PyObject *min_bytes = NULL, *copiers = NULL, *stage = NULL, *spin = NULL,
             *always = NULL, *fail = NULL;
    Py_ssize_t mb = 0, nc = 0, ns = 0, nspin = 0, nfail = 0;
    int on = 0;
    size_t count, bytes;
    if (pg_parse(st, &sig, args, nargs, kwnames, &min_bytes, &copiers, &stage, &spin,
                 &always, &fail) < 0 ||
        setting(min_bytes, "min_bytes", 1, &mb) < 0 ||
        setting(copiers, "copy_threads", -1, &nc) < 0 ||
        setting(stage, "stage_bytes", 1, &ns) < 0 ||
        setting(spin, "spin_ns", -1, &nspin) < 0 ||
        setting(fail, "fail_piece", -1, &nfail) < 0) {
        return NULL;
    }
    if (always != NULL && (on = PyObject_IsTrue(always)) < 0) {
        return NULL;
    }
    /* every value checked before any is set: an error changes nothing */
    if (stage != NULL && (size_t)ns > PG_STAGE_MAX) {
        return PyErr_Format(PyExc_ValueError, "stage_bytes must be <= %zd, not %zd",
                            (Py_ssize_t)PG_STAGE_MAX, ns);
    }
    if (spin != NULL && nspin > PG_HOST_SPIN_MAX) {
        return PyErr_Format(PyExc_ValueError, "spin_ns must be <= %ld, not %zd",
                            PG_HOST_SPIN_MAX, nspin);
    }
    if (spin != NULL) {
        pg_host_set_spin_ns((long)nspin);
    }
    if (copiers != NULL) {
        pg_host_set_copy_threads(nc > 1024 ? 1024 : (int)nc);
    }
    if (stage != NULL) {
        pg_set_stage_bytes((size_t)ns);
    }
    if (min_bytes != NULL) {
        pg_host_set_map_min((size_t)mb);
    }
    if (always != NULL) {
        pg_set_stage_always(on);
    }
    if (fail != NULL) {
        pg_set_stage_fail_piece((long)nfail);
    }
    pg_host_mapped(&count, &bytes);
    return Py_BuildValue(
        "{snsnsnsnsisnslsO}", "mapped", (Py_ssize_t)count, "mapped_bytes",
        (Py_ssize_t)bytes, "min_bytes", (Py_ssize_t)pg_host_map_min(), "huge_page",
        (Py_ssize_t)pg_host_huge_page_size(), "copy_threads", pg_host_copy_threads(),
        "stage_bytes", (Py_ssize_t)pg_stage_bytes(), "spin_ns", pg_host_spin_ns(),
        "stage_always", pg_stage_always() ? Py_True : Py_False);
}

PyMethodDef pg_pinned_functions[] = {
    {"pinned_array", (PyCFunction)(void (*)(void))mod_pinned_array,
     METH_FASTCALL | METH_KEYWORDS,
     "pinned_array(shape, dtype=float64, order='C')\n--\n\n"
     "An uninitialized numpy.ndarray in page-locked host memory, freed with the array. "
     "Copies to and from it can run asynchronously on a stream."},
    {"is_pinned", mod_is_pinned, METH_O,
     "is_pinned(arr)\n--\n\nTrue if the array's memory is page-locked."},
    {"_host_arrays", (PyCFunction)(void (*)(void))mod_host_arrays,
     METH_FASTCALL | METH_KEYWORDS,
     "_host_arrays(min_bytes=None, copy_threads=None, stage_bytes=None, "
     "spin_ns=None, stage_always=None, fail_piece=None)\n--\n\n"
     "For tests and tuning: the memory pygpu maps for large new host arrays "
     "(copy_to_host() without out=), and the staged copies. Sets what is given "
     "(min_bytes: arrays of at least this many bytes take it; copy_threads: "
     "threads of a staged copy (a new array's filling included) and of the "
     "simulator's large copies, the caller's included, -1 for the defaults; "
     "stage_bytes: the piece of a staged copy; spin_ns: how long the copy "
     "threads spin for the next copy before they sleep, -1 for the default; "
     "stage_always: stage large pageable copies "
     "also where the backend does not gain from it, as on the simulator; "
     "fail_piece: the next staged copy fails where it would issue this piece, "
     "-1 for none) and "
     "returns the settings and the live mappings (mapped, mapped_bytes)."},
    {NULL},
};
