/* The simulator's stand-in for the CUDA C dialect, for kernels.cu compiled by
 * the host C++ compiler. It defines the built-in index variables, __shared__,
 * __syncthreads() and a launch that runs the grid block by block on the
 * calling thread.
 *
 * Threads of a block run one after another. For a launch marked as using
 * barriers each thread is a fiber (ucontext) with a stack of its own:
 * __syncthreads() switches back to the block runner, which resumes the next
 * thread, and lets the block past the barrier only once all of its threads
 * have reached it. A launch without barriers runs each thread as a plain call.
 * __shared__ is `static thread_local`: one copy, reused block after block. */
#ifndef PYGPU_SIM_EXEC_H
#define PYGPU_SIM_EXEC_H

#ifdef __CUDACC__
#error "sim_exec.h is for the host compiler only"
#endif

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "runtime.h"

struct dim3 {
    unsigned int x, y, z;
    dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1)
        : x(x_), y(y_), z(z_)
    {
    }
};

inline thread_local dim3 pg_sim_threadIdx;
inline thread_local dim3 pg_sim_blockIdx;
inline thread_local dim3 pg_sim_blockDim;
inline thread_local dim3 pg_sim_gridDim;

#define threadIdx pg_sim_threadIdx
#define blockIdx pg_sim_blockIdx
#define blockDim pg_sim_blockDim
#define gridDim pg_sim_gridDim
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static thread_local
#define __syncthreads() pg_sim::syncthreads()

namespace pg_sim {

enum : unsigned char { READY = 0, AT_BARRIER = 1, DONE = 2 };

struct block_state {
    ucontext_t runner;
    ucontext_t *ctx;
    unsigned char *state;
    unsigned int nthreads;
    unsigned int current;
    void (*body)(void *);
    void *arg;
};

inline thread_local block_state *current_block = nullptr;
inline thread_local bool barrier_misuse = false;

inline void
syncthreads()
{
    block_state *b = current_block;
    if (b == nullptr) { /* launched as barrier-free */
        barrier_misuse = true;
        return;
    }
    b->state[b->current] = AT_BARRIER;
    swapcontext(&b->ctx[b->current], &b->runner);
}

inline void
set_thread_index(unsigned int t)
{
    pg_sim_threadIdx.x = t % pg_sim_blockDim.x;
    pg_sim_threadIdx.y = (t / pg_sim_blockDim.x) % pg_sim_blockDim.y;
    pg_sim_threadIdx.z = t / (pg_sim_blockDim.x * pg_sim_blockDim.y);
}

inline void
fiber_entry(int t)
{
    block_state *b = current_block;
    b->body(b->arg);
    b->state[t] = DONE; /* returning resumes uc_link, the runner */
}

constexpr size_t STACK_SIZE = 64 * 1024;

/* Runs one block's threads as fibers until all finish. Returns false on
 * barrier divergence (some threads exited while others wait at a barrier). */
inline bool
run_block_fibers(block_state *b, char *stacks)
{
    for (unsigned int t = 0; t < b->nthreads; t++) {
        getcontext(&b->ctx[t]);
        b->ctx[t].uc_stack.ss_sp = stacks + (size_t)t * STACK_SIZE;
        b->ctx[t].uc_stack.ss_size = STACK_SIZE;
        b->ctx[t].uc_link = &b->runner;
        makecontext(&b->ctx[t], (void (*)())fiber_entry, 1, (int)t);
        b->state[t] = READY;
    }
    for (;;) {
        unsigned int waiting = 0, done = 0;
        for (unsigned int t = 0; t < b->nthreads; t++) {
            if (b->state[t] == DONE) {
                done++;
                continue;
            }
            b->state[t] = READY;
            b->current = t;
            set_thread_index(t);
            swapcontext(&b->runner, &b->ctx[t]);
            if (b->state[t] == AT_BARRIER) {
                waiting++;
            }
            else {
                done++;
            }
        }
        if (waiting == 0) {
            return true;
        }
        if (done > 0) {
            return false;
        }
    }
}

inline void
set_block_index(uint64_t blk, dim3 grid)
{
    pg_sim_blockIdx.x = (unsigned int)(blk % grid.x);
    pg_sim_blockIdx.y = (unsigned int)((blk / grid.x) % grid.y);
    pg_sim_blockIdx.z = (unsigned int)(blk / ((uint64_t)grid.x * grid.y));
}

inline pg_err
run(dim3 grid, dim3 block, bool barriers, void (*body)(void *), void *arg)
{
    uint64_t nblocks = (uint64_t)grid.x * grid.y * grid.z;
    unsigned int nthreads = block.x * block.y * block.z;
    if (nblocks == 0 || nthreads == 0 || nthreads > 1024) {
        return PG_ERR_INVALID_CONFIGURATION;
    }
    pg_sim_gridDim = grid;
    pg_sim_blockDim = block;
    barrier_misuse = false;
    if (!barriers) {
        for (uint64_t blk = 0; blk < nblocks; blk++) {
            set_block_index(blk, grid);
            for (unsigned int t = 0; t < nthreads; t++) {
                set_thread_index(t);
                body(arg);
            }
            if (barrier_misuse) {
                return PG_ERR_LAUNCH_FAILURE;
            }
        }
        return PG_SUCCESS;
    }
    size_t stack_bytes = (size_t)nthreads * STACK_SIZE;
    void *stacks = mmap(nullptr, stack_bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stacks == MAP_FAILED) {
        return PG_ERR_MEMORY_ALLOCATION;
    }
    block_state b;
    b.ctx = (ucontext_t *)calloc(nthreads, sizeof(ucontext_t));
    b.state = (unsigned char *)calloc(nthreads, 1);
    b.nthreads = nthreads;
    b.body = body;
    b.arg = arg;
    pg_err err = PG_SUCCESS;
    if (b.ctx == nullptr || b.state == nullptr) {
        err = PG_ERR_MEMORY_ALLOCATION;
    }
    current_block = &b;
    for (uint64_t blk = 0; err == PG_SUCCESS && blk < nblocks; blk++) {
        set_block_index(blk, grid);
        if (!run_block_fibers(&b, (char *)stacks)) {
            err = PG_ERR_LAUNCH_FAILURE;
        }
    }
    current_block = nullptr;
    free(b.ctx);
    free(b.state);
    munmap(stacks, stack_bytes);
    return err;
}

template <class F>
inline pg_err
launch(dim3 grid, dim3 block, bool barriers, F f)
{
    return run(grid, block, barriers, [](void *p) { (*(F *)p)(); }, (void *)&f);
}

} /* namespace pg_sim */

#endif /* PYGPU_SIM_EXEC_H */
