"""Warp intrinsics on the simulator's runner follow divergence as a GPU with
independent thread scheduling does: a lane waits for the lanes its mask names
that are still on their way, and the launch fails only when none can come (a
deadlock, which hangs a GPU); __activemask() and coalesced_threads() give the
lanes that took the same branch, in the checking mode too."""

import shutil

import numpy as np
import pytest

import pygpu
from pygpu import cuda

pytestmark = pytest.mark.simulator

HAVE_CLANG = shutil.which("clang++") is not None
MODES = [False, True] if HAVE_CLANG else [False]


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    if shutil.which("g++") is None and shutil.which("clang++") is None:
        pytest.skip("the simulator compiles kernels with g++ or clang++; neither is here")
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kcache"))
    monkeypatch.delenv("PYGPU_SIM_CHECK", raising=False)


SOURCE = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
using cooperative_groups::coalesced_threads;
extern "C" __global__ void odd_two_even_four(int *out)
{
    int lane = threadIdx.x % 32, v = lane;
    for (int r = 0; r < (lane & 1 ? 2 : 4); r++) {
        v += __shfl_sync(0xffffffffu, v, (lane + 1) % 32);
    }
    __syncwarp();
    out[threadIdx.x] = v;
}
extern "C" __global__ void even_lanes_alone(int *out)
{
    int lane = threadIdx.x % 32, v = lane;
    for (int r = 0; r < 2; r++) {
        v += __shfl_sync(0xffffffffu, v, (lane + 1) % 32);
    }
    if (!(lane & 1)) { /* the two more rounds name only the even lanes */
        for (int r = 0; r < 2; r++) {
            v += __shfl_sync(0x55555555u, v, (lane + 2) % 32);
        }
    }
    __syncwarp();
    out[threadIdx.x] = v;
}
extern "C" __global__ void warp_against_barrier(int *out)
{
    if (threadIdx.x < 16) {
        out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0);
    }
    __syncthreads();
}
__device__ int first_lane_of(cg::coalesced_group g)
{
    return g.shfl((int)threadIdx.x, 0);
}
extern "C" __global__ void two_sites(const int *x, int *out)
{
    int i = threadIdx.x;
    if (x[i] > 0) {
        out[i] = first_lane_of(cg::coalesced_threads());
    }
    else { /* found by the using-declaration */
        out[i] = -first_lane_of(coalesced_threads());
    }
}
'''


def even_lanes_alone():
    """What the kernel even_lanes_alone computes, lane by lane."""
    v = np.arange(32)
    for _ in range(2):
        v = v + np.roll(v, -1)
    even = np.arange(32) % 2 == 0
    for _ in range(2):
        v = np.where(even, v + np.roll(v, -2), v)
    return v


@pytest.mark.parametrize("check", MODES)
def test_lanes_of_a_full_mask_meet_at_different_rounds_only_by_deadlock(check):
    m = pygpu.RawModule(SOURCE, check=check)
    out = pygpu.zeros(32, np.int32)
    m.get_function("even_lanes_alone")[1, 32](out)
    np.testing.assert_array_equal(out.copy_to_host(), even_lanes_alone())
    # a GPU's shfl.sync waits for every lane of its mask at a shfl.sync with that
    # mask: the odd lanes wait at __syncwarp for good
    with pytest.raises(pygpu.KernelError,
                       match=r"thread \(0, 0, 0\) waits at __shfl_sync\(mask 0xffffffff\)"
                             r".*lane 1 .*waits at __syncwarp\(mask 0xffffffff\)"):
        m.get_function("odd_two_even_four")[1, 32](out)
        cuda.synchronize()


def test_a_mask_naming_a_lane_at_a_block_barrier_fails_naming_it():
    m = pygpu.RawModule(SOURCE)
    out = pygpu.zeros(64, np.int32)
    # lanes 0-15 wait for lanes 16-31, which wait at the block's barrier for them
    with pytest.raises(pygpu.KernelError,
                       match=r"waits at __shfl_sync\(mask 0xffffffff\), which names lane 16 "
                             r".*\(thread \(16, 0, 0\)\) waits at __syncthreads\(\)"):
        m.get_function("warp_against_barrier")[1, 64](out)
        cuda.synchronize()


@pytest.mark.parametrize("check", MODES)
def test_coalesced_threads_at_two_call_sites_are_two_groups(check, rng):
    x = rng.integers(-5, 5, 64).astype(np.int32)
    out = pygpu.zeros(64, np.int32)
    pygpu.RawModule(SOURCE, check=check).get_function("two_sites")[1, 64](
        cuda.to_device(x), out)
    want = []
    for i in range(64):
        same = [j for j in range(i // 32 * 32, i // 32 * 32 + 32) if (x[j] > 0) == (x[i] > 0)]
        want.append(same[0] if x[i] > 0 else -same[0])
    np.testing.assert_array_equal(out.copy_to_host(), want)
