/* Host <-> device copies of contiguous bytes.
 *
 * The driver copies pageable host memory through a small staging buffer of
 * its own, one piece at a time, at a fraction of the link's speed. pygpu
 * stages instead through a ring of page-locked buffers, pipelined: while the
 * DMA engine moves piece i, host threads copy piece i+1 into (or out of) the
 * next buffer. Page-locked memory (cuda.pinned_array) is copied directly, and
 * asynchronously when the caller allows. Small copies, and every copy on a
 * backend that does not gain from staging (no PG_CAP_STAGES_PAGEABLE), go
 * straight to the backend.
 *
 * A staged copy runs as one job on hostcopy.c's pool: each worker takes the
 * next unit (a huge page) of the pieces, waits until its buffer may be used,
 * and copies it; the caller keeps the DMA engine fed.
 * Into a new host array (memory that hostcopy.c mapped for it, none of it
 * present yet) the first touch of each page costs the kernel a fault and the
 * zeroing of the page, more than the copy itself: there one thread to a huge
 * page faults it in (where two fault one, the kernel zeroes a page for each
 * and keeps one). */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime.h"

#define STAGE_CHUNK ((size_t)4 << 20) /* the default piece */
#define STAGE_BUFS 16
#define STAGE_MIN ((size_t)1 << 20) /* smaller copies go straight to the driver */

/* ---- the staging ring ----------------------------------------------------------- */

typedef struct {
    pthread_mutex_t lock; /* one staged copy at a time uses a ring */
    int ready;            /* 1: buffers and events exist; -1: could not make them */
    size_t chunk;         /* the size of each buffer */
    void *buf[STAGE_BUFS];
    pg_event done[STAGE_BUFS];
} stage_ring;

static _Atomic size_t stage_bytes = STAGE_CHUNK;
static atomic_int stage_always;     /* tests: stage where the backend would not */
static atomic_long fail_piece = -1; /* tests: the next staged copy fails there */

void
pg_set_stage_always(int on)
{
    atomic_store(&stage_always, on != 0);
}

int
pg_stage_always(void)
{
    return atomic_load(&stage_always);
}

void
pg_set_stage_fail_piece(long k)
{
    atomic_store(&fail_piece, k < 0 ? -1 : k);
}

size_t
pg_stage_bytes(void)
{
    return atomic_load(&stage_bytes);
}

void
pg_set_stage_bytes(size_t n)
{
    atomic_store(&stage_bytes, n < STAGE_MIN      ? STAGE_MIN
                               : n > PG_STAGE_MAX ? PG_STAGE_MAX
                                                  : n);
}

/* One ring per device. */
static stage_ring rings[PG_MAX_DEVICES];
static pthread_once_t rings_once = PTHREAD_ONCE_INIT;

static void
init_rings(void)
{
    for (int d = 0; d < PG_MAX_DEVICES; d++) {
        pthread_mutex_init(&rings[d].lock, NULL);
    }
}

void
pg_transfer_after_fork(void)
{
    /* A copy another thread of the parent ran holds its ring's lock forever
     * in the child, where that thread does not exist: unlocked afresh. The
     * buffers stay (the simulator's are ordinary memory, copied with the
     * process; CUDA is unusable in a forked child anyway). */
    for (int d = 0; d < PG_MAX_DEVICES; d++) {
        pthread_mutex_init(&rings[d].lock, NULL);
    }
}

void
pg_transfer_release(int device)
{
    const pg_backend *rt = pg_rt();
    stage_ring *r;
    if (rt == NULL || device < 0 || device >= PG_MAX_DEVICES) {
        return;
    }
    pthread_once(&rings_once, init_rings);
    r = &rings[device];
    pthread_mutex_lock(&r->lock); /* after the copy that uses it, if one does */
    if (r->ready == 1) {
        for (int k = 0; k < STAGE_BUFS; k++) {
            (void)rt->event_destroy(r->done[k]);
            (void)rt->host_free(r->buf[k]);
            r->done[k] = NULL;
            r->buf[k] = NULL;
        }
        r->ready = 0;
    }
    pthread_mutex_unlock(&r->lock);
}

/* STAGE_BUFS page-locked buffers of `size` bytes into out: 1, or 0 with none
 * made (those that were are freed). */
static int
make_buffers(const pg_backend *rt, void *out[STAGE_BUFS], size_t size)
{
    int made = 0;
    while (made < STAGE_BUFS && rt->host_alloc(&out[made], size) == PG_SUCCESS) {
        made++;
    }
    if (made == STAGE_BUFS) {
        return 1;
    }
    while (made > 0) {
        (void)rt->host_free(out[--made]);
    }
    return 0;
}

/* The current device's ring, locked; NULL if staging is not possible. */
static stage_ring *
ring_acquire(const pg_backend *rt)
{
    stage_ring *r;
    size_t want;
    int device = -1;
    if (rt->get_device(&device) != PG_SUCCESS || device < 0 ||
        device >= PG_MAX_DEVICES) {
        return NULL;
    }
    pthread_once(&rings_once, init_rings);
    r = &rings[device];
    pthread_mutex_lock(&r->lock);
    want = pg_stage_bytes(); /* once: another thread may set it meanwhile */
    if (r->ready == 1 && r->chunk != want) {
        /* the size was set since (no copy uses the ring, and the last one's
         * work is done): buffers of the new size, all made before the old
         * ones go; where one cannot be made, the old ring stays */
        void *fresh[STAGE_BUFS];
        if (make_buffers(rt, fresh, want)) {
            for (int k = 0; k < STAGE_BUFS; k++) {
                (void)rt->host_free(r->buf[k]);
                r->buf[k] = fresh[k];
            }
            r->chunk = want;
        }
    }
    if (r->ready == 0) {
        r->ready = make_buffers(rt, r->buf, want) ? 1 : -1; /* -1: never try again */
        r->chunk = want;
        for (int k = 0; k < STAGE_BUFS && r->ready == 1; k++) {
            if (rt->event_create(&r->done[k], 0) != PG_SUCCESS) {
                r->ready = -1; /* leave what was made */
            }
        }
    }
    if (r->ready != 1) {
        pthread_mutex_unlock(&r->lock);
        return NULL;
    }
    return r;
}

static void
ring_release(stage_ring *r)
{
    pthread_mutex_unlock(&r->lock);
}

static size_t
min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* ---- a staged copy: one job on the pool ------------------------------------------ */

/* The staged pieces are cut into units of a huge page. Each worker takes the
 * next unit, waits until its buffer may be used (host to device: the DMA of
 * the piece there before has landed; device to host: the piece has arrived),
 * copies it, and counts it off its buffer. The caller keeps the DMA engine
 * fed: it issues a piece once its units are in (host to device) or once its
 * buffer's units are out (device to host), and says which pieces have
 * landed. No step waits for every thread: a worker that loses its core
 * holds back one unit, while the others go on up to a ring ahead. Where the
 * pool is busy (another thread's copy), the caller copies the units itself
 * between its other steps. */
typedef struct {
    int h2d;
    char *host; /* the source (h2d) or the destination */
    size_t n, piece, unit, units, per_piece;
    void *const *buf;
    atomic_size_t next;            /* the next unit to take */
    atomic_size_t landed;          /* pieces whose DMA is complete */
    atomic_size_t out[STAGE_BUFS]; /* units copied into (h2d) or out of each buffer */
    atomic_int stop;               /* an error: leave */
} stage_job;

/* Whether unit u's buffer may be used by the copying threads. */
static int
usable(stage_job *j, size_t u)
{
    size_t ahead = j->h2d ? STAGE_BUFS : 0; /* h2d: a ring ahead of the DMA */
    return atomic_load_explicit(&j->landed, memory_order_acquire) + ahead >
           u * j->unit / j->piece;
}

static void
copy_unit(stage_job *j, size_t u)
{
    size_t off = u * j->unit, k = off / j->piece, len = min_size(j->unit, j->n - off);
    char *staged = (char *)j->buf[k % STAGE_BUFS] + (off - k * j->piece);
    if (j->h2d) {
        memcpy(staged, j->host + off, len);
    }
    else {
        memcpy(j->host + off, staged, len);
    }
    atomic_fetch_add_explicit(&j->out[k % STAGE_BUFS], 1, memory_order_release);
}

/* A worker: unit after unit, each once its buffer may be used, waiting by
 * spinning for the first ten thousand turns (a 4 MiB piece lands every 75 us
 * or so), then in naps of 20 us; it leaves when the job stops. */
static void
job_part(void *arg, int part, int parts)
{
    stage_job *j = arg;
    (void)part;
    (void)parts;
    for (;;) {
        size_t u;
        if (atomic_load_explicit(&j->stop, memory_order_relaxed)) {
            return;
        }
        u = atomic_fetch_add(&j->next, 1);
        if (u >= j->units) {
            return;
        }
        for (unsigned i = 0; !usable(j, u); i++) {
            if (atomic_load_explicit(&j->stop, memory_order_relaxed)) {
                return;
            }
            if (i < 10000) {
                pg_host_relax();
            }
            else {
                struct timespec nap = {0, 20000};
                nanosleep(&nap, NULL);
            }
        }
        copy_unit(j, u);
    }
}

/* Whether piece k can go to the DMA engine: its units are in (h2d), or the
 * pieces before it in its buffer (each whole) are out. */
static int
can_issue(stage_job *j, size_t k)
{
    size_t before = k / STAGE_BUFS * j->per_piece, units = 0;
    if (j->h2d) {
        units = min_size(j->per_piece, j->units - k * j->per_piece);
    }
    return atomic_load_explicit(&j->out[k % STAGE_BUFS], memory_order_acquire) >=
           before + units;
}

static pg_err
issue(const pg_backend *rt, stage_ring *r, stage_job *j, char *dev, size_t k,
      pg_stream stream)
{
    int q = (int)(k % STAGE_BUFS);
    size_t off = k * r->chunk, len = min_size(r->chunk, j->n - off);
    pg_err err =
        j->h2d ? rt->memcpy_async(dev + off, r->buf[q], len, PG_MEMCPY_H2D, stream)
               : rt->memcpy_async(r->buf[q], dev + off, len, PG_MEMCPY_D2H, stream);
    return err == PG_SUCCESS ? rt->event_record(r->done[q], stream) : err;
}

/* The caller, with no workers: the next unit, if its buffer may be used (1). */
static int
copy_next_unit(stage_job *j)
{
    size_t u = atomic_load_explicit(&j->next, memory_order_relaxed);
    if (u >= j->units || !usable(j, u)) {
        return 0;
    }
    atomic_store_explicit(&j->next, u + 1, memory_order_relaxed);
    copy_unit(j, u);
    return 1;
}

/* host <-> dev through the ring, as one job on `threads` of the pool (the
 * caller's included); returns once the copy is complete. */
static pg_err
staged(const pg_backend *rt, stage_ring *r, int h2d, char *host, char *dev, size_t n,
       pg_stream stream, int threads)
{
    pg_err err = PG_SUCCESS;
    size_t huge = pg_host_huge_page_size(), pieces = (n + r->chunk - 1) / r->chunk;
    size_t issued = 0, landed = 0;
    stage_job j = {.h2d = h2d, .host = host, .n = n, .piece = r->chunk, .buf = r->buf};
    long fail = atomic_exchange(&fail_piece, -1);
    int alone;
    j.unit = r->chunk % huge == 0 ? huge : r->chunk;
    j.per_piece = j.piece / j.unit;
    j.units = (n + j.unit - 1) / j.unit;
    alone = pg_host_parallel_begin(job_part, &j, threads) == 0;
    while (landed < pieces && err == PG_SUCCESS) {
        if (issued < pieces && can_issue(&j, issued)) {
            err = (long)issued == fail ? PG_ERR_INVALID_VALUE
                                       : issue(rt, r, &j, dev, issued, stream);
            issued++;
        }
        else if (alone && copy_next_unit(&j)) {
            continue;
        }
        else if (landed < issued &&
                 (err = rt->event_query(r->done[landed % STAGE_BUFS])) == PG_SUCCESS) {
            atomic_store_explicit(&j.landed, ++landed, memory_order_release);
        }
        else if (err == PG_ERR_NOT_READY || landed == issued) {
            err = PG_SUCCESS;
            pg_host_relax(); /* the workers or the DMA engine are behind */
        }
    }
    if (err != PG_SUCCESS) {
        atomic_store(&j.stop, 1);
        (void)rt->stream_synchronize(stream);
    }
    if (!alone) {
        pg_host_parallel_end(); /* the workers copy out the last pieces */
    }
    else {
        while (err == PG_SUCCESS && copy_next_unit(&j)) {
        }
    }
    return err;
}

/* Straight to the backend: one call. */
static pg_err
direct(const pg_backend *rt, char *dst, const char *src, size_t n, int kind,
       pg_stream stream, int sync)
{
    pg_err err = rt->memcpy_async(dst, src, n, kind, stream);
    if (err == PG_SUCCESS && sync) {
        err = rt->stream_synchronize(stream);
    }
    return err;
}

/* fresh: dst is new memory from pg_host_map (a device-to-host copy). */
static pg_err
copy(void *dst, const void *src, size_t n, int kind, pg_stream stream, int sync,
     int fresh)
{
    const pg_backend *rt = pg_rt();
    const void *host = kind == PG_MEMCPY_H2D ? src : dst;
    stage_ring *r;
    pg_err err;
    if (n == 0) {
        return PG_SUCCESS;
    }
    if (pg_capture_thread()) {
        /* A graph records no copy between host and device (cuda.graph), on
         * any stream: a staged copy would wait for its pieces, which a
         * capturing thread must not, and a small one be refused or not by
         * its stream and size. */
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (n < STAGE_MIN ||
        !((rt->caps & PG_CAP_STAGES_PAGEABLE) || atomic_load(&stage_always)) ||
        rt->is_pinned(host)) {
        return direct(rt, dst, src, n, kind, stream, sync);
    }
    r = ring_acquire(rt);
    if (r == NULL) {
        return direct(rt, dst, src, n, kind, stream, 1);
    }
    /* Faulting new pages in is the kernel's work, on every core; a copy
     * between touched memory and the ring is bounded by memory, and does
     * better on fewer threads (hostcopy.c's copy threads). */
    err = kind == PG_MEMCPY_H2D
              ? staged(rt, r, 1, (char *)src, dst, n, stream, pg_host_copy_threads())
              : staged(rt, r, 0, dst, (char *)src, n, stream,
                       fresh ? pg_host_parallel_threads() : pg_host_copy_threads());
    ring_release(r);
    return err;
}

pg_err
pg_copy_h2d(void *dst, const void *src, size_t n, pg_stream stream, int sync)
{
    return copy(dst, src, n, PG_MEMCPY_H2D, stream, sync, 0);
}

pg_err
pg_copy_d2h(void *dst, const void *src, size_t n, pg_stream stream, int sync)
{
    return copy(dst, src, n, PG_MEMCPY_D2H, stream, sync, 0);
}

pg_err
pg_copy_d2h_new(void *dst, const void *src, size_t n, pg_stream stream, int sync)
{
    (void)sync;
    return copy(dst, src, n, PG_MEMCPY_D2H, stream, 1, 1);
}
