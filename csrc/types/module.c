/* pygpu._core: module state, the exec slot (PEP 489), and module functions
 * about devices. */
#define PYGPU_IMPORT_NUMPY
#include "pygpu.h"

static PyObject *
mod_is_available(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    const pg_backend *rt = pg_rt_peek();
    int count = 0;
    pg_err err;
    if (rt == NULL) {
        Py_RETURN_FALSE;
    }
    Py_BEGIN_ALLOW_THREADS
        err = rt->device_count(&count);
    Py_END_ALLOW_THREADS
    if (err == PG_ERR_CONFIGURATION) { /* a bad setting is an error, not "no" */
        return pg_raise(pg_state_of_module(m), err, pg_call_names.device_count);
    }
    return PyBool_FromLong(err == PG_SUCCESS && count > 0);
}

static PyObject *
mod_is_simulator(PyObject *Py_UNUSED(m), PyObject *Py_UNUSED(ignored))
{
    const pg_backend *rt = pg_rt_peek();
    return PyBool_FromLong(rt != NULL && (rt->caps & PG_CAP_SIMULATED));
}

static PyObject *
mod_has_cuda(PyObject *Py_UNUSED(m), PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(pg_cuda_backend != NULL);
}

static PyObject *
mod_device_count(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    pg_state *st = pg_state_of_module(m);
    const pg_backend *rt = pg_get_rt(st);
    int count = 0;
    if (rt == NULL || PG_TRY(st, rt, device_count, (&count)) < 0) {
        return NULL;
    }
    return PyLong_FromLong(count);
}

static PyObject *
mod_get_device(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    pg_state *st = pg_state_of_module(m);
    const pg_backend *rt = pg_get_rt(st);
    int device = 0;
    if (rt == NULL || pg_current_device(st, rt, &device) < 0) {
        return NULL;
    }
    return PyLong_FromLong(device);
}

/* pygpu._ops.ufunc and reduction hand over their dicts of plans (ops.c's
 * replay_plan and pg_replay_reduction) */
static PyObject *
set_plans(PyObject **slot, PyObject *plans)
{
    if (!PyDict_CheckExact(plans)) {
        PyErr_SetString(PyExc_TypeError, "plans must be a dict");
        return NULL;
    }
    Py_XSETREF(*slot, Py_NewRef(plans));
    Py_RETURN_NONE;
}

static PyObject *
mod_set_ufunc_plans(PyObject *m, PyObject *plans)
{
    return set_plans(&pg_state_of_module(m)->py_plans, plans);
}

static PyObject *
mod_set_reduction_plans(PyObject *m, PyObject *plans)
{
    return set_plans(&pg_state_of_module(m)->py_reduction_plans, plans);
}

static PyObject *
mod_synchronize(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    pg_state *st = pg_state_of_module(m);
    const pg_backend *rt = pg_get_rt(st);
    pg_status s;
    if (rt == NULL) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
        s = PG_CALL(rt, synchronize, ());
    Py_END_ALLOW_THREADS
    if (pg_check(st, s) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
mod_versions(PyObject *Py_UNUSED(m), PyObject *Py_UNUSED(ignored))
{
    const pg_backend *rt = pg_rt_peek();
    if (rt == NULL) {
        return Py_BuildValue("{sssisi}", "backend", "none", "driver", 0, "runtime", 0);
    }
    return Py_BuildValue("{sssisi}", "backend", rt->name, "driver",
                         rt->driver_version(), "runtime", rt->runtime_version());
}

static PyObject *
mod_peer_access(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {"peer_access",
                                     2,
                                     3,
                                     {{"device", pg_conv_device},
                                      {"peer", pg_conv_device},
                                      {"enable", pg_conv_object_or_none}}};
    pg_state *st = pg_state_of_module(m);
    const pg_backend *rt = NULL;
    PyObject *enableobj = NULL;
    const char *call = NULL;
    int device = 0, peer = 0, can = 0, enable = 0;
    pg_status s;
    if (pg_parse(st, &sig, args, nargs, kwnames, &device, &peer, &enableobj) < 0) {
        return NULL;
    }
    if (enableobj != NULL && (enable = PyObject_IsTrue(enableobj)) < 0) {
        return NULL;
    }
    if (device == peer) {
        Py_RETURN_TRUE; /* a device's kernels reach its own memory */
    }
    rt = pg_get_rt(st);
    if (rt == NULL) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
        if (enable) {
            s.err = pg_peer_ensure(device, peer, &can, &call);
            s.call = call != NULL ? call : pg_call_names.enable_peer_access;
        }
        else {
            s = PG_CALL(rt, can_access_peer, (device, peer, &can));
        }
    Py_END_ALLOW_THREADS
    if (pg_check(st, s) < 0) {
        return NULL;
    }
    return PyBool_FromLong(can);
}

/* For tests of the backend's device checks: fills `a`'s whole buffer with
 * `value` by a kernel on the *current* device, whichever device owns it. */
static PyObject *
mod_fill_bytes_here(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames)
{
    static const pg_signature sig = {
        "_fill_bytes_here", 2, 2, {{"a", pg_conv_object}, {"value", pg_conv_object}}};
    pg_state *st = pg_state_of_module(m);
    const pg_backend *rt = NULL;
    PyObject *obj = NULL, *valueobj = NULL;
    pg_buffer *buf = NULL;
    unsigned char value;
    long v;
    if (pg_parse(st, &sig, args, nargs, kwnames, &obj, &valueobj) < 0) {
        return NULL;
    }
    if (!pg_array_check(st, obj)) {
        return PyErr_Format(PyExc_TypeError, "a must be a DeviceArray, not %.100s",
                            Py_TYPE(obj)->tp_name);
    }
    v = PyLong_AsLong(valueobj);
    if (v == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (v < 0 || v > 255) {
        return PyErr_Format(PyExc_ValueError,
                            "value must be a byte (0 to 255), not %ld", v);
    }
    value = (unsigned char)v;
    buf = ((pg_array *)obj)->buf;
    rt = pg_get_rt(st);
    if (rt == NULL ||
        pg_array_check_writeable((pg_array *)obj, "_fill_bytes_here") < 0) {
        return NULL;
    }
    if (pg_check(st, (pg_status){rt->kernels->fill(1, buf->ptr, (int64_t)buf->size,
                                                   &value, NULL),
                                 pg_kernel_names.fill}) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* An array's layout in @cuda.jit's launch keys: ndim * 4 + 2 * C-contiguous
 * + F-contiguous. */
static long
jit_layout(const pg_array *arr)
{
    return arr->nd * 4 + ((arr->flags & NPY_ARRAY_C_CONTIGUOUS) ? 2 : 0) +
           ((arr->flags & NPY_ARRAY_F_CONTIGUOUS) ? 1 : 0);
}

/* Whether a scalar argument is one the launch keys by its type alone: a
 * Python int that fits 64 bits, a float, bool or complex, a NumPy scalar. */
static int
jit_plain_scalar(PyObject *a)
{
    PyTypeObject *tp = Py_TYPE(a);
    if (tp == &PyLong_Type) {
        int overflow = 0;
        (void)PyLong_AsLongLongAndOverflow(a, &overflow);
        return !overflow;
    }
    return tp == &PyFloat_Type || tp == &PyBool_Type || tp == &PyComplex_Type ||
           PyArray_IsScalar(a, Generic);
}

/* pygpu._jit's launch, in C: for a call whose arguments are DeviceArrays and
 * Python or NumPy scalars, the key that the dispatcher's plans are kept
 * under, (device, (dtype, its layout as ndim * 4 + 2 * C-contiguous +
 * F-contiguous) for an array, the type for a scalar, ...), into *key; and
 * the kernel's C++ arguments, an array as itself (its address), its shape
 * and its strides, appended to `flat`. 1 done, 0 for any other argument
 * (the dispatcher's full typing takes it), -1 with an exception set. */
static int
jit_key_flat(pg_state *st, PyObject *const *args, Py_ssize_t n, PyObject **key,
             PyObject *flat)
{
    const pg_backend *rt = pg_get_rt(st);
    PyObject *k = NULL;
    Py_ssize_t i;
    int device = 0;
    *key = NULL;
    if (rt == NULL || pg_current_device(st, rt, &device) < 0) {
        return -1;
    }
    k = PyTuple_New(n + 1);
    if (k == NULL) {
        return -1;
    }
    PyTuple_SET_ITEM(k, 0, PyLong_FromLong(device));
    if (PyTuple_GET_ITEM(k, 0) == NULL) {
        goto error;
    }
    for (i = 0; i < n; i++) {
        PyObject *a = args[i], *item;
        PyTypeObject *tp = Py_TYPE(a);
        if (tp == st->DeviceArrayType) {
            pg_array *arr = (pg_array *)a;
            int d;
            PyObject *code = PyLong_FromLong(jit_layout(arr)); /* (dtype, layout) */
            item = code == NULL ? NULL : PyTuple_Pack(2, (PyObject *)arr->descr, code);
            Py_XDECREF(code);
            if (item == NULL || PyList_Append(flat, a) < 0) {
                Py_XDECREF(item);
                goto error;
            }
            PyTuple_SET_ITEM(k, i + 1, item);
            for (d = 0; d < 2 * arr->nd; d++) {
                npy_intp v = d < arr->nd ? arr->shape[d] : arr->strides[d - arr->nd];
                PyObject *o = PyLong_FromSsize_t(v);
                if (o == NULL || PyList_Append(flat, o) < 0) {
                    Py_XDECREF(o);
                    goto error;
                }
                Py_DECREF(o);
            }
            continue;
        }
        if (!jit_plain_scalar(a)) {
            Py_DECREF(k);
            return 0;
        }
        PyTuple_SET_ITEM(k, i + 1, Py_NewRef((PyObject *)tp));
        if (PyList_Append(flat, a) < 0) {
            goto error;
        }
    }
    *key = k;
    return 1;
error:
    Py_DECREF(k);
    return -1;
}

/* The raw signature of a call's arguments for pg_state's jit_last: per
 * argument its type, and for a DeviceArray its dtype object and layout, into
 * sig (3 words an argument), and into *nflat the number of the kernel's C++
 * arguments (an array is its address, shape and strides). 1 where the call
 * is one jit_key_flat keys (the same arguments, up to PG_JIT_LAST_ARGS of
 * them, and a Python int that fits 64 bits), else 0. */
#define PG_JIT_FLAT_MOST 64
static int
jit_signature(pg_state *st, PyObject *const *args, Py_ssize_t n, uintptr_t *sig,
              Py_ssize_t *nflat)
{
    Py_ssize_t i, f = 0;
    if (n > PG_JIT_LAST_ARGS) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        PyObject *a = args[i];
        PyTypeObject *tp = Py_TYPE(a);
        sig[3 * i] = (uintptr_t)tp;
        sig[3 * i + 1] = 0;
        sig[3 * i + 2] = 0;
        if (tp == st->DeviceArrayType) {
            pg_array *arr = (pg_array *)a;
            sig[3 * i + 1] = (uintptr_t)arr->descr;
            sig[3 * i + 2] = (uintptr_t)jit_layout(arr);
            f += 1 + 2 * (Py_ssize_t)arr->nd;
            continue;
        }
        if (!jit_plain_scalar(a)) {
            return 0;
        }
        f += 1;
    }
    if (f > PG_JIT_FLAT_MOST) {
        return 0;
    }
    *nflat = f;
    return 1;
}

/* hit = (compiled, KernelLaunch): the launch with the kernel's C++
 * arguments; a KernelError of it becomes error(compiled, exc), raised. */
static PyObject *
jit_launch(pg_state *st, PyObject *hit, PyObject *error, PyObject *const *flat,
           Py_ssize_t nflat)
{
    PyObject *res =
        PyObject_Vectorcall(PyTuple_GET_ITEM(hit, 1), flat, (size_t)nflat, NULL);
    if (res == NULL && PyErr_ExceptionMatches(st->KernelError)) {
        PyObject *type, *value, *tb, *mapped;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        mapped =
            PyObject_CallFunctionObjArgs(error, PyTuple_GET_ITEM(hit, 0), value, NULL);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        if (mapped != NULL) {
            PyErr_SetObject((PyObject *)Py_TYPE(mapped), mapped);
            Py_DECREF(mapped);
        }
    }
    if (res != NULL) {
        Py_SETREF(res, Py_NewRef(Py_None));
    }
    return res;
}

/* A repeat of the launch's last call (jit_signature's sig on `device`):
 * the C++ arguments built on the stack, and the launch. */
static PyObject *
jit_launch_again(pg_state *st, PyObject *hit, PyObject *error, PyObject *const *args,
                 Py_ssize_t n, Py_ssize_t nflat)
{
    PyObject *flat[PG_JIT_FLAT_MOST];
    PyObject *res = NULL;
    Py_ssize_t i, k = 0;
    for (i = 0; i < n; i++) {
        flat[k++] = Py_NewRef(args[i]);
        if (Py_TYPE(args[i]) == st->DeviceArrayType) {
            pg_array *arr = (pg_array *)args[i];
            for (int d = 0; d < 2 * arr->nd; d++) {
                PyObject *o = PyLong_FromSsize_t(
                    d < arr->nd ? arr->shape[d] : arr->strides[d - arr->nd]);
                if (o == NULL) {
                    goto done;
                }
                flat[k++] = o;
            }
        }
    }
    assert(k == nflat);
    res = jit_launch(st, hit, error, flat, nflat);
done:
    while (k > 0) {
        Py_DECREF(flat[--k]);
    }
    return res;
}

/* _LaunchCache: the base of @cuda.jit's Dispatcher. kernel[grid, block]
 * finds the launch of that configuration in C (_launches, a dict the
 * Dispatcher fills); a configuration not there, or one not made of ints
 * alone, is the Dispatcher's _configure(config). As a method of a Python
 * class __getitem__ cost a Python call on every launch. */
typedef struct {
    PyObject_HEAD
    PyObject *launches;
} pg_launch_cache;

static PyObject *
launch_cache_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)args;
    (void)kwargs;
    pg_launch_cache *self = (pg_launch_cache *)type->tp_alloc(type, 0);
    if (self != NULL && (self->launches = PyDict_New()) == NULL) {
        Py_CLEAR(self);
    }
    return (PyObject *)self;
}

/* 1 where config is (grid, block) of exact ints or tuples of them: the only
 * configurations _launches keeps (a dict finds (1.0, 128) and (True, 128)
 * under (1, 128), which the launch would refuse) */
static int
plain_config(PyObject *config)
{
    if (!PyTuple_CheckExact(config) || PyTuple_GET_SIZE(config) != 2) {
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        PyObject *v = PyTuple_GET_ITEM(config, i);
        if (PyTuple_CheckExact(v)) {
            for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(v); j++) {
                if (!PyLong_CheckExact(PyTuple_GET_ITEM(v, j))) {
                    return 0;
                }
            }
        }
        else if (!PyLong_CheckExact(v)) {
            return 0;
        }
    }
    return 1;
}

static PyObject *
launch_cache_subscript(PyObject *self, PyObject *config)
{
    if (plain_config(config)) {
        PyObject *launch =
            PyDict_GetItemWithError(((pg_launch_cache *)self)->launches, config);
        if (launch != NULL) {
            return Py_NewRef(launch);
        }
        if (PyErr_Occurred()) {
            return NULL;
        }
    }
    return PyObject_CallMethod(self, "_configure", "(O)", config);
}

/* _core._plain_config(config): what _configure asks before it keeps a launch */
static PyObject *
mod_plain_config(PyObject *m, PyObject *config)
{
    (void)m;
    return PyBool_FromLong(plain_config(config));
}

static int
launch_cache_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(((pg_launch_cache *)self)->launches);
    return 0;
}

static int
launch_cache_clear(PyObject *self)
{
    Py_CLEAR(((pg_launch_cache *)self)->launches);
    return 0;
}

static void
launch_cache_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    (void)launch_cache_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMemberDef launch_cache_members[] = {
    {"_launches", Py_T_OBJECT_EX, offsetof(pg_launch_cache, launches), Py_READONLY,
     "configuration -> its launch"},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot launch_cache_slots[] = {
    {Py_tp_new, launch_cache_new},
    {Py_tp_dealloc, launch_cache_dealloc},
    {Py_tp_traverse, launch_cache_traverse},
    {Py_tp_clear, launch_cache_clear},
    {Py_mp_subscript, launch_cache_subscript},
    {Py_tp_members, launch_cache_members},
    {Py_tp_doc, "The base of @cuda.jit's Dispatcher: kernel[grid, block] in C."},
    {0, NULL},
};

static PyType_Spec launch_cache_spec = {
    .name = "pygpu._core._LaunchCache",
    .basicsize = sizeof(pg_launch_cache),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = launch_cache_slots,
};

/* _jit_call(bound, error, slow, *args): kernel[grid, block](*args) of
 * @cuda.jit, which binds the first three with functools.partial, so that a
 * launch runs no Python. A repeat of the launch's last call (pg_state's
 * jit_last) launches at once. Else, where the key of jit_key_flat finds
 * (compiled, its KernelLaunch) in `bound`, the launch takes the flat
 * arguments as they are, and is remembered as the last. Anything else is
 * slow(args, (key, flat) or None): the dispatcher's typing, compiling and
 * converting, which fills `bound`. */
static PyObject *
mod_jit_call(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pg_state *st = pg_state_of_module(m);
    const pg_backend *rt = pg_get_rt(st);
    PyObject *key = NULL, *flat = NULL, *hit = NULL, *res = NULL, *targs = NULL;
    PyObject *fast = NULL;
    struct pg_jit_last *last = NULL;
    uintptr_t sig[3 * PG_JIT_LAST_ARGS];
    Py_ssize_t i, n = nargs - 3, nflat = 0;
    int r, device = 0;
    if (nargs < 3 || !PyDict_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_jit_call(bound, error, slow, *args)");
        return NULL;
    }
    if (rt == NULL || pg_current_device(st, rt, &device) < 0) {
        return NULL;
    }
    if (jit_signature(st, args + 3, n, sig, &nflat)) {
        last = &st->jit_last[((uintptr_t)args[0] >> 4) % PG_JIT_LAST];
        if (last->bound == args[0] && last->device == device && last->nargs == n &&
            memcmp(last->sig, sig, (size_t)(3 * n) * sizeof(uintptr_t)) == 0) {
            hit = Py_NewRef(last->hit);
            res = jit_launch_again(st, hit, args[1], args + 3, n, nflat);
            Py_DECREF(hit);
            return res;
        }
    }
    flat = PyList_New(0);
    if (flat == NULL) {
        return NULL;
    }
    r = jit_key_flat(st, args + 3, n, &key, flat);
    if (r < 0) {
        goto done;
    }
    if (r > 0) {
        hit = PyDict_GetItemWithError(args[0], key);
        if (hit == NULL && PyErr_Occurred()) {
            goto done;
        }
        if (hit != NULL && PyTuple_CheckExact(hit) && PyTuple_GET_SIZE(hit) == 2) {
            Py_INCREF(hit);
            PyObject *keep = last == NULL ? NULL : PyTuple_New(2 * n);
            if (keep != NULL) { /* the call to repeat next time */
                for (i = 0; i < 2 * n; i++) {
                    PyObject *o = (PyObject *)sig[3 * (i / 2) + i % 2];
                    PyTuple_SET_ITEM(keep, i, Py_NewRef(o != NULL ? o : Py_None));
                }
                Py_XSETREF(last->keep, keep);
                Py_XSETREF(last->bound, Py_NewRef(args[0]));
                Py_XSETREF(last->hit, Py_NewRef(hit));
                last->device = device;
                last->nargs = n;
                memcpy(last->sig, sig, (size_t)(3 * n) * sizeof(uintptr_t));
            }
            else {
                PyErr_Clear(); /* only not remembered */
            }
            res = jit_launch(st, hit, args[1], &PyList_GET_ITEM(flat, 0),
                             PyList_GET_SIZE(flat));
            goto done;
        }
        hit = NULL;
    }
    targs = PyTuple_New(n);
    if (targs == NULL) {
        goto done;
    }
    for (i = 0; i < n; i++) {
        PyTuple_SET_ITEM(targs, i, Py_NewRef(args[i + 3]));
    }
    fast = r > 0 ? PyTuple_Pack(2, key, flat) : Py_NewRef(Py_None);
    if (fast != NULL) {
        res = PyObject_CallFunctionObjArgs(args[2], targs, fast, NULL);
    }
done:
    Py_XDECREF(hit);
    Py_XDECREF(key);
    Py_XDECREF(flat);
    Py_XDECREF(targs);
    Py_XDECREF(fast);
    return res;
}

static PyMethodDef device_functions[] = {
    {"peer_access", (PyCFunction)(void (*)(void))mod_peer_access,
     METH_FASTCALL | METH_KEYWORDS,
     "peer_access(device, peer, enable=False)\n--\n\nTrue if kernels on `device` can "
     "be given access to memory of `peer` (cudaDeviceCanAccessPeer); True for the "
     "same device. With enable=True, also enables that access, once per pair in the "
     "process, and says whether it is enabled."},
    {"_fill_bytes_here", (PyCFunction)(void (*)(void))mod_fill_bytes_here,
     METH_FASTCALL | METH_KEYWORDS,
     "_fill_bytes_here(a, value)\n--\n\nFor tests: fills every byte of `a`'s buffer "
     "with `value` by a kernel on the current device, with no device check."},
    {"is_available", mod_is_available, METH_NOARGS,
     "is_available()\n--\n\nTrue if a device (or the simulator) can be used. "
     "Creates no CUDA context."},
    {"is_simulator", mod_is_simulator, METH_NOARGS,
     "is_simulator()\n--\n\nTrue if pygpu runs (or would run) on the CPU simulator."},
    {"has_cuda", mod_has_cuda, METH_NOARGS,
     "has_cuda()\n--\n\nTrue if this pygpu was built with the CUDA toolkit."},
    {"device_count", mod_device_count, METH_NOARGS,
     "device_count()\n--\n\nNumber of devices; NoDeviceError if there are none."},
    {"_set_ufunc_plans", mod_set_ufunc_plans, METH_O,
     "_set_ufunc_plans(plans, /)\n--\n\npygpu._ops.ufunc's plans, which the operators "
     "and __array_ufunc__ replay without the Python side."},
    {"_set_reduction_plans", mod_set_reduction_plans, METH_O,
     "_set_reduction_plans(plans, /)\n--\n\npygpu._ops.reduction's plans, which "
     "DeviceArray's reductions replay without the Python side when called with no "
     "arguments."},
    {"_plain_config", (PyCFunction)mod_plain_config, METH_O,
     "_plain_config(config)\n--\n\nWhether kernel[config] may be kept: (grid, block) "
     "of exact ints or tuples of them."},
    {"_jit_call", (PyCFunction)(void (*)(void))mod_jit_call, METH_FASTCALL,
     "_jit_call(bound, error, slow, *args)\n--\n\n@cuda.jit's kernel[grid, "
     "block](*args): "
     "a launch kept in bound under its arguments' key runs from C; else slow(args, "
     "fast)."},
    {"get_device", mod_get_device, METH_NOARGS,
     "get_device()\n--\n\nThe current device id of this thread."},
    {"synchronize", mod_synchronize, METH_NOARGS,
     "synchronize()\n--\n\nWait for all work on the current device to finish."},
    {"versions", mod_versions, METH_NOARGS,
     "versions()\n--\n\nDict of backend name and driver and runtime versions."},
    {NULL},
};

static int
add_functions(PyObject *module, PyMethodDef *defs)
{
    return PyModule_AddFunctions(module, defs);
}

static int
exec_module(PyObject *module)
{
    pg_state *st = pg_state_of_module(module);
    if (PyArray_ImportNumPyAPI() < 0) {
        return -1;
    }
    st->DeviceType =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &pg_device_spec, NULL);
    st->DeviceArrayType =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &pg_array_spec, NULL);
    st->BufferType =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &pg_buffer_spec, NULL);
    st->KernelType =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &pg_kernel_spec, NULL);
    st->LaunchType =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &pg_launch_spec, NULL);
    st->StreamType =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &pg_stream_spec, NULL);
    st->EventType =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &pg_event_spec, NULL);
    st->ModuleType =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &pg_module_spec, NULL);
    st->FunctionType =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &pg_function_spec, NULL);
    st->HostArgType =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &pg_hostarg_spec, NULL);
    st->GraphType =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &pg_graph_spec, NULL);
    PyTypeObject *types[] = {st->DeviceType, st->DeviceArrayType, st->KernelType,
                             st->LaunchType, st->StreamType,      st->EventType,
                             st->ModuleType, st->FunctionType,    st->HostArgType,
                             st->BufferType, st->GraphType};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (types[i] == NULL || PyModule_AddType(module, types[i]) < 0) {
            return -1;
        }
    }
    PyObject *launch_cache = PyType_FromModuleAndSpec(module, &launch_cache_spec, NULL);
    if (launch_cache == NULL ||
        PyModule_AddType(module, (PyTypeObject *)launch_cache) < 0) {
        Py_XDECREF(launch_cache);
        return -1;
    }
    Py_DECREF(launch_cache);
    if (pg_context_init() < 0 || pg_errors_init(module, st) < 0 ||
        pg_kernels_init(module, st) < 0 || pg_rawkernel_init(module, st) < 0) {
        return -1;
    }
    if (add_functions(module, device_functions) < 0 ||
        add_functions(module, pg_array_functions) < 0 ||
        add_functions(module, pg_ops_functions) < 0 ||
        add_functions(module, pg_matmul_functions) < 0 ||
        add_functions(module, pg_context_functions) < 0 ||
        add_functions(module, pg_pinned_functions) < 0 ||
        add_functions(module, pg_pool_functions) < 0 ||
        add_functions(module, pg_interop_functions) < 0 ||
        add_functions(module, pg_rawkernel_functions) < 0) {
        return -1;
    }
    if (PyModule_AddIntConstant(module, "MAXDIMS", PG_MAXDIMS) < 0) {
        return -1;
    }
    return 0;
}

static int
module_traverse(PyObject *module, visitproc visit, void *arg)
{
    pg_state *st = pg_state_of_module(module);
    Py_VISIT(st->DeviceType);
    Py_VISIT(st->DeviceArrayType);
    Py_VISIT(st->BufferType);
    Py_VISIT(st->KernelType);
    Py_VISIT(st->LaunchType);
    Py_VISIT(st->StreamType);
    Py_VISIT(st->EventType);
    Py_VISIT(st->CompileError);
    Py_VISIT(st->HostArgType);
    Py_VISIT(st->GraphType);
    Py_VISIT(st->FunctionType);
    Py_VISIT(st->ModuleType);
    Py_VISIT(st->CudaError);
    Py_VISIT(st->OutOfMemoryError);
    Py_VISIT(st->NoDeviceError);
    Py_VISIT(st->KernelError);
    Py_VISIT(st->KernelAssertionError);
    Py_VISIT(st->kernels);
    for (int i = 0; i < PG_OP_COUNT; i++) {
        Py_VISIT(st->ufuncs[i]);
    }
    Py_VISIT(st->matmul_ufunc);
    Py_VISIT(st->py_array_ufunc);
    Py_VISIT(st->py_operator);
    Py_VISIT(st->py_plans);
    Py_VISIT(st->py_reduction_plans);
    Py_VISIT(st->py_methods);
    for (int i = 0; i < PG_JIT_LAST; i++) {
        Py_VISIT(st->jit_last[i].bound);
        Py_VISIT(st->jit_last[i].hit);
        Py_VISIT(st->jit_last[i].keep);
    }
    for (int i = 0; i < PG_PLAN_LAST; i++) {
        Py_VISIT(st->plan_last[i].ident);
        Py_VISIT(st->plan_last[i].run);
        Py_VISIT(st->plan_last[i].keep);
    }
    return 0;
}

static int
module_clear(PyObject *module)
{
    pg_state *st = pg_state_of_module(module);
    Py_CLEAR(st->DeviceType);
    Py_CLEAR(st->DeviceArrayType);
    Py_CLEAR(st->BufferType);
    Py_CLEAR(st->KernelType);
    Py_CLEAR(st->LaunchType);
    Py_CLEAR(st->StreamType);
    Py_CLEAR(st->EventType);
    Py_CLEAR(st->CompileError);
    Py_CLEAR(st->HostArgType);
    Py_CLEAR(st->GraphType);
    Py_CLEAR(st->FunctionType);
    Py_CLEAR(st->ModuleType);
    Py_CLEAR(st->CudaError);
    Py_CLEAR(st->OutOfMemoryError);
    Py_CLEAR(st->NoDeviceError);
    Py_CLEAR(st->KernelError);
    Py_CLEAR(st->KernelAssertionError);
    if (st->kernels != NULL) { /* each kernel and its remembered launch: a cycle */
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(st->kernels, &pos, &key, &value)) {
            pg_launchable_forget((pg_launchable *)value);
        }
    }
    Py_CLEAR(st->kernels);
    for (int i = 0; i < PG_OP_COUNT; i++) {
        Py_CLEAR(st->ufuncs[i]);
    }
    Py_CLEAR(st->matmul_ufunc);
    Py_CLEAR(st->py_array_ufunc);
    Py_CLEAR(st->py_operator);
    Py_CLEAR(st->py_plans);
    Py_CLEAR(st->py_reduction_plans);
    Py_CLEAR(st->py_methods);
    for (int i = 0; i < PG_JIT_LAST; i++) {
        Py_CLEAR(st->jit_last[i].bound);
        Py_CLEAR(st->jit_last[i].hit);
        Py_CLEAR(st->jit_last[i].keep);
    }
    for (int i = 0; i < PG_PLAN_LAST; i++) {
        Py_CLEAR(st->plan_last[i].ident);
        Py_CLEAR(st->plan_last[i].run);
        Py_CLEAR(st->plan_last[i].keep);
    }
    return 0;
}

static void
module_free(void *module)
{
    (void)module_clear((PyObject *)module);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, exec_module},
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
    {0, NULL},
};

PyModuleDef pg_module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pygpu._core",
    .m_doc = "pygpu's C core: devices, device arrays, copies and prebuilt kernels.",
    .m_size = sizeof(pg_state),
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__core(void);

PyMODINIT_FUNC
PyInit__core(void)
{
    return PyModuleDef_Init(&pg_module_def);
}
