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
#define Py_T_OBJECT_EX T_OBJECT_EX
#define Py_READONLY READONLY
#endif

#if PY_VERSION_HEX >= 0x030D0000
#define pg_is_finalizing() Py_IsFinalizing()
#else
#define pg_is_finalizing() _Py_IsFinalizing()
#endif

/* ---- module state ---------------------------------------------------------- */

typedef struct {
    PyTypeObject *DeviceType;
    PyTypeObject *DeviceArrayType;
    PyTypeObject *KernelType;
    PyTypeObject *LaunchType;
    PyTypeObject *StreamType;
    PyTypeObject *EventType;
    PyTypeObject *PinnedMemoryType;
    PyTypeObject *ModuleType;
    PyTypeObject *FunctionType;
    PyTypeObject *FunctionLaunchType;
    PyTypeObject *HostArgType;
    PyObject *CompileError;
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

/* ---- errors.c: exceptions and the one error mapper ------------------------------ */

int pg_errors_init(PyObject *module, pg_state *st);
/* Sets pygpu.CudaError (or OutOfMemoryError) for `err` from `call`; returns NULL. */
PyObject *pg_raise(pg_state *st, pg_err err, const char *call);
PyObject *pg_raise_oom(pg_state *st, pg_err err, const char *call, size_t size,
                       int device);
/* pygpu.NoDeviceError with .code err; returns NULL. */
PyObject *pg_raise_no_device(pg_state *st, pg_err err, const char *message);
/* 1 after a kernel fault on a backend with PG_CAP_STICKY_FAULTS, or in a child
 * forked after a PG_CAP_FORK_UNSAFE backend was initialized: every operation
 * then raises, and deallocation gives nothing back. */
int pg_context_unusable(void);
/* Says why the context is unusable (and, if call is not NULL, what was
 * refused); returns NULL. */
PyObject *pg_raise_unusable(pg_state *st, const char *call);
/* Called in the child by context.c's fork handler. */
void pg_mark_forked(void);

/* Calling the backend. A message names the CUDA call that failed, and that
 * name comes from the call itself: PG_CALL(rt, op, (args)) calls rt->op(args)
 * and pairs the result with pg_call_names.op ("cudaMalloc" for malloc), both
 * made from the one list PG_BACKEND_CALLS in runtime.h, so the name cannot
 * drift from the call (as PyCUDA's CUDAPP_CALL_GUARDED stringizes its call).
 *
 *     if (PG_TRY(st, rt, stream_create, (&handle)) < 0) {
 *         goto error;            // "cudaStreamCreate failed: ..." is set
 *     }
 *
 * Around a call that may block, release the GIL for the call alone:
 *
 *     pg_status s;
 *     Py_BEGIN_ALLOW_THREADS
 *         s = PG_CALL(rt, synchronize, ());
 *     Py_END_ALLOW_THREADS
 *     if (pg_check(st, s) < 0) {
 *         goto error;
 *     }
 *
 * For an out-of-memory message with the size and device, pass s.err and
 * s.call to pg_raise_oom. */
typedef struct {
    pg_err err;
    const char *call; /* the CUDA call it stands for, e.g. "cudaMalloc" */
} pg_status;

#define PG_CALL(rt, op, args) ((pg_status){(rt)->op args, pg_call_names.op})
#define PG_TRY(st, rt, op, args) pg_check((st), PG_CALL(rt, op, args))

/* 0 if s succeeded; else sets the exception for it and returns -1. */
static inline int
pg_check(pg_state *st, pg_status s)
{
    if (s.err == PG_SUCCESS) {
        return 0;
    }
    pg_raise(st, s.err, s.call);
    return -1;
}

/* For a dealloc of an object of type tp: a failed free (or destroy) s is
 * reported as an unraisable exception; any pending exception is kept. */
void pg_report_failed_free(PyTypeObject *tp, pg_status s);

/* ---- format.c ------------------------------------------------------------------ */

/* A human-readable size: "1.50 GiB". */
void pg_format_bytes(char *buf, size_t len, size_t n);

/* ---- context.c: the backend, fork, this thread's device and stream -------------- */

/* Registers the one fork handler; from the module's exec slot. */
int pg_context_init(void);
/* The backend, once it has a usable device; else NoDeviceError (or the reason
 * the context is unusable) and NULL. */
const pg_backend *pg_get_rt(pg_state *st);
/* This thread's list under `key` in its thread-state dict (borrowed): the
 * stacks that `with device:` and `with stream:` push onto. */
PyObject *pg_thread_stack(const char *key);
/* The current device of this thread; -1 with CudaError on failure. */
int pg_current_device(pg_state *st, const pg_backend *rt, int *device);
/* Makes `device` current on this thread, storing the previous one in *prev. */
int pg_device_push(pg_state *st, const pg_backend *rt, int device, int *prev);
void pg_device_pop(const pg_backend *rt, int prev);

/* A pygpu.Stream; its layout is here because context.c resolves stream
 * arguments and makes the default-stream objects. */
typedef struct {
    PyObject_HEAD
    pg_stream handle;
    uint64_t serial; /* names the stream for the life of the process; 0: default */
    int device;
    int owned; /* destroy the handle with the object */
} pg_stream_obj;

#define PG_STREAM(o) ((pg_stream_obj *)(o))

/* A stream as the C side uses it: the handle, its serial (0 for the default
 * stream) and the Python object that keeps it alive (NULL for the default). */
typedef struct {
    pg_stream handle;
    uint64_t serial;
    PyObject *obj; /* borrowed */
} pg_stream_ref;

/* obj: None/NULL for this thread's current stream, a Stream, 0, or an object
 * with __cuda_stream__. Returns 0, or -1 with TypeError. */
int pg_resolve_stream(pg_state *st, PyObject *obj, pg_stream_ref *out);
/* True when obj asks for an explicit stream (so copies may be asynchronous). */
static inline int
pg_stream_given(PyObject *obj)
{
    return obj != NULL && obj != Py_None;
}
/* A new Stream object over `handle` (which it destroys on dealloc if owned). */
PyObject *pg_stream_obj_new(pg_state *st, pg_stream handle, uint64_t serial, int device,
                            int owned);
/* `with stream:`: make stream this thread's current one, and back. */
int pg_stream_push(PyObject *stream);
int pg_stream_pop(PyObject *stream);
/* current_stream(), default_stream() */
extern PyMethodDef pg_context_functions[];

/* ---- device.c ---------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    int id;
    pg_device_props props;
} pg_device;

extern PyType_Spec pg_device_spec;
/* Cached properties of a device of the chosen backend; NULL with an error set. */
const pg_device_props *pg_device_props_get(pg_state *st, int device);
PyObject *pg_device_new(pg_state *st, int id);

/* ---- stream.c, event.c, pinned.c, poolmod.c ------------------------------------ */

extern PyType_Spec pg_stream_spec;

typedef struct {
    PyObject_HEAD
    pg_event handle;
    int device;
    int timing;
    int recorded;
} pg_event_obj;

#define PG_EVENT(o) ((pg_event_obj *)(o))

extern PyType_Spec pg_event_spec;

extern PyType_Spec pg_pinned_spec;
extern PyMethodDef pg_pinned_functions[]; /* pinned_array(), is_pinned() */

extern PyMethodDef pg_pool_functions[]; /* _pool_stats(), _pool_free_all(), ... */

/* ---- transfer.c: host <-> device copies of contiguous bytes ------------------- */

/* pg_copy_h2d and pg_copy_d2h are declared in runtime.h (plain C). */

/* ---- array.c ------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    char *data;     /* device address of element [0, 0, ...] */
    PyObject *base; /* the owner of the memory for a view; NULL if we own it */
    void *alloc;    /* the allocation we own (NULL for views, empty arrays) */
    size_t alloc_size;
    int device;
    int nd;
    int flags; /* NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS */
    PyArray_Descr *descr;
    npy_intp shape[PG_MAXDIMS];
    npy_intp strides[PG_MAXDIMS];
    /* The stream the memory was last used on (the owner's is the one that
     * counts): the allocation goes back to the pool in that stream's order. */
    pg_stream stream;
    uint64_t serial;
    PyObject *stream_obj;
    /* for memory another library owns (CUDA array interface, DLPack): the
     * object that keeps it alive; views of such an array have it as base */
    PyObject *foreign;
    PyObject *weakreflist;
} pg_array;

/* A DeviceArray over memory it does not own, kept alive by `owner`.
 * strides in bytes, or NULL for C order. */
pg_array *pg_array_wrap(pg_state *st, char *data, int nd, const npy_intp *shape,
                        const npy_intp *strides, PyArray_Descr *descr, int device,
                        PyObject *owner);

/* Records that `a` (through its owner) is used on stream s. */
void pg_array_note_stream(pg_array *a, const pg_stream_ref *s);

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

/* A new C-contiguous (or F-contiguous, if fortran) array on the current
 * device, allocated in the order of stream s (NULL: the current stream). */
pg_array *pg_array_empty(pg_state *st, int nd, const npy_intp *shape,
                         PyArray_Descr *descr, int fortran, const pg_stream_ref *s);
/* Device-to-device copy between arrays of one shape and dtype, on stream s. */
int pg_array_copy_into(pg_state *st, pg_array *dst, pg_array *src,
                       const pg_stream_ref *s);
/* Host (anything NumPy accepts) to a new device array, on stream s. */
pg_array *pg_array_from_host(pg_state *st, PyObject *obj, PyArray_Descr *dtype,
                             const pg_stream_ref *s, int sync);
/* src into the host array out (same shape and dtype), on stream s. */
int pg_array_to_host(pg_state *st, pg_array *src, PyArrayObject *out,
                     const pg_stream_ref *s, int sync);
/* Checks that descr is one of the supported dtypes; else TypeError. */
int pg_check_dtype(PyArray_Descr *descr);
/* Reads a shape (int or sequence of ints) into shape[]; returns nd or -1. */
int pg_parse_shape(PyObject *obj, npy_intp *shape);

/* Parses fastcall arguments into out[0..n) by position, then by keyword;
 * the first `required` must be given. Absent ones are NULL. */
int pg_parse_args(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames, const char *const *names, int n, int required,
                  PyObject **out);
/* Same shape and same element order in memory for two dense layouts. */
int pg_same_dense_layout(int nd, const npy_intp *shape, const npy_intp *sa, int flags_a,
                         const npy_intp *sb, int flags_b);
PyObject *pg_array_copy(pg_state *st, pg_array *a, int fortran, const pg_stream_ref *s);

extern PyMethodDef pg_array_functions[];

/* ---- interop.c: __cuda_array_interface__, DLPack, pickling --------------------- */

PyObject *pg_array_cai(PyObject *self, void *closure);
PyObject *pg_array_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);
PyObject *pg_array_dlpack_device(PyObject *self, PyObject *ignored);
extern PyMethodDef pg_interop_functions[];
/* obj exposes CUDA memory through CAI or DLPack: a DeviceArray over it, a
 * new reference; NULL with no error set if obj offers neither. */
PyObject *pg_array_from_foreign(pg_state *st, PyObject *obj);

/* ---- rawkernel.c: RawKernel through NVRTC ------------------------------------ */

extern PyType_Spec pg_module_spec;
extern PyType_Spec pg_function_spec;
extern PyType_Spec pg_function_launch_spec;
extern PyType_Spec pg_hostarg_spec;
extern PyMethodDef pg_rawkernel_functions[];
int pg_rawkernel_init(PyObject *module, pg_state *st);

/* ---- launch.c ----------------------------------------------------------------- */

extern PyType_Spec pg_kernel_spec;
extern PyType_Spec pg_launch_spec;
int pg_kernels_init(PyObject *module, pg_state *st);
extern PyMethodDef pg_launch_functions[];
/* A launch configuration: kernel[grid, block], [grid, block, stream] or
 * [grid, block, stream, shared_bytes]. */
typedef struct {
    pg_dim3 grid, block;
    unsigned int shared_bytes;
    int has_stream;       /* 0: the caller's current stream at each call */
    pg_stream_ref stream; /* stream.obj borrowed from the key */
} pg_launch_config;

/* Parses and checks (against the current device's limits) the key of
 * kernel[...]; `usage` says how to launch `name`, for the TypeError. */
int pg_parse_launch_config(pg_state *st, PyObject *key, const char *usage,
                           pg_launch_config *cfg);
/* a + b, a + scalar and a @ b for the number protocol of DeviceArray. */
PyObject *pg_array_add(PyObject *a, PyObject *b);
PyObject *pg_array_iadd(PyObject *a, PyObject *b);
PyObject *pg_array_matmul(PyObject *a, PyObject *b);

#endif /* PYGPU_H */
