/* Large host-side work, spread over worker threads: one thread cannot keep up
 * with a PCIe link (or, in the simulator, with memory).
 *
 * - pg_host_memcpy: a memcpy cut into one piece per thread.
 * - pg_host_map / pg_host_unmap: memory for large new host arrays, mapped by
 *   us (aligned for huge pages, which the kernel is asked for), so that it
 *   can be made present ahead of a copy into it.
 * - pg_host_prefault_begin / _end: while a copy fills such memory, other
 *   threads fault its pages in ahead of it, block by block from the front.
 *   The first touch of fresh memory costs the kernel a page fault and the
 *   zeroing of the page; done by the copy itself, one chunk after another,
 *   it bounds a device-to-host copy into a new array well below the link.
 *
 * The workers of both pools start at their first use, with every signal
 * blocked (signals go to Python's threads). They do not survive fork():
 * context.c's fork handler calls pg_host_memcpy_after_fork in the child. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime.h"

#define MAX_WORKERS 16
#define PARALLEL_MIN ((size_t)1 << 20) /* smaller copies: one plain memcpy */

/* A detached thread running fn(arg), with every signal blocked in it; 0 on
 * success. */
static int
spawn(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    pthread_attr_t attr;
    sigset_t all, old;
    int rc;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static long
cpu_count(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? cpus : 1;
}

/* ---- pg_host_memcpy ------------------------------------------------------------ */

static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pm_start = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pm_done = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t pm_busy = PTHREAD_MUTEX_INITIALIZER;
static int n_workers;    /* running (started at first need) */
static int pm_want = -1; /* threads asked for, the caller's included; -1: default */
static int pm_taking;    /* workers taking part in the current copy */
static unsigned long generation;
static int pending;
static char *task_dst;
static const char *task_src;
static size_t task_n;

static void
slice(int part, int parts, size_t n, size_t *off, size_t *len)
{
    /* pieces of whole pages; together they cover all n bytes */
    size_t per = ((n + (size_t)parts - 1) / (size_t)parts + 4095) & ~(size_t)4095;
    *off = per * (size_t)part;
    if (*off > n) {
        *off = n;
    }
    *len = *off + per > n ? n - *off : per;
}

static void *
worker_main(void *arg)
{
    int id = (int)(intptr_t)arg;
    unsigned long seen = 0;
    for (;;) {
        size_t off, len;
        char *dst;
        const char *src;
        pthread_mutex_lock(&pm_lock);
        while (generation == seen) {
            pthread_cond_wait(&pm_start, &pm_lock);
        }
        seen = generation;
        if (id < pm_taking) {
            slice(id + 1, pm_taking + 1, task_n, &off, &len);
        }
        else {
            len = 0;
            off = 0;
        }
        dst = task_dst;
        src = task_src;
        pthread_mutex_unlock(&pm_lock);
        if (len > 0) {
            memcpy(dst + off, src + off, len);
        }
        pthread_mutex_lock(&pm_lock);
        if (--pending == 0) {
            pthread_cond_signal(&pm_done);
        }
        pthread_mutex_unlock(&pm_lock);
    }
    return NULL;
}

/* Three quarters of the cores, the caller's included. Every core did better
 * in a sweep of its own on an H200 host (16 cores under KVM; 1 GiB,
 * tools/d2h_new_sweep.py grid: host to device pageable 0.82x to 0.96x of
 * pinned at 16 threads, 0.73x to 0.96x at 12), but worse inside
 * `python -m benchmarks` (0.67x to 0.88x in three runs, against 0.83x and
 * 0.92x at 12): a copy waits for its slowest thread, and with every core
 * copying, any other busy thread makes one slow. */
static int
default_copy_threads(void)
{
    long cpus = cpu_count();
    long want = cpus > 1 ? cpus * 3 / 4 : 1;
    return (int)(want > MAX_WORKERS + 1 ? MAX_WORKERS + 1 : want);
}

/* Workers enough for `threads` copying, the caller's included (pm_lock held). */
static void
start_workers(int threads)
{
    while (n_workers < threads - 1 && n_workers < MAX_WORKERS) {
        if (spawn(worker_main, (void *)(intptr_t)n_workers) != 0) {
            break;
        }
        n_workers++;
    }
}

int
pg_host_copy_threads(void)
{
    int n;
    pthread_mutex_lock(&pm_lock);
    n = pm_want < 0 ? default_copy_threads() : pm_want;
    pthread_mutex_unlock(&pm_lock);
    return n;
}

void
pg_host_set_copy_threads(int n)
{
    pthread_mutex_lock(&pm_lock);
    pm_want = n < 0 ? -1 : n < 1 ? 1 : n > MAX_WORKERS + 1 ? MAX_WORKERS + 1 : n;
    pthread_mutex_unlock(&pm_lock);
}

void
pg_host_memcpy(void *dst, const void *src, size_t n)
{
    size_t off, len;
    int want;
    if (n < PARALLEL_MIN) {
        memcpy(dst, src, n);
        return;
    }
    pthread_mutex_lock(&pm_busy);
    pthread_mutex_lock(&pm_lock);
    want = pm_want < 0 ? default_copy_threads() : pm_want;
    if (n_workers < want - 1) {
        start_workers(want);
    }
    pm_taking = n_workers < want - 1 ? n_workers : want - 1;
    if (pm_taking == 0) {
        pthread_mutex_unlock(&pm_lock);
        pthread_mutex_unlock(&pm_busy);
        memcpy(dst, src, n);
        return;
    }
    task_dst = dst;
    task_src = src;
    task_n = n;
    pending = n_workers;
    generation++;
    pthread_cond_broadcast(&pm_start);
    pthread_mutex_unlock(&pm_lock);
    slice(0, pm_taking + 1, n, &off, &len);
    memcpy((char *)dst + off, (const char *)src + off, len);
    pthread_mutex_lock(&pm_lock);
    while (pending > 0) {
        pthread_cond_wait(&pm_done, &pm_lock);
    }
    pthread_mutex_unlock(&pm_lock);
    pthread_mutex_unlock(&pm_busy);
}

/* ---- memory for new host arrays ------------------------------------------------ */

static pthread_once_t sizes_once = PTHREAD_ONCE_INIT;
static size_t page_size = 4096;
/* The kernel's huge page (its PMD size, where it says), which new arrays are
 * aligned to and asked to be made of; 2 MiB on x86-64 and on arm64 with 4 KiB
 * pages. Where it is larger (512 MiB on arm64 with 64 KiB pages), a fault
 * would zero that much at once: no huge pages are asked for, and arrays are
 * aligned to 2 MiB. */
#define HUGE_MAX ((size_t)32 << 20)
static size_t huge_size = (size_t)2 << 20;
static int huge_advise = 1;
static atomic_size_t map_min = PG_HOST_MAP_MIN;
static atomic_size_t mapped_count, mapped_bytes;

static int
power_of_two(size_t n)
{
    return n != 0 && (n & (n - 1)) == 0;
}

static void
init_sizes(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    unsigned long long hs = 0;
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    if (ps > 0 && power_of_two((size_t)ps)) {
        page_size = (size_t)ps;
    }
    if (f != NULL) {
        if (fscanf(f, "%llu", &hs) == 1 && power_of_two((size_t)hs) &&
            (size_t)hs > page_size && hs <= HUGE_MAX) {
            huge_size = (size_t)hs;
        }
        else if (hs > HUGE_MAX) {
            huge_advise = 0;
        }
        fclose(f);
    }
    if (huge_size < page_size) {
        huge_size = page_size;
    }
}

size_t
pg_host_map_min(void)
{
    return atomic_load(&map_min);
}

void
pg_host_set_map_min(size_t n)
{
    atomic_store(&map_min, n);
}

void
pg_host_mapped(size_t *count, size_t *bytes)
{
    *count = atomic_load(&mapped_count);
    *bytes = atomic_load(&mapped_bytes);
}

size_t
pg_host_huge_page_size(void)
{
    pthread_once(&sizes_once, init_sizes);
    return huge_size;
}

static size_t
mapped_length(size_t n)
{
    return (n + page_size - 1) & ~(page_size - 1);
}

void *
pg_host_map(size_t n)
{
    size_t len, align, span;
    char *p, *a;
    pthread_once(&sizes_once, init_sizes);
    if (n == 0 || n > SIZE_MAX - 2 * huge_size) {
        errno = ENOMEM;
        return NULL;
    }
    len = mapped_length(n);
    /* Start on a huge-page boundary, so that every whole huge page of the
     * array can be one; the tail past the last one is ordinary pages. */
    align = len >= huge_size ? huge_size : page_size;
    span = len + align - page_size;
    p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }
    a = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
    if (a > p) {
        (void)munmap(p, (size_t)(a - p));
    }
    if (p + span > a + len) {
        (void)munmap(a + len, (size_t)(p + span - (a + len)));
    }
#ifdef MADV_HUGEPAGE
    if (align == huge_size && huge_advise) {
        (void)madvise(a, len, MADV_HUGEPAGE); /* where THP is not "never" */
    }
#endif
    atomic_fetch_add(&mapped_count, 1);
    atomic_fetch_add(&mapped_bytes, len);
    return a;
}

void
pg_host_unmap(void *p, size_t n)
{
    size_t len;
    if (p == NULL) {
        return;
    }
    len = mapped_length(n);
    (void)munmap(p, len);
    atomic_fetch_sub(&mapped_count, 1);
    atomic_fetch_sub(&mapped_bytes, len);
}

/* ---- prefaulting -------------------------------------------------------------- */

/* One job at a time: the memory [pf_base, pf_base + pf_n), handed out in
 * blocks from the front (pf_next) to the workers taking part, until it is
 * all done or pf_stop is set. A second copy while one runs faults its own
 * pages, as before.
 *
 * The copy says how far it is about to write (pg_host_prefault_reached):
 * blocks below that which no worker has taken are left to the copy (the
 * front jumps past them, so the workers keep ahead of the copy instead of
 * working where it is), and blocks a worker is still faulting in are waited
 * for (the copy would otherwise fault the same huge page in again: the
 * kernel zeroes a page for each thread that faults it and keeps one). Each
 * worker publishes the block it works on in pf_at; PF_CLAIMING while it
 * takes one, so that a block is never taken unseen.
 *
 * The workers stay at most pf_ahead bytes ahead of the copy's front (the
 * last reached), where it is set: memory zeroed just before the copy writes
 * it may still be in the cache, where the copy's stores find it; zeroed far
 * ahead, it goes to DRAM and comes back for each store (a device-to-host
 * copy also streams the DMA and the staging ring through the same DRAM). */
#define PREFAULT_BLOCK ((size_t)2 << 20) /* or a huge page, where larger */
#define PF_IDLE SIZE_MAX
#define PF_CLAIMING ((size_t)0)

static pthread_mutex_t pf_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pf_start = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pf_done = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pf_progress = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pf_advance = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t pf_busy = PTHREAD_MUTEX_INITIALIZER;
static int pf_started;   /* workers running */
static int pf_want = -1; /* workers asked for; -1: the default */
static int pf_taking;    /* of them, those taking part in the current job */
static size_t pf_ahead_setting = PG_HOST_PREFAULT_AHEAD;
static size_t pf_ahead; /* the current job's; 0: no bound */
static unsigned long pf_generation;
static int pf_pending;
static char *pf_base;
static size_t pf_n;
static atomic_size_t pf_next;
static atomic_int pf_stop;
static atomic_int pf_waiting;  /* the copy waits for pf_progress */
static atomic_int pf_sleeping; /* workers wait for pf_advance */
static atomic_size_t pf_front; /* the copy's: it writes below this */
static atomic_size_t pf_at[MAX_WORKERS];

static size_t
pf_block(void)
{
    return huge_size > PREFAULT_BLOCK ? huge_size : PREFAULT_BLOCK;
}

static int
default_prefault_threads(void)
{
    long cpus = cpu_count();
    /* none on one core: it could only take turns with the copy */
    long want = cpus / 2;
    return (int)(want > MAX_WORKERS / 2 ? MAX_WORKERS / 2 : want);
}

/* Makes [p, p + len) present and writable without changing a byte of it
 * (the copy may already be writing there): one atomic compare-and-swap of
 * zero for zero per page, a write fault that leaves the byte as it is,
 * whether the copy stored it before or after. (Not an atomic add of zero:
 * compilers may turn that into a load, which maps the shared zero page and
 * populates nothing.) Write faults scale with threads where
 * madvise(MADV_POPULATE_WRITE) does not: on an H200 host (16 cores under
 * KVM, 1 GiB of fresh huge pages) 8 threads writing a byte a page faulted
 * 32 GB/s, and 9 to 17 GB/s with the madvise, whose best was 21 to 26 GB/s
 * at 4 threads. */
static void
populate(char *p, size_t len)
{
    for (size_t off = 0; off < len; off += page_size) {
        char zero = 0;
        (void)__atomic_compare_exchange_n(p + off, &zero, (char)0, 0, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED);
    }
}

/* Worker id now works on `at` (a block's offset, PF_CLAIMING or PF_IDLE). */
static void
publish(int id, size_t at)
{
    atomic_store(&pf_at[id], at);
    if (atomic_load(&pf_waiting) > 0) {
        pthread_mutex_lock(&pf_lock);
        pthread_cond_broadcast(&pf_progress);
        pthread_mutex_unlock(&pf_lock);
    }
}

/* Too far ahead of the copy to take another block now. */
static int
too_far_ahead(size_t ahead)
{
    return ahead > 0 && atomic_load(&pf_next) >= atomic_load(&pf_front) + ahead &&
           !atomic_load(&pf_stop);
}

static void
wait_for_the_copy(size_t ahead)
{
    pthread_mutex_lock(&pf_lock);
    atomic_fetch_add(&pf_sleeping, 1);
    while (too_far_ahead(ahead)) {
        pthread_cond_wait(&pf_advance, &pf_lock);
    }
    atomic_fetch_sub(&pf_sleeping, 1);
    pthread_mutex_unlock(&pf_lock);
}

static void *
prefault_main(void *arg)
{
    int id = (int)(intptr_t)arg;
    unsigned long seen = 0;
    for (;;) {
        char *base;
        size_t n, k, ahead, block = pf_block();
        pthread_mutex_lock(&pf_lock);
        while (pf_generation == seen || id >= pf_taking) {
            seen = pf_generation; /* a job without us */
            pthread_cond_wait(&pf_start, &pf_lock);
        }
        seen = pf_generation;
        base = pf_base;
        n = pf_n;
        ahead = pf_ahead;
        pthread_mutex_unlock(&pf_lock);
        while (!atomic_load_explicit(&pf_stop, memory_order_relaxed)) {
            if (too_far_ahead(ahead)) {
                wait_for_the_copy(ahead);
                continue;
            }
            publish(id, PF_CLAIMING);
            k = atomic_fetch_add(&pf_next, block);
            if (k >= n) {
                break;
            }
            publish(id, k);
            populate(base + k, n - k < block ? n - k : block);
            publish(id, PF_IDLE);
        }
        publish(id, PF_IDLE);
        pthread_mutex_lock(&pf_lock);
        if (--pf_pending == 0) {
            pthread_cond_signal(&pf_done);
        }
        pthread_mutex_unlock(&pf_lock);
    }
    return NULL;
}

int
pg_host_prefault_threads(void)
{
    int n;
    pthread_mutex_lock(&pf_busy);
    n = pf_want < 0 ? default_prefault_threads() : pf_want;
    pthread_mutex_unlock(&pf_busy);
    return n;
}

void
pg_host_set_prefault_threads(int n)
{
    pthread_mutex_lock(&pf_busy);
    pf_want = n < 0 ? -1 : n > MAX_WORKERS ? MAX_WORKERS : n;
    pthread_mutex_unlock(&pf_busy);
}

size_t
pg_host_prefault_ahead(void)
{
    size_t n;
    pthread_mutex_lock(&pf_busy);
    n = pf_ahead_setting;
    pthread_mutex_unlock(&pf_busy);
    return n;
}

void
pg_host_set_prefault_ahead(size_t n)
{
    pthread_mutex_lock(&pf_busy);
    pf_ahead_setting = n;
    pthread_mutex_unlock(&pf_busy);
}

int
pg_host_prefault_begin(void *p, size_t n)
{
    int want;
    if (n == 0 || pthread_mutex_trylock(&pf_busy) != 0) {
        return 0;
    }
    pthread_once(&sizes_once, init_sizes);
    want = pf_want < 0 ? default_prefault_threads() : pf_want;
    pthread_mutex_lock(&pf_lock);
    while (pf_started < want) {
        atomic_store(&pf_at[pf_started], PF_IDLE);
        if (spawn(prefault_main, (void *)(intptr_t)pf_started) != 0) {
            break;
        }
        pf_started++;
    }
    pf_taking = want < pf_started ? want : pf_started;
    if (pf_taking == 0) {
        pthread_mutex_unlock(&pf_lock);
        pthread_mutex_unlock(&pf_busy);
        return 0;
    }
    pf_base = p;
    pf_n = mapped_length(n);
    pf_ahead = pf_ahead_setting;
    atomic_store(&pf_next, 0);
    atomic_store(&pf_front, 0);
    atomic_store(&pf_stop, 0);
    pf_pending = pf_taking;
    pf_generation++;
    pthread_cond_broadcast(&pf_start);
    pthread_mutex_unlock(&pf_lock);
    return 1;
}

static int
in_flight_below(size_t upto)
{
    for (int i = 0; i < pf_taking; i++) {
        if (atomic_load(&pf_at[i]) < upto) {
            return 1;
        }
    }
    return 0;
}

void
pg_host_prefault_reached(size_t upto)
{
    size_t front = atomic_load(&pf_next), block = pf_block();
    upto = (upto + block - 1) / block * block; /* the front stays on a block */
    while (front < upto && !atomic_compare_exchange_weak(&pf_next, &front, upto)) {
    }
    atomic_store(&pf_front, upto);
    pthread_mutex_lock(&pf_lock);
    if (atomic_load(&pf_sleeping) > 0) {
        pthread_cond_broadcast(&pf_advance); /* the workers may go on */
    }
    atomic_fetch_add(&pf_waiting, 1);
    while (in_flight_below(upto)) {
        pthread_cond_wait(&pf_progress, &pf_lock);
    }
    atomic_fetch_sub(&pf_waiting, 1);
    pthread_mutex_unlock(&pf_lock);
}

void
pg_host_prefault_end(void)
{
    atomic_store(&pf_stop, 1);
    pthread_mutex_lock(&pf_lock);
    pthread_cond_broadcast(&pf_advance);
    while (pf_pending > 0) {
        pthread_cond_wait(&pf_done, &pf_lock);
    }
    pthread_mutex_unlock(&pf_lock);
    pthread_mutex_unlock(&pf_busy);
}

/* ---- fork ---------------------------------------------------------------------- */

void
pg_host_memcpy_after_fork(void)
{
    /* The workers did not survive the fork: start afresh if asked. */
    pthread_mutex_init(&pm_lock, NULL);
    pthread_mutex_init(&pm_busy, NULL);
    pthread_cond_init(&pm_start, NULL);
    pthread_cond_init(&pm_done, NULL);
    n_workers = 0;
    generation = 0;
    pending = 0;
    pthread_mutex_init(&pf_lock, NULL);
    pthread_mutex_init(&pf_busy, NULL);
    pthread_cond_init(&pf_start, NULL);
    pthread_cond_init(&pf_done, NULL);
    pthread_cond_init(&pf_progress, NULL);
    pthread_cond_init(&pf_advance, NULL);
    atomic_store(&pf_waiting, 0);
    atomic_store(&pf_sleeping, 0);
    pf_started = 0;
    pf_taking = 0;
    pf_generation = 0;
    pf_pending = 0;
}
