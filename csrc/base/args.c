/* The one argument parser of the module, and the converters every function
 * uses for shapes, dtypes, orders and streams. In the spirit of NumPy's
 * npy_argparse: a function describes its parameters once, in a static
 * pg_signature, and pg_parse fills one output per parameter through that
 * parameter's converter. The bottom of the C files: it calls nothing above
 * the thread's current stream (current.c). */
#include <stdarg.h>
#include <string.h>

#include "pygpu.h"

/* ---- the parser --------------------------------------------------------------- */

static int
keyword_index(const pg_signature *sig, PyObject *key)
{
    for (int i = 0; i < sig->count; i++) {
        if (PyUnicode_CompareWithASCIIString(key, sig->params[i].name) == 0) {
            return i;
        }
    }
    return -1;
}

int
pg_parse(pg_state *st, const pg_signature *sig, PyObject *const *args, Py_ssize_t nargs,
         PyObject *kwnames, ...)
{
    PyObject *given[PG_MAX_PARAMS];
    va_list outs;
    int rc = 0;
    if (nargs > sig->count) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d argument%s (%zd given)",
                     sig->fname, sig->count, sig->count == 1 ? "" : "s", nargs);
        return -1;
    }
    for (int i = 0; i < sig->count; i++) {
        given[i] = i < nargs ? args[i] : NULL;
    }
    if (kwnames != NULL) {
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, k);
            int i = keyword_index(sig, key);
            if (i < 0) {
                PyErr_Format(PyExc_TypeError,
                             "%s() got an unexpected keyword argument %R", sig->fname,
                             key);
                return -1;
            }
            if (given[i] != NULL) {
                PyErr_Format(PyExc_TypeError,
                             "%s() got multiple values for argument '%s'", sig->fname,
                             sig->params[i].name);
                return -1;
            }
            given[i] = args[nargs + k];
        }
    }
    for (int i = 0; i < sig->required; i++) {
        if (given[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'",
                         sig->fname, sig->params[i].name);
            return -1;
        }
    }
    va_start(outs, kwnames);
    for (int i = 0; i < sig->count && rc == 0; i++) {
        void *out = va_arg(outs, void *);
        rc = sig->params[i].convert(st, given[i], out);
    }
    va_end(outs);
    return rc;
}

/* ---- converters --------------------------------------------------------------- */

int
pg_conv_object(pg_state *Py_UNUSED(st), PyObject *obj, void *out)
{
    *(PyObject **)out = obj;
    return 0;
}

int
pg_conv_object_or_none(pg_state *Py_UNUSED(st), PyObject *obj, void *out)
{
    *(PyObject **)out = obj == Py_None ? NULL : obj;
    return 0;
}

/* The one dtype table: what pygpu stores, and how DLPack and the prebuilt
 * kernels name each dtype. */
static const pg_dtype_info dtypes[] = {
    {NPY_BOOL, PG_DL_BOOL, -1, PG_T_BOOL},
    {NPY_BYTE, PG_DL_INT, -1, PG_T_I8},
    {NPY_SHORT, PG_DL_INT, -1, PG_T_I16},
    {NPY_INT, PG_DL_INT, PG_I32, PG_T_I32},
    {NPY_LONG, PG_DL_INT, sizeof(long) == 8 ? PG_I64 : PG_I32,
     sizeof(long) == 8 ? PG_T_I64 : PG_T_I32},
    {NPY_LONGLONG, PG_DL_INT, PG_I64, PG_T_I64},
    {NPY_UBYTE, PG_DL_UINT, -1, PG_T_U8},
    {NPY_USHORT, PG_DL_UINT, -1, PG_T_U16},
    {NPY_UINT, PG_DL_UINT, -1, PG_T_U32},
    {NPY_ULONG, PG_DL_UINT, -1, sizeof(long) == 8 ? PG_T_U64 : PG_T_U32},
    {NPY_ULONGLONG, PG_DL_UINT, -1, PG_T_U64},
    {NPY_HALF, PG_DL_FLOAT, -1, PG_T_F16},
    {NPY_FLOAT, PG_DL_FLOAT, PG_F32, PG_T_F32},
    {NPY_DOUBLE, PG_DL_FLOAT, PG_F64, PG_T_F64},
    {NPY_CFLOAT, PG_DL_COMPLEX, -1, PG_T_C64},
    {NPY_CDOUBLE, PG_DL_COMPLEX, -1, PG_T_C128},
};

static const char supported_dtypes[] =
    "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
    "float16, float32, float64, complex64 and complex128";

const pg_dtype_info *
pg_dtype_info_of(int type_num)
{
    for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++) {
        if (dtypes[i].type_num == type_num) {
            return &dtypes[i];
        }
    }
    return NULL;
}

int
pg_dtype_from_dlpack(int code, int bits)
{
    for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++) {
        PyArray_Descr *d = PyArray_DescrFromType(dtypes[i].type_num);
        int match = dtypes[i].dl_code == code && PyDataType_ELSIZE(d) * 8 == bits;
        Py_DECREF(d);
        if (match) {
            return dtypes[i].type_num;
        }
    }
    return -1;
}

int
pg_unsupported_dtype(const char *prefix, PyArray_Descr *descr)
{
    PyErr_Format(PyExc_TypeError,
                 "%spygpu does not support dtype %S (%s) on the device; supported "
                 "dtypes are %s",
                 prefix != NULL ? prefix : "", (PyObject *)descr,
                 descr->typeobj != NULL ? descr->typeobj->tp_name : "?",
                 supported_dtypes);
    return -1;
}

int
pg_check_dtype(PyArray_Descr *descr)
{
    if (pg_dtype_info_of(descr->type_num) == NULL) {
        return pg_unsupported_dtype(NULL, descr);
    }
    if (!PyArray_ISNBO(descr->byteorder)) {
        PyErr_Format(PyExc_TypeError,
                     "pygpu arrays use the native byte order; got dtype %R "
                     "(convert it with .astype(%R.newbyteorder('=')))",
                     (PyObject *)descr, (PyObject *)descr);
        return -1;
    }
    return 0;
}

static int
dtype_from(PyObject *obj, PyArray_Descr **out)
{
    PyArray_Descr *descr = NULL;
    if (!PyArray_DescrConverter(obj, &descr)) {
        return -1;
    }
    if (pg_check_dtype(descr) < 0) {
        Py_DECREF(descr);
        return -1;
    }
    *out = descr;
    return 0;
}

int
pg_conv_dtype(pg_state *Py_UNUSED(st), PyObject *obj, void *out)
{
    if (obj == NULL || obj == Py_None) { /* float64, as in NumPy */
        *(PyArray_Descr **)out = PyArray_DescrFromType(NPY_DOUBLE);
        return 0;
    }
    return dtype_from(obj, (PyArray_Descr **)out);
}

int
pg_conv_dtype_or_none(pg_state *Py_UNUSED(st), PyObject *obj, void *out)
{
    if (obj == NULL || obj == Py_None) {
        *(PyArray_Descr **)out = NULL;
        return 0;
    }
    return dtype_from(obj, (PyArray_Descr **)out);
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

int
pg_conv_shape(pg_state *Py_UNUSED(st), PyObject *obj, void *out)
{
    pg_shape *s = out;
    s->nd = obj == NULL ? 0 : pg_parse_shape(obj, s->dims);
    return s->nd < 0 ? -1 : 0;
}

int
pg_conv_order(pg_state *Py_UNUSED(st), PyObject *obj, void *out)
{
    const char *s;
    int *fortran = out;
    *fortran = 0;
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (s != NULL && (strcmp(s, "C") == 0 || strcmp(s, "c") == 0)) {
        return 0;
    }
    if (s != NULL && (strcmp(s, "F") == 0 || strcmp(s, "f") == 0)) {
        *fortran = 1;
        return 0;
    }
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "order must be 'C' or 'F', not %R", obj);
    return -1;
}

int
pg_conv_stream(pg_state *st, PyObject *obj, void *out)
{
    pg_stream_arg *s = out;
    s->given = obj != NULL && obj != Py_None;
    return pg_resolve_stream(st, obj, &s->ref);
}

int
pg_conv_str(pg_state *Py_UNUSED(st), PyObject *obj, void *out)
{
    const char **s = out;
    if (obj == NULL || obj == Py_None) {
        *s = NULL;
        return 0;
    }
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "expected a str, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    *s = PyUnicode_AsUTF8(obj);
    return *s == NULL ? -1 : 0;
}

int
pg_conv_device(pg_state *st, PyObject *obj, void *out)
{
    int *device = out, overflow = 0, count = 0;
    const pg_backend *rt = NULL;
    long id;
    if (obj == NULL || PyBool_Check(obj) || !PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "a device id must be an int, not %.100s",
                     obj != NULL ? Py_TYPE(obj)->tp_name : "nothing");
        return -1;
    }
    id = PyLong_AsLongAndOverflow(obj, &overflow);
    if (id == -1 && PyErr_Occurred()) {
        return -1;
    }
    rt = pg_get_rt(st);
    if (rt == NULL || PG_TRY(st, rt, device_count, (&count)) < 0) {
        return -1;
    }
    if (overflow || id < 0 || id >= count) {
        PyErr_Format(PyExc_ValueError,
                     "device %R does not exist: there %s %d device%s (ids 0 to %d)",
                     obj, count == 1 ? "is" : "are", count, count == 1 ? "" : "s",
                     count - 1);
        return -1;
    }
    *device = (int)id;
    return 0;
}
