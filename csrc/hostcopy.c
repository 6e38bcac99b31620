/* A memcpy for large host-side copies, spread over worker threads: one
 * thread cannot keep up with a PCIe link (or, in the simulator, with memory).
 * The workers start at the first large copy. They do not survive fork():
 * context.c's fork handler calls pg_host_memcpy_after_fork in the child. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

#define MAX_WORKERS 16
#define PARALLEL_MIN ((size_t)1 << 20) /* smaller copies: one plain memcpy */

static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pm_start = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pm_done = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t pm_busy = PTHREAD_MUTEX_INITIALIZER;
static int n_workers = -1; /* -1: not started */
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
        slice(id + 1, n_workers + 1, task_n, &off, &len);
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

void
pg_host_memcpy_after_fork(void)
{
    /* The workers did not survive the fork: start afresh if asked. */
    pthread_mutex_init(&pm_lock, NULL);
    pthread_mutex_init(&pm_busy, NULL);
    pthread_cond_init(&pm_start, NULL);
    pthread_cond_init(&pm_done, NULL);
    n_workers = -1;
    generation = 0;
    pending = 0;
}

static void
start_workers(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int want = cpus > 1 ? (int)(cpus * 3 / 4) - 1 : 0; /* plus the calling thread */
    if (want > MAX_WORKERS) {
        want = MAX_WORKERS;
    }
    n_workers = 0;
    for (int i = 0; i < want; i++) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, worker_main, (void *)(intptr_t)i) != 0) {
            pthread_attr_destroy(&attr);
            break;
        }
        pthread_attr_destroy(&attr);
        n_workers++;
    }
}

void
pg_host_memcpy(void *dst, const void *src, size_t n)
{
    size_t off, len;
    if (n < PARALLEL_MIN) {
        memcpy(dst, src, n);
        return;
    }
    pthread_mutex_lock(&pm_busy);
    pthread_mutex_lock(&pm_lock);
    if (n_workers < 0) {
        start_workers();
    }
    if (n_workers == 0) {
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
    slice(0, n_workers + 1, n, &off, &len);
    memcpy((char *)dst + off, (const char *)src + off, len);
    pthread_mutex_lock(&pm_lock);
    while (pending > 0) {
        pthread_cond_wait(&pm_done, &pm_lock);
    }
    pthread_mutex_unlock(&pm_lock);
    pthread_mutex_unlock(&pm_busy);
}
