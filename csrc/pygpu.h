/* Declarations shared by the C files of pygpu._core. */
#ifndef PYGPU_H
#define PYGPU_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL pygpu_ARRAY_API
#ifndef PYGPU_IMPORT_NUMPY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "runtime.h"

#if PY_VERSION_HEX < 0x030C0000
#include <structmember.h>
#define Py_T_PYSSIZET T_PYSSIZET
#define Py_READONLY READONLY
#endif

/* ---- module state ---------------------------------------------------------- */

typedef struct {
    PyTypeObject *DeviceType;
    PyTypeObject *DeviceArrayType;
    PyTypeObject *KernelType;
    PyTypeObject *LaunchType;
    PyObject *CudaError;
    PyObject *OutOfMemoryError;
    PyObject *NoDeviceError;
    PyObject *kernels; /* dict name -> Kernel */
} pg_state;

extern PyModuleDef pg_module_def;

static inline pg_state *
pg_state_of_module(PyObject *module)
{
    return (pg_state *)PyModule_GetState(module);
}

/* The module state of a heap type of ours (or a subclass of one). */
static inline pg_state *
pg_state_of_type(PyTypeObject *tp)
{
    PyObject *m = PyType_GetModuleByDef(tp, &pg_module_def);
    return m == NULL ? NULL : pg_state_of_module(m);
}

/* ---- errors.c ---------------------------------------------------------------- */

int pg_errors_init(PyObject *module, pg_state *st);
/* Sets pygpu.CudaError (or OutOfMemoryError) for `err` from `call`; returns NULL. */
PyObject *pg_raise(pg_state *st, pg_err err, const char *call);
PyObject *pg_raise_oom(pg_state *st,
                       pg_err err,
                       const char *call,
                       size_t size,
                       int device);
/* The backend, once it has a usable device; else NoDeviceError and NULL. */
const pg_backend *pg_get_rt(pg_state *st);
/* A human-readable size: "1.50 GiB". */
void pg_format_bytes(char *buf, size_t len, size_t n);

/* ---- device.c ---------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD int id;
    pg_device_props props;
} pg_device;

extern PyType_Spec pg_device_spec;
/* Cached properties of a device of the chosen backend; NULL with an error set. */
const pg_device_props *pg_device_props_get(pg_state *st, int device);
PyObject *pg_device_new(pg_state *st, int id);
/* Makes `device` current on this thread, storing the previous one in *prev. */
int pg_device_push(pg_state *st, const pg_backend *rt, int device, int *prev);
void pg_device_pop(const pg_backend *rt, int prev);

/* ---- array.c ------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD char *data; /* device address of element [0, 0, ...] */
    PyObject *base; /* the owner of the memory for a view; NULL if we own it */
    void *alloc;    /* the allocation we own (NULL for views, empty arrays) */
    size_t alloc_size;
    int device;
    int nd;
    int flags; /* NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS */
    PyArray_Descr *descr;
    npy_intp shape[PG_MAXDIMS];
    npy_intp strides[PG_MAXDIMS];
    PyObject *weakreflist;
} pg_array;

extern PyType_Spec pg_array_spec;

static inline int
pg_array_check(pg_state *st, PyObject *o)
{
    return PyObject_TypeCheck(o, st->DeviceArrayType);
}

static inline npy_intp
pg_array_size(const pg_array *a)
{
    npy_intp n = 1;
    for (int i = 0; i < a->nd; i++) {
        n *= a->shape[i];
    }
    return n;
}

/* A new C-contiguous (or F-contiguous, if fortran) array on the current device. */
pg_array *pg_array_empty(pg_state *st,
                         int nd,
                         const npy_intp *shape,
                         PyArray_Descr *descr,
                         int fortran);
/* Device-to-device copy between arrays of one shape and dtype. */
int pg_array_copy_into(pg_state *st, pg_array *dst, pg_array *src, pg_stream stream);
/* Host (anything NumPy accepts) to a new device array. */
pg_array *pg_array_from_host(pg_state *st, PyObject *obj, PyArray_Descr *dtype);
/* Checks that descr is one of the supported dtypes; else TypeError. */
int pg_check_dtype(PyArray_Descr *descr);
/* Reads a shape (int or sequence of ints) into shape[]; returns nd or -1. */
int pg_parse_shape(PyObject *obj, npy_intp *shape);

/* Parses fastcall arguments into out[0..n) by position, then by keyword;
 * the first `required` must be given. Absent ones are NULL. */
int pg_parse_args(const char *fname,
                  PyObject *const *args,
                  Py_ssize_t nargs,
                  PyObject *kwnames,
                  const char *const *names,
                  int n,
                  int required,
                  PyObject **out);
/* Same shape and same element order in memory for two dense layouts. */
int pg_same_dense_layout(int nd,
                         const npy_intp *shape,
                         const npy_intp *sa,
                         int flags_a,
                         const npy_intp *sb,
                         int flags_b);
PyObject *pg_array_copy(pg_state *st, pg_array *a, int fortran);

extern PyMethodDef pg_array_functions[];

/* ---- launch.c ----------------------------------------------------------------- */

extern PyType_Spec pg_kernel_spec;
extern PyType_Spec pg_launch_spec;
int pg_kernels_init(PyObject *module, pg_state *st);
extern PyMethodDef pg_launch_functions[];
/* a + b, a + scalar and a @ b for the number protocol of DeviceArray. */
PyObject *pg_array_add(PyObject *a, PyObject *b);
PyObject *pg_array_iadd(PyObject *a, PyObject *b);
PyObject *pg_array_matmul(PyObject *a, PyObject *b);

#endif /* PYGPU_H */
