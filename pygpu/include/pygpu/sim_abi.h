/* The interface between pygpu's C extension and the simulator, written once:
 * the error codes, the launch geometry (pg_dim3) and the table pg_sim_host
 * with the structures it names. Plain C, with one C++ addition (pg_dim3's
 * constructor, which makes it the simulator's dim3). Included by
 * csrc/runtime/runtime.h (the C files, and kernels.cu for nvcc and for the
 * host compiler) and by pygpu/sim_prelude.h (the modules that the host
 * compiler makes of users' and generated kernels), so that both sides read
 * one layout. It is one of the device headers (pygpu/include/pygpu/), whose
 * digest is part of every compiled kernel's cache key. */
#ifndef PYGPU_SIM_ABI_H
#define PYGPU_SIM_ABI_H

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
    PG_ERR_ECC_UNCORRECTABLE = 214,
    PG_ERR_INVALID_KERNEL_IMAGE = 200,
    PG_ERR_PEER_ACCESS_UNSUPPORTED = 217,
    PG_ERR_NO_DEVICE = 100,
    PG_ERR_INVALID_DEVICE = 101,
    PG_ERR_INVALID_RESOURCE_HANDLE = 400,
    PG_ERR_NOT_FOUND = 500, /* cudaErrorSymbolNotFound; the driver's NOT_FOUND */
    PG_ERR_NOT_READY = 600,
    PG_ERR_ILLEGAL_ADDRESS = 700,
    PG_ERR_PEER_ACCESS_ALREADY_ENABLED = 704,
    /* the simulator: a kernel touched another device's memory without peer
     * access (access_fault() says which devices); a GPU faults instead */
    PG_ERR_PEER_ACCESS_NOT_ENABLED = 705,
    PG_ERR_ASSERT = 710,
    PG_ERR_TOO_MANY_PEERS = 711,
    PG_ERR_HARDWARE_STACK_ERROR = 714,
    PG_ERR_ILLEGAL_INSTRUCTION = 715,
    PG_ERR_MISALIGNED_ADDRESS = 716,
    PG_ERR_INVALID_ADDRESS_SPACE = 717,
    PG_ERR_INVALID_PC = 718,
    PG_ERR_LAUNCH_FAILURE = 719,
    PG_ERR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
    PG_ERR_NOT_SUPPORTED = 801,
    /* stream capture (CUDA graphs): the operation cannot be captured, an
     * earlier one invalidated the capture, ... (pg_err_is_capture) */
    PG_ERR_STREAM_CAPTURE_UNSUPPORTED = 900,
    PG_ERR_STREAM_CAPTURE_INVALIDATED = 901,
    PG_ERR_STREAM_CAPTURE_UNJOINED = 904,
    PG_ERR_STREAM_CAPTURE_IMPLICIT = 906,
    PG_ERR_CAPTURED_EVENT = 907,
    PG_ERR_STREAM_CAPTURE_WRONG_THREAD = 908,
    PG_ERR_UNKNOWN = 999,
    /* pygpu's own codes, outside cudaError_t's range; only the simulator
     * returns them */
    PG_ERR_INTERRUPTED = 0x10001,   /* a signal's handler stopped a launch */
    PG_ERR_CONFIGURATION = 0x10002, /* bad settings: see config_error() */
};

/* A grid's or a block's size, or a thread's or block's index. In C++ it has
 * CUDA's dim3 constructor (an omitted size is 1): the simulator's dialect
 * (sim_dialect.h) names it dim3 and uint3. */
typedef struct pg_dim3 {
    unsigned int x, y, z;
#ifdef __cplusplus
    pg_dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1)
        : x(x_), y(y_), z(z_)
    {
    }
#endif
} pg_dim3;

/* What a module compiled for the host (pygpu/sim_prelude.h includes this
 * header) gets from pygpu at load time: the one block runner and the
 * operations that need the whole block (barriers, warp intrinsics), failures,
 * printf, and what the checking mode looks at. PG_SIM_ABI is its version. */
#define PG_SIM_ABI 5

/* A launch's index variables: the module's own (threadIdx, ... are plain
 * globals of the module), which the runner sets thread by thread. */
typedef struct {
    pg_dim3 thread, block, block_dim, grid_dim;
} pg_sim_index;

/* The runner's state that a checking module reads while a thread runs. */
typedef struct {
    unsigned int thread;        /* the running thread's rank in its block, x fastest */
    uint32_t epoch;             /* +1 at each block's start and each barrier */
    const uint16_t *warp_syncs; /* per warp of the block: __syncwarp()s done */
    const char *stacks, *stacks_end; /* the threads' stacks (local memory) */
    uint32_t block;                  /* +1 at each block's start, launch after launch */
    /* A finding that waits for the block's next barrier or its end (a race:
     * it fails the launch there unless the block turns out to diverge at a
     * barrier, the bug that caused it). The module writes it (once per
     * block: deferred_err 0 until then); the runner reads and clears it. */
    pg_err deferred_err;
    char deferred[1024];
    /* 0 if ptr lies in an allocation that nothing has written yet (its bytes
     * are undefined, as cudaMalloc's are); else 1 */
    int (*written)(const void *ptr);
    /* a cooperative launch runs now (grid_group::sync() may be called) */
    int cooperative;
    /* the epoch at the launch's last grid-wide barrier (grid_group::sync()),
     * 0 before any: what any block did before it is ordered before what any
     * block does after it */
    uint32_t grid_epoch;
} pg_sim_live;

typedef struct {
    pg_dim3 grid, block;
    void (*body)(void *); /* one thread of the kernel */
    void *arg;
    pg_sim_index *index;
    const char *kernel; /* its name, for messages */
    /* cudaLaunchCooperativeKernel: every block of the grid is resident at
     * once, so grid_group::sync() (PG_BARRIER_GRID) works. The runner then
     * keeps each block's shared memory apart: shared_state(NULL) returns a
     * copy of the module's shared memory as the running block left it (and
     * what the checking mode knows of it), shared_state(copy) puts it back
     * and frees the copy; NULL for a launch that is not cooperative */
    int cooperative;
    void *(*shared_state)(void *saved);
} pg_sim_launch;

/* Warp intrinsics: a rendezvous of the lanes in the mask. */
enum {
    PG_WARP_SYNC,
    PG_WARP_SHFL,
    PG_WARP_SHFL_UP,
    PG_WARP_SHFL_DOWN,
    PG_WARP_SHFL_XOR,
    PG_WARP_BALLOT,
    PG_WARP_ANY,
    PG_WARP_ALL,
    PG_WARP_MATCH_ANY,
    PG_WARP_MATCH_ALL,
    PG_WARP_OPS
};
/* __syncthreads() and its _count, _and, _or forms; the grid's barrier
 * (grid_group::sync(), cooperative launches only) */
enum {
    PG_BARRIER_PLAIN,
    PG_BARRIER_COUNT,
    PG_BARRIER_AND,
    PG_BARRIER_OR,
    PG_BARRIER_GRID
};

/* pg_sim_kernel.launch's flags */
enum { PG_SIM_COOPERATIVE = 1 };

/* The most threads a cooperative launch holds on the simulator: each has a
 * stack (and a guard page: two memory mappings) of its own while the grid
 * runs, as every block is resident at once. */
#define PG_SIM_COOPERATIVE_THREADS 8192

typedef struct {
    int abi;
    /* runs the grid, each thread a fiber */
    pg_err (*run)(const pg_sim_launch *launch);
    int (*barrier)(int op, int predicate);
    uint64_t (*warp)(int op, unsigned int mask, uint64_t value, int arg, int width);
    /* __activemask(): site is one address per place in the source that calls
     * it (lanes at one site count as converged) */
    unsigned int (*activemask)(const void *site);
    /* stops the launch: the calling thread never returns; err (PG_ERR_ASSERT,
     * PG_ERR_ILLEGAL_ADDRESS, ...) is the launch's, message its detail */
    void (*fail)(pg_err err, const char *message);
    /* printf: text for sys.stdout, put in thread order after the launch */
    void (*print)(const char *text, size_t size);
    /* the live allocation (device or page-locked memory) holding ptr: 0, or -1 */
    int (*find_range)(const void *ptr, void **base, size_t *size);
    /* the bytes of the array that pointer parameter i came from: 0, or -1 */
    int (*arg_span)(int i, const void **lo, const void **hi);
    pg_err (*check_access)(const void *ptr);
    const pg_sim_live *live;
} pg_sim_host;

/* A kernel of such a module (pg_sim_module_kernel(name) finds it): its
 * parameters' count and sizes, as the kernel's C++ type has them, and its
 * launch, with the parameters as cuLaunchKernel takes them. */
typedef struct pg_sim_kernel {
    const char *name;
    int nparams;
    const size_t *sizes;
    pg_err (*launch)(const struct pg_sim_kernel *k, pg_dim3 grid, pg_dim3 block,
                     unsigned int shared_bytes, void **params, unsigned int flags);
    void (*fn)(void);   /* the kernel, for launch to cast back */
    const char *params; /* its parameters' names, comma-separated, for messages */
} pg_sim_kernel;

#ifdef __cplusplus
}
#endif
#endif /* PYGPU_SIM_ABI_H */
