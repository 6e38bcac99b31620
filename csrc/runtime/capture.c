/* The streams being captured into CUDA graphs, for both backends: what they
 * refuse while a capture runs (see PG_BACKEND_CALLS in runtime.h) is decided
 * here, so that the simulator and CUDA refuse the same operations, before
 * the runtime sees them (on CUDA an illegal call would invalidate the
 * capture).
 *
 * A thread captures one stream at a time. The list is short (a capture per
 * capturing thread) and asked only on paths that are not hot: copies between
 * host and device, waits, synchronous calls. A kernel launch asks nothing
 * here (the simulator's streams carry their capture; CUDA records launches
 * itself). */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>

#include "runtime.h"

#define MAX_CAPTURES 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    pg_stream stream;
    int device;
} active[MAX_CAPTURES];
static int n_active;
static _Atomic int any_active;                 /* n_active, read without the lock */
static _Atomic int per_device[PG_MAX_DEVICES]; /* captures on each device */
/* The stream this thread captures (only compared: it may be gone if another
 * thread ended the capture; the list says whether it still is captured). */
static _Thread_local pg_stream thread_stream;

static int
find(pg_stream stream)
{
    for (int i = 0; i < n_active; i++) {
        if (active[i].stream == stream) {
            return i;
        }
    }
    return -1;
}

pg_err
pg_capture_begin(pg_stream stream, int device)
{
    pg_err err = PG_SUCCESS;
    if (stream == NULL || device < 0 || device >= PG_MAX_DEVICES) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream is never */
    }
    pthread_mutex_lock(&lock);
    if ((thread_stream != NULL && find(thread_stream) >= 0) || find(stream) >= 0) {
        err = PG_ERR_STREAM_CAPTURE_UNSUPPORTED; /* one capture a thread and stream */
    }
    else if (n_active == MAX_CAPTURES) {
        err = PG_ERR_MEMORY_ALLOCATION;
    }
    else {
        active[n_active].stream = stream;
        active[n_active].device = device;
        n_active++;
        atomic_store(&any_active, n_active);
        atomic_fetch_add(&per_device[device], 1);
        thread_stream = stream;
    }
    pthread_mutex_unlock(&lock);
    return err;
}

void
pg_capture_end(pg_stream stream)
{
    int i;
    pthread_mutex_lock(&lock);
    if ((i = find(stream)) >= 0) {
        atomic_fetch_sub(&per_device[active[i].device], 1);
        active[i] = active[--n_active];
        atomic_store(&any_active, n_active);
    }
    if (thread_stream == stream) {
        thread_stream = NULL;
    }
    pthread_mutex_unlock(&lock);
}

int
pg_capture_stream(pg_stream stream)
{
    int found;
    if (stream == NULL || atomic_load(&any_active) == 0) {
        return 0;
    }
    pthread_mutex_lock(&lock);
    found = find(stream) >= 0;
    pthread_mutex_unlock(&lock);
    return found;
}

int
pg_capture_thread(void)
{
    return thread_stream != NULL && pg_capture_stream(thread_stream);
}

int
pg_capture_device(int device)
{
    return device >= 0 && device < PG_MAX_DEVICES &&
           atomic_load(&per_device[device]) > 0;
}
