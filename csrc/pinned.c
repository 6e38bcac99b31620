/* Page-locked host memory: cuda.pinned_array() and cuda.is_pinned(). The
 * memory's owner is a Buffer of kind PG_BUFFER_PINNED, the numpy array's base. */
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
