/* Your own kernels: a Module of compiled device code (loaded from an image
 * that NVRTC made at run time) and its Functions, launched with the same
 * kernel[grid, block, stream, shared_bytes] syntax and the same bound-launch
 * type as the prebuilt kernels; In/Out/InOut host arguments; the Python face
 * of the runtime table's compiler (_nvrtc_load, _nvrtc_compile,
 * CompileError). Every argument is checked against the compiled kernel's
 * parameters before launching. The disk cache and the NVRTC search live in
 * pygpu/rawkernel.py; NVRTC itself is reached through the runtime table
 * (rt_nvrtc.c). */
#include <stdlib.h>
#include <string.h>

#include "pygpu.h"

/* NVRTC on a backend that cannot run what it makes. */
static PyObject *
no_runtime_compile(const pg_backend *rt)
{
    return PyErr_Format(PyExc_NotImplementedError,
                        "NVRTC compiles kernels for a real GPU; pygpu's %s runs "
                        "kernels that the host C++ compiler makes (pygpu.RawKernel "
                        "does that)",
                        rt->name);
}

/* The backend whose compiler to use: compiling needs no device. */
static const pg_backend *
compiler_rt(pg_state *st)
{
    const pg_backend *rt = pg_rt_peek();
    if (rt == NULL) {
        return pg_get_rt(st); /* NoDeviceError, saying why there is none */
    }
    if (rt->compiler_load == NULL || rt->compile == NULL) {
        return (const pg_backend *)no_runtime_compile(rt);
    }
    return rt;
}

/* ---- the compiler, through the runtime table ------------------------------------ */

/* _nvrtc_load(path) -> (major, minor) */
static PyObject *
mod_nvrtc_load(PyObject *m, PyObject *arg)
{
    pg_state *st = pg_state_of_module(m);
    const char *path = PyUnicode_AsUTF8(arg);
    const pg_backend *rt;
    char errbuf[1024];
    int major = 0, minor = 0;
    if (path == NULL || (rt = compiler_rt(st)) == NULL) {
        return NULL;
    }
    if (rt->compiler_load(path, &major, &minor, errbuf, sizeof(errbuf)) < 0) {
        return PyErr_Format(PyExc_OSError, "%s", errbuf);
    }
    return Py_BuildValue("(ii)", major, minor);
}

static PyObject *
compile_error(pg_state *st, const char *what, const char *log)
{
    PyObject *exc = NULL, *logobj = NULL;
    exc = PyObject_CallFunction(st->CompileError, "s", what);
    logobj = PyUnicode_DecodeUTF8(log, (Py_ssize_t)strlen(log), "replace");
    if (exc != NULL && logobj != NULL &&
        PyObject_SetAttrString(exc, "log", logobj) == 0) {
        PyErr_SetObject(st->CompileError, exc);
    }
    Py_XDECREF(exc);
    Py_XDECREF(logobj);
    return NULL;
}

/* _host_modules() -> whether kernels are compiled by the host C++ compiler
 * (rawkernel.py's compile_host) rather than by NVRTC */
static PyObject *
mod_host_modules(PyObject *m, PyObject *Py_UNUSED(arg))
{
    const pg_backend *rt = pg_get_rt(pg_state_of_module(m));
    if (rt == NULL) {
        return NULL;
    }
    return PyBool_FromLong((rt->caps & PG_CAP_HOST_MODULES) != 0);
}

/* The strings of a tuple as a PyMem array of C strings (borrowed from the
 * tuple's str objects); NULL with an exception if one is not a str. */
static const char **
c_strings(PyObject *tuple, const char *what)
{
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    const char **out;
    if (n > INT_MAX - 1) {
        PyErr_Format(PyExc_ValueError, "too many %s", what);
        return NULL;
    }
    if ((out = PyMem_Calloc((size_t)n + 1, sizeof(char *))) == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(tuple, i)) ||
            (out[i] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(tuple, i))) == NULL) {
            PyErr_Format(PyExc_TypeError, "%s must be strings", what);
            PyMem_Free(out);
            return NULL;
        }
    }
    return out;
}

/* _sim_schedule(seed) -> the previous seed: None (threads and blocks in
 * order) or an int (shuffled by that seed) */
static PyObject *
mod_sim_schedule(PyObject *Py_UNUSED(m), PyObject *arg)
{
    int shuffle;
    uint64_t seed;
    unsigned long long want = 0;
    if (arg != Py_None) {
        want =
            PyLong_Check(arg) ? PyLong_AsUnsignedLongLong(arg) : (unsigned long long)-1;
        if (!PyLong_Check(arg) ||
            (want == (unsigned long long)-1 && PyErr_Occurred())) {
            PyErr_Clear();
            PyErr_SetString(
                PyExc_TypeError,
                "the schedule's seed must be None (in order) or an int from 0 "
                "to 2**64 - 1");
            return NULL;
        }
    }
    pg_sim_get_schedule(&shuffle, &seed);
    pg_sim_set_schedule(arg != Py_None, (uint64_t)want);
    return shuffle ? PyLong_FromUnsignedLongLong(seed) : Py_NewRef(Py_None);
}

/* _nvrtc_compile(source, name, options, name_expressions)
 *     -> (cubin bytes, log, lowered names) */
static PyObject *
mod_nvrtc_compile(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pg_state *st = pg_state_of_module(m);
    const pg_backend *rt;
    pg_compile_job job = {0};
    char errbuf[512];
    PyObject *res = NULL, *names = NULL;
    int rc;
    if (nargs != 4 || !PyTuple_Check(args[2]) || !PyTuple_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "_nvrtc_compile(source, name, options, name_expressions): "
                        "two tuples of str");
        return NULL;
    }
    if ((rt = compiler_rt(st)) == NULL) {
        return NULL;
    }
    job.source = PyUnicode_AsUTF8(args[0]);
    job.name = PyUnicode_AsUTF8(args[1]);
    if (job.source == NULL || job.name == NULL) {
        return NULL;
    }
    job.nopts = (int)PyTuple_GET_SIZE(args[2]);
    job.nnames = (int)PyTuple_GET_SIZE(args[3]);
    if ((job.opts = c_strings(args[2], "options")) == NULL ||
        (job.names = c_strings(args[3], "name expressions")) == NULL) {
        goto done;
    }
    /* the strings point into str objects that args keep alive */
    Py_BEGIN_ALLOW_THREADS
        rc = rt->compile(&job, errbuf, sizeof(errbuf));
    Py_END_ALLOW_THREADS
    switch (rc) {
    case PG_COMPILE_OK:
        if ((names = PyTuple_New(job.nnames)) == NULL) {
            break;
        }
        for (int i = 0, at = 0; i < job.nnames; i++) {
            PyObject *s = PyUnicode_FromString(job.lowered + at);
            if (s == NULL) {
                goto done;
            }
            at += (int)strlen(job.lowered + at) + 1;
            PyTuple_SET_ITEM(names, i, s);
        }
        res = Py_BuildValue("(y#sO)", job.image, (Py_ssize_t)job.size,
                            job.log != NULL ? job.log : "", names);
        break;
    case PG_COMPILE_NOT_LOADED: PyErr_SetString(PyExc_RuntimeError, errbuf); break;
    case PG_COMPILE_NO_MEMORY: PyErr_NoMemory(); break;
    default: compile_error(st, errbuf, job.log != NULL ? job.log : ""); break;
    }
done:
    Py_XDECREF(names);
    free(job.image);
    free(job.log);
    free(job.lowered);
    PyMem_Free((void *)job.opts);
    PyMem_Free((void *)job.names);
    return res;
}

/* ---- Module ------------------------------------------------------------------ */

/* Holds no Python object: not a GC type. */
typedef struct {
    PyObject_HEAD
    void *handle;
    int device;
} pg_module;

/* A kernel of a Module, launchable (the head) as a "module" kind. */
typedef struct {
    pg_launchable head; /* head.name is cname, head.nargs the parameter count */
    PyObject *module;   /* keeps the module loaded */
    PyObject *name;
    char *cname; /* PyMem; freed only in dealloc, so launches may borrow it */
    void *handle;
    int device;
    size_t *sizes; /* head.nargs of them: bytes of each parameter */
} pg_function;

/* Holds the host array; In, Out and InOut (rawkernel.py) subclass it. */
typedef struct {
    PyObject_HEAD
    PyObject *array;
    int mode; /* 1 In, 2 Out, 3 InOut */
} pg_hostarg;

static PyObject *
Module_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"image", NULL};
    pg_state *st = pg_state_of_type(type);
    const pg_backend *rt;
    Py_buffer image;
    pg_module *mod;
    pg_status s;
    if (st == NULL ||
        !PyArg_ParseTupleAndKeywords(args, kwargs, "y*:Module", kwlist, &image)) {
        return NULL;
    }
    if ((rt = pg_get_rt(st)) == NULL) {
        PyBuffer_Release(&image);
        return NULL;
    }
    /* images come from the run-time compiler, or from the host C++ compiler
     * (a shared object's path): a backend with neither could run none */
    if (!(rt->caps & (PG_CAP_RUNTIME_COMPILE | PG_CAP_HOST_MODULES))) {
        PyBuffer_Release(&image);
        return no_runtime_compile(rt);
    }
    if ((rt->caps & PG_CAP_HOST_MODULES) &&
        memchr(image.buf, 0, (size_t)image.len) == NULL) {
        PyBuffer_Release(&image);
        PyErr_SetString(PyExc_ValueError,
                        "on this backend a module is the NUL-terminated path of a "
                        "shared object that pygpu.RawModule compiled");
        return NULL;
    }
    mod = PyObject_New(pg_module, type);
    if (mod == NULL) {
        PyBuffer_Release(&image);
        return NULL;
    }
    mod->handle = NULL;
    s = PG_CALL(rt, get_device, (&mod->device));
    if (s.err == PG_SUCCESS) {
        s = PG_CALL(rt, ensure_context, ()); /* module loads need the context */
    }
    if (s.err == PG_SUCCESS) {
        void *handle = NULL;
        Py_BEGIN_ALLOW_THREADS
            s = PG_CALL(rt, module_load, (&handle, image.buf));
        Py_END_ALLOW_THREADS
        mod->handle = s.err == PG_SUCCESS ? handle : NULL;
    }
    PyBuffer_Release(&image);
    if (pg_check(st, s) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return (PyObject *)mod;
}

static void
Module_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    pg_module *m = (pg_module *)self;
    if (m->handle != NULL && !pg_is_finalizing() && !pg_context_unusable()) {
        (void)pg_rt()->module_unload(m->handle);
    }
    tp->tp_free(self);
    Py_DECREF(tp);
}

static const pg_launch_kind module_kind;

static PyObject *
Module_get_function(PyObject *self, PyObject *args)
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    pg_module *m = (pg_module *)self;
    pg_function *f;
    PyObject *name, *known = Py_None;
    const char *cname;
    size_t len;
    pg_status s;
    if (!PyArg_ParseTuple(args, "U|O:get_function", &name, &known)) {
        return NULL;
    }
    if (known != Py_None && !PyTuple_Check(known)) {
        return PyErr_Format(
            PyExc_TypeError,
            "get_function: sizes must be a tuple of ints or None, not %s",
            Py_TYPE(known)->tp_name);
    }
    if (st == NULL || (cname = PyUnicode_AsUTF8(name)) == NULL) {
        return NULL;
    }
    f = PyObject_GC_New(pg_function, st->FunctionType);
    if (f == NULL) {
        return NULL;
    }
    len = strlen(cname);
    f->module = Py_NewRef(self);
    f->name = Py_NewRef(name);
    f->cname = PyMem_Malloc(len + 1);
    f->device = m->device;
    f->handle = NULL;
    f->sizes = NULL;
    f->head.kind = &module_kind;
    f->head.last_key[0] = 0;
    f->head.last_launch = NULL;
    f->head.name = f->cname;
    f->head.usage = NULL;
    f->head.nargs = 0;
    f->head.device = m->device;
    PyObject_GC_Track(f);
    if (f->cname == NULL) {
        Py_DECREF(f);
        return PyErr_NoMemory();
    }
    memcpy(f->cname, cname, len + 1);
    s = PG_CALL(pg_rt(), module_function, (&f->handle, m->handle, cname));
    if (s.err != PG_SUCCESS) {
        Py_DECREF(f);
        if (s.err == PG_ERR_NOT_FOUND) {
            return PyErr_Format(PyExc_AttributeError,
                                "the module has no kernel named '%s' (a kernel is "
                                "found by its name, extern \"C\" or C++; a template's "
                                "instance by its name expression)",
                                cname);
        }
        return pg_raise(st, s.err, s.call);
    }
    if (known != Py_None) { /* the parameters, as the image says (pygpu/rawkernel.py) */
        Py_ssize_t n = PyTuple_GET_SIZE(known);
        f->sizes = PyMem_Malloc(sizeof(size_t) * (size_t)(n > 0 ? n : 1));
        if (f->sizes == NULL) {
            Py_DECREF(f);
            return PyErr_NoMemory();
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            size_t size = PyLong_AsSize_t(PyTuple_GET_ITEM(known, i));
            if (size == (size_t)-1 && PyErr_Occurred()) {
                Py_DECREF(f);
                return NULL;
            }
            f->sizes[i] = size;
        }
        f->head.nargs = (int)n;
        return (PyObject *)f;
    }
    /* else asked of the driver, one index past the last (an API error that
     * compute-sanitizer reports: only for images pygpu cannot read) */
    for (;;) {
        size_t offset = 0, size = 0;
        if (pg_rt()->function_param(f->handle, (size_t)f->head.nargs, &offset, &size) !=
            PG_SUCCESS) {
            break;
        }
        size_t *grown =
            PyMem_Realloc(f->sizes, sizeof(size_t) * (size_t)(f->head.nargs + 1));
        if (grown == NULL) {
            Py_DECREF(f);
            return PyErr_NoMemory();
        }
        f->sizes = grown;
        f->sizes[f->head.nargs++] = size;
    }
    return (PyObject *)f;
}

/* get_global(name) -> (address, bytes) of the module's __device__ or
 * __constant__ variable `name`; None where the backend cannot say (rawkernel.py
 * then asks the simulator's module itself). */
static PyObject *
Module_get_global(PyObject *self, PyObject *arg)
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    pg_module *m = (pg_module *)self;
    const pg_backend *rt = pg_rt();
    const char *cname;
    void *ptr = NULL;
    size_t size = 0;
    pg_status s;
    if (st == NULL) {
        return NULL;
    }
    if (!PyUnicode_Check(arg)) {
        return PyErr_Format(PyExc_TypeError,
                            "get_global: name must be a str naming a __device__ or "
                            "__constant__ variable, not %.100s",
                            Py_TYPE(arg)->tp_name);
    }
    if ((cname = PyUnicode_AsUTF8(arg)) == NULL) {
        return NULL;
    }
    if (rt->module_global == NULL) {
        Py_RETURN_NONE;
    }
    s = PG_CALL(rt, module_global, (&ptr, &size, m->handle, cname));
    if (s.err == PG_ERR_NOT_FOUND || s.err == PG_ERR_INVALID_VALUE) {
        return PyErr_Format(
            PyExc_AttributeError,
            "the module has no __device__ or __constant__ variable named "
            "'%s'",
            cname);
    }
    if (pg_check(st, s) < 0) {
        return NULL;
    }
    return Py_BuildValue("(Kn)", (unsigned long long)(uintptr_t)ptr, (Py_ssize_t)size);
}

static PyMethodDef Module_methods[] = {
    {"get_global", Module_get_global, METH_O,
     "get_global($self, name, /)\n--\n\n(address, bytes) of the module's __device__ or "
     "__constant__ variable name; None where the backend cannot say."},
    {"get_function", Module_get_function, METH_VARARGS,
     "get_function($self, name, sizes=None, /)\n--\n\nThe kernel `name` (extern \"C\") "
     "of the module; sizes: its parameters' sizes in bytes, where the caller knows "
     "them "
     "(else the driver is asked)."},
    {NULL},
};

static PyType_Slot Module_slots[] = {
    {Py_tp_new, Module_new},
    {Py_tp_dealloc, Module_dealloc},
    {Py_tp_methods, Module_methods},
    {Py_tp_doc, "Module(image)\n--\n\nCompiled device code (cubin or PTX; on the "
                "simulator the NUL-terminated path of a shared object) loaded on the "
                "current device. Use pygpu.RawModule to compile CUDA C."},
    {0, NULL},
};

PyType_Spec pg_module_spec = {
    .name = "pygpu._core.Module",
    .basicsize = sizeof(pg_module),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Module_slots,
};

/* ---- Function ---------------------------------------------------------------- */

static int
Function_traverse(PyObject *self, visitproc visit, void *arg)
{
    pg_function *f = (pg_function *)self;
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(f->module);
    Py_VISIT(f->name);
    Py_VISIT(f->head.last_launch);
    return 0;
}

static int
Function_clear(PyObject *self)
{
    pg_function *f = (pg_function *)self;
    Py_CLEAR(f->module);
    Py_CLEAR(f->name);
    pg_launchable_forget(&f->head);
    return 0;
}

static void
Function_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    pg_function *f = (pg_function *)self;
    PyObject_GC_UnTrack(self);
    (void)Function_clear(self);
    PyMem_Free(f->sizes);
    PyMem_Free(f->cname);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *
Function_get(PyObject *self, void *closure)
{
    pg_function *f = (pg_function *)self;
    if (closure == NULL) {
        return Py_NewRef(f->name != NULL ? f->name : Py_None);
    }
    PyObject *t = PyTuple_New(f->head.nargs);
    for (int i = 0; t != NULL && i < f->head.nargs; i++) {
        PyObject *size = PyLong_FromSize_t(f->sizes[i]);
        if (size == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, size);
    }
    return t;
}

static PyObject *
Function_repr(PyObject *self)
{
    pg_function *f = (pg_function *)self;
    return PyUnicode_FromFormat("<pygpu kernel %s (%d parameters)>", f->cname,
                                f->head.nargs);
}

static PyGetSetDef Function_getset[] = {
    {"name", Function_get, NULL, "The kernel's name.", NULL},
    {"param_sizes", Function_get, NULL, "Bytes of each of the kernel's parameters.",
     (void *)1},
    {NULL},
};

static PyType_Slot Function_slots[] = {
    {Py_tp_dealloc, Function_dealloc},
    {Py_tp_traverse, Function_traverse},
    {Py_tp_clear, Function_clear},
    {Py_mp_subscript, pg_launchable_getitem},
    {Py_tp_repr, Function_repr},
    {Py_tp_getset, Function_getset},
    {Py_tp_doc, "A kernel of a Module: launch it as f[grid, block, stream, "
                "shared_bytes](*args), a pygpu.KernelLaunch."},
    {0, NULL},
};

PyType_Spec pg_function_spec = {
    .name = "pygpu._core.Function",
    .basicsize = sizeof(pg_function),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = Function_slots,
};

/* ---- launching: arguments become parameter bytes -------------------------------- */

typedef union {
    char bytes[16];
    void *ptr;
    int64_t i64;
    double f64;
    long double align;
} param_slot;

static int
size_error(pg_function *f, int i, const char *what, size_t given)
{
    PyErr_Format(PyExc_TypeError,
                 "%U: argument %d is %s, passed as %zu bytes, but the kernel's "
                 "parameter %d takes %zu bytes%s",
                 f->name, i, what, given, i, f->sizes[i],
                 f->sizes[i] == 4 ? " (pass numpy.int32(x) or numpy.float32(x))" : "");
    return -1;
}

/* A Python int (not a bool) as the int64 it passes as */
static int
pack_int(pg_function *f, int i, PyObject *o, param_slot *slot)
{
    if (f->sizes[i] != 8) {
        return size_error(f, i, "a Python int (int64)", 8);
    }
    slot->i64 = PyLong_AsLongLong(o);
    if (slot->i64 == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_OverflowError,
                         "%U: argument %d is the Python int %R, which does not fit "
                         "the int64 it passes as (-2**63 to 2**63 - 1); pass a "
                         "NumPy scalar of the parameter's type",
                         f->name, i, o);
        }
        return -1;
    }
    return 0;
}

/* A Python float as the float64 it passes as */
static int
pack_float(pg_function *f, int i, PyObject *o, param_slot *slot)
{
    if (f->sizes[i] != 8) {
        return size_error(f, i, "a Python float (float64)", 8);
    }
    slot->f64 = PyFloat_AS_DOUBLE(o);
    return 0;
}

/* Fills slot with argument i; DeviceArrays made for host arguments go to
 * *temps, a list made on first use: (DeviceArray, HostArg) pairs. */
static int
pack_arg(pg_state *st, pg_function *f, int i, PyObject *o, param_slot *slot,
         const pg_stream_ref *s, PyObject **temps, int device)
{
    size_t want = f->sizes[i];
    /* an int or a float first, by its exact type: the checks for a
     * DeviceArray (or subclass) and a HostArg below each walk its type's MRO
     * (a @cuda.jit array passes its shape and strides as ints) */
    if (PyLong_CheckExact(o)) {
        return pack_int(f, i, o, slot);
    }
    if (PyFloat_CheckExact(o)) {
        return pack_float(f, i, o, slot);
    }
    if (pg_array_check(st, o)) {
        pg_array *a = (pg_array *)o;
        if (pg_array_device(a) != device) {
            PyErr_Format(PyExc_ValueError,
                         "%U: argument %d is on device %d, but the launch is on "
                         "device %d",
                         f->name, i, pg_array_device(a), device);
            return -1;
        }
        if (want != sizeof(void *)) {
            return size_error(f, i, "a DeviceArray (a pointer)", sizeof(void *));
        }
        pg_array_note_stream(a, s);
        slot->ptr = a->data;
        return 0;
    }
    if (PyObject_TypeCheck(o, st->HostArgType)) {
        pg_hostarg *h = (pg_hostarg *)o;
        pg_array *d;
        if (want != sizeof(void *)) {
            return size_error(f, i, "an In/Out/InOut array (a pointer)",
                              sizeof(void *));
        }
        if (h->mode == 2) {
            PyArrayObject *arr = (PyArrayObject *)h->array;
            d = pg_array_empty(st, PyArray_NDIM(arr), PyArray_DIMS(arr),
                               PyArray_DESCR(arr), 0, s);
        }
        else {
            d = pg_array_from_host(st, h->array, NULL, s, 1);
        }
        if (d == NULL) {
            return -1;
        }
        PyObject *pair = Py_BuildValue("(NO)", (PyObject *)d, o);
        if (pair == NULL || (*temps == NULL && (*temps = PyList_New(0)) == NULL) ||
            PyList_Append(*temps, pair) < 0) {
            Py_XDECREF(pair);
            return -1;
        }
        Py_DECREF(pair);
        slot->ptr = d->data;
        return 0;
    }
    if (PyBool_Check(o)) {
        if (want != 1) {
            return size_error(f, i, "a bool", 1);
        }
        slot->bytes[0] = o == Py_True;
        return 0;
    }
    if (PyLong_Check(o)) {
        return pack_int(f, i, o, slot);
    }
    if (PyFloat_Check(o)) {
        return pack_float(f, i, o, slot);
    }
    if (PyArray_IsScalar(o, Generic) && !PyArray_IsScalar(o, Object)) {
        PyArray_Descr *d = PyArray_DescrFromScalar(o);
        size_t size = d == NULL ? 0 : (size_t)PyDataType_ELSIZE(d);
        char what[64];
        if (d == NULL) {
            return -1;
        }
        PyOS_snprintf(what, sizeof(what), "a %s", d->typeobj->tp_name);
        Py_DECREF(d);
        if (size != want || size > sizeof(slot->bytes)) {
            return size_error(f, i, what, size);
        }
        PyArray_ScalarAsCtype(o, slot->bytes);
        return 0;
    }
    PyObject *cai = PyObject_GetAttrString(o, "__cuda_array_interface__");
    if (cai != NULL) {
        PyObject *data = PyDict_Check(cai) ? PyDict_GetItemString(cai, "data") : NULL;
        int rc = -1;
        if (want != sizeof(void *)) {
            rc = size_error(f, i, "a CUDA array (a pointer)", sizeof(void *));
        }
        else if (data == NULL || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) < 1) {
            PyErr_Format(PyExc_TypeError,
                         "%U: argument %d has a malformed "
                         "__cuda_array_interface__",
                         f->name, i);
        }
        else {
            slot->ptr = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
            rc = slot->ptr == NULL && PyErr_Occurred() ? -1 : 0;
        }
        Py_DECREF(cai);
        return rc;
    }
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "%U: argument %d is a %.100s; kernels take DeviceArrays (or CUDA "
                 "arrays), numpy scalars, Python int (as int64) and float (as "
                 "float64), and In/Out/InOut(ndarray)%s",
                 f->name, i, Py_TYPE(o)->tp_name,
                 PyArray_Check(o) ? "; copy a numpy array with cuda.to_device or wrap "
                                    "it in pygpu.In(...)"
                                  : "");
    return -1;
}

/* For the simulator's checking mode: the bytes of the array each argument
 * came from (a DeviceArray, or the device copy of an In/Out/InOut, which
 * temps holds in the order of the arguments). */
static void
note_spans(pg_state *st, int nargs, PyObject *const *args, PyObject *temps)
{
    char *lo[64], *hi[64];
    Py_ssize_t next_temp = 0;
    int n = nargs < 64 ? nargs : 64;
    for (int i = 0; i < n; i++) {
        pg_array *a = NULL;
        if (pg_array_check(st, args[i])) {
            a = (pg_array *)args[i];
        }
        else if (PyObject_TypeCheck(args[i], st->HostArgType) && temps != NULL &&
                 next_temp < PyList_GET_SIZE(temps)) {
            a = (pg_array *)PyTuple_GET_ITEM(PyList_GET_ITEM(temps, next_temp++), 0);
        }
        if (a != NULL) {
            pg_array_span(a, &lo[i], &hi[i]);
        }
        else {
            lo[i] = hi[i] = NULL;
        }
    }
    pg_sim_set_arg_spans(n, lo, hi);
}

/* A cooperative launch (cfg->cooperative) of f on `device`: 0 if the device
 * runs such launches and the grid fits on it at once, else -1 with the
 * error CUDA would give, before anything runs (a GPU fails the launch with
 * cudaErrorCooperativeLaunchTooLarge). */
static int
check_cooperative(pg_state *st, pg_function *f, const pg_launch_config *cfg, int device)
{
    const pg_device_props *p = pg_device_props_get(st, device);
    unsigned long long blocks =
        (unsigned long long)cfg->grid.x * cfg->grid.y * cfg->grid.z;
    unsigned long long most = 0;
    pg_err err;
    if (p == NULL) {
        return -1;
    }
    if (!p->cooperative_launch) {
        PyErr_Format(PyExc_RuntimeError,
                     "cooperative launch of kernel %s: device %d (%s) does not run "
                     "cooperative launches (its cooperative_launch attribute is 0)",
                     f->cname, device, p->name);
        return -1;
    }
    err = pg_rt()->cooperative_max_blocks(f->handle, cfg->block, cfg->shared_bytes,
                                          device, &most);
    if (err != PG_SUCCESS) {
        pg_raise(st, err, pg_call_names.cooperative_max_blocks);
        return -1;
    }
    if (blocks > most) {
        PyErr_Format(
            PyExc_ValueError,
            "cooperative launch of kernel %s: the grid has %llu blocks (%u x %u "
            "x %u) but at most %llu blocks of %u threads%s can be resident at "
            "once on device %d (%s: the occupancy's blocks per "
            "multiprocessor x its %d multiprocessors); a cooperative launch "
            "needs every block resident (CUDA fails it with "
            "cudaErrorCooperativeLaunchTooLarge): launch at most %llu blocks, "
            "each looping over more of the work",
            f->cname, blocks, cfg->grid.x, cfg->grid.y, cfg->grid.z, most,
            cfg->block.x * cfg->block.y * cfg->block.z,
            cfg->shared_bytes ? " and their shared memory" : "", device, p->name,
            p->multiprocessor_count, most);
        return -1;
    }
    return 0;
}

/* The "module" kind of launch: arguments packed by the parameter sizes. */
static int
Function_check_and_launch(pg_state *st, pg_launchable *self,
                          const pg_launch_config *cfg, PyObject *const *args,
                          int device, const pg_stream_ref *s)
{
    pg_function *f = (pg_function *)self;
    int nargs = f->head.nargs;
    param_slot local[16], *slots = local;
    void *local_ptrs[16], **ptrs = local_ptrs;
    PyObject *temps = NULL;
    int rc = -1;
    pg_err err;
    if (f->module == NULL) {
        PyErr_SetString(PyExc_ReferenceError, "this kernel's module was cleared");
        return -1;
    }
    if (cfg->cooperative && check_cooperative(st, f, cfg, device) < 0) {
        return -1;
    }
    if (nargs > 16) {
        slots = PyMem_Calloc((size_t)nargs, sizeof(param_slot));
        ptrs = PyMem_Calloc((size_t)nargs, sizeof(void *));
        if (slots == NULL || ptrs == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    for (int i = 0; i < nargs; i++) {
        memset(&slots[i], 0, sizeof(param_slot));
        if (pack_arg(st, f, i, args[i], &slots[i], s, &temps, device) < 0) {
            goto done;
        }
        ptrs[i] = &slots[i];
    }
    if (pg_rt()->caps & PG_CAP_HOST_MODULES) {
        note_spans(st, nargs, args, temps);
    }
    err = (cfg->cooperative ? pg_rt()->launch_cooperative : pg_rt()->launch_function)(
        f->handle, cfg->grid, cfg->block, cfg->shared_bytes, s->handle, ptrs);
    if (err != PG_SUCCESS) {
        char call[160];
        PyOS_snprintf(call, sizeof(call), "%slaunch of kernel %s",
                      cfg->cooperative ? "cooperative " : "", f->cname);
        pg_raise(st, err, call);
        goto done;
    }
    /* Out and InOut: copy back (this waits for the kernel) */
    for (Py_ssize_t i = 0; temps != NULL && i < PyList_GET_SIZE(temps); i++) {
        PyObject *pair = PyList_GET_ITEM(temps, i);
        pg_hostarg *h = (pg_hostarg *)PyTuple_GET_ITEM(pair, 1);
        if (h->mode != 1 && pg_array_to_host(st, (pg_array *)PyTuple_GET_ITEM(pair, 0),
                                             (PyArrayObject *)h->array, s, 1) < 0) {
            goto done;
        }
    }
    rc = 0;
done:
    Py_XDECREF(temps);
    if (slots != local) {
        PyMem_Free(slots);
    }
    if (ptrs != local_ptrs) {
        PyMem_Free(ptrs);
    }
    return rc;
}

static const pg_launch_kind module_kind = {
    .name = "module",
    .dynamic_shared = 1,
    .cooperative = 1,
    .check_and_launch = Function_check_and_launch,
};

/* ---- In, Out, InOut --------------------------------------------------------- */

static PyObject *
HostArg_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"array", NULL};
    PyObject *array, *mode_obj;
    pg_hostarg *h;
    long mode;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", kwlist, &array)) {
        return NULL;
    }
    if (!PyArray_Check(array)) {
        return PyErr_Format(PyExc_TypeError, "%s() takes a numpy.ndarray, not %.100s",
                            type->tp_name, Py_TYPE(array)->tp_name);
    }
    if (pg_check_dtype(PyArray_DESCR((PyArrayObject *)array)) < 0) {
        return NULL;
    }
    mode_obj = PyObject_GetAttrString((PyObject *)type, "_mode");
    if (mode_obj == NULL) {
        return NULL;
    }
    mode = PyLong_AsLong(mode_obj);
    Py_DECREF(mode_obj);
    if (mode < 1 || mode > 3) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "use pygpu.In, pygpu.Out or pygpu.InOut");
        }
        return NULL;
    }
    if (mode != 1 &&
        PyArray_FailUnlessWriteable((PyArrayObject *)array, "the array") < 0) {
        return NULL;
    }
    h = (pg_hostarg *)type->tp_alloc(type, 0);
    if (h == NULL) {
        return NULL;
    }
    h->array = Py_NewRef(array);
    h->mode = (int)mode;
    return (PyObject *)h;
}

static int
HostArg_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(((pg_hostarg *)self)->array);
    return 0;
}

static int
HostArg_clear(PyObject *self)
{
    Py_CLEAR(((pg_hostarg *)self)->array);
    return 0;
}

static void
HostArg_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    (void)HostArg_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMemberDef HostArg_members[] = {
    {"array", Py_T_OBJECT_EX, offsetof(pg_hostarg, array), Py_READONLY,
     "The host array."},
    {NULL},
};

static PyType_Slot HostArg_slots[] = {
    {Py_tp_new, HostArg_new},           {Py_tp_dealloc, HostArg_dealloc},
    {Py_tp_traverse, HostArg_traverse}, {Py_tp_clear, HostArg_clear},
    {Py_tp_members, HostArg_members},   {0, NULL},
};

PyType_Spec pg_hostarg_spec = {
    .name = "pygpu._core.HostArg",
    .basicsize = sizeof(pg_hostarg),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = HostArg_slots,
};

PyMethodDef pg_rawkernel_functions[] = {
    {"_sim_schedule", mod_sim_schedule, METH_O,
     "_sim_schedule(seed)\n--\n\nThe simulator's order of threads and blocks: None "
     "(in order) or a seed (shuffled); returns the previous one."},
    {"_host_modules", mod_host_modules, METH_NOARGS,
     "_host_modules()\n--\n\nWhether kernels are compiled by the host C++ compiler "
     "(the simulator) rather than by NVRTC."},
    {"_nvrtc_load", mod_nvrtc_load, METH_O,
     "_nvrtc_load(path)\n--\n\nLoad NVRTC from path; returns its (major, minor)."},
    {"_nvrtc_compile", (PyCFunction)(void (*)(void))mod_nvrtc_compile, METH_FASTCALL,
     "_nvrtc_compile(source, name, options, name_expressions)\n--\n\n(cubin, log, "
     "lowered names), or CompileError."},
    {NULL},
};

int
pg_rawkernel_init(PyObject *module, pg_state *st)
{
    PyObject *dict = Py_BuildValue("{sO}", "log", Py_None);
    if (dict == NULL) {
        return -1;
    }
    st->CompileError = PyErr_NewExceptionWithDoc(
        "pygpu.CompileError",
        "NVRTC (or, on the simulator, the host C++ compiler) could not compile a "
        "kernel; `.log` holds its log.",
        PyExc_RuntimeError, dict);
    Py_DECREF(dict);
    if (st->CompileError == NULL ||
        PyModule_AddObjectRef(module, "CompileError", st->CompileError) < 0) {
        return -1;
    }
    return 0;
}
