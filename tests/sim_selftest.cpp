// Checks the simulator's block runner (csrc/sim_exec.h) on kernels written to
// go wrong: a missing barrier, a divergent barrier, a barrier in a kernel
// launched as barrier-free. Built and run by test_simulator.py; prints one
// line per check and exits non-zero if any check fails.
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
    return failures ? 1 : 0;
}
