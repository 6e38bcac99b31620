/* Page-locked host memory: cuda.pinned_array() and cuda.is_pinned(). The
 * memory's owner is a PinnedMemory object, the base of the numpy array. */
#include <string.h>

#include "pygpu.h"

typedef struct {
    PyObject_HEAD
    void *ptr;
    size_t size;
    PyObject *weakreflist;
} pg_pinned;

static void
Pinned_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    pg_pinned *p = (pg_pinned *)self;
    if (p->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    if (p->ptr != NULL && !pg_is_finalizing() && !pg_context_unusable()) {
        const pg_backend *rt = pg_rt();
        void *ptr = p->ptr;
        pg_status s;
        Py_BEGIN_ALLOW_THREADS
            s = PG_CALL(rt, host_free, (ptr));
        Py_END_ALLOW_THREADS
        pg_report_failed_free(tp, s);
    }
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMemberDef Pinned_members[] = {
    {"__weaklistoffset__", Py_T_PYSSIZET, offsetof(pg_pinned, weakreflist), Py_READONLY,
     NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot Pinned_slots[] = {
    {Py_tp_dealloc, Pinned_dealloc},
    {Py_tp_members, Pinned_members},
    {Py_tp_doc, "Page-locked host memory behind an array from cuda.pinned_array()."},
    {0, NULL},
};

PyType_Spec pg_pinned_spec = {
    .name = "pygpu.PinnedMemory",
    .basicsize = sizeof(pg_pinned),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = Pinned_slots,
};

static PyObject *
mod_pinned_array(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                 PyObject *kwnames)
{
    static const char *const names[] = {"shape", "dtype", "order"};
    pg_state *st = pg_state_of_module(m);
    const pg_backend *rt;
    PyObject *argv[3], *res = NULL;
    PyArray_Descr *descr = NULL;
    npy_intp shape[PG_MAXDIMS], n;
    pg_pinned *mem = NULL;
    int nd, fortran = 0;
    pg_status s;
    if (pg_parse_args("pinned_array", args, nargs, kwnames, names, 3, 1, argv) < 0 ||
        (nd = pg_parse_shape(argv[0], shape)) < 0) {
        return NULL;
    }
    if (argv[2] != NULL && argv[2] != Py_None) {
        const char *o = PyUnicode_Check(argv[2]) ? PyUnicode_AsUTF8(argv[2]) : NULL;
        if (o == NULL || (strcmp(o, "C") != 0 && strcmp(o, "c") != 0 &&
                          strcmp(o, "F") != 0 && strcmp(o, "f") != 0)) {
            PyErr_Clear();
            return PyErr_Format(PyExc_ValueError, "order must be 'C' or 'F', not %R",
                                argv[2]);
        }
        fortran = o[0] == 'F' || o[0] == 'f';
    }
    if (argv[1] == NULL || argv[1] == Py_None) {
        descr = PyArray_DescrFromType(NPY_DOUBLE);
    }
    else if (!PyArray_DescrConverter(argv[1], &descr)) {
        return NULL;
    }
    if (pg_check_dtype(descr) < 0 || (rt = pg_get_rt(st)) == NULL) {
        goto done;
    }
    n = PyDataType_ELSIZE(descr);
    for (int i = 0; i < nd; i++) {
        if (shape[i] != 0 && n > NPY_MAX_INTP / shape[i]) {
            PyErr_SetString(PyExc_ValueError, "pinned_array: shape is too big");
            goto done;
        }
        n *= shape[i];
    }
    mem = PyObject_New(pg_pinned, st->PinnedMemoryType);
    if (mem == NULL) {
        goto done;
    }
    mem->ptr = NULL;
    mem->size = (size_t)n;
    mem->weakreflist = NULL;
    Py_BEGIN_ALLOW_THREADS
        s = PG_CALL(rt, host_alloc, (&mem->ptr, n > 0 ? (size_t)n : 1));
    Py_END_ALLOW_THREADS
    if (s.err != PG_SUCCESS) {
        mem->ptr = NULL;
        pg_raise_oom(st, s.err, s.call, (size_t)n, -1);
        goto done;
    }
    Py_INCREF(descr);
    res = PyArray_NewFromDescr(&PyArray_Type, descr, nd, shape, NULL, mem->ptr,
                               NPY_ARRAY_WRITEABLE | (fortran ? NPY_ARRAY_F_CONTIGUOUS
                                                              : NPY_ARRAY_C_CONTIGUOUS),
                               NULL);
    if (res != NULL &&
        PyArray_SetBaseObject((PyArrayObject *)res, (PyObject *)mem) < 0) {
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

PyMethodDef pg_pinned_functions[] = {
    {"pinned_array", (PyCFunction)(void (*)(void))mod_pinned_array,
     METH_FASTCALL | METH_KEYWORDS,
     "pinned_array(shape, dtype=float64, order='C')\n--\n\n"
     "An uninitialized numpy.ndarray in page-locked host memory, freed with the array. "
     "Copies to and from it can run asynchronously on a stream."},
    {"is_pinned", mod_is_pinned, METH_O,
     "is_pinned(arr)\n--\n\nTrue if the array's memory is page-locked."},
    {NULL},
};
