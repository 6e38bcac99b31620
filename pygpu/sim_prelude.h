/* pygpu's simulator: the CUDA C dialect for the host C++ compiler. pygpu
 * (rawkernel.py) compiles a RawKernel's or RawModule's source as
 *
 *     #include "sim_prelude.h"
 *     #line 1 "<kernel source>"
 *     ...the source...
 *     PG_SIM_EXPORT(name)          one per kernel
 *
 * into a shared object, and the simulator loads it (rt_sim.c): it calls
 * pg_sim_module_attach with pygpu's block runner, then finds each kernel
 * with pg_sim_module_kernel(name). PG_SIM_EXPORT deduces the kernel's
 * parameters from its type (void (*)(A...)): their count and sizes, for the
 * same argument checks as on a GPU, and how to call it with the parameters
 * that a launch gets (as cuLaunchKernel takes them).
 *
 * The index variables are pygpu's (one block runner; each thread a fiber, so
 * __syncthreads() is a barrier). __shared__ is `static`: one copy, reused
 * block after block, as the prebuilt kernels have it. rawkernel.py writes
 * `extern __shared__ T name[];` as a reference to the launch's dynamic
 * shared memory (PG_SIM_DYNAMIC_SHARED). The layout of pg_sim_host and
 * pg_sim_kernel is csrc/runtime.h's; PG_SIM_ABI is its version. */
#ifndef PYGPU_SIM_PRELUDE_H
#define PYGPU_SIM_PRELUDE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <utility>

#define PG_SIM_ABI 1

struct dim3 {
    unsigned int x, y, z;
    dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1)
        : x(x_), y(y_), z(z_)
    {
    }
};
typedef dim3 uint3;

extern "C" {
typedef struct {
    int abi;
    dim3 *thread_idx, *block_idx, *block_dim, *grid_dim;
    int (*run)(dim3 grid, dim3 block, void (*body)(void *), void *arg);
    void (*syncthreads)(void);
    int (*check_access)(const void *ptr);
} pg_sim_host;

typedef struct pg_sim_kernel {
    const char *name;
    int nparams;
    const size_t *sizes;
    int (*launch)(const struct pg_sim_kernel *k, dim3 grid, dim3 block,
                  unsigned int shared_bytes, void **params);
    void (*fn)(void);
} pg_sim_kernel;
}

namespace pg_sim {
inline const pg_sim_host *host;
inline void *dynamic_shared; /* this launch's extern __shared__ memory */
} /* namespace pg_sim */

#define threadIdx (*pg_sim::host->thread_idx)
#define blockIdx (*pg_sim::host->block_idx)
#define blockDim (*pg_sim::host->block_dim)
#define gridDim (*pg_sim::host->grid_dim)
#define warpSize 32
#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __align__(n) alignas(n)
#define __shared__ static
#define __constant__ static
#define __syncthreads() pg_sim::host->syncthreads()
#define PG_SIM_DYNAMIC_SHARED(T, name)                                                 \
    static T *&name = reinterpret_cast<T *&>(pg_sim::dynamic_shared)

/* CUDA's min and max for the arithmetic types, as its headers declare them */
#define PG_SIM_MINMAX(T)                                                               \
    inline T min(T a, T b)                                                             \
    {                                                                                  \
        return b < a ? b : a;                                                          \
    }                                                                                  \
    inline T max(T a, T b)                                                             \
    {                                                                                  \
        return a < b ? b : a;                                                          \
    }
PG_SIM_MINMAX(int)
PG_SIM_MINMAX(unsigned int)
PG_SIM_MINMAX(long)
PG_SIM_MINMAX(unsigned long)
PG_SIM_MINMAX(long long)
PG_SIM_MINMAX(unsigned long long)
PG_SIM_MINMAX(float)
PG_SIM_MINMAX(double)
#undef PG_SIM_MINMAX

namespace pg_sim {

template <class T> struct value {
    typedef T type;
};
template <class T> struct value<T &> {
    typedef T type;
};
template <class T> struct value<const T> {
    typedef T type;
};

template <class T>
inline int
check_arg(const T &)
{
    return 0;
}

template <class T>
inline int
check_arg(T *ptr)
{
    return host->check_access((const void *)ptr);
}

template <class... A> struct kernel_of {
    typedef void (*fn_type)(A...);
    static constexpr size_t sizes[sizeof...(A) + 1] = {sizeof(A)..., 0};

    struct launch_args {
        fn_type fn;
        void **params;
        void *shared;
    };

    template <size_t... I> static void call(launch_args *a, std::index_sequence<I...>)
    {
        a->fn(*(typename value<A>::type *)a->params[I]...);
    }

    static void body(void *arg)
    {
        launch_args *a = (launch_args *)arg;
        dynamic_shared = a->shared;
        call(a, std::index_sequence_for<A...>{});
    }

    template <size_t... I> static int check(void **params, std::index_sequence<I...>)
    {
        int err = 0;
        ((err = err == 0 ? check_arg(*(typename value<A>::type *)params[I]) : err),
         ...);
        return err;
    }

    static int launch(const pg_sim_kernel *k, dim3 grid, dim3 block,
                      unsigned int shared_bytes, void **params)
    {
        int err = check(params, std::index_sequence_for<A...>{});
        if (err != 0) {
            return err;
        }
        /* zeroed, as a GPU's is not, but the same on every run */
        void *shared = calloc(1, shared_bytes + 16);
        if (shared == NULL) {
            return 2; /* cudaErrorMemoryAllocation */
        }
        launch_args a = {(fn_type)k->fn, params, shared};
        err = host->run(grid, block, body, &a);
        free(shared);
        return err;
    }
};

/* The module's kernels, a list that PG_SIM_EXPORT's objects fill when the
 * shared object is loaded. */
struct entry {
    pg_sim_kernel kernel;
    entry *next;
};
inline entry *kernels;

template <class... A>
inline pg_sim_kernel
describe(const char *name, void (*fn)(A...))
{
    return {name, (int)sizeof...(A), kernel_of<A...>::sizes, kernel_of<A...>::launch,
            (void (*)(void))fn};
}

struct exporter {
    entry e;
    exporter(pg_sim_kernel k) : e{k, kernels}
    {
        kernels = &e;
    }
};

} /* namespace pg_sim */

#define PG_SIM_CAT2(a, b) a##b
#define PG_SIM_CAT(a, b) PG_SIM_CAT2(a, b)
#define PG_SIM_EXPORT(...)                                                             \
    static pg_sim::exporter PG_SIM_CAT(pg_sim_export_, __COUNTER__)(                   \
        pg_sim::describe(#__VA_ARGS__, &__VA_ARGS__));

extern "C" __attribute__((visibility("default"))) int
pg_sim_module_attach(const pg_sim_host *host)
{
    if (host->abi != PG_SIM_ABI) {
        return -1;
    }
    pg_sim::host = host;
    return 0;
}

extern "C" __attribute__((visibility("default"))) const pg_sim_kernel *
pg_sim_module_kernel(const char *name)
{
    for (pg_sim::entry *e = pg_sim::kernels; e != NULL; e = e->next) {
        if (strcmp(e->kernel.name, name) == 0) {
            return &e->kernel;
        }
    }
    return NULL;
}

#endif /* PYGPU_SIM_PRELUDE_H */
