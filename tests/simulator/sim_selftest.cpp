// Checks the simulator's block runner (csrc/simulator/sim_exec.h) on kernels
// written to go wrong: a missing barrier, a divergent barrier, a barrier in a
// kernel launched as barrier-free. Built and run by test_simulator.py; prints
// one line per check and exits non-zero if any check fails.
#include <stdio.h>

#include "sim_exec.h"

// Reverses each block's slice of `data` through shared memory.
template <bool WITH_BARRIER>
__global__ void reverse_block(int *data)
{
    __shared__ int tile[256];
    int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    tile[t] = data[base + t];
    if (WITH_BARRIER) {
        __syncthreads();
    }
    data[base + t] = tile[blockDim.x - 1 - t];
}

__global__ void divergent_barrier(int *data)
{
    if (threadIdx.x < 16) {
        __syncthreads();
    }
    data[threadIdx.x] = 1;
}

__global__ void uses_barrier(int *data)
{
    __syncthreads();
    data[threadIdx.x] = 1;
}

// The interrupt hooks rt_sim.c gives the block runner, driven by the checks:
// a SIGINT "arrives" once `pending_after` polls have passed; the handler
// raises when `handler_raises`.
static int polls = 0, pending_after = -1, handled = 0;
static bool handler_raises = true;

extern "C" int pg_sim_interrupt_pending(void)
{
    if (pending_after >= 0 && polls++ >= pending_after) {
        pending_after = -1;
        return 1;
    }
    return 0;
}

extern "C" int pg_sim_interrupt_handle(void)
{
    handled++;
    return handler_raises;
}

// The rest of what rt_sim.c gives the runner: a failed launch's story, and
// printf's text.
static char fault[1024];
extern "C" void pg_sim_set_fault(const char *message)
{
    snprintf(fault, sizeof(fault), "%s", message);
}

extern "C" void pg_sim_output(const char *text, size_t size)
{
    fwrite(text, 1, size, stdout);
}

// every allocation counts as written here (the checking mode asks)
extern "C" int pg_sim_written(const void *)
{
    return 1;
}

extern "C" void pg_sim_mark_written(const void *)
{
}

// no launch here has argument spans (a user kernel's fault message asks)
extern "C" int pg_sim_arg_span(int, const void **, const void **)
{
    return -1;
}

__global__ void count_blocks(int *blocks_run)
{
    if (threadIdx.x == 0) {
        blocks_run[blockIdx.x]++;
    }
}

// Each block writes its slice of out from in, through a barrier: running a
// block again gives the same result.
__global__ void copy_through_shared(const int *in, int *out)
{
    __shared__ int tile[64];
    tile[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    __syncthreads();
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = tile[threadIdx.x];
}

// The dialect's barriers reach the runner through pg_sim::host, as in
// kernels.cu (pg_sim_hosted): here the runner's own operations.
static const pg_sim_host runner = {
    PG_SIM_ABI, nullptr, pg_sim::barrier, pg_sim::warp, pg_sim::activemask, pg_sim::fail,
    pg_sim::print, nullptr, nullptr, nullptr, &pg_sim::live};

static int failures = 0;

static void check(bool ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    failures += !ok;
}

static int reversed_correctly(bool with_barrier)
{
    int data[512];
    for (int i = 0; i < 512; i++) {
        data[i] = i;
    }
    pg_err err = with_barrier
        ? pg_sim::launch(dim3(2), dim3(256), true, [&] { reverse_block<true>(data); })
        : pg_sim::launch(dim3(2), dim3(256), true, [&] { reverse_block<false>(data); });
    if (err != PG_SUCCESS) {
        return -1;
    }
    for (int b = 0; b < 2; b++) {
        for (int t = 0; t < 256; t++) {
            if (data[b * 256 + t] != b * 256 + 255 - t) {
                return 0;
            }
        }
    }
    return 1;
}

int main()
{
    pg_sim::host = &runner;
    check(reversed_correctly(true) == 1, "a kernel with its barrier gives the right answer");
    check(reversed_correctly(false) == 0, "the same kernel without its barrier gives a wrong one");
    int data[64] = {0};
    check(pg_sim::launch(dim3(1), dim3(32), true, [&] { divergent_barrier(data); }) ==
              PG_ERR_LAUNCH_FAILURE,
          "a barrier that only some threads reach fails the launch");
    check(pg_sim::launch(dim3(1), dim3(32), false, [&] { uses_barrier(data); }) ==
              PG_ERR_LAUNCH_FAILURE,
          "a barrier in a kernel launched as barrier-free fails the launch");
    check(pg_sim::launch(dim3(1), dim3(32), true, [&] { uses_barrier(data); }) == PG_SUCCESS &&
              data[31] == 1,
          "a barrier every thread reaches passes");
    check(pg_sim::launch(dim3(0), dim3(32), false, [&] { uses_barrier(data); }) ==
              PG_ERR_INVALID_CONFIGURATION,
          "an empty grid is an invalid configuration");
    static int blocks_run[100000];
    polls = 0, pending_after = 10, handler_raises = true;
    pg_err err = pg_sim::launch(dim3(100000), dim3(1024), false,
                                [&] { count_blocks(blocks_run); });
    int ran = 0, twice = 0;
    for (int b = 0; b < 100000; b++) {
        ran += blocks_run[b] == 1;
        twice += blocks_run[b] > 1;
    }
    check(err == PG_ERR_INTERRUPTED && handled == 1 && ran > 0 && ran < 100000 &&
              twice == 0,
          "a SIGINT whose handler raises stops the launch between blocks");
    static int in[64 * 300], out[64 * 300];
    for (int i = 0; i < 64 * 300; i++) {
        in[i] = i + 1;
    }
    polls = 0, pending_after = 5, handled = 0, handler_raises = false;
    err = pg_sim::launch(dim3(300), dim3(64), true, [&] { copy_through_shared(in, out); });
    bool same = true;
    for (int i = 0; i < 64 * 300; i++) {
        same &= out[i] == in[i];
    }
    check(err == PG_SUCCESS && handled == 1 && same,
          "a SIGINT whose handler returns lets the launch finish, a block stopped at a "
          "barrier run again");
    return failures ? 1 : 0;
}
