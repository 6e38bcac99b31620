/* The simulator's stand-in for the CUDA C dialect, for kernels.cu compiled by
 * the host C++ compiler. It defines the built-in index variables, __shared__,
 * __syncthreads() and a launch that runs the grid block by block on the
 * calling thread.
 *
 * Threads of a block run one after another. For a launch marked as using
 * barriers each thread is a fiber with a stack of its own:
 * __syncthreads() switches back to the block runner, which resumes the next
 * thread, and lets the block past the barrier only once all of its threads
 * have reached it. A launch without barriers runs each thread as a plain call.
 * __shared__ is `static`: one copy, reused block after block. One launch runs
 * at a time (a lock), so the index variables are plain globals.
 *
 * Ctrl-C: every POLL_THREADS threads run (between blocks, and between the
 * barrier rounds of a block), the runner asks the Python side's hook whether
 * a SIGINT is pending (rt_sim.c, runtime.h's pg_interrupt_hooks). If one is,
 * it stops, lets go of the lock, and has the signal's handler run: if that
 * raises (KeyboardInterrupt), the launch returns PG_ERR_INTERRUPTED with the
 * blocks before it done, as a GPU kernel stopped part way; if not, the launch
 * goes on where it stopped. A block stopped at a barrier is run again from
 * its start, so such a block must give the same result when run twice: the
 * barrier kernels (matmul_shared, matmul_tiled) read A and B and write C. */
#ifndef PYGPU_SIM_EXEC_H
#define PYGPU_SIM_EXEC_H

#ifdef __CUDACC__
#error "sim_exec.h is for the host compiler only"
#endif

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "runtime.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define PG_SIM_ASAN 1
#else
#define PG_SIM_ASAN 0
#endif

struct dim3 {
    unsigned int x, y, z;
    dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1)
        : x(x_), y(y_), z(z_)
    {
    }
};

/* Plain globals, not thread-locals (which cost a call per access in a shared
 * library): launches hold one lock, so one grid runs at a time. */
inline dim3 pg_sim_threadIdx;
inline dim3 pg_sim_blockIdx;
inline dim3 pg_sim_blockDim;
inline dim3 pg_sim_gridDim;

#define threadIdx pg_sim_threadIdx
#define blockIdx pg_sim_blockIdx
#define blockDim pg_sim_blockDim
#define gridDim pg_sim_gridDim
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static
#define __syncthreads() pg_sim::syncthreads()

namespace pg_sim {

enum : unsigned char { READY = 0, AT_BARRIER = 1, DONE = 2 };

/* Switching between fibers. On x86-64 a few instructions that save the
 * callee-saved registers and swap stacks; elsewhere ucontext (slower: it also
 * saves the signal mask, a system call per switch). */
#if defined(__x86_64__)
struct fiber {
    void *sp;
    const void *stack_bottom; /* for AddressSanitizer's fiber annotations */
    size_t stack_size;
};
extern "C" void pg_sim_switch(void **save_sp, void *new_sp);
__asm__(".text\n"
        ".globl pg_sim_switch\n"
        ".hidden pg_sim_switch\n"
        ".type pg_sim_switch,@function\n"
        "pg_sim_switch:\n"
        "    pushq %rbp\n    pushq %rbx\n    pushq %r12\n"
        "    pushq %r13\n    pushq %r14\n    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n    popq %r14\n    popq %r13\n"
        "    popq %r12\n    popq %rbx\n    popq %rbp\n"
        "    ret\n"
        ".size pg_sim_switch, .-pg_sim_switch\n");
#else
struct fiber {
    ucontext_t uc;
    const void *stack_bottom;
    size_t stack_size;
};
#endif

struct block_state {
    fiber runner;
    fiber *threads;
    unsigned char *state;
    unsigned int nthreads;
    unsigned int current;
    void (*body)(void *);
    void *arg;
};

inline block_state *current_block = nullptr;
inline bool barrier_misuse = false;
inline pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;

/* `finished`: from never runs again (AddressSanitizer may drop its state). */
inline void
switch_to(fiber *from, fiber *to, bool finished = false)
{
#if PG_SIM_ASAN
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(finished ? nullptr : &fake, to->stack_bottom,
                                   to->stack_size);
#else
    (void)finished;
#endif
#if defined(__x86_64__)
    pg_sim_switch(&from->sp, to->sp);
#else
    swapcontext(&from->uc, &to->uc);
#endif
#if PG_SIM_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

inline void
syncthreads()
{
    block_state *b = current_block;
    if (b == nullptr) { /* launched as barrier-free */
        barrier_misuse = true;
        return;
    }
    b->state[b->current] = AT_BARRIER;
    switch_to(&b->threads[b->current], &b->runner);
}

inline void
set_thread_index(unsigned int t)
{
    pg_sim_threadIdx.x = t % pg_sim_blockDim.x;
    pg_sim_threadIdx.y = (t / pg_sim_blockDim.x) % pg_sim_blockDim.y;
    pg_sim_threadIdx.z = t / (pg_sim_blockDim.x * pg_sim_blockDim.y);
}

/* Where every fiber starts; it never returns, but switches back when done. */
inline void
fiber_main()
{
    block_state *b = current_block;
    unsigned int t = b->current;
#if PG_SIM_ASAN
    /* first arrival on this stack: learn the runner's stack to switch back */
    __sanitizer_finish_switch_fiber(nullptr, &b->runner.stack_bottom,
                                    &b->runner.stack_size);
#endif
    b->body(b->arg);
    b->state[t] = DONE;
    switch_to(&b->threads[t], &b->runner, true);
    abort(); /* a finished fiber is never resumed */
}

constexpr size_t STACK_SIZE = 64 * 1024;

inline void
start_fiber(fiber *f, char *stack)
{
    f->stack_bottom = stack;
    f->stack_size = STACK_SIZE;
#if defined(__x86_64__)
    /* What pg_sim_switch pops: six registers, then the return address. The
     * address sits 16-byte aligned, so fiber_main starts as if called. */
    uintptr_t top = ((uintptr_t)(stack + STACK_SIZE) & ~(uintptr_t)15) - 16;
    void **sp = (void **)top;
    sp[0] = (void *)fiber_main;
    sp -= 6;
    for (int i = 0; i < 6; i++) {
        sp[i] = nullptr;
    }
    f->sp = sp;
#else
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = stack;
    f->uc.uc_stack.ss_size = STACK_SIZE;
    f->uc.uc_link = nullptr;
    makecontext(&f->uc, (void (*)())fiber_main, 0);
#endif
}

/* Threads run between two looks at the interrupt hook: a look costs a few
 * nanoseconds, so it is lost in the threads' own work. */
constexpr uint64_t POLL_THREADS = 4096;
inline uint64_t poll_budget = POLL_THREADS;

/* true when a SIGINT is pending (looks once every POLL_THREADS threads) */
inline bool
interrupt_pending(uint64_t threads_run)
{
    if (poll_budget > threads_run) {
        poll_budget -= threads_run;
        return false;
    }
    poll_budget = POLL_THREADS;
    return pg_sim_interrupt_pending() != 0;
}

/* Runs one block's threads as fibers until all finish: PG_SUCCESS, or
 * PG_ERR_LAUNCH_FAILURE on barrier divergence (some threads exited while
 * others wait at a barrier), or PG_ERR_INTERRUPTED when a SIGINT is pending
 * at a barrier (the block's fibers are dropped where they stand). */
inline pg_err
run_block_fibers(block_state *b, char *stacks)
{
    for (unsigned int t = 0; t < b->nthreads; t++) {
        start_fiber(&b->threads[t], stacks + (size_t)t * STACK_SIZE);
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
            switch_to(&b->runner, &b->threads[t]);
            if (b->state[t] == AT_BARRIER) {
                waiting++;
            }
            else {
                done++;
            }
        }
        if (waiting == 0) {
            return PG_SUCCESS;
        }
        if (done > 0) {
            return PG_ERR_LAUNCH_FAILURE;
        }
        if (interrupt_pending(b->nthreads)) {
            return PG_ERR_INTERRUPTED;
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

/* Runs blocks *next, *next + 1, ... of the grid; on PG_ERR_INTERRUPTED,
 * *next is the first block not (wholly) run. */
inline pg_err run_locked(dim3 grid, dim3 block, bool barriers, void (*body)(void *),
                         void *arg, uint64_t *next);

inline pg_err
run(dim3 grid, dim3 block, bool barriers, void (*body)(void *), void *arg)
{
    uint64_t next = 0;
    for (;;) {
        pthread_mutex_lock(&launch_lock);
        pg_err err = run_locked(grid, block, barriers, body, arg, &next);
        pthread_mutex_unlock(&launch_lock);
        /* a SIGINT is pending: its handler runs with the lock let go */
        if (err != PG_ERR_INTERRUPTED || pg_sim_interrupt_handle() != 0) {
            return err;
        }
    }
}

inline pg_err
run_locked(dim3 grid, dim3 block, bool barriers, void (*body)(void *), void *arg,
           uint64_t *next)
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
        for (uint64_t blk = *next; blk < nblocks; blk++) {
            if (interrupt_pending(nthreads)) {
                *next = blk;
                return PG_ERR_INTERRUPTED;
            }
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
    b.threads = (fiber *)calloc(nthreads, sizeof(fiber));
    b.state = (unsigned char *)calloc(nthreads, 1);
    b.nthreads = nthreads;
    b.body = body;
    b.arg = arg;
    pg_err err = PG_SUCCESS;
    if (b.threads == nullptr || b.state == nullptr) {
        err = PG_ERR_MEMORY_ALLOCATION;
    }
    current_block = &b;
    for (uint64_t blk = *next; err == PG_SUCCESS && blk < nblocks; blk++) {
        if (interrupt_pending(nthreads)) {
            err = PG_ERR_INTERRUPTED;
        }
        else {
            set_block_index(blk, grid);
            err = run_block_fibers(&b, (char *)stacks);
        }
        *next = blk;
    }
    current_block = nullptr;
    free(b.threads);
    free(b.state);
    munmap(stacks, stack_bytes);
    return err;
}

/* Separate device memories: before a kernel runs, each pointer it is given
 * must be memory its device may touch (pg_sim_check_access, rt_sim.c); other
 * arguments (sizes, geometry passed by value) are not looked at. A launcher
 * passes its kernel's arguments here, so that every kernel is checked
 * without a line of its own. */
template <class T>
inline pg_err
check_arg(const T &)
{
    return PG_SUCCESS;
}

template <class T>
inline pg_err
check_arg(T *ptr)
{
    return pg_sim_check_access((const void *)ptr);
}

template <class... A>
inline pg_err
check_access(const A &...args)
{
    pg_err err = PG_SUCCESS;
    ((err = err == PG_SUCCESS ? check_arg(args) : err), ...);
    return err;
}

template <class F>
inline pg_err
launch(dim3 grid, dim3 block, bool barriers, F f)
{
    return run(
        grid, block, barriers, [](void *p) { (*(F *)p)(); }, (void *)&f);
}

} /* namespace pg_sim */

#endif /* PYGPU_SIM_EXEC_H */
