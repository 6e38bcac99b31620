"""The checking mode (check=True) against one planted bug of each class: each
is caught and named for what it is (kernel, block, thread, the variable or
argument), with the source line where the module has a line table; correct
kernels that look like them pass."""

import re
import shutil

import numpy as np
import pytest

import pygpu
from pygpu import cuda

pytestmark = [pytest.mark.simulator,
              pytest.mark.skipif(shutil.which("clang++") is None,
                                 reason="the checking mode needs clang++")]


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kcache"))
    monkeypatch.delenv("PYGPU_SIM_CHECK", raising=False)


BUGS = r'''
extern "C" __global__ void oob_read(const float *x, float *y)
{
    y[threadIdx.x] = x[threadIdx.x + 64];
}
extern "C" __global__ void oob_write(float *y)
{
    y[threadIdx.x + 64] = 1.0f;
}
extern "C" __global__ void one_past(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) y[i] = 2.0f;
}
extern "C" __global__ void int32_overflow(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = i * 1000000000;
    if (i < n) y[i] = y[j];
}
extern "C" __global__ void shared_oob(float *y)
{
    __shared__ float tile[32];
    tile[threadIdx.x] = 1.0f;
    __syncthreads();
    y[threadIdx.x] = tile[threadIdx.x % 32];
}
extern "C" __global__ void missing_barrier(float *y)
{
    __shared__ float tile[64];
    tile[threadIdx.x] = threadIdx.x;
    y[threadIdx.x] = tile[63 - threadIdx.x];
}
extern "C" __global__ void divergent_barrier(float *y)
{
    __shared__ float tile[64];
    tile[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 32) __syncthreads();
    y[threadIdx.x] = tile[63 - threadIdx.x];
}
extern "C" __global__ void uninit_shared(float *y)
{
    __shared__ float tile[64];
    if (threadIdx.x < 32) tile[threadIdx.x] = 1.0f;
    __syncthreads();
    y[threadIdx.x] = tile[threadIdx.x];
}
extern "C" __global__ void use_after_free(float *y, const float *freed)
{
    y[threadIdx.x] = freed[threadIdx.x];
}
extern "C" __global__ void uninit_global(float *y, const float *scratch)
{
    y[threadIdx.x] = scratch[threadIdx.x];
}
extern "C" __global__ void misaligned(float *y)
{
    char *bytes = (char *)y;
    *(float *)(bytes + 2 + 4 * threadIdx.x) = 1.0f;
}
extern "C" __global__ void global_race(float *sum, const float *x)
{
    sum[0] += x[blockIdx.x * blockDim.x + threadIdx.x];
}
extern "C" __global__ void shfl_without_caller(float *y)
{
    y[threadIdx.x] = __shfl_sync(0xfffffffe, y[threadIdx.x], 1);
}
extern "C" __global__ void shfl_exited_lane(float *y)
{
    if (threadIdx.x == 31) return;
    y[threadIdx.x] = __shfl_sync(0xffffffff, y[threadIdx.x], 0);
}
'''


@pytest.fixture
def ordered():
    """Threads and blocks in order, for messages that name a thread."""
    previous = cuda.simulator_schedule(None)
    yield
    cuda.simulator_schedule(previous)


@pytest.fixture(scope="module")
def bugs(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYGPU_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kcache"))
        yield pygpu.RawModule(BUGS, check=True)


def ones(n=64):
    return cuda.to_device(np.ones(n, np.float32))


def freed_pointer():
    a = ones()
    p = a.__cuda_array_interface__["data"][0]
    del a
    pygpu.MemoryPool().free_all_blocks()
    return np.int64(p)


def fresh_empty():
    pygpu.MemoryPool().free_all_blocks()  # a new allocation, not a cached block
    return pygpu.empty(64, np.float32)


CASES = [
    ("oob_read", 64, lambda: (ones(), ones()), "IllegalAddress",
     r"4-byte read at byte offset 256 from argument 'x' \(parameter 0\)"),
    ("oob_write", 64, lambda: (ones(),), "IllegalAddress",
     r"4-byte write at byte offset 256 from argument 'y'"),
    ("one_past", 96, lambda: (ones(), np.int32(64)), "IllegalAddress",
     r"thread \(64, 0, 0\).*write at byte offset 256 from argument 'y'"),
    ("int32_overflow", 64, lambda: (ones(), np.int32(64)), "IllegalAddress",
     r"4-byte read at"),
    ("shared_oob", 64, lambda: (ones(),), "IllegalAddress",
     r"shared-memory 4-byte write at byte offset 128 of __shared__ 'tile'"),
    ("missing_barrier", 64, lambda: (ones(),), "LaunchFailure",
     r"shared-memory race on __shared__ 'tile'"),
    ("divergent_barrier", 64, lambda: (ones(),), "LaunchFailure",
     r"divergent barrier: 32 of its 64 threads wait at __syncthreads\(\)"),
    ("uninit_shared", 64, lambda: (ones(),), "LaunchFailure",
     r"read of uninitialized shared memory: byte offset \d+ of __shared__ 'tile'"),
    ("use_after_free", 32, lambda: (ones(), freed_pointer()), "IllegalAddress",
     r"from argument 'freed' \(parameter 1\), which points into no live allocation"),
    ("uninit_global", 64, lambda: (ones(), fresh_empty()), "LaunchFailure",
     r"read of uninitialized global memory at byte offset 0 from argument 'scratch'"),
    ("misaligned", 8, lambda: (ones(),), "MisalignedAddress",
     r"misaligned 4-byte write"),
    ("global_race", 32, lambda: (ones(1), ones(128)), "LaunchFailure",
     r"global-memory race at byte offset 0 from argument 'sum'"),
    ("shfl_without_caller", 32, lambda: (ones(32),), "LaunchFailure",
     r"__shfl_sync\(mask 0xfffffffe\) does not name the calling lane 0"),
    ("shfl_exited_lane", 32, lambda: (ones(32),), "LaunchFailure",
     r"names lane 31 of its warp, but that lane \(thread \(31, 0, 0\)\) has exited"),
]


@pytest.mark.parametrize(("name", "threads", "args", "code", "says"), CASES,
                         ids=[c[0] for c in CASES])
def test_each_class_of_bug_is_caught_and_named(bugs, name, threads, args, code, says,
                                                ordered):
    with pytest.raises(pygpu.KernelError, match=f"cudaError{code}") as info:
        bugs.get_function(name)[1, threads](*args())
    message = str(info.value)
    assert f"kernel '{name}', block (0, 0, 0)" in message, message
    assert re.search(says, message), message


def test_an_empty_array_from_a_reused_block_is_uninitialized_again(bugs):
    written = pygpu.zeros(64, np.float32)  # written, then cached by the pool
    address = written.__cuda_array_interface__["data"][0]
    del written
    scratch = pygpu.empty(64, np.float32)
    assert scratch.__cuda_array_interface__["data"][0] == address  # the same block
    with pytest.raises(pygpu.KernelError, match="read of uninitialized global memory"):
        bugs.get_function("uninit_global")[1, 64](ones(), scratch)
    scratch.copy_to_device(np.ones(64, np.float32))  # written: the read is fine
    bugs.get_function("uninit_global")[1, 64](ones(), scratch)


def test_a_race_between_blocks_names_the_other_block(bugs):
    with pytest.raises(pygpu.KernelError, match="of another block wrote in this launch"):
        bugs.get_function("global_race")[4, 1](ones(1), ones(4))


def test_kernels_that_order_their_accesses_pass_the_checks():
    m = pygpu.RawModule(r'''
    extern "C" __global__ void last_block_sum(float *partial, unsigned *count,
                                              float *out)
    {
        if (threadIdx.x == 0) {
            partial[blockIdx.x] = blockIdx.x + 1.0f;
            __threadfence();
            if (atomicInc(count, gridDim.x) == gridDim.x - 1) {
                float s = 0;
                for (int i = 0; i < gridDim.x; i++) s += partial[i];
                out[0] = s;
            }
        }
    }
    extern "C" __global__ void atomic_sum(float *sum, const float *x)
    {
        atomicAdd(sum, x[blockIdx.x * blockDim.x + threadIdx.x]);
    }
    extern "C" __global__ void bytes(unsigned char *y)
    {
        y[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;  /* neighbours' bytes */
    }''', check=True)
    out = pygpu.zeros(1, np.float32)
    m.get_function("last_block_sum")[8, 32](pygpu.empty(8, np.float32),
                                            pygpu.zeros(1, np.uint32), out)
    assert out.copy_to_host()[0] == 36
    total = pygpu.zeros(1, np.float32)
    m.get_function("atomic_sum")[4, 32](total, ones(128))
    assert total.copy_to_host()[0] == 128
    y = pygpu.empty(256, np.uint8)
    m.get_function("bytes")[2, 128](y)
    np.testing.assert_array_equal(y.copy_to_host(), np.tile(np.arange(128), 2))


def test_findings_name_the_source_line_and_honour_line_directives(tmp_path, monkeypatch):
    """With a line table (the module compiled with -gline-tables-only) each
    finding of an access names file and line, as #line sets them."""
    monkeypatch.setenv("CXX", "clang++ -gline-tables-only")
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(tmp_path / "lines"))
    if shutil.which("addr2line") is None and shutil.which("llvm-symbolizer") is None:
        pytest.skip("neither addr2line nor llvm-symbolizer is here to read line tables")
    src = ('extern "C" __global__ void k(float *y)\n{\n    float v = 1.0f;\n'
           '    y[threadIdx.x + 64] = v;\n}\n'
           '#line 40 "model.py"\n'
           'extern "C" __global__ void g(float *y)\n{\n    y[threadIdx.x - 1] = 2.0f;\n}\n')
    m = pygpu.RawModule(src, check=True)
    with pytest.raises(pygpu.KernelError, match=r"<kernel source>:4: 4-byte write"):
        m.get_function("k")[1, 32](ones())
    with pytest.raises(pygpu.KernelError, match=r"model\.py:42: 4-byte write"):
        m.get_function("g")[1, 32](ones())
