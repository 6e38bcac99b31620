/* The thin runtime layer: what pygpu needs of a CUDA runtime, as a table of
 * function pointers. rt_cuda.c fills it from the CUDA runtime, rt_sim.c from
 * the CPU simulator. This header is plain C, included by the C files and by
 * kernels.cu (compiled by nvcc and by the host C++ compiler); it never
 * includes Python.h or cuda_runtime.h. */
#ifndef PYGPU_RUNTIME_H
#define PYGPU_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes: the numeric values of CUDA's cudaError_t, so that both
 * backends report the same codes and names. */
typedef int pg_err;
enum {
    PG_SUCCESS = 0,
    PG_ERR_INVALID_VALUE = 1,
    PG_ERR_MEMORY_ALLOCATION = 2,
    PG_ERR_INITIALIZATION = 3,
    PG_ERR_INVALID_CONFIGURATION = 9,
    PG_ERR_INSUFFICIENT_DRIVER = 35,
    PG_ERR_NO_DEVICE = 100,
    PG_ERR_INVALID_DEVICE = 101,
    PG_ERR_INVALID_RESOURCE_HANDLE = 400,
    PG_ERR_NOT_READY = 600,
    PG_ERR_LAUNCH_FAILURE = 719,
    PG_ERR_NOT_SUPPORTED = 801,
    PG_ERR_UNKNOWN = 999,
};

typedef struct {
    unsigned int x, y, z;
} pg_dim3;

typedef void *pg_stream; /* cudaStream_t underneath; NULL is the default stream */
typedef void *pg_event;  /* cudaEvent_t underneath */

enum { PG_MEMCPY_H2D = 1, PG_MEMCPY_D2H = 2, PG_MEMCPY_D2D = 3 };

/* Element types the kernels know. */
enum { PG_F32 = 0, PG_F64 = 1, PG_I32 = 2, PG_I64 = 3 };

/* Most dimensions a strided copy handles (and so a DeviceArray has). */
#define PG_MAXDIMS 32

typedef struct {
    char name[256];
    char pci_bus_id[32];
    int major, minor;
    size_t total_memory;
    int multiprocessor_count;
    int warp_size;
    int max_threads_per_block;
    int max_block_dim[3];
    int max_grid_dim[3];
    size_t shared_memory_per_block;
    size_t shared_memory_per_block_optin;
    size_t shared_memory_per_multiprocessor;
    int max_threads_per_multiprocessor;
    int registers_per_block;
    int l2_cache_size;
    int clock_rate_khz;
    int memory_clock_rate_khz;
    int memory_bus_width;
    int concurrent_kernels;
    int async_engine_count;
    int unified_addressing;
    int integrated;
    int ecc_enabled;
    int cooperative_launch;
    int memory_pools_supported;
    size_t total_constant_memory;
} pg_device_props;

/* The launchers' types. Each launches on `stream` and returns the launch
 * error; none checks Python-level arguments. Sizes are element counts,
 * strides are in bytes; dtype is a PG_F32... value. */
typedef pg_err pg_copy_strided_fn(int itemsize, int nd, const int64_t *shape,
                                  const void *src, const int64_t *src_strides,
                                  void *dst, const int64_t *dst_strides,
                                  pg_stream stream);
typedef pg_err pg_fill_fn(int itemsize, void *dst, int64_t n, const void *value,
                          pg_stream stream);
/* out = a + b, or out = a + *scalar when b is NULL */
typedef pg_err pg_add_fn(int dtype, const void *a, const void *b, const void *scalar,
                         void *out, int64_t n, pg_dim3 grid, pg_dim3 block,
                         pg_stream stream);
typedef pg_err pg_add_one_fn(int dtype, void *a, int64_t n, pg_dim3 grid, pg_dim3 block,
                             pg_stream stream);
/* c (m x n) = a (m x k) @ b (k x n), row-major */
typedef pg_err pg_matmul_fn(int dtype, const void *a, const void *b, void *c, int64_t m,
                            int64_t n, int64_t k, pg_dim3 grid, pg_dim3 block,
                            pg_stream stream);

/* One launcher per entry of kernels.def, defined in kernels.cu as
 * pg_launch_<name>; the fields are named (and ordered) by that one list. */
typedef struct {
#define PG_LAUNCHER(name, type) type *name;
#define PG_KERNEL(name, type, nargs, signature, doc) type *name;
#include "kernels.def"
} pg_kernel_table;

/* What a backend can do. Callers go by these flags and by the table's
 * operations, never by which backend it is. */
enum {
    /* pageable host copies go faster staged through page-locked buffers */
    PG_CAP_STAGES_PAGEABLE = 1 << 0,
    /* a kernel fault leaves the context unusable for the life of the process */
    PG_CAP_STICKY_FAULTS = 1 << 1,
    /* compile(): CUDA C to a loadable image at run time */
    PG_CAP_RUNTIME_COMPILE = 1 << 2,
    /* a child made by fork() after initialization cannot use it */
    PG_CAP_FORK_UNSAFE = 1 << 3,
    /* the devices are simulated: for reports to the user (repr, detect) only */
    PG_CAP_SIMULATED = 1 << 4,
};

typedef struct {
    const char *name;  /* "cuda" or "simulator" */
    unsigned int caps; /* PG_CAP_* */
    int is_simulator;
    /* makes the current device's context, so that module loads can follow */
    pg_err (*ensure_context)(void);
    pg_err (*device_count)(int *count);
    pg_err (*get_props)(int device, pg_device_props *props);
    pg_err (*set_device)(int device);
    pg_err (*get_device)(int *device);
    pg_err (*mem_get_info)(size_t *free_bytes, size_t *total_bytes);
    pg_err (*malloc)(void **ptr, size_t size);
    pg_err (*free)(void *ptr);
    pg_err (*memcpy)(void *dst, const void *src, size_t size, int kind);
    pg_err (*memset)(void *ptr, int value, size_t size);
    pg_err (*synchronize)(void);
    pg_err (*get_last_error)(void);
    /* streams and events; streams are blocking (they order with stream 0) */
    pg_err (*stream_create)(pg_stream *stream);
    pg_err (*stream_destroy)(pg_stream stream);
    pg_err (*stream_synchronize)(pg_stream stream);
    pg_err (*stream_query)(pg_stream stream); /* PG_ERR_NOT_READY if busy */
    pg_err (*stream_wait_event)(pg_stream stream, pg_event event);
    pg_err (*event_create)(pg_event *event, int timing);
    pg_err (*event_destroy)(pg_event event);
    pg_err (*event_record)(pg_event event, pg_stream stream);
    pg_err (*event_synchronize)(pg_event event);
    pg_err (*event_query)(pg_event event); /* PG_ERR_NOT_READY if pending */
    pg_err (*event_elapsed_ms)(float *ms, pg_event start, pg_event end);
    pg_err (*memcpy_async)(void *dst, const void *src, size_t size, int kind,
                           pg_stream stream);
    pg_err (*memset_async)(void *ptr, int value, size_t size, pg_stream stream);
    /* page-locked host memory */
    pg_err (*host_alloc)(void **ptr, size_t size);
    pg_err (*host_free)(void *ptr);
    /* 1 if ptr is page-locked host memory the device can copy from directly */
    int (*is_pinned)(const void *ptr);
    /* the device that owns a device pointer, or -1 if it is no device memory */
    int (*pointer_device)(const void *ptr);
    /* kernels compiled at run time (driver API): images are cubin or PTX */
    pg_err (*module_load)(void **module, const void *image);
    pg_err (*module_unload)(void *module);
    pg_err (*module_function)(void **function, void *module, const char *name);
    /* PG_ERR_INVALID_VALUE past the last parameter */
    pg_err (*function_param)(void *function, size_t index, size_t *offset,
                             size_t *size);
    pg_err (*launch_function)(void *function, pg_dim3 grid, pg_dim3 block,
                              unsigned int shared_bytes, pg_stream stream,
                              void **params);
    /* Run-time compilation of CUDA C (PG_CAP_RUNTIME_COMPILE; both NULL
     * without it). compiler_load loads the compiler from `path` (the first
     * call; later ones only report its version): 0, or -1 with why in errbuf. */
    int (*compiler_load)(const char *path, int *major, int *minor, char *errbuf,
                         size_t errlen);
    /* Compiles `source` (called `name` in messages) with nopts options to a
     * loadable image. PG_COMPILE_OK: *image (*size bytes) and *log (a C
     * string, maybe empty) are malloc'ed, the caller frees them. Otherwise
     * errbuf says what failed, and *log, if not NULL, is the compiler's log
     * (the caller frees it too). Touches no Python object: call it with the
     * GIL released. */
    int (*compile)(const char *source, const char *name, int nopts,
                   const char *const *opts, char **image, size_t *size, char **log,
                   char *errbuf, size_t errlen);
    const char *(*error_name)(pg_err err);
    const char *(*error_string)(pg_err err);
    int (*driver_version)(void);
    int (*runtime_version)(void);
    const pg_kernel_table *kernels;
} pg_backend;

/* compile()'s results */
enum {
    PG_COMPILE_OK = 0,
    PG_COMPILE_FAILED = 1,     /* the source does not compile: see the log */
    PG_COMPILE_NOT_LOADED = 2, /* compiler_load has not succeeded */
    PG_COMPILE_NO_MEMORY = 3,
};

/* rt_nvrtc.c: NVRTC, loaded with dlopen, as compiler_load and compile. */
int pg_nvrtc_load(const char *path, int *major, int *minor, char *errbuf,
                  size_t errlen);
int pg_nvrtc_compile(const char *source, const char *name, int nopts,
                     const char *const *opts, char **image, size_t *size, char **log,
                     char *errbuf, size_t errlen);

/* The backends. pg_cuda_backend is NULL in a build without the CUDA toolkit. */
extern const pg_backend *const pg_cuda_backend;
extern const pg_backend pg_sim_backend;
extern const pg_kernel_table pg_sim_kernels;
#ifdef PG_HAVE_CUDA
extern const pg_kernel_table pg_cuda_kernels;
#endif

/* rt.c: the backend chosen for this process (committed on first call), and
 * the one that would be chosen now, without committing. */
const pg_backend *pg_rt(void);
const pg_backend *pg_rt_peek(void);

/* pool.c: the caching allocator all device arrays use. A block freed on a
 * stream is handed out again at once on that stream (stream order makes that
 * safe), and on another stream only once the work queued before the free has
 * finished. `serial` names a stream for the life of the process (0 is the
 * default stream), since a destroyed stream's handle can come back. */
pg_err pg_pool_alloc(void **ptr, size_t size, int device, pg_stream stream,
                     uint64_t serial);
pg_err pg_pool_free(void *ptr, size_t size, int device, pg_stream stream,
                    uint64_t serial);
size_t pg_pool_used(int device);  /* bytes in live arrays */
size_t pg_pool_total(int device); /* used plus cached */
pg_err pg_pool_release_cached(int device);
void pg_pool_set_limit(int device, size_t limit); /* 0: none */
size_t pg_pool_limit(int device);
size_t pg_pool_round(size_t size);

#ifdef __cplusplus
}
#endif
#endif /* PYGPU_RUNTIME_H */
