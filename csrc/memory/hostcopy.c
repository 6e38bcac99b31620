/* Large host-side work, spread over worker threads: one thread cannot keep up
 * with a PCIe link (or, in the simulator, with memory).
 *
 * - pg_host_parallel_begin / _end: a job on the pool's workers while the
 *   caller goes on (transfer.c's staged copies run on it).
 * - pg_host_memcpy: a memcpy cut into one piece per thread, the caller's
 *   included (the simulator's large copies).
 * - pg_host_map / pg_host_unmap: memory for large new host arrays, mapped by
 *   us (aligned for huge pages, which the kernel is asked for), so that each
 *   huge page of it can be faulted in, and filled, by one thread.
 *
 * The workers start at their first use, with every signal blocked (signals
 * go to Python's threads). They do not survive fork(): context.c's fork
 * handler calls pg_host_memcpy_after_fork in the child. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
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

/* ---- the pool: a job on several threads ------------------------------------- */

/* One job at a time (pm_busy): fn(arg, part, parts) on the workers taking
 * part (parts 1 .. parts-1) while the caller does part 0 (pg_host_memcpy) or
 * work of its own (pg_host_parallel_begin / _end). The caller publishes the
 * job (the job_ fields, then generation, under pm_lock); each worker runs its
 * part and counts itself off pending, the last one waking the caller.
 *
 * Waking a sleeping thread through a condition variable takes tens of
 * microseconds under a hypervisor, and a job waits for its last thread to
 * start. So a worker, and the caller waiting for them, first spins
 * (pm_spin_ns, while the next job may be due: copies in a row), and only
 * then sleeps. When a staged copy was a job per 4 MiB piece (before
 * transfer.c's one job a copy), on an H100 host (16 cores under KVM, 1 GiB,
 * 12 threads, interleaved rounds) spinning 300 us took host to device
 * pageable from 0.66x to 0.97x of pinned, and device to host into touched
 * memory from 0.58x to 0.83x. */
static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pm_start = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pm_done = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t pm_busy = PTHREAD_MUTEX_INITIALIZER;
static int n_workers;    /* running (started at first need) */
static int pm_want = -1; /* threads asked for, the caller's included; -1: default */
static atomic_ulong generation;
static atomic_int pending;
static atomic_long pm_spin_ns = PG_HOST_SPIN_NS;
static pg_host_job job_fn;
static void *job_arg;
static int job_parts; /* the caller's part included */
/* generation when worker i was started: its first job is the one after */
static unsigned long gen_at_start[MAX_WORKERS];

static long
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

void
pg_host_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spins for up to `ns` until generation moves past `seen` (or, with seen ==
 * ULONG_MAX, until pending is 0); 1 if it did. */
static int
spin_for(unsigned long seen, long ns)
{
    long start;
    if (ns <= 0) {
        return 0;
    }
    start = now_ns();
    for (unsigned i = 1;; i++) {
        if (seen == ULONG_MAX
                ? atomic_load_explicit(&pending, memory_order_acquire) == 0
                : atomic_load_explicit(&generation, memory_order_acquire) != seen) {
            return 1;
        }
        if (i % 64 == 0 && now_ns() - start > ns) {
            return 0;
        }
        pg_host_relax();
    }
}

static void *
worker_main(void *arg)
{
    int id = (int)(intptr_t)arg;
    unsigned long seen = gen_at_start[id];
    for (;;) {
        if (!spin_for(seen, atomic_load_explicit(&pm_spin_ns, memory_order_relaxed))) {
            pthread_mutex_lock(&pm_lock);
            while (atomic_load(&generation) == seen) {
                pthread_cond_wait(&pm_start, &pm_lock);
            }
            pthread_mutex_unlock(&pm_lock);
        }
        /* the job's fields were written before generation moved (acquire) */
        seen = atomic_load_explicit(&generation, memory_order_acquire);
        if (id + 1 < job_parts) {
            job_fn(job_arg, id + 1, job_parts);
        }
        if (atomic_fetch_sub_explicit(&pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pm_lock); /* the caller may be about to sleep */
            pthread_cond_signal(&pm_done);
            pthread_mutex_unlock(&pm_lock);
        }
    }
    return NULL;
}

/* n threads, at most the workers and the caller. */
static int
at_most_pool(long n)
{
    return (int)(n > MAX_WORKERS + 1 ? MAX_WORKERS + 1 : n);
}

/* Three quarters of the cores, the caller's included: a copy between
 * touched memories is bounded by memory, not by threads. A staged host to
 * device copy of 1 GiB on an H100 host (16 cores under KVM, interleaved
 * rounds, transfer.c's job) ran at 49 to 51 GB/s on 10 to 12 threads, 47 to
 * 48 on 13 or 14, and 36 to 40 on 16. */
static int
default_copy_threads(void)
{
    long cpus = cpu_count();
    return at_most_pool(cpus > 1 ? cpus * 3 / 4 : 1);
}

/* Workers enough for `threads`, the caller's included (pm_lock held). */
static void
start_workers(int threads)
{
    while (n_workers < threads - 1 && n_workers < MAX_WORKERS) {
        gen_at_start[n_workers] = atomic_load(&generation);
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
    pm_want = n < 0 ? -1 : n < 1 ? 1 : at_most_pool(n);
    pthread_mutex_unlock(&pm_lock);
}

long
pg_host_spin_ns(void)
{
    return atomic_load(&pm_spin_ns);
}

void
pg_host_set_spin_ns(long ns)
{
    atomic_store(&pm_spin_ns, ns < 0                  ? PG_HOST_SPIN_NS
                              : ns > PG_HOST_SPIN_MAX ? PG_HOST_SPIN_MAX
                                                      : ns);
}

/* Publishes fn on up to threads - 1 workers (pm_busy and pm_lock held; the
 * latter is released); the parts, the caller's included. */
static int
publish(pg_host_job fn, void *arg, int threads)
{
    int parts;
    if (n_workers < threads - 1) {
        start_workers(threads);
    }
    parts = 1 + (n_workers < threads - 1 ? n_workers : threads - 1);
    if (parts > 1) {
        job_fn = fn;
        job_arg = arg;
        job_parts = parts;
        atomic_store(&pending, n_workers);
        atomic_fetch_add_explicit(&generation, 1, memory_order_release);
        pthread_cond_broadcast(&pm_start);
    }
    pthread_mutex_unlock(&pm_lock);
    return parts;
}

static void
join(void)
{
    if (!spin_for(ULONG_MAX, atomic_load_explicit(&pm_spin_ns, memory_order_relaxed))) {
        pthread_mutex_lock(&pm_lock);
        while (atomic_load(&pending) > 0) {
            pthread_cond_wait(&pm_done, &pm_lock);
        }
        pthread_mutex_unlock(&pm_lock);
    }
}

int
pg_host_parallel_begin(pg_host_job fn, void *arg, int threads)
{
    int parts;
    if (threads < 2 || pthread_mutex_trylock(&pm_busy) != 0) {
        return 0;
    }
    pthread_mutex_lock(&pm_lock);
    parts = publish(fn, arg, threads);
    if (parts < 2) {
        pthread_mutex_unlock(&pm_busy);
        return 0;
    }
    return parts;
}

void
pg_host_parallel_end(void)
{
    join();
    pthread_mutex_unlock(&pm_busy);
}

int
pg_host_parallel_threads(void)
{
    int n;
    pthread_mutex_lock(&pm_lock);
    n = pm_want >= 0 ? pm_want : at_most_pool(cpu_count());
    pthread_mutex_unlock(&pm_lock);
    return n;
}

/* ---- pg_host_memcpy ------------------------------------------------------------ */

typedef struct {
    char *dst;
    const char *src;
    size_t n;
} copy_job;

static void
copy_part(void *arg, int part, int parts)
{
    const copy_job *c = arg;
    /* pieces of whole pages; together they cover all n bytes */
    size_t per = ((c->n + (size_t)parts - 1) / (size_t)parts + 4095) & ~(size_t)4095;
    size_t off = per * (size_t)part;
    if (off < c->n) {
        memcpy(c->dst + off, c->src + off, c->n - off < per ? c->n - off : per);
    }
}

void
pg_host_memcpy(void *dst, const void *src, size_t n)
{
    copy_job c = {dst, src, n};
    int parts;
    /* the pool busy (another thread's copy, or a job this thread runs on
     * it, as the simulator's DMA does during a fill): one plain memcpy */
    if (n < PARALLEL_MIN || pthread_mutex_trylock(&pm_busy) != 0) {
        memcpy(dst, src, n);
        return;
    }
    pthread_mutex_lock(&pm_lock);
    parts = publish(copy_part, &c, pm_want < 0 ? default_copy_threads() : pm_want);
    copy_part(&c, 0, parts);
    if (parts > 1) {
        join();
    }
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
    atomic_store(&generation, 0);
    atomic_store(&pending, 0);
}
