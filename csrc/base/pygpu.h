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

/* the launches of @cuda.jit that remember their last call (pg_state's
 * jit_last), and the most arguments such a call has */
#define PG_JIT_LAST 16
#define PG_JIT_LAST_ARGS 16
/* the operators and ufuncs whose last plan is remembered (pg_state's
 * plan_last), and the words of one operand's raw signature (ops.c) */
#define PG_PLAN_LAST 16
#define PG_PLAN_SIG 12

typedef struct {
    PyTypeObject *DeviceType;
    PyTypeObject *DeviceArrayType;
    PyTypeObject *BufferType;
    PyTypeObject *KernelType;
    PyTypeObject *LaunchType;
    PyTypeObject *StreamType;
    PyTypeObject *EventType;
    PyTypeObject *ModuleType;
    PyTypeObject *FunctionType;
    PyTypeObject *HostArgType;
    PyTypeObject *GraphType;
    PyObject *CompileError;
    PyObject *CudaError;
    PyObject *OutOfMemoryError;
    PyObject *NoDeviceError;
    PyObject *KernelError;
    PyObject *KernelAssertionError;
    PyObject *kernels; /* dict name -> Kernel */
    /* numpy.add, numpy.less, ... for each PG_OP_* that NumPy has, looked up at
     * first use: NumPy answers what an operation's dtype is (ops.c) */
    PyObject *ufuncs[PG_OP_COUNT];
    PyObject *matmul_ufunc; /* numpy.matmul, likewise */
    /* pygpu._ops.ufunc's array_ufunc and operator, looked up at first use:
     * the Python side of __array_ufunc__ and of the operators that have no C
     * path (ops.c) */
    PyObject *py_array_ufunc;
    PyObject *py_operator;
    /* pygpu._ops.ufunc's plans ({key: (device, run)}), handed over by
     * _core._set_ufunc_plans: the operators and __array_ufunc__ look a call
     * up there before they call the Python side (ops.c's replay_plan) */
    PyObject *py_plans;
    /* pygpu._ops.reduction's plans, likewise (_core._set_reduction_plans):
     * d.sum(), d.max(), ... with no arguments replay them (array.c) */
    PyObject *py_reduction_plans;
    /* pygpu._ops.methods, imported at the first call of a method written in
     * Python (array.c's PG_PY_METHODS) */
    PyObject *py_methods;
    /* @cuda.jit's launches (module.c's mod_jit_call): per launch, found by
     * its `bound` dict, the arguments' raw signature (per argument its type,
     * and for an array its dtype object and layout) that it last launched
     * with and the (compiled, KernelLaunch) found then, so that a repeat of
     * that call builds and looks up no key. Strong references (keep: the
     * types and dtypes that sig names, so that none is freed and another
     * made at its address). */
    struct pg_jit_last {
        PyObject *bound;
        PyObject *hit;
        PyObject *keep;
        int device;
        Py_ssize_t nargs;
        uintptr_t sig[3 * PG_JIT_LAST_ARGS];
    } jit_last[PG_JIT_LAST];
    /* The operators' and ufuncs' plans (ops.c's replay_plan): per operator
     * (its interned name) or ufunc (the object), the raw signature of the
     * operands of the last call that found a plan (type, dtype object,
     * device, shape and strides; the output's third where the call names
     * one) and the plan's run, so that a repeat builds and hashes no key.
     * Strong references (keep: the dtypes and types that sig names). */
    struct pg_plan_last {
        PyObject *ident;
        PyObject *run;
        PyObject *keep;
        int device;
        uintptr_t sig[3 * PG_PLAN_SIG];
    } plan_last[PG_PLAN_LAST];
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
/* 1 once a device of the backend has been used (pg_get_rt succeeded): before
 * that, pygpu holds nothing on any device. */
int pg_backend_started(void);
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
/* The same for hot paths, one runtime call when nothing changes: makes
 * `device` current; *restore is the device to make current again after, or
 * -1 when it was current already. */
int pg_device_enter(pg_state *st, const pg_backend *rt, int device, int *restore);
void pg_device_leave(const pg_backend *rt, int restore);

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
    /* the device the stream belongs to; -1 for a default stream (each device
     * has its own: the one of the device the work runs on) or a foreign
     * stream whose device pygpu cannot tell */
    int device;
} pg_stream_ref;

/* obj: None/NULL for this thread's current stream, a Stream, 0, or an object
 * with __cuda_stream__. Returns 0, or -1 with TypeError. */
int pg_resolve_stream(pg_state *st, PyObject *obj, pg_stream_ref *out);
/* A stream handle from outside (an interop protocol's stream number, an
 * object's __cuda_stream__; 0, 1 and 2 are CUDA's default streams): 0, or -1
 * with a ValueError naming `what` where the backend knows it is no live
 * stream (the simulator, whose handles are pointers). */
int pg_check_foreign_stream(uintptr_t handle, const char *what);
/* Makes s fit work on `device`. Streams belong to a device: an explicit
 * stream of another device is a ValueError naming both; the thread's current
 * stream (explicit == 0) of another device gives way to `device`'s default
 * stream, as each device has its own current stream in CuPy and PyTorch. */
int pg_stream_for_device(pg_stream_ref *s, int device, int explicit);
/* The check alone: 0, or -1 with the ValueError for an explicit stream of
 * another device. */
int pg_check_stream_device(const pg_stream_ref *s, int device, int explicit);
/* True when obj asks for an explicit stream (so copies may be asynchronous). */
static inline int
pg_stream_given(PyObject *obj)
{
    return obj != NULL && obj != Py_None;
}
/* A new Stream object over `handle` (which it destroys on dealloc if owned). */
PyObject *pg_stream_obj_new(pg_state *st, pg_stream handle, uint64_t serial, int device,
                            int owned);
/* A serial for a new stream: never 0, never given twice. */
uint64_t pg_stream_new_serial(void);
/* `with stream:`: make stream this thread's current one, and back. */
int pg_stream_push(PyObject *stream);
int pg_stream_pop(PyObject *stream);

/* The captures under way (CUDA graphs, graph.c). While a stream is captured,
 * every Buffer that work recorded on it touches (allocated on it, or used by
 * a launch or copy on it: pg_buffer_note_stream) goes to the capture's list
 * `held`, which the Graph keeps: memory baked into a graph never goes back
 * to the pool while the graph can run. pg_capture_register: -1 with an
 * exception; pg_capture_unregister: 1 if a buffer could not be held (no
 * memory); pg_capture_on_this_thread: 1 while this thread captures. */
extern int pg_captures_under_way;
int pg_capture_register(uint64_t serial, PyObject *held);
int pg_capture_unregister(uint64_t serial);
int pg_capture_on_this_thread(void);
void pg_capture_hold_slow(PyObject *buffer, uint64_t serial);
static inline void
pg_capture_hold(PyObject *buffer, uint64_t serial)
{
    if (pg_captures_under_way != 0) {
        pg_capture_hold_slow(buffer, serial);
    }
}
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

extern PyMethodDef pg_pinned_functions[]; /* pinned_array(), is_pinned() */

extern PyMethodDef pg_pool_functions[]; /* _pool_stats(), _pool_free_all(), ... */

/* ---- transfer.c: host <-> device copies of contiguous bytes ------------------- */

/* pg_copy_h2d and pg_copy_d2h are declared in runtime.h (plain C). */

/* ---- args.c: the one argument parser, and its converters ------------------- */

#define PG_MAX_PARAMS 8

/* Converts obj (NULL when the argument was not given) into *out; 0 or -1. */
typedef int (*pg_converter)(pg_state *st, PyObject *obj, void *out);
typedef struct {
    const char *name;
    pg_converter convert;
} pg_param;
/* A function's parameters, in order; the first `required` must be given. */
typedef struct {
    const char *fname;
    int required;
    int count;
    pg_param params[PG_MAX_PARAMS];
} pg_signature;

/* Parses fastcall arguments by position, then by keyword, and converts each
 * into the next variadic output (one pointer per parameter, in order). On
 * failure, outputs after the failing one are untouched: start them NULL. */
int pg_parse(pg_state *st, const pg_signature *sig, PyObject *const *args,
             Py_ssize_t nargs, PyObject *kwnames, ...);

typedef struct {
    int nd;
    npy_intp dims[PG_MAXDIMS];
} pg_shape;
typedef struct {
    pg_stream_ref ref;
    int given; /* an explicit stream: copies may then be asynchronous */
} pg_stream_arg;

int pg_conv_object(pg_state *st, PyObject *obj, void *out);         /* PyObject ** */
int pg_conv_object_or_none(pg_state *st, PyObject *obj, void *out); /* None -> NULL */
int pg_conv_dtype(pg_state *st, PyObject *obj, void *out); /* new ref; None: float64 */
int pg_conv_dtype_or_none(pg_state *st, PyObject *obj, void *out); /* None -> NULL */
int pg_conv_shape(pg_state *st, PyObject *obj, void *out);         /* pg_shape * */
int pg_conv_order(pg_state *st, PyObject *obj, void *out);  /* int *: 1 for 'F' */
int pg_conv_stream(pg_state *st, PyObject *obj, void *out); /* pg_stream_arg * */
int pg_conv_str(pg_state *st, PyObject *obj, void *out);    /* const char **, or NULL */
/* int *: the id of a device there is (an int; ValueError naming the count) */
int pg_conv_device(pg_state *st, PyObject *obj, void *out);

/* The one dtype table: each dtype pygpu stores, its DLPack type code, and
 * the code the prebuilt kernels know it by (PG_F32..., or -1). */
enum {
    PG_DL_INT = 0,
    PG_DL_UINT = 1,
    PG_DL_FLOAT = 2,
    PG_DL_COMPLEX = 5,
    PG_DL_BOOL = 6
};
typedef struct {
    int type_num; /* NPY_FLOAT, ... */
    int dl_code;  /* PG_DL_* */
    int kernel;   /* PG_F32, PG_F64, PG_I32, PG_I64, or -1 */
    int element;  /* PG_T_*: the elementwise kernel's code */
} pg_dtype_info;
/* The table's row for a NumPy type number; NULL if pygpu does not store it. */
const pg_dtype_info *pg_dtype_info_of(int type_num);
/* The NumPy type number of a DLPack (code, bits); -1 if none. */
int pg_dtype_from_dlpack(int code, int bits);
/* Checks that descr is one of the supported dtypes; else TypeError. */
int pg_check_dtype(PyArray_Descr *descr);
/* TypeError "<prefix>pygpu does not support dtype float128 (numpy.longdouble)
 * on the device; supported dtypes are ..."; prefix may be NULL. Returns -1. */
int pg_unsupported_dtype(const char *prefix, PyArray_Descr *descr);
/* Reads a shape (int or sequence of ints) into shape[]; returns nd or -1. */
int pg_parse_shape(PyObject *obj, npy_intp *shape);

/* ---- buffer.c: the one owner of a piece of memory ------------------------------ */

typedef enum {
    PG_BUFFER_POOLED,  /* device memory from pygpu's pool; back to it on release */
    PG_BUFFER_FOREIGN, /* device memory another library owns, through `owner` */
    PG_BUFFER_PINNED,  /* page-locked host memory (cuda.pinned_array) */
    PG_BUFFER_HOST,    /* pageable host memory pygpu mapped for a new host array */
} pg_buffer_kind;

/* A reference-counted piece of memory (a small GC'd Python object, so that
 * cycles through a foreign owner are collected). Arrays and views hold one
 * reference each; the memory goes back when the last one goes. */
typedef struct {
    PyObject_HEAD
    char *ptr;
    size_t size;
    int device; /* -1 for host memory */
    pg_buffer_kind kind;
    int readonly;    /* exported to us read-only (CAI or DLPack): writes refuse */
    PyObject *owner; /* PG_BUFFER_FOREIGN: keeps the memory alive; else NULL */
    /* The stream of the last use: pooled memory goes back to the pool in
     * that stream's order. stream_obj keeps a Stream object alive. */
    pg_stream stream;
    uint64_t serial;
    PyObject *stream_obj;
    PyObject *weakreflist;
} pg_buffer;

extern PyType_Spec pg_buffer_spec;
/* size bytes from the pool on `device`, in the order of stream s; raises
 * OutOfMemoryError naming the size. size 0 gives an empty buffer. */
pg_buffer *pg_buffer_alloc(pg_state *st, size_t size, int device, int device_is_current,
                           const pg_stream_ref *s);
/* size bytes of page-locked host memory (at least 1 byte is allocated). */
pg_buffer *pg_buffer_pinned(pg_state *st, size_t size);
/* size (> 0) bytes of pageable host memory for a new host array, from
 * hostcopy.c's pg_host_map (unmapped on release); raises MemoryError. */
pg_buffer *pg_buffer_host(pg_state *st, size_t size);
/* Device memory at ptr that `owner` keeps alive. */
pg_buffer *pg_buffer_foreign(pg_state *st, void *ptr, size_t size, int device,
                             PyObject *owner);
/* Records that the memory is used on stream s (the pool orders its reuse
 * after). */
void pg_buffer_note_stream_slow(pg_buffer *b, const pg_stream_ref *s);
static inline void
pg_buffer_note_stream(pg_buffer *b, const pg_stream_ref *s)
{
    if (b->serial != s->serial) {
        pg_buffer_note_stream_slow(b, s);
    }
}

/* ---- core.c: the array core: construction, views, contiguity ------------------- */

typedef struct {
    PyObject_HEAD
    pg_buffer *buf; /* the memory; shared by views */
    char *data;     /* device address of element [0, 0, ...], inside buf */
    /* NumPy's `base`: the array a view was made from (its owner); NULL for an
     * array that owns its buffer. Only for the `.base` attribute. */
    PyObject *base;
    int nd;
    int flags; /* NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS */
    PyArray_Descr *descr;
    npy_intp shape[PG_MAXDIMS];
    npy_intp strides[PG_MAXDIMS];
    PyObject *weakreflist;
} pg_array;

#define PG_CONTIG (NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS)

static inline int
pg_array_check(pg_state *st, PyObject *o)
{
    return PyObject_TypeCheck(o, st->DeviceArrayType);
}

static inline int
pg_array_device(const pg_array *a)
{
    return a->buf->device;
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

static inline size_t
pg_array_nbytes(const pg_array *a)
{
    return (size_t)pg_array_size(a) * (size_t)PyDataType_ELSIZE(a->descr);
}

/* 0, or -1 with ValueError when a's memory is read-only; `what` names the
 * operation ("setitem", "add_one", "out"). */
int pg_array_check_writeable(const pg_array *a, const char *what);

/* Records that `a`'s memory is used on stream s. */
/* An array is tracked by the collector only where it can be in a cycle:
 * where its buffer (or base) is, and always for a subclass with a __dict__.
 * Called once the array is built. */
void pg_array_untrack_if_acyclic(pg_array *a);

static inline void
pg_array_note_stream(pg_array *a, const pg_stream_ref *s)
{
    pg_buffer_note_stream(a->buf, s);
}

/* A new C-contiguous (or F-contiguous, if fortran) array on the current
 * device, allocated in the order of stream s (NULL: the current stream). */
pg_array *pg_array_empty(pg_state *st, int nd, const npy_intp *shape,
                         PyArray_Descr *descr, int fortran, const pg_stream_ref *s);
/* The same on `device` (whatever device is current); s of another device
 * gives way to device's default stream. */
pg_array *pg_array_empty_on(pg_state *st, int device, int nd, const npy_intp *shape,
                            PyArray_Descr *descr, int fortran, const pg_stream_ref *s);
/* Either, of type `type` (a subclass of DeviceArray); device -1: current. */
pg_array *pg_array_empty_typed(pg_state *st, PyTypeObject *type, int device, int nd,
                               const npy_intp *shape, PyArray_Descr *descr, int fortran,
                               const pg_stream_ref *s);
/* An array over (part of) buffer `buf` at data; strides in bytes, or NULL for
 * C order. base is NumPy's `.base` (NULL for a new owner). */
pg_array *pg_array_over(pg_state *st, pg_buffer *buf, char *data, int nd,
                        const npy_intp *shape, const npy_intp *strides,
                        PyArray_Descr *descr, PyObject *base);
/* A DeviceArray over device memory another library owns, kept alive by
 * `owner` (through a foreign buffer); strides in bytes, or NULL for C order.
 * The bytes it spans must lie in one live device allocation, as the backend's
 * pointer_range tells, and not in memory the pool holds free; data (NULL only
 * for an empty array) and strides must be multiples of the element size: else
 * a ValueError saying which. */
pg_array *pg_array_wrap(pg_state *st, char *data, int nd, const npy_intp *shape,
                        const npy_intp *strides, PyArray_Descr *descr, int device,
                        PyObject *owner, int readonly);
/* Views of a, their geometry computed by NumPy on a never-dereferenced
 * stand-in: a[key] for basic indexing, and a.transpose(axes). */
PyObject *pg_array_getitem(pg_state *st, pg_array *a, PyObject *key);
/* A view with a new shape; where only a dense copy could have it, NULL with
 * *needs_copy set and no error. */
PyObject *pg_array_reshape(pg_state *st, pg_array *a, PyObject *shape, int fortran,
                           int *needs_copy);
PyObject *pg_array_transpose(pg_state *st, pg_array *a, PyObject *axes);
/* Same shape and same element order in memory for two dense layouts. */
int pg_same_dense_layout(int nd, const npy_intp *shape, const npy_intp *sa, int flags_a,
                         const npy_intp *sb, int flags_b);
/* The bytes the array's elements span: [*lo, *hi) (empty for no elements). */
void pg_array_span(const pg_array *a, char **lo, char **hi);
/* 1 when the two arrays may touch the same bytes (their extents overlap). */
int pg_arrays_overlap(const pg_array *a, const pg_array *b);
/* 1 when a and b are the very same elements, in the same order. */
int pg_arrays_same_elements(const pg_array *a, const pg_array *b);
/* 1 when writing dst element by element while reading src could read an
 * element already written (NumPy's "as if buffered" then needs a temporary):
 * they overlap and are not the very same elements. */
int pg_array_overlap_unsafe(const pg_array *dst, const pg_array *src);
/* "the shapes (2, 3) and (3, 2) differ" as ValueError, prefixed by what. */
int pg_same_shape(int nd_a, const npy_intp *a, int nd_b, const npy_intp *b);
/* ValueError "what: shape mismatch: 'a' has shape (2, 3) but 'b' has shape
 * (3, 2)" (without the names where name_a is NULL) unless the shapes agree. */
int pg_check_same_shape(const char *what, const char *name_a, int nd_a,
                        const npy_intp *a, const char *name_b, int nd_b,
                        const npy_intp *b);
int pg_check_same_dtype(const char *what, PyArray_Descr *a, PyArray_Descr *b);

/* ---- elementwise.c: the one path to the elementwise kernel -------------------- */

/* NumPy's broadcast of two shapes into shape[PG_MAXDIMS]; -1 (no exception)
 * if they do not broadcast. */
int pg_broadcast_shape(int nd_a, const npy_intp *a, int nd_b, const npy_intp *b,
                       int *nd, npy_intp *shape);
/* op describes array a seen with shape (nd axes): its data, element type and
 * strides, zero on broadcast axes. -1 (no exception) if it does not broadcast. */
int pg_operand_of_array(pg_operand *op, const pg_array *a, int nd,
                        const npy_intp *shape);
/* out = a <op> b elementwise, computed in element type `compute`, on out's
 * device and stream s; a and b are seen with out's shape (their strides are
 * folded in place). The caller has checked dtypes, devices and overlap. */
int pg_elementwise(pg_state *st, int op, int compute, pg_array *out, pg_operand *a,
                   pg_operand *b, const pg_stream_ref *s);

/* ---- copy.c: every copy (host/device, device/device, strided, setitem) ------- */

/* Device-to-device copy between arrays of one shape and dtype, on stream s. */
int pg_array_copy_into(pg_state *st, pg_array *dst, pg_array *src,
                       const pg_stream_ref *s);
/* A new dense copy of a (C order, or F if fortran) on a's device, on stream
 * s (NULL: current). */
PyObject *pg_array_copy(pg_state *st, pg_array *a, int fortran, const pg_stream_ref *s);
/* The same on `device` (-1: a's device), copying between devices if needed. */
PyObject *pg_array_copy_on(pg_state *st, pg_array *a, int device, int fortran,
                           const pg_stream_ref *s);
/* Host (anything NumPy accepts) to a new device array, on stream s. */
pg_array *pg_array_from_host(pg_state *st, PyObject *obj, PyArray_Descr *dtype,
                             const pg_stream_ref *s, int sync);
/* src into the host array out (same shape and dtype), on stream s. */
int pg_array_to_host(pg_state *st, pg_array *src, PyArrayObject *out,
                     const pg_stream_ref *s, int sync);
/* A new host ndarray with a's contents (synchronous). */
PyObject *pg_array_to_new_host(pg_state *st, pg_array *a, const pg_stream_ref *s);
/* Copies obj (a DeviceArray, or anything NumPy accepts) into dst, on stream s;
 * `what` names the operation in errors. */
int pg_array_assign(pg_state *st, pg_array *dst, PyObject *obj, const char *what,
                    const pg_stream_ref *s, int sync);
/* src (broadcast to dst's shape) into dst, converted to dst's dtype as NumPy
 * casts (unsafe casting: astype, setitem); on stream s. */
int pg_array_cast_into(pg_state *st, pg_array *dst, pg_array *src,
                       const pg_stream_ref *s);
/* dst[...] = value with NumPy's rules: broadcasting, casting (through the
 * host where the dtypes differ), scalars converted as NumPy converts them. */
int pg_array_setitem(pg_state *st, pg_array *dst, PyObject *value,
                     const pg_stream_ref *s);
/* A host ndarray from obj in the native byte order, checked for dtype. */
PyArrayObject *pg_host_array(PyObject *obj, PyArray_Descr *dtype);

/* ---- array.c: the DeviceArray type and its factories --------------------------- */

extern PyType_Spec pg_array_spec;
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

/* ---- launch.c: launch configurations, prebuilt kernels, KernelLaunch ---------- */

/* A launch configuration: kernel[grid, block], [grid, block, stream] or
 * [grid, block, stream, shared_bytes]. */
typedef struct {
    pg_dim3 grid, block;
    unsigned int shared_bytes;
    int has_stream;       /* 0: the caller's current stream at each call */
    pg_stream_ref stream; /* stream.obj borrowed from the key (owned by a launch) */
    int cooperative;      /* the call's cooperative=True (never in a cached key) */
} pg_launch_config;

/* Parses and checks (against the current device's limits) the key of
 * kernel[...]; `usage` says how to launch `name`, for the TypeError. */
int pg_parse_launch_config(pg_state *st, PyObject *key, const char *usage,
                           pg_launch_config *cfg);

/* Anything launched as f[grid, block(, stream(, shared_bytes))](*args) starts
 * with this head; its kind says how arguments are checked and launched.
 * Prebuilt kernels (launch.c) and module functions (rawkernel.c) are two
 * kinds; each makes the one bound-launch type, pygpu.KernelLaunch. */
typedef struct pg_launch_kind pg_launch_kind;
typedef struct {
    PyObject_HEAD
    const pg_launch_kind *kind;
    const char *name;  /* for messages; lives as long as the object */
    const char *usage; /* "add[grid, block](a, b, out)", or NULL */
    int nargs;         /* the arguments a launch takes, all positional */
    /* the device it runs on: a module's, where it was loaded; -1 for the
     * device of its array arguments (the current device if it has none) */
    int device;
    /* the last f[grid, block] of ints and tuples of ints, as its numbers
     * (last_key[0] is 0 when there is none), and its checked config: the
     * same launch in a loop parses and checks once */
    long long last_key[7];
    pg_launch_config last_cfg;
    /* the KernelLaunch made for it (a strong reference: f and it form a
     * cycle, which each type's clear, and the module's for the prebuilt
     * kernels, breaks with pg_launchable_forget) */
    PyObject *last_launch;
} pg_launchable;

/* Forgets the remembered launch (from a launchable type's clear). */
void pg_launchable_forget(pg_launchable *f);

struct pg_launch_kind {
    const char *name;   /* "prebuilt", "module" */
    int dynamic_shared; /* 0: the fourth launch setting must be 0 */
    int cooperative;    /* 0: a call may not say cooperative=True */
    /* Checks args[0..f->nargs) against f, packs them and launches f with
     * cfg's grid, block and shared_bytes on stream s (already resolved; not
     * cfg->stream). 0, or -1 with an exception set. */
    /* with `device` (where the launch runs) current */
    int (*check_and_launch)(pg_state *st, pg_launchable *f, const pg_launch_config *cfg,
                            PyObject *const *args, int device, const pg_stream_ref *s);
};

/* f[key] for every launchable type (its mp_subscript): a new KernelLaunch. */
PyObject *pg_launchable_getitem(PyObject *f, PyObject *key);

extern PyType_Spec pg_kernel_spec;
extern PyType_Spec pg_launch_spec;
int pg_kernels_init(PyObject *module, pg_state *st);

/* The prebuilt kernels, from the one list: PG_K_add, PG_K_add_one, ... */
typedef enum {
#define PG_KERNEL(name, type, nargs, signature, doc) PG_K_##name,
#include "kernels.def"
    PG_K_COUNT
} pg_kernel_id;

/* Checks args (as many as kernel `id` takes) against the kernel, on `device`,
 * with messages that say `kname`, and launches it on s. 0, or -1 with an
 * exception set. */
int pg_kernel_run(pg_state *st, pg_kernel_id id, const char *kname,
                  PyObject *const *args, pg_dim3 grid, pg_dim3 block, int device,
                  const pg_stream_ref *s);
/* The kernel dtype (PG_F32...) of argument `name`, which must match *dtype
 * if that is set (>= 0); else TypeError. */
int pg_kernel_dtype_arg(const char *kname, const char *name, pg_array *a,
                        int float_only, int *dtype);
/* A Python or NumPy number that kernels.add takes for b. */
int pg_is_scalar(PyObject *o);

/* ---- ops.c: add, add_one and the elementwise operators ------------------------ */

extern PyMethodDef pg_ops_functions[];
/* out = a <op> b (PG_OP_ADD ... PG_OP_GREATER_EQUAL) as NumPy computes it:
 * DeviceArrays and scalars, broadcasting, NumPy's promotion (NEP 50) and
 * errors, out= with NumPy's casting rule, overlap as if buffered. out may be
 * NULL (a new array). A new reference, or NULL. */
PyObject *pg_binary(pg_state *st, int op, PyObject *a, PyObject *b, PyObject *out,
                    const pg_stream_ref *s, int stream_given);
/* The number protocol and rich comparison of DeviceArray. */
PyObject *pg_array_add(PyObject *a, PyObject *b);
PyObject *pg_array_subtract(PyObject *a, PyObject *b);
PyObject *pg_array_multiply(PyObject *a, PyObject *b);
PyObject *pg_array_iadd(PyObject *a, PyObject *b);
PyObject *pg_array_isubtract(PyObject *a, PyObject *b);
PyObject *pg_array_imultiply(PyObject *a, PyObject *b);
PyObject *pg_array_richcompare(PyObject *a, PyObject *b, int op);
/* DeviceArray.__array_ufunc__ (NEP 13): numpy.add, subtract, multiply, the
 * comparisons and matmul called with two operands (and at most out=) run
 * here, as the operators do; anything else goes to
 * pygpu._ops.ufunc.array_ufunc(ufunc, method, inputs, kwargs). */
PyObject *pg_array_ufunc(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);
/* An operator with no C path (a / b, -a, a &= b, ...): the result of
 * pygpu._ops.ufunc.operator(name, a, b, inplace), name being NumPy's ufunc
 * ("divide", "negative", ...) and b NULL for a unary operator. */
PyObject *pg_python_operator(const char *name, PyObject *a, PyObject *b, int inplace);
/* a ** b, NumPy's: its shortcuts for a Python int 2 or -1 or a Python float 0.5 */
PyObject *pg_python_power(PyObject *a, PyObject *b, int inplace);
/* a.<name>() (sum, max, mean, argmax, ...) with no arguments but an int axis
 * (axis: that int or None) from a plan of pygpu._ops.reduction: 1 with *res
 * set, 0 where there is none, -1 on error */
int pg_replay_reduction(pg_state *st, const char *name, PyObject *a, PyObject *axis,
                        PyObject **res);

/* ---- matmul.c: matmul and @, by the BLAS library or pygpu's kernels ---------- */

extern PyMethodDef pg_matmul_functions[];
/* a @ b as numpy.matmul (method "auto"), or by one of the kernels of
 * kernels.def ("naive", "shared", "tiled"); into out if not NULL; on stream
 * (NULL or None: the current one). A new reference, or NULL. */
PyObject *pg_matmul(pg_state *st, PyObject *a, PyObject *b, const char *method,
                    PyObject *out, PyObject *stream);
PyObject *pg_array_matmul(PyObject *a, PyObject *b);

/* ---- graph.c: CUDA graphs by stream capture ------------------------------------ */

extern PyType_Spec pg_graph_spec;

/* ---- rawkernel.c: Module, Function, In/Out/InOut, NVRTC's Python face ---------- */

extern PyType_Spec pg_module_spec;
extern PyType_Spec pg_function_spec;
extern PyType_Spec pg_hostarg_spec;
extern PyMethodDef pg_rawkernel_functions[];
int pg_rawkernel_init(PyObject *module, pg_state *st);

#endif /* PYGPU_H */
