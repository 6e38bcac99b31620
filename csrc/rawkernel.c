/* Your own kernels: CUDA C compiled at run time by NVRTC (loaded on first use,
 * never at import), loaded as a module, launched with the same
 * kernel[grid, block, stream] syntax as the prebuilt kernels. Every argument
 * is checked against the compiled kernel's parameters before launching.
 * The disk cache and the NVRTC search live in pygpu/rawkernel.py. */
#include <dlfcn.h>
#include <string.h>

#include "pygpu.h"

/* ---- NVRTC, loaded with dlopen ------------------------------------------------ */

typedef struct _nvrtcProgram *nvrtc_program;
static struct {
    void *lib;
    int (*version)(int *, int *);
    int (*create)(nvrtc_program *, const char *, const char *, int, const char *const *,
                  const char *const *);
    int (*destroy)(nvrtc_program *);
    int (*compile)(nvrtc_program, int, const char *const *);
    int (*log_size)(nvrtc_program, size_t *);
    int (*log)(nvrtc_program, char *);
    int (*cubin_size)(nvrtc_program, size_t *);
    int (*cubin)(nvrtc_program, char *);
    const char *(*error_string)(int);
} nvrtc;

static PyObject *
mod_nvrtc_load(PyObject *m, PyObject *arg)
{
    const char *path = PyUnicode_AsUTF8(arg);
    void *lib;
    int major = 0, minor = 0;
    if (path == NULL) {
        return NULL;
    }
    if (nvrtc.lib == NULL) {
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL) {
            return PyErr_Format(PyExc_OSError, "cannot load NVRTC from %s: %s", path,
                                dlerror());
        }
#define SYM(field, name)                                                               \
    if ((*(void **)&nvrtc.field = dlsym(lib, name)) == NULL) {                         \
        dlclose(lib);                                                                  \
        memset(&nvrtc, 0, sizeof(nvrtc));                                              \
        return PyErr_Format(PyExc_OSError, "%s has no %s", path, name);                \
    }
        SYM(version, "nvrtcVersion");
        SYM(create, "nvrtcCreateProgram");
        SYM(destroy, "nvrtcDestroyProgram");
        SYM(compile, "nvrtcCompileProgram");
        SYM(log_size, "nvrtcGetProgramLogSize");
        SYM(log, "nvrtcGetProgramLog");
        SYM(cubin_size, "nvrtcGetCUBINSize");
        SYM(cubin, "nvrtcGetCUBIN");
        SYM(error_string, "nvrtcGetErrorString");
#undef SYM
        nvrtc.lib = lib;
    }
    (void)nvrtc.version(&major, &minor);
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

/* _nvrtc_compile(source, name, options) -> (cubin bytes, log) */
static PyObject *
mod_nvrtc_compile(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pg_state *st = pg_state_of_module(m);
    const char *source, *name, **opts = NULL;
    Py_ssize_t nopts;
    nvrtc_program prog = NULL;
    char *log = NULL;
    size_t log_size = 0, size = 0;
    PyObject *image = NULL, *res = NULL;
    int rc;
    if (nargs != 3 || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "_nvrtc_compile(source, name, options_tuple)");
        return NULL;
    }
    if (nvrtc.lib == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "NVRTC is not loaded");
        return NULL;
    }
    source = PyUnicode_AsUTF8(args[0]);
    name = PyUnicode_AsUTF8(args[1]);
    if (source == NULL || name == NULL) {
        return NULL;
    }
    nopts = PyTuple_GET_SIZE(args[2]);
    opts = PyMem_Calloc((size_t)nopts + 1, sizeof(char *));
    if (opts == NULL) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < nopts; i++) {
        opts[i] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args[2], i));
        if (opts[i] == NULL) {
            PyErr_SetString(PyExc_TypeError, "options must be strings");
            goto done;
        }
    }
    rc = nvrtc.create(&prog, source, name, 0, NULL, NULL);
    if (rc != 0) {
        compile_error(st, nvrtc.error_string(rc), "");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
        rc = nvrtc.compile(prog, (int)nopts, opts);
    Py_END_ALLOW_THREADS
    if (nvrtc.log_size(prog, &log_size) == 0 &&
        (log = PyMem_Malloc(log_size + 1)) != NULL) {
        log[0] = '\0';
        (void)nvrtc.log(prog, log);
        log[log_size] = '\0';
    }
    if (rc != 0) {
        char what[512];
        PyOS_snprintf(what, sizeof(what), "NVRTC could not compile %s (%s):\n%s", name,
                      nvrtc.error_string(rc), log != NULL ? log : "");
        compile_error(st, what, log != NULL ? log : "");
        goto done;
    }
    if (nvrtc.cubin_size(prog, &size) != 0 || size == 0) {
        compile_error(st,
                      "NVRTC made no machine code: pass --gpu-architecture=sm_XX, "
                      "not compute_XX",
                      log != NULL ? log : "");
        goto done;
    }
    image = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (image == NULL || nvrtc.cubin(prog, PyBytes_AS_STRING(image)) != 0) {
        goto done;
    }
    res = Py_BuildValue("(Os)", image, log != NULL ? log : "");
done:
    if (prog != NULL) {
        (void)nvrtc.destroy(&prog);
    }
    Py_XDECREF(image);
    PyMem_Free(log);
    PyMem_Free(opts);
    return res;
}

/* ---- Module ------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    void *handle;
    int device;
} pg_module;

typedef struct {
    PyObject_HEAD
    PyObject *module; /* keeps the module loaded */
    void *handle;
    PyObject *name;
    int device;
    int nparams;
    size_t *sizes;
} pg_function;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    pg_function *function;
    pg_dim3 grid, block;
    unsigned int shared_bytes;
    int has_stream;
    pg_stream_ref stream; /* stream.obj is a strong reference */
} pg_function_launch;

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
    pg_err err;
    if (st == NULL ||
        !PyArg_ParseTupleAndKeywords(args, kwargs, "y*:Module", kwlist, &image)) {
        return NULL;
    }
    if ((rt = pg_get_rt(st)) == NULL) {
        PyBuffer_Release(&image);
        return NULL;
    }
    if (rt->caps & PG_CAP_SIMULATED) {
        PyBuffer_Release(&image);
        PyErr_SetString(PyExc_NotImplementedError,
                        "kernels compiled at run time need a real GPU: pygpu's "
                        "simulator runs only its prebuilt kernels, whose source it "
                        "compiled in");
        return NULL;
    }
    mod = PyObject_New(pg_module, type);
    if (mod == NULL) {
        PyBuffer_Release(&image);
        return NULL;
    }
    mod->handle = NULL;
    err = rt->get_device(&mod->device);
    if (err == PG_SUCCESS) {
        /* the driver API needs the runtime's context: cudaFree(NULL) makes it */
        err = rt->free(NULL);
    }
    if (err == PG_SUCCESS) {
        Py_BEGIN_ALLOW_THREADS
            err = rt->module_load(&mod->handle, image.buf);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&image);
    if (err != PG_SUCCESS) {
        mod->handle = NULL;
        Py_DECREF(mod);
        return pg_raise(st, err, "cuModuleLoadData");
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

static PyObject *
Module_get_function(PyObject *self, PyObject *name)
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    pg_module *m = (pg_module *)self;
    pg_function *f;
    const char *cname;
    pg_err err;
    if (st == NULL || (cname = PyUnicode_AsUTF8(name)) == NULL) {
        return NULL;
    }
    f = PyObject_New(pg_function, st->FunctionType);
    if (f == NULL) {
        return NULL;
    }
    f->module = Py_NewRef(self);
    f->name = Py_NewRef(name);
    f->device = m->device;
    f->sizes = NULL;
    f->nparams = 0;
    err = pg_rt()->module_function(&f->handle, m->handle, cname);
    if (err != PG_SUCCESS) {
        Py_DECREF(f);
        if (err == 500) { /* CUDA_ERROR_NOT_FOUND */
            return PyErr_Format(PyExc_AttributeError,
                                "the module has no kernel named '%s'; declare it "
                                "extern \"C\" __global__ so that its name is not "
                                "mangled",
                                cname);
        }
        return pg_raise(st, err, "cuModuleGetFunction");
    }
    for (;;) { /* the parameters, as the compiled kernel has them */
        size_t offset = 0, size = 0;
        if (pg_rt()->function_param(f->handle, (size_t)f->nparams, &offset, &size) !=
            PG_SUCCESS) {
            break;
        }
        size_t *grown =
            PyMem_Realloc(f->sizes, sizeof(size_t) * (size_t)(f->nparams + 1));
        if (grown == NULL) {
            Py_DECREF(f);
            return PyErr_NoMemory();
        }
        f->sizes = grown;
        f->sizes[f->nparams++] = size;
    }
    return (PyObject *)f;
}

static PyMethodDef Module_methods[] = {
    {"get_function", Module_get_function, METH_O,
     "get_function($self, name, /)\n--\n\nThe kernel `name` (extern \"C\") of the "
     "module."},
    {NULL},
};

static PyType_Slot Module_slots[] = {
    {Py_tp_new, Module_new},
    {Py_tp_dealloc, Module_dealloc},
    {Py_tp_methods, Module_methods},
    {Py_tp_doc, "Module(image)\n--\n\nCompiled device code (cubin or PTX) loaded on "
                "the current device. Use pygpu.RawModule to compile CUDA C."},
    {0, NULL},
};

PyType_Spec pg_module_spec = {
    .name = "pygpu._core.Module",
    .basicsize = sizeof(pg_module),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Module_slots,
};

/* ---- Function ---------------------------------------------------------------- */

static void
Function_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    pg_function *f = (pg_function *)self;
    Py_CLEAR(f->module);
    Py_CLEAR(f->name);
    PyMem_Free(f->sizes);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *FunctionLaunch_vectorcall(PyObject *self, PyObject *const *args,
                                           size_t nargsf, PyObject *kwnames);

static PyObject *
Function_getitem(PyObject *self, PyObject *key)
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    pg_function *f = (pg_function *)self;
    pg_launch_config cfg;
    pg_function_launch *l;
    if (st == NULL ||
        pg_parse_launch_config(st, key, PyUnicode_AsUTF8(f->name), &cfg) < 0) {
        return NULL;
    }
    l = PyObject_New(pg_function_launch, st->FunctionLaunchType);
    if (l == NULL) {
        return NULL;
    }
    l->vectorcall = (vectorcallfunc)FunctionLaunch_vectorcall;
    l->function = (pg_function *)Py_NewRef(self);
    l->grid = cfg.grid;
    l->block = cfg.block;
    l->shared_bytes = cfg.shared_bytes;
    l->has_stream = cfg.has_stream;
    l->stream = cfg.stream;
    Py_XINCREF(l->stream.obj);
    return (PyObject *)l;
}

static PyObject *
Function_get(PyObject *self, void *closure)
{
    pg_function *f = (pg_function *)self;
    if (closure == NULL) {
        return Py_NewRef(f->name);
    }
    PyObject *t = PyTuple_New(f->nparams);
    for (int i = 0; t != NULL && i < f->nparams; i++) {
        PyTuple_SET_ITEM(t, i, PyLong_FromSize_t(f->sizes[i]));
    }
    return t;
}

static PyObject *
Function_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<pygpu kernel %U (%d parameters)>",
                                ((pg_function *)self)->name,
                                ((pg_function *)self)->nparams);
}

static PyGetSetDef Function_getset[] = {
    {"name", Function_get, NULL, "The kernel's name.", NULL},
    {"param_sizes", Function_get, NULL, "Bytes of each of the kernel's parameters.",
     (void *)1},
    {NULL},
};

static PyType_Slot Function_slots[] = {
    {Py_tp_dealloc, Function_dealloc},
    {Py_mp_subscript, Function_getitem},
    {Py_tp_repr, Function_repr},
    {Py_tp_getset, Function_getset},
    {Py_tp_doc, "A kernel of a Module: launch it as f[grid, block, stream, "
                "shared_bytes](*args)."},
    {0, NULL},
};

PyType_Spec pg_function_spec = {
    .name = "pygpu._core.Function",
    .basicsize = sizeof(pg_function),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
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

/* Fills slot with argument i; DeviceArrays made for host arguments go to temps. */
static int
pack_arg(pg_state *st, pg_function *f, int i, PyObject *o, param_slot *slot,
         const pg_stream_ref *s, PyObject *temps, int device)
{
    size_t want = f->sizes[i];
    if (pg_array_check(st, o)) {
        pg_array *a = (pg_array *)o;
        if (a->device != device) {
            PyErr_Format(PyExc_ValueError,
                         "%U: argument %d is on device %d, but the launch is on "
                         "device %d",
                         f->name, i, a->device, device);
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
        if (pair == NULL || PyList_Append(temps, pair) < 0) {
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
        if (want != 8) {
            return size_error(f, i, "a Python int (int64)", 8);
        }
        slot->i64 = PyLong_AsLongLong(o);
        return slot->i64 == -1 && PyErr_Occurred() ? -1 : 0;
    }
    if (PyFloat_Check(o)) {
        if (want != 8) {
            return size_error(f, i, "a Python float (float64)", 8);
        }
        slot->f64 = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    if (PyArray_IsScalar(o, Generic) && !PyArray_IsScalar(o, Object)) {
        PyArray_Descr *d = PyArray_DescrFromScalar(o);
        size_t size = d == NULL ? 0 : (size_t)PyDataType_ELSIZE(d);
        char what[64];
        if (d == NULL) {
            return -1;
        }
        PyOS_snprintf(what, sizeof(what), "a numpy %s", d->typeobj->tp_name);
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

static PyObject *
FunctionLaunch_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                          PyObject *kwnames)
{
    pg_function_launch *l = (pg_function_launch *)self;
    pg_function *f = l->function;
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    param_slot local[16], *slots = local;
    void *local_ptrs[16], **ptrs = local_ptrs;
    PyObject *temps = NULL, *res = NULL;
    pg_stream_ref s;
    int device = 0;
    pg_err err;
    if (st == NULL) {
        return NULL;
    }
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        return PyErr_Format(PyExc_TypeError, "%U takes positional arguments only",
                            f->name);
    }
    if (nargs != f->nparams) {
        return PyErr_Format(PyExc_TypeError, "%U takes %d argument%s, got %zd", f->name,
                            f->nparams, f->nparams == 1 ? "" : "s", nargs);
    }
    if (pg_rt()->get_device(&device) != PG_SUCCESS || device != f->device) {
        return PyErr_Format(PyExc_ValueError,
                            "%U was loaded on device %d; select that device to "
                            "launch it",
                            f->name, f->device);
    }
    if (l->has_stream) {
        s = l->stream;
    }
    else {
        (void)pg_resolve_stream(st, NULL, &s);
    }
    if (nargs > 16) {
        slots = PyMem_Calloc((size_t)nargs, sizeof(param_slot));
        ptrs = PyMem_Calloc((size_t)nargs, sizeof(void *));
        if (slots == NULL || ptrs == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    temps = PyList_New(0);
    if (temps == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        memset(&slots[i], 0, sizeof(param_slot));
        if (pack_arg(st, f, (int)i, args[i], &slots[i], &s, temps, device) < 0) {
            goto done;
        }
        ptrs[i] = &slots[i];
    }
    err = pg_rt()->launch_function(f->handle, l->grid, l->block, l->shared_bytes,
                                   s.handle, ptrs);
    if (err != PG_SUCCESS) {
        char call[160];
        PyOS_snprintf(call, sizeof(call), "launch of kernel %s",
                      PyUnicode_AsUTF8(f->name));
        pg_raise(st, err, call);
        goto done;
    }
    /* Out and InOut: copy back (this waits for the kernel) */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(temps); i++) {
        PyObject *pair = PyList_GET_ITEM(temps, i);
        pg_hostarg *h = (pg_hostarg *)PyTuple_GET_ITEM(pair, 1);
        if (h->mode != 1 && pg_array_to_host(st, (pg_array *)PyTuple_GET_ITEM(pair, 0),
                                             (PyArrayObject *)h->array, &s, 1) < 0) {
            goto done;
        }
    }
    res = Py_NewRef(Py_None);
done:
    Py_XDECREF(temps);
    if (slots != local) {
        PyMem_Free(slots);
        PyMem_Free(ptrs);
    }
    return res;
}

static void
FunctionLaunch_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    pg_function_launch *l = (pg_function_launch *)self;
    Py_CLEAR(l->function);
    Py_CLEAR(l->stream.obj);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMemberDef FunctionLaunch_members[] = {
    {"__vectorcalloffset__", Py_T_PYSSIZET, offsetof(pg_function_launch, vectorcall),
     Py_READONLY},
    {NULL},
};

static PyType_Slot FunctionLaunch_slots[] = {
    {Py_tp_dealloc, FunctionLaunch_dealloc},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_members, FunctionLaunch_members},
    {0, NULL},
};

PyType_Spec pg_function_launch_spec = {
    .name = "pygpu._core.FunctionLaunch",
    .basicsize = sizeof(pg_function_launch),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = FunctionLaunch_slots,
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

static void
HostArg_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    Py_CLEAR(((pg_hostarg *)self)->array);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMemberDef HostArg_members[] = {
    {"array", Py_T_OBJECT_EX, offsetof(pg_hostarg, array), Py_READONLY,
     "The host array."},
    {NULL},
};

static PyType_Slot HostArg_slots[] = {
    {Py_tp_new, HostArg_new},
    {Py_tp_dealloc, HostArg_dealloc},
    {Py_tp_members, HostArg_members},
    {0, NULL},
};

PyType_Spec pg_hostarg_spec = {
    .name = "pygpu._core.HostArg",
    .basicsize = sizeof(pg_hostarg),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .slots = HostArg_slots,
};

PyMethodDef pg_rawkernel_functions[] = {
    {"_nvrtc_load", mod_nvrtc_load, METH_O,
     "_nvrtc_load(path)\n--\n\nLoad NVRTC from path; returns its (major, minor)."},
    {"_nvrtc_compile", (PyCFunction)(void (*)(void))mod_nvrtc_compile, METH_FASTCALL,
     "_nvrtc_compile(source, name, options)\n--\n\n(cubin, log), or CompileError."},
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
        "pygpu.CompileError", "NVRTC could not compile a kernel; `.log` holds its log.",
        PyExc_RuntimeError, dict);
    Py_DECREF(dict);
    if (st->CompileError == NULL ||
        PyModule_AddObjectRef(module, "CompileError", st->CompileError) < 0) {
        return -1;
    }
    return 0;
}
