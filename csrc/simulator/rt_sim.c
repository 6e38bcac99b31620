/* The CPU simulator behind pg_backend: device memory is host memory, counted
 * against a simulated total; kernels are the same kernels.cu source compiled
 * for the host (see sim_exec.h). Numbers for limits mirror an sm_90 device. */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"

#define SIM_HEADER 256 /* bytes before each block: its size and a tag */
#define SIM_TAG 0x70677075736d656dULL

typedef struct {
    uint64_t tag;
    size_t size;
    int device;
} sim_header;

static _Atomic size_t sim_used[PG_MAX_DEVICES];
static _Thread_local int sim_current;

/* ---- settings: PYGPU_SIM_MEMORY, PYGPU_SIM_DEVICES, PYGPU_SIM_PEER --------- */

/* Why the last call on this thread failed with PG_ERR_CONFIGURATION. */
static _Thread_local char config_message[512];

static const char *
sim_config_error(void)
{
    return config_message[0] != '\0' ? config_message : NULL;
}

static int
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int
lower(char c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* A size: a decimal number (digits, with an optional fraction) and an
 * optional unit, case-insensitive and all powers of 1024: B, K, KB, Ki, KiB,
 * and the same for M, G and T. Spaces around the number and before the unit
 * are allowed. Whole bytes (a fraction of a byte is dropped); 0 on garbage,
 * a sign, zero or more than SIZE_MAX. */
static size_t
parse_size(const char *s)
{
    static const char units[] = "kmgt";
    const char *p = s;
    size_t whole = 0, frac = 0, frac_scale = 1, mult = 1;
    int digits = 0;
    while (is_space(*p)) {
        p++;
    }
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        size_t d = (size_t)(*p - '0');
        if (whole > (SIZE_MAX - d) / 10) {
            return 0;
        }
        whole = whole * 10 + d;
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
            if (frac_scale <= SIZE_MAX / 10 / 1024 / 1024 / 1024 / 1024) {
                frac = frac * 10 + (size_t)(*p - '0');
                frac_scale *= 10;
            }
        }
    }
    if (digits == 0) {
        return 0;
    }
    while (is_space(*p)) {
        p++;
    }
    const char *u = *p != '\0' ? strchr(units, lower(*p)) : NULL;
    if (u != NULL) {
        for (int i = 0; i <= (int)(u - units); i++) {
            mult *= 1024;
        }
        p++;
        if (lower(*p) == 'i') {
            p++;
        }
        if (lower(*p) == 'b') {
            p++;
        }
    }
    else if (lower(*p) == 'b') {
        p++;
    }
    while (is_space(*p)) {
        p++;
    }
    if (*p != '\0' || whole > SIZE_MAX / mult) {
        return 0;
    }
    /* frac < frac_scale, small enough that frac * mult cannot overflow */
    size_t bytes = whole * mult, part = frac * mult / frac_scale;
    if (bytes > SIZE_MAX - part) {
        return 0;
    }
    return bytes + part;
}

/* The simulated memory of each device: PYGPU_SIM_MEMORY, else 4 GiB. 0 if the
 * setting is not understood (config_message says why). */
static size_t
sim_total(void)
{
    const char *v = getenv("PYGPU_SIM_MEMORY");
    size_t total;
    if (v == NULL || *v == '\0') {
        return (size_t)4 << 30;
    }
    total = parse_size(v);
    if (total == 0) {
        snprintf(config_message, sizeof(config_message),
                 "PYGPU_SIM_MEMORY is '%.100s', which is not a size pygpu understands: "
                 "give a positive whole number of bytes, optionally with a unit "
                 "(K, M, G or T, with or without B or iB, any case; all powers of "
                 "1024), at most %zu bytes; e.g. 8G, 512MiB, 1.5GB or 1073741824",
                 v, (size_t)SIZE_MAX);
    }
    return total;
}

/* PYGPU_SIM_DEVICES, else 1; 0 if the setting is not understood. */
static int
sim_devices(void)
{
    const char *v = getenv("PYGPU_SIM_DEVICES");
    const char *p = v;
    long n = 0;
    int digits = 0;
    if (v == NULL || *v == '\0') {
        return 1;
    }
    while (is_space(*p)) {
        p++;
    }
    for (; *p >= '0' && *p <= '9' && n <= PG_MAX_DEVICES; p++, digits++) {
        n = n * 10 + (*p - '0');
    }
    while (is_space(*p)) {
        p++;
    }
    if (digits == 0 || *p != '\0' || n < 1 || n > PG_MAX_DEVICES) {
        snprintf(config_message, sizeof(config_message),
                 "PYGPU_SIM_DEVICES is '%.100s'; give a whole number of simulated "
                 "devices from 1 to %d (pygpu uses at most %d devices)",
                 v, PG_MAX_DEVICES, PG_MAX_DEVICES);
        return 0;
    }
    return (int)n;
}

/* PYGPU_SIM_PEER: 1 (the default) if every pair of simulated devices can
 * have peer access, 0 if none can; -1 if the setting is not understood. */
static int
sim_peer_setting(void)
{
    const char *v = getenv("PYGPU_SIM_PEER");
    const char *p = v;
    int value;
    if (v == NULL || *v == '\0') {
        return 1;
    }
    while (is_space(*p)) {
        p++;
    }
    value = *p == '0' ? 0 : *p == '1' ? 1 : -1;
    if (value >= 0) {
        p++;
    }
    while (is_space(*p)) {
        p++;
    }
    if (value < 0 || *p != '\0') {
        snprintf(config_message, sizeof(config_message),
                 "PYGPU_SIM_PEER is '%.100s'; give 1 (every pair of simulated devices "
                 "can have peer access, the default) or 0 (no pair can: a kernel may "
                 "touch only its own device's memory), e.g. PYGPU_SIM_PEER=0",
                 v);
        return -1;
    }
    return value;
}

/* The settings are checked whenever the devices are counted, which the
 * first operation does (the backend gate), so that a bad one is reported
 * there, as a ValueError. */
static pg_err
sim_device_count(int *count)
{
    config_message[0] = '\0';
    *count = sim_devices();
    if (*count == 0 || sim_total() == 0 || sim_peer_setting() < 0) {
        *count = 0;
        return PG_ERR_CONFIGURATION;
    }
    return PG_SUCCESS;
}

static pg_err
sim_get_props(int device, pg_device_props *p)
{
    int n = 0;
    (void)sim_device_count(&n);
    if (device < 0 || device >= n) {
        return PG_ERR_INVALID_DEVICE;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "pygpu simulator (CPU)");
    snprintf(p->pci_bus_id, sizeof(p->pci_bus_id), "0000:00:%02x.0", device);
    p->major = 9;
    p->minor = 0;
    p->total_memory = sim_total();
    p->multiprocessor_count = cpus > 0 ? (int)cpus : 1;
    p->warp_size = 32;
    p->max_threads_per_block = 1024;
    p->max_block_dim[0] = 1024;
    p->max_block_dim[1] = 1024;
    p->max_block_dim[2] = 64;
    p->max_grid_dim[0] = 2147483647;
    p->max_grid_dim[1] = 65535;
    p->max_grid_dim[2] = 65535;
    p->shared_memory_per_block = 48 * 1024;
    p->shared_memory_per_block_optin = 48 * 1024;
    p->shared_memory_per_multiprocessor = 48 * 1024;
    p->max_threads_per_multiprocessor = 1024;
    p->registers_per_block = 65536;
    p->total_constant_memory = 64 * 1024;
    p->concurrent_kernels = 0;
    p->async_engine_count = 0;
    p->unified_addressing = 1;
    p->integrated = 1;
    p->cooperative_launch = 1;
    return PG_SUCCESS;
}

static pg_err
sim_set_device(int device)
{
    int n = 0;
    (void)sim_device_count(&n);
    if (device < 0 || device >= n) {
        return PG_ERR_INVALID_DEVICE;
    }
    sim_current = device;
    return PG_SUCCESS;
}

static pg_err
sim_get_device(int *device)
{
    *device = sim_current;
    return PG_SUCCESS;
}

static pg_err
sim_mem_get_info(size_t *free_bytes, size_t *total_bytes)
{
    size_t total = sim_total();
    size_t used = atomic_load(&sim_used[sim_current]);
    *total_bytes = total;
    *free_bytes = used < total ? total - used : 0;
    return PG_SUCCESS;
}

/* The live allocations, sorted by address, so that pointer_range can tell
 * whether foreign memory lies inside one (binary search). */
typedef struct {
    uintptr_t base;
    size_t size;
    int device;
    int written;  /* by a copy, a memset or a kernel: not uninitialized memory */
    void *module; /* a module's variable (get_global): its module; else NULL */
} sim_range;

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static sim_range *live;
static size_t n_live, cap_live;

/* The index of the last allocation starting at or below p, or n_live. */
static size_t
live_find(uintptr_t p)
{
    size_t lo = 0, hi = n_live;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (live[mid].base <= p) {
            lo = mid + 1;
        }
        else {
            hi = mid;
        }
    }
    return lo == 0 ? n_live : lo - 1;
}

static int
live_add(void *ptr, size_t size, int device)
{
    uintptr_t p = (uintptr_t)ptr;
    size_t at;
    pthread_mutex_lock(&live_lock);
    if (n_live == cap_live) {
        size_t cap = cap_live ? 2 * cap_live : 64;
        sim_range *grown = realloc(live, cap * sizeof(*live));
        if (grown == NULL) {
            pthread_mutex_unlock(&live_lock);
            return -1;
        }
        live = grown;
        cap_live = cap;
    }
    at = live_find(p);
    at = at == n_live ? 0 : at + 1;
    memmove(&live[at + 1], &live[at], (n_live - at) * sizeof(*live));
    live[at] = (sim_range){p, size, device, 0, NULL};
    n_live++;
    pthread_mutex_unlock(&live_lock);
    return 0;
}

static void
live_remove(void *ptr)
{
    size_t at;
    pthread_mutex_lock(&live_lock);
    at = live_find((uintptr_t)ptr);
    if (at < n_live && live[at].base == (uintptr_t)ptr) {
        memmove(&live[at], &live[at + 1], (n_live - at - 1) * sizeof(*live));
        n_live--;
    }
    pthread_mutex_unlock(&live_lock);
}

static int
sim_pointer_range(const void *ptr, void **base, size_t *size)
{
    uintptr_t p = (uintptr_t)ptr;
    int found = -1;
    size_t at;
    pthread_mutex_lock(&live_lock);
    at = live_find(p);
    if (at < n_live && p - live[at].base < live[at].size) {
        *base = (void *)live[at].base;
        *size = live[at].size;
        found = 0;
    }
    pthread_mutex_unlock(&live_lock);
    return found;
}

/* For the checking mode's reads of uninitialized memory: an allocation is
 * written once a copy, a memset or a kernel (any launch it was an argument
 * of) may have written it; until then its bytes are undefined, as cudaMalloc's
 * are. Coarse (the whole allocation at the first write), so that it never
 * calls written memory uninitialized; the checking module follows the bytes
 * its own launch writes. */
void pg_sim_mark_written(const void *ptr);

void
pg_sim_mark_written(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    size_t at;
    pthread_mutex_lock(&live_lock);
    at = live_find(p);
    if (at < n_live && p - live[at].base < live[at].size) {
        live[at].written = 1;
    }
    pthread_mutex_unlock(&live_lock);
}

/* A cached block that the pool hands out again: unwritten, as a new
 * allocation is (pool.c). */
static void
sim_mark_unwritten(void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    size_t at;
    pthread_mutex_lock(&live_lock);
    at = live_find(p);
    if (at < n_live && p - live[at].base < live[at].size && live[at].module == NULL) {
        live[at].written = 0;
    }
    pthread_mutex_unlock(&live_lock);
}

/* 0 if ptr lies in an allocation that nothing has written yet; else 1 */
int pg_sim_written(const void *ptr);

int
pg_sim_written(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    int written = 1;
    size_t at;
    pthread_mutex_lock(&live_lock);
    at = live_find(p);
    if (at < n_live && p - live[at].base < live[at].size) {
        written = live[at].written;
    }
    pthread_mutex_unlock(&live_lock);
    return written;
}

/* The device of the live allocation that holds ptr, or -1. */
static int
sim_pointer_device(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    int device = -1;
    size_t at;
    pthread_mutex_lock(&live_lock);
    at = live_find(p);
    if (at < n_live && p - live[at].base < live[at].size) {
        device = live[at].device;
    }
    pthread_mutex_unlock(&live_lock);
    return device;
}

/* PYGPU_SIM_LEAKS=1: a report of what is still held at exit (report_leaks,
 * with the page-locked memory below), set up by the first allocation. */
static void report_leaks(void);
static pthread_once_t leaks_once = PTHREAD_ONCE_INIT;

static void
register_leak_report(void)
{
    const char *v = getenv("PYGPU_SIM_LEAKS");
    if (v != NULL && v[0] != '\0' && v[0] != '0') {
        (void)atexit(report_leaks);
    }
}

static pg_err
sim_malloc(void **ptr, size_t size)
{
    pthread_once(&leaks_once, register_leak_report);
    *ptr = NULL;
    size_t total = sim_total();
    if (size > total || size > SIZE_MAX - 2 * SIM_HEADER) {
        return PG_ERR_MEMORY_ALLOCATION;
    }
    size_t used = atomic_fetch_add(&sim_used[sim_current], size);
    if (used + size > total) {
        atomic_fetch_sub(&sim_used[sim_current], size);
        return PG_ERR_MEMORY_ALLOCATION;
    }
    size_t rounded = (size + SIM_HEADER + SIM_HEADER - 1) / SIM_HEADER * SIM_HEADER;
    char *block = aligned_alloc(SIM_HEADER, rounded);
    if (block == NULL) {
        atomic_fetch_sub(&sim_used[sim_current], size);
        return PG_ERR_MEMORY_ALLOCATION;
    }
    sim_header *h = (sim_header *)block;
    h->tag = SIM_TAG;
    h->size = size;
    h->device = sim_current;
    if (live_add(block + SIM_HEADER, size, sim_current) < 0) {
        free(block);
        atomic_fetch_sub(&sim_used[sim_current], size);
        return PG_ERR_MEMORY_ALLOCATION;
    }
    *ptr = block + SIM_HEADER;
    return PG_SUCCESS;
}

static pg_err
sim_free(void *ptr)
{
    if (ptr == NULL) {
        return PG_SUCCESS;
    }
    sim_header *h = (sim_header *)((char *)ptr - SIM_HEADER);
    if (h->tag != SIM_TAG) {
        return PG_ERR_INVALID_VALUE;
    }
    h->tag = 0;
    live_remove(ptr);
    atomic_fetch_sub(&sim_used[h->device], h->size);
    free(h);
    return PG_SUCCESS;
}

/* ---- several devices: peer access ------------------------------------------ */

/* Whether kernels on device a may touch device b's memory (enabled by
 * enable_peer_access(a, b)); and, per thread, the pair of the last launch
 * refused for want of it. */
static _Atomic unsigned char sim_peer[PG_MAX_DEVICES][PG_MAX_DEVICES];
static _Thread_local int fault_device = -1, fault_peer = -1;

static int
valid_device(int device)
{
    int n = 0;
    (void)sim_device_count(&n);
    return device >= 0 && device < n;
}

/* As CUDA: no device is its own peer; PYGPU_SIM_PEER=0 refuses every pair. */
static pg_err
sim_can_access_peer(int device, int peer, int *can)
{
    *can = 0;
    if (!valid_device(device) || !valid_device(peer)) {
        return PG_ERR_INVALID_DEVICE;
    }
    *can = device != peer && sim_peer_setting() == 1;
    return PG_SUCCESS;
}

static pg_err
sim_enable_peer_access(int device, int peer)
{
    if (!valid_device(device) || !valid_device(peer) || device == peer) {
        return PG_ERR_INVALID_DEVICE;
    }
    if (sim_peer_setting() != 1) {
        return PG_ERR_PEER_ACCESS_UNSUPPORTED;
    }
    atomic_store(&sim_peer[device][peer], 1);
    return PG_SUCCESS;
}

pg_err
pg_sim_check_access(const void *ptr)
{
    int owner = ptr != NULL ? sim_pointer_device(ptr) : -1;
    if (owner < 0 || owner == sim_current ||
        atomic_load(&sim_peer[sim_current][owner])) {
        return PG_SUCCESS;
    }
    fault_device = sim_current;
    fault_peer = owner;
    return PG_ERR_PEER_ACCESS_NOT_ENABLED;
}

static int
sim_access_fault(int *device, int *peer)
{
    if (fault_device < 0) {
        return -1;
    }
    *device = fault_device;
    *peer = fault_peer;
    return 0;
}

static pg_err
copy_bytes(void *dst, const void *src, size_t size)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (size == 0) {
        return PG_SUCCESS;
    }
    pg_sim_mark_written(dst);
    if (d + size <= s || s + size <= d) {
        pg_host_memcpy(dst, src, size); /* large copies on several threads */
    }
    else {
        memmove(dst, src, size);
    }
    return PG_SUCCESS;
}

static pg_err
set_bytes(void *ptr, int value, size_t size)
{
    if (size > 0) {
        pg_sim_mark_written(ptr);
        memset(ptr, value, size);
    }
    return PG_SUCCESS;
}

/* Synchronous copies and memsets are refused on a thread that captures a
 * stream, as every wait is (capture.c): inside `with cuda.graph()` they would
 * run at once among work that is only recorded. */
static pg_err
sim_memcpy(void *dst, const void *src, size_t size, int kind)
{
    (void)kind;
    if (pg_capture_thread()) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return copy_bytes(dst, src, size);
}

static pg_err
sim_memset(void *ptr, int value, size_t size)
{
    if (pg_capture_thread()) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return set_bytes(ptr, value, size);
}

static pg_err
sim_synchronize(void)
{
    /* a device with a stream under capture cannot be waited for (on CUDA the
     * wait would invalidate the capture) */
    if (pg_capture_thread() || pg_capture_device(sim_current)) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return PG_SUCCESS; /* every launch and copy has finished when it returns */
}

static pg_err
sim_get_last_error(void)
{
    return PG_SUCCESS; /* launches report their errors when they return */
}

/* ---- streams and CUDA graphs -------------------------------------------------- */

/* Streams: work runs in order, at once, so a stream is only a handle, and
 * the graph its work goes to while it is captured (pg_sim_stream). A graph
 * is a list of nodes, run in order by each launch of it on the device it was
 * captured on; the graph and its one instance (the same object here) share
 * it. */
struct pg_sim_graph {
    pthread_mutex_t lock; /* for appends from several threads */
    pg_sim_node *first, *last;
    size_t count;
    int device;
    int refs; /* the captured graph and its instance */
};

static void
graph_release(pg_sim_graph *g)
{
    int last;
    pthread_mutex_lock(&g->lock);
    last = --g->refs == 0;
    pthread_mutex_unlock(&g->lock);
    if (!last) {
        return;
    }
    for (pg_sim_node *n = g->first, *next; n != NULL; n = next) {
        next = n->next;
        n->destroy(n);
    }
    pthread_mutex_destroy(&g->lock);
    free(g);
}

void
pg_sim_capture_add(pg_sim_graph *g, pg_sim_node *node)
{
    node->next = NULL;
    pthread_mutex_lock(&g->lock);
    if (g->last != NULL) {
        g->last->next = node;
    }
    else {
        g->first = node;
    }
    g->last = node;
    g->count++;
    pthread_mutex_unlock(&g->lock);
}

/* The live streams, so that a handle from outside (an interop protocol's
 * stream number, an object's __cuda_stream__) is checked before it is read:
 * here a handle is a pointer. */
static struct {
    pthread_mutex_t lock;
    pg_stream *live;
    size_t count, cap;
} sim_streams = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static int
sim_stream_known(pg_stream stream)
{
    int found = 0;
    pthread_mutex_lock(&sim_streams.lock);
    for (size_t i = 0; i < sim_streams.count && !found; i++) {
        found = sim_streams.live[i] == stream;
    }
    pthread_mutex_unlock(&sim_streams.lock);
    return found;
}

static pg_err
sim_stream_create(pg_stream *stream)
{
    pg_sim_stream *s = calloc(1, sizeof(pg_sim_stream));
    pg_err err = PG_SUCCESS;
    if (s == NULL) {
        return PG_ERR_MEMORY_ALLOCATION;
    }
    pthread_mutex_lock(&sim_streams.lock);
    if (sim_streams.count == sim_streams.cap) {
        size_t cap = sim_streams.cap ? 2 * sim_streams.cap : 16;
        pg_stream *live = realloc(sim_streams.live, cap * sizeof(pg_stream));
        if (live == NULL) {
            err = PG_ERR_MEMORY_ALLOCATION;
        }
        else {
            sim_streams.live = live;
            sim_streams.cap = cap;
        }
    }
    if (err == PG_SUCCESS) {
        sim_streams.live[sim_streams.count++] = s;
    }
    pthread_mutex_unlock(&sim_streams.lock);
    if (err != PG_SUCCESS) {
        free(s);
        return err;
    }
    *stream = s;
    return PG_SUCCESS;
}

static pg_err
sim_stream_destroy(pg_stream stream)
{
    pg_sim_stream *s = stream;
    pthread_mutex_lock(&sim_streams.lock);
    for (size_t i = 0; i < sim_streams.count; i++) {
        if (sim_streams.live[i] == stream) {
            sim_streams.live[i] = sim_streams.live[--sim_streams.count];
            break;
        }
    }
    pthread_mutex_unlock(&sim_streams.lock);
    if (s->capture != NULL) { /* a capture never ended: dropped */
        pg_capture_end(stream);
        graph_release(s->capture);
    }
    free(stream);
    return PG_SUCCESS;
}

static pg_err
sim_stream_synchronize(pg_stream stream)
{
    if (pg_sim_capture_of(stream) != NULL || pg_capture_thread()) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return PG_SUCCESS; /* everything queued has already run */
}

static pg_err
sim_stream_query(pg_stream stream)
{
    return pg_sim_capture_of(stream) != NULL ? PG_ERR_STREAM_CAPTURE_UNSUPPORTED
                                             : PG_SUCCESS;
}

/* A stream under capture neither waits for events nor records them: a
 * capture records one stream's work alone. */
static pg_err
sim_stream_wait_event(pg_stream stream, pg_event event)
{
    (void)event;
    return pg_sim_capture_of(stream) != NULL ? PG_ERR_STREAM_CAPTURE_UNSUPPORTED
                                             : PG_SUCCESS;
}

static pg_err
sim_stream_begin_capture(pg_stream stream)
{
    pg_sim_stream *s = stream;
    pg_sim_graph *g;
    pg_err err;
    if (s == NULL || s->capture != NULL) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if ((g = calloc(1, sizeof(pg_sim_graph))) == NULL) {
        return PG_ERR_MEMORY_ALLOCATION;
    }
    if ((err = pg_capture_begin(stream, sim_current)) != PG_SUCCESS) {
        free(g);
        return err;
    }
    pthread_mutex_init(&g->lock, NULL);
    g->device = sim_current;
    g->refs = 1;
    s->capture = g;
    return PG_SUCCESS;
}

static pg_err
sim_stream_end_capture(pg_stream stream, pg_graph *graph)
{
    pg_sim_stream *s = stream;
    *graph = NULL;
    if (s == NULL || s->capture == NULL) {
        return PG_ERR_INVALID_VALUE;
    }
    pg_capture_end(stream);
    *graph = s->capture;
    s->capture = NULL;
    return PG_SUCCESS;
}

static pg_err
sim_graph_node_count(pg_graph graph, size_t *count)
{
    *count = ((pg_sim_graph *)graph)->count;
    return PG_SUCCESS;
}

static pg_err
sim_graph_instantiate(pg_graph_exec *exec, pg_graph graph)
{
    pg_sim_graph *g = graph;
    pthread_mutex_lock(&g->lock);
    g->refs++;
    pthread_mutex_unlock(&g->lock);
    *exec = g;
    return PG_SUCCESS;
}

static pg_err
sim_graph_destroy(pg_graph graph)
{
    graph_release(graph);
    return PG_SUCCESS;
}

/* The nodes in order, on the graph's device; the first failure stops it (a
 * kernel's, with its message kept as for any launch). */
static pg_err
sim_graph_launch(pg_graph_exec exec, pg_stream stream)
{
    pg_sim_graph *g = exec;
    pg_err err = PG_SUCCESS;
    int prev = sim_current;
    if (pg_sim_capture_of(stream) != NULL) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    sim_current = g->device;
    for (pg_sim_node *n = g->first; n != NULL && err == PG_SUCCESS; n = n->next) {
        err = n->run(n);
    }
    sim_current = prev;
    return err;
}

/* A copy or memset recorded by a capture. */
typedef struct {
    pg_sim_node head;
    void *dst;
    const void *src; /* NULL: a memset of `value` */
    size_t size;
    int value;
} bytes_node;

static pg_err
bytes_node_run(pg_sim_node *node)
{
    bytes_node *b = (bytes_node *)node;
    return b->src != NULL ? copy_bytes(b->dst, b->src, b->size)
                          : set_bytes(b->dst, b->value, b->size);
}

static void
node_free(pg_sim_node *node)
{
    free(node);
}

static pg_err
record_bytes(pg_sim_graph *g, void *dst, const void *src, size_t size, int value)
{
    bytes_node *b = malloc(sizeof(bytes_node));
    if (b == NULL) {
        return PG_ERR_MEMORY_ALLOCATION;
    }
    b->head.run = bytes_node_run;
    b->head.destroy = node_free;
    b->dst = dst;
    b->src = src;
    b->size = size;
    b->value = value;
    pg_sim_capture_add(g, &b->head);
    return PG_SUCCESS;
}

/* Events: the host time at which they were recorded, so that elapsed times
 * measure the (synchronous) simulated work honestly. */
typedef struct {
    double seconds;
    int recorded;
    int timing;
} sim_event;

static pg_err
sim_event_create(pg_event *event, int timing)
{
    sim_event *e = calloc(1, sizeof(sim_event));
    if (e == NULL) {
        return PG_ERR_MEMORY_ALLOCATION;
    }
    e->timing = timing;
    *event = e;
    return PG_SUCCESS;
}

static pg_err
sim_event_destroy(pg_event event)
{
    free(event);
    return PG_SUCCESS;
}

static pg_err
sim_event_record(pg_event event, pg_stream stream)
{
    struct timespec ts;
    sim_event *e = event;
    if (pg_sim_capture_of(stream) != NULL) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    e->seconds = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    e->recorded = 1;
    return PG_SUCCESS;
}

static pg_err
sim_event_query(pg_event event)
{
    (void)event;
    return PG_SUCCESS;
}

static pg_err
sim_event_synchronize(pg_event event)
{
    (void)event;
    return pg_capture_thread() ? PG_ERR_STREAM_CAPTURE_UNSUPPORTED : PG_SUCCESS;
}

static pg_err
sim_event_elapsed_ms(float *ms, pg_event start, pg_event end)
{
    sim_event *a = start, *b = end;
    if (!a->recorded || !b->recorded || !a->timing || !b->timing) {
        return PG_ERR_INVALID_RESOURCE_HANDLE;
    }
    *ms = (float)((b->seconds - a->seconds) * 1e3);
    return PG_SUCCESS;
}

/* On a stream under capture, a device-to-device copy is recorded; a copy
 * between host and device is refused (it would have to wait for the host). */
static pg_err
sim_memcpy_async(void *dst, const void *src, size_t size, int kind, pg_stream stream)
{
    pg_sim_graph *g = pg_sim_capture_of(stream);
    if (g != NULL) {
        return kind == PG_MEMCPY_D2D ? record_bytes(g, dst, src, size, 0)
                                     : PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return copy_bytes(dst, src, size);
}

/* One host memory holds every device's: a copy between two is a memcpy, as
 * with CUDA's unified addressing. Not captured: a copy between devices orders
 * the streams of both, which a capture of one stream cannot record. */
static pg_err
sim_memcpy_peer_async(void *dst, int dst_device, const void *src, int src_device,
                      size_t size, pg_stream stream)
{
    if (!valid_device(dst_device) || !valid_device(src_device)) {
        return PG_ERR_INVALID_DEVICE;
    }
    if (pg_sim_capture_of(stream) != NULL) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return copy_bytes(dst, src, size);
}

static pg_err
sim_memset_async(void *ptr, int value, size_t size, pg_stream stream)
{
    pg_sim_graph *g = pg_sim_capture_of(stream);
    if (g != NULL) {
        return record_bytes(g, ptr, NULL, size, value);
    }
    return set_bytes(ptr, value, size);
}

/* Page-locked memory is ordinary memory here, but remembered, so that
 * is_pinned answers as it would on a GPU. */
static pthread_mutex_t pinned_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pinned_range {
    char *ptr;
    size_t size;
} * pinned;
static size_t n_pinned, cap_pinned;

static pg_err
sim_host_alloc(void **ptr, size_t size)
{
    pthread_once(&leaks_once, register_leak_report);
    size_t rounded = (size + 4095) / 4096 * 4096;
    *ptr = aligned_alloc(4096, rounded > 0 ? rounded : 4096);
    if (*ptr == NULL) {
        return PG_ERR_MEMORY_ALLOCATION;
    }
    pthread_mutex_lock(&pinned_lock);
    if (n_pinned == cap_pinned) {
        size_t cap = cap_pinned ? 2 * cap_pinned : 16;
        struct pinned_range *grown = realloc(pinned, cap * sizeof(*pinned));
        if (grown == NULL) {
            pthread_mutex_unlock(&pinned_lock);
            free(*ptr);
            *ptr = NULL;
            return PG_ERR_MEMORY_ALLOCATION;
        }
        pinned = grown;
        cap_pinned = cap;
    }
    pinned[n_pinned].ptr = *ptr;
    pinned[n_pinned].size = rounded;
    n_pinned++;
    pthread_mutex_unlock(&pinned_lock);
    return PG_SUCCESS;
}

static pg_err
sim_host_free(void *ptr)
{
    pthread_mutex_lock(&pinned_lock);
    for (size_t i = 0; i < n_pinned; i++) {
        if (pinned[i].ptr == ptr) {
            pinned[i] = pinned[--n_pinned];
            break;
        }
    }
    pthread_mutex_unlock(&pinned_lock);
    free(ptr);
    return PG_SUCCESS;
}

/* The page-locked allocation that holds ptr: 0 with its *base and *size, or -1. */
static int
pinned_range(const void *ptr, void **base, size_t *size)
{
    int found = -1;
    pthread_mutex_lock(&pinned_lock);
    for (size_t i = 0; i < n_pinned && found < 0; i++) {
        if ((const char *)ptr >= pinned[i].ptr &&
            (const char *)ptr < pinned[i].ptr + pinned[i].size) {
            *base = pinned[i].ptr;
            *size = pinned[i].size;
            found = 0;
        }
    }
    pthread_mutex_unlock(&pinned_lock);
    return found;
}

static int
sim_is_pinned(const void *ptr)
{
    void *base;
    size_t size;
    return pinned_range(ptr, &base, &size) == 0;
}

/* ---- PYGPU_SIM_LEAKS: what is still held at exit --------------------------- */

/* With PYGPU_SIM_LEAKS=1, the end of the process (the C runtime's exit
 * handlers, which run after the interpreter finalized) reports on stderr the
 * device and page-locked allocations still held, as compute-sanitizer
 * --leak-check full does on a GPU, in one line that tests read:
 *     pygpu simulator: 0 device allocations (0 bytes) and 0 page-locked
 *     allocations (0 bytes) held at exit
 * (on one line), then a line for each of the first allocations. A module's
 * variables are not counted: they go with the module, as on a GPU. */
static void
report_leaks(void)
{
    size_t n_device = 0, device_bytes = 0, pinned_bytes = 0, shown = 0;
    pthread_mutex_lock(&live_lock);
    pthread_mutex_lock(&pinned_lock);
    for (size_t i = 0; i < n_live; i++) {
        if (live[i].module == NULL) {
            n_device++;
            device_bytes += live[i].size;
        }
    }
    for (size_t i = 0; i < n_pinned; i++) {
        pinned_bytes += pinned[i].size;
    }
    fprintf(stderr,
            "pygpu simulator: %zu device allocations (%zu bytes) and %zu page-locked "
            "allocations (%zu bytes) held at exit\n",
            n_device, device_bytes, n_pinned, pinned_bytes);
    for (size_t i = 0; i < n_live && shown < 20; i++) {
        if (live[i].module == NULL) {
            fprintf(stderr, "    %zu bytes of device %d at %p\n", live[i].size,
                    live[i].device, (void *)live[i].base);
            shown++;
        }
    }
    for (size_t i = 0; i < n_pinned && shown < 20; i++, shown++) {
        fprintf(stderr, "    %zu bytes of page-locked memory at %p\n", pinned[i].size,
                (void *)pinned[i].ptr);
    }
    pthread_mutex_unlock(&pinned_lock);
    pthread_mutex_unlock(&live_lock);
}

/* The live allocation, device or page-locked memory, that holds ptr. */
int
pg_sim_find_range(const void *ptr, void **base, size_t *size)
{
    return sim_pointer_range(ptr, base, size) == 0 ? 0 : pinned_range(ptr, base, size);
}

/* The arrays that the next launch's arguments came from (this thread's). */
#define SIM_MAX_SPANS 64
static _Thread_local int n_spans;
static _Thread_local const void *span_lo[SIM_MAX_SPANS], *span_hi[SIM_MAX_SPANS];

void
pg_sim_set_arg_spans(int n, char *const *lo, char *const *hi)
{
    n_spans = n < SIM_MAX_SPANS ? n : SIM_MAX_SPANS;
    for (int i = 0; i < n_spans; i++) {
        span_lo[i] = lo[i];
        span_hi[i] = hi[i];
    }
}

int
pg_sim_arg_span(int i, const void **lo, const void **hi)
{
    if (i < 0 || i >= n_spans || span_lo[i] == NULL) {
        return -1;
    }
    *lo = span_lo[i];
    *hi = span_hi[i];
    return 0;
}

/* ---- the Python side's hooks, for sim_exec.h's block runner ---------------- */

static const pg_python_hooks *_Atomic python_hooks;

static void
sim_set_python_hooks(const pg_python_hooks *hooks)
{
    atomic_store(&python_hooks, hooks);
}

int
pg_sim_interrupt_pending(void)
{
    const pg_python_hooks *h = atomic_load(&python_hooks);
    return h != NULL && h->pending();
}

int
pg_sim_interrupt_handle(void)
{
    const pg_python_hooks *h = atomic_load(&python_hooks);
    return h != NULL && h->handle();
}

void
pg_sim_output(const char *text, size_t size)
{
    const pg_python_hooks *h = atomic_load(&python_hooks);
    if (h != NULL && h->output != NULL) {
        h->output(text, size);
    }
    else {
        fwrite(text, 1, size, stdout);
        fflush(stdout);
    }
}

/* A failed kernel's story, for the exception (kernel_fault) */
static _Thread_local char fault_message[1024];
static _Thread_local int fault_pending;

void
pg_sim_set_fault(const char *message)
{
    snprintf(fault_message, sizeof(fault_message), "%s", message);
    fault_pending = 1;
}

static const char *
sim_kernel_fault(void)
{
    if (!fault_pending) {
        return NULL;
    }
    fault_pending = 0;
    return fault_message;
}

/* Kernels compiled at run time: shared objects that the host C++ compiler
 * made from CUDA C and pygpu/sim_prelude.h (pygpu/rawkernel.py compiles
 * them). A module is the dlopen handle; a function is the module's
 * pg_sim_kernel, which knows its parameters from the kernel's C++ type and
 * runs the grid on the block runner of kernels.cu (pg_sim_hosted). */
static pg_err
sim_module_load(void **module, const void *image)
{
    int (*attach)(const pg_sim_host *);
    const char *(*refusal)(void);
    const char *why;
    void *handle = dlopen((const char *)image, RTLD_NOW | RTLD_LOCAL);
    *module = NULL;
    if (handle == NULL) {
        return PG_ERR_INVALID_KERNEL_IMAGE;
    }
    /* what a GPU's compiler or driver would refuse (too much static shared
     * memory): refused here too, with the reason */
    *(void **)&refusal = dlsym(handle, "pg_sim_module_refusal");
    if (refusal != NULL && (why = refusal()) != NULL) {
        char message[1024];
        snprintf(message, sizeof(message), "the kernel image is refused: %s", why);
        pg_sim_set_fault(message);
        dlclose(handle);
        return PG_ERR_LAUNCH_FAILURE;
    }
    *(void **)&attach = dlsym(handle, "pg_sim_module_attach");
    if (attach == NULL || attach(&pg_sim_hosted) != 0) {
        dlclose(handle);
        return PG_ERR_INVALID_KERNEL_IMAGE;
    }
    *module = handle;
    return PG_SUCCESS;
}

/* The ranges of a module's variables (get_global) leave the live
 * allocations with the module. */
static void
live_remove_module(void *module)
{
    size_t kept = 0;
    pthread_mutex_lock(&live_lock);
    for (size_t i = 0; i < n_live; i++) {
        if (live[i].module != module) {
            live[kept++] = live[i];
        }
    }
    n_live = kept;
    pthread_mutex_unlock(&live_lock);
}

static pg_err
sim_module_unload(void *module)
{
    live_remove_module(module);
    return dlclose(module) == 0 ? PG_SUCCESS : PG_ERR_INVALID_RESOURCE_HANDLE;
}

/* A module's __device__ or __constant__ variable: its address and bytes,
 * from the module's own pg_sim_module_global (rawkernel.py writes one per
 * module). Its range joins the live allocations, of the current device, as
 * written memory (its initializer, or zeros), so that a DeviceArray can view
 * it (pointer_device, pointer_range) and kernels may take it. */
static pg_err
sim_module_global(void **ptr, size_t *size, void *module, const char *name)
{
    void *(*find)(const char *, size_t *);
    void *p;
    size_t bytes = 0, at;
    *(void **)&find = dlsym(module, "pg_sim_module_global");
    *ptr = NULL;
    *size = 0;
    if (find == NULL || (p = find(name, &bytes)) == NULL) {
        return PG_ERR_NOT_FOUND;
    }
    pthread_mutex_lock(&live_lock);
    at = live_find((uintptr_t)p);
    int known = at < n_live && (uintptr_t)p - live[at].base < live[at].size;
    pthread_mutex_unlock(&live_lock);
    if (!known) {
        if (live_add(p, bytes, sim_current) < 0) {
            return PG_ERR_MEMORY_ALLOCATION;
        }
        pthread_mutex_lock(&live_lock);
        at = live_find((uintptr_t)p);
        live[at].written = 1;
        live[at].module = module;
        pthread_mutex_unlock(&live_lock);
    }
    *ptr = p;
    *size = bytes;
    return PG_SUCCESS;
}

static pg_err
sim_module_function(void **function, void *module, const char *name)
{
    const pg_sim_kernel *(*find)(const char *);
    *(void **)&find = dlsym(module, "pg_sim_module_kernel");
    *function = find != NULL ? (void *)find(name) : NULL;
    return *function != NULL ? PG_SUCCESS : PG_ERR_NOT_FOUND;
}

static pg_err
sim_function_param(void *function, size_t index, size_t *offset, size_t *size)
{
    const pg_sim_kernel *k = function;
    *offset = *size = 0;
    if (index >= (size_t)k->nparams) {
        return PG_ERR_INVALID_VALUE;
    }
    for (size_t i = 0; i <= index; i++) { /* each at its size's alignment */
        size_t align = k->sizes[i] >= 8 ? 8 : k->sizes[i] >= 4 ? 4 : 1;
        *offset = (*offset + *size + align - 1) / align * align;
        *size = k->sizes[i];
    }
    return PG_SUCCESS;
}

/* A user kernel's launch recorded by a capture: its parameters' bytes
 * (copied, as cuLaunchKernel copies them), and the arrays its arguments came
 * from, for the checking mode. */
typedef struct {
    pg_sim_node head;
    const pg_sim_kernel *k;
    pg_dim3 grid, block;
    unsigned int shared_bytes, flags;
    int n_spans;
    char **spans; /* n_spans lows, then n_spans highs */
    void **params;
} launch_node;

/* A user kernel's launch, after which its arguments' arrays count as
 * written (pg_sim_mark_written). */
static pg_err
launch_user_kernel(const pg_sim_kernel *k, pg_dim3 grid, pg_dim3 block,
                   unsigned int shared_bytes, void **params, unsigned int flags)
{
    pg_err err = k->launch(k, grid, block, shared_bytes, params, flags);
    for (int i = 0; i < n_spans; i++) {
        if (span_lo[i] != NULL) {
            pg_sim_mark_written(span_lo[i]);
        }
    }
    return err;
}

static pg_err
launch_node_run(pg_sim_node *node)
{
    launch_node *l = (launch_node *)node;
    pg_sim_set_arg_spans(l->n_spans, l->spans, l->spans + l->n_spans);
    return launch_user_kernel(l->k, l->grid, l->block, l->shared_bytes, l->params,
                              l->flags);
}

static pg_err
record_launch(pg_sim_graph *g, const pg_sim_kernel *k, pg_dim3 grid, pg_dim3 block,
              unsigned int shared_bytes, void **params, unsigned int flags)
{
    size_t head = (sizeof(launch_node) + 15) / 16 * 16, bytes = 0, size;
    size_t ptrs = ((size_t)n_spans * 2 + (size_t)k->nparams) * sizeof(void *);
    launch_node *l;
    char *at;
    for (int i = 0; i < k->nparams; i++) {
        bytes += (k->sizes[i] + 15) / 16 * 16;
    }
    size = head + (ptrs + 15) / 16 * 16 + bytes;
    if ((l = malloc(size)) == NULL) {
        return PG_ERR_MEMORY_ALLOCATION;
    }
    l->head.run = launch_node_run;
    l->head.destroy = node_free;
    l->k = k;
    l->grid = grid;
    l->block = block;
    l->shared_bytes = shared_bytes;
    l->flags = flags;
    l->n_spans = n_spans;
    l->spans = (char **)((char *)l + head);
    l->params = (void **)(l->spans + 2 * n_spans);
    for (int i = 0; i < n_spans; i++) {
        l->spans[i] = (char *)span_lo[i];
        l->spans[n_spans + i] = (char *)span_hi[i];
    }
    at = (char *)l + head + (ptrs + 15) / 16 * 16;
    for (int i = 0; i < k->nparams; i++) {
        memcpy(at, params[i], k->sizes[i]);
        l->params[i] = at;
        at += (k->sizes[i] + 15) / 16 * 16;
    }
    pg_sim_capture_add(g, &l->head);
    return PG_SUCCESS;
}

static pg_err
launch_or_record(void *function, pg_dim3 grid, pg_dim3 block, unsigned int shared_bytes,
                 pg_stream stream, void **params, unsigned int flags)
{
    const pg_sim_kernel *k = function;
    pg_sim_graph *g = pg_sim_capture_of(stream);
    if (g != NULL) { /* its pointers are checked when it runs, as always */
        return record_launch(g, k, grid, block, shared_bytes, params, flags);
    }
    return launch_user_kernel(k, grid, block, shared_bytes, params,
                              flags); /* to its end */
}

static pg_err
sim_launch_function(void *function, pg_dim3 grid, pg_dim3 block,
                    unsigned int shared_bytes, pg_stream stream, void **params)
{
    return launch_or_record(function, grid, block, shared_bytes, stream, params, 0);
}

static pg_err
sim_launch_cooperative(void *function, pg_dim3 grid, pg_dim3 block,
                       unsigned int shared_bytes, pg_stream stream, void **params)
{
    return launch_or_record(function, grid, block, shared_bytes, stream, params,
                            PG_SIM_COOPERATIVE);
}

/* The simulated device's occupancy, as a GPU's is reckoned: blocks per SM
 * bounded by its threads (max_threads_per_multiprocessor), 32 blocks, and
 * its shared memory (the launch's dynamic shared memory), times the SMs (the
 * cores); and the runner's own bound on a
 * cooperative launch, PG_SIM_COOPERATIVE_THREADS threads in all (each keeps
 * a stack while the grid runs). */
static pg_err
sim_cooperative_max_blocks(void *function, pg_dim3 block, unsigned int shared_bytes,
                           int device, unsigned long long *blocks)
{
    pg_device_props p;
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    unsigned long long per_sm, shared = shared_bytes;
    pg_err err = sim_get_props(device, &p);
    (void)function;
    *blocks = 0;
    if (err != PG_SUCCESS) {
        return err;
    }
    if (threads == 0 || threads > (unsigned long long)p.max_threads_per_block) {
        return PG_SUCCESS;
    }
    per_sm = (unsigned long long)p.max_threads_per_multiprocessor / threads;
    per_sm = per_sm < 32 ? per_sm : 32;
    if (shared > 0) {
        unsigned long long fit = p.shared_memory_per_multiprocessor / shared;
        per_sm = fit < per_sm ? fit : per_sm;
    }
    *blocks = per_sm * (unsigned long long)p.multiprocessor_count;
    if (*blocks * threads > PG_SIM_COOPERATIVE_THREADS) {
        *blocks = PG_SIM_COOPERATIVE_THREADS / threads;
    }
    return PG_SUCCESS;
}

static const struct {
    pg_err code;
    const char *name;
    const char *text;
} sim_errors[] = {
    {PG_SUCCESS, "cudaSuccess", "no error"},
    {PG_ERR_INVALID_VALUE, "cudaErrorInvalidValue", "invalid argument"},
    {PG_ERR_MEMORY_ALLOCATION, "cudaErrorMemoryAllocation", "out of memory"},
    {PG_ERR_INITIALIZATION, "cudaErrorInitializationError", "initialization error"},
    {PG_ERR_INVALID_CONFIGURATION, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {PG_ERR_INSUFFICIENT_DRIVER, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {PG_ERR_NO_DEVICE, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {PG_ERR_INVALID_DEVICE, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {PG_ERR_NOT_READY, "cudaErrorNotReady", "device not ready"},
    {PG_ERR_LAUNCH_FAILURE, "cudaErrorLaunchFailure",
     "unspecified launch failure (simulator: barrier misuse in a kernel)"},
    {PG_ERR_ASSERT, "cudaErrorAssert", "device-side assert triggered"},
    {PG_ERR_ILLEGAL_ADDRESS, "cudaErrorIllegalAddress",
     "an illegal memory access was encountered"},
    {PG_ERR_HARDWARE_STACK_ERROR, "cudaErrorHardwareStackError",
     "hardware stack error"},
    {PG_ERR_ILLEGAL_INSTRUCTION, "cudaErrorIllegalInstruction",
     "an illegal instruction was encountered"},
    {PG_ERR_MISALIGNED_ADDRESS, "cudaErrorMisalignedAddress", "misaligned address"},
    {PG_ERR_COOPERATIVE_LAUNCH_TOO_LARGE, "cudaErrorCooperativeLaunchTooLarge",
     "too many blocks in cooperative launch"},
    {PG_ERR_NOT_SUPPORTED, "cudaErrorNotSupported", "operation not supported"},
    {PG_ERR_NOT_FOUND, "cudaErrorSymbolNotFound", "named symbol not found"},
    {PG_ERR_INVALID_KERNEL_IMAGE, "cudaErrorInvalidKernelImage",
     "device kernel image is invalid"},
    {PG_ERR_INVALID_RESOURCE_HANDLE, "cudaErrorInvalidResourceHandle",
     "invalid resource handle"},
    {PG_ERR_PEER_ACCESS_UNSUPPORTED, "cudaErrorPeerAccessUnsupported",
     "peer access is not supported between these two devices"},
    {PG_ERR_PEER_ACCESS_ALREADY_ENABLED, "cudaErrorPeerAccessAlreadyEnabled",
     "peer access is already enabled"},
    {PG_ERR_PEER_ACCESS_NOT_ENABLED, "cudaErrorPeerAccessNotEnabled",
     "peer access has not been enabled"},
    {PG_ERR_STREAM_CAPTURE_UNSUPPORTED, "cudaErrorStreamCaptureUnsupported",
     "operation not permitted when stream is capturing"},
    {PG_ERR_STREAM_CAPTURE_INVALIDATED, "cudaErrorStreamCaptureInvalidated",
     "operation failed due to a previous error during capture"},
    {PG_ERR_STREAM_CAPTURE_UNJOINED, "cudaErrorStreamCaptureUnjoined",
     "capture sequence contains a fork that was not joined to the primary stream"},
    {PG_ERR_STREAM_CAPTURE_IMPLICIT, "cudaErrorStreamCaptureImplicit",
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {PG_ERR_CAPTURED_EVENT, "cudaErrorCapturedEvent",
     "operation not permitted on an event last recorded in a capturing stream"},
    {PG_ERR_STREAM_CAPTURE_WRONG_THREAD, "cudaErrorStreamCaptureWrongThread",
     "attempt to terminate a thread-local capture sequence from another thread"},
    {PG_ERR_UNKNOWN, "cudaErrorUnknown", "unknown error"},
    {PG_ERR_INTERRUPTED, "pygpuErrorInterrupted", "interrupted by a signal"},
    {PG_ERR_CONFIGURATION, "pygpuErrorConfiguration",
     "an environment variable of the simulator is not understood"},
};

static const char *
sim_error_name(pg_err err)
{
    for (size_t i = 0; i < sizeof(sim_errors) / sizeof(sim_errors[0]); i++) {
        if (sim_errors[i].code == err) {
            return sim_errors[i].name;
        }
    }
    return "cudaErrorUnknown";
}

static const char *
sim_error_string(pg_err err)
{
    for (size_t i = 0; i < sizeof(sim_errors) / sizeof(sim_errors[0]); i++) {
        if (sim_errors[i].code == err) {
            return sim_errors[i].text;
        }
    }
    return "unknown error";
}

static int
sim_version(void)
{
    return 0;
}

static pg_err
sim_ensure_context(void)
{
    return PG_SUCCESS;
}

const pg_backend pg_sim_backend = {
    .name = "simulator",
    .caps = PG_CAP_SIMULATED | PG_CAP_HOST_MODULES,
    .ensure_context = sim_ensure_context,
    .device_count = sim_device_count,
    .get_props = sim_get_props,
    .set_device = sim_set_device,
    .get_device = sim_get_device,
    .mem_get_info = sim_mem_get_info,
    .malloc = sim_malloc,
    .free = sim_free,
    .memcpy = sim_memcpy,
    .memset = sim_memset,
    .synchronize = sim_synchronize,
    .get_last_error = sim_get_last_error,
    .stream_create = sim_stream_create,
    .stream_destroy = sim_stream_destroy,
    .stream_synchronize = sim_stream_synchronize,
    .stream_query = sim_stream_query,
    .stream_wait_event = sim_stream_wait_event,
    .event_create = sim_event_create,
    .event_destroy = sim_event_destroy,
    .event_record = sim_event_record,
    .event_synchronize = sim_event_synchronize,
    .event_query = sim_event_query,
    .event_elapsed_ms = sim_event_elapsed_ms,
    .memcpy_async = sim_memcpy_async,
    .memset_async = sim_memset_async,
    .can_access_peer = sim_can_access_peer,
    .enable_peer_access = sim_enable_peer_access,
    .memcpy_peer_async = sim_memcpy_peer_async,
    .host_alloc = sim_host_alloc,
    .host_free = sim_host_free,
    .is_pinned = sim_is_pinned,
    .pointer_device = sim_pointer_device,
    .pointer_range = sim_pointer_range,
    .stream_known = sim_stream_known,
    .mark_unwritten = sim_mark_unwritten,
    .config_error = sim_config_error,
    .access_fault = sim_access_fault,
    .kernel_fault = sim_kernel_fault,
    .set_python_hooks = sim_set_python_hooks,
    .module_load = sim_module_load,
    .module_unload = sim_module_unload,
    .module_function = sim_module_function,
    .module_global = sim_module_global,
    .function_param = sim_function_param,
    .launch_function = sim_launch_function,
    .launch_cooperative = sim_launch_cooperative,
    .cooperative_max_blocks = sim_cooperative_max_blocks,
    /* streams run their work at once: none waits for another */
    .stream_create_nonblocking = sim_stream_create,
    .stream_begin_capture = sim_stream_begin_capture,
    .stream_end_capture = sim_stream_end_capture,
    .graph_node_count = sim_graph_node_count,
    .graph_instantiate = sim_graph_instantiate,
    .graph_destroy = sim_graph_destroy,
    .graph_launch = sim_graph_launch,
    .graph_exec_destroy = sim_graph_destroy,
    .compiler_load = NULL, /* no PG_CAP_RUNTIME_COMPILE */
    .compile = NULL,
    .error_name = sim_error_name,
    .error_string = sim_error_string,
    .driver_version = sim_version,
    .runtime_version = sim_version,
    .kernels = &pg_sim_kernels,
};
