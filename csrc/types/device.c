/* pygpu.Device: one device of the chosen backend, its properties, and
 * `with device:` to make it current on this thread. */
#include <stddef.h>

#include "pygpu.h"

/* Properties never change while the process runs: read each device once. */
static pg_device_props props_cache[PG_MAX_DEVICES];
static char props_valid[PG_MAX_DEVICES];

const pg_device_props *
pg_device_props_get(pg_state *st, int device)
{
    const pg_backend *rt = pg_get_rt(st);
    int count = 0;
    pg_status s;
    if (rt == NULL || PG_TRY(st, rt, device_count, (&count)) < 0) {
        return NULL;
    }
    if (device < 0 || device >= count || device >= PG_MAX_DEVICES) {
        PyErr_Format(PyExc_ValueError,
                     "device %d does not exist: there %s %d device%s, "
                     "numbered 0 to %d",
                     device, count == 1 ? "is" : "are", count, count == 1 ? "" : "s",
                     count - 1);
        return NULL;
    }
    if (!props_valid[device]) {
        pg_device_props p;
        Py_BEGIN_ALLOW_THREADS
            s = PG_CALL(rt, get_props, (device, &p));
        Py_END_ALLOW_THREADS
        if (pg_check(st, s) < 0) {
            return NULL;
        }
        props_cache[device] = p;
        props_valid[device] = 1;
    }
    return &props_cache[device];
}

PyObject *
pg_device_new(pg_state *st, int id)
{
    const pg_device_props *p = pg_device_props_get(st, id);
    pg_device *self = NULL;
    if (p == NULL) {
        return NULL;
    }
    self = PyObject_New(pg_device, st->DeviceType);
    if (self == NULL) {
        return NULL;
    }
    self->id = id;
    self->props = *p;
    return (PyObject *)self;
}

static PyObject *
Device_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"id", NULL};
    pg_state *st = pg_state_of_type(type);
    PyObject *idobj = NULL;
    int id = 0, rc;
    if (st == NULL) {
        return NULL;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Device", kwlist, &idobj)) {
        return NULL;
    }
    if (idobj == NULL) {
        const pg_backend *rt = pg_get_rt(st);
        int cur = 0;
        if (rt == NULL || pg_current_device(st, rt, &cur) < 0) {
            return NULL;
        }
        return pg_device_new(st, cur);
    }
    if (PyBool_Check(idobj) || !PyIndex_Check(idobj)) {
        return PyErr_Format(PyExc_TypeError, "a device id must be an int, not %.100s",
                            Py_TYPE(idobj)->tp_name);
    }
    /* any int-like (a NumPy integer too), then the one check of a device id */
    if ((idobj = PyNumber_Index(idobj)) == NULL) {
        return NULL;
    }
    rc = pg_conv_device(st, idobj, &id);
    Py_DECREF(idobj);
    return rc < 0 ? NULL : pg_device_new(st, id);
}

static void
Device_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

#define DEV(o) ((pg_device *)(o))

static PyObject *
Device_repr(PyObject *self)
{
    const pg_device_props *p = &DEV(self)->props;
    return PyUnicode_FromFormat(
        "<pygpu.Device %d: %s, compute capability %d.%d%s>", DEV(self)->id, p->name,
        p->major, p->minor, (pg_rt()->caps & PG_CAP_SIMULATED) ? ", simulated" : "");
}

static PyObject *
Device_richcompare(PyObject *a, PyObject *b, int op)
{
    if (!PyObject_TypeCheck(b, Py_TYPE(a)) || (op != Py_EQ && op != Py_NE)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    int same = DEV(a)->id == DEV(b)->id;
    return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static Py_hash_t
Device_hash(PyObject *self)
{
    return (Py_hash_t)DEV(self)->id + 1;
}

static PyObject *
Device_mem_info(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    const pg_backend *rt = st == NULL ? NULL : pg_get_rt(st);
    size_t free_bytes = 0, total_bytes = 0;
    int prev = 0;
    pg_status s;
    if (rt == NULL || pg_device_push(st, rt, DEV(self)->id, &prev) < 0) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
        s = PG_CALL(rt, mem_get_info, (&free_bytes, &total_bytes));
    Py_END_ALLOW_THREADS
    pg_device_pop(rt, prev);
    if (pg_check(st, s) < 0) {
        return NULL;
    }
    return Py_BuildValue("(nn)", (Py_ssize_t)free_bytes, (Py_ssize_t)total_bytes);
}

static PyObject *
Device_synchronize(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    const pg_backend *rt = st == NULL ? NULL : pg_get_rt(st);
    int prev = 0;
    pg_status s;
    if (rt == NULL || pg_device_push(st, rt, DEV(self)->id, &prev) < 0) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
        s = PG_CALL(rt, synchronize, ());
    Py_END_ALLOW_THREADS
    pg_device_pop(rt, prev);
    if (pg_check(st, s) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
Device_select(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    const pg_backend *rt = st == NULL ? NULL : pg_get_rt(st);
    if (rt == NULL || PG_TRY(st, rt, set_device, (DEV(self)->id)) < 0) {
        return NULL;
    }
    return Py_NewRef(self);
}

static PyObject *
Device_enter(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    const pg_backend *rt = st == NULL ? NULL : pg_get_rt(st);
    PyObject *stack = NULL, *prev_obj = NULL;
    int prev = 0;
    if (rt == NULL || (stack = pg_thread_stack("pygpu.device_stack")) == NULL) {
        return NULL;
    }
    if (pg_device_push(st, rt, DEV(self)->id, &prev) < 0) {
        return NULL;
    }
    prev_obj = PyLong_FromLong(prev);
    if (prev_obj == NULL || PyList_Append(stack, prev_obj) < 0) {
        Py_XDECREF(prev_obj);
        pg_device_pop(rt, prev);
        return NULL;
    }
    Py_DECREF(prev_obj);
    return Py_NewRef(self);
}

static PyObject *
Device_exit(PyObject *self, PyObject *Py_UNUSED(args))
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    const pg_backend *rt = st == NULL ? NULL : pg_get_rt(st);
    PyObject *stack = NULL;
    Py_ssize_t n;
    long prev;
    if (rt == NULL || (stack = pg_thread_stack("pygpu.device_stack")) == NULL) {
        return NULL;
    }
    n = PyList_GET_SIZE(stack);
    if (n == 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Device.__exit__ without a matching __enter__");
        return NULL;
    }
    prev = PyLong_AsLong(PyList_GET_ITEM(stack, n - 1));
    if (PyList_SetSlice(stack, n - 1, n, NULL) < 0) {
        return NULL;
    }
    pg_device_pop(rt, (int)prev);
    Py_RETURN_FALSE;
}

static PyObject *
dim_tuple(const int d[3])
{
    return Py_BuildValue("(iii)", d[0], d[1], d[2]);
}

static PyObject *Device_get_attributes(PyObject *self, void *closure);

static PyObject *
Device_get(PyObject *self, void *closure)
{
    const pg_device_props *p = &DEV(self)->props;
    switch ((int)(intptr_t)closure) {
    case 0: return PyLong_FromLong(DEV(self)->id);
    case 1: return PyUnicode_FromString(p->name);
    case 2: return Py_BuildValue("(ii)", p->major, p->minor);
    case 3: return PyLong_FromSize_t(p->total_memory);
    case 4: return PyLong_FromLong(p->multiprocessor_count);
    case 5: return PyLong_FromLong(p->warp_size);
    case 6: return PyLong_FromLong(p->max_threads_per_block);
    case 7: return dim_tuple(p->max_block_dim);
    case 8: return dim_tuple(p->max_grid_dim);
    case 9: return PyLong_FromSize_t(p->shared_memory_per_block);
    case 10: return PyUnicode_FromString(p->pci_bus_id);
    case 11: return PyBool_FromLong((pg_rt()->caps & PG_CAP_SIMULATED) != 0);
    default: return Device_get_attributes(self, NULL);
    }
}

#define ADD_ATTR(key, value)                                                           \
    do {                                                                               \
        PyObject *v_ = (value);                                                        \
        if (v_ == NULL || PyDict_SetItemString(d, key, v_) < 0) {                      \
            Py_XDECREF(v_);                                                            \
            goto error;                                                                \
        }                                                                              \
        Py_DECREF(v_);                                                                 \
    } while (0)

static PyObject *
Device_get_attributes(PyObject *self, void *Py_UNUSED(closure))
{
    const pg_device_props *p = &DEV(self)->props;
    PyObject *d = PyDict_New();
    if (d == NULL) {
        return NULL;
    }
    ADD_ATTR("shared_memory_per_block_optin",
             PyLong_FromSize_t(p->shared_memory_per_block_optin));
    ADD_ATTR("shared_memory_per_multiprocessor",
             PyLong_FromSize_t(p->shared_memory_per_multiprocessor));
    ADD_ATTR("max_threads_per_multiprocessor",
             PyLong_FromLong(p->max_threads_per_multiprocessor));
    ADD_ATTR("registers_per_block", PyLong_FromLong(p->registers_per_block));
    ADD_ATTR("l2_cache_size", PyLong_FromLong(p->l2_cache_size));
    ADD_ATTR("clock_rate_khz", PyLong_FromLong(p->clock_rate_khz));
    ADD_ATTR("memory_clock_rate_khz", PyLong_FromLong(p->memory_clock_rate_khz));
    ADD_ATTR("memory_bus_width", PyLong_FromLong(p->memory_bus_width));
    ADD_ATTR("total_constant_memory", PyLong_FromSize_t(p->total_constant_memory));
    ADD_ATTR("concurrent_kernels", PyBool_FromLong(p->concurrent_kernels));
    ADD_ATTR("async_engine_count", PyLong_FromLong(p->async_engine_count));
    ADD_ATTR("unified_addressing", PyBool_FromLong(p->unified_addressing));
    ADD_ATTR("integrated", PyBool_FromLong(p->integrated));
    ADD_ATTR("ecc_enabled", PyBool_FromLong(p->ecc_enabled));
    ADD_ATTR("cooperative_launch", PyBool_FromLong(p->cooperative_launch));
    ADD_ATTR("memory_pools_supported", PyBool_FromLong(p->memory_pools_supported));
    return d;
error:
    Py_DECREF(d);
    return NULL;
}

static PyGetSetDef Device_getset[] = {
    {"id", Device_get, NULL, "Device ordinal.", (void *)0},
    {"name", Device_get, NULL, "Device name.", (void *)1},
    {"compute_capability", Device_get, NULL, "(major, minor).", (void *)2},
    {"total_memory", Device_get, NULL, "Total device memory in bytes.", (void *)3},
    {"multiprocessor_count", Device_get, NULL, "Number of SMs.", (void *)4},
    {"warp_size", Device_get, NULL, "Threads per warp.", (void *)5},
    {"max_threads_per_block", Device_get, NULL, "Most threads in one block.",
     (void *)6},
    {"max_block_dim", Device_get, NULL, "Most threads per block, (x, y, z).",
     (void *)7},
    {"max_grid_dim", Device_get, NULL, "Most blocks per grid, (x, y, z).", (void *)8},
    {"shared_memory_per_block", Device_get, NULL,
     "Shared memory a block gets by default, in bytes.", (void *)9},
    {"pci_bus_id", Device_get, NULL, "PCI bus id, 'domain:bus:device.function'.",
     (void *)10},
    {"is_simulator", Device_get, NULL, "True for pygpu's CPU simulator.", (void *)11},
    {"attributes", Device_get, NULL, "A dict of further device attributes.",
     (void *)12},
    {NULL},
};

static PyMethodDef Device_methods[] = {
    {"mem_info", Device_mem_info, METH_NOARGS,
     "mem_info($self, /)\n--\n\n(free, total) device memory in bytes."},
    {"synchronize", Device_synchronize, METH_NOARGS,
     "synchronize($self, /)\n--\n\nWait for all work on this device."},
    {"select", Device_select, METH_NOARGS,
     "select($self, /)\n--\n\nMake this the current device of this thread."},
    {"__enter__", Device_enter, METH_NOARGS, NULL},
    {"__exit__", Device_exit, METH_VARARGS, NULL},
    {NULL},
};

static PyType_Slot Device_slots[] = {
    {Py_tp_new, Device_new},
    {Py_tp_dealloc, Device_dealloc},
    {Py_tp_repr, Device_repr},
    {Py_tp_richcompare, Device_richcompare},
    {Py_tp_hash, Device_hash},
    {Py_tp_methods, Device_methods},
    {Py_tp_getset, Device_getset},
    {Py_tp_doc, "Device(id=None)\n--\n\n"
                "A CUDA device (or the simulated one). `with device:` makes it "
                "current on this thread for the block."},
    {0, NULL},
};

PyType_Spec pg_device_spec = {
    .name = "pygpu.Device",
    .basicsize = sizeof(pg_device),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Device_slots,
};
