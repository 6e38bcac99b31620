/* The thin runtime layer: what pygpu needs of a CUDA runtime, as a table of
 * function pointers. rt_cuda.c fills it from the CUDA runtime, rt_sim.c from
 * the CPU simulator. This header is plain C, included by the C files and by
 * kernels.cu (compiled by nvcc and by the host C++ compiler); it never
 * includes Python.h or cuda_runtime.h. */
#ifndef PYGPU_RUNTIME_H
#define PYGPU_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

/* the error codes (pg_err), pg_dim3 and the simulator's module interface
 * (pg_sim_host), shared with pygpu/sim_prelude.h */
#include "pygpu/sim_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A fault in a kernel (or the hardware). On a backend with
 * PG_CAP_STICKY_FAULTS the context is unusable after one. */
static inline int
pg_err_is_fault(pg_err err)
{
    switch (err) {
    case PG_ERR_ECC_UNCORRECTABLE:
    case PG_ERR_ILLEGAL_ADDRESS:
    case PG_ERR_ASSERT:
    case PG_ERR_HARDWARE_STACK_ERROR:
    case PG_ERR_ILLEGAL_INSTRUCTION:
    case PG_ERR_MISALIGNED_ADDRESS:
    case PG_ERR_INVALID_ADDRESS_SPACE:
    case PG_ERR_INVALID_PC:
    case PG_ERR_LAUNCH_FAILURE: return 1;
    default: return 0;
    }
}

/* An error of stream capture: what was asked cannot happen while a stream
 * is being captured into a CUDA graph. */
static inline int
pg_err_is_capture(pg_err err)
{
    return err >= PG_ERR_STREAM_CAPTURE_UNSUPPORTED &&
           err <= PG_ERR_STREAM_CAPTURE_WRONG_THREAD;
}

/* The most devices pygpu uses: the ones past it are not counted. */
#define PG_MAX_DEVICES 64

typedef void *pg_stream;     /* cudaStream_t underneath; NULL is the default stream */
typedef void *pg_event;      /* cudaEvent_t underneath */
typedef void *pg_graph;      /* cudaGraph_t underneath: a captured graph */
typedef void *pg_graph_exec; /* cudaGraphExec_t underneath: one to launch */

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
/* add and add_one are launched with at least this many elements a thread
 * (fewer blocks than a grid asks for where it would give a thread less): a
 * thread then has four 16-byte loads in flight (kernels.cu, add_kernel). */
#define PG_FLAT_ELEMS_PER_THREAD 16
/* Every element type the elementwise kernel reads and writes. */
enum {
    PG_T_BOOL,
    PG_T_I8,
    PG_T_I16,
    PG_T_I32,
    PG_T_I64,
    PG_T_U8,
    PG_T_U16,
    PG_T_U32,
    PG_T_U64,
    PG_T_F16,
    PG_T_F32,
    PG_T_F64,
    PG_T_C64,
    PG_T_C128,
    PG_T_COUNT
};

/* Its operations. Arithmetic wraps around for integers, as NumPy's does. */
enum {
    PG_OP_ADD,
    PG_OP_SUBTRACT,
    PG_OP_MULTIPLY,
    PG_OP_EQUAL,
    PG_OP_NOT_EQUAL,
    PG_OP_LESS,
    PG_OP_LESS_EQUAL,
    PG_OP_GREATER,
    PG_OP_GREATER_EQUAL,
    PG_OP_CAST, /* out = a converted (b unused): astype, and assignment */
    PG_OP_COUNT
};

/* One operand of the elementwise kernel: strided memory of element type
 * `type`, or (data NULL) the scalar in `value`, already of the compute type. */
typedef struct {
    const void *data;
    int type;                    /* PG_T_* */
    int64_t strides[PG_MAXDIMS]; /* bytes; 0 on broadcast axes */
    unsigned char value[16];
} pg_operand;

/* out = a <op> b elementwise over `shape`, computed in type `compute` (each
 * input converted to it on load, the result converted to out's type on store:
 * bool for comparisons). */
typedef pg_err pg_binary_fn(int op, int compute, int nd, const int64_t *shape,
                            const pg_operand *a, const pg_operand *b, void *out,
                            int out_type, const int64_t *out_strides, pg_stream stream);
/* c (m x n) = a (m x k) @ b (k x n), row-major */
typedef pg_err pg_matmul_fn(int dtype, const void *a, const void *b, void *c, int64_t m,
                            int64_t n, int64_t k, pg_dim3 grid, pg_dim3 block,
                            pg_stream stream);

/* c[i] (m x n) = a[i] (m x k) @ b[i] (k x n) for i < batch, any layout:
 * strides in elements, for a, then b, then c, each (rows, columns, batch).
 * type is a PG_T_* code: F16 (added in float32, as NumPy does), F32, F64,
 * C64 or C128. */
typedef pg_err pg_matmul_strided_fn(int type, const void *a, const void *b, void *c,
                                    int64_t m, int64_t n, int64_t k, int64_t batch,
                                    const int64_t *strides, pg_stream stream);

/* A matrix product for a BLAS library, said in row-major terms (as pygpu's
 * arrays are): c[i] (m x n) = a[i] (m x k) @ b[i] (k x n) for i < batch. An
 * operand is either as it is, rows ld elements apart and each row's elements
 * adjacent, or (trans_*) a transposed view of such a matrix: columns ld apart,
 * each column's elements adjacent. c is rows ldc apart, elements adjacent.
 * Matrices of a batch are stride_* elements apart. Every size is at least 1
 * and fits an int; ld is at least the length of what it separates. */
typedef struct {
    int type;       /* PG_T_F16, PG_T_F32, PG_T_F64, PG_T_C64 or PG_T_C128 */
    int allow_tf32; /* float32 and complex64 may round inputs to TF32 */
    int64_t m, n, k, batch;
    const void *a;
    int64_t lda, stride_a;
    int trans_a;
    const void *b;
    int64_t ldb, stride_b;
    int trans_b;
    void *c;
    int64_t ldc, stride_c;
} pg_gemm;

/* One launcher per entry of kernels.def, defined in kernels.cu as
 * pg_launch_<name>; the fields are named (and ordered) by that one list. */
typedef struct {
#define PG_LAUNCHER(name, type) type *name;
#define PG_KERNEL(name, type, nargs, signature, doc) type *name;
#include "kernels.def"
} pg_kernel_table;

/* "launch of kernel <name>" for each entry, for messages; defined in rt.c
 * from the same list. */
typedef struct {
#define PG_LAUNCHER(name, type) const char *name;
#define PG_KERNEL(name, type, nargs, signature, doc) const char *name;
#include "kernels.def"
} pg_kernel_name_table;
extern const pg_kernel_name_table pg_kernel_names;

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
    /* modules are shared objects that the host C++ compiler made from CUDA C
     * against pygpu/sim_prelude.h; module_load takes the path of one */
    PG_CAP_HOST_MODULES = 1 << 5,
};

/* The backend's operations that can fail, each with the CUDA call it stands
 * for: the name an error message gives. This one list makes both the table's
 * fields and pg_call_names, so that a message cannot name another call than
 * the one made (pygpu.h's PG_CALL and PG_TRY read both). */
/* clang-format off */
#define PG_BACKEND_CALLS(X)                                                            \
    /* makes the current device's context, so that module loads can follow */          \
    X(ensure_context, "cudaFree", (void))                                              \
    X(device_count, "cudaGetDeviceCount", (int *count))                                \
    X(get_props, "cudaGetDeviceProperties", (int device, pg_device_props *props))      \
    X(set_device, "cudaSetDevice", (int device))                                       \
    X(get_device, "cudaGetDevice", (int *device))                                      \
    X(mem_get_info, "cudaMemGetInfo", (size_t *free_bytes, size_t *total_bytes))     \
    X(malloc, "cudaMalloc", (void **ptr, size_t size))                                 \
    X(free, "cudaFree", (void *ptr))                                                   \
    X(memcpy, "cudaMemcpy", (void *dst, const void *src, size_t size, int kind))       \
    X(memset, "cudaMemset", (void *ptr, int value, size_t size))                       \
    X(synchronize, "cudaDeviceSynchronize", (void))                                    \
    X(get_last_error, "cudaGetLastError", (void))                                      \
    /* streams and events; streams are blocking (they order with stream 0) */          \
    X(stream_create, "cudaStreamCreate", (pg_stream *stream))                         \
    X(stream_destroy, "cudaStreamDestroy", (pg_stream stream))                         \
    X(stream_synchronize, "cudaStreamSynchronize", (pg_stream stream))                 \
    /* PG_ERR_NOT_READY if busy */                                                     \
    X(stream_query, "cudaStreamQuery", (pg_stream stream))                             \
    X(stream_wait_event, "cudaStreamWaitEvent", (pg_stream stream, pg_event event))    \
    X(event_create, "cudaEventCreate", (pg_event *event, int timing))                 \
    X(event_destroy, "cudaEventDestroy", (pg_event event))                             \
    X(event_record, "cudaEventRecord", (pg_event event, pg_stream stream))             \
    X(event_synchronize, "cudaEventSynchronize", (pg_event event))                     \
    /* PG_ERR_NOT_READY if pending */                                                  \
    X(event_query, "cudaEventQuery", (pg_event event))                                 \
    X(event_elapsed_ms, "cudaEventElapsedTime",                                        \
      (float *ms, pg_event start, pg_event end))                                       \
    X(memcpy_async, "cudaMemcpyAsync",                                                 \
      (void *dst, const void *src, size_t size, int kind, pg_stream stream))           \
    X(memset_async, "cudaMemsetAsync",                                                 \
      (void *ptr, int value, size_t size, pg_stream stream))                           \
    /* several devices: whether kernels on `device` can reach `peer`'s memory;  */    \
    /* enabling it (makes `device` current for the call, then restores the      */    \
    /* current device; already enabled is success); a copy between two devices' */    \
    /* memories, direct where there is a peer path, else staged by the driver   */    \
    X(can_access_peer, "cudaDeviceCanAccessPeer", (int device, int peer, int *can))    \
    X(enable_peer_access, "cudaDeviceEnablePeerAccess", (int device, int peer))        \
    X(memcpy_peer_async, "cudaMemcpyPeerAsync",                                        \
      (void *dst, int dst_device, const void *src, int src_device, size_t size,        \
       pg_stream stream))                                                              \
    /* page-locked host memory */                                                      \
    X(host_alloc, "cudaHostAlloc", (void **ptr, size_t size))                          \
    X(host_free, "cudaFreeHost", (void *ptr))                                          \
    /* kernels compiled at run time (driver API): images are cubin or PTX */           \
    X(module_load, "cuModuleLoadData", (void **module, const void *image))             \
    X(module_unload, "cuModuleUnload", (void *module))                                 \
    X(module_function, "cuModuleGetFunction",                                          \
      (void **function, void *module, const char *name))                               \
    /* a module's __device__ or __constant__ variable: its address and bytes; */       \
    /* PG_ERR_NOT_FOUND for no such variable. NULL where a backend has none   */       \
    X(module_global, "cuModuleGetGlobal",                                              \
      (void **ptr, size_t *size, void *module, const char *name))                      \
    /* PG_ERR_INVALID_VALUE past the last parameter */                                 \
    X(function_param, "cuFuncGetParamInfo",                                            \
      (void *function, size_t index, size_t *offset, size_t *size))                    \
    X(launch_function, "cuLaunchKernel",                                               \
      (void *function, pg_dim3 grid, pg_dim3 block, unsigned int shared_bytes,         \
       pg_stream stream, void **params))                                               \
    /* a cooperative launch: every block resident at once (grid_group::sync()); */    \
    /* cooperative_max_blocks: the most blocks of `block` threads and           */    \
    /* shared_bytes that can be resident at once on `device` (blocks per SM,    */    \
    /* by occupancy, times the SMs); a larger grid is refused before launching  */    \
    X(launch_cooperative, "cuLaunchCooperativeKernel",                                 \
      (void *function, pg_dim3 grid, pg_dim3 block, unsigned int shared_bytes,         \
       pg_stream stream, void **params))                                               \
    X(cooperative_max_blocks, "cuOccupancyMaxActiveBlocksPerMultiprocessor",           \
      (void *function, pg_dim3 block, unsigned int shared_bytes, int device,           \
       unsigned long long *blocks))                                                    \
    /* CUDA graphs by stream capture. The stream a capture records does not wait */    \
    /* for the legacy default stream (a blocking stream under capture would make  */   \
    /* every use of that stream fail). Between begin and end, work queued on it  */    \
    /* is recorded, not run: kernel launches, device-to-device copies, memsets.  */    \
    /* What cannot be recorded is refused with PG_ERR_STREAM_CAPTURE_UNSUPPORTED */    \
    /* before it reaches the runtime, so the capture stays valid: on the stream, */    \
    /* copies between host and device or devices, events (recorded or waited     */    \
    /* for), queries, waits and graph launches; on the capturing thread,         */    \
    /* synchronous copies and every wait (stream, event, device); a device's     */    \
    /* synchronize while one of its streams is captured. Captures are relaxed    */    \
    /* (allocations may happen), one a thread. A graph runs on the device it     */    \
    /* was captured on; launches of one graph run one after another.             */    \
    X(stream_create_nonblocking, "cudaStreamCreateWithFlags", (pg_stream *stream))     \
    X(stream_begin_capture, "cudaStreamBeginCapture", (pg_stream stream))              \
    X(stream_end_capture, "cudaStreamEndCapture", (pg_stream stream, pg_graph *graph)) \
    X(graph_node_count, "cudaGraphGetNodes", (pg_graph graph, size_t *count))          \
    X(graph_instantiate, "cudaGraphInstantiateWithFlags",                              \
      (pg_graph_exec *exec, pg_graph graph))                                           \
    X(graph_destroy, "cudaGraphDestroy", (pg_graph graph))                             \
    X(graph_launch, "cudaGraphLaunch", (pg_graph_exec exec, pg_stream stream))         \
    X(graph_exec_destroy, "cudaGraphExecDestroy", (pg_graph_exec exec))
/* clang-format on */

/* What the Python side gives the simulator. pending() is polled now and then
 * with the backend's locks held: nonzero if Ctrl-C asked for a stop; it runs
 * no Python code. handle() is then called with no lock held, on the same
 * thread: it runs the signal handlers, and returns nonzero (with a Python
 * exception set) if the work must stop; zero to go on. output() writes a
 * kernel's printf text to sys.stdout, with no lock held, on the launching
 * thread. */
typedef struct {
    int (*pending)(void);
    int (*handle)(void);
    void (*output)(const char *text, size_t size);
} pg_python_hooks;

/* A run-time compilation: `source` (called `name` in messages) with nopts
 * options; the template instantiations named by nnames name expressions
 * ("scale<float>") are compiled too. Out: the image (size bytes), the log (a
 * C string, maybe empty) and the lowered (mangled) name of each name
 * expression, one after another, each NUL-terminated. */
typedef struct {
    const char *source, *name;
    int nopts, nnames;
    const char *const *opts, *const *names;
    char *image, *log, *lowered;
    size_t size;
} pg_compile_job;

typedef struct {
    const char *name;  /* "cuda" or "simulator" */
    unsigned int caps; /* PG_CAP_* */
#define PG_BACKEND_FIELD(op, call, params) pg_err(*op) params;
    PG_BACKEND_CALLS(PG_BACKEND_FIELD)
#undef PG_BACKEND_FIELD
    /* 1 if ptr is page-locked host memory the device can copy from directly */
    int (*is_pinned)(const void *ptr);
    /* 1 if a stream handle from outside (an interop protocol's number, an
     * object's __cuda_stream__) is a live stream of this backend, else 0;
     * NULL where the backend cannot tell (a GPU: CUDA checks its own) */
    int (*stream_known)(pg_stream stream);
    /* the device that owns a device pointer, or -1 if it is no device memory */
    int (*pointer_device)(const void *ptr);
    /* The live device allocation that holds ptr: 0 with its *base and *size;
     * -1 if ptr lies in no allocation; 1 if the backend cannot tell the
     * extent (the caller then trusts it). */
    int (*pointer_range)(const void *ptr, void **base, size_t *size);
    /* The pool hands out the cached block at ptr again: its bytes are
     * undefined once more, as a new allocation's (the simulator's checking
     * mode then reports a read before a write). A no-op on a GPU. */
    void (*mark_unwritten)(void *ptr);
    /* Why the last call on this thread failed with PG_ERR_CONFIGURATION: the
     * variable, its value and what is accepted. NULL where the backend has no
     * settings of its own. */
    const char *(*config_error)(void);
    /* After a launch on this thread failed with PG_ERR_PEER_ACCESS_NOT_ENABLED:
     * the device it ran on and the device whose memory it touched (0; -1 if
     * there was none). NULL where the backend cannot tell (on a GPU such a
     * kernel faults with an illegal address). */
    int (*access_fault)(int *device, int *peer);
    /* After a launch on this thread failed in its kernel (an assert, a finding
     * of the checking mode, a barrier or warp intrinsic that cannot complete):
     * what happened, naming the kernel, block and thread; then forgotten.
     * NULL when there is none, and where the backend cannot tell. */
    const char *(*kernel_fault)(void);
    /* Installs the hooks that long host-side work (the simulator's launches)
     * polls; NULL where the work runs on a device. */
    void (*set_python_hooks)(const pg_python_hooks *hooks);
    /* Run-time compilation of CUDA C (PG_CAP_RUNTIME_COMPILE; both NULL
     * without it). compiler_load loads the compiler from `path` (the first
     * call; later ones only report its version): 0, or -1 with why in errbuf. */
    int (*compiler_load)(const char *path, int *major, int *minor, char *errbuf,
                         size_t errlen);
    /* Compiles job's source to a loadable image (see pg_compile_job).
     * PG_COMPILE_OK: its outputs are malloc'ed, the caller frees them.
     * Otherwise errbuf says what failed, and job->log, if not NULL, is the
     * compiler's log (the caller frees it too). Touches no Python object:
     * call it with the GIL released. */
    int (*compile)(pg_compile_job *job, char *errbuf, size_t errlen);
    /* Matrix products by a BLAS library loaded at run time (cuBLAS); both
     * NULL where the backend has none (the simulator: matmul uses pygpu's
     * kernels). blas_load loads the library from `path` (the first call that
     * succeeds; later ones only report): 0 with *version = major * 10000 +
     * minor * 100 + patch, or -1 with why in errbuf. blas_gemm queues *g on
     * `stream` with `device` current: PG_SUCCESS, or an error with the
     * failing call and the library's status in `why` ("cublasGemmEx
     * (CUBLAS_STATUS_NOT_SUPPORTED)"). Both touch no Python object. */
    int (*blas_load)(const char *path, int *version, char *errbuf, size_t errlen);
    pg_err (*blas_gemm)(int device, const pg_gemm *g, pg_stream stream, char *why,
                        size_t whylen);
    /* Destroys the library's handle of `device` (and its workspace), if it
     * made one, with `device` current; the next product makes another. On
     * failure `why` names the call, as blas_gemm's. NULL where blas_gemm is. */
    pg_err (*blas_release)(int device, char *why, size_t whylen);
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
int pg_nvrtc_compile(pg_compile_job *job, char *errbuf, size_t errlen);
/* rt_cublas.c: cuBLAS, loaded with dlopen, as blas_load and blas_gemm. */
int pg_cublas_load(const char *path, int *version, char *errbuf, size_t errlen);
pg_err pg_cublas_gemm(int device, const pg_gemm *g, pg_stream stream, char *why,
                      size_t whylen);
pg_err pg_cublas_release(int device, char *why, size_t whylen);
/* The CUDA call each operation stands for: pg_call_names.malloc is
 * "cudaMalloc". Defined in rt.c from PG_BACKEND_CALLS. */
typedef struct {
#define PG_BACKEND_NAME_FIELD(op, call, params) const char *op;
    PG_BACKEND_CALLS(PG_BACKEND_NAME_FIELD)
#undef PG_BACKEND_NAME_FIELD
} pg_call_name_table;
extern const pg_call_name_table pg_call_names;

/* The backends. pg_cuda_backend is NULL in a build without the CUDA toolkit. */
extern const pg_backend *const pg_cuda_backend;
extern const pg_backend pg_sim_backend;
extern const pg_kernel_table pg_sim_kernels;
/* rt_sim.c: the installed hooks, for sim_exec.h's block runner (0 when none). */
int pg_sim_interrupt_pending(void);
int pg_sim_interrupt_handle(void);
/* rt_sim.c: for sim_exec.h's launches, before a kernel runs: PG_SUCCESS if a
 * kernel on this thread's current device may touch the memory at ptr (its own
 * device's, memory of a device it has peer access to, or none of a device's);
 * else PG_ERR_PEER_ACCESS_NOT_ENABLED, remembered for access_fault(). */
pg_err pg_sim_check_access(const void *ptr);

/* kernels.cu (simulator build): the block runner, for pg_sim_host; the order
 * in which it runs blocks and threads: in order (shuffle 0), or shuffled,
 * seeded by seed (the same seed, the same order). */
extern const pg_sim_host pg_sim_hosted;
void pg_sim_set_schedule(int shuffle, uint64_t seed);
void pg_sim_get_schedule(int *shuffle, uint64_t *seed);
/* rt_sim.c: the description of this thread's last failed simulated launch
 * (the block runner sets it), for the error message; and the printf text of
 * a launch, for the Python side's output hook (stdout where there is none). */
void pg_sim_set_fault(const char *message);
void pg_sim_output(const char *text, size_t size);
/* rt_sim.c: the arrays (their bytes, [lo[i], hi[i]); NULL for arguments that
 * are no arrays) that the next launch on this thread gets as its n
 * arguments, for the checking mode's messages and bounds; and their lookup. */
void pg_sim_set_arg_spans(int n, char *const *lo, char *const *hi);
int pg_sim_arg_span(int i, const void **lo, const void **hi);
/* rt_sim.c: the live allocation (device or page-locked) holding ptr: 0, or -1 */
int pg_sim_find_range(const void *ptr, void **base, size_t *size);
/* rt_sim.c: CUDA graphs on the simulator. A simulated stream is a
 * pg_sim_stream: while it is being captured, `capture` is the graph that the
 * work queued on it goes to, as nodes that each launch of the graph runs in
 * order; otherwise NULL, and work runs at once. The default stream (NULL) is
 * never captured. A launcher asks pg_sim_capture_of, one load, and records a
 * node (kernels.cu's PG_LAUNCH, sim_exec.h's pg_sim::record) instead of
 * running the kernel. */
typedef struct pg_sim_graph pg_sim_graph;
typedef struct pg_sim_node {
    struct pg_sim_node *next;
    pg_err (*run)(struct pg_sim_node *node);
    void (*destroy)(struct pg_sim_node *node);
} pg_sim_node;
typedef struct {
    pg_sim_graph *capture;
} pg_sim_stream;

static inline pg_sim_graph *
pg_sim_capture_of(pg_stream stream)
{
    /* handles below a page are none of the simulator's (CUDA's special
     * cudaStreamLegacy and cudaStreamPerThread are 1 and 2) */
    return (uintptr_t)stream >= 4096 ? ((const pg_sim_stream *)stream)->capture : NULL;
}
/* Appends `node` to the graph, which owns it from then on (and destroys it). */
void pg_sim_capture_add(pg_sim_graph *graph, pg_sim_node *node);

#ifdef PG_HAVE_CUDA
extern const pg_kernel_table pg_cuda_kernels;
#endif

/* rt.c: the backend chosen for this process (committed on first call), and
 * the one that would be chosen now, without committing. */
const pg_backend *pg_rt(void);
const pg_backend *pg_rt_peek(void);
/* The name ("cudaErrorMemoryAllocation") and text of an error code, from the
 * backend pg_rt_peek() gives, or CUDA's own names where there is none. */
const char *pg_error_name(pg_err err);
const char *pg_error_string(pg_err err);

/* hostcopy.c: memcpy for large host-side copies, spread over worker threads
 * (with the caller, three quarters of the cores, at most 17, unless set:
 * -1 is the default again). The workers do not survive fork(): the child
 * calls _after_fork. */
void pg_host_memcpy(void *dst, const void *src, size_t n);
void pg_host_memcpy_after_fork(void);
int pg_host_copy_threads(void);
void pg_host_set_copy_threads(int n);
/* How long the pool's threads spin, after a job, for the next before they
 * sleep (nanoseconds; -1 sets the default again, 0 never spins). */
#define PG_HOST_SPIN_NS 300000L
#define PG_HOST_SPIN_MAX 100000000L
long pg_host_spin_ns(void);
void pg_host_set_spin_ns(long ns);
/* A job for the pool's workers: fn(arg, part, parts), parts 1 .. parts-1.
 * begin starts it on up to threads - 1 workers and returns parts (the
 * caller's part 0 counted, which the caller does as it sees fit), or 0 where
 * the pool is busy with another job or no worker could start: then fn is not
 * run, and end must not be called. end returns once every part returned.
 * parallel_threads: the threads such a job should have, the caller's
 * included (the copy threads where set, else every core, at most 17). */
typedef void (*pg_host_job)(void *arg, int part, int parts);
int pg_host_parallel_begin(pg_host_job fn, void *arg, int threads);
void pg_host_parallel_end(void);
int pg_host_parallel_threads(void);
/* A pause in a spin-wait (the CPU's hint to a sibling thread). */
void pg_host_relax(void);

/* transfer.c: the size of a piece of a staged copy (the ring holds 16);
 * settable for tuning, taking effect at the next staged copy. stage_always
 * (tests): stage large pageable copies also where the backend does not gain
 * from it (the simulator), so that the staged paths run there too. */
#define PG_STAGE_MAX ((size_t)64 << 20) /* the most it may be set to */
size_t pg_stage_bytes(void);
void pg_set_stage_bytes(size_t n);
int pg_stage_always(void);
void pg_set_stage_always(int on);
/* Tests: the next staged copy fails (invalid value) where it would issue
 * piece k, its workers copying the pieces ahead; -1: none. */
void pg_set_stage_fail_piece(long k);
/* In a forked child: the rings' locks unlocked afresh (context.c's handler). */
void pg_transfer_after_fork(void);
/* The staging ring of `device`, which must be current, given back (its
 * page-locked buffers and events); the next staged copy makes another. */
void pg_transfer_release(int device);

/* hostcopy.c: memory for large new host arrays (copy_to_host() without out=):
 * mapped by pygpu, aligned for huge pages, freed by pg_host_unmap (a Buffer
 * of kind PG_BUFFER_HOST does it). pg_host_map gives NULL, with errno, when
 * the system has no memory for it. Arrays of at least pg_host_map_min()
 * bytes take it; smaller ones come from NumPy. pg_host_mapped counts the
 * live mappings (for tests). */
#define PG_HOST_MAP_MIN ((size_t)4 << 20)
void *pg_host_map(size_t n);
void pg_host_unmap(void *p, size_t n);
size_t pg_host_map_min(void);
void pg_host_set_map_min(size_t n);
void pg_host_mapped(size_t *count, size_t *bytes);
size_t pg_host_huge_page_size(void);

/* pool.c: the caching allocator all device arrays use. A block freed on a
 * stream is handed out again at once on that stream (stream order makes that
 * safe), and on another stream only once the work queued before the free has
 * finished. `serial` names a stream for the life of the process (0 is the
 * default stream), since a destroyed stream's handle can come back. */
/* pg_pool_alloc_current: the same where the caller knows `device` is current
 * (it saves asking). */
pg_err pg_pool_alloc_current(void **ptr, size_t size, int device, pg_stream stream,
                             uint64_t serial);
pg_err pg_pool_alloc(void **ptr, size_t size, int device, pg_stream stream,
                     uint64_t serial);
pg_err pg_pool_free(void *ptr, size_t size, int device, pg_stream stream,
                    uint64_t serial);
size_t pg_pool_used(int device);  /* bytes in live arrays */
size_t pg_pool_total(int device); /* used plus cached */
/* 1 if ptr lies in a block the pool holds free (an array freed, its memory
 * kept for the next): no live array's memory */
int pg_pool_holds_free(int device, const void *ptr);
pg_err pg_pool_release_cached(int device);
/* The cached blocks and the spare events of `device` (a device the pool never
 * used is not touched: cudaSetDevice would make its context). */
pg_err pg_pool_release_all(int device);
/* 1 once the pool allocated on `device`. */
int pg_pool_touched(int device);
void pg_pool_set_limit(int device, size_t limit); /* 0: none */
size_t pg_pool_limit(int device);
size_t pg_pool_round(size_t size);

/* peer.c: peer access between devices, asked for and enabled once per ordered
 * pair (a, b) in the process (thread-safe). pg_peer_ensure asks the backend
 * whether kernels on device a can access device b's memory and, where they
 * can, enables it (enable_peer_access(a, b)); *enabled is then 1, or 0 where
 * there is no peer path (copies still work: memcpy_peer_async stages them).
 * a == b is always enabled. On failure nothing is remembered (a later call
 * asks again) and *call, if not NULL, names the failing call. Call it with
 * the GIL released: enabling can take milliseconds. pg_peer_enabled reads
 * what pg_peer_ensure found: 1 if enabled (or a == b), 0 if not or not yet
 * asked; it costs an atomic load. */
pg_err pg_peer_ensure(int a, int b, int *enabled, const char **call);
int pg_peer_enabled(int a, int b);

/* capture.c: the streams being captured into CUDA graphs, which both
 * backends consult before what a capture cannot record (PG_BACKEND_CALLS).
 * pg_capture_begin: PG_ERR_STREAM_CAPTURE_UNSUPPORTED for the default stream,
 * a stream already captured, or a thread that already captures one.
 * pg_capture_stream: 1 if `stream` is being captured; pg_capture_thread: 1 if
 * this thread captures a stream; pg_capture_device: 1 while a stream of
 * `device` is being captured (by any thread). */
pg_err pg_capture_begin(pg_stream stream, int device);
void pg_capture_end(pg_stream stream);
int pg_capture_stream(pg_stream stream);
int pg_capture_thread(void);
int pg_capture_device(int device);

/* transfer.c: host <-> device copies of contiguous bytes. Pageable host memory
 * goes through pinned staging buffers, pipelined, where the backend gains from
 * it (PG_CAP_STAGES_PAGEABLE). With sync, returns once the copy is complete;
 * without, a copy from or to page-locked memory may still be running on
 * `stream`. Call with the GIL released. */
pg_err pg_copy_h2d(void *dst, const void *src, size_t n, pg_stream stream, int sync);
pg_err pg_copy_d2h(void *dst, const void *src, size_t n, pg_stream stream, int sync);
/* pg_copy_d2h into memory fresh from pg_host_map, none of it present yet:
 * staged, worker threads fault it in and fill it a huge page each; returns
 * once the copy is complete (sync is ignored: the memory is pageable). */
pg_err pg_copy_d2h_new(void *dst, const void *src, size_t n, pg_stream stream,
                       int sync);

#ifdef __cplusplus
}
#endif
#endif /* PYGPU_RUNTIME_H */
