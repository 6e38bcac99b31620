"""Cooperative launches: kernel[grid, block](..., cooperative=True) and
cooperative_groups' grid_group::sync(), on a GPU (cudaLaunchCooperativeKernel)
and on the simulator (every block resident at once)."""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from conftest import ROOT

import pygpu
from pygpu import cuda

HAVE_CLANG = shutil.which("clang++") is not None


pytestmark = pytest.mark.usefixtures("own_kernel_cache")


# Phase 1: each block sums its stride of x into shared memory and writes its
# partial sum; grid sync; phase 2: block 0 adds the partials. Each block also
# checks that its shared memory is its own across the grid's barrier.
TWO_PHASES = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void two_phases(const float *x, float *partial, float *total,
                                      int *kept, int n)
{
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    __shared__ float sums[256];
    __shared__ int mine[256];
    float acc = 0;
    for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n;
         i += grid.size()) {
        acc += x[i];
    }
    sums[threadIdx.x] = acc;
    mine[threadIdx.x] = (int)blockIdx.x * 1000 + (int)threadIdx.x;
    block.sync();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sums[threadIdx.x] += sums[threadIdx.x + s];
        }
        block.sync();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = sums[0];
    }
    grid.sync();
    if (mine[threadIdx.x] == (int)blockIdx.x * 1000 + (int)threadIdx.x) {
        atomicAdd(kept, 1);
    }
    if (grid.thread_rank() == 0) {
        float t = 0;
        for (unsigned int b = 0; b < gridDim.x; b++) {
            t += partial[b];
        }
        total[0] = t;
    }
    grid.sync();
    if (grid.is_valid() && grid.thread_rank() == 1) {
        total[1] = total[0] * 2;
    }
}
'''

CHECKS = [False, True] if cuda.is_simulator() and HAVE_CLANG else [None]


@pytest.mark.parametrize("check", CHECKS)
def test_grid_sync_between_two_phases_gives_numpys_sum(rng, check):
    blocks, threads = 4, 128
    x = rng.random(5000).astype(np.float32)
    partial = pygpu.zeros(blocks, np.float32)
    total = pygpu.zeros(2, np.float32)
    kept = pygpu.zeros(1, np.int32)
    k = pygpu.RawKernel(TWO_PHASES, "two_phases", check=check)
    k[blocks, threads](cuda.to_device(x), partial, total, kept, np.int32(x.size),
                       cooperative=True)
    got = total.copy_to_host()
    np.testing.assert_allclose(got[0], x.astype(np.float64).sum(), rtol=1e-5)
    assert got[1] == got[0] * 2
    np.testing.assert_allclose(partial.copy_to_host().sum(), got[0], rtol=1e-6)
    assert kept.copy_to_host()[0] == blocks * threads  # each block's shared memory


def test_cooperative_launch_takes_a_stream_and_dynamic_shared_memory(rng):
    src = r'''
    #include <cooperative_groups.h>
    extern "C" __global__ void rotate(int *x) {
        extern __shared__ int s[];
        cooperative_groups::grid_group g = cooperative_groups::this_grid();
        unsigned long long i = g.thread_rank();
        s[threadIdx.x] = x[i];
        g.sync();                     // every read of x is done before any write
        x[(i + 1) % g.size()] = s[threadIdx.x];
    }'''
    x = rng.integers(0, 1000, 3 * 64).astype(np.int32)
    d = cuda.to_device(x)
    stream = cuda.stream()
    pygpu.RawKernel(src, "rotate")[3, 64, stream, 64 * 4](d, cooperative=True)
    stream.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), np.roll(x, 1))


def test_a_grid_too_large_to_be_resident_is_a_value_error_before_launching():
    k = pygpu.RawKernel(TWO_PHASES, "two_phases")
    sms = cuda.get_current_device().multiprocessor_count
    blocks = sms * 64 + 1  # 1024-thread blocks: at most 2 (or so) per SM fit
    partial = pygpu.zeros(blocks, np.float32)
    total = pygpu.zeros(2, np.float32)
    x = pygpu.zeros(1, np.float32)
    with pytest.raises(ValueError, match=r"cooperative launch of kernel two_phases: "
                       rf"the grid has {blocks} blocks .* at most \d+ blocks of 1024 "
                       "threads can be resident at once") as info:
        k[blocks, 1024](x, partial, total, pygpu.zeros(1, np.int32), np.int32(1),
                        cooperative=True)
    assert "cudaErrorCooperativeLaunchTooLarge" in str(info.value)


def test_only_a_modules_kernels_take_cooperative():
    k = pygpu.RawKernel(TWO_PHASES, "two_phases")
    x = pygpu.zeros(2, np.float32)
    with pytest.raises(TypeError, match="cooperative=True"):
        k[1, 32](x, x, x, pygpu.zeros(1, np.int32), np.int32(1), stream=None)
    with pytest.raises(TypeError, match="positional arguments only"):
        pygpu.kernels.add_one[1, 32](x, cooperative=True)


# ---- the simulator: what a GPU would hang on ----------------------------------------

@pytest.mark.simulator
@pytest.mark.parametrize("check", CHECKS)
def test_grid_sync_in_a_plain_launch_says_it_needs_cooperative(check):
    k = pygpu.RawKernel(TWO_PHASES, "two_phases", check=check)
    x = pygpu.zeros(2, np.float32)
    with pytest.raises(pygpu.KernelError, match=r"grid_group::sync\(\) .* needs a "
                       r"cooperative launch.*cooperative=True"):
        k[2, 32](x, x, x, pygpu.zeros(1, np.int32), np.int32(2))


DIVERGENT = r'''
#include <cooperative_groups.h>
extern "C" __global__ void divergent(int *x, int blocks_out, int threads_out) {
    if ((int)blockIdx.x < blocks_out || (int)threadIdx.x < threads_out) {
        return;
    }
    cooperative_groups::this_grid().sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) x[0] = 1;
}'''


@pytest.mark.simulator
@pytest.mark.parametrize("check", CHECKS)
def test_a_divergent_grid_sync_is_reported_not_hung(check):
    k = pygpu.RawKernel(DIVERGENT, "divergent", check=check)
    x = pygpu.zeros(1, np.int32)
    with pytest.raises(pygpu.KernelError, match=r"divergent grid sync: the threads of 3 "
                       r"of the grid's 4 blocks wait at grid_group::sync\(\)"):
        k[4, 32](x, np.int32(1), np.int32(0), cooperative=True)
    with pytest.raises(pygpu.KernelError, match=r"divergent grid sync: 24 of the "
                       r"block's 32 threads wait at grid_group::sync\(\) .* 8 have exited"):
        k[4, 32](x, np.int32(0), np.int32(8), cooperative=True)
    k[4, 32](x, np.int32(0), np.int32(0), cooperative=True)  # the process goes on
    assert x.copy_to_host()[0] == 1


@pytest.mark.simulator
def test_the_checking_mode_still_sees_a_race_across_blocks_before_the_grid_sync():
    if not HAVE_CLANG:
        pytest.skip("the checking mode needs clang++")
    src = r'''
    #include <cooperative_groups.h>
    extern "C" __global__ void early(int *x, int *out) {
        if (threadIdx.x == 0) x[blockIdx.x] = 1;
        if (threadIdx.x == 0) out[blockIdx.x] = x[(blockIdx.x + 1) % gridDim.x];
        cooperative_groups::this_grid().sync();
    }'''
    x, out = pygpu.zeros(4, np.int32), pygpu.zeros(4, np.int32)
    with pytest.raises(pygpu.KernelError, match="global-memory race"):
        pygpu.RawKernel(src, "early", check=True)[4, 32](x, out, cooperative=True)


SPIN = '''
import sys, numpy as np, pygpu
k = pygpu.RawKernel(r"""
#include <cooperative_groups.h>
extern "C" __global__ void spin(volatile int *x, int *out) {
    cooperative_groups::this_grid().sync();
    while (x[0] == 0) { }
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}""", "spin")
flag, out = pygpu.zeros(1, np.int32), pygpu.zeros(128, np.int32)
print("ready", flush=True)
try:
    k[4, 32](flag, out, cooperative=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
flag[0] = 1
k[4, 32](flag, out, cooperative=True)
print("after", int(out.copy_to_host().sum()), flush=True)
'''


@pytest.mark.simulator
def test_ctrl_c_stops_a_cooperative_launch(tmp_path):
    script = tmp_path / "spin.py"
    script.write_text(textwrap.dedent(SPIN))
    env = dict(os.environ, PYGPU_SIMULATOR="1", PYGPU_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # the launch has begun
        p.send_signal(signal.SIGINT)
        assert p.stdout.readline().strip() == "interrupted"
        p.wait(timeout=60)
        out, err = p.stdout.read(), p.stderr.read()
    finally:
        p.kill()
    assert "after 128" in out and p.returncode == 0, (p.returncode, out, err)
