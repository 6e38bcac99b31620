/* pygpu's simulator: the CUDA C dialect for the host C++ compiler. pygpu
 * (rawkernel.py) compiles a RawKernel's or RawModule's source as
 *
 *     #include "sim_prelude.h"
 *     #line 1 "<kernel source>"
 *     ...the source...
 *     one pg_sim::exporter per kernel (and per name expression)
 *
 * into a shared object, and the simulator loads it (rt_sim.c): it calls
 * pg_sim_module_attach with pygpu's block runner, then finds each kernel
 * with pg_sim_module_kernel(name). The exporter deduces the kernel's
 * parameters from its type (void (*)(A...)): their count and sizes, for the
 * same argument checks as on a GPU, and how to call it with the parameters
 * that a launch gets (as cuLaunchKernel takes them).
 *
 * Threads are fibers of pygpu's one block runner (csrc/simulator/sim_exec.h):
 * barriers and warp intrinsics call into it (pg_sim_host), and it sets this
 * module's index variables thread by thread. __shared__ is `static`: one copy,
 * reused block after block. rawkernel.py writes `extern __shared__ T name[];`
 * as a reference to the launch's dynamic shared memory (PG_SIM_DYNAMIC_SHARED).
 * The CUDA dialect is pygpu/include/pygpu/sim_dialect.h, which the prebuilt
 * kernels are compiled with too; the table pg_sim_host and the structures it
 * names are pygpu/include/pygpu/sim_abi.h, which csrc/runtime/runtime.h
 * includes (PG_SIM_ABI is their version). This file adds what only a module
 * needs: printf, assert, traps, atomics, the checking mode, the exporters.
 *
 * The checking mode (PG_SIM_CHECK, compiled by clang++ with
 * -fsanitize-coverage=trace-loads,trace-stores) gets a call for every load and
 * store of the kernel's code (not of this prelude's, which is excluded) and
 * checks each against what the kernel may touch: see "checking" below. */
#ifndef PYGPU_SIM_PRELUDE_H
#define PYGPU_SIM_PRELUDE_H

#if defined(__clang__) && defined(PG_SIM_CHECK)
/* nothing of the prelude is instrumented: only the kernel's own accesses
 * (and not inlined, where the kernel's instrumentation would reach it) */
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))),                 \
                             apply_to = function)
#pragma clang attribute push(__attribute__((noinline)), apply_to = function)
#endif

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <cmath>
#include <cstdlib>
#include <type_traits>
#include <utility>

#define PYGPU_SIMULATOR 1
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 800
#endif

#include "pygpu/sim_dialect.h"

namespace pg_sim {
inline void *dynamic_shared;    /* this launch's extern __shared__ memory */
inline const char *kernel_name; /* the kernel running now */
} /* namespace pg_sim */

/* Static __shared__ variables are statics of one section of their own, so
 * that the module can tell how much static shared memory its kernels declare:
 * more than a GPU's 48 KiB (0xc000) is refused when the module loads, as
 * NVRTC (ptxas) refuses it ("uses too much shared data"). The limit is a
 * kernel's; the section holds the module's, so a module whose kernels
 * together declare more is refused too. */
#undef __shared__
#define __shared__ static __attribute__((section("pg_sim_shared")))
extern "C" char __start_pg_sim_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_pg_sim_shared[] __attribute__((weak, visibility("hidden")));

namespace pg_sim {
constexpr size_t STATIC_SHARED_MAX = 0xc000;

/* why this module cannot load on a GPU, or NULL */
inline const char *
refusal(size_t static_shared)
{
    static char why[512];
    if (static_shared <= STATIC_SHARED_MAX) {
        return nullptr;
    }
    snprintf(why, sizeof(why),
             "the module's static __shared__ variables take %zu bytes (0x%zx), more "
             "than the 48 KiB (0x%zx) a kernel may declare: NVRTC (ptxas) refuses it "
             "(\"uses too much shared data (0x%zx bytes, 0x%zx max)\"); use dynamic "
             "shared memory (extern __shared__) for more",
             static_shared, static_shared, STATIC_SHARED_MAX, static_shared,
             STATIC_SHARED_MAX);
    return why;
}
} /* namespace pg_sim */

/* ---- names of the C library ------------------------------------------------- */

/* `abs`, `div`, `exit` and `system` are the C library's (extern "C"), and a
 * kernel of that name (extern "C" too) would clash with them on the host
 * compiler, though CUDA allows it. So the source's own uses of these names
 * are renamed (pg_sim_user_*): a kernel so named is exported under its name,
 * abs() keeps working on numbers (the overloads below, which return a value,
 * so that a kernel's address is still unambiguous), and div(), exit() and
 * system(), host functions, are refused at compile time with NVRTC's reason,
 * as on a GPU. */
namespace pg_sim {
template <class T> inline constexpr bool host_only = false;
#define PG_SIM_HOST_FUNCTION(name)                                                     \
    struct host_call_##name {                                                          \
        template <class... T> host_call_##name(T...)                                   \
        {                                                                              \
            static_assert(                                                             \
                host_only<T...>,                                                       \
                "calling a __host__ function(\"" #name                                 \
                "\") from a __global__ function is not allowed (NVRTC "                \
                "refuses it too: a kernel cannot call the C library's " #name "())");  \
        }                                                                              \
    };
PG_SIM_HOST_FUNCTION(div)
PG_SIM_HOST_FUNCTION(exit)
PG_SIM_HOST_FUNCTION(system)
#undef PG_SIM_HOST_FUNCTION
} /* namespace pg_sim */
inline int pg_sim_user_div(pg_sim::host_call_div, ...);
inline int pg_sim_user_exit(pg_sim::host_call_exit, ...);
inline int pg_sim_user_system(pg_sim::host_call_system, ...);
inline int
pg_sim_user_abs(int x)
{
    return std::abs(x);
}
inline long
pg_sim_user_abs(long x)
{
    return std::abs(x);
}
inline long long
pg_sim_user_abs(long long x)
{
    return std::abs(x);
}
inline float
pg_sim_user_abs(float x)
{
    return std::fabs(x);
}
inline double
pg_sim_user_abs(double x)
{
    return std::fabs(x);
}
inline long double
pg_sim_user_abs(long double x)
{
    return std::fabs(x);
}
namespace std {
using ::pg_sim_user_abs;
using ::pg_sim_user_div;
using ::pg_sim_user_exit;
using ::pg_sim_user_system;
} /* namespace std */

/* rawkernel.py writes `extern __shared__ T name[];` as this */
#define PG_SIM_DYNAMIC_SHARED(T, name)                                                 \
    static T *&name = reinterpret_cast<T *&>(pg_sim::dynamic_shared)

/* ---- printf, assert, clocks, traps -------------------------------------------- */

namespace pg_sim {
inline void describe_fault(char *message, size_t n, const char *what);

[[noreturn]] inline void
stop(int err, const char *what)
{
    char message[1024];
    describe_fault(message, sizeof(message), what);
    host->fail(err, message);
    abort(); /* fail() never returns from a kernel's thread */
}

/* where the checking mode found a bad access: the kernel's instruction, or
 * the source's "file:line" where the finding knows it (a kernel written in
 * Python: jit.h's index check), used once */
inline const void *access_pc;
inline const char *access_site;
inline const char *where_in_source(char *buf, size_t n);

/* "kernel 'k', block (..), thread (..), <kernel source>:12: what" */
inline void
describe_fault(char *message, size_t n, const char *what)
{
    char line[512];
    snprintf(message, n, "kernel '%s', block (%u, %u, %u), thread (%u, %u, %u)%s: %s",
             kernel_name, idx.block.x, idx.block.y, idx.block.z, idx.thread.x,
             idx.thread.y, idx.thread.z, where_in_source(line, sizeof(line)), what);
}

/* A finding that fails the launch at the block's next barrier or end (the
 * runner's pg_sim_live.deferred), unless the block diverges at a barrier
 * first: a race that a divergent barrier caused is reported as that. */
inline uint32_t weak_block; /* the block whose deferred finding may give way */

inline void
defer(int err, const char *what, bool weak = false)
{
    pg_sim_live *lv = const_cast<pg_sim_live *>(host->live);
    bool free_slot = lv->deferred_err == PG_SUCCESS || weak_block == lv->block;
    if (free_slot && !(weak && lv->deferred_err != PG_SUCCESS)) {
        describe_fault(lv->deferred, sizeof(lv->deferred), what);
        lv->deferred_err = err;
        weak_block = weak ? lv->block : 0;
    }
}

inline int
device_printf(const char *format, ...)
{
    char text[4096];
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(text, sizeof(text), format, ap);
    va_end(ap);
    if (n > 0) {
        host->print(text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
    }
    return n;
}

[[noreturn]] inline void
assert_failed(const char *expr, const char *file, int line, const char *function)
{
    char what[768];
    snprintf(what, sizeof(what), "assert(%s) failed at %s:%d, in %s", expr, file, line,
             function);
    access_pc = nullptr; /* the assert names its own line */
    stop(PG_ERR_ASSERT, what);
}
} /* namespace pg_sim */

#define printf(...) pg_sim::device_printf(__VA_ARGS__)
/* assert.h (pygpu's stand-in, found first on the include path) spells the
 * same: a failed assert stops the launch and raises in Python */
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e)                                                                      \
    ((e) ? (void)0 : pg_sim::assert_failed(#e, __FILE__, __LINE__, __func__))
#endif
inline long long
clock64()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
inline void
__nanosleep(unsigned int)
{
}
[[noreturn]] inline void
__trap()
{
    pg_sim::access_pc = nullptr;
    pg_sim::stop(PG_ERR_LAUNCH_FAILURE, "the kernel called __trap()");
}
[[noreturn]] inline void
__brkpt()
{
    pg_sim::access_pc = nullptr;
    pg_sim::stop(PG_ERR_LAUNCH_FAILURE, "the kernel called __brkpt()");
}

/* ---- checking ------------------------------------------------------------------ */

#ifdef PG_SIM_CHECK
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;

namespace pg_sim {
namespace check {

/* Static __shared__ variables live in one arena, each with a red zone after
 * it, so that an access past one lands in no variable (rawkernel.py writes
 * each `__shared__ T name[...];` as a reference into it). */
constexpr size_t ARENA = 128 * 1024, RED = 64;
alignas(64) inline char arena[ARENA + RED];
struct slot {
    size_t at, size;
    const char *name;
};
inline slot slots[512];
inline int nslots;
inline size_t arena_used = RED;

inline size_t declared; /* the variables' bytes, red zones left out */

/* The place of a static __shared__ variable, when its declaration first runs
 * (in a kernel's thread): more than a GPU's 48 KiB of them stops the launch,
 * with the reason NVRTC gives (the unchecked module is refused at load). */
[[noreturn]] inline void
stop_at_declaration(const char *why)
{
    access_pc = nullptr;
    stop(PG_ERR_LAUNCH_FAILURE, why);
}

inline void *
static_shared(size_t size, size_t align, const char *name)
{
    size_t at = (arena_used + align - 1) / align * align;
    const char *why = refusal(declared + size);
    if (why != nullptr) {
        stop_at_declaration(why);
    }
    if (nslots == 512 || at + size + RED > ARENA) {
        stop_at_declaration("the checking mode holds 512 static __shared__ variables");
    }
    slots[nslots++] = {at, size, name};
    arena_used = at + size + RED;
    declared += size;
    return arena + at;
}

/* Who touched each byte of shared memory since the block's last barrier: the
 * last writer; the last reader, and the readers before it (the latest warp
 * __syncwarp() count among their reads, and their warp). */
struct shadow {
    uint32_t epoch;
    uint16_t writer, wsync; /* thread rank + 1 (0: none), its warp's syncs then */
    uint16_t reader, rsync; /* the last reader, likewise */
    uint16_t rest_sync;     /* the readers before it: the latest sync count */
    uint16_t rest_warp;     /* their warp + 1; 0 none; 0xffff several warps */
    uint32_t written;       /* the block (pg_sim_live.block) that last wrote it */
};
inline shadow *arena_shadow;
inline shadow *dynamic_shadow;
inline size_t dynamic_size;

/* the pointer arguments' allocations, and recent others */
/* Who touched each byte of an argument's array in this launch: the last
 * writer and the last reader (the epoch, which names one block's stretch
 * between barriers, the block, the thread and its warp's __syncwarp() count
 * then). Entries of earlier launches (an epoch before this launch's first)
 * count as untouched, so the shadow is never cleared. */
struct gshadow { /* for 4 bytes (a granule): which of them each touched */
    uint32_t wepoch, wblock, repoch, rblock;
    uint16_t wthread, wsync, rthread, rsync;
    uint32_t written_in;           /* the launch (its first epoch) of `written` */
    uint8_t wmask, rmask, written; /* the bytes the writer, the reader, and
                                    * this launch's writes touched */
};

/* the granules of [lo, hi): from lo's granule to hi's */
inline size_t
granules(const char *lo, const char *hi)
{
    return ((uintptr_t)hi + 3) / 4 - (uintptr_t)lo / 4;
}

struct range {
    const char *lo, *hi, *ptr;
    int param;
    gshadow *shadow; /* an argument's array: its bytes' shadow */
    bool fresh;      /* in memory nothing wrote before this launch */
};

/* The shadows, kept from launch to launch for the arrays they shadow: a
 * reserved mapping, only the pages of touched bytes take memory. */
struct shadow_map {
    const char *lo, *hi;
    gshadow *shadow;
};
inline shadow_map shadow_maps[64];
inline int next_map;

inline gshadow *
global_shadow(const char *lo, const char *hi)
{
    for (int i = 0; i < 64; i++) {
        if (shadow_maps[i].lo == lo && shadow_maps[i].hi == hi) {
            return shadow_maps[i].shadow;
        }
    }
    shadow_map &m = shadow_maps[next_map];
    next_map = (next_map + 1) % 64;
    if (m.shadow != nullptr) {
        munmap(m.shadow, granules(m.lo, m.hi) * sizeof(gshadow));
    }
    void *p = mmap(nullptr, granules(lo, hi) * sizeof(gshadow), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    m = {lo, hi, p == MAP_FAILED ? nullptr : (gshadow *)p};
    return m.shadow;
}

inline uint32_t launch_epoch; /* the runner's epoch before this launch's blocks */
inline uint32_t atomic_block; /* the last block that did an atomic */
inline range ranges[64];
inline int nranges, nparams_ranged;
inline const char *image_lo, *image_hi;
inline const char *param_names;

inline const char *
param_name(int i, char *buf, size_t n)
{
    const char *p = param_names != nullptr ? param_names : "";
    for (int k = 0; k < i && p != nullptr; k++) {
        p = strchr(p, ',');
        p = p != nullptr ? p + 1 : nullptr;
    }
    size_t len = p == nullptr ? 0 : strcspn(p, ",");
    if (len == 0) {
        snprintf(buf, n, "parameter %d", i);
    }
    else {
        snprintf(buf, n, "argument '%.*s' (parameter %d)", (int)len, p, i);
    }
    return buf;
}

static const char *const kinds[] = {"read", "write", "atomic"};

[[noreturn]] inline void
out_of_bounds(const char *a, size_t size, int kind)
{
    char what[768], name[128];
    const range *best = nullptr;
    size_t best_distance = SIZE_MAX;
    for (int i = 0; i < nranges; i++) {
        const range &r = ranges[i];
        size_t d = a >= r.hi ? (size_t)(a - r.hi) : a < r.lo ? (size_t)(r.lo - a) : 0;
        if (r.param >= 0 && r.lo != r.hi && d < best_distance) {
            best = &r;
            best_distance = d;
        }
    }
    const range *dead = nullptr;
    for (int i = 0; i < nranges; i++) {
        const range &r = ranges[i];
        size_t d = a >= r.ptr ? (size_t)(a - r.ptr) : (size_t)(r.ptr - a);
        if (r.param >= 0 && r.lo == r.hi && d < (64u << 20)) {
            dead = &r;
        }
    }
    if ((uintptr_t)a < 65536) {
        snprintf(what, sizeof(what), "%zu-byte %s at address %p: a null pointer", size,
                 kinds[kind], (const void *)a);
    }
    else if (dead != nullptr) {
        snprintf(what, sizeof(what),
                 "%zu-byte %s at byte offset %lld from %s, which points into no live "
                 "allocation: freed before the launch (use after free), or never "
                 "allocated",
                 size, kinds[kind], (long long)(a - dead->ptr),
                 param_name(dead->param, name, sizeof(name)));
    }
    else if (best != nullptr && best_distance < (64u << 20)) {
        snprintf(
            what, sizeof(what),
            "%zu-byte %s at byte offset %lld from %s, whose array spans bytes %lld "
            "to %lld from that pointer: out of bounds",
            size, kinds[kind], (long long)(a - best->ptr),
            param_name(best->param, name, sizeof(name)),
            (long long)(best->lo - best->ptr), (long long)(best->hi - best->ptr));
    }
    else {
        snprintf(what, sizeof(what),
                 "%zu-byte %s at address %p: outside every live allocation", size,
                 kinds[kind], (const void *)a);
    }
    stop(PG_ERR_ILLEGAL_ADDRESS, what);
}

inline void
race(const char *name, size_t offset, int kind, size_t size, unsigned int other,
     bool other_wrote, bool several)
{
    char what[768], space[96];
    if (name != nullptr) {
        snprintf(space, sizeof(space), "__shared__ '%s'", name);
    }
    else {
        snprintf(space, sizeof(space), "the dynamic shared memory");
    }
    const dim3 &d = idx.block_dim;
    if (several) {
        snprintf(
            what, sizeof(what),
            "shared-memory race on %s at byte offset %zu: a %zu-byte %s where several "
            "threads read, with no __syncthreads() between them",
            space, offset, size, kinds[kind]);
    }
    else {
        snprintf(
            what, sizeof(what),
            "shared-memory race on %s at byte offset %zu: a %zu-byte %s where thread "
            "(%u, %u, %u) %s, with no __syncthreads() between them",
            space, offset, size, kinds[kind], other % d.x, (other / d.x) % d.y,
            other / (d.x * d.y), other_wrote ? "wrote" : "read");
    }
    defer(PG_ERR_LAUNCH_FAILURE, what);
}

/* same warp, and that warp met at __syncwarp() since the access: ordered */
inline bool
ordered(unsigned int t, unsigned int other, uint16_t sync_then)
{
    return t / 32 == other / 32 && host->live->warp_syncs[t / 32] != sync_then;
}

/* a read of shared memory that no thread of this block wrote */
inline void
uninitialized(const char *name, size_t offset, int kind, size_t size)
{
    char what[768], space[96];
    if (name != nullptr) {
        snprintf(space, sizeof(space), "__shared__ '%s'", name);
    }
    else {
        snprintf(space, sizeof(space), "the dynamic shared memory");
    }
    snprintf(what, sizeof(what),
             "%zu-byte %s of uninitialized shared memory: byte offset %zu of %s, which "
             "no thread of this block has written (shared memory starts undefined in "
             "each block)",
             size, kinds[kind], offset, space);
    /* at the barrier or the block's end, unless a race shows it was one:
     * read before another thread's write, with no barrier between them */
    defer(PG_ERR_LAUNCH_FAILURE, what, true);
}

inline void
shared_access(shadow *sh, const char *name, size_t offset, size_t size, int kind)
{
    const pg_sim_live *lv = host->live;
    unsigned int t = lv->thread, w = t / 32;
    uint16_t me = (uint16_t)(t + 1), sync = lv->warp_syncs[w];
    uint32_t block = lv->block, epoch = lv->epoch;
    /* atomics do not race; one race a block is enough */
    bool quiet = kind == 2 || (lv->deferred_err != PG_SUCCESS && weak_block != block);
    bool unwritten = false;
    for (size_t i = 0; i < size; i++) {
        shadow &s = sh[offset + i];
        unwritten |= kind != 1 && s.written != block;
        if (kind != 0) {
            s.written = block;
        }
        if (quiet) {
            continue;
        }
        if (s.epoch != epoch) {
            s = {epoch, 0, 0, 0, 0, 0, 0, s.written};
        }
        if (s.writer != 0 && s.writer != me && !ordered(t, s.writer - 1u, s.wsync)) {
            race(name, offset + i, kind, size, s.writer - 1u, true, false);
            quiet = true;
        }
        else if (kind == 1) {
            if (s.reader != 0 && s.reader != me &&
                !ordered(t, s.reader - 1u, s.rsync)) {
                race(name, offset + i, kind, size, s.reader - 1u, false, false);
                quiet = true;
            }
            else if (s.rest_warp != 0 &&
                     !(s.rest_warp == w + 1 && sync != s.rest_sync)) {
                race(name, offset + i, kind, size, 0, false, true);
                quiet = true;
            }
            s.writer = me;
            s.wsync = sync;
        }
        else if (s.reader != me) {
            if (s.reader != 0) { /* the last reader joins the ones before it */
                uint16_t rw = (uint16_t)((s.reader - 1u) / 32 + 1);
                s.rest_warp = s.rest_warp == 0 || s.rest_warp == rw ? rw : 0xffff;
                s.rest_sync = s.rsync;
            }
            s.reader = me;
            s.rsync = sync;
        }
        else {
            s.rsync = sync;
        }
    }
    if (unwritten) {
        uninitialized(name, offset, kind, size);
    }
}

inline void
static_shared_access(const char *a, size_t size, int kind)
{
    size_t off = (size_t)(a - arena);
    char what[512];
    for (int i = 0; i < nslots; i++) {
        const slot &s = slots[i];
        if (off >= s.at && off + size <= s.at + s.size) {
            shared_access(arena_shadow + s.at, s.name, off - s.at, size, kind);
            return;
        }
    }
    const slot *before = nullptr;
    for (int i = 0; i < nslots; i++) {
        if (slots[i].at <= off && (before == nullptr || slots[i].at > before->at)) {
            before = &slots[i];
        }
    }
    if (before != nullptr) {
        snprintf(
            what, sizeof(what),
            "shared-memory %zu-byte %s at byte offset %zu of __shared__ '%s', which "
            "holds %zu bytes",
            size, kinds[kind], off - before->at, before->name, before->size);
    }
    else {
        snprintf(what, sizeof(what),
                 "shared-memory %zu-byte %s before the first __shared__ "
                 "variable",
                 size, kinds[kind]);
    }
    stop(PG_ERR_ILLEGAL_ADDRESS, what);
}

inline bool launching; /* only a launch's accesses are checked */

/* A race on global memory: two threads touch one byte in this launch, one
 * writing, not atomically, with nothing that orders them: threads of two
 * blocks (blocks run in no order a kernel may count on; a block that did an
 * atomic before reading may read what others wrote, as a last-block
 * reduction does after its atomic ticket), or of one block with no barrier
 * between them (lanes of one warp that met at __syncwarp() are ordered). */
inline void
global_race(const range &r, const char *a, int kind, size_t size, uint32_t block,
            unsigned int other, bool other_wrote)
{
    char what[768], name[128];
    const dim3 &d = idx.block_dim;
    if (block != host->live->block) {
        snprintf(
            what, sizeof(what),
            "global-memory race at byte offset %lld from %s: a %zu-byte %s where "
            "thread (%u, %u, %u) of another block %s in this launch, not atomically "
            "(blocks run in no order a kernel may count on; use atomics)",
            (long long)(a - r.ptr), param_name(r.param, name, sizeof(name)), size,
            kinds[kind], other % d.x, (other / d.x) % d.y, other / (d.x * d.y),
            other_wrote ? "wrote" : "read");
    }
    else {
        snprintf(what, sizeof(what),
                 "global-memory race at byte offset %lld from %s: a %zu-byte %s where "
                 "thread (%u, %u, %u) %s, with no __syncthreads() between them",
                 (long long)(a - r.ptr), param_name(r.param, name, sizeof(name)), size,
                 kinds[kind], other % d.x, (other / d.x) % d.y, other / (d.x * d.y),
                 other_wrote ? "wrote" : "read");
    }
    defer(PG_ERR_LAUNCH_FAILURE, what);
}

[[noreturn]] inline void
uninitialized_global(const range &r, const char *a, size_t size)
{
    char what[768], name[128];
    snprintf(
        what, sizeof(what),
        "%zu-byte read of uninitialized global memory at byte offset %lld from %s: "
        "nothing has written that array (a copy, a memset or a kernel) since it "
        "was allocated (pygpu.empty), nor has this launch",
        size, (long long)(a - r.ptr), param_name(r.param, name, sizeof(name)));
    stop(PG_ERR_LAUNCH_FAILURE, what);
}

inline void global_slow(const range &r, const char *a, size_t size, int kind);

/* The common case first, in few instructions: an aligned 4-byte access that
 * no other thread touched in this launch (an input read by many, an output
 * written once); the rest, and every finding, in global_slow. */
inline void
global_access(const range &r, const char *a, size_t size, int kind)
{
    uintptr_t at = (uintptr_t)a;
    if (size == 4 && (at & 3) == 0 && kind != 2) {
        const pg_sim_live *lv = host->live;
        gshadow &s = r.shadow[at / 4 - (uintptr_t)r.lo / 4];
        uint32_t epoch = lv->epoch, first = launch_epoch;
        /* what was done before this launch, or before its last grid barrier,
         * is ordered before what this thread does now */
        uint32_t before = lv->grid_epoch > first ? lv->grid_epoch : first;
        uint16_t me = (uint16_t)lv->thread;
        bool mine_w = s.wepoch <= before || (s.wepoch == epoch && s.wthread == me);
        if (kind == 0 && mine_w &&
            (s.wepoch <= first ? !r.fresh
                               : s.written_in == first && s.written == 0xf)) {
            s.repoch = epoch;
            s.rblock = lv->block;
            s.rthread = me;
            s.rsync = lv->warp_syncs[me / 32];
            s.rmask = 0xf;
            return;
        }
        if (kind == 1 && mine_w &&
            (s.repoch <= before || (s.repoch == epoch && s.rthread == me))) {
            s.wepoch = epoch;
            s.wblock = lv->block;
            s.wthread = me;
            s.wsync = lv->warp_syncs[me / 32];
            s.wmask = s.written = 0xf;
            s.written_in = first;
            return;
        }
    }
    global_slow(r, a, size, kind);
}

inline void
global_slow(const range &r, const char *a, size_t size, int kind)
{
    pg_sim_live *lv = const_cast<pg_sim_live *>(host->live);
    uint32_t epoch = lv->epoch, block = lv->block, first = launch_epoch;
    uint32_t before = lv->grid_epoch > first ? lv->grid_epoch : first;
    unsigned int t = lv->thread;
    uint16_t me = (uint16_t)t, sync = lv->warp_syncs[t / 32];
    if (kind == 2) {
        atomic_block = block; /* atomics do not race, and may order blocks */
        return;
    }
    bool quiet = lv->deferred_err != PG_SUCCESS && weak_block != block;
    uintptr_t at = (uintptr_t)a, end = at + size;
    gshadow *sh = r.shadow + (at / 4 - (uintptr_t)r.lo / 4);
    for (uintptr_t g = at & ~(uintptr_t)3; g < end; g += 4, sh++) {
        gshadow &s = *sh;
        uintptr_t from = g > at ? g : at, to = g + 4 < end ? g + 4 : end;
        uint8_t m = (uint8_t)(((1u << (to - from)) - 1) << (from - g));
        if (!quiet && (s.wmask & m) && s.wepoch > before &&
            (s.wthread != me || s.wblock != block) &&
            (s.wblock != block
                 ? kind == 1 || atomic_block != block
                 : s.wepoch == epoch && !ordered(t, s.wthread, s.wsync))) {
            global_race(r, a, kind, size, s.wblock, s.wthread, true);
            quiet = true;
        }
        if (kind == 1) {
            if (!quiet && (s.rmask & m) && s.repoch > before &&
                (s.rthread != me || s.rblock != block) &&
                (s.rblock != block ||
                 (s.repoch == epoch && !ordered(t, s.rthread, s.rsync)))) {
                global_race(r, a, kind, size, s.rblock, s.rthread, false);
                quiet = true;
            }
            bool same = s.wepoch == epoch && s.wthread == me;
            s.wmask = same ? (uint8_t)(s.wmask | m) : m;
            s.wepoch = epoch;
            s.wblock = block;
            s.wthread = me;
            s.wsync = sync;
            s.written = s.written_in == first ? (uint8_t)(s.written | m) : m;
            s.written_in = first;
        }
        else {
            if (r.fresh && (s.written_in != first || (s.written & m) != m)) {
                uninitialized_global(r, a, size);
            }
            bool same = s.repoch == epoch && s.rthread == me;
            s.rmask = same ? (uint8_t)(s.rmask | m) : m;
            s.repoch = epoch;
            s.rblock = block;
            s.rthread = me;
            s.rsync = sync;
        }
    }
}

/* A GPU faults on an access that is not aligned to its size. Loads the
 * compiler combined (two floats as one 8-byte load) may be aligned to their
 * parts only, so 8 and 16 bytes are held to 4. */
[[noreturn]] inline void
misaligned(const char *a, size_t size, int kind)
{
    char what[512];
    snprintf(what, sizeof(what),
             "misaligned %zu-byte %s at address %p (not a multiple of %zu): a GPU "
             "faults on it (cudaErrorMisalignedAddress)",
             size, kinds[kind], (const void *)a, size < 4 ? size : (size_t)4);
    stop(PG_ERR_MISALIGNED_ADDRESS, what);
}

inline void
access(const void *p, size_t size, int kind)
{
    const char *a = (const char *)p;
    if (!launching) {
        return; /* the module's static initializers, at load */
    }
    if ((uintptr_t)a & ((size < 4 ? size : 4) - 1)) {
        misaligned(a, size, kind);
    }
    for (int i = 0; i < nranges; i++) {
        if (a >= ranges[i].lo && a + size <= ranges[i].hi) {
            if (ranges[i].shadow != nullptr) {
                global_access(ranges[i], a, size, kind);
            }
            return;
        }
    }
    if (a >= arena && a < arena + sizeof(arena)) {
        static_shared_access(a, size, kind);
        return;
    }
    const char *dyn = (const char *)dynamic_shared;
    if (dyn != nullptr && a >= dyn && a < dyn + dynamic_size + RED) {
        if (a + size > dyn + dynamic_size) {
            char what[512];
            snprintf(
                what, sizeof(what),
                "shared-memory %zu-byte %s at byte offset %zu of the dynamic shared "
                "memory (extern __shared__), which holds %zu bytes as launched",
                size, kinds[kind], (size_t)(a - dyn), dynamic_size);
            stop(PG_ERR_ILLEGAL_ADDRESS, what);
        }
        shared_access(dynamic_shadow, nullptr, (size_t)(a - dyn), size, kind);
        return;
    }
    const pg_sim_live *lv = host->live;
    if ((a >= lv->stacks && a < lv->stacks_end) || (a >= image_lo && a < image_hi)) {
        return; /* local memory; the module's own variables */
    }
    void *base;
    size_t bytes;
    if (host->find_range(a, &base, &bytes) == 0 &&
        a + size <= (const char *)base + bytes) {
        const char *lo = (const char *)base, *hi = lo + bytes;
        for (int i = 0; i < nranges; i++) {
            if (ranges[i].param >= 0 && ranges[i].lo < hi && lo < ranges[i].hi) {
                out_of_bounds(a, size, kind); /* past an argument's array */
            }
        }
        if (nranges < 64) { /* memory reached otherwise: remembered, so that the
                             * next access goes fast */
            ranges[nranges++] = {(const char *)base,
                                 (const char *)base + bytes,
                                 (const char *)base,
                                 -1,
                                 nullptr,
                                 false};
        }
        return;
    }
    out_of_bounds(a, size, kind);
}

template <class T>
inline void
note_param(const T &, int)
{
}

/* a pointer parameter may touch the array it came from (its allocation
 * where pygpu does not know the array) */
template <class T>
inline void
note_param(T *ptr, int i)
{
    const void *lo, *hi;
    void *base;
    size_t bytes;
    if (nranges == 64) {
        return;
    }
    if (host->arg_span(i, &lo, &hi) == 0) {
        ranges[nranges++] = {(const char *)lo,
                             (const char *)hi,
                             (const char *)ptr,
                             i,
                             global_shadow((const char *)lo, (const char *)hi),
                             lo < hi && host->live->written(lo) == 0};
    }
    else if (host->find_range((const void *)ptr, &base, &bytes) == 0) {
        const char *l = (const char *)base, *h = l + bytes;
        ranges[nranges++] = {l,
                             h,
                             (const char *)ptr,
                             i,
                             global_shadow(l, h),
                             host->live->written(l) == 0};
    }
    else if (ptr != nullptr) { /* into no live allocation: freed, or never one */
        ranges[nranges++] = {
            (const char *)ptr, (const char *)ptr, (const char *)ptr, i, nullptr, false};
    }
}

inline int
module_image(struct dl_phdr_info *info, size_t, void *)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0, me = (uintptr_t)&arena_used;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD) {
            uintptr_t s = info->dlpi_addr + ph.p_vaddr;
            lo = s < lo ? s : lo;
            hi = s + ph.p_memsz > hi ? s + ph.p_memsz : hi;
        }
    }
    if (me >= lo && me < hi) {
        image_lo = (const char *)lo;
        image_hi = (const char *)hi;
        return 1;
    }
    return 0;
}

/* Before a launch: the arguments' allocations, shadows sized to the shared
 * memory. Returns 0, or PG_ERR_MEMORY_ALLOCATION. */
inline int
begin(const char *params, unsigned int shared_bytes)
{
    if (image_lo == nullptr) {
        dl_iterate_phdr(module_image, nullptr);
    }
    param_names = params;
    nranges = 0;
    launch_epoch = host->live->epoch;
    atomic_block = 0;
    if (arena_shadow == nullptr) {
        arena_shadow = (shadow *)calloc(ARENA, sizeof(shadow));
    }
    free(dynamic_shadow);
    dynamic_size = shared_bytes;
    dynamic_shadow = (shadow *)calloc(shared_bytes + 1, sizeof(shadow));
    return arena_shadow == nullptr || dynamic_shadow == nullptr
               ? PG_ERR_MEMORY_ALLOCATION
               : 0;
}

} /* namespace check */
} /* namespace pg_sim */

namespace pg_sim {
/* ", <kernel source>:12": the source line of the access at access_pc, from
 * the module's line table (compiled with -gline-tables-only) read by
 * addr2line (binutils, which a compiler needs anyway), else llvm-symbolizer;
 * "" where neither can say. Only on the way to a failure. */
inline const char *
where_in_source(char *buf, size_t n)
{
    Dl_info info;
    char addr[32], out[512];
    buf[0] = '\0';
    if (access_site != nullptr) {
        snprintf(buf, n, ", %s", access_site);
        access_site = nullptr;
        return buf;
    }
    if (access_pc == nullptr || dladdr(access_pc, &info) == 0 ||
        info.dli_fname == nullptr) {
        return buf;
    }
    snprintf(addr, sizeof(addr), "0x%zx",
             (size_t)((const char *)access_pc - (const char *)info.dli_fbase - 1));
    char obj[600];
    snprintf(obj, sizeof(obj), "--obj=%s", info.dli_fname);
    const char *tools[2][5] = {
        {"addr2line", "-e", info.dli_fname, addr, nullptr},
        {"llvm-symbolizer", obj, "--no-inlining", "--output-style=GNU", addr}};
    for (int k = 0; k < 2 && buf[0] == '\0'; k++) {
        int fd[2];
        if (pipe(fd) != 0) {
            return buf;
        }
        posix_spawn_file_actions_t acts;
        posix_spawn_file_actions_init(&acts);
        posix_spawn_file_actions_adddup2(&acts, fd[1], 1);
        posix_spawn_file_actions_addclose(&acts, fd[0]);
        posix_spawn_file_actions_addopen(&acts, 2, "/dev/null", O_WRONLY, 0);
        char *argv[6] = {};
        for (int i = 0; i < 5 && tools[k][i] != nullptr; i++) {
            argv[i] = const_cast<char *>(tools[k][i]);
        }
        pid_t pid;
        int spawned = posix_spawnp(&pid, argv[0], &acts, nullptr, argv, environ);
        posix_spawn_file_actions_destroy(&acts);
        close(fd[1]);
        size_t got = 0;
        ssize_t r;
        while (spawned == 0 && got < sizeof(out) - 1 &&
               (r = read(fd[0], out + got, sizeof(out) - 1 - got)) > 0) {
            got += (size_t)r;
        }
        close(fd[0]);
        if (spawned == 0) {
            waitpid(pid, nullptr, 0);
        }
        out[got] = '\0';
        out[strcspn(out, "\n")] = '\0';
        char *cut = strstr(out, " (discriminator");
        if (cut != nullptr) {
            *cut = '\0';
        }
        char *colon = strrchr(out, ':');
        if (got == 0 || colon == nullptr || colon[1] < '1' || colon[1] > '9' ||
            strncmp(out, "??", 2) == 0) {
            continue;
        }
        /* a relative file name (#line's "<kernel source>") comes back joined to
         * the compiler's directory: shown as the source named it */
        char *pseudo = strstr(out, "/<");
        snprintf(buf, n, ", %s", pseudo != nullptr ? pseudo + 1 : out);
    }
    return buf;
}
} /* namespace pg_sim */

#define PG_SIM_ACCESS(p, kind)                                                         \
    (pg_sim::access_pc = __builtin_return_address(0),                                  \
     pg_sim::check::access((const void *)(p), sizeof(*(p)), kind))
#define PG_SIM_HOOK(n, T)                                                              \
    extern "C"                                                                         \
        __attribute__((visibility("default"))) void __sanitizer_cov_load##n(T *p)      \
    {                                                                                  \
        pg_sim::access_pc = __builtin_return_address(0);                               \
        pg_sim::check::access(p, n, 0);                                                \
    }                                                                                  \
    extern "C"                                                                         \
        __attribute__((visibility("default"))) void __sanitizer_cov_store##n(T *p)     \
    {                                                                                  \
        pg_sim::access_pc = __builtin_return_address(0);                               \
        pg_sim::check::access(p, n, 1);                                                \
    }
PG_SIM_HOOK(1, uint8_t)
PG_SIM_HOOK(2, uint16_t)
PG_SIM_HOOK(4, uint32_t)
PG_SIM_HOOK(8, uint64_t)
PG_SIM_HOOK(16, __int128)
#undef PG_SIM_HOOK
#else
#define PG_SIM_ACCESS(p, kind) ((void)0)
namespace pg_sim {
inline const char *
where_in_source(char *buf, size_t)
{
    buf[0] = '\0'; /* no line table outside the checking mode */
    return buf;
}
} /* namespace pg_sim */
#endif

/* ---- atomics ------------------------------------------------------------------ */

/* Real atomics (blocks may one day run on several CPU threads); float and
 * double through compare-and-swap on their bits. */
#define PG_SIM_ATOMIC_INT(T)                                                           \
    inline T atomicAdd(T *p, T v)                                                      \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);                             \
    }                                                                                  \
    inline T atomicSub(T *p, T v)                                                      \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);                             \
    }                                                                                  \
    inline T atomicExch(T *p, T v)                                                     \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                            \
    }                                                                                  \
    inline T atomicAnd(T *p, T v)                                                      \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);                             \
    }                                                                                  \
    inline T atomicOr(T *p, T v)                                                       \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);                              \
    }                                                                                  \
    inline T atomicXor(T *p, T v)                                                      \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);                             \
    }                                                                                  \
    inline T atomicCAS(T *p, T compare, T v)                                           \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_SEQ_CST,           \
                                    __ATOMIC_SEQ_CST);                                 \
        return compare;                                                                \
    }                                                                                  \
    inline T atomicMin(T *p, T v)                                                      \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                  \
        while (v < old &&                                                              \
               !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,       \
                                            __ATOMIC_SEQ_CST)) {                       \
        }                                                                              \
        return old;                                                                    \
    }                                                                                  \
    inline T atomicMax(T *p, T v)                                                      \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                  \
        while (v > old &&                                                              \
               !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,       \
                                            __ATOMIC_SEQ_CST)) {                       \
        }                                                                              \
        return old;                                                                    \
    }
PG_SIM_ATOMIC_INT(int)
PG_SIM_ATOMIC_INT(unsigned int)
PG_SIM_ATOMIC_INT(long long)
PG_SIM_ATOMIC_INT(unsigned long long)
#undef PG_SIM_ATOMIC_INT
inline unsigned short
atomicCAS(unsigned short *p, unsigned short compare, unsigned short v)
{
    PG_SIM_ACCESS(p, 2);
    __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    return compare;
}
inline unsigned int
atomicInc(unsigned int *p, unsigned int limit)
{
    PG_SIM_ACCESS(p, 2);
    unsigned int old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (!__atomic_compare_exchange_n(p, &old, old >= limit ? 0 : old + 1, false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
inline unsigned int
atomicDec(unsigned int *p, unsigned int limit)
{
    PG_SIM_ACCESS(p, 2);
    unsigned int old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (!__atomic_compare_exchange_n(p, &old,
                                        old == 0 || old > limit ? limit : old - 1,
                                        false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
#define PG_SIM_ATOMIC_FLOAT(T, B)                                                      \
    inline T pg_sim_atomic_update(T *p, T v, int op)                                   \
    {                                                                                  \
        PG_SIM_ACCESS(p, 2);                                                           \
        B old = __atomic_load_n((B *)p, __ATOMIC_SEQ_CST), next;                       \
        do {                                                                           \
            T x = pg_sim_bits<T>(old);                                                 \
            T y = op == 0 ? x + v : op == 1 ? v : op == 2 ? fmin(x, v) : fmax(x, v);   \
            next = pg_sim_bits<B>(y);                                                  \
        } while (!__atomic_compare_exchange_n((B *)p, &old, next, false,               \
                                              __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));    \
        return pg_sim_bits<T>(old);                                                    \
    }                                                                                  \
    inline T atomicAdd(T *p, T v)                                                      \
    {                                                                                  \
        return pg_sim_atomic_update(p, v, 0);                                          \
    }                                                                                  \
    inline T atomicExch(T *p, T v)                                                     \
    {                                                                                  \
        return pg_sim_atomic_update(p, v, 1);                                          \
    }                                                                                  \
    inline T atomicMin(T *p, T v)                                                      \
    {                                                                                  \
        return pg_sim_atomic_update(p, v, 2);                                          \
    }                                                                                  \
    inline T atomicMax(T *p, T v)                                                      \
    {                                                                                  \
        return pg_sim_atomic_update(p, v, 3);                                          \
    }
PG_SIM_ATOMIC_FLOAT(float, uint32_t)
PG_SIM_ATOMIC_FLOAT(double, uint64_t)
#undef PG_SIM_ATOMIC_FLOAT
/* the scoped forms: one memory here */
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor

/* ---- kernels and their launch ------------------------------------------------- */

namespace pg_sim {

#ifndef PG_SIM_CHECK
/* A launch's dynamic shared memory, zeroed, its end (16-byte aligned) at a
 * guard page: one mapping, kept from launch to launch (launches hold the
 * runner's lock) and grown as needed. */
inline char *shared_map;
inline size_t shared_map_bytes;

inline void *
shared_memory(size_t bytes)
{
    const size_t page = 4096, used = (bytes + 15) / 16 * 16;
    size_t need = (used + page - 1) / page * page + page;
    if (need > shared_map_bytes) {
        if (shared_map != nullptr) {
            munmap(shared_map, shared_map_bytes);
            shared_map = nullptr;
            shared_map_bytes = 0;
        }
        void *p = mmap(nullptr, need, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            return nullptr;
        }
        if (mprotect((char *)p + need - page, page, PROT_NONE) != 0) {
            munmap(p, need);
            return nullptr;
        }
        shared_map = (char *)p;
        shared_map_bytes = need;
    }
    char *end = shared_map + shared_map_bytes - page;
    memset(end - used, 0, used);
    return end - used;
}

/* Static __shared__ variables (rawkernel.py's _guarded_shared), placed from
 * the end of one mapping down, with 1 MiB not mapped above and below it: an
 * access past the first declared faults (an illegal address); past another,
 * it lands in the one declared before it, as in a GPU's block of shared
 * memory; far below them, it faults too. Zeroed; one
 * copy, reused block after block. The module's load refuses more than 48 KiB
 * (the pg_sim_shared section), so STATIC_SHARED_MAX bytes always fit. */
inline char *guarded_base, *guarded_low, *guarded_end;

inline void *
guarded_shared(size_t size, size_t align)
{
    const size_t page = 4096, bytes = (STATIC_SHARED_MAX + 2 * page - 1) / page * page;
    if (guarded_base == nullptr) {
        /* 1 MiB of address space that is not there on either side (it costs
         * no memory): an index up to 1 MiB past the variables, or below
         * them, faults */
        const size_t guard = (size_t)1 << 20;
        void *p = mmap(nullptr, bytes + 2 * guard, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED || mprotect(p, guard, PROT_NONE) != 0 ||
            mprotect((char *)p + guard + bytes, guard, PROT_NONE) != 0) {
            stop(PG_ERR_MEMORY_ALLOCATION, "no memory for the static __shared__ variables");
        }
        guarded_base = (char *)p + guard;
        guarded_low = guarded_end = guarded_base + bytes;
    }
    uintptr_t at = ((uintptr_t)guarded_low - size) & ~(uintptr_t)(align - 1);
    if (size > (size_t)(guarded_low - guarded_base) || at < (uintptr_t)guarded_base) {
        stop(PG_ERR_LAUNCH_FAILURE, "the static __shared__ variables, aligned, take more "
                                    "than 52 KiB");
    }
    guarded_low = (char *)at;
    return guarded_low;
}
#endif

/* A cooperative launch's blocks are resident together, but __shared__ is
 * one copy: the runner has each block's shared memory (static, dynamic, and
 * the checking mode's record of who touched it) copied out when the block
 * stops at the grid's barrier, and back when it runs on (pg_sim_launch's
 * shared_state). NULL: a new copy of it (malloc'd; NULL when out of memory);
 * a copy: put back, and freed. */
inline size_t launch_shared_bytes;

struct shared_part {
    void *at;
    size_t bytes;
};

inline int
shared_parts(shared_part *parts)
{
#ifdef PG_SIM_CHECK
    parts[0] = {check::arena, check::arena_used};
    parts[1] = {check::arena_shadow, check::arena_used * sizeof(check::shadow)};
    parts[2] = {dynamic_shared, launch_shared_bytes + check::RED};
    parts[3] = {check::dynamic_shadow,
                (launch_shared_bytes + 1) * sizeof(check::shadow)};
    const int n = 4;
#else
    parts[0] = {__start_pg_sim_shared,
                (size_t)(__stop_pg_sim_shared - __start_pg_sim_shared)};
    parts[1] = {dynamic_shared, launch_shared_bytes};
    parts[2] = {guarded_low, (size_t)(guarded_end - guarded_low)};
    const int n = 3;
#endif
    for (int i = 0; i < n; i++) {
        parts[i].bytes = parts[i].at != nullptr ? parts[i].bytes : 0;
    }
    return n;
}

inline void *
shared_state(void *saved)
{
    shared_part parts[4];
    int n = shared_parts(parts);
    if (saved != nullptr) {
        char *from = (char *)saved;
        size_t used = *(size_t *)from; /* the arena's use when copied */
        from += sizeof(size_t);
        for (int i = 0; i < n; i++) {
#ifdef PG_SIM_CHECK
            if (i < 2) { /* the variables declared since then keep what they hold */
                parts[i].bytes = i == 0 ? used : used * sizeof(check::shadow);
            }
#endif
            if (parts[i].bytes > 0) {
                memcpy(parts[i].at, from, parts[i].bytes);
            }
            from += parts[i].bytes;
        }
        (void)used;
        free(saved);
        return nullptr;
    }
    size_t total = sizeof(size_t);
    for (int i = 0; i < n; i++) {
        total += parts[i].bytes;
    }
    char *copy = (char *)malloc(total), *to = copy;
    if (copy == nullptr) {
        return nullptr;
    }
#ifdef PG_SIM_CHECK
    *(size_t *)to = check::arena_used;
#else
    *(size_t *)to = 0;
#endif
    to += sizeof(size_t);
    for (int i = 0; i < n; i++) {
        if (parts[i].bytes > 0) {
            memcpy(to, parts[i].at, parts[i].bytes);
        }
        to += parts[i].bytes;
    }
    return copy;
}

template <class T> struct value {
    typedef T type;
};
template <class T> struct value<T &> {
    typedef T type;
};
template <class T> struct value<const T> {
    typedef T type;
};

template <class... A> struct kernel_of {
    typedef void (*fn_type)(A...);
    static constexpr size_t sizes[sizeof...(A) + 1] = {sizeof(A)..., 0};

    struct launch_args {
        fn_type fn;
        void **params;
    };

    template <size_t... I> static void call(launch_args *a, std::index_sequence<I...>)
    {
        a->fn(*(typename value<A>::type *)a->params[I]...);
    }

    static void body(void *arg)
    {
        launch_args *a = (launch_args *)arg;
        call(a, std::index_sequence_for<A...>{});
    }

    template <size_t... I> static int check(void **params, std::index_sequence<I...>)
    {
        int err = 0;
        ((err = err == 0 ? check_arg(*(typename value<A>::type *)params[I]) : err),
         ...);
        return err;
    }

#ifdef PG_SIM_CHECK
    template <size_t... I> static void note(void **params, std::index_sequence<I...>)
    {
        (check::note_param(*(typename value<A>::type *)params[I], (int)I), ...);
    }
#endif

    static int launch(const pg_sim_kernel *k, dim3 grid, dim3 block,
                      unsigned int shared_bytes, void **params, unsigned int flags)
    {
        int err = check(params, std::index_sequence_for<A...>{});
        if (err != 0) {
            return err;
        }
        if (shared_bytes > STATIC_SHARED_MAX) {
            /* a GPU's launch refuses more than 48 KiB of dynamic shared
             * memory (the kernel asked for no more): cudaErrorInvalidValue */
            return PG_ERR_INVALID_VALUE;
        }
#ifdef PG_SIM_CHECK
        if (check::begin(k->params, shared_bytes) != 0) {
            return PG_ERR_MEMORY_ALLOCATION;
        }
        note(params, std::index_sequence_for<A...>{});
        /* zeroed, as a GPU's is not, but the same on every run; a red zone
         * after it, which the checks watch */
        void *shared = calloc(1, shared_bytes + check::RED);
#else
        /* zeroed likewise; its end abuts a page that is not there, so that
         * an access past it (or any, with none given) fails the launch as
         * an illegal address, not a write over other memory */
        void *shared = shared_memory(shared_bytes);
#endif
        if (shared == NULL) {
            return PG_ERR_MEMORY_ALLOCATION;
        }
        launch_args a = {(fn_type)k->fn, params};
        dynamic_shared = shared;
        kernel_name = k->name;
        launch_shared_bytes = shared_bytes;
        pg_sim_launch l = {grid,
                           block,
                           body,
                           &a,
                           &idx,
                           k->name,
                           (flags & PG_SIM_COOPERATIVE) != 0,
                           (flags & PG_SIM_COOPERATIVE) != 0 ? shared_state : nullptr};
#ifdef PG_SIM_CHECK
        check::launching = true;
        err = host->run(&l);
        check::launching = false;
#else
        err = host->run(&l);
#endif
        dynamic_shared = nullptr;
#ifdef PG_SIM_CHECK
        free(shared);
#endif
        return err;
    }
};

/* The module's kernels, a list that the exporters fill when the shared
 * object is loaded. */
struct entry {
    pg_sim_kernel kernel;
    entry *next;
};
inline entry *kernels;

template <class... A>
inline pg_sim_kernel
describe(const char *name, const char *params, void (*fn)(A...))
{
    return {name,
            (int)sizeof...(A),
            kernel_of<A...>::sizes,
            kernel_of<A...>::launch,
            (void (*)(void))fn,
            params};
}

struct exporter {
    entry e;
    exporter(pg_sim_kernel k) : e{k, kernels}
    {
        kernels = &e;
    }
};

} /* namespace pg_sim */

extern "C" __attribute__((visibility("default"))) int
pg_sim_module_attach(const pg_sim_host *host)
{
    if (host->abi != PG_SIM_ABI) {
        return -1;
    }
    pg_sim::host = host;
    return 0;
}

/* Why the module cannot load on a GPU (too much static shared memory), or
 * NULL: rt_sim.c asks before attaching. */
extern "C" __attribute__((visibility("default"))) const char *
pg_sim_module_refusal(void)
{
    return pg_sim::refusal((size_t)(__stop_pg_sim_shared - __start_pg_sim_shared));
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

#if defined(__clang__) && defined(PG_SIM_CHECK)
#pragma clang attribute pop
#pragma clang attribute pop
#endif

/* the source's own abs, div, exit and system (see "names of the C library") */
#define abs pg_sim_user_abs
#define div pg_sim_user_div
#define exit pg_sim_user_exit
#define system pg_sim_user_system

#endif /* PYGPU_SIM_PRELUDE_H */
