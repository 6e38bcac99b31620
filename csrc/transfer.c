/* Host <-> device copies of contiguous bytes.
 *
 * The driver copies pageable host memory through a small staging buffer of
 * its own, one piece at a time, at a fraction of the link's speed. pygpu
 * stages instead through a ring of page-locked buffers, pipelined: while the
 * DMA engine moves piece i, host threads copy piece i+1 into (or out of) the
 * next buffer. Page-locked memory (cuda.pinned_array) is copied directly, and
 * asynchronously when the caller allows. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

#define STAGE_CHUNK ((size_t)8 << 20)
#define STAGE_BUFS 4
#define STAGE_MIN ((size_t)1 << 20) /* smaller copies go straight to the driver */
#define MAX_WORKERS 16
#define PARALLEL_MIN ((size_t)1 << 20)

/* ---- a parallel memcpy for the host side -------------------------------------- */

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

static void
after_fork_in_child(void)
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

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void
register_atfork(void)
{
    pthread_atfork(NULL, NULL, after_fork_in_child);
}

static void
parallel_memcpy(void *dst, const void *src, size_t n)
{
    size_t off, len;
    if (n < PARALLEL_MIN) {
        memcpy(dst, src, n);
        return;
    }
    pthread_once(&atfork_once, register_atfork);
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

/* ---- the staging ring ----------------------------------------------------------- */

typedef struct {
    int ready; /* 1: buffers and events exist; -1: could not make them */
    void *buf[STAGE_BUFS];
    pg_event done[STAGE_BUFS];
} stage_ring;

/* One ring per device; one staged copy at a time uses a ring. */
#define STAGE_DEVICES 16
static stage_ring rings[STAGE_DEVICES];
static pthread_mutex_t ring_lock[STAGE_DEVICES] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER};

/* The current device's ring, locked; NULL if staging is not possible. */
static stage_ring *
ring_acquire(const pg_backend *rt, int *device)
{
    stage_ring *r;
    if (rt->get_device(device) != PG_SUCCESS || *device < 0 ||
        *device >= STAGE_DEVICES) {
        return NULL;
    }
    pthread_mutex_lock(&ring_lock[*device]);
    r = &rings[*device];
    if (r->ready == 0) {
        r->ready = 1;
        for (int k = 0; k < STAGE_BUFS && r->ready == 1; k++) {
            if (rt->host_alloc(&r->buf[k], STAGE_CHUNK) != PG_SUCCESS ||
                rt->event_create(&r->done[k], 0) != PG_SUCCESS) {
                r->ready = -1; /* leave what was made; never try again */
            }
        }
    }
    if (r->ready != 1) {
        pthread_mutex_unlock(&ring_lock[*device]);
        return NULL;
    }
    return r;
}

static void
ring_release(int device)
{
    pthread_mutex_unlock(&ring_lock[device]);
}

static size_t
min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

static pg_err
staged_h2d(const pg_backend *rt, stage_ring *r, char *dst, const char *src, size_t n,
           pg_stream stream)
{
    pg_err err = PG_SUCCESS;
    size_t i = 0, off;
    for (off = 0; off < n && err == PG_SUCCESS; off += STAGE_CHUNK, i++) {
        int k = (int)(i % STAGE_BUFS);
        size_t len = min_size(STAGE_CHUNK, n - off);
        if (i >= STAGE_BUFS) {
            err = rt->event_synchronize(r->done[k]);
            if (err != PG_SUCCESS) {
                break;
            }
        }
        parallel_memcpy(r->buf[k], src + off, len);
        err = rt->memcpy_async(dst + off, r->buf[k], len, PG_MEMCPY_H2D, stream);
        if (err == PG_SUCCESS) {
            err = rt->event_record(r->done[k], stream);
        }
    }
    /* Return once the copy is complete (and the ring free for the next). */
    pg_err sync = rt->stream_synchronize(stream);
    return err != PG_SUCCESS ? err : sync;
}

static pg_err
staged_d2h(const pg_backend *rt, stage_ring *r, char *dst, const char *src, size_t n,
           pg_stream stream)
{
    pg_err err = PG_SUCCESS;
    size_t chunks = (n + STAGE_CHUNK - 1) / STAGE_CHUNK, queued = 0;
    for (size_t i = 0; i < chunks && err == PG_SUCCESS; i++) {
        int k = (int)(i % STAGE_BUFS);
        size_t off = i * STAGE_CHUNK, len = min_size(STAGE_CHUNK, n - off);
        while (queued < chunks && queued < i + STAGE_BUFS && err == PG_SUCCESS) {
            int q = (int)(queued % STAGE_BUFS);
            size_t qoff = queued * STAGE_CHUNK;
            err =
                rt->memcpy_async(r->buf[q], src + qoff, min_size(STAGE_CHUNK, n - qoff),
                                 PG_MEMCPY_D2H, stream);
            if (err == PG_SUCCESS) {
                err = rt->event_record(r->done[q], stream);
            }
            queued++;
        }
        if (err == PG_SUCCESS) {
            err = rt->event_synchronize(r->done[k]);
        }
        if (err == PG_SUCCESS) {
            parallel_memcpy(dst + off, r->buf[k], len);
        }
    }
    if (err != PG_SUCCESS) {
        (void)rt->stream_synchronize(stream);
    }
    return err;
}

static pg_err
copy(void *dst, const void *src, size_t n, int kind, pg_stream stream, int sync)
{
    const pg_backend *rt = pg_rt();
    const void *host = kind == PG_MEMCPY_H2D ? src : dst;
    stage_ring *r;
    int device = 0;
    pg_err err;
    if (n == 0) {
        return PG_SUCCESS;
    }
    if (rt->is_simulator) {
        parallel_memcpy(dst, src, n);
        return PG_SUCCESS;
    }
    if (n < STAGE_MIN || rt->is_pinned(host)) {
        err = rt->memcpy_async(dst, src, n, kind, stream);
        if (err == PG_SUCCESS && sync) {
            err = rt->stream_synchronize(stream);
        }
        return err;
    }
    r = ring_acquire(rt, &device);
    if (r == NULL) {
        err = rt->memcpy_async(dst, src, n, kind, stream);
        return err == PG_SUCCESS ? rt->stream_synchronize(stream) : err;
    }
    err = kind == PG_MEMCPY_H2D ? staged_h2d(rt, r, dst, src, n, stream)
                                : staged_d2h(rt, r, dst, src, n, stream);
    ring_release(device);
    return err;
}

pg_err
pg_copy_h2d(void *dst, const void *src, size_t n, pg_stream stream, int sync)
{
    return copy(dst, src, n, PG_MEMCPY_H2D, stream, sync);
}

pg_err
pg_copy_d2h(void *dst, const void *src, size_t n, pg_stream stream, int sync)
{
    return copy(dst, src, n, PG_MEMCPY_D2H, stream, sync);
}
