/* a @ b and pygpu.matmul, with NumPy's matmul semantics: 1-D operands (a
 * vector on the left is a row, on the right a column, and that axis leaves
 * the result), batches broadcast over the leading axes, NumPy's promotion
 * and errors, out= with NumPy's casting rule, overlap as if buffered.
 *
 * The product runs in the BLAS library the backend loads (cuBLAS, through
 * the runtime table's blas_gemm) where there is one, for method="auto";
 * pygpu/blas.py finds and loads it at the first product. Elsewhere (the
 * simulator, a GPU without cuBLAS, method="naive", "shared", "tiled") it
 * runs in pygpu's kernels. bool and the integers always run in pygpu's
 * matmul_int (kernels.def), with NumPy's answers bit for bit: sums wrap,
 * bool is the or of ands. Either way no operand is copied whose layout the
 * product can read as it is: batches are walked by strides (a broadcast one
 * has stride 0), and a transposed view is read transposed. */
#include <stdatomic.h>
#include <string.h>

#include "pygpu.h"

/* ---- process-wide state ---------------------------------------------------- */

/* float32 and complex64 products on the BLAS library may round their inputs
 * to TF32 (pygpu.blas.set_allow_tf32); off by default, as in CuPy and
 * PyTorch. */
static atomic_int allow_tf32;

/* Whether pygpu/blas.py loaded the library: asked once per process. */
enum { BLAS_UNTRIED = 0, BLAS_READY = 1, BLAS_ABSENT = 2 };
static atomic_int blas_state;

/* 1 when products go to the BLAS library, 0 when to pygpu's kernels, -1 with
 * an exception. The first call on a backend that can have one asks
 * pygpu.blas._load() (in Python, like NVRTC's search), which looks for the
 * library and loads it. */
static int
blas_ready(const pg_backend *rt)
{
    int state = atomic_load(&blas_state);
    PyObject *mod = NULL, *res = NULL;
    if (rt->blas_gemm == NULL) {
        return 0;
    }
    if (state == BLAS_UNTRIED) {
        mod = PyImport_ImportModule("pygpu.blas");
        res = mod == NULL ? NULL : PyObject_CallMethod(mod, "_load", NULL);
        Py_XDECREF(mod);
        if (res == NULL) {
            return -1;
        }
        state = PyObject_IsTrue(res) ? BLAS_READY : BLAS_ABSENT;
        Py_DECREF(res);
        atomic_store(&blas_state, state);
    }
    return state == BLAS_READY;
}

/* ---- NumPy's answers: result dtype and errors -------------------------------- */

static PyObject *
numpy_matmul(void)
{
    PyObject *np = PyImport_ImportModule("numpy"), *f;
    if (np == NULL) {
        return NULL;
    }
    f = PyObject_GetAttrString(np, "matmul");
    Py_DECREF(np);
    return f;
}

/* A stand-in of `shape` and descr's dtype that NumPy can check a product
 * against: every element is one zero (strides 0), so it costs nothing. Only
 * ever used where the product is known to be refused. */
static PyObject *
standin(PyArray_Descr *descr, int nd, const npy_intp *shape, int which)
{
    static _Alignas(16) char zeros[3][32]; /* one each, so that none overlap */
    npy_intp strides[PG_MAXDIMS] = {0};
    Py_INCREF(descr);
    return PyArray_NewFromDescr(&PyArray_Type, descr, nd, (npy_intp *)shape, strides,
                                zeros[which], NPY_ARRAY_WRITEABLE, NULL);
}

/* Raises NumPy's own error for a product of these shapes (and out), which the
 * caller has found to be refused; where NumPy finds no fault, `fallback`. */
static void
numpy_error(pg_array *A, pg_array *B, pg_array *out, const char *fallback)
{
    PyObject *f = numpy_matmul(), *sa = NULL, *sb = NULL, *so = NULL, *r = NULL;
    if (f == NULL || (sa = standin(A->descr, A->nd, A->shape, 0)) == NULL ||
        (sb = standin(B->descr, B->nd, B->shape, 1)) == NULL ||
        (out != NULL && (so = standin(out->descr, out->nd, out->shape, 2)) == NULL)) {
        goto done;
    }
    r = so != NULL ? PyObject_CallFunctionObjArgs(f, sa, sb, so, NULL)
                   : PyObject_CallFunctionObjArgs(f, sa, sb, NULL);
    if (r != NULL) {
        PyErr_SetString(PyExc_ValueError, fallback);
    }
done:
    Py_XDECREF(f);
    Py_XDECREF(sa);
    Py_XDECREF(sb);
    Py_XDECREF(so);
    Py_XDECREF(r);
}

/* The dtype NumPy's matmul gives for A @ B (into out, whose dtype must take
 * it by the same_kind rule): a new reference, or NULL with NumPy's error. */
static PyArray_Descr *
result_dtype(pg_array *A, pg_array *B, pg_array *out)
{
    PyObject *f = NULL, *sa = NULL, *sb = NULL, *so = NULL, *r = NULL;
    PyArray_Descr *d = NULL;
    npy_intp zero = 0;
    if (PyArray_EquivTypes(A->descr, B->descr) &&
        (out == NULL || PyArray_EquivTypes(A->descr, out->descr))) {
        return (PyArray_Descr *)Py_NewRef(A->descr); /* the common case */
    }
    Py_INCREF(A->descr);
    Py_INCREF(B->descr);
    if ((f = numpy_matmul()) == NULL ||
        (sa = PyArray_Empty(1, &zero, A->descr, 0)) == NULL ||
        (sb = PyArray_Empty(1, &zero, B->descr, 0)) == NULL) {
        goto done;
    }
    if (out != NULL) { /* 1-D @ 1-D is 0-d: NumPy's casting check for out */
        Py_INCREF(out->descr);
        if ((so = PyArray_Empty(0, NULL, out->descr, 0)) == NULL ||
            (r = PyObject_CallFunctionObjArgs(f, sa, sb, so, NULL)) == NULL) {
            goto done;
        }
        Py_CLEAR(r);
    }
    if ((r = PyObject_CallFunctionObjArgs(f, sa, sb, NULL)) == NULL) {
        goto done;
    }
    /* 1-D @ 1-D gives a NumPy scalar: its dtype is the answer */
    d = (PyArray_Descr *)PyObject_GetAttrString(r, "dtype");
    if (d != NULL && !PyArray_DescrCheck(d)) {
        PyErr_SetString(PyExc_SystemError, "pygpu: numpy.matmul gave no dtype");
        Py_CLEAR(d);
    }
done:
    Py_XDECREF(f);
    Py_XDECREF(sa);
    Py_XDECREF(sb);
    Py_XDECREF(so);
    Py_XDECREF(r);
    return d;
}

/* ---- the plan: matrices, batch axes, strides --------------------------------- */

/* One operand seen as a batch of matrices: rows x cols, strides in bytes;
 * batch strides aligned to the broadcast batch shape, 0 on broadcast axes. */
typedef struct {
    char *data;
    npy_intp rows, cols, rs, cs;
    npy_intp bs[PG_MAXDIMS];
} operand;

typedef struct {
    npy_intp m, n, k;
    int nb;                      /* batch axes (after dropping those of length 1) */
    npy_intp bshape[PG_MAXDIMS]; /* their lengths */
    operand a, b, c;
    int itemsize;
    int type; /* PG_T_* */
} plan;

/* X (A if left, else B) as a batch of matrices over the batch shape nb,
 * bshape: a 1-D A is one row, a 1-D B one column. */
static void
operand_of(const pg_array *X, int left, int nb, const npy_intp *bshape, operand *o)
{
    int nd = X->nd, xb = nd > 2 ? nd - 2 : 0;
    o->data = X->data;
    if (nd == 1) {
        o->rows = left ? 1 : X->shape[0];
        o->cols = left ? X->shape[0] : 1;
        o->rs = left ? X->shape[0] * X->strides[0] : X->strides[0];
        o->cs = left ? X->strides[0] : 0;
        if (!left) { /* one column: its "column stride" is never stepped */
            o->cs = PyDataType_ELSIZE(X->descr);
        }
    }
    else {
        o->rows = X->shape[nd - 2];
        o->cols = X->shape[nd - 1];
        o->rs = X->strides[nd - 2];
        o->cs = X->strides[nd - 1];
    }
    for (int i = 0; i < nb; i++) {
        int j = i - (nb - xb); /* X's axis for batch axis i */
        o->bs[i] = j < 0 || X->shape[j] == 1 || bshape[i] == 1 ? 0 : X->strides[j];
    }
}

/* The dense result C (batch..., m, n) over the batch shape. */
static void
dense_operand(char *data, npy_intp m, npy_intp n, int itemsize, int nb,
              const npy_intp *bshape, operand *o)
{
    npy_intp step = m * n * itemsize;
    o->data = data;
    o->rows = m;
    o->cols = n;
    o->rs = n * itemsize;
    o->cs = itemsize;
    for (int i = nb - 1; i >= 0; i--) {
        o->bs[i] = step;
        step *= bshape[i];
    }
}

/* Drops batch axes of length 1 and folds inner axes that all three operands
 * step through evenly into one (the last), so that the innermost batch is
 * one strided batch and only the axes before it are walked one by one. */
static void
fold_batch(plan *p)
{
    operand *ops[3] = {&p->a, &p->b, &p->c};
    int q = 0;
    for (int i = 0; i < p->nb; i++) {
        if (p->bshape[i] != 1) {
            p->bshape[q] = p->bshape[i];
            for (int o = 0; o < 3; o++) {
                ops[o]->bs[q] = ops[o]->bs[i];
            }
            q++;
        }
    }
    while (q >= 2) {
        int even = 1;
        for (int o = 0; o < 3; o++) {
            even &= ops[o]->bs[q - 2] == ops[o]->bs[q - 1] * p->bshape[q - 1];
        }
        if (!even) {
            break;
        }
        p->bshape[q - 2] *= p->bshape[q - 1];
        for (int o = 0; o < 3; o++) {
            ops[o]->bs[q - 2] = ops[o]->bs[q - 1];
        }
        q--;
    }
    p->nb = q;
    /* A batch of As times one B whose rows follow on evenly is one product
     * with m * batch rows (the result is dense, so its rows follow on too). */
    if (q == 1 && p->b.bs[0] == 0 && p->a.cs == p->itemsize && p->a.rs > 0 &&
        p->a.bs[0] == p->m * p->a.rs) {
        p->m *= p->bshape[0];
        p->a.rows = p->c.rows = p->m;
        p->nb = 0;
    }
}

static int
fits_int(npy_intp v)
{
    return v >= 0 && v <= 0x7fffffff;
}

/* How the BLAS library reads a matrix of rows x cols with strides rs, cs
 * (bytes): as it is (0) or transposed (1), with *ld; -1 if neither (the
 * operand is then copied). */
static int
blas_layout(const operand *o, int itemsize, int64_t *ld)
{
    npy_intp r = o->rows, c = o->cols, rs = o->rs, cs = o->cs;
    if (rs % itemsize != 0 || cs % itemsize != 0) {
        return -1;
    }
    rs /= itemsize;
    cs /= itemsize;
    if ((c == 1 || cs == 1) && (r == 1 || rs >= c)) {
        *ld = r == 1 ? c : rs;
        return fits_int(*ld) ? 0 : -1;
    }
    if ((r == 1 || rs == 1) && (c == 1 || cs >= r)) {
        *ld = c == 1 ? r : cs;
        return fits_int(*ld) ? 1 : -1;
    }
    return -1;
}

/* 1 if the kernels of kernels.def read X's matrices as they are: each
 * C-contiguous (rows*cols dense, row-major). */
static int
dense_rows(const operand *o, int itemsize)
{
    return (o->cols == 1 || o->cs == itemsize) &&
           (o->rows == 1 || o->rs == o->cols * itemsize);
}

static int
batch_strides_ok(const operand *o, int nb, int itemsize, int positive)
{
    for (int i = 0; i < nb; i++) {
        if (o->bs[i] % itemsize != 0 || (positive && o->bs[i] < 0)) {
            return 0;
        }
    }
    return o->rs % itemsize == 0 && o->cs % itemsize == 0 &&
           (!positive || (o->rs > 0 && o->cs > 0));
}

/* bool and the integers: matmul_int (NumPy's wrapping sums, or of ands),
 * never the BLAS library or the float kernels */
static int
is_integer_type(int type)
{
    return type >= PG_T_BOOL && type <= PG_T_U64;
}

/* ---- running it ------------------------------------------------------------ */

typedef enum { RUN_BLAS, RUN_STRIDED, RUN_KERNEL } run_kind;

typedef struct {
    run_kind kind;
    pg_kernel_id kernel; /* RUN_KERNEL: matmul_naive, matmul_shared or matmul_tiled */
    int device;
    const pg_stream_ref *s;
    /* _matmul_plan: a list that gets each BLAS call instead of the library */
    PyObject *record;
} runner;

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

/* One strided batch of `count` products at byte offsets oa, ob, oc. */
static int
run_batch(pg_state *st, const runner *r, const plan *p, npy_intp count, npy_intp oa,
          npy_intp ob, npy_intp oc)
{
    const pg_backend *rt = pg_rt();
    const int is = p->itemsize;
    const npy_intp sa = p->nb ? p->a.bs[p->nb - 1] : 0,
                   sb = p->nb ? p->b.bs[p->nb - 1] : 0,
                   sc = p->nb ? p->c.bs[p->nb - 1] : 0;
    char why[160];
    pg_err err;
    if (r->kind == RUN_BLAS) {
        pg_gemm g;
        g.type = p->type;
        g.allow_tf32 = atomic_load(&allow_tf32);
        g.m = p->m;
        g.n = p->n;
        g.k = p->k;
        g.batch = count;
        g.a = p->a.data + oa;
        g.trans_a = blas_layout(&p->a, is, &g.lda);
        g.stride_a = sa / is;
        g.b = p->b.data + ob;
        g.trans_b = blas_layout(&p->b, is, &g.ldb);
        g.stride_b = sb / is;
        g.c = p->c.data + oc;
        g.ldc = p->n;
        g.stride_c = sc / is;
        if (r->record != NULL) { /* offsets in elements from each operand's data */
            PyObject *call = Py_BuildValue(
                "(nnnLLLLLiLLiLLL)", oa / is, ob / is, oc / is, (long long)g.m,
                (long long)g.n, (long long)g.k, (long long)g.batch, (long long)g.lda,
                g.trans_a, (long long)g.stride_a, (long long)g.ldb, g.trans_b,
                (long long)g.stride_b, (long long)g.ldc, (long long)g.stride_c);
            int rc = call == NULL ? -1 : PyList_Append(r->record, call);
            Py_XDECREF(call);
            return rc;
        }
        Py_BEGIN_ALLOW_THREADS
            err = rt->blas_gemm(r->device, &g, r->s->handle, why, sizeof(why));
        Py_END_ALLOW_THREADS
        if (err == PG_ERR_MEMORY_ALLOCATION) {
            pg_raise_oom(st, err, why, 0, -1);
            return -1;
        }
        return err == PG_SUCCESS ? 0 : (pg_raise(st, err, why), -1);
    }
    if (r->kind == RUN_STRIDED) {
        const int64_t strides[9] = {p->a.rs / is, p->a.cs / is, sa / is,
                                    p->b.rs / is, p->b.cs / is, sb / is,
                                    p->c.rs / is, p->c.cs / is, sc / is};
        const int ints = is_integer_type(p->type);
        pg_matmul_strided_fn *launch =
            ints ? rt->kernels->matmul_int : rt->kernels->matmul_strided;
        err = launch(p->type, p->a.data + oa, p->b.data + ob, p->c.data + oc, p->m,
                     p->n, p->k, count, strides, r->s->handle);
        return err == PG_SUCCESS ? 0
                                 : (pg_raise(st, err,
                                             ints ? pg_kernel_names.matmul_int
                                                  : pg_kernel_names.matmul_strided),
                                    -1);
    }
    /* the teaching kernels, one matrix at a time */
    {
        const int dtype = p->type == PG_T_F32 ? PG_F32 : PG_F64;
        const unsigned int tile = r->kernel == PG_K_matmul_tiled    ? 128
                                  : r->kernel == PG_K_matmul_shared ? 32
                                                                    : 16;
        const pg_dim3 grid = tile_grid(p->m, p->n, tile);
        const pg_dim3 block = r->kernel == PG_K_matmul_tiled ? (pg_dim3){256, 1, 1}
                                                             : (pg_dim3){16, 16, 1};
        pg_matmul_fn *launch =
            r->kernel == PG_K_matmul_tiled    ? rt->kernels->matmul_tiled
            : r->kernel == PG_K_matmul_shared ? rt->kernels->matmul_shared
                                              : rt->kernels->matmul_naive;
        const char *name = r->kernel == PG_K_matmul_tiled ? pg_kernel_names.matmul_tiled
                           : r->kernel == PG_K_matmul_shared
                               ? pg_kernel_names.matmul_shared
                               : pg_kernel_names.matmul_naive;
        for (npy_intp i = 0; i < count; i++) {
            err = launch(dtype, p->a.data + oa + i * sa, p->b.data + ob + i * sb,
                         p->c.data + oc + i * sc, p->m, p->n, p->k, grid, block,
                         r->s->handle);
            if (err != PG_SUCCESS) {
                pg_raise(st, err, name);
                return -1;
            }
        }
    }
    return 0;
}

/* Every batch: the outer axes one by one, the innermost as one strided batch. */
static int
run_plan(pg_state *st, const runner *r, const plan *p)
{
    npy_intp idx[PG_MAXDIMS] = {0};
    int outer = p->nb > 0 ? p->nb - 1 : 0;
    npy_intp count = p->nb > 0 ? p->bshape[p->nb - 1] : 1;
    for (;;) {
        npy_intp oa = 0, ob = 0, oc = 0;
        int d;
        for (d = 0; d < outer; d++) {
            oa += idx[d] * p->a.bs[d];
            ob += idx[d] * p->b.bs[d];
            oc += idx[d] * p->c.bs[d];
        }
        if (run_batch(st, r, p, count, oa, ob, oc) < 0) {
            return -1;
        }
        for (d = outer - 1; d >= 0; d--) {
            if (++idx[d] < p->bshape[d]) {
                break;
            }
            idx[d] = 0;
        }
        if (d < 0) {
            return 0;
        }
    }
}

/* ---- matmul ------------------------------------------------------------------ */

/* The element type (PG_T_*) of a dtype matmul computes in: every dtype
 * pygpu stores; -1 for the others. */
static int
product_type(PyArray_Descr *d)
{
    const pg_dtype_info *info = pg_dtype_info_of(d->type_num);
    return info == NULL ? -1 : info->element;
}

static int
check_same_device(pg_array *x, pg_array *y)
{
    if (y == NULL || pg_array_device(x) == pg_array_device(y)) {
        return 0;
    }
    PyErr_Format(PyExc_ValueError,
                 "matmul: the arrays are on different devices (%d and %d); copy one "
                 "to the other's device first (d.copy_to_device or cuda.to_device "
                 "under `with cuda.gpus[i]:`)",
                 pg_array_device(x), pg_array_device(y));
    return -1;
}

/* X as an array of dtype R (a new reference): X itself, or a cast copy. */
static pg_array *
as_dtype(pg_state *st, pg_array *X, PyArray_Descr *R, const pg_stream_ref *s)
{
    pg_array *c;
    if (PyArray_EquivTypes(X->descr, R)) {
        return (pg_array *)Py_NewRef(X);
    }
    c = pg_array_empty(st, X->nd, X->shape, R, 0, s);
    if (c != NULL && pg_array_cast_into(st, c, X, s) < 0) {
        Py_CLEAR(c);
    }
    return c;
}

/* Replaces *X by a C-contiguous copy of it. */
static int
make_dense(pg_state *st, pg_array **X, const pg_stream_ref *s)
{
    pg_array *c = (pg_array *)pg_array_copy(st, *X, 0, s);
    if (c == NULL) {
        return -1;
    }
    Py_SETREF(*X, c);
    return 0;
}

static const char dtypes_taken[] =
    "bool, the integer dtypes, float16, float32, float64, complex64 and complex128";

/* pg_matmul; with `record` (a list), the BLAS path is taken as if a library
 * were loaded, its calls are appended to `record` instead of made, and the
 * result is (record, the A and B the calls read, C). */
static PyObject *
matmul_impl(pg_state *st, PyObject *a, PyObject *b, const char *method,
            PyObject *out_obj, PyObject *stream, PyObject *record)
{
    pg_array *A = NULL, *B = NULL, *out = NULL, *target = NULL;
    PyArray_Descr *R = NULL;
    PyObject *res = NULL;
    const pg_backend *rt;
    pg_stream_ref cur;
    runner run = {RUN_STRIDED, PG_K_COUNT, 0, &cur, record};
    plan p;
    npy_intp shape[PG_MAXDIMS];
    int nd = 0, prev = -1, entered = 0, want;
    if (pg_resolve_stream(st, stream, &cur) < 0 || (rt = pg_get_rt(st)) == NULL) {
        return NULL;
    }
    if (strcmp(method, "naive") == 0) {
        want = PG_K_matmul_naive;
    }
    else if (strcmp(method, "shared") == 0) {
        want = PG_K_matmul_shared;
    }
    else if (strcmp(method, "tiled") == 0) {
        want = PG_K_matmul_tiled;
    }
    else if (strcmp(method, "auto") == 0) {
        want = PG_K_COUNT;
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
            "matmul takes two pygpu.DeviceArrays, not %.100s and %.100s%s",
            Py_TYPE(a)->tp_name, Py_TYPE(b)->tp_name,
            PyArray_Check(a) || PyArray_Check(b)
                ? " (copy the ndarray to the device with pygpu.asarray first)"
                : "");
    }
    if (out_obj != NULL) {
        if (!pg_array_check(st, out_obj)) {
            return PyErr_Format(PyExc_TypeError,
                                "matmul: out must be a pygpu.DeviceArray, not %.100s",
                                Py_TYPE(out_obj)->tp_name);
        }
        out = (pg_array *)out_obj;
        if (pg_array_check_writeable(out, "matmul") < 0) {
            return NULL;
        }
    }
    A = (pg_array *)Py_NewRef(a);
    B = (pg_array *)Py_NewRef(b);
    if (check_same_device(A, B) < 0 || check_same_device(A, out) < 0) {
        goto done;
    }
    /* NumPy's order: dimensions, then dtypes, then shapes */
    if (A->nd == 0 || B->nd == 0) {
        PyErr_Format(PyExc_ValueError,
                     "matmul: Input operand %d does not have enough dimensions (has 0, "
                     "gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)",
                     A->nd == 0 ? 0 : 1);
        goto done;
    }
    if ((R = result_dtype(A, B, out)) == NULL) {
        goto done;
    }
    p.type = product_type(R);
    if (p.type < 0) {
        PyErr_Format(
            PyExc_TypeError,
            "matmul: pygpu multiplies matrices of %s; %S @ %S gives %S (convert "
            "the operands with .astype(), e.g. to float64)",
            dtypes_taken, (PyObject *)A->descr, (PyObject *)B->descr, (PyObject *)R);
        goto done;
    }
    if (want != PG_K_COUNT && p.type != PG_T_F32 && p.type != PG_T_F64) {
        PyErr_Format(PyExc_TypeError,
                     "matmul: method='%s' runs a kernel for float32 and float64; the "
                     "product here is %S. method='auto' (and @) multiplies %s",
                     method, (PyObject *)R, dtypes_taken);
        goto done;
    }
    p.itemsize = (int)PyDataType_ELSIZE(R);
    /* shapes: the core dimensions, then the batch axes broadcast */
    p.m = A->nd == 1 ? 1 : A->shape[A->nd - 2];
    p.k = A->shape[A->nd - 1];
    p.n = B->nd == 1 ? 1 : B->shape[B->nd - 1];
    if (B->shape[B->nd == 1 ? 0 : B->nd - 2] != p.k) {
        numpy_error(A, B, NULL, "matmul: the operands' inner dimensions differ");
        goto done;
    }
    if (pg_broadcast_shape(A->nd > 2 ? A->nd - 2 : 0, A->shape,
                           B->nd > 2 ? B->nd - 2 : 0, B->shape, &p.nb, p.bshape) < 0) {
        numpy_error(A, B, NULL, "matmul: the operands' batch shapes do not broadcast");
        goto done;
    }
    memcpy(shape, p.bshape, sizeof(npy_intp) * (size_t)p.nb);
    nd = p.nb;
    if (A->nd > 1) {
        shape[nd++] = p.m;
    }
    if (B->nd > 1) {
        shape[nd++] = p.n;
    }
    if (out != NULL && !pg_same_shape(nd, shape, out->nd, out->shape)) {
        /* as NumPy, out may have more (or longer) batch axes that the
         * operands' broadcast to: each of its matrices gets the product */
        int core = (A->nd > 1) + (B->nd > 1), onb = out->nd - core, nb2 = 0;
        npy_intp b2[PG_MAXDIMS];
        if (onb < 0 || (A->nd > 1 && out->shape[onb] != p.m) ||
            (B->nd > 1 && out->shape[out->nd - 1] != p.n) ||
            pg_broadcast_shape(p.nb, p.bshape, onb, out->shape, &nb2, b2) < 0 ||
            !pg_same_shape(nb2, b2, onb, out->shape)) {
            numpy_error(A, B, out, "matmul: out does not have the result's shape");
            goto done;
        }
        p.nb = onb;
        nd = out->nd;
        memcpy(p.bshape, out->shape, sizeof(npy_intp) * (size_t)onb);
        memcpy(shape, out->shape, sizeof(npy_intp) * (size_t)nd);
    }
    /* the product runs on its arrays' device */
    if (pg_stream_for_device(&cur, pg_array_device(A), pg_stream_given(stream)) < 0 ||
        pg_device_enter(st, rt, pg_array_device(A), &prev) < 0) {
        goto done;
    }
    entered = 1;
    run.device = pg_array_device(A);
    /* the target: out itself where the product can write it directly */
    if (out != NULL && PyArray_EquivTypes(out->descr, R) &&
        (out->flags & NPY_ARRAY_C_CONTIGUOUS) && !pg_arrays_overlap(out, A) &&
        !pg_arrays_overlap(out, B)) {
        target = (pg_array *)Py_NewRef(out);
    }
    else if ((target = pg_array_empty(st, nd, shape, R, 0, &cur)) == NULL) {
        goto done;
    }
    if (pg_array_size(target) == 0) {
        goto finish;
    }
    if (p.k == 0) { /* sums of nothing: zeros, in every dtype's bits */
        pg_array_note_stream(target, &cur);
        if (PG_TRY(st, rt, memset_async,
                   (target->data, 0, pg_array_nbytes(target), cur.handle)) < 0) {
            goto done;
        }
        goto finish;
    }
    /* the operands, in the result's dtype */
    for (int i = 0; i < 2; i++) {
        pg_array **X = i == 0 ? &A : &B, *cast = as_dtype(st, *X, R, &cur);
        if (cast == NULL) {
            goto done;
        }
        Py_SETREF(*X, cast);
    }
    /* who computes it, and which operands it must have dense */
    if (want == PG_K_COUNT && !is_integer_type(p.type)) {
        int ready = record != NULL ? 1 : blas_ready(rt);
        if (ready < 0) {
            goto done;
        }
        if (ready && fits_int(p.m) && fits_int(p.n) && fits_int(p.k)) {
            run.kind = RUN_BLAS;
        }
        else if ((p.type == PG_T_F32 || p.type == PG_T_F64) && p.m >= 128 &&
                 p.n >= 128) {
            /* the register-tiled kernel, where C has whole 128 x 128 tiles to
             * give its blocks; elsewhere one thread per element fits better */
            run.kind = RUN_KERNEL;
            run.kernel = PG_K_matmul_tiled;
        }
    }
    else if (want != PG_K_COUNT) {
        run.kind = RUN_KERNEL;
        run.kernel = (pg_kernel_id)want;
    }
    for (int i = 0; i < 2; i++) {
        pg_array **X = i == 0 ? &A : &B;
        operand o;
        int64_t ld;
        int dense;
        operand_of(*X, i == 0, p.nb, p.bshape, &o);
        dense = run.kind == RUN_KERNEL ? dense_rows(&o, p.itemsize) &&
                                             batch_strides_ok(&o, p.nb, p.itemsize, 0)
                : run.kind == RUN_BLAS ? blas_layout(&o, p.itemsize, &ld) >= 0 &&
                                             batch_strides_ok(&o, p.nb, p.itemsize, 1)
                                       : batch_strides_ok(&o, p.nb, p.itemsize, 0);
        if (!dense && make_dense(st, X, &cur) < 0) {
            goto done;
        }
    }
    operand_of(A, 1, p.nb, p.bshape, &p.a);
    operand_of(B, 0, p.nb, p.bshape, &p.b);
    dense_operand(target->data, p.m, p.n, p.itemsize, p.nb, p.bshape, &p.c);
    fold_batch(&p);
    if (run.kind == RUN_BLAS) {
        for (int i = 0; i < p.nb; i++) {
            if (!fits_int(p.bshape[i])) {
                run.kind = RUN_STRIDED;
            }
        }
        if (!fits_int(p.m)) { /* folded past an int */
            run.kind = RUN_STRIDED;
        }
    }
    pg_array_note_stream(A, &cur);
    pg_array_note_stream(B, &cur);
    pg_array_note_stream(target, &cur);
    if (run_plan(st, &run, &p) < 0) {
        goto done;
    }
finish:
    if (record != NULL) {
        res = Py_BuildValue("(OOOO)", record, A, B, target);
    }
    else if (out != NULL && target != out) { /* as if buffered, cast as NumPy does */
        if (pg_array_cast_into(st, out, target, &cur) < 0) {
            goto done;
        }
        res = Py_NewRef(out);
    }
    else {
        res = Py_NewRef(target);
    }
done:
    if (entered) {
        pg_device_leave(rt, prev);
    }
    Py_XDECREF(A);
    Py_XDECREF(B);
    Py_XDECREF(R);
    Py_XDECREF(target);
    return res;
}

PyObject *
pg_matmul(pg_state *st, PyObject *a, PyObject *b, const char *method, PyObject *out,
          PyObject *stream)
{
    return matmul_impl(st, a, b, method, out, stream, NULL);
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
    return pg_matmul(st, a, b, "auto", NULL, NULL);
}

/* ---- module functions ---------------------------------------------------------- */

static PyObject *
mod_matmul(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {"matmul",
                                     2,
                                     5,
                                     {{"a", pg_conv_object},
                                      {"b", pg_conv_object},
                                      {"method", pg_conv_object_or_none},
                                      {"out", pg_conv_object_or_none},
                                      {"stream", pg_conv_object_or_none}}};
    pg_state *st = pg_state_of_module(m);
    PyObject *a = NULL, *b = NULL, *method_obj = NULL, *out = NULL, *stream = NULL;
    const char *method = "auto";
    if (pg_parse(st, &sig, args, nargs, kwnames, &a, &b, &method_obj, &out, &stream) <
        0) {
        return NULL;
    }
    if (method_obj != NULL) {
        if (!PyUnicode_Check(method_obj)) {
            return PyErr_Format(PyExc_TypeError,
                                "matmul: method must be a str, not %.100s",
                                Py_TYPE(method_obj)->tp_name);
        }
        method = PyUnicode_AsUTF8(method_obj);
        if (method == NULL) {
            return NULL;
        }
    }
    return pg_matmul(st, a, b, method, out, stream);
}

/* _blas_available() -> whether the backend can use a BLAS library (commits
 * to the backend, as any operation does) */
static PyObject *
mod_blas_available(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    const pg_backend *rt = pg_get_rt(pg_state_of_module(m));
    if (rt == NULL) {
        return NULL;
    }
    return PyBool_FromLong(rt->blas_load != NULL && rt->blas_gemm != NULL);
}

/* _blas_load(path) -> (major, minor, patch) of the library loaded from path
 * (or of the one already loaded); OSError if it cannot be loaded */
static PyObject *
mod_blas_load(PyObject *m, PyObject *arg)
{
    const pg_backend *rt = pg_get_rt(pg_state_of_module(m));
    PyObject *bytes = NULL;
    char errbuf[1024] = "";
    int version = 0, rc;
    if (rt == NULL) {
        return NULL;
    }
    if (rt->blas_load == NULL) {
        return PyErr_Format(PyExc_RuntimeError,
                            "pygpu's %s has no BLAS library; matmul runs pygpu's own "
                            "kernels there",
                            rt->name);
    }
    if (!PyUnicode_FSConverter(arg, &bytes)) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
        rc = rt->blas_load(PyBytes_AS_STRING(bytes), &version, errbuf, sizeof(errbuf));
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    if (rc < 0) {
        PyErr_SetString(PyExc_OSError, errbuf);
        return NULL;
    }
    return Py_BuildValue("(iii)", version / 10000, version / 100 % 100, version % 100);
}

/* _matmul_plan(a, b) -> (calls, A, B, C): the BLAS calls a @ b makes, as
 * tuples (offsets of A, B, C in elements from their data, m, n, k, batch, lda,
 * trans_a, stride_a, ldb, trans_b, stride_b, ldc, stride_c), made nowhere;
 * A and B are the arrays they read (a and b, or dense copies), C the result
 * they would write. For tests: the plan is checked on any backend. */
static PyObject *
mod_matmul_plan(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *record, *res;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_matmul_plan(a, b)");
        return NULL;
    }
    if ((record = PyList_New(0)) == NULL) {
        return NULL;
    }
    res = matmul_impl(pg_state_of_module(m), args[0], args[1], "auto", NULL, NULL,
                      record);
    Py_DECREF(record);
    return res;
}

/* _set_allow_tf32(flag) -> the previous setting */
static PyObject *
mod_set_allow_tf32(PyObject *Py_UNUSED(m), PyObject *arg)
{
    int flag = PyObject_IsTrue(arg);
    if (flag < 0) {
        return NULL;
    }
    return PyBool_FromLong(atomic_exchange(&allow_tf32, flag));
}

static PyObject *
mod_allow_tf32(PyObject *Py_UNUSED(m), PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(atomic_load(&allow_tf32));
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

PyMethodDef pg_matmul_functions[] = {
    {"matmul", FASTKW(mod_matmul),
     "matmul(a, b, method='auto', out=None, stream=None)\n--\n\n"
     "a @ b as numpy.matmul: 1-D operands, batches broadcast over the leading "
     "axes, NumPy's type promotion; every dtype: bool (or of ands), the integers "
     "(wrapping as NumPy's), float16, float32, float64, complex64 and complex128. "
     "method='auto' uses cuBLAS where it can be loaded for floats and complex, "
     "else pygpu's kernels; 'naive', 'shared' and 'tiled' run those kernels "
     "(float32 and float64). Into out if given. Returns the result."},
    {"_blas_available", mod_blas_available, METH_NOARGS,
     "_blas_available()\n--\n\nWhether the backend can use a BLAS library."},
    {"_blas_load", mod_blas_load, METH_O,
     "_blas_load(path)\n--\n\nLoads cuBLAS from path: (major, minor, patch), or "
     "OSError."},
    {"_matmul_plan", (PyCFunction)(void (*)(void))mod_matmul_plan, METH_FASTCALL,
     "_matmul_plan(a, b)\n--\n\n(calls, A, B, C): the BLAS calls a @ b would make "
     "(for tests)."},
    {"_set_allow_tf32", mod_set_allow_tf32, METH_O,
     "_set_allow_tf32(flag)\n--\n\nWhether float32 and complex64 products may use "
     "TF32; returns the previous setting."},
    {"_allow_tf32", mod_allow_tf32, METH_NOARGS,
     "_allow_tf32()\n--\n\nWhether float32 and complex64 products may use TF32."},
    {NULL},
};
