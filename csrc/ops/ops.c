/* The high-level calls, which choose the launch configuration themselves:
 * pygpu.add and add_one, and the operator + of DeviceArray (matmul and @
 * are matmul.c's).
 * They make dense operands where needed and go through launch.c's checks and
 * launchers (pg_kernel_run), as kernels.<name>[grid, block](...) does.
 * Also the operators' answers to bad input (operands pygpu does not take,
 * dtypes the device lacks), DeviceArray.__array_ufunc__, and the hand-over
 * of the other operators and ufuncs to pygpu._ops.ufunc. */
#include <string.h>

#include "pygpu.h"

/* add and add_one's grid over n elements: 256 threads a block,
 * PG_FLAT_ELEMS_PER_THREAD elements a thread, so that each thread has its
 * loads in flight at once, and there are blocks enough to fill any device.
 * (8 a thread for add, which reads two arrays, ran at 4372 GB/s against
 * 4315 at 16 in a program of its own on an H200, but at 4270 against 4336
 * in `python -m benchmarks` on another.) */
static pg_dim3
flat_config(npy_intp n)
{
    const long long per_block = 256 * PG_FLAT_ELEMS_PER_THREAD;
    long long blocks = ((long long)n + per_block - 1) / per_block;
    pg_dim3 grid = {1, 1, 1};
    if (blocks > 0x7fffffffLL) {
        blocks = 0x7fffffffLL; /* the kernels' grid-stride loops do the rest */
    }
    grid.x = (unsigned int)(blocks < 1 ? 1 : blocks);
    return grid;
}

static const pg_dim3 flat_block = {256, 1, 1};

/* Writes a result into an array the kernels cannot write directly (a strided
 * view) by copying it in from the dense result. Returns a new reference to
 * target, or NULL. */
static PyObject *
write_back(pg_state *st, PyObject *target, PyObject *result, const pg_stream_ref *s)
{
    int rc;
    if (result == NULL) {
        return NULL;
    }
    rc = pg_array_copy_into(st, (pg_array *)target, (pg_array *)result, s);
    Py_DECREF(result);
    return rc < 0 ? NULL : Py_NewRef(target);
}

/* An operation runs where its data is: makes `device` (its arrays') current,
 * with *s made fit for it (an explicit stream of another device is an
 * error); restore with pg_device_leave(pg_rt(), *prev). */
static int
enter_device(pg_state *st, int device, pg_stream_ref *s, int explicit, int *prev)
{
    if (pg_stream_for_device(s, device, explicit) < 0) {
        return -1;
    }
    return pg_device_enter(st, pg_rt(), device, prev);
}

/* ---- elementwise operations, the NumPy way ----------------------------------- */

static const char *const op_names[PG_OP_COUNT] = {
    [PG_OP_ADD] = "add",
    [PG_OP_SUBTRACT] = "subtract",
    [PG_OP_MULTIPLY] = "multiply",
    [PG_OP_EQUAL] = "equal",
    [PG_OP_NOT_EQUAL] = "not_equal",
    [PG_OP_LESS] = "less",
    [PG_OP_LESS_EQUAL] = "less_equal",
    [PG_OP_GREATER] = "greater",
    [PG_OP_GREATER_EQUAL] = "greater_equal",
    [PG_OP_CAST] = NULL,
};

static int
is_comparison(int op)
{
    return op >= PG_OP_EQUAL && op <= PG_OP_GREATER_EQUAL;
}

/* A value that takes part in an operation as a scalar: a Python or NumPy
 * number (or bool), or a 0-d ndarray. */
static int
is_scalar_operand(PyObject *o)
{
    if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o)) {
        return 1;
    }
    if (PyArray_IsScalar(o, Bool) || PyArray_IsScalar(o, Number)) {
        return 1;
    }
    return PyArray_Check(o) && PyArray_NDIM((PyArrayObject *)o) == 0;
}

/* A scalar operand of a dtype the device has: a Python number (or bool),
 * or a NumPy scalar or 0-d ndarray of one of pygpu's dtypes. */
static int
is_device_scalar(PyObject *o)
{
    PyArray_Descr *d;
    int r;
    if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o)) {
        return 1;
    }
    if (PyArray_Check(o)) {
        return PyArray_NDIM((PyArrayObject *)o) == 0 &&
               pg_dtype_info_of(PyArray_TYPE((PyArrayObject *)o)) != NULL;
    }
    if (!PyArray_IsScalar(o, Generic)) {
        return 0;
    }
    d = PyArray_DescrFromScalar(o);
    if (d == NULL) {
        PyErr_Clear();
        return 0;
    }
    r = pg_dtype_info_of(d->type_num) != NULL;
    Py_DECREF(d);
    return r;
}

/* 1 when o's type has an __array_ufunc__ (NEP 13) of its own, not ndarray's
 * (None included): it takes part in NumPy's dispatch, and an operator gives
 * way to it (NotImplemented), as NumPy's operators do. */
static int
overrides_ufuncs(PyObject *o)
{
    PyObject *attr, *base;
    int r;
    if (PyArray_CheckExact(o) || PyList_CheckExact(o) || PyTuple_CheckExact(o) ||
        PyUnicode_CheckExact(o) || o == Py_None || PyArray_IsScalar(o, Generic)) {
        return 0;
    }
    attr = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__array_ufunc__");
    if (attr == NULL) {
        PyErr_Clear();
        return 0;
    }
    base = PyObject_GetAttrString((PyObject *)&PyArray_Type, "__array_ufunc__");
    if (base == NULL) {
        PyErr_Clear();
    }
    r = attr != base;
    Py_DECREF(attr);
    Py_XDECREF(base);
    return r;
}

/* Data in host memory that NumPy would take as an array operand: an ndarray
 * (not 0-d, not of a type with its own __array_ufunc__), a list or a tuple.
 * pygpu never copies it to the device behind the caller's back. */
static int
is_host_data(PyObject *o)
{
    if (PyList_Check(o) || PyTuple_Check(o)) {
        return 1;
    }
    return PyArray_Check(o) && PyArray_NDIM((PyArrayObject *)o) > 0 &&
           (PyArray_CheckExact(o) || !overrides_ufuncs(o));
}

/* Another library's device array (CUDA array interface, DLPack): an
 * operator gives way to it (NotImplemented), and never asks NumPy to convert
 * it (which would copy it to the host, or fail). */
static int
is_foreign_device_array(PyObject *o)
{
    PyObject *tp = (PyObject *)Py_TYPE(o);
    if (PyArray_Check(o)) { /* host memory, whatever its DLPack says */
        return 0;
    }
    return PyObject_HasAttrString(tp, "__cuda_array_interface__") ||
           PyObject_HasAttrString(tp, "__dlpack__");
}

/* The TypeError for an operand that is neither a DeviceArray nor a scalar;
 * host: it is host data, which pygpu copies only when told to. */
static PyObject *
not_an_operand(const char *what, PyObject *bad, int host)
{
    return PyErr_Format(PyExc_TypeError,
                        "%s takes pygpu.DeviceArrays and scalars; got %.100s%s", what,
                        Py_TYPE(bad)->tp_name,
                        host ? " (host data: copy it to the device explicitly with "
                               "pygpu.asarray first)"
                             : "");
}

/* NumPy's ufunc for op, looked up once per module (numpy.add, ...). */
static PyObject *
ufunc_of(pg_state *st, int op)
{
    if (st->ufuncs[op] == NULL) {
        PyObject *np = PyImport_ImportModule("numpy");
        if (np == NULL) {
            return NULL;
        }
        st->ufuncs[op] = PyObject_GetAttrString(np, op_names[op]);
        Py_DECREF(np);
    }
    return st->ufuncs[op];
}

/* What NumPy does with the operands, asked of NumPy on stand-ins with no
 * elements: an array stands in as numpy.empty(0, its dtype), a scalar as
 * itself, so that NumPy 2's rules for Python and NumPy scalars (NEP 50),
 * its promotion table and its errors (OverflowError for a Python int that
 * does not fit, TypeError for bool - bool, the casting rule for out=) are
 * NumPy's own. */
static PyObject *
standin_of(PyObject *o, pg_array *a)
{
    if (a == NULL) {
        return Py_NewRef(o);
    }
    npy_intp zero = 0;
    Py_INCREF(a->descr);
    return PyArray_Empty(1, &zero, a->descr, 0);
}

typedef struct {
    PyArray_Descr *result;  /* the result's dtype */
    PyArray_Descr *compute; /* the type the kernel computes in */
} promotion;

static int
promote(pg_state *st, int op, PyObject *a, pg_array *A, PyObject *b, pg_array *B,
        pg_array *out, promotion *p)
{
    PyObject *ufunc, *sa = NULL, *sb = NULL, *res = NULL, *o = NULL;
    int rc = -1;
    p->result = p->compute = NULL;
    /* the common case, without asking NumPy: two arrays of one dtype */
    if (A != NULL && B != NULL && PyArray_EquivTypes(A->descr, B->descr) &&
        out == NULL && !(op == PG_OP_SUBTRACT && A->descr->type_num == NPY_BOOL)) {
        p->compute = (PyArray_Descr *)Py_NewRef(A->descr);
        p->result = is_comparison(op) ? PyArray_DescrFromType(NPY_BOOL)
                                      : (PyArray_Descr *)Py_NewRef(A->descr);
        return 0;
    }
    if ((ufunc = ufunc_of(st, op)) == NULL || (sa = standin_of(a, A)) == NULL ||
        (sb = standin_of(b, B)) == NULL) {
        goto done;
    }
    if (out != NULL) { /* NumPy's casting rule for out= (same_kind) */
        npy_intp zero = 0;
        Py_INCREF(out->descr);
        o = PyArray_Empty(1, &zero, out->descr, 0);
        res = o == NULL ? NULL : PyObject_CallFunctionObjArgs(ufunc, sa, sb, o, NULL);
        if (res == NULL) {
            goto done;
        }
        Py_CLEAR(res);
    }
    /* the loop's type, out= or not: float16 *= float32(1e30) computes in
     * float32 and casts the result (0 * 1e30 is 0, not 0 * inf) */
    res = PyObject_CallFunctionObjArgs(ufunc, sa, sb, NULL);
    if (res == NULL) {
        goto done;
    }
    if (!PyArray_Check(res)) {
        PyErr_SetString(PyExc_SystemError, "pygpu: NumPy's ufunc gave no array");
        goto done;
    }
    if (is_comparison(op)) {
        /* NumPy compares in the common type of the operands */
        PyObject *rt = PyObject_CallMethod(PyImport_AddModule("numpy"), "result_type",
                                           "OO", sa, sb);
        if (rt == NULL || !PyArray_DescrCheck(rt)) {
            Py_XDECREF(rt);
            goto done;
        }
        p->compute = (PyArray_Descr *)rt;
        p->result = PyArray_DescrFromType(NPY_BOOL);
    }
    else {
        p->result = (PyArray_Descr *)Py_NewRef(PyArray_DESCR((PyArrayObject *)res));
        p->compute = (PyArray_Descr *)Py_NewRef(p->result);
    }
    rc = 0;
done:
    Py_XDECREF(sa);
    Py_XDECREF(sb);
    Py_XDECREF(o);
    Py_XDECREF(res);
    return rc;
}

/* A scalar operand: the value converted to the compute type by NumPy.
 * Returns 0, or 1 when it does not fit (a comparison with a Python int out
 * of range, whose answer is then the same for every element), or -1. */
static int
scalar_operand(PyObject *o, PyArray_Descr *compute, pg_operand *op)
{
    PyArrayObject *v;
    memset(op, 0, sizeof(*op));
    op->type = pg_dtype_info_of(compute->type_num)->element;
    Py_INCREF(compute);
    v = (PyArrayObject *)PyArray_FromAny(o, compute, 0, 0, NPY_ARRAY_FORCECAST, NULL);
    if (v == NULL) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            return 1;
        }
        return -1;
    }
    memcpy(op->value, PyArray_DATA(v), (size_t)PyDataType_ELSIZE(compute));
    Py_DECREF(v);
    return 0;
}

/* NumPy's message for operands that do not broadcast. */
static PyObject *
broadcast_error(pg_array *A, pg_array *B)
{
    PyObject *np = PyImport_AddModule("numpy"), *sa, *sb, *r;
    sa = PyArray_IntTupleFromIntp(A->nd, A->shape);
    sb = PyArray_IntTupleFromIntp(B->nd, B->shape);
    r = sa == NULL || sb == NULL || np == NULL
            ? NULL
            : PyObject_CallMethod(np, "broadcast_shapes", "OO", sa, sb);
    if (r != NULL) { /* NumPy found no fault: say it ourselves */
        Py_DECREF(r);
        PyErr_Format(PyExc_ValueError,
                     "operands could not be broadcast together with shapes %R %R", sa,
                     sb);
    }
    Py_XDECREF(sa);
    Py_XDECREF(sb);
    return NULL;
}

/* "a float32 array", "a 0-d float128 array", "a numpy.longdouble" */
static PyObject *
describe_operand(PyObject *o, pg_array *a)
{
    if (a != NULL) {
        return PyUnicode_FromFormat("a %S array", (PyObject *)a->descr);
    }
    if (PyArray_Check(o)) {
        return PyUnicode_FromFormat("a 0-d %S array",
                                    (PyObject *)PyArray_DESCR((PyArrayObject *)o));
    }
    return PyUnicode_FromFormat("a %s", Py_TYPE(o)->tp_name);
}

/* NumPy's answer may be a dtype the device does not have (a numpy.longdouble
 * operand gives float128, a timedelta64 one timedelta64): TypeError naming
 * it, before anything reads the dtype table. */
static int
check_device_dtypes(int op, PyObject *a, pg_array *A, PyObject *b, pg_array *B,
                    const promotion *p)
{
    PyArray_Descr *bad = NULL;
    PyObject *da = NULL, *db = NULL, *prefix = NULL;
    const char *text = NULL;
    if (pg_dtype_info_of(p->compute->type_num) == NULL) {
        bad = p->compute;
    }
    else if (pg_dtype_info_of(p->result->type_num) == NULL) {
        bad = p->result;
    }
    if (bad == NULL) {
        return 0;
    }
    if ((da = describe_operand(a, A)) != NULL &&
        (db = describe_operand(b, B)) != NULL &&
        (prefix = PyUnicode_FromFormat("%s of %U and %U %s %S: ", op_names[op], da, db,
                                       is_comparison(op) ? "compares in" : "gives",
                                       (PyObject *)bad)) != NULL &&
        (text = PyUnicode_AsUTF8(prefix)) != NULL) {
        (void)pg_unsupported_dtype(text, bad);
    }
    Py_XDECREF(da);
    Py_XDECREF(db);
    Py_XDECREF(prefix);
    return -1;
}

static int
check_same_device(const char *what, pg_array *x, pg_array *y)
{
    if (x == NULL || y == NULL || pg_array_device(x) == pg_array_device(y)) {
        return 0;
    }
    PyErr_Format(PyExc_ValueError,
                 "%s: the arrays are on different devices (%d and %d); copy one to "
                 "the other's device first (d.copy_to_device or cuda.to_device under "
                 "`with cuda.gpus[i]:`)",
                 what, pg_array_device(x), pg_array_device(y));
    return -1;
}

/* The fast path of +: one dtype the vectorized add kernel knows, one dense
 * layout, no broadcasting. Returns 1 if it does not apply. */
static int
add_fast(pg_state *st, pg_array *A, pg_array *B, pg_operand *scalar, pg_array *out,
         const pg_stream_ref *s)
{
    const pg_dtype_info *info = pg_dtype_info_of(out->descr->type_num);
    const pg_backend *rt = pg_rt();
    int prev = 0;
    pg_err err;
    if (info->kernel < 0 || !PyArray_EquivTypes(A->descr, out->descr) ||
        !pg_same_shape(A->nd, A->shape, out->nd, out->shape) ||
        !pg_same_dense_layout(A->nd, A->shape, A->strides, A->flags, out->strides,
                              out->flags) ||
        (B != NULL && (!PyArray_EquivTypes(B->descr, out->descr) ||
                       !pg_same_shape(B->nd, B->shape, out->nd, out->shape) ||
                       !pg_same_dense_layout(B->nd, B->shape, B->strides, B->flags,
                                             out->strides, out->flags)))) {
        return 1;
    }
    if (pg_array_size(out) == 0) {
        return 0; /* nothing to launch (and an empty array has no memory) */
    }
    if (pg_device_enter(st, rt, pg_array_device(out), &prev) < 0) {
        return -1;
    }
    pg_array_note_stream(A, s);
    pg_array_note_stream(out, s);
    if (B != NULL) {
        pg_array_note_stream(B, s);
    }
    err = rt->kernels->add(info->kernel, A->data, B != NULL ? B->data : NULL,
                           scalar != NULL ? scalar->value : NULL, out->data,
                           pg_array_size(out), flat_config(pg_array_size(out)),
                           flat_block, s->handle);
    pg_device_leave(rt, prev);
    if (err != PG_SUCCESS) {
        pg_raise(st, err, pg_kernel_names.add);
        return -1;
    }
    return 0;
}

PyObject *
pg_binary(pg_state *st, int op, PyObject *a, PyObject *b, PyObject *out_obj,
          const pg_stream_ref *stream, int stream_given)
{
    const char *what = op_names[op];
    pg_array *A = pg_array_check(st, a) ? (pg_array *)a : NULL;
    pg_array *B = pg_array_check(st, b) ? (pg_array *)b : NULL;
    pg_array *out = NULL, *target = NULL;
    pg_operand oa, ob;
    promotion p = {NULL, NULL};
    npy_intp shape[PG_MAXDIMS];
    int nd = 0, fortran, rc, prev = -1, entered = 0;
    pg_stream_ref on = *stream;
    const pg_stream_ref *s = &on;
    PyObject *res = NULL;

    if (pg_get_rt(st) == NULL) {
        return NULL;
    }
    if ((A == NULL && !is_scalar_operand(a)) || (B == NULL && !is_scalar_operand(b)) ||
        (A == NULL && B == NULL)) {
        PyObject *bad = A == NULL && !is_scalar_operand(a) ? a : b;
        return not_an_operand(what, bad, is_host_data(bad));
    }
    if (out_obj != NULL) {
        if (!pg_array_check(st, out_obj)) {
            return PyErr_Format(PyExc_TypeError,
                                "%s: out must be a pygpu.DeviceArray, not %.100s", what,
                                Py_TYPE(out_obj)->tp_name);
        }
        out = (pg_array *)out_obj;
        if (pg_array_check_writeable(out, what) < 0) {
            return NULL;
        }
    }
    if (check_same_device(what, A, B) < 0 || check_same_device(what, A, out) < 0 ||
        check_same_device(what, B, out) < 0) {
        return NULL;
    }
    /* NumPy resolves the types first, then broadcasts: its errors come in
     * that order */
    if (promote(st, op, a, A, b, B, out, &p) < 0 ||
        check_device_dtypes(op, a, A, b, B, &p) < 0) {
        goto done;
    }
    if (pg_broadcast_shape(A != NULL ? A->nd : 0, A != NULL ? A->shape : NULL,
                           B != NULL ? B->nd : 0, B != NULL ? B->shape : NULL, &nd,
                           shape) < 0) {
        (void)broadcast_error(A, B);
        goto done;
    }
    if (out != NULL && !pg_same_shape(nd, shape, out->nd, out->shape)) {
        /* the inputs broadcast to out's shape where it holds theirs, as NumPy's */
        int nd2 = 0;
        npy_intp shape2[PG_MAXDIMS];
        if (pg_broadcast_shape(nd, shape, out->nd, out->shape, &nd2, shape2) == 0 &&
            pg_same_shape(nd2, shape2, out->nd, out->shape)) {
            nd = out->nd;
            memcpy(shape, out->shape, sizeof(npy_intp) * (size_t)nd);
        }
    }
    if (out != NULL && !pg_same_shape(nd, shape, out->nd, out->shape)) {
        PyObject *so = PyArray_IntTupleFromIntp(out->nd, out->shape);
        PyObject *sb = PyArray_IntTupleFromIntp(nd, shape);
        if (so != NULL && sb != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "non-broadcastable output operand with shape %R doesn't match "
                         "the broadcast shape %R",
                         so, sb);
        }
        Py_XDECREF(so);
        Py_XDECREF(sb);
        goto done;
    }
    /* the operation runs on its arrays' device */
    if (enter_device(st, pg_array_device(A != NULL ? A : B), &on, stream_given, &prev) <
        0) {
        goto done;
    }
    entered = 1;
    /* operands */
    if (A != NULL) {
        (void)pg_operand_of_array(&oa, A, nd, shape);
    }
    else if ((rc = scalar_operand(a, p.compute, &oa)) != 0) {
        goto constant_or_error;
    }
    if (B != NULL) {
        (void)pg_operand_of_array(&ob, B, nd, shape);
    }
    else if ((rc = scalar_operand(b, p.compute, &ob)) != 0) {
        goto constant_or_error;
    }
    /* the result, or a temporary where out overlaps an input unsafely */
    fortran = (A == NULL || ((A->flags & NPY_ARRAY_F_CONTIGUOUS) &&
                             !(A->flags & NPY_ARRAY_C_CONTIGUOUS))) &&
              (B == NULL || ((B->flags & NPY_ARRAY_F_CONTIGUOUS) &&
                             !(B->flags & NPY_ARRAY_C_CONTIGUOUS)));
    if (out != NULL && !((A != NULL && pg_array_overlap_unsafe(out, A)) ||
                         (B != NULL && pg_array_overlap_unsafe(out, B)))) {
        target = (pg_array *)Py_NewRef(out);
    }
    else {
        target = pg_array_empty(st, nd, shape, out != NULL ? out->descr : p.result,
                                fortran, s);
        if (target == NULL) {
            goto done;
        }
    }
    if (A != NULL) {
        pg_array_note_stream(A, s);
    }
    if (B != NULL) {
        pg_array_note_stream(B, s);
    }
    rc = 1;
    if (op == PG_OP_ADD && A != NULL && PyArray_EquivTypes(p.compute, target->descr)) {
        rc = add_fast(st, A, B, B == NULL ? &ob : NULL, target, s);
    }
    else if (op == PG_OP_ADD && B != NULL && A == NULL &&
             PyArray_EquivTypes(p.compute, target->descr)) {
        rc = add_fast(st, B, NULL, &oa, target, s); /* scalar + array */
    }
    if (rc == 1) {
        rc = pg_elementwise(st, op, pg_dtype_info_of(p.compute->type_num)->element,
                            target, &oa, &ob, s);
    }
    if (rc < 0) {
        goto done;
    }
    if (out != NULL && target != out &&
        pg_array_copy_into(st, out, target, s) < 0) { /* as if buffered */
        goto done;
    }
    res = Py_NewRef(out != NULL ? (PyObject *)out : (PyObject *)target);
    goto done;

constant_or_error:
    if (rc == 1) {
        /* a Python int no element can equal: NumPy's answer is the same for
         * every element, and NumPy gives it for one of them */
        PyArray_Descr *d = A != NULL ? A->descr : B->descr;
        PyObject *one = NULL, *ans = NULL;
        npy_intp n1 = 1;
        Py_INCREF(d);
        one = PyArray_Zeros(1, &n1, d, 0);
        ans = one == NULL
                  ? NULL
                  : PyObject_CallFunctionObjArgs(ufunc_of(st, op), A != NULL ? one : a,
                                                 A != NULL ? b : one, NULL);
        target = out != NULL ? (pg_array *)Py_NewRef(out)
                             : pg_array_empty(st, nd, shape, p.result, 0, s);
        if (ans != NULL && target != NULL) {
            PyObject *v = PySequence_GetItem(ans, 0);
            if (v != NULL && pg_array_setitem(st, target, v, s) == 0) {
                res = Py_NewRef(target);
            }
            Py_XDECREF(v);
        }
        Py_XDECREF(one);
        Py_XDECREF(ans);
    }
done:
    if (entered) {
        pg_device_leave(pg_rt(), prev);
    }
    Py_XDECREF(target);
    Py_XDECREF(p.result);
    Py_XDECREF(p.compute);
    return res;
}

/* The module state of an operation with one of our arrays among a and b. */
static pg_state *
state_of_operands(PyObject *a, PyObject *b)
{
    PyTypeObject *tp = PyType_GetModuleByDef(Py_TYPE(a), &pg_module_def) != NULL
                           ? Py_TYPE(a)
                           : Py_TYPE(b);
    pg_state *st;
    PyErr_Clear();
    st = pg_state_of_type(tp);
    if (st == NULL) {
        PyErr_Clear();
    }
    return st;
}

/* A new bool array of d's shape, on d's device, every element `value`. */
static PyObject *
constant_bool(pg_state *st, pg_array *d, int value)
{
    PyArray_Descr *b = PyArray_DescrFromType(NPY_BOOL);
    pg_array *res = NULL;
    pg_stream_ref cur;
    (void)pg_resolve_stream(st, NULL, &cur);
    res = pg_array_empty_on(st, pg_array_device(d), d->nd, d->shape, b, 0, &cur);
    Py_DECREF(b);
    if (res != NULL &&
        pg_array_setitem(st, res, value ? Py_True : Py_False, &cur) < 0) {
        Py_CLEAR(res);
    }
    return (PyObject *)res;
}

/* d == x and d != x for an x that is not a number of a device dtype (None, a
 * string, a datetime, an object): what NumPy's == gives. NumPy converts x
 * (numpy.asarray) and compares; where it has no loop for the two dtypes
 * (float32 and <U1), or compares as Python objects that only an identical
 * object equals (None, object()), the answer is the same for every element,
 * and pygpu gives it. Where the answer hangs on the elements in a dtype the
 * device lacks (Decimal, Fraction: object; timedelta64), TypeError. */
/* 1 where elem == x falls back to `elem is x` for every number elem: x's
 * own == declines a Python int, float and complex (None, object(), a str;
 * Python 3.12 gives None a __eq__ of its own, so the slot itself is no
 * test); 0 where x compares with numbers (Decimal, Fraction); -1 on error. */
static int
compares_by_identity(PyObject *x)
{
    richcmpfunc cmp = Py_TYPE(x)->tp_richcompare;
    PyObject *samples[3] = {PyLong_FromLong(0), PyFloat_FromDouble(0.0),
                            PyComplex_FromDoubles(0.0, 0.0)};
    int result = 1;
    for (int i = 0; i < 3 && result == 1; i++) {
        PyObject *r;
        if (samples[i] == NULL) {
            result = -1;
            break;
        }
        if (cmp == NULL) {
            continue;
        }
        r = cmp(x, samples[i], Py_EQ);
        if (r == NULL) {
            result = -1;
        }
        else if (r != Py_NotImplemented) {
            result = 0;
        }
        Py_XDECREF(r);
    }
    for (int i = 0; i < 3; i++) {
        Py_XDECREF(samples[i]);
    }
    return result;
}

static PyObject *
compare_other(pg_state *st, int op, pg_array *d, PyObject *x)
{
    PyArrayObject *v = NULL;
    PyObject *standin = NULL, *probe = NULL, *res = NULL, *prefix = NULL;
    PyArray_Descr *common = NULL;
    npy_intp zero = 0;
    int cmp = op == PG_OP_EQUAL ? Py_EQ : Py_NE, constant = 0;
    v = (PyArrayObject *)PyArray_FromAny(x, NULL, 0, 0, 0, NULL);
    if (v == NULL) {
        return NULL;
    }
    if (PyArray_NDIM(v) > 0) { /* (a buffer, an object with __array__) */
        res = not_an_operand(op_names[op], x, 1);
        goto done;
    }
    if (pg_dtype_info_of(PyArray_TYPE(v)) != NULL) { /* x.__array__() gave one */
        pg_stream_ref cur;
        (void)pg_resolve_stream(st, NULL, &cur);
        res = pg_binary(st, op, (PyObject *)d, (PyObject *)v, NULL, &cur, 0);
        goto done;
    }
    Py_INCREF(d->descr);
    standin = PyArray_Empty(1, &zero, d->descr, 0);
    if (standin == NULL) {
        goto done;
    }
    /* NumPy's own == first, for its errors (a void x) */
    probe = PyObject_RichCompare(standin, (PyObject *)v, cmp);
    if (probe == NULL) {
        goto done;
    }
    Py_CLEAR(probe);
    probe =
        PyObject_CallFunctionObjArgs(ufunc_of(st, op), standin, (PyObject *)v, NULL);
    if (probe == NULL) {
        /* no loop: NumPy's == gives False (!= True) for each element */
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
            goto done;
        }
        PyErr_Clear();
        constant = 1;
    }
    else if (PyArray_TYPE(v) == NPY_OBJECT) {
        constant = compares_by_identity(x);
        if (constant < 0) {
            goto done;
        }
    }
    if (constant) {
        res = constant_bool(st, d, op == PG_OP_NOT_EQUAL);
        goto done;
    }
    common = PyArray_ResultType(1, &v, 1, &d->descr);
    if (common != NULL &&
        (prefix = PyUnicode_FromFormat(
             "%s of a %S array and a %s compares in %S: ", op_names[op],
             (PyObject *)d->descr, Py_TYPE(x)->tp_name, (PyObject *)common)) != NULL) {
        const char *text = PyUnicode_AsUTF8(prefix);
        if (text != NULL) {
            (void)pg_unsupported_dtype(text, common);
        }
    }
done:
    Py_XDECREF(v);
    Py_XDECREF(standin);
    Py_XDECREF(probe);
    Py_XDECREF(common);
    Py_XDECREF(prefix);
    return res;
}

/* The number protocol and rich comparison (a or b is one of our arrays):
 * DeviceArrays and scalars are computed here; host data (an ndarray, a
 * list, a tuple) is a TypeError that says to copy it explicitly; == and !=
 * with anything else give NumPy's answer (compare_other); an operand with
 * its own __array_ufunc__, or one pygpu does not know, gets NotImplemented,
 * so that Python asks the other side. */
static PyObject *
binary_slot(int op, PyObject *a, PyObject *b, PyObject *out)
{
    pg_state *st = state_of_operands(a, b);
    PyObject *other;
    pg_stream_ref cur;
    if (st == NULL) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    other = pg_array_check(st, a) ? b : a;
    if (!pg_array_check(st, other) &&
        ((op == PG_OP_EQUAL || op == PG_OP_NOT_EQUAL) ? !is_device_scalar(other)
                                                      : !is_scalar_operand(other))) {
        if (overrides_ufuncs(other) || is_foreign_device_array(other)) {
            Py_RETURN_NOTIMPLEMENTED;
        }
        if (!is_host_data(other)) {
            if (other == b && (op == PG_OP_EQUAL || op == PG_OP_NOT_EQUAL)) {
                return compare_other(st, op, (pg_array *)a, b);
            }
            /* a sequence that repeats (str, bytes, array.array) would take a
             * 0-d integer array as its count, by __index__; NumPy multiplies
             * such an operand elementwise or refuses it, never repeats it */
            if (op == PG_OP_MULTIPLY && Py_TYPE(other)->tp_as_sequence != NULL &&
                Py_TYPE(other)->tp_as_sequence->sq_repeat != NULL) {
                return not_an_operand("multiply", other,
                                      !PyUnicode_Check(other) && !PyBytes_Check(other));
            }
            Py_RETURN_NOTIMPLEMENTED;
        }
        /* host data: pg_binary says to copy it */
    }
    (void)pg_resolve_stream(st, NULL, &cur);
    return pg_binary(st, op, a, b, out, &cur, 0);
}

PyObject *
pg_array_add(PyObject *a, PyObject *b)
{
    return binary_slot(PG_OP_ADD, a, b, NULL);
}

PyObject *
pg_array_subtract(PyObject *a, PyObject *b)
{
    return binary_slot(PG_OP_SUBTRACT, a, b, NULL);
}

PyObject *
pg_array_multiply(PyObject *a, PyObject *b)
{
    return binary_slot(PG_OP_MULTIPLY, a, b, NULL);
}

PyObject *
pg_array_iadd(PyObject *a, PyObject *b)
{
    return binary_slot(PG_OP_ADD, a, b, a);
}

PyObject *
pg_array_isubtract(PyObject *a, PyObject *b)
{
    return binary_slot(PG_OP_SUBTRACT, a, b, a);
}

PyObject *
pg_array_imultiply(PyObject *a, PyObject *b)
{
    return binary_slot(PG_OP_MULTIPLY, a, b, a);
}

PyObject *
pg_array_richcompare(PyObject *a, PyObject *b, int cmp)
{
    static const int ops[] = {[Py_LT] = PG_OP_LESS,    [Py_LE] = PG_OP_LESS_EQUAL,
                              [Py_EQ] = PG_OP_EQUAL,   [Py_NE] = PG_OP_NOT_EQUAL,
                              [Py_GT] = PG_OP_GREATER, [Py_GE] = PG_OP_GREATER_EQUAL};
    return binary_slot(ops[cmp], a, b, NULL);
}

/* ---- the Python side: pygpu._ops.ufunc ----------------------------------------- */

/* pygpu._ops.ufunc's function `name`, looked up at its first use and kept in
 * *slot (the module state): a new reference, or NULL. */
static PyObject *
python_side(PyObject **slot, const char *name)
{
    PyObject *module, *fn;
    if (*slot == NULL) {
        module = PyImport_ImportModule("pygpu._ops.ufunc");
        if (module == NULL) {
            return NULL;
        }
        fn = PyObject_GetAttrString(module, name);
        Py_DECREF(module);
        if (fn == NULL) {
            return NULL;
        }
        if (*slot == NULL) { /* (the import may have run this already) */
            *slot = fn;
        }
        else {
            Py_DECREF(fn);
        }
    }
    return Py_NewRef(*slot);
}

/* ---- replaying a plan of pygpu._ops.ufunc ------------------------------------
 * The Python side keeps a plan per kind of call (ufunc.py's _plans: {key:
 * (device, run)}); a repeated call only converts its scalars, allocates and
 * launches (run). The operators and __array_ufunc__ look the call up here
 * first, with the key made as ufunc.py's _plan_key makes it, so that a
 * repeated call pays for no Python but run's. */

/* An operand's part of a plan's key (ufunc.py's _descr): (dtype, shape,
 * strides, device) of a DeviceArray; the type of a bool, int, float or
 * complex; the dtype of a NumPy scalar. NULL, with no error, for others. */
static PyObject *
plan_descr(pg_state *st, PyObject *x)
{
    PyTypeObject *t = Py_TYPE(x);
    if (t == st->DeviceArrayType) {
        pg_array *a = (pg_array *)x;
        PyObject *r = Py_BuildValue(
            "(ONNi)", (PyObject *)a->descr, PyArray_IntTupleFromIntp(a->nd, a->shape),
            PyArray_IntTupleFromIntp(a->nd, a->strides), pg_array_device(a));
        if (r == NULL) {
            PyErr_Clear();
        }
        return r;
    }
    if (t == &PyBool_Type || t == &PyLong_Type || t == &PyFloat_Type ||
        t == &PyComplex_Type) {
        return Py_NewRef((PyObject *)t);
    }
    if (PyArray_IsScalar(x, Generic)) {
        return (PyObject *)PyArray_DescrFromScalar(x);
    }
    return NULL;
}

/* An operand's raw signature for pg_state's plan_last, into sig
 * (PG_PLAN_SIG words): its type, and for a DeviceArray of at most 4
 * dimensions its dtype object, device, ndim, shape and strides. A NumPy
 * scalar's type names its dtype where it is a number or a bool. 1 done, 0
 * for an operand the memo does not take. */
static int
plan_signature(pg_state *st, PyObject *x, uintptr_t *sig)
{
    PyTypeObject *t = Py_TYPE(x);
    memset(sig, 0, PG_PLAN_SIG * sizeof(uintptr_t));
    sig[0] = (uintptr_t)t;
    if (t == st->DeviceArrayType) {
        pg_array *a = (pg_array *)x;
        if (a->nd > (PG_PLAN_SIG - 4) / 2) {
            return 0;
        }
        sig[1] = (uintptr_t)a->descr;
        sig[2] = (uintptr_t)pg_array_device(a);
        sig[3] = (uintptr_t)a->nd;
        for (int i = 0; i < a->nd; i++) {
            sig[4 + 2 * i] = (uintptr_t)a->shape[i];
            sig[5 + 2 * i] = (uintptr_t)a->strides[i];
        }
        return 1;
    }
    return t == &PyBool_Type || t == &PyLong_Type || t == &PyFloat_Type ||
           t == &PyComplex_Type || PyArray_IsScalar(x, Number) ||
           PyArray_IsScalar(x, Bool);
}

/* what an operand's raw signature names: its dtype object or its type */
static PyObject *
sig_object(pg_state *st, PyObject *x)
{
    return Py_TYPE(x) == st->DeviceArrayType ? (PyObject *)((pg_array *)x)->descr
                                             : (PyObject *)Py_TYPE(x);
}

/* ident(a) or ident(a, b) (b NULL), with out=out (a DeviceArray) or not (out
 * NULL), from a plan: ident is the operator's interned name (and name the
 * same), or a NumPy ufunc (name NULL: its __name__ is asked for where
 * needed). A repeat of the last call of ident that found a plan (the same raw
 * signatures, pg_state's plan_last) runs that plan at once; else the plan is
 * looked up under the key that pygpu._ops.ufunc keeps it by (with an output:
 * (_OUT, the key, the output's part)). 1 with *res set, 0 where there is no
 * plan (or the plan declines: the caller takes the Python side), -1 on an
 * error. */
static int
replay_plan(pg_state *st, PyObject *ident, PyObject *name, PyObject *a, PyObject *b,
            PyObject *out, PyObject **res)
{
    PyObject *nm = NULL, *da = NULL, *db = NULL, *dout = NULL, *key = NULL, *plan, *run;
    PyObject *args[3] = {out, a, b};
    PyObject *const *call_args = out != NULL ? args : args + 1;
    const Py_ssize_t nargs = (out != NULL) + (b != NULL ? 2 : 1);
    uintptr_t sig[3 * PG_PLAN_SIG];
    struct pg_plan_last *last = NULL;
    const pg_backend *rt;
    int device = 0, done = 0;
    *res = NULL;
    if (st->py_plans == NULL || PyDict_GET_SIZE(st->py_plans) == 0 ||
        (rt = pg_get_rt(st)) == NULL || pg_current_device(st, rt, &device) < 0) {
        PyErr_Clear();
        return 0;
    }
    if (plan_signature(st, a, sig) &&
        (b == NULL ? (memset(sig + PG_PLAN_SIG, 0, PG_PLAN_SIG * sizeof(uintptr_t)), 1)
                   : plan_signature(st, b, sig + PG_PLAN_SIG)) &&
        (out == NULL
             ? (memset(sig + 2 * PG_PLAN_SIG, 0, PG_PLAN_SIG * sizeof(uintptr_t)), 1)
             : plan_signature(st, out, sig + 2 * PG_PLAN_SIG))) {
        last = &st->plan_last[(((uintptr_t)ident >> 4) ^ (sig[1] >> 4)) % PG_PLAN_LAST];
        if (last->ident == ident && last->device == device && last->run != NULL &&
            memcmp(last->sig, sig, sizeof(sig)) == 0) {
            run = Py_NewRef(last->run); /* the call may replace the memo */
            goto call;
        }
    }
    nm = name != NULL ? Py_NewRef(name) : PyObject_GetAttrString(ident, "__name__");
    if (nm == NULL || !PyUnicode_Check(nm)) {
        PyErr_Clear();
        goto done;
    }
    if ((da = plan_descr(st, a)) == NULL ||
        (b != NULL && (db = plan_descr(st, b)) == NULL) ||
        (out != NULL && (dout = plan_descr(st, out)) == NULL)) {
        goto done;
    }
    key = b != NULL ? PyTuple_Pack(3, nm, da, db) : PyTuple_Pack(2, nm, da);
    if (key != NULL && out != NULL) {
        /* ufunc.py's (_OUT, key, the output's part): _OUT is ("out",) */
        PyObject *tag = Py_BuildValue("(s)", "out");
        Py_SETREF(key, tag != NULL ? PyTuple_Pack(3, tag, key, dout) : NULL);
        Py_XDECREF(tag);
    }
    if (key == NULL) {
        PyErr_Clear();
        goto done;
    }
    plan = PyDict_GetItemWithError(st->py_plans, key); /* borrowed */
    if (plan == NULL || !PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 2 ||
        PyLong_AsLong(PyTuple_GET_ITEM(plan, 0)) != device) {
        PyErr_Clear();
        goto done;
    }
    run = Py_NewRef(PyTuple_GET_ITEM(plan, 1)); /* the call may clear the dict */
    if (last != NULL) {
        /* the dtype objects and types that sig names (not the operands) */
        PyObject *keep =
            PyTuple_Pack(3, sig_object(st, a), b != NULL ? sig_object(st, b) : Py_None,
                         out != NULL ? sig_object(st, out) : Py_None);
        if (keep == NULL) {
            PyErr_Clear();
        }
        else {
            Py_XSETREF(last->ident, Py_NewRef(ident));
            Py_XSETREF(last->run, Py_NewRef(run));
            Py_XSETREF(last->keep, keep);
            last->device = device;
            memcpy(last->sig, sig, sizeof(sig));
        }
    }
call:
    *res = PyObject_Vectorcall(run, call_args, nargs, NULL);
    Py_DECREF(run);
    if (*res == NULL) {
        /* a scalar beyond the loop's type: the Python side says what NumPy says */
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
        }
        else {
            done = -1;
        }
    }
    else if (*res == Py_None) { /* the plan declines (an overlap) */
        Py_CLEAR(*res);
    }
    else {
        done = 1;
    }
done:
    Py_XDECREF(nm);
    Py_XDECREF(da);
    Py_XDECREF(db);
    Py_XDECREF(dout);
    Py_XDECREF(key);
    return done;
}

/* The key of a.<name>() with no arguments in pygpu._ops.reduction's plans,
 * as its _plan_for makes it: (family, dtype, shape, strides, device, axis,
 * ...the call's other arguments): dtype and keepdims for sum, prod, max,
 * min, any, all and mean, keepdims for argmax and argmin. */
int
pg_replay_reduction(pg_state *st, const char *name, PyObject *a, PyObject *axis,
                    PyObject **res)
{
    static const char *const with_dtype[] = {"sum", "prod", "max", "min",
                                             "any", "all",  "mean"};
    PyObject *key = NULL, *family = NULL, *plan, *run;
    pg_array *x = (pg_array *)a;
    const pg_backend *rt;
    int device = 0, done = 0, dtype_arg = -1;
    *res = NULL;
    if (st->py_reduction_plans == NULL ||
        PyDict_GET_SIZE(st->py_reduction_plans) == 0 ||
        Py_TYPE(a) != st->DeviceArrayType) {
        return 0;
    }
    for (size_t i = 0; i < sizeof(with_dtype) / sizeof(with_dtype[0]); i++) {
        if (strcmp(name, with_dtype[i]) == 0) {
            dtype_arg = 1;
        }
    }
    if (dtype_arg < 0 && strcmp(name, "argmax") != 0 && strcmp(name, "argmin") != 0) {
        return 0;
    }
    if ((family = PyUnicode_InternFromString(name)) == NULL) {
        PyErr_Clear();
        return 0;
    }
    /* reduction.py's _plan_for key: the address's place in 16 bytes too (the
     * kernels that load 16 bytes at once are chosen by it) */
    key = dtype_arg > 0
              ? Py_BuildValue("(OONNiiOOO)", family, (PyObject *)x->descr,
                              PyArray_IntTupleFromIntp(x->nd, x->shape),
                              PyArray_IntTupleFromIntp(x->nd, x->strides),
                              pg_array_device(x), (int)((uintptr_t)x->data % 16), axis,
                              Py_None, Py_False)
              : Py_BuildValue("(OONNiiOO)", family, (PyObject *)x->descr,
                              PyArray_IntTupleFromIntp(x->nd, x->shape),
                              PyArray_IntTupleFromIntp(x->nd, x->strides),
                              pg_array_device(x), (int)((uintptr_t)x->data % 16), axis,
                              Py_False);
    Py_DECREF(family);
    if (key == NULL) {
        PyErr_Clear();
        return 0;
    }
    plan = PyDict_GetItemWithError(st->py_reduction_plans, key); /* borrowed */
    Py_DECREF(key);
    if (plan == NULL || !PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 2 ||
        (rt = pg_get_rt(st)) == NULL || pg_current_device(st, rt, &device) < 0 ||
        PyLong_AsLong(PyTuple_GET_ITEM(plan, 0)) != device) {
        PyErr_Clear();
        return 0;
    }
    Py_INCREF(plan); /* the call may clear the dict */
    run = PyTuple_GET_ITEM(plan, 1);
    *res = PyObject_CallOneArg(run, a);
    Py_DECREF(plan);
    done = *res != NULL ? 1 : -1;
    return done;
}

PyObject *
pg_python_operator(const char *name, PyObject *a, PyObject *b, int inplace)
{
    pg_state *st = state_of_operands(a, b != NULL ? b : a);
    PyObject *fn = NULL, *args[4] = {NULL, a, b != NULL ? b : Py_None,
                                     inplace ? Py_True : Py_False};
    PyObject *res = NULL;
    if (st == NULL) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    if ((args[0] = PyUnicode_InternFromString(name)) == NULL) {
        return NULL;
    }
    if (!inplace && replay_plan(st, args[0], args[0], a, b, NULL, &res) != 0) {
        goto done; /* replayed, or an error */
    }
    if ((fn = python_side(&st->py_operator, "operator")) == NULL) {
        goto done;
    }
    res = PyObject_Vectorcall(fn, args, 4, NULL);
done:
    Py_XDECREF(fn);
    Py_XDECREF(args[0]);
    return res;
}

/* `a ** b` (inplace: `a **= b`). NumPy's array power takes a Python int 2
 * as square (every dtype), and for float and complex arrays a Python int -1
 * as reciprocal and a Python float 0.5 as sqrt: answers that differ from
 * power's at special values ((-inf) ** 0.5, complex overflow). The rule is
 * also fusion.py's (power_shortcut in ufunc.py). */
PyObject *
pg_python_power(PyObject *a, PyObject *b, int inplace)
{
    pg_state *st = state_of_operands(a, b);
    const char *name = NULL;
    if (st != NULL && pg_array_check(st, a)) {
        const char kind = ((pg_array *)a)->descr->kind;
        const int inexact = kind == 'f' || kind == 'c';
        if (PyLong_CheckExact(b)) {
            int overflow = 0;
            const long v = PyLong_AsLongAndOverflow(b, &overflow);
            if (v == -1 && PyErr_Occurred()) {
                PyErr_Clear();
            }
            else if (overflow == 0 && v == 2) {
                name = "square";
            }
            else if (overflow == 0 && v == -1 && inexact) {
                name = "reciprocal";
            }
        }
        else if (PyFloat_CheckExact(b) && PyFloat_AS_DOUBLE(b) == 0.5 && inexact) {
            name = "sqrt";
        }
    }
    return name != NULL ? pg_python_operator(name, a, NULL, inplace)
                        : pg_python_operator("power", a, b, inplace);
}

/* The one output a ufunc call names, out=(o,) with o a DeviceArray (NumPy
 * hands out= over as a tuple), else NULL: kwnames is the call's keywords,
 * args[nargs] the first keyword's value. */
static PyObject *
single_out(pg_state *st, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *o;
    if (kwnames == NULL || PyTuple_GET_SIZE(kwnames) != 1 ||
        PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "out") != 0) {
        return NULL;
    }
    o = args[nargs];
    return PyTuple_Check(o) && PyTuple_GET_SIZE(o) == 1 &&
                   pg_array_check(st, PyTuple_GET_ITEM(o, 0))
               ? PyTuple_GET_ITEM(o, 0)
               : NULL;
}

/* Which of the C paths a ufunc call takes: the PG_OP_* of numpy.add, ...,
 * PG_OP_COUNT for numpy.matmul, -1 for none (the Python side), -2 on error.
 * A C path takes __call__ with two inputs, one of them a DeviceArray, none
 * with an __array_ufunc__ of its own, and no keyword but out=(DeviceArray,). */
static int
c_path_of(pg_state *st, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
          PyObject **out)
{
    int op;
    *out = NULL;
    if (nargs != 4 || !PyUnicode_Check(args[1]) ||
        PyUnicode_CompareWithASCIIString(args[1], "__call__") != 0 ||
        (!pg_array_check(st, args[2]) && !pg_array_check(st, args[3]))) {
        return -1;
    }
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0 &&
        (*out = single_out(st, args, nargs, kwnames)) == NULL) {
        return -1;
    }
    for (int i = 2; i < 4; i++) {
        if (!pg_array_check(st, args[i]) && !is_scalar_operand(args[i]) &&
            overrides_ufuncs(args[i])) {
            return -1;
        }
    }
    for (op = PG_OP_ADD; op <= PG_OP_GREATER_EQUAL; op++) {
        PyObject *u = ufunc_of(st, op);
        if (u == NULL) {
            return -2;
        }
        if (u == args[0]) {
            return op;
        }
    }
    if (st->matmul_ufunc == NULL) {
        PyObject *np = PyImport_ImportModule("numpy");
        if (np == NULL) {
            return -2;
        }
        st->matmul_ufunc = PyObject_GetAttrString(np, "matmul");
        Py_DECREF(np);
        if (st->matmul_ufunc == NULL) {
            return -2;
        }
    }
    return args[0] == st->matmul_ufunc ? PG_OP_COUNT : -1;
}

PyObject *
pg_array_ufunc(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
               PyObject *kwnames)
{
    pg_state *st = pg_state_of_type(Py_TYPE(self));
    PyObject *out = NULL, *fn = NULL, *inputs = NULL, *kwargs = NULL, *res = NULL;
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    int op;
    if (st == NULL) {
        return NULL;
    }
    if (nargs < 2) {
        PyErr_SetString(PyExc_TypeError,
                        "__array_ufunc__(ufunc, method, *inputs, **kwargs) needs a "
                        "ufunc and a method");
        return NULL;
    }
    op = c_path_of(st, args, nargs, kwnames, &out);
    if (op == -2) {
        return NULL;
    }
    if (op == PG_OP_COUNT) {
        return pg_matmul(st, args[2], args[3], "auto", out, NULL);
    }
    if (op >= 0) {
        pg_stream_ref cur;
        (void)pg_resolve_stream(st, NULL, &cur);
        return pg_binary(st, op, args[2], args[3], out, &cur, 0);
    }
    if ((nargs == 3 || nargs == 4) && PyUnicode_Check(args[1]) &&
        PyUnicode_CompareWithASCIIString(args[1], "__call__") == 0) {
        /* np.sin(d), np.maximum(d, e), np.sin(d, out=e) (NumPy hands out= over
         * as a tuple): a plan first */
        PyObject *o = single_out(st, args, nargs, kwnames);
        if (o != NULL &&
            (Py_TYPE(o) != st->DeviceArrayType || ((pg_array *)o)->buf->readonly)) {
            o = NULL; /* a read-only one: Python says so */
        }
        if ((nkw == 0 || o != NULL) &&
            replay_plan(st, args[0], NULL, args[2], nargs == 4 ? args[3] : NULL, o,
                        &res) != 0) {
            return res;
        }
    }
    if ((fn = python_side(&st->py_array_ufunc, "array_ufunc")) == NULL ||
        (inputs = PyTuple_New(nargs - 2)) == NULL || (kwargs = PyDict_New()) == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 2; i < nargs; i++) {
        PyTuple_SET_ITEM(inputs, i - 2, Py_NewRef(args[i]));
    }
    for (Py_ssize_t k = 0; k < nkw; k++) {
        if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0) {
            goto done;
        }
    }
    res = PyObject_CallFunctionObjArgs(fn, args[0], args[1], inputs, kwargs, NULL);
done:
    Py_XDECREF(fn);
    Py_XDECREF(inputs);
    Py_XDECREF(kwargs);
    return res;
}

static PyObject *
binary_function(PyObject *m, int op, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    static const pg_signature sigs[3] = {
        {"add",
         2,
         4,
         {{"a", pg_conv_object},
          {"b", pg_conv_object},
          {"out", pg_conv_object_or_none},
          {"stream", pg_conv_stream}}},
        {"subtract",
         2,
         4,
         {{"a", pg_conv_object},
          {"b", pg_conv_object},
          {"out", pg_conv_object_or_none},
          {"stream", pg_conv_stream}}},
        {"multiply",
         2,
         4,
         {{"a", pg_conv_object},
          {"b", pg_conv_object},
          {"out", pg_conv_object_or_none},
          {"stream", pg_conv_stream}}},
    };
    pg_state *st = pg_state_of_module(m);
    PyObject *a = NULL, *b = NULL, *out = NULL;
    pg_stream_arg s;
    if (pg_parse(st, &sigs[op], args, nargs, kwnames, &a, &b, &out, &s) < 0) {
        return NULL;
    }
    if (!pg_array_check(st, a) && !pg_array_check(st, b) && is_scalar_operand(a) &&
        is_scalar_operand(b)) {
        /* scalars alone: the first as a 0-d array, as pygpu's other functions
         * take them (ufunc.py's call) */
        pg_array *a0 = pg_array_from_host(st, a, NULL, &s.ref, 1);
        PyObject *res;
        if (a0 == NULL) {
            return NULL;
        }
        res = pg_binary(st, op, (PyObject *)a0, b, out, &s.ref, s.given);
        Py_DECREF(a0);
        return res;
    }
    return pg_binary(st, op, a, b, out, &s.ref, s.given);
}

static PyObject *
mod_add(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return binary_function(m, PG_OP_ADD, args, nargs, kwnames);
}

static PyObject *
mod_subtract(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return binary_function(m, PG_OP_SUBTRACT, args, nargs, kwnames);
}

static PyObject *
mod_multiply(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return binary_function(m, PG_OP_MULTIPLY, args, nargs, kwnames);
}

static PyObject *
mod_add_one(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {
        "add_one", 1, 2, {{"A", pg_conv_object}, {"stream", pg_conv_stream}}};
    pg_state *st = pg_state_of_module(m);
    PyObject *A = NULL, *dense = NULL, *res = NULL;
    pg_stream_arg s;
    int device = 0, prev = -1;
    if (pg_parse(st, &sig, args, nargs, kwnames, &A, &s) < 0 || pg_get_rt(st) == NULL) {
        return NULL;
    }
    if (!pg_array_check(st, A)) {
        return PyErr_Format(PyExc_TypeError,
                            "add_one: 'A' must be a pygpu.DeviceArray, not %.100s",
                            Py_TYPE(A)->tp_name);
    }
    if (pg_array_check_writeable((pg_array *)A, "add_one") < 0) {
        return NULL;
    }
    device = pg_array_device((pg_array *)A);
    if (enter_device(st, device, &s.ref, s.given, &prev) < 0) {
        return NULL;
    }
    /* a strided view: work on a dense copy, then write it back */
    dense = (((pg_array *)A)->flags & PG_CONTIG)
                ? Py_NewRef(A)
                : pg_array_copy(st, (pg_array *)A, 0, &s.ref);
    if (dense != NULL && pg_kernel_run(st, PG_K_add_one, "add_one", &dense,
                                       flat_config(pg_array_size((pg_array *)dense)),
                                       flat_block, device, &s.ref) == 0) {
        res = write_back(st, A, dense, &s.ref);
        dense = NULL; /* write_back took it */
    }
    Py_XDECREF(dense);
    pg_device_leave(pg_rt(), prev);
    return res;
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

PyMethodDef pg_ops_functions[] = {
    {"add", FASTKW(mod_add),
     "add(a, b, out=None, stream=None)\n--\n\n"
     "a + b elementwise on the device, as numpy.add: DeviceArrays and scalars, "
     "broadcasting, NumPy's type promotion; into out if given. Returns the "
     "result."},
    {"subtract", FASTKW(mod_subtract),
     "subtract(a, b, out=None, stream=None)\n--\n\na - b elementwise, as "
     "numpy.subtract."},
    {"multiply", FASTKW(mod_multiply),
     "multiply(a, b, out=None, stream=None)\n--\n\na * b elementwise, as "
     "numpy.multiply."},
    {"add_one", FASTKW(mod_add_one),
     "add_one(A, stream=None)\n--\n\nA += 1 in place on the device. Returns A."},
    {NULL},
};
