/* cuBLAS, NVIDIA's BLAS, loaded with dlopen the first time a matrix product
 * runs on a GPU (never at import, never by the prebuilt kernels), as the
 * runtime table's blas_load and blas_gemm. pygpu/blas.py finds the library
 * (the toolkit, NVIDIA's wheel, PYGPU_CUBLAS); matmul.c decides when to use
 * it. Plain C: no Python and no cuBLAS headers, so that the build needs
 * neither. The few prototypes and values used are declared here with the
 * values of cublas_api.h and library_types.h; each value's comment names the
 * header's constant, and tests/ops/test_matmul.py checks them against the
 * toolkit's header where there is one.
 *
 * One handle per device, made at the device's first product (with the device
 * current, as cuBLAS binds a handle to it), destroyed with its workspace by
 * blas_release: pygpu._release_all does, from an atexit function, so while
 * the interpreter is still whole and the CUDA runtime alive (a C exit
 * handler or static destructor would come after the runtime's teardown, as
 * PyTorch found); the next product makes a new one. A handle is used by one
 * thread at a time (a lock per device held from cublasSetStream to the
 * queued product), since the stream is a setting of the handle. Handles are
 * forgotten in a child made by fork(), where CUDA cannot be used (context.c
 * refuses every operation there). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

typedef struct cublasContext *cublas_handle;

/* clang-format off */
enum {
    PG_CUBLAS_STATUS_SUCCESS = 0,           /* CUBLAS_STATUS_SUCCESS */
    PG_CUBLAS_STATUS_NOT_INITIALIZED = 1,   /* CUBLAS_STATUS_NOT_INITIALIZED */
    PG_CUBLAS_STATUS_ALLOC_FAILED = 3,      /* CUBLAS_STATUS_ALLOC_FAILED */
    PG_CUBLAS_STATUS_INVALID_VALUE = 7,     /* CUBLAS_STATUS_INVALID_VALUE */
    PG_CUBLAS_STATUS_ARCH_MISMATCH = 8,     /* CUBLAS_STATUS_ARCH_MISMATCH */
    PG_CUBLAS_STATUS_NOT_SUPPORTED = 15,    /* CUBLAS_STATUS_NOT_SUPPORTED */
    PG_CUBLAS_OP_N = 0,                     /* CUBLAS_OP_N */
    PG_CUBLAS_OP_T = 1,                     /* CUBLAS_OP_T */
    PG_CUDA_R_16F = 2,                      /* CUDA_R_16F */
    PG_CUDA_R_32F = 0,                      /* CUDA_R_32F */
    PG_CUDA_R_64F = 1,                      /* CUDA_R_64F */
    PG_CUDA_C_32F = 4,                      /* CUDA_C_32F */
    PG_CUDA_C_64F = 5,                      /* CUDA_C_64F */
    PG_CUBLAS_COMPUTE_32F = 68,             /* CUBLAS_COMPUTE_32F */
    PG_CUBLAS_COMPUTE_32F_FAST_TF32 = 77,   /* CUBLAS_COMPUTE_32F_FAST_TF32 */
    PG_CUBLAS_COMPUTE_64F = 70,             /* CUBLAS_COMPUTE_64F */
    PG_CUBLAS_GEMM_DEFAULT = -1,            /* CUBLAS_GEMM_DEFAULT */
    PG_MAJOR_VERSION = 0,                   /* MAJOR_VERSION */
    PG_MINOR_VERSION = 1,                   /* MINOR_VERSION */
    PG_PATCH_LEVEL = 2,                     /* PATCH_LEVEL */
};
/* clang-format on */

/* The entry points, each field named as the function it holds, so that a
 * message names the call made (CUBLAS_CALL stringizes the field). */
static struct {
    void *lib;
    int version; /* major * 10000 + minor * 100 + patch */
    int (*cublasGetProperty)(int type, int *value);
    int (*cublasCreate_v2)(cublas_handle *handle);
    int (*cublasDestroy_v2)(cublas_handle handle);
    int (*cublasSetStream_v2)(cublas_handle handle, pg_stream stream);
    int (*cublasGemmEx)(cublas_handle handle, int transa, int transb, int m, int n,
                        int k, const void *alpha, const void *a, int atype, int lda,
                        const void *b, int btype, int ldb, const void *beta, void *c,
                        int ctype, int ldc, int compute, int algo);
    int (*cublasGemmStridedBatchedEx)(cublas_handle handle, int transa, int transb,
                                      int m, int n, int k, const void *alpha,
                                      const void *a, int atype, int lda,
                                      long long stride_a, const void *b, int btype,
                                      int ldb, long long stride_b, const void *beta,
                                      void *c, int ctype, int ldc, long long stride_c,
                                      int batch, int compute, int algo);
    const char *(*cublasGetStatusName)(int status); /* cuBLAS 11.4.2 on; may be NULL */
} cublas;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t locks_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t device_lock[PG_MAX_DEVICES];
static cublas_handle handles[PG_MAX_DEVICES];

static void
init_device_locks(void)
{
    for (int i = 0; i < PG_MAX_DEVICES; i++) {
        pthread_mutex_init(&device_lock[i], NULL);
    }
}

/* In a child made by fork(): the parent's handles belong to a CUDA context
 * the child cannot use, and a lock may have been held by another thread. */
static void
after_fork_in_child(void)
{
    memset(handles, 0, sizeof(handles));
    init_device_locks();
    pthread_mutex_init(&load_lock, NULL);
}

static void
init_once(void)
{
    init_device_locks();
    (void)pthread_atfork(NULL, NULL, after_fork_in_child);
}

/* cuBLAS's dependency libcublasLt sits beside it; when `path` names a file,
 * load the one beside it first (by its soname, the loader then reuses it),
 * in case the directory is not on the library's own search path. */
static void
preload_lt(const char *path)
{
    const char *slash = strrchr(path, '/'), *so;
    char lt[4096];
    if (slash == NULL || strncmp(slash + 1, "libcublas.so", 12) != 0) {
        return;
    }
    so = slash + 1 + strlen("libcublas");
    if (snprintf(lt, sizeof(lt), "%.*slibcublasLt%s", (int)(slash + 1 - path), path,
                 so) < (int)sizeof(lt)) {
        (void)dlopen(lt, RTLD_NOW | RTLD_GLOBAL); /* cuBLAS says if it is missing */
    }
}

int
pg_cublas_load(const char *path, int *version, char *errbuf, size_t errlen)
{
    void *lib = NULL;
    int major = 0, minor = 0, patch = 0, rc = -1;
    pthread_once(&locks_once, init_once);
    pthread_mutex_lock(&load_lock);
    if (cublas.lib != NULL) {
        rc = 0;
        goto done;
    }
    preload_lt(path);
    if ((lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
        snprintf(errbuf, errlen, "cannot load cuBLAS from %s: %s", path, dlerror());
        goto done;
    }
#define SYM(name)                                                                      \
    if ((*(void **)&cublas.name = dlsym(lib, #name)) == NULL) {                        \
        snprintf(errbuf, errlen, "%s has no %s (cuBLAS 11 or newer is needed)", path,  \
                 #name);                                                               \
        goto fail;                                                                     \
    }
    SYM(cublasGetProperty);
    SYM(cublasCreate_v2);
    SYM(cublasDestroy_v2);
    SYM(cublasSetStream_v2);
    SYM(cublasGemmEx);
    SYM(cublasGemmStridedBatchedEx);
#undef SYM
    *(void **)&cublas.cublasGetStatusName = dlsym(lib, "cublasGetStatusName");
    if (cublas.cublasGetProperty(PG_MAJOR_VERSION, &major) != 0 ||
        cublas.cublasGetProperty(PG_MINOR_VERSION, &minor) != 0 ||
        cublas.cublasGetProperty(PG_PATCH_LEVEL, &patch) != 0) {
        snprintf(errbuf, errlen, "%s does not say its version", path);
        goto fail;
    }
    if (major < 11) {
        snprintf(errbuf, errlen, "%s is cuBLAS %d.%d; pygpu needs cuBLAS 11 or newer",
                 path, major, minor);
        goto fail;
    }
    cublas.version = major * 10000 + minor * 100 + patch;
    cublas.lib = lib;
    rc = 0;
    goto done;
fail:
    memset(&cublas, 0, sizeof(cublas));
    dlclose(lib);
done:
    *version = cublas.version;
    pthread_mutex_unlock(&load_lock);
    return rc;
}

static const char *
status_name(int status)
{
    const char *name =
        cublas.cublasGetStatusName != NULL ? cublas.cublasGetStatusName(status) : NULL;
    return name != NULL ? name : "CUBLAS_STATUS_UNKNOWN";
}

static pg_err
status_err(int status)
{
    switch (status) {
    case PG_CUBLAS_STATUS_ALLOC_FAILED: return PG_ERR_MEMORY_ALLOCATION;
    case PG_CUBLAS_STATUS_NOT_INITIALIZED: return PG_ERR_INITIALIZATION;
    case PG_CUBLAS_STATUS_INVALID_VALUE: return PG_ERR_INVALID_VALUE;
    case PG_CUBLAS_STATUS_ARCH_MISMATCH:
    case PG_CUBLAS_STATUS_NOT_SUPPORTED: return PG_ERR_NOT_SUPPORTED;
    default: return PG_ERR_UNKNOWN;
    }
}

/* Calls cublas.<fn>; on failure, names it and its status in `why` and goes to
 * `fail` with the status in `status`. */
#define CUBLAS_CALL(fn, args)                                                          \
    do {                                                                               \
        if ((status = cublas.fn args) != PG_CUBLAS_STATUS_SUCCESS) {                   \
            snprintf(why, whylen, "%s (%s)", #fn, status_name(status));                \
            goto fail;                                                                 \
        }                                                                              \
    } while (0)

pg_err
pg_cublas_gemm(int device, const pg_gemm *g, pg_stream stream, char *why, size_t whylen)
{
    static const float onef[2] = {1, 0}, zerof[2] = {0, 0};
    static const double oned[2] = {1, 0}, zerod[2] = {0, 0};
    const void *one = onef, *zero = zerof;
    int data, compute, status = PG_CUBLAS_STATUS_SUCCESS;
    cublas_handle h = NULL;
    switch (g->type) {
    case PG_T_F16: /* NumPy adds float16 products in float32 */
        data = PG_CUDA_R_16F;
        compute = PG_CUBLAS_COMPUTE_32F;
        break;
    case PG_T_F32:
        data = PG_CUDA_R_32F;
        compute =
            g->allow_tf32 ? PG_CUBLAS_COMPUTE_32F_FAST_TF32 : PG_CUBLAS_COMPUTE_32F;
        break;
    case PG_T_C64:
        data = PG_CUDA_C_32F;
        compute =
            g->allow_tf32 ? PG_CUBLAS_COMPUTE_32F_FAST_TF32 : PG_CUBLAS_COMPUTE_32F;
        break;
    case PG_T_F64:
        data = PG_CUDA_R_64F;
        compute = PG_CUBLAS_COMPUTE_64F;
        one = oned;
        zero = zerod;
        break;
    case PG_T_C128:
        data = PG_CUDA_C_64F;
        compute = PG_CUBLAS_COMPUTE_64F;
        one = oned;
        zero = zerod;
        break;
    default:
        snprintf(why, whylen, "cuBLAS (no product of element type %d)", g->type);
        return PG_ERR_INVALID_VALUE;
    }
    if (device < 0 || device >= PG_MAX_DEVICES) {
        snprintf(why, whylen, "cuBLAS (device %d)", device);
        return PG_ERR_INVALID_DEVICE;
    }
    if (cublas.lib == NULL) {
        snprintf(why, whylen, "cuBLAS (not loaded)");
        return PG_ERR_NOT_FOUND;
    }
    pthread_mutex_lock(&device_lock[device]);
    if ((h = handles[device]) == NULL) {
        CUBLAS_CALL(cublasCreate_v2, (&h));
        handles[device] = h;
    }
    CUBLAS_CALL(cublasSetStream_v2, (h, stream));
    /* Row-major C = A B is column-major C^T = B^T A^T: the operands swap
     * places, and each row-major matrix is read as its column-major
     * transpose, so nothing is copied or transposed. */
    if (g->batch == 1) {
        CUBLAS_CALL(cublasGemmEx,
                    (h, g->trans_b ? PG_CUBLAS_OP_T : PG_CUBLAS_OP_N,
                     g->trans_a ? PG_CUBLAS_OP_T : PG_CUBLAS_OP_N, (int)g->n, (int)g->m,
                     (int)g->k, one, g->b, data, (int)g->ldb, g->a, data, (int)g->lda,
                     zero, g->c, data, (int)g->ldc, compute, PG_CUBLAS_GEMM_DEFAULT));
    }
    else {
        CUBLAS_CALL(cublasGemmStridedBatchedEx,
                    (h, g->trans_b ? PG_CUBLAS_OP_T : PG_CUBLAS_OP_N,
                     g->trans_a ? PG_CUBLAS_OP_T : PG_CUBLAS_OP_N, (int)g->n, (int)g->m,
                     (int)g->k, one, g->b, data, (int)g->ldb, (long long)g->stride_b,
                     g->a, data, (int)g->lda, (long long)g->stride_a, zero, g->c, data,
                     (int)g->ldc, (long long)g->stride_c, (int)g->batch, compute,
                     PG_CUBLAS_GEMM_DEFAULT));
    }
    pthread_mutex_unlock(&device_lock[device]);
    return PG_SUCCESS;
fail:
    pthread_mutex_unlock(&device_lock[device]);
    return status_err(status);
}

pg_err
pg_cublas_release(int device, char *why, size_t whylen)
{
    int status = PG_CUBLAS_STATUS_SUCCESS;
    cublas_handle h;
    if (device < 0 || device >= PG_MAX_DEVICES) {
        snprintf(why, whylen, "cuBLAS (device %d)", device);
        return PG_ERR_INVALID_DEVICE;
    }
    if (cublas.lib == NULL) {
        return PG_SUCCESS; /* no product has run: no handle */
    }
    pthread_mutex_lock(&device_lock[device]);
    h = handles[device];
    handles[device] = NULL; /* forgotten even if destroying it fails */
    if (h != NULL) {
        /* waits for the device (so for the products queued with it), then
         * frees its workspace */
        CUBLAS_CALL(cublasDestroy_v2, (h));
    }
    pthread_mutex_unlock(&device_lock[device]);
    return PG_SUCCESS;
fail:
    pthread_mutex_unlock(&device_lock[device]);
    return status_err(status);
}
