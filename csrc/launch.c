/* The prebuilt kernels as Python objects: `kernels.add[grid, block](a, b, out)`
 * (Kernel, then a configured Launch), the high-level calls that choose the
 * configuration themselves (add, add_one, matmul) and the operators + and @.
 * Every argument is checked here, before the launcher is called. */
#include <string.h>

#include "pygpu.h"

typedef enum {
    K_ADD,
    K_ADD_ONE,
    K_MATMUL_NAIVE,
    K_MATMUL_SHARED,
    K_MATMUL_TILED,
    K_COUNT
} kernel_id;

static const struct {
    const char *name;
    int nargs;
    const char *signature;
    const char *doc;
} kernel_info[K_COUNT] = {
    {"add", 3, "add[grid, block](a, b, out)",
     "out = a + b elementwise, for float32, float64, int32 and int64 arrays of "
     "one shape (b may also be a scalar)."},
    {"add_one", 1, "add_one[grid, block](A)", "A += 1 in place, elementwise."},
    {"matmul_naive", 3, "matmul_naive[grid, block](A, B, C)",
     "C = A @ B for 2-D float32 or float64 arrays, one thread per element of C."},
    {"matmul_shared", 3, "matmul_shared[grid, block](A, B, C)",
     "C = A @ B with shared-memory tiles; the block must be (16, 16) or (32, 32): "
     "T x T threads compute a 2T x 2T tile of C, each thread 2 x 2 elements."},
    {"matmul_tiled", 3, "matmul_tiled[grid, 256](A, B, C)",
     "C = A @ B, register-tiled: each block of 256 threads computes 128 x 128 "
     "elements of C, each thread 8 x 8. The fastest; what @ uses."},
};

typedef struct {
    PyObject_HEAD
    kernel_id id;
} pg_kernel;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    pg_state *st; /* the module's, alive while the type (and so this) is */
    kernel_id id;
    pg_dim3 grid;
    pg_dim3 block;
    int has_stream;       /* 0: the caller's current stream at each call */
    pg_stream_ref stream; /* stream.obj is a strong reference here */
} pg_launch;

/* ---- launch configuration ------------------------------------------------- */

static int
parse_dims(PyObject *o, const char *what, pg_dim3 *d)
{
    unsigned int v[3] = {1, 1, 1};
    Py_ssize_t n = 1;
    static const char axes[] = "xyz";
    if (PyTuple_Check(o)) {
        n = PyTuple_GET_SIZE(o);
        if (n < 1 || n > 3) {
            PyErr_Format(PyExc_ValueError,
                         "%s must be an int or a tuple of 1 to 3 ints, got a "
                         "tuple of %zd",
                         what, n);
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_Check(o) ? PyTuple_GET_ITEM(o, i) : o;
        long long x;
        if (PyBool_Check(item) || !PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError,
                         "%s must be an int or a tuple of ints, got %.100s%s", what,
                         Py_TYPE(item)->tp_name,
                         PyFloat_Check(item) ? " (use // or math.ceil to get an "
                                               "int number of blocks)"
                                             : "");
            return -1;
        }
        PyObject *idx = PyNumber_Index(item);
        if (idx == NULL) {
            return -1;
        }
        x = PyLong_AsLongLong(idx);
        Py_DECREF(idx);
        if (x == -1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
                return -1;
            }
            PyErr_Clear();
            x = (long long)1 << 40;
        }
        if (x < 1) {
            PyErr_Format(PyExc_ValueError,
                         "%s dimension %c is %lld; every dimension must be at "
                         "least 1",
                         what, axes[i], x);
            return -1;
        }
        if (x > 0xFFFFFFFFLL) {
            PyErr_Format(PyExc_ValueError,
                         "%s dimension %c is %lld, more than any device allows", what,
                         axes[i], x);
            return -1;
        }
        v[i] = (unsigned int)x;
    }
    d->x = v[0];
    d->y = v[1];
    d->z = v[2];
    return 0;
}

static int
check_config(pg_state *st, pg_dim3 grid, pg_dim3 block)
{
    static const char axes[] = "xyz";
    const pg_backend *rt = pg_get_rt(st);
    const pg_device_props *p;
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    unsigned int g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
    int device = 0;
    if (rt == NULL || pg_current_device(st, rt, &device) < 0 ||
        (p = pg_device_props_get(st, device)) == NULL) {
        return -1;
    }
    if (threads > (unsigned long long)p->max_threads_per_block) {
        PyErr_Format(PyExc_ValueError,
                     "block has %llu threads (%u x %u x %u); this device allows "
                     "at most %d per block",
                     threads, block.x, block.y, block.z, p->max_threads_per_block);
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        if (b[i] > (unsigned int)p->max_block_dim[i]) {
            PyErr_Format(PyExc_ValueError,
                         "block dimension %c is %u; this device allows at most "
                         "%d (block limits are (%d, %d, %d))",
                         axes[i], b[i], p->max_block_dim[i], p->max_block_dim[0],
                         p->max_block_dim[1], p->max_block_dim[2]);
            return -1;
        }
    }
    for (int i = 0; i < 3; i++) {
        if (g[i] > (unsigned int)p->max_grid_dim[i]) {
            PyErr_Format(PyExc_ValueError,
                         "grid dimension %c is %u blocks; this device allows at "
                         "most %d (grid limits are (%d, %d, %d))",
                         axes[i], g[i], p->max_grid_dim[i], p->max_grid_dim[0],
                         p->max_grid_dim[1], p->max_grid_dim[2]);
            return -1;
        }
    }
    return 0;
}

int
pg_parse_launch_config(pg_state *st, PyObject *key, const char *usage,
                       pg_launch_config *cfg)
{
    Py_ssize_t n = PyTuple_Check(key) ? PyTuple_GET_SIZE(key) : 0;
    PyObject *stream_arg = NULL;
    memset(cfg, 0, sizeof(*cfg));
    if (n < 2 || n > 4) {
        PyErr_Format(PyExc_TypeError,
                     "launch a kernel as %s: kernel[blocks_per_grid, "
                     "threads_per_block], kernel[grid, block, stream] or "
                     "kernel[grid, block, stream, shared_bytes]",
                     usage);
        return -1;
    }
    if (parse_dims(PyTuple_GET_ITEM(key, 0), "grid", &cfg->grid) < 0 ||
        parse_dims(PyTuple_GET_ITEM(key, 1), "block", &cfg->block) < 0 ||
        (n >= 3 && pg_resolve_stream(st, stream_arg = PyTuple_GET_ITEM(key, 2),
                                     &cfg->stream) < 0)) {
        return -1;
    }
    cfg->has_stream = pg_stream_given(stream_arg);
    if (n == 4) {
        long shared = PyLong_AsLong(PyTuple_GET_ITEM(key, 3));
        if (shared == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (shared < 0 || shared > 0x7fffffffL) {
            PyErr_Format(PyExc_ValueError, "shared_bytes must be >= 0, not %ld",
                         shared);
            return -1;
        }
        cfg->shared_bytes = (unsigned int)shared;
    }
    return check_config(st, cfg->grid, cfg->block);
}

/* ---- argument checks ---------------------------------------------------------- */

static int
kernel_dtype(PyArray_Descr *d, int float_only)
{
    switch (d->type_num) {
    case NPY_FLOAT: return PG_F32;
    case NPY_DOUBLE: return PG_F64;
    default: break;
    }
    if (float_only || (PyDataType_ELSIZE(d) != 4 && PyDataType_ELSIZE(d) != 8)) {
        return -1;
    }
    if (PyDataType_ISSIGNED(d) && PyDataType_ISINTEGER(d)) {
        return PyDataType_ELSIZE(d) == 4 ? PG_I32 : PG_I64;
    }
    return -1;
}

static const char *
dtypes_of(int float_only)
{
    return float_only ? "float32 or float64" : "float32, float64, int32 or int64";
}

/* Borrowed DeviceArray for argument `name` of `kname`, on `device`. */
static pg_array *
arg_array(pg_state *st, const char *kname, const char *name, PyObject *o, int device)
{
    pg_array *a;
    if (!pg_array_check(st, o)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: argument '%s' must be a pygpu.DeviceArray, not %.100s%s",
                     kname, name, Py_TYPE(o)->tp_name,
                     PyArray_Check(o) ? " (copy it with pygpu.cuda.to_device first)"
                                      : "");
        return NULL;
    }
    a = (pg_array *)o;
    if (pg_array_device(a) != device) {
        PyErr_Format(PyExc_ValueError,
                     "%s: argument '%s' is on device %d, but the launch is on "
                     "device %d (select its device, or copy it)",
                     kname, name, pg_array_device(a), device);
        return NULL;
    }
    return a;
}

static int
check_contiguous(const char *kname, const char *name, pg_array *a, int c_only)
{
    int ok = c_only ? (a->flags & NPY_ARRAY_C_CONTIGUOUS)
                    : (a->flags & (NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS));
    if (ok) {
        return 0;
    }
    PyErr_Format(PyExc_ValueError,
                 "%s: argument '%s' must be %scontiguous, but it is a strided "
                 "view; pass %s.copy() instead",
                 kname, name, c_only ? "C-" : "", name);
    return -1;
}

static int
check_dtype_arg(const char *kname, const char *name, pg_array *a, int float_only,
                int *dtype)
{
    int d = kernel_dtype(a->descr, float_only);
    if (d < 0) {
        PyErr_Format(PyExc_TypeError, "%s: argument '%s' has dtype %S; %s takes %s",
                     kname, name, (PyObject *)a->descr, kname, dtypes_of(float_only));
        return -1;
    }
    if (*dtype >= 0 && d != *dtype) {
        PyErr_Format(PyExc_TypeError,
                     "%s: dtype mismatch: argument '%s' has dtype %S, unlike the "
                     "arguments before it; convert with .astype() so all match",
                     kname, name, (PyObject *)a->descr);
        return -1;
    }
    *dtype = d;
    return 0;
}

static int
check_shapes_equal(const char *kname, const char *na, pg_array *a, const char *nb,
                   pg_array *b)
{
    int same = a->nd == b->nd;
    for (int i = 0; same && i < a->nd; i++) {
        same = a->shape[i] == b->shape[i];
    }
    if (same) {
        return 0;
    }
    PyObject *sa = PyArray_IntTupleFromIntp(a->nd, a->shape);
    PyObject *sb = PyArray_IntTupleFromIntp(b->nd, b->shape);
    if (sa != NULL && sb != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "%s: shape mismatch: '%s' has shape %R but '%s' has shape %R",
                     kname, na, sa, nb, sb);
    }
    Py_XDECREF(sa);
    Py_XDECREF(sb);
    return -1;
}

/* The scalar `o` as a value of kernel dtype `dtype`, into buf. */
static int
scalar_value(const char *kname, PyObject *o, PyArray_Descr *descr, char *buf)
{
    PyArrayObject *v = NULL;
    if (PyDataType_ISINTEGER(descr) &&
        (PyFloat_Check(o) || PyComplex_Check(o) || PyArray_IsScalar(o, Inexact))) {
        PyErr_Format(PyExc_TypeError,
                     "%s: cannot add the scalar %R to an array of dtype %S without "
                     "losing its fraction; use a float array",
                     kname, o, (PyObject *)descr);
        return -1;
    }
    if (PyComplex_Check(o) || PyArray_IsScalar(o, ComplexFloating)) {
        PyErr_Format(PyExc_TypeError, "%s: cannot add the complex scalar %R", kname, o);
        return -1;
    }
    Py_INCREF(descr);
    v = (PyArrayObject *)PyArray_FromAny(o, descr, 0, 0, NPY_ARRAY_FORCECAST, NULL);
    if (v == NULL) {
        return -1;
    }
    memcpy(buf, PyArray_DATA(v), (size_t)PyDataType_ELSIZE(descr));
    Py_DECREF(v);
    return 0;
}

static int
is_scalar(PyObject *o)
{
    return (PyLong_Check(o) && !PyBool_Check(o)) || PyFloat_Check(o) ||
           PyArray_IsScalar(o, Number);
}

static int
overlaps(pg_array *a, pg_array *b)
{
    size_t na = (size_t)pg_array_size(a) * PyDataType_ELSIZE(a->descr);
    size_t nb = (size_t)pg_array_size(b) * PyDataType_ELSIZE(b->descr);
    if (na == 0 || nb == 0) {
        return 0;
    }
    return a->data < b->data + nb && b->data < a->data + na;
}

/* ---- the launches, once checked --------------------------------------------- */

static int
launch_result(pg_state *st, pg_err err, const char *kname)
{
    char call[96];
    if (err == PG_SUCCESS) {
        return 0;
    }
    PyOS_snprintf(call, sizeof(call), "launch of kernel %s", kname);
    pg_raise(st, err, call);
    return -1;
}

static int
do_add(pg_state *st, const char *kname, PyObject *ao, PyObject *bo, PyObject *outo,
       pg_dim3 grid, pg_dim3 block, int device, const pg_stream_ref *s)
{
    pg_array *a, *b = NULL, *out;
    int dtype = -1;
    char scalar[16];
    pg_err err;
    if ((a = arg_array(st, kname, "a", ao, device)) == NULL ||
        check_dtype_arg(kname, "a", a, 0, &dtype) < 0) {
        return -1;
    }
    if (is_scalar(bo)) {
        if (scalar_value(kname, bo, a->descr, scalar) < 0) {
            return -1;
        }
    }
    else if ((b = arg_array(st, kname, "b", bo, device)) == NULL ||
             check_dtype_arg(kname, "b", b, 0, &dtype) < 0) {
        return -1;
    }
    if ((out = arg_array(st, kname, "out", outo, device)) == NULL ||
        check_dtype_arg(kname, "out", out, 0, &dtype) < 0 ||
        (b != NULL && check_shapes_equal(kname, "a", a, "b", b) < 0) ||
        check_shapes_equal(kname, "a", a, "out", out) < 0 ||
        check_contiguous(kname, "a", a, 0) < 0 ||
        (b != NULL && check_contiguous(kname, "b", b, 0) < 0) ||
        check_contiguous(kname, "out", out, 0) < 0) {
        return -1;
    }
    if (!pg_same_dense_layout(a->nd, a->shape, a->strides, a->flags, out->strides,
                              out->flags) ||
        (b != NULL && !pg_same_dense_layout(a->nd, a->shape, a->strides, a->flags,
                                            b->strides, b->flags))) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the arrays mix C and Fortran order; make them all "
                     "C-contiguous with .copy()",
                     kname);
        return -1;
    }
    if (pg_array_size(a) == 0) {
        return 0;
    }
    pg_array_note_stream(a, s);
    pg_array_note_stream(out, s);
    if (b != NULL) {
        pg_array_note_stream(b, s);
        err = pg_rt()->kernels->add(dtype, a->data, b->data, out->data,
                                    pg_array_size(a), grid, block, s->handle);
    }
    else {
        err = pg_rt()->kernels->add_scalar(dtype, a->data, scalar, out->data,
                                           pg_array_size(a), grid, block, s->handle);
    }
    return launch_result(st, err, kname);
}

static int
do_add_one(pg_state *st, const char *kname, PyObject *ao, pg_dim3 grid, pg_dim3 block,
           int device, const pg_stream_ref *s)
{
    pg_array *a;
    int dtype = -1;
    if ((a = arg_array(st, kname, "A", ao, device)) == NULL ||
        check_dtype_arg(kname, "A", a, 0, &dtype) < 0 ||
        check_contiguous(kname, "A", a, 0) < 0) {
        return -1;
    }
    if (pg_array_size(a) == 0) {
        return 0;
    }
    pg_array_note_stream(a, s);
    return launch_result(st,
                         pg_rt()->kernels->add_one(dtype, a->data, pg_array_size(a),
                                                   grid, block, s->handle),
                         kname);
}

static int
do_matmul(pg_state *st, kernel_id id, const char *kname, PyObject *ao, PyObject *bo,
          PyObject *co, pg_dim3 grid, pg_dim3 block, int device, const pg_stream_ref *s)
{
    const char *names[3] = {"A", "B", "C"};
    PyObject *objs[3] = {ao, bo, co};
    pg_array *m[3];
    int dtype = -1;
    pg_err err;
    for (int i = 0; i < 3; i++) {
        if ((m[i] = arg_array(st, kname, names[i], objs[i], device)) == NULL ||
            check_dtype_arg(kname, names[i], m[i], 1, &dtype) < 0) {
            return -1;
        }
        if (m[i]->nd != 2) {
            PyErr_Format(PyExc_ValueError,
                         "%s: argument '%s' must be 2-D, but it has %d "
                         "dimension%s",
                         kname, names[i], m[i]->nd, m[i]->nd == 1 ? "" : "s");
            return -1;
        }
        if (check_contiguous(kname, names[i], m[i], 1) < 0) {
            return -1;
        }
    }
    npy_intp rows = m[0]->shape[0], inner = m[0]->shape[1], cols = m[1]->shape[1];
    if (m[1]->shape[0] != inner) {
        PyErr_Format(PyExc_ValueError,
                     "%s: A is %zd x %zd and B is %zd x %zd: A's columns must "
                     "equal B's rows",
                     kname, (Py_ssize_t)rows, (Py_ssize_t)inner,
                     (Py_ssize_t)m[1]->shape[0], (Py_ssize_t)cols);
        return -1;
    }
    if (m[2]->shape[0] != rows || m[2]->shape[1] != cols) {
        PyErr_Format(PyExc_ValueError,
                     "%s: C must be %zd x %zd (A's rows by B's columns), but it is "
                     "%zd x %zd",
                     kname, (Py_ssize_t)rows, (Py_ssize_t)cols,
                     (Py_ssize_t)m[2]->shape[0], (Py_ssize_t)m[2]->shape[1]);
        return -1;
    }
    if (overlaps(m[2], m[0]) || overlaps(m[2], m[1])) {
        PyErr_Format(PyExc_ValueError,
                     "%s: C shares memory with A or B; write the product into a "
                     "separate array",
                     kname);
        return -1;
    }
    if (id == K_MATMUL_TILED && !(block.x == 256 && block.y == 1 && block.z == 1)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the block must be 256 threads (256, 1, 1); each block "
                     "computes a 128 x 128 tile of C; got (%u, %u, %u)",
                     kname, block.x, block.y, block.z);
        return -1;
    }
    if (id == K_MATMUL_SHARED && !((block.x == 16 && block.y == 16 && block.z == 1) ||
                                   (block.x == 32 && block.y == 32 && block.z == 1))) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the block must be (16, 16) or (32, 32), one thread per "
                     "element of a shared-memory tile; got (%u, %u, %u)",
                     kname, block.x, block.y, block.z);
        return -1;
    }
    if (rows == 0 || cols == 0) {
        return 0;
    }
    for (int i = 0; i < 3; i++) {
        pg_array_note_stream(m[i], s);
    }
    if (id == K_MATMUL_TILED) {
        err = pg_rt()->kernels->matmul_tiled(dtype, m[0]->data, m[1]->data, m[2]->data,
                                             rows, cols, inner, grid, block, s->handle);
    }
    else if (id == K_MATMUL_SHARED) {
        err =
            pg_rt()->kernels->matmul_shared(dtype, m[0]->data, m[1]->data, m[2]->data,
                                            rows, cols, inner, grid, block, s->handle);
    }
    else {
        err = pg_rt()->kernels->matmul_naive(dtype, m[0]->data, m[1]->data, m[2]->data,
                                             rows, cols, inner, grid, block, s->handle);
    }
    return launch_result(st, err, kname);
}

static int
dispatch(pg_state *st, kernel_id id, PyObject *const *args, pg_dim3 grid, pg_dim3 block,
         int device, const pg_stream_ref *s)
{
    const char *kname = kernel_info[id].name;
    switch (id) {
    case K_ADD:
        return do_add(st, kname, args[0], args[1], args[2], grid, block, device, s);
    case K_ADD_ONE: return do_add_one(st, kname, args[0], grid, block, device, s);
    default:
        return do_matmul(st, id, kname, args[0], args[1], args[2], grid, block, device,
                         s);
    }
}

/* ---- Launch: a kernel with its configuration -------------------------------- */

static PyObject *
Launch_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                  PyObject *kwnames)
{
    pg_launch *l = (pg_launch *)self;
    pg_state *st = l->st;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    int device = 0;
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        return PyErr_Format(PyExc_TypeError, "%s takes positional arguments only: %s",
                            kernel_info[l->id].name, kernel_info[l->id].signature);
    }
    if (nargs != kernel_info[l->id].nargs) {
        return PyErr_Format(PyExc_TypeError, "%s takes %d argument%s, got %zd: %s",
                            kernel_info[l->id].name, kernel_info[l->id].nargs,
                            kernel_info[l->id].nargs == 1 ? "" : "s", nargs,
                            kernel_info[l->id].signature);
    }
    pg_stream_ref cur;
    if (l->has_stream) {
        cur = l->stream;
    }
    else {
        (void)pg_resolve_stream(st, NULL, &cur);
    }
    if (pg_current_device(st, pg_rt(), &device) < 0 ||
        dispatch(st, l->id, args, l->grid, l->block, device, &cur) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
Launch_repr(PyObject *self)
{
    pg_launch *l = (pg_launch *)self;
    return PyUnicode_FromFormat("<pygpu kernel %s[(%u, %u, %u), (%u, %u, %u)]>",
                                kernel_info[l->id].name, l->grid.x, l->grid.y,
                                l->grid.z, l->block.x, l->block.y, l->block.z);
}

static PyObject *
Launch_get(PyObject *self, void *closure)
{
    pg_launch *l = (pg_launch *)self;
    pg_dim3 d = closure == NULL ? l->grid : l->block;
    return Py_BuildValue("(III)", d.x, d.y, d.z);
}

static void
Launch_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    Py_CLEAR(((pg_launch *)self)->stream.obj);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyGetSetDef Launch_getset[] = {
    {"grid", Launch_get, NULL, "Blocks per grid, (x, y, z).", NULL},
    {"block", Launch_get, NULL, "Threads per block, (x, y, z).", (void *)1},
    {NULL},
};

static PyMemberDef Launch_members[] = {
    {"__vectorcalloffset__", Py_T_PYSSIZET, offsetof(pg_launch, vectorcall),
     Py_READONLY},
    {NULL},
};

static PyType_Slot Launch_slots[] = {
    {Py_tp_dealloc, Launch_dealloc},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_repr, Launch_repr},
    {Py_tp_getset, Launch_getset},
    {Py_tp_members, Launch_members},
    {Py_tp_doc, "A prebuilt kernel bound to a launch configuration; call it "
                "with the kernel's arguments."},
    {0, NULL},
};

PyType_Spec pg_launch_spec = {
    .name = "pygpu.KernelLaunch",
    .basicsize = sizeof(pg_launch),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = Launch_slots,
};

/* ---- Kernel: kernel[grid, block] or kernel[grid, block, stream] ------------- */

static PyObject *
Kernel_getitem(PyObject *self, PyObject *key)
{
    pg_kernel *k = (pg_kernel *)self;
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    pg_launch_config cfg;
    pg_launch *l = NULL;
    if (st == NULL ||
        pg_parse_launch_config(st, key, kernel_info[k->id].signature, &cfg) < 0) {
        return NULL;
    }
    if (cfg.shared_bytes != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "prebuilt kernels use no dynamic shared "
                        "memory; the fourth launch setting must be 0");
        return NULL;
    }
    l = PyObject_New(pg_launch, st->LaunchType);
    if (l == NULL) {
        return NULL;
    }
    l->vectorcall = Launch_vectorcall;
    l->st = st;
    l->id = k->id;
    l->grid = cfg.grid;
    l->block = cfg.block;
    l->has_stream = cfg.has_stream;
    l->stream = cfg.stream;
    Py_XINCREF(l->stream.obj);
    return (PyObject *)l;
}

static PyObject *
Kernel_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    pg_kernel *k = (pg_kernel *)self;
    return PyErr_Format(PyExc_TypeError,
                        "a kernel needs a launch configuration: call it as %s, "
                        "e.g. with pygpu.cuda.launch_config(shape, threads) "
                        "giving (grid, block)",
                        kernel_info[k->id].signature);
}

static PyObject *
Kernel_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<pygpu kernel %s>",
                                kernel_info[((pg_kernel *)self)->id].name);
}

static PyObject *
Kernel_get_name(PyObject *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString(kernel_info[((pg_kernel *)self)->id].name);
}

static PyObject *
Kernel_get_doc(PyObject *self, void *Py_UNUSED(closure))
{
    kernel_id id = ((pg_kernel *)self)->id;
    return PyUnicode_FromFormat("%s\n\n%s", kernel_info[id].signature,
                                kernel_info[id].doc);
}

static void
Kernel_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyGetSetDef Kernel_getset[] = {
    {"__name__", Kernel_get_name, NULL, NULL, NULL},
    {"__doc__", Kernel_get_doc, NULL, NULL, NULL},
    {NULL},
};

static PyType_Slot Kernel_slots[] = {
    {Py_tp_dealloc, Kernel_dealloc}, {Py_mp_subscript, Kernel_getitem},
    {Py_tp_call, Kernel_call},       {Py_tp_repr, Kernel_repr},
    {Py_tp_getset, Kernel_getset},   {0, NULL},
};

PyType_Spec pg_kernel_spec = {
    .name = "pygpu.Kernel",
    .basicsize = sizeof(pg_kernel),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = Kernel_slots,
};

int
pg_kernels_init(PyObject *module, pg_state *st)
{
    st->kernels = PyDict_New();
    if (st->kernels == NULL) {
        return -1;
    }
    for (int i = 0; i < K_COUNT; i++) {
        pg_kernel *k = PyObject_New(pg_kernel, st->KernelType);
        if (k == NULL) {
            return -1;
        }
        k->id = (kernel_id)i;
        if (PyDict_SetItemString(st->kernels, kernel_info[i].name, (PyObject *)k) < 0) {
            Py_DECREF(k);
            return -1;
        }
        Py_DECREF(k);
    }
    return PyModule_AddObjectRef(module, "kernels", st->kernels);
}

/* ---- high-level calls: the configuration is chosen here -------------------- */

static pg_dim3
flat_config(npy_intp n)
{
    /* 256 threads a block, 16 elements a thread: each thread's loads are all
     * in flight at once, and there are blocks enough to fill any device. */
    long long blocks = ((long long)n + 4095) / 4096;
    pg_dim3 grid = {1, 1, 1};
    if (blocks > 0x7fffffffLL) {
        blocks = 0x7fffffffLL; /* the kernels' grid-stride loops do the rest */
    }
    grid.x = (unsigned int)(blocks < 1 ? 1 : blocks);
    return grid;
}

static const pg_dim3 flat_block = {256, 1, 1};

static pg_dim3
tile_grid(npy_intp rows, npy_intp cols, unsigned int tile)
{
    long long gx = ((long long)cols + tile - 1) / tile;
    long long gy = ((long long)rows + tile - 1) / tile;
    pg_dim3 g;
    g.x = (unsigned int)(gx < 1 ? 1 : gx > 65535 ? 65535 : gx);
    g.y = (unsigned int)(gy < 1 ? 1 : gy > 65535 ? 65535 : gy);
    g.z = 1;
    return g;
}

/* A C-contiguous version of a DeviceArray (a new reference), copying if needed. */
static PyObject *
c_contiguous(pg_state *st, PyObject *o, const pg_stream_ref *s)
{
    if (!pg_array_check(st, o) || (((pg_array *)o)->flags & NPY_ARRAY_C_CONTIGUOUS)) {
        return Py_NewRef(o);
    }
    return pg_array_copy(st, (pg_array *)o, 0, s);
}

static PyObject *
new_like(pg_state *st, pg_array *a, const pg_stream_ref *s)
{
    return (PyObject *)pg_array_empty(st, a->nd, a->shape, a->descr, 0, s);
}

static PyObject *
add_impl(pg_state *st, PyObject *a, PyObject *b, PyObject *out, PyObject *stream)
{
    PyObject *ca = NULL, *cb = NULL, *res = NULL;
    pg_stream_ref cur;
    int device = 0;
    if (pg_resolve_stream(st, stream, &cur) < 0) {
        return NULL;
    }
    if (pg_get_rt(st) == NULL || pg_current_device(st, pg_rt(), &device) < 0) {
        return NULL;
    }
    if (!pg_array_check(st, a)) {
        return PyErr_Format(PyExc_TypeError,
                            "add: 'a' must be a pygpu.DeviceArray, not %.100s",
                            Py_TYPE(a)->tp_name);
    }
    if ((ca = c_contiguous(st, a, &cur)) == NULL ||
        (cb = c_contiguous(st, b, &cur)) == NULL) {
        goto done;
    }
    if (out == NULL || out == Py_None) {
        res = new_like(st, (pg_array *)ca, &cur);
    }
    else {
        res = Py_NewRef(out);
    }
    if (res == NULL) {
        goto done;
    }
    if (do_add(st, "add", ca, cb, res, flat_config(pg_array_size((pg_array *)ca)),
               flat_block, device, &cur) < 0) {
        Py_CLEAR(res);
    }
done:
    Py_XDECREF(ca);
    Py_XDECREF(cb);
    return res;
}

static PyObject *
matmul_impl(pg_state *st, PyObject *a, PyObject *b, const char *method, PyObject *out,
            PyObject *stream)
{
    PyObject *ca = NULL, *cb = NULL, *res = NULL;
    pg_stream_ref cur;
    pg_array *A, *B;
    int device = 0;
    kernel_id id;
    npy_intp shape[2];
    if (pg_resolve_stream(st, stream, &cur) < 0) {
        return NULL;
    }
    if (pg_get_rt(st) == NULL || pg_current_device(st, pg_rt(), &device) < 0) {
        return NULL;
    }
    if (strcmp(method, "naive") == 0) {
        id = K_MATMUL_NAIVE;
    }
    else if (strcmp(method, "shared") == 0) {
        id = K_MATMUL_SHARED;
    }
    else if (strcmp(method, "tiled") == 0 || strcmp(method, "auto") == 0) {
        id = K_MATMUL_TILED;
    }
    else {
        return PyErr_Format(PyExc_ValueError,
                            "matmul: method must be 'naive', 'shared', 'tiled' or "
                            "'auto', not '%s'",
                            method);
    }
    if (!pg_array_check(st, a) || !pg_array_check(st, b)) {
        return PyErr_Format(
            PyExc_TypeError,
            "matmul takes two pygpu.DeviceArrays, not %.100s and %.100s",
            Py_TYPE(a)->tp_name, Py_TYPE(b)->tp_name);
    }
    A = (pg_array *)a;
    B = (pg_array *)b;
    if (A->nd != 2 || B->nd != 2) {
        return PyErr_Format(PyExc_ValueError,
                            "matmul needs 2-D arrays; got %d-D and %d-D", A->nd, B->nd);
    }
    if ((ca = c_contiguous(st, a, &cur)) == NULL ||
        (cb = c_contiguous(st, b, &cur)) == NULL) {
        goto done;
    }
    shape[0] = A->shape[0];
    shape[1] = B->shape[1];
    if (out == NULL || out == Py_None) {
        int dtype = -1;
        if (check_dtype_arg("matmul", "a", A, 1, &dtype) < 0) {
            goto done;
        }
        res = (PyObject *)pg_array_empty(st, 2, shape, A->descr, 0, &cur);
    }
    else {
        res = Py_NewRef(out);
    }
    if (res == NULL) {
        goto done;
    }
    {
        unsigned int tile = id == K_MATMUL_TILED    ? 128
                            : id == K_MATMUL_SHARED ? 32
                                                    : 16;
        pg_dim3 block = {16, 16, 1}, tiled_block = {256, 1, 1};
        if (do_matmul(st, id, "matmul", ca, cb, res,
                      tile_grid(shape[0], shape[1], tile),
                      id == K_MATMUL_TILED ? tiled_block : block, device, &cur) < 0) {
            Py_CLEAR(res);
        }
    }
done:
    Py_XDECREF(ca);
    Py_XDECREF(cb);
    return res;
}

PyObject *
pg_array_add(PyObject *a, PyObject *b)
{
    pg_state *st;
    if (!Py_IS_TYPE(a, Py_TYPE(b)) && is_scalar(a)) { /* 2 + x */
        PyObject *t = a;
        a = b;
        b = t;
    }
    st = pg_state_of_type(Py_TYPE(a));
    if (st == NULL) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (!pg_array_check(st, b) && !is_scalar(b)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return add_impl(st, a, b, NULL, NULL);
}

PyObject *
pg_array_iadd(PyObject *a, PyObject *b)
{
    pg_state *st = pg_state_of_type(Py_TYPE(a));
    pg_array *A = (pg_array *)a;
    PyObject *res;
    if (st == NULL) {
        return NULL;
    }
    if (!pg_array_check(st, b) && !is_scalar(b)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (A->flags & NPY_ARRAY_C_CONTIGUOUS) {
        res = add_impl(st, a, b, a, NULL);
    }
    else { /* a strided view: add into a dense temporary, then copy back */
        res = add_impl(st, a, b, NULL, NULL);
        pg_stream_ref cur;
        (void)pg_resolve_stream(st, NULL, &cur);
        if (res != NULL && pg_array_copy_into(st, A, (pg_array *)res, &cur) < 0) {
            Py_CLEAR(res);
        }
        if (res != NULL) {
            Py_SETREF(res, Py_NewRef(a));
        }
    }
    return res;
}

PyObject *
pg_array_matmul(PyObject *a, PyObject *b)
{
    pg_state *st = pg_state_of_type(Py_TYPE(a));
    if (st == NULL) {
        PyErr_Clear();
        st = pg_state_of_type(Py_TYPE(b));
        if (st == NULL) {
            PyErr_Clear();
            Py_RETURN_NOTIMPLEMENTED;
        }
    }
    if (!pg_array_check(st, a) || !pg_array_check(st, b)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return matmul_impl(st, a, b, "auto", NULL, NULL);
}

static PyObject *
mod_add(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"a", "b", "out", "stream"};
    PyObject *argv[4];
    if (pg_parse_args("add", args, nargs, kwnames, names, 4, 2, argv) < 0) {
        return NULL;
    }
    return add_impl(pg_state_of_module(m), argv[0], argv[1], argv[2], argv[3]);
}

static PyObject *
mod_add_one(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"A", "stream"};
    pg_state *st = pg_state_of_module(m);
    PyObject *argv[2];
    pg_stream_ref cur;
    int device = 0;
    if (pg_parse_args("add_one", args, nargs, kwnames, names, 2, 1, argv) < 0 ||
        pg_resolve_stream(st, argv[1], &cur) < 0 || pg_get_rt(st) == NULL ||
        pg_current_device(st, pg_rt(), &device) < 0) {
        return NULL;
    }
    if (!pg_array_check(st, argv[0])) {
        return PyErr_Format(PyExc_TypeError,
                            "add_one: 'A' must be a pygpu.DeviceArray, not %.100s",
                            Py_TYPE(argv[0])->tp_name);
    }
    if (!(((pg_array *)argv[0])->flags &
          (NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS))) {
        /* a strided view: work on a dense copy and write it back */
        PyObject *tmp = pg_array_copy(st, (pg_array *)argv[0], 0, &cur);
        int rc;
        if (tmp == NULL) {
            return NULL;
        }
        rc = do_add_one(st, "add_one", tmp, flat_config(pg_array_size((pg_array *)tmp)),
                        flat_block, device, &cur);
        if (rc == 0) {
            rc = pg_array_copy_into(st, (pg_array *)argv[0], (pg_array *)tmp, &cur);
        }
        Py_DECREF(tmp);
        if (rc < 0) {
            return NULL;
        }
        return Py_NewRef(argv[0]);
    }
    if (do_add_one(st, "add_one", argv[0],
                   flat_config(pg_array_size((pg_array *)argv[0])), flat_block, device,
                   &cur) < 0) {
        return NULL;
    }
    return Py_NewRef(argv[0]);
}

static PyObject *
mod_matmul(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"a", "b", "method", "out", "stream"};
    PyObject *argv[5];
    const char *method = "auto";
    if (pg_parse_args("matmul", args, nargs, kwnames, names, 5, 2, argv) < 0) {
        return NULL;
    }
    if (argv[2] != NULL && argv[2] != Py_None) {
        if (!PyUnicode_Check(argv[2])) {
            return PyErr_Format(PyExc_TypeError,
                                "matmul: method must be a str, not %.100s",
                                Py_TYPE(argv[2])->tp_name);
        }
        method = PyUnicode_AsUTF8(argv[2]);
        if (method == NULL) {
            return NULL;
        }
    }
    return matmul_impl(pg_state_of_module(m), argv[0], argv[1], method, argv[3],
                       argv[4]);
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

PyMethodDef pg_launch_functions[] = {
    {"add", FASTKW(mod_add),
     "add(a, b, out=None, stream=None)\n--\n\n"
     "a + b elementwise on the device (b a DeviceArray or a scalar); into out "
     "if given. Returns the result."},
    {"add_one", FASTKW(mod_add_one),
     "add_one(A, stream=None)\n--\n\nA += 1 in place on the device. Returns A."},
    {"matmul", FASTKW(mod_matmul),
     "matmul(a, b, method='auto', out=None, stream=None)\n--\n\n"
     "a @ b for 2-D float32 or float64 device arrays; method is 'naive', "
     "'shared', 'tiled' or 'auto' (the same as 'tiled', the fastest)."},
    {NULL},
};
