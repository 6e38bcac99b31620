/* The caching allocator behind every DeviceArray.
 *
 * cudaMalloc is slow and cudaFree synchronizes the whole device, so neither
 * may sit on the path of creating and dropping an array. Freed blocks are
 * kept in lists by (device, rounded size) and handed out again:
 *   - at once to the stream that freed them, or to the default stream (which,
 *     being the legacy stream, waits for all work queued on blocking streams
 *     before it), or when they were freed on the default stream (all pygpu
 *     streams are blocking, so they wait for work queued on it before);
 *   - to another stream only once an event recorded at the free has passed.
 * When cudaMalloc runs out of memory, the cached blocks are freed and the
 * allocation is tried once more.
 *
 * Each call works on the device it is given, whatever device is current
 * (the device is made current for the call, then restored): memory, events
 * and streams of a device are only ever touched with that device current.
 *
 * At exit, pygpu._release_all (an atexit function) gives the cached blocks
 * and spare events back (pg_pool_release_all). */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#define POOL_BUCKETS 256
#define POOL_ROUND 512

typedef struct block {
    void *ptr;
    size_t size;
    uint64_t serial;
    pg_event event; /* recorded at the free on a stream other than 0 */
    struct block *next;
} block;

typedef struct {
    block *buckets[POOL_BUCKETS];
    size_t used, cached, limit;
    pg_event spare_events[64]; /* events of this device, to reuse */
    int n_spare_events;
    atomic_int touched; /* 1 once a block was allocated on this device */
} device_pool;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* PYGPU_NO_POOL=1: every array gets its own exact cudaMalloc and cudaFree,
 * so that memory checkers (compute-sanitizer, valgrind, ASan) see each one. */
static int no_pool = -1;

static int
pool_disabled(void)
{
    if (no_pool < 0) {
        const char *v = getenv("PYGPU_NO_POOL");
        no_pool = v != NULL && v[0] != '\0' && v[0] != '0';
    }
    return no_pool;
}
static device_pool pools[PG_MAX_DEVICES];
static block *spare_blocks; /* block records to reuse */

/* Makes `device` current for a call of the pool; *prev gets the device to
 * restore with device_restore. */
static pg_err
device_enter(const pg_backend *rt, int device, int *prev)
{
    pg_err err = rt->get_device(prev);
    if (err == PG_SUCCESS && *prev != device) {
        err = rt->set_device(device);
    }
    return err;
}

static void
device_restore(const pg_backend *rt, int device, int prev)
{
    if (prev != device) {
        (void)rt->set_device(prev);
    }
}

size_t
pg_pool_round(size_t size)
{
    if (size == 0) {
        return POOL_ROUND;
    }
    return (size + POOL_ROUND - 1) / POOL_ROUND * POOL_ROUND;
}

static unsigned
bucket_of(size_t rounded)
{
    return (unsigned)((rounded / POOL_ROUND) * 2654435761u) % POOL_BUCKETS;
}

static device_pool *
pool_of(int device)
{
    return device >= 0 && device < PG_MAX_DEVICES ? &pools[device] : NULL;
}

/* Under the lock: a block of `rounded` bytes that `serial` may use now. */
static block *
take_cached(const pg_backend *rt, device_pool *p, size_t rounded, uint64_t serial)
{
    block **link = &p->buckets[bucket_of(rounded)];
    for (block *b = *link; b != NULL; link = &b->next, b = b->next) {
        if (b->size != rounded) {
            continue;
        }
        if (b->serial == serial || serial == 0 || b->event == NULL ||
            rt->event_query(b->event) == PG_SUCCESS) {
            *link = b->next;
            return b;
        }
    }
    return NULL;
}

/* Under the lock, with p's device current. */
static void
recycle_event(const pg_backend *rt, device_pool *p, pg_event e)
{
    if (e == NULL) {
        return;
    }
    if (p->n_spare_events <
        (int)(sizeof(p->spare_events) / sizeof(p->spare_events[0]))) {
        p->spare_events[p->n_spare_events++] = e;
    }
    else {
        (void)rt->event_destroy(e);
    }
}

static pg_err release_cached(const pg_backend *rt, device_pool *p);

static void release_events(const pg_backend *rt, device_pool *p);

/* The cached blocks of `device` given back (and with `events`, its spare
 * events too, and only if the pool ever allocated there), with the device
 * made current for it. */
static pg_err
release_device(int device, int events)
{
    const pg_backend *rt = pg_rt();
    device_pool *p = pool_of(device);
    pg_err err;
    int prev = device;
    if (p == NULL || rt == NULL) {
        return PG_ERR_INVALID_DEVICE;
    }
    if (events && !atomic_load(&p->touched)) {
        return PG_SUCCESS;
    }
    if ((err = device_enter(rt, device, &prev)) != PG_SUCCESS) {
        return err;
    }
    err = release_cached(rt, p);
    if (events) {
        release_events(rt, p);
    }
    device_restore(rt, device, prev);
    return err;
}

pg_err
pg_pool_release_cached(int device)
{
    return release_device(device, 0);
}

/* Under no lock, with p's device current: the spare events destroyed. */
static void
release_events(const pg_backend *rt, device_pool *p)
{
    pg_event events[sizeof(p->spare_events) / sizeof(p->spare_events[0])];
    int n;
    pthread_mutex_lock(&lock);
    n = p->n_spare_events;
    memcpy(events, p->spare_events, (size_t)n * sizeof(pg_event));
    p->n_spare_events = 0;
    pthread_mutex_unlock(&lock);
    while (n > 0) {
        (void)rt->event_destroy(events[--n]);
    }
}

pg_err
pg_pool_release_all(int device)
{
    return release_device(device, 1);
}

int
pg_pool_touched(int device)
{
    device_pool *p = pool_of(device);
    return p != NULL && atomic_load(&p->touched);
}

/* With p's device current. */
static pg_err
release_cached(const pg_backend *rt, device_pool *p)
{
    block *all = NULL;
    pg_err first = PG_SUCCESS;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < POOL_BUCKETS; i++) {
        while (p->buckets[i] != NULL) {
            block *b = p->buckets[i];
            p->buckets[i] = b->next;
            b->next = all;
            all = b;
        }
    }
    pthread_mutex_unlock(&lock);
    while (all != NULL) { /* cudaFree waits for the device: not under the lock */
        block *b = all;
        pg_err err = rt->free(b->ptr);
        all = b->next;
        if (err != PG_SUCCESS && first == PG_SUCCESS) {
            first = err;
        }
        pthread_mutex_lock(&lock);
        p->cached -= b->size;
        recycle_event(rt, p, b->event);
        b->next = spare_blocks;
        spare_blocks = b;
        pthread_mutex_unlock(&lock);
    }
    return first;
}

static pg_err pool_alloc(const pg_backend *rt, device_pool *p, void **ptr, size_t size,
                         uint64_t serial);
static pg_err pool_free(const pg_backend *rt, device_pool *p, void *ptr, size_t size,
                        pg_stream stream, uint64_t serial);

pg_err
pg_pool_alloc(void **ptr, size_t size, int device, pg_stream stream, uint64_t serial)
{
    const pg_backend *rt = pg_rt();
    device_pool *p = pool_of(device);
    pg_err err;
    int prev = device;
    (void)stream;
    *ptr = NULL;
    if (p == NULL || rt == NULL) {
        return PG_ERR_INVALID_DEVICE;
    }
    if ((err = device_enter(rt, device, &prev)) != PG_SUCCESS) {
        return err;
    }
    err = pool_alloc(rt, p, ptr, size, serial);
    device_restore(rt, device, prev);
    return err;
}

pg_err
pg_pool_alloc_current(void **ptr, size_t size, int device, pg_stream stream,
                      uint64_t serial)
{
    const pg_backend *rt = pg_rt();
    device_pool *p = pool_of(device);
    (void)stream;
    *ptr = NULL;
    if (p == NULL || rt == NULL) {
        return PG_ERR_INVALID_DEVICE;
    }
    return pool_alloc(rt, p, ptr, size, serial);
}

/* With p's device current. */
static pg_err
pool_alloc(const pg_backend *rt, device_pool *p, void **ptr, size_t size,
           uint64_t serial)
{
    size_t rounded = pg_pool_round(size);
    block *b;
    pg_err err;
    if (!atomic_load_explicit(&p->touched, memory_order_relaxed)) {
        atomic_store(&p->touched, 1);
    }
    if (pool_disabled()) {
        pg_err e = rt->malloc(ptr, size);
        if (e == PG_SUCCESS) {
            pthread_mutex_lock(&lock);
            p->used += rounded;
            pthread_mutex_unlock(&lock);
        }
        return e;
    }
    pthread_mutex_lock(&lock);
    b = take_cached(rt, p, rounded, serial);
    if (b != NULL) {
        *ptr = b->ptr;
        p->cached -= rounded;
        p->used += rounded;
        recycle_event(rt, p, b->event);
        b->next = spare_blocks;
        spare_blocks = b;
        pthread_mutex_unlock(&lock);
        rt->mark_unwritten(*ptr); /* its bytes are undefined again */
        return PG_SUCCESS;
    }
    int over_limit = p->limit != 0 && p->used + p->cached + rounded > p->limit;
    pthread_mutex_unlock(&lock);
    if (over_limit) {
        (void)release_cached(rt, p);
        pthread_mutex_lock(&lock);
        over_limit = p->limit != 0 && p->used + p->cached + rounded > p->limit;
        pthread_mutex_unlock(&lock);
        if (over_limit) {
            return PG_ERR_MEMORY_ALLOCATION;
        }
    }
    err = rt->malloc(ptr, rounded);
    if (err == PG_ERR_MEMORY_ALLOCATION) {
        (void)release_cached(rt, p);
        err = rt->malloc(ptr, rounded);
    }
    if (err == PG_SUCCESS) {
        pthread_mutex_lock(&lock);
        p->used += rounded;
        pthread_mutex_unlock(&lock);
    }
    return err;
}

pg_err
pg_pool_free(void *ptr, size_t size, int device, pg_stream stream, uint64_t serial)
{
    const pg_backend *rt = pg_rt();
    device_pool *p = pool_of(device);
    pg_err err;
    int prev = device;
    if (p == NULL || rt == NULL) {
        return PG_ERR_INVALID_DEVICE;
    }
    if ((err = device_enter(rt, device, &prev)) != PG_SUCCESS) {
        return err;
    }
    err = pool_free(rt, p, ptr, size, stream, serial);
    device_restore(rt, device, prev);
    return err;
}

/* With p's device current. */
static pg_err
pool_free(const pg_backend *rt, device_pool *p, void *ptr, size_t size,
          pg_stream stream, uint64_t serial)
{
    size_t rounded = pg_pool_round(size);
    pg_event event = NULL;
    block *b;
    if (pool_disabled()) {
        /* cudaFree waits for the device, so for all work on the block */
        pg_err e = rt->free(ptr);
        pthread_mutex_lock(&lock);
        p->used -= rounded;
        pthread_mutex_unlock(&lock);
        return e;
    }
    if (serial != 0) {
        pthread_mutex_lock(&lock);
        if (p->n_spare_events > 0) {
            event = p->spare_events[--p->n_spare_events];
        }
        pthread_mutex_unlock(&lock);
        if (event == NULL && rt->event_create(&event, 0) != PG_SUCCESS) {
            event = NULL;
        }
        if (event == NULL || rt->event_record(event, stream) != PG_SUCCESS) {
            /* no event to wait for: wait for the stream instead */
            if (event != NULL) {
                (void)rt->event_destroy(event);
                event = NULL;
            }
            pg_err err = rt->stream_synchronize(stream);
            if (err != PG_SUCCESS) {
                return err;
            }
            serial = 0;
        }
    }
    pthread_mutex_lock(&lock);
    b = spare_blocks;
    if (b != NULL) {
        spare_blocks = b->next;
    }
    else {
        b = malloc(sizeof(block));
    }
    if (b == NULL) { /* no record to keep it in: give it back to the device */
        p->used -= rounded;
        if (event != NULL) {
            recycle_event(rt, p, event);
        }
        pthread_mutex_unlock(&lock);
        return rt->free(ptr);
    }
    b->ptr = ptr;
    b->size = rounded;
    b->serial = serial;
    b->event = event;
    b->next = p->buckets[bucket_of(rounded)];
    p->buckets[bucket_of(rounded)] = b;
    p->used -= rounded;
    p->cached += rounded;
    pthread_mutex_unlock(&lock);
    return PG_SUCCESS;
}

int
pg_pool_holds_free(int device, const void *ptr)
{
    device_pool *p = pool_of(device);
    int found = 0;
    if (p == NULL) {
        return 0;
    }
    pthread_mutex_lock(&lock);
    for (unsigned k = 0; k < POOL_BUCKETS && !found; k++) {
        for (block *b = p->buckets[k]; b != NULL && !found; b = b->next) {
            found = (const char *)ptr >= (const char *)b->ptr &&
                    (const char *)ptr < (const char *)b->ptr + b->size;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

size_t
pg_pool_used(int device)
{
    device_pool *p = pool_of(device);
    size_t n;
    if (p == NULL) {
        return 0;
    }
    pthread_mutex_lock(&lock);
    n = p->used;
    pthread_mutex_unlock(&lock);
    return n;
}

size_t
pg_pool_total(int device)
{
    device_pool *p = pool_of(device);
    size_t n;
    if (p == NULL) {
        return 0;
    }
    pthread_mutex_lock(&lock);
    n = p->used + p->cached;
    pthread_mutex_unlock(&lock);
    return n;
}

void
pg_pool_set_limit(int device, size_t limit)
{
    device_pool *p = pool_of(device);
    if (p != NULL) {
        pthread_mutex_lock(&lock);
        p->limit = limit;
        pthread_mutex_unlock(&lock);
    }
}

size_t
pg_pool_limit(int device)
{
    device_pool *p = pool_of(device);
    return p == NULL ? 0 : p->limit;
}
