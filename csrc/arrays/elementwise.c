/* The one path to the elementwise kernel (kernels.cu, `binary`): operands
 * that are arrays seen with the output's shape (zero strides on broadcast
 * axes) or scalars, dimensions folded together where every operand allows,
 * and the launch on the output's device. ops.c (arithmetic, comparisons)
 * and copy.c (casts) come through here. */
#include <string.h>

#include "pygpu.h"

int
pg_broadcast_shape(int nd_a, const npy_intp *a, int nd_b, const npy_intp *b, int *nd,
                   npy_intp *shape)
{
    *nd = nd_a > nd_b ? nd_a : nd_b;
    for (int i = 0; i < *nd; i++) {
        int ia = i - (*nd - nd_a), ib = i - (*nd - nd_b);
        npy_intp da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            return -1;
        }
        shape[i] = da == 1 ? db : da;
    }
    return 0;
}

int
pg_operand_of_array(pg_operand *op, const pg_array *a, int nd, const npy_intp *shape)
{
    const pg_dtype_info *info = pg_dtype_info_of(a->descr->type_num);
    memset(op, 0, sizeof(*op));
    op->data = a->data;
    op->type = info != NULL ? info->element : -1;
    for (int i = 0; i < nd; i++) {
        int j = i - (nd - a->nd);
        if (j < 0 || a->shape[j] == 1) {
            op->strides[i] = 0; /* broadcast */
        }
        else if (a->shape[j] == shape[i]) {
            op->strides[i] = a->strides[j];
        }
        else {
            return -1;
        }
    }
    return op->type < 0 ? -1 : 0;
}

/* Folds axis i+1 into axis i wherever every operand steps through both as
 * through one axis, and drops axes of length 1: a contiguous operation
 * becomes one long axis, which the kernel walks without division. */
static int
collapse(int nd, int64_t *shape, int64_t *const strides[3])
{
    int out = 0;
    for (int i = 0; i < nd; i++) {
        if (shape[i] == 1) {
            continue;
        }
        if (out > 0) {
            int fold = 1;
            for (int k = 0; k < 3; k++) {
                fold &= strides[k][out - 1] == strides[k][i] * shape[i];
            }
            if (fold) {
                shape[out - 1] *= shape[i];
                for (int k = 0; k < 3; k++) {
                    strides[k][out - 1] = strides[k][i];
                }
                continue;
            }
        }
        shape[out] = shape[i];
        for (int k = 0; k < 3; k++) {
            strides[k][out] = strides[k][i];
        }
        out++;
    }
    if (out == 0) { /* one element */
        shape[0] = 1;
        for (int k = 0; k < 3; k++) {
            strides[k][0] = 0;
        }
        out = 1;
    }
    return out;
}

int
pg_elementwise(pg_state *st, int op, int compute, pg_array *out, pg_operand *a,
               pg_operand *b, const pg_stream_ref *s)
{
    const pg_backend *rt = pg_rt();
    const pg_dtype_info *info = pg_dtype_info_of(out->descr->type_num);
    int64_t shape[PG_MAXDIMS], ostrides[PG_MAXDIMS];
    int64_t *const strides[3] = {a->strides, b->strides, ostrides};
    int nd = out->nd, prev = -1;
    pg_err err;
    if (pg_array_size(out) == 0) {
        return 0;
    }
    for (int i = 0; i < nd; i++) {
        shape[i] = out->shape[i];
        ostrides[i] = out->strides[i];
    }
    nd = collapse(nd, shape, strides);
    if (pg_device_enter(st, rt, pg_array_device(out), &prev) < 0) {
        return -1;
    }
    pg_array_note_stream(out, s);
    err = rt->kernels->binary(op, compute, nd, shape, a, b, out->data, info->element,
                              ostrides, s->handle);
    pg_device_leave(rt, prev);
    if (err != PG_SUCCESS) {
        pg_raise(st, err, pg_kernel_names.binary);
        return -1;
    }
    return 0;
}
