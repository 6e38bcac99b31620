/* Launching, the one path: the launch configuration kernel[grid, block, ...],
 * the bound launch pygpu.KernelLaunch that every launchable kind makes, and
 * the prebuilt kernels (pygpu.Kernel) with their argument checks. The kernels
 * are those of kernels.def, the one list; every argument is checked here,
 * before the launcher is called. The high-level calls that choose the
 * configuration themselves are in ops.c. */
#include <string.h>

#include "pygpu.h"

/* ---- launch configuration ------------------------------------------------- */

/* Why `item` is not an int, for "%s must be ... got %s": a float gets a hint. */
static const char *
not_int_hint(PyObject *item)
{
    return PyFloat_Check(item) || PyArray_IsScalar(item, Floating)
               ? " (use // or math.ceil to get an int)"
               : "";
}

/* The int `item` (anything with __index__ but a bool) of launch setting `what`,
 * in [1, 2**32 - 1], or -1 with the value as given in the message; `most` is
 * CUDA's bound on that axis for every device, for the message. */
static long long
parse_count(PyObject *item, const char *what, char axis, long long most)
{
    PyObject *idx;
    long long x;
    int overflow = 0;
    if (PyBool_Check(item) || !PyIndex_Check(item)) {
        PyErr_Format(PyExc_TypeError,
                     "%s must be an int or a tuple of ints, got %.100s%s", what,
                     Py_TYPE(item)->tp_name, not_int_hint(item));
        return -1;
    }
    idx = PyLong_CheckExact(item) ? Py_NewRef(item) : PyNumber_Index(item);
    if (idx == NULL) {
        return -1;
    }
    x = PyLong_AsLongLongAndOverflow(idx, &overflow);
    if (x == -1 && PyErr_Occurred()) {
        Py_DECREF(idx);
        return -1;
    }
    if (overflow < 0 || (overflow == 0 && x < 1)) {
        PyErr_Format(PyExc_ValueError,
                     "%s dimension %c is %S; every dimension must be at least 1", what,
                     axis, idx);
        x = -1;
    }
    else if (overflow > 0 || x > 0xFFFFFFFFLL) {
        PyErr_Format(PyExc_ValueError,
                     "%s dimension %c is %S, more than any device allows (CUDA "
                     "allows at most %lld)",
                     what, axis, idx, most);
        x = -1;
    }
    Py_DECREF(idx);
    return x;
}

/* CUDA's bounds for every device, (x, y, z), quoted when a value is past them. */
static const long long grid_most[3] = {0x7fffffffLL, 65535, 65535};
static const long long block_most[3] = {1024, 1024, 64};

/* grid or block: an int, or a tuple (or list) of 1 to 3 ints, x first.
 * check_config then checks them against this device's limits. */
static int
parse_dims(PyObject *o, const char *what, const long long most[3], pg_dim3 *d)
{
    unsigned int v[3] = {1, 1, 1};
    Py_ssize_t n = 1;
    PyObject *seq = PyList_Check(o) ? PyList_AsTuple(o) : Py_NewRef(o);
    if (seq == NULL) {
        return -1;
    }
    if (PyTuple_Check(seq)) {
        n = PyTuple_GET_SIZE(seq);
        if (n < 1 || n > 3) {
            PyErr_Format(PyExc_ValueError,
                         "%s must be an int or a tuple of 1 to 3 ints, got %zd "
                         "values",
                         what, n);
            goto error;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_Check(seq) ? PyTuple_GET_ITEM(seq, i) : seq;
        long long x = parse_count(item, what, "xyz"[i], most[i]);
        if (x < 0) {
            goto error;
        }
        v[i] = (unsigned int)x;
    }
    Py_DECREF(seq);
    d->x = v[0];
    d->y = v[1];
    d->z = v[2];
    return 0;
error:
    Py_DECREF(seq);
    return -1;
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
    if (parse_dims(PyTuple_GET_ITEM(key, 0), "grid", grid_most, &cfg->grid) < 0 ||
        parse_dims(PyTuple_GET_ITEM(key, 1), "block", block_most, &cfg->block) < 0 ||
        (n >= 3 && pg_resolve_stream(st, stream_arg = PyTuple_GET_ITEM(key, 2),
                                     &cfg->stream) < 0)) {
        return -1;
    }
    cfg->has_stream = pg_stream_given(stream_arg);
    if (n == 4) {
        PyObject *item = PyTuple_GET_ITEM(key, 3), *idx;
        long long shared;
        int overflow = 0;
        if (PyBool_Check(item) || !PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError,
                         "shared_bytes (the fourth launch setting) must be an int, "
                         "got %.100s%s",
                         Py_TYPE(item)->tp_name, not_int_hint(item));
            return -1;
        }
        if ((idx = PyNumber_Index(item)) == NULL) {
            return -1;
        }
        shared = PyLong_AsLongLongAndOverflow(idx, &overflow);
        if (shared == -1 && PyErr_Occurred()) {
            Py_DECREF(idx);
            return -1;
        }
        if (overflow != 0 || shared < 0 || shared > 0x7fffffffLL) {
            PyErr_Format(PyExc_ValueError,
                         overflow < 0 || (overflow == 0 && shared < 0)
                             ? "shared_bytes is %S; it must be at least 0"
                             : "shared_bytes is %S, more than any device allows",
                         idx);
            Py_DECREF(idx);
            return -1;
        }
        Py_DECREF(idx);
        cfg->shared_bytes = (unsigned int)shared;
    }
    return check_config(st, cfg->grid, cfg->block);
}

/* ---- argument checks ---------------------------------------------------------- */

/* The kernels' code for dtype d (from the one dtype table), or -1. */
static int
kernel_dtype(PyArray_Descr *d, int float_only)
{
    const pg_dtype_info *info = pg_dtype_info_of(d->type_num);
    if (info == NULL || (float_only && info->dl_code != PG_DL_FLOAT)) {
        return -1;
    }
    return info->kernel;
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
                     "%s: argument '%s' is on device %d, but the launch runs on "
                     "device %d, where the arguments before it are; the arrays of "
                     "one launch must share a device (copy it with "
                     "d.copy_to_device, or cuda.to_device under `with cuda.gpus[%d]:`)",
                     kname, name, pg_array_device(a), device, device);
        return NULL;
    }
    return a;
}

/* How check_contiguous reads an argument: the matmul kernels read rows, so need
 * C order; the elementwise kernels take C or Fortran order alike. */
enum { ARG_C_ONLY = 1, ARG_WRITTEN = 2 };

static int
check_contiguous(const char *kname, const char *name, pg_array *a, int how)
{
    int c_only = how & ARG_C_ONLY;
    const char *fix = (how & ARG_WRITTEN) ? "write into a new array and copy it in "
                                            "with %s[...] = result"
                                          : "pass %s.copy()";
    PyObject *advice = NULL;
    int ok = c_only ? (a->flags & NPY_ARRAY_C_CONTIGUOUS) : (a->flags & PG_CONTIG);
    if (ok) {
        return 0;
    }
    if ((advice = PyUnicode_FromFormat(fix, name)) == NULL) {
        return -1;
    }
    if (a->flags & NPY_ARRAY_F_CONTIGUOUS) {
        PyErr_Format(PyExc_ValueError,
                     "%s: argument '%s' must be C-contiguous (row-major), but it is "
                     "Fortran-contiguous (column-major, as a transpose is); %U "
                     "(a new array is in C order)",
                     kname, name, advice);
    }
    else {
        PyErr_Format(PyExc_ValueError,
                     "%s: argument '%s' must be %s, but it is a strided view (not "
                     "contiguous, as from slicing with a step); %U",
                     kname, name,
                     c_only ? "C-contiguous (row-major)"
                            : "contiguous (C or Fortran order)",
                     advice);
    }
    Py_DECREF(advice);
    return -1;
}

int
pg_kernel_dtype_arg(const char *kname, const char *name, pg_array *a, int float_only,
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
    return pg_check_same_shape(kname, na, a->nd, a->shape, nb, b->nd, b->shape);
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
    if (PyArray_IsScalar(o, Generic)) {
        /* A NumPy scalar keeps its dtype (NEP 50): where NumPy would promote
         * the result past the arrays' dtype, this kernel cannot give it. */
        PyArray_Descr *sd = PyArray_DescrFromScalar(o), *promoted = NULL;
        int same = 0;
        if (sd != NULL) {
            promoted = PyArray_PromoteTypes(descr, sd);
            same = promoted != NULL && PyArray_EquivTypes(promoted, descr);
        }
        if (sd != NULL && promoted != NULL && !same) {
            PyErr_Format(
                PyExc_TypeError,
                "%s: the kernel computes in the arrays' dtype %S, but NumPy "
                "would compute %S + %R in %S; pass a scalar of dtype %S (or a "
                "Python number), or use pygpu.add, which promotes as NumPy does",
                kname, (PyObject *)descr, (PyObject *)descr, o, (PyObject *)promoted,
                (PyObject *)descr);
        }
        Py_XDECREF(sd);
        Py_XDECREF(promoted);
        if (!same) {
            return -1;
        }
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

int
pg_is_scalar(PyObject *o)
{
    return (PyLong_Check(o) && !PyBool_Check(o)) || PyFloat_Check(o) ||
           PyArray_IsScalar(o, Number);
}

/* ---- the prebuilt kernels: check, then launch --------------------------------- */

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

/* ---- grids: only the blocks that have work -------------------------------- */

/* The prebuilt kernels walk their work with grid-stride loops, so a block
 * past the work does nothing, and a launch with fewer blocks, as long as
 * there are blocks for all the work, computes every element exactly as
 * before (each element alone, by the same arithmetic). clamp_blocks
 * shrinks the grid dimensions dims[0], dims[1], ... (the first the fastest
 * of a folded index, as the kernels fold them) to the fewest blocks that
 * still number at least `need`; a dimension never grows. A gigantic grid
 * over a small array so costs nothing, on the GPU and the simulator. */
static void
clamp_blocks(unsigned int *const dims[], int count, uint64_t need)
{
    uint64_t below = 1; /* blocks of the faster dimensions, as clamped */
    for (int i = 0; i < count; i++) {
        uint64_t want = (need + below - 1) / below;
        if (want < 1) {
            want = 1;
        }
        if (*dims[i] > want) {
            *dims[i] = (unsigned int)want;
        }
        below *= *dims[i];
    }
}

static uint64_t
ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* add, add_one: thread_rank() over n elements, every axis folded together
 * (x fastest), PG_FLAT_ELEMS_PER_THREAD or more a thread: a grid of more
 * blocks (a thread an element, as tutorials launch) is launched with only as
 * many as that needs, the block as given. Blocks of a thread an element keep
 * too few bytes in flight, and more blocks than the work needs cost the time
 * the GPU takes to start them (kernels.cu, add_kernel, has the figures). */
static pg_dim3
flat_grid(pg_dim3 grid, pg_dim3 block, int64_t n)
{
    unsigned int *const dims[3] = {&grid.x, &grid.y, &grid.z};
    uint64_t need = ceil_div((uint64_t)n, (uint64_t)block.x * block.y * block.z *
                                              PG_FLAT_ELEMS_PER_THREAD);
    if ((uint64_t)grid.x * grid.y * grid.z <= need) { /* at most 2^63: no overflow */
        return grid; /* every block has work (the usual launch): nothing to clamp */
    }
    clamp_blocks(dims, 3, need);
    return grid;
}

/* matmul kernels: grid x walks `col_units` (columns of C, or column tiles),
 * y and z folded (y fastest) walk `row_units`. */
static pg_dim3
matmul_grid(pg_dim3 grid, uint64_t col_units, uint64_t row_units)
{
    unsigned int *const x[1] = {&grid.x}, *const yz[2] = {&grid.y, &grid.z};
    clamp_blocks(x, 1, col_units);
    clamp_blocks(yz, 2, row_units);
    return grid;
}

/* run_<name>: the argument check and launch of kernels.def's entry <name>. */
typedef int (*kernel_run)(pg_state *st, const char *kname, PyObject *const *args,
                          pg_dim3 grid, pg_dim3 block, int device,
                          const pg_stream_ref *s);

/* add(a, b, out) */
static int
run_add(pg_state *st, const char *kname, PyObject *const *args, pg_dim3 grid,
        pg_dim3 block, int device, const pg_stream_ref *s)
{
    pg_array *a, *b = NULL, *out;
    int dtype = -1;
    char scalar[16] = {0};
    if ((a = arg_array(st, kname, "a", args[0], device)) == NULL ||
        pg_kernel_dtype_arg(kname, "a", a, 0, &dtype) < 0) {
        return -1;
    }
    if (pg_is_scalar(args[1])) {
        if (scalar_value(kname, args[1], a->descr, scalar) < 0) {
            return -1;
        }
    }
    else if ((b = arg_array(st, kname, "b", args[1], device)) == NULL ||
             pg_kernel_dtype_arg(kname, "b", b, 0, &dtype) < 0) {
        return -1;
    }
    if ((out = arg_array(st, kname, "out", args[2], device)) == NULL ||
        pg_array_check_writeable(out, kname) < 0 ||
        pg_kernel_dtype_arg(kname, "out", out, 0, &dtype) < 0 ||
        (b != NULL && check_shapes_equal(kname, "a", a, "b", b) < 0) ||
        check_shapes_equal(kname, "a", a, "out", out) < 0 ||
        check_contiguous(kname, "a", a, 0) < 0 ||
        (b != NULL && check_contiguous(kname, "b", b, 0) < 0) ||
        check_contiguous(kname, "out", out, ARG_WRITTEN) < 0) {
        return -1;
    }
    if (pg_array_overlap_unsafe(out, a) ||
        (b != NULL && pg_array_overlap_unsafe(out, b))) {
        PyErr_Format(PyExc_ValueError,
                     "%s: 'out' overlaps '%s' in part: threads would read elements "
                     "that other threads write (a data race on a GPU). Write into a "
                     "separate array, or into '%s' itself exactly, or use pygpu.add, "
                     "which copies as NumPy does",
                     kname, pg_array_overlap_unsafe(out, a) ? "a" : "b",
                     pg_array_overlap_unsafe(out, a) ? "a" : "b");
        return -1;
    }
    /* Empty arrays are C- and Fortran-contiguous at once, as in NumPy: their
     * strides say nothing, and nothing is launched for them. */
    if (pg_array_size(a) != 0 &&
        (!pg_same_dense_layout(a->nd, a->shape, a->strides, a->flags, out->strides,
                               out->flags) ||
         (b != NULL && !pg_same_dense_layout(a->nd, a->shape, a->strides, a->flags,
                                             b->strides, b->flags)))) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the arrays mix C order (row-major) and Fortran order "
                     "(column-major): 'a' is %s-contiguous but '%s' is not; make "
                     "them all C-contiguous with .copy(), or all Fortran-contiguous "
                     "with .copy(order='F')",
                     kname, (a->flags & NPY_ARRAY_C_CONTIGUOUS) ? "C" : "Fortran",
                     b != NULL && !pg_same_dense_layout(a->nd, a->shape, a->strides,
                                                        a->flags, b->strides, b->flags)
                         ? "b"
                         : "out");
        return -1;
    }
    if (pg_array_size(a) == 0) {
        return 0;
    }
    pg_array_note_stream(a, s);
    pg_array_note_stream(out, s);
    if (b != NULL) {
        pg_array_note_stream(b, s);
    }
    return launch_result(st,
                         pg_rt()->kernels->add(dtype, a->data,
                                               b != NULL ? b->data : NULL, scalar,
                                               out->data, pg_array_size(a),
                                               flat_grid(grid, block, pg_array_size(a)),
                                               block, s->handle),
                         kname);
}

/* add_one(A) */
static int
run_add_one(pg_state *st, const char *kname, PyObject *const *args, pg_dim3 grid,
            pg_dim3 block, int device, const pg_stream_ref *s)
{
    pg_array *a;
    int dtype = -1;
    if ((a = arg_array(st, kname, "A", args[0], device)) == NULL ||
        pg_array_check_writeable(a, kname) < 0 ||
        pg_kernel_dtype_arg(kname, "A", a, 0, &dtype) < 0 ||
        check_contiguous(kname, "A", a, ARG_WRITTEN) < 0) {
        return -1;
    }
    if (pg_array_size(a) == 0) {
        return 0;
    }
    pg_array_note_stream(a, s);
    return launch_result(
        st,
        pg_rt()->kernels->add_one(dtype, a->data, pg_array_size(a),
                                  flat_grid(grid, block, pg_array_size(a)), block,
                                  s->handle),
        kname);
}

/* The checks every matmul kernel (A, B, C) makes, into m[] and *dtype. */
static int
matmul_args(pg_state *st, const char *kname, PyObject *const *args, int device,
            pg_array *m[3], int *dtype)
{
    static const char *const names[3] = {"A", "B", "C"};
    for (int i = 0; i < 3; i++) {
        if ((m[i] = arg_array(st, kname, names[i], args[i], device)) == NULL ||
            pg_kernel_dtype_arg(kname, names[i], m[i], 1, dtype) < 0) {
            return -1;
        }
        if (m[i]->nd != 2) {
            PyErr_Format(PyExc_ValueError,
                         "%s: argument '%s' must be 2-D, but it has %d "
                         "dimension%s",
                         kname, names[i], m[i]->nd, m[i]->nd == 1 ? "" : "s");
            return -1;
        }
        if (check_contiguous(kname, names[i], m[i],
                             ARG_C_ONLY | (i == 2 ? ARG_WRITTEN : 0)) < 0) {
            return -1;
        }
    }
    if (pg_array_check_writeable(m[2], kname) < 0) {
        return -1;
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
    if (pg_arrays_overlap(m[2], m[0]) || pg_arrays_overlap(m[2], m[1])) {
        PyErr_Format(PyExc_ValueError,
                     "%s: C shares memory with A or B; write the product into a "
                     "separate array",
                     kname);
        return -1;
    }
    return 0;
}

static int
matmul_launch(pg_state *st, const char *kname, pg_matmul_fn *launcher, pg_array *m[3],
              int dtype, pg_dim3 grid, pg_dim3 block, const pg_stream_ref *s)
{
    npy_intp rows = m[0]->shape[0], inner = m[0]->shape[1], cols = m[1]->shape[1];
    if (rows == 0 || cols == 0) {
        return 0;
    }
    for (int i = 0; i < 3; i++) {
        pg_array_note_stream(m[i], s);
    }
    return launch_result(st,
                         launcher(dtype, m[0]->data, m[1]->data, m[2]->data, rows, cols,
                                  inner, grid, block, s->handle),
                         kname);
}

/* matmul_naive(A, B, C): any block */
static int
run_matmul_naive(pg_state *st, const char *kname, PyObject *const *args, pg_dim3 grid,
                 pg_dim3 block, int device, const pg_stream_ref *s)
{
    pg_array *m[3];
    int dtype = -1;
    if (matmul_args(st, kname, args, device, m, &dtype) < 0) {
        return -1;
    }
    /* one thread per element: columns on x, rows on y and z */
    grid = matmul_grid(grid, ceil_div((uint64_t)m[1]->shape[1], block.x),
                       ceil_div((uint64_t)m[0]->shape[0], (uint64_t)block.y * block.z));
    return matmul_launch(st, kname, pg_rt()->kernels->matmul_naive, m, dtype, grid,
                         block, s);
}

/* matmul_shared(A, B, C): a block of (16, 16) or (32, 32) */
static int
run_matmul_shared(pg_state *st, const char *kname, PyObject *const *args, pg_dim3 grid,
                  pg_dim3 block, int device, const pg_stream_ref *s)
{
    pg_array *m[3];
    int dtype = -1;
    if (matmul_args(st, kname, args, device, m, &dtype) < 0) {
        return -1;
    }
    if (!((block.x == 16 && block.y == 16 && block.z == 1) ||
          (block.x == 32 && block.y == 32 && block.z == 1))) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the block must be (16, 16) or (32, 32), one thread per "
                     "element of a shared-memory tile; got (%u, %u, %u)",
                     kname, block.x, block.y, block.z);
        return -1;
    }
    /* one 2 TILE x 2 TILE tile of C a block (TILE = block.x) */
    grid = matmul_grid(grid, ceil_div((uint64_t)m[1]->shape[1], 2 * block.x),
                       ceil_div((uint64_t)m[0]->shape[0], 2 * block.x));
    return matmul_launch(st, kname, pg_rt()->kernels->matmul_shared, m, dtype, grid,
                         block, s);
}

/* matmul_tiled(A, B, C): a block of 256 threads */
static int
run_matmul_tiled(pg_state *st, const char *kname, PyObject *const *args, pg_dim3 grid,
                 pg_dim3 block, int device, const pg_stream_ref *s)
{
    pg_array *m[3];
    int dtype = -1;
    if (matmul_args(st, kname, args, device, m, &dtype) < 0) {
        return -1;
    }
    if (!(block.x == 256 && block.y == 1 && block.z == 1)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the block must be 256 threads (256, 1, 1); each block "
                     "computes a 128 x 128 tile of C; got (%u, %u, %u)",
                     kname, block.x, block.y, block.z);
        return -1;
    }
    /* one 128 x 128 tile of C a block */
    grid = matmul_grid(grid, ceil_div((uint64_t)m[1]->shape[1], 128),
                       ceil_div((uint64_t)m[0]->shape[0], 128));
    return matmul_launch(st, kname, pg_rt()->kernels->matmul_tiled, m, dtype, grid,
                         block, s);
}

/* The prebuilt kernels by id, from the one list; run_<name> must exist for
 * every entry, and is paired with it by name. */
static const struct {
    const char *name;
    int nargs;
    const char *signature;
    const char *doc;
    kernel_run run;
} kernel_info[PG_K_COUNT] = {
#define PG_KERNEL(name, type, nargs, signature, doc)                                   \
    [PG_K_##name] = {#name, nargs, signature, doc, run_##name},
#include "kernels.def"
};

int
pg_kernel_run(pg_state *st, pg_kernel_id id, const char *kname, PyObject *const *args,
              pg_dim3 grid, pg_dim3 block, int device, const pg_stream_ref *s)
{
    return kernel_info[id].run(st, kname, args, grid, block, device, s);
}

/* ---- KernelLaunch: a launchable bound to its configuration ---------------------- */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    pg_state *st;            /* the module's, alive while the type (and so this) is */
    pg_launchable *function; /* strong reference; NULL only once cleared */
    pg_launch_config cfg;    /* cfg.stream.obj is a strong reference here */
} pg_launch;

/* The hot path: all that does not change between calls is in the object. */
static PyObject *
Launch_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                  PyObject *kwnames)
{
    pg_launch *l = (pg_launch *)self;
    pg_launchable *f = l->function;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    const pg_launch_config *cfg = &l->cfg;
    pg_launch_config coop;
    pg_stream_ref s;
    int device, prev = 0, rc;
    if (f == NULL) {
        PyErr_SetString(PyExc_ReferenceError, "this kernel launch was cleared");
        return NULL;
    }
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        /* the one keyword: cooperative=, for a module's kernels */
        int yes;
        if (PyTuple_GET_SIZE(kwnames) != 1 || !f->kind->cooperative ||
            PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0),
                                             "cooperative") != 0) {
            return PyErr_Format(
                PyExc_TypeError, "%s takes positional arguments only%s%s%s", f->name,
                f->kind->cooperative ? " (and cooperative=True)" : "",
                f->usage != NULL ? ": " : "", f->usage != NULL ? f->usage : "");
        }
        if ((yes = PyObject_IsTrue(args[nargs])) < 0) {
            return NULL;
        }
        coop = l->cfg;
        coop.cooperative = yes;
        cfg = &coop;
    }
    if (nargs != f->nargs) {
        return PyErr_Format(PyExc_TypeError, "%s takes %d argument%s, got %zd%s%s",
                            f->name, f->nargs, f->nargs == 1 ? "" : "s", nargs,
                            f->usage != NULL ? ": " : "",
                            f->usage != NULL ? f->usage : "");
    }
    if (cfg->has_stream) {
        s = cfg->stream;
    }
    else {
        (void)pg_resolve_stream(l->st, NULL, &s);
    }
    /* An operation runs where its data is: on the device of the arrays (or
     * the module), whatever device is current. */
    device = f->device;
    for (Py_ssize_t i = 0; device < 0 && i < nargs; i++) {
        if (pg_array_check(l->st, args[i])) {
            device = pg_array_device((pg_array *)args[i]);
        }
    }
    if (device < 0 && pg_current_device(l->st, pg_rt(), &device) < 0) {
        return NULL;
    }
    if (pg_stream_for_device(&s, device, cfg->has_stream) < 0 ||
        pg_device_enter(l->st, pg_rt(), device, &prev) < 0) {
        return NULL;
    }
    rc = f->kind->check_and_launch(l->st, f, cfg, args, device, &s);
    pg_device_leave(pg_rt(), prev);
    if (rc < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* key[0] and key[1] as numbers, for the launch cache: out[0] holds how each
 * is given (an int: 1; a tuple of k ints: k + 1, per item in 4 bits), then
 * the ints. 0 when the key is not two ints or tuples of up to three ints. */
static int
key_numbers(PyObject *key, long long out[7])
{
    int at = 1;
    if (!PyTuple_CheckExact(key) || PyTuple_GET_SIZE(key) != 2) {
        return 0;
    }
    out[0] = 0;
    for (Py_ssize_t i = 0; i < 2; i++) {
        PyObject *item = PyTuple_GET_ITEM(key, i);
        Py_ssize_t n = 1;
        PyObject *const *items = &item;
        if (PyTuple_CheckExact(item)) {
            n = PyTuple_GET_SIZE(item);
            items = &PyTuple_GET_ITEM(item, 0);
            if (n < 1 || n > 3) {
                return 0;
            }
            out[0] |= (long long)(n + 1) << (4 * i);
        }
        else {
            out[0] |= 1LL << (4 * i);
        }
        for (Py_ssize_t j = 0; j < n; j++) {
            int overflow = 0;
            if (!PyLong_CheckExact(items[j])) {
                return 0;
            }
            out[at++] = PyLong_AsLongLongAndOverflow(items[j], &overflow);
            if (overflow != 0) {
                return 0;
            }
        }
    }
    for (; at < 7; at++) {
        out[at] = 0;
    }
    return 1;
}

PyObject *
pg_launchable_getitem(PyObject *self, PyObject *key)
{
    pg_launchable *f = (pg_launchable *)self;
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    pg_launch_config cfg;
    pg_launch *l;
    long long numbers[7];
    int plain;
    if (st == NULL) {
        return NULL;
    }
    plain = key_numbers(key, numbers);
    if (plain && f->last_key[0] != 0 &&
        memcmp(numbers, f->last_key, sizeof(numbers)) == 0) {
        /* the same launch as last time: parsed, checked, and made */
        if (f->last_launch != NULL) {
            return Py_NewRef(f->last_launch);
        }
        cfg = f->last_cfg;
    }
    else {
        if (pg_parse_launch_config(st, key, f->usage != NULL ? f->usage : f->name,
                                   &cfg) < 0) {
            return NULL;
        }
        if (cfg.shared_bytes != 0 && !f->kind->dynamic_shared) {
            PyErr_Format(PyExc_ValueError,
                         "%s kernels use no dynamic shared memory; the fourth launch "
                         "setting must be 0",
                         f->kind->name);
            return NULL;
        }
        if (plain) {
            memcpy(f->last_key, numbers, sizeof(numbers));
            f->last_cfg = cfg;
            Py_CLEAR(f->last_launch);
        }
    }
    l = PyObject_GC_New(pg_launch, st->LaunchType);
    if (l == NULL) {
        return NULL;
    }
    l->vectorcall = Launch_vectorcall;
    l->st = st;
    l->function = (pg_launchable *)Py_NewRef(self);
    l->cfg = cfg;
    Py_XINCREF(l->cfg.stream.obj);
    PyObject_GC_Track(l);
    if (plain && f->last_launch == NULL) {
        f->last_launch = Py_NewRef((PyObject *)l);
    }
    return (PyObject *)l;
}

void
pg_launchable_forget(pg_launchable *f)
{
    Py_CLEAR(f->last_launch);
    f->last_key[0] = 0;
}

static PyObject *
Launch_repr(PyObject *self)
{
    pg_launch *l = (pg_launch *)self;
    return PyUnicode_FromFormat("<pygpu kernel %s[(%u, %u, %u), (%u, %u, %u)]>",
                                l->function != NULL ? l->function->name : "(cleared)",
                                l->cfg.grid.x, l->cfg.grid.y, l->cfg.grid.z,
                                l->cfg.block.x, l->cfg.block.y, l->cfg.block.z);
}

static PyObject *
Launch_get(PyObject *self, void *closure)
{
    pg_launch *l = (pg_launch *)self;
    switch ((int)(intptr_t)closure) {
    case 0: return Py_BuildValue("(III)", l->cfg.grid.x, l->cfg.grid.y, l->cfg.grid.z);
    case 1:
        return Py_BuildValue("(III)", l->cfg.block.x, l->cfg.block.y, l->cfg.block.z);
    case 2: return PyLong_FromUnsignedLong(l->cfg.shared_bytes);
    default: return Py_NewRef(l->function != NULL ? (PyObject *)l->function : Py_None);
    }
}

static int
Launch_traverse(PyObject *self, visitproc visit, void *arg)
{
    pg_launch *l = (pg_launch *)self;
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(l->function);
    Py_VISIT(l->cfg.stream.obj);
    return 0;
}

static int
Launch_clear(PyObject *self)
{
    pg_launch *l = (pg_launch *)self;
    Py_CLEAR(l->function);
    Py_CLEAR(l->cfg.stream.obj);
    return 0;
}

static void
Launch_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    (void)Launch_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyGetSetDef Launch_getset[] = {
    {"grid", Launch_get, NULL, "Blocks per grid, (x, y, z).", (void *)0},
    {"block", Launch_get, NULL, "Threads per block, (x, y, z).", (void *)1},
    {"shared_bytes", Launch_get, NULL, "Bytes of dynamic shared memory per block.",
     (void *)2},
    {"kernel", Launch_get, NULL, "The kernel launched.", (void *)3},
    {NULL},
};

static PyMemberDef Launch_members[] = {
    {"__vectorcalloffset__", Py_T_PYSSIZET, offsetof(pg_launch, vectorcall),
     Py_READONLY},
    {NULL},
};

static PyType_Slot Launch_slots[] = {
    {Py_tp_dealloc, Launch_dealloc},
    {Py_tp_traverse, Launch_traverse},
    {Py_tp_clear, Launch_clear},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_repr, Launch_repr},
    {Py_tp_getset, Launch_getset},
    {Py_tp_members, Launch_members},
    {Py_tp_doc, "A kernel (prebuilt, or a Function of a Module) bound to a launch "
                "configuration; call it with the kernel's arguments."},
    {0, NULL},
};

PyType_Spec pg_launch_spec = {
    .name = "pygpu.KernelLaunch",
    .basicsize = sizeof(pg_launch),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = Launch_slots,
};

/* ---- Kernel: a prebuilt kernel, launched as kernel[grid, block](...) ------------ */

typedef struct {
    pg_launchable head;
    pg_kernel_id id;
} pg_kernel;

static int
Kernel_check_and_launch(pg_state *st, pg_launchable *f, const pg_launch_config *cfg,
                        PyObject *const *args, int device, const pg_stream_ref *s)
{
    pg_kernel_id id = ((pg_kernel *)f)->id;
    return kernel_info[id].run(st, kernel_info[id].name, args, cfg->grid, cfg->block,
                               device, s);
}

static const pg_launch_kind prebuilt_kind = {
    .name = "prebuilt",
    .dynamic_shared = 0,
    .check_and_launch = Kernel_check_and_launch,
};

static PyObject *
Kernel_call(PyObject *self, PyObject *Py_UNUSED(args), PyObject *Py_UNUSED(kwargs))
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
    pg_kernel_id id = ((pg_kernel *)self)->id;
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
    {Py_tp_dealloc, Kernel_dealloc}, {Py_mp_subscript, pg_launchable_getitem},
    {Py_tp_call, Kernel_call},       {Py_tp_repr, Kernel_repr},
    {Py_tp_getset, Kernel_getset},   {0, NULL},
};

/* Holds no Python object: not a GC type. */
PyType_Spec pg_kernel_spec = {
    .name = "pygpu.Kernel",
    .basicsize = sizeof(pg_kernel),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = Kernel_slots,
};

/* pygpu._core.kernels: name -> Kernel, in the order of the one list. */
int
pg_kernels_init(PyObject *module, pg_state *st)
{
    st->kernels = PyDict_New();
    if (st->kernels == NULL) {
        return -1;
    }
    for (int i = 0; i < PG_K_COUNT; i++) {
        pg_kernel *k = PyObject_New(pg_kernel, st->KernelType);
        if (k == NULL) {
            return -1;
        }
        k->head.kind = &prebuilt_kind;
        k->head.name = kernel_info[i].name;
        k->head.usage = kernel_info[i].signature;
        k->head.nargs = kernel_info[i].nargs;
        k->head.device = -1;
        k->head.last_key[0] = 0;
        k->head.last_launch = NULL;
        k->id = (pg_kernel_id)i;
        if (PyDict_SetItemString(st->kernels, kernel_info[i].name, (PyObject *)k) < 0) {
            Py_DECREF(k);
            return -1;
        }
        Py_DECREF(k);
    }
    return PyModule_AddObjectRef(module, "kernels", st->kernels);
}
