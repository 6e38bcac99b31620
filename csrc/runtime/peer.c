/* Peer access between devices: asked for and enabled once per ordered pair in
 * the process, then read with an atomic load (runtime.h says how to call it).
 * Plain C: no Python. */
#include <pthread.h>
#include <stdatomic.h>

#include "runtime.h"

enum { PEER_UNKNOWN = 0, PEER_ENABLED = 1, PEER_NONE = 2 };

/* What was found for kernels on device a reaching device b's memory. */
static _Atomic unsigned char peer_state[PG_MAX_DEVICES][PG_MAX_DEVICES];
/* Held while a pair is asked about, so that each is enabled once. */
static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;

static int
valid_pair(int a, int b)
{
    return a >= 0 && a < PG_MAX_DEVICES && b >= 0 && b < PG_MAX_DEVICES;
}

int
pg_peer_enabled(int a, int b)
{
    if (a == b) {
        return 1;
    }
    return valid_pair(a, b) && atomic_load(&peer_state[a][b]) == PEER_ENABLED;
}

pg_err
pg_peer_ensure(int a, int b, int *enabled, const char **call)
{
    const pg_backend *rt = pg_rt();
    pg_err err = PG_SUCCESS;
    unsigned char state;
    int can = 0;
    *enabled = a == b;
    if (a == b) {
        return PG_SUCCESS;
    }
    if (!valid_pair(a, b)) {
        return PG_ERR_INVALID_DEVICE;
    }
    state = atomic_load(&peer_state[a][b]);
    if (state == PEER_UNKNOWN) {
        if (rt == NULL) {
            return PG_ERR_NO_DEVICE;
        }
        pthread_mutex_lock(&peer_lock);
        state = atomic_load(&peer_state[a][b]);
        if (state == PEER_UNKNOWN) {
            err = rt->can_access_peer(a, b, &can);
            if (err != PG_SUCCESS) {
                if (call != NULL) {
                    *call = pg_call_names.can_access_peer;
                }
            }
            else if (can && (err = rt->enable_peer_access(a, b)) != PG_SUCCESS &&
                     err != PG_ERR_PEER_ACCESS_UNSUPPORTED &&
                     err != PG_ERR_TOO_MANY_PEERS) {
                if (call != NULL) {
                    *call = pg_call_names.enable_peer_access;
                }
            }
            else {
                /* a pair the hardware refuses to enable has no peer path */
                can = can && err == PG_SUCCESS;
                err = PG_SUCCESS;
                state = can ? PEER_ENABLED : PEER_NONE;
                atomic_store(&peer_state[a][b], state);
            }
        }
        pthread_mutex_unlock(&peer_lock);
    }
    *enabled = state == PEER_ENABLED;
    return err;
}
