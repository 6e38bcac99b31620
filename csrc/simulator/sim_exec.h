/* The simulator's one block runner: it runs the prebuilt kernels (kernels.cu
 * compiled by the host C++ compiler, with the CUDA dialect of
 * pygpu/include/pygpu/sim_dialect.h, which this header includes) and the
 * kernels that users write in CUDA C (pygpu/sim_prelude.h is their side,
 * with the same dialect).
 *
 * A launch runs the grid block by block on the calling thread. For a launch
 * marked as using barriers (every user kernel) each thread is a fiber with a
 * stack of its own: the runner resumes the block's threads one after another
 * (a pass), each until it finishes or waits: at a barrier (__syncthreads and
 * its _count, _and, _or forms) or at a warp intrinsic (__shfl*_sync,
 * __ballot_sync, __syncwarp...) or at __activemask(). After a pass, the
 * lanes waiting at a warp intrinsic meet once every lane their mask names is
 * there (a rendezvous of the lanes, not a block barrier; lanes of the mask
 * still on their way are waited for), and __activemask() answers in a warp
 * whose live lanes all wait (see activemask); once no thread can go on, the
 * barrier opens if every thread of the block waits at it. Anything else
 * would hang a GPU or give it undefined results, and fails the launch with a
 * message that says which threads wait where: a barrier that part of the
 * block reached while the rest exited, a mask naming a lane that exited, a
 * mask whose lanes wait elsewhere for good (a deadlock).
 * A launch without barriers runs each thread as a plain call.
 *
 * The schedule: threads of a pass, and blocks, run in order, or shuffled by a
 * seed (pg_sim_set_schedule), so that a race between threads changes the
 * result from seed to seed instead of hiding behind one fixed order.
 * __shared__ is `static`: one copy, reused block after block. One launch runs
 * at a time (a lock), so the index variables are plain globals.
 *
 * A thread may stop the launch (fail(): a failed assert, a finding of the
 * checking mode): its fiber is dropped, the launch returns the error, and
 * pg_sim_set_fault keeps the message for the Python exception. printf text
 * is gathered during the launch and written, in thread order, after it.
 *
 * Ctrl-C: every POLL_THREADS threads run (between blocks, and between the
 * passes of a block), the runner asks the Python side's hook whether a
 * SIGINT is pending (rt_sim.c, runtime.h's pg_python_hooks). If one is, it
 * stops, lets go of the lock, and has the signal's handler run: if that
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
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <new>
#include <tuple>

#include "runtime.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define PG_SIM_ASAN 1
#else
#define PG_SIM_ASAN 0
#endif

/* The dialect (dim3, threadIdx and the rest, __syncthreads()) is the one
 * that users' kernels get too; its barriers and warp intrinsics reach this
 * runner through pg_sim::host, which kernels.cu points at pg_sim_hosted. The
 * prebuilt kernels' index variables are pg_sim::idx: plain globals, not
 * thread-locals (which cost a call per access in a shared library): launches
 * hold one lock, so one grid runs at a time. A module's kernels have their
 * own. */
#include "pygpu/sim_dialect.h"

namespace pg_sim {

/* AT_MASK: at __activemask(), which answers once every live lane of the
 * warp waits somewhere (see activemask) */
enum : unsigned char {
    READY = 0,
    AT_BARRIER = 1,
    AT_WARP = 2,
    DONE = 3,
    FAILED = 4,
    AT_MASK = 5,
    AT_GRID = 6 /* at grid_group::sync() (a cooperative launch's) */
};

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

/* What a lane waiting at a warp intrinsic brought, and what it gets back
 * (site: where a lane waits at __activemask()). */
struct warp_slot {
    uint64_t value, result;
    unsigned int mask;
    int op, arg, width;
    const void *site;
};

struct block_state {
    fiber runner;
    fiber *threads;
    unsigned char *state;
    unsigned int nthreads;
    unsigned int current;
    void (*body)(void *);
    void *arg;
    int *predicate;       /* each thread's at the barrier (_count, _and, _or) */
    int barrier_result;   /* what the last barrier's _count, _and, _or give */
    warp_slot *warp;      /* each thread's at a warp intrinsic */
    uint16_t *warp_syncs; /* per warp */
    unsigned int *order;  /* the threads in the order a pass runs them */
    pg_err fail_err;      /* a thread's failure, PG_SUCCESS while none */
    int escapable;        /* a user's kernel: Ctrl-C may stop a thread (escape) */
    unsigned int at_grid; /* threads waiting at the grid's barrier */
};

inline block_state *current_block = nullptr;
inline bool barrier_misuse = false;
inline pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;
/* the launch's index variables (pg_sim::idx, or a module's), kernel name */
inline pg_sim_index *index_vars = &idx;
inline const char *kernel_name = nullptr;
extern "C" int pg_sim_written(const void *ptr); /* rt_sim.c */
inline pg_sim_live live = {0,          0,  nullptr,        nullptr, nullptr, 0,
                           PG_SUCCESS, {}, pg_sim_written, 0,       0};

/* ---- the schedule ------------------------------------------------------- */

inline bool shuffle = false;
inline uint64_t shuffle_seed = 0, rng_state = 0;

/* splitmix64: a fast, well-mixed generator, enough to order threads */
inline uint64_t
next_random()
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

inline void
shuffle_order(block_state *b)
{
    for (unsigned int i = b->nthreads; i > 1; i--) {
        unsigned int j = (unsigned int)(next_random() % i);
        unsigned int t = b->order[i - 1];
        b->order[i - 1] = b->order[j];
        b->order[j] = t;
    }
}

/* ---- messages ----------------------------------------------------------- */

inline void
set_thread_index(unsigned int t)
{
    pg_dim3 &d = index_vars->block_dim;
    index_vars->thread.x = t % d.x;
    index_vars->thread.y = (t / d.x) % d.y;
    index_vars->thread.z = t / (d.x * d.y);
}

inline void
set_block_index(uint64_t blk, dim3 grid)
{
    index_vars->block.x = (unsigned int)(blk % grid.x);
    index_vars->block.y = (unsigned int)((blk / grid.x) % grid.y);
    index_vars->block.z = (unsigned int)(blk / ((uint64_t)grid.x * grid.y));
}

/* "thread (3, 0, 0)" of thread rank t */
inline const char *
thread_name(char *buf, size_t n, unsigned int t)
{
    pg_dim3 &d = index_vars->block_dim;
    snprintf(buf, n, "thread (%u, %u, %u)", t % d.x, (t / d.x) % d.y, t / (d.x * d.y));
    return buf;
}

/* "kernel 'name', block (1, 0, 0)" */
inline const char *
where(char *buf, size_t n)
{
    pg_dim3 &b = index_vars->block;
    snprintf(buf, n, "kernel '%s', block (%u, %u, %u)",
             kernel_name != nullptr ? kernel_name : "(prebuilt)", b.x, b.y, b.z);
    return buf;
}

inline const char *const warp_op_names[PG_WARP_OPS] = {
    "__syncwarp",       "__shfl_sync",     "__shfl_up_sync", "__shfl_down_sync",
    "__shfl_xor_sync",  "__ballot_sync",   "__any_sync",     "__all_sync",
    "__match_any_sync", "__match_all_sync"};

/* ---- fibers ------------------------------------------------------------- */

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

/* The calling thread waits (state) until the runner resumes it. */
inline void
wait_in(block_state *b, unsigned char state)
{
    b->state[b->current] = state;
    switch_to(&b->threads[b->current], &b->runner);
    live.thread = b->current;
}

inline void fail(pg_err err, const char *message);
inline const char *where(char *buf, size_t n);
inline const char *thread_name(char *buf, size_t n, unsigned int t);

inline int
barrier(int op, int predicate)
{
    block_state *b = current_block;
    if (b == nullptr) { /* launched as barrier-free */
        barrier_misuse = true;
        return 0;
    }
    if (op == PG_BARRIER_GRID) {
        if (!live.cooperative) {
            char head[192], name[64], message[768];
            snprintf(
                message, sizeof(message),
                "%s, %s: grid_group::sync() (grid-wide sync) needs a cooperative "
                "launch, in which every block of the grid is resident at once: "
                "launch the kernel with kernel[grid, block](..., cooperative=True) "
                "(cudaLaunchCooperativeKernel); on a GPU a plain launch gives "
                "undefined results or hangs",
                where(head, sizeof(head)), thread_name(name, sizeof(name), b->current));
            fail(PG_ERR_LAUNCH_FAILURE, message);
            return 0;
        }
        wait_in(b, AT_GRID);
        return 0;
    }
    b->predicate[b->current] = predicate != 0;
    wait_in(b, AT_BARRIER);
    /* the count of threads whose predicate was nonzero, as each form gives it */
    int count = b->barrier_result;
    switch (op) {
    case PG_BARRIER_COUNT: return count;
    case PG_BARRIER_AND: return count == (int)b->nthreads;
    case PG_BARRIER_OR: return count > 0;
    default: return 0;
    }
}

/* Stops the launch from the running thread, which never returns (outside a
 * fiber launch: noted, and the launch fails when the thread returns). */
inline void
fail(pg_err err, const char *message)
{
    block_state *b = current_block;
    pg_sim_set_fault(message);
    if (b == nullptr) {
        barrier_misuse = true;
        return;
    }
    b->fail_err = err;
    b->state[b->current] = FAILED;
    switch_to(&b->threads[b->current], &b->runner, true);
    abort(); /* a failed fiber is never resumed */
}

inline uint64_t
warp(int op, unsigned int mask, uint64_t value, int arg, int width)
{
    block_state *b = current_block;
    if (b == nullptr) {
        barrier_misuse = true;
        return value;
    }
    warp_slot &s = b->warp[b->current];
    s.op = op;
    s.mask = mask;
    s.value = value;
    s.arg = arg;
    s.width = width;
    wait_in(b, AT_WARP);
    return s.result;
}

/* __activemask(): the lanes of the warp that run this call together. A GPU
 * runs the lanes that took one path as one, so they reach a call at once;
 * here the lane waits until every live lane of its warp waits somewhere (a
 * barrier, an intrinsic, this call), and gets the lanes waiting at an
 * __activemask() of the same call site (site, one per place in the source),
 * as converged lanes would be: the lanes of a branch, not those of the
 * other one. Lanes of different iterations of a loop may meet so, which
 * independent thread scheduling allows too (a GPU may answer any set of lanes
 * that run the call together, so code must work with each). */
inline unsigned int
activemask(const void *site)
{
    block_state *b = current_block;
    if (b == nullptr) {
        return 1u << (idx.thread.x % 32);
    }
    warp_slot &s = b->warp[b->current];
    s.site = site;
    wait_in(b, AT_MASK);
    return (unsigned int)s.result;
}

/* ---- printf ------------------------------------------------------------- */

struct print_record {
    uint64_t block;
    unsigned int thread, seq;
    size_t at, size;
};

inline struct {
    print_record *records;
    size_t n, cap;
    char *text;
    size_t used, text_cap;
} printed;

inline void
print(const char *text, size_t size)
{
    if (printed.n == printed.cap) {
        size_t cap = printed.cap ? 2 * printed.cap : 64;
        void *grown = realloc(printed.records, cap * sizeof(print_record));
        if (grown == nullptr) {
            return;
        }
        printed.records = (print_record *)grown;
        printed.cap = cap;
    }
    if (printed.used + size > printed.text_cap) {
        size_t cap = printed.text_cap ? 2 * printed.text_cap : 4096;
        while (cap < printed.used + size) {
            cap *= 2;
        }
        void *grown = realloc(printed.text, cap);
        if (grown == nullptr) {
            return;
        }
        printed.text = (char *)grown;
        printed.text_cap = cap;
    }
    pg_sim_index *v = index_vars;
    uint64_t blk = ((uint64_t)v->block.z * v->grid_dim.y + v->block.y) * v->grid_dim.x +
                   v->block.x;
    memcpy(printed.text + printed.used, text, size);
    printed.records[printed.n] = {blk,
                                  current_block != nullptr ? current_block->current : 0,
                                  (unsigned int)printed.n, printed.used, size};
    printed.n++;
    printed.used += size;
}

inline int
print_order(const void *a, const void *b)
{
    const print_record *x = (const print_record *)a, *y = (const print_record *)b;
    if (x->block != y->block) {
        return x->block < y->block ? -1 : 1;
    }
    if (x->thread != y->thread) {
        return x->thread < y->thread ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Hands the launch's printf text to the Python side, in thread order: block
 * by block, each block's threads in rank order, each thread's lines in the
 * order it printed them. Called with the launch lock let go. */
inline void
flush_printed(print_record *records, size_t n, const char *text, size_t size)
{
    qsort(records, n, sizeof(print_record), print_order);
    char *sorted = (char *)malloc(size + 1);
    size_t at = 0;
    if (sorted == nullptr) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        memcpy(sorted + at, text + records[i].at, records[i].size);
        at += records[i].size;
    }
    pg_sim_output(sorted, at);
    free(sorted);
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

/* Each thread's stack, its bottom page a guard (PROT_NONE): a thread whose
 * stack overflows (runaway recursion) faults there, and the launch fails,
 * instead of writing over its neighbour's stack. */
constexpr size_t STACK_SIZE = 64 * 1024, GUARD = 4096;

inline void
start_fiber(fiber *f, char *stack)
{
    stack += GUARD; /* the page below is the guard */
    f->stack_bottom = stack;
    f->stack_size = STACK_SIZE - GUARD;
#if defined(__x86_64__)
    /* What pg_sim_switch pops: six registers, then the return address. The
     * address sits 16-byte aligned, so fiber_main starts as if called. */
    uintptr_t top = ((uintptr_t)(stack + STACK_SIZE - GUARD) & ~(uintptr_t)15) - 16;
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
    f->uc.uc_stack.ss_size = STACK_SIZE - GUARD;
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

/* ---- warp intrinsics ---------------------------------------------------- */

/* Fails the launch (from the runner) with a message; returns err. */
inline pg_err
fail_block(pg_err err, const char *fmt, ...)
{
    char head[192], body[768], message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof(body), fmt, ap);
    va_end(ap);
    snprintf(message, sizeof(message), "%s: %s", where(head, sizeof(head)), body);
    pg_sim_set_fault(message);
    return err;
}

inline const char *
waits_where(block_state *b, unsigned int t, char *buf, size_t n)
{
    switch (b->state[t]) {
    case DONE: return "has exited";
    case AT_BARRIER: return "waits at __syncthreads()";
    case AT_MASK: return "waits at __activemask()";
    case AT_GRID: return "waits at grid_group::sync()";
    case AT_WARP:
        snprintf(buf, n, "waits at %s(mask 0x%08x)", warp_op_names[b->warp[t].op],
                 b->warp[t].mask);
        return buf;
    default: return "has not arrived";
    }
}

/* The source lane whose value lane l gets, as CUDA's shuffles define it. */
inline unsigned int
shuffle_source(const warp_slot &s, unsigned int l)
{
    unsigned int w = (unsigned int)s.width, seg = l & ~(w - 1), a = (unsigned int)s.arg;
    switch (s.op) {
    case PG_WARP_SHFL: return seg + (a & (w - 1));
    case PG_WARP_SHFL_UP: return (l & (w - 1)) >= a ? l - a : l;
    case PG_WARP_SHFL_DOWN: return (l & (w - 1)) + a < w ? l + a : l;
    default: { /* PG_WARP_SHFL_XOR */
        unsigned int src = l ^ (a & 31);
        return src >= seg + w ? l : src;
    }
    }
}

/* Whether lane u (of a warp whose lanes present has) stands at the intrinsic
 * op with mask, as lane t does. */
inline bool
same_intrinsic(const block_state *b, unsigned int u, const warp_slot &s,
               unsigned int mask, unsigned int present)
{
    return b->state[u] == AT_WARP && b->warp[u].op == s.op &&
           (b->warp[u].mask & present) == mask;
}

/* Lane t's intrinsic cannot complete: the launch fails naming the lane of
 * its mask (first + m) that is not there and where that lane is. */
inline pg_err
fail_meeting(block_state *b, unsigned int t, unsigned int u)
{
    char name[64], state[96];
    const warp_slot &s = b->warp[t];
    return fail_block(
        PG_ERR_LAUNCH_FAILURE,
        "%s waits at %s(mask 0x%08x), which names lane %u of its warp, but that lane "
        "(%s) %s. On a GPU this hangs or gives undefined values: every lane the mask "
        "names must reach the same intrinsic",
        thread_name(name, sizeof(name), t), warp_op_names[s.op], s.mask, u % 32,
        thread_name(state, sizeof(state), u), waits_where(b, u, state + 48, 48));
}

/* Completes the warp intrinsics whose lanes have all arrived, and answers
 * __activemask() in the warps where no lane was let go: *released when some
 * lane was. A lane whose mask names a lane still on its way waits, as on a
 * GPU (independent thread scheduling: the lanes of a mask meet at *a* call
 * of the same intrinsic with the same mask, not necessarily the same line).
 * The launch fails when a mask names a lane that exited, and when no lane
 * can go on while some wait at an intrinsic: a lane of the mask waits at a
 * barrier or at another intrinsic for good, which hangs a GPU. *waiting:
 * whether lanes still wait at an intrinsic. */
inline pg_err
meet_warps(block_state *b, bool *released, bool *waiting)
{
    char name[64];
    *released = *waiting = false;
    for (unsigned int first = 0; first < b->nthreads; first += 32) {
        unsigned int n = b->nthreads - first < 32 ? b->nthreads - first : 32;
        unsigned int present = n == 32 ? 0xffffffffu : (1u << n) - 1;
        bool moved = false, masks = false;
        for (unsigned int l = 0; l < n; l++) {
            unsigned int t = first + l;
            masks |= b->state[t] == AT_MASK;
            if (b->state[t] != AT_WARP) {
                continue;
            }
            const warp_slot &s = b->warp[t];
            unsigned int mask = s.mask & present;
            const char *op = warp_op_names[s.op];
            if (!(mask >> l & 1)) {
                return fail_block(
                    PG_ERR_LAUNCH_FAILURE,
                    "%s: %s(mask 0x%08x) does not name the calling lane %u",
                    thread_name(name, sizeof(name), t), op, s.mask, l);
            }
            if (s.op >= PG_WARP_SHFL && s.op <= PG_WARP_SHFL_XOR &&
                (s.width < 1 || s.width > 32 || (s.width & (s.width - 1)) != 0)) {
                return fail_block(PG_ERR_LAUNCH_FAILURE,
                                  "%s: %s width %d is not a power of 2 from 1 to 32",
                                  thread_name(name, sizeof(name), t), op, s.width);
            }
            bool all = true;
            for (unsigned int m = 0; m < n && all; m++) {
                unsigned int u = first + m;
                if (!(mask >> m & 1) || same_intrinsic(b, u, s, mask, present)) {
                    continue;
                }
                if (b->state[u] == DONE) {
                    return fail_meeting(b, t, u);
                }
                all = false; /* on its way, or waiting elsewhere: wait */
            }
            if (!all) {
                *waiting = true;
                continue;
            }
            uint32_t ballot = 0;
            for (unsigned int m = 0; m < n; m++) {
                if ((mask >> m & 1) && b->warp[first + m].value != 0) {
                    ballot |= 1u << m;
                }
            }
            int kind = s.op;
            for (unsigned int m = 0; m < n; m++) {
                if (!(mask >> m & 1)) {
                    continue;
                }
                warp_slot &r = b->warp[first + m];
                switch (kind) {
                case PG_WARP_SYNC: r.result = 0; break;
                case PG_WARP_BALLOT: r.result = ballot; break;
                case PG_WARP_ANY: r.result = ballot != 0; break;
                case PG_WARP_ALL: r.result = ballot == mask; break;
                case PG_WARP_MATCH_ANY:
                case PG_WARP_MATCH_ALL: {
                    uint32_t same = 0;
                    for (unsigned int k = 0; k < n; k++) {
                        if ((mask >> k & 1) && b->warp[first + k].value == r.value) {
                            same |= 1u << k;
                        }
                    }
                    r.result = kind == PG_WARP_MATCH_ANY ? same
                               : same == mask            ? mask
                                                         : 0;
                    break;
                }
                default: {
                    unsigned int src = shuffle_source(r, m);
                    /* a source outside the mask: undefined on a GPU; own value */
                    r.result = src < n && (mask >> src & 1) ? b->warp[first + src].value
                                                            : r.value;
                }
                }
            }
            for (unsigned int m = 0; m < n; m++) {
                if (mask >> m & 1) {
                    b->state[first + m] = READY;
                }
            }
            if (kind == PG_WARP_SYNC) {
                b->warp_syncs[first / 32]++;
            }
            moved = true;
        }
        if (masks && !moved) { /* every live lane waits: __activemask() answers */
            for (unsigned int l = 0; l < n; l++) {
                if (b->state[first + l] != AT_MASK) {
                    continue;
                }
                const void *site = b->warp[first + l].site;
                unsigned int group = 0;
                for (unsigned int m = l; m < n; m++) {
                    if (b->state[first + m] == AT_MASK &&
                        b->warp[first + m].site == site) {
                        group |= 1u << m;
                    }
                }
                for (unsigned int m = l; m < n; m++) {
                    if (group >> m & 1) {
                        b->warp[first + m].result = group;
                        b->state[first + m] = READY;
                    }
                }
            }
            moved = true;
        }
        *released |= moved;
    }
    if (!*released && *waiting) { /* no lane can go on: name one that waits */
        for (unsigned int t = 0; t < b->nthreads; t++) {
            if (b->state[t] != AT_WARP) {
                continue;
            }
            unsigned int first = t / 32 * 32;
            unsigned int n = b->nthreads - first < 32 ? b->nthreads - first : 32;
            unsigned int present = n == 32 ? 0xffffffffu : (1u << n) - 1;
            unsigned int mask = b->warp[t].mask & present;
            for (unsigned int m = 0; m < n; m++) {
                if ((mask >> m & 1) &&
                    !same_intrinsic(b, first + m, b->warp[t], mask, present)) {
                    return fail_meeting(b, t, first + m);
                }
            }
        }
    }
    return PG_SUCCESS;
}

/* ---- signals inside a thread of a user's kernel --------------------------- */

/* A user's kernel thread may loop for ever (on a GPU too), and the runner
 * only looks for Ctrl-C between threads; it may also touch memory that is not
 * there (a wild index, a null pointer), overflow its stack (runaway
 * recursion) or divide an integer by zero. None of these may kill the
 * process. So while a user kernel runs, SIGINT, SIGSEGV, SIGBUS, SIGILL and
 * SIGFPE have handlers of pygpu's, which run on an alternate stack (the
 * thread's own may be the one that overflowed):
 *
 * - a fault of a kernel thread (SIGSEGV, SIGBUS, SIGILL) jumps back to the
 *   runner (siglongjmp to a point set once per launch), which drops the
 *   block's fibers and fails the launch as a GPU's illegal address does
 *   (cudaErrorIllegalAddress; cudaErrorHardwareStackError for a stack that
 *   overflowed into the guard page below it), naming kernel, block, thread
 *   and the address; the process goes on;
 * - an integer division by zero (x86-64's #DE: SIGFPE from div or idiv) is
 *   finished by the handler as a GPU finishes it, with an undefined value and
 *   no signal: the quotient all ones (the type's minimum for the minimum
 *   divided by -1 or 0), the remainder the dividend, and the thread goes on;
 * - SIGINT in a kernel thread jumps back to the runner the same way, which
 *   returns PG_ERR_INTERRUPTED, as between threads; Python's handler then
 *   runs (KeyboardInterrupt). Arriving on another thread, it is passed to
 *   the launching one; arriving between threads, it goes to the handler it
 *   replaced (Python's), which the runner polls; ignored (SIG_IGN), it stays
 *   ignored.
 *
 * A signal that is not a kernel thread's (the runner's own code, another
 * thread) goes to the handler that was there before, as if pygpu's were not
 * installed. The dropped thread may have held a lock of the C library (a
 * printf in progress); that is the price of stopping a kernel that never
 * returns or that faulted. */
inline sigjmp_buf escape;
inline volatile sig_atomic_t in_user_thread = 0;
inline volatile sig_atomic_t sigint_noted = 0; /* a SIGINT came between threads */
inline pthread_t launch_thread;

enum { SIG_INT_AT, SIG_SEGV_AT, SIG_BUS_AT, SIG_ILL_AT, SIG_FPE_AT, SIG_COUNT };
inline const int taken_signals[SIG_COUNT] = {SIGINT, SIGSEGV, SIGBUS, SIGILL, SIGFPE};
inline struct sigaction replaced[SIG_COUNT];

/* What a fault of a kernel thread was, for the launch's message. */
inline struct {
    int sig, code, write; /* write: 1, read: 0, not known: -1 */
    const void *addr;
} fault;

inline int
signal_slot(int sig)
{
    for (int i = 0; i < SIG_COUNT; i++) {
        if (taken_signals[i] == sig) {
            return i;
        }
    }
    return -1;
}

#if defined(__x86_64__) && defined(__linux__)
/* An integer division that trapped (#DE: by zero, or the minimum by -1),
 * finished as a GPU finishes it: the quotient all ones (the minimum for a
 * signed minimum dividend), the remainder the dividend; the thread resumes
 * after the instruction. false if the instruction is not div or idiv. */
inline bool
finish_division(ucontext_t *uc)
{
    greg_t *g = uc->uc_mcontext.gregs;
    const unsigned char *p = (const unsigned char *)g[REG_RIP];
    bool word = false;
    for (;; p++) { /* legacy prefixes */
        unsigned char c = *p;
        if (c == 0x66) {
            word = true;
        }
        else if (c != 0xf0 && c != 0xf2 && c != 0xf3 && c != 0x2e && c != 0x3e &&
                 c != 0x26 && c != 0x64 && c != 0x65 && c != 0x36 && c != 0x67) {
            break;
        }
    }
    unsigned char rex = (*p & 0xf0) == 0x40 ? *p++ : 0;
    unsigned char op = *p++;
    if (op != 0xf6 && op != 0xf7) {
        return false;
    }
    unsigned char modrm = *p++, reg = (modrm >> 3) & 7, mod = modrm >> 6,
                  rm = modrm & 7;
    if (reg != 6 && reg != 7) {
        return false;
    }
    if (mod != 3) { /* the memory operand's SIB byte and displacement */
        if (rm == 4 && mod == 0 && (*p & 7) == 5) {
            p += 4;
        }
        p += rm == 4;
        p += mod == 0 && rm == 5 ? 4 : mod == 1 ? 1 : mod == 2 ? 4 : 0;
    }
    bool is_signed = reg == 7;
    unsigned bits = op == 0xf6 ? 8 : (rex & 8) ? 64 : word ? 16 : 32;
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    uint64_t rax = (uint64_t)g[REG_RAX], rdx = (uint64_t)g[REG_RDX];
    uint64_t dividend = bits == 8 ? rax & 0xffff : rax & mask;
    uint64_t min = 1ull << (bits - 1);
    uint64_t q = is_signed && (dividend & mask) == min ? min : mask;
    uint64_t r = is_signed && q == min ? 0 : dividend & mask;
    if (bits == 8) {
        rax = (rax & ~0xffffull) | (q & 0xff) | (r & 0xff) << 8;
    }
    else if (bits == 16) {
        rax = (rax & ~0xffffull) | q;
        rdx = (rdx & ~0xffffull) | r;
    }
    else { /* 32-bit results clear the upper halves, as the instruction would */
        rax = q;
        rdx = r;
    }
    g[REG_RAX] = (greg_t)rax;
    g[REG_RDX] = (greg_t)rdx;
    g[REG_RIP] = (greg_t)p;
    return true;
}
#else
inline bool
finish_division(ucontext_t *)
{
    return false;
}
#endif

/* Gives a signal that is not a kernel thread's to the handler it replaced. */
inline void
pass_on(int slot, int sig, siginfo_t *info, void *context)
{
    const struct sigaction &r = replaced[slot];
    if (r.sa_flags & SA_SIGINFO) {
        r.sa_sigaction(sig, info, context);
    }
    else if (r.sa_handler != SIG_IGN && r.sa_handler != SIG_DFL) {
        r.sa_handler(sig);
    }
    else if (r.sa_handler == SIG_DFL || sig != SIGINT) {
        /* the default action: for a fault, the instruction faults again on
         * return, now with no handler */
        sigaction(sig, &r, nullptr);
        if (sig == SIGINT) {
            raise(SIGINT);
        }
    }
}

extern "C" inline void
pg_sim_on_signal(int sig, siginfo_t *info, void *context)
{
    int slot = signal_slot(sig);
    bool mine = in_user_thread && pthread_equal(pthread_self(), launch_thread);
    if (sig == SIGINT) {
        const struct sigaction &r = replaced[SIG_INT_AT];
        if (!(r.sa_flags & SA_SIGINFO) && r.sa_handler == SIG_IGN) {
            return; /* ignored it was, ignored it stays */
        }
        if (in_user_thread && !mine) {
            pthread_kill(launch_thread, sig);
            return;
        }
        /* between two threads: the runner stops before the next one (which
         * might never return to let it poll) */
        sigint_noted = 1;
    }
    else if (sig == SIGFPE && mine && finish_division((ucontext_t *)context)) {
        return;
    }
    if (!mine) {
        pass_on(slot, sig, info, context);
        return;
    }
    in_user_thread = 0;
    fault.sig = sig;
    fault.code = info->si_code;
    fault.addr = info->si_addr;
    fault.write = -1;
#if defined(__x86_64__) && defined(__linux__)
    if (sig == SIGSEGV) { /* the page fault's error code: bit 1 for a write */
        fault.write = (((ucontext_t *)context)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
    }
#endif
    siglongjmp(escape, sig == SIGINT ? 1 : 2);
}

/* The handlers' stack (the faulting thread's own may have overflowed). */
inline char signal_stack[64 * 1024];
inline stack_t replaced_stack;

/* Puts pygpu's handlers in place for a user kernel's launch: true if it did
 * (then release_signals puts the replaced ones back). */
inline bool
take_signals()
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = pg_sim_on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    launch_thread = pthread_self();
    sigint_noted = 0;
    stack_t ss;
    ss.ss_sp = signal_stack;
    ss.ss_size = sizeof(signal_stack);
    ss.ss_flags = 0;
    if (sigaltstack(&ss, &replaced_stack) != 0) {
        return false;
    }
    for (int i = 0; i < SIG_COUNT; i++) {
        if (sigaction(taken_signals[i], &sa, &replaced[i]) != 0) {
            while (i-- > 0) {
                sigaction(taken_signals[i], &replaced[i], nullptr);
            }
            sigaltstack(&replaced_stack, nullptr);
            return false;
        }
    }
    return true;
}

inline void
release_signals()
{
    in_user_thread = 0;
    for (int i = 0; i < SIG_COUNT; i++) {
        sigaction(taken_signals[i], &replaced[i], nullptr);
    }
    sigaltstack(&replaced_stack, nullptr);
}

/* ---- blocks ------------------------------------------------------------- */

/* A finding of the checking mode that waited for the barrier or the
 * block's end (pg_sim_live.deferred): the launch's error, or PG_SUCCESS. */
inline pg_err
deferred_finding()
{
    pg_err err = live.deferred_err;
    if (err != PG_SUCCESS) {
        live.deferred_err = PG_SUCCESS;
        pg_sim_set_fault(live.deferred);
    }
    return err;
}

/* Runs one block's threads as fibers until all finish: PG_SUCCESS, or the
 * failure of a thread, of a barrier or of a warp intrinsic (with its
 * message), or PG_ERR_INTERRUPTED when a SIGINT is pending between passes
 * (the block's fibers are dropped where they stand). */
inline pg_err resume_block_fibers(block_state *b);

inline void
start_block_fibers(block_state *b, char *stacks)
{
    for (unsigned int t = 0; t < b->nthreads; t++) {
        start_fiber(&b->threads[t], stacks + (size_t)t * STACK_SIZE);
        b->state[t] = READY;
        b->order[t] = t;
    }
    memset(b->warp_syncs, 0, (b->nthreads + 31) / 32 * sizeof(uint16_t));
    b->fail_err = PG_SUCCESS;
    b->at_grid = 0;
    live.epoch++;
    live.block++;
    live.deferred_err = PG_SUCCESS;
}

inline pg_err
run_block_fibers(block_state *b, char *stacks)
{
    start_block_fibers(b, stacks);
    return resume_block_fibers(b);
}

/* Runs the block's threads until all finish, or (a cooperative launch) until
 * every thread that has not finished waits at the grid's barrier
 * (b->at_grid of them; the runner lets them go once the whole grid is
 * there). */
inline pg_err
resume_block_fibers(block_state *b)
{
    char name[64], other[64];
    b->at_grid = 0;
    bool warp_waiting = false; /* lanes wait at a warp intrinsic */
    for (;;) {
        if (shuffle) {
            shuffle_order(b);
        }
        unsigned int at_warp = 0;
        for (unsigned int i = 0; i < b->nthreads; i++) {
            unsigned int t = b->order[i];
            if (b->state[t] != READY) {
                continue;
            }
            b->current = t;
            live.thread = t;
            set_thread_index(t);
            in_user_thread = b->escapable;
            if (sigint_noted) {
                in_user_thread = 0;
                return PG_ERR_INTERRUPTED;
            }
            switch_to(&b->runner, &b->threads[t]);
            in_user_thread = 0;
            if (b->state[t] == FAILED) {
                return b->fail_err;
            }
            at_warp += b->state[t] == AT_WARP || b->state[t] == AT_MASK;
        }
        if (at_warp > 0 || warp_waiting) {
            bool released;
            pg_err err = meet_warps(b, &released, &warp_waiting);
            if (err != PG_SUCCESS) {
                return err;
            }
            if (released) {
                continue;
            }
        }
        unsigned int waiting = 0, done = 0, first_waiting = 0, first_done = 0;
        unsigned int at_grid = 0, first_grid = 0;
        for (unsigned int t = 0; t < b->nthreads; t++) {
            if (b->state[t] == AT_BARRIER && waiting++ == 0) {
                first_waiting = t;
            }
            if (b->state[t] == DONE && done++ == 0) {
                first_done = t;
            }
            if (b->state[t] == AT_GRID && at_grid++ == 0) {
                first_grid = t;
            }
        }
        if (at_grid > 0 && (waiting > 0 || done > 0)) {
            return fail_block(
                PG_ERR_LAUNCH_FAILURE,
                "divergent grid sync: %u of the block's %u threads wait at "
                "grid_group::sync() (the first, %s) while %u %s (the first, %s). "
                "Every thread of the grid must reach grid_group::sync(): on a GPU "
                "this hangs or gives undefined results",
                at_grid, b->nthreads, thread_name(name, sizeof(name), first_grid),
                waiting > 0 ? waiting : done,
                waiting > 0 ? "wait at __syncthreads()" : "have exited",
                thread_name(other, sizeof(other),
                            waiting > 0 ? first_waiting : first_done));
        }
        if (at_grid > 0) {
            b->at_grid = at_grid;
            return deferred_finding();
        }
        if (waiting == 0) {
            return deferred_finding();
        }
        if (done > 0) {
            return fail_block(
                PG_ERR_LAUNCH_FAILURE,
                "divergent barrier: %u of its %u threads wait at __syncthreads() (the "
                "first, "
                "%s) while %u have exited (the first, %s). A barrier must be "
                "reached by every thread of the block: on a GPU this hangs "
                "or gives undefined results",
                waiting, b->nthreads, thread_name(name, sizeof(name), first_waiting),
                done, thread_name(other, sizeof(other), first_done));
        }
        if (live.deferred_err != PG_SUCCESS) {
            return deferred_finding();
        }
        int count = 0;
        for (unsigned int t = 0; t < b->nthreads; t++) {
            count += b->predicate[t];
            b->state[t] = READY;
        }
        b->barrier_result = count;
        live.epoch++;
        if (interrupt_pending(b->nthreads)) {
            return PG_ERR_INTERRUPTED;
        }
    }
}

/* The launch's error and message for a fault of thread b->current (fault,
 * from pg_sim_on_signal): where it touched, as near an argument's array as
 * can be said, or a stack that overflowed into its guard page. */
inline pg_err
thread_fault(block_state *b, const char *stacks, size_t stack_bytes)
{
    char head[192], name[64], what[512];
    const char *a = (const char *)fault.addr;
    const char *access = fault.write == 1   ? "write"
                         : fault.write == 0 ? "read"
                                            : "access";
    pg_err err = PG_ERR_ILLEGAL_ADDRESS;
    if (fault.sig == SIGFPE) {
        err = PG_ERR_LAUNCH_FAILURE;
        snprintf(what, sizeof(what), "an arithmetic exception (SIGFPE, code %d)",
                 fault.code);
    }
    else if (fault.sig == SIGILL) {
        err = PG_ERR_ILLEGAL_INSTRUCTION;
        snprintf(what, sizeof(what),
                 "an illegal instruction at %p (the compiler marks code that undefined "
                 "behaviour makes unreachable so: a function that returns no value, "
                 "an index out of bounds of a fixed array, ...)",
                 (const void *)fault.addr);
    }
    else if (a >= stacks && a < stacks + stack_bytes &&
             (size_t)(a - stacks) % STACK_SIZE < GUARD) {
        err = PG_ERR_HARDWARE_STACK_ERROR;
        snprintf(what, sizeof(what),
                 "stack overflow: the thread used more than its %zu KiB of stack "
                 "(runaway recursion, or a large local array); on a GPU this is an "
                 "illegal address or a stack error",
                 (STACK_SIZE - GUARD) / 1024);
    }
    else if ((uintptr_t)a < 65536) {
        snprintf(what, sizeof(what), "illegal memory %s at address %p: a null pointer",
                 access, (const void *)a);
    }
    else {
        const void *lo, *hi;
        bool near = false;
        long long offset = 0;
        int param = -1;
        size_t distance = SIZE_MAX;
        for (int i = 0; i < 64; i++) {
            if (pg_sim_arg_span(i, &lo, &hi) != 0) {
                continue;
            }
            const char *l = (const char *)lo, *h = (const char *)hi;
            size_t d = a >= h ? (size_t)(a - h) : a < l ? (size_t)(l - a) : 0;
            if (d < distance) {
                distance = d;
                near = true;
                param = i;
                offset = (long long)(a - l);
            }
        }
        if (near && distance < ((size_t)1 << 40)) {
            snprintf(what, sizeof(what),
                     "illegal memory %s at address %p, byte offset %lld from the start "
                     "of the array of parameter %d: no memory is there",
                     access, (const void *)a, offset, param);
        }
        else {
            snprintf(what, sizeof(what),
                     "illegal memory %s at address %p: no memory is there", access,
                     (const void *)a);
        }
    }
    char message[1024];
    snprintf(message, sizeof(message), "%s, %s: %s", where(head, sizeof(head)),
             thread_name(name, sizeof(name), b->current), what);
    pg_sim_set_fault(message);
    return err;
}

/* Runs blocks *next, *next + 1, ... of the grid; on PG_ERR_INTERRUPTED,
 * *next is the first block not (wholly) run. */
inline pg_err run_locked(dim3 grid, dim3 block, bool barriers, void (*body)(void *),
                         void *arg, uint64_t *next);
inline pg_err run_grid_locked(dim3 grid, dim3 block, void (*body)(void *), void *arg,
                              void *(*shared_state)(void *));

/* `shared_state`: a cooperative launch (pg_sim_launch's), else NULL. */
inline pg_err
run(dim3 grid, dim3 block, bool barriers, void (*body)(void *), void *arg,
    pg_sim_index *vars = &idx, const char *name = nullptr,
    void *(*shared_state)(void *) = nullptr)
{
    uint64_t next = 0;
    for (;;) {
        pthread_mutex_lock(&launch_lock);
        index_vars = vars;
        kernel_name = name;
        /* a cooperative launch stopped by Ctrl-C whose handler lets it go on
         * runs again from its start (its blocks wait for each other, so no
         * block is done before the others) */
        pg_err err = shared_state != nullptr
                         ? run_grid_locked(grid, block, body, arg, shared_state)
                         : run_locked(grid, block, barriers, body, arg, &next);
        index_vars = &idx;
        kernel_name = nullptr;
        /* the printf text, taken out under the lock, written without it */
        print_record *records = printed.records;
        size_t n = printed.n;
        char *text = printed.text;
        size_t used = printed.used;
        printed.records = nullptr;
        printed.text = nullptr;
        printed.n = printed.cap = printed.used = printed.text_cap = 0;
        pthread_mutex_unlock(&launch_lock);
        if (n > 0) {
            flush_printed(records, n, text, used);
        }
        free(records);
        free(text);
        /* a SIGINT is pending: its handler runs with the lock let go */
        if (err != PG_ERR_INTERRUPTED || pg_sim_interrupt_handle() != 0) {
            return err;
        }
    }
}

/* The block at position i of the launch's order: in order, or (shuffled) an
 * affine permutation i -> (a i + c) mod n with a prime to n, which needs no
 * memory for any grid. */
struct block_order {
    uint64_t n, a, c;
    uint64_t at(uint64_t i) const
    {
        return a == 1 && c == 0 ? i : (uint64_t)(((unsigned __int128)a * i + c) % n);
    }
};

inline uint64_t
gcd(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

inline block_order
make_block_order(uint64_t n)
{
    block_order o = {n, 1, 0};
    if (shuffle && n > 1) {
        do {
            o.a = next_random() % n;
        } while (o.a == 0 || gcd(o.a, n) != 1);
        o.c = next_random() % n;
    }
    return o;
}

/* The threads' stacks, kept from launch to launch (under the launch lock):
 * a fresh mapping would cost a page fault per thread and launch. Reserved,
 * not committed: only the pages the threads touch take memory. */
inline void *stack_pool = nullptr;
inline size_t stack_pool_bytes = 0;

inline void *
thread_stacks(size_t bytes)
{
    if (bytes > stack_pool_bytes) {
        if (stack_pool != nullptr) {
            munmap(stack_pool, stack_pool_bytes);
            stack_pool = nullptr;
            stack_pool_bytes = 0;
        }
        void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            return nullptr;
        }
        for (size_t at = 0; at < bytes; at += STACK_SIZE) {
            if (mprotect((char *)p + at, GUARD, PROT_NONE) != 0) {
                munmap(p, bytes);
                return nullptr;
            }
        }
        stack_pool = p;
        stack_pool_bytes = bytes;
    }
    return stack_pool;
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
    index_vars->grid_dim = {grid.x, grid.y, grid.z};
    index_vars->block_dim = {block.x, block.y, block.z};
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
    /* the same seed, the same order: the generator starts from the seed at
     * each launch's first block */
    if (*next == 0) {
        rng_state = shuffle_seed;
    }
    block_order order = make_block_order(nblocks);
    size_t stack_bytes = (size_t)nthreads * STACK_SIZE;
    void *stacks = thread_stacks(stack_bytes);
    if (stacks == nullptr) {
        return PG_ERR_MEMORY_ALLOCATION;
    }
    block_state b;
    b.threads = (fiber *)calloc(nthreads, sizeof(fiber));
    b.state = (unsigned char *)calloc(nthreads, 1);
    b.predicate = (int *)calloc(nthreads, sizeof(int));
    b.warp = (warp_slot *)calloc(nthreads, sizeof(warp_slot));
    b.warp_syncs = (uint16_t *)calloc((nthreads + 31) / 32, sizeof(uint16_t));
    b.order = (unsigned int *)calloc(nthreads, sizeof(unsigned int));
    b.nthreads = nthreads;
    b.body = body;
    b.arg = arg;
    b.barrier_result = 0;
    live.stacks = (const char *)stacks;
    live.stacks_end = (const char *)stacks + stack_bytes;
    live.warp_syncs = b.warp_syncs;
    pg_err err = PG_SUCCESS;
    if (b.threads == nullptr || b.state == nullptr || b.predicate == nullptr ||
        b.warp == nullptr || b.warp_syncs == nullptr || b.order == nullptr) {
        err = PG_ERR_MEMORY_ALLOCATION;
    }
    current_block = &b;
    /* a user's kernel (it has a name): Ctrl-C may stop one of its threads,
     * and a fault of one fails the launch */
    b.escapable = err == PG_SUCCESS && kernel_name != nullptr && take_signals();
    volatile uint64_t at = *next;
    int jumped = b.escapable ? sigsetjmp(escape, 1) : 0;
    if (jumped == 1) {
        err = PG_ERR_INTERRUPTED; /* from pg_sim_on_signal: block `at` stopped */
        *next = at;
    }
    else if (jumped == 2) {
        err = thread_fault(&b, (const char *)stacks, stack_bytes);
    }
    else {
        for (uint64_t i = *next; err == PG_SUCCESS && i < nblocks; i++) {
            at = i;
            if (interrupt_pending(nthreads)) {
                err = PG_ERR_INTERRUPTED;
            }
            else {
                set_block_index(order.at(i), grid);
                err = run_block_fibers(&b, (char *)stacks);
            }
            *next = i;
        }
    }
    if (b.escapable) {
        release_signals();
    }
    current_block = nullptr;
    live.stacks = live.stacks_end = nullptr;
    live.warp_syncs = nullptr;
    free(b.threads);
    free(b.state);
    free(b.predicate);
    free(b.warp);
    free(b.warp_syncs);
    free(b.order);
    return err;
}

/* Runs a cooperative launch: every block of the grid is resident at once, so
 * that grid_group::sync() (the grid's barrier) works. The blocks run one
 * after another as ever, each until all its threads finish or wait at the
 * grid's barrier; there it keeps its fibers (a stack per thread of the
 * grid) and its shared memory (shared_state copies it out, and back when the
 * block runs again, for __shared__ is one copy in the module). Once every
 * block waits there, the barrier opens and they run on, block after block,
 * to the next one. A grid barrier that some threads of the grid reach while
 * others exited (or wait at __syncthreads()) fails the launch, as it would
 * hang a GPU. */
inline pg_err
run_grid_locked(dim3 grid, dim3 block, void (*body)(void *), void *arg,
                void *(*shared_state)(void *))
{
    uint64_t nblocks = (uint64_t)grid.x * grid.y * grid.z;
    unsigned int nthreads = block.x * block.y * block.z;
    if (nblocks == 0 || nthreads == 0 || nthreads > 1024) {
        return PG_ERR_INVALID_CONFIGURATION;
    }
    if (nblocks * nthreads > PG_SIM_COOPERATIVE_THREADS) {
        return PG_ERR_COOPERATIVE_LAUNCH_TOO_LARGE;
    }
    index_vars->grid_dim = {grid.x, grid.y, grid.z};
    index_vars->block_dim = {block.x, block.y, block.z};
    barrier_misuse = false;
    rng_state = shuffle_seed;
    size_t total = (size_t)nblocks * nthreads, warps = (nthreads + 31) / 32;
    size_t stack_bytes = total * STACK_SIZE;
    void *stacks = thread_stacks(stack_bytes);
    if (stacks == nullptr) {
        return PG_ERR_MEMORY_ALLOCATION;
    }
    block_state *blocks = (block_state *)calloc(nblocks, sizeof(block_state));
    fiber *threads = (fiber *)calloc(total, sizeof(fiber));
    unsigned char *state = (unsigned char *)calloc(total, 1);
    int *predicate = (int *)calloc(total, sizeof(int));
    warp_slot *warp_slots = (warp_slot *)calloc(total, sizeof(warp_slot));
    uint16_t *warp_syncs = (uint16_t *)calloc(nblocks * warps, sizeof(uint16_t));
    unsigned int *order = (unsigned int *)calloc(total, sizeof(unsigned int));
    void **saved = (void **)calloc(nblocks, sizeof(void *));
    uint32_t *block_ids = (uint32_t *)calloc(nblocks, sizeof(uint32_t));
    unsigned char *finished = (unsigned char *)calloc(nblocks, 1);
    pg_err err = PG_SUCCESS;
    if (blocks == nullptr || threads == nullptr || state == nullptr ||
        predicate == nullptr || warp_slots == nullptr || warp_syncs == nullptr ||
        order == nullptr || saved == nullptr || block_ids == nullptr ||
        finished == nullptr) {
        err = PG_ERR_MEMORY_ALLOCATION;
    }
    for (uint64_t i = 0; err == PG_SUCCESS && i < nblocks; i++) {
        block_state &b = blocks[i];
        size_t at = (size_t)i * nthreads;
        b.threads = threads + at;
        b.state = state + at;
        b.predicate = predicate + at;
        b.warp = warp_slots + at;
        b.warp_syncs = warp_syncs + i * warps;
        b.order = order + at;
        b.nthreads = nthreads;
        b.body = body;
        b.arg = arg;
    }
    live.stacks = (const char *)stacks;
    live.stacks_end = (const char *)stacks + stack_bytes;
    live.cooperative = 1;
    live.grid_epoch = 0;
    bool escapable = err == PG_SUCCESS && kernel_name != nullptr && take_signals();
    for (uint64_t i = 0; i < nblocks && err == PG_SUCCESS; i++) {
        blocks[i].escapable = escapable;
    }
    volatile uint64_t running = 0; /* the block that runs now */
    int jumped = escapable ? sigsetjmp(escape, 1) : 0;
    if (jumped == 1) {
        err = PG_ERR_INTERRUPTED;
    }
    else if (jumped == 2) {
        current_block = &blocks[running];
        set_block_index(running, grid);
        err = thread_fault(&blocks[running], (const char *)stacks, stack_bytes);
    }
    else {
        uint64_t done = 0;
        for (bool first = true; err == PG_SUCCESS; first = false) {
            block_order bo = make_block_order(nblocks);
            uint64_t waiting = 0, a_waiting = 0, a_done = 0;
            for (uint64_t i = 0; err == PG_SUCCESS && i < nblocks; i++) {
                uint64_t blk = bo.at(i);
                block_state *b = &blocks[blk];
                if (finished[blk]) {
                    continue;
                }
                if (interrupt_pending(nthreads)) {
                    err = PG_ERR_INTERRUPTED;
                    break;
                }
                running = blk;
                current_block = b;
                live.warp_syncs = b->warp_syncs;
                set_block_index(blk, grid);
                if (first) {
                    start_block_fibers(b, (char *)stacks + blk * nthreads * STACK_SIZE);
                    block_ids[blk] = live.block;
                }
                else {
                    shared_state(saved[blk]); /* puts it back, frees the copy */
                    saved[blk] = nullptr;
                    live.block = block_ids[blk];
                    live.epoch++;
                    for (unsigned int t = 0; t < nthreads; t++) {
                        b->state[t] = READY;
                    }
                }
                err = resume_block_fibers(b);
                if (err != PG_SUCCESS) {
                    break;
                }
                if (b->at_grid > 0) {
                    if ((saved[blk] = shared_state(nullptr)) == nullptr) {
                        err = PG_ERR_MEMORY_ALLOCATION;
                    }
                    a_waiting = waiting++ == 0 ? blk : a_waiting;
                }
                else {
                    finished[blk] = 1;
                    a_done = blk;
                    done++;
                }
            }
            if (err != PG_SUCCESS || waiting == 0) {
                break;
            }
            if (done > 0) { /* some blocks wait at the grid's barrier, some exited */
                char head[192];
                set_block_index(a_waiting, grid);
                where(head, sizeof(head));
                pg_dim3 w = index_vars->block;
                set_block_index(a_done, grid);
                pg_dim3 d = index_vars->block;
                char message[1024];
                snprintf(
                    message, sizeof(message),
                    "%s: divergent grid sync: the threads of %llu of the grid's %llu "
                    "blocks wait at grid_group::sync() (the first, block (%u, %u, "
                    "%u)) while those of %llu have exited (block (%u, %u, %u), "
                    "one of them). Every thread of the grid must reach "
                    "grid_group::sync(): on a GPU this hangs",
                    head, (unsigned long long)waiting, (unsigned long long)nblocks, w.x,
                    w.y, w.z, (unsigned long long)done, d.x, d.y, d.z);
                pg_sim_set_fault(message);
                err = PG_ERR_LAUNCH_FAILURE;
                break;
            }
            live.epoch++;
            live.grid_epoch = live.epoch;
        }
    }
    if (escapable) {
        release_signals();
    }
    current_block = nullptr;
    live.stacks = live.stacks_end = nullptr;
    live.warp_syncs = nullptr;
    live.cooperative = 0;
    for (uint64_t i = 0; saved != nullptr && i < nblocks; i++) {
        if (saved[i] != nullptr) {
            free(saved[i]); /* a copy never put back: the module's malloc'd block */
        }
    }
    free(blocks);
    free(threads);
    free(state);
    free(predicate);
    free(warp_slots);
    free(warp_syncs);
    free(order);
    free(saved);
    free(block_ids);
    free(finished);
    /* the stacks of more threads than a plain launch has: given back, not
     * kept (each is two of the process's memory mappings) */
    if (stack_pool_bytes > (size_t)1024 * STACK_SIZE) {
        munmap(stack_pool, stack_pool_bytes);
        stack_pool = nullptr;
        stack_pool_bytes = 0;
    }
    return err;
}

/* Each argument of a launch checked (sim_dialect.h's check_arg): a launcher
 * passes its kernel's arguments here, so that every kernel is checked
 * without a line of its own. */
extern "C" void pg_sim_mark_written(const void *ptr); /* rt_sim.c */

/* A prebuilt kernel may write the arrays its pointers give: from now on they
 * are not uninitialized memory (the checking mode's reads of such). */
template <class T>
inline void
mark_written(const T &)
{
}
template <class T>
inline void
mark_written(T *ptr)
{
    if (ptr != nullptr) {
        pg_sim_mark_written((const void *)ptr);
    }
}

template <class... A>
inline pg_err
check_access(const A &...args)
{
    pg_err err = PG_SUCCESS;
    ((err = err == PG_SUCCESS ? check_arg(args) : err), ...);
    if (err == PG_SUCCESS) {
        (mark_written(args), ...);
    }
    return err;
}

template <class F>
inline pg_err
launch(dim3 grid, dim3 block, bool barriers, F f)
{
    return run(
        grid, block, barriers, [](void *p) { (*(F *)p)(); }, (void *)&f);
}

/* A launch recorded by a capture (a CUDA graph's): the kernel and its
 * arguments, copied as they are now, as a GPU's launch copies them; each
 * launch of the graph checks them as a launch does and runs the grid. K calls
 * the kernel by name (a lambda), as a launch does. */
template <class K, class... A> struct recorded_launch : pg_sim_node {
    dim3 grid, block;
    bool barriers;
    K kernel;
    std::tuple<A...> args;

    recorded_launch(dim3 g, dim3 b, bool bar, K k, const A &...a)
        : pg_sim_node{nullptr, run, destroy}, grid(g), block(b), barriers(bar),
          kernel(k), args(a...)
    {
    }

    static pg_err run(pg_sim_node *node)
    {
        recorded_launch *r = static_cast<recorded_launch *>(node);
        return std::apply(
            [r](const A &...a) {
                pg_err err = check_access(a...);
                if (err != PG_SUCCESS) {
                    return err;
                }
                return launch(r->grid, r->block, r->barriers, [&] { r->kernel(a...); });
            },
            r->args);
    }

    static void destroy(pg_sim_node *node)
    {
        recorded_launch *r = static_cast<recorded_launch *>(node);
        r->~recorded_launch();
        free(r);
    }
};

template <class K, class... A>
inline pg_err
record(pg_sim_graph *graph, dim3 grid, dim3 block, bool barriers, K kernel,
       const A &...args)
{
    typedef recorded_launch<K, A...> node;
    void *mem = malloc(sizeof(node));
    if (mem == nullptr) {
        return PG_ERR_MEMORY_ALLOCATION;
    }
    pg_sim_capture_add(graph, new (mem) node(grid, block, barriers, kernel, args...));
    return PG_SUCCESS;
}

} /* namespace pg_sim */

#endif /* PYGPU_SIM_EXEC_H */
